// com.microsoft integer matrix products with a float result, as ONNX Runtime's contrib schemas define them:
//   MatMulIntegerToFloat(A (uint8 / int8) [..., M, K], B (uint8 / int8) [..., K, N], a_scale, b_scale,
//     a_zero_point?, b_zero_point?, bias? [N]) -> Y (a_scale's type: float or float16):
//     Y = a_scale * b_scale[n] * sum_k (A - a_zero_point) (B - b_zero_point[n]) + bias[n]
//   DynamicQuantizeMatMul(A float, B (uint8 / int8), b_scale, b_zero_point?, bias?) -> Y float: A is first
//     quantized to uint8 per tensor as DynamicQuantizeLinear does (range widened to hold 0, scale = range / 255,
//     zero point and values rounded half to even; a zero range gives scale 1), then the product above.
//   QGemm(A, a_scale, a_zero_point, B, b_scale, b_zero_point?, C? int32, y_scale?, y_zero_point?; transA, transB,
//     alpha) -> Y: acc = sum_k (op(A) - a_zero_point) (op(B) - b_zero_point[n]) + C (int32, broadcast to [M, N]);
//     Y = alpha * a_scale * b_scale[n] * acc in float, or, with y_scale and y_zero_point, that quantized to
//     y_zero_point's type (round half to even, saturated).
// Batch dims broadcast numpy-style; a 1-D A or B is a row / column that the output drops, as in MatMul. B's scale
// and zero point are one value or one per column (N). The sums are exact (int64); the scaling is in float.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ep/cpu/elementwise/unary_common.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

constexpr DataTypeMask kInt8Types = type_mask(TypeList<uint8_t, int8_t>{});

int32_t int_at(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kUInt8 ? t.data<uint8_t>()[i] : t.data<int8_t>()[i];
}

float float_at(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kFloat16 ? static_cast<float>(t.data<Float16>()[i]) : t.data<float>()[i];
}

struct ProductShape {
  Shape out, batch;
  int64_t m = 1, k = 0, n = 1;
  std::vector<int64_t> a_batch_strides, b_batch_strides;  // per batch dim, 0 where it broadcasts
};

class IntMatMulToFloatKernel final : public Kernel {
 public:
  IntMatMulToFloatKernel(std::string description, bool dynamic)
      : description_(std::move(description)), dynamic_(dynamic) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const ProductShape p, resolve(inputs));
    outputs.assign(1, OutputDesc{dynamic_ ? DataType::kFloat32 : inputs[2]->dtype(), p.out});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const ProductShape p, resolve(inputs));
    const Tensor& a = *inputs[0];
    const Tensor& b = *inputs[1];
    const Tensor& b_scale = *inputs[dynamic_ ? 2 : 3];
    const Tensor* b_zero = optional_input(inputs, dynamic_ ? 3 : 5);
    const Tensor* bias = optional_input(inputs, dynamic_ ? 4 : 6);
    // A and B as int32 codes less their zero points (A quantized here when dynamic).
    std::vector<int32_t> a_codes(static_cast<size_t>(a.numel()));
    float a_scale = 1.0f;
    int32_t a_zero = 0;
    if (dynamic_) {
      quantize_dynamic(a, a_codes, a_scale, a_zero);
    } else {
      for (int64_t i = 0; i < a.numel(); ++i) a_codes[i] = int_at(a, i);
      a_scale = float_at(*inputs[2], 0);
      if (const Tensor* zero = optional_input(inputs, 4)) a_zero = int_at(*zero, 0);
    }
    for (int32_t& code : a_codes) code -= a_zero;
    std::vector<int32_t> b_codes(static_cast<size_t>(b.numel()));
    for (int64_t i = 0; i < b.numel(); ++i) {
      const int64_t column = i % std::max<int64_t>(1, p.n);
      b_codes[i] = int_at(b, i) - (b_zero == nullptr ? 0 : int_at(*b_zero, b_zero->numel() == 1 ? 0 : column));
    }
    // Per column: a_scale * b_scale[n] and the bias, read once (float or float16).
    std::vector<float> column_scale(static_cast<size_t>(p.n)), column_bias(static_cast<size_t>(p.n), 0.0f);
    for (int64_t j = 0; j < p.n; ++j) {
      column_scale[j] = a_scale * float_at(b_scale, b_scale.numel() == 1 ? 0 : j);
      if (bias != nullptr) column_bias[j] = float_at(*bias, j);
    }
    int64_t batches = 1;
    for (int64_t dim : p.batch) batches *= dim;
    Tensor& y = outputs[0];
    pool.parallel_for(batches * p.m, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, p.n * p.k)),
                      [&](int64_t begin, int64_t end) {
      std::vector<float> row(static_cast<size_t>(p.n));
      std::vector<int64_t> sums(static_cast<size_t>(p.n));
      for (int64_t task = begin; task < end; ++task) {
        const int64_t batch = task / p.m, i = task % p.m;
        int64_t a_base = 0, b_base = 0, rest = batch;
        for (size_t d = p.batch.size(); d-- > 0;) {
          const int64_t coordinate = rest % p.batch[d];
          rest /= p.batch[d];
          a_base += coordinate * p.a_batch_strides[d];
          b_base += coordinate * p.b_batch_strides[d];
        }
        const int32_t* a_row = a_codes.data() + a_base + i * p.k;
        std::fill(sums.begin(), sums.end(), int64_t{0});
        for (int64_t kk = 0; kk < p.k; ++kk) {
          const int64_t x = a_row[kk];
          const int32_t* b_row = b_codes.data() + b_base + kk * p.n;
          for (int64_t j = 0; j < p.n; ++j) sums[j] += x * b_row[j];
        }
        for (int64_t j = 0; j < p.n; ++j) row[j] = static_cast<float>(sums[j]) * column_scale[j] + column_bias[j];
        const int64_t at = task * p.n;
        if (y.dtype() == DataType::kFloat16) {
          for (int64_t j = 0; j < p.n; ++j) y.data<Float16>()[at + j] = Float16(row[j]);
        } else {
          std::copy(row.begin(), row.end(), y.data<float>() + at);
        }
      }
    });
    return Status::ok();
  }

 private:
  static void quantize_dynamic(const Tensor& a, std::vector<int32_t>& codes, float& scale, int32_t& zero) {
    const float* x = a.data<float>();
    float low = 0.0f, high = 0.0f;
    // The range covers the finite values only: an infinity would make the scale infinite and the zero point NaN;
    // infinities then saturate to 0 or 255 and NaN takes the zero point.
    for (int64_t i = 0; i < a.numel(); ++i) {
      if (std::isfinite(x[i])) {
        low = std::min(low, x[i]);
        high = std::max(high, x[i]);
      }
    }
    // A range of denormals would give a scale of 0 (0 / 0 for the zero point), one wider than the float range an
    // infinite one: the scale stays a positive normal float.
    scale = high == low ? 1.0f
                        : std::clamp((high - low) / 255.0f, std::numeric_limits<float>::min(),
                                     std::numeric_limits<float>::max());
    zero = static_cast<int32_t>(std::clamp(std::nearbyint(-low / scale), 0.0f, 255.0f));
    for (int64_t i = 0; i < a.numel(); ++i) {
      const float q = std::nearbyint(x[i] / scale) + static_cast<float>(zero);
      codes[i] = std::isnan(q) ? zero : static_cast<int32_t>(std::clamp(q, 0.0f, 255.0f));
    }
  }

  Expected<ProductShape> resolve(KernelInputs inputs) const {
    TRY(require_inputs(inputs, dynamic_ ? 3 : 4, description_));
    if (dynamic_) {
      TRY(check_input_type(inputs, 0, type_mask(TypeList<float>{}), description_));
    } else {
      TRY(check_input_type(inputs, 0, kInt8Types, description_));
    }
    TRY(check_input_type(inputs, 1, kInt8Types, description_));
    const Shape& sa = inputs[0]->shape();
    const Shape& sb = inputs[1]->shape();
    if (sa.empty() || sb.empty()) return error("A and B must have rank 1 or more");
    ProductShape p;
    const Shape a2 = sa.size() == 1 ? Shape{1, sa[0]} : sa;
    const Shape b2 = sb.size() == 1 ? Shape{sb[0], 1} : sb;
    p.m = a2[a2.size() - 2];
    p.k = a2.back();
    p.n = b2.back();
    if (b2[b2.size() - 2] != p.k) {
      return error("A " + shape_to_string(sa) + " and B " + shape_to_string(sb) + " do not multiply");
    }
    const size_t rank = std::max(a2.size(), b2.size()) - 2;
    p.batch.assign(rank, 1);
    p.a_batch_strides.assign(rank, 0);
    p.b_batch_strides.assign(rank, 0);
    int64_t a_stride = p.m * p.k, b_stride = p.k * p.n;
    for (size_t i = 0; i < rank; ++i) {
      const size_t d = rank - 1 - i;
      const int64_t da = i + 2 < a2.size() ? a2[a2.size() - 3 - i] : 1;
      const int64_t db = i + 2 < b2.size() ? b2[b2.size() - 3 - i] : 1;
      if (da != db && da != 1 && db != 1) return error("batch dims of A and B do not broadcast");
      p.batch[d] = da == 1 ? db : da;  // 1 broadcasts to anything, 0 included
      if (da != 1) p.a_batch_strides[d] = a_stride;
      if (db != 1) p.b_batch_strides[d] = b_stride;
      a_stride *= da;
      b_stride *= db;
    }
    p.out = p.batch;
    if (sa.size() > 1) p.out.push_back(p.m);
    if (sb.size() > 1) p.out.push_back(p.n);
    TRY(check_parameters(inputs, p.n));
    return p;
  }

  // Scales and zero points: A's one value, B's one value or N; bias [N]; the float inputs of one type.
  Status check_parameters(KernelInputs inputs, int64_t n) const {
    const size_t b_scale = dynamic_ ? 2 : 3, b_zero = dynamic_ ? 3 : 5, bias = dynamic_ ? 4 : 6;
    const DataType real = inputs[b_scale]->dtype();
    if (real != DataType::kFloat32 && (dynamic_ || real != DataType::kFloat16)) {
      return error("scales must be float" + std::string(dynamic_ ? "" : " or float16"));
    }
    const auto per_column = [&](const Tensor* t) { return t == nullptr || t->numel() == 1 || t->numel() == n; };
    if (!per_column(inputs[b_scale]) || !per_column(optional_input(inputs, b_zero))) {
      return error("b_scale and b_zero_point hold one value or one per column (" + std::to_string(n) + ")");
    }
    const Tensor* zero = optional_input(inputs, b_zero);
    if (zero != nullptr && zero->dtype() != inputs[1]->dtype()) return error("b_zero_point must have B's type");
    if (const Tensor* b = optional_input(inputs, bias); b != nullptr && (b->dtype() != real || b->numel() != n)) {
      return error("bias must be [" + std::to_string(n) + "] of the scales' type");
    }
    if (!dynamic_) {
      const Tensor* a_zero = optional_input(inputs, 4);
      if (inputs[2]->dtype() != real || inputs[2]->numel() != 1 ||
          (a_zero != nullptr && (a_zero->dtype() != inputs[0]->dtype() || a_zero->numel() != 1))) {
        return error("a_scale and a_zero_point hold one value each (per tensor), a_scale of b_scale's type");
      }
    }
    return Status::ok();
  }

  Status error(const std::string& what) const {
    return make_error(StatusCode::kInvalidArgument, description_, ": ", what);
  }

  std::string description_;
  bool dynamic_;
};

class QGemmKernel final : public Kernel {
 public:
  QGemmKernel(std::string description, bool trans_a, bool trans_b, float alpha)
      : description_(std::move(description)), trans_a_(trans_a), trans_b_(trans_b), alpha_(alpha) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const Dims d, resolve(inputs));
    const Tensor* y_zero = optional_input(inputs, 8);
    outputs.assign(1, OutputDesc{y_zero != nullptr ? y_zero->dtype() : DataType::kFloat32, Shape{d.m, d.n}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const Dims d, resolve(inputs));
    const Tensor& a = *inputs[0];
    const Tensor& b = *inputs[3];
    const Tensor& b_scale = *inputs[4];
    const Tensor* a_zero = optional_input(inputs, 2);
    const Tensor* b_zero = optional_input(inputs, 5);
    const Tensor* c = optional_input(inputs, 6);
    const Tensor* y_scale = optional_input(inputs, 7);
    const Tensor* y_zero = optional_input(inputs, 8);
    const int32_t a_offset = a_zero != nullptr ? int_at(*a_zero, 0) : 0;
    const float a_scale = inputs[1]->data<float>()[0];
    // op(B) as [K, N] int32 codes less their zero points.
    std::vector<int32_t> b_codes(static_cast<size_t>(d.k * d.n));
    for (int64_t kk = 0; kk < d.k; ++kk) {
      for (int64_t j = 0; j < d.n; ++j) {
        const int32_t zero = b_zero == nullptr ? 0 : int_at(*b_zero, b_zero->numel() == 1 ? 0 : j);
        b_codes[kk * d.n + j] = int_at(b, trans_b_ ? j * d.k + kk : kk * d.n + j) - zero;
      }
    }
    const float y_offset = y_zero != nullptr ? static_cast<float>(int_at(*y_zero, 0)) : 0.0f;
    std::vector<float> multiplier(static_cast<size_t>(d.n));
    for (int64_t j = 0; j < d.n; ++j) {
      multiplier[j] = alpha_ * a_scale * b_scale.data<float>()[b_scale.numel() == 1 ? 0 : j];
      if (y_scale != nullptr) multiplier[j] /= y_scale->data<float>()[0];
    }
    // C's strides over [M, N]: 0 where it broadcasts.
    int64_t c_row = 0, c_col = 0;
    if (c != nullptr) {
      const Shape& cs = c->shape();
      const int64_t rows = cs.size() == 2 ? cs[0] : 1;
      const int64_t cols = cs.empty() ? 1 : cs.back();
      c_col = cols == 1 ? 0 : 1;
      c_row = rows == 1 ? 0 : cols;
    }
    Tensor& y = outputs[0];
    pool.parallel_for(d.m, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, d.n * d.k)), [&](int64_t begin, int64_t end) {
      std::vector<int64_t> sums(static_cast<size_t>(d.n));
      for (int64_t i = begin; i < end; ++i) {
        std::fill(sums.begin(), sums.end(), int64_t{0});
        for (int64_t kk = 0; kk < d.k; ++kk) {
          const int64_t x = int_at(a, trans_a_ ? kk * d.m + i : i * d.k + kk) - a_offset;
          const int32_t* b_row = b_codes.data() + kk * d.n;
          for (int64_t j = 0; j < d.n; ++j) sums[j] += x * b_row[j];
        }
        for (int64_t j = 0; j < d.n; ++j) {
          const int64_t acc = sums[j] + (c != nullptr ? c->data<int32_t>()[i * c_row + j * c_col] : 0);
          const float value = static_cast<float>(acc) * multiplier[j];
          if (y_zero == nullptr) {
            y.data<float>()[i * d.n + j] = value;
            continue;
          }
          const float q = std::nearbyint(value) + y_offset;
          if (y_zero->dtype() == DataType::kUInt8) {
            y.data<uint8_t>()[i * d.n + j] = static_cast<uint8_t>(std::isnan(q) ? 0.0f : std::clamp(q, 0.0f, 255.0f));
          } else {
            y.data<int8_t>()[i * d.n + j] =
                static_cast<int8_t>(std::isnan(q) ? 0.0f : std::clamp(q, -128.0f, 127.0f));
          }
        }
      }
    });
    return Status::ok();
  }

 private:
  struct Dims {
    int64_t m = 0, k = 0, n = 0;
  };

  Expected<Dims> resolve(KernelInputs inputs) const {
    TRY(require_inputs(inputs, 5, description_));
    for (size_t i : {0, 1, 3, 4}) {
      if (inputs[i] == nullptr) return error("missing input " + std::to_string(i));
    }
    TRY(check_input_type(inputs, 0, kInt8Types, description_));
    TRY(check_input_type(inputs, 3, kInt8Types, description_));
    const Shape& sa = inputs[0]->shape();
    const Shape& sb = inputs[3]->shape();
    if (sa.size() != 2 || sb.size() != 2) return error("A and B must be 2-D");
    Dims d;
    d.m = trans_a_ ? sa[1] : sa[0];
    d.k = trans_a_ ? sa[0] : sa[1];
    d.n = trans_b_ ? sb[0] : sb[1];
    if ((trans_b_ ? sb[1] : sb[0]) != d.k) {
      return error("op(A) " + shape_to_string(sa) + " and op(B) " + shape_to_string(sb) + " do not multiply");
    }
    const auto scalar_float = [](const Tensor* t) {
      return t != nullptr && t->dtype() == DataType::kFloat32 && t->numel() == 1;
    };
    const Tensor* a_zero = optional_input(inputs, 2);
    if (!scalar_float(inputs[1]) || (a_zero != nullptr && (a_zero->dtype() != inputs[0]->dtype() || a_zero->numel() != 1))) {
      return error("a_scale must be one float and a_zero_point one value of A's type");
    }
    const Tensor* b_zero = optional_input(inputs, 5);
    const auto per_column = [&](const Tensor* t) { return t->numel() == 1 || (t->rank() == 1 && t->numel() == d.n); };
    if (inputs[4]->dtype() != DataType::kFloat32 || !per_column(inputs[4]) ||
        (b_zero != nullptr && (b_zero->dtype() != inputs[3]->dtype() || !per_column(b_zero)))) {
      return error("b_scale (float) and b_zero_point (B's type) hold one value or one per column (" +
                   std::to_string(d.n) + ")");
    }
    if (const Tensor* c = optional_input(inputs, 6)) {
      const Shape& cs = c->shape();
      const bool rows_ok = cs.size() < 2 || cs[0] == 1 || cs[0] == d.m;
      const bool cols_ok = cs.empty() || cs.back() == 1 || cs.back() == d.n;
      if (c->dtype() != DataType::kInt32 || cs.size() > 2 || !rows_ok || !cols_ok) {
        return error("C " + shape_to_string(cs) + " must be int32 broadcastable to [" + std::to_string(d.m) + ", " +
                     std::to_string(d.n) + "]");
      }
    }
    const Tensor* y_scale = optional_input(inputs, 7);
    const Tensor* y_zero = optional_input(inputs, 8);
    if ((y_scale == nullptr) != (y_zero == nullptr) || (y_scale != nullptr && !scalar_float(y_scale)) ||
        (y_zero != nullptr && (((kInt8Types >> static_cast<int>(y_zero->dtype())) & 1u) == 0 || y_zero->numel() != 1))) {
      return error("y_scale (one float) and y_zero_point (one uint8 or int8) come together, or neither for a float Y");
    }
    return d;
  }

  Status error(const std::string& what) const {
    return make_error(StatusCode::kInvalidArgument, description_, ": ", what);
  }

  std::string description_;
  bool trans_a_, trans_b_;
  float alpha_;
};

Expected<std::unique_ptr<Kernel>> create_qgemm(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t trans_a, info.node.attr_int("transA", 0));
  TRY_ASSIGN(const int64_t trans_b, info.node.attr_int("transB", 0));
  TRY_ASSIGN(const float alpha, info.node.attr_float("alpha", 1.0f));
  return std::unique_ptr<Kernel>(std::make_unique<QGemmKernel>(info.node.describe(), trans_a != 0, trans_b != 0, alpha));
}

Expected<std::unique_ptr<Kernel>> create_matmul_integer_to_float(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<IntMatMulToFloatKernel>(info.node.describe(), false));
}

Expected<std::unique_ptr<Kernel>> create_dynamic_quantize_matmul(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<IntMatMulToFloatKernel>(info.node.describe(), true));
}

const KernelDef kContribIntMatMulKernels[] = {
    {"MatMulIntegerToFloat", graph::kMsDomain, 1, kLatestOpset, kInt8Types, 0, create_matmul_integer_to_float},
    {"DynamicQuantizeMatMul", graph::kMsDomain, 1, kLatestOpset, type_mask(TypeList<float>{}), 0,
     create_dynamic_quantize_matmul},
    {"QGemm", graph::kMsDomain, 1, kLatestOpset, kInt8Types, 0, create_qgemm},
};

}  // namespace

std::span<const KernelDef> contrib_int_matmul_kernels() { return kContribIntMatMulKernels; }

}  // namespace nxrt::cpu
