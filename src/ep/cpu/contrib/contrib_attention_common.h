// Pieces shared by the com.microsoft attention kernels (contrib_attention.cpp, contrib_mha.cpp): the int32 key
// masks (Attention's mask_index, MultiHeadAttention's key_padding_mask) and the per-block attention of float
// query rows over float key / value rows.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/gemm.h"
#include "ep/cpu/microkernels/vector_math.h"

namespace nxrt::cpu::contrib_detail {

// The pool the per-task GEMMs get: the tasks already fill every thread.
inline ThreadPool& single_thread_pool() {
  static ThreadPool pool(1);  // no workers: parallel_for runs on the caller
  return pool;
}

// Query rows per task: at most 64 Ki score floats (256 KiB, so a task's scores stay in L2) over `keys` keys;
// `blocks` blocks cover `queries` rows.
struct RowBlocks {
  int64_t rows = 1, blocks = 0;
};

inline RowBlocks row_blocks(int64_t queries, int64_t keys) {
  constexpr int64_t kMaxScoreFloats = 65536;
  RowBlocks r;
  r.rows = std::clamp<int64_t>(kMaxScoreFloats / std::max<int64_t>(1, keys), 1, std::max<int64_t>(1, queries));
  r.blocks = (queries + r.rows - 1) / r.rows;
  return r;
}

enum class KeyMaskForm { kNone, kRaw2d, kRaw3d, kKeyEnd, kKeyEndStart };

// A key mask over B entries, S queries and T keys:
//   [B, T] and [B, S, T]: raw (0 hides the key); [B] (or the first B of [3B + 2]): key j < end[b] is seen;
//   [2B]: ends, then starts (key j >= start[b] is seen too).
struct KeyMask {
  KeyMaskForm form = KeyMaskForm::kNone;
  const int32_t* data = nullptr;
  int64_t batch = 0, queries = 0, keys = 0;

  // Adds `filter` where the mask hides key j of query s of entry b, and float's lowest where the causal rule
  // does (keys after position past + s; whatever the mask says there), as ONNX Runtime's CPU kernels do. Their
  // causal rule leaves the last query row alone: the same when there are S new keys, every key otherwise.
  void apply(int64_t b, int64_t s, int64_t past, bool causal, float filter, float* row) const {
    if (form == KeyMaskForm::kNone && !causal) return;
    const int64_t causal_end = causal && s + 1 < queries ? past + s + 1 : keys;  // keys from here on are hidden
    for (int64_t j = 0; j < keys; ++j) {
      bool seen = true;
      switch (form) {
        case KeyMaskForm::kNone: break;
        case KeyMaskForm::kRaw2d: seen = data[b * keys + j] != 0; break;
        case KeyMaskForm::kRaw3d: seen = data[(b * queries + s) * keys + j] != 0; break;
        case KeyMaskForm::kKeyEnd: seen = j < data[b]; break;
        case KeyMaskForm::kKeyEndStart: seen = j < data[b] && j >= data[batch + b]; break;
      }
      row[j] += j >= causal_end ? std::numeric_limits<float>::lowest() : (seen ? 0.0f : filter);
    }
  }
};

// The KeyMask of `mask` (null: none); 4-D masks are NOT_IMPLEMENTED, other shapes INVALID_ARGUMENT naming `what`.
inline Expected<KeyMask> resolve_key_mask(const Tensor* mask, int64_t b, int64_t s, int64_t t,
                                          const std::string& description, const char* what) {
  KeyMask m{KeyMaskForm::kNone, nullptr, b, s, t};
  if (mask == nullptr) return m;
  const Shape& shape = mask->shape();
  if (mask->dtype() != DataType::kInt32) {
    return make_error(StatusCode::kInvalidArgument, description, ": ", what, " must be int32, got ",
                      data_type_name(mask->dtype()));
  }
  m.data = mask->data<int32_t>();
  if (shape.size() == 1 && (shape[0] == b || shape[0] == 3 * b + 2)) {
    m.form = KeyMaskForm::kKeyEnd;
  } else if (shape.size() == 1 && shape[0] == 2 * b) {
    m.form = KeyMaskForm::kKeyEndStart;
  } else if (shape.size() == 2 && shape[0] == b && shape[1] == t) {
    m.form = KeyMaskForm::kRaw2d;
  } else if (shape.size() == 3 && shape[0] == b && shape[1] == s && shape[2] == t) {
    m.form = KeyMaskForm::kRaw3d;
  } else if (shape.size() == 4) {
    return make_error(StatusCode::kNotImplemented, description, ": 4-D ", what, " ", shape_to_string(shape),
                      " is not supported on the CPU");
  } else {
    return make_error(StatusCode::kInvalidArgument, description, ": ", what, " ", shape_to_string(shape),
                      " must be [", b, "], [", 2 * b, "], [", 3 * b + 2, "], [", b, ", ", t, "] or [", b, ", ", s,
                      ", ", t, "]");
  }
  return m;
}

// Rotary embedding of one head row at one position: pairs (i, i + half), or (2i, 2i + 1) when interleaved, for
// i < half, turned by the angle whose cosine and sine are cos[i] and sin[i] (that position's row of the tables).
template <class T>
void rotate_head_row(float* row, const T* cos, const T* sin, int64_t half, bool interleaved) {
  for (int64_t i = 0; i < half; ++i) {
    const int64_t i1 = interleaved ? 2 * i : i;
    const int64_t i2 = interleaved ? 2 * i + 1 : i + half;
    const float x1 = row[i1], x2 = row[i2], c = static_cast<float>(cos[i]), s = static_cast<float>(sin[i]);
    row[i1] = x1 * c - x2 * s;
    row[i2] = x2 * c + x1 * s;
  }
}

// Rounds `count` floats into a cache of element type T.
template <class T>
void store_cache_floats(const float* from, T* to, int64_t count) {
  for (int64_t i = 0; i < count; ++i) to[i] = T(from[i]);
}

// Softmax of one row of t > 0 scores whose denominator also counts exp(sink) (GroupQueryAttention's head sink).
inline void softmax_row_with_sink(float* row, int64_t t, float sink) {
  float max = sink;
  for (int64_t j = 0; j < t; ++j) max = std::max(max, row[j]);
  const float inverse = 1.0f / (vector_exp_shifted_sum(row, row, t, max) + std::exp(sink - max));
  for (int64_t j = 0; j < t; ++j) row[j] *= inverse;
}

// Attention of `count` query rows q (row stride ldq) over t keys k [t, hk] and values v [t, hv]:
// scores = scale q k^T, then finish(i, row) adds the masks and biases of row i, the softmax (with `sink` in its
// denominator when given), and y (row stride ldy) = probabilities v. `scores` holds count * t floats. With no keys
// the rows of y are zero. y is the IEEE product over all t keys, at every count: a key the masks hide has
// probability 0 and its NaN or infinite value still gives 0 * NaN = NaN (as onnxruntime's products). With
// `values_finite` (the caller knows every value row of v is finite) rows may skip the keys of probability 0, which
// then add exactly nothing.
template <class Finish>
void attend_rows(const float* q, int64_t ldq, const float* k, const float* v, int64_t count, int64_t t, int64_t hk,
                 int64_t hv, float scale, float* scores, float* y, int64_t ldy, Finish&& finish,
                 std::optional<float> sink = std::nullopt, bool values_finite = false) {
  ThreadPool& pool = single_thread_pool();
  if (t == 0) {
    for (int64_t i = 0; i < count; ++i) std::fill_n(y + i * ldy, hv, 0.0f);
    return;
  }
  if (hk > 0) {
    gemm_f32(GemmArgs{false, true, count, t, hk, ldq, hk, t}, scale, q, k, 0.0f, scores, pool);
  } else {
    std::fill_n(scores, count * t, 0.0f);
  }
  for (int64_t i = 0; i < count; ++i) {
    float* row = scores + i * t;
    finish(i, row);
    if (sink) {
      softmax_row_with_sink(row, t, *sink);
    } else {
      softmax_row_f32(row, row, t);
    }
  }
  if (hv == 0) return;
  if (count <= 2) {
    // Decode rows: y = p V accumulated row by row of V; packing V for the GEMM would cost more than the product.
    for (int64_t i = 0; i < count; ++i) vector_weighted_rows(scores + i * t, v, t, hv, hv, y + i * ldy, values_finite);
    return;
  }
  gemm_f32(GemmArgs{false, false, count, hv, t, t, hv, ldy}, 1.0f, scores, v, 0.0f, y, pool);
}

// The create functions of the com.microsoft QAttention and SparseAttention rows (contrib_qattention.cpp,
// contrib_sparse_attention.cpp).
Expected<std::unique_ptr<Kernel>> create_qattention(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_sparse_attention(const KernelInfo& info);

}  // namespace nxrt::cpu::contrib_detail
