#include "ep/cpu/signal/signal_fft.h"

#include <cmath>
#include <numbers>
#include <utility>

namespace nxrt::cpu {

namespace {

bool is_power_of_two(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

void conjugate(Complex* data, int64_t n) {
  for (int64_t i = 0; i < n; ++i) data[i] = std::conj(data[i]);
}

}  // namespace

FftPlan::FftPlan(int64_t n) : n_(n), power_of_two_(is_power_of_two(n)), padded_(0) {
  if (n <= 1) return;
  int64_t size = n;
  if (!power_of_two_) {
    padded_ = 1;
    while (padded_ < 2 * n - 1) padded_ <<= 1;
    size = padded_;
  }
  twiddles_.resize(static_cast<size_t>(size / 2));
  for (int64_t k = 0; k < size / 2; ++k) {
    const double angle = -2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(size);
    twiddles_[static_cast<size_t>(k)] = Complex(std::cos(angle), std::sin(angle));
  }
  int bits = 0;
  while ((int64_t{1} << bits) < size) ++bits;
  bit_reverse_.resize(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) {
    int64_t r = 0;
    for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
    bit_reverse_[static_cast<size_t>(i)] = r;
  }
  if (power_of_two_) return;
  chirp_.resize(static_cast<size_t>(n));
  // k^2 mod 2n, updated as (k+1)^2 = k^2 + 2k + 1, keeps the angle small so large k lose no precision.
  int64_t square = 0;
  for (int64_t k = 0; k < n; ++k) {
    if (k > 0) square = (square + 2 * k - 1) % (2 * n);
    const double angle = -std::numbers::pi * static_cast<double>(square) / static_cast<double>(n);
    chirp_[static_cast<size_t>(k)] = Complex(std::cos(angle), std::sin(angle));
  }
  chirp_spectrum_.assign(static_cast<size_t>(padded_), Complex(0, 0));
  chirp_spectrum_[0] = std::conj(chirp_[0]);
  for (int64_t k = 1; k < n; ++k) {
    chirp_spectrum_[static_cast<size_t>(k)] = std::conj(chirp_[static_cast<size_t>(k)]);
    chirp_spectrum_[static_cast<size_t>(padded_ - k)] = std::conj(chirp_[static_cast<size_t>(k)]);
  }
  radix2(chirp_spectrum_.data(), padded_, twiddles_, bit_reverse_);
}

void FftPlan::radix2(Complex* data, int64_t size, const std::vector<Complex>& twiddles,
                     const std::vector<int64_t>& bit_reverse) const {
  for (int64_t i = 0; i < size; ++i) {
    const int64_t j = bit_reverse[static_cast<size_t>(i)];
    if (i < j) std::swap(data[i], data[j]);
  }
  for (int64_t length = 2; length <= size; length <<= 1) {
    const int64_t half = length / 2;
    const int64_t step = size / length;
    for (int64_t start = 0; start < size; start += length) {
      for (int64_t k = 0; k < half; ++k) {
        const Complex u = data[start + k];
        const Complex v = data[start + k + half] * twiddles[static_cast<size_t>(k * step)];
        data[start + k] = u + v;
        data[start + k + half] = u - v;
      }
    }
  }
}

void FftPlan::transform(Complex* data, bool inverse, std::vector<Complex>& scratch) const {
  if (n_ <= 1) return;
  if (inverse) conjugate(data, n_);
  if (power_of_two_) {
    radix2(data, n_, twiddles_, bit_reverse_);
  } else {
    scratch.assign(static_cast<size_t>(padded_), Complex(0, 0));
    for (int64_t j = 0; j < n_; ++j) scratch[static_cast<size_t>(j)] = data[j] * chirp_[static_cast<size_t>(j)];
    radix2(scratch.data(), padded_, twiddles_, bit_reverse_);
    for (int64_t k = 0; k < padded_; ++k) scratch[static_cast<size_t>(k)] *= chirp_spectrum_[static_cast<size_t>(k)];
    // Inverse FFT of the product through conjugation.
    conjugate(scratch.data(), padded_);
    radix2(scratch.data(), padded_, twiddles_, bit_reverse_);
    const double scale = 1.0 / static_cast<double>(padded_);
    for (int64_t k = 0; k < n_; ++k) {
      data[k] = std::conj(scratch[static_cast<size_t>(k)]) * scale * chirp_[static_cast<size_t>(k)];
    }
  }
  if (inverse) conjugate(data, n_);
}

}  // namespace nxrt::cpu
