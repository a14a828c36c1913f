// Index-selecting reductions: ArgMax, ArgMin, TopK.
// All three view the input as `outer x n x inner` around `axis`. NaN orders above every number (numpy's sort
// and argmax/argmin agree on that), ties go to the lower index (the higher one for select_last_index).
// TopK always returns its k elements sorted, which `sorted = 0` permits.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ep/cpu/tensor/data_movement.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

constexpr int64_t kGrain = 16384;
constexpr int64_t kBlock = 256;

template <class T>
using KeyOf = std::conditional_t<std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>, float, T>;

template <class K>
bool is_nan(K v) {
  if constexpr (std::is_floating_point_v<K>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// Numbers ascend, NaN last.
template <class K>
bool above(K a, K b) {
  if constexpr (std::is_floating_point_v<K>) {
    if (std::isnan(a)) return !std::isnan(b);
  }
  return a > b;
}

template <bool Max, bool Last, class K>
bool replaces(K v, K best) {
  if constexpr (Last) {
    if (is_nan(v)) return true;
    if (is_nan(best)) return false;
    return Max ? v >= best : v <= best;
  } else {
    if (is_nan(v)) return !is_nan(best);
    return Max ? v > best : v < best;
  }
}


Expected<size_t> normalise_axis(int64_t axis, size_t rank_in, const std::string& description) {
  const int64_t rank = static_cast<int64_t>(rank_in);
  if (axis < -rank || axis >= rank) {
    return make_error(StatusCode::kInvalidArgument, description, ": axis ", axis,
                      " is out of range for input 0 of rank ", rank);
  }
  return static_cast<size_t>(axis < 0 ? axis + rank : axis);
}

Status check_type(const Tensor* x, DataTypeMask types, const std::string& description) {
  if (x == nullptr) return make_error(StatusCode::kInvalidArgument, description, ": missing input 0");
  if (((types >> static_cast<int>(x->dtype())) & 1u) == 0) {
    return make_error(StatusCode::kInvalidArgument, description, ": unsupported input 0 type ",
                      data_type_name(x->dtype()));
  }
  return Status::ok();
}

template <bool Max, bool Last, class T>
void arg_typed(const T* x, int64_t* y, const AxisSplit& s, ThreadPool& pool) {
  using K = KeyOf<T>;
  if (s.inner == 1) {
    pool.parallel_for(s.outer, std::max<int64_t>(1, kGrain / s.n), [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const T* row = x + o * s.n;
        K best = static_cast<K>(row[0]);
        int64_t at = 0;
        for (int64_t i = 1; i < s.n; ++i) {
          const K v = static_cast<K>(row[i]);
          if (replaces<Max, Last>(v, best)) {
            best = v;
            at = i;
          }
        }
        y[o] = at;
      }
    });
    return;
  }
  const int64_t blocks = (s.inner + kBlock - 1) / kBlock;
  const int64_t grain = std::max<int64_t>(1, kGrain / (s.n * std::min(kBlock, s.inner)));
  pool.parallel_for(s.outer * blocks, grain, [&](int64_t begin, int64_t end) {
    K best[kBlock];
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / blocks;
      const int64_t col = (item % blocks) * kBlock;
      const int64_t len = std::min(kBlock, s.inner - col);
      const T* base = x + o * s.n * s.inner + col;
      int64_t* at = y + o * s.inner + col;
      for (int64_t j = 0; j < len; ++j) {
        best[j] = static_cast<K>(base[j]);
        at[j] = 0;
      }
      for (int64_t r = 1; r < s.n; ++r) {
        const T* row = base + r * s.inner;
        for (int64_t j = 0; j < len; ++j) {
          const K v = static_cast<K>(row[j]);
          if (replaces<Max, Last>(v, best[j])) {
            best[j] = v;
            at[j] = r;
          }
        }
      }
    }
  });
}

using ArgTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                          uint32_t, uint64_t>;

template <bool Max>
class ArgKernel final : public Kernel {
 public:
  ArgKernel(std::string description, DataTypeMask types, int64_t axis, bool keepdims, bool last)
      : description_(std::move(description)), types_(types), axis_(axis), keepdims_(keepdims), last_(last) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(check_type(inputs.empty() ? nullptr : inputs[0], types_, description_));
    const Tensor& x = *inputs[0];
    TRY_ASSIGN(const size_t axis, normalise_axis(axis_, x.rank(), description_));
    if (x.shape()[axis] == 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 shape ", shape_to_string(x.shape()),
                        " has no elements along axis ", axis_);
    }
    Shape out = x.shape();
    if (keepdims_) {
      out[axis] = 1;
    } else {
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(axis));
    }
    outputs.assign(1, OutputDesc{DataType::kInt64, std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    if (outputs[0].numel() == 0) return Status::ok();
    TRY_ASSIGN(const size_t axis, normalise_axis(axis_, x.rank(), description_));
    const AxisSplit s = split_at(x.shape(), axis);
    visit_dtype<ArgTypes>(x.dtype(), [&]<class T>() {
      if (last_) {
        arg_typed<Max, true>(x.data<T>(), outputs[0].data<int64_t>(), s, pool);
      } else {
        arg_typed<Max, false>(x.data<T>(), outputs[0].data<int64_t>(), s, pool);
      }
    });
    return Status::ok();
  }

 private:
  std::string description_;
  DataTypeMask types_;
  int64_t axis_;
  bool keepdims_;
  bool last_;
};

template <class T>
void topk_typed(const T* x, T* values, int64_t* indices, const AxisSplit& s, int64_t k, bool largest,
                ThreadPool& pool) {
  using K = KeyOf<T>;
  using Entry = std::pair<K, int64_t>;
  const auto first_wins = [largest](const Entry& a, const Entry& b) {
    if (largest ? above(a.first, b.first) : above(b.first, a.first)) return true;
    if (largest ? above(b.first, a.first) : above(a.first, b.first)) return false;
    return a.second < b.second;
  };
  pool.parallel_for(s.outer * s.inner, std::max<int64_t>(1, kGrain / s.n), [&](int64_t begin, int64_t end) {
    std::vector<Entry> entries(static_cast<size_t>(s.n));
    for (int64_t slice = begin; slice < end; ++slice) {
      const int64_t o = slice / s.inner;
      const int64_t c = slice % s.inner;
      const T* in = x + o * s.n * s.inner + c;
      for (int64_t i = 0; i < s.n; ++i) entries[static_cast<size_t>(i)] = {static_cast<K>(in[i * s.inner]), i};
      const auto middle = entries.begin() + static_cast<std::ptrdiff_t>(k);
      if (k == s.n) {
        std::sort(entries.begin(), entries.end(), first_wins);
      } else {
        std::partial_sort(entries.begin(), middle, entries.end(), first_wins);
      }
      T* out_values = values + o * k * s.inner + c;
      int64_t* out_indices = indices + o * k * s.inner + c;
      for (int64_t i = 0; i < k; ++i) {
        const int64_t index = entries[static_cast<size_t>(i)].second;
        out_values[i * s.inner] = in[index * s.inner];
        out_indices[i * s.inner] = index;
      }
    }
  });
}

using TopKTypes = ArgTypes;

class TopKKernel final : public Kernel {
 public:
  TopKKernel(std::string description, DataTypeMask types, int64_t axis, int64_t k_attribute, bool largest)
      : description_(std::move(description)), types_(types), axis_(axis), k_attribute_(k_attribute),
        largest_(largest) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(check_type(inputs.empty() ? nullptr : inputs[0], types_, description_));
    const Tensor& x = *inputs[0];
    TRY_ASSIGN(const size_t axis, normalise_axis(axis_, x.rank(), description_));
    TRY_ASSIGN(const int64_t k, resolved_k(inputs));
    if (k < 0 || k > x.shape()[axis]) {
      return make_error(StatusCode::kInvalidArgument, description_, ": k = ", k, " is out of range for input 0 shape ",
                        shape_to_string(x.shape()), " along axis ", axis_);
    }
    Shape out = x.shape();
    out[axis] = k;
    outputs.assign({OutputDesc{x.dtype(), out}, OutputDesc{DataType::kInt64, out}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    if (outputs[0].numel() == 0) return Status::ok();
    TRY_ASSIGN(const size_t axis, normalise_axis(axis_, x.rank(), description_));
    TRY_ASSIGN(const int64_t k, resolved_k(inputs));
    const AxisSplit s = split_at(x.shape(), axis);
    visit_dtype<TopKTypes>(x.dtype(), [&]<class T>() {
      topk_typed<T>(x.data<T>(), outputs[0].data<T>(), outputs[1].data<int64_t>(), s, k, largest_, pool);
    });
    return Status::ok();
  }

 private:
  Expected<int64_t> resolved_k(KernelInputs inputs) const {
    if (k_attribute_ >= 0) return k_attribute_;
    if (inputs.size() < 2 || inputs[1] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input 1 (K)");
    }
    const Tensor& t = *inputs[1];
    if (t.dtype() != DataType::kInt64 || t.numel() != 1 || t.rank() > 1) {
      return make_error(StatusCode::kInvalidArgument, description_,
                        ": input 1 (K) must be a 1-D int64 tensor with one element, got ", data_type_name(t.dtype()),
                        " shape ", shape_to_string(t.shape()));
    }
    return t.data<int64_t>()[0];
  }

  std::string description_;
  DataTypeMask types_;
  int64_t axis_;
  int64_t k_attribute_;  // -1 when K is input 1
  bool largest_;
};

template <bool Max, DataTypeMask Types>
Expected<std::unique_ptr<Kernel>> create_arg(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t axis, info.node.attr_int("axis", 0));
  TRY_ASSIGN(const int64_t keepdims, info.node.attr_int("keepdims", 1));
  TRY_ASSIGN(const int64_t last, info.node.attr_int("select_last_index", 0));
  return std::unique_ptr<Kernel>(std::make_unique<ArgKernel<Max>>(info.node.describe(), Types, axis, keepdims != 0,
                                                                   info.opset() >= 12 && last != 0));
}

template <DataTypeMask Types>
Expected<std::unique_ptr<Kernel>> create_topk(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t axis, info.node.attr_int("axis", -1));
  TRY_ASSIGN(const int64_t largest, info.node.attr_int("largest", 1));
  int64_t k = -1;
  if (info.opset() < 10) {
    if (info.node.find_attribute("k") == nullptr) {
      return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": required attribute 'k' is missing");
    }
    TRY_ASSIGN(k, info.node.attr_int("k", 0));
    if (k < 0) {
      return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": attribute k = ", k, " is negative");
    }
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<TopKKernel>(info.node.describe(), Types, axis, k, info.opset() < 11 || largest != 0));
}

constexpr DataTypeMask kArgOld = type_mask(TypeList<float, double, Float16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                                    uint16_t, uint32_t, uint64_t>{});
constexpr DataTypeMask kArgNew = type_mask(ArgTypes{});
constexpr DataTypeMask kTopKFloat = type_mask(TypeList<float, double, Float16>{});

const KernelDef kTopKKernels[] = {
    {"ArgMax", graph::kOnnxDomain, 1, 12, kArgOld, 0, create_arg<true, kArgOld>},
    {"ArgMax", graph::kOnnxDomain, 13, kLatestOpset, kArgNew, 0, create_arg<true, kArgNew>},
    {"ArgMin", graph::kOnnxDomain, 1, 12, kArgOld, 0, create_arg<false, kArgOld>},
    {"ArgMin", graph::kOnnxDomain, 13, kLatestOpset, kArgNew, 0, create_arg<false, kArgNew>},
    {"TopK", graph::kOnnxDomain, 1, 10, kTopKFloat, 0, create_topk<kTopKFloat>},
    {"TopK", graph::kOnnxDomain, 11, 23, kArgOld, 0, create_topk<kArgOld>},
    {"TopK", graph::kOnnxDomain, 24, kLatestOpset, kArgNew, 0, create_topk<kArgNew>},
};

}  // namespace

std::span<const KernelDef> topk_kernels() { return kTopKKernels; }

}  // namespace nxrt::cpu
