// Naive N-ary numpy broadcast reference for elementwise kernel tests: maps each output index to input offsets.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "core/shape.h"

namespace nxrt::cpu::testing {

// Offset into an input of shape `in` for the output multi-index `index` (rank of the output).
inline int64_t broadcast_offset(const Shape& in, const std::vector<int64_t>& index) {
  int64_t offset = 0;
  const size_t lead = index.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) offset = offset * in[d] + (in[d] == 1 ? 0 : index[d + lead]);
  return offset;
}

// Calls fn(flat_output_index, index) for every output element in row-major order.
template <class Fn>
void for_each_index(const Shape& out, Fn fn) {
  const int64_t n = shape_numel(out);
  std::vector<int64_t> index(out.size());
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t rest = flat;
    for (size_t d = out.size(); d-- > 0;) {
      index[d] = rest % out[d];
      rest /= out[d];
    }
    fn(flat, index);
  }
}

template <class T>
std::vector<T> random_values(size_t n, uint32_t seed, double low, double high) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(low, high);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

}  // namespace nxrt::cpu::testing
