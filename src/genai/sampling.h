// Token choice from one row of decoder logits, shared by the Generator and the BatchEngine.
//   apply_penalties: repetition_penalty over the whole sequence (a seen token's logit is divided by it when
//   positive, multiplied when negative, as onnxruntime_genai does), presence_penalty and frequency_penalty over the
//   tokens generated since `generated_from` (OpenAI's: logit -= presence * [count > 0] + frequency * count), and
//   min_length (end-of-sequence ids get -inf while the sequence is shorter).
//   pick_token: greedy (the first largest score) unless do_sample; sampling keeps the top_k best (0: all), takes
//   the softmax at the temperature, cuts at top_p cumulative probability and below min_p times the best one, and
//   draws from what is left with `random`.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "genai/config.h"

namespace nxrt::genai {

void apply_penalties(std::span<float> scores, std::span<const int32_t> sequence, size_t generated_from,
                     const SearchOptions& search, const std::vector<int32_t>& eos_token_ids);

int32_t pick_token(std::span<const float> scores, const SearchOptions& search, std::mt19937_64& random);

// log_softmax of `scores` at index `token`, and the `count` best (token, log-probability) pairs, best first (ties:
// the lower id first).
struct TokenLogprobs {
  float logprob = 0.0f;
  std::vector<std::pair<int32_t, float>> top;
};
TokenLogprobs token_logprobs(std::span<const float> scores, int32_t token, int64_t count);

}  // namespace nxrt::genai
