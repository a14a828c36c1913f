// Byte-pair encoding (contract in bpe_model.h).
#include "genai/bpe_model.h"

#include <queue>
#include <tuple>

namespace nxrt::genai {

Expected<BpeModel> BpeModel::create(std::vector<std::pair<std::string, int32_t>> vocab,
                                    const std::vector<std::pair<std::string, std::string>>& merges,
                                    std::string_view what) {
  BpeModel model;
  int32_t largest = -1;
  for (const auto& [token, id] : vocab) {
    if (id < 0) return make_error(StatusCode::kInvalidArgument, what, ": token '", token, "' has a negative id");
    largest = std::max(largest, id);
  }
  model.tokens_.resize(static_cast<size_t>(largest) + 1);
  model.has_token_.assign(model.tokens_.size(), false);
  model.ids_.reserve(vocab.size());
  for (auto& [token, id] : vocab) {
    if (model.has_token_[static_cast<size_t>(id)]) {
      return make_error(StatusCode::kInvalidArgument, what, ": id ", id, " is given to two tokens");
    }
    model.has_token_[static_cast<size_t>(id)] = true;
    model.tokens_[static_cast<size_t>(id)] = token;
    model.ids_.emplace(std::move(token), id);
  }
  model.merges_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    const auto l = model.id_of(left), r = model.id_of(right), m = model.id_of(left + right);
    if (!l || !r || !m) {
      return make_error(StatusCode::kInvalidArgument, what, ": merge ", rank, " ('", left, "' '", right,
                        "') uses a token outside the vocabulary");
    }
    // A pair listed twice keeps its first (lowest) rank.
    model.merges_.emplace(pair_key(*l, *r), Merge{static_cast<int32_t>(rank), *m});
  }
  return model;
}

std::optional<int32_t> BpeModel::id_of(std::string_view token) const {
  const auto it = ids_.find(token);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

const std::string* BpeModel::token_of(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= tokens_.size() || !has_token_[static_cast<size_t>(id)]) return nullptr;
  return &tokens_[static_cast<size_t>(id)];
}

void BpeModel::merge_word(std::vector<int32_t>& symbols) const {
  const size_t n = symbols.size();
  if (n < 2) return;
  // Symbols form a linked list; candidates are (rank, left position, left id, right id, merged id), checked when
  // popped.
  std::vector<int64_t> prev(n), next(n);
  std::vector<bool> alive(n, true);
  for (size_t i = 0; i < n; ++i) {
    prev[i] = static_cast<int64_t>(i) - 1;
    next[i] = i + 1 < n ? static_cast<int64_t>(i + 1) : -1;
  }
  using Candidate = std::tuple<int32_t, int64_t, int32_t, int32_t, int32_t>;
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  const auto offer = [&](int64_t left) {
    if (left < 0 || next[static_cast<size_t>(left)] < 0) return;
    const int32_t a = symbols[static_cast<size_t>(left)];
    const int32_t b = symbols[static_cast<size_t>(next[static_cast<size_t>(left)])];
    const auto it = merges_.find(pair_key(a, b));
    if (it != merges_.end()) queue.emplace(it->second.rank, left, a, b, it->second.merged);
  };
  for (size_t i = 0; i + 1 < n; ++i) offer(static_cast<int64_t>(i));
  while (!queue.empty()) {
    const auto [rank, left, a, b, merged] = queue.top();
    queue.pop();
    const size_t l = static_cast<size_t>(left);
    if (!alive[l] || symbols[l] != a || next[l] < 0) continue;
    const size_t r = static_cast<size_t>(next[l]);
    if (symbols[r] != b) continue;
    symbols[l] = merged;
    alive[r] = false;
    next[l] = next[r];
    if (next[r] >= 0) prev[static_cast<size_t>(next[r])] = left;
    offer(prev[l]);
    offer(left);
  }
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    if (alive[i]) symbols[kept++] = symbols[i];
  }
  symbols.resize(kept);
}

}  // namespace nxrt::genai
