// Shared driver for elementwise unary kernels (unary_math.cpp, activation.cpp).
//
// An op is a small functor: `template <class C> R operator()(C x) const`, called with C = the element type for
// float/double/integers and C = float for Float16/BFloat16. R is C, or bool for predicates (IsNaN): the output
// element type follows from it. unary_map runs the functor over contiguous chunks in parallel; with a
// branch-free functor the f32/f64 loop vectorises.
//
// UnaryKernel accepts exactly the input types of its registration row for the node's opset (the row's mask),
// so one kernel class serves every opset range of an op.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/vector_math.h"

namespace nxrt::cpu {

inline constexpr int64_t kUnaryGrain = 16384;

template <class T>
inline constexpr bool is_half_type_v = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

template <class T>
using unary_compute_t = std::conditional_t<is_half_type_v<T>, float, T>;

// Unsigned type wide enough that arithmetic on it never promotes to a signed int (wrapping integer math).
template <class T>
using unary_wrap_t = std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>;

// Float -> integer conversion without UB: truncates toward zero, NaN gives 0, out of range saturates.
template <class I, class F>
inline I saturate_to_int(F value) {
  if (!(value == value)) return I{0};
  if (value <= static_cast<F>(std::numeric_limits<I>::lowest())) return std::numeric_limits<I>::lowest();
  // 2^bits as F is exact; anything at or above it saturates (max itself may not be representable in F).
  constexpr F limit = static_cast<F>(std::numeric_limits<I>::max() / 2 + 1) * F{2};
  if (value >= limit) return std::numeric_limits<I>::max();
  return static_cast<I>(value);
}

template <class Out, class R>
inline Out unary_store(R value) {
  if constexpr (is_half_type_v<Out>) {
    return Out(static_cast<float>(value));
  } else {
    return static_cast<Out>(value);
  }
}

template <class Fn, class T>
using unary_result_t = std::invoke_result_t<const Fn&, unary_compute_t<T>>;

// Output element type of op Fn on input T: bool for predicates, else T.
template <class Fn, class T>
using unary_output_t = std::conditional_t<std::is_same_v<unary_result_t<Fn, T>, bool>, bool, T>;

// An op may also provide `void apply_f32(const float* in, float* out, int64_t count) const`, a vectorised form
// for float spans (vector_math.h) that unary_span uses instead of the element functor.
template <class Op>
concept HasApplyF32 = requires(const Op& op, const float* in, float* out, int64_t count) {
  op.apply_f32(in, out, count);
};

// out[i] = op(in[i]) for i in [0, count). The fixed-length inner block lets the compiler vectorise even under
// -O2's very cheap cost model (which refuses loops that would need a scalar epilogue or alias checks).
template <class T, class Out, class Fn>
inline void unary_span(const T* __restrict in, Out* __restrict out, int64_t count, const Fn op) {
  using C = unary_compute_t<T>;
  if constexpr (std::is_same_v<T, float> && std::is_same_v<Out, float> && HasApplyF32<Fn>) {
    op.apply_f32(in, out, count);
    return;
  }
  constexpr int64_t kBlock = 16;
  int64_t i = 0;
  for (; i + kBlock <= count; i += kBlock) {
    for (int64_t j = 0; j < kBlock; ++j) out[i + j] = unary_store<Out>(op(static_cast<C>(in[i + j])));
  }
  for (; i < count; ++i) out[i] = unary_store<Out>(op(static_cast<C>(in[i])));
}

// Float spans of ops with apply_f32 cost ~1 ns per element: below this many, waking a worker costs more.
inline constexpr int64_t kVectorisedUnaryGrain = 65536;

// y[i] = fn(x[i]) for i in [0, n), in parallel chunks of at least kUnaryGrain (kVectorisedUnaryGrain) elements.
template <class T, class Out, class Fn>
void unary_map(const T* x, Out* y, int64_t n, ThreadPool& pool, const Fn& fn) {
  if (n <= 0) return;
  constexpr bool kVectorised = std::is_same_v<T, float> && std::is_same_v<Out, float> && HasApplyF32<Fn>;
  const int64_t grain = kVectorised ? kVectorisedUnaryGrain : kUnaryGrain;
  if (n <= grain) {
    unary_span(x, y, n, fn);
    return;
  }
  pool.parallel_for(n, grain, [x, y, &fn](int64_t begin, int64_t end) {
    unary_span(x + begin, y + begin, end - begin, fn);
  });
}

inline bool mask_has(DataTypeMask mask, DataType type) {
  return static_cast<int>(type) >= 0 && static_cast<int>(type) < 64 && ((mask >> static_cast<int>(type)) & 1u) != 0;
}

// The type mask of the registration row that serves this node (falls back to `fallback` when none does).
inline DataTypeMask registered_types(const KernelInfo& info, DataTypeMask fallback) {
  const KernelDef* def = find_kernel(info.node.domain, info.node.op_type, info.opset());
  return def != nullptr ? def->types : fallback;
}

// Checks that input `index` is present and its type is in `mask`.
inline Status check_input_type(KernelInputs inputs, size_t index, DataTypeMask mask, const std::string& description) {
  if (inputs.size() <= index || inputs[index] == nullptr) {
    return make_error(StatusCode::kInvalidArgument, description, ": missing input ", index);
  }
  const DataType type = inputs[index]->dtype();
  if (!mask_has(mask, type)) {
    return make_error(StatusCode::kInvalidArgument, description, ": unsupported input ", index, " type ",
                      data_type_name(type));
  }
  return Status::ok();
}

template <class Op, class Types>
class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(std::string description, DataTypeMask types, Op op)
      : description_(std::move(description)), types_(types), op_(std::move(op)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(check_input_type(inputs, 0, types_, description_));
    const DataType in_type = inputs[0]->dtype();
    DataType out_type = in_type;
    visit_dtype<Types>(in_type, [&]<class T>() { out_type = data_type_of<unary_output_t<Op, T>>; });
    outputs.assign(1, OutputDesc{out_type, inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    visit_dtype<Types>(x.dtype(), [&]<class T>() {
      using Out = unary_output_t<Op, T>;
      unary_map(x.data<T>(), outputs[0].data<Out>(), x.numel(), pool, op_);
    });
    return Status::ok();
  }

 private:
  std::string description_;
  DataTypeMask types_;
  Op op_;
};

template <class Types, class Op>
Expected<std::unique_ptr<Kernel>> make_unary_kernel(const KernelInfo& info, Op op) {
  return std::unique_ptr<Kernel>(std::make_unique<UnaryKernel<Op, Types>>(
      info.node.describe(), registered_types(info, type_mask(Types{})), std::move(op)));
}

// create_fn for ops without attributes.
template <class Op, class Types>
Expected<std::unique_ptr<Kernel>> create_plain_unary(const KernelInfo& info) {
  return make_unary_kernel<Types>(info, Op{});
}

}  // namespace nxrt::cpu
