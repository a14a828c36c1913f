// LinearAttention (27): the token-by-token recurrence over a (d_k x d_v) state per (batch, kv head), in float:
//   gated rules first decay the state by exp(decay_t) (per key row, or one value per head),
//   delta rules replace v_t by beta_t * (v_t - S^T k_t), then S += k_t v_t^T and o_t = scale * q_t^T S for each
//   of the kv head's query heads. Inputs are packed [B, T, H*D]; the state is [B, H_kv, d_k, d_v] of type S.
#include <cmath>
#include <string>
#include <vector>

#include "ep/cpu/attention/attention_common.h"

namespace nxrt::cpu::attention_detail {

namespace {

enum class UpdateRule { kLinear, kGated, kDelta, kGatedDelta };

constexpr int kQuery = 0, kKey = 1, kValue = 2, kPastState = 3, kDecay = 4, kBeta = 5;

struct LinearDims {
  int64_t batch = 0, steps = 0, d_k = 0, d_v = 0;
  bool per_head_decay = false;
  bool shared_beta = false;  // beta last dim is 1
};

float load_float(const Tensor& t, int64_t i) {
  float v = 0;
  visit_dtype<TypeList<float, Float16, BFloat16>>(t.dtype(), [&]<class T>() { v = static_cast<float>(t.data<T>()[i]); });
  return v;
}

class LinearAttentionKernel final : public Kernel {
 public:
  LinearAttentionKernel(std::string description, int64_t q_heads, int64_t kv_heads, float scale, UpdateRule rule)
      : description_(std::move(description)), q_heads_(q_heads), kv_heads_(kv_heads), scale_(scale), rule_(rule) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const LinearDims d, resolve(inputs));
    const DataType type = inputs[kQuery]->dtype();
    const Tensor* past = optional_input(inputs, kPastState);
    outputs.assign(2, OutputDesc{type, Shape{d.batch, d.steps, q_heads_ * d.d_v}});
    outputs[1] = OutputDesc{past != nullptr ? past->dtype() : type, Shape{d.batch, kv_heads_, d.d_k, d.d_v}};
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const LinearDims d, resolve(inputs));
    const bool gated = rule_ == UpdateRule::kGated || rule_ == UpdateRule::kGatedDelta;
    const bool delta = rule_ == UpdateRule::kDelta || rule_ == UpdateRule::kGatedDelta;
    const Tensor& q = *inputs[kQuery];
    const Tensor& k = *inputs[kKey];
    const Tensor& v = *inputs[kValue];
    const Tensor* past = optional_input(inputs, kPastState);
    const Tensor* decay = optional_input(inputs, kDecay);
    const Tensor* beta = optional_input(inputs, kBeta);
    const int64_t group = q_heads_ / kv_heads_;
    const float scale = scale_ != 0.0f ? scale_ : 1.0f / std::sqrt(static_cast<float>(d.d_k));
    std::vector<float> out(static_cast<size_t>(d.batch * d.steps * q_heads_ * d.d_v));
    std::vector<float> states(static_cast<size_t>(d.batch * kv_heads_ * d.d_k * d.d_v), 0.0f);
    if (past != nullptr) {
      for (int64_t i = 0; i < past->numel(); ++i) states[static_cast<size_t>(i)] = load_float(*past, i);
    }
    pool.parallel_for(d.batch * kv_heads_, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> value(static_cast<size_t>(d.d_v));
      for (int64_t item = begin; item < end; ++item) {
        const int64_t b = item / kv_heads_;
        const int64_t h = item % kv_heads_;
        float* state = states.data() + item * d.d_k * d.d_v;
        for (int64_t t = 0; t < d.steps; ++t) {
          const int64_t k_at = (b * d.steps + t) * kv_heads_ * d.d_k + h * d.d_k;
          const int64_t v_at = (b * d.steps + t) * kv_heads_ * d.d_v + h * d.d_v;
          if (gated) {
            for (int64_t r = 0; r < d.d_k; ++r) {
              const int64_t g_at = d.per_head_decay ? (b * d.steps + t) * kv_heads_ + h : k_at + r;
              const float factor = std::exp(load_float(*decay, g_at));
              for (int64_t c = 0; c < d.d_v; ++c) state[r * d.d_v + c] *= factor;
            }
          }
          for (int64_t c = 0; c < d.d_v; ++c) value[c] = load_float(v, v_at + c);
          if (delta) {
            const float rate = load_float(*beta, (b * d.steps + t) * (d.shared_beta ? 1 : kv_heads_) +
                                                     (d.shared_beta ? 0 : h));
            for (int64_t c = 0; c < d.d_v; ++c) {
              float retrieved = 0;
              for (int64_t r = 0; r < d.d_k; ++r) retrieved += state[r * d.d_v + c] * load_float(k, k_at + r);
              value[c] = rate * (value[c] - retrieved);
            }
          }
          for (int64_t r = 0; r < d.d_k; ++r) {
            const float kr = load_float(k, k_at + r);
            for (int64_t c = 0; c < d.d_v; ++c) state[r * d.d_v + c] += kr * value[c];
          }
          for (int64_t g = 0; g < group; ++g) {
            const int64_t qh = h * group + g;
            const int64_t q_at = (b * d.steps + t) * q_heads_ * d.d_k + qh * d.d_k;
            float* o = out.data() + (b * d.steps + t) * q_heads_ * d.d_v + qh * d.d_v;
            for (int64_t c = 0; c < d.d_v; ++c) o[c] = 0;
            for (int64_t r = 0; r < d.d_k; ++r) {
              const float qr = load_float(q, q_at + r);
              for (int64_t c = 0; c < d.d_v; ++c) o[c] += qr * state[r * d.d_v + c];
            }
            for (int64_t c = 0; c < d.d_v; ++c) o[c] *= scale;
          }
        }
      }
    });
    const auto store = [](const std::vector<float>& src, Tensor& dst) {
      visit_dtype<TypeList<float, Float16, BFloat16>>(dst.dtype(), [&]<class T>() {
        T* p = dst.data<T>();
        for (size_t i = 0; i < src.size(); ++i) p[i] = T(src[i]);
      });
    };
    store(out, outputs[0]);
    if (outputs.size() > 1) store(states, outputs[1]);
    return Status::ok();
  }

 private:
  Status bad(const std::string& what) const {
    return make_error(StatusCode::kInvalidArgument, description_, ": ", what);
  }

  Expected<LinearDims> resolve(KernelInputs inputs) const {
    for (int i : {kQuery, kKey, kValue}) {
      const Tensor* t = optional_input(inputs, static_cast<size_t>(i));
      if (t == nullptr || t->rank() != 3) return bad("query, key and value must be 3-D [B, T, H*D]");
    }
    const Tensor& q = *inputs[kQuery];
    const Tensor& k = *inputs[kKey];
    const Tensor& v = *inputs[kValue];
    const DataType type = q.dtype();
    if (!type_list_contains(TypeList<float, Float16, BFloat16>{}, type) || k.dtype() != type || v.dtype() != type) {
      return bad("query, key and value must share one of float, float16, bfloat16");
    }
    LinearDims d;
    d.batch = q.shape()[0];
    d.steps = q.shape()[1];
    if (q.shape()[2] % q_heads_ != 0 || k.shape()[2] % kv_heads_ != 0 || v.shape()[2] % kv_heads_ != 0) {
      return bad("hidden sizes must be multiples of the head counts");
    }
    d.d_k = q.shape()[2] / q_heads_;
    d.d_v = v.shape()[2] / kv_heads_;
    const Shape key_shape{d.batch, d.steps, kv_heads_ * d.d_k};
    if (k.shape() != key_shape || v.shape()[0] != d.batch || v.shape()[1] != d.steps) {
      return bad("key/value shapes " + shape_to_string(k.shape()) + ", " + shape_to_string(v.shape()) +
                 " do not match query " + shape_to_string(q.shape()));
    }
    const bool gated = rule_ == UpdateRule::kGated || rule_ == UpdateRule::kGatedDelta;
    const bool delta = rule_ == UpdateRule::kDelta || rule_ == UpdateRule::kGatedDelta;
    const Tensor* decay = optional_input(inputs, kDecay);
    const Tensor* beta = optional_input(inputs, kBeta);
    if (gated != (decay != nullptr)) return bad(gated ? "this update_rule needs decay" : "this update_rule forbids decay");
    if (delta != (beta != nullptr)) return bad(delta ? "this update_rule needs beta" : "this update_rule forbids beta");
    if (decay != nullptr) {
      if (decay->dtype() != type || decay->rank() != 3 || decay->shape()[0] != d.batch || decay->shape()[1] != d.steps ||
          (decay->shape()[2] != kv_heads_ && decay->shape()[2] != kv_heads_ * d.d_k)) {
        return bad("decay must be [B, T, kv_num_heads] or [B, T, kv_num_heads * d_k], got " +
                   shape_to_string(decay->shape()));
      }
      d.per_head_decay = decay->shape()[2] == kv_heads_;
    }
    if (beta != nullptr) {
      if (beta->dtype() != type || beta->rank() != 3 || beta->shape()[0] != d.batch || beta->shape()[1] != d.steps ||
          (beta->shape()[2] != kv_heads_ && beta->shape()[2] != 1)) {
        return bad("beta must be [B, T, kv_num_heads] or [B, T, 1], got " + shape_to_string(beta->shape()));
      }
      d.shared_beta = beta->shape()[2] == 1 && kv_heads_ != 1;
    }
    if (const Tensor* past = optional_input(inputs, kPastState)) {
      if (!type_list_contains(TypeList<float, Float16, BFloat16>{}, past->dtype()) ||
          past->shape() != Shape{d.batch, kv_heads_, d.d_k, d.d_v}) {
        return bad("past_state must be float/float16/bfloat16 of shape [B, kv_num_heads, d_k, d_v], got " +
                   shape_to_string(past->shape()));
      }
    }
    return d;
  }

  std::string description_;
  int64_t q_heads_;
  int64_t kv_heads_;
  float scale_;
  UpdateRule rule_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> create_linear_attention(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const int64_t q_heads, node.attr_int("q_num_heads", 0));
  TRY_ASSIGN(const int64_t kv_heads, node.attr_int("kv_num_heads", 0));
  TRY_ASSIGN(const float scale, node.attr_float("scale", 0.0f));
  TRY_ASSIGN(const std::string rule_name, node.attr_string("update_rule", "gated_delta"));
  if (q_heads <= 0 || kv_heads <= 0 || q_heads % kv_heads != 0) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": q_num_heads (", q_heads,
                      ") must be a positive multiple of kv_num_heads (", kv_heads, ")");
  }
  UpdateRule rule = UpdateRule::kGatedDelta;
  if (rule_name == "linear") {
    rule = UpdateRule::kLinear;
  } else if (rule_name == "gated") {
    rule = UpdateRule::kGated;
  } else if (rule_name == "delta") {
    rule = UpdateRule::kDelta;
  } else if (rule_name != "gated_delta") {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": unknown update_rule '", rule_name, "'");
  }
  return std::unique_ptr<Kernel>(std::make_unique<LinearAttentionKernel>(node.describe(), q_heads, kv_heads, scale, rule));
}

}  // namespace nxrt::cpu::attention_detail
