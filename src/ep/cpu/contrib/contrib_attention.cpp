// com.microsoft Attention (opset 1), float32 and float16, as ONNX Runtime's contrib schema defines it:
//   Attention(input [B, S, Hin], weights [Hin, Dq + Dk + Dv], bias? [Dq + Dk + Dv], mask_index? (int32),
//             past? [2, B, N, P, Hk], attention_bias? [B | 1, N | 1, S, T], past_sequence_length?)
//   -> output [B, S, Dv], present? [2, B, N, T, Hk] with T = P + S total keys.
// Attributes: num_heads N (required), qkv_hidden_sizes (Dq, Dk, Dv; default three equal thirds of weights' second
// dim; Dq == Dk), unidirectional (causal mask), scale (0: 1 / sqrt(Dq / N)), mask_filter_value (-10000).
// Q, K, V = input . weights + bias, split in that order and into N heads; K and V follow the past ones; per head
//   scores = scale * Q K^T + mask + attention_bias, output = softmax(scores) V.
// The mask adds mask_filter_value where mask_index hides a key, and float's lowest where the causal rule (key
// position > P + query row) does (whatever mask_index says there), as ONNX Runtime's CPU kernel does: a row
// whose keys mask_index hides all then attends to the keys the causal rule leaves. mask_index forms: [B, T] and
// [B, S, T] raw masks (0 hides), [B] key ends (key j < end is seen), [2B] key ends then starts, [3B + 2] whose
// first B are key ends (contrib_attention_common.h).
// past_present_share_buffer, do_rotary and 4-D masks are NOT_IMPLEMENTED, as in ONNX Runtime's CPU kernel.
// float16 computes in float (input, weights and bias converted, output and present rounded once).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/scratch_space.h"
#include "ep/cpu/attention/attention_common.h"
#include "ep/cpu/contrib/contrib_attention_common.h"
#include "ep/cpu/elementwise/unary_common.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/gemm.h"
#include "ep/cpu/microkernels/vector_math.h"
#include "ep/cpu/run_limits.h"

namespace nxrt::cpu {

namespace {

constexpr DataTypeMask kAttentionTypes = type_mask(TypeList<float, Float16>{});
// Score floats per task (256 KiB: stays in L2).

using contrib_detail::KeyMask;

struct AttentionDims {
  int64_t b = 0, s = 0, hidden_in = 0;
  int64_t dq = 0, dk = 0, dv = 0, total_width = 0;
  int64_t heads = 0, head_k = 0, head_v = 0;
  int64_t past = 0, t = 0;
  KeyMask mask;
  int64_t bias_batch_stride = 0, bias_head_stride = 0;  // attention_bias strides over [B, N] (0: broadcast)
};

// A 0/1 weight input converted or packed once at creation (constant weights only).
struct PreparedWeights {
  std::optional<PackedB<float>> packed;
  std::vector<float> bias;  // converted constant bias (float16 only)
};

float to_float(float x) { return x; }
float to_float(Float16 x) { return static_cast<float>(x); }

template <class T>
void convert_to_float(const T* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = to_float(in[i]);
}

template <class T>
void store_floats(const float* in, T* out, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    std::copy_n(in, n, out);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = T(in[i]);
  }
}

class ContribAttentionKernel final : public Kernel {
 public:
  struct Config {
    int64_t heads = 0;
    std::vector<int64_t> qkv_sizes;  // empty: equal thirds
    bool unidirectional = false;
    float scale = 0.0f;
    float mask_filter = -10000.0f;
  };

  ContribAttentionKernel(const graph::Node& node, Config config, PreparedWeights prepared)
      : description_(node.describe()), config_(std::move(config)), prepared_(std::move(prepared)),
        outputs_(std::max<size_t>(1, node.outputs.size())),
        has_present_(node.outputs.size() > 1 && node.outputs[1] != graph::kNoValue) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const AttentionDims d, resolve(inputs));
    const DataType dtype = inputs[0]->dtype();
    outputs.assign(outputs_, OutputDesc{dtype, Shape{d.b, d.s, d.dv}});
    if (outputs_ > 1) outputs[1].shape = has_present_ ? Shape{2, d.b, d.heads, d.t, d.head_k} : Shape{0};
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const AttentionDims d, resolve(inputs));
    if (d.b * d.s == 0) return Status::ok();
    // An upper bound first, so that the exact count below cannot overflow.
    const double bound = static_cast<double>(d.b) * static_cast<double>(d.s) *
                             static_cast<double>(d.total_width + d.hidden_in) +
                         static_cast<double>(d.b) * static_cast<double>(d.t) * static_cast<double>(d.dk + d.dv) +
                         static_cast<double>(d.hidden_in) * static_cast<double>(d.total_width);
    if (bound * sizeof(float) > 0x1p60) {
      return make_error(StatusCode::kInvalidArgument, description_, ": the projections and key / value caches of ",
                        "these shapes do not fit in memory");
    }
    const RunLimits* limits = current_run_limits();
    if (limits != nullptr) {
      TRY(limits->check_bytes(scratch_floats_needed(d, inputs) * sizeof(float),
                              description_ + " projections and key / value caches"));
    }
    if (inputs[0]->dtype() == DataType::kFloat16) {
      compute<Float16>(d, inputs, outputs, pool, limits);
    } else {
      compute<float>(d, inputs, outputs, pool, limits);
    }
    return Status::ok();
  }

 private:
  // The caller's buffer: QKV [rows, total_width], the K and V caches, then (float16) the converted input,
  // weights and bias as needed.
  struct ProjectionLayout {
    int64_t qkv = 0, k_cache = 0, v_cache = 0, input = 0, weights = 0, bias = 0;
    int64_t total() const { return qkv + k_cache + v_cache + input + weights + bias; }
  };

  ProjectionLayout layout(const AttentionDims& d, KernelInputs inputs) const {
    const bool is_float = inputs[0]->dtype() == DataType::kFloat32;
    const bool bias_ready = optional_input(inputs, 2) == nullptr || is_float || !prepared_.bias.empty();
    ProjectionLayout l;
    l.qkv = d.b * d.s * d.total_width;
    l.k_cache = d.b * d.heads * d.t * d.head_k;
    l.v_cache = d.b * d.heads * d.t * d.head_v;
    l.input = is_float ? 0 : d.b * d.s * d.hidden_in;
    l.weights = is_float || prepared_.packed.has_value() ? 0 : d.hidden_in * d.total_width;
    l.bias = bias_ready ? 0 : d.total_width;
    return l;
  }

  size_t scratch_floats_needed(const AttentionDims& d, KernelInputs inputs) const {
    return static_cast<size_t>(layout(d, inputs).total());
  }

  template <class T>
  void compute(const AttentionDims& d, KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool,
               const RunLimits* limits) const {
    const int64_t rows = d.b * d.s;
    const ProjectionLayout l = layout(d, inputs);
    const int64_t k_cache = l.k_cache;
    const int64_t v_cache = l.v_cache;
    const int64_t converted = l.input;
    const int64_t weight_floats = l.weights;
    const bool weights_ready = prepared_.packed.has_value();
    const Tensor* bias = optional_input(inputs, 2);
    const bool bias_ready = l.bias == 0;
    float* const qkv = scratch_floats(ScratchUse::kContribProjection, l.total());
    float* const keys = qkv + rows * d.total_width;
    float* const values = keys + k_cache;
    float* const spare = values + v_cache;

    const float* x = nullptr;
    const float* w = nullptr;
    const float* bias_f = nullptr;
    if constexpr (std::is_same_v<T, float>) {
      x = inputs[0]->data<float>();
      w = inputs[1]->data<float>();
      bias_f = bias != nullptr ? bias->data<float>() : nullptr;
    } else {
      convert_to_float(inputs[0]->data<T>(), spare, converted);
      x = spare;
      if (!weights_ready) {
        convert_to_float(inputs[1]->data<T>(), spare + converted, weight_floats);
        w = spare + converted;
      }
      if (bias != nullptr) {
        if (bias_ready) {
          bias_f = prepared_.bias.data();
        } else {
          convert_to_float(bias->data<T>(), spare + converted + weight_floats, d.total_width);
          bias_f = spare + converted + weight_floats;
        }
      }
    }
    const GemmArgs projection{false, false, rows, d.total_width, d.hidden_in, d.hidden_in, d.total_width,
                              d.total_width};
    GemmEpilogue<float> epilogue;
    epilogue.bias = bias_f;
    if (weights_ready) {
      gemm_f32_packed(projection, 1.0f, x, *prepared_.packed, 0.0f, qkv, pool, epilogue);
    } else {
      gemm_f32(projection, 1.0f, x, w, 0.0f, qkv, pool, best_gemm_isa(), epilogue);
    }
    fill_caches<T>(d, inputs, qkv, keys, values);
    if (has_present_ && outputs.size() > 1) {
      store_floats(keys, outputs[1].data<T>(), k_cache);
      store_floats(values, outputs[1].data<T>() + k_cache, v_cache);
    }
    attend<T>(d, inputs, qkv, keys, values, outputs[0].data<T>(), pool, limits);
  }

  // keys / values [B, N, T, head]: the past entries, then this call's projections.
  template <class T>
  void fill_caches(const AttentionDims& d, KernelInputs inputs, const float* qkv, float* keys, float* values) const {
    const Tensor* past = optional_input(inputs, 4);
    const int64_t past_half = d.b * d.heads * d.past * d.head_k;
    for (int64_t b = 0; b < d.b; ++b) {
      for (int64_t n = 0; n < d.heads; ++n) {
        const int64_t bn = b * d.heads + n;
        float* k = keys + bn * d.t * d.head_k;
        float* v = values + bn * d.t * d.head_v;
        if (d.past > 0) {
          const T* past_k = past->data<T>() + bn * d.past * d.head_k;
          convert_to_float(past_k, k, d.past * d.head_k);
          convert_to_float(past_k + past_half, v, d.past * d.head_v);
        }
        for (int64_t s = 0; s < d.s; ++s) {
          const float* row = qkv + (b * d.s + s) * d.total_width;
          std::copy_n(row + d.dq + n * d.head_k, d.head_k, k + (d.past + s) * d.head_k);
          std::copy_n(row + d.dq + d.dk + n * d.head_v, d.head_v, v + (d.past + s) * d.head_v);
        }
      }
    }
  }

  template <class T>
  void attend(const AttentionDims& d, KernelInputs inputs, const float* qkv, const float* keys, const float* values,
              T* out, ThreadPool& pool, const RunLimits* limits) const {
    const float scale = config_.scale != 0.0f ? config_.scale
                                              : 1.0f / std::sqrt(static_cast<float>(d.head_k));
    const Tensor* bias_tensor = optional_input(inputs, 5);
    const T* attention_bias = bias_tensor != nullptr ? bias_tensor->data<T>() : nullptr;
    const contrib_detail::RowBlocks split = contrib_detail::row_blocks(d.s, d.t);
    const int64_t block = split.rows, blocks = split.blocks;
    pool.parallel_for(d.b * d.heads * blocks, 1, [&](int64_t begin, int64_t end) {
      float* const scores = scratch_floats(ScratchUse::kContribAttention, block * (d.t + d.head_v));
      float* const head_rows = scores + block * d.t;
      for (int64_t task = begin; task < end; ++task) {
        if (run_should_stop(limits)) return;
        const int64_t bn = task / blocks;
        const int64_t b = bn / d.heads;
        const int64_t n = bn % d.heads;
        const int64_t row0 = (task % blocks) * block;
        const int64_t count = std::min(block, d.s - row0);
        const float* q = qkv + (b * d.s + row0) * d.total_width + n * d.head_k;
        const auto finish = [&](int64_t i, float* row) {
          d.mask.apply(b, row0 + i, d.past, config_.unidirectional, config_.mask_filter, row);
          if (attention_bias != nullptr) {
            const T* bias_row = attention_bias + b * d.bias_batch_stride + n * d.bias_head_stride + (row0 + i) * d.t;
            for (int64_t j = 0; j < d.t; ++j) row[j] += to_float(bias_row[j]);
          }
        };
        T* y = out + (b * d.s + row0) * d.dv + n * d.head_v;
        const float* k = keys + bn * d.t * d.head_k;
        const float* v = values + bn * d.t * d.head_v;
        if constexpr (std::is_same_v<T, float>) {
          contrib_detail::attend_rows(q, d.total_width, k, v, count, d.t, d.head_k, d.head_v, scale, scores, y, d.dv,
                                      finish);
        } else {
          contrib_detail::attend_rows(q, d.total_width, k, v, count, d.t, d.head_k, d.head_v, scale, scores,
                                      head_rows, d.head_v, finish);
          for (int64_t i = 0; i < count; ++i) store_floats(head_rows + i * d.head_v, y + i * d.dv, d.head_v);
        }
      }
    });
  }

  Expected<AttentionDims> resolve(KernelInputs inputs) const {
    TRY(require_inputs(inputs, 2, description_));
    TRY(check_input_type(inputs, 0, kAttentionTypes, description_));
    const Tensor& x = *inputs[0];
    const DataType dtype = x.dtype();
    const auto same_type = [&](size_t index, const char* name) -> Status {
      const Tensor* t = optional_input(inputs, index);
      if (t != nullptr && t->dtype() != dtype) {
        return make_error(StatusCode::kInvalidArgument, description_, ": ", name, " is ",
                          data_type_name(t->dtype()), ", input is ", data_type_name(dtype));
      }
      return Status::ok();
    };
    TRY(same_type(1, "weights"));
    TRY(same_type(2, "bias"));
    TRY(same_type(4, "past"));
    TRY(same_type(5, "attention_bias"));
    const Shape& w = inputs[1]->shape();
    if (x.rank() != 3 || w.size() != 2 || w[0] != x.shape()[2]) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input ", shape_to_string(x.shape()),
                        " and weights ", shape_to_string(w), " must be [B, S, H] and [H, Dq + Dk + Dv]");
    }
    AttentionDims d;
    d.b = x.shape()[0];
    d.s = x.shape()[1];
    d.hidden_in = x.shape()[2];
    d.total_width = w[1];
    d.heads = config_.heads;
    if (config_.qkv_sizes.empty()) {
      if (d.total_width % 3 != 0) {
        return make_error(StatusCode::kInvalidArgument, description_, ": weights ", shape_to_string(w),
                          " second dim is not divisible by 3 (no qkv_hidden_sizes)");
      }
      d.dq = d.dk = d.dv = d.total_width / 3;
    } else {
      d.dq = config_.qkv_sizes[0];
      d.dk = config_.qkv_sizes[1];
      d.dv = config_.qkv_sizes[2];
      if (d.dq + d.dk + d.dv != d.total_width) {
        return make_error(StatusCode::kInvalidArgument, description_, ": qkv_hidden_sizes sum to ",
                          d.dq + d.dk + d.dv, ", weights have ", d.total_width, " columns");
      }
    }
    if (d.dq % d.heads != 0 || d.dv % d.heads != 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": Q, K and V widths ", d.dq, " and ", d.dv,
                        " are not divisible by num_heads ", d.heads);
    }
    d.head_k = d.dk / d.heads;
    d.head_v = d.dv / d.heads;
    const Tensor* bias = optional_input(inputs, 2);
    if (bias != nullptr && (bias->rank() != 1 || bias->shape()[0] != d.total_width)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": bias ", shape_to_string(bias->shape()),
                        " must be [", d.total_width, "]");
    }
    if (has_present_ && d.head_k != d.head_v) {
      return make_error(StatusCode::kInvalidArgument, description_, ": present holds K and V heads of one size, ",
                        "but qkv_hidden_sizes give ", d.head_k, " and ", d.head_v);
    }
    TRY(resolve_past(inputs, d));
    TRY(resolve_mask(inputs, d));
    TRY(resolve_attention_bias(inputs, d));
    return d;
  }

  Status resolve_past(KernelInputs inputs, AttentionDims& d) const {
    const Tensor* past = optional_input(inputs, 4);
    if (past != nullptr) {
      const Shape& p = past->shape();
      if (p.size() != 5 || p[0] != 2 || p[1] != d.b || p[2] != d.heads || p[4] != d.head_k || d.head_k != d.head_v) {
        return make_error(StatusCode::kInvalidArgument, description_, ": past ", shape_to_string(p), " must be [2, ",
                          d.b, ", ", d.heads, ", P, ", d.head_k, "] (and K and V heads of one size)");
      }
      d.past = p[3];
    }
    d.t = d.past + d.s;
    return Status::ok();
  }

  Status resolve_mask(KernelInputs inputs, AttentionDims& d) const {
    TRY_ASSIGN(d.mask, contrib_detail::resolve_key_mask(optional_input(inputs, 3), d.b, d.s, d.t, description_,
                                                         "mask_index"));
    return Status::ok();
  }

  Status resolve_attention_bias(KernelInputs inputs, AttentionDims& d) const {
    const Tensor* bias = optional_input(inputs, 5);
    if (bias == nullptr) return Status::ok();
    const Shape& a = bias->shape();
    if (a.size() != 4 || (a[0] != 1 && a[0] != d.b) || (a[1] != 1 && a[1] != d.heads) || a[2] != d.s ||
        a[3] != d.t) {
      return make_error(StatusCode::kInvalidArgument, description_, ": attention_bias ", shape_to_string(a),
                        " must be [", d.b, " or 1, ", d.heads, " or 1, ", d.s, ", ", d.t, "]");
    }
    d.bias_head_stride = a[1] == 1 ? 0 : d.s * d.t;
    d.bias_batch_stride = a[0] == 1 ? 0 : a[1] * d.s * d.t;
    return Status::ok();
  }

  std::string description_;
  Config config_;
  PreparedWeights prepared_;
  size_t outputs_;
  bool has_present_;
};

// Packs constant weights (and converts a constant float16 bias) once; nothing when they are run inputs.
Expected<PreparedWeights> prepare_weights(const KernelInfo& info) {
  PreparedWeights prepared;
  const Tensor* w = info.constant_inputs.size() > 1 ? info.constant_inputs[1] : nullptr;
  if (w != nullptr && w->rank() == 2 && (w->dtype() == DataType::kFloat32 || w->dtype() == DataType::kFloat16)) {
    const GemmArgs args{false, false, 0, w->shape()[1], w->shape()[0], 0, w->shape()[1], 0};
    if (w->dtype() == DataType::kFloat32) {
      prepared.packed = PackedB<float>::pack(args, w->data<float>());
    } else {
      std::vector<float> converted(static_cast<size_t>(w->numel()));
      convert_to_float(w->data<Float16>(), converted.data(), w->numel());
      prepared.packed = PackedB<float>::pack(args, converted.data());
    }
  }
  const Tensor* bias = info.constant_inputs.size() > 2 ? info.constant_inputs[2] : nullptr;
  if (bias != nullptr && bias->dtype() == DataType::kFloat16) {
    prepared.bias.resize(static_cast<size_t>(bias->numel()));
    convert_to_float(bias->data<Float16>(), prepared.bias.data(), bias->numel());
  }
  return prepared;
}

Expected<std::unique_ptr<Kernel>> create_contrib_attention(const KernelInfo& info) {
  const std::string description = info.node.describe();
  ContribAttentionKernel::Config config;
  TRY_ASSIGN(config.heads, info.node.attr_int("num_heads", 0));
  TRY_ASSIGN(config.qkv_sizes, info.node.attr_ints("qkv_hidden_sizes", {}));
  TRY_ASSIGN(const int64_t unidirectional, info.node.attr_int("unidirectional", 0));
  TRY_ASSIGN(config.scale, info.node.attr_float("scale", 0.0f));
  TRY_ASSIGN(config.mask_filter, info.node.attr_float("mask_filter_value", -10000.0f));
  TRY_ASSIGN(const int64_t share_buffer, info.node.attr_int("past_present_share_buffer", 0));
  TRY_ASSIGN(const int64_t rotary, info.node.attr_int("do_rotary", 0));
  config.unidirectional = unidirectional != 0;
  if (config.heads <= 0) {
    return make_error(StatusCode::kInvalidArgument, description,
                      ": attribute num_heads (required) must be positive, got ", config.heads);
  }
  if (!config.qkv_sizes.empty()) {
    const auto& q = config.qkv_sizes;
    if (q.size() != 3 || q[0] != q[1] || std::any_of(q.begin(), q.end(), [&](int64_t v) {
          return v <= 0 || v % config.heads != 0;
        })) {
      return make_error(StatusCode::kInvalidArgument, description,
                        ": qkv_hidden_sizes must be three positive multiples of num_heads (", config.heads,
                        ") with Q's equal to K's");
    }
  }
  const bool has_past_length = info.node.inputs.size() > 6 && info.node.inputs[6] != graph::kNoValue;
  if (share_buffer != 0 || rotary != 0 || has_past_length) {
    return make_error(StatusCode::kNotImplemented, description,
                      ": past_present_share_buffer, past_sequence_length and do_rotary are not supported on the CPU");
  }
  TRY_ASSIGN(PreparedWeights prepared, prepare_weights(info));
  return std::unique_ptr<Kernel>(
      std::make_unique<ContribAttentionKernel>(info.node, std::move(config), std::move(prepared)));
}

const KernelDef kContribAttentionKernels[] = {
    {"Attention", graph::kMsDomain, 1, kLatestOpset, kAttentionTypes, 0, create_contrib_attention},
    {"QAttention", graph::kMsDomain, 1, kLatestOpset, type_mask(TypeList<uint8_t, int8_t>{}), 0,
     contrib_detail::create_qattention},
    {"SparseAttention", graph::kMsDomain, 1, kLatestOpset, type_mask(TypeList<float, Float16, BFloat16>{}), 0,
     contrib_detail::create_sparse_attention},
    {"RotaryEmbedding", graph::kMsDomain, 1, kLatestOpset, type_mask(FloatTypes{}), 0,
     attention_detail::create_rotary_embedding},
};

}  // namespace

std::span<const KernelDef> contrib_attention_kernels() { return kContribAttentionKernels; }

}  // namespace nxrt::cpu
