// MaxPool, AveragePool, LpPool, GlobalMaxPool, GlobalAveragePool, GlobalLpPool, and the pool family table,
// which also lists MaxUnpool, MaxRoiPool and RoiAlign (pool_roi.cpp).
// Windows follow conv_common's geometry (ceil_mode, dilations, auto_pad). A window reads only taps inside the
// input; AveragePool divides by that count, or with count_include_pad by the taps inside input plus the
// explicit pads (taps added by ceil_mode are never counted). MaxPool's Indices are flat offsets into X,
// row-major over the spatial dims (storage_order 0) or column-major (1); the first maximum wins and NaN only
// survives in an all-NaN window. A window with no tap inside the input (possible with dilations or pads as wide
// as the window) and an empty plane of the Global ops: the average of no values is NaN (0 / 0, as the reference
// gives it; with count_include_pad the pads are values, so 0), LpPool 0, MaxPool 0 with Indices -1.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/scratch_space.h"
#include "ep/cpu/conv/conv_direct.h"
#include "ep/cpu/last_shape_cache.h"
#include "ep/cpu/microkernels/cpu_features.h"
#include "ep/cpu/pool/pool_kernels.h"

namespace nxrt::cpu {

namespace {

using conv::Geometry;
using conv::WindowAttrs;

enum class PoolKind { kMax, kAverage, kLp };

constexpr size_t kMaxPoolRank = 8;

struct PoolOptions {
  PoolKind kind = PoolKind::kMax;
  bool global = false;
  bool count_include_pad = false;
  bool column_major_indices = false;
  bool with_indices = false;
  double p = 2.0;
};

// Taps [lo, hi) of one spatial dim that fall inside the input, and how many fall inside input plus pads.
struct TapRange {
  int64_t lo;
  int64_t hi;
  int64_t padded;
};

TapRange tap_range(const Geometry& g, size_t d, int64_t o) {
  const int64_t start = o * g.stride[d] - g.pad_begin[d];
  const int64_t dil = g.dilation[d];
  const int64_t k = g.kernel[d];
  auto taps_below = [&](int64_t limit) {  // taps j with start + j * dil < limit
    if (limit <= start) return int64_t{0};
    return std::min(k, (limit - start + dil - 1) / dil);
  };
  const int64_t lo = start >= 0 ? 0 : (-start + dil - 1) / dil;
  const int64_t hi = taps_below(g.in[d]);
  return {std::min(lo, k), std::max(hi, std::min(lo, k)), taps_below(g.in[d] + g.pad_end[d])};
}

// A non-NaN value replaces a NaN maximum, so NaN survives only when every value is NaN.
// Written as "v is a number and not <= best" (the same as v > best || (best is NaN && v is a number)), which
// vectorises to one unordered compare and one ordered compare.
template <class W>
bool take_max(W v, W best) {
  return v == v && !(v <= best);
}

template <class T>
using PoolAcc = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
void pool_plane(const T* x, T* y, int64_t* indices, int64_t plane_index, const Geometry& g, const PoolOptions& opt) {
  using Acc = PoolAcc<T>;
  const size_t rank = g.rank();
  const int64_t in_size = g.in_size();
  const int64_t out_size = g.out_size();
  int64_t in_strides[kMaxPoolRank];
  int64_t index_strides[kMaxPoolRank];
  for (size_t d = rank, s = 1; d-- > 0;) {
    in_strides[d] = static_cast<int64_t>(s);
    s *= static_cast<size_t>(g.in[d]);
  }
  for (size_t d = 0, s = 1; d < rank; ++d) {
    index_strides[d] = opt.column_major_indices ? static_cast<int64_t>(s) : in_strides[d];
    s *= static_cast<size_t>(g.in[d]);
  }
  int64_t o[kMaxPoolRank] = {0};
  TapRange ranges[kMaxPoolRank];
  int64_t j[kMaxPoolRank];
  for (int64_t out = 0; out < out_size; ++out) {
    bool empty = false;
    int64_t padded_count = 1;
    for (size_t d = 0; d < rank; ++d) {
      ranges[d] = tap_range(g, d, o[d]);
      if (ranges[d].lo >= ranges[d].hi) empty = true;
      padded_count *= ranges[d].padded;
      j[d] = ranges[d].lo;
    }
    int64_t count = 0;
    Acc sum{0};
    T best{};
    int64_t best_index = -1;
    while (!empty) {
      int64_t offset = 0;
      int64_t index = 0;
      for (size_t d = 0; d < rank; ++d) {
        const int64_t pos = o[d] * g.stride[d] - g.pad_begin[d] + j[d] * g.dilation[d];
        offset += pos * in_strides[d];
        index += pos * index_strides[d];
      }
      const T v = x[offset];
      if (opt.kind == PoolKind::kMax) {
        if (best_index < 0 || take_max(v, best)) {
          best = v;
          best_index = index;
        }
      } else if (opt.kind == PoolKind::kAverage) {
        sum += static_cast<Acc>(v);
      } else {
        const Acc a = std::abs(static_cast<Acc>(v));
        sum += opt.p == 2.0 ? a * a : opt.p == 1.0 ? a : static_cast<Acc>(std::pow(a, static_cast<Acc>(opt.p)));
      }
      ++count;
      size_t d = rank;
      while (d-- > 0) {
        if (++j[d] < ranges[d].hi) break;
        j[d] = ranges[d].lo;
      }
      if (d == static_cast<size_t>(-1)) break;
    }
    if (opt.kind == PoolKind::kMax) {
      y[out] = best_index < 0 ? T{} : best;
      if (indices != nullptr) indices[out] = best_index < 0 ? -1 : plane_index * in_size + best_index;
    } else if (opt.kind == PoolKind::kAverage) {
      const int64_t divisor = opt.count_include_pad ? padded_count : count;
      y[out] = T(divisor == 0 ? std::numeric_limits<Acc>::quiet_NaN() : sum / static_cast<Acc>(divisor));
    } else {
      y[out] = T(opt.p == 2.0 ? std::sqrt(sum) : std::pow(sum, static_cast<Acc>(1.0 / opt.p)));
    }
    for (size_t d = rank; d-- > 0;) {
      if (++o[d] < g.out[d]) break;
      o[d] = 0;
    }
  }
}

// Rank <= 3 windows as three dims (missing leading dims have size 1). Per input shape, every output index's tap
// range is precomputed, and for the last dim also the output range [out_begin, out_end) in which each tap lies
// inside the input (contiguous, since tap ranges only move forward with the output index).
struct Dim3 {
  int64_t in = 1;
  int64_t dilation = 1;
  int64_t stride = 1;
  int64_t pad_begin = 0;
  std::vector<int64_t> start;
  std::vector<TapRange> taps;
  std::vector<int64_t> out_begin;
  std::vector<int64_t> out_end;
};

struct Plan3 {
  Dim3 dims[3];
  std::vector<int64_t> divisors;  // AveragePool: per output position of a plane, 0 for an empty window
};

Plan3 make_plan3(const Geometry& g, const PoolOptions& opt) {
  Plan3 plan;
  const size_t skip = 3 - g.rank();
  for (size_t i = 0; i < 3; ++i) {
    Dim3& dim = plan.dims[i];
    if (i < skip) {
      dim.start = {0};
      dim.taps = {TapRange{0, 1, 1}};
      continue;
    }
    const size_t d = i - skip;
    dim.in = g.in[d];
    dim.dilation = g.dilation[d];
    dim.stride = g.stride[d];
    dim.pad_begin = g.pad_begin[d];
    for (int64_t o = 0; o < g.out[d]; ++o) {
      dim.start.push_back(o * g.stride[d] - g.pad_begin[d]);
      dim.taps.push_back(tap_range(g, d, o));
    }
  }
  Dim3& last = plan.dims[2];
  const auto out = static_cast<int64_t>(last.taps.size());
  const int64_t kernel = g.kernel[g.rank() - 1];
  for (int64_t c = 0; c < kernel; ++c) {
    int64_t begin = 0;
    while (begin < out &&
           !(last.taps[static_cast<size_t>(begin)].lo <= c && c < last.taps[static_cast<size_t>(begin)].hi)) {
      ++begin;
    }
    int64_t end = begin;
    while (end < out && last.taps[static_cast<size_t>(end)].lo <= c && c < last.taps[static_cast<size_t>(end)].hi)
      ++end;
    last.out_begin.push_back(begin);
    last.out_end.push_back(end);
  }
  if (opt.kind == PoolKind::kAverage) {
    for (const TapRange& a : plan.dims[0].taps) {
      for (const TapRange& b : plan.dims[1].taps) {
        for (const TapRange& c : last.taps) {
          const bool empty = a.lo >= a.hi || b.lo >= b.hi || c.lo >= c.hi;
          const int64_t count = empty ? 0 : (a.hi - a.lo) * (b.hi - b.lo) * (c.hi - c.lo);
          plan.divisors.push_back(opt.count_include_pad ? a.padded * b.padded * c.padded : count);
        }
      }
    }
  }
  return plan;
}

template <class T>
using PoolWork = std::conditional_t<std::is_integral_v<T>, int32_t, PoolAcc<T>>;

// Start value of a running max: any first value replaces it (NaN for floats, see `take_max`).
template <class W>
W max_start() {
  if constexpr (std::is_integral_v<W>) {
    return std::numeric_limits<W>::lowest();
  } else {
    return std::numeric_limits<W>::quiet_NaN();
  }
}

// acc[ow] = max or sum of acc[ow] and src[ow * Stride] for ow in [begin, end).
template <PoolKind Kind, int Stride, class T, class Work>
void tap_run(const T* src, int64_t begin, int64_t end, Work* __restrict acc) {
  for (int64_t ow = begin; ow < end; ++ow) {
    const auto v = static_cast<Work>(src[ow * Stride]);
    if constexpr (Kind == PoolKind::kMax) {
      acc[ow] = take_max(v, acc[ow]) ? v : acc[ow];
    } else {
      acc[ow] += v;
    }
  }
}

// One output row at a time: every tap of the window updates the contiguous run of outputs it is valid for.
template <PoolKind Kind, bool TrackIndex, class T>
void pool_plane3(const T* x, T* y, int64_t* indices, int64_t plane_index, const Plan3& plan, const PoolOptions& opt) {
  using Work = PoolWork<T>;
  const Dim3& dd = plan.dims[0];
  const Dim3& dh = plan.dims[1];
  const Dim3& dw = plan.dims[2];
  const int64_t plane_size = dd.in * dh.in * dw.in;
  const auto out_w = static_cast<int64_t>(dw.taps.size());
  const auto kernel_w = static_cast<int64_t>(dw.out_begin.size());
  const auto p = static_cast<PoolAcc<T>>(opt.p);
  std::vector<Work> acc(static_cast<size_t>(out_w));
  std::vector<int64_t> arg(TrackIndex ? static_cast<size_t>(out_w) : 0);
  int64_t out = 0;
  for (size_t od = 0; od < dd.taps.size(); ++od) {
    const TapRange& rd = dd.taps[od];
    for (size_t oh = 0; oh < dh.taps.size(); ++oh, out += out_w) {
      const TapRange& rh = dh.taps[oh];
      std::fill(acc.begin(), acc.end(), Kind == PoolKind::kMax ? max_start<Work>() : Work{0});
      if constexpr (TrackIndex) std::fill(arg.begin(), arg.end(), int64_t{-1});
      for (int64_t a = rd.lo; a < rd.hi; ++a) {
        const int64_t pd = dd.start[od] + a * dd.dilation;
        for (int64_t b = rh.lo; b < rh.hi; ++b) {
          const int64_t row_offset = (pd * dh.in + dh.start[oh] + b * dh.dilation) * dw.in;
          const T* row = x + row_offset;
          for (int64_t c = 0; c < kernel_w; ++c) {
            const int64_t shift = c * dw.dilation - dw.pad_begin;
            const int64_t stride = dw.stride;
            Work* acc_data = acc.data();
            if constexpr (Kind != PoolKind::kLp && !TrackIndex) {
              // Compile-time strides 1 and 2 let the compiler vectorise the run (2: even/odd lane loads).
              if (stride == 1) {
                tap_run<Kind, 1>(row + shift, dw.out_begin[static_cast<size_t>(c)],
                                 dw.out_end[static_cast<size_t>(c)], acc_data);
                continue;
              }
              if (stride == 2) {
                tap_run<Kind, 2>(row + shift, dw.out_begin[static_cast<size_t>(c)],
                                 dw.out_end[static_cast<size_t>(c)], acc_data);
                continue;
              }
            }
            for (int64_t ow = dw.out_begin[static_cast<size_t>(c)]; ow < dw.out_end[static_cast<size_t>(c)]; ++ow) {
              const auto v = static_cast<Work>(row[ow * stride + shift]);
              if constexpr (Kind == PoolKind::kMax && TrackIndex) {
                if (arg[static_cast<size_t>(ow)] < 0 || take_max(v, acc_data[ow])) {
                  acc_data[ow] = v;
                  arg[static_cast<size_t>(ow)] = row_offset + ow * stride + shift;
                }
              } else if constexpr (Kind == PoolKind::kMax) {
                acc_data[ow] = take_max(v, acc_data[ow]) ? v : acc_data[ow];
              } else if constexpr (Kind == PoolKind::kAverage) {
                acc_data[ow] += v;
              } else {
                const Work m = std::abs(v);
                acc_data[ow] += opt.p == 2.0 ? m * m : static_cast<Work>(std::pow(m, p));
              }
            }
          }
        }
      }
      for (int64_t ow = 0; ow < out_w; ++ow) {
        const TapRange& rw = dw.taps[static_cast<size_t>(ow)];
        const bool empty = rd.lo >= rd.hi || rh.lo >= rh.hi || rw.lo >= rw.hi;
        const Work v = acc[static_cast<size_t>(ow)];
        if constexpr (Kind == PoolKind::kMax) {
          y[out + ow] = empty ? T{} : static_cast<T>(v);
          if constexpr (TrackIndex) {
            int64_t index = arg[static_cast<size_t>(ow)];
            if (!empty && opt.column_major_indices) {
              const int64_t pw = index % dw.in;
              const int64_t ph = (index / dw.in) % dh.in;
              const int64_t pd = index / (dw.in * dh.in);
              index = pd + dd.in * (ph + dh.in * pw);
            }
            indices[out + ow] = empty ? -1 : plane_index * plane_size + index;
          }
        } else if constexpr (Kind == PoolKind::kAverage) {
          const int64_t divisor = plan.divisors[static_cast<size_t>(out + ow)];
          y[out + ow] = T(divisor == 0 ? std::numeric_limits<Work>::quiet_NaN() : v / static_cast<Work>(divisor));
        } else {
          y[out + ow] = T(opt.p == 2.0 ? std::sqrt(v) : std::pow(v, static_cast<Work>(1.0 / opt.p)));
        }
      }
    }
  }
}

// MaxPool without Indices over a K x K window with column stride S (any row stride) and no dilation on 2-D
// planes. Outputs whose window lies inside the input take a loop with the taps unrolled (vectorised over
// outputs); border outputs fold their valid taps one by one. Taps are visited in row-major window order in
// both, as in pool_plane3, so ties and NaN resolve identically.
template <int K, int S, class T>
void max_pool_plane_unrolled(const T* x, T* y, const Plan3& plan) {
  using Work = PoolWork<T>;
  const Dim3& dh = plan.dims[1];
  const Dim3& dw = plan.dims[2];
  const int64_t in_w = dw.in;
  const auto out_h = static_cast<int64_t>(dh.taps.size());
  const auto out_w = static_cast<int64_t>(dw.taps.size());
  int64_t ow_lo = 0;
  while (ow_lo < out_w && !(dw.taps[ow_lo].lo == 0 && dw.taps[ow_lo].hi == K)) ++ow_lo;
  int64_t ow_hi = ow_lo;
  while (ow_hi < out_w && dw.taps[ow_hi].lo == 0 && dw.taps[ow_hi].hi == K) ++ow_hi;
  const int64_t pad_w = dw.pad_begin;
  if constexpr (K == 3 && S == 2 && std::is_same_v<T, float>) {
    // Rows first over the whole plane when every window has an input tap; a plane with NaN or -0 falls
    // through to the window-order loop below, which rewrites every output. The plane kernel strides 2 along
    // the rows too, so a plane whose row stride is not 2 (S is the column stride) takes the loop below.
    const bool windows_in_input = dh.stride == 2 && dh.pad_begin <= 2 && pad_w <= 2 &&
                                  (out_h - 1) * 2 - dh.pad_begin < dh.in && (out_w - 1) * 2 - pad_w < in_w;
    const auto plane_kernel = pool::max_pool_3x3s2_plane_kernel();
    if (windows_in_input && plane_kernel != nullptr && out_h > 0 && out_w > 0 &&
        plane_kernel(x, dh.in, in_w, y, out_h, out_w, dh.pad_begin, pad_w,
                     scratch_floats(ScratchUse::kMaxPoolColumns, 2 * out_w + 1 + pool::kMaxPoolPlaneSlack))) {
      return;
    }
  }
  for (int64_t oh = 0; oh < out_h; ++oh) {
    const TapRange& rh = dh.taps[static_cast<size_t>(oh)];
    const int64_t top = dh.start[static_cast<size_t>(oh)] * in_w;  // offset of the window's first row
    T* out = y + oh * out_w;
    auto border = [&](int64_t ow) {
      const TapRange& rw = dw.taps[static_cast<size_t>(ow)];
      Work acc = max_start<Work>();
      for (int64_t a = rh.lo; a < rh.hi; ++a) {
        const int64_t row = top + a * in_w + dw.start[static_cast<size_t>(ow)];
        for (int64_t b = rw.lo; b < rw.hi; ++b) {
          const auto v = static_cast<Work>(x[row + b]);
          acc = take_max(v, acc) ? v : acc;
        }
      }
      out[ow] = rh.lo >= rh.hi || rw.lo >= rw.hi ? T{} : static_cast<T>(acc);
    };
    const bool full_rows = rh.lo == 0 && rh.hi == K;
    const int64_t lo = full_rows ? ow_lo : out_w;
    const int64_t hi = full_rows ? ow_hi : out_w;
    for (int64_t ow = 0; ow < lo; ++ow) border(ow);
    const int64_t window = top - pad_w;  // the window of an interior ow starts at x[window + ow * S]
    if constexpr (K == 3 && S == 2 && std::is_same_v<T, float>) {
      const auto row_kernel = pool::max_pool_3x3s2_row_kernel();
      if (hi > lo && row_kernel != nullptr) {
        row_kernel(x + window + lo * S, in_w, hi - lo, out + lo);
        for (int64_t ow = std::max(lo, hi); ow < out_w; ++ow) border(ow);
        continue;
      }
    }
    for (int64_t ow = lo; ow < hi; ++ow) {
      Work acc = max_start<Work>();
      for (int a = 0; a < K; ++a) {
        for (int b = 0; b < K; ++b) {
          const auto v = static_cast<Work>(x[window + a * in_w + ow * S + b]);
          acc = take_max(v, acc) ? v : acc;
        }
      }
      out[ow] = static_cast<T>(acc);
    }
    for (int64_t ow = std::max(lo, hi); ow < out_w; ++ow) border(ow);
  }
}

// The unrolled MaxPool for this geometry, or null when none fits (any rank but 2, dilations, other windows).
template <class T>
auto pick_unrolled_max_pool(const Geometry& g) -> void (*)(const T*, T*, const Plan3&) {
  if (g.rank() != 2 || g.dilation[0] != 1 || g.dilation[1] != 1 || g.kernel[0] != g.kernel[1]) return nullptr;
  const int64_t k = g.kernel[1];
  const int64_t s = g.stride[1];
  if (k == 3 && s == 2) return max_pool_plane_unrolled<3, 2, T>;
  if (k == 3 && s == 1) return max_pool_plane_unrolled<3, 1, T>;
  if (k == 2 && s == 2) return max_pool_plane_unrolled<2, 2, T>;
  return nullptr;
}

// Whole-plane reduction for the Global* ops.
template <class T>
T global_plane(const T* x, int64_t n, const PoolOptions& opt) {
  using Acc = PoolAcc<T>;
  if (opt.kind == PoolKind::kMax) {
    if (n == 0) return T{};
    T best = x[0];
    for (int64_t i = 1; i < n; ++i) {
      if (take_max(x[i], best)) best = x[i];
    }
    return best;
  }
  Acc sum{0};
  if (opt.kind == PoolKind::kAverage) {
    // 16 interleaved partial sums: independent add chains the compiler turns into vector adds.
    constexpr int kLanes = 16;
    Acc partial[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      for (int lane = 0; lane < kLanes; ++lane) partial[lane] += static_cast<Acc>(x[i + lane]);
    }
    for (int lane = 0; lane < kLanes; ++lane) sum += partial[lane];
    for (; i < n; ++i) sum += static_cast<Acc>(x[i]);
    return T(n == 0 ? std::numeric_limits<Acc>::quiet_NaN() : sum / static_cast<Acc>(n));
  }
  for (int64_t i = 0; i < n; ++i) {
    const Acc a = std::abs(static_cast<Acc>(x[i]));
    sum += opt.p == 2.0 ? a * a : static_cast<Acc>(std::pow(a, static_cast<Acc>(opt.p)));
  }
  return T(opt.p == 2.0 ? std::sqrt(sum) : std::pow(sum, static_cast<Acc>(1.0 / opt.p)));
}

class PoolKernel final : public Kernel {
 public:
  PoolKernel(std::string description, DataTypeMask types, WindowAttrs attrs, PoolOptions options)
      : description_(std::move(description)), types_(types), attrs_(std::move(attrs)), opt_(options) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input X");
    }
    const Tensor& x = *inputs[0];
    if (!conv::type_in(types_, x.dtype())) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input type ",
                        data_type_name(x.dtype()));
    }
    TRY_ASSIGN(const Geometry g, geometry(x.shape()));
    Shape y_shape(x.shape().begin(), x.shape().begin() + 2);
    y_shape.insert(y_shape.end(), g.out.begin(), g.out.end());
    outputs.assign(1, OutputDesc{x.dtype(), y_shape});
    if (opt_.with_indices) outputs.push_back(OutputDesc{DataType::kInt64, y_shape});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    TRY_ASSIGN(const Geometry g, geometry(x.shape()));
    Tensor& y = outputs[0];
    if (y.numel() == 0) return Status::ok();
    int64_t* indices = outputs.size() > 1 && outputs[1].numel() > 0 ? outputs[1].data<int64_t>() : nullptr;
    const int64_t planes = x.shape()[0] * x.shape()[1];
    const int64_t in_size = g.in_size();
    const int64_t out_size = g.out_size();
    const int64_t window = std::max<int64_t>(1, opt_.global ? in_size : g.kernel_size());
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, out_size * window));
    const bool planned = !opt_.global && g.rank() <= 3;
    // Read only on the planned paths below.
    const std::shared_ptr<const Plan3> plan =
        planned ? plans_.get(x.shape(), [&] { return make_plan3(g, opt_); }) : nullptr;
    visit_dtype<PoolTypes>(x.dtype(), [&]<class T>() {
      const T* xd = x.data<T>();
      T* yd = y.data<T>();
      const auto unrolled_max = planned && opt_.kind == PoolKind::kMax && indices == nullptr
                                    ? pick_unrolled_max_pool<T>(g)
                                    : nullptr;
      pool.parallel_for(planes, grain, [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
          const T* src = xd + plane * in_size;
          T* dst = yd + plane * out_size;
          int64_t* idx = indices ? indices + plane * out_size : nullptr;
          if (opt_.global) {
            yd[plane] = global_plane(src, in_size, opt_);
          } else if (!planned) {
            pool_plane(src, dst, idx, plane, g, opt_);
          } else if (unrolled_max != nullptr) {
            unrolled_max(src, dst, *plan);
          } else if (opt_.kind == PoolKind::kMax && idx != nullptr) {
            pool_plane3<PoolKind::kMax, true>(src, dst, idx, plane, *plan, opt_);
          } else if (opt_.kind == PoolKind::kMax) {
            pool_plane3<PoolKind::kMax, false>(src, dst, idx, plane, *plan, opt_);
          } else if (opt_.kind == PoolKind::kAverage) {
            pool_plane3<PoolKind::kAverage, false>(src, dst, idx, plane, *plan, opt_);
          } else {
            pool_plane3<PoolKind::kLp, false>(src, dst, idx, plane, *plan, opt_);
          }
        }
      });
    });
    return Status::ok();
  }

 private:
  using PoolTypes = TypeList<float, double, Float16, BFloat16, int8_t, uint8_t>;

  Expected<Geometry> geometry(const Shape& x) const {
    const size_t min_rank = opt_.global ? 2 : 3;
    if (x.size() < min_rank || x.size() - 2 > kMaxPoolRank) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input X ", shape_to_string(x),
                        " must have rank between ", min_rank, " and ", kMaxPoolRank + 2);
    }
    const std::span<const int64_t> spatial(x.data() + 2, x.size() - 2);
    if (opt_.global) {
      Geometry g;
      g.in.assign(spatial.begin(), spatial.end());
      g.out.assign(spatial.size(), 1);
      g.kernel = g.in;
      return g;
    }
    if (attrs_.kernel_shape.size() != spatial.size()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": kernel_shape has ", attrs_.kernel_shape.size(),
                        " values but X has ", spatial.size(), " spatial dims");
    }
    return conv::resolve_geometry(attrs_, spatial, attrs_.kernel_shape, description_);
  }

  std::string description_;
  DataTypeMask types_;
  WindowAttrs attrs_;
  PoolOptions opt_;
  LastShapeCache<Plan3> plans_;  // keyed by the shape of X
};

// LpPool / GlobalLpPool opset 1 carry p as a float; later opsets as an int.
Expected<double> read_p(const graph::Node& node) {
  const graph::Attribute* attr = node.find_attribute("p");
  if (attr == nullptr) return 2.0;
  if (attr->type == graph::Attribute::Type::kFloat) return static_cast<double>(attr->f);
  TRY_ASSIGN(const int64_t p, node.attr_int("p", 2));
  return static_cast<double>(p);
}

template <PoolKind Kind, bool Global>
Expected<std::unique_ptr<Kernel>> create_pool(const KernelInfo& info) {
  const graph::Node& node = info.node;
  PoolOptions opt;
  opt.kind = Kind;
  opt.global = Global;
  WindowAttrs attrs;
  if constexpr (!Global) {
    TRY_ASSIGN(attrs, conv::parse_window_attrs(node));
    if (attrs.kernel_shape.empty()) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute kernel_shape is required");
    }
    TRY_ASSIGN(const int64_t include_pad, node.attr_int("count_include_pad", 0));
    opt.count_include_pad = include_pad != 0;
    TRY_ASSIGN(const int64_t storage_order, node.attr_int("storage_order", 0));
    if (storage_order != 0 && storage_order != 1) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": storage_order must be 0 or 1");
    }
    opt.column_major_indices = storage_order == 1;
    opt.with_indices = Kind == PoolKind::kMax && node.outputs.size() > 1 && node.outputs[1] != graph::kNoValue;
  }
  if constexpr (Kind == PoolKind::kLp) {
    TRY_ASSIGN(opt.p, read_p(node));
    if (!(opt.p > 0.0)) return make_error(StatusCode::kInvalidGraph, node.describe(), ": p must be > 0");
  }
  DataTypeMask types = type_mask(TypeList<float, double, Float16>{});
  if (info.opset() >= 22) types |= type_mask(TypeList<BFloat16>{});
  if (Kind == PoolKind::kMax && !Global && info.opset() >= 12) types |= type_mask(TypeList<int8_t, uint8_t>{});
  return std::unique_ptr<Kernel>(std::make_unique<PoolKernel>(node.describe(), types, std::move(attrs), opt));
}

constexpr DataTypeMask kPoolF = type_mask(TypeList<float, double, Float16>{});
constexpr DataTypeMask kPoolBf = type_mask(FloatTypes{});
constexpr DataTypeMask kMaxInt = type_mask(TypeList<float, double, Float16, int8_t, uint8_t>{});
constexpr DataTypeMask kMaxAll = type_mask(TypeList<float, double, Float16, BFloat16, int8_t, uint8_t>{});

const KernelDef kPoolKernels[] = {
    {"MaxPool", graph::kOnnxDomain, 1, 11, kPoolF, 0, create_pool<PoolKind::kMax, false>},
    {"MaxPool", graph::kOnnxDomain, 12, 21, kMaxInt, 0, create_pool<PoolKind::kMax, false>},
    {"MaxPool", graph::kOnnxDomain, 22, kLatestOpset, kMaxAll, 0, create_pool<PoolKind::kMax, false>},
    {"AveragePool", graph::kOnnxDomain, 1, 21, kPoolF, 0, create_pool<PoolKind::kAverage, false>},
    {"AveragePool", graph::kOnnxDomain, 22, kLatestOpset, kPoolBf, 0, create_pool<PoolKind::kAverage, false>},
    {"LpPool", graph::kOnnxDomain, 1, 21, kPoolF, 0, create_pool<PoolKind::kLp, false>},
    {"LpPool", graph::kOnnxDomain, 22, kLatestOpset, kPoolBf, 0, create_pool<PoolKind::kLp, false>},
    {"GlobalMaxPool", graph::kOnnxDomain, 1, 21, kPoolF, 0, create_pool<PoolKind::kMax, true>},
    {"GlobalMaxPool", graph::kOnnxDomain, 22, kLatestOpset, kPoolBf, 0, create_pool<PoolKind::kMax, true>},
    {"GlobalAveragePool", graph::kOnnxDomain, 1, 21, kPoolF, 0, create_pool<PoolKind::kAverage, true>},
    {"GlobalAveragePool", graph::kOnnxDomain, 22, kLatestOpset, kPoolBf, 0, create_pool<PoolKind::kAverage, true>},
    {"GlobalLpPool", graph::kOnnxDomain, 1, 21, kPoolF, 0, create_pool<PoolKind::kLp, true>},
    {"GlobalLpPool", graph::kOnnxDomain, 22, kLatestOpset, kPoolBf, 0, create_pool<PoolKind::kLp, true>},
    {"MaxUnpool", graph::kOnnxDomain, 9, 21, kPoolF, 0, pool::create_max_unpool},
    {"MaxUnpool", graph::kOnnxDomain, 22, kLatestOpset, kPoolBf, 0, pool::create_max_unpool},
    {"MaxRoiPool", graph::kOnnxDomain, 1, 21, kPoolF, 0, pool::create_max_roi_pool},
    {"MaxRoiPool", graph::kOnnxDomain, 22, kLatestOpset, kPoolBf, 0, pool::create_max_roi_pool},
    {"RoiAlign", graph::kOnnxDomain, 10, 15, kPoolF, 0, pool::create_roi_align},
    {"RoiAlign", graph::kOnnxDomain, 16, 21, kPoolF, 0, pool::create_roi_align},
    {"RoiAlign", graph::kOnnxDomain, 22, kLatestOpset, kPoolBf, 0, pool::create_roi_align},
};

}  // namespace

std::span<const KernelDef> pool_kernels() { return kPoolKernels; }

}  // namespace nxrt::cpu
