// A byte-pair-encoding model as tokenizer.json describes it ("model": {"type": "BPE"}): a vocabulary of token
// strings and a ranked list of merges. A word (the symbols of one pre-token, each a vocabulary token) is encoded
// by repeatedly merging the adjacent pair of lowest rank, leftmost first among equal ranks, until no listed
// merge applies.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/status.h"
#include "genai/string_map.h"

namespace nxrt::genai {

class BpeModel {
 public:
  // `vocab`: (token, id) pairs with distinct ids in [0, 2^31); `merges`: (left, right) in rank order, every part
  // and concatenation in the vocabulary. `what` names the source in errors.
  static Expected<BpeModel> create(std::vector<std::pair<std::string, int32_t>> vocab,
                                   const std::vector<std::pair<std::string, std::string>>& merges,
                                   std::string_view what);

  std::optional<int32_t> id_of(std::string_view token) const;
  // The token of an id, or null when no token has it.
  const std::string* token_of(int32_t id) const;
  // One more than the largest id.
  int64_t id_bound() const { return static_cast<int64_t>(tokens_.size()); }

  // Merges the symbols (token ids) of one word in place.
  void merge_word(std::vector<int32_t>& symbols) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t merged;
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }

  StringMap<int32_t> ids_;
  std::vector<std::string> tokens_;
  std::vector<bool> has_token_;
  std::unordered_map<uint64_t, Merge> merges_;
};

}  // namespace nxrt::genai
