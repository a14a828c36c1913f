// MatMul (numpy semantics: 1-D promotion, batch broadcasting), Gemm, and the fused forms the optimizer emits:
// com.microsoft:FusedGemm (Gemm + activation), com.nxrt:FusedMatMul (MatMul + bias + activation), and
// com.microsoft:FusedMatMul (alpha * MatMul of transposed operands, see MatMulTransposes). f32/f64
// use the blocked GEMM of gemm.cpp, with a constant B packed once at create and bias / activation applied as
// the GEMM epilogue; f16/bf16 compute in f32 through temporary buffers; integer types wrap on overflow.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ep/cpu/microkernels/gemm.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/run_limits.h"

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

// alpha/beta are float attributes; integer Gemm truncates them toward zero and reduces them modulo 2^bits, so a
// whole multiplier scales exactly as the spec's formula does in wrapping integer math (beta = -1 on uint32 is
// 2^32 - 1, and alpha * x wraps like the product of integers). NaN and infinities give 0.
template <class T>
T integer_scalar(double value) {
  constexpr double kTwoTo64 = 18446744073709551616.0;
  if (!std::isfinite(value)) return T{0};
  const double whole = std::trunc(value);
  // fmod of a whole double is exact, and below 2^64 it converts to uint64_t exactly.
  const auto magnitude = static_cast<uint64_t>(std::fmod(std::fabs(whole), kTwoTo64));
  const uint64_t wrapped = whole < 0 ? uint64_t{0} - magnitude : magnitude;
  return static_cast<T>(wrapped);  // modulo 2^bits (C++20 integral conversion)
}

// Gemm's term beta * C for beta == 0, which the GEMM (BLAS-style) never reads: 0 * C is 0 except where C is NaN
// or infinite, where the spec's formula Y = alpha * A'B' + beta * C gives NaN. `c` broadcasts to the m x n `out`.
template <class T>
void add_zero_times_c(const Tensor& c, T* out, int64_t m, int64_t n) {
  if constexpr (std::is_integral_v<T>) {
    return;  // 0 * C is 0 for integers
  } else {
    const Shape& shape = c.shape();
    const int64_t c_rows = shape.size() == 2 ? shape[0] : 1;
    const int64_t c_cols = shape.empty() ? 1 : shape.back();
    const T* src = c.data<T>();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const T v = src[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)];
        bool finite = true;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
          finite = std::isfinite(v);
        } else {
          finite = std::isfinite(static_cast<float>(v));
        }
        if (!finite) {
          out[i * n + j] = T(std::numeric_limits<float>::quiet_NaN());
        }
      }
    }
  }
}

// A constant B packed at create for the f32/f64 GEMM (at most one of the two is set).
struct PackedWeights {
  std::unique_ptr<const PackedB<float>> f32;
  std::unique_ptr<const PackedB<double>> f64;

  template <class T>
  const PackedB<T>* get(int64_t k, int64_t n) const {
    const PackedB<T>* packed = nullptr;
    if constexpr (std::is_same_v<T, float>) packed = f32.get();
    if constexpr (std::is_same_v<T, double>) packed = f64.get();
    return packed != nullptr && packed->k() == k && packed->n() == n ? packed : nullptr;
  }
};

// Packs constant input 1 when it is a 2-D f32/f64 tensor; `trans_b` as in Gemm.
PackedWeights pack_constant_b(const KernelInfo& info, bool trans_b) {
  PackedWeights packed;
  const Tensor* b = info.constant_inputs.size() > 1 ? info.constant_inputs[1] : nullptr;
  if (b == nullptr || b->rank() != 2 || b->numel() == 0) return packed;
  GemmArgs g;
  g.trans_b = trans_b;
  g.k = trans_b ? b->shape()[1] : b->shape()[0];
  g.n = trans_b ? b->shape()[0] : b->shape()[1];
  g.ldb = b->shape()[1];
  if (b->dtype() == DataType::kFloat32) {
    packed.f32 = std::make_unique<const PackedB<float>>(PackedB<float>::pack(g, b->data<float>()));
  } else if (b->dtype() == DataType::kFloat64) {
    packed.f64 = std::make_unique<const PackedB<double>>(PackedB<double>::pack(g, b->data<double>()));
  }
  // A constant B always matches its packed shape, so the run reads only the packed copy.
  if (packed.f32 || packed.f64) info.release_constant_pages(1);
  return packed;
}

// C = alpha * op(A) op(B) + beta * C, then the epilogue (f32/f64 only; the other types take none). `packed`,
// when it matches op(B)'s shape, replaces b.
template <class T>
void gemm_any(const GemmArgs& g, double alpha, const T* a, const T* b, double beta, T* c, ThreadPool& pool,
              const PackedWeights* packed = nullptr, const GemmEpilogue<T>* epilogue = nullptr) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    const GemmEpilogue<T> none;
    const GemmEpilogue<T>& ep = epilogue != nullptr ? *epilogue : none;
    const PackedB<T>* pb = packed != nullptr ? packed->get<T>(g.k, g.n) : nullptr;
    if constexpr (std::is_same_v<T, float>) {
      if (pb != nullptr) {
        gemm_f32_packed(g, static_cast<float>(alpha), a, *pb, static_cast<float>(beta), c, pool, ep);
      } else {
        gemm_f32(g, static_cast<float>(alpha), a, b, static_cast<float>(beta), c, pool, best_gemm_isa(), ep);
      }
    } else {
      if (pb != nullptr) {
        gemm_f64_packed(g, alpha, a, *pb, beta, c, pool, ep);
      } else {
        gemm_f64(g, alpha, a, b, beta, c, pool, best_gemm_isa(), ep);
      }
    }
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    gemm_half<T>(g, static_cast<float>(alpha), a, b, static_cast<float>(beta), c, pool);
  } else {
    gemm_integer<T>(g, integer_scalar<T>(alpha), a, b, integer_scalar<T>(beta), c, pool);
  }
}

// Reads the activation attributes of a fused node: FusedGemm's activation_alpha/beta/gamma (in that order, up
// to the first one absent) or FusedMatMul's activation_params.
Expected<FusedActivation> parse_node_activation(const graph::Node& node, bool gemm_style) {
  TRY_ASSIGN(const std::string name, node.attr_string("activation", ""));
  std::vector<float> params;
  if (gemm_style) {
    for (const char* attr : {"activation_alpha", "activation_beta", "activation_gamma"}) {
      if (node.find_attribute(attr) == nullptr) break;
      TRY_ASSIGN(const float value, node.attr_float(attr, 0.0f));
      params.push_back(value);
    }
  } else {
    TRY_ASSIGN(params, node.attr_floats("activation_params", {}));
  }
  return parse_fused_activation(name, params, node.describe());
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

// com.microsoft:FusedMatMul's operand transposes, as ONNX Runtime's CPU kernel applies them to an input of rank r:
// trans swaps the last two dims; trans_batch (r >= 3) moves dim 0 between the batch dims and the last dim, so the
// matrix rows run over it (permutation [1, ..., r - 2, 0, r - 1], then trans). Each is ignored where the rank
// is too small. The product is scaled by alpha.
struct MatMulTransposes {
  float alpha = 1.0f;
  bool trans_a = false, trans_b = false, trans_batch_a = false, trans_batch_b = false;
  bool any_a() const { return trans_a || trans_batch_a; }
  bool any_b() const { return trans_b || trans_batch_b; }
};

std::vector<size_t> operand_permutation(size_t rank, bool trans, bool trans_batch) {
  std::vector<size_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = i;
  if (rank < 2) return perm;
  if (trans_batch && rank >= 3) {
    for (size_t i = 0; i + 2 < rank; ++i) perm[i] = i + 1;
    perm[rank - 2] = 0;
  }
  if (trans) std::swap(perm[rank - 2], perm[rank - 1]);
  return perm;
}

Shape permuted_shape(const Shape& shape, const std::vector<size_t>& perm) {
  Shape out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = shape[perm[i]];
  return out;
}

// A copy of `in` with its dims in `perm` order (out dim i is in dim perm[i]), any fixed-size element type.
Expected<Tensor> permuted_copy(const Tensor& in, const std::vector<size_t>& perm) {
  TRY_ASSIGN(Tensor out, Tensor::allocate(in.dtype(), permuted_shape(in.shape(), perm)));
  const size_t rank = perm.size();
  const size_t bytes = in.numel() == 0 ? 0 : in.storage_bytes() / static_cast<size_t>(in.numel());
  std::vector<int64_t> in_strides(rank, 1), stride_of_out(rank), index(rank, 0);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * in.shape()[d];
  for (size_t i = 0; i < rank; ++i) stride_of_out[i] = in_strides[perm[i]];
  const char* src = static_cast<const char*>(in.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  int64_t from = 0;
  for (int64_t i = 0; i < in.numel(); ++i) {
    std::copy_n(src + static_cast<size_t>(from) * bytes, bytes, dst + static_cast<size_t>(i) * bytes);
    for (size_t d = rank; d-- > 0;) {  // odometer over out's dims
      from += stride_of_out[d];
      if (++index[d] < out.shape()[d]) break;
      from -= stride_of_out[d] * index[d];
      index[d] = 0;
    }
  }
  return out;
}

// MatMul, and FusedMatMul when `fused`: Y = act(MatMul(A, B) + bias + Z), bias (input 2, optional) 1-D of length
// N, Z (input 3, optional; a residual) with Y's shape.
class MatMulKernel final : public Kernel {
 public:
  MatMulKernel(std::string description, PackedWeights packed, bool fused, FusedActivation activation,
               MatMulTransposes transposes = {})
      : description_(std::move(description)),
        packed_(std::move(packed)),
        fused_(fused),
        activation_(activation),
        transposes_(transposes) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    DataType dtype;
    TRY(check_pair(description_, inputs, dtype));
    // Permuted shapes only for com.microsoft:FusedMatMul's transposes (steady-state runs allocate nothing).
    Shape a_permuted, b_permuted;
    if (transposes_.any_a()) a_permuted = operand_shape(*inputs[0], transposes_.trans_a, transposes_.trans_batch_a);
    if (transposes_.any_b()) b_permuted = operand_shape(*inputs[1], transposes_.trans_b, transposes_.trans_batch_b);
    const Shape& a = transposes_.any_a() ? a_permuted : inputs[0]->shape();
    const Shape& b = transposes_.any_b() ? b_permuted : inputs[1]->shape();
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
    const Tensor* bias = fused_ ? optional_input(inputs, 2) : nullptr;
    const int64_t n = b.size() >= 2 ? b.back() : 1;
    if (bias != nullptr && (bias->dtype() != dtype || bias->rank() != 1 || bias->shape()[0] != n)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 2 (bias) ", data_type_name(bias->dtype()),
                        " shape ", shape_to_string(bias->shape()), " must be 1-D ", data_type_name(dtype),
                        " of length ", n);
    }
    const Tensor* residual = fused_ ? optional_input(inputs, 3) : nullptr;
    if (residual != nullptr && (residual->dtype() != dtype || residual->shape() != out)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 3 (Z) ",
                        data_type_name(residual->dtype()), " shape ", shape_to_string(residual->shape()),
                        " must be the output's ", data_type_name(dtype), " shape ", shape_to_string(out));
    }
    outputs.assign(1, OutputDesc{dtype, std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor* bias = fused_ ? optional_input(inputs, 2) : nullptr;
    const Tensor* residual = fused_ ? optional_input(inputs, 3) : nullptr;
    Tensor a_permuted, b_permuted;
    if (transposes_.any_a() && inputs[0]->rank() >= 2) {
      TRY_ASSIGN(a_permuted, permuted_copy(*inputs[0], operand_permutation(inputs[0]->rank(), transposes_.trans_a,
                                                                           transposes_.trans_batch_a)));
    }
    if (transposes_.any_b() && inputs[1]->rank() >= 2) {
      TRY_ASSIGN(b_permuted, permuted_copy(*inputs[1], operand_permutation(inputs[1]->rank(), transposes_.trans_b,
                                                                           transposes_.trans_batch_b)));
    }
    const Tensor& a = a_permuted.is_valid() ? a_permuted : *inputs[0];
    const Tensor& b = b_permuted.is_valid() ? b_permuted : *inputs[1];
    visit_dtype<MatMulTypes>(inputs[0]->dtype(), [&]<class T>() {
      GemmEpilogue<T> epilogue;
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        epilogue.bias = bias != nullptr ? bias->data<T>() : nullptr;
        epilogue.residual = residual != nullptr ? residual->data<T>() : nullptr;
        epilogue.activation = activation_;
      }
      run_typed<T>(a, b, outputs[0], pool, epilogue);
    });
    return Status::ok();
  }

 private:
  static Shape operand_shape(const Tensor& t, bool trans, bool trans_batch) {
    return permuted_shape(t.shape(), operand_permutation(t.rank(), trans, trans_batch));
  }

  template <class T>
  void run_typed(const Tensor& ta, const Tensor& tb, Tensor& tout, ThreadPool& pool,
                 const GemmEpilogue<T>& epilogue) const {
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
    const PackedWeights* packed = b.size() == 2 ? &packed_ : nullptr;
    GemmEpilogue<T> batch_epilogue = epilogue;  // the residual, an output-shaped matrix, moves with the batch
    batch_epilogue.ld_residual = n;
    if (b.size() <= 2 && ta.numel() / std::max<int64_t>(k, 1) == out_batch * m) {
      g.m = out_batch * m;  // B is shared by every batch and A is not broadcast: one tall GEMM
      gemm_any<T>(g, transposes_.alpha, a_data, b_data, 0.0, c_data, pool, packed, &batch_epilogue);
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
    const auto run_batch = [&](int64_t batch) {
      int64_t rest = batch;
      int64_t a_index = 0;
      int64_t b_index = 0;
      for (size_t d = batch_rank; d-- > 0;) {
        const int64_t index = rest % out_dims[d];
        rest /= out_dims[d];
        a_index += index * a_strides[d];
        b_index += index * b_strides[d];
      }
      GemmEpilogue<T> at_batch = batch_epilogue;
      if (at_batch.residual != nullptr) at_batch.residual += batch * m * n;
      gemm_any<T>(g, transposes_.alpha, a_data + a_index * m * k, b_data + b_index * k * n, 0.0, c_data + batch * m * n, pool,
                  packed, &at_batch);
    };
    // Fewer batches than threads: each GEMM uses the pool; otherwise one serial GEMM per batch on each thread
    // (a GEMM nested in parallel_for runs on its calling thread).
    const RunLimits* limits = current_run_limits();
    if (out_batch < pool.num_threads()) {
      for (int64_t batch = 0; batch < out_batch && !run_should_stop(limits); ++batch) run_batch(batch);
      return;
    }
    pool.parallel_for(out_batch, 1, [&](int64_t begin, int64_t end) {
      for (int64_t batch = begin; batch < end && !run_should_stop(limits); ++batch) run_batch(batch);
    });
  }

  std::string description_;
  PackedWeights packed_;
  bool fused_;
  FusedActivation activation_;
  MatMulTransposes transposes_;
};

// Gemm, and FusedGemm when `activation` is set: Y = act(alpha * op(A) op(B) + beta * C).
class GemmKernel final : public Kernel {
 public:
  GemmKernel(std::string description, bool trans_a, bool trans_b, float alpha, float beta, PackedWeights packed,
             FusedActivation activation)
      : description_(std::move(description)),
        trans_a_(trans_a),
        trans_b_(trans_b),
        alpha_(alpha),
        beta_(beta),
        packed_(std::move(packed)),
        activation_(activation) {}

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
      GemmEpilogue<T> epilogue;
      constexpr bool kFloating = std::is_same_v<T, float> || std::is_same_v<T, double>;
      if constexpr (kFloating) epilogue.activation = activation_;
      if (c != nullptr && beta_ != 0.0f && y.numel() > 0) {
        const Shape& cs = c->shape();
        const int64_t c_rows = cs.size() == 2 ? cs[0] : 1;
        const int64_t c_cols = cs.empty() ? 1 : cs.back();
        const T* src = c->data<T>();
        if (kFloating && beta_ == 1.0f && c_rows == 1 && c_cols == n) {
          epilogue.bias = src;  // a row vector C is the per-column bias of the epilogue
        } else if (kFloating && beta_ == 1.0f && c_rows == m && c_cols == 1) {
          epilogue.bias = src;
          epilogue.bias_per_row = true;
        } else {
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              out[i * n + j] = src[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)];
            }
          }
          beta = beta_;
        }
      }
      gemm_any<T>(g, alpha_, inputs[0]->data<T>(), inputs[1]->data<T>(), beta, out, pool, &packed_, &epilogue);
      if (c != nullptr && beta_ == 0.0f) add_zero_times_c(*c, out, m, n);
    });
    return Status::ok();
  }

 private:
  std::string description_;
  bool trans_a_;
  bool trans_b_;
  float alpha_;
  float beta_;
  PackedWeights packed_;
  FusedActivation activation_;
};

Expected<std::unique_ptr<Kernel>> create_matmul(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(
      std::make_unique<MatMulKernel>(info.node.describe(), pack_constant_b(info, false), false, FusedActivation{}));
}

Expected<std::unique_ptr<Kernel>> create_fused_matmul(const KernelInfo& info) {
  TRY_ASSIGN(const FusedActivation activation, parse_node_activation(info.node, false));
  return std::unique_ptr<Kernel>(
      std::make_unique<MatMulKernel>(info.node.describe(), pack_constant_b(info, false), true, activation));
}

Expected<std::unique_ptr<Kernel>> create_ms_fused_matmul(const KernelInfo& info) {
  MatMulTransposes t;
  TRY_ASSIGN(t.alpha, info.node.attr_float("alpha", 1.0f));
  TRY_ASSIGN(const int64_t trans_a, info.node.attr_int("transA", 0));
  TRY_ASSIGN(const int64_t trans_b, info.node.attr_int("transB", 0));
  TRY_ASSIGN(const int64_t trans_batch_a, info.node.attr_int("transBatchA", 0));
  TRY_ASSIGN(const int64_t trans_batch_b, info.node.attr_int("transBatchB", 0));
  t.trans_a = trans_a != 0;
  t.trans_b = trans_b != 0;
  t.trans_batch_a = trans_batch_a != 0;
  t.trans_batch_b = trans_batch_b != 0;
  // A constant B is packed as stored; a transposed one is multiplied from its permuted copy.
  PackedWeights packed = t.any_b() ? PackedWeights{} : pack_constant_b(info, false);
  return std::unique_ptr<Kernel>(
      std::make_unique<MatMulKernel>(info.node.describe(), std::move(packed), false, FusedActivation{}, t));
}

Expected<std::unique_ptr<Kernel>> create_gemm_with(const KernelInfo& info, FusedActivation activation) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const int64_t trans_a, node.attr_int("transA", 0));
  TRY_ASSIGN(const int64_t trans_b, node.attr_int("transB", 0));
  TRY_ASSIGN(const float alpha, node.attr_float("alpha", 1.0f));
  TRY_ASSIGN(const float beta, node.attr_float("beta", 1.0f));
  return std::unique_ptr<Kernel>(std::make_unique<GemmKernel>(node.describe(), trans_a != 0, trans_b != 0, alpha,
                                                              beta, pack_constant_b(info, trans_b != 0),
                                                              activation));
}

Expected<std::unique_ptr<Kernel>> create_gemm(const KernelInfo& info) { return create_gemm_with(info, {}); }

Expected<std::unique_ptr<Kernel>> create_fused_gemm(const KernelInfo& info) {
  TRY_ASSIGN(const FusedActivation activation, parse_node_activation(info.node, true));
  return create_gemm_with(info, activation);
}

using FusedTypes = TypeList<float, double>;

const KernelDef kMatMulKernels[] = {
    {"MatMul", graph::kOnnxDomain, 1, kLatestOpset, type_mask(MatMulTypes{}), 0, create_matmul},
    {"Gemm", graph::kOnnxDomain, 7, kLatestOpset, type_mask(MatMulTypes{}), 0, create_gemm},
    {"FusedGemm", graph::kMsDomain, 1, kLatestOpset, type_mask(FusedTypes{}), 0, create_fused_gemm},
    {"FusedMatMul", "com.nxrt", 1, kLatestOpset, type_mask(FusedTypes{}), 0, create_fused_matmul},
    {"FusedMatMul", graph::kMsDomain, 1, kLatestOpset, type_mask(TypeList<float, double, Float16, BFloat16>{}), 0,
     create_ms_fused_matmul},
};

}  // namespace

std::span<const KernelDef> matmul_kernels() { return kMatMulKernels; }

}  // namespace nxrt::cpu
