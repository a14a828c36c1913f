// The string-to-string steps of a tokenizer.json around its model, as the tokenizers library applies them:
// normalizers (Prepend, Replace with a string pattern, NFC, NFD, NFKC, NFKD, in a Sequence or alone) and decoders (ByteLevel, Replace,
// ByteFallback, Fuse, Strip, Metaspace, in a Sequence or alone; without a decoder tokens are joined by spaces).
// Anything else is NOT_IMPLEMENTED naming its type.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "genai/unicode.h"

namespace nxrt::genai {

class JsonValue;

class Normalizer {
 public:
  // `json` may be null (or JSON null): no normalization.
  static Expected<Normalizer> from_json(const JsonValue* json, std::string_view what);
  bool empty() const { return steps_.empty(); }
  // The normalized form of one piece of text (a nonempty piece between the added tokens matched on raw text).
  std::string apply(std::string_view text) const;

 private:
  struct Step {
    enum class Kind { kPrepend, kReplace, kUnicode } kind = Kind::kUnicode;
    std::string pattern, content;
    NormalForm form = NormalForm::kNfc;  // kUnicode
  };
  std::vector<Step> steps_;
};

class Decoder {
 public:
  static Expected<Decoder> from_json(const JsonValue* json, std::string_view what);
  // The text of a sequence of tokens (already without the skipped special tokens).
  std::string apply(std::vector<std::string> tokens) const;

 private:
  enum class Kind { kByteLevel, kReplace, kByteFallback, kFuse, kStrip, kMetaspace };
  struct Step {
    Kind kind = Kind::kFuse;
    std::string pattern, content;  // Replace; Strip's content; Metaspace's replacement (pattern)
    size_t start = 0, stop = 0;    // Strip
    bool strip_first = false;      // Metaspace: drop the first token's replacements instead of spacing them
  };
  static Expected<Step> step_from_json(const JsonValue& json, std::string_view what);
  std::vector<Step> steps_;
  bool join_with_spaces_ = false;
};

// Replaces every occurrence of `pattern` (nonempty) in text with `content`.
std::string replace_all(std::string_view text, std::string_view pattern, std::string_view content);

// Appends `bytes` as text, each maximal invalid UTF-8 subsequence replaced by U+FFFD.
void append_lossy_utf8(std::string_view bytes, std::string& out);

}  // namespace nxrt::genai
