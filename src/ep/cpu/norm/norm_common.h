// Private helpers shared by the normalization kernels (norm*.cpp): accumulator types, float-family element
// conversion, input validation, and the create functions each file exports to the table in norm.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ep/cpu/kernel.h"

namespace nxrt::cpu::norm {

// The variance of a set whose mean is not finite (it holds NaN or an infinity) is NaN, (inf - inf)^2; the moment
// sums clamp a rounding-negative variance at 0, which would turn that NaN into 0.
inline double variance_with_mean(double mean, double variance) {
  return std::isfinite(mean) ? variance : std::numeric_limits<double>::quiet_NaN();
}

// f16/bf16/f32 compute in float, f64 in double.
template <class T>
using AccOf = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
AccOf<T> load(T x) {
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
    return x;
  } else {
    return static_cast<float>(x);
  }
}

template <class T, class Acc>
T store(Acc v) {
  if constexpr (std::is_same_v<T, double>) {
    return static_cast<double>(v);
  } else if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(v);
  } else {
    return T(static_cast<float>(v));
  }
}

// Sum over x[0..n) of (x - shift) or, when Squared, (x - shift)^2. Independent accumulator lanes in the
// compute type keep the loop vectorizable; they are flushed into a double total every block, so long rows keep
// double-like precision.
template <bool Squared, class T>
double row_sum(const T* x, int64_t n, AccOf<T> shift) {
  using Acc = AccOf<T>;
  constexpr int kLanes = 16;
  constexpr int64_t kBlock = 1024;
  double total = 0;
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t end = std::min(n, start + kBlock);
    Acc lanes[kLanes] = {};
    int64_t i = start;
    for (; i + kLanes <= end; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) {
        const Acc d = load(x[i + j]) - shift;
        lanes[j] += Squared ? d * d : d;
      }
    }
    for (; i < end; ++i) {
      const Acc d = load(x[i]) - shift;
      lanes[0] += Squared ? d * d : d;
    }
    for (int j = 0; j < kLanes; ++j) total += static_cast<double>(lanes[j]);
  }
  return total;
}

inline bool mask_has(DataTypeMask mask, DataType type) { return ((mask >> static_cast<int>(type)) & 1u) != 0; }

inline constexpr DataTypeMask kFloatMask = type_mask(FloatTypes{});

// Reads element i of a float-family tensor as double.
inline double element_as_double(const Tensor& t, int64_t i) {
  double v = 0;
  visit_dtype<FloatTypes>(t.dtype(), [&]<class T>() { v = static_cast<double>(load(t.data<T>()[i])); });
  return v;
}

// Every element of a float-family tensor converted to Acc.
template <class Acc>
std::vector<Acc> float_values(const Tensor& t) {
  std::vector<Acc> out(static_cast<size_t>(t.numel()));
  visit_dtype<FloatTypes>(t.dtype(), [&]<class T>() {
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) out[static_cast<size_t>(i)] = static_cast<Acc>(load(p[i]));
  });
  return out;
}

// Writes Acc values into a float-family tensor.
template <class Acc>
void write_float_values(Tensor& t, const std::vector<Acc>& values) {
  visit_dtype<FloatTypes>(t.dtype(), [&]<class T>() {
    T* p = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = store<T>(values[i]);
  });
}

// INVALID_ARGUMENT unless input `index` is present and its dtype is in `types`.
inline Status require_input(KernelInputs inputs, size_t index, const std::string& description,
                            DataTypeMask types, const char* input_name) {
  if (inputs.size() <= index || inputs[index] == nullptr) {
    return make_error(StatusCode::kInvalidArgument, description, ": missing input ", index, " (", input_name, ")");
  }
  if (!mask_has(types, inputs[index]->dtype())) {
    return make_error(StatusCode::kInvalidArgument, description, ": unsupported type ",
                      data_type_name(inputs[index]->dtype()), " for input ", index, " (", input_name, ")");
  }
  return Status::ok();
}

inline Expected<int64_t> normalized_axis(int64_t axis, int64_t rank, const std::string& description,
                                         const char* what) {
  if (axis < -rank || axis >= rank) {
    return make_error(StatusCode::kInvalidArgument, description, ": ", what, " ", axis,
                      " is out of range for input 0 of rank ", rank);
  }
  return axis < 0 ? axis + rank : axis;
}

// Offsets into a tensor unidirectionally broadcast to X, with X split at `axis` into outer rows and inner
// columns: element (o, i) of X reads the parameter at outer_offset(o) + inner_offsets[i].
class SplitBroadcast {
 public:
  static Expected<SplitBroadcast> make(const Shape& param, const Shape& x, size_t axis,
                                       const std::string& description, const char* input_name);
  int64_t outer_offset(int64_t o) const;
  const std::vector<int64_t>& inner_offsets() const { return inner_offsets_; }
  // inner_offsets()[i] == i for every column (the parameter covers the normalized dims exactly).
  bool inner_contiguous() const { return inner_contiguous_; }

 private:
  std::vector<int64_t> outer_dims_;
  std::vector<int64_t> outer_strides_;  // 0 on broadcast dims
  std::vector<int64_t> inner_offsets_;
  bool inner_contiguous_ = true;
};

Expected<std::unique_ptr<Kernel>> create_batch_norm(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_instance_norm(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_group_norm(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_layer_norm(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_rms_norm(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_simplified_layer_norm(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_lp_norm(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_lrn(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_mvn(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_dropout(const KernelInfo& info);

}  // namespace nxrt::cpu::norm
