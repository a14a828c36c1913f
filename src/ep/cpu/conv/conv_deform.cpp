// DeformConv (N-D; sampling points moved by learned offsets, read with multilinear interpolation where points
// outside the input read as 0, optionally scaled by a mask) and CausalConvWithState (causal depthwise 1-D
// convolution over concat(past_state, input) with optional SiLU; present_state keeps the last k - 1 steps).
#include <algorithm>
#include <cmath>
#include <string>

#include "ep/cpu/conv/conv_kernels.h"

namespace nxrt::cpu::conv {

namespace {

constexpr size_t kMaxDeformRank = 8;

// Multilinear sample of `plane` (dims g.in) at fractional coordinates `pos`.
template <class Acc>
Acc sample(const Acc* plane, const Geometry& g, const Acc* pos) {
  const size_t rank = g.rank();
  int64_t base[kMaxDeformRank];
  Acc frac[kMaxDeformRank];
  for (size_t d = 0; d < rank; ++d) {
    const Acc f = std::floor(pos[d]);
    if (!(f > Acc(-2)) || !(f < static_cast<Acc>(g.in[d]))) return Acc{0};  // also rejects NaN
    base[d] = static_cast<int64_t>(f);
    frac[d] = pos[d] - f;
  }
  Acc sum{0};
  for (uint32_t corner = 0; corner < (1u << rank); ++corner) {
    Acc weight{1};
    int64_t offset = 0;
    bool inside = true;
    for (size_t d = 0; d < rank; ++d) {
      const bool high = ((corner >> d) & 1u) != 0;
      const int64_t p = base[d] + (high ? 1 : 0);
      if (p < 0 || p >= g.in[d]) {
        inside = false;
        break;
      }
      weight *= high ? frac[d] : Acc{1} - frac[d];
      offset = offset * g.in[d] + p;
    }
    if (inside && weight != Acc{0}) sum += weight * plane[offset];
  }
  return sum;
}

class DeformConvKernel final : public Kernel {
 public:
  DeformConvKernel(std::string description, DataTypeMask types, WindowAttrs attrs, int64_t offset_group)
      : description_(std::move(description)), types_(types), attrs_(std::move(attrs)), offset_group_(offset_group) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const ConvProblem p, problem(inputs));
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), p.y_shape});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const ConvProblem p, problem(inputs));
    Tensor& y = outputs[0];
    if (y.numel() == 0) return Status::ok();
    visit_dtype<FloatTypes>(inputs[0]->dtype(), [&]<class T>() { run_typed<T>(inputs, p, y, pool); });
    return Status::ok();
  }

 private:
  const Tensor* input(KernelInputs inputs, size_t i) const { return optional_input(inputs, i); }

  Expected<ConvProblem> problem(KernelInputs inputs) const {
    TRY(require_inputs(inputs, 3, description_));
    const Tensor& x = *inputs[0];
    if (!type_in(types_, x.dtype())) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input type ",
                        data_type_name(x.dtype()));
    }
    for (size_t i = 1; i < 5; ++i) {
      const Tensor* t = input(inputs, i);
      if (t != nullptr && t->dtype() != x.dtype()) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " type ",
                          data_type_name(t->dtype()), " differs from X");
      }
    }
    TRY_ASSIGN(ConvProblem p, conv_problem(attrs_, x.shape(), inputs[1]->shape(), description_));
    const size_t rank = p.geometry.rank();
    if (rank > kMaxDeformRank) {
      return make_error(StatusCode::kInvalidArgument, description_, ": at most ", kMaxDeformRank,
                        " spatial dims are supported");
    }
    if (p.in_channels % offset_group_ != 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": X channels (", p.in_channels,
                        ") are not divisible by offset_group ", offset_group_);
    }
    const int64_t taps = p.geometry.kernel_size();
    auto expect = [&](const Tensor& t, int64_t channels, const char* name) -> Status {
      Shape want = {p.batch, channels};
      want.insert(want.end(), p.geometry.out.begin(), p.geometry.out.end());
      if (t.shape() != want) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", name, " has shape ",
                          shape_to_string(t.shape()), ", expected ", shape_to_string(want));
      }
      return Status::ok();
    };
    TRY(expect(*inputs[2], offset_group_ * taps * static_cast<int64_t>(rank), "offset"));
    if (const Tensor* b = input(inputs, 3)) {
      if (b->rank() != 1 || b->shape()[0] != p.out_channels) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input B ", shape_to_string(b->shape()),
                          " must be 1-D with ", p.out_channels, " values");
      }
    }
    if (const Tensor* mask = input(inputs, 4)) TRY(expect(*mask, offset_group_ * taps, "mask"));
    return p;
  }

  template <class T>
  void run_typed(KernelInputs inputs, const ConvProblem& p, Tensor& y, ThreadPool& pool) const {
    using Acc = AccOf<T>;
    const Geometry& g = p.geometry;
    const size_t rank = g.rank();
    const auto x = to_acc<Acc>(inputs[0]->data<T>(), inputs[0]->numel());
    const auto w = to_acc<Acc>(inputs[1]->data<T>(), inputs[1]->numel());
    const auto offset = to_acc<Acc>(inputs[2]->data<T>(), inputs[2]->numel());
    const Tensor* b = input(inputs, 3);
    const Tensor* m = input(inputs, 4);
    const auto mask = m ? to_acc<Acc>(m->data<T>(), m->numel()) : std::vector<Acc>{};
    const auto bias_values = b ? to_acc<Acc>(b->data<T>(), b->numel()) : std::vector<Acc>{};
    const int64_t group = attrs_.group;
    const int64_t in_per_group = p.in_channels / group;
    const int64_t out_per_group = p.out_channels / group;
    const int64_t channels_per_offset_group = p.in_channels / offset_group_;
    const int64_t taps = g.kernel_size();
    const int64_t in_size = g.in_size();
    const int64_t out_size = g.out_size();
    const int64_t k_dim = in_per_group * taps;
    std::vector<Acc> col(static_cast<size_t>(k_dim * out_size));
    std::vector<Acc> ys(static_cast<size_t>(y.numel()));
    for (int64_t n = 0; n < p.batch; ++n) {
      for (int64_t gi = 0; gi < group; ++gi) {
        pool.parallel_for(k_dim, 1, [&](int64_t begin, int64_t end) {
          Acc pos[kMaxDeformRank];
          int64_t k[kMaxDeformRank];
          int64_t o[kMaxDeformRank];
          for (int64_t r = begin; r < end; ++r) {
            const int64_t c = gi * in_per_group + r / taps;
            const int64_t tap = r % taps;
            const int64_t og = c / channels_per_offset_group;
            for (int64_t t = tap, d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
              k[d] = t % g.kernel[static_cast<size_t>(d)];
              t /= g.kernel[static_cast<size_t>(d)];
            }
            const Acc* plane = x.data() + (n * p.in_channels + c) * in_size;
            const Acc* off =
                offset.data() + ((n * offset_group_ + og) * taps + tap) * static_cast<int64_t>(rank) * out_size;
            const Acc* scale = m ? mask.data() + ((n * offset_group_ + og) * taps + tap) * out_size : nullptr;
            Acc* dst = col.data() + r * out_size;
            std::fill(o, o + rank, int64_t{0});
            for (int64_t j = 0; j < out_size; ++j) {
              for (size_t d = 0; d < rank; ++d) {
                pos[d] = static_cast<Acc>(o[d] * g.stride[d] - g.pad_begin[d] + k[d] * g.dilation[d]) +
                         off[static_cast<int64_t>(d) * out_size + j];
              }
              Acc v = sample(plane, g, pos);
              if (scale != nullptr) v *= scale[j];
              dst[j] = v;
              for (size_t d = rank; d-- > 0;) {
                if (++o[d] < g.out[d]) break;
                o[d] = 0;
              }
            }
          }
        });
        Acc* yg = ys.data() + (n * p.out_channels + gi * out_per_group) * out_size;
        if (k_dim == 0) {
          std::fill(yg, yg + out_per_group * out_size, Acc{0});
        } else {
          GemmArgs args;
          args.m = out_per_group;
          args.n = out_size;
          args.k = k_dim;
          args.lda = k_dim;
          args.ldb = out_size;
          args.ldc = out_size;
          gemm(args, w.data() + gi * out_per_group * k_dim, col.data(), yg, pool);
        }
        if (b != nullptr) {
          for (int64_t mo = 0; mo < out_per_group; ++mo) {
            const Acc bias = bias_values[static_cast<size_t>(gi * out_per_group + mo)];
            for (int64_t j = 0; j < out_size; ++j) yg[mo * out_size + j] += bias;
          }
        }
      }
    }
    from_acc(ys.data(), y.numel(), y.data<T>());
  }

  std::string description_;
  DataTypeMask types_;
  WindowAttrs attrs_;
  int64_t offset_group_;
};

class CausalConvKernel final : public Kernel {
 public:
  CausalConvKernel(std::string description, bool silu) : description_(std::move(description)), silu_(silu) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.size() < 2 || inputs[0] == nullptr || inputs[1] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input or weight");
    }
    const Tensor& x = *inputs[0];
    const Tensor& w = *inputs[1];
    if (x.rank() != 3 || w.rank() != 3 || w.shape()[0] != x.shape()[1] || w.shape()[1] != 1 || w.shape()[2] < 1) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input ", shape_to_string(x.shape()),
                        " must be (batch, channels, length) and weight ", shape_to_string(w.shape()),
                        " (channels, 1, k) with k >= 1");
    }
    const int64_t state = w.shape()[2] - 1;
    const Shape state_shape = {x.shape()[0], x.shape()[1], state};
    for (size_t i = 1; i < inputs.size(); ++i) {
      if (inputs[i] != nullptr && inputs[i]->dtype() != x.dtype()) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " type differs from input");
      }
    }
    if (inputs.size() > 2 && inputs[2] != nullptr && inputs[2]->shape() != Shape{x.shape()[1]}) {
      return make_error(StatusCode::kInvalidArgument, description_, ": bias ", shape_to_string(inputs[2]->shape()),
                        " must be (channels)");
    }
    if (inputs.size() > 3 && inputs[3] != nullptr && inputs[3]->shape() != state_shape) {
      return make_error(StatusCode::kInvalidArgument, description_, ": past_state ",
                        shape_to_string(inputs[3]->shape()), " must be ", shape_to_string(state_shape));
    }
    outputs = {OutputDesc{x.dtype(), x.shape()}, OutputDesc{x.dtype(), state_shape}};
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    visit_dtype<FloatTypes>(inputs[0]->dtype(), [&]<class T>() { run_typed<T>(inputs, outputs, pool); });
    return Status::ok();
  }

 private:
  template <class T>
  void run_typed(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const {
    const Tensor& x = *inputs[0];
    const int64_t batch = x.shape()[0];
    const int64_t channels = x.shape()[1];
    const int64_t length = x.shape()[2];
    const int64_t k = inputs[1]->shape()[2];
    const int64_t state = k - 1;
    const T* xd = x.data<T>();
    const T* wd = inputs[1]->data<T>();
    const T* bias = inputs.size() > 2 && inputs[2] != nullptr ? inputs[2]->data<T>() : nullptr;
    const T* past = inputs.size() > 3 && inputs[3] != nullptr ? inputs[3]->data<T>() : nullptr;
    T* y = outputs[0].data<T>();
    T* present = outputs.size() > 1 ? outputs[1].data<T>() : nullptr;
    pool.parallel_for(batch * channels, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> padded(static_cast<size_t>(length + state));
      for (int64_t row = begin; row < end; ++row) {
        const int64_t c = row % channels;
        for (int64_t t = 0; t < state; ++t) {
          padded[static_cast<size_t>(t)] = past ? static_cast<float>(past[row * state + t]) : 0.0f;
        }
        for (int64_t t = 0; t < length; ++t) {
          padded[static_cast<size_t>(state + t)] = static_cast<float>(xd[row * length + t]);
        }
        const float b = bias ? static_cast<float>(bias[c]) : 0.0f;
        for (int64_t t = 0; t < length; ++t) {
          float sum = b;
          for (int64_t j = 0; j < k; ++j) sum += static_cast<float>(wd[c * k + j]) * padded[static_cast<size_t>(t + j)];
          float out = static_cast<float>(T(sum));
          if (silu_) out = out / (1.0f + std::exp(-out));
          y[row * length + t] = T(out);
        }
        if (present != nullptr) {
          for (int64_t t = 0; t < state; ++t) present[row * state + t] = T(padded[static_cast<size_t>(length + t)]);
        }
      }
    });
  }

  std::string description_;
  bool silu_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> create_deform_conv(const KernelInfo& info) {
  TRY_ASSIGN(WindowAttrs attrs, parse_window_attrs(info.node));
  TRY_ASSIGN(const int64_t offset_group, info.node.attr_int("offset_group", 1));
  if (offset_group <= 0) {
    return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": offset_group must be > 0");
  }
  const DataTypeMask types =
      info.opset() >= 22 ? type_mask(FloatTypes{}) : type_mask(TypeList<float, double, Float16>{});
  return std::unique_ptr<Kernel>(
      std::make_unique<DeformConvKernel>(info.node.describe(), types, std::move(attrs), offset_group));
}

Expected<std::unique_ptr<Kernel>> create_causal_conv_with_state(const KernelInfo& info) {
  TRY_ASSIGN(const std::string activation, info.node.attr_string("activation", "none"));
  if (activation != "none" && activation != "silu" && activation != "swish") {
    return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": unsupported activation '", activation, "'");
  }
  return std::unique_ptr<Kernel>(std::make_unique<CausalConvKernel>(info.node.describe(), activation != "none"));
}

}  // namespace nxrt::cpu::conv
