#include "ep/cpu/signal/signal_fft.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <utility>

namespace nxrt::cpu {

namespace {

// Butterflies or table entries between two polls of the run's stop flag.
constexpr int64_t kStopCheckInterval = int64_t{1} << 16;

bool is_power_of_two(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// The radix-2 length of a plan: n itself for a power of two, else Bluestein's 2^k >= 2n - 1.
int64_t transform_size(int64_t n) {
  if (is_power_of_two(n)) return n;
  int64_t padded = 1;
  while (padded < 2 * n - 1) padded <<= 1;
  return padded;
}

void conjugate(Complex* data, int64_t n) {
  for (int64_t i = 0; i < n; ++i) data[i] = std::conj(data[i]);
}

// True at every kStopCheckInterval-th step `i` when the run must stop.
bool stop_at(int64_t i, const RunLimits* limits) {
  return (i & (kStopCheckInterval - 1)) == 0 && run_should_stop(limits);
}

}  // namespace

FftPlan::FftPlan(int64_t n) : n_(n), power_of_two_(is_power_of_two(n)) {}

std::optional<size_t> FftPlan::table_bytes(int64_t n) {
  if (n <= 1) return size_t{0};
  // Past 2^55 the byte count could overflow; no tensor comes near such lengths.
  if (n > (int64_t{1} << 55)) return std::nullopt;
  const auto size = static_cast<size_t>(transform_size(n));
  size_t bytes = size / 2 * sizeof(Complex) + size * sizeof(int64_t);
  if (!is_power_of_two(n)) bytes += static_cast<size_t>(n) * sizeof(Complex) + size * sizeof(Complex);
  return bytes;
}

Expected<FftPlan> FftPlan::create(int64_t n, const RunLimits* limits) {
  if (n < 1) return make_error(StatusCode::kInvalidArgument, "FFT length ", n, " must be positive");
  const std::optional<size_t> bytes = table_bytes(n);
  if (!bytes) return make_error(StatusCode::kInvalidArgument, "FFT length ", n, " is too large");
  if (limits != nullptr) TRY(limits->check_bytes(*bytes, "the FFT tables of length " + std::to_string(n)));
  FftPlan plan(n);
  TRY(plan.build_tables(limits));
  return plan;
}

Status FftPlan::build_tables(const RunLimits* limits) {
  if (n_ <= 1) return Status::ok();
  const int64_t size = transform_size(n_);
  if (!power_of_two_) padded_ = size;
  const auto stopped = [&] { return limits->stop_status(); };
  twiddles_.resize(static_cast<size_t>(size / 2));
  for (int64_t k = 0; k < size / 2; ++k) {
    if (stop_at(k, limits)) return stopped();
    const double angle = -2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(size);
    twiddles_[static_cast<size_t>(k)] = Complex(std::cos(angle), std::sin(angle));
  }
  // The quarter turn exactly: cos(-pi / 2) rounds to 6e-17, which would leak a huge imaginary part into the real
  // one (a rotation by -i is exact in numpy's FFT).
  if (size >= 4) twiddles_[static_cast<size_t>(size / 4)] = Complex(0.0, -1.0);
  int bits = 0;
  while ((int64_t{1} << bits) < size) ++bits;
  // reverse(i) = reverse(i / 2) / 2 with i's lowest bit moved to the top: one step per entry.
  bit_reverse_.assign(static_cast<size_t>(size), 0);
  for (int64_t i = 1; i < size; ++i) {
    if (stop_at(i, limits)) return stopped();
    bit_reverse_[static_cast<size_t>(i)] = (bit_reverse_[static_cast<size_t>(i >> 1)] >> 1) | ((i & 1) << (bits - 1));
  }
  if (power_of_two_) return Status::ok();
  chirp_.resize(static_cast<size_t>(n_));
  // k^2 mod 2n, updated as (k+1)^2 = k^2 + 2k + 1, keeps the angle small so large k lose no precision.
  int64_t square = 0;
  for (int64_t k = 0; k < n_; ++k) {
    if (stop_at(k, limits)) return stopped();
    if (k > 0) square = (square + 2 * k - 1) % (2 * n_);
    const double angle = -std::numbers::pi * static_cast<double>(square) / static_cast<double>(n_);
    chirp_[static_cast<size_t>(k)] = Complex(std::cos(angle), std::sin(angle));
  }
  chirp_spectrum_.assign(static_cast<size_t>(padded_), Complex(0, 0));
  chirp_spectrum_[0] = std::conj(chirp_[0]);
  for (int64_t k = 1; k < n_; ++k) {
    chirp_spectrum_[static_cast<size_t>(k)] = std::conj(chirp_[static_cast<size_t>(k)]);
    chirp_spectrum_[static_cast<size_t>(padded_ - k)] = std::conj(chirp_[static_cast<size_t>(k)]);
  }
  if (!radix2(chirp_spectrum_.data(), padded_, limits)) return stopped();
  return Status::ok();
}

bool FftPlan::radix2(Complex* data, int64_t size, const RunLimits* limits) const {
  for (int64_t i = 0; i < size; ++i) {
    const int64_t j = bit_reverse_[static_cast<size_t>(i)];
    if (i < j) std::swap(data[i], data[j]);
  }
  int64_t since_check = 0;
  for (int64_t length = 2; length <= size; length <<= 1) {
    const int64_t half = length / 2;
    const int64_t step = size / length;
    for (int64_t start = 0; start < size; start += length) {
      for (int64_t k = 0; k < half; ++k) {
        const Complex u = data[start + k];
        const Complex v = data[start + k + half] * twiddles_[static_cast<size_t>(k * step)];
        data[start + k] = u + v;
        data[start + k + half] = u - v;
      }
      since_check += half;
      if (since_check >= kStopCheckInterval) {
        since_check = 0;
        if (run_should_stop(limits)) return false;
      }
    }
  }
  return true;
}

namespace {

// A power of two that brings data's largest finite component under 2^limit_exponent, or 1 when it already is:
// data may hold any double, and the butterflies and Bluestein's convolution grow magnitudes by up to
// padded^2 * 2n, which must not overflow where the transform's result does not.
double overflow_guard_scale(const Complex* data, int64_t n, int limit_exponent) {
  double peak = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (const double v : {std::abs(data[i].real()), std::abs(data[i].imag())}) {
      if (std::isfinite(v)) peak = std::max(peak, v);
    }
  }
  int exponent = 0;
  std::frexp(peak, &exponent);
  return exponent > limit_exponent ? std::ldexp(1.0, limit_exponent - exponent) : 1.0;
}

}  // namespace

bool FftPlan::transform(Complex* data, bool inverse, std::vector<Complex>& scratch, const RunLimits* limits,
                        double output_scale) const {
  if (n_ <= 1) {
    if (output_scale != 1.0 && n_ == 1) data[0] *= output_scale;
    return true;
  }
  int growth_bits = 1;
  while ((int64_t{1} << growth_bits) < std::max<int64_t>(padded_, n_)) ++growth_bits;
  // Scaling by a power of two is exact (only components below the result's rounding error lose digits).
  const double scale = overflow_guard_scale(data, n_, 1000 - 3 * growth_bits - 2);
  if (scale != 1.0) {
    for (int64_t i = 0; i < n_; ++i) data[i] *= scale;
  }
  if (!transform_unscaled(data, inverse, scratch, limits)) return false;
  const double factor = output_scale / scale;  // exact: scale is a power of two
  if (factor != 1.0) {
    for (int64_t i = 0; i < n_; ++i) data[i] *= factor;
  }
  return true;
}

bool FftPlan::transform_unscaled(Complex* data, bool inverse, std::vector<Complex>& scratch,
                                 const RunLimits* limits) const {
  if (inverse) conjugate(data, n_);
  if (power_of_two_) {
    if (!radix2(data, n_, limits)) return false;
  } else {
    scratch.assign(static_cast<size_t>(padded_), Complex(0, 0));
    for (int64_t j = 0; j < n_; ++j) scratch[static_cast<size_t>(j)] = data[j] * chirp_[static_cast<size_t>(j)];
    if (!radix2(scratch.data(), padded_, limits)) return false;
    for (int64_t k = 0; k < padded_; ++k) scratch[static_cast<size_t>(k)] *= chirp_spectrum_[static_cast<size_t>(k)];
    // Inverse FFT of the product through conjugation.
    conjugate(scratch.data(), padded_);
    if (!radix2(scratch.data(), padded_, limits)) return false;
    const double scale = 1.0 / static_cast<double>(padded_);
    for (int64_t k = 0; k < n_; ++k) {
      data[k] = std::conj(scratch[static_cast<size_t>(k)]) * scale * chirp_[static_cast<size_t>(k)];
    }
  }
  if (inverse) conjugate(data, n_);
  return true;
}

}  // namespace nxrt::cpu
