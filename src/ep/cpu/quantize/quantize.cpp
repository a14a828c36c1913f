// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, BitCast (QLinearMatMul, MatMulInteger live in
// quantize_matmul.cpp). Quantized values travel through float: every quantized type (8/16-bit integers, float8,
// int4/uint4/int2/uint2, float4e2m1) is exactly representable as float, and Cast's converters pack and unpack.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ep/cpu/elementwise/cast_convert.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/quantize/quantize_common.h"

namespace nxrt::cpu {

std::span<const KernelDef> quantize_matmul_kernels();

namespace quant {

bool integer_range(DataType type, double& lo, double& hi) {
  switch (type) {
    case DataType::kUInt8: lo = 0; hi = 255; return true;
    case DataType::kInt8: lo = -128; hi = 127; return true;
    case DataType::kUInt16: lo = 0; hi = 65535; return true;
    case DataType::kInt16: lo = -32768; hi = 32767; return true;
    case DataType::kInt32: lo = -2147483648.0; hi = 2147483647.0; return true;
    case DataType::kUInt4: lo = 0; hi = 15; return true;
    case DataType::kInt4: lo = -8; hi = 7; return true;
    case DataType::kUInt2: lo = 0; hi = 3; return true;
    case DataType::kInt2: lo = -2; hi = 1; return true;
    default: return false;
  }
}

namespace {

template <class T>
Expected<std::vector<T>> convert_all(const Tensor& x, const std::string& description, ThreadPool& pool) {
  std::vector<T> out(static_cast<size_t>(x.numel()));
  if (x.dtype() == data_type_of<T>) {
    if (x.numel() > 0) std::memcpy(out.data(), x.raw_data(), out.size() * sizeof(T));
    return out;
  }
  if (!castable(x.dtype())) {
    return make_error(StatusCode::kInvalidArgument, description, ": unsupported element type ",
                      data_type_name(x.dtype()));
  }
  Tensor y = Tensor::wrap(data_type_of<T>, x.shape(), out.data());
  TRY(cast_tensor(x, y, true, description, pool));
  return out;
}

}  // namespace

Expected<std::vector<float>> to_floats(const Tensor& x, const std::string& description, ThreadPool& pool) {
  return convert_all<float>(x, description, pool);
}

Expected<std::vector<double>> to_doubles(const Tensor& x, const std::string& description, ThreadPool& pool) {
  return convert_all<double>(x, description, pool);
}

Status from_floats(const std::vector<float>& values, Tensor& y, bool saturate, const std::string& description,
                   ThreadPool& pool) {
  if (y.dtype() == DataType::kFloat32) {
    if (!values.empty()) std::memcpy(y.raw_data(), values.data(), values.size() * sizeof(float));
    return Status::ok();
  }
  const Tensor x = Tensor::wrap(DataType::kFloat32, y.shape(), const_cast<float*>(values.data()));
  return cast_tensor(x, y, saturate, description, pool);
}

Expected<std::vector<double>> broadcast_values(const std::vector<double>& values, const Shape& from, const Shape& to,
                                               const std::string& what, const std::string& description) {
  if (from.size() > to.size()) {
    return make_error(StatusCode::kInvalidArgument, description, ": ", what, " shape ", shape_to_string(from),
                      " cannot broadcast to ", shape_to_string(to));
  }
  const size_t rank = to.size();
  Shape aligned(rank - from.size(), 1);
  aligned.insert(aligned.end(), from.begin(), from.end());
  for (size_t d = 0; d < rank; ++d) {
    if (aligned[d] != 1 && aligned[d] != to[d]) {
      return make_error(StatusCode::kInvalidArgument, description, ": ", what, " shape ", shape_to_string(from),
                        " cannot broadcast to ", shape_to_string(to));
    }
  }
  int64_t total = 1;
  for (int64_t d : to) total *= d;
  std::vector<double> out(static_cast<size_t>(total));
  std::vector<int64_t> source_strides(rank, 0);
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    source_strides[d] = aligned[d] == 1 ? 0 : stride;
    stride *= aligned[d];
  }
  std::vector<int64_t> index(rank, 0);
  int64_t source = 0;
  for (int64_t i = 0; i < total; ++i) {
    out[static_cast<size_t>(i)] = values[static_cast<size_t>(source)];
    for (size_t d = rank; d-- > 0;) {
      ++index[d];
      source += source_strides[d];
      if (index[d] < to[d]) break;
      source -= source_strides[d] * index[d];
      index[d] = 0;
    }
  }
  return out;
}

float round_to_precision(float value, DataType type) {
  if (type == DataType::kFloat16) return static_cast<float>(Float16(value));
  if (type == DataType::kBFloat16) return static_cast<float>(BFloat16(value));
  return value;
}

}  // namespace quant

namespace {

using quant::bit_of;

constexpr int64_t kGrain = 16384;

constexpr DataTypeMask kQuantizedTypes =
    bit_of(DataType::kInt8) | bit_of(DataType::kUInt8) | bit_of(DataType::kInt16) | bit_of(DataType::kUInt16) |
    bit_of(DataType::kFloat8E4M3FN) | bit_of(DataType::kFloat8E4M3FNUZ) | bit_of(DataType::kFloat8E5M2) |
    bit_of(DataType::kFloat8E5M2FNUZ) | bit_of(DataType::kUInt4) | bit_of(DataType::kInt4) |
    bit_of(DataType::kFloat4E2M1) | bit_of(DataType::kUInt2) | bit_of(DataType::kInt2);
constexpr DataTypeMask kDequantizeInputTypes = kQuantizedTypes | bit_of(DataType::kInt32);
constexpr DataTypeMask kQuantizeInputTypes = type_mask(TypeList<float, Float16, BFloat16, int32_t>{});
constexpr DataTypeMask kScaleTypes =
    type_mask(TypeList<float, Float16, BFloat16, int32_t>{}) | bit_of(DataType::kFloat8E8M0);
constexpr DataTypeMask kFloatOutputTypes = type_mask(TypeList<float, Float16, BFloat16>{});

// Where element i of x finds its scale and zero point.
struct ScaleLayout {
  enum class Mode { kTensor, kAxis, kBlocked } mode = Mode::kTensor;
  int64_t d = 1;       // x's extent along the axis
  int64_t inner = 1;   // product of x's dims after the axis
  int64_t blocks = 1;  // scale's extent along the axis (blocked)
  int64_t block = 1;

  int64_t index(int64_t i) const {
    switch (mode) {
      case Mode::kTensor: return 0;
      case Mode::kAxis: return (i / inner) % d;
      case Mode::kBlocked: {
        const int64_t n = i % inner;
        const int64_t a = (i / inner) % d;
        const int64_t o = i / (inner * d);
        return (o * blocks + a / block) * inner + n;
      }
    }
    return 0;
  }
};

struct QuantAttributes {
  int64_t axis = 1;
  int64_t block_size = 0;
  bool saturate = true;
  DataType output_dtype = DataType::kUndefined;
  DataType precision = DataType::kUndefined;
};

Expected<ScaleLayout> scale_layout(const Shape& x, const Tensor& scale, const Tensor* zero_point,
                                   const QuantAttributes& attributes, int opset, const std::string& description) {
  if (zero_point != nullptr && zero_point->shape() != scale.shape() &&
      !(zero_point->numel() == 1 && scale.numel() == 1)) {
    return make_error(StatusCode::kInvalidArgument, description, ": zero point shape ",
                      shape_to_string(zero_point->shape()), " differs from scale shape ",
                      shape_to_string(scale.shape()));
  }
  ScaleLayout layout;
  if (scale.numel() == 1) return layout;  // per tensor, whatever the scale's rank
  if (attributes.block_size == 0 && (opset < 13 || scale.rank() != 1)) {
    return make_error(StatusCode::kInvalidArgument, description, ": scale shape ", shape_to_string(scale.shape()),
                      opset < 13 ? " must be a scalar" : " must be a scalar or a 1-D tensor without block_size");
  }
  const int64_t rank = static_cast<int64_t>(x.size());
  if (attributes.axis < -rank || attributes.axis >= rank) {
    return make_error(StatusCode::kInvalidArgument, description, ": axis ", attributes.axis,
                      " is out of range for input 0 of rank ", rank);
  }
  const size_t axis = static_cast<size_t>(attributes.axis < 0 ? attributes.axis + rank : attributes.axis);
  layout.d = x[axis];
  for (size_t i = axis + 1; i < x.size(); ++i) layout.inner *= x[i];
  if (attributes.block_size == 0) {
    if (scale.rank() != 1 || scale.shape()[0] != layout.d) {
      return make_error(StatusCode::kInvalidArgument, description, ": per-axis scale shape ",
                        shape_to_string(scale.shape()), " must be [", layout.d, "] for input 0 shape ",
                        shape_to_string(x), " and axis ", attributes.axis);
    }
    layout.mode = ScaleLayout::Mode::kAxis;
    return layout;
  }
  bool matches = scale.rank() == x.size();
  for (size_t i = 0; matches && i < x.size(); ++i) {
    if (i == axis) {
      const int64_t blocks = (x[i] + attributes.block_size - 1) / attributes.block_size;
      matches = scale.shape()[i] == blocks;
    } else {
      matches = scale.shape()[i] == x[i];
    }
  }
  if (!matches) {
    return make_error(StatusCode::kInvalidArgument, description, ": blocked scale shape ",
                      shape_to_string(scale.shape()), " does not fit input 0 shape ", shape_to_string(x),
                      " with axis ", attributes.axis, " and block_size ", attributes.block_size);
  }
  layout.mode = ScaleLayout::Mode::kBlocked;
  layout.blocks = scale.shape()[axis];
  layout.block = attributes.block_size;
  return layout;
}

Expected<QuantAttributes> read_attributes(const KernelInfo& info, bool quantize) {
  const graph::Node& node = info.node;
  QuantAttributes a;
  TRY_ASSIGN(a.axis, node.attr_int("axis", 1));
  TRY_ASSIGN(a.block_size, node.attr_int("block_size", 0));
  if (a.block_size < 0) {
    return make_error(StatusCode::kInvalidArgument, node.describe(), ": attribute block_size = ", a.block_size,
                      " must be positive");
  }
  TRY_ASSIGN(const int64_t saturate, node.attr_int("saturate", 1));
  a.saturate = saturate != 0;
  TRY_ASSIGN(const int64_t output_dtype, node.attr_int("output_dtype", 0));
  if (output_dtype != 0) {
    const auto type = data_type_from_int(output_dtype);
    const DataTypeMask allowed = quantize ? kQuantizedTypes : kFloatOutputTypes;
    if (!type || !quant::in_mask(allowed, *type)) {
      return make_error(StatusCode::kInvalidArgument, node.describe(), ": attribute output_dtype = ", output_dtype,
                        " is not a supported ", quantize ? "quantized" : "float", " type");
    }
    a.output_dtype = *type;
  }
  TRY_ASSIGN(const int64_t precision, node.attr_int("precision", 0));
  if (precision != 0) {
    const auto type = data_type_from_int(precision);
    if (!type || !quant::in_mask(type_mask(TypeList<float, Float16, BFloat16, double>{}), *type)) {
      return make_error(StatusCode::kInvalidArgument, node.describe(), ": attribute precision = ", precision,
                        " is not a float type");
    }
    a.precision = *type;
  }
  return a;
}

class QuantizeKernel final : public Kernel {
 public:
  QuantizeKernel(std::string description, QuantAttributes attributes, int opset)
      : description_(std::move(description)), attributes_(attributes), opset_(opset) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, 2, description_));
    TRY_ASSIGN(const DataType out_type, output_type(inputs));
    const Tensor& x = *inputs[0];
    if (!quant::in_mask(kQuantizeInputTypes, x.dtype()) || !quant::in_mask(kScaleTypes, inputs[1]->dtype())) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input types ",
                        data_type_name(x.dtype()), " / ", data_type_name(inputs[1]->dtype()));
    }
    TRY(scale_layout(x.shape(), *inputs[1], optional_input(inputs, 2), attributes_, opset_, description_).status());
    outputs.assign(1, OutputDesc{out_type, x.shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    const Tensor& scale = *inputs[1];
    const Tensor* zero_point = optional_input(inputs, 2);
    TRY_ASSIGN(const ScaleLayout layout,
               scale_layout(x.shape(), scale, zero_point, attributes_, opset_, description_));
    // The division runs in `precision` (the attribute, else the scale's type; float for an int32 scale): both
    // operands are converted to it and the quotient rounded to it, as the spec's "precision of the division".
    // Float operands divide in float (an IEEE quotient of floats, correctly rounded); a float32 x with float32
    // precision is read in place.
    DataType precision = attributes_.precision;
    if (precision == DataType::kUndefined) precision = scale.dtype();
    const bool in_double = precision == DataType::kFloat64;
    std::vector<double> x_doubles;
    std::vector<double> scale_doubles;
    std::vector<float> x_floats;
    std::vector<float> scales;
    const float* xs = x.data<float>();
    if (in_double) {
      TRY_ASSIGN(x_doubles, quant::to_doubles(x, description_, pool));
      TRY_ASSIGN(scale_doubles, quant::to_doubles(scale, description_, pool));
    } else {
      if (x.dtype() != DataType::kFloat32 || precision != DataType::kFloat32) {
        TRY_ASSIGN(x_floats, quant::to_floats(x, description_, pool));
        for (float& v : x_floats) v = quant::round_to_precision(v, precision);
        xs = x_floats.data();
      }
      TRY_ASSIGN(scales, quant::to_floats(scale, description_, pool));
      for (float& v : scales) v = quant::round_to_precision(v, precision);
    }
    const size_t parameters = in_double ? scale_doubles.size() : scales.size();
    std::vector<float> zeros(parameters, 0.0f);
    if (zero_point != nullptr) {
      TRY_ASSIGN(zeros, quant::to_floats(*zero_point, description_, pool));
    }
    Tensor& y = outputs[0];
    double lo = 0;
    double hi = 0;
    const bool integer = quant::integer_range(y.dtype(), lo, hi);
    const auto quantized = [&](int64_t i) -> float {
      const size_t s = static_cast<size_t>(layout.index(i));
      const double ratio = in_double ? x_doubles[static_cast<size_t>(i)] / scale_doubles[s]
                                     : static_cast<double>(quant::round_to_precision(xs[i] / scales[s], precision));
      if (!integer) return static_cast<float>(ratio) + zeros[s];
      // NaN quantizes to the low end (as the reference does); +-inf and huge ratios saturate.
      const double v = std::isnan(ratio) ? lo : std::nearbyint(ratio) + zeros[s];
      return static_cast<float>(std::clamp(v, lo, hi));
    };
    const int64_t n = x.numel();
    const bool direct = visit_dtype<TypeList<uint8_t, int8_t, uint16_t, int16_t>>(y.dtype(), [&]<class T>() {
      T* out = y.data<T>();
      pool.parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = static_cast<T>(quantized(i));
      });
    });
    if (direct) return Status::ok();
    std::vector<float> q(static_cast<size_t>(n));
    pool.parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) q[static_cast<size_t>(i)] = quantized(i);
    });
    return quant::from_floats(q, y, attributes_.saturate, description_, pool);
  }

 private:
  Expected<DataType> output_type(KernelInputs inputs) const {
    const Tensor* zero_point = optional_input(inputs, 2);
    DataType type = attributes_.output_dtype;
    if (zero_point != nullptr) {
      if (type != DataType::kUndefined && type != zero_point->dtype()) {
        return make_error(StatusCode::kInvalidArgument, description_, ": output_dtype ", data_type_name(type),
                          " differs from the zero point type ", data_type_name(zero_point->dtype()));
      }
      type = zero_point->dtype();
    }
    if (type == DataType::kUndefined) type = DataType::kUInt8;
    if (!quant::in_mask(kQuantizedTypes, type)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported output type ",
                        data_type_name(type));
    }
    return type;
  }

  std::string description_;
  QuantAttributes attributes_;
  int opset_;
};

class DequantizeKernel final : public Kernel {
 public:
  DequantizeKernel(std::string description, QuantAttributes attributes, int opset)
      : description_(std::move(description)), attributes_(attributes), opset_(opset) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, 2, description_));
    const Tensor& x = *inputs[0];
    const Tensor* zero_point = optional_input(inputs, 2);
    if (!quant::in_mask(kDequantizeInputTypes, x.dtype()) || !quant::in_mask(kScaleTypes, inputs[1]->dtype())) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input types ",
                        data_type_name(x.dtype()), " / ", data_type_name(inputs[1]->dtype()));
    }
    if (zero_point != nullptr && zero_point->dtype() != x.dtype()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": zero point type ",
                        data_type_name(zero_point->dtype()), " differs from input 0 type ", data_type_name(x.dtype()));
    }
    TRY(scale_layout(x.shape(), *inputs[1], zero_point, attributes_, opset_, description_).status());
    DataType out_type = attributes_.output_dtype;
    if (out_type == DataType::kUndefined) {
      out_type = inputs[1]->dtype();
      if (!quant::in_mask(kFloatOutputTypes, out_type)) out_type = DataType::kFloat32;
    }
    outputs.assign(1, OutputDesc{out_type, x.shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    const Tensor& scale = *inputs[1];
    const Tensor* zero_point = optional_input(inputs, 2);
    TRY_ASSIGN(const ScaleLayout layout,
               scale_layout(x.shape(), scale, zero_point, attributes_, opset_, description_));
    TRY_ASSIGN(const std::vector<float> scales, quant::to_floats(scale, description_, pool));
    std::vector<float> zeros(scales.size(), 0.0f);
    if (zero_point != nullptr) {
      TRY_ASSIGN(zeros, quant::to_floats(*zero_point, description_, pool));
    }
    const int64_t n = x.numel();
    Tensor& out = outputs[0];
    const bool direct = out.dtype() == DataType::kFloat32 &&
                        visit_dtype<TypeList<uint8_t, int8_t, uint16_t, int16_t, int32_t>>(x.dtype(), [&]<class T>() {
                          const T* in = x.data<T>();
                          float* y = out.data<float>();
                          pool.parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
                            for (int64_t i = begin; i < end; ++i) {
                              const size_t s = static_cast<size_t>(layout.index(i));
                              y[i] = (static_cast<float>(in[i]) - zeros[s]) * scales[s];
                            }
                          });
                        });
    if (direct) return Status::ok();
    TRY_ASSIGN(const std::vector<float> xs, quant::to_floats(x, description_, pool));
    std::vector<float> y(xs.size());
    pool.parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const size_t s = static_cast<size_t>(layout.index(i));
        y[static_cast<size_t>(i)] = (xs[static_cast<size_t>(i)] - zeros[s]) * scales[s];
      }
    });
    return quant::from_floats(y, outputs[0], true, description_, pool);
  }

 private:
  std::string description_;
  QuantAttributes attributes_;
  int opset_;
};

class DynamicQuantizeKernel final : public Kernel {
 public:
  explicit DynamicQuantizeKernel(std::string description) : description_(std::move(description)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, 1, description_));
    if (inputs[0]->dtype() != DataType::kFloat32) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 must be float, got ",
                        data_type_name(inputs[0]->dtype()));
    }
    outputs.assign({OutputDesc{DataType::kUInt8, inputs[0]->shape()}, OutputDesc{DataType::kFloat32, {}},
                    OutputDesc{DataType::kUInt8, {}}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    const float* xs = x.data<float>();
    const int64_t n = x.numel();
    float max_value = 0.0f;
    float min_value = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
      max_value = std::max(max_value, xs[i]);
      min_value = std::min(min_value, xs[i]);
    }
    const float scale = (max_value == min_value ? 1.0f : max_value - min_value) / 255.0f;
    const float initial_zero = std::clamp(0.0f - min_value / scale, 0.0f, 255.0f);
    const float zero = std::isnan(initial_zero) ? 0.0f : std::nearbyint(initial_zero);  // NaN: infinite range
    uint8_t* y = outputs[0].data<uint8_t>();
    pool.parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const float v = std::nearbyint(xs[i] / scale) + zero;
        y[i] = static_cast<uint8_t>(std::isnan(v) ? 0.0f : std::clamp(v, 0.0f, 255.0f));
      }
    });
    outputs[1].data<float>()[0] = scale;
    outputs[2].data<uint8_t>()[0] = static_cast<uint8_t>(zero);
    return Status::ok();
  }

 private:
  std::string description_;
};

class BitCastKernel final : public Kernel {
 public:
  BitCastKernel(std::string description, DataType to) : description_(std::move(description)), to_(to) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, 1, description_));
    const DataType from = inputs[0]->dtype();
    if (from == DataType::kString || data_type_bits(from) != data_type_bits(to_)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": cannot bit-cast ", data_type_name(from), " to ",
                        data_type_name(to_), " (bit widths differ or string)");
    }
    outputs.assign(1, OutputDesc{to_, inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    const size_t bytes = std::min(inputs[0]->storage_bytes(), outputs[0].storage_bytes());
    if (bytes > 0) std::memcpy(outputs[0].raw_data(), inputs[0]->raw_data(), bytes);
    if (to_ == DataType::kBool) {
      uint8_t* bytes_out = outputs[0].data<uint8_t>();
      for (int64_t i = 0; i < outputs[0].numel(); ++i) bytes_out[i] = bytes_out[i] != 0 ? 1 : 0;
    }
    return Status::ok();
  }

 private:
  std::string description_;
  DataType to_;
};

template <bool Quantize>
Expected<std::unique_ptr<Kernel>> create_quantize(const KernelInfo& info) {
  TRY_ASSIGN(const QuantAttributes attributes, read_attributes(info, Quantize));
  // com.microsoft's forms (opset 1) have ONNX opset 13's axis and per-axis scales.
  const int opset = info.node.domain == graph::kMsDomain ? 13 : info.opset();
  if constexpr (Quantize) {
    return std::unique_ptr<Kernel>(std::make_unique<QuantizeKernel>(info.node.describe(), attributes, opset));
  } else {
    return std::unique_ptr<Kernel>(std::make_unique<DequantizeKernel>(info.node.describe(), attributes, opset));
  }
}

Expected<std::unique_ptr<Kernel>> create_dynamic_quantize(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<DynamicQuantizeKernel>(info.node.describe()));
}

Expected<std::unique_ptr<Kernel>> create_bitcast(const KernelInfo& info) {
  const graph::Node& node = info.node;
  if (node.find_attribute("to") == nullptr) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": required attribute 'to' is missing");
  }
  TRY_ASSIGN(const int64_t to, node.attr_int("to", 0));
  const auto type = data_type_from_int(to);
  if (!type || *type == DataType::kUndefined || *type == DataType::kString) {
    return make_error(StatusCode::kInvalidArgument, node.describe(), ": attribute to = ", to,
                      " is not a bit-castable type");
  }
  return std::unique_ptr<Kernel>(std::make_unique<BitCastKernel>(node.describe(), *type));
}

const KernelDef kQuantizeKernels[] = {
    {"QuantizeLinear", graph::kOnnxDomain, 10, kLatestOpset, kQuantizeInputTypes, 0, create_quantize<true>},
    {"DequantizeLinear", graph::kOnnxDomain, 10, kLatestOpset, kDequantizeInputTypes, 0, create_quantize<false>},
    {"QuantizeLinear", graph::kMsDomain, 1, kLatestOpset, kQuantizeInputTypes, 0, create_quantize<true>},
    {"DequantizeLinear", graph::kMsDomain, 1, kLatestOpset, kDequantizeInputTypes, 0, create_quantize<false>},
    {"DynamicQuantizeLinear", graph::kOnnxDomain, 11, kLatestOpset, type_mask(TypeList<float>{}), 0,
     create_dynamic_quantize},
    {"BitCast", graph::kOnnxDomain, 26, kLatestOpset, kAnyType, -1, create_bitcast},
};

std::vector<KernelDef> all_quantize_kernels() {
  std::vector<KernelDef> rows(std::begin(kQuantizeKernels), std::end(kQuantizeKernels));
  for (const KernelDef& row : quantize_matmul_kernels()) rows.push_back(row);
  return rows;
}

}  // namespace

std::span<const KernelDef> quantize_kernels() {
  static const std::vector<KernelDef> rows = all_quantize_kernels();
  return rows;
}

}  // namespace nxrt::cpu
