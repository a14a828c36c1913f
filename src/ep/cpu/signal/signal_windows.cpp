// HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix.
// Windows of size N use the denominator N (periodic = 1) or N - 1 (symmetric). A symmetric window of one
// sample is the spec's function body at N - 1 = 0: the angle 0 * (2 pi / 0) is NaN, so the window is [NaN], and
// [0] for integer output types (float values convert to integers toward zero, NaN to 0).
// MelWeightMatrix follows onnx.reference: num_mel_bins + 2 edges spread evenly on the mel scale between the edge
// frequencies, each mapped to the DFT bin floor((dft_length + 1) * hz / sample_rate).
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ep/cpu/signal/signal_ops.h"

namespace nxrt::cpu {

namespace {

enum class WindowKind { kHann, kHamming, kBlackman };

// v in the output type; for integer types v is finite or NaN (which stores 0) and lies in [-1, 1].
template <class T>
T store_value(double v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<T>) {
    return std::isnan(v) ? T(0) : static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

Expected<DataType> output_type(const graph::Node& node) {
  TRY_ASSIGN(const int64_t value, node.attr_int("output_datatype", static_cast<int64_t>(DataType::kFloat32)));
  const auto type = static_cast<DataType>(value);
  if (value < 0 || value > kMaxDataTypeValue || !type_list_contains(NumericTypes{}, type)) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute output_datatype = ", value,
                      " is not a supported numeric type");
  }
  return type;
}

// Sample i of the window with denominator N (periodic) or N - 1 (symmetric); NaN for a denominator of 0 (the
// spec's 0 * (2 pi / 0)). The formulas and the order of their operations are onnx.reference's in float64
// (Hann as sin^2, Hamming's beta as 1 - alpha, Blackman summed from the cosine terms), so the windows' zeros
// and ones come out as the reference's: Blackman(0) is exactly 0, not 0.42 - 0.5 + 0.08 = -1.4e-17.
double window_value(WindowKind kind, int64_t i, double denominator) {
  if (denominator == 0) return std::numeric_limits<double>::quiet_NaN();
  constexpr double pi = std::numbers::pi;
  const auto n = static_cast<double>(i);
  switch (kind) {
    case WindowKind::kHann: {
      const double s = std::sin(n * pi / denominator);
      return s * s;
    }
    case WindowKind::kHamming: {
      constexpr double alpha = 25.0 / 46.0;
      return alpha - std::cos(n * pi * 2.0 / denominator) * (1.0 - alpha);
    }
    case WindowKind::kBlackman:
      return std::cos(n * (pi * 2.0) / denominator) * -0.5 + std::cos(n * (pi * 4.0) / denominator) * 0.08 + 0.42;
  }
  return 0.0;
}

class WindowKernel final : public Kernel {
 public:
  WindowKernel(std::string description, WindowKind kind, DataType type, bool periodic)
      : description_(std::move(description)), kind_(kind), type_(type), periodic_(periodic) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const int64_t size, window_size(inputs));
    outputs.assign(1, OutputDesc{type_, Shape{size}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    TRY_ASSIGN(const int64_t size, window_size(inputs));
    const double denominator = static_cast<double>(periodic_ ? size : size - 1);
    visit_dtype<NumericTypes>(type_, [&]<class T>() {
      T* y = outputs[0].data<T>();
      for (int64_t i = 0; i < size; ++i) {
        y[i] = store_value<T>(window_value(kind_, i, denominator));
      }
    });
    return Status::ok();
  }

 private:
  Expected<int64_t> window_size(KernelInputs inputs) const {
    TRY_ASSIGN(const int64_t size, read_scalar_int(inputs.empty() ? nullptr : inputs[0], description_,
                                                   "input 0 (size)"));
    if (size < 0 || size > (int64_t{1} << 40)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 (size) value ", size,
                        " is out of range");
    }
    return size;
  }

  std::string description_;
  WindowKind kind_;
  DataType type_;
  bool periodic_;
};

template <WindowKind Kind>
Expected<std::unique_ptr<Kernel>> create_window(const KernelInfo& info) {
  TRY_ASSIGN(const DataType type, output_type(info.node));
  TRY_ASSIGN(const int64_t periodic, info.node.attr_int("periodic", 1));
  return std::unique_ptr<Kernel>(std::make_unique<WindowKernel>(info.node.describe(), Kind, type, periodic != 0));
}

Expected<double> read_scalar_float(const Tensor* t, const std::string& description, const std::string& name) {
  if (t == nullptr || t->numel() != 1 || !type_list_contains(FloatTypes{}, t->dtype())) {
    return make_error(StatusCode::kInvalidArgument, description, ": ", name, " must be one float value");
  }
  double value = 0;
  visit_dtype<FloatTypes>(t->dtype(), [&]<class T>() { value = static_cast<double>(t->data<T>()[0]); });
  return value;
}

// Python's float a // b (numpy's floor_divide) for b > 0: the floor of the exact quotient, through fmod, where
// floor(a / b) may land one higher when a / b rounds up to an integer.
double floor_divide(double a, double b) {
  const double mod = std::fmod(a, b);
  double quotient = (a - mod) / b;
  if (mod != 0 && mod < 0) quotient -= 1.0;
  if (quotient == 0) return 0.0;
  double floored = std::floor(quotient);
  if (quotient - floored > 0.5) floored += 1.0;
  return floored;
}

struct MelParameters {
  int64_t mel_bins = 0;
  int64_t dft_length = 0;
  int64_t sample_rate = 0;
  double lower_hz = 0;
  double upper_hz = 0;
};

class MelWeightMatrixKernel final : public Kernel {
 public:
  MelWeightMatrixKernel(std::string description, DataType type) : description_(std::move(description)), type_(type) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const MelParameters p, parameters(inputs));
    outputs.assign(1, OutputDesc{type_, Shape{p.dft_length / 2 + 1, p.mel_bins}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    TRY_ASSIGN(const MelParameters p, parameters(inputs));
    const int64_t spectrogram_bins = p.dft_length / 2 + 1;
    // The reference's float64 steps in its order (log1p and expm1 with ln 10), so the edges, which floor
    // continuous values, fall on the same bins.
    constexpr double ln10 = std::numbers::ln10;
    const auto to_mel = [&](double hz) { return 2595.0 * std::log1p(hz / 700.0) / ln10; };
    const double low_mel = to_mel(p.lower_hz);
    const double step = (to_mel(p.upper_hz) - low_mel) / static_cast<double>(p.mel_bins + 2);
    // Bin edges stay doubles: extreme or non-finite inputs put them far outside int64, and only the rows inside
    // [0, spectrogram_bins) are visited (the triangle weights still use the exact edges).
    std::vector<double> edges(static_cast<size_t>(p.mel_bins + 2));
    for (size_t i = 0; i < edges.size(); ++i) {
      const double mel = static_cast<double>(i) * step + low_mel;
      const double hz = 700.0 * std::expm1(mel / 2595.0 * ln10);
      edges[i] = floor_divide(static_cast<double>(p.dft_length + 1) * hz, static_cast<double>(p.sample_rate));
    }
    std::vector<double> matrix(static_cast<size_t>(spectrogram_bins * p.mel_bins), 0.0);
    const double last_row = static_cast<double>(spectrogram_bins - 1);
    // Calls fn(row) for the integer rows in [from, to] that lie in the matrix.
    const auto for_rows = [&](double from, double to, auto&& fn) {
      const double first = std::max(from, 0.0);
      const double last = std::min(to, last_row);
      if (!(first <= last)) return;
      for (auto row = static_cast<int64_t>(first); row <= static_cast<int64_t>(last); ++row) fn(row);
    };
    for (int64_t m = 0; m < p.mel_bins; ++m) {
      const double left = edges[static_cast<size_t>(m)];
      const double center = edges[static_cast<size_t>(m + 1)];
      const double right = edges[static_cast<size_t>(m + 2)];
      if (!std::isfinite(left) || !std::isfinite(center) || !std::isfinite(right)) continue;
      const auto set = [&](int64_t row, double value) { matrix[static_cast<size_t>(row * p.mel_bins + m)] = value; };
      if (center == left) {
        for_rows(center, center, [&](int64_t row) { set(row, 1.0); });
      } else {
        for_rows(left, center, [&](int64_t row) { set(row, (static_cast<double>(row) - left) / (center - left)); });
      }
      for_rows(center, right - 1, [&](int64_t row) {
        set(row, (right - static_cast<double>(row)) / (right - center));
      });
    }
    visit_dtype<NumericTypes>(type_, [&]<class T>() {
      T* y = outputs[0].data<T>();
      for (size_t i = 0; i < matrix.size(); ++i) y[i] = store_value<T>(matrix[i]);
    });
    return Status::ok();
  }

 private:
  Expected<MelParameters> parameters(KernelInputs inputs) const {
    if (inputs.size() < 5) {
      return make_error(StatusCode::kInvalidArgument, description_, ": five inputs are required");
    }
    MelParameters p;
    TRY_ASSIGN(p.mel_bins, read_scalar_int(inputs[0], description_, "input 0 (num_mel_bins)"));
    TRY_ASSIGN(p.dft_length, read_scalar_int(inputs[1], description_, "input 1 (dft_length)"));
    TRY_ASSIGN(p.sample_rate, read_scalar_int(inputs[2], description_, "input 2 (sample_rate)"));
    TRY_ASSIGN(p.lower_hz, read_scalar_float(inputs[3], description_, "input 3 (lower_edge_hertz)"));
    TRY_ASSIGN(p.upper_hz, read_scalar_float(inputs[4], description_, "input 4 (upper_edge_hertz)"));
    if (p.mel_bins < 0 || p.mel_bins > (int64_t{1} << 20)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 (num_mel_bins) value ", p.mel_bins,
                        " is out of range");
    }
    if (p.dft_length <= 0 || p.dft_length > (int64_t{1} << 28)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (dft_length) value ", p.dft_length,
                        " is out of range");
    }
    if (p.sample_rate <= 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 2 (sample_rate) value ",
                        p.sample_rate, " must be positive");
    }
    if (!(p.lower_hz >= 0) || !(p.upper_hz >= p.lower_hz) || !std::isfinite(p.upper_hz)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 3 (lower_edge_hertz) ", p.lower_hz,
                        " and input 4 (upper_edge_hertz) ", p.upper_hz, " must satisfy 0 <= lower <= upper");
    }
    return p;
  }

  std::string description_;
  DataType type_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> create_hann_window(const KernelInfo& info) {
  return create_window<WindowKind::kHann>(info);
}

Expected<std::unique_ptr<Kernel>> create_hamming_window(const KernelInfo& info) {
  return create_window<WindowKind::kHamming>(info);
}

Expected<std::unique_ptr<Kernel>> create_blackman_window(const KernelInfo& info) {
  return create_window<WindowKind::kBlackman>(info);
}

Expected<std::unique_ptr<Kernel>> create_mel_weight_matrix(const KernelInfo& info) {
  TRY_ASSIGN(const DataType type, output_type(info.node));
  return std::unique_ptr<Kernel>(std::make_unique<MelWeightMatrixKernel>(info.node.describe(), type));
}

}  // namespace nxrt::cpu
