// Attention (opsets 23-25), with RotaryEmbedding, TensorScatter, SwiGLU, LinearAttention and FlexAttention
// (ai.onnx.preview) registered from their own attention_*.cpp files.
// Attention follows the op's function body stage by stage: Q and K are each scaled by sqrt(scale) in T1, QK^T,
// optional softcap, plus the additive bias (attn_mask, causal frontier, sliding window, key padding), softmax
// in `softmax_precision`, then P*V. For f16/bf16 every stage computes in float and rounds to T1, as the
// reference's per-op casts do. A query row whose bias is -inf everywhere yields zero probabilities.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ep/cpu/attention/attention_common.h"

namespace nxrt::cpu {

namespace {

using namespace attention_detail;

struct AttentionAttrs {
  bool causal = false;
  int64_t q_heads = 0;   // 0: not given
  int64_t kv_heads = 0;  // 0: not given
  int64_t qk_mode = 0;
  float scale = 0.0f;  // 0: 1/sqrt(head_size)
  float softcap = 0.0f;
  DataType softmax_type = DataType::kUndefined;  // kUndefined: the type of Q
  int64_t left_window = -1;
  int64_t right_window = -1;
};

struct AttentionDims {
  bool three_d = false;
  int64_t batch = 0, q_heads = 0, kv_heads = 0;
  int64_t q_len = 0, kv_len = 0, past_len = 0, total_len = 0;
  int64_t head = 0, v_head = 0;
  // attn_mask viewed as [mask_dims[0..2], mask_len], with 0 strides on broadcast axes.
  bool has_mask = false;
  int64_t mask_len = 0;
  int64_t mask_strides[3] = {0, 0, 0};
};

constexpr int kQ = 0, kK = 1, kV = 2, kMask = 3, kPastKey = 4, kPastValue = 5, kNonpad = 6;

class AttentionKernel final : public Kernel {
 public:
  AttentionKernel(std::string description, AttentionAttrs attrs)
      : description_(std::move(description)), attrs_(attrs) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const AttentionDims d, resolve(inputs));
    const DataType type = inputs[kQ]->dtype();
    outputs.assign(4, OutputDesc{type, {}});
    if (d.three_d) {
      outputs[0].shape = Shape{d.batch, d.q_len, d.q_heads * d.v_head};
    } else {
      outputs[0].shape = Shape{d.batch, d.q_heads, d.q_len, d.v_head};
    }
    outputs[1].shape = Shape{d.batch, d.kv_heads, d.total_len, d.head};
    outputs[2] = OutputDesc{inputs[kV]->dtype(), Shape{d.batch, d.kv_heads, d.total_len, d.v_head}};
    outputs[3].shape = Shape{d.batch, d.q_heads, d.q_len, d.total_len};
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const AttentionDims d, resolve(inputs));
    visit_dtype<FloatTypes>(inputs[kQ]->dtype(), [&]<class T>() {
      const DataType softmax_type =
          attrs_.softmax_type == DataType::kUndefined ? data_type_of<T> : attrs_.softmax_type;
      visit_dtype<FloatTypes>(softmax_type, [&]<class P>() { run_typed<T, P>(d, inputs, outputs, pool); });
    });
    return Status::ok();
  }

 private:
  Status bad(const char* what, int64_t value) const {
    return make_error(StatusCode::kInvalidArgument, description_, ": ", what, " (got ", value, ")");
  }

  Expected<AttentionDims> resolve(KernelInputs inputs) const {
    TRY(require_inputs(inputs, 3, description_));
    const Tensor& q = *inputs[kQ];
    const Tensor& k = *inputs[kK];
    const Tensor& v = *inputs[kV];
    if (!type_list_contains(FloatTypes{}, q.dtype()) || k.dtype() != q.dtype() || v.dtype() != q.dtype()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": Q, K and V must share one float type, got ",
                        data_type_name(q.dtype()), ", ", data_type_name(k.dtype()), ", ", data_type_name(v.dtype()));
    }
    if (q.rank() != k.rank() || q.rank() != v.rank() || (q.rank() != 3 && q.rank() != 4)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": Q, K, V must all be 3-D or all 4-D");
    }
    AttentionDims d;
    d.three_d = q.rank() == 3;
    d.batch = q.shape()[0];
    if (k.shape()[0] != d.batch || v.shape()[0] != d.batch) return bad("K and V batch must match Q's", k.shape()[0]);
    if (d.three_d) {
      if (attrs_.q_heads <= 0 || attrs_.kv_heads <= 0) {
        return make_error(StatusCode::kInvalidArgument, description_,
                          ": 3-D inputs need positive q_num_heads and kv_num_heads attributes");
      }
      d.q_heads = attrs_.q_heads;
      d.kv_heads = attrs_.kv_heads;
      d.q_len = q.shape()[1];
      d.kv_len = k.shape()[1];
      if (q.shape()[2] % d.q_heads != 0) return bad("Q hidden size is not a multiple of q_num_heads", q.shape()[2]);
      if (k.shape()[2] % d.kv_heads != 0) return bad("K hidden size is not a multiple of kv_num_heads", k.shape()[2]);
      if (v.shape()[2] % d.kv_heads != 0) return bad("V hidden size is not a multiple of kv_num_heads", v.shape()[2]);
      d.head = q.shape()[2] / d.q_heads;
      if (k.shape()[2] / d.kv_heads != d.head) return bad("K head size differs from Q's", k.shape()[2] / d.kv_heads);
      d.v_head = v.shape()[2] / d.kv_heads;
      if (v.shape()[1] != d.kv_len) return bad("V sequence length differs from K's", v.shape()[1]);
    } else {
      d.q_heads = q.shape()[1];
      d.kv_heads = k.shape()[1];
      d.q_len = q.shape()[2];
      d.kv_len = k.shape()[2];
      d.head = q.shape()[3];
      d.v_head = v.shape()[3];
      if (k.shape()[3] != d.head) return bad("K head size differs from Q's", k.shape()[3]);
      if (v.shape()[1] != d.kv_heads) return bad("V head count differs from K's", v.shape()[1]);
      if (v.shape()[2] != d.kv_len) return bad("V sequence length differs from K's", v.shape()[2]);
    }
    if (d.kv_heads <= 0 || d.q_heads % d.kv_heads != 0) {
      return bad("q_num_heads must be a multiple of kv_num_heads", d.kv_heads);
    }
    const Tensor* past_key = optional_input(inputs, kPastKey);
    const Tensor* past_value = optional_input(inputs, kPastValue);
    if ((past_key == nullptr) != (past_value == nullptr)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": past_key and past_value go together");
    }
    if (past_key != nullptr) {
      if (past_key->dtype() != q.dtype() || past_value->dtype() != v.dtype() || past_key->rank() != 4 ||
          past_value->rank() != 4) {
        return make_error(StatusCode::kInvalidArgument, description_, ": past_key/past_value must be 4-D of Q's type");
      }
      const Shape& pk = past_key->shape();
      const Shape& pv = past_value->shape();
      d.past_len = pk[2];
      if (pk[0] != d.batch || pk[1] != d.kv_heads || pk[3] != d.head) return bad("past_key shape mismatch", pk[3]);
      if (pv[0] != d.batch || pv[1] != d.kv_heads || pv[2] != d.past_len || pv[3] != d.v_head) {
        return bad("past_value shape mismatch", pv[2]);
      }
    }
    d.total_len = d.past_len + d.kv_len;
    if (const Tensor* nonpad = optional_input(inputs, kNonpad)) {
      if (past_key != nullptr) {
        return make_error(StatusCode::kInvalidArgument, description_,
                          ": nonpad_kv_seqlen cannot be combined with past_key/past_value");
      }
      if (nonpad->dtype() != DataType::kInt64 || nonpad->numel() != d.batch) {
        return bad("nonpad_kv_seqlen must be int64 of shape (batch_size,); element count", nonpad->numel());
      }
      for (int64_t b = 0; b < d.batch; ++b) {
        const int64_t length = nonpad->data<int64_t>()[b];
        if (length < 0 || length > d.total_len) return bad("nonpad_kv_seqlen value outside [0, kv length]", length);
      }
    }
    if (const Tensor* mask = optional_input(inputs, kMask)) {
      const size_t rank = mask->rank();
      if (rank < 1 || rank > 4) return bad("attn_mask rank must be 1..4", static_cast<int64_t>(rank));
      const int64_t full[3] = {d.batch, d.q_heads, d.q_len};
      int64_t dims[4] = {1, 1, 1, 1};
      for (size_t i = 0; i < rank; ++i) dims[4 - rank + i] = mask->shape()[i];
      d.mask_len = dims[3];
      if (d.mask_len > d.total_len) return bad("attn_mask last dimension exceeds total sequence length", d.mask_len);
      int64_t stride = d.mask_len;
      for (int axis = 2; axis >= 0; --axis) {
        if (dims[axis] != 1 && dims[axis] != full[axis]) return bad("attn_mask does not broadcast", dims[axis]);
        d.mask_strides[axis] = dims[axis] == 1 ? 0 : stride;
        stride *= dims[axis];
      }
      d.has_mask = true;
    }
    return d;
  }

  template <class T, class P>
  void run_typed(const AttentionDims& d, KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const {
    using Acc = AccOf<T>;
    constexpr Acc kNegInf = -std::numeric_limits<Acc>::infinity();
    // The function body computes the scale factor in float (Cast(head_size, float), Sqrt, Div, Sqrt) and only
    // then casts sqrt(scale) to T1, for double inputs too.
    const float scale = attrs_.scale != 0.0f ? attrs_.scale : 1.0f / std::sqrt(static_cast<float>(d.head));
    const Acc sqrt_scale = round_as<T>(static_cast<Acc>(std::sqrt(scale)));
    const int64_t total = d.total_len;

    // K (scaled) and V for all kv heads, past then new, as [batch, kv_heads, total, head].
    std::vector<Acc> keys(static_cast<size_t>(d.batch * d.kv_heads * total * d.head));
    std::vector<Acc> values(static_cast<size_t>(d.batch * d.kv_heads * total * d.v_head));
    const auto gather = [&](int index, int past_index, int64_t width, bool scaled, std::vector<Acc>& dst,
                            T* present) {
      const T* src = inputs[index]->data<T>();
      const T* past = d.past_len > 0 ? inputs[past_index]->data<T>() : nullptr;
      for (int64_t b = 0; b < d.batch; ++b) {
        for (int64_t h = 0; h < d.kv_heads; ++h) {
          for (int64_t s = 0; s < total; ++s) {
            const T* row = nullptr;
            if (s < d.past_len) {
              row = past + ((b * d.kv_heads + h) * d.past_len + s) * width;
            } else if (d.three_d) {
              row = src + (b * d.kv_len + (s - d.past_len)) * d.kv_heads * width + h * width;
            } else {
              row = src + ((b * d.kv_heads + h) * d.kv_len + (s - d.past_len)) * width;
            }
            const int64_t at = ((b * d.kv_heads + h) * total + s) * width;
            for (int64_t e = 0; e < width; ++e) {
              const Acc x = to_acc(row[e]);
              dst[static_cast<size_t>(at + e)] = scaled ? round_as<T>(x * sqrt_scale) : x;
              if (present != nullptr) present[at + e] = row[e];
            }
          }
        }
      }
    };
    gather(kK, kPastKey, d.head, true, keys, outputs.size() > 1 ? outputs[1].data<T>() : nullptr);
    gather(kV, kPastValue, d.v_head, false, values, outputs.size() > 2 ? outputs[2].data<T>() : nullptr);

    std::vector<Acc> mask;
    if (d.has_mask) {
      const Tensor& m = *inputs[kMask];
      mask.resize(static_cast<size_t>(m.numel()));
      visit_dtype<AllPodTypes>(m.dtype(), [&]<class M>() {
        const M* src = m.data<M>();
        for (size_t i = 0; i < mask.size(); ++i) {
          if constexpr (std::is_same_v<M, bool>) {
            mask[i] = src[i] ? Acc{0} : kNegInf;
          } else if constexpr (std::is_same_v<M, Float16> || std::is_same_v<M, BFloat16>) {
            mask[i] = static_cast<Acc>(static_cast<float>(src[i]));
          } else {
            mask[i] = static_cast<Acc>(src[i]);
          }
        }
      });
    }
    const int64_t* nonpad = optional_input(inputs, kNonpad) ? inputs[kNonpad]->data<int64_t>() : nullptr;
    const T* q_data = inputs[kQ]->data<T>();
    T* y_data = outputs[0].data<T>();
    T* qk_out = outputs.size() > 3 ? outputs[3].data<T>() : nullptr;
    const int64_t group = d.q_heads / d.kv_heads;
    const Acc softcap = round_as<T>(static_cast<Acc>(attrs_.softcap));  // SoftcapF = Cast(softcap, to=T1)

    pool.parallel_for(d.batch * d.q_heads, 1, [&](int64_t begin, int64_t end) {
      std::vector<Acc> query(static_cast<size_t>(d.q_len * d.head));
      std::vector<Acc> scores(static_cast<size_t>(d.q_len * total));
      std::vector<Acc> bias(static_cast<size_t>(total));
      std::vector<Acc> out(static_cast<size_t>(d.q_len * d.v_head));
      for (int64_t item = begin; item < end; ++item) {
        const int64_t b = item / d.q_heads;
        const int64_t h = item % d.q_heads;
        const int64_t kv_head = h / group;
        for (int64_t i = 0; i < d.q_len; ++i) {
          const T* row = d.three_d ? q_data + (b * d.q_len + i) * d.q_heads * d.head + h * d.head
                                   : q_data + ((b * d.q_heads + h) * d.q_len + i) * d.head;
          for (int64_t e = 0; e < d.head; ++e) query[i * d.head + e] = round_as<T>(to_acc(row[e]) * sqrt_scale);
        }
        const Acc* k_head = keys.data() + (b * d.kv_heads + kv_head) * total * d.head;
        const Acc* v_head = values.data() + (b * d.kv_heads + kv_head) * total * d.v_head;
        if (d.q_len > 0 && total > 0) {
          if (d.head > 0) {
            GemmArgs args{false, true, d.q_len, total, d.head, d.head, d.head, total};
            gemm(args, query.data(), k_head, scores.data(), pool);
          } else {
            std::fill(scores.begin(), scores.end(), Acc{0});
          }
        }
        const int64_t offset = d.past_len > 0 ? d.past_len : (nonpad != nullptr ? nonpad[b] - d.q_len : 0);
        T* qk_rows = qk_out != nullptr ? qk_out + item * d.q_len * total : nullptr;
        for (int64_t i = 0; i < d.q_len; ++i) {
          Acc* s = scores.data() + i * total;
          bool all_masked = true;
          // Mode 0 is the raw QK^T ("the output of qk matmul"; Identity(QKAttnWeight) in the function body),
          // mode 1 the same after softcap.
          for (int64_t j = 0; j < total; ++j) {
            Acc v = round_as<T>(s[j]);
            if (qk_rows != nullptr && attrs_.qk_mode == 0) qk_rows[i * total + j] = from_acc<T>(v);
            if (softcap > 0) v = round_as<T>(round_as<T>(std::tanh(round_as<T>(v / softcap))) * softcap);
            s[j] = v;
            bias[j] = bias_at(d, mask, b, h, i, j, offset, nonpad);
            all_masked = all_masked && bias[j] == kNegInf;
          }
          if (qk_rows != nullptr && attrs_.qk_mode == 1) {
            for (int64_t j = 0; j < total; ++j) qk_rows[i * total + j] = from_acc<T>(s[j]);
          }
          for (int64_t j = 0; j < total; ++j) s[j] = round_as<T>(s[j] + bias[j]);
          if (qk_rows != nullptr && attrs_.qk_mode == 2) {
            for (int64_t j = 0; j < total; ++j) qk_rows[i * total + j] = from_acc<T>(s[j]);
          }
          if (all_masked) {
            std::fill(s, s + total, Acc{0});
          } else {
            softmax_row<T, P>(s, total);
          }
          if (qk_rows != nullptr && attrs_.qk_mode == 3) {
            for (int64_t j = 0; j < total; ++j) qk_rows[i * total + j] = from_acc<T>(s[j]);
          }
        }
        if (d.q_len > 0 && d.v_head > 0) {
          if (total > 0) {
            GemmArgs args{false, false, d.q_len, d.v_head, total, total, d.v_head, d.v_head};
            gemm(args, scores.data(), v_head, out.data(), pool);
          } else {
            std::fill(out.begin(), out.end(), Acc{0});
          }
        }
        for (int64_t i = 0; i < d.q_len; ++i) {
          T* row = d.three_d ? y_data + (b * d.q_len + i) * d.q_heads * d.v_head + h * d.v_head
                             : y_data + ((b * d.q_heads + h) * d.q_len + i) * d.v_head;
          for (int64_t e = 0; e < d.v_head; ++e) row[e] = from_acc<T>(out[i * d.v_head + e]);
        }
      }
    });
  }

  template <class Acc>
  Acc bias_at(const AttentionDims& d, const std::vector<Acc>& mask, int64_t b, int64_t h, int64_t i, int64_t j,
              int64_t offset, const int64_t* nonpad) const {
    // The spec composes the bias additively (the function body's Add): the attn_mask value (bool: 0 or -inf;
    // -inf past a short mask's end) plus -inf where the causal frontier, the sliding window or nonpad_kv_seqlen
    // excludes key j. So a float mask's NaN or +inf at an excluded key gives NaN (NaN + -inf), not -inf.
    constexpr Acc kNegInf = -std::numeric_limits<Acc>::infinity();
    const int64_t position = offset + i;
    Acc value{0};
    if (d.has_mask) {
      value = j >= d.mask_len
                  ? kNegInf
                  : mask[static_cast<size_t>(b * d.mask_strides[0] + h * d.mask_strides[1] + i * d.mask_strides[2] + j)];
    }
    const bool excluded = (attrs_.causal && j > position) ||
                          (attrs_.left_window >= 0 && position - j > attrs_.left_window) ||
                          (attrs_.right_window >= 0 && j - position > attrs_.right_window) ||
                          (nonpad != nullptr && j >= nonpad[b]);
    return excluded ? value + kNegInf : value;
  }

  // In-place softmax of one row computed in precision P, result rounded to T.
  template <class T, class P, class Acc>
  static void softmax_row(Acc* x, int64_t n) {
    using C = AccOf<P>;
    C m = -std::numeric_limits<C>::infinity();
    for (int64_t j = 0; j < n; ++j) m = std::max(m, round_as<P>(static_cast<C>(x[j])));
    if (m == -std::numeric_limits<C>::infinity()) m = C{0};
    C sum{0};
    for (int64_t j = 0; j < n; ++j) {
      const C e = round_as<P>(std::exp(round_as<P>(round_as<P>(static_cast<C>(x[j])) - m)));
      x[j] = static_cast<Acc>(e);
      // numpy sums float16 in float but bfloat16 (ml_dtypes) one rounded addition at a time.
      sum = std::is_same_v<P, BFloat16> ? round_as<P>(sum + e) : sum + e;
    }
    sum = round_as<P>(sum);
    if (sum == C{0}) sum = C{1};
    for (int64_t j = 0; j < n; ++j) {
      x[j] = round_as<T>(static_cast<Acc>(round_as<P>(static_cast<C>(x[j]) / sum)));
    }
  }

  std::string description_;
  AttentionAttrs attrs_;
};

Expected<std::unique_ptr<Kernel>> create_attention(const KernelInfo& info) {
  const graph::Node& node = info.node;
  AttentionAttrs a;
  TRY_ASSIGN(const int64_t causal, node.attr_int("is_causal", 0));
  a.causal = causal != 0;
  TRY_ASSIGN(a.q_heads, node.attr_int("q_num_heads", 0));
  TRY_ASSIGN(a.kv_heads, node.attr_int("kv_num_heads", 0));
  TRY_ASSIGN(a.qk_mode, node.attr_int("qk_matmul_output_mode", 0));
  TRY_ASSIGN(a.scale, node.attr_float("scale", 0.0f));
  TRY_ASSIGN(a.softcap, node.attr_float("softcap", 0.0f));
  TRY_ASSIGN(a.left_window, node.attr_int("left_window_size", -1));
  TRY_ASSIGN(a.right_window, node.attr_int("right_window_size", -1));
  TRY_ASSIGN(const int64_t precision, node.attr_int("softmax_precision", 0));
  if (a.qk_mode < 0 || a.qk_mode > 3) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": qk_matmul_output_mode must be 0..3, got ",
                      a.qk_mode);
  }
  if (a.left_window < -1 || a.right_window < -1) {
    return make_error(StatusCode::kInvalidGraph, node.describe(),
                      ": left_window_size/right_window_size must be -1 or nonnegative");
  }
  if (a.q_heads < 0 || a.kv_heads < 0) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": q_num_heads/kv_num_heads must be positive");
  }
  switch (precision) {
    case 0: break;
    case 1: a.softmax_type = DataType::kFloat32; break;
    case 10: a.softmax_type = DataType::kFloat16; break;
    case 11: a.softmax_type = DataType::kFloat64; break;
    case 16: a.softmax_type = DataType::kBFloat16; break;
    default:
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": softmax_precision ", precision,
                        " is not one of 1, 10, 11, 16");
  }
  return std::unique_ptr<Kernel>(std::make_unique<AttentionKernel>(node.describe(), a));
}

constexpr DataTypeMask kFloats = type_mask(FloatTypes{});
constexpr DataTypeMask kRotaryTypes = type_mask(TypeList<float, Float16, BFloat16>{});

const KernelDef kAttentionKernels[] = {
    {"Attention", graph::kOnnxDomain, 23, kLatestOpset, kFloats, 0, create_attention},
    {"RotaryEmbedding", graph::kOnnxDomain, 23, kLatestOpset, kRotaryTypes, 0, create_rotary_embedding},
    {"TensorScatter", graph::kOnnxDomain, 24, kLatestOpset, kAnyType, 0, create_tensor_scatter},
    {"SwiGLU", graph::kOnnxDomain, 28, kLatestOpset, kFloats, 0, create_swiglu},
    {"LinearAttention", graph::kOnnxDomain, 27, kLatestOpset, kRotaryTypes, 0, create_linear_attention},
    {"FlexAttention", "ai.onnx.preview", 1, kLatestOpset, kFloats, 0, create_flex_attention},
};

}  // namespace

std::span<const KernelDef> attention_kernels() { return kAttentionKernels; }

}  // namespace nxrt::cpu
