// com.microsoft SparseAttention (opset 1), float32, float16 and bfloat16: block-sparse causal attention over a
// key / value cache, as ONNX Runtime's contrib schema defines it and its CPU kernel computes it:
//   query [B, S, N * H] (or packed Q, K, V [B, S, (N + 2 Nk) * H] without key and value), key / value
//   [B, S, Nk * H], past_key / past_value [B, Nk, C, H] (required), block_row_indices (int32 [L, M + 1]) and
//   block_col_indices (int32 [L, nnz]): L block-mask layouts in CSR form over M x M blocks of sparse_block_size
//   tokens, total_sequence_length (int32 scalar), key_total_sequence_lengths (int32 [B]: T_b), cos_cache /
//   sin_cache [max_position, R / 2] (do_rotary)
//   -> output [B, S, N * H], present_key / present_value [B, Nk, C, H].
// The step is a prompt when total_sequence_length == S: entry b then has no past (P_b = 0); otherwise P_b = T_b - S.
// The S new key / value rows go to rows P_b .. P_b + S - 1 of the present caches, which otherwise hold the past
// (rows from P_b + S on keep what the buffer holds); ONNX Runtime requires present and past to be one buffer, nxrt
// also accepts separate ones and then copies the past. Query row s sits at position p = P_b + s; with do_rotary the
// query and the new keys are rotated at that position. Query head n reads key / value head n / (N / Nk) and uses
// layout n % L. It sees the keys j <= p (and j < T_b); of those, when the layout is sparse and block row p / block
// lists fewer than p / block + 1 blocks, only the keys in the listed blocks keep their score, the others get the
// lowest float (a row whose every key is hidden that way attends to them uniformly, as ONNX Runtime's kernel does).
// A layout is sparse when it has fewer nonzero blocks than the M (M + 1) / 2 of a dense causal mask.
// Scores: scale * Q K^T (scale 0: 1 / sqrt(H)), softmax, times V over the entry's T_b keys in IEEE arithmetic (a
// hidden key's NaN value reaches the row: 0 * NaN). Computed in float; half types round once.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/scratch_space.h"
#include "ep/cpu/contrib/contrib_attention_common.h"
#include "ep/cpu/elementwise/unary_common.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/run_limits.h"

namespace nxrt::cpu::contrib_detail {

namespace {

enum Input : size_t {
  kQuery, kKey, kValue, kPastKey, kPastValue, kRowIndices, kColIndices, kTotalLength, kKeyLengths, kCos, kSin,
};

using SparseTypes = TypeList<float, Float16, BFloat16>;

struct SparseConfig {
  int64_t heads = 0, kv_heads = 0, block = 0;
  float scale = 0.0f;
  bool rotary = false, interleaved = false;
};

struct SparseDims {
  int64_t b = 0, s = 0, head = 0, capacity = 0, query_stride = 0;
  int64_t layouts = 0, max_blocks = 0, nnz = 0;
  bool packed = false;
  std::vector<int64_t> total, past;  // per entry: T_b, P_b
  std::vector<bool> sparse_layout;   // per layout
};

class SparseAttentionKernel final : public Kernel {
 public:
  SparseAttentionKernel(std::string description, SparseConfig config)
      : description_(std::move(description)), c_(config) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const SparseDims d, resolve(inputs));
    const DataType dtype = inputs[kQuery]->dtype();
    const Shape cache{d.b, c_.kv_heads, d.capacity, d.head};
    outputs = {OutputDesc{dtype, Shape{d.b, d.s, c_.heads * d.head}}, OutputDesc{dtype, cache},
               OutputDesc{dtype, cache}};
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const SparseDims d, resolve(inputs));
    const RunLimits* limits = current_run_limits();
    if (limits != nullptr) {
      const int64_t cache = d.b * c_.kv_heads * d.capacity * d.head;
      TRY(limits->check_bytes(static_cast<size_t>(d.b * d.s * c_.heads * d.head + 2 * cache) * sizeof(float),
                              description_ + " query and key / value caches"));
    }
    visit_dtype<SparseTypes>(inputs[kQuery]->dtype(), [&]<class T>() { compute<T>(d, inputs, outputs, pool, limits); });
    return Status::ok();
  }

 private:
  template <class T>
  void compute(const SparseDims& d, KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool,
               const RunLimits* limits) const {
    const int64_t n_heads = c_.heads, kv = c_.kv_heads, h = d.head;
    const int64_t cache = d.b * kv * d.capacity * h;
    // Float caches are built in the presents themselves (the past copied first unless they are the same buffer);
    // half-type caches in scratch, rounded into the presents at the end.
    constexpr bool in_present = std::is_same_v<T, float>;
    float* const q = scratch_floats(ScratchUse::kContribProjection, d.b * d.s * n_heads * h + (in_present ? 0 : 2 * cache));
    float* const keys = in_present ? outputs[1].data<float>() : q + d.b * d.s * n_heads * h;
    float* const values = in_present ? outputs[2].data<float>() : keys + cache;
    load_cache<T>(*inputs[kPastKey], keys, cache);
    load_cache<T>(*inputs[kPastValue], values, cache);
    fill_new_rows<T>(d, inputs, q, keys, values);
    if (!in_present) {
      store_cache_floats(keys, outputs[1].data<T>(), cache);
      store_cache_floats(values, outputs[2].data<T>(), cache);
    }
    // P V is the product over the entry's T_b keys in IEEE arithmetic: a key the masks hide has probability 0, and a
    // NaN or infinite value of it still gives 0 * NaN = NaN. attend_rows may skip keys of probability 0 only where
    // every value row of the key / value head is finite.
    std::vector<uint8_t> finite_values(static_cast<size_t>(d.b * kv));
    pool.parallel_for(d.b * kv, 1, [&](int64_t begin, int64_t end) {
      for (int64_t head = begin; head < end; ++head) {
        const float* v = values + head * d.capacity * h;
        finite_values[static_cast<size_t>(head)] =
            std::all_of(v, v + d.total[head / kv] * h, [](float x) { return std::isfinite(x); });
      }
    });
    const RowBlocks split = row_blocks(d.s, d.capacity);
    const int64_t rows_per_task = split.rows, blocks = split.blocks;
    const float scale = c_.scale != 0.0f ? c_.scale : 1.0f / std::sqrt(static_cast<float>(h));
    T* const out = outputs[0].data<T>();
    pool.parallel_for(d.b * n_heads * blocks, 1, [&](int64_t begin, int64_t end) {
      float* const scores =
          scratch_floats(ScratchUse::kContribAttention, rows_per_task * (d.capacity + h) + d.max_blocks);
      float* const rows = scores + rows_per_task * d.capacity;
      float* const listed = rows + rows_per_task * h;  // 1 for the blocks the current block row lists
      for (int64_t task = begin; task < end; ++task) {
        if (run_should_stop(limits)) return;
        const int64_t bn = task / blocks;
        const int64_t b = bn / n_heads, n = bn % n_heads;
        const int64_t s0 = (task % blocks) * rows_per_task;
        const int64_t count = std::min(rows_per_task, d.s - s0);
        const int64_t kv_head = b * kv + n / (n_heads / kv);
        const int64_t layout = n % d.layouts;
        attend_rows(q + ((b * d.s + s0) * n_heads + n) * h, n_heads * h, keys + kv_head * d.capacity * h,
                    values + kv_head * d.capacity * h, count, d.total[b], h, h, scale, scores, rows, h,
                    [&](int64_t i, float* row) { hide_keys(d, inputs, layout, d.past[b] + s0 + i, d.total[b], listed, row); },
                    std::nullopt, finite_values[static_cast<size_t>(kv_head)] != 0);
        for (int64_t i = 0; i < count; ++i) {
          T* y = out + ((b * d.s + s0 + i) * n_heads + n) * h;
          for (int64_t e = 0; e < h; ++e) y[e] = T(rows[i * h + e]);
        }
      }
    });
  }

  template <class T>
  static void load_cache(const Tensor& past, float* cache, int64_t count) {
    if constexpr (std::is_same_v<T, float>) {
      if (past.data<float>() != cache) std::memcpy(cache, past.data<float>(), static_cast<size_t>(count) * sizeof(float));
    } else {
      const T* from = past.data<T>();
      for (int64_t i = 0; i < count; ++i) cache[i] = static_cast<float>(from[i]);
    }
  }

  // q [B, S, N, H] from the query rows and the new key / value rows at P_b + s of the caches, the query and keys
  // rotated at their positions when do_rotary.
  template <class T>
  void fill_new_rows(const SparseDims& d, KernelInputs inputs, float* q, float* keys, float* values) const {
    const int64_t n_heads = c_.heads, kv = c_.kv_heads, h = d.head;
    const T* query = inputs[kQuery]->data<T>();
    const T* key = d.packed ? query + n_heads * h : inputs[kKey]->data<T>();
    const T* value = d.packed ? query + (n_heads + kv) * h : inputs[kValue]->data<T>();
    const int64_t kv_stride = d.packed ? d.query_stride : kv * h;
    for (int64_t b = 0; b < d.b; ++b) {
      for (int64_t s = 0; s < d.s; ++s) {
        const int64_t position = d.past[b] + s;
        for (int64_t n = 0; n < n_heads; ++n) {
          float* row = q + ((b * d.s + s) * n_heads + n) * h;
          const T* from = query + (b * d.s + s) * d.query_stride + n * h;
          for (int64_t e = 0; e < h; ++e) row[e] = static_cast<float>(from[e]);
          if (c_.rotary) rotate<T>(inputs, position, row);
        }
        for (int64_t g = 0; g < kv; ++g) {
          const int64_t from = (b * d.s + s) * kv_stride + g * h;
          float* k = keys + ((b * kv + g) * d.capacity + position) * h;
          float* v = values + ((b * kv + g) * d.capacity + position) * h;
          for (int64_t e = 0; e < h; ++e) k[e] = static_cast<float>(key[from + e]);
          for (int64_t e = 0; e < h; ++e) v[e] = static_cast<float>(value[from + e]);
          if (c_.rotary) rotate<T>(inputs, position, k);
        }
      }
    }
  }

  template <class T>
  void rotate(KernelInputs inputs, int64_t position, float* row) const {
    const int64_t half = inputs[kCos]->shape()[1];
    rotate_head_row(row, inputs[kCos]->data<T>() + position * half, inputs[kSin]->data<T>() + position * half, half,
                    c_.interleaved);
  }

  // The causal and block-sparse masks of the scores of the query at `position` over t keys.
  void hide_keys(const SparseDims& d, KernelInputs inputs, int64_t layout, int64_t position, int64_t t,
                 float* listed, float* row) const {
    const int64_t visible = std::min(position + 1, t);
    for (int64_t j = visible; j < t; ++j) row[j] = -std::numeric_limits<float>::infinity();
    if (!d.sparse_layout[static_cast<size_t>(layout)]) return;
    const int64_t block_row = position / c_.block;
    const int32_t* row_indices = inputs[kRowIndices]->data<int32_t>() + layout * (d.max_blocks + 1);
    const int32_t* col_indices = inputs[kColIndices]->data<int32_t>() + layout * d.nnz;
    const int64_t first = row_indices[block_row], last = row_indices[block_row + 1];
    if (last - first == block_row + 1) return;  // as many blocks as a dense causal row: not masked
    std::fill_n(listed, d.max_blocks, 0.0f);
    for (int64_t e = first; e < last; ++e) listed[col_indices[e]] = 1.0f;
    for (int64_t j = 0; j < visible; ++j) {
      if (listed[j / c_.block] == 0.0f) row[j] = std::numeric_limits<float>::lowest();
    }
  }

  Expected<SparseDims> resolve(KernelInputs inputs) const {
    for (size_t i : {kQuery, kPastKey, kPastValue, kRowIndices, kColIndices, kTotalLength, kKeyLengths}) {
      if (optional_input(inputs, i) == nullptr) {
        return error("query, past_key, past_value, block_row_indices, block_col_indices, total_sequence_length and "
                     "key_total_sequence_lengths are required");
      }
    }
    TRY(check_input_type(inputs, kQuery, type_mask(SparseTypes{}), description_));
    const DataType dtype = inputs[kQuery]->dtype();
    for (size_t i : {kKey, kValue, kPastKey, kPastValue, kCos, kSin}) {
      const Tensor* t = optional_input(inputs, i);
      if (t != nullptr && t->dtype() != dtype) return error("input " + std::to_string(i) + " must have query's type");
    }
    for (size_t i : {kRowIndices, kColIndices, kTotalLength, kKeyLengths}) {
      if (inputs[i]->dtype() != DataType::kInt32) return error("input " + std::to_string(i) + " must be int32");
    }
    SparseDims d;
    TRY(resolve_projections(inputs, d));
    const Shape& past = inputs[kPastKey]->shape();
    if (past.size() != 4 || past[0] != d.b || past[1] != c_.kv_heads || past[3] != d.head ||
        inputs[kPastValue]->shape() != past) {
      return error("past_key and past_value must be [B, kv_num_heads, C, head_size] = [" + std::to_string(d.b) +
                   ", " + std::to_string(c_.kv_heads) + ", C, " + std::to_string(d.head) + "]");
    }
    d.capacity = past[2];
    const double cache_floats = static_cast<double>(d.b) * static_cast<double>(c_.kv_heads) *
                                static_cast<double>(d.capacity) * static_cast<double>(d.head);
    if (cache_floats * 2 * sizeof(float) > 0x1p60) return error("the key / value caches do not fit in memory");
    TRY(resolve_layouts(inputs, d));
    TRY(resolve_lengths(inputs, d));
    return d;
  }

  Status resolve_projections(KernelInputs inputs, SparseDims& d) const {
    const Shape& qs = inputs[kQuery]->shape();
    if (qs.size() != 3) return error("query must be 3-D [B, S, hidden]");
    d.b = qs[0];
    d.s = qs[1];
    d.query_stride = qs[2];
    const Tensor* key = optional_input(inputs, kKey);
    const Tensor* value = optional_input(inputs, kValue);
    d.packed = key == nullptr && value == nullptr;
    const int64_t columns = d.packed ? c_.heads + 2 * c_.kv_heads : c_.heads;
    if (qs[2] % columns != 0 || qs[2] == 0) {
      return error("query width " + std::to_string(qs[2]) + " must be a positive multiple of " +
                   std::to_string(columns) + (d.packed ? " (num_heads + 2 kv_num_heads)" : " (num_heads)"));
    }
    d.head = qs[2] / columns;
    if (!d.packed) {
      if (key == nullptr || value == nullptr) return error("key and value come together");
      const Shape kv_shape{d.b, d.s, c_.kv_heads * d.head};
      if (key->shape() != kv_shape || value->shape() != kv_shape) {
        return error("key and value must be [B, S, kv_num_heads * head_size] = " + shape_to_string(kv_shape));
      }
    }
    if (!c_.rotary) return Status::ok();
    const Tensor* cos = optional_input(inputs, kCos);
    const Tensor* sin = optional_input(inputs, kSin);
    if (cos == nullptr || sin == nullptr || cos->rank() != 2 || sin->shape() != cos->shape() ||
        2 * cos->shape()[1] > d.head) {
      return error("do_rotary needs cos_cache and sin_cache [max_position, R / 2] with R at most the head size");
    }
    return Status::ok();
  }

  // The layouts' CSR arrays: shapes, row offsets nondecreasing within the column array, columns inside the mask.
  Status resolve_layouts(KernelInputs inputs, SparseDims& d) const {
    const Shape& rows = inputs[kRowIndices]->shape();
    const Shape& cols = inputs[kColIndices]->shape();
    if (rows.size() != 2 || rows[0] <= 0 || rows[1] < 2 || c_.heads % rows[0] != 0) {
      return error("block_row_indices must be [L, max_blocks + 1] with num_heads a multiple of L");
    }
    d.layouts = rows[0];
    d.max_blocks = rows[1] - 1;
    if (cols.size() != 2 || cols[0] != d.layouts || cols[1] > d.max_blocks * d.max_blocks) {
      return error("block_col_indices must be [L, nnz] with nnz at most max_blocks^2");
    }
    d.nnz = cols[1];
    for (int64_t layout = 0; layout < d.layouts; ++layout) {
      const int32_t* offsets = inputs[kRowIndices]->data<int32_t>() + layout * rows[1];
      const int32_t* columns = inputs[kColIndices]->data<int32_t>() + layout * d.nnz;
      const std::string where = "layout " + std::to_string(layout) + ": ";
      if (offsets[0] < 0 || offsets[d.max_blocks] > d.nnz) {
        return error(where + "block_row_indices must lie in [0, nnz " + std::to_string(d.nnz) + "]");
      }
      for (int64_t r = 0; r < d.max_blocks; ++r) {
        if (offsets[r + 1] < offsets[r]) return error(where + "block_row_indices must be nondecreasing");
        for (int64_t e = offsets[r]; e < offsets[r + 1]; ++e) {
          if (columns[e] < 0 || columns[e] >= d.max_blocks) {
            return error(where + "block column " + std::to_string(columns[e]) + " is outside [0, " +
                         std::to_string(d.max_blocks) + ")");
          }
        }
      }
      d.sparse_layout.push_back(offsets[d.max_blocks] < d.max_blocks * (d.max_blocks + 1) / 2);
    }
    return Status::ok();
  }

  // T_b and P_b of every entry; every new row must fit the cache, and (with do_rotary) every position the tables.
  Status resolve_lengths(KernelInputs inputs, SparseDims& d) const {
    const Tensor& total = *inputs[kTotalLength];
    const Tensor& lengths = *inputs[kKeyLengths];
    if (total.numel() != 1 || lengths.rank() != 1 || lengths.shape()[0] != d.b) {
      return error("total_sequence_length must be a scalar and key_total_sequence_lengths [B]");
    }
    const int64_t total_length = total.data<int32_t>()[0];
    const int64_t max_length = d.max_blocks * c_.block;
    if (total_length < d.s || total_length > d.capacity || total_length > max_length) {
      return error("total_sequence_length " + std::to_string(total_length) + " must be at least S " +
                   std::to_string(d.s) + " and at most the cache length " + std::to_string(d.capacity) +
                   " and the block mask's " + std::to_string(max_length));
    }
    const bool prompt = total_length == d.s;
    const int64_t max_position = c_.rotary ? inputs[kCos]->shape()[0] : std::numeric_limits<int64_t>::max();
    for (int64_t b = 0; b < d.b; ++b) {
      const int64_t t = lengths.data<int32_t>()[b];
      const int64_t past = prompt ? 0 : t - d.s;
      if (t < 1 || t > total_length || past < 0 || past + d.s > total_length || past + d.s > max_position) {
        return error("key_total_sequence_lengths[" + std::to_string(b) + "] = " + std::to_string(t) +
                     " must lie in [" + std::to_string(prompt ? 1 : d.s) + ", total_sequence_length " +
                     std::to_string(total_length) + "]" + (c_.rotary ? " and within the rotary caches" : ""));
      }
      d.total.push_back(t);
      d.past.push_back(past);
    }
    return Status::ok();
  }

  Status error(const std::string& what) const {
    return make_error(StatusCode::kInvalidArgument, description_, ": ", what);
  }

  std::string description_;
  SparseConfig c_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> create_sparse_attention(const KernelInfo& info) {
  const std::string description = info.node.describe();
  SparseConfig c;
  TRY_ASSIGN(c.heads, info.node.attr_int("num_heads", 0));
  TRY_ASSIGN(c.kv_heads, info.node.attr_int("kv_num_heads", 0));
  TRY_ASSIGN(c.block, info.node.attr_int("sparse_block_size", 0));
  TRY_ASSIGN(c.scale, info.node.attr_float("scale", 0.0f));
  TRY_ASSIGN(const int64_t rotary, info.node.attr_int("do_rotary", 0));
  TRY_ASSIGN(const int64_t interleaved, info.node.attr_int("rotary_interleaved", 0));
  c.rotary = rotary != 0;
  c.interleaved = interleaved != 0;
  if (c.heads <= 0 || c.kv_heads <= 0 || c.heads % c.kv_heads != 0 || c.block <= 0 || c.block > (1 << 20) ||
      !std::isfinite(c.scale)) {
    return make_error(StatusCode::kInvalidArgument, description, ": num_heads ", c.heads,
                      " must be a positive multiple of kv_num_heads ", c.kv_heads,
                      ", sparse_block_size positive and scale finite");
  }
  return std::unique_ptr<Kernel>(std::make_unique<SparseAttentionKernel>(description, c));
}

}  // namespace nxrt::cpu::contrib_detail
