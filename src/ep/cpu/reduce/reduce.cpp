// Reduce kernels: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare, CumSum and CumProd.
// Axes come from the `axes` attribute before opset 13 (ReduceSum) / 18 (the others) and from the optional
// second input after. An empty axes list reduces every axis unless noop_with_empty_axes is set, in which case
// no axis is reduced and only the per-element transform applies (|x|, x*x, ...), as the reference does.
// Dims are coalesced into kept / reduced groups. When the innermost group is reduced, each output reduces
// contiguous runs (8 lanes, vectorisable); when it is kept, blocks of outputs accumulate whole rows.
// Integer Sum/Prod/L1/SumSquare wrap modulo 2^bits like numpy; float results cast to integers saturate.
// Reductions over zero elements yield the op's identity (Max: lowest, LogSum: -inf, Mean: NaN / 0 for ints).
// Integer Mean and LogSum sum exactly (128 bits); integer L2 computes in double (reduce_ops.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <type_traits>

#include "core/scratch_space.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/vector_math.h"
#include "ep/cpu/reduce/reduce_ops.h"

namespace nxrt::cpu {

namespace {

constexpr int64_t kGrain = 16384;
constexpr int64_t kBlock = 256;

// 1 for each reduced axis of the input (Shape's inline storage: no allocation up to Shape::kInlineDims axes).
using AxisFlags = Shape;

// The offsets of red_offsets live in the calling thread's scratch space (ScratchUse::kReduceOffsets): a plan is
// used by one run, and its tasks only read them.
struct ReducePlan {
  int64_t inner = 1;
  bool inner_reduced = true;
  Shape kept_dims;                       // outer kept groups, outermost first
  Shape kept_strides;                    // their input strides
  std::span<const int64_t> red_offsets;  // input offsets of every combination of outer reduced groups
  int64_t units = 1;                     // product of kept_dims
  int64_t count = 1;                     // reduced elements per output
};

ReducePlan make_plan(const Shape& shape, const AxisFlags& reduced) {
  Shape dims;
  AxisFlags flags;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    if (!flags.empty() && flags.back() == reduced[i]) {
      dims.back() *= shape[i];
    } else {
      dims.push_back(shape[i]);
      flags.push_back(reduced[i]);
    }
  }
  if (dims.empty()) {
    dims.push_back(1);
    flags.push_back(1);
  }
  Shape strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i-- > 0;) strides[i] = strides[i + 1] * dims[i + 1];
  ReducePlan plan;
  plan.inner = dims.back();
  plan.inner_reduced = flags.back() != 0;
  int64_t combinations = 1;
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    if (flags[i]) {
      combinations *= dims[i];
    } else {
      plan.kept_dims.push_back(dims[i]);
      plan.kept_strides.push_back(strides[i]);
      plan.units *= dims[i];
    }
  }
  // Offsets in odometer order: the innermost outer reduced group varies fastest.
  auto* offsets = static_cast<int64_t*>(
      scratch_buffer(ScratchUse::kReduceOffsets, static_cast<size_t>(combinations) * sizeof(int64_t)));
  for (int64_t r = 0; r < combinations; ++r) {
    int64_t rest = r;
    int64_t offset = 0;
    for (size_t i = dims.size() - 1; i-- > 0;) {
      if (!flags[i]) continue;
      offset += (rest % dims[i]) * strides[i];
      rest /= dims[i];
    }
    offsets[r] = offset;
  }
  plan.red_offsets = std::span<const int64_t>(offsets, static_cast<size_t>(combinations));
  plan.count = combinations * (plan.inner_reduced ? plan.inner : 1);
  return plan;
}

int64_t kept_offset(const ReducePlan& plan, int64_t unit) {
  int64_t offset = 0;
  for (size_t d = plan.kept_dims.size(); d-- > 0;) {
    offset += (unit % plan.kept_dims[d]) * plan.kept_strides[d];
    unit /= plan.kept_dims[d];
  }
  return offset;
}

// A compensated sum of a contiguous run (every compensated op adds widen(x)): float and double runs go to the
// vectorised kernel; half types widen each element into 8 float lanes.
template <class F, class T>
CompensatedSum<F> compensated_contiguous(const T* x, int64_t n) {
  if constexpr (std::is_same_v<T, F>) {
    CompensatedSum<F> total;
    vector_compensated_sum(x, n, &total.sum, &total.lost);
    return total;
  }
  F sum[8] = {};
  F lost[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) two_sum_add(sum[j], lost[j], static_cast<F>(widen(x[i + j])));
  }
  for (; i < n; ++i) two_sum_add(sum[0], lost[0], static_cast<F>(widen(x[i])));
  CompensatedSum<F> total;
  for (int j = 0; j < 8; ++j) total = total + CompensatedSum<F>{sum[j], lost[j]};
  return total;
}

template <class Op, class T, class Acc>
Acc reduce_contiguous(const T* x, int64_t n, Acc shift) {
  if constexpr (kCompensated<Acc>) {
    return compensated_contiguous<decltype(Acc::sum)>(x, n);
  }
  Acc lanes[8];
  for (Acc& lane : lanes) lane = Op::init();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) lanes[j] = Op::step(lanes[j], x[i + j], shift);
  }
  for (; i < n; ++i) lanes[0] = Op::step(lanes[0], x[i], shift);
  for (int j = 0; j < 4; ++j) lanes[j] = Op::merge(lanes[j], lanes[j + 4]);
  lanes[0] = Op::merge(lanes[0], lanes[2]);
  lanes[1] = Op::merge(lanes[1], lanes[3]);
  return Op::merge(lanes[0], lanes[1]);
}

template <class Acc>
Acc usable_shift(Acc max_value) {
  return max_value == -std::numeric_limits<Acc>::infinity() ? Acc{0} : max_value;
}

// Short rows: reduced axes no longer than this go through reduce_short_rows_compensated.
constexpr int64_t kShortRow = 32;
constexpr int64_t kRowTile = 64;

// Whether output o reads the contiguous run at x + o * plan.inner (only the innermost axis is reduced).
bool outputs_are_consecutive_rows(const ReducePlan& plan) {
  if (plan.red_offsets.size() != 1 || plan.red_offsets[0] != 0) return false;
  int64_t stride = plan.inner;
  for (size_t d = plan.kept_dims.size(); d-- > 0;) {
    if (plan.kept_strides[d] != stride) return false;
    stride *= plan.kept_dims[d];
  }
  return true;
}

// Compensated sums of many short consecutive rows: tiles of kRowTile rows transposed, so that the column-sum kernel
// adds each row in its own vector lane (one compensated row sum per output costs more in lane merging than in
// adding a row this short).
template <class Op, class T>
void reduce_short_rows_compensated(const T* x, T* y, const ReducePlan& plan, int64_t begin, int64_t end) {
  using Acc = typename Op::Acc;
  const int64_t n = plan.inner;
  T tile[kShortRow * kRowTile];
  int64_t offsets[kShortRow];
  for (int64_t k = 0; k < n; ++k) offsets[k] = k * kRowTile;
  T sum[kRowTile];
  T lost[kRowTile];
  for (int64_t o0 = begin; o0 < end; o0 += kRowTile) {
    const int64_t width = std::min(kRowTile, end - o0);
    for (int64_t b = 0; b < width; ++b) {
      const T* row = x + (o0 + b) * n;
      for (int64_t k = 0; k < n; ++k) tile[k * kRowTile + b] = row[k];
    }
    vector_compensated_column_sums(tile, offsets, n, width, sum, lost);
    for (int64_t b = 0; b < width; ++b) {
      y[o0 + b] = Op::finish(Op::merge(Op::init(), Acc{sum[b], lost[b]}), plan.count, Acc{});
    }
  }
}

template <class Op, class T>
void reduce_inner_reduced(const T* x, T* y, const ReducePlan& plan, int64_t begin, int64_t end) {
  using Acc = typename Op::Acc;
  if constexpr (kCompensated<Acc> && !Op::kShifted) {
    if constexpr (std::is_same_v<T, decltype(Acc::sum)>) {
      if (plan.inner <= kShortRow && outputs_are_consecutive_rows(plan)) {
        reduce_short_rows_compensated<Op>(x, y, plan, begin, end);
        return;
      }
    }
  }
  for (int64_t o = begin; o < end; ++o) {
    const T* base = x + kept_offset(plan, o);
    Acc shift{0};
    if constexpr (Op::kShifted) {
      Acc m = ShiftOp<T>::init();
      for (const int64_t off : plan.red_offsets) {
        m = ShiftOp<T>::merge(m, reduce_contiguous<ShiftOp<T>>(base + off, plan.inner, Acc{0}));
      }
      shift = usable_shift(m);
    }
    Acc acc = Op::init();
    for (const int64_t off : plan.red_offsets) {
      acc = Op::merge(acc, reduce_contiguous<Op>(base + off, plan.inner, shift));
    }
    y[o] = Op::finish(acc, plan.count, shift);
  }
}

// A full block has a constant trip count, which lets the compiler vectorise at -O2.
template <class Op, class T, class Acc>
void fold_row(Acc* acc, const T* row, int64_t len, const Acc* shift) {
  if (len == kBlock) {
    for (int64_t j = 0; j < kBlock; ++j) acc[j] = Op::step(acc[j], row[j], shift[j]);
  } else {
    for (int64_t j = 0; j < len; ++j) acc[j] = Op::step(acc[j], row[j], shift[j]);
  }
}

// acc[j] = the compensated sum of column j (< len) over the rows at `offsets` from base; float and double rows
// go to the vectorised kernel, half types widen each element.
template <class F, class T>
void fold_rows_compensated(CompensatedSum<F>* acc, const T* base, std::span<const int64_t> offsets, int64_t len) {
  F sum[kBlock] = {};
  F lost[kBlock] = {};
  if constexpr (std::is_same_v<T, F>) {
    vector_compensated_column_sums(base, offsets.data(), static_cast<int64_t>(offsets.size()), len, sum, lost);
  } else {
    for (const int64_t off : offsets) {
      const T* row = base + off;
      for (int64_t j = 0; j < len; ++j) two_sum_add(sum[j], lost[j], static_cast<F>(widen(row[j])));
    }
  }
  for (int64_t j = 0; j < len; ++j) acc[j] = CompensatedSum<F>{sum[j], lost[j]};
}

template <class Op, class T>
void reduce_inner_kept(const T* x, T* y, const ReducePlan& plan, int64_t begin, int64_t end) {
  using Acc = typename Op::Acc;
  const int64_t blocks = (plan.inner + kBlock - 1) / kBlock;
  Acc acc[kBlock];
  Acc shift[kBlock];
  for (int64_t item = begin; item < end; ++item) {
    const int64_t unit = item / blocks;
    const int64_t col = (item % blocks) * kBlock;
    const int64_t len = std::min(kBlock, plan.inner - col);
    const T* base = x + kept_offset(plan, unit) + col;
    for (int64_t j = 0; j < len; ++j) shift[j] = Acc{0};
    if constexpr (Op::kShifted) {
      for (int64_t j = 0; j < len; ++j) shift[j] = ShiftOp<T>::init();
      for (const int64_t off : plan.red_offsets) {
        const T* row = base + off;
        for (int64_t j = 0; j < len; ++j) shift[j] = ShiftOp<T>::step(shift[j], row[j], Acc{0});
      }
      for (int64_t j = 0; j < len; ++j) shift[j] = usable_shift(shift[j]);
    }
    if constexpr (kCompensated<Acc>) {
      fold_rows_compensated(acc, base, plan.red_offsets, len);
    } else {
      for (int64_t j = 0; j < len; ++j) acc[j] = Op::init();
      for (const int64_t off : plan.red_offsets) fold_row<Op>(acc, base + off, len, shift);
    }
    T* out = y + unit * plan.inner + col;
    for (int64_t j = 0; j < len; ++j) out[j] = Op::finish(acc[j], plan.count, shift[j]);
  }
}

// One output over a long contiguous run: partial results per chunk, merged in chunk order.
template <class Op, class T>
void reduce_all_parallel(const T* x, T* y, int64_t n, ThreadPool& pool) {
  using Acc = typename Op::Acc;
  const int64_t chunk = std::max<int64_t>(kGrain, n / (4 * pool.num_threads()));
  const int64_t chunks = (n + chunk - 1) / chunk;
  auto* partial =
      static_cast<Acc*>(scratch_buffer(ScratchUse::kReducePartials, static_cast<size_t>(chunks) * sizeof(Acc)));
  auto pass = [&]<class P>(Acc shift) {
    pool.parallel_for(chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const int64_t start = c * chunk;
        partial[c] = reduce_contiguous<P>(x + start, std::min(chunk, n - start), shift);
      }
    });
    Acc total = P::init();
    for (int64_t c = 0; c < chunks; ++c) total = P::merge(total, partial[c]);
    return total;
  };
  Acc shift{0};
  if constexpr (Op::kShifted) shift = usable_shift(pass.template operator()<ShiftOp<T>>(Acc{0}));
  y[0] = Op::finish(pass.template operator()<Op>(shift), n, shift);
}

template <template <class> class OpT, class T>
void reduce_typed(const Tensor& input, Tensor& output, const ReducePlan& plan, ThreadPool& pool) {
  using Op = OpT<T>;
  const T* x = input.data<T>();
  T* y = output.data<T>();
  const int64_t outputs = output.numel();
  if (outputs == 0) return;
  if (plan.count == 0 || input.numel() == 0) {
    const T identity = Op::finish(Op::init(), 0, typename Op::Acc{0});
    std::fill(y, y + outputs, identity);
    return;
  }
  if (plan.inner_reduced) {
    if (outputs == 1 && plan.red_offsets.size() == 1 && plan.inner >= 4 * kGrain && pool.num_threads() > 1) {
      reduce_all_parallel<Op>(x, y, plan.inner, pool);
      return;
    }
    const int64_t grain = std::max<int64_t>(1, kGrain / plan.count);
    pool.parallel_for(plan.units, grain, [&](int64_t begin, int64_t end) {
      reduce_inner_reduced<Op>(x, y, plan, begin, end);
    });
  } else {
    const int64_t blocks = (plan.inner + kBlock - 1) / kBlock;
    const int64_t per_item = std::min(kBlock, plan.inner) * plan.count;
    const int64_t grain = std::max<int64_t>(1, kGrain / per_item);
    pool.parallel_for(plan.units * blocks, grain, [&](int64_t begin, int64_t end) {
      reduce_inner_kept<Op>(x, y, plan, begin, end);
    });
  }
}

template <template <class> class OpT>
class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(std::string description, DataTypeMask types, bool axes_from_input, std::vector<int64_t> axes,
               bool keepdims, bool noop_with_empty_axes)
      : description_(std::move(description)),
        types_(types),
        axes_from_input_(axes_from_input),
        axes_(std::move(axes)),
        keepdims_(keepdims),
        noop_with_empty_axes_(noop_with_empty_axes) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const AxisFlags reduced, reduced_axes(inputs));
    const Tensor& x = *inputs[0];
    Shape out;
    for (size_t i = 0; i < x.rank(); ++i) {
      if (!reduced[i]) {
        out.push_back(x.shape()[i]);
      } else if (keepdims_) {
        out.push_back(1);
      }
    }
    outputs.assign(1, OutputDesc{x.dtype(), std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const AxisFlags reduced, reduced_axes(inputs));
    const ReducePlan plan = make_plan(inputs[0]->shape(), reduced);
    visit_dtype<AllPodTypes>(inputs[0]->dtype(), [&]<class T>() {
      if constexpr (OpT<T>::kSupported) reduce_typed<OpT, T>(*inputs[0], outputs[0], plan, pool);
    });
    return Status::ok();
  }

 private:
  Expected<AxisFlags> reduced_axes(KernelInputs inputs) const {
    if (inputs.empty() || inputs[0] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0 (data)");
    }
    const Tensor& x = *inputs[0];
    const DataType dtype = x.dtype();
    if (((types_ >> static_cast<int>(dtype)) & 1u) == 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input 0 type ",
                        data_type_name(dtype));
    }
    std::span<const int64_t> axes = axes_;
    if (axes_from_input_ && inputs.size() > 1 && inputs[1] != nullptr) {
      const Tensor& t = *inputs[1];
      if (t.dtype() != DataType::kInt64 || t.rank() > 1) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (axes) must be a 1-D int64 tensor, got ",
                          data_type_name(t.dtype()), " shape ", shape_to_string(t.shape()));
      }
      axes = std::span<const int64_t>(t.data<int64_t>(), static_cast<size_t>(t.numel()));
    }
    const int64_t rank = static_cast<int64_t>(x.rank());
    AxisFlags reduced(x.rank(), axes.empty() && !noop_with_empty_axes_ ? 1 : 0);
    for (const int64_t axis : axes) {
      if (axis < -rank || axis >= rank) {
        return make_error(StatusCode::kInvalidArgument, description_, ": axis ", axis,
                          " is out of range for input 0 of rank ", rank);
      }
      const size_t index = static_cast<size_t>(axis < 0 ? axis + rank : axis);
      if (reduced[index]) {
        return make_error(StatusCode::kInvalidArgument, description_, ": axis ", axis, " is repeated in axes");
      }
      reduced[index] = 1;
    }
    return reduced;
  }

  std::string description_;
  DataTypeMask types_;
  bool axes_from_input_;
  std::vector<int64_t> axes_;
  bool keepdims_;
  bool noop_with_empty_axes_;
};

// CumSum / CumProd along one axis: `len` adjacent columns of n rows spaced `inner` apart, running values kept in
// Op's accumulator (Op is SumOp or ProdOp).
template <class Op, class T>
void cumulate_columns(const T* x, T* y, int64_t n, int64_t inner, int64_t len, bool exclusive, bool reverse) {
  using Acc = typename Op::Acc;
  Acc acc[kBlock];
  for (int64_t j = 0; j < len; ++j) acc[j] = Op::init();
  for (int64_t step = 0; step < n; ++step) {
    const int64_t r = reverse ? n - 1 - step : step;
    const T* in = x + r * inner;
    T* out = y + r * inner;
    for (int64_t j = 0; j < len; ++j) {
      const Acc before = acc[j];
      acc[j] = Op::step(acc[j], in[j], Acc{});
      out[j] = Op::finish(exclusive ? before : acc[j], 0, Acc{});
    }
  }
}

using CumulativeTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>;

template <template <class> class Op>
class CumulativeKernel final : public Kernel {
 public:
  CumulativeKernel(std::string description, DataTypeMask types, bool exclusive, bool reverse)
      : description_(std::move(description)), types_(types), exclusive_(exclusive), reverse_(reverse) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const size_t axis, resolved_axis(inputs));
    (void)axis;
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    if (x.numel() == 0) return Status::ok();
    TRY_ASSIGN(const size_t axis, resolved_axis(inputs));
    const Shape& dims = x.shape();
    const int64_t n = dims[axis];
    int64_t inner = 1;
    for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
    const int64_t outer = x.numel() / (n * inner);
    const int64_t blocks = (inner + kBlock - 1) / kBlock;
    const int64_t grain = std::max<int64_t>(1, kGrain / (n * std::min(kBlock, inner)));
    visit_dtype<CumulativeTypes>(x.dtype(), [&]<class T>() {
      const T* in = x.data<T>();
      T* out = outputs[0].data<T>();
      pool.parallel_for(outer * blocks, grain, [&](int64_t begin, int64_t end) {
        for (int64_t item = begin; item < end; ++item) {
          const int64_t col = (item % blocks) * kBlock;
          const int64_t offset = (item / blocks) * n * inner + col;
          cumulate_columns<Op<T>, T>(in + offset, out + offset, n, inner, std::min(kBlock, inner - col), exclusive_,
                                     reverse_);
        }
      });
    });
    return Status::ok();
  }

 private:
  Expected<size_t> resolved_axis(KernelInputs inputs) const {
    if (inputs.size() < 2 || inputs[0] == nullptr || inputs[1] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": expects inputs 0 (x) and 1 (axis)");
    }
    const Tensor& x = *inputs[0];
    if (((types_ >> static_cast<int>(x.dtype())) & 1u) == 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input 0 type ",
                        data_type_name(x.dtype()));
    }
    const Tensor& t = *inputs[1];
    int64_t axis = 0;
    if (t.numel() != 1 || t.rank() > 1 || (t.dtype() != DataType::kInt64 && t.dtype() != DataType::kInt32)) {
      return make_error(StatusCode::kInvalidArgument, description_,
                        ": input 1 (axis) must be an int32 or int64 scalar, got ", data_type_name(t.dtype()), " shape ",
                        shape_to_string(t.shape()));
    }
    axis = t.dtype() == DataType::kInt64 ? t.data<int64_t>()[0] : t.data<int32_t>()[0];
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (axis < -rank || axis >= rank) {
      return make_error(StatusCode::kInvalidArgument, description_, ": axis ", axis,
                        " is out of range for input 0 of rank ", rank);
    }
    return static_cast<size_t>(axis < 0 ? axis + rank : axis);
  }

  std::string description_;
  DataTypeMask types_;
  bool exclusive_;
  bool reverse_;
};

template <template <class> class Op, DataTypeMask Types>
Expected<std::unique_ptr<Kernel>> create_cumulative(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t exclusive, info.node.attr_int("exclusive", 0));
  TRY_ASSIGN(const int64_t reverse, info.node.attr_int("reverse", 0));
  return std::unique_ptr<Kernel>(
      std::make_unique<CumulativeKernel<Op>>(info.node.describe(), Types, exclusive != 0, reverse != 0));
}

// Opset from which `axes` is an input rather than an attribute.
template <template <class> class OpT>
constexpr int kAxesInputOpset = 18;
template <>
constexpr int kAxesInputOpset<SumOp> = 13;

template <template <class> class OpT, DataTypeMask Types>
Expected<std::unique_ptr<Kernel>> create_reduce(const KernelInfo& info) {
  const bool from_input = info.opset() >= kAxesInputOpset<OpT>;
  TRY_ASSIGN(const int64_t keepdims, info.node.attr_int("keepdims", 1));
  TRY_ASSIGN(const int64_t noop, info.node.attr_int("noop_with_empty_axes", 0));
  std::vector<int64_t> axes;
  if (!from_input) {
    TRY_ASSIGN(axes, info.node.attr_ints("axes", {}));
  }
  return std::unique_ptr<Kernel>(std::make_unique<ReduceKernel<OpT>>(
      info.node.describe(), Types, from_input, std::move(axes), keepdims != 0, from_input && noop != 0));
}

using OldTypes = TypeList<float, double, Float16, int32_t, int64_t, uint32_t, uint64_t>;
using NewTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>;
using MinMax12Types = TypeList<float, double, Float16, int32_t, int64_t, uint32_t, uint64_t, int8_t, uint8_t>;
using MinMax13Types = TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t, int8_t, uint8_t>;
using MinMax20Types =
    TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t, int8_t, uint8_t, bool>;

constexpr DataTypeMask kOld = type_mask(OldTypes{});
constexpr DataTypeMask kNew = type_mask(NewTypes{});
constexpr DataTypeMask kFloat = type_mask(FloatTypes{});
constexpr DataTypeMask kMinMax12 = type_mask(MinMax12Types{});
constexpr DataTypeMask kMinMax13 = type_mask(MinMax13Types{});
constexpr DataTypeMask kMinMax20 = type_mask(MinMax20Types{});
constexpr DataTypeMask kCumSum11 = type_mask(TypeList<float, double, int32_t, int64_t, uint32_t, uint64_t>{});

const KernelDef kReduceKernels[] = {
    {"ReduceSum", graph::kOnnxDomain, 1, 12, kOld, 0, create_reduce<SumOp, kOld>},
    {"ReduceSum", graph::kOnnxDomain, 13, kLatestOpset, kNew, 0, create_reduce<SumOp, kNew>},
    {"ReduceMean", graph::kOnnxDomain, 1, 12, kOld, 0, create_reduce<MeanOp, kOld>},
    {"ReduceMean", graph::kOnnxDomain, 13, kLatestOpset, kNew, 0, create_reduce<MeanOp, kNew>},
    {"ReduceProd", graph::kOnnxDomain, 1, 12, kOld, 0, create_reduce<ProdOp, kOld>},
    {"ReduceProd", graph::kOnnxDomain, 13, kLatestOpset, kNew, 0, create_reduce<ProdOp, kNew>},
    {"ReduceL1", graph::kOnnxDomain, 1, 12, kOld, 0, create_reduce<L1Op, kOld>},
    {"ReduceL1", graph::kOnnxDomain, 13, kLatestOpset, kNew, 0, create_reduce<L1Op, kNew>},
    {"ReduceL2", graph::kOnnxDomain, 1, 12, kOld, 0, create_reduce<L2Op, kOld>},
    {"ReduceL2", graph::kOnnxDomain, 13, kLatestOpset, kNew, 0, create_reduce<L2Op, kNew>},
    {"ReduceSumSquare", graph::kOnnxDomain, 1, 12, kOld, 0, create_reduce<SumSquareOp, kOld>},
    {"ReduceSumSquare", graph::kOnnxDomain, 13, kLatestOpset, kNew, 0, create_reduce<SumSquareOp, kNew>},
    {"ReduceLogSum", graph::kOnnxDomain, 1, 12, kOld, 0, create_reduce<LogSumOp, kOld>},
    {"ReduceLogSum", graph::kOnnxDomain, 13, 27, kNew, 0, create_reduce<LogSumOp, kNew>},
    {"ReduceLogSum", graph::kOnnxDomain, 28, kLatestOpset, kFloat, 0, create_reduce<LogSumOp, kFloat>},
    {"ReduceLogSumExp", graph::kOnnxDomain, 1, 12, kOld, 0, create_reduce<LogSumExpOp, kOld>},
    {"ReduceLogSumExp", graph::kOnnxDomain, 13, 27, kNew, 0, create_reduce<LogSumExpOp, kNew>},
    {"ReduceLogSumExp", graph::kOnnxDomain, 28, kLatestOpset, kFloat, 0, create_reduce<LogSumExpOp, kFloat>},
    {"ReduceMax", graph::kOnnxDomain, 1, 11, kOld, 0, create_reduce<MaxOp, kOld>},
    {"ReduceMax", graph::kOnnxDomain, 12, 12, kMinMax12, 0, create_reduce<MaxOp, kMinMax12>},
    {"ReduceMax", graph::kOnnxDomain, 13, 19, kMinMax13, 0, create_reduce<MaxOp, kMinMax13>},
    {"ReduceMax", graph::kOnnxDomain, 20, kLatestOpset, kMinMax20, 0, create_reduce<MaxOp, kMinMax20>},
    {"ReduceMin", graph::kOnnxDomain, 1, 11, kOld, 0, create_reduce<MinOp, kOld>},
    {"ReduceMin", graph::kOnnxDomain, 12, 12, kMinMax12, 0, create_reduce<MinOp, kMinMax12>},
    {"ReduceMin", graph::kOnnxDomain, 13, 19, kMinMax13, 0, create_reduce<MinOp, kMinMax13>},
    {"ReduceMin", graph::kOnnxDomain, 20, kLatestOpset, kMinMax20, 0, create_reduce<MinOp, kMinMax20>},
    {"CumSum", graph::kOnnxDomain, 11, 13, kCumSum11, 0, create_cumulative<SumOp, kCumSum11>},
    {"CumSum", graph::kOnnxDomain, 14, kLatestOpset, kNew, 0, create_cumulative<SumOp, kNew>},
    {"CumProd", graph::kOnnxDomain, 26, kLatestOpset, kNew, 0, create_cumulative<ProdOp, kNew>},
};

}  // namespace

std::span<const KernelDef> reduce_kernels() { return kReduceKernels; }

}  // namespace nxrt::cpu
