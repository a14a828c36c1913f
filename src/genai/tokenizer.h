// A text tokenizer read from a Hugging Face tokenizer.json, encoding to and decoding from the ids the tokenizers
// library gives. Supported so far: model BPE (byte_fallback, unk_token with fuse_unk, ignore_merges) or Unigram
// (unigram_model.h); the normalizers and decoders of text_steps.h; pre_tokenizer ByteLevel (GPT-2 pattern), a
// Sequence of Split with the Llama 3 or Qwen2 pattern and ByteLevel, Metaspace alone or after WhitespaceSplit, or
// none (SentencePiece-style files); added tokens (special or
// not, normalized or not, lstrip / rstrip / single_word); post_processor ByteLevel, TemplateProcessing (single
// sequence) or none. Anything else in the file is NOT_IMPLEMENTED naming its key and type.
//
// Encoding: the text (valid UTF-8) is split at the added tokens matched on the raw text (leftmost, longest first);
// each piece between them is normalized and split at the added tokens matched on normalized text; the rest is
// split into words by the pre-tokenizer, each word's symbols (byte-level characters, or characters) merged by the
// BPE model; with add_special_tokens the post-processor's template adds its special tokens. Decoding maps ids to
// tokens (special tokens dropped when asked) and runs the decoder over them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace nxrt::genai {

class JsonValue;

class Tokenizer {
 public:
  static Expected<Tokenizer> from_json(const JsonValue& json, std::string_view what);
  static Expected<Tokenizer> from_file(const std::string& path);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  Expected<std::vector<int32_t>> encode(std::string_view text, bool add_special_tokens = true) const;
  Expected<std::string> decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const;

  // The id of a token (vocabulary or added), or nullopt.
  std::optional<int32_t> token_to_id(std::string_view token) const;
  // The token of an id, or nullopt.
  std::optional<std::string> id_to_token(int32_t id) const;
  // One more than the largest id of any token.
  int64_t vocab_size() const;

  struct State;

 private:
  explicit Tokenizer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Incremental decoding of generated tokens: decode_next(id) returns the text the id adds, never a partial UTF-8
// character (an incomplete one waits for the ids that finish it), so the returned pieces concatenate to decode of
// all ids (special tokens skipped when asked). The text is taken as the difference of two decodes of a short window
// of recent ids, which keeps decoders that strip a leading space from eating spaces between tokens.
class TokenizerStream {
 public:
  explicit TokenizerStream(const Tokenizer& tokenizer, bool skip_special_tokens = true)
      : tokenizer_(tokenizer), skip_special_(skip_special_tokens) {}
  Expected<std::string> decode_next(int32_t id);

 private:
  const Tokenizer& tokenizer_;
  bool skip_special_;
  std::vector<int32_t> ids_;
  size_t prefix_ = 0, read_ = 0;  // the window is ids_[prefix_:]; ids_[prefix_:read_] are already emitted
};

}  // namespace nxrt::genai
