// Winograd F(2x2, 3x3) convolution on the blocked-channel layout (contract in ep/cpu/conv/nchwc.h), written once over
// the block traits of nchwc_conv_kernel.h and included only by translation units compiled for that ISA. Channels sit
// in the 16 lanes, so the input and output transforms are plain vector adds of whole blocks, and the 16 element
// products are the direct kernel's register tile with the 16 transform elements in place of the taps.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ep/cpu/conv/nchwc.h"
#include "ep/cpu/microkernels/nchwc_conv_kernel.h"

namespace nxrt::cpu::nchwc::block_kernel {

inline constexpr int64_t kTileFloats = kBlock * kBlock;  // one 16 x 16 weight block

// d = the 4x4 input window at (ih0, iw0) of one block plane, zeros outside the input.
template <class B>
inline void load_window(const ConvJob& job, const float* plane, int64_t ih0, int64_t iw0, typename B::Reg d[4][4]) {
  const bool inside = ih0 >= 0 && iw0 >= 0 && ih0 + 4 <= job.in_h && iw0 + 4 <= job.in_w;
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 4; ++c) {
      const int64_t ih = ih0 + r, iw = iw0 + c;
      d[r][c] = inside || (ih >= 0 && ih < job.in_h && iw >= 0 && iw < job.in_w)
                    ? B::load(plane + (ih * job.in_w + iw) * kBlock)
                    : B::zero();
    }
  }
}

// v[4 * r + c] = (B^T d B)[r][c], stored `stride` floats apart.
template <class B>
inline void input_transform(typename B::Reg d[4][4], float* v, int64_t stride) {
  typename B::Reg t[4][4];
  for (int c = 0; c < 4; ++c) {
    t[0][c] = B::sub(d[0][c], d[2][c]);
    t[1][c] = B::add(d[1][c], d[2][c]);
    t[2][c] = B::sub(d[2][c], d[1][c]);
    t[3][c] = B::sub(d[1][c], d[3][c]);
  }
  for (int r = 0; r < 4; ++r) {
    B::store(v + (4 * r + 0) * stride, B::sub(t[r][0], t[r][2]));
    B::store(v + (4 * r + 1) * stride, B::add(t[r][1], t[r][2]));
    B::store(v + (4 * r + 2) * stride, B::sub(t[r][2], t[r][1]));
    B::store(v + (4 * r + 3) * stride, B::sub(t[r][1], t[r][3]));
  }
}

// M of P consecutive tiles x OB output blocks for one transform element: sum over input channels of U x V. `v` is
// the element's [in_blocks][chunk][16] at the first tile, `u` its [out block][in block][16 in][16 out] at the first
// block, `m` its [out_blocks][chunk][16] at the first block and tile.
template <class B, int OB, int P>
void element_product(const WinogradLayout& l, const float* v, const float* u, float* m) {
  typename B::Reg acc[OB][P];
#pragma GCC unroll 2
  for (int o = 0; o < OB; ++o) {
#pragma GCC unroll 12
    for (int p = 0; p < P; ++p) acc[o][p] = B::zero();
  }
  const int64_t u_block_stride = l.in_blocks * kTileFloats;
  const int64_t chunk_floats = kWinogradChunkTiles * kBlock;
  for (int64_t i = 0; i < l.in_blocks; ++i) {
    const float* x = v + i * chunk_floats;
    asm("" : "+r"(x));  // keeps the broadcasts at x + constant (see nchwc_conv_kernel.h)
    accumulate_block<B, OB, P>(acc, x, kBlock, u + i * kTileFloats, u_block_stride);
  }
#pragma GCC unroll 2
  for (int o = 0; o < OB; ++o) {
#pragma GCC unroll 12
    for (int p = 0; p < P; ++p) B::store(m + (o * kWinogradChunkTiles + p) * kBlock, acc[o][p]);
  }
}

template <class B, int OB, int P = B::kTilePixels>
void element_product_of(int tiles, const WinogradLayout& l, const float* v, const float* u, float* m) {
  if constexpr (P > 0) {
    if (tiles == P) return element_product<B, OB, P>(l, v, u, m);
    return element_product_of<B, OB, P - 1>(tiles, l, v, u, m);
  }
}

// The 2x2 outputs (A^T M A) of one tile and output block, with the epilogue, where they fall inside the output.
template <class B>
inline void output_transform(const ConvJob& job, const float* m, int64_t stride, int64_t block, int64_t oh0,
                             int64_t ow0) {
  using Reg = typename B::Reg;
  Reg r[2][4];
  for (int c = 0; c < 4; ++c) {
    const Reg m0 = B::load(m + c * stride), m1 = B::load(m + (4 + c) * stride);
    const Reg m2 = B::load(m + (8 + c) * stride), m3 = B::load(m + (12 + c) * stride);
    r[0][c] = B::add(B::add(m0, m1), m2);
    r[1][c] = B::sub(B::sub(m1, m2), m3);
  }
  for (int i = 0; i < 2; ++i) {
    const int64_t oh = oh0 + i;
    if (oh >= job.out_h) break;
    const Reg y[2] = {B::add(B::add(r[i][0], r[i][1]), r[i][2]), B::sub(B::sub(r[i][1], r[i][2]), r[i][3])};
    for (int j = 0; j < 2 && ow0 + j < job.out_w; ++j) store_output<B>(job, block, oh, ow0 + j, y[j]);
  }
}

template <class B, int OB>
void winograd_rows(const ConvJob& job, const WinogradLayout& l, int64_t th_begin, int64_t th_end, float* scratch) {
  const float* u = job.weights->winograd();
  float* const v = scratch;
  float* const m = scratch + 16 * l.v_element_stride;
  const int64_t tiles_w = (job.out_w + 1) / 2;
  const int64_t in_plane = job.in_h * job.in_w * kBlock;
  // Balanced chunks of the tile row, and balanced groups of at most B::kTilePixels tiles in each: with 12-tile groups,
  // 28 tiles are one chunk of groups 10, 9, 9 rather than 12, 12, 4 (a short group leaves FMA latency exposed).
  const int64_t chunks = (tiles_w + kWinogradChunkTiles - 1) / kWinogradChunkTiles;
  for (int64_t th = th_begin; th < th_end; ++th) {
    const int64_t ih0 = 2 * th - job.pad_top;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      const int64_t t0 = chunk * tiles_w / chunks;
      const int64_t count = (chunk + 1) * tiles_w / chunks - t0;
      const int64_t groups = (count + B::kTilePixels - 1) / B::kTilePixels;
      for (int64_t i = 0; i < l.in_blocks; ++i) {
        for (int64_t t = 0; t < count; ++t) {
          typename B::Reg d[4][4];
          load_window<B>(job, job.x + i * in_plane, ih0, 2 * (t0 + t) - job.pad_left, d);
          input_transform<B>(d, v + (i * kWinogradChunkTiles + t) * kBlock, l.v_element_stride);
        }
      }
      for (int e = 0; e < 16; ++e) {
        const float* u_e = u + e * l.out_blocks * l.in_blocks * kTileFloats;
        for (int64_t block = 0; block < l.out_blocks; block += OB) {
          for (int64_t group = 0; group < groups; ++group) {
            const int64_t g = group * count / groups;
            const int tiles = static_cast<int>((group + 1) * count / groups - g);
            element_product_of<B, OB>(tiles, l, v + e * l.v_element_stride + g * kBlock,
                                      u_e + block * l.in_blocks * kTileFloats,
                                      m + e * l.m_element_stride + (block * kWinogradChunkTiles + g) * kBlock);
          }
        }
      }
      for (int64_t block = 0; block < l.out_blocks; ++block) {
        for (int64_t t = 0; t < count; ++t) {
          output_transform<B>(job, m + (block * kWinogradChunkTiles + t) * kBlock, l.m_element_stride, block, 2 * th,
                              2 * (t0 + t));
        }
        const int64_t ow0 = 2 * t0, pixels = std::min(2 * count, job.out_w - ow0);
        for (int64_t oh = 2 * th; oh < std::min(2 * th + 2, job.out_h); ++oh) {
          activate_stored<B>(job, block, oh, ow0, pixels);
        }
      }
    }
  }
}

// The entry point behind f32_conv_nchwc_winograd_rows__<isa> (nchwc.h).
template <class B>
void conv_nchwc_winograd_rows(const ConvJob& job, int64_t th_begin, int64_t th_end, float* scratch) {
  const WinogradLayout l = winograd_layout(*job.weights);
  if constexpr (B::kMaxBlockGroup == 2) {
    if (conv_block_group(l.out_blocks, 2) == 2) return winograd_rows<B, 2>(job, l, th_begin, th_end, scratch);
  }
  winograd_rows<B, 1>(job, l, th_begin, th_end, scratch);
}

}  // namespace nxrt::cpu::nchwc::block_kernel
