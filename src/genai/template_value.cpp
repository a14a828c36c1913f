// Chat-template values (contract in template_value.h).
#include "genai/template_value.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "genai/json.h"

namespace nxrt::genai {

TemplateValue TemplateValue::none() {
  TemplateValue v;
  v.kind_ = Kind::kNone;
  return v;
}

TemplateValue TemplateValue::boolean(bool b) {
  TemplateValue v;
  v.kind_ = Kind::kBool;
  v.bool_ = b;
  v.int_ = b ? 1 : 0;
  return v;
}

TemplateValue TemplateValue::integer(int64_t i) {
  TemplateValue v;
  v.kind_ = Kind::kInt;
  v.int_ = i;
  return v;
}

TemplateValue TemplateValue::floating(double f) {
  TemplateValue v;
  v.kind_ = Kind::kFloat;
  v.float_ = f;
  return v;
}

TemplateValue TemplateValue::string(std::string s) {
  TemplateValue v;
  v.kind_ = Kind::kString;
  v.string_ = std::move(s);
  return v;
}

TemplateValue TemplateValue::list(List items) {
  TemplateValue v;
  v.kind_ = Kind::kList;
  v.list_ = std::make_shared<List>(std::move(items));
  return v;
}

TemplateValue TemplateValue::dict(Dict members) {
  TemplateValue v;
  v.kind_ = Kind::kDict;
  v.dict_ = std::make_shared<Dict>(std::move(members));
  return v;
}

TemplateValue TemplateValue::from_json(const JsonValue& json) {
  switch (json.kind()) {
    case JsonValue::Kind::kNull: return none();
    case JsonValue::Kind::kBool: return boolean(json.as_bool());
    case JsonValue::Kind::kNumber:
      return json.as_int() ? integer(*json.as_int()) : floating(json.as_number());
    case JsonValue::Kind::kString: return string(json.as_string());
    case JsonValue::Kind::kArray: {
      List items;
      for (const JsonValue& item : json.items()) items.push_back(from_json(item));
      return list(std::move(items));
    }
    case JsonValue::Kind::kObject: {
      TemplateValue d = dict();
      for (const auto& [key, value] : json.members()) d.set(key, from_json(value));
      return d;
    }
  }
  return TemplateValue();
}

int64_t TemplateValue::as_int() const {
  if (kind_ != Kind::kFloat) return int_;
  if (std::isnan(float_)) return 0;
  if (float_ >= 0x1p63) return INT64_MAX;
  if (float_ <= -0x1p63) return INT64_MIN;
  return static_cast<int64_t>(float_);
}

const TemplateValue* TemplateValue::find(std::string_view key) const {
  if (kind_ != Kind::kDict) return nullptr;
  for (const auto& [name, value] : *dict_) {
    if (name == key) return &value;
  }
  return nullptr;
}

void TemplateValue::set(const std::string& key, TemplateValue value) const {
  if (kind_ != Kind::kDict) return;
  for (auto& [name, existing] : *dict_) {
    if (name == key) {
      existing = std::move(value);
      return;
    }
  }
  dict_->emplace_back(key, std::move(value));
}

bool TemplateValue::truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool: return bool_;
    case Kind::kInt: return int_ != 0;
    case Kind::kFloat: return float_ != 0.0;
    case Kind::kString: return !string_.empty();
    case Kind::kList: return !list_->empty();
    case Kind::kDict: return !dict_->empty();
  }
  return false;
}

int64_t TemplateValue::length() const {
  switch (kind_) {
    case Kind::kString: {
      int64_t count = 0;  // code points
      for (const char c : string_) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      return count;
    }
    case Kind::kList: return static_cast<int64_t>(list_->size());
    case Kind::kDict: return static_cast<int64_t>(dict_->size());
    default: return 0;
  }
}

std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0.0) return std::signbit(v) ? "-0.0" : "0.0";
  char buffer[64];
  const auto done = std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::scientific);
  const std::string scientific(buffer, done.ptr);  // "-1.2345e+17": the shortest round-trip digits
  const size_t e = scientific.find('e');
  const bool negative = scientific[0] == '-';
  std::string digits;
  for (size_t i = negative ? 1 : 0; i < e; ++i) {
    if (scientific[i] != '.') digits += scientific[i];
  }
  const int exponent = std::stoi(scientific.substr(e + 1));
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char tail[16];
    std::snprintf(tail, sizeof tail, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + tail;
  }
  if (exponent < 0) {
    return out + "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  }
  const size_t whole = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= whole) return out + digits + std::string(whole - digits.size(), '0') + ".0";
  return out + digits.substr(0, whole) + "." + digits.substr(whole);
}

namespace {

std::string quote_python(const std::string& s) {
  const char quote = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, quote);
  for (const char c : s) {
    if (c == '\\' || c == quote) {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
      out += hex;
    } else {
      out += c;
    }
  }
  return out + quote;
}

void write_json_string(const std::string& s, std::string& out) {
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\u%04x", static_cast<unsigned char>(c));
          out += hex;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

}  // namespace

std::string TemplateValue::str() const {
  switch (kind_) {
    case Kind::kUndefined: return "";
    case Kind::kString: return string_;
    default: return repr();
  }
}

std::string TemplateValue::repr() const {
  switch (kind_) {
    case Kind::kUndefined: return "";
    case Kind::kNone: return "None";
    case Kind::kBool: return bool_ ? "True" : "False";
    case Kind::kInt: return std::to_string(int_);
    case Kind::kFloat: return python_float_repr(float_);
    case Kind::kString: return quote_python(string_);
    case Kind::kList: {
      std::string out = "[";
      for (size_t i = 0; i < list_->size(); ++i) out += (i ? ", " : "") + (*list_)[i].repr();
      return out + "]";
    }
    case Kind::kDict: {
      std::string out = "{";
      for (size_t i = 0; i < dict_->size(); ++i) {
        out += (i ? ", " : "") + quote_python((*dict_)[i].first) + ": " + (*dict_)[i].second.repr();
      }
      return out + "}";
    }
  }
  return "";
}

void TemplateValue::write_json(std::string& out, int indent, int depth) const {
  const auto newline = [&](int level) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * level), ' ');
  };
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone: out += "null"; return;
    case Kind::kBool: out += bool_ ? "true" : "false"; return;
    case Kind::kInt: out += std::to_string(int_); return;
    case Kind::kFloat:
      out += std::isnan(float_) ? "NaN" : std::isinf(float_) ? (float_ > 0 ? "Infinity" : "-Infinity")
                                                             : python_float_repr(float_);
      return;
    case Kind::kString: write_json_string(string_, out); return;
    case Kind::kList:
      if (list_->empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < list_->size(); ++i) {
        if (i > 0) out += indent < 0 ? ", " : ",";
        newline(depth + 1);
        (*list_)[i].write_json(out, indent, depth + 1);
      }
      newline(depth);
      out += ']';
      return;
    case Kind::kDict:
      if (dict_->empty()) {
        out += "{}";
        return;
      }
      out += '{';
      for (size_t i = 0; i < dict_->size(); ++i) {
        if (i > 0) out += indent < 0 ? ", " : ",";
        newline(depth + 1);
        write_json_string((*dict_)[i].first, out);
        out += ": ";
        (*dict_)[i].second.write_json(out, indent, depth + 1);
      }
      newline(depth);
      out += '}';
      return;
  }
}

std::string TemplateValue::json(int indent) const {
  std::string out;
  write_json(out, indent, 0);
  return out;
}

bool operator==(const TemplateValue& a, const TemplateValue& b) {
  using Kind = TemplateValue::Kind;
  if (a.is_number() && b.is_number()) {
    if (a.kind_ == Kind::kFloat || b.kind_ == Kind::kFloat) return a.as_float() == b.as_float();
    return a.int_ == b.int_;
  }
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case Kind::kString: return a.string_ == b.string_;
    case Kind::kList: return *a.list_ == *b.list_;
    case Kind::kDict:
      if (a.dict_->size() != b.dict_->size()) return false;
      for (const auto& [key, value] : *a.dict_) {
        const TemplateValue* other = b.find(key);
        if (other == nullptr || !(*other == value)) return false;
      }
      return true;
    default: return true;  // none, undefined
  }
}

std::optional<int> TemplateValue::compare(const TemplateValue& a, const TemplateValue& b) {
  if (a.is_number() && b.is_number()) {
    const double x = a.as_float(), y = b.as_float();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) return a.string_.compare(b.string_) < 0 ? -1 : a.string_ == b.string_ ? 0 : 1;
  return std::nullopt;
}

}  // namespace nxrt::genai
