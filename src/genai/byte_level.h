// The byte-level pieces of GPT-2-style tokenizers (the tokenizers library's ByteLevel pre-tokenizer and decoder,
// and the Split pre-tokenizers of the Llama 3 and Qwen2 families): the split of text into pre-tokens by one of the
// known patterns below, with regex alternation semantics (at each position the first alternative that matches,
// each as long as it can), and the reversible map of the 256 byte values to printable characters that byte-level
// vocabularies are written in.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nxrt::genai {

enum class SplitPattern {
  // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  kGpt2,
  // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  kLlama3,
  // The same with \p{N} (one digit per piece) in place of \p{N}{1,3}.
  kQwen2,
};

// The known pattern a regular expression of a tokenizer.json spells, or nullopt.
std::optional<SplitPattern> known_split_pattern(std::string_view regex);

// [begin, end) byte ranges of the pre-tokens of valid UTF-8 text, in order, covering it.
std::vector<std::pair<size_t, size_t>> split_by_pattern(std::string_view text, SplitPattern pattern);

// The character each byte value stands for in a byte-level vocabulary: printable Latin-1 bytes stand for
// themselves, the others for U+0100 upwards in byte order.
const std::array<char32_t, 256>& byte_level_characters();

// The byte a character of a byte-level vocabulary stands for, or -1 when it stands for none.
int byte_of_level_character(char32_t c);

// Appends the byte-level form of `bytes` (each byte as its character, UTF-8 encoded).
void append_byte_level(std::string_view bytes, std::string& out);

}  // namespace nxrt::genai
