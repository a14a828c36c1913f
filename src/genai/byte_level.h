// The byte-level pieces of GPT-2-style tokenizers (the tokenizers library's ByteLevel pre-tokenizer and decoder):
// the split of text into pre-tokens by the GPT-2 pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (regex alternation semantics: at each position the first alternative that matches, each as long as it can), and
// the reversible map of the 256 byte values to printable characters that byte-level vocabularies are written in.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nxrt::genai {

// [begin, end) byte ranges of the pre-tokens of valid UTF-8 text, in order, covering it.
std::vector<std::pair<size_t, size_t>> split_gpt2_pattern(std::string_view text);

// The character each byte value stands for in a byte-level vocabulary: printable Latin-1 bytes stand for
// themselves, the others for U+0100 upwards in byte order.
const std::array<char32_t, 256>& byte_level_characters();

// The byte a character of a byte-level vocabulary stands for, or -1 when it stands for none.
int byte_of_level_character(char32_t c);

// Appends the byte-level form of `bytes` (each byte as its character, UTF-8 encoded).
void append_byte_level(std::string_view bytes, std::string& out);

}  // namespace nxrt::genai
