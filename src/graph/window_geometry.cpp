// Window attribute parsing and geometry resolution (window_geometry.h).
#include "graph/window_geometry.h"

#include <algorithm>
#include <limits>

namespace nxrt::graph {

namespace {

int64_t product(std::span<const int64_t> v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

}  // namespace

int64_t WindowGeometry::in_size() const { return product(in); }
int64_t WindowGeometry::out_size() const { return product(out); }
int64_t WindowGeometry::kernel_size() const { return product(kernel); }

Expected<WindowAttrs> parse_window_attrs(const Node& node) {
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

Expected<WindowGeometry> resolve_geometry(const WindowAttrs& attrs, std::span<const int64_t> in,
                                          std::span<const int64_t> kernel, const std::string& description) {
  const size_t rank = in.size();
  if (kernel.size() != rank) {
    return make_error(StatusCode::kInvalidArgument, description, ": kernel has ", kernel.size(),
                      " spatial dims but the input has ", rank);
  }
  TRY(check_attr_length(attrs.strides, rank, "strides", description));
  TRY(check_attr_length(attrs.dilations, rank, "dilations", description));
  TRY(check_attr_length(attrs.pads, 2 * rank, "pads", description));
  WindowGeometry g;
  g.in.assign(in.begin(), in.end());
  g.kernel.assign(kernel.begin(), kernel.end());
  g.stride = attrs.strides.empty() ? DimList(rank, 1) : DimList(attrs.strides);
  g.dilation = attrs.dilations.empty() ? DimList(rank, 1) : DimList(attrs.dilations);
  g.pad_begin.assign(rank, 0);
  g.pad_end.assign(rank, 0);
  g.out.assign(rank, 0);
  // Sizes are computed in 128 bits: pads, dilations and (in the optimizer) declared input dims come from the model
  // and may be anywhere in int64. A size or pad outside int64 is INVALID_ARGUMENT.
  using Wide = __int128;
  constexpr Wide kMax = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < rank; ++i) {
    if (g.kernel[i] <= 0) {
      return make_error(StatusCode::kInvalidArgument, description, ": kernel dim ", i, " is ", g.kernel[i]);
    }
    if (g.stride[i] <= 0 || g.dilation[i] <= 0 || g.in[i] < 0) {
      return make_error(StatusCode::kInvalidArgument, description, ": spatial dim ", i, " has input ", g.in[i],
                        ", stride ", g.stride[i], " and dilation ", g.dilation[i]);
    }
    const Wide in_dim = g.in[i];
    const Wide s = g.stride[i];
    const Wide dilated = Wide{g.kernel[i] - 1} * g.dilation[i] + 1;
    Wide out = 0, pad_begin = 0, pad_end = 0;
    switch (attrs.auto_pad) {
      case AutoPad::kNotSet: {
        if (!attrs.pads.empty()) {
          pad_begin = attrs.pads[i];
          pad_end = attrs.pads[i + rank];
        }
        // The spec's out = floor or ceil((in + pads - dilated kernel) / stride + 1): with ceil_mode an input
        // shorter than the kernel by less than a stride still has one (partial) window.
        const Wide span = in_dim + pad_begin + pad_end - dilated;
        if (span < 0 && !(attrs.ceil_mode && span + s > 0)) {
          return make_error(StatusCode::kInvalidArgument, description, ": input spatial dim ", i, " (", g.in[i],
                            " plus pads) is smaller than the dilated kernel");
        }
        out = attrs.ceil_mode ? (span + 2 * s - 1) / s : span / s + 1;
        if (attrs.ceil_mode && (out - 1) * s >= in_dim + pad_begin) --out;
        break;
      }
      case AutoPad::kSameUpper:
      case AutoPad::kSameLower: {
        out = (in_dim + s - 1) / s;
        const Wide needed = std::max<Wide>(0, (out - 1) * s + dilated - in_dim);
        const Wide small = needed / 2;
        pad_begin = attrs.auto_pad == AutoPad::kSameUpper ? small : needed - small;
        pad_end = needed - pad_begin;
        break;
      }
      case AutoPad::kValid: {
        if (in_dim < dilated) {
          return make_error(StatusCode::kInvalidArgument, description, ": input spatial dim ", i, " (", g.in[i],
                            ") is smaller than the dilated kernel with auto_pad VALID");
        }
        out = (in_dim - dilated) / s + 1;
        break;
      }
    }
    if (dilated > kMax || out > kMax || pad_begin > kMax || pad_end > kMax) {
      return make_error(StatusCode::kInvalidArgument, description, ": spatial dim ", i,
                        " has a dilated kernel, pads or output size beyond int64");
    }
    g.out[i] = static_cast<int64_t>(out);
    g.pad_begin[i] = static_cast<int64_t>(pad_begin);
    g.pad_end[i] = static_cast<int64_t>(pad_end);
  }
  // in_size(), out_size() and kernel_size() multiply the dims: each volume must fit int64 too, and so must the
  // taps of a whole plane (output positions x kernel positions), which kernels use to size their work.
  int64_t volumes[3] = {1, 1, 1};
  int index = 0;
  for (const auto& [dims, what] :
       {std::pair{&g.in, "input"}, std::pair{&g.out, "output"}, std::pair{&g.kernel, "kernel"}}) {
    int64_t& volume = volumes[index++];
    for (const int64_t d : *dims) {
      if (__builtin_mul_overflow(volume, d, &volume)) {
        return make_error(StatusCode::kInvalidArgument, description, ": the ", what, " window dims ",
                          shape_to_string(*dims), " hold more positions than int64 can count");
      }
    }
  }
  if (int64_t taps = 0; __builtin_mul_overflow(volumes[1], volumes[2], &taps)) {
    return make_error(StatusCode::kInvalidArgument, description, ": ", volumes[1], " output positions of ",
                      volumes[2], " kernel positions each are more taps than int64 can count");
  }
  return g;
}
}  // namespace nxrt::graph
