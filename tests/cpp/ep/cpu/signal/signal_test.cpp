#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

using Cd = std::complex<double>;

std::vector<Cd> naive_dft(const std::vector<Cd>& x, int64_t n, bool inverse) {
  std::vector<Cd> y(static_cast<size_t>(n));
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < n; ++k) {
    Cd sum = 0;
    for (int64_t j = 0; j < n && j < static_cast<int64_t>(x.size()); ++j) {
      const double angle = sign * 2.0 * std::numbers::pi * static_cast<double>((j * k) % n) / static_cast<double>(n);
      sum += x[static_cast<size_t>(j)] * Cd(std::cos(angle), std::sin(angle));
    }
    y[static_cast<size_t>(k)] = inverse ? sum / static_cast<double>(n) : sum;
  }
  return y;
}

std::vector<Cd> random_signal(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<Cd> v(n);
  for (auto& c : v) c = Cd(dist(rng), dist(rng));
  return v;
}

template <class T>
Tensor complex_tensor(const std::vector<Cd>& v) {
  std::vector<T> flat;
  for (const Cd& c : v) {
    flat.push_back(static_cast<T>(c.real()));
    flat.push_back(static_cast<T>(c.imag()));
  }
  return make_tensor<T>({1, static_cast<int64_t>(v.size()), 2}, flat);
}

TEST(DFT, MatchesNaiveDftForEveryLength) {
  for (int64_t n = 1; n <= 70; ++n) {
    const auto x = random_signal(static_cast<size_t>(n), static_cast<uint32_t>(n));
    for (bool inverse : {false, true}) {
      NodeBuilder b("DFT", 20);
      b.attr_int("inverse", inverse);
      Tensor out = run_one(b.node(), {complex_tensor<double>(x), Tensor(), make_tensor<int64_t>({}, {1})});
      ASSERT_EQ(out.shape(), (Shape{1, n, 2}));
      const auto y = to_vector<double>(out);
      const auto want = naive_dft(x, n, inverse);
      for (int64_t k = 0; k < n; ++k) {
        EXPECT_NEAR(y[static_cast<size_t>(2 * k)], want[static_cast<size_t>(k)].real(), 1e-12) << n;
        EXPECT_NEAR(y[static_cast<size_t>(2 * k + 1)], want[static_cast<size_t>(k)].imag(), 1e-12) << n;
      }
    }
  }
}

TEST(DFT, LongDoubleTransformsStayAccurate) {
  for (int64_t n : {1000, 1024, 997}) {
    const auto x = random_signal(static_cast<size_t>(n), 5);
    NodeBuilder b("DFT", 17);
    Tensor out = run_one(b.node(), {complex_tensor<double>(x)}, 3);
    const auto y = to_vector<double>(out);
    const auto want = naive_dft(x, n, false);
    double worst = 0;
    for (int64_t k = 0; k < n; ++k) {
      worst = std::max(worst, std::abs(Cd(y[static_cast<size_t>(2 * k)], y[static_cast<size_t>(2 * k + 1)]) -
                                       want[static_cast<size_t>(k)]));
    }
    EXPECT_LT(worst, 1e-10) << n;
  }
}

TEST(DFT, OnesidedRealRoundTripAndDftLength) {
  const std::vector<float> signal{1, -2, 3, 0.5f, 4, -1, 2};
  NodeBuilder forward("DFT", 20);
  forward.attr_int("onesided", 1);
  // dft_length 8 pads one zero.
  Tensor spectrum = run_one(forward.node(), {make_tensor<float>({1, 7, 1}, signal), make_tensor<int64_t>({}, {8})});
  ASSERT_EQ(spectrum.shape(), (Shape{1, 5, 2}));
  NodeBuilder back("DFT", 20);
  back.attr_int("onesided", 1).attr_int("inverse", 1);
  Tensor restored = run_one(back.node(), {spectrum});
  ASSERT_EQ(restored.shape(), (Shape{1, 8, 1}));
  const auto y = to_vector<float>(restored);
  for (size_t i = 0; i < signal.size(); ++i) EXPECT_NEAR(y[i], signal[i], 1e-5f);
  EXPECT_NEAR(y[7], 0.0f, 1e-5f);
  // dft_length 4 truncates.
  Tensor cut = run_one(NodeBuilder("DFT", 20).node(), {make_tensor<float>({1, 7, 1}, signal), make_tensor<int64_t>({}, {4})});
  ASSERT_EQ(cut.shape(), (Shape{1, 4, 2}));
  EXPECT_NEAR(to_vector<float>(cut)[0], 2.5f, 1e-6f);
}

TEST(DFT, AxisInputAndHalfTypes) {
  // [2, 3, 1]: transform along axis 0 (two-point sums and differences).
  NodeBuilder b("DFT", 20);
  Tensor out = run_one(b.node(), {make_half_tensor<Float16>({2, 3, 1}, {1, 2, 3, 10, 20, 30}), Tensor(),
                                  make_tensor<int64_t>({}, {-3})});
  ASSERT_EQ(out.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(to_float_vector(out), (std::vector<float>{11, 0, 22, 0, 33, 0, -9, 0, -18, 0, -27, 0}));
  Tensor brain = run_one(NodeBuilder("DFT", 17).node(), {make_half_tensor<BFloat16>({1, 2, 1}, {1, 3})});
  EXPECT_EQ(to_float_vector(brain), (std::vector<float>{4, 0, -2, 0}));
}

TEST(DFT, RejectsBadAxisAndLength) {
  NodeBuilder b("DFT", 20);
  const Tensor x = make_tensor<float>({1, 4, 1}, {1, 2, 3, 4});
  for (int64_t axis : {2, -1, 3, -4}) {
    auto out = run_kernel(b.node(), {x, Tensor(), make_tensor<int64_t>({}, {axis})});
    ASSERT_FALSE(out.has_value()) << axis;
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  }
  auto zero = run_kernel(b.node(), {x, make_tensor<int64_t>({}, {0})});
  ASSERT_FALSE(zero.has_value());
  EXPECT_NE(zero.status().message().find("input 1 (dft_length)"), std::string::npos);
  auto three = run_kernel(b.node(), {make_tensor<float>({1, 2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_FALSE(three.has_value());
  EXPECT_EQ(three.status().code(), StatusCode::kInvalidArgument);
}

TEST(STFT, MatchesWindowedFrames) {
  const auto signal = random_signal(20, 9);
  std::vector<float> real;
  for (const Cd& c : signal) real.push_back(static_cast<float>(c.real()));
  const std::vector<float> window{0.5f, 1, 1, 0.5f, 0.25f, 1};
  NodeBuilder b("STFT", 17);
  Tensor out = run_one(b.node(), {make_tensor<float>({1, 20, 1}, real), make_tensor<int64_t>({}, {4}),
                                  make_tensor<float>({6}, window)});
  ASSERT_EQ(out.shape(), (Shape{1, 4, 4, 2}));
  const auto y = to_vector<float>(out);
  for (int64_t f = 0; f < 4; ++f) {
    std::vector<Cd> frame;
    for (int64_t j = 0; j < 6; ++j) frame.emplace_back(real[static_cast<size_t>(f * 4 + j)] * window[static_cast<size_t>(j)]);
    const auto want = naive_dft(frame, 6, false);
    for (int64_t k = 0; k < 4; ++k) {
      EXPECT_NEAR(y[static_cast<size_t>((f * 4 + k) * 2)], want[static_cast<size_t>(k)].real(), 1e-5);
      EXPECT_NEAR(y[static_cast<size_t>((f * 4 + k) * 2 + 1)], want[static_cast<size_t>(k)].imag(), 1e-5);
    }
  }
  auto bad = run_kernel(b.node(), {make_tensor<float>({1, 20, 1}, real), make_tensor<int64_t>({}, {0})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("input 1 (frame_step)"), std::string::npos);
}

TEST(Windows, PeriodicSymmetricAndTypes) {
  NodeBuilder hann("HannWindow", 17);
  const auto periodic = to_vector<float>(run_one(hann.node(), {make_tensor<int64_t>({}, {4})}));
  EXPECT_NEAR(periodic[0], 0.0f, 1e-7f);
  EXPECT_NEAR(periodic[1], 0.5f, 1e-7f);
  EXPECT_NEAR(periodic[2], 1.0f, 1e-7f);
  NodeBuilder symmetric("HammingWindow", 17);
  symmetric.attr_int("periodic", 0).attr_int("output_datatype", 11);
  const auto ham = to_vector<double>(run_one(symmetric.node(), {make_tensor<int32_t>({}, {5})}));
  EXPECT_NEAR(ham[0], 4.0 / 46.0, 1e-15);
  EXPECT_NEAR(ham[2], 1.0, 1e-15);
  EXPECT_NEAR(ham[4], 4.0 / 46.0, 1e-15);
  NodeBuilder one("BlackmanWindow", 17);
  one.attr_int("periodic", 0);
  // The spec's function body divides by size - 1 = 0: a symmetric window of one sample is [NaN].
  const auto single = to_vector<float>(run_one(one.node(), {make_tensor<int64_t>({}, {1})}));
  ASSERT_EQ(single.size(), 1u);
  EXPECT_TRUE(std::isnan(single[0]));
  Tensor empty = run_one(one.node(), {make_tensor<int64_t>({}, {0})});
  EXPECT_EQ(empty.numel(), 0);
  auto negative = run_kernel(one.node(), {make_tensor<int64_t>({}, {-2})});
  ASSERT_FALSE(negative.has_value());
  EXPECT_EQ(negative.status().code(), StatusCode::kInvalidArgument);
  NodeBuilder bad_type("HannWindow", 17);
  bad_type.attr_int("output_datatype", 8);
  auto created = run_kernel(bad_type.node(), {make_tensor<int64_t>({}, {4})});
  ASSERT_FALSE(created.has_value());
  EXPECT_EQ(created.status().code(), StatusCode::kInvalidGraph);
}

TEST(MelWeightMatrix, ShapeTrianglesAndValidation) {
  NodeBuilder b("MelWeightMatrix", 17);
  Tensor out = run_one(b.node(), {make_tensor<int64_t>({}, {8}), make_tensor<int64_t>({}, {64}),
                                  make_tensor<int64_t>({}, {8000}), make_tensor<float>({}, {0}),
                                  make_tensor<float>({}, {4000})});
  ASSERT_EQ(out.shape(), (Shape{33, 8}));
  for (float v : to_vector<float>(out)) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LE(v, 1.0f);
  }
  auto bad = run_kernel(b.node(), {make_tensor<int64_t>({}, {8}), make_tensor<int64_t>({}, {64}),
                                   make_tensor<int64_t>({}, {0}), make_tensor<float>({}, {0}),
                                   make_tensor<float>({}, {4000})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("input 2 (sample_rate)"), std::string::npos);
}

// Fuzz finding: an upper edge of 1e30 Hz put the bin edges beyond int64 (UBSan: float-to-integer overflow) and
// would have looped over them. Edges stay doubles and only the matrix's rows are visited; infinite edges (from
// the largest float) give empty triangles. Reproducer: fuzz/regressions/kernel/mel_weight_matrix_edges_beyond_int64.
TEST(MelWeightMatrix, EdgesFarOutsideTheSpectrumAreClipped) {
  NodeBuilder b("MelWeightMatrix", 17);
  const float largest = std::numeric_limits<float>::max();
  for (const auto& [lower, upper] : {std::pair{0.0f, 1e30f}, std::pair{1e20f, 1e30f}, std::pair{0.0f, largest}}) {
    Tensor out = run_one(b.node(), {make_tensor<int64_t>({}, {4}), make_tensor<int64_t>({}, {16}),
                                    make_tensor<int64_t>({}, {1}), make_tensor<float>({}, {lower}),
                                    make_tensor<float>({}, {upper})});
    ASSERT_EQ(out.shape(), (Shape{9, 4}));
    for (float v : to_vector<float>(out)) {
      EXPECT_TRUE(v >= 0.0f && v <= 1.0f) << lower << " .. " << upper << ": " << v;
    }
  }
}

}  // namespace
}  // namespace nxrt::cpu::testing
