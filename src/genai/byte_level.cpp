// GPT-2 pre-token split and byte-level characters (contracts in byte_level.h).
#include "genai/byte_level.h"

#include <algorithm>

#include "genai/unicode.h"

namespace nxrt::genai {

namespace {

// Neither white space, a letter nor a number: the class [^\s\p{L}\p{N}].
bool is_other(char32_t c) { return !is_white_space(c) && !is_letter(c) && !is_number(c); }

// Length in code points of a contraction ('s 't 're 've 'm 'll 'd, also upper case when `any_case`) at i, or 0.
size_t contraction_at(const std::vector<char32_t>& cps, size_t i, bool any_case) {
  if (cps[i] != U'\'' || i + 1 >= cps.size()) return 0;
  const auto lower = [&](char32_t c) { return any_case && c >= U'A' && c <= U'Z' ? c + 32 : c; };
  const char32_t a = lower(cps[i + 1]);
  if (a == U's' || a == U't' || a == U'm' || a == U'd') return 2;
  if (i + 2 >= cps.size()) return 0;
  const char32_t b = lower(cps[i + 2]);
  if ((a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l')) return 3;
  return 0;
}

size_t run_of(const std::vector<char32_t>& cps, size_t from, bool (*in_class)(char32_t)) {
  size_t end = from;
  while (end < cps.size() && in_class(cps[end])) ++end;
  return end;
}

// White space: \s+(?!\S) leaves the run's last character to the next piece when a non-space follows and the run is
// longer than one; else \s+ takes the whole run.
size_t white_space_piece_end(const std::vector<char32_t>& cps, size_t i) {
  const size_t run = run_of(cps, i, is_white_space);
  return run < cps.size() && run - i >= 2 ? run - 1 : run;
}

size_t gpt2_piece_end(const std::vector<char32_t>& cps, size_t i) {
  if (const size_t length = contraction_at(cps, i, false)) return i + length;
  const size_t start = cps[i] == U' ' && i + 1 < cps.size() ? i + 1 : i;  // the optional leading space
  if (is_letter(cps[start])) return run_of(cps, start, is_letter);
  if (is_number(cps[start])) return run_of(cps, start, is_number);
  if (is_other(cps[start])) return run_of(cps, start, is_other);
  return white_space_piece_end(cps, i);
}

bool is_line_break(char32_t c) { return c == U'\r' || c == U'\n'; }

size_t llama3_piece_end(const std::vector<char32_t>& cps, size_t i, size_t max_digits) {
  const size_t n = cps.size();
  if (const size_t length = contraction_at(cps, i, true)) return i + length;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  const bool may_lead = !is_line_break(cps[i]) && !is_letter(cps[i]) && !is_number(cps[i]);
  if (may_lead && i + 1 < n && is_letter(cps[i + 1])) return run_of(cps, i + 1, is_letter);
  if (is_letter(cps[i])) return run_of(cps, i, is_letter);
  // \p{N}{1,max_digits}
  if (is_number(cps[i])) return std::min(run_of(cps, i, is_number), i + max_digits);
  // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
  const size_t start = cps[i] == U' ' && i + 1 < n ? i + 1 : i;
  if (is_other(cps[start])) return run_of(cps, run_of(cps, start, is_other), is_line_break);
  // \s*[\r\n]+: through the run's last line break.
  const size_t run = run_of(cps, i, is_white_space);
  for (size_t j = run; j > i; --j) {
    if (is_line_break(cps[j - 1])) return j;
  }
  return white_space_piece_end(cps, i);
}

}  // namespace

std::optional<SplitPattern> known_split_pattern(std::string_view regex) {
  if (regex == R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)") {
    return SplitPattern::kGpt2;
  }
  if (regex == R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)") {
    return SplitPattern::kLlama3;
  }
  if (regex == R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)") {
    return SplitPattern::kQwen2;
  }
  return std::nullopt;
}

std::vector<std::pair<size_t, size_t>> split_by_pattern(std::string_view text, SplitPattern pattern) {
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
  std::vector<std::pair<size_t, size_t>> pieces;
  for (size_t i = 0; i < cps.size();) {
    const size_t end = pattern == SplitPattern::kGpt2 ? gpt2_piece_end(cps, i)
                                                      : llama3_piece_end(cps, i, pattern == SplitPattern::kLlama3 ? 3 : 1);
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
