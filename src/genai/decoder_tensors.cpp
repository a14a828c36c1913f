// Decoder feeds and fetches (contracts in decoder_tensors.h).
#include "genai/decoder_tensors.h"

#include "core/half.h"

namespace nxrt::genai {

void put_index(Tensor& t, int64_t i, int64_t value) {
  if (t.dtype() == DataType::kInt32) {
    t.data<int32_t>()[i] = static_cast<int32_t>(value);
  } else {
    t.data<int64_t>()[i] = value;
  }
}

Status check_logits(const Tensor& logits, int64_t batch, int64_t vocab) {
  if (logits.rank() != 3 || logits.shape()[0] != batch || logits.shape()[1] < 1 || logits.shape()[2] < vocab ||
      (logits.dtype() != DataType::kFloat32 && logits.dtype() != DataType::kFloat16)) {
    return make_error(StatusCode::kInvalidArgument, "genai: logits ", shape_to_string(logits.shape()),
                      " must be float [batch, positions, vocab_size ", vocab, "]");
  }
  return Status::ok();
}

void last_position_logits(const Tensor& logits, int64_t row, int64_t vocab, float* out) {
  position_logits(logits, row, logits.shape()[1] - 1, vocab, out);
}

void position_logits(const Tensor& logits, int64_t row, int64_t position, int64_t vocab, float* out) {
  const int64_t positions = logits.shape()[1], width = logits.shape()[2];
  const int64_t at = (row * positions + position) * width;
  for (int64_t v = 0; v < vocab; ++v) {
    out[v] = logits.dtype() == DataType::kFloat32 ? logits.data<float>()[at + v]
                                                  : static_cast<float>(logits.data<Float16>()[at + v]);
  }
}

}  // namespace nxrt::genai
