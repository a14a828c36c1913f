// Kernels whose output shape depends on input values (computed in reshape from the CPU inputs): NonZero,
// Compress, Unique, Range; and OneHot, whose depth is an input value.
#include <algorithm>
#include <cmath>
#include <complex>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ep/cpu/tensor/data_movement.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

using ValueTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                            uint32_t, uint64_t, bool, std::string, std::complex<float>, std::complex<double>>;

Status require_input(const std::string& description, KernelInputs inputs, size_t index) {
  if (inputs.size() <= index || inputs[index] == nullptr) {
    return make_error(StatusCode::kInvalidArgument, description, ": missing input ", index);
  }
  return Status::ok();
}

template <class T>
bool is_nonzero(const T& value) {
  if constexpr (std::is_same_v<T, std::string>) return !value.empty();
  else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) return static_cast<float>(value) != 0.0f;
  else if constexpr (std::is_same_v<T, bool>) return value;
  else return value != T{};
}

// Strict weak order used by Unique: numeric order, NaN after every number and equal to every NaN, complex
// lexicographic by (real, imag), strings bytewise.
template <class T>
int compare_values(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return compare_values(static_cast<float>(a), static_cast<float>(b));
  } else if constexpr (std::is_floating_point_v<T>) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
    return a < b ? -1 : (b < a ? 1 : 0);
  } else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    const int real = compare_values(a.real(), b.real());
    return real != 0 ? real : compare_values(a.imag(), b.imag());
  } else {
    return a < b ? -1 : (b < a ? 1 : 0);
  }
}

// ---- NonZero -----------------------------------------------------------------------------------------------

class NonZeroKernel final : public Kernel {
 public:
  explicit NonZeroKernel(std::string description) : description_(std::move(description)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_input(description_, inputs, 0));
    const Tensor& x = *inputs[0];
    int64_t count = 0;
    const bool ok = visit_dtype<ValueTypes>(x.dtype(), [&]<class T>() {
      const T* in = x.data<T>();
      for (int64_t i = 0; i < x.numel(); ++i) count += is_nonzero(in[i]) ? 1 : 0;
    });
    if (!ok) return unsupported_type(description_, 0, x.dtype());
    // Shape [rank, count]; a scalar gives [0, count] (the spec: "for scalar input, NonZero produces output shape
    // (0, N) instead of (1, N), which is different from Numpy's behavior").
    outputs.assign(1, OutputDesc{DataType::kInt64, Shape{static_cast<int64_t>(x.rank()), count}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    const Tensor& x = *inputs[0];
    Tensor& y = outputs[0];
    const int64_t rank = static_cast<int64_t>(x.rank());
    const int64_t count = y.shape()[1];
    int64_t* out = y.data<int64_t>();
    const std::vector<int64_t> strides = row_major_strides(x.shape());
    visit_dtype<ValueTypes>(x.dtype(), [&]<class T>() {
      const T* in = x.data<T>();
      int64_t column = 0;
      for (int64_t i = 0; i < x.numel(); ++i) {
        if (!is_nonzero(in[i])) continue;
        for (int64_t d = 0; d < rank; ++d) {
          out[d * count + column] = (i / strides[static_cast<size_t>(d)]) % x.shape()[static_cast<size_t>(d)];
        }
        ++column;
      }
    });
    return Status::ok();
  }

 private:
  std::string description_;
};

// ---- Compress ----------------------------------------------------------------------------------------------

class CompressKernel final : public Kernel {
 public:
  CompressKernel(std::string description, std::optional<int64_t> axis)
      : description_(std::move(description)), axis_(axis) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_input(description_, inputs, 0));
    TRY(require_input(description_, inputs, 1));
    const Tensor& x = *inputs[0];
    const Tensor& condition = *inputs[1];
    if (!movable_type(x.dtype())) return unsupported_type(description_, 0, x.dtype());
    if (condition.dtype() != DataType::kBool || condition.rank() != 1) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (condition) must be a 1-D bool tensor, got ",
                        data_type_name(condition.dtype()), " shape ", shape_to_string(condition.shape()));
    }
    int64_t dim = x.numel();
    Shape out{0};
    size_t axis = 0;
    if (axis_) {
      TRY_ASSIGN(const int64_t a, normalize_axis(*axis_, static_cast<int64_t>(x.rank()), description_, "axis"));
      axis = static_cast<size_t>(a);
      dim = x.shape()[axis];
      out = x.shape();
    }
    const int64_t used = std::min(dim, condition.numel());
    const bool* keep = condition.data<bool>();
    for (int64_t i = used; i < condition.numel(); ++i) {
      if (keep[i]) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (condition) selects index ", i,
                          " beyond dimension ", dim);
      }
    }
    out[axis] = std::count(keep, keep + used, true);
    outputs.assign(1, OutputDesc{x.dtype(), std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    const Tensor& x = *inputs[0];
    const bool* keep = inputs[1]->data<bool>();
    int64_t outer = 1, dim = x.numel(), inner = 1;
    if (axis_) {
      const size_t axis = static_cast<size_t>(*axis_ < 0 ? *axis_ + static_cast<int64_t>(x.rank()) : *axis_);
      dim = x.shape()[axis];
      for (size_t d = 0; d < axis; ++d) outer *= x.shape()[d];
      for (size_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
    }
    const int64_t used = std::min(dim, inputs[1]->numel());
    visit_element_size(x.dtype(), [&]<class T>() {
      const T* in = x.data<T>();
      T* out = outputs[0].data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < used; ++i) {
          if (!keep[i]) continue;
          copy_elements(in + (o * dim + i) * inner, out, inner);
          out += inner;
        }
      }
    });
    return Status::ok();
  }

 private:
  std::string description_;
  std::optional<int64_t> axis_;
};

// ---- Unique ------------------------------------------------------------------------------------------------

// Items are the slices x[o, item, e] of the [outer, items, inner] view (outer = inner = 1 without axis).
struct UniqueResult {
  std::vector<int64_t> first;    // per output item: first index in the input
  std::vector<int64_t> inverse;  // per input item: output item
  std::vector<int64_t> counts;   // per output item
};

template <class T>
UniqueResult compute_unique(const T* data, int64_t outer, int64_t items, int64_t inner, bool sorted) {
  const auto compare_items = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t e = 0; e < inner; ++e) {
        const int c = compare_values(data[(o * items + a) * inner + e], data[(o * items + b) * inner + e]);
        if (c != 0) return c;
      }
    }
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(items));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return compare_items(a, b) < 0; });
  UniqueResult result;
  result.inverse.resize(static_cast<size_t>(items));
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || compare_items(order[i - 1], order[i]) != 0) {
      result.first.push_back(order[i]);
      result.counts.push_back(0);
    }
    result.inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(result.first.size()) - 1;
    ++result.counts.back();
  }
  if (!sorted) {
    std::vector<int64_t> by_first(result.first.size());
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) {
      return result.first[static_cast<size_t>(a)] < result.first[static_cast<size_t>(b)];
    });
    std::vector<int64_t> rank(by_first.size());
    UniqueResult reordered;
    for (size_t g = 0; g < by_first.size(); ++g) {
      rank[static_cast<size_t>(by_first[g])] = static_cast<int64_t>(g);
      reordered.first.push_back(result.first[static_cast<size_t>(by_first[g])]);
      reordered.counts.push_back(result.counts[static_cast<size_t>(by_first[g])]);
    }
    for (int64_t& group : result.inverse) group = rank[static_cast<size_t>(group)];
    reordered.inverse = std::move(result.inverse);
    return reordered;
  }
  return result;
}

class UniqueKernel final : public Kernel {
 public:
  UniqueKernel(std::string description, std::optional<int64_t> axis, bool sorted)
      : description_(std::move(description)), axis_(axis), sorted_(sorted) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_input(description_, inputs, 0));
    const Tensor& x = *inputs[0];
    if (!type_list_contains(ValueTypes{}, x.dtype())) return unsupported_type(description_, 0, x.dtype());
    if (axis_) TRY(normalize_axis(*axis_, static_cast<int64_t>(x.rank()), description_, "axis").status());
    const UniqueResult result = unique(x);
    const int64_t count = static_cast<int64_t>(result.first.size());
    Shape y_shape{count};
    if (axis_) {
      y_shape = x.shape();
      y_shape[axis_index(x)] = count;
    }
    outputs.assign(4, OutputDesc{DataType::kInt64, Shape{count}});
    outputs[0] = OutputDesc{x.dtype(), std::move(y_shape)};
    outputs[2].shape = Shape{static_cast<int64_t>(result.inverse.size())};
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    const Tensor& x = *inputs[0];
    const UniqueResult result = unique(x);
    // Plain variables, not a structured binding: clang 14 (the fuzz build) cannot capture bindings in lambdas.
    const auto dims = view(x);
    const int64_t outer = std::get<0>(dims), items = std::get<1>(dims), inner = std::get<2>(dims);
    const int64_t count = static_cast<int64_t>(result.first.size());
    visit_dtype<ValueTypes>(x.dtype(), [&]<class T>() {
      const T* in = x.data<T>();
      T* out = outputs[0].data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t g = 0; g < count; ++g) {
          copy_elements(in + (o * items + result.first[static_cast<size_t>(g)]) * inner,
                        out + (o * count + g) * inner, inner);
        }
      }
    });
    const std::vector<int64_t>* parts[] = {&result.first, &result.inverse, &result.counts};
    for (size_t o = 1; o < outputs.size() && o < 4; ++o) {
      std::copy(parts[o - 1]->begin(), parts[o - 1]->end(), outputs[o].data<int64_t>());
    }
    return Status::ok();
  }

 private:
  size_t axis_index(const Tensor& x) const {
    return static_cast<size_t>(*axis_ < 0 ? *axis_ + static_cast<int64_t>(x.rank()) : *axis_);
  }

  std::tuple<int64_t, int64_t, int64_t> view(const Tensor& x) const {
    if (!axis_) return {1, x.numel(), 1};
    const size_t axis = axis_index(x);
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= x.shape()[d];
    for (size_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
    return {outer, x.shape()[axis], inner};
  }

  UniqueResult unique(const Tensor& x) const {
    // Plain variables, not a structured binding: clang 14 (the fuzz build) cannot capture bindings in lambdas.
    const auto dims = view(x);
    const int64_t outer = std::get<0>(dims), items = std::get<1>(dims), inner = std::get<2>(dims);
    UniqueResult result;
    visit_dtype<ValueTypes>(x.dtype(), [&]<class T>() {
      result = compute_unique<T>(x.data<T>(), outer, items, inner, sorted_);
    });
    return result;
  }

  std::string description_;
  std::optional<int64_t> axis_;
  bool sorted_;
};

// ---- Range -------------------------------------------------------------------------------------------------

using RangeTypes = TypeList<float, double, Float16, BFloat16, int16_t, int32_t, int64_t>;

class RangeKernel final : public Kernel {
 public:
  // optional_delta: com.microsoft's Range, whose delta may be omitted (1).
  RangeKernel(std::string description, bool optional_delta)
      : description_(std::move(description)), optional_delta_(optional_delta) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    for (size_t i = 0; i < 3; ++i) {
      if (i == 2 && optional_delta_ && optional_input(inputs, 2) == nullptr) break;
      TRY(require_input(description_, inputs, i));
      if (inputs[i]->numel() != 1 || inputs[i]->dtype() != inputs[0]->dtype()) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " must be a ",
                          data_type_name(inputs[0]->dtype()), " scalar, got ", data_type_name(inputs[i]->dtype()),
                          " shape ", shape_to_string(inputs[i]->shape()));
      }
    }
    const DataType type = inputs[0]->dtype();
    if (!type_list_contains(RangeTypes{}, type)) return unsupported_type(description_, 0, type);
    Status status;
    int64_t count = 0;
    visit_dtype<RangeTypes>(type, [&]<class T>() {
      if constexpr (std::is_integral_v<T>) {
        const __int128 start = *inputs[0]->data<T>(), limit = *inputs[1]->data<T>(), delta = delta_of<T>(inputs);
        if (delta == 0) {
          status = make_error(StatusCode::kInvalidArgument, description_, ": input 2 (delta) must not be 0");
          return;
        }
        const __int128 distance = delta > 0 ? limit - start : start - limit;
        const __int128 step = delta > 0 ? delta : -delta;
        const __int128 exact = distance <= 0 ? 0 : (distance + step - 1) / step;
        if (exact > (__int128{1} << 62)) {
          status = make_error(StatusCode::kInvalidArgument, description_, ": range has too many elements");
          return;
        }
        count = static_cast<int64_t>(exact);
      } else {
        // In double (half types through float, exactly): a float64 delta of 2.2e-308 must not flush to 0.
        const auto wide = [](T v) {
          if constexpr (std::is_floating_point_v<T>) return static_cast<double>(v);
          else return static_cast<double>(static_cast<float>(v));
        };
        const double start = wide(*inputs[0]->data<T>());
        const double limit = wide(*inputs[1]->data<T>());
        const double delta = wide(delta_of<T>(inputs));
        const double distance = limit - start;
        double exact = std::ceil(distance / delta);
        // A quotient that underflows to 0 is still the sign of distance / delta: positive gives one element
        // (start 2.2e-16, limit 0, delta -1.8e308), as numpy.arange counts it.
        if (exact == 0 && distance != 0 && (distance > 0) == (delta > 0)) exact = 1;
        if (delta == 0 || !std::isfinite(exact) || exact > 9.0e15) {
          status = make_error(StatusCode::kInvalidArgument, description_, ": start ", start, ", limit ", limit,
                              ", delta ", delta, " do not give a finite range");
          return;
        }
        count = exact > 0 ? static_cast<int64_t>(exact) : 0;
      }
    });
    TRY(status);
    outputs.assign(1, OutputDesc{type, Shape{count}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    Tensor& y = outputs[0];
    visit_dtype<RangeTypes>(y.dtype(), [&]<class T>() {
      T* out = y.data<T>();
      if constexpr (std::is_integral_v<T>) {
        const __int128 start = *inputs[0]->data<T>(), delta = delta_of<T>(inputs);
        for (int64_t i = 0; i < y.numel(); ++i) out[i] = static_cast<T>(start + i * delta);
      } else if constexpr (std::is_floating_point_v<T>) {
        const T start = *inputs[0]->data<T>(), delta = delta_of<T>(inputs);
        for (int64_t i = 0; i < y.numel(); ++i) out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
      } else {
        const float start = static_cast<float>(*inputs[0]->data<T>());
        const float delta = static_cast<float>(delta_of<T>(inputs));
        for (int64_t i = 0; i < y.numel(); ++i) out[i] = T(start + static_cast<float>(i) * delta);
      }
    });
    return Status::ok();
  }

 private:
  template <class T>
  static T delta_of(KernelInputs inputs) {
    const Tensor* delta = optional_input(inputs, 2);
    return delta != nullptr ? *delta->data<T>() : T(1.0f);
  }

  std::string description_;
  bool optional_delta_;
};

// ---- OneHot ------------------------------------------------------------------------------------------------

using OneHotIndexTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                  uint16_t, uint32_t, uint64_t>;

// Integer value of a numeric element, truncated toward zero; nullopt for NaN and values beyond int64.
template <class T>
std::optional<int64_t> integer_value(T value) {
  if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_same_v<T, uint64_t>) {
      if (value > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    }
    return static_cast<int64_t>(value);
  } else {
    const double v = static_cast<double>(static_cast<std::conditional_t<std::is_same_v<T, double>, double, float>>(value));
    if (!(v > -9.2e18 && v < 9.2e18)) return std::nullopt;
    return static_cast<int64_t>(v);
  }
}

class OneHotKernel final : public Kernel {
 public:
  // negative_from_back: opset >= 11, where an index in [-depth, -1] counts from the back; before, indices outside
  // [0, depth) select no class ("will result in one-hot representation with all 'off_value' values").
  OneHotKernel(std::string description, int64_t axis, bool negative_from_back)
      : description_(std::move(description)), axis_(axis), negative_from_back_(negative_from_back) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    for (size_t i = 0; i < 3; ++i) TRY(require_input(description_, inputs, i));
    const Tensor& indices = *inputs[0];
    const Tensor& values = *inputs[2];
    if (!type_list_contains(OneHotIndexTypes{}, indices.dtype())) return unsupported_type(description_, 0, indices.dtype());
    if (!movable_type(values.dtype()) || values.numel() != 2 || values.rank() != 1) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 2 (values) must be [off_value, on_value], got ",
                        data_type_name(values.dtype()), " shape ", shape_to_string(values.shape()));
    }
    TRY_ASSIGN(const int64_t depth, read_depth(*inputs[1]));
    TRY_ASSIGN(const int64_t axis, normalize_axis(axis_, static_cast<int64_t>(indices.rank()), description_, "axis", 1));
    Shape out = indices.shape();
    out.insert(out.begin() + axis, depth);
    if (!checked_numel(out)) return make_error(StatusCode::kInvalidArgument, description_, ": output is too large");
    outputs.assign(1, OutputDesc{values.dtype(), std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& indices = *inputs[0];
    const Tensor& values = *inputs[2];
    Tensor& y = outputs[0];
    TRY_ASSIGN(const int64_t depth, read_depth(*inputs[1]));
    const int64_t axis = axis_ < 0 ? axis_ + static_cast<int64_t>(indices.rank()) + 1 : axis_;
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis); d < indices.rank(); ++d) inner *= indices.shape()[d];
    visit_element_size(values.dtype(), [&]<class V>() {
      const V off = values.data<V>()[0];
      const V on = values.data<V>()[1];
      V* out = y.data<V>();
      pool.parallel_for(y.numel(), kMoveGrain, [&](int64_t begin, int64_t end) { std::fill(out + begin, out + end, off); });
      visit_dtype<OneHotIndexTypes>(indices.dtype(), [&]<class T>() {
        const T* in = indices.data<T>();
        for (int64_t i = 0; i < indices.numel(); ++i) {
          std::optional<int64_t> index = integer_value(in[i]);
          if (!index || *index < (negative_from_back_ ? -depth : 0) || *index >= depth) continue;
          if (*index < 0) *index += depth;
          const int64_t o = i / inner, e = i % inner;
          out[(o * depth + *index) * inner + e] = on;
        }
      });
    });
    return Status::ok();
  }

 private:
  Expected<int64_t> read_depth(const Tensor& tensor) const {
    std::optional<int64_t> depth;
    const bool numeric = tensor.numel() == 1 && visit_dtype<OneHotIndexTypes>(tensor.dtype(), [&]<class T>() {
      depth = integer_value(*tensor.data<T>());
    });
    if (!numeric || !depth || *depth < 1) {
      return make_error(StatusCode::kInvalidArgument, description_,
                        ": input 1 (depth) must be a positive numeric scalar, got ", data_type_name(tensor.dtype()),
                        " shape ", shape_to_string(tensor.shape()));
    }
    return *depth;
  }

  std::string description_;
  int64_t axis_;
  bool negative_from_back_;
};

Expected<std::optional<int64_t>> optional_axis(const graph::Node& node) {
  if (node.find_attribute("axis") == nullptr) return std::optional<int64_t>();
  TRY_ASSIGN(const int64_t axis, node.attr_int("axis", 0));
  return std::optional<int64_t>(axis);
}

Expected<std::unique_ptr<Kernel>> create_non_zero(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<NonZeroKernel>(info.node.describe()));
}

Expected<std::unique_ptr<Kernel>> create_compress(const KernelInfo& info) {
  TRY_ASSIGN(const std::optional<int64_t> axis, optional_axis(info.node));
  return std::unique_ptr<Kernel>(std::make_unique<CompressKernel>(info.node.describe(), axis));
}

Expected<std::unique_ptr<Kernel>> create_unique(const KernelInfo& info) {
  TRY_ASSIGN(const std::optional<int64_t> axis, optional_axis(info.node));
  TRY_ASSIGN(const int64_t sorted, info.node.attr_int("sorted", 1));
  return std::unique_ptr<Kernel>(std::make_unique<UniqueKernel>(info.node.describe(), axis, sorted != 0));
}

Expected<std::unique_ptr<Kernel>> create_range(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(
      std::make_unique<RangeKernel>(info.node.describe(), info.node.domain == graph::kMsDomain));
}

Expected<std::unique_ptr<Kernel>> create_one_hot(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t axis, info.node.attr_int("axis", -1));
  return std::unique_ptr<Kernel>(std::make_unique<OneHotKernel>(info.node.describe(), axis, info.opset() >= 11));
}

const KernelDef kSelectKernels[] = {
    {"NonZero", graph::kOnnxDomain, 9, kLatestOpset, kAnyType, 0, create_non_zero},
    {"Compress", graph::kOnnxDomain, 9, kLatestOpset, kAnyType, 0, create_compress},
    {"Unique", graph::kOnnxDomain, 11, kLatestOpset, kAnyType, 0, create_unique},
    {"Range", graph::kOnnxDomain, 11, kLatestOpset, type_mask(RangeTypes{}), 0, create_range},
    {"Range", graph::kMsDomain, 1, kLatestOpset, type_mask(RangeTypes{}), 0, create_range},  // ONNX Range's semantics
    {"OneHot", graph::kOnnxDomain, 9, kLatestOpset, type_mask(OneHotIndexTypes{}), 0, create_one_hot},
};

}  // namespace

std::span<const KernelDef> select_kernels() { return kSelectKernels; }

}  // namespace nxrt::cpu
