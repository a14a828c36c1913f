// Driver of the direct convolution (AVX-512 and AVX2 micro-kernels): weight packing, the padded phase-split input scratch, the tap table
// and the split of each image's output grid into runs of 16-output vectors that run in parallel.
#include "ep/cpu/conv/conv_direct.h"

#include <algorithm>
#include <cstring>

#include "core/scratch_space.h"
#include "ep/cpu/microkernels/cpu_features.h"
#include "ep/cpu/run_limits.h"

namespace nxrt::cpu::conv {

namespace {

constexpr int64_t kVectorSlack = 16;      // floats readable past the scratch's last phase row
constexpr int64_t kChunkVectors = 24;     // 16-output vectors per work unit (a multiple of the kernel's 3)
constexpr int64_t kStripeFloats = int64_t{1} << 20;  // padded scratch of one stripe of output rows (4 MiB)

// Geometry of the padded, phase-split scratch of one image (see DirectConvJob).
struct PaddedLayout {
  int64_t rows;       // padded rows the outputs read
  int64_t phase_rows; // rows of one phase sub-image
  int64_t grid_w;     // floats per row of one phase sub-image
  int64_t sub_size;   // phase_rows * grid_w
  int64_t plane_stride;
};

PaddedLayout padded_layout(const Geometry& g) {
  PaddedLayout l;
  const int64_t sh = g.stride[0], sw = g.stride[1];
  l.rows = (g.out[0] - 1) * sh + g.kernel[0];
  const int64_t cols = (g.out[1] - 1) * sw + g.kernel[1];
  l.phase_rows = (l.rows + sh - 1) / sh;
  l.grid_w = (cols + sw - 1) / sw;
  l.sub_size = l.phase_rows * l.grid_w;
  l.plane_stride = sh * sw * l.sub_size;
  return l;
}

// Where padded columns p, p + sw, p + 2 sw, ... of phase p read the input: slots [lo, hi) of a phase row take
// input columns first + i * sw; the slots before and after are pads. The same for every row of a plane.
struct PhaseColumns {
  int64_t first = 0;
  int64_t lo = 0;
  int64_t hi = 0;
};

PhaseColumns phase_columns(int64_t p, const Geometry& g, const PaddedLayout& l) {
  const int64_t sw = g.stride[1], in_w = g.in[1];
  PhaseColumns c;
  c.first = p - g.pad_begin[1];
  c.lo = c.first >= 0 ? 0 : std::min(l.grid_w, (-c.first + sw - 1) / sw);
  c.hi = c.first >= in_w ? c.lo : std::clamp<int64_t>((in_w - c.first + sw - 1) / sw, c.lo, l.grid_w);
  return c;
}

// Writes the phase sub-images of channel plane `x` ([H, W]) into `dst`; every float of the plane is written.
void fill_padded_plane(const float* x, const Geometry& g, const PaddedLayout& l, float* dst,
                       const DirectConvKernels& kernels) {
  const int64_t in_h = g.in[0], in_w = g.in[1];
  const int64_t pad_top = g.pad_begin[0], pad_left = g.pad_begin[1];
  const int64_t sh = g.stride[0], sw = g.stride[1];
  constexpr int64_t kMaxStride = 8;
  PhaseColumns columns[kMaxStride];
  const bool tabled = sw <= kMaxStride;
  for (int64_t p = 0; tabled && p < sw; ++p) columns[p] = phase_columns(p, g, l);
  // Row r of the padded image (r < phase_rows * sh; rows past l.rows pad the last phase rows) is phase row
  // r / sh of row phase r % sh; walking (row phase, phase row) avoids dividing per row.
  for (int64_t row_phase = 0; row_phase < sh; ++row_phase) {
    float* row = dst + row_phase * sw * l.sub_size;
    for (int64_t r = row_phase; r < l.phase_rows * sh; r += sh, row += l.grid_w) {
      const int64_t ih = r - pad_top;
      if (ih < 0 || ih >= in_h || r >= l.rows) {
        for (int64_t p = 0; p < sw; ++p) std::fill(row + p * l.sub_size, row + p * l.sub_size + l.grid_w, 0.0f);
        continue;
      }
      const float* src = x + ih * in_w;
      for (int64_t p = 0; p < sw; ++p) {
        const PhaseColumns c = tabled ? columns[p] : phase_columns(p, g, l);
        float* phase = row + p * l.sub_size;
        std::fill(phase, phase + c.lo, 0.0f);
        std::fill(phase + c.hi, phase + l.grid_w, 0.0f);
        if (sw == 1) {
          std::memcpy(phase + c.lo, src + c.first + c.lo, static_cast<size_t>(c.hi - c.lo) * sizeof(float));
        } else if (sw != 2) {
          for (int64_t i = c.lo; i < c.hi; ++i) phase[i] = src[c.first + i * sw];
        }
      }
      if (sw == 2) {
        // Both phases start at input column 0 or 1: the one starting at an even column takes the even columns.
        const int p_even = (columns[0].lo * 2 - pad_left) % 2 == 0 ? 0 : 1;
        const PhaseColumns& even = columns[p_even];
        const PhaseColumns& odd = columns[1 - p_even];
        kernels.deinterleave(src + even.first + even.lo * 2, even.hi - even.lo,
                             row + p_even * l.sub_size + even.lo, odd.hi - odd.lo,
                             row + (1 - p_even) * l.sub_size + odd.lo);
      }
    }
  }
}

}  // namespace

DirectConvKernels direct_conv_kernels() {
  DirectConvKernels kernels;
#if defined(__x86_64__)
  if (cpu_isa_at_least(CpuIsa::kAvx512)) {
    kernels.conv = f32_conv_direct_8x48__avx512;
    kernels.depthwise = f32_conv_depthwise__avx512;
    kernels.deinterleave = f32_deinterleave__avx512;
  } else if (cpu_isa_at_least(CpuIsa::kAvx2)) {
    kernels.conv = f32_conv_direct_8x24__avx2;
    kernels.depthwise = f32_conv_depthwise__avx2;
    kernels.deinterleave = f32_deinterleave__avx2;
  }
#endif
  return kernels;
}

DirectConvWeights DirectConvWeights::pack(const float* w, int64_t out_channels, int64_t in_channels,
                                          int64_t kernel_h, int64_t kernel_w) {
  DirectConvWeights packed;
  packed.out_channels_ = out_channels;
  packed.in_channels_ = in_channels;
  packed.kernel_h_ = kernel_h;
  packed.kernel_w_ = kernel_w;
  const int64_t blocks = (out_channels + kDirectConvBlock - 1) / kDirectConvBlock;
  const int64_t per_channel = in_channels * kernel_h * kernel_w;
  packed.packed_.assign(static_cast<size_t>(blocks * per_channel * kDirectConvBlock), 0.0f);
  if (per_channel == 0) return packed;
  for (int64_t m = 0; m < out_channels; ++m) {
    float* dst = packed.packed_.data() + (m / kDirectConvBlock) * per_channel * kDirectConvBlock +
                 m % kDirectConvBlock;
    const float* src = w + m * per_channel;
    for (int64_t j = 0; j < per_channel; ++j) dst[j * kDirectConvBlock] = src[j];
  }
  return packed;
}

// True when the padded, phase-split plane of padded_layout is of image size: at most 2^24 padded columns and 2^32
// floats over all stride phases, computed as padded_layout does but in 128 bits (strides and kernel sizes come from
// the model and may be anything), so that its sizes, and their products with a channel count (at most 2^33 for a
// tensor that exists), fit in int64.
bool padded_layout_fits(const Geometry& g) {
  using Wide = __int128;
  constexpr Wide kMaxColumns = Wide{1} << 24;
  constexpr Wide kMaxPlane = Wide{1} << 32;
  const Wide sh = g.stride[0], sw = g.stride[1];
  if (sh <= 0 || sw <= 0 || sh > kMaxColumns || sw > kMaxColumns) return false;
  const Wide rows = static_cast<Wide>(g.out[0] - 1) * sh + g.kernel[0];
  const Wide cols = static_cast<Wide>(g.out[1] - 1) * sw + g.kernel[1];
  if (rows > kMaxPlane || cols > kMaxColumns) return false;
  const Wide plane = sh * sw * ((rows + sh - 1) / sh) * ((cols + sw - 1) / sw);
  return plane <= kMaxPlane;
}

namespace {

// At the avx2 tier each 8-channel block runs as two 4-channel halves that both read the strided phase inputs, and
// im2col + GEMM measured faster for strided convolutions with long patches and many output channels, or an input
// past 2 MiB (Zen 4, 3x3 stride 2: 24-192 -> 48-384 channels, or 8 channels at 416 x 416, 5-20% slower direct;
// 3-16 input channels or at most 32 outputs 10-25% faster direct).
bool avx2_strided_conv_pays(int64_t in_channels, int64_t out_channels, const Geometry& g) {
  constexpr int64_t kShortPatch = 160;  // in_channels * kernel taps
  constexpr int64_t kFewOutputs = 32;
  constexpr int64_t kMaxInputFloats = int64_t{1} << 19;
  const int64_t taps = std::max<int64_t>(1, g.kernel[0] * g.kernel[1]);  // each below 2^32 (padded_layout_fits)
  const int64_t plane = std::max<int64_t>(1, g.in[0] * g.in[1]);
  return (in_channels <= kShortPatch / taps || out_channels <= kFewOutputs) && in_channels <= kMaxInputFloats / plane;
}

}  // namespace

bool direct_conv_applies(int64_t group, const Geometry& g, int64_t in_channels, int64_t out_channels) {
  if (!cpu_isa_at_least(CpuIsa::kAvx2) || group != 1 || g.rank() != 2) return false;
  if (g.dilation[0] != 1 || g.dilation[1] != 1) return false;
  if (g.kernel[0] * g.kernel[1] == 1) return false;  // 1x1: the GEMM path reads x (or a strided copy) directly
  if (!padded_layout_fits(g)) return false;
  const int64_t grid_w = padded_layout(g).grid_w;
  if (grid_w < 16 || 2 * g.out[1] < grid_w) return false;
  return cpu_isa_at_least(CpuIsa::kAvx512) || (g.stride[0] == 1 && g.stride[1] == 1) ||
         avx2_strided_conv_pays(in_channels, out_channels, g);
}

namespace {

// Where tap (kh, kw) reads grid position 0 in the padded, phase-split plane, row-major over the taps.
std::vector<int64_t> tap_offsets(const Geometry& g, const PaddedLayout& layout) {
  std::vector<int64_t> taps(static_cast<size_t>(g.kernel[0] * g.kernel[1]));
  for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
    for (int64_t kw = 0; kw < g.kernel[1]; ++kw) {
      const int64_t phase = (kh % g.stride[0]) * g.stride[1] + kw % g.stride[1];
      taps[static_cast<size_t>(kh * g.kernel[1] + kw)] =
          phase * layout.sub_size + (kh / g.stride[0]) * layout.grid_w + kw / g.stride[1];
    }
  }
  return taps;
}

// One horizontal stripe of one image, its own convolution: x is the stripe's first input row (channels
// in_plane apart), y / z its first output row (channels out_plane apart), g its geometry.
void run_stripe(const float* x, int64_t in_plane, const Geometry& g, float* y, const float* z, int64_t out_plane,
                const DirectConvWeights& w, const ConvEpilogue<float>& epilogue, ThreadPool& pool) {
  const int64_t in_channels = w.in_channels();
  const int64_t out_h = g.out[0], out_w = g.out[1];
  const PaddedLayout layout = padded_layout(g);
  const DirectConvKernels kernels = direct_conv_kernels();
  const std::vector<int64_t> taps = tap_offsets(g, layout);
  // fill_padded_plane writes every float the kernel reads but the slack.
  const int64_t padded_floats = in_channels * layout.plane_stride + kVectorSlack;
  float* const scratch = scratch_floats(ScratchUse::kConvPaddedPlanes, padded_floats);  // shared by the tasks
  std::fill(scratch + padded_floats - kVectorSlack, scratch + padded_floats, 0.0f);
  pool.parallel_for(in_channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      fill_padded_plane(x + c * in_plane, g, layout, scratch + c * layout.plane_stride, kernels);
    }
  });
  DirectConvJob job;
  job.padded = scratch;
  job.plane_stride = layout.plane_stride;
  job.grid_w = layout.grid_w;
  job.taps = taps.data();
  job.tap_count = static_cast<int64_t>(taps.size());
  job.weights = w.data();
  job.in_channels = in_channels;
  job.out_channels = w.out_channels();
  job.out_h = out_h;
  job.out_w = out_w;
  job.out_plane_stride = out_plane;
  job.y = y;
  job.z = z;
  job.bias = epilogue.bias;
  job.activation = epilogue.activation;
  // Work units are runs of whole 3-vector tiles of the output grid, so only the very last tile is partial.
  const int64_t threads = pool.num_threads();
  const int64_t blocks = (job.out_channels + kDirectConvBlock - 1) / kDirectConvBlock;
  const int64_t q_total = (out_h - 1) * layout.grid_w + out_w;
  const int64_t vectors = (q_total + 15) / 16;
  int64_t chunk = std::min<int64_t>(kChunkVectors, (vectors + 4 * threads - 1) / (4 * threads));
  chunk = std::max<int64_t>(3, (chunk + 2) / 3 * 3) * 16;
  const int64_t chunks = (q_total + chunk - 1) / chunk;
  const RunLimits* limits = current_run_limits();
  pool.parallel_for(chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t unit = begin; unit < end && !run_should_stop(limits); ++unit) {
      const int64_t q_begin = unit * chunk;
      const int64_t q_end = std::min(q_total, q_begin + chunk);
      for (int64_t block = 0; block < blocks; ++block) kernels.conv(job, block, q_begin, q_end);
    }
  });
}

}  // namespace

void conv_direct_f32_rows(const float* image, const DirectConvWeights& w, const Geometry& g, int64_t o0,
                          int64_t o1, float* y, const float* z, int64_t out_plane, ThreadPool& pool,
                          const ConvEpilogue<float>& epilogue) {
#if defined(__x86_64__)
  const int64_t in_channels = w.in_channels();
  const int64_t out_w = g.out[1];
  const int64_t in_plane = g.in[0] * g.in[1];
  const int64_t sh = g.stride[0];
  // Stripes of output rows bound the padded scratch (about in_channels * sw * grid_w floats per padded row).
  const int64_t floats_per_row = std::max<int64_t>(1, in_channels * g.stride[1] * padded_layout(g).grid_w);
  const int64_t stripe_rows =
      std::clamp<int64_t>((kStripeFloats / floats_per_row - g.kernel[0]) / sh, 1, std::max<int64_t>(1, o1 - o0));
  for (int64_t s0 = o0; s0 < o1; s0 += stripe_rows) {
    const int64_t s1 = std::min(o1, s0 + stripe_rows);
    // Input rows [first, last) feed the stripe; the ones outside [0, in_h) become its pads.
    const int64_t first = s0 * sh - g.pad_begin[0];
    const int64_t last = (s1 - 1) * sh - g.pad_begin[0] + g.kernel[0];
    const int64_t i0 = std::clamp<int64_t>(first, 0, g.in[0]);
    const int64_t i1 = std::clamp<int64_t>(last, i0, g.in[0]);
    Geometry stripe = g;
    stripe.in[0] = i1 - i0;
    stripe.out[0] = s1 - s0;
    stripe.pad_begin[0] = i0 - first;
    stripe.pad_end[0] = std::max<int64_t>(0, last - i1);
    const int64_t row = (s0 - o0) * out_w;
    run_stripe(image + i0 * g.in[1], in_plane, stripe, y + row, z ? z + row : nullptr, out_plane, w, epilogue,
               pool);
  }
#else
  (void)image, (void)w, (void)g, (void)o0, (void)o1, (void)y, (void)z, (void)out_plane, (void)pool, (void)epilogue;
#endif
}

void conv_direct_f32(const float* x, const DirectConvWeights& w, float* y, int64_t batch, const Geometry& g,
                     ThreadPool& pool, const ConvEpilogue<float>& epilogue) {
  const int64_t in_image = w.in_channels() * g.in[0] * g.in[1];
  const int64_t out_plane = g.out[0] * g.out[1];
  const int64_t out_image = w.out_channels() * out_plane;
  for (int64_t n = 0; n < batch; ++n) {
    conv_direct_f32_rows(x + n * in_image, w, g, 0, g.out[0], y + n * out_image,
                         epilogue.z ? epilogue.z + n * out_image : nullptr, out_plane, pool, epilogue);
  }
}

bool depthwise_conv_applies(int64_t group, const Geometry& g, int64_t in_channels, int64_t out_channels) {
  if (!cpu_isa_at_least(CpuIsa::kAvx2) || g.rank() != 2 || group < 1 || group != in_channels ||
      group != out_channels) {
    return false;
  }
  if (g.dilation[0] != 1 || g.dilation[1] != 1 || g.kernel[0] * g.kernel[1] == 1) return false;
  if (!padded_layout_fits(g)) return false;
  const int64_t grid_w = padded_layout(g).grid_w;
  return grid_w >= 16 && 2 * g.out[1] >= grid_w;
}

void conv_depthwise_f32(const float* x, const float* w, float* y, int64_t batch, int64_t channels, const Geometry& g,
                        ThreadPool& pool, const ConvEpilogue<float>& epilogue) {
#if defined(__x86_64__)
  const PaddedLayout layout = padded_layout(g);
  const std::vector<int64_t> taps = tap_offsets(g, layout);
  const DirectConvKernels kernels = direct_conv_kernels();
  const int64_t in_plane = g.in[0] * g.in[1], out_plane = g.out[0] * g.out[1];
  const int64_t tap_count = static_cast<int64_t>(taps.size());
  const RunLimits* limits = current_run_limits();
  pool.parallel_for(batch * channels, 1, [&](int64_t begin, int64_t end) {
    float* const padded = scratch_floats(ScratchUse::kConvDepthwisePlane, layout.plane_stride + kVectorSlack);
    std::fill(padded + layout.plane_stride, padded + layout.plane_stride + kVectorSlack, 0.0f);
    for (int64_t plane = begin; plane < end && !run_should_stop(limits); ++plane) {
      const int64_t c = plane % channels;
      fill_padded_plane(x + plane * in_plane, g, layout, padded, kernels);
      DirectConvJob job;
      job.padded = padded;
      job.plane_stride = layout.plane_stride;
      job.grid_w = layout.grid_w;
      job.taps = taps.data();
      job.tap_count = tap_count;
      job.weights = w + c * tap_count;
      job.in_channels = 1;
      job.out_channels = 1;
      job.out_h = g.out[0];
      job.out_w = g.out[1];
      job.out_plane_stride = out_plane;
      job.y = y + plane * out_plane;
      job.z = epilogue.z != nullptr ? epilogue.z + plane * out_plane : nullptr;
      job.bias = epilogue.bias != nullptr ? epilogue.bias + c : nullptr;
      job.activation = epilogue.activation;
      kernels.depthwise(job);
    }
  });
#else
  (void)x, (void)w, (void)y, (void)batch, (void)channels, (void)g, (void)pool, (void)epilogue;
#endif
}

}  // namespace nxrt::cpu::conv
