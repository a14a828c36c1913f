// Driver of the Winograd F(2x2, 3x3) convolution: weight transform, blocks of tile rows, and per block the
// input transform, the 16 element products (direct micro-kernel) and the output transform.
#include "ep/cpu/conv/conv_winograd.h"

#include <algorithm>
#include <vector>

#include "core/scratch_space.h"
#include "ep/cpu/microkernels/cpu_features.h"
#include "ep/cpu/run_limits.h"

namespace nxrt::cpu::conv {

namespace {

// Floats of one block's transformed inputs and products (16 x (in + out channels) x tiles): at most 896 KiB,
// so that the products read the inputs and the output transform reads the products from a 1 MiB L2.
constexpr int64_t kBlockFloats = int64_t{7} << 15;
constexpr int64_t kSlack = 16;  // floats past the transformed inputs that the micro-kernel may read

// Tile rows per block, at most max_rows: the count with the shortest estimated run on `threads` threads, in
// units of the micro-kernel's 48-tile steps (a last step of one or two 16-tile vectors costs about 0.6 or 0.8
// of a full one), plus the transforms (about 0.05 of a step per 48 tiles) and a fixed cost per block for their
// setup; the larger count on ties. Counting the transforms per tile matters where the steps tie: 14 tile rows
// on 2 threads as 8 + 6 rows ran 20% longer than as 7 + 7.
int64_t pick_rows_per_block(int64_t batch, int64_t tile_rows, int64_t tiles_per_row, int64_t max_rows,
                            int64_t threads) {
  int64_t best = max_rows;
  double best_time = 0.0;
  for (int64_t rows = max_rows; rows >= 1; --rows) {
    const int64_t vectors = (rows * tiles_per_row + 15) / 16;
    const double tail_cost[3] = {0.0, 0.6, 0.8};
    const double block_cost = static_cast<double>(vectors / 3) + tail_cost[vectors % 3] + 0.2 +
                              0.05 * static_cast<double>(rows * tiles_per_row) / 48.0;
    const int64_t blocks = batch * ((tile_rows + rows - 1) / rows);
    const double time = static_cast<double>((blocks + threads - 1) / threads) * block_cost;
    if (rows == max_rows || time < best_time - 1e-9) {
      best = rows;
      best_time = time;
    }
  }
  return best;
}

// u = G g G^T for one 3x3 kernel g (row-major), G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]].
void transform_kernel(const float* g, float u[kWinogradElements]) {
  const double rows[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  double gg[4][3];  // G g
  for (int a = 0; a < 4; ++a) {
    for (int l = 0; l < 3; ++l) {
      gg[a][l] = rows[a][0] * g[l] + rows[a][1] * g[3 + l] + rows[a][2] * g[6 + l];
    }
  }
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      u[a * 4 + b] = static_cast<float>(gg[a][0] * rows[b][0] + gg[a][1] * rows[b][1] + gg[a][2] * rows[b][2]);
    }
  }
}

}  // namespace

WinogradWeights WinogradWeights::pack(const float* w, int64_t out_channels, int64_t in_channels) {
  const int64_t pairs = out_channels * in_channels;
  std::vector<float> transformed(static_cast<size_t>(kWinogradElements * pairs));  // [xi][out][in]
  float u[kWinogradElements];
  for (int64_t pair = 0; pair < pairs; ++pair) {
    transform_kernel(w + pair * 9, u);
    for (int xi = 0; xi < kWinogradElements; ++xi) transformed[static_cast<size_t>(xi * pairs + pair)] = u[xi];
  }
  WinogradWeights packed;
  for (int xi = 0; xi < kWinogradElements; ++xi) {
    packed.elements_[static_cast<size_t>(xi)] =
        DirectConvWeights::pack(transformed.data() + xi * pairs, out_channels, in_channels, 1, 1);
  }
  return packed;
}

bool winograd_weights_fit(int64_t out_channels, int64_t in_channels, int64_t kernel_h, int64_t kernel_w) {
  return kernel_h == 3 && kernel_w == 3 && in_channels >= 16 && out_channels >= 16;
}

bool winograd_applies(int64_t group, const Geometry& g, int64_t in_channels, int64_t out_channels) {
  if (!cpu_isa_at_least(CpuIsa::kAvx2) || group != 1 || g.rank() != 2) return false;
  if (!winograd_weights_fit(out_channels, in_channels, g.kernel[0], g.kernel[1])) return false;
  if (g.stride[0] != 1 || g.stride[1] != 1 || g.dilation[0] != 1 || g.dilation[1] != 1) return false;
  return g.out[0] >= 4 && g.out[1] >= 8;
}

void conv_winograd_f32(const float* x, const WinogradWeights& w, float* y, int64_t batch, const Geometry& g,
                       ThreadPool& pool, const ConvEpilogue<float>& epilogue) {
#if defined(__x86_64__)
  const int64_t in_channels = w.in_channels(), out_channels = w.out_channels();
  const int64_t in_h = g.in[0], in_w = g.in[1], out_h = g.out[0], out_w = g.out[1];
  const int64_t tile_rows = (out_h + 1) / 2, tiles_per_row = (out_w + 1) / 2;
  const int64_t floats_per_tile_row = kWinogradElements * (in_channels + out_channels) * tiles_per_row;
  const int64_t max_rows = std::clamp<int64_t>(kBlockFloats / floats_per_tile_row, 1, tile_rows);
  const int64_t rows_per_block =
      pick_rows_per_block(batch, tile_rows, tiles_per_row, max_rows, pool.num_threads());
  const int64_t blocks_per_image = (tile_rows + rows_per_block - 1) / rows_per_block;
  const int64_t max_tiles = rows_per_block * tiles_per_row;
  const int64_t v_floats = kWinogradElements * in_channels * max_tiles + kSlack;
  const int64_t m_floats = kWinogradElements * out_channels * max_tiles + kSlack;
  const int64_t blocks_of_channels = (out_channels + kDirectConvBlock - 1) / kDirectConvBlock;
  const int64_t in_plane = in_h * in_w, out_plane = out_h * out_w;

  const DirectConvKernels kernels = direct_conv_kernels();
  const bool wide = cpu_isa_at_least(CpuIsa::kAvx512);
  const auto input_row = wide ? f32_winograd_input_row__avx512 : f32_winograd_input_row__avx2;
  const auto output_row = wide ? f32_winograd_output_row__avx512 : f32_winograd_output_row__avx2;
  const RunLimits* limits = current_run_limits();
  pool.parallel_for(batch * blocks_per_image, 1, [&](int64_t begin, int64_t end) {
    float* const v = scratch_floats(ScratchUse::kConvWinogradTiles, v_floats + m_floats);
    float* const m = v + v_floats;
    std::fill(v + v_floats - kSlack, v + v_floats, 0.0f);
    for (int64_t task = begin; task < end && !run_should_stop(limits); ++task) {
      const int64_t n = task / blocks_per_image;
      const int64_t first_row = (task % blocks_per_image) * rows_per_block;
      const int64_t last_row = std::min(tile_rows, first_row + rows_per_block);
      const int64_t tiles = (last_row - first_row) * tiles_per_row;
      WinogradInputRow in_row;
      in_row.in_h = in_h;
      in_row.in_w = in_w;
      in_row.pad_left = g.pad_begin[1];
      in_row.tiles = tiles_per_row;
      for (int64_t ci = 0; ci < in_channels; ++ci) {
        in_row.x = x + (n * in_channels + ci) * in_plane;
        for (int64_t ti = first_row; ti < last_row; ++ti) {
          in_row.top = 2 * ti - g.pad_begin[0];
          input_row(in_row, v + ci * tiles + (ti - first_row) * tiles_per_row, in_channels * tiles);
        }
      }
      // Element xi: m[xi] [out_channels x tiles] = U[xi] [out x in] x v[xi] [in x tiles], as a one-tap direct
      // convolution over a 1 x tiles grid.
      static const int64_t kOneTap = 0;
      DirectConvJob job;
      job.plane_stride = tiles;
      job.grid_w = tiles;
      job.taps = &kOneTap;
      job.tap_count = 1;
      job.in_channels = in_channels;
      job.out_channels = out_channels;
      job.out_h = 1;
      job.out_w = tiles;
      job.out_plane_stride = tiles;
      for (int xi = 0; xi < kWinogradElements; ++xi) {
        job.padded = v + xi * in_channels * tiles;
        job.weights = w.element(xi).data();
        job.y = m + xi * out_channels * tiles;
        // 48-tile steps outer: a step's inputs (in_channels x 48 floats) stay in L1 for every channel block.
        for (int64_t q0 = 0; q0 < tiles; q0 += 48) {
          const int64_t q1 = std::min(tiles, q0 + 48);
          for (int64_t block = 0; block < blocks_of_channels; ++block) kernels.conv(job, block, q0, q1);
        }
      }
      WinogradOutputRow out_row;
      out_row.out_w = out_w;
      out_row.tiles = tiles_per_row;
      out_row.activation = epilogue.activation;
      for (int64_t co = 0; co < out_channels; ++co) {
        out_row.bias = epilogue.bias != nullptr ? epilogue.bias[co] : 0.0f;
        for (int64_t ti = first_row; ti < last_row; ++ti) {
          const int64_t offset = (n * out_channels + co) * out_plane + 2 * ti * out_w;
          out_row.y = y + offset;
          out_row.z = epilogue.z != nullptr ? epilogue.z + offset : nullptr;
          out_row.rows = static_cast<int>(std::min<int64_t>(2, out_h - 2 * ti));
          output_row(out_row, m + co * tiles + (ti - first_row) * tiles_per_row, out_channels * tiles);
        }
      }
    }
  });
#else
  (void)x, (void)w, (void)y, (void)batch, (void)g, (void)pool, (void)epilogue;
#endif
}

}  // namespace nxrt::cpu::conv
