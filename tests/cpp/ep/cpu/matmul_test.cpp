#include <cmath>
#include <random>

#include "ep/cpu/gemm.h"
#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

template <class T>
std::vector<T> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

template <class T>
void check_gemm(int64_t m, int64_t n, int64_t k, bool ta, bool tb, T alpha, T beta, ThreadPool& pool,
                GemmIsa isa) {
  GemmArgs g{ta, tb, m, n, k, ta ? m : k, tb ? k : n, n};
  const auto a = random_values<T>(static_cast<size_t>(m * k), 1);
  const auto b = random_values<T>(static_cast<size_t>(k * n), 2);
  auto c_ref = random_values<T>(static_cast<size_t>(m * n), 3);
  auto c_opt = c_ref;
  gemm_reference<T>(g, alpha, a.data(), b.data(), beta, c_ref.data());
  if constexpr (std::is_same_v<T, float>) {
    gemm_f32(g, alpha, a.data(), b.data(), beta, c_opt.data(), pool, isa);
  } else {
    gemm_f64(g, alpha, a.data(), b.data(), beta, c_opt.data(), pool, isa);
  }
  const double tolerance = std::is_same_v<T, float> ? 1e-4 * (1 + k) : 1e-12 * (1 + k);
  for (size_t i = 0; i < c_ref.size(); ++i) {
    ASSERT_NEAR(c_opt[i], c_ref[i], tolerance) << "isa=" << static_cast<int>(isa) << " m=" << m << " n=" << n << " k=" << k << " ta=" << ta
                                               << " tb=" << tb << " at " << i;
  }
}

// Every micro-kernel family (the AVX2 one falls back to the portable one on CPUs without it), at sizes around
// both families' tiles (4x16 and 6x16 for f32, 4x8 and 6x8 for f64) and the cache blocks.
class GemmIsaTest : public ::testing::TestWithParam<GemmIsa> {};

TEST_P(GemmIsaTest, F32MatchesReferenceAroundTileSizes) {
  ThreadPool pool(3);
  const int64_t ms[] = {1, 3, 4, 5, 6, 7, 12, 13, 63, 64, 65, 130};
  const int64_t ns[] = {1, 15, 16, 17, 33, 255, 257};
  const int64_t ks[] = {0, 1, 7, 255, 256, 257};
  for (int64_t m : ms) {
    for (int64_t n : ns) {
      for (int64_t k : ks) check_gemm<float>(m, n, k, false, false, 1.0f, 0.0f, pool, GetParam());
    }
  }
}

TEST_P(GemmIsaTest, F32TransposesAlphaBeta) {
  ThreadPool pool(3);
  for (int t = 0; t < 4; ++t) {
    check_gemm<float>(37, 45, 29, t & 1, t & 2, 0.5f, -1.5f, pool, GetParam());
    check_gemm<float>(70, 300, 260, t & 1, t & 2, 2.0f, 1.0f, pool, GetParam());
  }
}

TEST_P(GemmIsaTest, F64MatchesReferenceAroundTileSizes) {
  ThreadPool pool(1);
  const int64_t sizes[] = {1, 3, 4, 5, 6, 7, 8, 9, 12, 13, 65, 257};
  for (int64_t m : sizes) {
    for (int64_t n : sizes) check_gemm<double>(m, n, 13, m % 2 == 0, n % 2 == 1, 1.25, 0.5, pool, GetParam());
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, GemmIsaTest, ::testing::Values(GemmIsa::kGeneric, GemmIsa::kAvx2),
                         [](const ::testing::TestParamInfo<GemmIsa>& info) {
                           return info.param == GemmIsa::kAvx2 ? std::string("Avx2") : std::string("Generic");
                         });

TEST(GemmTest, BetaZeroIgnoresNanInOutput) {
  ThreadPool pool(1);
  GemmArgs g{false, false, 2, 2, 1, 1, 2, 2};
  const float a[] = {1, 2};
  const float b[] = {3, 4};
  float c[] = {NAN, NAN, NAN, NAN};
  gemm_f32(g, 1.0f, a, b, 0.0f, c, pool);
  EXPECT_EQ(std::vector<float>(c, c + 4), (std::vector<float>{3, 4, 6, 8}));
}

TEST(MatMulTest, TwoDimensionalFloatWithThreads) {
  for (int threads : {1, 3}) {
    const auto a = random_values<float>(100 * 70, 4);
    const auto b = random_values<float>(70 * 90, 5);
    Tensor out = run_one(NodeBuilder("MatMul", 13).node(), {make_tensor<float>({100, 70}, a), make_tensor<float>({70, 90}, b)},
                         threads);
    ASSERT_EQ(out.shape(), (Shape{100, 90}));
    std::vector<float> ref(100 * 90);
    gemm_reference<float>(GemmArgs{false, false, 100, 90, 70, 70, 90, 90}, 1.0f, a.data(), b.data(), 0.0f, ref.data());
    auto got = to_vector<float>(out);
    for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(got[i], ref[i], 1e-4f);
  }
}

TEST(MatMulTest, OneDimensionalPromotion) {
  const Tensor v = make_tensor<float>({3}, {1, 2, 3});
  const Tensor m = make_tensor<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor vm = run_one(NodeBuilder("MatMul", 13).node(), {v, m});
  EXPECT_EQ(vm.shape(), (Shape{2}));
  EXPECT_EQ(to_vector<float>(vm), (std::vector<float>{22, 28}));
  const Tensor mt = make_tensor<float>({2, 3}, {1, 3, 5, 2, 4, 6});
  Tensor mv = run_one(NodeBuilder("MatMul", 13).node(), {mt, v});
  EXPECT_EQ(mv.shape(), (Shape{2}));
  EXPECT_EQ(to_vector<float>(mv), (std::vector<float>{22, 28}));
  Tensor dot = run_one(NodeBuilder("MatMul", 13).node(), {v, v});
  EXPECT_EQ(dot.shape(), (Shape{}));
  EXPECT_EQ(to_vector<float>(dot), (std::vector<float>{14}));
}

TEST(MatMulTest, BatchBroadcasting) {
  // a: [2,1,2,3], b: [3,3,2] -> [2,3,2,2]
  const auto a = random_values<double>(2 * 2 * 3, 6);
  const auto b = random_values<double>(3 * 3 * 2, 7);
  for (int threads : {1, 3}) {
    Tensor out = run_one(NodeBuilder("MatMul", 13).node(), {make_tensor<double>({2, 1, 2, 3}, a), make_tensor<double>({3, 3, 2}, b)},
                         threads);
    ASSERT_EQ(out.shape(), (Shape{2, 3, 2, 2}));
    auto got = to_vector<double>(out);
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) {
        std::vector<double> ref(4);
        gemm_reference<double>(GemmArgs{false, false, 2, 2, 3, 3, 2, 2}, 1.0, a.data() + i * 6, b.data() + j * 6, 0.0,
                               ref.data());
        for (int e = 0; e < 4; ++e) ASSERT_NEAR(got[(i * 3 + j) * 4 + e], ref[e], 1e-12);
      }
    }
  }
  // Batched A with a shared 2-D B takes the single tall GEMM path.
  Tensor tall = run_one(NodeBuilder("MatMul", 13).node(),
                        {make_tensor<float>({2, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 2}), make_tensor<float>({2, 1}, {3, 4})});
  EXPECT_EQ(tall.shape(), (Shape{2, 2, 1}));
  EXPECT_EQ(to_vector<float>(tall), (std::vector<float>{3, 4, 6, 8}));
}

TEST(MatMulTest, IntegerAndHalfTypes) {
  const Tensor a = make_tensor<int32_t>({2, 2}, {1, -2, 3, 4});
  const Tensor b = make_tensor<int32_t>({2, 2}, {5, 6, -7, 8});
  EXPECT_EQ(to_vector<int32_t>(run_one(NodeBuilder("MatMul", 13).node(), {a, b})), (std::vector<int32_t>{19, -10, -13, 50}));
  const Tensor ua = make_tensor<uint64_t>({1, 2}, {3, 4});
  const Tensor ub = make_tensor<uint64_t>({2, 1}, {5, 6});
  EXPECT_EQ(to_vector<uint64_t>(run_one(NodeBuilder("MatMul", 13).node(), {ua, ub})), (std::vector<uint64_t>{39}));
  auto h = to_float_vector(run_one(NodeBuilder("MatMul", 13).node(), {make_half_tensor<Float16>({1, 2}, {0.5f, 2.0f}),
                                                                       make_half_tensor<Float16>({2, 1}, {4.0f, 3.0f})}));
  EXPECT_EQ(h, (std::vector<float>{8.0f}));
  auto bf = to_float_vector(run_one(NodeBuilder("MatMul", 13).node(), {make_half_tensor<BFloat16>({2}, {1.0f, 2.0f}),
                                                                        make_half_tensor<BFloat16>({2}, {3.0f, 4.0f})}));
  EXPECT_EQ(bf, (std::vector<float>{11.0f}));
}

TEST(MatMulTest, ErrorsNameShapes) {
  auto bad = run_kernel(NodeBuilder("MatMul", 13).name("mm").node(),
                        {make_tensor<float>({2, 3}, std::vector<float>(6)), make_tensor<float>({4, 2}, std::vector<float>(8))});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("MatMul node 'mm'"), std::string::npos);
  EXPECT_NE(bad.status().message().find("[2,3]"), std::string::npos);
  auto batch = run_kernel(NodeBuilder("MatMul", 13).node(), {make_tensor<float>({2, 1, 1}, {1, 2}),
                                                              make_tensor<float>({3, 1, 1}, {1, 2, 3})});
  EXPECT_FALSE(batch.has_value());
  auto scalar = run_kernel(NodeBuilder("MatMul", 13).node(), {make_tensor<float>({}, {1}), make_tensor<float>({1}, {1})});
  EXPECT_FALSE(scalar.has_value());
}

TEST(GemmKernelTest, TransposesAlphaBetaAndBroadcastC) {
  // A^T with A = [[1,4],[2,5],[3,6]] (3x2) -> 2x3; B = I3 * 1 -> Y = alpha*A^T + beta*C
  const Tensor a = make_tensor<float>({3, 2}, {1, 4, 2, 5, 3, 6});
  const Tensor b = make_tensor<float>({3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  const Tensor c_row = make_tensor<float>({3}, {10, 20, 30});
  const Tensor c_col = make_tensor<float>({2, 1}, {100, 200});
  const Tensor c_scalar = make_tensor<float>({}, {7});
  auto node = NodeBuilder("Gemm", 13).attr_int("transA", 1).attr_int("transB", 1).attr_float("alpha", 2.0f).attr_float("beta", 0.5f).node();
  EXPECT_EQ(to_vector<float>(run_one(node, {a, b, c_row})), (std::vector<float>{7, 14, 21, 13, 20, 27}));
  EXPECT_EQ(to_vector<float>(run_one(node, {a, b, c_col})), (std::vector<float>{52, 54, 56, 108, 110, 112}));
  EXPECT_EQ(to_vector<float>(run_one(node, {a, b, c_scalar}, 3)), (std::vector<float>{5.5, 7.5, 9.5, 11.5, 13.5, 15.5}));
  EXPECT_EQ(to_vector<float>(run_one(node, {a, b, Tensor()})), (std::vector<float>{2, 4, 6, 8, 10, 12}));
}

TEST(GemmKernelTest, LargeFloatAndIntegerTypes) {
  const auto a = random_values<float>(130 * 40, 8);
  const auto b = random_values<float>(70 * 40, 9);
  Tensor out = run_one(NodeBuilder("Gemm", 11).attr_int("transB", 1).node(),
                       {make_tensor<float>({130, 40}, a), make_tensor<float>({70, 40}, b)}, 3);
  std::vector<float> ref(130 * 70);
  gemm_reference<float>(GemmArgs{false, true, 130, 70, 40, 40, 40, 70}, 1.0f, a.data(), b.data(), 0.0f, ref.data());
  auto got = to_vector<float>(out);
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(got[i], ref[i], 1e-4f);
  auto ints = run_one(NodeBuilder("Gemm", 13).attr_float("alpha", 2.0f).node(),
                      {make_tensor<int64_t>({1, 2}, {3, 4}), make_tensor<int64_t>({2, 1}, {5, 6}), make_tensor<int64_t>({1}, {1})});
  EXPECT_EQ(to_vector<int64_t>(ints), (std::vector<int64_t>{79}));
  auto half = run_one(NodeBuilder("Gemm", 13).node(), {make_half_tensor<Float16>({1, 1}, {3.0f}), make_half_tensor<Float16>({1, 1}, {2.0f}),
                                                       make_half_tensor<Float16>({1, 1}, {1.0f})});
  EXPECT_EQ(to_float_vector(half), (std::vector<float>{7.0f}));
}

TEST(GemmKernelTest, ErrorsForBadShapes) {
  auto k_mismatch = run_kernel(NodeBuilder("Gemm", 13).name("g").node(),
                               {make_tensor<float>({2, 3}, std::vector<float>(6)), make_tensor<float>({2, 3}, std::vector<float>(6))});
  ASSERT_FALSE(k_mismatch.has_value());
  EXPECT_NE(k_mismatch.status().message().find("Gemm node 'g'"), std::string::npos);
  auto bad_c = run_kernel(NodeBuilder("Gemm", 13).node(), {make_tensor<float>({2, 3}, std::vector<float>(6)),
                                                           make_tensor<float>({3, 2}, std::vector<float>(6)),
                                                           make_tensor<float>({3}, std::vector<float>(3))});
  EXPECT_FALSE(bad_c.has_value());
  auto rank = run_kernel(NodeBuilder("Gemm", 13).node(), {make_tensor<float>({6}, std::vector<float>(6)),
                                                          make_tensor<float>({3, 2}, std::vector<float>(6))});
  EXPECT_FALSE(rank.has_value());
}

}  // namespace
}  // namespace nxrt::cpu::testing
