// Complex FFT of any length in double precision: iterative radix-2 for powers of two, Bluestein's chirp-z
// algorithm (through a power-of-two FFT) otherwise. A plan is immutable after construction, so one plan serves
// many threads; each thread passes its own scratch buffer.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

namespace nxrt::cpu {

using Complex = std::complex<double>;

class FftPlan {
 public:
  explicit FftPlan(int64_t n);
  int64_t size() const { return n_; }
  // In place on data[0..n): X_k = sum_j x_j exp(-+2 pi i jk/n) (the + sign for inverse), unnormalised.
  void transform(Complex* data, bool inverse, std::vector<Complex>& scratch) const;

 private:
  void radix2(Complex* data, int64_t size, const std::vector<Complex>& twiddles,
              const std::vector<int64_t>& bit_reverse) const;

  int64_t n_;
  bool power_of_two_;
  int64_t padded_;                       // Bluestein convolution length (power of two >= 2n - 1)
  std::vector<Complex> twiddles_;        // exp(-2 pi i k / size), k < size / 2, size = n or padded_
  std::vector<int64_t> bit_reverse_;
  std::vector<Complex> chirp_;           // exp(-pi i k^2 / n), k < n
  std::vector<Complex> chirp_spectrum_;  // FFT of the conjugate chirp wrapped to padded_
};

}  // namespace nxrt::cpu
