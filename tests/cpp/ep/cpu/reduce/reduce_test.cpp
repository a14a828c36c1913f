#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -2.0f, float hi = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

Tensor axes_tensor(const std::vector<int64_t>& axes) {
  return make_tensor<int64_t>({static_cast<int64_t>(axes.size())}, axes);
}

// Reference: every output gathers its inputs by full index enumeration, then folds them in double.
std::vector<double> reference_reduce(const Shape& shape, const std::vector<float>& x, std::vector<int64_t> axes,
                                     const std::function<double(const std::vector<double>&)>& fold) {
  const size_t rank = shape.size();
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes) reduced[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(rank) : a)] = true;
  Shape out_shape;
  for (size_t d = 0; d < rank; ++d) out_shape.push_back(reduced[d] ? 1 : shape[d]);
  std::vector<std::vector<double>> groups(static_cast<size_t>(shape_numel(out_shape)));
  for (int64_t flat = 0; flat < static_cast<int64_t>(x.size()); ++flat) {
    int64_t rest = flat;
    int64_t out_index = 0;
    int64_t out_stride = 1;
    for (size_t d = rank; d-- > 0;) {
      const int64_t i = rest % shape[d];
      rest /= shape[d];
      if (!reduced[d]) out_index += i * out_stride;
      out_stride *= out_shape[d];
    }
    groups[static_cast<size_t>(out_index)].push_back(x[static_cast<size_t>(flat)]);
  }
  std::vector<double> result;
  for (const auto& g : groups) result.push_back(fold(g));
  return result;
}

struct OpCase {
  const char* op;
  std::function<double(const std::vector<double>&)> fold;
};

std::vector<OpCase> all_ops() {
  auto sum = [](const std::vector<double>& g) {
    double s = 0;
    for (double v : g) s += v;
    return s;
  };
  return {
      {"ReduceSum", sum},
      {"ReduceMean", [sum](const std::vector<double>& g) { return sum(g) / static_cast<double>(g.size()); }},
      {"ReduceMax", [](const std::vector<double>& g) { return *std::max_element(g.begin(), g.end()); }},
      {"ReduceMin", [](const std::vector<double>& g) { return *std::min_element(g.begin(), g.end()); }},
      {"ReduceProd", [](const std::vector<double>& g) {
         double p = 1;
         for (double v : g) p *= v;
         return p;
       }},
      {"ReduceL1", [](const std::vector<double>& g) {
         double s = 0;
         for (double v : g) s += std::abs(v);
         return s;
       }},
      {"ReduceL2", [](const std::vector<double>& g) {
         double s = 0;
         for (double v : g) s += v * v;
         return std::sqrt(s);
       }},
      {"ReduceSumSquare", [](const std::vector<double>& g) {
         double s = 0;
         for (double v : g) s += v * v;
         return s;
       }},
      {"ReduceLogSum", [sum](const std::vector<double>& g) { return std::log(std::abs(sum(g))); }},
      {"ReduceLogSumExp", [](const std::vector<double>& g) {
         double s = 0;
         for (double v : g) s += std::exp(v);
         return std::log(s);
       }},
  };
}

struct ReduceCase {
  Shape shape;
  std::vector<int64_t> axes;
};

class ReduceMatchesReference : public ::testing::TestWithParam<std::tuple<ReduceCase, int>> {};

TEST_P(ReduceMatchesReference, AllOpsFloat) {
  const auto& [c, threads] = GetParam();
  auto x = random_floats(static_cast<size_t>(shape_numel(c.shape)), 7, 0.5f, 1.5f);
  for (const OpCase& op : all_ops()) {
    std::vector<float> input = x;
    if (std::string(op.op) == "ReduceLogSum") {
      for (auto& v : input) v = std::abs(v);
    }
    const auto expected = reference_reduce(c.shape, input, c.axes, op.fold);
    for (int keepdims = 0; keepdims < 2; ++keepdims) {
      NodeBuilder b(op.op, 18);
      b.attr_int("keepdims", keepdims);
      Tensor out = run_one(b.node(), {make_tensor(c.shape, input), axes_tensor(c.axes)}, threads);
      ASSERT_EQ(out.numel(), static_cast<int64_t>(expected.size())) << op.op;
      const auto got = to_vector<float>(out);
      for (size_t i = 0; i < got.size(); ++i) {
        const double tol = 1e-4 * std::max(1.0, std::abs(expected[i]));
        ASSERT_NEAR(got[i], expected[i], tol) << op.op << " at " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ReduceMatchesReference,
    ::testing::Combine(::testing::Values(ReduceCase{{3, 5}, {1}}, ReduceCase{{3, 5}, {0}}, ReduceCase{{3, 5}, {}},
                                         ReduceCase{{2, 3, 4}, {0, 2}}, ReduceCase{{2, 3, 4}, {1}},
                                         ReduceCase{{2, 3, 4, 5}, {-1, 1}}, ReduceCase{{4, 1, 300, 3}, {0, 2}},
                                         ReduceCase{{7, 600}, {0}}, ReduceCase{{600, 37}, {1}},
                                         ReduceCase{{2, 1, 3}, {1}}, ReduceCase{{70000}, {0}},
                                         ReduceCase{{3, 40000}, {1}}),
                       ::testing::Values(1, 3)));

TEST(Reduce, OutputShapesAndKeepdims) {
  const Tensor x = make_tensor<float>({2, 3, 4}, random_floats(24, 1));
  auto out = run_kernel(NodeBuilder("ReduceSum", 13).attr_int("keepdims", 0).node(), {x, axes_tensor({-1, 0})});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape(), (Shape{3}));
  out = run_kernel(NodeBuilder("ReduceMean", 18).node(), {x, axes_tensor({1})});
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 1, 4}));
  // Absent axes: every axis; keepdims=0 gives a scalar.
  out = run_kernel(NodeBuilder("ReduceMax", 18).attr_int("keepdims", 0).node(), {x});
  EXPECT_EQ((*out)[0].shape(), Shape{});
  // Old opsets read the axes attribute.
  out = run_kernel(NodeBuilder("ReduceSum", 11).attr_ints("axes", {1}).node(), {x});
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 1, 4}));
  out = run_kernel(NodeBuilder("ReduceL2", 13).attr_ints("axes", {0, 2}).attr_int("keepdims", 0).node(), {x});
  EXPECT_EQ((*out)[0].shape(), (Shape{3}));
}

TEST(Reduce, NoopWithEmptyAxesAppliesTheElementTransform) {
  const Tensor x = make_tensor<float>({2, 2}, {1, -2, 3, -4});
  for (int threads : {1, 3}) {
    auto square = run_one(NodeBuilder("ReduceSumSquare", 18).attr_int("noop_with_empty_axes", 1).node(),
                          {x, axes_tensor({})}, threads);
    EXPECT_EQ(square.shape(), (Shape{2, 2}));
    EXPECT_EQ(to_vector<float>(square), (std::vector<float>{1, 4, 9, 16}));
    auto sum = run_one(NodeBuilder("ReduceSum", 13).attr_int("noop_with_empty_axes", 1).node(), {x}, threads);
    EXPECT_EQ(to_vector<float>(sum), (std::vector<float>{1, -2, 3, -4}));
    auto l1 = run_one(NodeBuilder("ReduceL1", 18).attr_int("noop_with_empty_axes", 1).node(), {x, Tensor()}, threads);
    EXPECT_EQ(to_vector<float>(l1), (std::vector<float>{1, 2, 3, 4}));
    // Without the flag an empty axes input reduces everything.
    auto all = run_one(NodeBuilder("ReduceSum", 13).node(), {x, axes_tensor({})}, threads);
    EXPECT_EQ(all.shape(), (Shape{1, 1}));
    EXPECT_EQ(to_vector<float>(all), (std::vector<float>{-2}));
  }
}

TEST(Reduce, EmptySetGivesTheIdentity) {
  const Tensor x = make_tensor<float>({2, 0, 3}, {});
  const float inf = std::numeric_limits<float>::infinity();
  const std::pair<const char*, float> cases[] = {{"ReduceSum", 0.0f},   {"ReduceProd", 1.0f},
                                                 {"ReduceMax", -inf},   {"ReduceMin", inf},
                                                 {"ReduceL1", 0.0f},    {"ReduceL2", 0.0f},
                                                 {"ReduceLogSum", -inf}, {"ReduceLogSumExp", -inf},
                                                 {"ReduceSumSquare", 0.0f}};
  for (const auto& [op, value] : cases) {
    Tensor out = run_one(NodeBuilder(op, 18).node(), {x, axes_tensor({1})}, 3);
    ASSERT_EQ(out.shape(), (Shape{2, 1, 3})) << op;
    for (float v : to_vector<float>(out)) EXPECT_EQ(v, value) << op;
  }
  Tensor mean = run_one(NodeBuilder("ReduceMean", 18).node(), {x, axes_tensor({1})});
  for (float v : to_vector<float>(mean)) EXPECT_TRUE(std::isnan(v));
  // Integer identities; integer mean of nothing is 0 rather than a division by zero.
  const Tensor xi = make_tensor<int32_t>({0, 2}, {});
  EXPECT_EQ(to_vector<int32_t>(run_one(NodeBuilder("ReduceMax", 18).node(), {xi, axes_tensor({0})})),
            (std::vector<int32_t>{INT32_MIN, INT32_MIN}));
  EXPECT_EQ(to_vector<int32_t>(run_one(NodeBuilder("ReduceMin", 18).node(), {xi, axes_tensor({0})})),
            (std::vector<int32_t>{INT32_MAX, INT32_MAX}));
  EXPECT_EQ(to_vector<int32_t>(run_one(NodeBuilder("ReduceMean", 18).node(), {xi, axes_tensor({0})})),
            (std::vector<int32_t>{0, 0}));
  // Zero-size kept axis: empty output.
  Tensor none = run_one(NodeBuilder("ReduceSum", 13).node(), {xi, axes_tensor({1})});
  EXPECT_EQ(none.shape(), (Shape{0, 1}));
  // bool ReduceMax (opset 20) of nothing is false.
  const Tensor xb = make_tensor<bool>({0}, {});
  EXPECT_EQ(to_vector<bool>(run_one(NodeBuilder("ReduceMax", 20).node(), {xb})), (std::vector<bool>{false}));
}

TEST(Reduce, ScalarInput) {
  const Tensor x = make_tensor<float>({}, {-3});
  Tensor out = run_one(NodeBuilder("ReduceL1", 18).attr_int("keepdims", 0).node(), {x});
  EXPECT_EQ(out.shape(), Shape{});
  EXPECT_EQ(to_vector<float>(out), (std::vector<float>{3}));
}

TEST(Reduce, IntegerSemantics) {
  const Tensor x = make_tensor<int32_t>({2}, {INT32_MAX, 1});
  EXPECT_EQ(to_vector<int32_t>(run_one(NodeBuilder("ReduceSum", 13).node(), {x})), (std::vector<int32_t>{INT32_MIN}));
  const Tensor y = make_tensor<int32_t>({2}, {-3, 0});
  EXPECT_EQ(to_vector<int32_t>(run_one(NodeBuilder("ReduceMean", 18).node(), {y})), (std::vector<int32_t>{-1}));
  const Tensor z = make_tensor<int64_t>({3}, {INT64_MIN, 2, 1});
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("ReduceL1", 18).node(), {z})),
            (std::vector<int64_t>{INT64_MIN + 3}));
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("ReduceProd", 18).node(), {z})), (std::vector<int64_t>{0}));
  const Tensor u = make_tensor<uint64_t>({2}, {UINT64_MAX, 2});
  EXPECT_EQ(to_vector<uint64_t>(run_one(NodeBuilder("ReduceSum", 13).node(), {u})), (std::vector<uint64_t>{1}));
  const Tensor s = make_tensor<int32_t>({2}, {3, 4});
  EXPECT_EQ(to_vector<int32_t>(run_one(NodeBuilder("ReduceL2", 18).node(), {s})), (std::vector<int32_t>{5}));
  const Tensor i8 = make_tensor<int8_t>({3}, {-5, 7, -128});
  EXPECT_EQ(to_vector<int8_t>(run_one(NodeBuilder("ReduceMax", 18).node(), {i8})), (std::vector<int8_t>{7}));
  EXPECT_EQ(to_vector<int8_t>(run_one(NodeBuilder("ReduceMin", 18).node(), {i8})), (std::vector<int8_t>{-128}));
  const Tensor b = make_tensor<bool>({2, 2}, {true, false, false, false});
  EXPECT_EQ(to_vector<bool>(run_one(NodeBuilder("ReduceMax", 20).node(), {b, axes_tensor({1})})),
            (std::vector<bool>{true, false}));
  EXPECT_EQ(to_vector<bool>(run_one(NodeBuilder("ReduceMin", 20).node(), {b, axes_tensor({1})})),
            (std::vector<bool>{false, false}));
}

TEST(Reduce, NanPropagatesThroughMaxAndMin) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = make_tensor<float>({2, 3}, {1, nan, 3, nan, 5, 6});
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    for (int64_t axis : {0, 1}) {
      auto got = to_vector<float>(run_one(NodeBuilder(op, 18).node(), {x, axes_tensor({axis})}, 3));
      if (axis == 1) {
        EXPECT_TRUE(std::isnan(got[0]) && std::isnan(got[1])) << op;
      } else {
        EXPECT_TRUE(std::isnan(got[0]) && std::isnan(got[1])) << op;
        EXPECT_FALSE(std::isnan(got[2])) << op;
      }
    }
  }
}

TEST(Reduce, PrecisionOfWideAndNarrowTypes) {
  std::vector<double> tenths(10, 0.1);
  Tensor d = run_one(NodeBuilder("ReduceSum", 13).node(), {make_tensor<double>({10}, tenths)});
  EXPECT_NEAR(to_vector<double>(d)[0], 1.0, 1e-15);
  // 4096 halves of 1.0 sum to 4096 when accumulated in float (a float16 accumulator stalls at 2048).
  for (int threads : {1, 3}) {
    Tensor h = run_one(NodeBuilder("ReduceSum", 13).node(),
                       {make_half_tensor<Float16>({4096}, std::vector<float>(4096, 1.0f))}, threads);
    EXPECT_EQ(to_float_vector(h)[0], 4096.0f);
    Tensor bf = run_one(NodeBuilder("ReduceMean", 18).node(),
                        {make_half_tensor<BFloat16>({2, 4096}, std::vector<float>(8192, 1.0f)), axes_tensor({1})},
                        threads);
    EXPECT_EQ(to_float_vector(bf), (std::vector<float>{1.0f, 1.0f}));
  }
}

// Terms a plain sum loses behind cancelling pairs (1e30 + 1 - 1e30): the compensated sums keep them, over a
// contiguous run, over strided rows (the reduced axis outer) and for half types, with one thread and several.
TEST(Reduce, SumsKeepTermsThatCancellingPairsHide) {
  const int64_t n = 3 * 700;
  std::vector<float> values(static_cast<size_t>(n));
  std::mt19937 rng(17);
  double expected = 0;
  for (int64_t i = 0; i < n; i += 3) {
    const float big = std::ldexp(static_cast<float>(1 + rng() % 7), 90);
    const float small = static_cast<float>(1 + rng() % 9);
    values[static_cast<size_t>(i)] = big;
    values[static_cast<size_t>(i + 1)] = small;
    values[static_cast<size_t>(i + 2)] = -big;
    expected += small;
  }
  std::shuffle(values.begin(), values.end(), rng);
  std::vector<double> wide(values.begin(), values.end());
  for (int threads : {1, 3}) {
    const Tensor row = run_one(NodeBuilder("ReduceSum", 13).node(), {make_tensor<float>({n}, values)}, threads);
    EXPECT_EQ(to_vector<float>(row)[0], static_cast<float>(expected));
    const Tensor column = run_one(NodeBuilder("ReduceSum", 13).attr_int("keepdims", 0).node(),
                                  {make_tensor<double>({n, 1}, wide), axes_tensor({0})}, threads);
    EXPECT_EQ(to_vector<double>(column)[0], expected);
    const Tensor mean = run_one(NodeBuilder("ReduceMean", 18).node(), {make_tensor<float>({n}, values)}, threads);
    EXPECT_FLOAT_EQ(to_vector<float>(mean)[0], static_cast<float>(expected / static_cast<double>(n)));
  }
  // Half types accumulate in float: 2^-20 (a float16 subnormal) is below the precision of 60000 there too.
  const float tiny = std::ldexp(1.0f, -20);
  const Tensor half = run_one(NodeBuilder("ReduceSum", 13).node(),
                              {make_half_tensor<Float16>({3}, std::vector<float>{60000.0f, tiny, -60000.0f})});
  EXPECT_EQ(to_float_vector(half)[0], tiny);
}

// Many short rows reduced over their innermost axis (the tiled column-sum path): each row hides its small integer
// terms behind a cancelling pair +-big (a plain float or double sum loses them), for row lengths up to the tile
// limit and past it, float and double, ReduceSum and ReduceMean, one thread and several.
TEST(Reduce, ShortRowSumsKeepTermsThatCancellingPairsHide) {
  std::mt19937 rng(29);
  for (int64_t length : {3, 5, 17, 32, 33}) {
    const int64_t rows = 131;
    std::vector<double> values(static_cast<size_t>(rows * length)), expected(static_cast<size_t>(rows), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      double* row = values.data() + r * length;
      const int64_t plus = static_cast<int64_t>(rng() % static_cast<uint32_t>(length));
      const int64_t minus = (plus + 1 + static_cast<int64_t>(rng() % static_cast<uint32_t>(length - 1))) % length;
      const double big = std::ldexp(static_cast<double>(1 + rng() % 7), 90);
      for (int64_t k = 0; k < length; ++k) {
        row[k] = k == plus ? big : k == minus ? -big : static_cast<double>(1 + rng() % 9);
        if (k != plus && k != minus) expected[static_cast<size_t>(r)] += row[k];
      }
    }
    const std::vector<float> floats(values.begin(), values.end());
    for (int threads : {1, 3}) {
      const Tensor d = run_one(NodeBuilder("ReduceSum", 13).attr_int("keepdims", 0).node(),
                               {make_tensor<double>({rows, length}, values), axes_tensor({1})}, threads);
      const Tensor f = run_one(NodeBuilder("ReduceSum", 13).attr_int("keepdims", 0).node(),
                               {make_tensor<float>({rows, length}, floats), axes_tensor({-1})}, threads);
      const Tensor mean = run_one(NodeBuilder("ReduceMean", 18).attr_int("keepdims", 0).node(),
                                  {make_tensor<double>({rows, length}, values), axes_tensor({1})}, threads);
      const std::vector<double> got_d = to_vector<double>(d), got_mean = to_vector<double>(mean);
      const std::vector<float> got_f = to_vector<float>(f);
      for (int64_t r = 0; r < rows; ++r) {
        const double want = expected[static_cast<size_t>(r)];
        EXPECT_EQ(got_d[static_cast<size_t>(r)], want) << "length " << length << " row " << r;
        EXPECT_EQ(got_f[static_cast<size_t>(r)], static_cast<float>(want)) << "length " << length << " row " << r;
        EXPECT_DOUBLE_EQ(got_mean[static_cast<size_t>(r)], want / static_cast<double>(length)) << "row " << r;
      }
    }
  }
}

TEST(Reduce, LogSumExpIsStable) {
  const Tensor x = make_tensor<float>({1, 2}, {1000, 1000});
  auto got = to_vector<float>(run_one(NodeBuilder("ReduceLogSumExp", 18).node(), {x, axes_tensor({1})}));
  EXPECT_NEAR(got[0], 1000.0f + std::log(2.0f), 1e-3);
  const Tensor y = make_tensor<float>({2, 1}, {-1000, -1000});
  got = to_vector<float>(run_one(NodeBuilder("ReduceLogSumExp", 13).attr_ints("axes", {0}).node(), {y}));
  EXPECT_NEAR(got[0], -1000.0f + std::log(2.0f), 1e-3);
}

TEST(Reduce, RejectsBadAxesAndTypes) {
  const Tensor x = make_tensor<float>({2, 3}, random_floats(6, 3));
  auto out = run_kernel(NodeBuilder("ReduceSum", 13).node(), {x, axes_tensor({2})});
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("ReduceSum"), std::string::npos);
  out = run_kernel(NodeBuilder("ReduceMean", 18).node(), {x, axes_tensor({1, -1})});
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  out = run_kernel(NodeBuilder("ReduceMax", 11).attr_ints("axes", {-3}).node(), {x});
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  out = run_kernel(NodeBuilder("ReduceSum", 13).node(), {x, make_tensor<int32_t>({1}, {0})});
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  out = run_kernel(NodeBuilder("ReduceSum", 13).node(), {make_tensor<int8_t>({1}, {1})});
  EXPECT_FALSE(out.has_value());
  out = run_kernel(NodeBuilder("ReduceLogSum", 28).node(), {make_tensor<int32_t>({1}, {1})});
  EXPECT_FALSE(out.has_value());
}

// CumSum reference: the 1-D scan along `axis` of a row-major tensor.
std::vector<double> reference_cumsum(const Shape& shape, const std::vector<float>& x, size_t axis, bool exclusive,
                                     bool reverse) {
  int64_t inner = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t n = shape[axis];
  const int64_t outer = static_cast<int64_t>(x.size()) / std::max<int64_t>(1, n * inner);
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < inner; ++c) {
      double acc = 0;
      for (int64_t s = 0; s < n; ++s) {
        const int64_t r = reverse ? n - 1 - s : s;
        const size_t at = static_cast<size_t>((o * n + r) * inner + c);
        if (exclusive) {
          y[at] = acc;
          acc += x[at];
        } else {
          acc += x[at];
          y[at] = acc;
        }
      }
    }
  }
  return y;
}

TEST(CumSum, MatchesReference) {
  const Shape shapes[] = {{5}, {3, 4}, {2, 3, 300}, {4, 1, 6}};
  for (const Shape& shape : shapes) {
    const auto x = random_floats(static_cast<size_t>(shape_numel(shape)), 5);
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      for (int flags = 0; flags < 4; ++flags) {
        const bool exclusive = flags & 1;
        const bool reverse = flags & 2;
        const auto expected = reference_cumsum(shape, x, axis, exclusive, reverse);
        for (int threads : {1, 3}) {
          NodeBuilder b("CumSum", 14);
          b.attr_int("exclusive", exclusive).attr_int("reverse", reverse);
          const int64_t axis_value = static_cast<int64_t>(axis) - (flags == 3 ? static_cast<int64_t>(shape.size()) : 0);
          const Tensor axis_tensor = flags == 1 ? make_tensor<int32_t>({}, {static_cast<int32_t>(axis_value)})
                                                : make_tensor<int64_t>({1}, {axis_value});
          const auto got = to_vector<float>(run_one(b.node(), {make_tensor(shape, x), axis_tensor}, threads));
          for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], expected[i], 1e-4) << i;
        }
      }
    }
  }
}

TEST(CumSum, IntegersWrapAndHalvesAccumulateInFloat) {
  const Tensor x = make_tensor<int32_t>({3}, {INT32_MAX, 1, 1});
  EXPECT_EQ(to_vector<int32_t>(run_one(NodeBuilder("CumSum", 11).node(), {x, make_tensor<int64_t>({}, {0})})),
            (std::vector<int32_t>{INT32_MAX, INT32_MIN, INT32_MIN + 1}));
  const Tensor h = make_half_tensor<Float16>({3}, {1, 2, 3});
  EXPECT_EQ(to_float_vector(run_one(NodeBuilder("CumSum", 14).attr_int("exclusive", 1).node(),
                                    {h, make_tensor<int64_t>({}, {0})})),
            (std::vector<float>{0, 1, 3}));
  const Tensor empty = make_tensor<float>({0, 3}, {});
  EXPECT_EQ(run_one(NodeBuilder("CumSum", 14).node(), {empty, make_tensor<int64_t>({}, {1})}).shape(), (Shape{0, 3}));
}

TEST(CumProd, ExclusiveReverseAndIntegerWrap) {
  const Tensor x = make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor axis1 = make_tensor<int64_t>({}, {1});
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("CumProd", 26).node(), {x, axis1})),
            (std::vector<float>{1, 2, 6, 4, 20, 120}));
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("CumProd", 26).attr_int("exclusive", 1).attr_int("reverse", 1).node(),
                                     {x, axis1})),
            (std::vector<float>{6, 3, 1, 30, 6, 1}));
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("CumProd", 26).node(), {x, make_tensor<int32_t>({}, {-2})})),
            (std::vector<float>{1, 2, 3, 4, 10, 18}));
  const Tensor big = make_tensor<int32_t>({3}, {65536, 65536, 3});
  EXPECT_EQ(to_vector<int32_t>(run_one(NodeBuilder("CumProd", 26).node(), {big, make_tensor<int64_t>({}, {0})})),
            (std::vector<int32_t>{65536, 0, 0}));
  EXPECT_FALSE(run_kernel(NodeBuilder("CumProd", 25).node(), {x, axis1}).has_value());
}

TEST(CumSum, RejectsBadAxis) {
  const Tensor x = make_tensor<float>({2, 2}, {1, 2, 3, 4});
  auto out = run_kernel(NodeBuilder("CumSum", 14).node(), {x, make_tensor<int64_t>({}, {2})});
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  out = run_kernel(NodeBuilder("CumSum", 14).node(), {x, make_tensor<int64_t>({2}, {0, 1})});
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  out = run_kernel(NodeBuilder("CumSum", 11).node(), {make_half_tensor<Float16>({1}, {1}), make_tensor<int64_t>({}, {0})});
  EXPECT_FALSE(out.has_value());
}

}  // namespace
}  // namespace nxrt::cpu::testing
