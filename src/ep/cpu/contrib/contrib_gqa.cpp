// com.microsoft GroupQueryAttention (opset 1), float32, float16 and bfloat16, as ONNX Runtime's contrib schema
// defines it for an unquantized cache that grows (not window-sized):
//   query [B, S, N * H] (or packed Q, K, V [B, S, (N + 2 Nk) * H] without key and value), key / value
//   [B, S, Nk * H], past_key / past_value [B, Nk, P_buffer, H], seqlens_k (int32 [B]: T_b - 1, the tokens in
//   entry b's cache after this step), total_sequence_length (int32 scalar, at least every T_b and S), cos_cache /
//   sin_cache [max_position, R / 2] (do_rotary), position_ids (int64 [B, S]), attention_bias [B | 1, N | 1, S, C],
//   head_sink [N], q_norm_weight / k_norm_weight [H], query_seqlens (int32 [B])
//   -> output [B, S, N * H], present_key / present_value [B, Nk, C, H] with C = max(total_sequence_length,
//   P_buffer).
// Entry b has Q_b = query_seqlens[b] (default min(S, T_b)) valid query rows and P_b = T_b - Q_b cached tokens;
// query row s sits at absolute position P_b + s. The present caches hold the past's first P_b rows, then the Q_b
// new key / value rows (rows from T_b on are zero); output rows from Q_b on are zero. Query head n reads key /
// value head n / (N / Nk). Per head: optional RMS norm of Q and K rows (q_norm_weight, k_norm_weight), rotary
// embedding of Q and the new K at their positions (position_ids, else P_b + s; rotary_interleaved), then
//   scores = scale * Q K^T (scale 0: 1 / sqrt(H)), softcap * tanh(scores / softcap) when softcap > 0,
//   + attention_bias, keys after the query's position hidden (causal) and keys at or before position - W hidden
//   (local_window_size W > 0), softmax whose denominator also counts exp(sink) (head_sink[n], or 0 with
//   smooth_softmax), times V.
// Float32 caches are built and read in the present outputs themselves. When present_key / present_value are the
// past_key / past_value buffers (past_present_share_buffer: the caller binds one buffer to both, of capacity
// C = P_buffer), the past rows are not copied and only the Q_b new rows are written: rows from T_b on keep
// whatever the buffer holds.
// Quantized caches (k_scale / v_scale, a cache type other than T), sliding_window_cache and qk_output are
// NOT_IMPLEMENTED. Everything computes in float; half-type outputs and caches are rounded once.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/scratch_space.h"
#include "ep/cpu/contrib/contrib_attention_common.h"
#include "ep/cpu/elementwise/unary_common.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/gemm.h"
#include "ep/cpu/microkernels/vector_math.h"
#include "ep/cpu/run_limits.h"

namespace nxrt::cpu {

namespace {

constexpr float kHidden = -std::numeric_limits<float>::infinity();

enum Input : size_t {
  kQuery, kKey, kValue, kPastKey, kPastValue, kSeqlensK, kTotalLength, kCos, kSin, kPositionIds, kAttentionBias,
  kHeadSink, kKScale, kVScale, kQNorm, kKNorm, kQuerySeqlens,
};

template <class T>
float as_float(T x) {
  return static_cast<float>(x);
}

struct GqaConfig {
  int64_t heads = 0, kv_heads = 0, local_window = -1;
  float scale = 0.0f, softcap = 0.0f, q_norm_epsilon = 1e-6f, k_norm_epsilon = 1e-6f;
  bool causal = true, rotary = false, interleaved = false, smooth_softmax = false;
};

struct GqaDims {
  int64_t b = 0, s = 0, head = 0, capacity = 0, past_buffer = 0, query_stride = 0;
  bool packed = false;
  int64_t bias_batch_stride = 0, bias_head_stride = 0;
  std::vector<int64_t> total, past, valid;  // per entry: T_b, P_b, Q_b
};

class GroupQueryAttentionKernel final : public Kernel {
 public:
  GroupQueryAttentionKernel(const graph::Node& node, GqaConfig config)
      : description_(node.describe()), c_(config), outputs_(std::clamp<size_t>(node.outputs.size(), 1, 3)) {
    for (size_t o = 1; o < outputs_; ++o) present_[o - 1] = node.outputs[o] != graph::kNoValue;
  }

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const GqaDims d, resolve(inputs));
    const DataType dtype = inputs[kQuery]->dtype();
    outputs.assign(outputs_, OutputDesc{dtype, Shape{d.b, d.s, c_.heads * d.head}});
    for (size_t o = 1; o < outputs_; ++o) {
      outputs[o].shape = present_[o - 1] ? Shape{d.b, c_.kv_heads, d.capacity, d.head} : Shape{0};
    }
    return Status::ok();
  }

  // present_key / present_value bound to the past_key / past_value buffers: only the new rows are written.
  int updates_input_in_place(size_t output) const override {
    if (output == 1) return kPastKey;
    if (output == 2) return kPastValue;
    return -1;
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const GqaDims d, resolve(inputs));
    const RunLimits* limits = current_run_limits();
    const int64_t cache = d.b * c_.kv_heads * d.capacity * d.head;
    if (limits != nullptr) {
      TRY(limits->check_bytes(static_cast<size_t>(d.b * d.s * c_.heads * d.head + 2 * cache) * sizeof(float),
                              description_ + " query and key / value caches"));
    }
    visit_dtype<TypeList<float, Float16, BFloat16>>(inputs[kQuery]->dtype(), [&]<class T>() {
      compute<T>(d, inputs, outputs, pool, limits);
    });
    return Status::ok();
  }

 private:
  static constexpr int64_t kCausalBlockRows = 64;

  template <class T>
  void compute(const GqaDims& d, KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool,
               const RunLimits* limits) const {
    const int64_t n_heads = c_.heads, kv = c_.kv_heads, h = d.head;
    const int64_t cache = d.b * kv * d.capacity * h;
    const CachePlacement placement = place_caches<T>(d, inputs, outputs);
    const bool direct = placement != CachePlacement::kScratch;
    float* const q = scratch_floats(ScratchUse::kContribProjection, d.b * d.s * n_heads * h + (direct ? 0 : 2 * cache));
    float* const keys = direct ? outputs[1].data<float>() : q + d.b * d.s * n_heads * h;
    float* const values = direct ? outputs[2].data<float>() : keys + cache;
    fill_queries_and_caches<T>(d, inputs, q, keys, values, placement == CachePlacement::kSharedWithPast, pool);
    normalize_and_rotate<T>(d, inputs, q, keys);
    if (!direct && outputs_ > 1 && present_[0]) contrib_detail::store_cache_floats(keys, outputs[1].data<T>(), cache);
    if (!direct && outputs_ > 2 && present_[1]) contrib_detail::store_cache_floats(values, outputs[2].data<T>(), cache);
    contrib_detail::RowBlocks split = contrib_detail::row_blocks(d.s, d.capacity);
    if (c_.causal && split.rows > kCausalBlockRows) {
      // Causal prompts: shorter blocks leave out more of the hidden keys (below).
      split = {kCausalBlockRows, (d.s + kCausalBlockRows - 1) / kCausalBlockRows};
    }
    const int64_t block = split.rows, blocks = split.blocks;
    // Causal blocks after the first leave out the keys past their last row (below). Their probabilities are 0, and
    // P V is still the IEEE product over all of the entry's keys: where a left-out value row is not finite, the
    // block takes every key, so that 0 * NaN reaches its rows as in one product over all keys.
    std::vector<int64_t> last_nonfinite_row;
    if (c_.causal && blocks > 1) last_nonfinite_row = last_nonfinite_value_rows(d, values, pool);
    const float scale = c_.scale != 0.0f ? c_.scale : 1.0f / std::sqrt(static_cast<float>(h));
    T* const out = outputs[0].data<T>();
    // One (batch entry, query head, row block) of the output.
    const auto attend = [&](int64_t b, int64_t n, int64_t s0, float* scores, float* rows) {
      const int64_t count = std::min(block, d.s - s0);
      const int64_t valid = std::clamp<int64_t>(d.valid[b] - s0, 0, count);
      // Causal: no row of the block sees a key past its last valid row's position, so those keys are left out
      // (their probabilities would be exactly 0) unless one of their value rows is not finite.
      const int64_t kv_head = b * kv + n / (n_heads / kv);
      int64_t t = c_.causal ? std::min(d.total[b], d.past[b] + s0 + valid) : d.total[b];
      if (!last_nonfinite_row.empty() && last_nonfinite_row[static_cast<size_t>(kv_head)] >= t) t = d.total[b];
      if (valid > 0) {
        contrib_detail::attend_rows(
            q + ((b * d.s + s0) * n_heads + n) * h, n_heads * h, keys + kv_head * d.capacity * h,
            values + kv_head * d.capacity * h, valid, t, h, h, scale, scores, rows, h,
            [&](int64_t i, float* row) { finish_scores(d, inputs, b, n, s0 + i, row, t); }, head_sink(inputs, n));
      }
      for (int64_t i = 0; i < count; ++i) {
        T* y = out + ((b * d.s + s0 + i) * n_heads + n) * h;
        if (i < valid) {
          for (int64_t e = 0; e < h; ++e) y[e] = T(rows[i * h + e]);
        } else {
          std::fill_n(y, h, T(0.0f));
        }
      }
    };
    const int64_t group = n_heads / kv;
    if (d.s == 1 && group > 1 && d.b * kv >= pool.num_threads()) {
      // Decode steps: a task takes the query heads of one key / value head, so that its caches come from memory
      // once and stay in this thread's cache for the group's other heads (when there are tasks for every thread).
      pool.parallel_for(d.b * kv, 1, [&](int64_t begin, int64_t end) {
        float* const scores = scratch_floats(ScratchUse::kContribAttention, block * (d.capacity + h));
        for (int64_t task = begin; task < end; ++task) {
          for (int64_t j = 0; j < group; ++j) {
            if (run_should_stop(limits)) return;
            attend(task / kv, (task % kv) * group + j, 0, scores, scores + block * d.capacity);
          }
        }
      });
      return;
    }
    pool.parallel_for(d.b * n_heads * blocks, 1, [&](int64_t begin, int64_t end) {
      float* const scores = scratch_floats(ScratchUse::kContribAttention, block * (d.capacity + h));
      for (int64_t task = begin; task < end; ++task) {
        if (run_should_stop(limits)) return;
        const int64_t bn = task / blocks;
        attend(bn / n_heads, bn % n_heads, (task % blocks) * block, scores, scores + block * d.capacity);
      }
    });
  }

  // For each key / value head (b * kv_heads + head): the index of the last of its entry's d.total[b] value rows that
  // holds a NaN or an infinity, or -1.
  std::vector<int64_t> last_nonfinite_value_rows(const GqaDims& d, const float* values, ThreadPool& pool) const {
    const int64_t kv = c_.kv_heads, h = d.head;
    std::vector<int64_t> last(static_cast<size_t>(d.b * kv), -1);
    pool.parallel_for(d.b * kv, 1, [&](int64_t begin, int64_t end) {
      for (int64_t head = begin; head < end; ++head) {
        const float* v = values + head * d.capacity * h;
        for (int64_t row = d.total[head / kv] - 1; row >= 0; --row) {
          if (!std::all_of(v + row * h, v + (row + 1) * h, [](float x) { return std::isfinite(x); })) {
            last[static_cast<size_t>(head)] = row;
            break;
          }
        }
      }
    });
    return last;
  }

  // Where the float caches are built: in scratch (then rounded into the presents), in the present outputs, or in
  // the present outputs that are the past buffers themselves (same buffers and capacity).
  enum class CachePlacement { kScratch, kPresent, kSharedWithPast };

  template <class T>
  CachePlacement place_caches(const GqaDims& d, KernelInputs inputs, std::span<Tensor> outputs) const {
    if (!std::is_same_v<T, float> || outputs_ < 3 || !present_[0] || !present_[1]) return CachePlacement::kScratch;
    const Tensor* past_key = optional_input(inputs, kPastKey);
    const Tensor* past_value = optional_input(inputs, kPastValue);
    const bool key_shared = past_key != nullptr && past_key->raw_data() == outputs[1].raw_data();
    const bool value_shared = past_value != nullptr && past_value->raw_data() == outputs[2].raw_data();
    if (!key_shared && !value_shared) return CachePlacement::kPresent;
    // A shared buffer of another capacity is read whole into scratch before the presents are written.
    if (key_shared && value_shared && d.capacity == d.past_buffer) return CachePlacement::kSharedWithPast;
    return CachePlacement::kScratch;
  }

  // q [B, S, N, H] from the query rows; keys / values [B, Nk, C, H]: the past's first P_b rows (already there when
  // past_in_place), the new rows, then zeros (left as they are when past_in_place). The (batch, key / value head)
  // caches are filled in parallel: with separate past and present buffers a decode step copies the whole past.
  template <class T>
  void fill_queries_and_caches(const GqaDims& d, KernelInputs inputs, float* q, float* keys, float* values,
                               bool past_in_place, ThreadPool& pool) const {
    const int64_t n_heads = c_.heads, kv = c_.kv_heads, h = d.head;
    const T* query = inputs[kQuery]->data<T>();
    const T* key = d.packed ? query + n_heads * h : inputs[kKey]->data<T>();
    const T* value = d.packed ? query + (n_heads + kv) * h : inputs[kValue]->data<T>();
    const int64_t kv_stride = d.packed ? d.query_stride : kv * h;
    const Tensor* past_key = optional_input(inputs, kPastKey);
    const Tensor* past_value = optional_input(inputs, kPastValue);
    for (int64_t row = 0; row < d.b * d.s; ++row) {
      for (int64_t e = 0; e < n_heads * h; ++e) q[row * n_heads * h + e] = as_float(query[row * d.query_stride + e]);
    }
    // Floats written per (batch, head): the new rows alone when the past is already in place (a decode step then
    // stays on this thread), else the whole capacity.
    const int64_t floats_per_head = 2 * (past_in_place ? d.s : d.capacity) * h;
    pool.parallel_for(d.b * kv, std::max<int64_t>(1, (int64_t{1} << 15) / floats_per_head), [&](int64_t begin,
                                                                                                 int64_t end) {
      for (int64_t head = begin; head < end; ++head) {
        const int64_t b = head / kv, g = head % kv;
        float* k = keys + (b * kv + g) * d.capacity * h;
        float* v = values + (b * kv + g) * d.capacity * h;
        const int64_t past_rows = d.past[b] * h;
        if (!past_in_place) {
          std::fill(k + d.total[b] * h, k + d.capacity * h, 0.0f);
          std::fill(v + d.total[b] * h, v + d.capacity * h, 0.0f);
        }
        if (past_rows > 0 && !past_in_place) {
          const T* pk = past_key->data<T>() + (b * kv + g) * d.past_buffer * h;
          const T* pv = past_value->data<T>() + (b * kv + g) * d.past_buffer * h;
          for (int64_t e = 0; e < past_rows; ++e) k[e] = as_float(pk[e]);
          for (int64_t e = 0; e < past_rows; ++e) v[e] = as_float(pv[e]);
        }
        for (int64_t s = 0; s < d.valid[b]; ++s) {
          const int64_t from = (b * d.s + s) * kv_stride + g * h;
          const int64_t to = (d.past[b] + s) * h;
          for (int64_t e = 0; e < h; ++e) k[to + e] = as_float(key[from + e]);
          for (int64_t e = 0; e < h; ++e) v[to + e] = as_float(value[from + e]);
        }
      }
    });
  }

  // Per-head RMS norm (q_norm_weight / k_norm_weight), then the rotary embedding, of the queries and new keys.
  template <class T>
  void normalize_and_rotate(const GqaDims& d, KernelInputs inputs, float* q, float* keys) const {
    const Tensor* q_norm = optional_input(inputs, kQNorm);
    const Tensor* k_norm = optional_input(inputs, kKNorm);
    const int64_t n_heads = c_.heads, kv = c_.kv_heads, h = d.head;
    const auto rms = [&](float* row, const T* weight, float epsilon) {
      double squares = 0;
      for (int64_t e = 0; e < h; ++e) squares += static_cast<double>(row[e]) * row[e];
      const float inv = static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(h) + epsilon));
      for (int64_t e = 0; e < h; ++e) row[e] = row[e] * inv * as_float(weight[e]);
    };
    const Tensor* cos = optional_input(inputs, kCos);
    const Tensor* positions = optional_input(inputs, kPositionIds);
    for (int64_t b = 0; b < d.b; ++b) {
      for (int64_t s = 0; s < d.valid[b]; ++s) {
        const int64_t position = positions != nullptr ? positions->data<int64_t>()[b * d.s + s] : d.past[b] + s;
        for (int64_t n = 0; n < n_heads; ++n) {
          float* row = q + ((b * d.s + s) * n_heads + n) * h;
          if (q_norm != nullptr) rms(row, q_norm->data<T>(), c_.q_norm_epsilon);
          if (c_.rotary) rotate<T>(inputs, cos, position, row);
        }
        for (int64_t g = 0; g < kv; ++g) {
          float* row = keys + ((b * kv + g) * d.capacity + d.past[b] + s) * h;
          if (k_norm != nullptr) rms(row, k_norm->data<T>(), c_.k_norm_epsilon);
          if (c_.rotary) rotate<T>(inputs, cos, position, row);
        }
      }
    }
  }

  template <class T>
  void rotate(KernelInputs inputs, const Tensor* cos, int64_t position, float* row) const {
    const int64_t half = cos->shape()[1];
    contrib_detail::rotate_head_row(row, cos->data<T>() + position * half, inputs[kSin]->data<T>() + position * half,
                                    half, c_.interleaved);
  }

  // Softcap, attention_bias and the causal and window masks of one row of t scores (attend_rows adds the softmax).
  void finish_scores(const GqaDims& d, KernelInputs inputs, int64_t b, int64_t n, int64_t s, float* row,
                     int64_t t) const {
    if (c_.softcap > 0.0f) {
      for (int64_t j = 0; j < t; ++j) row[j] /= c_.softcap;
      vector_tanh(row, row, t);
      for (int64_t j = 0; j < t; ++j) row[j] *= c_.softcap;
    }
    if (const Tensor* bias = optional_input(inputs, kAttentionBias)) {
      const int64_t at = b * d.bias_batch_stride + n * d.bias_head_stride + s * d.capacity;
      visit_dtype<TypeList<float, Float16, BFloat16>>(bias->dtype(), [&]<class B>() {
        const B* add = bias->data<B>() + at;
        for (int64_t j = 0; j < t; ++j) row[j] += as_float(add[j]);
      });
    }
    const int64_t position = d.past[b] + s;
    const int64_t last = c_.causal ? position : t - 1;  // keys after `last` are hidden
    const int64_t first = c_.local_window > 0 ? position - c_.local_window + 1 : 0;
    for (int64_t j = 0; j < t; ++j) {
      if (j > last || j < first) row[j] = kHidden;
    }
  }

  // Head n's sink in the softmax denominator: head_sink[n], 0 with smooth_softmax, else none.
  std::optional<float> head_sink(KernelInputs inputs, int64_t n) const {
    if (const Tensor* sinks = optional_input(inputs, kHeadSink)) {
      float sink = 0.0f;
      visit_dtype<TypeList<float, Float16, BFloat16>>(sinks->dtype(), [&]<class B>() {
        sink = as_float(sinks->data<B>()[n]);
      });
      return sink;
    }
    if (c_.smooth_softmax) return 0.0f;
    return std::nullopt;
  }

  Expected<GqaDims> resolve(KernelInputs inputs) const {
    const Tensor* query = optional_input(inputs, kQuery);
    const Tensor* seqlens = optional_input(inputs, kSeqlensK);
    const Tensor* total = optional_input(inputs, kTotalLength);
    if (query == nullptr || seqlens == nullptr || total == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_,
                        ": query, seqlens_k and total_sequence_length are required");
    }
    TRY(check_input_type(inputs, kQuery, type_mask(TypeList<float, Float16, BFloat16>{}), description_));
    const DataType dtype = query->dtype();
    for (size_t i : {kKey, kValue, kPastKey, kPastValue, kCos, kSin, kAttentionBias, kHeadSink, kQNorm, kKNorm}) {
      const Tensor* t = optional_input(inputs, i);
      if (t != nullptr && t->dtype() != dtype) {
        return make_error(i == kPastKey || i == kPastValue ? StatusCode::kNotImplemented : StatusCode::kInvalidArgument,
                          description_, ": input ", i, " is ", data_type_name(t->dtype()), ", query is ",
                          data_type_name(dtype), " (quantized caches are not supported)");
      }
    }
    const int64_t n_heads = c_.heads, kv = c_.kv_heads;
    GqaDims d;
    const Shape& qs = query->shape();
    if (qs.size() != 3) return error("query must be 3-D [B, S, hidden]");
    d.b = qs[0];
    d.s = qs[1];
    d.query_stride = qs[2];
    const Tensor* key = optional_input(inputs, kKey);
    const Tensor* value = optional_input(inputs, kValue);
    d.packed = key == nullptr && value == nullptr;
    if (d.packed) {
      if (qs[2] % (n_heads + 2 * kv) != 0) return error("packed query width is not a multiple of N + 2 Nk");
      d.head = qs[2] / (n_heads + 2 * kv);
    } else {
      if (key == nullptr || value == nullptr) return error("key and value come together");
      if (qs[2] % n_heads != 0) return error("query width is not a multiple of num_heads");
      d.head = qs[2] / n_heads;
      const Shape kv_shape{d.b, d.s, kv * d.head};
      if (key->shape() != kv_shape || value->shape() != kv_shape) {
        return error("key and value must be [B, S, kv_num_heads * head_size] = " + shape_to_string(kv_shape));
      }
    }
    if (d.head <= 0) return error("the head size must be positive");
    const Tensor* past_key = optional_input(inputs, kPastKey);
    const Tensor* past_value = optional_input(inputs, kPastValue);
    if ((past_key == nullptr) != (past_value == nullptr)) return error("past_key and past_value come together");
    if (past_key != nullptr) {
      const Shape& p = past_key->shape();
      if (p.size() != 4 || p[0] != d.b || p[1] != kv || p[3] != d.head || past_value->shape() != p) {
        return error("past_key and past_value must be [B, kv_num_heads, P, head_size]");
      }
      d.past_buffer = p[2];
    }
    if (seqlens->dtype() != DataType::kInt32 || seqlens->rank() != 1 || seqlens->shape()[0] != d.b ||
        total->dtype() != DataType::kInt32 || total->numel() != 1) {
      return error("seqlens_k must be int32 [B] and total_sequence_length an int32 scalar");
    }
    const int64_t total_length = total->data<int32_t>()[0];
    if (total_length < std::max<int64_t>(1, d.s)) {
      return error("total_sequence_length " + std::to_string(total_length) + " must be at least the sequence length " +
                   std::to_string(d.s) + " (and positive)");
    }
    d.capacity = std::max(total_length, d.past_buffer);
    const double cache_floats = static_cast<double>(d.b) * static_cast<double>(kv) *
                                static_cast<double>(d.capacity) * static_cast<double>(d.head);
    if (cache_floats * 2 * sizeof(float) > 0x1p60) return error("the key / value caches do not fit in memory");
    TRY(resolve_lengths(inputs, d));
    TRY(resolve_optional_inputs(inputs, d));
    return d;
  }

  // T_b, Q_b and P_b of every entry from seqlens_k (and query_seqlens).
  Status resolve_lengths(KernelInputs inputs, GqaDims& d) const {
    const int32_t* seqlens = inputs[kSeqlensK]->data<int32_t>();
    const Tensor* query_seqlens = optional_input(inputs, kQuerySeqlens);
    if (query_seqlens != nullptr &&
        (query_seqlens->dtype() != DataType::kInt32 || query_seqlens->rank() != 1 ||
         query_seqlens->shape()[0] != d.b)) {
      return error("query_seqlens must be int32 [B]");
    }
    const int64_t total_length = inputs[kTotalLength]->data<int32_t>()[0];
    for (int64_t b = 0; b < d.b; ++b) {
      const int64_t t = static_cast<int64_t>(seqlens[b]) + 1;
      if (t < 1 || t > total_length) {
        return error("seqlens_k[" + std::to_string(b) + "] + 1 = " + std::to_string(t) +
                     " is outside [1, total_sequence_length " + std::to_string(total_length) + "]");
      }
      const int64_t valid = query_seqlens != nullptr ? query_seqlens->data<int32_t>()[b] : std::min(d.s, t);
      if (valid < 0 || valid > std::min(d.s, t) || t - valid > d.past_buffer) {
        return error("entry " + std::to_string(b) + ": " + std::to_string(valid) + " new tokens of " +
                     std::to_string(t) + " need the past to hold " + std::to_string(t - valid) + " (it holds " +
                     std::to_string(d.past_buffer) + ") and at most the sequence length");
      }
      d.total.push_back(t);
      d.valid.push_back(valid);
      d.past.push_back(t - valid);
    }
    return Status::ok();
  }

  Status resolve_optional_inputs(KernelInputs inputs, GqaDims& d) const {
    const int64_t n_heads = c_.heads;
    if (const Tensor* bias = optional_input(inputs, kAttentionBias)) {
      const Shape& a = bias->shape();
      if (a.size() != 4 || (a[0] != 1 && a[0] != d.b) || (a[1] != 1 && a[1] != n_heads) || a[2] != d.s ||
          a[3] != d.capacity) {
        return error("attention_bias must be [B or 1, num_heads or 1, S, " + std::to_string(d.capacity) + "]");
      }
      d.bias_head_stride = a[1] == 1 ? 0 : d.s * d.capacity;
      d.bias_batch_stride = a[0] == 1 ? 0 : a[1] * d.s * d.capacity;
    }
    if (const Tensor* sink = optional_input(inputs, kHeadSink); sink != nullptr && sink->shape() != Shape{n_heads}) {
      return error("head_sink must be [num_heads]");
    }
    const Tensor* q_norm = optional_input(inputs, kQNorm);
    const Tensor* k_norm = optional_input(inputs, kKNorm);
    if ((q_norm == nullptr) != (k_norm == nullptr) ||
        (q_norm != nullptr && (q_norm->shape() != Shape{d.head} || k_norm->shape() != Shape{d.head}))) {
      return error("q_norm_weight and k_norm_weight come together, each [head_size]");
    }
    const Tensor* positions = optional_input(inputs, kPositionIds);
    if (positions != nullptr &&
        (positions->dtype() != DataType::kInt64 || positions->shape() != Shape{d.b, d.s})) {
      return error("position_ids must be int64 [B, S]");
    }
    if (!c_.rotary) return Status::ok();
    const Tensor* cos = optional_input(inputs, kCos);
    const Tensor* sin = optional_input(inputs, kSin);
    if (cos == nullptr || sin == nullptr || cos->rank() != 2 || sin->shape() != cos->shape() ||
        2 * cos->shape()[1] > d.head) {
      return error("do_rotary needs cos_cache and sin_cache [max_position, R / 2] with R at most the head size");
    }
    const int64_t max_position = cos->shape()[0];
    for (int64_t b = 0; b < d.b; ++b) {
      for (int64_t s = 0; s < d.valid[b]; ++s) {
        const int64_t position = positions != nullptr ? positions->data<int64_t>()[b * d.s + s] : d.past[b] + s;
        if (position < 0 || position >= max_position) {
          return error("rotary position " + std::to_string(position) + " is outside the caches' [0, " +
                       std::to_string(max_position) + ")");
        }
      }
    }
    return Status::ok();
  }

  Status error(const std::string& what) const {
    return make_error(StatusCode::kInvalidArgument, description_, ": ", what);
  }

  std::string description_;
  GqaConfig c_;
  size_t outputs_;
  bool present_[2] = {false, false};  // present_key, present_value requested
};

Expected<std::unique_ptr<Kernel>> create_group_query_attention(const KernelInfo& info) {
  const std::string description = info.node.describe();
  GqaConfig c;
  TRY_ASSIGN(c.heads, info.node.attr_int("num_heads", 0));
  TRY_ASSIGN(c.kv_heads, info.node.attr_int("kv_num_heads", 0));
  TRY_ASSIGN(c.local_window, info.node.attr_int("local_window_size", -1));
  TRY_ASSIGN(c.scale, info.node.attr_float("scale", 0.0f));
  TRY_ASSIGN(c.softcap, info.node.attr_float("softcap", 0.0f));
  TRY_ASSIGN(const float qk_epsilon, info.node.attr_float("qk_norm_epsilon", 1e-6f));
  TRY_ASSIGN(c.q_norm_epsilon, info.node.attr_float("q_norm_epsilon", qk_epsilon));
  TRY_ASSIGN(c.k_norm_epsilon, info.node.attr_float("k_norm_epsilon", qk_epsilon));
  TRY_ASSIGN(const int64_t causal, info.node.attr_int("causal", 1));
  TRY_ASSIGN(const int64_t rotary, info.node.attr_int("do_rotary", 0));
  TRY_ASSIGN(const int64_t interleaved, info.node.attr_int("rotary_interleaved", 0));
  TRY_ASSIGN(const int64_t smooth, info.node.attr_int("smooth_softmax", 0));
  TRY_ASSIGN(const int64_t window_cache, info.node.attr_int("sliding_window_cache", 0));
  TRY_ASSIGN(const int64_t qk_output, info.node.attr_int("qk_output", 0));
  TRY_ASSIGN(const std::string k_quant, info.node.attr_string("k_quant_type", "NONE"));
  TRY_ASSIGN(const std::string v_quant, info.node.attr_string("v_quant_type", "NONE"));
  c.causal = causal != 0;
  c.rotary = rotary != 0;
  c.interleaved = interleaved != 0;
  c.smooth_softmax = smooth != 0;
  if (c.heads <= 0 || c.kv_heads <= 0 || c.heads % c.kv_heads != 0) {
    return make_error(StatusCode::kInvalidArgument, description, ": num_heads ", c.heads, " must be a positive ",
                      "multiple of kv_num_heads ", c.kv_heads);
  }
  if ((causal != 0 && causal != 1) || (!c.causal && c.local_window > 0) || !(c.softcap >= 0.0f) ||
      !(c.q_norm_epsilon > 0.0f) || !(c.k_norm_epsilon > 0.0f) || !std::isfinite(c.scale)) {
    return make_error(StatusCode::kInvalidArgument, description, ": causal must be 0 or 1 (local_window_size -1 ",
                      "when 0), softcap nonnegative, the norm epsilons positive and scale finite");
  }
  const auto has_input = [&](size_t index) {
    return info.node.inputs.size() > index && info.node.inputs[index] != graph::kNoValue;
  };
  if (window_cache != 0 || qk_output != 0 || k_quant != "NONE" || v_quant != "NONE" || has_input(kKScale) ||
      has_input(kVScale)) {
    return make_error(StatusCode::kNotImplemented, description, ": quantized caches, sliding_window_cache and ",
                      "qk_output are not supported on the CPU");
  }
  return std::unique_ptr<Kernel>(std::make_unique<GroupQueryAttentionKernel>(info.node, c));
}

const KernelDef kContribGqaKernels[] = {
    {"GroupQueryAttention", graph::kMsDomain, 1, kLatestOpset, type_mask(TypeList<float, Float16, BFloat16>{}), 0,
     create_group_query_attention},
};

}  // namespace

std::span<const KernelDef> contrib_gqa_kernels() { return kContribGqaKernels; }

}  // namespace nxrt::cpu
