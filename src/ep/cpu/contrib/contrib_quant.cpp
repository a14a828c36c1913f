// com.microsoft MatMulNBits (block-quantized weights), as ONNX Runtime's contrib schema defines it:
//   MatMulNBits(A [..., K], B uint8 [N, k_blocks, blob], scales [N, k_blocks], zero_points?, g_idx?, bias? [N])
//     attributes K, N, bits (2, 4, 8), block_size (a power of two >= 16): Y [..., N] = A W^T + bias with
//     W[n, k] = (q[n, k] - zero_point[n, k / block_size]) * scale[n, k / block_size]. q[n, k] is value k of row n,
//     bits-packed low bits first (blob = block_size * bits / 8 bytes per block, the last block zero-padded).
//     zero_points are packed the same way (uint8 [N, ceil(k_blocks * bits / 8)]) or unpacked in A's type
//     ([N, k_blocks]); without them the zero point is 2^(bits - 1). A B with a zero dimension is an omitted
//     projection: Y is the bias (or zeros).
// Constant 4-bit weights stay 4-bit, regrouped once at session creation. With accuracy_level 4 (which permits
// it) A is quantized to int8 per block of K (symmetric, round half to even, as onnxruntime's CPU kernel does) and
// multiplied in integers (Int4Panels) at any row count; otherwise, for blocks of 32 or more, the weights are
// dequantized in registers and multiplied in float (Int4Weights), or, when A has many rows, dequantized per chunk
// of weight rows into the float GEMM. Constant 8-bit weights stay 8-bit in panels (Int8Panels), multiplied with
// int8 A at accuracy_level 4 and otherwise with float A (dequantized in registers, or per chunk into the float GEMM
// when A has many rows). Other constant weights are dequantized to float and packed once; weights computed at run
// time are dequantized per run. g_idx and prepacked weights are NOT_IMPLEMENTED.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/packed_memory.h"
#include "core/scratch_space.h"
#include "ep/cpu/elementwise/unary_common.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/gemm.h"
#include "ep/cpu/microkernels/int4_matmul.h"
#include "ep/cpu/microkernels/int8_weight_matmul.h"

namespace nxrt::cpu {

namespace {

using HalfOrFloat = TypeList<float, Float16, BFloat16>;
constexpr DataTypeMask kHalfOrFloat = type_mask(HalfOrFloat{});

uint32_t packed_code(const uint8_t* data, int64_t index, int64_t bits) {
  const int64_t bit = index * bits;
  return (static_cast<uint32_t>(data[bit / 8]) >> (bit % 8)) & ((1u << bits) - 1u);
}

float float_of(const Tensor& t, int64_t i) {
  float v = 0.0f;
  visit_dtype<HalfOrFloat>(t.dtype(), [&]<class T>() { v = static_cast<float>(t.data<T>()[i]); });
  return v;
}

// Y of a half type from the float product computed in its place (y_f holds Y's element count).
void store_rounded(const float* y_f, Tensor& y) {
  visit_dtype<TypeList<Float16, BFloat16>>(y.dtype(), [&]<class T>() {
    T* out = y.data<T>();
    for (int64_t i = 0; i < y.numel(); ++i) out[i] = T(y_f[i]);
  });
}

struct NBitsShape {
  int64_t k = 0, n = 0, bits = 4, block = 0, k_blocks = 0, blob = 0;
};

// Block blk's zero point of weight row n: packed uint8 codes, a value of the scales' type, or 2^(bits - 1) without
// zero_points (shapes checked by the caller).
float block_zero_point(const NBitsShape& s, const Tensor* zero_points, int64_t n, int64_t blk) {
  if (zero_points == nullptr) return static_cast<float>(1 << (s.bits - 1));
  if (zero_points->dtype() != DataType::kUInt8) return float_of(*zero_points, n * s.k_blocks + blk);
  const int64_t zero_row = (s.k_blocks * s.bits + 7) / 8;
  return static_cast<float>(packed_code(zero_points->data<uint8_t>() + n * zero_row, blk, s.bits));
}

// W [N, K] in float from B, scales and zero_points (shapes checked by the caller).
void dequantize_weights(const NBitsShape& s, const Tensor& b, const Tensor& scales, const Tensor* zero_points,
                        float* w) {
  const uint8_t* q = b.data<uint8_t>();
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t blk = 0; blk < s.k_blocks; ++blk) {
      const float scale = float_of(scales, n * s.k_blocks + blk);
      const float zero = block_zero_point(s, zero_points, n, blk);
      const uint8_t* blob = q + (n * s.k_blocks + blk) * s.blob;
      const int64_t k0 = blk * s.block;
      const int64_t count = std::min(s.block, s.k - k0);
      for (int64_t i = 0; i < count; ++i) {
        w[n * s.k + k0 + i] = (static_cast<float>(packed_code(blob, i, s.bits)) - zero) * scale;
      }
    }
  }
}

// Each block's scale and offset (-zero_point * scale), [n * k_blocks + b].
void block_scales_and_offsets(const NBitsShape& s, const Tensor& scales, const Tensor* zero_points, float* out_scales,
                              float* out_offsets) {
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t blk = 0; blk < s.k_blocks; ++blk) {
      const int64_t at = n * s.k_blocks + blk;
      out_scales[at] = float_of(scales, at);
      out_offsets[at] = -block_zero_point(s, zero_points, n, blk) * out_scales[at];
    }
  }
}

// Constant 4-bit weights in Int4Panels' layout (for int8 A). Without zero points no offsets are kept (the kernels
// derive -8 * scale), so a decode step reads 0.625 bytes per weight instead of 0.75.
struct Int4PanelPacked {
  PackedArray<uint8_t> codes;
  PackedArray<float> scales, offsets;
  int64_t k_blocks = 0, block = 0, panel = 8;
  Int4Panels view() const {
    return {codes.data(), scales.data(), offsets.empty() ? nullptr : offsets.data(), k_blocks, block, panel};
  }

  static Int4PanelPacked pack(const NBitsShape& s, const Tensor& b, const Tensor& scales, const Tensor* zero_points) {
    Int4PanelPacked p;
    p.k_blocks = s.k_blocks;
    p.block = s.block;
    p.panel = int4_panel_rows();
    const int64_t panels = (s.n + p.panel - 1) / p.panel;
    std::vector<float> row_scales(static_cast<size_t>(s.n * s.k_blocks)), row_offsets(row_scales.size());
    block_scales_and_offsets(s, scales, zero_points, row_scales.data(), row_offsets.data());
    p.codes = PackedArray<uint8_t>(static_cast<size_t>(panels * s.k_blocks * s.block * p.panel / 2));
    p.scales = PackedArray<float>(static_cast<size_t>(panels * s.k_blocks * p.panel));
    if (zero_points != nullptr) p.offsets = PackedArray<float>(p.scales.size());
    repack_int4_panels(b.data<uint8_t>(), row_scales.data(), row_offsets.data(), s.n, s.k, s.k_blocks, s.block,
                       p.panel, p.codes.data(), p.scales.data(), p.offsets.empty() ? nullptr : p.offsets.data());
    return p;
  }
};

// Constant 4-bit weights in Int4Weights' layout, with each block's zero point folded into an offset.
struct Int4Packed {
  std::vector<uint8_t> codes;
  std::vector<float> scales, offsets;
  int64_t k_blocks = 0, block = 0;
  Int4Weights view() const { return {codes.data(), scales.data(), offsets.data(), k_blocks, block}; }

  static Int4Packed pack(const NBitsShape& s, const Tensor& b, const Tensor& scales, const Tensor* zero_points) {
    Int4Packed p;
    p.k_blocks = s.k_blocks;
    p.block = s.block;
    p.codes.resize(static_cast<size_t>(s.n * s.k_blocks * s.block / 2));
    repack_int4_codes(b.data<uint8_t>(), s.n, s.k, s.k_blocks, s.block, p.codes.data());
    p.scales.resize(static_cast<size_t>(s.n * s.k_blocks));
    p.offsets.resize(p.scales.size());
    block_scales_and_offsets(s, scales, zero_points, p.scales.data(), p.offsets.data());
    return p;
  }
};

// Constant 8-bit weights in Int8Panels' layout; without zero points no offsets are kept (all are 0).
struct Int8WeightPacked {
  PackedArray<int8_t> codes;
  PackedArray<float> scales, offsets;
  int64_t k_blocks = 0, block = 0, panel = 8;
  Int8Panels view() const {
    return {codes.data(), scales.data(), offsets.empty() ? nullptr : offsets.data(), k_blocks, block, panel};
  }

  static Int8WeightPacked pack(const NBitsShape& s, const Tensor& b, const Tensor& scales, const Tensor* zero_points) {
    Int8WeightPacked p;
    p.k_blocks = s.k_blocks;
    p.block = s.block;
    p.panel = int8_weight_panel_rows();
    const int64_t panels = (s.n + p.panel - 1) / p.panel;
    std::vector<float> row_scales(static_cast<size_t>(s.n * s.k_blocks)), row_offsets(row_scales.size());
    block_scales_and_offsets(s, scales, zero_points, row_scales.data(), row_offsets.data());
    p.codes = PackedArray<int8_t>(static_cast<size_t>(panels * s.k_blocks * s.block * p.panel));
    p.scales = PackedArray<float>(static_cast<size_t>(panels * s.k_blocks * p.panel));
    if (zero_points != nullptr) p.offsets = PackedArray<float>(p.scales.size());
    repack_int8_weight_panels(b.data<uint8_t>(), row_scales.data(), row_offsets.data(), s.n, s.k, s.k_blocks,
                              s.block, p.panel, p.codes.data(), p.scales.data(),
                              p.offsets.empty() ? nullptr : p.offsets.data());
    return p;
  }
};

// The constant weights in the form the kernel multiplies them (at most one member is set).
struct PackedWeights {
  std::optional<PackedB<float>> floats;
  std::optional<Int4Packed> int4;
  std::optional<Int4PanelPacked> int4_panels;  // for int8 A
  std::optional<Int8WeightPacked> int8;
  bool int8_a = false;  // accuracy_level 4: A is quantized to int8 per block
};

// Rows of A up to which the 4-bit products run on the packed codes; beyond, chunks of weight rows are dequantized
// to float once and multiplied by the float GEMM.
constexpr int64_t kInt4DirectRows = 32;
// Floats of one dequantized chunk of weight rows.
constexpr int64_t kInt4ChunkFloats = int64_t{1} << 20;

class MatMulNBitsKernel final : public Kernel {
 public:
  MatMulNBitsKernel(std::string description, NBitsShape shape, PackedWeights weights)
      : description_(std::move(description)), s_(shape), w_(std::move(weights)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(check(inputs));
    Shape out = inputs[0]->shape();
    out.back() = s_.n;
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY(check(inputs));
    const Tensor& a = *inputs[0];
    int64_t m = 1;  // rows of A
    for (size_t d = 0; d + 1 < a.shape().size(); ++d) m *= a.shape()[d];
    const Tensor* bias = optional_input(inputs, 5);
    if (inputs[1]->numel() != 0 && s_.k > 0) {
      if (w_.int4) return run_int4(a, m, bias, outputs[0], pool);
      if (w_.int4_panels) return run_int4_int8(a, m, bias, outputs[0], pool);
      if (w_.int8 && w_.int8_a) return run_int8_int8(a, m, bias, outputs[0], pool);
      if (w_.int8) return run_int8(a, m, bias, outputs[0], pool);
    }
    return run_float(inputs, m, bias, outputs[0], pool);
  }

 private:
  // The product in float: weights packed at creation, dequantized here, or omitted (Y is the bias).
  Status run_float(KernelInputs inputs, int64_t m, const Tensor* bias, Tensor& out, ThreadPool& pool) const {
    const Tensor& a = *inputs[0];
    const bool omitted = inputs[1]->numel() == 0;
    const bool is_float = a.dtype() == DataType::kFloat32;
    // float A and Y (converted for half types), then W when it is not packed.
    const int64_t w_floats = w_.floats || omitted ? 0 : s_.n * s_.k;
    float* const buffer = scratch_floats(ScratchUse::kContribProjection,
                                         (is_float ? 0 : m * (s_.k + s_.n)) + w_floats + s_.n);
    float* const a_f = is_float ? nullptr : buffer;
    float* const y_f = is_float ? out.data<float>() : buffer + m * s_.k;
    float* const w = buffer + (is_float ? 0 : m * (s_.k + s_.n));
    float* const bias_f = w + w_floats;
    for (int64_t j = 0; j < s_.n; ++j) bias_f[j] = bias != nullptr ? float_of(*bias, j) : 0.0f;
    if (omitted || s_.k == 0) {
      for (int64_t i = 0; i < m; ++i) std::copy_n(bias_f, s_.n, y_f + i * s_.n);
    } else {
      if (!is_float) {
        for (int64_t i = 0; i < m * s_.k; ++i) a_f[i] = float_of(a, i);
      }
      const float* a_ptr = is_float ? a.data<float>() : a_f;
      GemmEpilogue<float> epilogue;
      epilogue.bias = bias != nullptr ? bias_f : nullptr;
      const GemmArgs args{false, true, m, s_.n, s_.k, s_.k, s_.k, s_.n};
      if (w_.floats) {
        gemm_f32_packed(args, 1.0f, a_ptr, *w_.floats, 0.0f, y_f, pool, epilogue);
      } else {
        dequantize_weights(s_, *inputs[1], *inputs[2], optional_input(inputs, 3), w);
        gemm_f32(args, 1.0f, a_ptr, w, 0.0f, y_f, pool, best_gemm_isa(), epilogue);
      }
    }
    if (!is_float) store_rounded(y_f, out);
    return Status::ok();
  }

  // Float operands of the packed-weight products, carved from the projection scratch: A padded to kp columns
  // (A itself when it needs no copy), Y in float (the output itself for float A), the bias in float (null without
  // one), and `extra_floats` more for the caller.
  struct FloatOperands {
    const float* a = nullptr;
    float* y = nullptr;
    const float* bias = nullptr;
    float* extra = nullptr;
  };
  FloatOperands float_operands(const Tensor& a, int64_t m, int64_t kp, const Tensor* bias, Tensor& out,
                               int64_t extra_floats) const {
    const bool is_float = a.dtype() == DataType::kFloat32;
    const bool pad_a = !is_float || kp != s_.k;
    const int64_t a_floats = pad_a ? m * kp : 0;
    const int64_t y_floats = is_float ? 0 : m * s_.n;
    float* const buffer = scratch_floats(ScratchUse::kContribProjection, a_floats + y_floats + s_.n + extra_floats);
    float* const bias_f = buffer + a_floats + y_floats;
    for (int64_t j = 0; j < s_.n; ++j) bias_f[j] = bias != nullptr ? float_of(*bias, j) : 0.0f;
    if (pad_a) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t k = 0; k < s_.k; ++k) buffer[i * kp + k] = float_of(a, i * s_.k + k);
        std::fill(buffer + i * kp + s_.k, buffer + (i + 1) * kp, 0.0f);
      }
    }
    return {pad_a ? buffer : a.data<float>(), is_float ? out.data<float>() : buffer + a_floats,
            bias != nullptr ? bias_f : nullptr, bias_f + s_.n};
  }

  // Y = A W^T + bias for A's many rows: chunks of weight rows dequantized to float (by dequantize(first, end,
  // out)) and multiplied by the float GEMM.
  template <class Dequantize>
  void run_dequantized_chunks(const FloatOperands& f, int64_t m, int64_t kp, float* chunk, int64_t chunk_rows,
                              ThreadPool& pool, const Dequantize& dequantize) const {
    for (int64_t n0 = 0; n0 < s_.n; n0 += chunk_rows) {
      const int64_t rows = std::min(chunk_rows, s_.n - n0);
      pool.parallel_for(rows, 4, [&](int64_t begin, int64_t end) {
        dequantize(n0 + begin, n0 + end, chunk + begin * kp);
      });
      GemmEpilogue<float> epilogue;
      epilogue.bias = f.bias != nullptr ? f.bias + n0 : nullptr;
      gemm_f32(GemmArgs{false, true, m, rows, kp, kp, kp, s_.n}, 1.0f, f.a, chunk, 0.0f, f.y + n0, pool,
               best_gemm_isa(), epilogue);
    }
  }

  int64_t chunk_rows(int64_t kp) const {
    return std::clamp<int64_t>(kInt4ChunkFloats / kp, 16, std::max<int64_t>(s_.n, 16));
  }

  // The product with the constant 4-bit weights (int4), A [m, K] of A's type.
  Status run_int4(const Tensor& a, int64_t m, const Tensor* bias, Tensor& out, ThreadPool& pool) const {
    const Int4Weights w = w_.int4->view();
    const int64_t kp = w.padded_k();
    const bool direct = m <= kInt4DirectRows;
    const int64_t rows = chunk_rows(kp);
    const FloatOperands f = float_operands(a, m, kp, bias, out, direct ? 0 : rows * kp);
    if (direct) {
      // Tiles of four weight rows; a range should carry at least ~64k multiply-adds.
      const int64_t tiles = (s_.n + 3) / 4;
      const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / (4 * kp * m));
      pool.parallel_for(tiles, grain, [&](int64_t begin, int64_t end) {
        int4_matmul_rows(w, f.a, kp, m, begin * 4, std::min(end * 4, s_.n), f.bias, f.y, s_.n);
      });
    } else {
      run_dequantized_chunks(f, m, kp, f.extra, rows, pool, [&](int64_t first, int64_t end, float* chunk) {
        int4_dequantize_rows(w, first, end, chunk);
      });
    }
    if (a.dtype() != DataType::kFloat32) store_rounded(f.y, out);
    return Status::ok();
  }

  // The product with the constant 8-bit weights (int8) and float A.
  Status run_int8(const Tensor& a, int64_t m, const Tensor* bias, Tensor& out, ThreadPool& pool) const {
    const Int8Panels w = w_.int8->view();
    const int64_t kp = w.padded_k();
    const bool direct = m <= kInt4DirectRows;
    const int64_t rows = chunk_rows(kp);
    const FloatOperands f = float_operands(a, m, kp, bias, out, direct ? m * s_.k_blocks : rows * kp);
    if (direct) {
      float* const a_sums = f.extra;  // each block's sum of each row of A
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t b = 0; b < s_.k_blocks; ++b) {
          const float* block = f.a + i * kp + b * s_.block;
          float sum = 0.0f;
          for (int64_t t = 0; t < s_.block; ++t) sum += block[t];
          a_sums[i * s_.k_blocks + b] = sum;
        }
      }
      const int64_t panels = (s_.n + w.panel - 1) / w.panel;
      const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / (w.panel * kp * m));
      pool.parallel_for(panels, grain, [&](int64_t begin, int64_t end) {
        int8_weight_matmul_rows(w, f.a, kp, a_sums, m, begin, end, s_.n, f.bias, f.y, s_.n);
      });
    } else {
      run_dequantized_chunks(f, m, kp, f.extra, rows, pool, [&](int64_t first, int64_t end, float* chunk) {
        int8_weight_dequantize_rows(w, first, end, chunk);
      });
    }
    if (a.dtype() != DataType::kFloat32) store_rounded(f.y, out);
    return Status::ok();
  }

  // A quantized to int8 per block (as onnxruntime does at accuracy_level 4, at any row count, so prefill and decode
  // agree with it alike), then product(rows, panel_begin, panel_end, bias, y) over ranges of panels of `panel`
  // weight rows.
  template <class Product>
  Status run_int8_a(const Tensor& a, int64_t m, int64_t kp, int64_t panel, const Tensor* bias, Tensor& out,
                    ThreadPool& pool, const Product& product) const {
    const bool is_float = a.dtype() == DataType::kFloat32;
    // Floats: A and Y (half types), the bias, A's block scales and scaled sums; then A's block sums (int32) and
    // codes (int8).
    const int64_t a_floats = is_float ? 0 : m * s_.k;
    const int64_t y_floats = is_float ? 0 : m * s_.n;
    const int64_t floats = a_floats + y_floats + s_.n + 2 * m * s_.k_blocks;
    char* const buffer = static_cast<char*>(scratch_buffer(
        ScratchUse::kContribProjection, static_cast<size_t>(floats * 4 + m * s_.k_blocks * 4 + m * kp)));
    float* const a_f = reinterpret_cast<float*>(buffer);
    float* const y_f = is_float ? out.data<float>() : a_f + a_floats;
    float* const bias_f = a_f + a_floats + y_floats;
    float* const a_scales = bias_f + s_.n;
    float* const a_scaled_sums = a_scales + m * s_.k_blocks;
    int32_t* const a_sums = reinterpret_cast<int32_t*>(buffer + floats * 4);
    int8_t* const a_codes = reinterpret_cast<int8_t*>(a_sums + m * s_.k_blocks);
    if (bias != nullptr) {
      for (int64_t j = 0; j < s_.n; ++j) bias_f[j] = float_of(*bias, j);
    }
    for (int64_t i = 0; i < a_floats; ++i) a_f[i] = float_of(a, i);
    // Rows quantized in parallel when there are many (a prompt); a few rows stay on this thread.
    const float* const a_floats_in = is_float ? a.data<float>() : a_f;
    pool.parallel_for(m, std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, s_.k)),
                      [&](int64_t begin, int64_t end) {
                        const int64_t at = begin * s_.k_blocks;
                        quantize_int8_blocks(a_floats_in + begin * s_.k, s_.k, end - begin, s_.k, s_.k_blocks, s_.block,
                                             a_codes + begin * kp, a_scales + at, a_sums + at);
                        scale_block_sums(a_scales + at, a_sums + at, (end - begin) * s_.k_blocks, a_scaled_sums + at);
                      });
    const Int8Rows rows{a_codes, a_scales, a_sums, a_scaled_sums};
    const int64_t panels = (s_.n + panel - 1) / panel;
    // A single row streams the weights from memory: one contiguous range per thread keeps each thread's reads one
    // sequential stream (interleaved smaller chunks restart the hardware prefetch at every chunk). Several rows
    // are bound by the multiplies: long ranges first, for the same reason, and short ones last, so that the
    // threads finish together.
    const float* bias_ptr = bias != nullptr ? bias_f : nullptr;
    const auto panels_of = [&](int64_t begin, int64_t end) { product(rows, begin, end, bias_ptr, y_f); };
    if (m == 1) {
      pool.parallel_for(panels, std::max<int64_t>(1, panels / pool.num_threads()), panels_of);
    } else {
      pool.parallel_for(panels, std::max<int64_t>(1, (int64_t{1} << 16) / (panel * kp * m)), panels_of,
                        ThreadPool::RangeSplit::kShrinking);
    }
    if (!is_float) store_rounded(y_f, out);
    return Status::ok();
  }

  Status run_int4_int8(const Tensor& a, int64_t m, const Tensor* bias, Tensor& out, ThreadPool& pool) const {
    const Int4Panels w = w_.int4_panels->view();
    return run_int8_a(a, m, w.padded_k(), w.panel, bias, out, pool,
                      [&](const Int8Rows& rows, int64_t begin, int64_t end, const float* bias_f, float* y) {
                        int4_matmul_int8(w, rows, m, begin, end, s_.n, bias_f, y, s_.n);
                      });
  }

  Status run_int8_int8(const Tensor& a, int64_t m, const Tensor* bias, Tensor& out, ThreadPool& pool) const {
    const Int8Panels w = w_.int8->view();
    return run_int8_a(a, m, w.padded_k(), w.panel, bias, out, pool,
                      [&](const Int8Rows& rows, int64_t begin, int64_t end, const float* bias_f, float* y) {
                        int8_weight_matmul_int8(w, rows, m, begin, end, s_.n, bias_f, y, s_.n);
                      });
  }

  Status check(KernelInputs inputs) const {
    TRY(require_inputs(inputs, 3, description_));
    TRY(check_input_type(inputs, 0, kHalfOrFloat, description_));
    const Tensor& a = *inputs[0];
    if (a.rank() < 1 || a.shape().back() != s_.k) {
      return error("A " + shape_to_string(a.shape()) + " must end in K = " + std::to_string(s_.k));
    }
    TRY(check_weights(inputs, s_, description_));
    if (const Tensor* bias = optional_input(inputs, 5);
        bias != nullptr && (bias->dtype() != a.dtype() || bias->numel() != s_.n)) {
      return error("bias must be [N] of A's type");
    }
    if (inputs[2]->dtype() != a.dtype()) return error("scales must have A's type");
    return Status::ok();
  }

 public:
  // B, scales and zero_points against the attributes (also used at creation for constant weights).
  static Status check_weights(KernelInputs inputs, const NBitsShape& s, const std::string& description) {
    const auto fail = [&](const std::string& what) {
      return make_error(StatusCode::kInvalidArgument, description, ": ", what);
    };
    const Tensor& b = *inputs[1];
    if (b.dtype() != DataType::kUInt8) return fail("B must be uint8");
    if (b.numel() == 0) return Status::ok();  // an omitted projection
    if (b.shape() != Shape{s.n, s.k_blocks, s.blob}) {
      return fail("B " + shape_to_string(b.shape()) + " must be [N, k_blocks, blob] = " +
                  shape_to_string(Shape{s.n, s.k_blocks, s.blob}));
    }
    const Tensor& scales = *inputs[2];
    if (((kHalfOrFloat >> static_cast<int>(scales.dtype())) & 1u) == 0 || scales.numel() != s.n * s.k_blocks) {
      return fail("scales must hold N * k_blocks = " + std::to_string(s.n * s.k_blocks) + " floats");
    }
    if (const Tensor* zero = optional_input(inputs, 3)) {
      const bool packed = zero->dtype() == DataType::kUInt8;
      const int64_t want = packed ? s.n * ((s.k_blocks * s.bits + 7) / 8) : s.n * s.k_blocks;
      if ((!packed && zero->dtype() != scales.dtype()) || zero->numel() != want) {
        return fail("zero_points must be packed uint8 [N, ceil(k_blocks * bits / 8)] or [N, k_blocks] of the "
                    "scales' type");
      }
    }
    if (optional_input(inputs, 4) != nullptr) {
      return make_error(StatusCode::kNotImplemented, description, ": g_idx (deprecated) is not supported");
    }
    return Status::ok();
  }

 private:
  Status error(const std::string& what) const {
    return make_error(StatusCode::kInvalidArgument, description_, ": ", what);
  }

  std::string description_;
  NBitsShape s_;
  PackedWeights w_;
};

Expected<std::unique_ptr<Kernel>> create_matmul_nbits(const KernelInfo& info) {
  const std::string description = info.node.describe();
  NBitsShape s;
  TRY_ASSIGN(s.k, info.node.attr_int("K", -1));
  TRY_ASSIGN(s.n, info.node.attr_int("N", -1));
  TRY_ASSIGN(s.bits, info.node.attr_int("bits", 4));
  TRY_ASSIGN(s.block, info.node.attr_int("block_size", 0));
  TRY_ASSIGN(const int64_t prepacked, info.node.attr_int("weight_prepacked", 0));
  TRY_ASSIGN(const int64_t accuracy_level, info.node.attr_int("accuracy_level", 0));
  const bool power_of_two = s.block >= 16 && s.block <= (int64_t{1} << 20) && (s.block & (s.block - 1)) == 0;
  if (s.k < 0 || s.n < 0 || s.k > (int64_t{1} << 40) || s.n > (int64_t{1} << 40) ||
      (s.bits != 2 && s.bits != 4 && s.bits != 8) || !power_of_two) {
    return make_error(StatusCode::kInvalidArgument, description, ": attributes K and N (required, nonnegative), ",
                      "bits (2, 4 or 8) and block_size (a power of two >= 16) are out of range");
  }
  if (prepacked != 0) {
    return make_error(StatusCode::kNotImplemented, description, ": weight_prepacked layouts are CUDA-only");
  }
  s.k_blocks = (s.k + s.block - 1) / s.block;
  s.blob = s.block * s.bits / 8;
  PackedWeights packed;
  packed.int8_a = accuracy_level == 4;
  const auto constant = [&](size_t i) { return i < info.constant_inputs.size() ? info.constant_inputs[i] : nullptr; };
  const bool zero_ready = info.node.inputs.size() <= 3 || info.node.inputs[3] == graph::kNoValue || constant(3);
  const bool weights_ready = constant(1) != nullptr && constant(2) != nullptr && zero_ready && constant(1)->numel() > 0;
  if (weights_ready) {
    const std::vector<const Tensor*> weights = {nullptr, constant(1), constant(2), constant(3), nullptr};
    TRY(MatMulNBitsKernel::check_weights(weights, s, description));
  }
  if (weights_ready && s.bits == 4 && packed.int8_a) {
    packed.int4_panels = Int4PanelPacked::pack(s, *constant(1), *constant(2), constant(3));
  } else if (weights_ready && s.bits == 4 && s.block % 32 == 0) {
    packed.int4 = Int4Packed::pack(s, *constant(1), *constant(2), constant(3));
  } else if (weights_ready && s.bits == 8) {
    packed.int8 = Int8WeightPacked::pack(s, *constant(1), *constant(2), constant(3));
  } else if (weights_ready && static_cast<double>(s.n) * static_cast<double>(s.k) < 0x1p31) {
    std::vector<float> w(static_cast<size_t>(s.n * s.k));
    dequantize_weights(s, *constant(1), *constant(2), constant(3), w.data());
    packed.floats = PackedB<float>::pack(GemmArgs{false, true, 0, s.n, s.k, 0, s.k, 0}, w.data());
  }
  // Packed weights are all the run reads of B, scales and zero points.
  if (packed.int4_panels || packed.int4 || packed.int8 || packed.floats) {
    for (size_t i = 1; i <= 3; ++i) info.release_constant_pages(i);
  }
  return std::unique_ptr<Kernel>(std::make_unique<MatMulNBitsKernel>(description, s, std::move(packed)));
}

const KernelDef kContribQuantKernels[] = {
    {"MatMulNBits", graph::kMsDomain, 1, kLatestOpset, kHalfOrFloat, 0, create_matmul_nbits},
};

}  // namespace

std::span<const KernelDef> contrib_quant_kernels() { return kContribQuantKernels; }

}  // namespace nxrt::cpu
