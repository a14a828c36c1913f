// QLinearMatMul and MatMulInteger: numpy.matmul over zero-point-shifted quantized values.
// Operands are widened to double (exact for 8-bit products summed over any practical K), multiplied with the
// f64 GEMM, and the sums wrap to int32 as the spec's 32-bit accumulation does.
// A zero point or scale of `a` is a scalar, an [M] vector (per row) or an N-D tensor broadcastable as
// [..., M, 1]; one of `b` is a scalar, an [N] vector (per column) or N-D as [..., 1, N].
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ep/cpu/microkernels/gemm.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/quantize/quantize_common.h"

namespace nxrt::cpu {

namespace {

using quant::bit_of;

constexpr DataTypeMask kInt8Types = type_mask(TypeList<int8_t, uint8_t>{});
constexpr DataTypeMask kQLinearTypes = kInt8Types | bit_of(DataType::kFloat8E4M3FN) |
                                       bit_of(DataType::kFloat8E4M3FNUZ) | bit_of(DataType::kFloat8E5M2) |
                                       bit_of(DataType::kFloat8E5M2FNUZ);

struct MatMulShapes {
  Shape a;       // rank >= 2 (a 1-D operand gains a leading 1)
  Shape b;       // rank >= 2 (a 1-D operand gains a trailing 1)
  Shape padded;  // batch + [M, N]
  Shape output;  // padded without the dims added for 1-D operands
  int64_t m = 0;
  int64_t k = 0;
  int64_t n = 0;
};

Expected<MatMulShapes> matmul_shapes(const Shape& a_in, const Shape& b_in, const std::string& description) {
  if (a_in.empty() || b_in.empty()) {
    return make_error(StatusCode::kInvalidArgument, description, ": inputs must have rank >= 1, got ",
                      shape_to_string(a_in), " and ", shape_to_string(b_in));
  }
  MatMulShapes s;
  s.a = a_in.size() == 1 ? Shape{1, a_in[0]} : a_in;
  s.b = b_in.size() == 1 ? Shape{b_in[0], 1} : b_in;
  s.m = s.a[s.a.size() - 2];
  s.k = s.a.back();
  s.n = s.b.back();
  if (s.b[s.b.size() - 2] != s.k) {
    return make_error(StatusCode::kInvalidArgument, description, ": inner dimensions of ", shape_to_string(a_in),
                      " and ", shape_to_string(b_in), " differ");
  }
  const size_t batch_rank = std::max(s.a.size(), s.b.size()) - 2;
  for (size_t i = 0; i < batch_rank; ++i) {
    const int64_t da = i + s.a.size() >= batch_rank + 2 ? s.a[i + s.a.size() - 2 - batch_rank] : 1;
    const int64_t db = i + s.b.size() >= batch_rank + 2 ? s.b[i + s.b.size() - 2 - batch_rank] : 1;
    if (da != db && da != 1 && db != 1) {
      return make_error(StatusCode::kInvalidArgument, description, ": batch dimensions of ", shape_to_string(a_in),
                        " and ", shape_to_string(b_in), " do not broadcast");
    }
    s.padded.push_back(da == 1 ? db : da);
  }
  s.padded.push_back(s.m);
  s.padded.push_back(s.n);
  s.output.assign(s.padded.begin(), s.padded.end() - 2);
  if (a_in.size() > 1) s.output.push_back(s.m);
  if (b_in.size() > 1) s.output.push_back(s.n);
  return s;
}

// Flat offset of batch `batch` (an index into padded's batch dims) inside an operand with dims `operand`.
int64_t batch_offset(const Shape& padded, const Shape& operand, int64_t batch) {
  const size_t batch_rank = padded.size() - 2;
  const size_t operand_batch = operand.size() - 2;
  const int64_t matrix = operand[operand.size() - 2] * operand.back();
  int64_t offset = 0;
  int64_t stride = matrix;
  for (size_t d = batch_rank; d-- > 0;) {
    const int64_t index = batch % padded[d];
    batch /= padded[d];
    if (d + operand_batch >= batch_rank) {
      const int64_t extent = operand[d + operand_batch - batch_rank];
      if (extent != 1) offset += index * stride;
      stride *= extent;
    }
  }
  return offset;
}

// `values` of a per-row (Side 0) or per-column (Side 1) parameter reshaped for broadcasting: a 1-D vector of
// length other than 1 (0 included: an empty M or N) becomes [M, 1] or [1, N].
Shape parameter_shape(const Tensor& t, int side) {
  if (t.rank() == 1 && t.numel() != 1) return side == 0 ? Shape{t.numel(), 1} : Shape{1, t.numel()};
  if (t.numel() == 1) return {};
  return t.shape();
}

Expected<std::vector<double>> shifted_operand(const Tensor& x, const Tensor* zero_point, const Shape& padded_shape,
                                              int side, const std::string& what, const std::string& description,
                                              ThreadPool& pool) {
  TRY_ASSIGN(std::vector<double> values, quant::to_doubles(x, description, pool));
  if (zero_point == nullptr) return values;
  if (zero_point->dtype() != x.dtype()) {
    return make_error(StatusCode::kInvalidArgument, description, ": ", what, " zero point type ",
                      data_type_name(zero_point->dtype()), " differs from its input type ", data_type_name(x.dtype()));
  }
  TRY_ASSIGN(const std::vector<double> zeros, quant::to_doubles(*zero_point, description, pool));
  TRY_ASSIGN(const std::vector<double> expanded,
             quant::broadcast_values(zeros, parameter_shape(*zero_point, side), padded_shape, what + " zero point",
                                     description));
  for (size_t i = 0; i < values.size(); ++i) values[i] -= expanded[i];
  return values;
}

// Returns the integer-wrapped (int32) product of the shifted operands, shape `s.padded`.
Expected<std::vector<double>> quantized_product(const Tensor& a, const Tensor* a_zero, const Tensor& b,
                                                const Tensor* b_zero, const MatMulShapes& s,
                                                const std::string& description, ThreadPool& pool) {
  TRY_ASSIGN(const std::vector<double> av, shifted_operand(a, a_zero, s.a, 0, "a", description, pool));
  TRY_ASSIGN(const std::vector<double> bv, shifted_operand(b, b_zero, s.b, 1, "b", description, pool));
  int64_t batches = 1;
  for (size_t d = 0; d + 2 < s.padded.size(); ++d) batches *= s.padded[d];
  std::vector<double> c(static_cast<size_t>(batches * s.m * s.n), 0.0);
  if (c.empty()) return c;
  GemmArgs args;
  args.m = s.m;
  args.n = s.n;
  args.k = s.k;
  args.lda = s.k;
  args.ldb = s.n;
  args.ldc = s.n;
  for (int64_t batch = 0; batch < batches; ++batch) {
    gemm_f64(args, 1.0, av.data() + batch_offset(s.padded, s.a, batch),
                 bv.data() + batch_offset(s.padded, s.b, batch), 0.0, c.data() + batch * s.m * s.n, pool);
  }
  const bool integer = !is_float_type(a.dtype()) && !is_float_type(b.dtype());
  if (integer) {
    for (double& v : c) v = static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(v))));
  }
  return c;
}

class MatMulIntegerKernel final : public Kernel {
 public:
  explicit MatMulIntegerKernel(std::string description) : description_(std::move(description)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.size() < 2 || inputs[0] == nullptr || inputs[1] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input A or B");
    }
    if (!quant::in_mask(kInt8Types, inputs[0]->dtype()) || !quant::in_mask(kInt8Types, inputs[1]->dtype())) {
      return make_error(StatusCode::kInvalidArgument, description_, ": inputs A and B must be int8 or uint8, got ",
                        data_type_name(inputs[0]->dtype()), " and ", data_type_name(inputs[1]->dtype()));
    }
    TRY_ASSIGN(const MatMulShapes s, matmul_shapes(inputs[0]->shape(), inputs[1]->shape(), description_));
    outputs.assign(1, OutputDesc{DataType::kInt32, s.output});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const MatMulShapes s, matmul_shapes(inputs[0]->shape(), inputs[1]->shape(), description_));
    const Tensor* a_zero = optional_input(inputs, 2);
    const Tensor* b_zero = optional_input(inputs, 3);
    TRY_ASSIGN(const std::vector<double> c,
               quantized_product(*inputs[0], a_zero, *inputs[1], b_zero, s, description_, pool));
    int32_t* y = outputs[0].data<int32_t>();
    for (size_t i = 0; i < c.size(); ++i) y[i] = static_cast<int32_t>(c[i]);
    return Status::ok();
  }

 private:
  std::string description_;
};

class QLinearMatMulKernel final : public Kernel {
 public:
  explicit QLinearMatMulKernel(std::string description) : description_(std::move(description)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, 8, description_));
    if (!quant::in_mask(kQLinearTypes, inputs[7]->dtype())) {
      return make_error(StatusCode::kInvalidArgument, description_, ": y_zero_point type ",
                        data_type_name(inputs[7]->dtype()), " is not an 8-bit quantized type");
    }
    TRY_ASSIGN(const MatMulShapes s, matmul_shapes(inputs[0]->shape(), inputs[3]->shape(), description_));
    outputs.assign(1, OutputDesc{inputs[7]->dtype(), s.output});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const MatMulShapes s, matmul_shapes(inputs[0]->shape(), inputs[3]->shape(), description_));
    TRY_ASSIGN(const std::vector<double> c,
               quantized_product(*inputs[0], inputs[2], *inputs[3], inputs[5], s, description_, pool));
    TRY_ASSIGN(const std::vector<double> a_scale, expanded(*inputs[1], 0, s.padded, "a_scale", pool));
    TRY_ASSIGN(const std::vector<double> b_scale, expanded(*inputs[4], 1, s.padded, "b_scale", pool));
    TRY_ASSIGN(const std::vector<double> y_scale, expanded(*inputs[6], 0, s.padded, "y_scale", pool));
    TRY_ASSIGN(const std::vector<double> y_zero, expanded(*inputs[7], 0, s.padded, "y_zero_point", pool));
    const DataType scale_type = inputs[1]->dtype();
    Tensor& y = outputs[0];
    double lo = 0;
    double hi = 0;
    const bool integer = quant::integer_range(y.dtype(), lo, hi);
    std::vector<float> q(c.size());
    for (size_t i = 0; i < c.size(); ++i) {
      const float product = quant::round_to_precision(static_cast<float>(a_scale[i] * b_scale[i]), scale_type);
      const float multiplier = quant::round_to_precision(product / static_cast<float>(y_scale[i]), scale_type);
      const double v = c[i] * static_cast<double>(multiplier) + y_zero[i];
      q[i] = integer ? static_cast<float>(std::isnan(v) ? lo : std::clamp(std::nearbyint(v), lo, hi))
                     : static_cast<float>(v);
    }
    return quant::from_floats(q, y, true, description_, pool);
  }

 private:
  Expected<std::vector<double>> expanded(const Tensor& t, int side, const Shape& padded, const std::string& what,
                                         ThreadPool& pool) const {
    TRY_ASSIGN(const std::vector<double> values, quant::to_doubles(t, description_, pool));
    return quant::broadcast_values(values, parameter_shape(t, side), padded, what, description_);
  }

  std::string description_;
};

Expected<std::unique_ptr<Kernel>> create_matmul_integer(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<MatMulIntegerKernel>(info.node.describe()));
}

Expected<std::unique_ptr<Kernel>> create_qlinear_matmul(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<QLinearMatMulKernel>(info.node.describe()));
}


const KernelDef kQuantizeMatMulKernels[] = {
    {"MatMulInteger", graph::kOnnxDomain, 10, kLatestOpset, kInt8Types, 0, create_matmul_integer},
    {"QLinearMatMul", graph::kOnnxDomain, 10, 20, kInt8Types, 0, create_qlinear_matmul},
    {"QLinearMatMul", graph::kOnnxDomain, 21, kLatestOpset, kQLinearTypes, 0, create_qlinear_matmul},
};

}  // namespace

std::span<const KernelDef> quantize_matmul_kernels() { return kQuantizeMatMulKernels; }

}  // namespace nxrt::cpu
