// Decoder feeds and fetches shared by the Generator and the BatchEngine: integer inputs in the type the decoder
// declares, and the logits of each sequence's last position; and the load-time narrowing of a decoder to those
// logits.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/status.h"
#include "core/tensor.h"
#include "graph/graph.h"

namespace nxrt::genai {

// Writes integer `value` at flat index i of an int32 or int64 tensor (ids, attention mask, positions).
void put_index(Tensor& t, int64_t i, int64_t value);

// INVALID_ARGUMENT unless `logits` is float32 or float16 [batch, positions >= 1, >= vocab].
Status check_logits(const Tensor& logits, int64_t batch, int64_t vocab);

// The first `vocab` logits of the last position of row `row` of checked `logits`, as floats, into out[0, vocab).
void last_position_logits(const Tensor& logits, int64_t row, int64_t vocab, float* out);
// The same at `position` (below the logits' positions).
void position_logits(const Tensor& logits, int64_t row, int64_t position, int64_t vocab, float* out);

// The graph input that gather_logit_rows adds: int64 [batch, 1, 1], for each row the position whose logits the run
// returns (its last token; right-padded rows differ).
inline constexpr const char* kLogitPositionsInput = "nxrt_logit_positions";

// A prompt of S tokens otherwise computes S rows of the vocabulary projection (the largest product of a small
// model: 512 x 768 x 32000 for a 125M Llama) and an S x vocab logits tensor, of which the engine reads one row per
// sequence. When graph output `logits` is made by a row-wise projection of a [batch, positions, hidden] value
// (MatMul with a rank-2 initializer weight, or com.microsoft MatMulNBits) and nothing else reads it, this feeds the
// projection only the rows named by a new graph input kLogitPositionsInput (GatherND, batch_dims 1), so `logits`
// becomes [batch, 1, vocab], and returns true. Returns false and leaves the graph unchanged for any other graph,
// and when the model already has a value of that name.
bool gather_logit_rows(graph::Graph& graph, const std::string& logits);

// The kLogitPositionsInput feed: positions[b] for row b.
Expected<Tensor> logit_positions_tensor(std::span<const int64_t> positions);

}  // namespace nxrt::genai
