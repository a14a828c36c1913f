// com.microsoft MultiHeadAttention (opset 1), float32, float16 and bfloat16, as ONNX Runtime's contrib schema
// defines it:
//   query [B, S, D], or packed Q, K, V [B, S, N, 3, H] (key and value absent)
//   key [B, L, D], packed K, V [B, L, N, 2, H] (value absent), or keys already split in heads [B, N, L, H] (then
//     value is [B, N, L, Hv]: a projected cross-attention cache, taken as is: no bias, no past)
//   value [B, L, Dv]
//   bias [D + D + Dv], added to the projections Q, K and V (K and V only in the [B, L, *] and packed forms)
//   key_padding_mask (int32: [B] key ends, [3B + 2], [2B] ends then starts, [B, T], [B, S, T]),
//   attention_bias [B | 1, N | 1, S, T], past_key / past_value [B, N, P, H] (the new keys follow them)
//   -> output [B, S, Dv], present_key / present_value [B, N, T, H] with T = P + L.
// Attributes: num_heads N (required), scale (0: 1 / sqrt(H)), mask_filter_value (-10000), unidirectional (query s
// sees keys up to P + s, the last query every key). Per head: softmax(scale Q K^T + mask + attention_bias) V,
// masks as in com.microsoft Attention (contrib_attention_common.h). past_sequence_length (a shared buffer),
// cache_indirection (beam search) and the qk output are NOT_IMPLEMENTED. Half types compute in float and are
// rounded once.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/scratch_space.h"
#include "ep/cpu/contrib/contrib_attention_common.h"
#include "ep/cpu/elementwise/unary_common.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/run_limits.h"

namespace nxrt::cpu {

namespace {

using HalfOrFloat = TypeList<float, Float16, BFloat16>;

enum Input : size_t { kQuery, kKey, kValue, kBias, kKeyMask, kAttentionBias, kPastKey, kPastValue, kPastLength };

enum class KvForm { kSeparate, kPackedQkv, kPackedKv, kHeads };

struct MhaDims {
  int64_t b = 0, s = 0, l = 0, past = 0, t = 0, heads = 0, h = 0, hv = 0;
  KvForm form = KvForm::kSeparate;
  contrib_detail::KeyMask mask;
  int64_t bias_batch_stride = 0, bias_head_stride = 0;
};

class MultiHeadAttentionKernel final : public Kernel {
 public:
  MultiHeadAttentionKernel(const graph::Node& node, int64_t heads, float scale, float filter, bool causal)
      : description_(node.describe()), heads_(heads), scale_(scale), filter_(filter), causal_(causal),
        outputs_(std::max<size_t>(1, std::min<size_t>(3, node.outputs.size()))) {
    for (size_t o = 1; o < outputs_; ++o) present_[o - 1] = node.outputs[o] != graph::kNoValue;
  }

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const MhaDims d, resolve(inputs));
    const DataType dtype = inputs[kQuery]->dtype();
    outputs.assign(outputs_, OutputDesc{dtype, Shape{d.b, d.s, d.heads * d.hv}});
    if (outputs_ > 1) outputs[1].shape = present_[0] ? Shape{d.b, d.heads, d.t, d.h} : Shape{0};
    if (outputs_ > 2) outputs[2].shape = present_[1] ? Shape{d.b, d.heads, d.t, d.hv} : Shape{0};
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const MhaDims d, resolve(inputs));
    const RunLimits* limits = current_run_limits();
    const int64_t floats = d.b * d.s * d.heads * d.h + d.b * d.heads * d.t * (d.h + d.hv);
    if (limits != nullptr) {
      TRY(limits->check_bytes(static_cast<size_t>(floats) * sizeof(float), description_ + " float Q, K and V"));
    }
    visit_dtype<HalfOrFloat>(inputs[kQuery]->dtype(),
                             [&]<class T>() { compute<T>(d, inputs, outputs, pool, limits); });
    return Status::ok();
  }

 private:
  template <class T>
  void compute(const MhaDims& d, KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool,
               const RunLimits* limits) const {
    const int64_t n_heads = d.heads, h = d.h, hv = d.hv;
    float* const q = scratch_floats(ScratchUse::kContribProjection,
                                    d.b * d.s * n_heads * h + d.b * n_heads * d.t * (h + hv));
    float* const keys = q + d.b * d.s * n_heads * h;
    float* const values = keys + d.b * n_heads * d.t * h;
    fill<T>(d, inputs, q, keys, values);
    if (outputs.size() > 1 && outputs[1].numel() > 0) store(keys, outputs[1].data<T>(), d.b * n_heads * d.t * h);
    if (outputs.size() > 2 && outputs[2].numel() > 0) store(values, outputs[2].data<T>(), d.b * n_heads * d.t * hv);
    const Tensor* bias_tensor = optional_input(inputs, kAttentionBias);
    const T* attention_bias = bias_tensor != nullptr ? bias_tensor->data<T>() : nullptr;
    const float scale = scale_ != 0.0f ? scale_ : 1.0f / std::sqrt(static_cast<float>(h));
    const contrib_detail::RowBlocks split = contrib_detail::row_blocks(d.s, d.t);
    const int64_t block = split.rows, blocks = split.blocks;
    T* const out = outputs[0].data<T>();
    pool.parallel_for(d.b * n_heads * blocks, 1, [&](int64_t begin, int64_t end) {
      float* const scores = scratch_floats(ScratchUse::kContribAttention, block * (d.t + hv));
      float* const rows = scores + block * d.t;
      for (int64_t task = begin; task < end; ++task) {
        if (run_should_stop(limits)) return;
        const int64_t bn = task / blocks;
        const int64_t b = bn / n_heads, n = bn % n_heads;
        const int64_t s0 = (task % blocks) * block;
        const int64_t count = std::min(block, d.s - s0);
        const auto finish = [&](int64_t i, float* row) {
          d.mask.apply(b, s0 + i, d.past, causal_, filter_, row);
          if (attention_bias != nullptr) {
            const T* add = attention_bias + b * d.bias_batch_stride + n * d.bias_head_stride + (s0 + i) * d.t;
            for (int64_t j = 0; j < d.t; ++j) row[j] += static_cast<float>(add[j]);
          }
        };
        contrib_detail::attend_rows(q + ((b * d.s + s0) * n_heads + n) * h, n_heads * h, keys + bn * d.t * h,
                                    values + bn * d.t * hv, count, d.t, h, hv, scale, scores, rows, hv, finish);
        for (int64_t i = 0; i < count; ++i) store(rows + i * hv, out + ((b * d.s + s0 + i) * n_heads + n) * hv, hv);
      }
    });
  }

  // q [B, S, N, H] and the caches keys [B, N, T, H], values [B, N, T, Hv]: the past rows, then the new ones.
  template <class T>
  void fill(const MhaDims& d, KernelInputs inputs, float* q, float* keys, float* values) const {
    const int64_t n_heads = d.heads, h = d.h, hv = d.hv, dq = n_heads * h;
    const Tensor* bias = optional_input(inputs, kBias);
    const auto bias_at = [&](int64_t i) { return bias != nullptr ? static_cast<float>(bias->data<T>()[i]) : 0.0f; };
    const T* query = inputs[kQuery]->data<T>();
    for (int64_t row = 0; row < d.b * d.s; ++row) {
      for (int64_t n = 0; n < n_heads; ++n) {
        for (int64_t e = 0; e < h; ++e) {
          const int64_t from =
              d.form == KvForm::kPackedQkv ? ((row * n_heads + n) * 3) * h + e : row * dq + n * h + e;
          q[(row * n_heads + n) * h + e] = static_cast<float>(query[from]) + bias_at(n * h + e);
        }
      }
    }
    const Tensor* past_key = optional_input(inputs, kPastKey);
    const Tensor* past_value = optional_input(inputs, kPastValue);
    const T* key = d.form == KvForm::kPackedQkv ? query : inputs[kKey]->data<T>();
    const T* value = d.form == KvForm::kPackedQkv || d.form == KvForm::kPackedKv ? key : inputs[kValue]->data<T>();
    for (int64_t b = 0; b < d.b; ++b) {
      for (int64_t n = 0; n < n_heads; ++n) {
        float* k = keys + (b * n_heads + n) * d.t * h;
        float* v = values + (b * n_heads + n) * d.t * hv;
        if (d.past > 0) {
          const T* pk = past_key->data<T>() + (b * n_heads + n) * d.past * h;
          const T* pv = past_value->data<T>() + (b * n_heads + n) * d.past * hv;
          for (int64_t e = 0; e < d.past * h; ++e) k[e] = static_cast<float>(pk[e]);
          for (int64_t e = 0; e < d.past * hv; ++e) v[e] = static_cast<float>(pv[e]);
        }
        for (int64_t j = 0; j < d.l; ++j) {
          float* krow = k + (d.past + j) * h;
          float* vrow = v + (d.past + j) * hv;
          for (int64_t e = 0; e < h; ++e) krow[e] = static_cast<float>(key[key_index(d, b, n, j, e, 0)]);
          for (int64_t e = 0; e < hv; ++e) vrow[e] = static_cast<float>(value[key_index(d, b, n, j, e, 1)]);
          if (bias != nullptr && d.form != KvForm::kHeads) {
            for (int64_t e = 0; e < h; ++e) krow[e] += bias_at(dq + n * h + e);
            for (int64_t e = 0; e < hv; ++e) vrow[e] += bias_at(2 * dq + n * hv + e);
          }
        }
      }
    }
  }

  // Index of element e of new key (which 0) or value (which 1) row j of head n of entry b in its input.
  static int64_t key_index(const MhaDims& d, int64_t b, int64_t n, int64_t j, int64_t e, int which) {
    const int64_t width = which == 0 ? d.h : d.hv;
    switch (d.form) {
      case KvForm::kSeparate: return (b * d.l + j) * d.heads * width + n * width + e;
      case KvForm::kPackedQkv: return (((b * d.l + j) * d.heads + n) * 3 + 1 + which) * d.h + e;
      case KvForm::kPackedKv: return (((b * d.l + j) * d.heads + n) * 2 + which) * d.h + e;
      case KvForm::kHeads: return ((b * d.heads + n) * d.l + j) * width + e;
    }
    return 0;
  }

  template <class T>
  static void store(const float* from, T* to, int64_t count) {
    for (int64_t i = 0; i < count; ++i) to[i] = T(from[i]);
  }

  Expected<MhaDims> resolve(KernelInputs inputs) const {
    const Tensor* query = optional_input(inputs, kQuery);
    if (query == nullptr) return error("query is required");
    TRY(check_input_type(inputs, kQuery, type_mask(HalfOrFloat{}), description_));
    for (size_t i : {kKey, kValue, kBias, kAttentionBias, kPastKey, kPastValue}) {
      const Tensor* t = optional_input(inputs, i);
      if (t != nullptr && t->dtype() != query->dtype()) {
        return error("input " + std::to_string(i) + " must have query's type");
      }
    }
    if (optional_input(inputs, kPastLength) != nullptr || optional_input(inputs, kPastLength + 1) != nullptr) {
      return make_error(StatusCode::kNotImplemented, description_,
                        ": past_sequence_length and cache_indirection are not supported on the CPU");
    }
    MhaDims d;
    d.heads = heads_;
    const Shape& qs = query->shape();
    const Tensor* key = optional_input(inputs, kKey);
    const Tensor* value = optional_input(inputs, kValue);
    d.b = qs.empty() ? 0 : qs[0];
    if (key == nullptr && value == nullptr) {
      if (qs.size() != 5 || qs[2] != heads_ || qs[3] != 3) return error("packed query must be [B, S, N, 3, H]");
      d.form = KvForm::kPackedQkv;
      d.s = d.l = qs[1];
      d.h = d.hv = qs[4];
    } else {
      if (qs.size() != 3 || qs[2] % heads_ != 0) return error("query must be [B, S, N * H]");
      if (key == nullptr) return error("key is required with value");
      d.s = qs[1];
      d.h = qs[2] / heads_;
      const Shape& ks = key->shape();
      if (value == nullptr) {
        if (ks.size() != 5 || ks[0] != d.b || ks[2] != heads_ || ks[3] != 2 || ks[4] != d.h) {
          return error("packed key must be [B, L, N, 2, H]");
        }
        d.form = KvForm::kPackedKv;
        d.l = ks[1];
        d.hv = d.h;
      } else if (ks.size() == 4) {
        const Shape& vs = value->shape();
        if (ks[0] != d.b || ks[1] != heads_ || ks[3] != d.h || vs.size() != 4 || vs[0] != d.b || vs[1] != heads_ ||
            vs[2] != ks[2]) {
          return error("key and value split in heads must be [B, N, L, H] and [B, N, L, Hv]");
        }
        d.form = KvForm::kHeads;
        d.l = ks[2];
        d.hv = vs[3];
      } else {
        const Shape& vs = value->shape();
        if (ks.size() != 3 || ks[0] != d.b || ks[2] != qs[2] || vs.size() != 3 || vs[0] != d.b || vs[1] != ks[1] ||
            vs[2] % heads_ != 0) {
          return error("key and value must be [B, L, N * H] and [B, L, N * Hv]");
        }
        d.l = ks[1];
        d.hv = vs[2] / heads_;
      }
    }
    TRY(resolve_past_and_bias(inputs, d));
    TRY_ASSIGN(d.mask, contrib_detail::resolve_key_mask(optional_input(inputs, kKeyMask), d.b, d.s, d.t,
                                                        description_, "key_padding_mask"));
    return d;
  }

  Status resolve_past_and_bias(KernelInputs inputs, MhaDims& d) const {
    const Tensor* past_key = optional_input(inputs, kPastKey);
    const Tensor* past_value = optional_input(inputs, kPastValue);
    if ((past_key == nullptr) != (past_value == nullptr)) return error("past_key and past_value come together");
    if (past_key != nullptr) {
      const Shape& p = past_key->shape();
      if (d.form == KvForm::kHeads || p.size() != 4 || p[0] != d.b || p[1] != d.heads || p[3] != d.h ||
          past_value->shape() != Shape{d.b, d.heads, p[2], d.hv}) {
        return error("past_key and past_value must be [B, N, P, H] and [B, N, P, Hv] (and key not split in heads)");
      }
      d.past = p[2];
    }
    d.t = d.past + d.l;
    if (const Tensor* bias = optional_input(inputs, kBias);
        bias != nullptr && bias->shape() != Shape{2 * d.heads * d.h + d.heads * d.hv}) {
      return error("bias must be [D + D + Dv] = [" + std::to_string(2 * d.heads * d.h + d.heads * d.hv) + "]");
    }
    if (const Tensor* bias = optional_input(inputs, kAttentionBias)) {
      const Shape& a = bias->shape();
      if (a.size() != 4 || (a[0] != 1 && a[0] != d.b) || (a[1] != 1 && a[1] != d.heads) || a[2] != d.s ||
          a[3] != d.t) {
        return error("attention_bias must be [B or 1, N or 1, S, T] with T = " + std::to_string(d.t));
      }
      d.bias_head_stride = a[1] == 1 ? 0 : d.s * d.t;
      d.bias_batch_stride = a[0] == 1 ? 0 : a[1] * d.s * d.t;
    }
    return Status::ok();
  }

  Status error(const std::string& what) const {
    return make_error(StatusCode::kInvalidArgument, description_, ": ", what);
  }

  std::string description_;
  int64_t heads_;
  float scale_, filter_;
  bool causal_;
  size_t outputs_;
  bool present_[2] = {false, false};  // present_key, present_value requested
};

Expected<std::unique_ptr<Kernel>> create_multi_head_attention(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t heads, info.node.attr_int("num_heads", 0));
  TRY_ASSIGN(const float scale, info.node.attr_float("scale", 0.0f));
  TRY_ASSIGN(const float filter, info.node.attr_float("mask_filter_value", -10000.0f));
  TRY_ASSIGN(const int64_t unidirectional, info.node.attr_int("unidirectional", 0));
  if (heads <= 0 || !std::isfinite(scale)) {
    return make_error(StatusCode::kInvalidArgument, info.node.describe(),
                      ": attribute num_heads (required) must be positive and scale finite");
  }
  if (info.node.outputs.size() > 3 && info.node.outputs[3] != graph::kNoValue) {
    return make_error(StatusCode::kNotImplemented, info.node.describe(), ": the qk output is not supported");
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<MultiHeadAttentionKernel>(info.node, heads, scale, filter, unidirectional != 0));
}

const KernelDef kContribMhaKernels[] = {
    {"MultiHeadAttention", graph::kMsDomain, 1, kLatestOpset, type_mask(HalfOrFloat{}), 0,
     create_multi_head_attention},
};

}  // namespace

std::span<const KernelDef> contrib_mha_kernels() { return kContribMhaKernels; }

}  // namespace nxrt::cpu
