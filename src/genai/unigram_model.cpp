// Unigram segmentation (contract in unigram_model.h).
#include "genai/unigram_model.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "genai/unicode.h"

namespace nxrt::genai {

namespace {

// The unknown piece's penalty below the lowest score of the vocabulary.
constexpr double kUnknownPenalty = 10.0;

}  // namespace

std::optional<double> UnigramModel::score_as_tokenizers_reads(std::string_view literal) {
  static const std::vector<double> kPowersOfTen = [] {
    std::vector<double> powers(309);
    for (int k = 0; k <= 308; ++k) {
      const std::string text = "1e" + std::to_string(k);
      std::from_chars(text.data(), text.data() + text.size(), powers[static_cast<size_t>(k)]);
    }
    return powers;
  }();
  size_t at = 0;
  const bool negative = at < literal.size() && literal[at] == '-';
  if (negative) ++at;
  uint64_t significand = 0;
  int64_t exponent = 0;
  bool overflowed = false, any_digit = false;
  // Digits past uint64's range are dropped (those before the point raise the exponent instead).
  const auto take_digits = [&](bool fraction) {
    for (; at < literal.size() && literal[at] >= '0' && literal[at] <= '9'; ++at) {
      const uint64_t digit = static_cast<uint64_t>(literal[at] - '0');
      any_digit = true;
      overflowed = overflowed || significand > (UINT64_MAX - digit) / 10;
      if (overflowed) {
        if (!fraction) ++exponent;
        continue;
      }
      significand = significand * 10 + digit;
      if (fraction) --exponent;
    }
  };
  take_digits(false);
  if (at < literal.size() && literal[at] == '.') {
    ++at;
    take_digits(true);
  }
  if (at < literal.size() && (literal[at] == 'e' || literal[at] == 'E')) {
    ++at;
    const bool negative_exponent = at < literal.size() && literal[at] == '-';
    if (at < literal.size() && (literal[at] == '-' || literal[at] == '+')) ++at;
    int64_t written = 0;
    for (; at < literal.size() && literal[at] >= '0' && literal[at] <= '9'; ++at) {
      written = std::min<int64_t>(written * 10 + (literal[at] - '0'), int64_t{1} << 40);
    }
    exponent += negative_exponent ? -written : written;
  }
  if (!any_digit || at != literal.size()) return std::nullopt;
  double value = static_cast<double>(significand);
  while (value != 0.0) {
    if (exponent >= -308 && exponent <= 308) {
      const double power = kPowersOfTen[static_cast<size_t>(exponent < 0 ? -exponent : exponent)];
      value = exponent >= 0 ? value * power : value / power;
      break;
    }
    if (exponent > 0) return std::nullopt;
    value /= 1e308;
    exponent += 308;
  }
  if (!std::isfinite(value)) return std::nullopt;
  return negative ? -value : value;
}

Expected<UnigramModel> UnigramModel::create(std::vector<std::pair<std::string, double>> pieces,
                                            std::optional<int32_t> unk_id, bool byte_fallback,
                                            std::string_view what) {
  if (pieces.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return make_error(StatusCode::kInvalidArgument, what, ": the vocabulary has over 2^31 pieces");
  }
  if (unk_id && (*unk_id < 0 || static_cast<size_t>(*unk_id) >= pieces.size())) {
    return make_error(StatusCode::kInvalidArgument, what, ": model.unk_id ", *unk_id, " is outside the vocabulary of ",
                      pieces.size(), " pieces");
  }
  UnigramModel model;
  model.unk_ = unk_id;
  model.byte_fallback_ = byte_fallback;
  double lowest = std::numeric_limits<double>::infinity();
  model.node_piece_.push_back(-1);
  model.ids_.reserve(pieces.size());
  for (size_t id = 0; id < pieces.size(); ++id) {
    const auto& [piece, score] = pieces[id];
    if (!std::isfinite(score)) {
      return make_error(StatusCode::kInvalidArgument, what, ": piece ", id, " has a score that is not finite");
    }
    if (first_invalid_utf8(piece) != piece.size()) {
      return make_error(StatusCode::kInvalidArgument, what, ": piece ", id, " is not UTF-8");
    }
    lowest = std::min(lowest, score);
    model.ids_.insert_or_assign(piece, static_cast<int32_t>(id));  // a repeated piece keeps its last id
    int32_t node = 0;
    for (const char c : piece) {
      const auto [it, added] = model.edges_.try_emplace(edge_key(node, static_cast<uint8_t>(c)),
                                                        static_cast<int32_t>(model.node_piece_.size()));
      if (added) model.node_piece_.push_back(-1);
      node = it->second;
    }
    if (node != 0) model.node_piece_[static_cast<size_t>(node)] = static_cast<int32_t>(id);
  }
  model.unk_score_ = lowest - kUnknownPenalty;
  model.pieces_.reserve(pieces.size());
  model.scores_.reserve(pieces.size());
  for (auto& [piece, score] : pieces) {
    model.pieces_.push_back(std::move(piece));
    model.scores_.push_back(score);
  }
  for (int byte = 0; byte < 256; ++byte) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    const std::string name = std::string("<0x") + kHex[byte >> 4] + kHex[byte & 15] + ">";
    model.byte_ids_[byte] = model.id_of(name);
  }
  return model;
}

std::optional<int32_t> UnigramModel::id_of(std::string_view piece) const {
  const auto it = ids_.find(piece);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

const std::string* UnigramModel::token_of(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= pieces_.size()) return nullptr;
  return &pieces_[static_cast<size_t>(id)];
}

Status UnigramModel::encode_word(std::string_view word, std::vector<int32_t>& ids) const {
  if (word.empty()) return Status::ok();
  struct BestPath {
    double score = 0.0;
    int64_t start = -1;  // -1: no path ends here yet
    int32_t id = 0;
  };
  const size_t n = word.size();
  std::vector<BestPath> best(n + 1);
  const auto offer = [&](size_t start, size_t end, double score, int32_t id) {
    BestPath& target = best[end];
    const double total = score + best[start].score;
    if (target.start < 0 || total > target.score) target = {total, static_cast<int64_t>(start), id};
  };
  for (size_t start = 0; start < n;) {
    size_t after = start;
    char32_t c = 0;
    if (!decode_utf8(word, after, c)) after = start + 1;  // (the text is valid UTF-8)
    const size_t char_length = after - start;
    bool covers_character = false;
    int32_t node = 0;
    for (size_t at = start; at < n; ++at) {
      const auto edge = edges_.find(edge_key(node, static_cast<uint8_t>(word[at])));
      if (edge == edges_.end()) break;
      node = edge->second;
      const int32_t id = node_piece_[static_cast<size_t>(node)];
      if (id < 0) continue;
      offer(start, at + 1, scores_[static_cast<size_t>(id)], id);
      covers_character = covers_character || at + 1 - start == char_length;
    }
    if (!covers_character) {
      const BestPath& target = best[start + char_length];
      const bool would_win = target.start < 0 || unk_score_ + best[start].score > target.score;
      if (!unk_ && would_win) {
        return make_error(StatusCode::kInvalidArgument, "tokenizer: the text '", word.substr(start, char_length),
                          "' has no piece in the unigram vocabulary and there is no unk_id");
      }
      if (unk_) offer(start, start + char_length, unk_score_, *unk_);
    }
    start += char_length;
  }
  // Back from the end: spans of the best path, runs of unknown pieces fused.
  std::vector<std::pair<size_t, size_t>> spans;
  bool in_unknown_run = false;
  for (size_t end = n; end > 0;) {
    const BestPath& node = best[end];
    // Every character boundary is reached (each gets a piece, the unknown piece or an error above).
    if (node.start < 0) return make_error(StatusCode::kFail, "tokenizer: no unigram path reaches byte ", end);
    const size_t start = static_cast<size_t>(node.start);
    const bool unknown = unk_ && node.id == *unk_;
    if (unknown && in_unknown_run) {
      spans.back().first = start;
    } else {
      spans.emplace_back(start, end);
    }
    in_unknown_run = unknown;
    end = start;
  }
  for (auto span = spans.rbegin(); span != spans.rend(); ++span) {
    const std::string_view text = word.substr(span->first, span->second - span->first);
    if (const auto id = id_of(text)) {
      ids.push_back(*id);
      continue;
    }
    bool all_bytes = byte_fallback_;
    for (size_t i = 0; all_bytes && i < text.size(); ++i) {
      all_bytes = byte_ids_[static_cast<uint8_t>(text[i])].has_value();
    }
    if (all_bytes) {
      for (const char c : text) ids.push_back(*byte_ids_[static_cast<uint8_t>(c)]);
    } else {
      ids.push_back(*unk_);  // a span without a piece of its own is a fused run of unknown characters
    }
  }
  return Status::ok();
}

}  // namespace nxrt::genai
