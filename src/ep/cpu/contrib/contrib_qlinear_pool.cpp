// com.microsoft QLinearAveragePool(X, x_scale, x_zero_point?, y_scale, y_zero_point?; auto_pad, ceil_mode,
// count_include_pad, kernel_shape, pads, strides, channels_last), as ONNX Runtime's contrib schema defines it:
// Y = quantize(average of dequantize(X) over each window) for NCHW X, or NHWC X when channels_last is 1 (then Y
// is NHWC too). The window geometry is AveragePool's (graph/window_geometry.h). The divisor is the number of
// input elements in the window, or, with count_include_pad, the kernel's full size: also for a last window that
// ceil_mode lets hang past the end padding, as ONNX Runtime's CPU kernel divides (its float AveragePool and the
// ONNX reference count only the padded input there). X and Y are uint8 or int8 with per-tensor parameters
// (contrib_qlinear_common.h); sums are exact integers over the taps inside the input, the average is computed in
// double and requantized in float.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ep/cpu/contrib/contrib_qlinear_common.h"
#include "ep/cpu/run_limits.h"
#include "graph/window_geometry.h"

namespace nxrt::cpu::qlinear {

namespace {

class QLinearAveragePoolKernel final : public Kernel {
 public:
  QLinearAveragePoolKernel(std::string description, graph::WindowAttrs attrs, bool include_pad, bool nhwc)
      : description_(std::move(description)), attrs_(std::move(attrs)), include_pad_(include_pad), nhwc_(nhwc) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const graph::WindowGeometry g, geometry(inputs));
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), output_shape(inputs[0]->shape(), g)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const graph::WindowGeometry g, geometry(inputs));
    const DataType type = inputs[0]->dtype();
    TRY_ASSIGN(const QuantParams x, read_params(inputs, 1, 2, type, description_));
    TRY_ASSIGN(const QuantParams y, read_params(inputs, 3, 4, type, description_));
    const Shape& shape = inputs[0]->shape();
    const int64_t batch = shape[0], channels = nhwc_ ? shape.back() : shape[1];
    const int64_t in_plane = g.in_size(), out_plane = g.out_size(), rank = static_cast<int64_t>(g.rank());
    // Element p of plane (n, c) is `step` apart from element p - 1, from the plane's first element.
    const int64_t step = nhwc_ ? channels : 1;
    double kernel_volume = 1.0;  // in double: a huge kernel must not overflow
    for (int64_t k : g.kernel) kernel_volume *= static_cast<double>(k);
    const RunLimits* limits = current_run_limits();
    const auto first = [&](int64_t n, int64_t c, int64_t plane) {
      return nhwc_ ? n * plane * channels + c : (n * channels + c) * plane;
    };
    visit_dtype<TypeList<uint8_t, int8_t>>(type, [&]<class Q>() {
      const Q* in = inputs[0]->data<Q>();
      Q* result = outputs[0].data<Q>();
      pool.parallel_for(batch * channels, 1, [&](int64_t begin, int64_t end) {
        const size_t r = static_cast<size_t>(rank);
        std::vector<int64_t> out_index(r), tap(r), tap_begin(r), tap_end(r);
        for (int64_t bc = begin; bc < end && !run_should_stop(limits); ++bc) {
          const int64_t n = bc / channels, c = bc % channels;
          const Q* plane = in + first(n, c, in_plane);
          Q* out = result + first(n, c, out_plane);
          std::fill(out_index.begin(), out_index.end(), 0);
          for (int64_t o = 0; o < out_plane; ++o) {
            // Per dim, the taps [tap_begin, tap_end) that land inside the input.
            int64_t count = 1;
            for (size_t d = 0; d < r; ++d) {
              const int64_t start = out_index[d] * g.stride[d] - g.pad_begin[d];
              const int64_t dilation = g.dilation[d];
              tap_begin[d] = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
              tap_end[d] = start >= g.in[d] ? 0 : std::min(g.kernel[d], (g.in[d] - 1 - start) / dilation + 1);
              count *= std::max<int64_t>(0, tap_end[d] - tap_begin[d]);
            }
            int64_t sum = 0;
            if (count > 0) {
              tap = tap_begin;
              for (int64_t t = 0; t < count; ++t) {
                int64_t at = 0;
                for (size_t d = 0; d < r; ++d) {
                  at = at * g.in[d] + out_index[d] * g.stride[d] - g.pad_begin[d] + tap[d] * g.dilation[d];
                }
                sum += plane[at * step];
                for (size_t d = r; d-- > 0;) {  // next tap inside the input
                  if (++tap[d] < tap_end[d]) break;
                  tap[d] = tap_begin[d];
                }
              }
            }
            const double divisor = include_pad_ ? kernel_volume : static_cast<double>(count);
            const float average =
                count == 0 ? 0.0f
                           : static_cast<float>(static_cast<double>(sum - count * x.zero) * x.scale / divisor);
            out[o * step] = quantize<Q>(average, y);
            for (size_t d = r; d-- > 0;) {  // next output position
              if (++out_index[d] < g.out[d]) break;
              out_index[d] = 0;
            }
          }
        }
      });
    });
    return Status::ok();
  }

 private:
  Expected<graph::WindowGeometry> geometry(KernelInputs inputs) const {
    TRY_ASSIGN(const Shape shape, check_pool_inputs(inputs, description_));
    const std::vector<int64_t> spatial = nhwc_ ? std::vector<int64_t>(shape.begin() + 1, shape.end() - 1)
                                               : std::vector<int64_t>(shape.begin() + 2, shape.end());
    if (attrs_.kernel_shape.size() != spatial.size()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": kernel_shape has ", attrs_.kernel_shape.size(),
                        " dims, X has ", spatial.size(), " spatial dims");
    }
    return graph::resolve_geometry(attrs_, spatial, attrs_.kernel_shape, description_);
  }

  Shape output_shape(const Shape& in, const graph::WindowGeometry& g) const {
    Shape out = in;
    const size_t first_spatial = nhwc_ ? 1 : 2;
    for (size_t d = 0; d < g.rank(); ++d) out[first_spatial + d] = g.out[d];
    return out;
  }

  std::string description_;
  graph::WindowAttrs attrs_;
  bool include_pad_, nhwc_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> create_qlinear_average_pool(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const int64_t nhwc, node.attr_int("channels_last", 0));
  TRY_ASSIGN(const int64_t include_pad, node.attr_int("count_include_pad", 0));
  TRY_ASSIGN(graph::WindowAttrs attrs, graph::parse_window_attrs(node));
  if (attrs.kernel_shape.empty()) {
    return make_error(StatusCode::kInvalidArgument, node.describe(), ": attribute kernel_shape is required");
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<QLinearAveragePoolKernel>(node.describe(), std::move(attrs), include_pad != 0, nhwc != 0));
}

}  // namespace nxrt::cpu::qlinear
