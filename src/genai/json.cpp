// A recursive-descent JSON parser (contract in json.h).
#include "genai/json.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "genai/unicode.h"

namespace nxrt::genai {

JsonValue JsonValue::boolean(bool value) {
  JsonValue v;
  v.kind_ = Kind::kBool;
  v.bool_ = value;
  return v;
}

JsonValue JsonValue::number(double value, std::optional<int64_t> integer, std::string literal) {
  JsonValue v;
  v.kind_ = Kind::kNumber;
  v.number_ = value;
  v.integer_ = integer;
  v.string_ = std::move(literal);
  return v;
}

const std::string& JsonValue::empty_string() {
  static const std::string kEmpty;
  return kEmpty;
}

JsonValue JsonValue::string(std::string value) {
  JsonValue v;
  v.kind_ = Kind::kString;
  v.string_ = std::move(value);
  return v;
}

JsonValue JsonValue::array(std::vector<JsonValue> items) {
  JsonValue v;
  v.kind_ = Kind::kArray;
  v.items_ = std::move(items);
  return v;
}

JsonValue JsonValue::object(Members members) {
  JsonValue v;
  v.kind_ = Kind::kObject;
  v.members_ = std::move(members);
  return v;
}

const JsonValue* JsonValue::find(std::string_view key) const {
  for (auto it = members_.rbegin(); it != members_.rend(); ++it) {
    if (it->first == key) return &it->second;
  }
  return nullptr;
}

std::string_view json_kind_name(JsonValue::Kind kind) {
  switch (kind) {
    case JsonValue::Kind::kNull: return "null";
    case JsonValue::Kind::kBool: return "boolean";
    case JsonValue::Kind::kNumber: return "number";
    case JsonValue::Kind::kString: return "string";
    case JsonValue::Kind::kArray: return "array";
    case JsonValue::Kind::kObject: return "object";
  }
  return "value";
}

namespace {

class Parser {
 public:
  Parser(std::string_view text, std::string_view what) : text_(text), what_(what) {}

  Expected<JsonValue> document() {
    TRY_ASSIGN(JsonValue value, parse_value(0));
    skip_space();
    if (at_ < text_.size()) return error("text after the JSON value");
    return value;
  }

 private:
  Expected<JsonValue> parse_value(int depth) {
    if (depth > kMaxJsonDepth) return error("nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    skip_space();
    if (at_ >= text_.size()) return error("unexpected end of text");
    const char c = text_[at_];
    if (c == '{') return parse_object(depth);
    if (c == '[') return parse_array(depth);
    if (c == '"') {
      TRY_ASSIGN(std::string s, parse_string());
      return JsonValue::string(std::move(s));
    }
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number();
    if (consume_word("true")) return JsonValue::boolean(true);
    if (consume_word("false")) return JsonValue::boolean(false);
    if (consume_word("null")) return JsonValue();
    return error(std::string("unexpected character '") + c + "'");
  }

  Expected<JsonValue> parse_object(int depth) {
    ++at_;  // '{'
    JsonValue::Members members;
    skip_space();
    if (at_ < text_.size() && text_[at_] == '}') {
      ++at_;
      return JsonValue::object(std::move(members));
    }
    while (true) {
      skip_space();
      if (at_ >= text_.size() || text_[at_] != '"') return error("expected a member name in quotes");
      TRY_ASSIGN(std::string key, parse_string());
      skip_space();
      if (at_ >= text_.size() || text_[at_] != ':') return error("expected ':' after a member name");
      ++at_;
      TRY_ASSIGN(JsonValue value, parse_value(depth + 1));
      members.emplace_back(std::move(key), std::move(value));
      skip_space();
      if (at_ < text_.size() && text_[at_] == ',') {
        ++at_;
        continue;
      }
      if (at_ < text_.size() && text_[at_] == '}') {
        ++at_;
        return JsonValue::object(std::move(members));
      }
      return error("expected ',' or '}' in an object");
    }
  }

  Expected<JsonValue> parse_array(int depth) {
    ++at_;  // '['
    std::vector<JsonValue> items;
    skip_space();
    if (at_ < text_.size() && text_[at_] == ']') {
      ++at_;
      return JsonValue::array(std::move(items));
    }
    while (true) {
      TRY_ASSIGN(JsonValue value, parse_value(depth + 1));
      items.push_back(std::move(value));
      skip_space();
      if (at_ < text_.size() && text_[at_] == ',') {
        ++at_;
        continue;
      }
      if (at_ < text_.size() && text_[at_] == ']') {
        ++at_;
        return JsonValue::array(std::move(items));
      }
      return error("expected ',' or ']' in an array");
    }
  }

  Expected<std::string> parse_string() {
    ++at_;  // '"'
    std::string out;
    while (true) {
      if (at_ >= text_.size()) return error("unterminated string");
      const unsigned char c = static_cast<unsigned char>(text_[at_]);
      if (c == '"') {
        ++at_;
        return out;
      }
      if (c < 0x20) return error("control character in a string");
      if (c == '\\') {
        TRY(parse_escape(out));
        continue;
      }
      // Copy one whole, valid UTF-8 character.
      size_t next = at_;
      char32_t code_point = 0;
      if (!decode_utf8(text_, next, code_point)) return error("invalid UTF-8 in a string");
      out.append(text_.substr(at_, next - at_));
      at_ = next;
    }
  }

  Status parse_escape(std::string& out) {
    if (at_ + 1 >= text_.size()) return error("unterminated escape");
    const char e = text_[at_ + 1];
    at_ += 2;
    switch (e) {
      case '"': out += '"'; return Status::ok();
      case '\\': out += '\\'; return Status::ok();
      case '/': out += '/'; return Status::ok();
      case 'b': out += '\b'; return Status::ok();
      case 'f': out += '\f'; return Status::ok();
      case 'n': out += '\n'; return Status::ok();
      case 'r': out += '\r'; return Status::ok();
      case 't': out += '\t'; return Status::ok();
      case 'u': break;
      default: return error(std::string("unknown escape '\\") + e + "'");
    }
    TRY_ASSIGN(char32_t code, hex4());
    if (code >= 0xD800 && code <= 0xDBFF) {
      if (at_ + 1 >= text_.size() || text_[at_] != '\\' || text_[at_ + 1] != 'u') {
        return error("a high surrogate escape without its low surrogate");
      }
      at_ += 2;
      TRY_ASSIGN(const char32_t low, hex4());
      if (low < 0xDC00 || low > 0xDFFF) return error("a high surrogate escape without its low surrogate");
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    } else if (code >= 0xDC00 && code <= 0xDFFF) {
      return error("a lone low surrogate escape");
    }
    append_utf8(code, out);
    return Status::ok();
  }

  Expected<char32_t> hex4() {
    if (at_ + 4 > text_.size()) return error("short \\u escape");
    char32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[at_ + static_cast<size_t>(i)];
      value <<= 4;
      if (h >= '0' && h <= '9') {
        value |= static_cast<char32_t>(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        value |= static_cast<char32_t>(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        value |= static_cast<char32_t>(h - 'A' + 10);
      } else {
        return error("bad hex digit in a \\u escape");
      }
    }
    at_ += 4;
    return value;
  }

  Expected<JsonValue> parse_number() {
    const size_t begin = at_;
    if (text_[at_] == '-') ++at_;
    const auto digits = [&] {
      const size_t from = at_;
      while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
      return at_ - from;
    };
    const size_t first = at_;
    if (digits() == 0) return error("a number needs digits");
    if (text_[first] == '0' && at_ - first > 1) return error("a number with a leading zero");
    bool integral = true;
    if (at_ < text_.size() && text_[at_] == '.') {
      ++at_;
      integral = false;
      if (digits() == 0) return error("a number needs digits after '.'");
    }
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      ++at_;
      integral = false;
      if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
      if (digits() == 0) return error("a number needs digits in its exponent");
    }
    const std::string_view literal = text_.substr(begin, at_ - begin);
    double value = 0.0;
    const auto parsed = std::from_chars(literal.data(), literal.data() + literal.size(), value);
    if (parsed.ec == std::errc::result_out_of_range) {
      value = literal[0] == '-' ? -HUGE_VAL : HUGE_VAL;
    } else if (parsed.ec != std::errc()) {
      return error("bad number");
    }
    std::optional<int64_t> integer;
    if (integral) {
      int64_t exact = 0;
      const auto as_int = std::from_chars(literal.data(), literal.data() + literal.size(), exact);
      if (as_int.ec == std::errc() && as_int.ptr == literal.data() + literal.size()) integer = exact;
    }
    return JsonValue::number(value, integer, std::string(literal));
  }

  bool consume_word(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }

  void skip_space() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r')) {
      ++at_;
    }
  }

  Status error(const std::string& what) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < at_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return make_error(StatusCode::kInvalidArgument, what_, ": invalid JSON at line ", line, ", column ", column,
                      ": ", what);
  }

  std::string_view text_;
  std::string_view what_;
  size_t at_ = 0;
};

}  // namespace

Expected<JsonValue> parse_json(std::string_view text, std::string_view what) { return Parser(text, what).document(); }

Expected<JsonValue> read_json_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return make_error(StatusCode::kNoSuchFile, path, ": cannot open the file");
  std::ostringstream contents;
  contents << file.rdbuf();
  if (file.bad()) return make_error(StatusCode::kFail, path, ": read error");
  return parse_json(contents.str(), path);
}

}  // namespace nxrt::genai
