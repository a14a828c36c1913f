// MatMul (numpy semantics: 1-D promotion, batch broadcasting) and Gemm. f32/f64 use the blocked GEMM of
// gemm.cpp; f16/bf16 compute in f32 through temporary buffers; integer types wrap on overflow.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ep/cpu/gemm.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

using MatMulTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>;

template <class T>
void gemm_integer(const GemmArgs& g, T alpha, const T* a, const T* b, T beta, T* c, ThreadPool& pool) {
  using U = std::make_unsigned_t<T>;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, g.n * std::max<int64_t>(g.k, 1)));
  pool.parallel_for(g.m, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      for (int64_t j = 0; j < g.n; ++j) {
        U sum = 0;
        for (int64_t p = 0; p < g.k; ++p) {
          const U x = static_cast<U>(g.trans_a ? a[p * g.lda + i] : a[i * g.lda + p]);
          const U y = static_cast<U>(g.trans_b ? b[j * g.ldb + p] : b[p * g.ldb + j]);
          sum += x * y;
        }
        T& out = c[i * g.ldc + j];
        U result = static_cast<U>(alpha) * sum;
        if (beta != T{0}) result += static_cast<U>(beta) * static_cast<U>(out);
        out = static_cast<T>(result);
      }
    }
  });
}

// Converts half-precision operands to f32, runs the f32 GEMM into an f32 copy of C, converts back.
template <class T>
void gemm_half(const GemmArgs& g, float alpha, const T* a, const T* b, float beta, T* c, ThreadPool& pool) {
  const int64_t a_count = g.trans_a ? g.k * g.lda : g.m * g.lda;
  const int64_t b_count = g.trans_b ? g.n * g.ldb : g.k * g.ldb;
  std::vector<float> af(a_count), bf(b_count), cf(g.m * g.ldc);
  for (int64_t i = 0; i < a_count; ++i) af[i] = static_cast<float>(a[i]);
  for (int64_t i = 0; i < b_count; ++i) bf[i] = static_cast<float>(b[i]);
  if (beta != 0.0f) {
    for (int64_t i = 0; i < g.m * g.ldc; ++i) cf[i] = static_cast<float>(c[i]);
  }
  gemm_f32(g, alpha, af.data(), bf.data(), beta, cf.data(), pool);
  for (int64_t i = 0; i < g.m * g.ldc; ++i) c[i] = T(cf[i]);
}

// alpha/beta are float attributes; integer Gemm truncates them (NaN -> 0, clamped to T's range).
template <class T>
T integer_scalar(double value) {
  if (std::isnan(value)) return T{0};
  const double lo = static_cast<double>(std::numeric_limits<T>::min());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (value <= lo) return std::numeric_limits<T>::min();
  if (value >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(value);
}

template <class T>
void gemm_any(const GemmArgs& g, double alpha, const T* a, const T* b, double beta, T* c, ThreadPool& pool) {
  if constexpr (std::is_same_v<T, float>) {
    gemm_f32(g, static_cast<float>(alpha), a, b, static_cast<float>(beta), c, pool);
  } else if constexpr (std::is_same_v<T, double>) {
    gemm_f64(g, alpha, a, b, beta, c, pool);
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    gemm_half<T>(g, static_cast<float>(alpha), a, b, static_cast<float>(beta), c, pool);
  } else {
    gemm_integer<T>(g, integer_scalar<T>(alpha), a, b, integer_scalar<T>(beta), c, pool);
  }
}

Status check_pair(const std::string& description, KernelInputs inputs, DataType& dtype) {
  if (inputs.size() < 2 || inputs[0] == nullptr || inputs[1] == nullptr) {
    return make_error(StatusCode::kInvalidArgument, description, ": expects inputs 0 and 1");
  }
  dtype = inputs[0]->dtype();
  if (inputs[1]->dtype() != dtype) {
    return make_error(StatusCode::kInvalidArgument, description, ": input 1 type ",
                      data_type_name(inputs[1]->dtype()), " differs from input 0 type ", data_type_name(dtype));
  }
  if (!type_list_contains(MatMulTypes{}, dtype)) {
    return make_error(StatusCode::kInvalidArgument, description, ": unsupported input type ", data_type_name(dtype));
  }
  return Status::ok();
}

class MatMulKernel final : public Kernel {
 public:
  explicit MatMulKernel(std::string description) : description_(std::move(description)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    DataType dtype;
    TRY(check_pair(description_, inputs, dtype));
    const Shape& a = inputs[0]->shape();
    const Shape& b = inputs[1]->shape();
    if (a.empty() || b.empty()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input ", a.empty() ? 0 : 1,
                        " must have rank >= 1, got a scalar");
    }
    const int64_t ka = a.back();
    const int64_t kb = b.size() == 1 ? b[0] : b[b.size() - 2];
    if (ka != kb) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 shape ", shape_to_string(a),
                        " and input 1 shape ", shape_to_string(b), " have mismatched inner dimensions ", ka,
                        " and ", kb);
    }
    const Shape a_batch(a.begin(), a.end() - std::min<size_t>(a.size(), 2));
    const Shape b_batch(b.begin(), b.end() - std::min<size_t>(b.size(), 2));
    auto batch = broadcast_shapes(a_batch, b_batch);
    if (!batch) {
      return make_error(StatusCode::kInvalidArgument, description_, ": batch dimensions of input 0 shape ",
                        shape_to_string(a), " cannot broadcast with input 1 shape ", shape_to_string(b));
    }
    Shape out = std::move(*batch);
    if (a.size() >= 2) out.push_back(a[a.size() - 2]);
    if (b.size() >= 2) out.push_back(b.back());
    outputs.assign(1, OutputDesc{dtype, std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    visit_dtype<MatMulTypes>(inputs[0]->dtype(), [&]<class T>() { run_typed<T>(*inputs[0], *inputs[1], outputs[0], pool); });
    return Status::ok();
  }

 private:
  template <class T>
  static void run_typed(const Tensor& ta, const Tensor& tb, Tensor& tout, ThreadPool& pool) {
    const Shape& a = ta.shape();
    const Shape& b = tb.shape();
    const int64_t m = a.size() >= 2 ? a[a.size() - 2] : 1;
    const int64_t k = a.back();
    const int64_t n = b.size() >= 2 ? b.back() : 1;
    const int64_t out_batch = m * n == 0 ? 0 : tout.numel() / (m * n);
    if (tout.numel() == 0) return;
    GemmArgs g;
    g.k = k;
    g.n = n;
    g.lda = k;
    g.ldb = n;
    g.ldc = n;
    const T* a_data = ta.data<T>();
    const T* b_data = tb.data<T>();
    T* c_data = tout.data<T>();
    if (b.size() <= 2 && ta.numel() / std::max<int64_t>(k, 1) == out_batch * m) {
      g.m = out_batch * m;  // B is shared by every batch and A is not broadcast: one tall GEMM
      gemm_any<T>(g, 1.0, a_data, b_data, 0.0, c_data, pool);
      return;
    }
    g.m = m;
    const size_t rank = std::max(a.size(), b.size());
    const size_t batch_rank = rank >= 2 ? rank - 2 : 0;
    const Shape out_shape = tout.shape();
    // Batch strides in matrices; 0 where an input broadcasts.
    std::vector<int64_t> out_dims(batch_rank), a_strides(batch_rank, 0), b_strides(batch_rank, 0);
    int64_t a_stride = 1;
    int64_t b_stride = 1;
    for (size_t d = batch_rank; d-- > 0;) {
      out_dims[d] = out_shape[d];
      const size_t offset_a = batch_rank - (a.size() >= 2 ? a.size() - 2 : 0);
      const size_t offset_b = batch_rank - (b.size() >= 2 ? b.size() - 2 : 0);
      const int64_t da = d >= offset_a ? a[d - offset_a] : 1;
      const int64_t db = d >= offset_b ? b[d - offset_b] : 1;
      if (da != 1) a_strides[d] = a_stride;
      if (db != 1) b_strides[d] = b_stride;
      a_stride *= da;
      b_stride *= db;
    }
    pool.parallel_for(out_batch, 1, [&](int64_t begin, int64_t end) {
      for (int64_t batch = begin; batch < end; ++batch) {
        int64_t rest = batch;
        int64_t a_index = 0;
        int64_t b_index = 0;
        for (size_t d = batch_rank; d-- > 0;) {
          const int64_t index = rest % out_dims[d];
          rest /= out_dims[d];
          a_index += index * a_strides[d];
          b_index += index * b_strides[d];
        }
        gemm_any<T>(g, 1.0, a_data + a_index * m * k, b_data + b_index * k * n, 0.0, c_data + batch * m * n, pool);
      }
    });
  }

  std::string description_;
};

class GemmKernel final : public Kernel {
 public:
  GemmKernel(std::string description, bool trans_a, bool trans_b, float alpha, float beta)
      : description_(std::move(description)), trans_a_(trans_a), trans_b_(trans_b), alpha_(alpha), beta_(beta) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    DataType dtype;
    TRY(check_pair(description_, inputs, dtype));
    const Shape& a = inputs[0]->shape();
    const Shape& b = inputs[1]->shape();
    for (int i = 0; i < 2; ++i) {
      if (inputs[i]->rank() != 2) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " must be 2-D, got shape ",
                          shape_to_string(inputs[i]->shape()));
      }
    }
    const int64_t m = trans_a_ ? a[1] : a[0];
    const int64_t ka = trans_a_ ? a[0] : a[1];
    const int64_t kb = trans_b_ ? b[1] : b[0];
    const int64_t n = trans_b_ ? b[0] : b[1];
    if (ka != kb) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 shape ", shape_to_string(a),
                        " (transA=", trans_a_, ") and input 1 shape ", shape_to_string(b), " (transB=", trans_b_,
                        ") have mismatched inner dimensions ", ka, " and ", kb);
    }
    if (inputs.size() > 2 && inputs[2] != nullptr) {
      const Tensor& c = *inputs[2];
      const Shape out{m, n};
      auto broadcast = broadcast_shapes(c.shape(), out);
      if (c.dtype() != dtype || c.rank() > 2 || !broadcast || *broadcast != out) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input 2 ", data_type_name(c.dtype()),
                          " shape ", shape_to_string(c.shape()), " cannot broadcast to output ",
                          data_type_name(dtype), " shape ", shape_to_string(out));
      }
    }
    outputs.assign(1, OutputDesc{dtype, Shape{m, n}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    visit_dtype<MatMulTypes>(inputs[0]->dtype(), [&]<class T>() {
      const Tensor* c = inputs.size() > 2 ? inputs[2] : nullptr;
      Tensor& y = outputs[0];
      const int64_t m = y.shape()[0];
      const int64_t n = y.shape()[1];
      GemmArgs g;
      g.trans_a = trans_a_;
      g.trans_b = trans_b_;
      g.m = m;
      g.n = n;
      g.k = trans_a_ ? inputs[0]->shape()[0] : inputs[0]->shape()[1];
      g.lda = inputs[0]->shape()[1];
      g.ldb = inputs[1]->shape()[1];
      g.ldc = n;
      T* out = y.data<T>();
      double beta = 0.0;
      if (c != nullptr && beta_ != 0.0f && y.numel() > 0) {
        const Shape& cs = c->shape();
        const int64_t c_rows = cs.size() == 2 ? cs[0] : 1;
        const int64_t c_cols = cs.empty() ? 1 : cs.back();
        const T* src = c->data<T>();
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) out[i * n + j] = src[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)];
        }
        beta = beta_;
      }
      gemm_any<T>(g, alpha_, inputs[0]->data<T>(), inputs[1]->data<T>(), beta, out, pool);
    });
    return Status::ok();
  }

 private:
  std::string description_;
  bool trans_a_;
  bool trans_b_;
  float alpha_;
  float beta_;
};

Expected<std::unique_ptr<Kernel>> create_matmul(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<MatMulKernel>(info.node.describe()));
}

Expected<std::unique_ptr<Kernel>> create_gemm(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const int64_t trans_a, node.attr_int("transA", 0));
  TRY_ASSIGN(const int64_t trans_b, node.attr_int("transB", 0));
  TRY_ASSIGN(const float alpha, node.attr_float("alpha", 1.0f));
  TRY_ASSIGN(const float beta, node.attr_float("beta", 1.0f));
  return std::unique_ptr<Kernel>(
      std::make_unique<GemmKernel>(node.describe(), trans_a != 0, trans_b != 0, alpha, beta));
}

const KernelDef kMatMulKernels[] = {
    {"MatMul", graph::kOnnxDomain, 1, kLatestOpset, type_mask(MatMulTypes{}), 0, create_matmul},
    {"Gemm", graph::kOnnxDomain, 7, kLatestOpset, type_mask(MatMulTypes{}), 0, create_gemm},
};

}  // namespace

std::span<const KernelDef> matmul_kernels() { return kMatMulKernels; }

}  // namespace nxrt::cpu
