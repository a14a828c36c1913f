// Numpy-style broadcasting for elementwise kernels with any number of inputs, without materialising the
// broadcast inputs.
//
// A BroadcastPlan coalesces adjacent output dims in which every input broadcasts the same way, so same-shape
// and scalar operands collapse to a single dim and the general case iterates the innermost contiguous run.
// for_each_broadcast_run hands each run to a callback as (output offset, input offsets, count); every input
// advances by plan.step[k] (0 or 1) per element inside the run. Indices are divided once per parallel chunk;
// rows advance with an odometer.
//
// Also: the opset < 7 `broadcast`/`axis` rule of the arithmetic, logic and comparison ops.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/shape.h"
#include "core/status.h"
#include "core/thread_pool.h"
#include "ep/cpu/kernel.h"
#include "graph/graph.h"

namespace nxrt::cpu {

inline constexpr int64_t kElementwiseGrain = 65536;

template <size_t N>
struct BroadcastPlan {
  Shape dims;                                   // coalesced output dims, outermost first; never empty
  std::array<DimList, N> strides;         // element stride of input k per dim; 0 where broadcast
  std::array<int64_t, N> step{};                // stride of input k in the innermost dim: 0 or 1
  int64_t numel = 0;
};

// Every input shape must broadcast to `out` (checked by the caller, e.g. with broadcast_shapes).
template <size_t N>
BroadcastPlan<N> make_broadcast_plan(const std::array<std::span<const int64_t>, N>& inputs,
                                     std::span<const int64_t> out) {
  BroadcastPlan<N> plan;
  plan.numel = shape_numel(out);
  const size_t rank = out.size();
  std::array<bool, N> prev_used{};
  for (size_t i = 0; i < rank; ++i) {
    if (out[i] == 1) continue;
    std::array<bool, N> used{};
    for (size_t k = 0; k < N; ++k) {
      const size_t lead = rank - inputs[k].size();
      used[k] = i >= lead && inputs[k][i - lead] != 1;
    }
    if (!plan.dims.empty() && used == prev_used) {
      plan.dims.back() *= out[i];
      continue;
    }
    plan.dims.push_back(out[i]);
    for (size_t k = 0; k < N; ++k) plan.strides[k].push_back(used[k] ? 1 : 0);
    prev_used = used;
  }
  if (plan.dims.empty()) {
    plan.dims.push_back(1);
    for (size_t k = 0; k < N; ++k) plan.strides[k].push_back(1);
  }
  for (size_t k = 0; k < N; ++k) {
    int64_t stride = 1;
    for (size_t d = plan.dims.size(); d-- > 0;) {
      if (plan.strides[k][d] != 0) {
        plan.strides[k][d] = stride;
        stride *= plan.dims[d];
      }
    }
    plan.step[k] = plan.strides[k].back() != 0 ? 1 : 0;
  }
  return plan;
}

// Calls fn(out_offset, offsets, count) for the runs covering output elements [begin, end).
template <size_t N, class Fn>
void for_each_broadcast_run_in(const BroadcastPlan<N>& plan, int64_t begin, int64_t end, Fn& fn) {
  if (begin >= end) return;
  const size_t rank = plan.dims.size();
  const int64_t inner = plan.dims[rank - 1];
  int64_t stack_index[16];
  std::vector<int64_t> heap_index;
  int64_t* index = stack_index;
  if (rank > 16) {
    heap_index.resize(rank);
    index = heap_index.data();
  }
  std::array<int64_t, N> row{};
  int64_t rest = begin;
  for (size_t d = rank; d-- > 0;) {
    index[d] = rest % plan.dims[d];
    rest /= plan.dims[d];
    if (d + 1 < rank) {
      for (size_t k = 0; k < N; ++k) row[k] += index[d] * plan.strides[k][d];
    }
  }
  int64_t position = begin;
  int64_t inner_index = index[rank - 1];
  std::array<int64_t, N> offsets;
  while (true) {
    const int64_t count = std::min(inner - inner_index, end - position);
    for (size_t k = 0; k < N; ++k) offsets[k] = row[k] + inner_index * plan.step[k];
    fn(position, offsets, count);
    position += count;
    if (position >= end) return;
    inner_index = 0;
    for (size_t d = rank - 1; d-- > 0;) {
      for (size_t k = 0; k < N; ++k) row[k] += plan.strides[k][d];
      if (++index[d] < plan.dims[d]) break;
      for (size_t k = 0; k < N; ++k) row[k] -= plan.dims[d] * plan.strides[k][d];
      index[d] = 0;
    }
  }
}

// Runs the plan over the whole output, in parallel chunks of at least `grain` elements.
template <size_t N, class Fn>
void for_each_broadcast_run(const BroadcastPlan<N>& plan, ThreadPool& pool, Fn&& fn,
                            int64_t grain = kElementwiseGrain) {
  if (plan.numel == 0) return;
  if (plan.numel <= grain || pool.num_threads() == 1) {
    for_each_broadcast_run_in(plan, 0, plan.numel, fn);
    return;
  }
  pool.parallel_for(plan.numel, grain,
                    [&](int64_t begin, int64_t end) { for_each_broadcast_run_in(plan, begin, end, fn); });
}

// out[i] = op(a[i * a_step], b[i * b_step]) for i < n, with the step cases split so the hot loops vectorise.
template <class TA, class TB, class TO, class Op>
inline void binary_loop(const TA* a, int64_t a_step, const TB* b, int64_t b_step, TO* out, int64_t n, Op& op) {
  if (a_step && b_step) {
    for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], b[i]);
  } else if (a_step) {
    const TB& y = b[0];
    for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], y);
  } else if (b_step) {
    const TA& x = a[0];
    for (int64_t i = 0; i < n; ++i) out[i] = op(x, b[i]);
  } else {
    const TO r = op(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = r;
  }
}

// out = op(a, b) elementwise with a and b broadcast to out_shape (a_shape/b_shape may differ from the tensors'
// own shapes, e.g. for the legacy broadcast rule, as long as the element counts match).
template <class TA, class TB, class TO, class Op>
void broadcast_binary(const TA* a, std::span<const int64_t> a_shape, const TB* b, std::span<const int64_t> b_shape,
                      TO* out, std::span<const int64_t> out_shape, ThreadPool& pool, Op op,
                      int64_t grain = kElementwiseGrain) {
  const BroadcastPlan<2> plan = make_broadcast_plan<2>({a_shape, b_shape}, out_shape);
  for_each_broadcast_run(
      plan, pool,
      [&](int64_t o, const std::array<int64_t, 2>& in, int64_t n) {
        binary_loop(a + in[0], plan.step[0], b + in[1], plan.step[1], out + o, n, op);
      },
      grain);
}

// Opset < 7 `broadcast` attribute: with broadcast=0 the shapes must be equal; with broadcast=1 B's dims match
// A's dims starting at `axis` (default: B is a suffix of A). Returns B's shape padded with 1s to A's rank.
struct LegacyBroadcast {
  bool enabled = false;
  bool has_axis = false;
  int64_t axis = 0;
};

inline Expected<LegacyBroadcast> read_legacy_broadcast(const graph::Node& node) {
  LegacyBroadcast legacy;
  TRY_ASSIGN(const int64_t broadcast, node.attr_int("broadcast", 0));
  legacy.enabled = broadcast != 0;
  legacy.has_axis = node.find_attribute("axis") != nullptr;
  TRY_ASSIGN(legacy.axis, node.attr_int("axis", 0));
  return legacy;
}

inline Expected<Shape> legacy_broadcast_shape(const LegacyBroadcast& legacy, const Shape& a, const Shape& b,
                                              const std::string& description) {
  if (!legacy.enabled) {
    if (a != b) {
      return make_error(StatusCode::kInvalidArgument, description, ": input 1 shape ", shape_to_string(b),
                        " differs from input 0 shape ", shape_to_string(a), " and broadcast is 0");
    }
    return b;
  }
  const int64_t rank = static_cast<int64_t>(a.size());
  const int64_t b_rank = static_cast<int64_t>(b.size());
  int64_t axis = legacy.has_axis ? legacy.axis : rank - b_rank;
  if (axis < 0) axis += rank;
  if (b_rank > rank || axis < 0 || axis > rank - b_rank) {
    return make_error(StatusCode::kInvalidArgument, description, ": input 1 shape ", shape_to_string(b),
                      " cannot broadcast to ", shape_to_string(a), " at axis ", legacy.axis);
  }
  Shape padded(static_cast<size_t>(rank), 1);
  for (int64_t i = 0; i < b_rank; ++i) {
    const int64_t dim = b[static_cast<size_t>(i)];
    const int64_t target = a[static_cast<size_t>(axis + i)];
    if (dim != target && dim != 1) {
      return make_error(StatusCode::kInvalidArgument, description, ": input 1 shape ", shape_to_string(b),
                        " cannot broadcast to ", shape_to_string(a), " at axis ", axis);
    }
    padded[static_cast<size_t>(axis + i)] = dim;
  }
  return padded;
}

// Output shape of a two-input elementwise op, and the shape input 1 broadcasts with (differs from b's own shape
// only under the legacy rule).
struct BinaryShapes {
  Shape out;
  Shape b;
};

inline Expected<BinaryShapes> binary_broadcast_shapes(const LegacyBroadcast* legacy, const Shape& a, const Shape& b,
                                                      const std::string& description) {
  BinaryShapes shapes;
  if (legacy != nullptr) {
    TRY_ASSIGN(shapes.b, legacy_broadcast_shape(*legacy, a, b, description));
    shapes.out = a;
    return shapes;
  }
  auto out = broadcast_shapes(a, b);
  if (!out) {
    return make_error(StatusCode::kInvalidArgument, description, ": input 1 shape ", shape_to_string(b),
                      " cannot broadcast with ", shape_to_string(a));
  }
  shapes.out = std::move(*out);
  shapes.b = b;
  return shapes;
}

// Output shape of an N-input elementwise op (Where, variadic Max/Min/Sum/Mean): every input broadcasts with the
// others, or, when `allow_broadcast` is false (variadic ops before opset 8), all shapes must be equal.
inline Expected<Shape> broadcast_input_shapes(KernelInputs inputs, bool allow_broadcast,
                                              const std::string& description) {
  Shape shape = inputs[0]->shape();
  for (size_t i = 1; i < inputs.size(); ++i) {
    auto next = allow_broadcast ? broadcast_shapes(shape, inputs[i]->shape())
                                : (shape == inputs[i]->shape() ? std::optional<Shape>(shape) : std::nullopt);
    if (!next) {
      return make_error(StatusCode::kInvalidArgument, description, ": input ", i, " shape ",
                        shape_to_string(inputs[i]->shape()), " cannot broadcast with ", shape_to_string(shape));
    }
    shape = std::move(*next);
  }
  return shape;
}

}  // namespace nxrt::cpu
