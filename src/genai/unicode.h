// UTF-8, the Unicode character classes the tokenizers' pre-tokenizer patterns use: \p{L} (general category L),
// \p{N} (category N) and \s (the White_Space property, as Oniguruma's Unicode \s matches it), and the four
// normalization forms (the NFC, NFD, NFKC and NFKD normalizers). The tables come from scripts/gen_unicode_tables.py.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nxrt::genai {

// Decodes the character at s[pos] and advances pos past it; false (pos unchanged) for an invalid, overlong or
// truncated sequence, a surrogate or a code point above U+10FFFF.
bool decode_utf8(std::string_view s, size_t& pos, char32_t& code_point);

// Appends code_point (at most U+10FFFF, not a surrogate) as UTF-8.
void append_utf8(char32_t code_point, std::string& out);

// The byte offset of the first invalid sequence in s, or s.size() when s is valid UTF-8.
size_t first_invalid_utf8(std::string_view s);

// The characters of UTF-8 text as strings (a stray byte is a character of its own), as Python splits a str.
std::vector<std::string> utf8_characters(std::string_view s);

bool is_letter(char32_t c);
bool is_number(char32_t c);
bool is_white_space(char32_t c);

// The normalization forms of Unicode (UAX #15) of UTF-8 text (an invalid byte reads as U+FFFD): full canonical
// (NFC, NFD) or compatibility (NFKC, NFKD) decomposition, Hangul syllables algorithmically; canonical ordering of
// combining marks; for NFC and NFKC canonical composition.
enum class NormalForm { kNfc, kNfd, kNfkc, kNfkd };
std::string normalize(std::string_view text, NormalForm form);
inline std::string to_nfc(std::string_view text) { return normalize(text, NormalForm::kNfc); }

}  // namespace nxrt::genai
