// The plain-layout depthwise convolution kernel shared by the AVX2 and AVX-512 families (contract at
// f32_conv_depthwise__avx2 in ep/cpu/conv/conv_direct.h), written once over a vector traits type and included only
// by translation units compiled for that ISA (avx2/conv_depthwise_avx2.cpp, avx512/conv_depthwise_avx512.cpp).
//
// One channel's output grid (DirectConvJob: q = oh * grid_w + ow, tap t reads padded[q + taps[t]]) is computed in
// groups of kVectors vectors of consecutive q, each tap's weight broadcast once per group; grid positions past
// out_w are computed and dropped, as in the direct kernel.
//
// Traits V: Reg, Mask, kLanes; zero(), set1(x), load(p), fma(a, b, c) = a * b + c, add(a, b), bit_or(a, b),
// mask(bits) (lane l where bit l is set), load(mask, p) (masked-off lanes read +0 and are not accessed),
// store(p, v), store(mask, p, v), activate(activation, v) and vectorised(kind) (whether activate applies kind).
#pragma once

#include <algorithm>
#include <cstdint>

#include "ep/cpu/conv/conv_direct.h"

namespace nxrt::cpu::conv::depthwise {

constexpr int kVectors = 4;

// Sums the taps of NV consecutive vectors starting at grid position q0 into acc.
template <class V, int NV>
[[gnu::always_inline]] inline void accumulate(const DirectConvJob& job, int64_t q0, typename V::Reg (&acc)[NV]) {
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) acc[v] = V::zero();
  const float* src = job.padded + q0;
  for (int64_t t = 0; t < job.tap_count; ++t) {
    const typename V::Reg weight = V::set1(job.weights[t]);
    const float* p = src + job.taps[t];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[v] = V::fma(weight, V::load(p + v * V::kLanes), acc[v]);
  }
}

// Adds the bias and z, applies the activation and stores the lanes of the vector at grid position q that are real
// outputs (at most two output rows, as grid_w >= kLanes); `row` is q's output row. in_register: V::vectorised of the
// activation, asked once by the caller (an out-of-line call, which would clobber the other accumulators).
template <class V>
[[gnu::always_inline]] inline void finish_vector(const DirectConvJob& job, int64_t q, int64_t row, bool in_register,
                                                 typename V::Reg sum) {
  constexpr int L = V::kLanes;
  const int64_t q_total = (job.out_h - 1) * job.grid_w + job.out_w;
  const int64_t gap = job.grid_w - job.out_w;
  int64_t dst[2];
  unsigned bits[2] = {0, 0};
  for (int r = 0; r < 2; ++r) {
    const int64_t row_start = (row + r) * job.grid_w;
    const int64_t lo = std::max<int64_t>(q, row_start);
    const int64_t hi = std::min<int64_t>({q + L, row_start + job.out_w, q_total});
    dst[r] = q - (row + r) * gap;
    if (hi > lo) bits[r] = ((1u << (hi - q)) - 1u) & ~((1u << (lo - q)) - 1u);
  }
  constexpr unsigned kAll = (1u << L) - 1u;
  typename V::Reg out = V::add(sum, V::set1(job.bias != nullptr ? *job.bias : 0.0f));
  if (job.z != nullptr) {
    // The rows' lanes are disjoint and masked-off lanes read as +0: OR joins them exactly.
    out = V::add(out, V::bit_or(V::load(V::mask(bits[0]), job.z + dst[0]), V::load(V::mask(bits[1]), job.z + dst[1])));
  }
  if (in_register) out = V::activate(job.activation, out);
  if (bits[0] == kAll) {
    V::store(job.y + dst[0], out);
  } else {
    for (int r = 0; r < 2; ++r) {
      if (bits[r] != 0) V::store(V::mask(bits[r]), job.y + dst[r], out);
    }
  }
  if (!in_register) {
    for (int r = 0; r < 2; ++r) {
      if (bits[r] == 0) continue;
      apply_activation(job.activation, job.y + dst[r] + __builtin_ctz(bits[r]), __builtin_popcount(bits[r]));
    }
  }
}

template <class V>
void run(const DirectConvJob& job) {
  constexpr int L = V::kLanes;
  const int64_t q_total = (job.out_h - 1) * job.grid_w + job.out_w;
  const bool in_register = V::vectorised(job.activation.kind);
  int64_t row = 0;  // the output row of the vector being finished, advanced as it moves on
  const auto finish = [&](int64_t q, typename V::Reg sum) {
    while ((row + 1) * job.grid_w <= q) ++row;
    finish_vector<V>(job, q, row, in_register, sum);
  };
  int64_t q0 = 0;
  // Whole groups: every lane of the group is a grid position below q_total.
  for (; q0 + kVectors * L <= q_total; q0 += kVectors * L) {
    typename V::Reg acc[kVectors];
    accumulate<V, kVectors>(job, q0, acc);
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) finish(q0 + v * L, acc[v]);
  }
  // The rest one vector at a time: each starts below q_total and reads at most kLanes - 1 floats past the last
  // real position (the scratch's slack).
  for (; q0 < q_total; q0 += L) {
    typename V::Reg acc[1];
    accumulate<V, 1>(job, q0, acc);
    finish(q0, acc[0]);
  }
}

}  // namespace nxrt::cpu::conv::depthwise
