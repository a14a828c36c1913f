// GPT-2 pre-token split and byte-level characters (contracts in byte_level.h).
#include "genai/byte_level.h"

#include "genai/unicode.h"

namespace nxrt::genai {

namespace {

// Neither white space, a letter nor a number: the class [^\s\p{L}\p{N}].
bool is_other(char32_t c) { return !is_white_space(c) && !is_letter(c) && !is_number(c); }

// Length in code points of a contraction ('s 't 're 've 'm 'll 'd) at i, or 0.
size_t contraction_at(const std::vector<char32_t>& cps, size_t i) {
  if (cps[i] != U'\'' || i + 1 >= cps.size()) return 0;
  const char32_t a = cps[i + 1];
  if (a == U's' || a == U't' || a == U'm' || a == U'd') return 2;
  if (i + 2 >= cps.size()) return 0;
  const char32_t b = cps[i + 2];
  if ((a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l')) return 3;
  return 0;
}

}  // namespace

std::vector<std::pair<size_t, size_t>> split_gpt2_pattern(std::string_view text) {
  std::vector<char32_t> cps;
  std::vector<size_t> offsets;  // byte offset of each code point, then text.size()
  for (size_t pos = 0; pos < text.size();) {
    offsets.push_back(pos);
    char32_t c = 0;
    if (!decode_utf8(text, pos, c)) {  // callers pass valid UTF-8; a stray byte stays a piece of its own
      c = 0xFFFD;
      ++pos;
    }
    cps.push_back(c);
  }
  offsets.push_back(text.size());
  const size_t n = cps.size();
  std::vector<std::pair<size_t, size_t>> pieces;
  const auto run_of = [&](size_t from, auto&& in_class) {
    size_t end = from;
    while (end < n && in_class(cps[end])) ++end;
    return end;
  };
  for (size_t i = 0; i < n;) {
    size_t end = i + contraction_at(cps, i);
    if (end == i) {
      const size_t start = cps[i] == U' ' && i + 1 < n ? i + 1 : i;  // the optional leading space
      if (is_letter(cps[start])) {
        end = run_of(start, is_letter);
      } else if (is_number(cps[start])) {
        end = run_of(start, is_number);
      } else if (is_other(cps[start])) {
        end = run_of(start, is_other);
      } else {
        // White space: \s+(?!\S) leaves the run's last character to the next piece when a non-space follows and
        // the run is longer than one; else \s+ takes the whole run.
        const size_t run = run_of(i, is_white_space);
        end = run < n && run - i >= 2 ? run - 1 : run;
      }
    }
    pieces.emplace_back(offsets[i], offsets[end]);
    i = end;
  }
  return pieces;
}

const std::array<char32_t, 256>& byte_level_characters() {
  static const std::array<char32_t, 256> table = [] {
    std::array<char32_t, 256> t{};
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      t[static_cast<size_t>(b)] = printable ? static_cast<char32_t>(b) : next++;
    }
    return t;
  }();
  return table;
}

int byte_of_level_character(char32_t c) {
  static const std::array<int16_t, 0x144> inverse = [] {
    std::array<int16_t, 0x144> t{};
    t.fill(-1);
    const auto& forward = byte_level_characters();
    for (int b = 0; b < 256; ++b) t[forward[static_cast<size_t>(b)]] = static_cast<int16_t>(b);
    return t;
  }();
  return c < inverse.size() ? inverse[c] : -1;
}

void append_byte_level(std::string_view bytes, std::string& out) {
  const auto& table = byte_level_characters();
  for (const char b : bytes) append_utf8(table[static_cast<uint8_t>(b)], out);
}

}  // namespace nxrt::genai
