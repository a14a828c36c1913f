// Scatter (opset 9-12), ScatterElements and ScatterND: output = copy of data, then updates written (or combined
// with reduction add/mul/max/min) at the positions the indices name. reshape validates every index value.
// Parallel tasks own disjoint sets of output positions and visit the updates of each position in index order,
// so duplicate indices give the same result as the sequential definition, at any thread count.
#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <type_traits>
#include <vector>

#include "ep/cpu/tensor/data_movement.h"
#include "ep/cpu/tensor/index_util.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

// Strings take add (concatenation, numpy's + on str objects, as the reference and onnxruntime give it) and max/min
// (bytewise order of the UTF-8 bytes, which is code point order); mul has no meaning for them.
using ReducibleTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                uint16_t, uint32_t, uint64_t, bool, std::string, std::complex<float>,
                                std::complex<double>>;

template <class T>
constexpr bool kIsComplex = std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

template <class T>
constexpr bool kIsString = std::is_same_v<T, std::string>;

// Integer add/mul wrap modulo 2^bits (computed unsigned and at least 32 bits wide, so no promotion overflows).
template <Reduction R, class T>
inline T combine_integer(T a, T b) {
  using W = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
  if constexpr (R == Reduction::kAdd) return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
  if constexpr (R == Reduction::kMul) return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
  if constexpr (R == Reduction::kMax) return std::max(a, b);
  return std::min(a, b);
}

// max/min propagate NaN as numpy.maximum/minimum do.
template <Reduction R, class F>
inline F combine_float(F a, F b) {
  if constexpr (R == Reduction::kAdd) return a + b;
  if constexpr (R == Reduction::kMul) return a * b;
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
  if constexpr (R == Reduction::kMax) return a < b ? b : a;
  return b < a ? b : a;
}

template <Reduction R, class T>
struct Combine {
  static void apply(T& dst, const T& src) {
    if constexpr (R == Reduction::kNone) {
      dst = src;
    } else if constexpr (std::is_same_v<T, bool>) {
      dst = (R == Reduction::kAdd || R == Reduction::kMax) ? (dst || src) : (dst && src);
    } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      dst = T(combine_float<R>(static_cast<float>(dst), static_cast<float>(src)));
    } else if constexpr (std::is_floating_point_v<T>) {
      dst = combine_float<R>(dst, src);
    } else if constexpr (kIsComplex<T>) {
      dst = R == Reduction::kAdd ? dst + src : dst * src;
    } else if constexpr (kIsString<T>) {
      static_assert(R != Reduction::kMul, "strings have no mul reduction");
      // std::string's operator< compares the bytes as unsigned char.
      if constexpr (R == Reduction::kAdd) {
        dst += src;
      } else if constexpr (R == Reduction::kMax) {
        if (dst < src) dst = src;
      } else if (src < dst) {
        dst = src;
      }
    } else {
      dst = combine_integer<R>(dst, src);
    }
  }
};

// Calls fn.template operator()<T, R>() for the tensor's element type (by size for kNone, by dtype otherwise).
template <class Fn>
void visit_scatter(DataType dtype, Reduction reduction, Fn&& fn) {
  if (reduction == Reduction::kNone) {
    visit_element_size(dtype, [&]<class T>() { fn.template operator()<T, Reduction::kNone>(); });
    return;
  }
  visit_dtype<ReducibleTypes>(dtype, [&]<class T>() {
    switch (reduction) {
      case Reduction::kAdd: fn.template operator()<T, Reduction::kAdd>(); break;
      case Reduction::kMul:
        if constexpr (!kIsString<T>) fn.template operator()<T, Reduction::kMul>();
        break;
      case Reduction::kMax:
        if constexpr (!kIsComplex<T>) fn.template operator()<T, Reduction::kMax>();
        break;
      case Reduction::kMin:
        if constexpr (!kIsComplex<T>) fn.template operator()<T, Reduction::kMin>();
        break;
      case Reduction::kNone: break;
    }
  });
}

const char* reduction_name(Reduction r) {
  switch (r) {
    case Reduction::kNone: return "none";
    case Reduction::kAdd: return "add";
    case Reduction::kMul: return "mul";
    case Reduction::kMax: return "max";
    case Reduction::kMin: return "min";
  }
  return "?";
}

// Checks inputs 0 (data), 1 (indices), 2 (updates) and that the reduction applies to the data type.
Status check_scatter_inputs(KernelInputs inputs, Reduction reduction, const std::string& description) {
  if (inputs.size() < 3 || inputs[0] == nullptr || inputs[1] == nullptr || inputs[2] == nullptr) {
    return make_error(StatusCode::kInvalidArgument, description,
                      ": expects inputs 0 (data), 1 (indices) and 2 (updates)");
  }
  const DataType dtype = inputs[0]->dtype();
  if (!movable_type(dtype)) return unsupported_type(description, 0, dtype);
  if (inputs[1]->dtype() != DataType::kInt32 && inputs[1]->dtype() != DataType::kInt64) {
    return bad_index_type(description, 1, inputs[1]->dtype());
  }
  if (inputs[2]->dtype() != dtype) {
    return make_error(StatusCode::kInvalidArgument, description, ": input 2 (updates) type ",
                      data_type_name(inputs[2]->dtype()), " differs from input 0 (data) type ", data_type_name(dtype));
  }
  const bool complex = dtype == DataType::kComplex64 || dtype == DataType::kComplex128;
  if (reduction != Reduction::kNone &&
      (!type_list_contains(ReducibleTypes{}, dtype) ||
       (complex && (reduction == Reduction::kMax || reduction == Reduction::kMin)) ||
       (dtype == DataType::kString && reduction == Reduction::kMul))) {
    return make_error(StatusCode::kNotImplemented, description, ": reduction '", reduction_name(reduction),
                      "' is not supported for type ", data_type_name(dtype));
  }
  return Status::ok();
}

template <class T>
void copy_parallel(const T* src, T* dst, int64_t n, ThreadPool& pool) {
  pool.parallel_for(n, kMoveGrain, [&](int64_t begin, int64_t end) { copy_elements(src + begin, dst + begin, end - begin); });
}

class ScatterElementsKernel final : public Kernel {
 public:
  ScatterElementsKernel(std::string description, int64_t axis, Reduction reduction)
      : description_(std::move(description)), axis_(axis), reduction_(reduction) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(check_scatter_inputs(inputs, reduction_, description_));
    const Tensor& data = *inputs[0];
    const Tensor& indices = *inputs[1];
    const Tensor& updates = *inputs[2];
    const int64_t rank = static_cast<int64_t>(data.rank());
    if (rank == 0) return make_error(StatusCode::kInvalidArgument, description_, ": input 0 (data) must have rank >= 1");
    if (indices.rank() != data.rank() || updates.shape() != indices.shape()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (indices) shape ",
                        shape_to_string(indices.shape()), " and input 2 (updates) shape ",
                        shape_to_string(updates.shape()), " must be equal and of the rank of input 0 (data) shape ",
                        shape_to_string(data.shape()));
    }
    TRY_ASSIGN(const int64_t axis, normalize_axis(axis_, rank, description_, "axis"));
    TRY(check_element_indices(data, indices, axis, description_));
    outputs.assign(1, OutputDesc{data.dtype(), data.shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& data = *inputs[0];
    const Tensor& indices = *inputs[1];
    const Tensor& updates = *inputs[2];
    const size_t axis = static_cast<size_t>(axis_ < 0 ? axis_ + static_cast<int64_t>(data.rank()) : axis_);
    const std::span<const int64_t> idims = indices.shape();
    const std::vector<int64_t> strides = row_major_strides(data.shape());
    const std::span<const int64_t> sspan(strides);
    const std::vector<int64_t> outer_offsets = box_offsets(idims.first(axis), sspan.first(axis));
    const std::vector<int64_t> inner_offsets = box_offsets(idims.subspan(axis + 1), sspan.subspan(axis + 1));
    const int64_t axis_len = idims[axis];
    const int64_t axis_dim = data.shape()[axis];
    const int64_t axis_stride = strides[axis];
    const int64_t inner = static_cast<int64_t>(inner_offsets.size());
    const int64_t outer = static_cast<int64_t>(outer_offsets.size());
    constexpr int64_t kBlock = 1024;
    const int64_t blocks = (inner + kBlock - 1) / kBlock;
    visit_scatter(data.dtype(), reduction_, [&]<class T, Reduction R>() {
      T* dst = outputs[0].data<T>();
      copy_parallel(data.data<T>(), dst, data.numel(), pool);
      if (indices.numel() == 0) return;
      const T* upd = updates.data<T>();
      visit_index_type(indices.dtype(), [&]<class I>() {
        const I* idx = indices.data<I>();
        const int64_t grain = std::max<int64_t>(1, kMoveGrain / std::max<int64_t>(1, axis_len * std::min(inner, kBlock)));
        pool.parallel_for(outer * blocks, grain, [&](int64_t begin, int64_t end) {
          for (int64_t task = begin; task < end; ++task) {
            const int64_t o = task / blocks;
            const int64_t i0 = (task % blocks) * kBlock;
            const int64_t i1 = std::min(inner, i0 + kBlock);
            T* base = dst + outer_offsets[static_cast<size_t>(o)];
            for (int64_t a = 0; a < axis_len; ++a) {
              const int64_t row = (o * axis_len + a) * inner;
              for (int64_t i = i0; i < i1; ++i) {
                T& target = base[wrap_index(idx[row + i], axis_dim) * axis_stride + inner_offsets[static_cast<size_t>(i)]];
                Combine<R, T>::apply(target, upd[row + i]);
              }
            }
          }
        });
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  int64_t axis_;
  Reduction reduction_;
};

class ScatterNDKernel final : public Kernel {
 public:
  ScatterNDKernel(std::string description, Reduction reduction)
      : description_(std::move(description)), reduction_(reduction) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(check_scatter_inputs(inputs, reduction_, description_));
    const Tensor& data = *inputs[0];
    const Tensor& indices = *inputs[1];
    const Tensor& updates = *inputs[2];
    if (indices.rank() < 1) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (indices) must have rank >= 1");
    }
    const int64_t k = indices.shape().back();
    if (k > static_cast<int64_t>(data.rank())) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (indices) shape ",
                        shape_to_string(indices.shape()), " has last dimension ", k, " > rank of input 0 (data) shape ",
                        shape_to_string(data.shape()));
    }
    Shape expected(indices.shape().begin(), indices.shape().end() - 1);
    expected.insert(expected.end(), data.shape().begin() + k, data.shape().end());
    if (updates.shape() != expected) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 2 (updates) shape ",
                        shape_to_string(updates.shape()), " must be ", shape_to_string(expected), " for data shape ",
                        shape_to_string(data.shape()), " and indices shape ", shape_to_string(indices.shape()));
    }
    if (k > 0) {
      const std::span<const int64_t> dims(data.shape());
      TRY(check_index_tuples(indices, dims.first(static_cast<size_t>(k)), description_, 1));
    }
    outputs.assign(1, OutputDesc{data.dtype(), data.shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& data = *inputs[0];
    const Tensor& indices = *inputs[1];
    const Tensor& updates = *inputs[2];
    const int64_t k = indices.shape().back();
    const std::span<const int64_t> dims(data.shape());
    const std::span<const int64_t> addressed = dims.first(static_cast<size_t>(k));
    const int64_t slice = product(dims.subspan(static_cast<size_t>(k)));
    const int64_t tuples = product(std::span<const int64_t>(indices.shape()).first(indices.rank() - 1));
    visit_scatter(data.dtype(), reduction_, [&]<class T, Reduction R>() {
      T* dst = outputs[0].data<T>();
      copy_parallel(data.data<T>(), dst, data.numel(), pool);
      if (tuples == 0 || slice == 0) return;
      const T* upd = updates.data<T>();
      visit_index_type(indices.dtype(), [&]<class I>() {
        const I* idx = indices.data<I>();
        // Tasks split the slice columns; each walks every tuple in order, so duplicates resolve sequentially.
        pool.parallel_for(slice, std::max<int64_t>(64, kMoveGrain / tuples), [&](int64_t begin, int64_t end) {
          for (int64_t t = 0; t < tuples; ++t) {
            int64_t offset = 0;
            for (int64_t j = 0; j < k; ++j) {
              const int64_t bound = addressed[static_cast<size_t>(j)];
              offset = offset * bound + wrap_index(idx[t * k + j], bound);
            }
            T* target = dst + offset * slice;
            const T* source = upd + t * slice;
            for (int64_t c = begin; c < end; ++c) Combine<R, T>::apply(target[c], source[c]);
          }
        });
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  Reduction reduction_;
};

Expected<Reduction> parse_reduction(const KernelInfo& info) {
  if (info.opset() < 16) return Reduction::kNone;
  TRY_ASSIGN(const std::string name, info.node.attr_string("reduction", "none"));
  if (name == "none") return Reduction::kNone;
  if (name == "add") return Reduction::kAdd;
  if (name == "mul") return Reduction::kMul;
  if (info.opset() >= 18 && name == "max") return Reduction::kMax;
  if (info.opset() >= 18 && name == "min") return Reduction::kMin;
  return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": attribute reduction '", name,
                    "' is not supported at opset ", info.opset(),
                    info.opset() >= 18 ? " (none, add, mul, max, min)" : " (none, add, mul)");
}

Expected<std::unique_ptr<Kernel>> create_scatter_elements(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t axis, info.node.attr_int("axis", 0));
  TRY_ASSIGN(const Reduction reduction, parse_reduction(info));
  return std::unique_ptr<Kernel>(std::make_unique<ScatterElementsKernel>(info.node.describe(), axis, reduction));
}

Expected<std::unique_ptr<Kernel>> create_scatter(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t axis, info.node.attr_int("axis", 0));
  return std::unique_ptr<Kernel>(std::make_unique<ScatterElementsKernel>(info.node.describe(), axis, Reduction::kNone));
}

Expected<std::unique_ptr<Kernel>> create_scatter_nd(const KernelInfo& info) {
  TRY_ASSIGN(const Reduction reduction, parse_reduction(info));
  return std::unique_ptr<Kernel>(std::make_unique<ScatterNDKernel>(info.node.describe(), reduction));
}

using ScatterTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                              uint16_t, uint32_t, uint64_t, bool, std::string, std::complex<float>,
                              std::complex<double>>;
constexpr DataTypeMask kScatterMask = type_mask(ScatterTypes{});

const KernelDef kScatterKernels[] = {
    {"Scatter", graph::kOnnxDomain, 9, 12, kScatterMask, 0, create_scatter},
    {"ScatterElements", graph::kOnnxDomain, 11, kLatestOpset, kScatterMask, 0, create_scatter_elements},
    {"ScatterND", graph::kOnnxDomain, 11, kLatestOpset, kScatterMask, 0, create_scatter_nd},
};

}  // namespace

std::span<const KernelDef> scatter_kernels() { return kScatterKernels; }

}  // namespace nxrt::cpu
