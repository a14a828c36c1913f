#include <cmath>
#include <random>

#include "ep/cpu/microkernels/cpu_features.h"
#include "ep/cpu/microkernels/gemm.h"
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

const char* isa_name(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kGeneric: return "Generic";
    case GemmIsa::kAvx2: return "Avx2";
    case GemmIsa::kAvx512: return "Avx512";
  }
  return "?";
}

// Reference for an epilogue: bias, residual, then activation applied after gemm_reference.
template <class T>
void reference_epilogue(const GemmArgs& g, const GemmEpilogue<T>& epilogue, T* c) {
  for (int64_t i = 0; i < g.m; ++i) {
    T* row = c + i * g.ldc;
    if (epilogue.bias != nullptr) {
      for (int64_t j = 0; j < g.n; ++j) row[j] += epilogue.bias_per_row ? epilogue.bias[i] : epilogue.bias[j];
    }
    if (epilogue.residual != nullptr) {
      for (int64_t j = 0; j < g.n; ++j) row[j] += epilogue.residual[i * epilogue.ld_residual + j];
    }
    apply_activation(epilogue.activation, row, g.n);
  }
}

struct GemmCase {
  int64_t m = 1, n = 1, k = 1;
  bool ta = false, tb = false;
  double alpha = 1.0, beta = 0.0;
  int64_t ld_pad = 0;  // added to every leading dimension
  bool packed_b = false;
  ActivationKind activation = ActivationKind::kNone;
  int bias = 0;  // 0 none, 1 per column, 2 per row
  bool residual = false;
};

template <class T>
void check_case(const GemmCase& tc, ThreadPool& pool, GemmIsa isa) {
  const int64_t m = tc.m, n = tc.n, k = tc.k;
  GemmArgs g{tc.ta, tc.tb, m, n, k, (tc.ta ? m : k) + tc.ld_pad, (tc.tb ? k : n) + tc.ld_pad, n + tc.ld_pad};
  const auto a = random_values<T>(static_cast<size_t>((tc.ta ? k : m) * g.lda), 1);
  const auto b = random_values<T>(static_cast<size_t>((tc.tb ? n : k) * g.ldb), 2);
  const auto bias = random_values<T>(static_cast<size_t>(std::max(m, n)), 4);
  const int64_t ld_residual = n + 3;
  const auto residual = random_values<T>(static_cast<size_t>(m * ld_residual), 5);
  auto c_ref = random_values<T>(static_cast<size_t>(m * g.ldc), 3);
  auto c_opt = c_ref;
  GemmEpilogue<T> epilogue;
  epilogue.activation.kind = tc.activation;
  epilogue.activation.alpha = tc.activation == ActivationKind::kClip ? -0.25f : 0.1f;
  epilogue.activation.beta = 0.3f;
  epilogue.bias = tc.bias == 0 ? nullptr : bias.data();
  epilogue.bias_per_row = tc.bias == 2;
  epilogue.residual = tc.residual ? residual.data() : nullptr;
  epilogue.ld_residual = ld_residual;
  const T alpha = static_cast<T>(tc.alpha);
  const T beta = static_cast<T>(tc.beta);
  gemm_reference<T>(g, alpha, a.data(), b.data(), beta, c_ref.data());
  reference_epilogue(g, epilogue, c_ref.data());
  if (tc.packed_b) {
    const PackedB<T> packed = PackedB<T>::pack(g, b.data(), isa);
    if constexpr (std::is_same_v<T, float>) {
      gemm_f32_packed(g, alpha, a.data(), packed, beta, c_opt.data(), pool, epilogue);
    } else {
      gemm_f64_packed(g, alpha, a.data(), packed, beta, c_opt.data(), pool, epilogue);
    }
  } else if constexpr (std::is_same_v<T, float>) {
    gemm_f32(g, alpha, a.data(), b.data(), beta, c_opt.data(), pool, isa, epilogue);
  } else {
    gemm_f64(g, alpha, a.data(), b.data(), beta, c_opt.data(), pool, isa, epilogue);
  }
  const double tolerance = std::is_same_v<T, float> ? 1e-4 * (1 + k) : 1e-12 * (1 + k);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < g.ldc; ++j) {
      const size_t at = static_cast<size_t>(i * g.ldc + j);
      ASSERT_NEAR(c_opt[at], c_ref[at], tolerance)
          << isa_name(isa) << " m=" << m << " n=" << n << " k=" << k << " ta=" << tc.ta << " tb=" << tc.tb
          << " packed=" << tc.packed_b << " act=" << static_cast<int>(tc.activation) << " bias=" << tc.bias
          << " residual=" << tc.residual
          << " ld_pad=" << tc.ld_pad << " at (" << i << "," << j << ")";
    }
  }
}

template <class T>
void check_gemm(int64_t m, int64_t n, int64_t k, bool ta, bool tb, T alpha, T beta, ThreadPool& pool,
                GemmIsa isa) {
  GemmCase tc;
  tc.m = m, tc.n = n, tc.k = k, tc.ta = ta, tc.tb = tb, tc.alpha = alpha, tc.beta = beta;
  check_case<T>(tc, pool, isa);
}

// Every micro-kernel family (one the CPU lacks falls back to the portable one), at sizes around every
// family's tiles (f32: 4x16, 6x16, 14x32; f64: 4x8, 6x8, 14x16), the direct small-m path (m <= 8), the depth
// block (256) and the N chunk split.
// A tier above the active one (ep/cpu/microkernels/cpu_features.h) skips: the engine would run a lower tier's
// kernels under this tier's name.
class GemmIsaTest : public ::testing::TestWithParam<GemmIsa> {
 protected:
  void SetUp() override {
    CpuIsa needed = CpuIsa::kGeneric;
    if (GetParam() == GemmIsa::kAvx2) needed = CpuIsa::kAvx2;
    if (GetParam() == GemmIsa::kAvx512) needed = CpuIsa::kAvx512;
    if (!cpu_isa_at_least(needed)) {
      GTEST_SKIP() << "the active CPU tier is " << cpu_isa_name(active_cpu_isa()) << ", below " << isa_name(GetParam());
    }
  }
};

TEST_P(GemmIsaTest, F32MatchesReferenceAroundTileSizes) {
  ThreadPool pool(3);
  const int64_t ms[] = {1, 3, 4, 5, 6, 7, 8, 9, 13, 14, 15, 28, 29, 63, 130, 281};
  const int64_t ns[] = {1, 15, 16, 17, 31, 32, 33, 257};
  const int64_t ks[] = {0, 1, 7, 255, 257, 383, 385};
  for (int64_t m : ms) {
    for (int64_t n : ns) {
      for (int64_t k : ks) check_gemm<float>(m, n, k, false, false, 1.0f, 0.0f, pool, GetParam());
    }
  }
  // Several depth blocks (256 portable / AVX2, 384 AVX-512) and B panels (512 columns); with AVX-512, A packed
  // for a long depth (800) or many column strips (900 columns), read in place otherwise.
  for (int64_t m : {1, 8, 29}) check_gemm<float>(m, 530, 800, false, false, 1.0f, 0.0f, pool, GetParam());
  check_gemm<float>(100, 900, 300, false, false, 1.0f, 0.0f, pool, GetParam());
  check_gemm<float>(300, 1100, 384, true, true, 1.0f, 0.0f, pool, GetParam());
}

TEST_P(GemmIsaTest, F32TransposesAlphaBetaLeadingDimensions) {
  ThreadPool pool(3);
  for (int t = 0; t < 4; ++t) {
    for (int64_t m : {1, 5, 37, 70}) {
      for (int64_t pad : {0, 3}) {
        GemmCase tc;
        tc.m = m, tc.n = 45, tc.k = 29, tc.ta = t & 1, tc.tb = t & 2, tc.alpha = 0.5, tc.beta = -1.5;
        tc.ld_pad = pad;
        check_case<float>(tc, pool, GetParam());
        tc.n = 300, tc.k = 520, tc.alpha = 2.0, tc.beta = 1.0;
        check_case<float>(tc, pool, GetParam());
      }
    }
  }
  // One or two rows against a transposed B with beta 0: B's rows are dotted in place (every depth tail).
  for (int64_t m : {1, 2}) {
    for (int64_t k : {1, 7, 15, 16, 17, 129}) {
      for (int64_t n : {1, 3, 4, 9, 1025}) {
        GemmCase tc;
        tc.m = m, tc.n = n, tc.k = k, tc.ta = false, tc.tb = true, tc.alpha = k % 2 ? 0.5 : 1.0, tc.beta = 0.0;
        tc.ld_pad = n % 2 ? 3 : 0;
        check_case<float>(tc, pool, GetParam());
      }
    }
  }
}

TEST_P(GemmIsaTest, F64MatchesReferenceAroundTileSizes) {
  ThreadPool pool(1);
  const int64_t sizes[] = {1, 3, 4, 5, 6, 7, 8, 9, 13, 14, 15, 16, 17, 29, 65, 257};
  for (int64_t m : sizes) {
    for (int64_t n : sizes) check_gemm<double>(m, n, 13, m % 2 == 0, n % 2 == 1, 1.25, 0.5, pool, GetParam());
  }
  for (int64_t k : {0, 255, 256, 257, 600}) check_gemm<double>(30, 33, k, false, true, 1.0, 0.0, pool, GetParam());
}

TEST_P(GemmIsaTest, EpilogueAndPackedB) {
  const ActivationKind kinds[] = {ActivationKind::kNone, ActivationKind::kRelu, ActivationKind::kLeakyRelu,
                                  ActivationKind::kClip, ActivationKind::kSigmoid, ActivationKind::kGelu,
                                  ActivationKind::kGeluTanh};
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    for (ActivationKind kind : kinds) {
      for (int64_t m : {1, 3, 8, 9, 14, 15, 100}) {
        for (int64_t n : {1, 31, 33, 70}) {
          for (int variant = 0; variant < 6; ++variant) {
            GemmCase tc;
            tc.m = m, tc.n = n, tc.k = variant == 5 ? 300 : 19 + variant;
            tc.tb = variant & 1;
            tc.ta = variant == 4;
            tc.beta = variant == 2 ? 0.5 : 0.0;
            tc.alpha = variant == 3 ? -1.5 : 1.0;
            tc.packed_b = variant >= 3;
            tc.bias = variant % 3;
            tc.residual = variant % 2 == 0;
            tc.activation = kind;
            tc.ld_pad = variant == 1 ? 2 : 0;
            check_case<float>(tc, pool, GetParam());
            check_case<double>(tc, pool, GetParam());
          }
        }
      }
    }
    GemmCase empty;
    empty.m = 5, empty.n = 7, empty.k = 0, empty.beta = 2.0, empty.bias = 1, empty.packed_b = true;
    empty.activation = ActivationKind::kRelu;
    empty.residual = true;
    check_case<float>(empty, pool, GetParam());
  }
}

// A per-call B deep enough for several depth blocks (AVX-512: at most 1024 deep, f64 512), packed either once
// per call in bounded chunks (several M blocks; f64 AVX-512 here also needs two column chunks) or panel by panel
// inside the tasks (one M block); the epilogue only comes with the last depth block.
TEST_P(GemmIsaTest, PerCallPackingInDepthAndColumnBlocks) {
  ThreadPool pool(2);
  for (int variant = 0; variant < 2; ++variant) {
    GemmCase tc;
    tc.m = variant == 0 ? 290 : 9, tc.n = variant == 0 ? 1000 : 1500, tc.k = variant == 0 ? 1100 : 2100;
    tc.ta = tc.tb = variant == 1;
    tc.beta = variant == 0 ? 0.5 : 0.0;
    tc.bias = variant == 0 ? 1 : 2;
    tc.activation = variant == 0 ? ActivationKind::kSigmoid : ActivationKind::kRelu;
    tc.residual = true;  // offset by each column chunk
    tc.ld_pad = variant;
    check_case<float>(tc, pool, GetParam());
    check_case<double>(tc, pool, GetParam());
  }
}

// One row against a packed B runs several B strips per tile (row strips; the last group may end in a partial strip,
// leftover strips run one per tile): every column equals the reference, and bit for bit the first row of the same
// product with that row repeated (two rows, one strip per tile, the same depth order), over depth blocks, threads
// and epilogues.
TEST_P(GemmIsaTest, OneRowAgainstPackedStripsMatchesOneStripTiles) {
  const ActivationKind kinds[] = {ActivationKind::kNone, ActivationKind::kRelu, ActivationKind::kGelu};
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    for (int64_t n : {40, 100, 120, 200, 1000}) {
      for (int64_t k : {1, 2, 7, 300, 1100}) {
        const ActivationKind kind = kinds[(n + k) % 3];
        GemmCase tc;
        tc.m = 1, tc.n = n, tc.k = k, tc.packed_b = true, tc.bias = 1, tc.residual = k % 2 == 0, tc.activation = kind;
        tc.beta = k == 7 ? 0.5 : 0.0;
        check_case<float>(tc, pool, GetParam());

        GemmArgs one{false, false, 1, n, k, k, n, n};
        GemmArgs two{false, false, 2, n, k, k, n, n};
        auto a = random_values<float>(static_cast<size_t>(k), 7);
        a.insert(a.end(), a.begin(), a.end());
        const auto b = random_values<float>(static_cast<size_t>(k * n), 8);
        const auto bias = random_values<float>(static_cast<size_t>(n), 9);
        const auto residual = random_values<float>(static_cast<size_t>(2 * n), 10);
        GemmEpilogue<float> epilogue;
        epilogue.bias = bias.data();
        epilogue.activation.kind = kind;
        epilogue.residual = residual.data();
        epilogue.ld_residual = 0;  // both rows add the same residual row
        const PackedB<float> packed = PackedB<float>::pack(one, b.data(), GetParam());
        std::vector<float> c_one(static_cast<size_t>(n)), c_two(static_cast<size_t>(2 * n));
        gemm_f32_packed(one, 1.0f, a.data(), packed, 0.0f, c_one.data(), pool, epilogue);
        gemm_f32_packed(two, 1.0f, a.data(), packed, 0.0f, c_two.data(), pool, epilogue);
        for (int64_t j = 0; j < n; ++j) {
          ASSERT_EQ(c_one[static_cast<size_t>(j)], c_two[static_cast<size_t>(j)])
              << isa_name(GetParam()) << " n=" << n << " k=" << k << " threads=" << threads << " column " << j;
        }
      }
    }
  }
}

TEST_P(GemmIsaTest, BetaZeroIgnoresNanInOutputOnEveryPath) {
  ThreadPool pool(2);
  for (int64_t m : {1, 8, 9, 40}) {
    for (bool packed : {false, true}) {
      const int64_t n = 35, k = 300;
      GemmArgs g{false, false, m, n, k, k, n, n};
      const auto a = random_values<float>(static_cast<size_t>(m * k), 5);
      const auto b = random_values<float>(static_cast<size_t>(k * n), 6);
      std::vector<float> c(static_cast<size_t>(m * n), NAN);
      if (packed) {
        gemm_f32_packed(g, 1.0f, a.data(), PackedB<float>::pack(g, b.data(), GetParam()), 0.0f, c.data(), pool);
      } else {
        gemm_f32(g, 1.0f, a.data(), b.data(), 0.0f, c.data(), pool, GetParam());
      }
      for (float v : c) ASSERT_FALSE(std::isnan(v)) << isa_name(GetParam()) << " m=" << m << " packed=" << packed;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, GemmIsaTest, ::testing::Values(GemmIsa::kGeneric, GemmIsa::kAvx2, GemmIsa::kAvx512),
                         [](const ::testing::TestParamInfo<GemmIsa>& info) { return std::string(isa_name(info.param)); });

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

// Y = act(alpha * op(A) op(B) + beta * broadcast(C)) computed with gemm_reference and apply_activation.
template <class T>
std::vector<T> reference_gemm_node(const std::vector<T>& a, const std::vector<T>& b, const std::vector<T>* c,
                                   const Shape& c_shape, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                                   float alpha, float beta, const FusedActivation& act) {
  std::vector<T> y(static_cast<size_t>(m * n), T{0});
  if (c != nullptr) {
    const int64_t c_rows = c_shape.size() == 2 ? c_shape[0] : 1;
    const int64_t c_cols = c_shape.empty() ? 1 : c_shape.back();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) y[i * n + j] = (*c)[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)];
    }
  }
  gemm_reference<T>(GemmArgs{ta, tb, m, n, k, ta ? m : k, tb ? k : n, n}, static_cast<T>(alpha), a.data(), b.data(),
                    c != nullptr ? static_cast<T>(beta) : T{0}, y.data());
  apply_activation(act, y.data(), m * n);
  return y;
}

template <class T>
void check_fused_gemm(int64_t m, int64_t n, int64_t k, bool tb, const Shape& c_shape, float beta,
                      const std::string& activation, const std::vector<float>& params, bool constant_b, int threads) {
  const auto a = random_values<T>(static_cast<size_t>(m * k), 11);
  const auto b = random_values<T>(static_cast<size_t>(k * n), 12);
  int64_t c_count = 1;
  for (int64_t d : c_shape) c_count *= d;
  const auto c = random_values<T>(static_cast<size_t>(c_count), 13);
  NodeBuilder builder("FusedGemm", 1);
  builder.attr_int("transB", tb).attr_float("alpha", 0.75f).attr_float("beta", beta).attr_string("activation", activation);
  const char* names[] = {"activation_alpha", "activation_beta", "activation_gamma"};
  for (size_t i = 0; i < params.size(); ++i) builder.attr_float(names[i], params[i]);
  graph::Node node = builder.node();
  node.domain = graph::kMsDomain;
  auto outputs = run_kernel(node, {make_tensor<T>({m, k}, a), make_tensor<T>(tb ? Shape{n, k} : Shape{k, n}, b),
                                   make_tensor<T>(c_shape, c)},
                            threads, {false, constant_b, false});
  ASSERT_TRUE(outputs.has_value()) << outputs.status().to_string();
  auto act = parse_fused_activation(activation, params, "test");
  ASSERT_TRUE(act.has_value());
  const auto ref = reference_gemm_node<T>(a, b, &c, c_shape, m, n, k, false, tb, 0.75f, beta, *act);
  const auto got = to_vector<T>((*outputs)[0]);
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    ASSERT_NEAR(got[i], ref[i], 1e-4 * (1 + k)) << activation << " m=" << m << " n=" << n << " k=" << k << " tb=" << tb
                                                << " c=" << shape_to_string(c_shape) << " beta=" << beta
                                                << " constant_b=" << constant_b << " at " << i;
  }
}

TEST(FusedGemmTest, MatchesGemmThenActivation) {
  struct Act {
    std::string name;
    std::vector<float> params;
  };
  const Act acts[] = {{"", {}}, {"Relu", {}}, {"LeakyRelu", {0.2f}}, {"Clip", {-0.3f, 0.4f}}, {"Sigmoid", {}},
                      {"HardSigmoid", {0.3f, 0.4f}}, {"Tanh", {}}};
  for (const Act& act : acts) {
    for (int64_t m : {1, 8, 9, 15}) {
      for (int64_t n : {1, 33}) {
        const int64_t k = 20;
        for (const Shape& c_shape : {Shape{n}, Shape{1, n}, Shape{m, 1}, Shape{m, n}, Shape{}}) {
          for (float beta : {1.0f, 0.5f}) {
            const bool tb = (m + n) % 2 == 0;
            check_fused_gemm<float>(m, n, k, tb, c_shape, beta, act.name, act.params, m % 2 == 1, 1 + m % 2);
            check_fused_gemm<double>(m, n, k, !tb, c_shape, beta, act.name, act.params, m % 2 == 0, 1);
          }
        }
      }
    }
  }
  // Large enough for the blocked path with several depth blocks and threads.
  check_fused_gemm<float>(100, 300, 600, true, Shape{300}, 1.0f, "Relu", {}, true, 2);
  check_fused_gemm<float>(100, 300, 600, false, Shape{100, 300}, 0.5f, "Sigmoid", {}, false, 2);
}

TEST(FusedGemmTest, BadActivationIsInvalidArgumentNamingNode) {
  graph::Node node = NodeBuilder("FusedGemm", 1).name("fg").attr_string("activation", "Softmax").node();
  node.domain = graph::kMsDomain;
  auto result = run_kernel(node, {make_tensor<float>({1, 1}, {1}), make_tensor<float>({1, 1}, {1})});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("'fg'"), std::string::npos) << result.status().message();
}

graph::Node fused_matmul_node(const std::string& activation, const std::vector<float>& params) {
  graph::Node node = NodeBuilder("FusedMatMul", 1).name("fm").attr_string("activation", activation)
                         .attr_floats("activation_params", params).node();
  node.domain = "com.nxrt";
  return node;
}

TEST(FusedMatMulTest, MatchesMatMulBiasActivation) {
  const std::pair<std::string, std::vector<float>> acts[] = {
      {"", {}}, {"Relu", {}}, {"Clip", {-0.2f, 0.2f}}, {"Gelu", {}}, {"GeluTanh", {}}, {"LeakyRelu", {0.3f}}};
  for (const auto& act_spec : acts) {
    auto act = parse_fused_activation(act_spec.first, act_spec.second, "test");
    ASSERT_TRUE(act.has_value());
    for (int64_t rows : {1, 3, 14, 29}) {
      for (int64_t n : {1, 31, 33}) {
        for (int variant = 0; variant < 4; ++variant) {
          const int64_t k = variant == 3 ? 270 : 17;
          const bool constant_b = variant % 2 == 1;
          const bool batched_b = variant == 2;
          const bool with_bias = variant != 1;
          const auto a = random_values<float>(static_cast<size_t>(2 * rows * k), 21);
          const auto b = random_values<float>(static_cast<size_t>((batched_b ? 2 : 1) * k * n), 22);
          const auto bias = random_values<float>(static_cast<size_t>(n), 23);
          // A residual Z (input 3) only without an activation, as the fusion makes it.
          const bool with_residual = act_spec.first.empty() && variant != 3;
          const auto residual = random_values<float>(static_cast<size_t>(2 * rows * n), 24);
          std::vector<Tensor> inputs = {make_tensor<float>({2, rows, k}, a),
                                        make_tensor<float>(batched_b ? Shape{2, k, n} : Shape{k, n}, b),
                                        with_bias ? make_tensor<float>({n}, bias) : Tensor()};
          if (with_residual) inputs.push_back(make_tensor<float>({2, rows, n}, residual));
          auto outputs = run_kernel(fused_matmul_node(act_spec.first, act_spec.second), inputs, 2,
                                    {false, constant_b, false, false});
          ASSERT_TRUE(outputs.has_value()) << outputs.status().to_string();
          ASSERT_EQ((*outputs)[0].shape(), (Shape{2, rows, n}));
          const auto got = to_vector<float>((*outputs)[0]);
          for (int64_t batch = 0; batch < 2; ++batch) {
            std::vector<float> ref(static_cast<size_t>(rows * n));
            gemm_reference<float>(GemmArgs{false, false, rows, n, k, k, n, n}, 1.0f, a.data() + batch * rows * k,
                                  b.data() + (batched_b ? batch * k * n : 0), 0.0f, ref.data());
            for (int64_t i = 0; i < rows; ++i) {
              for (int64_t j = 0; j < n; ++j) {
                ref[i * n + j] += (with_bias ? bias[j] : 0.0f) +
                                  (with_residual ? residual[(batch * rows + i) * n + j] : 0.0f);
              }
            }
            apply_activation(*act, ref.data(), rows * n);
            for (size_t i = 0; i < ref.size(); ++i) {
              ASSERT_NEAR(got[batch * rows * n + i], ref[i], 1e-4 * (1 + k))
                  << act_spec.first << " rows=" << rows << " n=" << n << " variant=" << variant << " at " << i;
            }
          }
        }
      }
    }
  }
}

TEST(FusedMatMulTest, DoubleOneDimensionalAndErrors) {
  const Tensor v = make_tensor<double>({3}, {1, 2, 3});
  const Tensor m = make_tensor<double>({3, 2}, {1, -2, 3, -4, 5, -6});
  auto out = run_kernel(fused_matmul_node("Relu", {}), {v, m, make_tensor<double>({2}, {0.5, 100})}, 1, {false, true});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape(), (Shape{2}));
  EXPECT_EQ(to_vector<double>((*out)[0]), (std::vector<double>{22.5, 72}));
  auto bad_bias = run_kernel(fused_matmul_node("", {}), {v, m, make_tensor<double>({3}, {1, 2, 3})});
  ASSERT_FALSE(bad_bias.has_value());
  EXPECT_EQ(bad_bias.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_bias.status().message().find("'fm'"), std::string::npos);
  auto bad_residual =
      run_kernel(fused_matmul_node("", {}), {v, m, Tensor(), make_tensor<double>({3}, {1, 2, 3})}, 1, {false, true});
  ASSERT_FALSE(bad_residual.has_value());
  EXPECT_EQ(bad_residual.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_residual.status().message().find("Z"), std::string::npos);
  auto bad_act = run_kernel(fused_matmul_node("Nope", {}), {v, m});
  ASSERT_FALSE(bad_act.has_value());
  EXPECT_EQ(bad_act.status().code(), StatusCode::kInvalidArgument);
}

TEST(MatMulTest, ConstantWeightsAndBatchedAttentionShapes) {
  for (int threads : {1, 2, 3}) {
    // Prepacked 2-D B with a batched A (one tall GEMM) at sizes around the tiles and the direct path.
    for (int64_t rows : {1, 8, 9, 50}) {
      const auto a = random_values<float>(static_cast<size_t>(3 * rows * 70), 31);
      const auto b = random_values<float>(70 * 45, 32);
      auto out = run_kernel(NodeBuilder("MatMul", 13).node(),
                            {make_tensor<float>({3, rows, 70}, a), make_tensor<float>({70, 45}, b)}, threads, {false, true});
      ASSERT_TRUE(out.has_value()) << out.status().to_string();
      std::vector<float> ref(static_cast<size_t>(3 * rows * 45));
      gemm_reference<float>(GemmArgs{false, false, 3 * rows, 45, 70, 70, 45, 45}, 1.0f, a.data(), b.data(), 0.0f,
                            ref.data());
      const auto got = to_vector<float>((*out)[0]);
      for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(got[i], ref[i], 1e-4f) << "rows=" << rows << " at " << i;
    }
    // Attention-like [B,H,S,d] x [B,H,d,S].
    const auto q = random_values<float>(2 * 3 * 9 * 16, 33);
    const auto kt = random_values<float>(2 * 3 * 16 * 9, 34);
    Tensor scores = run_one(NodeBuilder("MatMul", 13).node(),
                            {make_tensor<float>({2, 3, 9, 16}, q), make_tensor<float>({2, 3, 16, 9}, kt)}, threads);
    ASSERT_EQ(scores.shape(), (Shape{2, 3, 9, 9}));
    const auto got = to_vector<float>(scores);
    for (int64_t batch = 0; batch < 6; ++batch) {
      std::vector<float> ref(81);
      gemm_reference<float>(GemmArgs{false, false, 9, 9, 16, 16, 9, 9}, 1.0f, q.data() + batch * 144,
                            kt.data() + batch * 144, 0.0f, ref.data());
      for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(got[batch * 81 + i], ref[i], 1e-4f);
    }
  }
}

TEST(GemmKernelTest, ConstantBMatchesRuntimeB) {
  const auto a = random_values<double>(40 * 30, 41);
  const auto b = random_values<double>(30 * 50, 42);
  const auto c = random_values<double>(50, 43);
  for (int64_t tb : {0, 1}) {
    const auto node = NodeBuilder("Gemm", 13).attr_int("transB", tb).node();
    const std::vector<Tensor> inputs = {make_tensor<double>({40, 30}, a),
                                        make_tensor<double>(tb ? Shape{50, 30} : Shape{30, 50}, b),
                                        make_tensor<double>({50}, c)};
    auto runtime = run_kernel(node, inputs, 2);
    auto constant = run_kernel(node, inputs, 2, {false, true, true});
    ASSERT_TRUE(runtime.has_value() && constant.has_value());
    const auto x = to_vector<double>((*runtime)[0]);
    const auto y = to_vector<double>((*constant)[0]);
    const auto ref = reference_gemm_node<double>(a, b, &c, Shape{50}, 40, 50, 30, false, tb, 1.0f, 1.0f, FusedActivation{});
    for (size_t i = 0; i < ref.size(); ++i) {
      ASSERT_NEAR(x[i], ref[i], 1e-12);
      ASSERT_NEAR(y[i], ref[i], 1e-12);
    }
  }
}

}  // namespace
}  // namespace nxrt::cpu::testing
