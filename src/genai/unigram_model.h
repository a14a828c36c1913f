// A unigram language-model tokenizer as tokenizer.json describes it ("model": {"type": "Unigram"}): a list of
// (piece, log-probability score) whose index is the id, an optional unknown piece and byte fallback. A word is cut
// into the pieces whose scores add up to the most (Viterbi over the word's byte positions, at character
// boundaries), with these rules from the tokenizers library, which nxrt's ids must equal:
//  - candidates ending at one position are compared in the order the walk meets them: by start position, then
//    by length; a later candidate replaces the kept one only with a strictly larger total;
//  - a character that no piece of its own length covers gets the unknown piece, scored the vocabulary's lowest
//    score minus 10 (without an unknown piece it is an error when that candidate would have been kept);
//  - consecutive unknown pieces on the best path are fused into one span; a span that is not a piece becomes its
//    bytes' <0xXX> pieces when byte_fallback is on and every such piece exists, else the unknown piece.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/status.h"
#include "genai/string_map.h"

namespace nxrt::genai {

class UnigramModel {
 public:
  // `pieces`: (piece, score) with the id as index; `unk_id` indexes `pieces` when given. `what` names the source.
  static Expected<UnigramModel> create(std::vector<std::pair<std::string, double>> pieces,
                                       std::optional<int32_t> unk_id, bool byte_fallback, std::string_view what);

  std::optional<int32_t> id_of(std::string_view piece) const;
  const std::string* token_of(int32_t id) const;
  int64_t id_bound() const { return static_cast<int64_t>(pieces_.size()); }
  std::optional<int32_t> unk_id() const { return unk_; }

  // The score the tokenizers library reads from a JSON number literal. Its JSON reader (serde_json without
  // float_roundtrip) takes up to 19 significant digits as a uint64 m, converts m to double, then multiplies or
  // divides by the double nearest 10^|e| once; that can differ from the nearest double by an ulp, and equal path
  // scores must compare as they do there. Nullopt for a literal that is not a JSON number or is out of range.
  static std::optional<double> score_as_tokenizers_reads(std::string_view literal);

  // Appends the ids of one word (valid UTF-8).
  Status encode_word(std::string_view word, std::vector<int32_t>& ids) const;

 private:
  // A byte trie over the pieces: edges keyed by (node << 8 | byte); node 0 is the root.
  static uint64_t edge_key(int32_t node, uint8_t byte) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(node)) << 8) | byte;
  }
  std::vector<std::string> pieces_;
  std::vector<double> scores_;
  StringMap<int32_t> ids_;
  std::unordered_map<uint64_t, int32_t> edges_;
  std::vector<int32_t> node_piece_;  // the id of the piece ending at a trie node, or -1
  std::optional<int32_t> unk_;
  std::optional<int32_t> byte_ids_[256];  // <0xXX> pieces, for byte fallback
  bool byte_fallback_ = false;
  double unk_score_ = 0.0;
};

}  // namespace nxrt::genai
