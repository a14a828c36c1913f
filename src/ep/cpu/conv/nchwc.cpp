// The com.nxrt ops of the blocked-channel layout (nchwc.h), float32, made by the optimizer's nchwc_layout pass:
//   NchwcReorderIn(X [N, C, H, W]) -> [N, ceil(C / 16), H, W, 16], padding lanes 0
//   NchwcReorderOut(X blocked, channels, padding?) -> [N, channels, H, W]; padding (default 0) records what X's
//     padding lanes hold, for the pass (the kernel never reads those lanes)
//   NchwcConv(X, W, B?, Z?) -> blocked: Conv's attributes (2-D, group 1 or depthwise, no dilation, auto_pad
//     NOTSET) plus FusedConv's activation / activation_params and input_blocked (0: X is plain [N, C, H, W]); W and
//     B are the original constants; Z, when present, has the output's blocked shape
//   NchwcMaxPool(X blocked) -> blocked: MaxPool's 2-D attributes (one output, storage_order 0)
//   NchwcGlobalAveragePool(X blocked) -> [N, Cb, 1, 1, 16]
// Every kernel needs the avx2 tier or above (creation fails below it; the pass only runs where the CPU has it) and
// runs the kernels of the active tier (active_tier_kernels).
#include "ep/cpu/conv/nchwc.h"

#include <algorithm>
#include <string>

#include "core/scratch_space.h"
#include "ep/cpu/conv/conv_direct.h"
#include "ep/cpu/conv/conv_kernels.h"
#include "ep/cpu/conv/conv_winograd.h"
#include "ep/cpu/microkernels/cpu_features.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu::nchwc {

ConvWeights ConvWeights::pack(const float* w, const float* bias, int64_t out_channels, int64_t in_channels,
                              int64_t kernel_h, int64_t kernel_w, bool blocked_input) {
  ConvWeights packed;
  packed.out_channels_ = out_channels;
  packed.in_channels_ = in_channels;
  packed.kernel_h_ = kernel_h;
  packed.kernel_w_ = kernel_w;
  packed.blocked_input_ = blocked_input;
  const int64_t out_blocks = blocks_of(out_channels);
  const int64_t taps = kernel_h * kernel_w;
  packed.packed_.assign(static_cast<size_t>(out_blocks * packed.out_block_stride()), 0.0f);
  for (int64_t oc = 0; oc < out_channels; ++oc) {
    float* block = packed.packed_.data() + (oc / kBlock) * packed.out_block_stride();
    const int64_t out_lane = oc % kBlock;
    for (int64_t ic = 0; ic < in_channels; ++ic) {
      for (int64_t t = 0; t < taps; ++t) {
        const float value = w[(oc * in_channels + ic) * taps + t];
        const int64_t at = blocked_input ? (((ic / kBlock) * taps + t) * kBlock + ic % kBlock) * kBlock + out_lane
                                         : (ic * taps + t) * kBlock + out_lane;
        block[at] = value;
      }
    }
  }
  packed.bias_.assign(static_cast<size_t>(out_blocks * kBlock), 0.0f);
  if (bias != nullptr) std::copy(bias, bias + out_channels, packed.bias_.begin());
  if (blocked_input && conv::winograd_weights_fit(out_channels, in_channels, kernel_h, kernel_w)) {
    packed.pack_winograd(w);
  }
  return packed;
}

ConvWeights ConvWeights::pack_depthwise(const float* w, const float* bias, int64_t channels, int64_t kernel_h,
                                        int64_t kernel_w) {
  ConvWeights packed;
  packed.out_channels_ = channels;
  packed.in_channels_ = channels;
  packed.kernel_h_ = kernel_h;
  packed.kernel_w_ = kernel_w;
  packed.depthwise_ = true;
  const int64_t taps = kernel_h * kernel_w;
  packed.packed_.assign(static_cast<size_t>(blocks_of(channels) * packed.out_block_stride()), 0.0f);
  for (int64_t c = 0; c < channels; ++c) {
    float* block = packed.packed_.data() + (c / kBlock) * packed.out_block_stride();
    for (int64_t t = 0; t < taps; ++t) block[t * kBlock + c % kBlock] = w[c * taps + t];
  }
  packed.bias_.assign(static_cast<size_t>(blocks_of(channels) * kBlock), 0.0f);
  if (bias != nullptr) std::copy(bias, bias + channels, packed.bias_.begin());
  return packed;
}

void ConvWeights::pack_winograd(const float* w) {
  // U = G g G^T with G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]], computed in double.
  static constexpr double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  const int64_t in_blocks = blocks_of(in_channels_), out_blocks = blocks_of(out_channels_);
  const int64_t element_floats = out_blocks * in_blocks * kBlock * kBlock;
  winograd_.assign(static_cast<size_t>(16 * element_floats), 0.0f);
  for (int64_t oc = 0; oc < out_channels_; ++oc) {
    for (int64_t ic = 0; ic < in_channels_; ++ic) {
      const float* g = w + (oc * in_channels_ + ic) * 9;
      double gt[4][3];  // G g
      for (int a = 0; a < 4; ++a) {
        for (int j = 0; j < 3; ++j) {
          gt[a][j] = kG[a][0] * g[j] + kG[a][1] * g[3 + j] + kG[a][2] * g[6 + j];
        }
      }
      const int64_t at = (((oc / kBlock) * in_blocks + ic / kBlock) * kBlock + ic % kBlock) * kBlock + oc % kBlock;
      for (int a = 0; a < 4; ++a) {
        for (int b = 0; b < 4; ++b) {
          const double u = gt[a][0] * kG[b][0] + gt[a][1] * kG[b][1] + gt[a][2] * kG[b][2];
          winograd_[static_cast<size_t>((4 * a + b) * element_floats + at)] = static_cast<float>(u);
        }
      }
    }
  }
}

int64_t ConvWeights::out_block_stride() const {
  if (depthwise_) return kernel_h_ * kernel_w_ * kBlock;
  const int64_t in = blocked_input_ ? blocks_of(in_channels_) * kBlock * kBlock : in_channels_ * kBlock;
  return in * kernel_h_ * kernel_w_;
}

bool activation_in_block_registers(ActivationKind kind) {
  return activation_in_avx512_registers(kind) || kind == ActivationKind::kHardSigmoid ||
         kind == ActivationKind::kHardSwish;
}

WindowRange inner_window_range(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t pad,
                               int64_t dilation) {
  const int64_t begin = std::min(out, (pad + stride - 1) / stride);
  const int64_t last = in - ((kernel - 1) * dilation + 1) + pad;  // largest start + pad with the window inside
  return {begin, std::clamp<int64_t>(last < 0 ? 0 : last / stride + 1, begin, out)};
}

int64_t conv_edge_scratch_floats(const ConvWeights& w, int64_t stride_w) {
  const int64_t cols = (kMaxConvTilePixels - 1) * stride_w + w.kernel_w();
  const int64_t planes = w.blocked_input() ? blocks_of(w.in_channels()) * kBlock : w.in_channels();
  return planes * w.kernel_h() * cols;
}

WinogradLayout winograd_layout(const ConvWeights& w) {
  WinogradLayout l;
  l.in_blocks = blocks_of(w.in_channels());
  l.out_blocks = blocks_of(w.out_channels());
  // One vector of padding per element: with 2 blocks of 32 tiles the strides would be exactly 4 KiB, and the 16
  // elements of one tile, stored and loaded together, would all fall into one L1 set.
  l.v_element_stride = l.in_blocks * kWinogradChunkTiles * kBlock + kBlock;
  l.m_element_stride = l.out_blocks * kWinogradChunkTiles * kBlock + kBlock;
  return l;
}

int64_t winograd_scratch_floats(const ConvWeights& w) {
  const WinogradLayout l = winograd_layout(w);
  return 16 * (l.v_element_stride + l.m_element_stride);
}

const TierKernels* active_tier_kernels() {
#if defined(__x86_64__)
  static constexpr TierKernels kAvx512{f32_conv_nchwc_rows__avx512,     f32_conv_nchwc_winograd_rows__avx512,
                                       f32_depthwise_nchwc_rows__avx512, f32_reorder_to_nchwc__avx512,
                                       f32_reorder_from_nchwc__avx512,   f32_max_pool_nchwc_rows__avx512,
                                       f32_global_average_pool_nchwc__avx512, 2};
  static constexpr TierKernels kAvx2{f32_conv_nchwc_rows__avx2,     f32_conv_nchwc_winograd_rows__avx2,
                                     f32_depthwise_nchwc_rows__avx2, f32_reorder_to_nchwc__avx2,
                                     f32_reorder_from_nchwc__avx2,   f32_max_pool_nchwc_rows__avx2,
                                     f32_global_average_pool_nchwc__avx2, 1};
  if (cpu_isa_at_least(CpuIsa::kAvx512)) return &kAvx512;
  if (cpu_isa_at_least(CpuIsa::kAvx2)) return &kAvx2;
#endif
  return nullptr;
}

namespace {

// Reorders split each block plane into pieces of this many positions (a multiple of 16), so that one large image
// of one block also spreads over the threads.
constexpr int64_t kReorderPositions = 4096;

int64_t reorder_pieces(int64_t plane) {
  return std::max<int64_t>(1, (plane + kReorderPositions - 1) / kReorderPositions);
}

Expected<const TierKernels*> require_tier_kernels(const graph::Node& node) {
  if (const TierKernels* kernels = active_tier_kernels()) return kernels;
  return make_error(StatusCode::kNotImplemented, node.describe(),
                    ": the blocked-channel kernels need the avx2 CPU tier or above");
}

// X's shape as [N, blocks, H, W, 16] for a blocked tensor of `channels` channels, or an error naming it.
Status check_blocked(const Shape& x, int64_t channels, const std::string& description, const char* what) {
  if (x.size() != 5 || x[4] != kBlock || (channels >= 0 && x[1] != blocks_of(channels))) {
    return make_error(StatusCode::kInvalidArgument, description, ": ", what, " ", shape_to_string(x),
                      " is not a blocked-channel tensor [N, ", channels >= 0 ? blocks_of(channels) : -1, ", H, W, 16]");
  }
  return Status::ok();
}

class ReorderInKernel final : public Kernel {
 public:
  ReorderInKernel(std::string description, const TierKernels& kernels)
      : description_(std::move(description)), kernels_(kernels) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, 1, description_));
    const Shape& x = inputs[0]->shape();
    if (x.size() != 4) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input ", shape_to_string(x), " must be 4-D");
    }
    outputs.assign(1, OutputDesc{DataType::kFloat32, Shape{x[0], blocks_of(x[1]), x[2], x[3], kBlock}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Shape& x = inputs[0]->shape();
    const int64_t batch = x[0], channels = x[1], plane = x[2] * x[3], blocks = blocks_of(channels);
    const float* src = inputs[0]->data<float>();
    float* dst = outputs[0].data<float>();
    const int64_t pieces = reorder_pieces(plane);
    pool.parallel_for(batch * blocks * pieces, 1, [&](int64_t begin, int64_t end) {
      for (int64_t unit = begin; unit < end; ++unit) {
        const int64_t image_block = unit / pieces, piece = unit % pieces;
        const int64_t n = image_block / blocks, block = image_block % blocks;
        kernels_.reorder_to(src + n * channels * plane, channels, plane, block, dst + image_block * plane * kBlock,
                            piece * kReorderPositions, std::min(plane, (piece + 1) * kReorderPositions));
      }
    });
    return Status::ok();
  }

 private:
  std::string description_;
  const TierKernels& kernels_;
};

class ReorderOutKernel final : public Kernel {
 public:
  ReorderOutKernel(std::string description, const TierKernels& kernels, int64_t channels)
      : description_(std::move(description)), kernels_(kernels), channels_(channels) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, 1, description_));
    const Shape& x = inputs[0]->shape();
    TRY(check_blocked(x, channels_, description_, "input"));
    outputs.assign(1, OutputDesc{DataType::kFloat32, Shape{x[0], channels_, x[2], x[3]}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Shape& x = inputs[0]->shape();
    const int64_t batch = x[0], blocks = x[1], plane = x[2] * x[3];
    const float* src = inputs[0]->data<float>();
    float* dst = outputs[0].data<float>();
    const int64_t pieces = reorder_pieces(plane);
    pool.parallel_for(batch * blocks * pieces, 1, [&](int64_t begin, int64_t end) {
      for (int64_t unit = begin; unit < end; ++unit) {
        const int64_t image_block = unit / pieces, piece = unit % pieces;
        const int64_t n = image_block / blocks, block = image_block % blocks;
        kernels_.reorder_from(src + image_block * plane * kBlock, channels_, plane, block, dst + n * channels_ * plane,
                              piece * kReorderPositions, std::min(plane, (piece + 1) * kReorderPositions));
      }
    });
    return Status::ok();
  }

 private:
  std::string description_;
  const TierKernels& kernels_;
  int64_t channels_;
};

class ConvKernel final : public Kernel {
 public:
  ConvKernel(std::string description, const TierKernels& kernels, conv::WindowAttrs attrs, FusedActivation activation,
             ConvWeights weights)
      : description_(std::move(description)),
        kernels_(kernels),
        attrs_(std::move(attrs)),
        activation_(activation),
        weights_(std::move(weights)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, 1, description_));
    TRY_ASSIGN(const conv::Geometry g, geometry(inputs[0]->shape()));
    const Shape y{inputs[0]->shape()[0], blocks_of(weights_.out_channels()), g.out[0], g.out[1], kBlock};
    if (const Tensor* z = optional_input(inputs, 3); z != nullptr && z->shape() != y) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input Z ", shape_to_string(z->shape()),
                        " must have the output's shape ", shape_to_string(y));
    }
    outputs.assign(1, OutputDesc{DataType::kFloat32, y});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    TRY_ASSIGN(const conv::Geometry g, geometry(x.shape()));
    Tensor& y = outputs[0];
    const Tensor* z = optional_input(inputs, 3);
    if (weights_.has_winograd() && g.stride[0] == 1 && g.stride[1] == 1) {
      run_winograd(x, y, z, g, pool);
      return Status::ok();
    }
    if (weights_.depthwise()) {
      run_depthwise(x, y, z, g, pool);
      return Status::ok();
    }
    const int64_t out_blocks = blocks_of(weights_.out_channels());
    const int64_t group = conv_block_group(out_blocks, kernels_.max_block_group);
    const int64_t groups = out_blocks / group;
    const int64_t rows = g.out[0];
    const int64_t scratch_floats = conv_edge_scratch_floats(weights_, g.stride[1]);
    // Units are (image, block group, output row), rows innermost so a chunk's rows share input rows in cache.
    pool.parallel_for(x.shape()[0] * groups * rows, 1, [&](int64_t begin, int64_t end) {
      float* const edge = nxrt::scratch_floats(ScratchUse::kNchwcEdge, scratch_floats);
      for (int64_t unit = begin; unit < end;) {
        const int64_t n = unit / (groups * rows);
        const int64_t block = (unit / rows) % groups * group;
        const int64_t oh_begin = unit % rows;
        const int64_t oh_end = std::min(rows, oh_begin + (end - unit));
        kernels_.conv_rows(job_for(x, y, z, g, n), block, block + group, oh_begin, oh_end, edge);
        unit += oh_end - oh_begin;
      }
    });
    return Status::ok();
  }

 private:
  ConvJob job_for(const Tensor& x, Tensor& y, const Tensor* z, const conv::Geometry& g, int64_t n) const {
    const int64_t batch = x.shape()[0];
    const int64_t in_image = x.numel() / std::max<int64_t>(batch, 1);
    const int64_t out_image = y.numel() / std::max<int64_t>(batch, 1);
    ConvJob job;
    job.x = x.data<float>() + n * in_image;
    job.weights = &weights_;
    job.in_h = g.in[0];
    job.in_w = g.in[1];
    job.stride_h = g.stride[0];
    job.stride_w = g.stride[1];
    job.pad_top = g.pad_begin[0];
    job.pad_left = g.pad_begin[1];
    job.out_h = g.out[0];
    job.out_w = g.out[1];
    job.y = y.data<float>() + n * out_image;
    job.z = z != nullptr ? z->data<float>() + n * out_image : nullptr;
    job.activation = activation_;
    job.activation_after_store = !activation_in_block_registers(activation_.kind);
    return job;
  }

  // Units are (image, block, output row), rows innermost.
  void run_depthwise(const Tensor& x, Tensor& y, const Tensor* z, const conv::Geometry& g, ThreadPool& pool) const {
    const int64_t blocks = blocks_of(weights_.out_channels());
    const int64_t rows = g.out[0];
    pool.parallel_for(x.shape()[0] * blocks * rows, 1, [&](int64_t begin, int64_t end) {
      for (int64_t unit = begin; unit < end;) {
        const int64_t n = unit / (blocks * rows);
        const int64_t block = (unit / rows) % blocks;
        const int64_t oh_begin = unit % rows;
        const int64_t oh_end = std::min(rows, oh_begin + (end - unit));
        kernels_.depthwise_rows(job_for(x, y, z, g, n), block, block + 1, oh_begin, oh_end);
        unit += oh_end - oh_begin;
      }
    });
  }

  // Units are (image, row of 2x2 output tiles); each unit transforms its tiles for all output blocks.
  void run_winograd(const Tensor& x, Tensor& y, const Tensor* z, const conv::Geometry& g, ThreadPool& pool) const {
    const int64_t tile_rows = (g.out[0] + 1) / 2;
    const int64_t scratch_floats = winograd_scratch_floats(weights_);
    pool.parallel_for(x.shape()[0] * tile_rows, 1, [&](int64_t begin, int64_t end) {
      float* const buffer = nxrt::scratch_floats(ScratchUse::kNchwcWinograd, scratch_floats);
      for (int64_t unit = begin; unit < end;) {
        const int64_t n = unit / tile_rows, th_begin = unit % tile_rows;
        const int64_t th_end = std::min(tile_rows, th_begin + (end - unit));
        kernels_.winograd_rows(job_for(x, y, z, g, n), th_begin, th_end, buffer);
        unit += th_end - th_begin;
      }
    });
  }

  Expected<conv::Geometry> geometry(const Shape& x) const {
    if (weights_.blocked_input()) {
      TRY(check_blocked(x, weights_.in_channels(), description_, "input X"));
    } else if (x.size() != 4 || x[1] != weights_.in_channels()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input X ", shape_to_string(x), " must be [N, ",
                        weights_.in_channels(), ", H, W]");
    }
    const int64_t spatial[2] = {x[2], x[3]};
    const int64_t kernel[2] = {weights_.kernel_h(), weights_.kernel_w()};
    return conv::resolve_geometry(attrs_, spatial, kernel, description_);
  }

  std::string description_;
  const TierKernels& kernels_;
  conv::WindowAttrs attrs_;
  FusedActivation activation_;
  ConvWeights weights_;
};

class MaxPoolKernel final : public Kernel {
 public:
  MaxPoolKernel(std::string description, const TierKernels& kernels, conv::WindowAttrs attrs)
      : description_(std::move(description)), kernels_(kernels), attrs_(std::move(attrs)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, 1, description_));
    const Shape& x = inputs[0]->shape();
    TRY_ASSIGN(const conv::Geometry g, geometry(x));
    outputs.assign(1, OutputDesc{DataType::kFloat32, Shape{x[0], x[1], g.out[0], g.out[1], kBlock}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Shape& x = inputs[0]->shape();
    TRY_ASSIGN(const conv::Geometry g, geometry(x));
    PoolJob job;
    job.in_h = g.in[0];
    job.in_w = g.in[1];
    job.out_h = g.out[0];
    job.out_w = g.out[1];
    job.kernel_h = g.kernel[0];
    job.kernel_w = g.kernel[1];
    job.stride_h = g.stride[0];
    job.stride_w = g.stride[1];
    job.pad_top = g.pad_begin[0];
    job.pad_left = g.pad_begin[1];
    job.dilation_h = g.dilation[0];
    job.dilation_w = g.dilation[1];
    const int64_t planes = x[0] * x[1];
    const int64_t in_plane = job.in_h * job.in_w * kBlock, out_plane = job.out_h * job.out_w * kBlock;
    const float* src = inputs[0]->data<float>();
    float* dst = outputs[0].data<float>();
    pool.parallel_for(planes * job.out_h, 1, [&](int64_t begin, int64_t end) {
      for (int64_t unit = begin; unit < end;) {
        const int64_t plane = unit / job.out_h, oh_begin = unit % job.out_h;
        const int64_t oh_end = std::min(job.out_h, oh_begin + (end - unit));
        kernels_.max_pool_rows(job, src + plane * in_plane, dst + plane * out_plane, oh_begin, oh_end);
        unit += oh_end - oh_begin;
      }
    });
    return Status::ok();
  }

 private:
  Expected<conv::Geometry> geometry(const Shape& x) const {
    TRY(check_blocked(x, -1, description_, "input X"));
    const int64_t spatial[2] = {x[2], x[3]};
    TRY_ASSIGN(conv::Geometry g, conv::resolve_geometry(attrs_, spatial, attrs_.kernel_shape, description_));
    for (int d = 0; d < 2; ++d) {
      // Each window must hold an input tap (the kernel starts from the first one).
      if (g.pad_begin[d] >= g.kernel[d] * g.dilation[d] - (g.dilation[d] - 1) || g.in[d] == 0) {
        return make_error(StatusCode::kInvalidArgument, description_, ": a pooling window lies in the padding");
      }
    }
    return g;
  }

  std::string description_;
  const TierKernels& kernels_;
  conv::WindowAttrs attrs_;
};

class GlobalAveragePoolKernel final : public Kernel {
 public:
  GlobalAveragePoolKernel(std::string description, const TierKernels& kernels)
      : description_(std::move(description)), kernels_(kernels) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, 1, description_));
    const Shape& x = inputs[0]->shape();
    TRY(check_blocked(x, -1, description_, "input X"));
    outputs.assign(1, OutputDesc{DataType::kFloat32, Shape{x[0], x[1], 1, 1, kBlock}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Shape& x = inputs[0]->shape();
    const int64_t plane = x[2] * x[3];
    const float* src = inputs[0]->data<float>();
    float* dst = outputs[0].data<float>();
    if (plane == 0) {
      std::fill(dst, dst + outputs[0].numel(), __builtin_nanf(""));  // the mean of nothing
      return Status::ok();
    }
    pool.parallel_for(x[0] * x[1], 1, [&](int64_t begin, int64_t end) {
      for (int64_t unit = begin; unit < end; ++unit) {
        kernels_.global_average_pool(src + unit * plane * kBlock, plane, dst + unit * kBlock);
      }
    });
    return Status::ok();
  }

 private:
  std::string description_;
  const TierKernels& kernels_;
};

Expected<std::unique_ptr<Kernel>> create_reorder_in(const KernelInfo& info) {
  TRY_ASSIGN(const TierKernels* kernels, require_tier_kernels(info.node));
  return std::unique_ptr<Kernel>(std::make_unique<ReorderInKernel>(info.node.describe(), *kernels));
}

Expected<std::unique_ptr<Kernel>> create_reorder_out(const KernelInfo& info) {
  TRY_ASSIGN(const TierKernels* kernels, require_tier_kernels(info.node));
  TRY_ASSIGN(const int64_t channels, info.node.attr_int("channels", -1));
  if (channels < 0) {
    return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": attribute channels must be >= 0");
  }
  return std::unique_ptr<Kernel>(std::make_unique<ReorderOutKernel>(info.node.describe(), *kernels, channels));
}

Expected<std::unique_ptr<Kernel>> create_conv(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const TierKernels* kernels, require_tier_kernels(node));
  TRY_ASSIGN(conv::WindowAttrs attrs, conv::parse_window_attrs(node));
  TRY_ASSIGN(const std::string activation_name, node.attr_string("activation", ""));
  TRY_ASSIGN(const std::vector<float> params, node.attr_floats("activation_params", {}));
  TRY_ASSIGN(const FusedActivation activation, parse_fused_activation(activation_name, params, node.describe()));
  TRY_ASSIGN(const int64_t input_blocked, node.attr_int("input_blocked", 1));
  const Tensor* w = info.constant_inputs.size() > 1 ? info.constant_inputs[1] : nullptr;
  const Tensor* b = info.constant_inputs.size() > 2 ? info.constant_inputs[2] : nullptr;
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != graph::kNoValue;
  const bool dense_2d = attrs.auto_pad == conv::AutoPad::kNotSet &&
                        std::all_of(attrs.dilations.begin(), attrs.dilations.end(), [](int64_t d) { return d == 1; });
  const bool weights_fit = w != nullptr && w->dtype() == DataType::kFloat32 && w->rank() == 4 &&
                           (!has_bias || b != nullptr) &&
                           (b == nullptr || (b->dtype() == DataType::kFloat32 && b->numel() == w->shape()[0]));
  // Depthwise: one input channel per group and one filter per channel, over a blocked input.
  const bool depthwise = weights_fit && attrs.group > 1 && attrs.group == w->shape()[0] && w->shape()[1] == 1 &&
                         input_blocked != 0;
  if (!weights_fit || !dense_2d || (attrs.group != 1 && !depthwise)) {
    return make_error(StatusCode::kInvalidGraph, node.describe(),
                      ": NchwcConv needs constant f32 W [M, C, kH, kW] and B [M], group 1 (or depthwise: group M, "
                      "W [M, 1, kH, kW], blocked input), no dilation and explicit pads");
  }
  const Shape& s = w->shape();
  const float* bias = b != nullptr ? b->data<float>() : nullptr;
  ConvWeights weights =
      depthwise ? ConvWeights::pack_depthwise(w->data<float>(), bias, s[0], s[2], s[3])
                : ConvWeights::pack(w->data<float>(), bias, s[0], s[1], s[2], s[3], input_blocked != 0);
  return std::unique_ptr<Kernel>(
      std::make_unique<ConvKernel>(node.describe(), *kernels, std::move(attrs), activation, std::move(weights)));
}

Expected<std::unique_ptr<Kernel>> create_max_pool(const KernelInfo& info) {
  TRY_ASSIGN(const TierKernels* kernels, require_tier_kernels(info.node));
  TRY_ASSIGN(conv::WindowAttrs attrs, conv::parse_window_attrs(info.node));
  if (attrs.kernel_shape.size() != 2 || attrs.auto_pad != conv::AutoPad::kNotSet) {
    return make_error(StatusCode::kInvalidGraph, info.node.describe(),
                      ": NchwcMaxPool needs a 2-D kernel_shape and explicit pads");
  }
  return std::unique_ptr<Kernel>(std::make_unique<MaxPoolKernel>(info.node.describe(), *kernels, std::move(attrs)));
}

Expected<std::unique_ptr<Kernel>> create_global_average_pool(const KernelInfo& info) {
  TRY_ASSIGN(const TierKernels* kernels, require_tier_kernels(info.node));
  return std::unique_ptr<Kernel>(std::make_unique<GlobalAveragePoolKernel>(info.node.describe(), *kernels));
}

constexpr DataTypeMask kF32 = type_mask(TypeList<float>{});

const KernelDef kNchwcKernels[] = {
    {"NchwcReorderIn", "com.nxrt", 1, kLatestOpset, kF32, 0, create_reorder_in},
    {"NchwcReorderOut", "com.nxrt", 1, kLatestOpset, kF32, 0, create_reorder_out},
    {"NchwcConv", "com.nxrt", 1, kLatestOpset, kF32, 0, create_conv},
    {"NchwcMaxPool", "com.nxrt", 1, kLatestOpset, kF32, 0, create_max_pool},
    {"NchwcGlobalAveragePool", "com.nxrt", 1, kLatestOpset, kF32, 0, create_global_average_pool},
};

}  // namespace

}  // namespace nxrt::cpu::nchwc

namespace nxrt::cpu {

std::span<const KernelDef> nchwc_kernels() { return nchwc::kNchwcKernels; }

}  // namespace nxrt::cpu
