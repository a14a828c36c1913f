// DFT, STFT, window functions, MelWeightMatrix.
// Complex tensors are real tensors with a trailing dimension of 2 (real, imaginary); a trailing 1 is a real
// signal. Transforms run in double precision for every input type (signal_fft.h).
// DFT: forward, inverse (scaled by 1/n), onesided forward (n/2+1 bins) and onesided inverse (the real signal
// of length n whose one-sided spectrum is the input, like numpy.fft.irfft; output trailing dimension 1).
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ep/cpu/kernel.h"
#include "ep/cpu/signal/signal_fft.h"
#include "ep/cpu/signal/signal_ops.h"

namespace nxrt::cpu {

Expected<int64_t> read_scalar_int(const Tensor* t, const std::string& description, const std::string& name) {
  if (t == nullptr) return make_error(StatusCode::kInvalidArgument, description, ": missing ", name);
  if (t->numel() != 1 || t->rank() > 1) {
    return make_error(StatusCode::kInvalidArgument, description, ": ", name, " must hold one value, got shape ",
                      shape_to_string(t->shape()));
  }
  if (t->dtype() == DataType::kInt64) return t->data<int64_t>()[0];
  if (t->dtype() == DataType::kInt32) return t->data<int32_t>()[0];
  return make_error(StatusCode::kInvalidArgument, description, ": ", name, " must be int32 or int64, got ",
                    data_type_name(t->dtype()));
}

namespace {

// The per-task buffers of a transform of length n (the line and Bluestein's padded scratch) against the byte limit.
Status check_line_bytes(int64_t n, const RunLimits* limits) {
  if (limits == nullptr) return Status::ok();
  const std::optional<size_t> table = FftPlan::table_bytes(n);
  if (!table) return make_error(StatusCode::kInvalidArgument, "transform length ", n, " is too large");
  // The padded scratch is at most 4n entries: 2^k < 2 (2n - 1).
  return limits->check_bytes(static_cast<size_t>(n) * 5 * sizeof(Complex), "a transform line of length " +
                                                                                std::to_string(n));
}

struct DftGeometry {
  int64_t outer = 1;
  int64_t length = 0;  // input length along the axis
  int64_t inner = 1;
  int64_t components = 1;
  int64_t n = 0;       // transform length
  int64_t bins = 0;    // output length along the axis
  Shape out_shape;
};

class DftKernel final : public Kernel {
 public:
  DftKernel(std::string description, bool inverse, bool onesided, int64_t axis_attribute, bool axis_is_input)
      : description_(std::move(description)), inverse_(inverse), onesided_(onesided),
        axis_attribute_(axis_attribute), axis_is_input_(axis_is_input) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(DftGeometry g, geometry(inputs));
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), std::move(g.out_shape)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const DftGeometry g, geometry(inputs));
    if (outputs[0].numel() == 0) return Status::ok();
    const RunLimits* limits = current_run_limits();
    TRY(check_line_bytes(g.n, limits));
    TRY_ASSIGN(const FftPlan plan, FftPlan::create(g.n, limits));
    const bool real_output = inverse_ && onesided_;
    visit_dtype<FloatTypes>(inputs[0]->dtype(), [&]<class T>() {
      const T* x = inputs[0]->data<T>();
      T* y = outputs[0].data<T>();
      const int64_t out_components = real_output ? 1 : 2;
      const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, g.n));
      pool.parallel_for(g.outer * g.inner, grain, [&](int64_t begin, int64_t end) {
        std::vector<Complex> line(static_cast<size_t>(g.n));
        std::vector<Complex> scratch;
        for (int64_t item = begin; item < end; ++item) {
          if (run_should_stop(limits)) return;
          const int64_t o = item / g.inner;
          const int64_t i = item % g.inner;
          const auto at = [&](int64_t j) { return ((o * g.length + j) * g.inner + i) * g.components; };
          std::fill(line.begin(), line.end(), Complex(0, 0));
          if (real_output) {
            // Hermitian extension of the one-sided spectrum. The bins that are their own mirror image (0, and
            // n/2 for even n) must be real: their imaginary parts are dropped as numpy.fft.irfft drops them,
            // except that a NaN or infinite one still poisons the result (re + 0 * im).
            const int64_t half = g.n / 2;
            for (int64_t k = 0; k <= half && k < g.length; ++k) {
              double re = static_cast<double>(x[at(k)]);
              double im = g.components == 2 ? static_cast<double>(x[at(k) + 1]) : 0.0;
              const bool self_mirrored = k == 0 || 2 * k == g.n;
              if (self_mirrored) {
                re += 0.0 * im;
                im = 0.0;
              }
              line[static_cast<size_t>(k)] = Complex(re, im);
              if (!self_mirrored) line[static_cast<size_t>(g.n - k)] = Complex(re, -im);
            }
          } else {
            for (int64_t j = 0; j < std::min(g.length, g.n); ++j) {
              const double re = static_cast<double>(x[at(j)]);
              const double im = g.components == 2 ? static_cast<double>(x[at(j) + 1]) : 0.0;
              line[static_cast<size_t>(j)] = Complex(re, im);
            }
          }
          const double scale = inverse_ ? 1.0 / static_cast<double>(g.n) : 1.0;
          if (!plan.transform(line.data(), inverse_, scratch, limits, scale)) return;
          for (int64_t k = 0; k < g.bins; ++k) {
            T* out = y + ((o * g.bins + k) * g.inner + i) * out_components;
            const Complex v = line[static_cast<size_t>(k)];
            out[0] = T(v.real());
            if (!real_output) out[1] = T(v.imag());
          }
        }
      });
    });
    return Status::ok();
  }

 private:
  Expected<DftGeometry> geometry(KernelInputs inputs) const {
    if (inputs.empty() || inputs[0] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0 (input)");
    }
    const Tensor& x = *inputs[0];
    const auto rank = static_cast<int64_t>(x.rank());
    if (rank < 2 || (x.shape().back() != 1 && x.shape().back() != 2)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 (input) shape ",
                        shape_to_string(x.shape()), " must have rank >= 2 and a last dimension of 1 or 2");
    }
    int64_t axis = axis_attribute_;
    if (axis_is_input_ && inputs.size() > 2 && inputs[2] != nullptr) {
      TRY_ASSIGN(axis, read_scalar_int(inputs[2], description_, "input 2 (axis)"));
    }
    if (axis < -rank || axis >= rank || axis == -1 || axis == rank - 1) {
      return make_error(StatusCode::kInvalidArgument, description_, ": axis ", axis,
                        " is out of range for input 0 of rank ", rank, " (the last dimension holds components)");
    }
    if (axis < 0) axis += rank;
    DftGeometry g;
    const Shape& s = x.shape();
    for (int64_t d = 0; d < axis; ++d) g.outer *= s[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < rank - 1; ++d) g.inner *= s[static_cast<size_t>(d)];
    g.length = s[static_cast<size_t>(axis)];
    g.components = s.back();
    if (inputs.size() > 1 && inputs[1] != nullptr) {
      TRY_ASSIGN(g.n, read_scalar_int(inputs[1], description_, "input 1 (dft_length)"));
      if (g.n < 1) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (dft_length) value ", g.n,
                          " must be positive");
      }
    } else {
      g.n = inverse_ && onesided_ ? 2 * std::max<int64_t>(0, g.length - 1) : g.length;
    }
    if (g.n > (int64_t{1} << 24)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": transform length ", g.n, " is too large");
    }
    g.bins = !inverse_ && onesided_ ? g.n / 2 + 1 : g.n;
    if (g.n == 0) g.bins = 0;
    g.out_shape = s;
    g.out_shape[static_cast<size_t>(axis)] = g.bins;
    g.out_shape.back() = inverse_ && onesided_ ? 1 : 2;
    return g;
  }

  std::string description_;
  bool inverse_;
  bool onesided_;
  int64_t axis_attribute_;
  bool axis_is_input_;
};

struct StftGeometry {
  int64_t batch = 0;
  int64_t length = 0;
  int64_t components = 1;
  int64_t step = 0;
  int64_t frame_length = 0;
  int64_t frames = 0;
  int64_t bins = 0;
};

class StftKernel final : public Kernel {
 public:
  StftKernel(std::string description, bool onesided) : description_(std::move(description)), onesided_(onesided) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const StftGeometry g, geometry(inputs));
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), Shape{g.batch, g.frames, g.bins, 2}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const StftGeometry g, geometry(inputs));
    if (outputs[0].numel() == 0) return Status::ok();
    const RunLimits* limits = current_run_limits();
    TRY(check_line_bytes(g.frame_length, limits));
    TRY_ASSIGN(const FftPlan plan, FftPlan::create(g.frame_length, limits));
    const Tensor* window = optional_input(inputs, 2);
    visit_dtype<FloatTypes>(inputs[0]->dtype(), [&]<class T>() {
      const T* x = inputs[0]->data<T>();
      const T* w = window == nullptr ? nullptr : window->data<T>();
      T* y = outputs[0].data<T>();
      pool.parallel_for(g.batch * g.frames, 1, [&](int64_t begin, int64_t end) {
        std::vector<Complex> line(static_cast<size_t>(g.frame_length));
        std::vector<Complex> scratch;
        for (int64_t item = begin; item < end; ++item) {
          if (run_should_stop(limits)) return;
          const int64_t b = item / g.frames;
          const int64_t f = item % g.frames;
          for (int64_t j = 0; j < g.frame_length; ++j) {
            const T* sample = x + (b * g.length + f * g.step + j) * g.components;
            const double weight = w == nullptr ? 1.0 : static_cast<double>(w[j]);
            const double re = static_cast<double>(sample[0]);
            const double im = g.components == 2 ? static_cast<double>(sample[1]) : 0.0;
            line[static_cast<size_t>(j)] = Complex(re * weight, im * weight);
          }
          if (!plan.transform(line.data(), false, scratch, limits)) return;
          T* out = y + item * g.bins * 2;
          for (int64_t k = 0; k < g.bins; ++k) {
            out[2 * k] = T(line[static_cast<size_t>(k)].real());
            out[2 * k + 1] = T(line[static_cast<size_t>(k)].imag());
          }
        }
      });
    });
    return Status::ok();
  }

 private:
  Expected<StftGeometry> geometry(KernelInputs inputs) const {
    if (inputs.size() < 2 || inputs[0] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": inputs 0 (signal) and 1 (frame_step) are required");
    }
    const Tensor& x = *inputs[0];
    if (x.rank() != 3 || (x.shape()[2] != 1 && x.shape()[2] != 2)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 (signal) shape ",
                        shape_to_string(x.shape()), " must be [batch, length, 1 or 2]");
    }
    StftGeometry g;
    g.batch = x.shape()[0];
    g.length = x.shape()[1];
    g.components = x.shape()[2];
    TRY_ASSIGN(g.step, read_scalar_int(inputs[1], description_, "input 1 (frame_step)"));
    if (g.step <= 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (frame_step) value ", g.step,
                        " must be positive");
    }
    const Tensor* window = optional_input(inputs, 2);
    const Tensor* frame_length = optional_input(inputs, 3);
    if (frame_length != nullptr) {
      TRY_ASSIGN(g.frame_length, read_scalar_int(frame_length, description_, "input 3 (frame_length)"));
    } else {
      g.frame_length = window != nullptr ? window->numel() : g.length;
    }
    if (window != nullptr && (window->rank() != 1 || window->numel() != g.frame_length ||
                              window->dtype() != x.dtype())) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 2 (window) shape ",
                        shape_to_string(window->shape()), " type ", data_type_name(window->dtype()),
                        " does not match frame length ", g.frame_length);
    }
    if (g.frame_length <= 0 || g.frame_length > g.length) {
      return make_error(StatusCode::kInvalidArgument, description_, ": frame length ", g.frame_length,
                        " must be in [1, ", g.length, "] for input 0 (signal)");
    }
    g.frames = 1 + (g.length - g.frame_length) / g.step;
    g.bins = onesided_ ? g.frame_length / 2 + 1 : g.frame_length;
    return g;
  }

  std::string description_;
  bool onesided_;
};

Expected<std::unique_ptr<Kernel>> create_dft(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const int64_t inverse, node.attr_int("inverse", 0));
  TRY_ASSIGN(const int64_t onesided, node.attr_int("onesided", 0));
  const bool axis_is_input = info.opset() >= 20;
  int64_t axis = -2;
  if (!axis_is_input) {
    TRY_ASSIGN(axis, node.attr_int("axis", 1));
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<DftKernel>(node.describe(), inverse != 0, onesided != 0, axis, axis_is_input));
}

Expected<std::unique_ptr<Kernel>> create_stft(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t onesided, info.node.attr_int("onesided", 1));
  return std::unique_ptr<Kernel>(std::make_unique<StftKernel>(info.node.describe(), onesided != 0));
}

constexpr DataTypeMask kSignalFloat = type_mask(FloatTypes{});
constexpr DataTypeMask kIndexTypes = type_mask(TypeList<int32_t, int64_t>{});

const KernelDef kSignalKernels[] = {
    {"DFT", graph::kOnnxDomain, 17, kLatestOpset, kSignalFloat, 0, create_dft},
    {"STFT", graph::kOnnxDomain, 17, kLatestOpset, kSignalFloat, 0, create_stft},
    {"HannWindow", graph::kOnnxDomain, 17, kLatestOpset, kIndexTypes, 0, create_hann_window},
    {"HammingWindow", graph::kOnnxDomain, 17, kLatestOpset, kIndexTypes, 0, create_hamming_window},
    {"BlackmanWindow", graph::kOnnxDomain, 17, kLatestOpset, kIndexTypes, 0, create_blackman_window},
    {"MelWeightMatrix", graph::kOnnxDomain, 17, kLatestOpset, kIndexTypes, 0, create_mel_weight_matrix},
};

}  // namespace

std::span<const KernelDef> signal_kernels() { return kSignalKernels; }

}  // namespace nxrt::cpu
