// Decoder feeds and fetches shared by the Generator and the BatchEngine: integer inputs in the type the decoder
// declares, and the logits of each sequence's last position.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "core/tensor.h"

namespace nxrt::genai {

// Writes integer `value` at flat index i of an int32 or int64 tensor (ids, attention mask, positions).
void put_index(Tensor& t, int64_t i, int64_t value);

// INVALID_ARGUMENT unless `logits` is float32 or float16 [batch, positions >= 1, >= vocab].
Status check_logits(const Tensor& logits, int64_t batch, int64_t vocab);

// The first `vocab` logits of the last position of row `row` of checked `logits`, as floats, into out[0, vocab).
void last_position_logits(const Tensor& logits, int64_t row, int64_t vocab, float* out);
// The same at `position` (below the logits' positions).
void position_logits(const Tensor& logits, int64_t row, int64_t position, int64_t vocab, float* out);

}  // namespace nxrt::genai
