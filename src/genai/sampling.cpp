// Penalties, greedy and sampled token choice, log-probabilities (contracts in sampling.h).
#include "genai/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

namespace nxrt::genai {

void apply_penalties(std::span<float> scores, std::span<const int32_t> sequence, size_t generated_from,
                     const SearchOptions& search, const std::vector<int32_t>& eos_token_ids) {
  const size_t vocab = scores.size();
  if (search.repetition_penalty != 1.0) {
    std::vector<bool> seen(vocab, false);
    for (const int32_t t : sequence) {
      if (t >= 0 && static_cast<size_t>(t) < vocab) seen[static_cast<size_t>(t)] = true;
    }
    const float p = static_cast<float>(search.repetition_penalty);
    for (size_t v = 0; v < vocab; ++v) {
      if (seen[v]) scores[v] = scores[v] < 0 ? scores[v] * p : scores[v] / p;
    }
  }
  if (search.presence_penalty != 0.0 || search.frequency_penalty != 0.0) {
    std::unordered_map<int32_t, int64_t> counts;
    for (size_t i = generated_from; i < sequence.size(); ++i) ++counts[sequence[i]];
    for (const auto& [token, count] : counts) {
      if (token < 0 || static_cast<size_t>(token) >= vocab) continue;
      scores[static_cast<size_t>(token)] -=
          static_cast<float>(search.presence_penalty + search.frequency_penalty * static_cast<double>(count));
    }
  }
  if (static_cast<int64_t>(sequence.size()) < search.min_length) {
    for (const int32_t eos : eos_token_ids) {
      if (eos >= 0 && static_cast<size_t>(eos) < vocab) scores[static_cast<size_t>(eos)] = -INFINITY;
    }
  }
}

int32_t pick_token(std::span<const float> scores, const SearchOptions& search, std::mt19937_64& random) {
  if (!search.do_sample) return static_cast<int32_t>(std::max_element(scores.begin(), scores.end()) - scores.begin());
  std::vector<int32_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  const size_t keep =
      search.top_k > 0 ? std::min<size_t>(static_cast<size_t>(search.top_k), order.size()) : order.size();
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                    [&](int32_t x, int32_t y) { return scores[static_cast<size_t>(x)] > scores[static_cast<size_t>(y)]; });
  order.resize(keep);
  std::vector<double> probs(keep);
  const double top = scores[static_cast<size_t>(order[0])];
  double sum = 0.0;
  for (size_t i = 0; i < keep; ++i) {
    probs[i] = std::exp((scores[static_cast<size_t>(order[i])] - top) / search.temperature);
    sum += probs[i];
  }
  size_t cut = keep;
  double mass = 0.0;
  for (size_t i = 0; i < keep; ++i) {
    probs[i] /= sum;
    if (probs[i] < search.min_p * probs[0] && i > 0) {
      cut = i;
      break;
    }
    mass += probs[i];
    if (mass >= search.top_p) {
      cut = i + 1;
      break;
    }
  }
  std::discrete_distribution<size_t> choose(probs.begin(), probs.begin() + static_cast<std::ptrdiff_t>(cut));
  return order[choose(random)];
}

TokenLogprobs token_logprobs(std::span<const float> scores, int32_t token, int64_t count) {
  float top = -INFINITY;
  for (const float s : scores) top = std::max(top, s);
  double sum = 0.0;
  for (const float s : scores) sum += std::exp(static_cast<double>(s) - top);
  const float log_sum = static_cast<float>(std::log(sum)) + top;
  TokenLogprobs result;
  if (token >= 0 && static_cast<size_t>(token) < scores.size()) result.logprob = scores[static_cast<size_t>(token)] - log_sum;
  const size_t n = std::min<size_t>(static_cast<size_t>(std::max<int64_t>(count, 0)), scores.size());
  if (n == 0) return result;
  std::vector<int32_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(), [&](int32_t x, int32_t y) {
    const float a = scores[static_cast<size_t>(x)], b = scores[static_cast<size_t>(y)];
    return a > b || (a == b && x < y);
  });
  for (size_t i = 0; i < n; ++i) result.top.emplace_back(order[i], scores[static_cast<size_t>(order[i])] - log_sum);
  return result;
}

}  // namespace nxrt::genai
