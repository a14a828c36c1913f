// Comparison and logic kernels with numpy broadcasting: Equal (numeric, bool, string), Less, LessOrEqual,
// Greater, GreaterOrEqual, And, Or, Xor, and Where (three-way broadcast, every element type).
// Bool tensors are read as bytes and any nonzero byte counts as true, so malformed bool data is not UB.
// float16/bfloat16 compare in float; NaN compares unequal and unordered like IEEE.
#include <complex>
#include <optional>
#include <string>
#include <type_traits>

#include "ep/cpu/elementwise/broadcast.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

enum class CmpOp { kEqual, kLess, kLessOrEqual, kGreater, kGreaterOrEqual, kAnd, kOr, kXor };

template <class T>
inline constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// Byte-read bool for the logic ops and Equal on bool tensors.
struct BoolByte {
  uint8_t value;
};

template <CmpOp Op, class T>
inline bool compare_value(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, BoolByte>) {
    const bool x = a.value != 0;
    const bool y = b.value != 0;
    if constexpr (Op == CmpOp::kAnd) return x && y;
    if constexpr (Op == CmpOp::kOr) return x || y;
    return x != y ? Op == CmpOp::kXor : Op != CmpOp::kXor;
  } else if constexpr (kIsHalf<T>) {
    return compare_value<Op, float>(static_cast<float>(a), static_cast<float>(b));
  } else {
    if constexpr (Op == CmpOp::kEqual) return a == b;
    if constexpr (Op == CmpOp::kLess) return a < b;
    if constexpr (Op == CmpOp::kLessOrEqual) return a <= b;
    if constexpr (Op == CmpOp::kGreater) return a > b;
    if constexpr (Op == CmpOp::kGreaterOrEqual) return a >= b;
    return false;
  }
}

template <CmpOp Op>
class CompareKernel final : public Kernel {
 public:
  CompareKernel(std::string description, std::optional<LegacyBroadcast> legacy)
      : description_(std::move(description)), legacy_(legacy) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.size() != 2 || inputs[0] == nullptr || inputs[1] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": expects 2 inputs");
    }
    const DataType dtype = inputs[0]->dtype();
    if (!supported(dtype)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input 0 type ",
                        data_type_name(dtype));
    }
    if (inputs[1]->dtype() != dtype) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 type ",
                        data_type_name(inputs[1]->dtype()), " differs from input 0 type ", data_type_name(dtype));
    }
    TRY_ASSIGN(BinaryShapes shapes, binary_broadcast_shapes(legacy_ ? &*legacy_ : nullptr, inputs[0]->shape(),
                                                            inputs[1]->shape(), description_));
    outputs.assign(1, OutputDesc{DataType::kBool, std::move(shapes.out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    Shape b_shape = inputs[1]->shape();
    if (legacy_) {
      TRY_ASSIGN(BinaryShapes shapes, binary_broadcast_shapes(&*legacy_, inputs[0]->shape(), b_shape, description_));
      b_shape = std::move(shapes.b);
    }
    auto compute = [&]<class T>() {
      auto op = [](const T& x, const T& y) { return compare_value<Op, T>(x, y); };
      // Written as bytes 0/1, which are valid bool object representations.
      broadcast_binary(static_cast<const T*>(inputs[0]->raw_data()), inputs[0]->shape(),
                       static_cast<const T*>(inputs[1]->raw_data()), b_shape,
                       static_cast<uint8_t*>(outputs[0].raw_data()), outputs[0].shape(), pool, op,
                       std::is_same_v<T, std::string> ? kElementwiseGrain / 16 : kElementwiseGrain);
    };
    const DataType dtype = inputs[0]->dtype();
    if (dtype == DataType::kBool) {
      compute.template operator()<BoolByte>();
    } else if (dtype == DataType::kString) {
      if constexpr (Op == CmpOp::kEqual) compute.template operator()<std::string>();
    } else {
      if constexpr (Op != CmpOp::kAnd && Op != CmpOp::kOr && Op != CmpOp::kXor)
        visit_dtype<NumericTypes>(dtype, compute);
    }
    return Status::ok();
  }

 private:
  static bool supported(DataType dtype) {
    if constexpr (Op == CmpOp::kAnd || Op == CmpOp::kOr || Op == CmpOp::kXor) return dtype == DataType::kBool;
    if constexpr (Op == CmpOp::kEqual) {
      if (dtype == DataType::kBool || dtype == DataType::kString) return true;
    }
    return type_list_contains(NumericTypes{}, dtype);
  }

  std::string description_;
  std::optional<LegacyBroadcast> legacy_;
};

// ---- Where ----

struct Pod16 {
  uint64_t lo, hi;
};

template <class T>
void where_loop(const uint8_t* c, int64_t cs, const T* x, int64_t xs, const T* y, int64_t ys, T* out, int64_t n) {
  if (cs == 0) {
    const T* src = c[0] ? x : y;
    const int64_t step = c[0] ? xs : ys;
    if (step) {
      for (int64_t i = 0; i < n; ++i) out[i] = src[i];
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = src[0];
    }
  } else if (xs && ys) {
    for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? x[i] : y[i];
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? x[i * xs] : y[i * ys];
  }
}

template <class Fn>
bool visit_where_element(DataType type, Fn&& fn) {
  if (type == DataType::kString) {
    fn.template operator()<std::string>();
    return true;
  }
  switch (data_type_bits(type)) {
    case 8:
      fn.template operator()<uint8_t>();
      return true;
    case 16:
      fn.template operator()<uint16_t>();
      return true;
    case 32:
      fn.template operator()<uint32_t>();
      return true;
    case 64:
      fn.template operator()<uint64_t>();
      return true;
    case 128:
      fn.template operator()<Pod16>();
      return true;
    default:
      return false;
  }
}

using WhereTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                            uint32_t, uint64_t, bool, std::string, std::complex<float>, std::complex<double>>;

class WhereKernel final : public Kernel {
 public:
  explicit WhereKernel(std::string description) : description_(std::move(description)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.size() != 3 || inputs[0] == nullptr || inputs[1] == nullptr || inputs[2] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": expects 3 inputs");
    }
    if (inputs[0]->dtype() != DataType::kBool) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 (condition) type ",
                        data_type_name(inputs[0]->dtype()), " is not bool");
    }
    const DataType dtype = inputs[1]->dtype();
    if (!type_list_contains(WhereTypes{}, dtype)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input 1 type ",
                        data_type_name(dtype));
    }
    if (inputs[2]->dtype() != dtype) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 2 type ",
                        data_type_name(inputs[2]->dtype()), " differs from input 1 type ", data_type_name(dtype));
    }
    TRY_ASSIGN(Shape shape, broadcast_input_shapes(inputs.first(3), true, description_));
    outputs.assign(1, OutputDesc{dtype, std::move(shape)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const BroadcastPlan<3> plan =
        make_broadcast_plan<3>({inputs[0]->shape(), inputs[1]->shape(), inputs[2]->shape()}, outputs[0].shape());
    const auto* c = static_cast<const uint8_t*>(inputs[0]->raw_data());
    visit_where_element(outputs[0].dtype(), [&]<class T>() {
      const auto* x = static_cast<const T*>(inputs[1]->raw_data());
      const auto* y = static_cast<const T*>(inputs[2]->raw_data());
      auto* out = static_cast<T*>(outputs[0].raw_data());
      for_each_broadcast_run(
          plan, pool,
          [&](int64_t o, const std::array<int64_t, 3>& in, int64_t n) {
            where_loop(c + in[0], plan.step[0], x + in[1], plan.step[1], y + in[2], plan.step[2], out + o, n);
          },
          std::is_same_v<T, std::string> ? kElementwiseGrain / 16 : kElementwiseGrain);
    });
    return Status::ok();
  }

 private:
  std::string description_;
};

// ---- Registration ----

template <CmpOp Op>
Expected<std::unique_ptr<Kernel>> create_compare(const KernelInfo& info) {
  std::optional<LegacyBroadcast> legacy;
  if (info.opset() < 7) {
    TRY_ASSIGN(legacy, read_legacy_broadcast(info.node));
  }
  return std::unique_ptr<Kernel>(std::make_unique<CompareKernel<Op>>(info.node.describe(), legacy));
}

Expected<std::unique_ptr<Kernel>> create_where(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<WhereKernel>(info.node.describe()));
}

constexpr DataTypeMask kBool = type_mask(TypeList<bool>{});
constexpr DataTypeMask kBf16 = type_mask(TypeList<BFloat16>{});
constexpr DataTypeMask kString = type_mask(TypeList<std::string>{});
constexpr DataTypeMask kF3 = type_mask(TypeList<float, double, Float16>{});
constexpr DataTypeMask kNumeric = type_mask(NumericTypes{});
constexpr DataTypeMask kNumericNoBf16 = kNumeric & ~kBf16;
constexpr DataTypeMask kEqual1 = type_mask(TypeList<bool, int32_t, int64_t>{});
constexpr DataTypeMask kWhere = type_mask(WhereTypes{});

constexpr auto kEq = create_compare<CmpOp::kEqual>;
constexpr auto kLt = create_compare<CmpOp::kLess>;
constexpr auto kLe = create_compare<CmpOp::kLessOrEqual>;
constexpr auto kGt = create_compare<CmpOp::kGreater>;
constexpr auto kGe = create_compare<CmpOp::kGreaterOrEqual>;

const KernelDef kCompareKernels[] = {
    {"And", graph::kOnnxDomain, 1, kLatestOpset, kBool, 0, create_compare<CmpOp::kAnd>},
    {"Or", graph::kOnnxDomain, 1, kLatestOpset, kBool, 0, create_compare<CmpOp::kOr>},
    {"Xor", graph::kOnnxDomain, 1, kLatestOpset, kBool, 0, create_compare<CmpOp::kXor>},
    {"Equal", graph::kOnnxDomain, 1, 10, kEqual1, 0, kEq},
    {"Equal", graph::kOnnxDomain, 11, 12, kNumericNoBf16 | kBool, 0, kEq},
    {"Equal", graph::kOnnxDomain, 13, 18, kNumeric | kBool, 0, kEq},
    {"Equal", graph::kOnnxDomain, 19, kLatestOpset, kNumeric | kBool | kString, 0, kEq},
    {"Less", graph::kOnnxDomain, 1, 8, kF3, 0, kLt},
    {"Less", graph::kOnnxDomain, 9, 12, kNumericNoBf16, 0, kLt},
    {"Less", graph::kOnnxDomain, 13, kLatestOpset, kNumeric, 0, kLt},
    {"LessOrEqual", graph::kOnnxDomain, 12, 15, kNumericNoBf16, 0, kLe},
    {"LessOrEqual", graph::kOnnxDomain, 16, kLatestOpset, kNumeric, 0, kLe},
    {"Greater", graph::kOnnxDomain, 1, 8, kF3, 0, kGt},
    {"Greater", graph::kOnnxDomain, 9, 12, kNumericNoBf16, 0, kGt},
    {"Greater", graph::kOnnxDomain, 13, kLatestOpset, kNumeric, 0, kGt},
    {"GreaterOrEqual", graph::kOnnxDomain, 12, 15, kNumericNoBf16, 0, kGe},
    {"GreaterOrEqual", graph::kOnnxDomain, 16, kLatestOpset, kNumeric, 0, kGe},
    {"Where", graph::kOnnxDomain, 9, 15, kWhere & ~kBf16, 1, create_where},
    {"Where", graph::kOnnxDomain, 16, kLatestOpset, kWhere, 1, create_where},
};

}  // namespace

std::span<const KernelDef> compare_kernels() { return kCompareKernels; }

}  // namespace nxrt::cpu
