// Beam search of the Generator (contract in generator.h): one step over all rows (prompts x beams), the closed
// hypotheses per prompt, the cache gathered from the parent beams, and the final sequences.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "genai/generator.h"

namespace nxrt::genai {

namespace {

// Log-softmax of one row of logits.
void log_softmax(std::vector<float>& row) {
  const float top = *std::max_element(row.begin(), row.end());
  double sum = 0.0;
  for (const float v : row) sum += std::exp(static_cast<double>(v - top));
  const float shift = top + static_cast<float>(std::log(sum));
  for (float& v : row) v -= shift;
}

}  // namespace

Status Generator::gather_cache(const std::vector<int64_t>& parents) {
  const Model::Io& io = model_->io();
  const size_t axis = io.combined_cache ? 1 : 0;  // the batch axis of [B, Nk, S, H] or [2, B, Nk, S, H]
  for (Tensor& past : past_) {
    const Shape& shape = past.shape();
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= shape[d];
    for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
    const size_t block = data_type_storage_bytes(past.dtype(), inner);
    TRY_ASSIGN(Tensor gathered, Tensor::allocate(past.dtype(), shape));
    const int64_t rows = shape[axis];
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t r = 0; r < rows; ++r) {
        std::memcpy(static_cast<char*>(gathered.raw_data()) + static_cast<size_t>(o * rows + r) * block,
                    static_cast<const char*>(past.raw_data()) +
                        static_cast<size_t>(o * rows + parents[static_cast<size_t>(r)]) * block,
                    block);
      }
    }
    past = std::move(gathered);
  }
  return Status::ok();
}

Status Generator::beam_step() {
  const int64_t k = beams_, prompts = static_cast<int64_t>(closed_.size());
  const int64_t vocab = model_->config().vocab_size;
  const auto& eos = model_->config().eos_token_ids;
  const auto is_eos = [&](int32_t t) { return std::find(eos.begin(), eos.end(), t) != eos.end(); };
  const float penalty = static_cast<float>(search_.length_penalty);
  std::vector<int64_t> parents(static_cast<size_t>(prompts * k));
  std::vector<int32_t> tokens(parents.size(), model_->config().pad_token_id);
  std::vector<float> scores(parents.size(), 0.0f);
  for (int64_t p = 0; p < prompts; ++p) {
    const size_t first_row = static_cast<size_t>(p * k);
    if (prompt_done_[static_cast<size_t>(p)]) {  // done prompts keep their rows, padded
      for (int64_t j = 0; j < k; ++j) parents[first_row + static_cast<size_t>(j)] = p * k + j;
      continue;
    }
    // Every (beam, token) continuation's summed log-probability; the 2k best, best first.
    std::vector<float> candidates(static_cast<size_t>(k * vocab));
    for (int64_t j = 0; j < k; ++j) {
      std::vector<float> row = processed_logits(p * k + j);
      log_softmax(row);
      for (int64_t v = 0; v < vocab; ++v) {
        candidates[static_cast<size_t>(j * vocab + v)] = row[static_cast<size_t>(v)] + beam_scores_[first_row + static_cast<size_t>(j)];
      }
    }
    std::vector<int64_t> order(candidates.size());
    std::iota(order.begin(), order.end(), 0);
    const size_t best = std::min<size_t>(static_cast<size_t>(2 * k), order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(best), order.end(),
                      [&](int64_t a, int64_t b) {
                        return candidates[static_cast<size_t>(a)] > candidates[static_cast<size_t>(b)] ||
                               (candidates[static_cast<size_t>(a)] == candidates[static_cast<size_t>(b)] && a < b);
                      });
    const size_t length = sequences_[first_row].size();  // before this step's token
    auto& closed = closed_[static_cast<size_t>(p)];
    int64_t kept = 0;
    for (size_t rank = 0; rank < best && kept < k; ++rank) {
      const int64_t j = order[rank] / vocab;
      const int32_t token = static_cast<int32_t>(order[rank] % vocab);
      const float score = candidates[static_cast<size_t>(order[rank])];
      if (is_eos(token)) {
        if (rank >= static_cast<size_t>(k)) continue;  // an end below the first k does not close a hypothesis
        const float closed_score = score / std::pow(static_cast<float>(length), penalty);
        if (static_cast<int64_t>(closed.size()) < k || closed_score > closed.back().score) {
          closed.push_back({sequences_[first_row + static_cast<size_t>(j)], closed_score});
          std::stable_sort(closed.begin(), closed.end(),
                           [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
          if (static_cast<int64_t>(closed.size()) > k) closed.pop_back();
        }
        continue;
      }
      parents[first_row + static_cast<size_t>(kept)] = p * k + j;
      tokens[first_row + static_cast<size_t>(kept)] = token;
      scores[first_row + static_cast<size_t>(kept)] = score;
      ++kept;
    }
    // Done once k hypotheses are closed and (early_stopping, or the best score now cannot beat the worst closed).
    if (static_cast<int64_t>(closed.size()) >= k) {
      const float top = candidates[static_cast<size_t>(order[0])];
      prompt_done_[static_cast<size_t>(p)] =
          search_.early_stopping || closed.back().score >= top / std::pow(static_cast<float>(length), penalty);
    }
  }
  TRY(gather_cache(parents));
  std::vector<std::vector<int32_t>> next(sequences_.size());
  std::vector<std::vector<int32_t>> reordered(sequences_.size());
  for (size_t r = 0; r < sequences_.size(); ++r) {
    reordered[r] = sequences_[static_cast<size_t>(parents[r])];
    reordered[r].push_back(tokens[r]);
    next[r] = {tokens[r]};
  }
  sequences_ = std::move(reordered);
  beam_scores_ = std::move(scores);
  pending_ = std::move(next);
  logits_fresh_ = false;
  const bool all_done = std::all_of(prompt_done_.begin(), prompt_done_.end(), [](bool d) { return d; });
  if (all_done || padding_[0] + static_cast<int64_t>(sequences_[0].size()) >= search_.max_length) finalize_beams();
  return Status::ok();
}

void Generator::finalize_beams() {
  const int64_t k = beams_, prompts = static_cast<int64_t>(closed_.size());
  const float penalty = static_cast<float>(search_.length_penalty);
  std::vector<std::vector<int32_t>> outputs;
  for (int64_t p = 0; p < prompts; ++p) {
    auto& closed = closed_[static_cast<size_t>(p)];
    if (!prompt_done_[static_cast<size_t>(p)]) {  // the open beams compete as they are
      for (int64_t j = 0; j < k; ++j) {
        const size_t row = static_cast<size_t>(p * k + j);
        const float score = beam_scores_[row] / std::pow(static_cast<float>(sequences_[row].size()), penalty);
        if (static_cast<int64_t>(closed.size()) < k || score > closed.back().score) {
          closed.push_back({sequences_[row], score});
          std::stable_sort(closed.begin(), closed.end(),
                           [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
          if (static_cast<int64_t>(closed.size()) > k) closed.pop_back();
        }
      }
    }
    for (int64_t i = 0; i < search_.num_return_sequences && i < static_cast<int64_t>(closed.size()); ++i) {
      outputs.push_back(closed[static_cast<size_t>(i)].tokens);  // without the end token, as onnxruntime_genai
    }
  }
  sequences_ = std::move(outputs);
  finished_.assign(sequences_.size(), true);
  beams_final_ = true;
}

}  // namespace nxrt::genai
