// Normalizers and decoders of tokenizer.json (contracts in text_steps.h).
#include "genai/text_steps.h"

#include "genai/byte_level.h"
#include "genai/json.h"
#include "genai/unicode.h"

namespace nxrt::genai {

namespace {

std::string type_of(const JsonValue& v) {
  const JsonValue* type = v.is_object() ? v.find("type") : nullptr;
  return type != nullptr && type->is_string() ? type->as_string() : "";
}

Status not_supported(std::string_view what, std::string_view key, std::string_view type) {
  return make_error(StatusCode::kNotImplemented, what, ": ", key, " of type '", type, "' is not supported");
}

// A string member, or a Replace step's {"String": ...} pattern.
const std::string* string_member(const JsonValue& v, std::string_view key) {
  const JsonValue* member = v.find(key);
  if (member != nullptr && member->is_object()) member = member->find("String");
  return member != nullptr && member->is_string() ? &member->as_string() : nullptr;
}

// The steps of a Sequence (under `list_key`) or the one step itself.
std::vector<const JsonValue*> steps_of(const JsonValue& json, std::string_view list_key) {
  std::vector<const JsonValue*> steps;
  if (type_of(json) == "Sequence") {
    if (const JsonValue* list = json.find(list_key); list != nullptr && list->is_array()) {
      for (const JsonValue& step : list->items()) steps.push_back(&step);
    }
  } else {
    steps.push_back(&json);
  }
  return steps;
}

// The byte a "<0xHH>" token stands for, or -1.
int fallback_byte(std::string_view token) {
  if (token.size() != 6 || token.substr(0, 3) != "<0x" || token[5] != '>') return -1;
  int value = 0;
  for (const char h : token.substr(3, 2)) {
    value <<= 4;
    if (h >= '0' && h <= '9') {
      value |= h - '0';
    } else if (h >= 'a' && h <= 'f') {
      value |= h - 'a' + 10;
    } else if (h >= 'A' && h <= 'F') {
      value |= h - 'A' + 10;
    } else {
      return -1;
    }
  }
  return value;
}

}  // namespace

std::string replace_all(std::string_view text, std::string_view pattern, std::string_view content) {
  std::string out;
  size_t from = 0;
  for (size_t at = text.find(pattern); at != std::string_view::npos; at = text.find(pattern, from)) {
    out.append(text.substr(from, at - from));
    out.append(content);
    from = at + pattern.size();
  }
  out.append(text.substr(from));
  return out;
}

void append_lossy_utf8(std::string_view bytes, std::string& out) {
  for (size_t pos = 0; pos < bytes.size();) {
    const size_t start = pos;
    char32_t c = 0;
    if (decode_utf8(bytes, pos, c)) {
      out.append(bytes.substr(start, pos - start));
      continue;
    }
    // The invalid subsequence: the lead byte and the continuation bytes that could still have begun a character.
    const uint8_t lead = static_cast<uint8_t>(bytes[start]);
    const size_t length = lead >= 0xC2 && lead <= 0xDF   ? 2
                          : lead >= 0xE0 && lead <= 0xEF ? 3
                          : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                         : 1;
    size_t taken = 1;
    for (; taken < length && start + taken < bytes.size(); ++taken) {
      const uint8_t b = static_cast<uint8_t>(bytes[start + taken]);
      const uint8_t low = taken == 1 && lead == 0xE0 ? 0xA0 : taken == 1 && lead == 0xF0 ? 0x90 : 0x80;
      const uint8_t high = taken == 1 && lead == 0xED ? 0x9F : taken == 1 && lead == 0xF4 ? 0x8F : 0xBF;
      if (b < low || b > high) break;
    }
    out += "\xEF\xBF\xBD";
    pos = start + taken;
  }
}

Expected<Normalizer> Normalizer::from_json(const JsonValue* json, std::string_view what) {
  Normalizer normalizer;
  if (json == nullptr || json->is_null()) return normalizer;
  for (const JsonValue* step : steps_of(*json, "normalizers")) {
    const std::string type = type_of(*step);
    if (type == "Prepend") {
      const std::string* prepend = string_member(*step, "prepend");
      if (prepend == nullptr) return make_error(StatusCode::kInvalidArgument, what, ": Prepend needs a string");
      normalizer.steps_.push_back({Step::Kind::kPrepend, "", *prepend});
    } else if (type == "Replace") {
      const std::string* pattern = string_member(*step, "pattern");
      const std::string* content = string_member(*step, "content");
      if (pattern == nullptr || pattern->empty() || content == nullptr) {
        return make_error(StatusCode::kNotImplemented, what, ": normalizer Replace is supported with a nonempty ",
                          "string pattern only");
      }
      normalizer.steps_.push_back({Step::Kind::kReplace, *pattern, *content});
    } else if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
      const NormalForm form = type == "NFC"    ? NormalForm::kNfc
                              : type == "NFD"  ? NormalForm::kNfd
                              : type == "NFKC" ? NormalForm::kNfkc
                                               : NormalForm::kNfkd;
      normalizer.steps_.push_back({Step::Kind::kUnicode, "", "", form});
    } else {
      return not_supported(what, "normalizer", type_of(*json) == "Sequence" ? "Sequence of " + type : type);
    }
  }
  return normalizer;
}

std::string Normalizer::apply(std::string_view text) const {
  std::string out(text);
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Step::Kind::kPrepend:
        if (!out.empty()) out.insert(0, step.content);
        break;
      case Step::Kind::kReplace:
        out = replace_all(out, step.pattern, step.content);
        break;
      case Step::Kind::kUnicode:
        out = normalize(out, step.form);
        break;
    }
  }
  return out;
}

Expected<Decoder::Step> Decoder::step_from_json(const JsonValue& json, std::string_view what) {
  const std::string type = type_of(json);
  Step step;
  if (type == "ByteLevel") {
    step.kind = Kind::kByteLevel;
  } else if (type == "ByteFallback") {
    step.kind = Kind::kByteFallback;
  } else if (type == "Fuse") {
    step.kind = Kind::kFuse;
  } else if (type == "Replace") {
    const std::string* pattern = string_member(json, "pattern");
    const std::string* content = string_member(json, "content");
    if (pattern == nullptr || pattern->empty() || content == nullptr) {
      return make_error(StatusCode::kNotImplemented, what, ": decoder Replace is supported with a nonempty string ",
                        "pattern only");
    }
    step.kind = Kind::kReplace;
    step.pattern = *pattern;
    step.content = *content;
  } else if (type == "Strip") {
    const std::string* content = string_member(json, "content");
    const JsonValue* start = json.find("start");
    const JsonValue* stop = json.find("stop");
    if (content == nullptr || start == nullptr || stop == nullptr || !start->as_int() || !stop->as_int() ||
        *start->as_int() < 0 || *stop->as_int() < 0) {
      return make_error(StatusCode::kInvalidArgument, what, ": decoder Strip needs content, start and stop");
    }
    step.kind = Kind::kStrip;
    step.content = *content;
    step.start = static_cast<size_t>(*start->as_int());
    step.stop = static_cast<size_t>(*stop->as_int());
  } else if (type == "Metaspace") {
    const std::string* replacement = string_member(json, "replacement");
    const std::string* scheme = string_member(json, "prepend_scheme");
    const JsonValue* add_prefix_space = json.find("add_prefix_space");  // older files
    step.kind = Kind::kMetaspace;
    step.pattern = replacement != nullptr ? *replacement : "\xE2\x96\x81";
    step.strip_first = scheme != nullptr ? *scheme != "never"
                                         : add_prefix_space == nullptr || !add_prefix_space->is_bool() ||
                                               add_prefix_space->as_bool();
  } else {
    return not_supported(what, "decoder", type);
  }
  return step;
}

Expected<Decoder> Decoder::from_json(const JsonValue* json, std::string_view what) {
  Decoder decoder;
  if (json == nullptr || json->is_null()) {
    decoder.join_with_spaces_ = true;
    return decoder;
  }
  for (const JsonValue* step : steps_of(*json, "decoders")) {
    TRY_ASSIGN(Step parsed, step_from_json(*step, what));
    decoder.steps_.push_back(std::move(parsed));
  }
  return decoder;
}

std::string Decoder::apply(std::vector<std::string> tokens) const {
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Kind::kByteLevel: {
        std::string bytes;
        for (const std::string& token : tokens) {
          const size_t mark = bytes.size();
          bool mapped = true;
          for (size_t at = 0; at < token.size() && mapped;) {
            char32_t c = 0;
            decode_utf8(token, at, c);
            const int b = byte_of_level_character(c);
            mapped = b >= 0;
            if (mapped) bytes += static_cast<char>(b);
          }
          if (!mapped) bytes.replace(mark, std::string::npos, token);  // not a byte-level token: its own UTF-8
        }
        std::string text;
        append_lossy_utf8(bytes, text);
        tokens.assign(1, std::move(text));
        break;
      }
      case Kind::kReplace:
        for (std::string& token : tokens) token = replace_all(token, step.pattern, step.content);
        break;
      case Kind::kByteFallback: {
        std::vector<std::string> out;
        std::string run;  // the bytes of consecutive <0xHH> tokens
        size_t run_tokens = 0;
        const auto flush = [&] {
          if (run_tokens == 0) return;
          if (first_invalid_utf8(run) == run.size()) {
            out.push_back(run);
          } else {
            for (size_t i = 0; i < run_tokens; ++i) out.emplace_back("\xEF\xBF\xBD");
          }
          run.clear();
          run_tokens = 0;
        };
        for (std::string& token : tokens) {
          const int b = fallback_byte(token);
          if (b >= 0) {
            run += static_cast<char>(b);
            ++run_tokens;
          } else {
            flush();
            out.push_back(std::move(token));
          }
        }
        flush();
        tokens = std::move(out);
        break;
      }
      case Kind::kFuse: {
        std::string joined;
        for (const std::string& token : tokens) joined += token;
        tokens.assign(1, std::move(joined));
        break;
      }
      case Kind::kStrip:
        for (std::string& token : tokens) {
          size_t begin = 0, end = token.size();
          for (size_t i = 0; i < step.start && token.compare(begin, step.content.size(), step.content) == 0 &&
                             begin < end;
               ++i) {
            begin += step.content.size();
          }
          for (size_t i = 0; i < step.stop && end >= begin + step.content.size() &&
                             token.compare(end - step.content.size(), step.content.size(), step.content) == 0;
               ++i) {
            end -= step.content.size();
          }
          token = token.substr(begin, end - begin);
        }
        break;
      case Kind::kMetaspace:
        // As the tokenizers library does, the first token loses every replacement, not only a leading one.
        for (size_t i = 0; i < tokens.size(); ++i) {
          tokens[i] = replace_all(tokens[i], step.pattern, i == 0 && step.strip_first ? "" : " ");
        }
        break;
    }
  }
  std::string text;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (join_with_spaces_ && i > 0) text += ' ';
    text += tokens[i];
  }
  return text;
}

}  // namespace nxrt::genai
