// Complex FFT of any length in double precision: iterative radix-2 for powers of two, Bluestein's chirp-z
// algorithm (through a power-of-two FFT) otherwise. A plan is immutable after construction, so one plan serves
// many threads; each thread passes its own scratch buffer.
//
// The model decides the length (a DFT's dft_length input), so building a plan and transforming are bounded by the
// run's limits (run_limits.h): the tables are checked against the byte limit before they are allocated, and both
// poll the stop flag every kStopCheckInterval butterflies or table entries.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/status.h"
#include "ep/cpu/run_limits.h"

namespace nxrt::cpu {

using Complex = std::complex<double>;

class FftPlan {
 public:
  // The plan of length n >= 1. INVALID_ARGUMENT when its tables exceed `limits`' byte limit; the run's stop error
  // when the run must stop while the tables are built. `limits` may be null (no limits).
  static Expected<FftPlan> create(int64_t n, const RunLimits* limits);

  int64_t size() const { return n_; }
  // Bytes of the scratch buffer transform() grows for this plan (0 for powers of two).
  size_t scratch_bytes() const { return static_cast<size_t>(padded_) * sizeof(Complex); }
  // Bytes of the plan's tables for length n (what create() checks), nullopt on overflow.
  static std::optional<size_t> table_bytes(int64_t n);

  // In place on data[0..n): X_k = output_scale * sum_j x_j exp(-+2 pi i jk/n) (the + sign for inverse). False
  // when `limits` says the run must stop; data is then unspecified. Data near the double range is scaled down by
  // a power of two for the transform and back after (together with output_scale, e.g. an inverse's 1 / n), so a
  // result overflows only where its value does.
  bool transform(Complex* data, bool inverse, std::vector<Complex>& scratch, const RunLimits* limits,
                 double output_scale = 1.0) const;

 private:
  explicit FftPlan(int64_t n);
  Status build_tables(const RunLimits* limits);
  bool radix2(Complex* data, int64_t size, const RunLimits* limits) const;
  bool transform_unscaled(Complex* data, bool inverse, std::vector<Complex>& scratch, const RunLimits* limits) const;

  int64_t n_;
  bool power_of_two_;
  int64_t padded_ = 0;                   // Bluestein convolution length (power of two >= 2n - 1), 0 for 2^k
  std::vector<Complex> twiddles_;        // exp(-2 pi i k / size), k < size / 2, size = n or padded_
  std::vector<int64_t> bit_reverse_;
  std::vector<Complex> chirp_;           // exp(-pi i k^2 / n), k < n
  std::vector<Complex> chirp_spectrum_;  // FFT of the conjugate chirp wrapped to padded_
};

}  // namespace nxrt::cpu
