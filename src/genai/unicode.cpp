// UTF-8 coding and the character classes (contract in unicode.h).
#include "genai/unicode.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace nxrt::genai {

namespace {

struct CodePointRange {
  char32_t first, last;
};
struct Decomposition {
  char32_t code_point, first, second;
};
struct CombiningClassRange {
  char32_t first, last, combining_class;
};
struct Composition {
  char32_t first, second, composite;
};
struct CompatibilityDecomposition {
  char32_t code_point, offset, length;
};

#include "genai/unicode_tables.inc"

template <size_t N>
bool in_ranges(const CodePointRange (&ranges)[N], char32_t c) {
  const auto* it = std::upper_bound(std::begin(ranges), std::end(ranges), c,
                                    [](char32_t value, const CodePointRange& r) { return value < r.first; });
  return it != std::begin(ranges) && c <= (it - 1)->last;
}

// Hangul syllables: S = 0xAC00 + (L * 21 + V) * 28 + T.
constexpr char32_t kHangulBase = 0xAC00, kLeadBase = 0x1100, kVowelBase = 0x1161, kTrailBase = 0x11A7;
constexpr char32_t kVowels = 21, kTrails = 28, kSyllables = 11172;

unsigned combining_class(char32_t c) {
  const auto* it = std::upper_bound(std::begin(kCombiningClasses), std::end(kCombiningClasses), c,
                                    [](char32_t value, const CombiningClassRange& r) { return value < r.first; });
  return it != std::begin(kCombiningClasses) && c <= (it - 1)->last ? (it - 1)->combining_class : 0;
}

// Appends the full decomposition of c: canonical, or with `compatibility` the compatibility one.
void decompose(char32_t c, bool compatibility, std::vector<char32_t>& out) {
  if (compatibility) {
    const auto* it = std::lower_bound(std::begin(kCompatibilityDecompositions), std::end(kCompatibilityDecompositions),
                                      c, [](const CompatibilityDecomposition& d, char32_t value) {
                                        return d.code_point < value;
                                      });
    if (it != std::end(kCompatibilityDecompositions) && it->code_point == c) {
      out.insert(out.end(), kCompatibilityPool + it->offset, kCompatibilityPool + it->offset + it->length);
      return;
    }
  }
  if (c >= kHangulBase && c < kHangulBase + kSyllables) {
    const char32_t index = c - kHangulBase;
    out.push_back(kLeadBase + index / (kVowels * kTrails));
    out.push_back(kVowelBase + (index % (kVowels * kTrails)) / kTrails);
    if (index % kTrails != 0) out.push_back(kTrailBase + index % kTrails);
    return;
  }
  const auto* it = std::lower_bound(std::begin(kDecompositions), std::end(kDecompositions), c,
                                    [](const Decomposition& d, char32_t value) { return d.code_point < value; });
  if (it == std::end(kDecompositions) || it->code_point != c) {
    out.push_back(c);
    return;
  }
  decompose(it->first, false, out);
  if (it->second != 0) decompose(it->second, false, out);
}

// The primary composite of a pair, or 0.
char32_t compose(char32_t first, char32_t second) {
  if (first >= kLeadBase && first < kLeadBase + 19 && second >= kVowelBase && second < kVowelBase + kVowels) {
    return kHangulBase + ((first - kLeadBase) * kVowels + (second - kVowelBase)) * kTrails;
  }
  if (first >= kHangulBase && first < kHangulBase + kSyllables && (first - kHangulBase) % kTrails == 0 &&
      second > kTrailBase && second < kTrailBase + kTrails) {
    return first + (second - kTrailBase);
  }
  const auto* it = std::lower_bound(std::begin(kCompositions), std::end(kCompositions), std::pair{first, second},
                                    [](const Composition& c, const std::pair<char32_t, char32_t>& key) {
                                      return std::pair{c.first, c.second} < key;
                                    });
  return it != std::end(kCompositions) && it->first == first && it->second == second ? it->composite : 0;
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

std::vector<std::string> utf8_characters(std::string_view s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    size_t j = i + 1;
    while (j < s.size() && (static_cast<uint8_t>(s[j]) & 0xC0) == 0x80) ++j;
    out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
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

std::string normalize(std::string_view text, NormalForm form) {
  const bool compatibility = form == NormalForm::kNfkc || form == NormalForm::kNfkd;
  const bool compose_marks = form == NormalForm::kNfc || form == NormalForm::kNfkc;
  // Code points below these are their own normal form in any sequence: U+0300 for NFC (the first combining mark;
  // nothing below it decomposes in a way NFC would not recompose), U+00C0 for NFD (the first canonical
  // decomposition), U+00A0 for the compatibility forms (the first compatibility decomposition).
  const char32_t simple_below = compatibility ? 0xA0 : compose_marks ? 0x300 : 0xC0;
  std::vector<char32_t> cps;
  bool simple = true;
  for (size_t pos = 0; pos < text.size();) {
    char32_t c = 0;
    if (!decode_utf8(text, pos, c)) {
      c = 0xFFFD;
      ++pos;
    }
    simple = simple && c < simple_below;
    decompose(c, compatibility, cps);
  }
  if (simple) return std::string(text);
  // Canonical ordering: stable sort of each run of non-starters by combining class.
  for (size_t i = 0; i < cps.size();) {
    if (combining_class(cps[i]) == 0) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < cps.size() && combining_class(cps[end]) != 0) ++end;
    std::stable_sort(cps.begin() + static_cast<std::ptrdiff_t>(i), cps.begin() + static_cast<std::ptrdiff_t>(end),
                     [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
    i = end;
  }
  // Canonical composition: a mark joins the last starter when nothing between them blocks it.
  size_t kept = cps.size();
  if (compose_marks) {
    kept = 0;
    std::ptrdiff_t starter = -1;
    unsigned last_class = 0;
    for (size_t i = 0; i < cps.size(); ++i) {
      const char32_t c = cps[i];
      const unsigned cls = combining_class(c);
      if (starter >= 0 && (last_class < cls || (last_class == 0 && kept == static_cast<size_t>(starter) + 1))) {
        if (const char32_t composite = compose(cps[static_cast<size_t>(starter)], c)) {
          cps[static_cast<size_t>(starter)] = composite;
          continue;
        }
      }
      if (cls == 0) starter = static_cast<std::ptrdiff_t>(kept);
      last_class = cls;
      cps[kept++] = c;
    }
  }
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < kept; ++i) append_utf8(cps[i], out);
  return out;
}

}  // namespace nxrt::genai
