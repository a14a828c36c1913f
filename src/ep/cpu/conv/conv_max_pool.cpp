// com.nxrt:FusedConvMaxPool (made by the optimizer's conv_max_pool_fusion), float32:
//   Y = MaxPool(FusedConv(X, W, B), kernel_shape 3x3, strides 2x2, pads = pool_pads (each 0 or 1))
// with FusedConv's attributes (Conv's plus activation / activation_params). Where the FusedConv kernel would use
// the direct convolution (not Winograd; at the avx2 tier and above), the conv runs in stripes of output rows into a scratch sized for
// L2 with FusedConv's prepacked weights and each stripe is pooled at once, so the conv output (the largest tensor
// of a ResNet stem) never travels to memory and back. Otherwise,
// and whenever a stripe holds NaN or -0 (where MaxPool's window order decides), it runs the FusedConv and
// MaxPool kernels one after the other, so results are always those of the unfused pair.
#include <algorithm>
#include <array>
#include <atomic>
#include <string>

#include "core/scratch_space.h"
#include "ep/cpu/conv/conv_direct.h"
#include "ep/cpu/conv/conv_kernels.h"
#include "ep/cpu/conv/conv_winograd.h"
#include "ep/cpu/microkernels/cpu_features.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/pool/pool_kernels.h"
#include "ep/cpu/run_limits.h"

namespace nxrt::cpu {

namespace {

using conv::WindowAttrs;

// Conv rows one stripe holds (all channels): 512 KiB, so they stay in L2 between the conv and the pool.
constexpr int64_t kStripeFloats = int64_t{1} << 17;

class FusedConvMaxPoolKernel final : public Kernel {
 public:
  FusedConvMaxPoolKernel(std::string description, WindowAttrs conv_attrs, FusedActivation activation,
                         std::array<int64_t, 4> pool_pads, std::unique_ptr<Kernel> conv, std::unique_ptr<Kernel> pool)
      : description_(std::move(description)),
        conv_attrs_(std::move(conv_attrs)),
        activation_(activation),
        pool_pads_(pool_pads),
        conv_(std::move(conv)),
        pool_(std::move(pool)),
        weights_(conv::prepacked_direct_weights(*conv_)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    std::vector<OutputDesc> conv_out;
    TRY(conv_->reshape(inputs, conv_out));
    const Shape& c = conv_out[0].shape;
    if (c.size() != 4) {
      return make_error(StatusCode::kInvalidArgument, description_, ": the convolution output ",
                        shape_to_string(c), " must be 4-D");
    }
    const int64_t rows = c[2] + pool_pads_[0] + pool_pads_[2], cols = c[3] + pool_pads_[1] + pool_pads_[3];
    if (rows < 3 || cols < 3) {
      return make_error(StatusCode::kInvalidArgument, description_, ": the convolution output ",
                        shape_to_string(c), " with pads is smaller than the 3x3 pooling window");
    }
    outputs.assign(1, OutputDesc{DataType::kFloat32, Shape{c[0], c[1], (rows - 3) / 2 + 1, (cols - 3) / 2 + 1}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    if (outputs[0].numel() == 0) return Status::ok();
    if (run_striped(inputs, outputs[0], pool)) return Status::ok();
    return run_unfused(inputs, outputs, pool);
  }

 private:
  // The fused path; false when it does not apply or met NaN / -0 (then y is rewritten by run_unfused).
  bool run_striped(KernelInputs inputs, Tensor& y, ThreadPool& pool) const {
#if defined(__x86_64__)
    const Tensor& x = *inputs[0];
    const Tensor& w = *inputs[1];
    const auto plane_kernel = pool::max_pool_3x3s2_plane_kernel();
    if (plane_kernel == nullptr || weights_ == nullptr || x.dtype() != DataType::kFloat32) return false;
    auto problem = conv::conv_problem(conv_attrs_, x.shape(), w.shape(), description_);
    if (!problem) return false;
    const conv::ConvProblem& p = *problem;
    const conv::Geometry& g = p.geometry;
    const Shape& ws = w.shape();
    // The striped path takes exactly the convolutions the FusedConv kernel runs with the direct kernel (never
    // those it gives to Winograd), so the result is the unfused pair's bit for bit.
    if (ws[0] != weights_->out_channels() || ws[1] != weights_->in_channels() || ws[2] != weights_->kernel_h() ||
        ws[3] != weights_->kernel_w() ||
        !conv::direct_conv_applies(conv_attrs_.group, g, p.in_channels, p.out_channels) ||
        conv::winograd_applies(conv_attrs_.group, g, p.in_channels, p.out_channels)) {
      return false;
    }
    const Tensor* b = optional_input(inputs, 2);
    const conv::ConvEpilogue<float> epilogue{b ? b->data<float>() : nullptr, nullptr, activation_};
    const int64_t channels = p.out_channels, conv_h = g.out[0], conv_w = g.out[1];
    const int64_t pool_h = y.shape()[2], pool_w = y.shape()[3];
    const int64_t pad_top = pool_pads_[0], pad_left = pool_pads_[1];
    // Stripes of pooled rows: at most kStripeFloats of conv rows, and about two per thread. A stripe recomputes
    // the conv row it shares with the previous one, so stripes are independent and run in parallel, each on
    // one thread with its own scratch (the conv and pool calls inside run inline on the busy pool).
    const int64_t threads = pool.num_threads();
    const int64_t by_cache = std::max<int64_t>(1, (kStripeFloats / (channels * conv_w) - 1) / 2);
    const int64_t stripe = std::clamp<int64_t>((pool_h + 2 * threads - 1) / (2 * threads), 1, by_cache);
    const int64_t stripes = (pool_h + stripe - 1) / stripe;
    const int64_t plane = (2 * stripe + 1) * conv_w;  // scratch floats per channel
    const int64_t in_image = p.in_channels * g.in[0] * g.in[1];
    std::atomic<bool> exact{true};
    pool.parallel_for(p.batch * stripes, 1, [&](int64_t begin, int64_t end) {
      float* const rows = scratch_floats(ScratchUse::kConvPoolRows, channels * plane);
      float* const cols = scratch_floats(ScratchUse::kConvPoolColumns, 2 * pool_w + 1 + pool::kMaxPoolPlaneSlack);
      for (int64_t unit = begin; unit < end; ++unit) {
        const int64_t n = unit / stripes;
        const int64_t p0 = (unit % stripes) * stripe;
        const int64_t p1 = std::min(pool_h, p0 + stripe);
        const int64_t top = 2 * p0 - pad_top;  // conv row of the first window's top tap
        const int64_t need0 = std::max<int64_t>(0, top);
        const int64_t need1 = std::min(conv_h, 2 * (p1 - 1) - pad_top + 3);
        conv::conv_direct_f32_rows(x.data<float>() + n * in_image, *weights_, g, need0, need1, rows, nullptr, plane,
                                   pool, epilogue);
        float* out = y.data<float>() + (n * channels * pool_h + p0) * pool_w;
        for (int64_t c = 0; c < channels; ++c) {
          if (!plane_kernel(rows + c * plane, need1 - need0, conv_w, out + c * pool_h * pool_w, p1 - p0, pool_w,
                            need0 - top, pad_left, cols)) {
            exact.store(false, std::memory_order_relaxed);
          }
        }
      }
    });
    return exact.load();
#else
    (void)inputs, (void)y, (void)pool;
    return false;
#endif
  }

  Status run_unfused(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const {
    std::vector<OutputDesc> conv_out;
    TRY(conv_->reshape(inputs, conv_out));
    if (const RunLimits* limits = current_run_limits()) {
      TRY(limits->check_tensor_bytes(conv_out[0].dtype, conv_out[0].shape, "the Conv result before MaxPool"));
    }
    TRY_ASSIGN(Tensor conv_y, Tensor::allocate(conv_out[0].dtype, conv_out[0].shape));
    TRY(conv_->run(inputs, std::span<Tensor>(&conv_y, 1), pool));
    const Tensor* pool_inputs[] = {&conv_y};
    return pool_->run(pool_inputs, outputs, pool);
  }

  std::string description_;
  WindowAttrs conv_attrs_;
  FusedActivation activation_;
  std::array<int64_t, 4> pool_pads_;
  std::unique_ptr<Kernel> conv_;  // com.microsoft FusedConv with the same attributes
  std::unique_ptr<Kernel> pool_;  // MaxPool 3x3 stride 2 with pool_pads
  const conv::DirectConvWeights* weights_;  // conv_'s prepacked direct weights, or null
};

Expected<std::unique_ptr<Kernel>> create_kernel_of(std::string_view domain, std::string_view op_type, int opset,
                                                   const KernelInfo& info) {
  const KernelDef* def = find_kernel(domain, op_type, opset);
  if (def == nullptr) {
    return make_error(StatusCode::kNotImplemented, info.node.describe(), ": no ", op_type, " kernel to run it");
  }
  return def->create(info);
}

Expected<std::unique_ptr<Kernel>> create_fused_conv_max_pool(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(WindowAttrs conv_attrs, conv::parse_window_attrs(node));
  TRY_ASSIGN(const std::string activation_name, node.attr_string("activation", ""));
  TRY_ASSIGN(const std::vector<float> params, node.attr_floats("activation_params", {}));
  TRY_ASSIGN(const FusedActivation activation, parse_fused_activation(activation_name, params, node.describe()));
  TRY_ASSIGN(const std::vector<int64_t> pads, node.attr_ints("pool_pads", {0, 0, 0, 0}));
  if (pads.size() != 4 || std::any_of(pads.begin(), pads.end(), [](int64_t pad) { return pad < 0 || pad > 1; })) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": pool_pads must be 4 values of 0 or 1");
  }
  graph::Node conv_node = node;
  conv_node.op_type = "FusedConv";
  conv_node.domain = graph::kMsDomain;
  conv_node.opset = 1;
  std::erase_if(conv_node.attributes, [](const graph::Attribute& a) { return a.name == "pool_pads"; });
  const KernelInfo conv_info{conv_node, info.input_types, {DataType::kFloat32}, info.constant_inputs, info.graph,
                             info.subgraphs};
  TRY_ASSIGN(std::unique_ptr<Kernel> conv, create_kernel_of(graph::kMsDomain, "FusedConv", 1, conv_info));

  graph::Node pool_node;
  pool_node.name = node.name;
  pool_node.op_type = "MaxPool";
  pool_node.opset = 12;
  pool_node.inputs = {graph::kNoValue};
  pool_node.outputs = node.outputs;
  pool_node.attributes = {graph::make_ints_attribute("kernel_shape", {3, 3}),
                          graph::make_ints_attribute("strides", {2, 2}), graph::make_ints_attribute("pads", pads)};
  const KernelInfo pool_info{pool_node, {DataType::kFloat32}, {DataType::kFloat32}, {nullptr}, info.graph,
                             info.subgraphs};
  TRY_ASSIGN(std::unique_ptr<Kernel> pool, create_kernel_of("", "MaxPool", 12, pool_info));

  return std::unique_ptr<Kernel>(std::make_unique<FusedConvMaxPoolKernel>(
      node.describe(), std::move(conv_attrs), activation, std::array<int64_t, 4>{pads[0], pads[1], pads[2], pads[3]},
      std::move(conv), std::move(pool)));
}

const KernelDef kConvMaxPoolKernels[] = {
    {"FusedConvMaxPool", "com.nxrt", 1, kLatestOpset, type_mask(TypeList<float>{}), 0, create_fused_conv_max_pool},
};

}  // namespace

std::span<const KernelDef> conv_max_pool_kernels() { return kConvMaxPoolKernels; }

}  // namespace nxrt::cpu
