// Window attribute parsing, geometry resolution and the im2col/col2im + GEMM convolution core.
#include "ep/cpu/conv_common.h"

#include <algorithm>

namespace nxrt::cpu::conv {

namespace {

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

}  // namespace

int64_t Geometry::in_size() const { return product(in); }
int64_t Geometry::out_size() const { return product(out); }
int64_t Geometry::kernel_size() const { return product(kernel); }

Expected<WindowAttrs> parse_window_attrs(const graph::Node& node) {
  WindowAttrs attrs;
  TRY_ASSIGN(const std::string auto_pad, node.attr_string("auto_pad", "NOTSET"));
  if (auto_pad == "NOTSET" || auto_pad.empty()) {
    attrs.auto_pad = AutoPad::kNotSet;
  } else if (auto_pad == "SAME_UPPER") {
    attrs.auto_pad = AutoPad::kSameUpper;
  } else if (auto_pad == "SAME_LOWER") {
    attrs.auto_pad = AutoPad::kSameLower;
  } else if (auto_pad == "VALID") {
    attrs.auto_pad = AutoPad::kValid;
  } else {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": unsupported auto_pad '", auto_pad, "'");
  }
  TRY_ASSIGN(attrs.kernel_shape, node.attr_ints("kernel_shape", {}));
  TRY_ASSIGN(attrs.strides, node.attr_ints("strides", {}));
  TRY_ASSIGN(attrs.pads, node.attr_ints("pads", {}));
  TRY_ASSIGN(attrs.dilations, node.attr_ints("dilations", {}));
  TRY_ASSIGN(attrs.group, node.attr_int("group", 1));
  TRY_ASSIGN(const int64_t ceil_mode, node.attr_int("ceil_mode", 0));
  attrs.ceil_mode = ceil_mode != 0;
  for (int64_t k : attrs.kernel_shape) {
    if (k <= 0) return make_error(StatusCode::kInvalidGraph, node.describe(), ": kernel_shape values must be > 0");
  }
  for (int64_t s : attrs.strides) {
    if (s <= 0) return make_error(StatusCode::kInvalidGraph, node.describe(), ": strides values must be > 0");
  }
  for (int64_t d : attrs.dilations) {
    if (d <= 0) return make_error(StatusCode::kInvalidGraph, node.describe(), ": dilations values must be > 0");
  }
  for (int64_t p : attrs.pads) {
    if (p < 0) return make_error(StatusCode::kInvalidGraph, node.describe(), ": pads values must be >= 0");
  }
  if (attrs.pads.size() % 2 != 0) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": pads must have an even number of values");
  }
  if (attrs.group <= 0) return make_error(StatusCode::kInvalidGraph, node.describe(), ": group must be > 0");
  return attrs;
}

Status check_attr_length(const std::vector<int64_t>& values, size_t expected, const char* name,
                         const std::string& description) {
  if (!values.empty() && values.size() != expected) {
    return make_error(StatusCode::kInvalidArgument, description, ": attribute ", name, " has ", values.size(),
                      " values, expected ", expected);
  }
  return Status::ok();
}

Expected<Geometry> resolve_geometry(const WindowAttrs& attrs, std::span<const int64_t> in,
                                    std::span<const int64_t> kernel, const std::string& description) {
  const size_t rank = in.size();
  if (kernel.size() != rank) {
    return make_error(StatusCode::kInvalidArgument, description, ": kernel has ", kernel.size(),
                      " spatial dims but the input has ", rank);
  }
  TRY(check_attr_length(attrs.strides, rank, "strides", description));
  TRY(check_attr_length(attrs.dilations, rank, "dilations", description));
  TRY(check_attr_length(attrs.pads, 2 * rank, "pads", description));
  Geometry g;
  g.in.assign(in.begin(), in.end());
  g.kernel.assign(kernel.begin(), kernel.end());
  g.stride = attrs.strides.empty() ? std::vector<int64_t>(rank, 1) : attrs.strides;
  g.dilation = attrs.dilations.empty() ? std::vector<int64_t>(rank, 1) : attrs.dilations;
  g.pad_begin.assign(rank, 0);
  g.pad_end.assign(rank, 0);
  g.out.assign(rank, 0);
  for (size_t i = 0; i < rank; ++i) {
    if (g.kernel[i] <= 0) {
      return make_error(StatusCode::kInvalidArgument, description, ": kernel dim ", i, " is ", g.kernel[i]);
    }
    const int64_t s = g.stride[i];
    const int64_t dilated = (g.kernel[i] - 1) * g.dilation[i] + 1;
    switch (attrs.auto_pad) {
      case AutoPad::kNotSet: {
        if (!attrs.pads.empty()) {
          g.pad_begin[i] = attrs.pads[i];
          g.pad_end[i] = attrs.pads[i + rank];
        }
        const int64_t span = g.in[i] + g.pad_begin[i] + g.pad_end[i] - dilated;
        if (span < 0) {
          return make_error(StatusCode::kInvalidArgument, description, ": input spatial dim ", i, " (", g.in[i],
                            " plus pads) is smaller than the dilated kernel (", dilated, ")");
        }
        int64_t out = (attrs.ceil_mode ? (span + s - 1) / s : span / s) + 1;
        if (attrs.ceil_mode && (out - 1) * s >= g.in[i] + g.pad_begin[i]) --out;
        g.out[i] = out;
        break;
      }
      case AutoPad::kSameUpper:
      case AutoPad::kSameLower: {
        g.out[i] = (g.in[i] + s - 1) / s;
        const int64_t needed = std::max<int64_t>(0, (g.out[i] - 1) * s + dilated - g.in[i]);
        const int64_t small = needed / 2;
        g.pad_begin[i] = attrs.auto_pad == AutoPad::kSameUpper ? small : needed - small;
        g.pad_end[i] = needed - g.pad_begin[i];
        break;
      }
      case AutoPad::kValid: {
        if (g.in[i] < dilated) {
          return make_error(StatusCode::kInvalidArgument, description, ": input spatial dim ", i, " (", g.in[i],
                            ") is smaller than the dilated kernel (", dilated, ") with auto_pad VALID");
        }
        g.out[i] = (g.in[i] - dilated) / s + 1;
        break;
      }
    }
  }
  return g;
}

void gemm(const GemmArgs& args, const float* a, const float* b, float* c, ThreadPool& pool) {
  gemm_f32(args, 1.0f, a, b, 0.0f, c, pool);
}
void gemm(const GemmArgs& args, const double* a, const double* b, double* c, ThreadPool& pool) {
  gemm_f64(args, 1.0, a, b, 0.0, c, pool);
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
  std::vector<int64_t> counter(rank, 0);
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

// Row r = (c, k...) of the column matrix: x[c] sampled at every output position for tap k (0 in padding).
template <class Acc>
void im2col_row(const Acc* x, const Geometry& g, int64_t r, int64_t* k, Acc* dst) {
  const int64_t ksize = g.kernel_size();
  const size_t last = g.rank() - 1;
  const int64_t w_out = g.out[last];
  const int64_t w_in = g.in[last];
  const int64_t stride = g.stride[last];
  const Acc* plane = x + (r / ksize) * g.in_size();
  kernel_indices(g, r % ksize, k);
  for_each_row(g, k, [&](int64_t out_offset, int64_t in_offset, int64_t first) {
    Acc* out = dst + out_offset;
    if (in_offset < 0) {
      std::fill(out, out + w_out, Acc{0});
      return;
    }
    const Acc* src = plane + in_offset;
    const ValidRange v = valid_range(first, stride, w_in, w_out);
    std::fill(out, out + v.begin, Acc{0});
    if (stride == 1 && v.end > v.begin) {
      std::copy(src + (first + v.begin), src + (first + v.end), out + v.begin);
    } else {
      for (int64_t j = v.begin; j < v.end; ++j) out[j] = src[first + j * stride];
    }
    std::fill(out + v.end, out + w_out, Acc{0});
  });
}

template <class Acc>
void im2col_rows(const Acc* x, const Geometry& g, int64_t row_begin, int64_t row_end, Acc* col) {
  const int64_t out_size = g.out_size();
  std::vector<int64_t> k(g.rank());
  for (int64_t r = row_begin; r < row_end; ++r) im2col_row(x, g, r, k.data(), col + r * out_size);
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

constexpr int64_t kSmallOutputGroup = 2;
constexpr int64_t kColumnBudget = int64_t{1} << 22;  // elements of one im2col buffer

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
  if (parallel) {
    pool.parallel_for(items, 1, [&](int64_t begin, int64_t end) {
      std::vector<Acc> scratch;
      for (int64_t item = begin; item < end; ++item) run_item(item, scratch, false);
    });
  } else {
    std::vector<Acc> scratch;
    for (int64_t item = 0; item < items; ++item) run_item(item, scratch, true);
  }
}

}  // namespace

template <class Acc>
void conv_forward(const Acc* x, const Acc* w, const Acc* bias, Acc* y, int64_t batch, int64_t in_channels,
                  int64_t out_channels, int64_t group, const Geometry& g, ThreadPool& pool) {
  const int64_t in_per_group = in_channels / group;
  const int64_t out_per_group = out_channels / group;
  const int64_t ksize = g.kernel_size();
  const int64_t in_size = g.in_size();
  const int64_t out_size = g.out_size();
  const int64_t k_dim = in_per_group * ksize;
  const bool pointwise = is_pointwise(g);
  const int64_t items = batch * group;
  if (items == 0 || out_size == 0 || out_per_group == 0) return;
  const int64_t inner_out = out_size / g.out[0];
  const int64_t rows_per_tile =
      std::clamp<int64_t>(kColumnBudget / std::max<int64_t>(1, k_dim * inner_out), 1, g.out[0]);

  auto run_item = [&](int64_t item, std::vector<Acc>& col, bool parallel_inner) {
    const int64_t n = item / group;
    const int64_t gi = item % group;
    const Acc* xg = x + (n * in_channels + gi * in_per_group) * in_size;
    const Acc* wg = w + gi * out_per_group * k_dim;
    Acc* yg = y + (n * out_channels + gi * out_per_group) * out_size;
    if (k_dim == 0) {
      std::fill(yg, yg + out_per_group * out_size, Acc{0});
    } else if (out_per_group <= kSmallOutputGroup && !pointwise) {
      // Few outputs per group (depthwise): accumulate one column row at a time instead of a thin GEMM.
      std::fill(yg, yg + out_per_group * out_size, Acc{0});
      col.resize(static_cast<size_t>(out_size));
      std::vector<int64_t> k(g.rank());
      for (int64_t r = 0; r < k_dim; ++r) {
        im2col_row(xg, g, r, k.data(), col.data());
        for (int64_t m = 0; m < out_per_group; ++m) {
          const Acc weight = wg[m * k_dim + r];
          Acc* row = yg + m * out_size;
          for (int64_t j = 0; j < out_size; ++j) row[j] += weight * col[static_cast<size_t>(j)];
        }
      }
    } else {
      GemmArgs args;
      args.m = out_per_group;
      args.k = k_dim;
      args.lda = k_dim;
      args.ldc = out_size;
      if (pointwise) {
        args.n = out_size;
        args.ldb = out_size;
        gemm(args, wg, xg, yg, pool);
      } else {
        // The column matrix covers a tile of the first output spatial dim at a time (bounded memory); a tile is
        // the same window with fewer outputs and the begin padding shifted by the skipped outputs.
        Geometry tile = g;
        for (int64_t first = 0; first < g.out[0]; first += rows_per_tile) {
          tile.out[0] = std::min(rows_per_tile, g.out[0] - first);
          tile.pad_begin[0] = g.pad_begin[0] - first * g.stride[0];
          const int64_t tile_size = tile.out[0] * inner_out;
          col.resize(static_cast<size_t>(k_dim * tile_size));
          if (parallel_inner) {
            pool.parallel_for(k_dim, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, tile_size)),
                              [&](int64_t begin, int64_t end) { im2col_rows(xg, tile, begin, end, col.data()); });
          } else {
            im2col_rows(xg, tile, 0, k_dim, col.data());
          }
          args.n = tile_size;
          args.ldb = tile_size;
          gemm(args, wg, col.data(), yg + first * inner_out, pool);
        }
      }
    }
    if (bias != nullptr) {
      for (int64_t m = 0; m < out_per_group; ++m) {
        const Acc v = bias[gi * out_per_group + m];
        Acc* row = yg + m * out_size;
        for (int64_t j = 0; j < out_size; ++j) row[j] += v;
      }
    }
  };

  for_each_item<Acc>(items, k_dim * out_size, pool, run_item);
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
  std::fill(y, y + y_total, Acc{0});
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
        if (parallel_inner) {
          pool.parallel_for(out_per_group, 1,
                            [&](int64_t begin, int64_t end) { col2im_channels(col.data(), tile, begin, end, yg); });
        } else {
          col2im_channels(col.data(), tile, 0, out_per_group, yg);
        }
      }
    }
    if (bias != nullptr) {
      for (int64_t m = 0; m < out_per_group; ++m) {
        const Acc v = bias[gi * out_per_group + m];
        Acc* row = yg + m * image_size;
        for (int64_t j = 0; j < image_size; ++j) row[j] += v;
      }
    }
  };

  for_each_item<Acc>(items, rows * source_size, pool, run_item);
}

template void conv_forward<float>(const float*, const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t,
                                  const Geometry&, ThreadPool&);
template void conv_forward<double>(const double*, const double*, const double*, double*, int64_t, int64_t, int64_t,
                                   int64_t, const Geometry&, ThreadPool&);
template void conv_transpose_forward<float>(const float*, const float*, const float*, float*, int64_t, int64_t, int64_t,
                                            int64_t, const Geometry&, ThreadPool&);
template void conv_transpose_forward<double>(const double*, const double*, const double*, double*, int64_t, int64_t,
                                             int64_t, int64_t, const Geometry&, ThreadPool&);

}  // namespace nxrt::cpu::conv
