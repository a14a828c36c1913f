// The im2col/col2im + GEMM convolution core.
#include "ep/cpu/conv/conv_common.h"

#include "core/scratch_space.h"
#include "ep/cpu/run_limits.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace nxrt::cpu::conv {

void gemm(const GemmArgs& args, const float* a, const float* b, float* c, ThreadPool& pool) {
  gemm_f32(args, 1.0f, a, b, 0.0f, c, pool);
}
void gemm(const GemmArgs& args, const double* a, const double* b, double* c, ThreadPool& pool) {
  gemm_f64(args, 1.0, a, b, 0.0, c, pool);
}
void gemm(const GemmArgs& args, const float* a, const float* b, float beta, float* c, ThreadPool& pool,
          const GemmEpilogue<float>& epilogue) {
  gemm_f32(args, 1.0f, a, b, beta, c, pool, best_gemm_isa(), epilogue);
}
void gemm(const GemmArgs& args, const double* a, const double* b, double beta, double* c, ThreadPool& pool,
          const GemmEpilogue<double>& epilogue) {
  gemm_f64(args, 1.0, a, b, beta, c, pool, best_gemm_isa(), epilogue);
}

namespace {

// Decodes a flat kernel offset into per-dim kernel indices.
void kernel_indices(const Geometry& g, int64_t flat, int64_t* k) {
  for (size_t d = g.rank(); d-- > 0;) {
    k[d] = flat % g.kernel[d];
    flat /= g.kernel[d];
  }
}

// Visits every output row (all spatial dims but the last) with the input coordinates of tap `k`: calls
// fn(out_row_offset, in_row_offset or -1 when the row lies in padding, first input coordinate of the last dim).
template <class Fn>
void for_each_row(const Geometry& g, const int64_t* k, Fn&& fn) {
  const size_t rank = g.rank();
  const size_t last = rank - 1;
  int64_t rows = 1;
  for (size_t d = 0; d < last; ++d) rows *= g.out[d];
  int64_t counter[kMaxConvRank] = {};
  for (int64_t row = 0; row < rows; ++row) {
    int64_t in_offset = 0;
    bool inside = true;
    for (size_t d = 0; d < last; ++d) {
      const int64_t pos = counter[d] * g.stride[d] - g.pad_begin[d] + k[d] * g.dilation[d];
      if (pos < 0 || pos >= g.in[d]) inside = false;
      in_offset = in_offset * g.in[d] + pos;
    }
    const int64_t first = -g.pad_begin[last] + k[last] * g.dilation[last];
    fn(row * g.out[last], inside ? in_offset * g.in[last] : -1, first);
    for (size_t d = last; d-- > 0;) {
      if (++counter[d] < g.out[d]) break;
      counter[d] = 0;
    }
  }
}

// Outputs j in [begin, end) read input first + j * stride inside [0, in_size); the others read padding.
struct ValidRange {
  int64_t begin;
  int64_t end;
};

ValidRange valid_range(int64_t first, int64_t stride, int64_t in_size, int64_t count) {
  const int64_t begin = first >= 0 ? 0 : std::min(count, (-first + stride - 1) / stride);
  const int64_t end = first >= in_size ? 0 : std::min(count, (in_size - first + stride - 1) / stride);
  return {begin, std::max(begin, end)};
}

// Row r = (c, k...) of the column matrix restricted to the flat output positions [n0, n0 + count): dst[j] is
// x[c] at the input position that tap k reads for output n0 + j, or 0 in padding. Whole output rows (the last
// spatial dim) are handled as one copy (stride 1) or one strided gather plus zero fills at the edges.
template <class Acc>
void im2col_range(const Acc* x, const Geometry& g, int64_t r, int64_t n0, int64_t count, Acc* dst) {
  const size_t rank = g.rank();
  const size_t last = rank - 1;
  const int64_t ksize = g.kernel_size();
  const int64_t w_out = g.out[last];
  const int64_t w_in = g.in[last];
  const int64_t stride = g.stride[last];
  const Acc* plane = x + (r / ksize) * g.in_size();
  int64_t k[kMaxConvRank];
  kernel_indices(g, r % ksize, k);
  int64_t o[kMaxConvRank];
  int64_t rest = n0 / w_out;
  for (size_t d = last; d-- > 0;) {
    o[d] = rest % g.out[d];
    rest /= g.out[d];
  }
  const int64_t first = -g.pad_begin[last] + k[last] * g.dilation[last];
  const ValidRange valid = valid_range(first, stride, w_in, w_out);
  int64_t ow_begin = n0 % w_out;
  Acc* seg = dst;  // where output column ow_begin of the current output row goes
  for (int64_t left = count; left > 0;) {
    const int64_t ow_end = std::min(w_out, ow_begin + left);
    int64_t in_offset = 0;
    bool inside = true;
    for (size_t d = 0; d < last; ++d) {
      const int64_t pos = o[d] * g.stride[d] - g.pad_begin[d] + k[d] * g.dilation[d];
      inside = inside && pos >= 0 && pos < g.in[d];
      in_offset = in_offset * g.in[d] + pos;
    }
    if (!inside) {
      std::fill(seg, seg + (ow_end - ow_begin), Acc{0});
    } else {
      const Acc* src = plane + in_offset * w_in;
      const int64_t lo = std::clamp(valid.begin, ow_begin, ow_end);
      const int64_t hi = std::clamp(valid.end, lo, ow_end);
      std::fill(seg, seg + (lo - ow_begin), Acc{0});
      if (stride == 1) {
        std::copy(src + (first + lo), src + (first + hi), seg + (lo - ow_begin));
      } else {
        for (int64_t j = lo; j < hi; ++j) seg[j - ow_begin] = src[first + j * stride];
      }
      std::fill(seg + (hi - ow_begin), seg + (ow_end - ow_begin), Acc{0});
    }
    seg += ow_end - ow_begin;
    left -= ow_end - ow_begin;
    ow_begin = 0;
    for (size_t d = last; d-- > 0;) {
      if (++o[d] < g.out[d]) break;
      o[d] = 0;
    }
  }
}

constexpr int64_t kMaxTapsPerRow = 16;  // wider kernels take the gather path of im2col_tile_2d

// x[p + i * Stride] for the phases p < stride, each phase contiguous (phase p at out + p * phase_len).
template <int Stride, class Acc>
void split_phases(const Acc* x, int64_t n, int64_t stride, int64_t phase_len, Acc* out) {
  const int64_t s = Stride > 0 ? Stride : stride;
  for (int64_t p = 0; p < s; ++p) {
    Acc* dst = out + p * phase_len;
    const int64_t count = p < n ? (n - p + s - 1) / s : 0;
    for (int64_t i = 0; i < count; ++i) dst[i] = x[p + i * s];
  }
}

// The whole column matrix (in_channels * kh * kw rows) of a 2-D convolution for the flat output positions
// [n0, n0 + count). Each input row is split once into its stride phases so that every tap's run of outputs is
// one contiguous copy (tap kw reads phase (kw * dw - pw) mod sw at offset floor((kw * dw - pw) / sw)).
template <class Acc>
void im2col_tile_2d(const Acc* x, const Geometry& g, int64_t channels, int64_t n0, int64_t count, Acc* col) {
  const int64_t in_h = g.in[0], in_w = g.in[1];
  const int64_t out_w = g.out[1];
  const int64_t kernel_h = g.kernel[0], kernel_w = g.kernel[1];
  const int64_t sh = g.stride[0], sw = g.stride[1];
  const int64_t dh = g.dilation[0], dw = g.dilation[1];
  const int64_t pad_h = g.pad_begin[0], pad_w = g.pad_begin[1];
  const int64_t phase_len = (in_w + sw - 1) / sw;
  Acc* const phases =
      static_cast<Acc*>(scratch_buffer(ScratchUse::kConvPhases, static_cast<size_t>(sw * phase_len + 1) * sizeof(Acc)));
  int64_t taps[kMaxTapsPerRow][3];  // per kw: first valid output, end of valid outputs, offset into the phases
  const bool few_taps = kernel_w <= kMaxTapsPerRow;
  for (int64_t kw = 0; kw < std::min(kernel_w, kMaxTapsPerRow); ++kw) {
    const int64_t shift = kw * dw - pad_w;
    const ValidRange v = valid_range(shift, sw, in_w, out_w);
    const int64_t phase = ((shift % sw) + sw) % sw;
    taps[kw][0] = v.begin;
    taps[kw][1] = v.end;
    taps[kw][2] = phase * phase_len + (shift - phase) / sw;
  }
  const int64_t oh_begin = n0 / out_w;
  const int64_t oh_end = (n0 + count - 1) / out_w + 1;
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t kh = 0; kh < kernel_h; ++kh) {
      Acc* rows = col + (c * kernel_h + kh) * kernel_w * count;
      for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
        const int64_t ow0 = oh == oh_begin ? n0 % out_w : 0;
        const int64_t ow1 = oh == oh_end - 1 ? (n0 + count - 1) % out_w + 1 : out_w;
        Acc* dst = rows + (oh * out_w + ow0 - n0);
        const int64_t ih = oh * sh - pad_h + kh * dh;
        if (ih < 0 || ih >= in_h || !few_taps) {
          for (int64_t kw = 0; kw < kernel_w; ++kw) std::fill(dst + kw * count, dst + kw * count + (ow1 - ow0), Acc{0});
          if (ih < 0 || ih >= in_h) continue;
        }
        const Acc* src = x + (c * in_h + ih) * in_w;
        if (!few_taps) {
          for (int64_t kw = 0; kw < kernel_w; ++kw) {
            const int64_t shift = kw * dw - pad_w;
            const ValidRange v = valid_range(shift, sw, in_w, out_w);
            for (int64_t ow = std::max(v.begin, ow0); ow < std::min(v.end, ow1); ++ow) {
              dst[kw * count + ow - ow0] = src[shift + ow * sw];
            }
          }
          continue;
        }
        const Acc* phase_base = src;
        if (sw == 2) {
          split_phases<2>(src, in_w, sw, phase_len, phases);
          phase_base = phases;
        } else if (sw > 1) {
          split_phases<0>(src, in_w, sw, phase_len, phases);
          phase_base = phases;
        }
        for (int64_t kw = 0; kw < kernel_w; ++kw) {
          Acc* out = dst + kw * count;
          const int64_t lo = std::clamp(taps[kw][0], ow0, ow1);
          const int64_t hi = std::clamp(taps[kw][1], lo, ow1);
          std::fill(out, out + (lo - ow0), Acc{0});
          if (hi > lo) std::memcpy(out + (lo - ow0), phase_base + (taps[kw][2] + lo), (hi - lo) * sizeof(Acc));
          std::fill(out + (hi - ow0), out + (ow1 - ow0), Acc{0});
        }
      }
    }
  }
}

// Inverse of im2col: adds col rows (c, k...) back into the image planes (y must start zeroed). Rows of one
// channel touch only that channel's plane, so channels may run in parallel.
template <class Acc>
void col2im_channels(const Acc* col, const Geometry& g, int64_t channel_begin, int64_t channel_end, Acc* y) {
  const int64_t ksize = g.kernel_size();
  const int64_t in_size = g.in_size();
  const int64_t out_size = g.out_size();
  const size_t last = g.rank() - 1;
  const int64_t w_out = g.out[last];
  const int64_t w_in = g.in[last];
  const int64_t stride = g.stride[last];
  std::vector<int64_t> k(g.rank());
  for (int64_t c = channel_begin; c < channel_end; ++c) {
    Acc* plane = y + c * in_size;
    for (int64_t kk = 0; kk < ksize; ++kk) {
      const Acc* src = col + (c * ksize + kk) * out_size;
      kernel_indices(g, kk, k.data());
      for_each_row(g, k.data(), [&](int64_t out_offset, int64_t in_offset, int64_t first) {
        if (in_offset < 0) return;
        Acc* dst = plane + in_offset;
        const Acc* row = src + out_offset;
        const ValidRange v = valid_range(first, stride, w_in, w_out);
        for (int64_t j = v.begin; j < v.end; ++j) dst[first + j * stride] += row[j];
      });
    }
  }
}

// A 2-D transposed conv whose kernel equals its stride, without pads, dilation or output padding (upsampling by
// whole patches, as FPN heads do): every output element comes from exactly one column entry, so the columns of source
// rows [first, first + source_rows) are stored with the bias into the output instead of added into a zeroed image.
bool disjoint_patches(const Geometry& g) {
  if (g.rank() != 2) return false;
  for (size_t d = 0; d < 2; ++d) {
    if (g.kernel[d] != g.stride[d] || g.dilation[d] != 1 || g.pad_begin[d] != 0 || g.pad_end[d] != 0 ||
        g.in[d] != g.out[d] * g.stride[d]) {
      return false;
    }
  }
  return true;
}

// dst[j * 2 + kw] = src_kw[j] + b for j < n: two column rows interleaved into one output row, written in order.
template <class Acc>
void interleave_pair(const Acc* src0, const Acc* src1, Acc b, int64_t n, Acc* dst) {
  int64_t j = 0;
#if defined(__SSE2__)
  if constexpr (std::is_same_v<Acc, float>) {
    const __m128 bias = _mm_set1_ps(b);
    for (; j + 4 <= n; j += 4) {
      const __m128 a = _mm_add_ps(_mm_loadu_ps(src0 + j), bias);
      const __m128 c = _mm_add_ps(_mm_loadu_ps(src1 + j), bias);
      _mm_storeu_ps(dst + 2 * j, _mm_unpacklo_ps(a, c));
      _mm_storeu_ps(dst + 2 * j + 4, _mm_unpackhi_ps(a, c));
    }
  }
#endif
  for (; j < n; ++j) {
    dst[2 * j] = src0[j] + b;
    dst[2 * j + 1] = src1[j] + b;
  }
}

template <class Acc>
void store_disjoint_patches(const Acc* col, const Geometry& g, int64_t first, int64_t source_rows, const Acc* bias,
                            int64_t channel_begin, int64_t channel_end, Acc* y) {
  const int64_t kernel_h = g.kernel[0];
  const int64_t kernel_w = g.kernel[1];
  const int64_t source_w = g.out[1];
  const int64_t out_w = g.in[1];
  const int64_t tile_size = source_rows * source_w;
  for (int64_t c = channel_begin; c < channel_end; ++c) {
    const Acc b = bias != nullptr ? bias[c] : Acc{0};
    Acc* plane = y + c * g.in_size();
    for (int64_t r = 0; r < source_rows; ++r) {
      for (int64_t kh = 0; kh < kernel_h; ++kh) {
        Acc* dst = plane + ((first + r) * kernel_h + kh) * out_w;
        const Acc* src = col + (c * kernel_h + kh) * kernel_w * tile_size + r * source_w;  // kw = 0
        if (kernel_w == 2) {
          interleave_pair(src, src + tile_size, b, source_w, dst);
          continue;
        }
        // Output columns in order: column j * kernel_w + kw reads row kw of the patch columns.
        for (int64_t j = 0; j < source_w; ++j) {
          for (int64_t kw = 0; kw < kernel_w; ++kw) dst[j * kernel_w + kw] = src[kw * tile_size + j] + b;
        }
      }
    }
  }
}

constexpr int64_t kSmallOutputGroup = 2;
constexpr int64_t kColumnBudget = int64_t{1} << 22;  // elements of one ConvTranspose column buffer
constexpr int64_t kColumnTileBytes = int64_t{320} << 10;  // one Conv column tile, sized for L2
constexpr int64_t kMinColumnTile = 128;
constexpr int64_t kMaxColumnTile = 256;  // one GEMM column block: a wider tile would repack A for a thin remainder
constexpr int64_t kTileAlign = 16;  // tiles are whole GEMM column strips where the output allows

bool is_pointwise(const Geometry& g) {
  for (size_t d = 0; d < g.rank(); ++d) {
    if (g.kernel[d] != 1 || g.stride[d] != 1 || g.pad_begin[d] != 0 || g.pad_end[d] != 0) return false;
  }
  return true;
}

// Many small independent (batch, group) items run one per task; few large ones run one after another with
// the parallelism inside im2col and the GEMM.
// Runs run_item(item, scratch, inner_parallel) for every item: items in parallel (each worker with its own
// scratch, inner work serial) when there are enough small items, else one by one with parallel inner work.
template <class Acc, class RunItem>
void for_each_item(int64_t items, int64_t work_per_item, ThreadPool& pool, RunItem&& run_item) {
  const bool parallel = items >= 2 * static_cast<int64_t>(pool.num_threads()) && work_per_item < (int64_t{1} << 22);
  const RunLimits* limits = current_run_limits();
  if (parallel) {
    pool.parallel_for(items, 1, [&](int64_t begin, int64_t end) {
      std::vector<Acc> scratch;
      for (int64_t item = begin; item < end && !run_should_stop(limits); ++item) run_item(item, scratch, false);
    });
  } else {
    std::vector<Acc> scratch;
    for (int64_t item = 0; item < items && !run_should_stop(limits); ++item) run_item(item, scratch, true);
  }
}

}  // namespace

template <class Acc>
void conv_forward(const Acc* x, const Acc* w, Acc* y, int64_t batch, int64_t in_channels, int64_t out_channels,
                  int64_t group, const Geometry& g, ThreadPool& pool, const ConvEpilogue<Acc>& epilogue) {
  const int64_t in_per_group = in_channels / group;
  const int64_t out_per_group = out_channels / group;
  const int64_t in_size = g.in_size();
  const int64_t out_size = g.out_size();
  const int64_t k_dim = in_per_group * g.kernel_size();
  const bool pointwise = is_pointwise(g);
  const bool few_outputs = out_per_group <= kSmallOutputGroup && !pointwise;
  const int64_t items = batch * group;
  if (items == 0 || out_size == 0 || out_per_group == 0) return;
  const int64_t threads = pool.num_threads();
  // Output positions per tile: the tile's column matrix (k_dim x tile) stays in L2 while the GEMM reads it.
  const int64_t tile_elements = kColumnTileBytes / static_cast<int64_t>(sizeof(Acc));
  const int64_t budget =
      std::clamp<int64_t>(tile_elements / std::max<int64_t>(1, k_dim), kMinColumnTile, kMaxColumnTile);
  int64_t tiles = (out_size + budget - 1) / budget;
  if (items < threads && tiles < 4 * threads && out_size >= 2 * kMinColumnTile * threads) {
    tiles = (tiles + threads - 1) / threads * threads;  // balance few tiles over the threads
  }
  int64_t tile = (out_size + tiles - 1) / tiles;
  if (tiles > 1) tile = std::min(out_size, (tile + kTileAlign - 1) / kTileAlign * kTileAlign);
  tiles = (out_size + tile - 1) / tile;
  const int64_t units = items * tiles;
  const FusedActivation& activation = epilogue.activation;

  // The unit's column buffer on the thread running it.
  const auto columns = [](int64_t elements) {
    return static_cast<Acc*>(scratch_buffer(ScratchUse::kConvColumns, static_cast<size_t>(elements) * sizeof(Acc)));
  };
  auto run_unit = [&](int64_t unit, ThreadPool& gemm_pool) {
    const int64_t item = unit / tiles;
    const int64_t n0 = (unit % tiles) * tile;
    const int64_t count = std::min(tile, out_size - n0);
    const int64_t n = item / group;
    const int64_t gi = item % group;
    const Acc* xg = x + (n * in_channels + gi * in_per_group) * in_size;
    const Acc* wg = w + gi * out_per_group * k_dim;
    const int64_t y_offset = (n * out_channels + gi * out_per_group) * out_size + n0;
    Acc* yg = y + y_offset;
    const Acc* bias = epilogue.bias ? epilogue.bias + gi * out_per_group : nullptr;
    for (int64_t m = 0; m < out_per_group; ++m) {
      Acc* row = yg + m * out_size;
      const Acc* z_row = epilogue.z ? epilogue.z + y_offset + m * out_size : nullptr;
      if (z_row != nullptr) {
        if (z_row != row) std::copy(z_row, z_row + count, row);
      } else if (k_dim == 0 || few_outputs) {
        std::fill(row, row + count, Acc{0});
      }
    }
    if (k_dim > 0 && !few_outputs) {
      GemmArgs args;
      args.m = out_per_group;
      args.n = count;
      args.k = k_dim;
      args.lda = k_dim;
      args.ldc = out_size;
      const Acc* b = xg + n0;
      args.ldb = in_size;
      if (!pointwise) {
        Acc* const col = columns(k_dim * count);
        // The tile path splits each input row into its stride phases (stride x ceil(width / stride) values): only
        // for strides up to the row width, so that a huge stride cannot ask for a huge phase buffer.
        if (g.rank() == 2 && g.stride[1] <= std::max<int64_t>(1, g.in[1])) {
          im2col_tile_2d(xg, g, in_per_group, n0, count, col);
        } else {
          for (int64_t r = 0; r < k_dim; ++r) im2col_range(xg, g, r, n0, count, col + r * count);
        }
        b = col;
        args.ldb = count;
      }
      gemm(args, wg, b, epilogue.z != nullptr ? Acc{1} : Acc{0}, yg, gemm_pool,
           GemmEpilogue<Acc>{bias, true, nullptr, 0, activation});
      return;
    }
    // Few outputs per group (depthwise): accumulate one column row at a time instead of a thin GEMM.
    Acc* const col = columns(count);
    for (int64_t r = 0; r < k_dim; ++r) {
      im2col_range(xg, g, r, n0, count, col);
      for (int64_t m = 0; m < out_per_group; ++m) {
        const Acc weight = wg[m * k_dim + r];
        Acc* row = yg + m * out_size;
        for (int64_t j = 0; j < count; ++j) row[j] += weight * col[j];
      }
    }
    for (int64_t m = 0; m < out_per_group; ++m) {
      Acc* row = yg + m * out_size;
      if (bias != nullptr) {
        for (int64_t j = 0; j < count; ++j) row[j] += bias[m];
      }
      apply_activation(activation, row, count);
    }
  };

  const RunLimits* limits = current_run_limits();
  if (units >= threads && threads > 1) {
    // Units run in parallel, each GEMM on the calling thread.
    static ThreadPool serial(1);
    pool.parallel_for(units, 1, [&](int64_t begin, int64_t end) {
      for (int64_t unit = begin; unit < end && !run_should_stop(limits); ++unit) run_unit(unit, serial);
    });
  } else {
    for (int64_t unit = 0; unit < units && !run_should_stop(limits); ++unit) run_unit(unit, pool);
  }
}

bool narrow_conv_applies(int64_t group, const Geometry& g, bool has_z) {
  return group == 1 && !has_z && g.out_size() > 0 && g.out_size() <= kNarrowConvOutputs;
}

PackedB<float> pack_narrow_conv_weights(const float* w, int64_t out_channels, int64_t k_dim) {
  GemmArgs args;
  args.trans_b = true;
  args.k = k_dim;
  args.n = out_channels;
  args.ldb = k_dim;
  return PackedB<float>::pack(args, w);
}

namespace {

// The GEMM's A for a 1-D narrow convolution, row-major: row (image, position) holds, for each input channel, the
// kernel's taps at that position (0 in padding), so each row is written once, front to back.
void narrow_rows_1d(const float* x, const Geometry& g, int64_t images, int64_t channels, float* rows) {
  const int64_t kernel = g.kernel[0];
  const int64_t width = g.in[0];
  const int64_t dilation = g.dilation[0];
  for (int64_t n = 0; n < images; ++n) {
    const float* image = x + n * channels * width;
    for (int64_t i = 0; i < g.out[0]; ++i) {
      const int64_t start = i * g.stride[0] - g.pad_begin[0];
      const bool inside = start >= 0 && start + (kernel - 1) * dilation < width;
      for (int64_t c = 0; c < channels; ++c, rows += kernel) {
        const float* src = image + c * width;
        if (inside && dilation == 1) {
          std::memcpy(rows, src + start, static_cast<size_t>(kernel) * sizeof(float));
          continue;
        }
        for (int64_t k = 0; k < kernel; ++k) {
          const int64_t pos = start + k * dilation;
          rows[k] = pos >= 0 && pos < width ? src[pos] : 0.0f;
        }
      }
    }
  }
}

}  // namespace

void conv_narrow_f32(const float* x, const PackedB<float>& w_t, float* y, int64_t batch, int64_t in_channels,
                     int64_t out_channels, const Geometry& g, ThreadPool& pool, const ConvEpilogue<float>& epilogue) {
  constexpr int64_t kColumnBytes = int64_t{1} << 20;  // one chunk's columns
  const int64_t positions = g.out_size();
  const int64_t k_dim = in_channels * g.kernel_size();
  const int64_t row_bytes = std::max<int64_t>(1, k_dim * positions) * static_cast<int64_t>(sizeof(float));
  const int64_t images_per_chunk = std::clamp<int64_t>(kColumnBytes / row_bytes, 1, batch);
  const int64_t max_rows = images_per_chunk * positions;
  // One buffer: the chunk's columns (k_dim x rows, row r of the GEMM's A is column r) then y^T (rows x
  // out_channels), rows = images x positions.
  const size_t column_elements = static_cast<size_t>(k_dim * max_rows);
  float* const columns = static_cast<float*>(scratch_buffer(
      ScratchUse::kConvColumns, (column_elements + static_cast<size_t>(max_rows * out_channels)) * sizeof(float)));
  float* const y_t = columns + column_elements;
  const GemmEpilogue<float> gemm_epilogue{epilogue.bias, false, nullptr, 0, epilogue.activation};
  const RunLimits* limits = current_run_limits();
  for (int64_t n0 = 0; n0 < batch && !run_should_stop(limits); n0 += images_per_chunk) {
    const int64_t images = std::min(images_per_chunk, batch - n0);
    const int64_t rows = images * positions;
    GemmArgs args;
    args.m = rows;
    args.n = out_channels;
    args.k = k_dim;
    args.ldc = out_channels;
    if (g.rank() == 1) {
      narrow_rows_1d(x + n0 * in_channels * g.in_size(), g, images, in_channels, columns);
      args.lda = k_dim;  // A(i, p) = columns[i * k_dim + p]
    } else {
      for (int64_t n = 0; n < images; ++n) {
        const float* image = x + (n0 + n) * in_channels * g.in_size();
        for (int64_t r = 0; r < k_dim; ++r) im2col_range(image, g, r, 0, positions, columns + r * rows + n * positions);
      }
      args.trans_a = true;  // A(i, p) = columns[p * rows + i]
      args.lda = rows;
    }
    gemm_f32_packed(args, 1.0f, columns, w_t, 0.0f, y_t, pool, gemm_epilogue);
    for (int64_t n = 0; n < images; ++n) {
      float* out = y + (n0 + n) * out_channels * positions;
      const float* in = y_t + n * positions * out_channels;
      for (int64_t c = 0; c < out_channels; ++c) {
        for (int64_t i = 0; i < positions; ++i) out[c * positions + i] = in[i * out_channels + c];
      }
    }
  }
}

template <class Acc>
void conv_transpose_forward(const Acc* x, const Acc* w, const Acc* bias, Acc* y, int64_t batch, int64_t in_channels,
                            int64_t out_channels, int64_t group, const Geometry& g, ThreadPool& pool) {
  const int64_t in_per_group = in_channels / group;
  const int64_t out_per_group = out_channels / group;
  const int64_t ksize = g.kernel_size();
  const int64_t image_size = g.in_size();    // transposed output
  const int64_t source_size = g.out_size();  // transposed input
  const int64_t rows = out_per_group * ksize;
  const int64_t items = batch * group;
  const int64_t y_total = batch * out_channels * image_size;
  const bool disjoint = disjoint_patches(g) && in_per_group > 0;
  if (!disjoint) std::fill(y, y + y_total, Acc{0});
  if (items == 0 || image_size == 0) return;
  const int64_t inner_source = source_size == 0 ? 0 : source_size / g.out[0];
  const int64_t rows_per_tile =
      std::clamp<int64_t>(kColumnBudget / std::max<int64_t>(1, rows * inner_source), 1, std::max<int64_t>(1, g.out[0]));

  auto run_item = [&](int64_t item, std::vector<Acc>& col, bool parallel_inner) {
    const int64_t n = item / group;
    const int64_t gi = item % group;
    const Acc* xg = x + (n * in_channels + gi * in_per_group) * source_size;
    const Acc* wg = w + gi * in_per_group * rows;
    Acc* yg = y + (n * out_channels + gi * out_per_group) * image_size;
    if (in_per_group > 0 && source_size > 0 && rows > 0) {
      GemmArgs args;
      args.trans_a = true;
      args.m = rows;
      args.k = in_per_group;
      args.lda = rows;
      args.ldb = source_size;
      // Tiles of the first input spatial dim bound the column buffer; col2im accumulates, so tiles add up.
      Geometry tile = g;
      for (int64_t first = 0; first < g.out[0]; first += rows_per_tile) {
        tile.out[0] = std::min(rows_per_tile, g.out[0] - first);
        tile.pad_begin[0] = g.pad_begin[0] - first * g.stride[0];
        const int64_t tile_size = tile.out[0] * inner_source;
        col.resize(static_cast<size_t>(rows * tile_size));
        args.n = tile_size;
        args.ldc = tile_size;
        gemm(args, wg, xg + first * inner_source, col.data(), pool);
        if (disjoint) {
          const Acc* bias_g = bias != nullptr ? bias + gi * out_per_group : nullptr;
          const auto store = [&](int64_t begin, int64_t end) {
            store_disjoint_patches(col.data(), g, first, tile.out[0], bias_g, begin, end, yg);
          };
          if (parallel_inner) {
            pool.parallel_for(out_per_group, 1, store);
          } else {
            store(0, out_per_group);
          }
        } else if (parallel_inner) {
          pool.parallel_for(out_per_group, 1,
                            [&](int64_t begin, int64_t end) { col2im_channels(col.data(), tile, begin, end, yg); });
        } else {
          col2im_channels(col.data(), tile, 0, out_per_group, yg);
        }
      }
    }
    if (bias != nullptr && !disjoint) {
      for (int64_t m = 0; m < out_per_group; ++m) {
        const Acc v = bias[gi * out_per_group + m];
        Acc* row = yg + m * image_size;
        for (int64_t j = 0; j < image_size; ++j) row[j] += v;
      }
    }
  };

  for_each_item<Acc>(items, rows * source_size, pool, run_item);
}

template void conv_forward<float>(const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t,
                                  const Geometry&, ThreadPool&, const ConvEpilogue<float>&);
template void conv_forward<double>(const double*, const double*, double*, int64_t, int64_t, int64_t, int64_t,
                                   const Geometry&, ThreadPool&, const ConvEpilogue<double>&);
template void conv_transpose_forward<float>(const float*, const float*, const float*, float*, int64_t, int64_t, int64_t,
                                            int64_t, const Geometry&, ThreadPool&);
template void conv_transpose_forward<double>(const double*, const double*, const double*, double*, int64_t, int64_t,
                                             int64_t, int64_t, const Geometry&, ThreadPool&);

}  // namespace nxrt::cpu::conv
