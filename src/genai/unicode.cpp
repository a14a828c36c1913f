// UTF-8 coding and the character classes (contract in unicode.h).
#include "genai/unicode.h"

#include <algorithm>
#include <cstdint>

namespace nxrt::genai {

namespace {

struct CodePointRange {
  char32_t first, last;
};

#include "genai/unicode_tables.inc"

template <size_t N>
bool in_ranges(const CodePointRange (&ranges)[N], char32_t c) {
  const auto* it = std::upper_bound(std::begin(ranges), std::end(ranges), c,
                                    [](char32_t value, const CodePointRange& r) { return value < r.first; });
  return it != std::begin(ranges) && c <= (it - 1)->last;
}

}  // namespace

bool decode_utf8(std::string_view s, size_t& pos, char32_t& code_point) {
  if (pos >= s.size()) return false;
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t lead = byte(pos);
  size_t length = 0;
  char32_t value = 0, minimum = 0;
  if (lead < 0x80) {
    code_point = lead;
    ++pos;
    return true;
  } else if ((lead & 0xE0) == 0xC0) {
    length = 2, value = lead & 0x1F, minimum = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, value = lead & 0x0F, minimum = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, value = lead & 0x07, minimum = 0x10000;
  } else {
    return false;
  }
  if (pos + length > s.size()) return false;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(pos + i) & 0xC0) != 0x80) return false;
    value = (value << 6) | (byte(pos + i) & 0x3F);
  }
  if (value < minimum || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return false;
  code_point = value;
  pos += length;
  return true;
}

void append_utf8(char32_t c, std::string& out) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

size_t first_invalid_utf8(std::string_view s) {
  size_t pos = 0;
  char32_t c = 0;
  while (pos < s.size()) {
    if (!decode_utf8(s, pos, c)) return pos;
  }
  return s.size();
}

bool is_letter(char32_t c) {
  if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  return in_ranges(kLetterRanges, c);
}

bool is_number(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return in_ranges(kNumberRanges, c);
}

bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

}  // namespace nxrt::genai
