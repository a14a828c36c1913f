#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

std::vector<float> random_ints_as_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-4, 4);  // many ties
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(dist(rng));
  return v;
}

// Reference arg-reduction along `axis`: first (or last) index of the max (or min).
std::vector<int64_t> reference_arg(const Shape& shape, const std::vector<float>& x, size_t axis, bool max,
                                   bool last) {
  int64_t outer = 1;
  int64_t inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t n = shape[axis];
  std::vector<int64_t> y;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < inner; ++c) {
      int64_t best = 0;
      for (int64_t r = 1; r < n; ++r) {
        const float v = x[static_cast<size_t>((o * n + r) * inner + c)];
        const float b = x[static_cast<size_t>((o * n + best) * inner + c)];
        const bool better = max ? (last ? v >= b : v > b) : (last ? v <= b : v < b);
        if (better) best = r;
      }
      y.push_back(best);
    }
  }
  return y;
}

TEST(ArgMaxMin, MatchesReference) {
  const Shape shapes[] = {{7}, {3, 5}, {2, 3, 4}, {2, 600, 3}, {4, 2, 300}};
  for (const Shape& shape : shapes) {
    const auto x = random_ints_as_floats(static_cast<size_t>(shape_numel(shape)), 3);
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      for (int variant = 0; variant < 4; ++variant) {
        const bool max = variant & 1;
        const bool last = variant & 2;
        const auto expected = reference_arg(shape, x, axis, max, last);
        for (int threads : {1, 3}) {
          NodeBuilder b(max ? "ArgMax" : "ArgMin", 13);
          b.attr_int("axis", static_cast<int64_t>(axis) - (threads == 3 ? static_cast<int64_t>(shape.size()) : 0))
              .attr_int("select_last_index", last)
              .attr_int("keepdims", threads == 1);
          Tensor out = run_one(b.node(), {make_tensor(shape, x)}, threads);
          Shape expected_shape = shape;
          if (threads == 1) {
            expected_shape[axis] = 1;
          } else {
            expected_shape.erase(expected_shape.begin() + static_cast<std::ptrdiff_t>(axis));
          }
          ASSERT_EQ(out.shape(), expected_shape);
          ASSERT_EQ(to_vector<int64_t>(out), expected) << "axis " << axis << " variant " << variant;
        }
      }
    }
  }
}

TEST(ArgMaxMin, TypesNanAndErrors) {
  const Tensor i8 = make_tensor<int8_t>({4}, {-128, 127, 127, 0});
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("ArgMax", 12).attr_int("select_last_index", 1).node(), {i8})),
            (std::vector<int64_t>{2}));
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("ArgMin", 11).node(), {i8})), (std::vector<int64_t>{0}));
  const Tensor h = make_half_tensor<BFloat16>({3}, {1, 3, 2});
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("ArgMax", 13).node(), {h})), (std::vector<int64_t>{1}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor f = make_tensor<float>({4}, {1, nan, 5, nan});
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("ArgMax", 13).node(), {f})), (std::vector<int64_t>{1}));
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("ArgMin", 13).node(), {f})), (std::vector<int64_t>{1}));
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("ArgMax", 13).attr_int("select_last_index", 1).node(), {f})),
            (std::vector<int64_t>{3}));
  // Zero-size axis: no index exists.
  auto out = run_kernel(NodeBuilder("ArgMax", 13).attr_int("axis", 1).node(), {make_tensor<float>({2, 0}, {})});
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  // Zero-size other axis: empty output.
  EXPECT_EQ(run_one(NodeBuilder("ArgMin", 13).attr_int("axis", 1).node(), {make_tensor<float>({0, 2}, {})}).shape(),
            (Shape{0, 1}));
  out = run_kernel(NodeBuilder("ArgMax", 13).attr_int("axis", 2).node(), {make_tensor<float>({2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  out = run_kernel(NodeBuilder("ArgMax", 13).node(), {make_tensor<bool>({1}, {true})});
  EXPECT_FALSE(out.has_value());
}

// Reference TopK of one slice: stable sort by value (descending for largest), lower index first on ties.
void reference_topk(const std::vector<float>& slice, int64_t k, bool largest, std::vector<float>& values,
                    std::vector<int64_t>& indices) {
  std::vector<int64_t> order(slice.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return largest ? slice[static_cast<size_t>(a)] > slice[static_cast<size_t>(b)]
                   : slice[static_cast<size_t>(a)] < slice[static_cast<size_t>(b)];
  });
  for (int64_t i = 0; i < k; ++i) {
    indices.push_back(order[static_cast<size_t>(i)]);
    values.push_back(slice[static_cast<size_t>(order[static_cast<size_t>(i)])]);
  }
}

TEST(TopK, MatchesReferenceWithTies) {
  const Shape shape{3, 50, 4};
  const auto x = random_ints_as_floats(static_cast<size_t>(shape_numel(shape)), 9);
  for (int64_t k : {0, 1, 7, 50}) {
    for (bool largest : {true, false}) {
      std::vector<float> want_values(static_cast<size_t>(3 * k * 4));
      std::vector<int64_t> want_indices(static_cast<size_t>(3 * k * 4));
      for (int64_t o = 0; o < 3; ++o) {
        for (int64_t c = 0; c < 4; ++c) {
          std::vector<float> slice;
          for (int64_t r = 0; r < 50; ++r) slice.push_back(x[static_cast<size_t>((o * 50 + r) * 4 + c)]);
          std::vector<float> values;
          std::vector<int64_t> indices;
          reference_topk(slice, k, largest, values, indices);
          for (int64_t i = 0; i < k; ++i) {
            want_values[static_cast<size_t>((o * k + i) * 4 + c)] = values[static_cast<size_t>(i)];
            want_indices[static_cast<size_t>((o * k + i) * 4 + c)] = indices[static_cast<size_t>(i)];
          }
        }
      }
      for (int threads : {1, 3}) {
        NodeBuilder b("TopK", 11);
        b.attr_int("axis", threads == 1 ? 1 : -2).attr_int("largest", largest);
        auto out = run_kernel(b.node(), {make_tensor(shape, x), make_tensor<int64_t>({1}, {k})}, threads);
        ASSERT_TRUE(out.has_value()) << out.status().to_string();
        ASSERT_EQ((*out)[0].shape(), (Shape{3, k, 4}));
        EXPECT_EQ(to_vector<float>((*out)[0]), want_values) << "k " << k << " largest " << largest;
        EXPECT_EQ(to_vector<int64_t>((*out)[1]), want_indices) << "k " << k << " largest " << largest;
      }
    }
  }
}

TEST(TopK, OpsetVariantsTypesAndErrors) {
  const Tensor x = make_tensor<float>({4}, {1, 4, 2, 4});
  auto out = run_kernel(NodeBuilder("TopK", 1).attr_int("k", 2).node(), {x});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ(to_vector<float>((*out)[0]), (std::vector<float>{4, 4}));
  EXPECT_EQ(to_vector<int64_t>((*out)[1]), (std::vector<int64_t>{1, 3}));
  out = run_kernel(NodeBuilder("TopK", 10).node(), {x, make_tensor<int64_t>({1}, {3})});
  EXPECT_EQ(to_vector<int64_t>((*out)[1]), (std::vector<int64_t>{1, 3, 2}));
  const Tensor u = make_tensor<uint64_t>({3}, {UINT64_MAX, 0, 5});
  out = run_kernel(NodeBuilder("TopK", 11).attr_int("largest", 0).node(), {u, make_tensor<int64_t>({1}, {2})});
  EXPECT_EQ(to_vector<uint64_t>((*out)[0]), (std::vector<uint64_t>{0, 5}));
  const Tensor bf = make_half_tensor<BFloat16>({3}, {1, 3, 2});
  out = run_kernel(NodeBuilder("TopK", 24).node(), {bf, make_tensor<int64_t>({1}, {1})});
  EXPECT_EQ(to_float_vector((*out)[0]), (std::vector<float>{3}));
  out = run_kernel(NodeBuilder("TopK", 11).node(), {bf, make_tensor<int64_t>({1}, {1})});
  EXPECT_FALSE(out.has_value());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  out = run_kernel(NodeBuilder("TopK", 11).node(), {make_tensor<float>({3}, {1, nan, 2}), make_tensor<int64_t>({1}, {2})});
  EXPECT_EQ(to_vector<int64_t>((*out)[1]), (std::vector<int64_t>{1, 2}));
  for (int64_t bad_k : {-1, 5}) {
    out = run_kernel(NodeBuilder("TopK", 11).node(), {x, make_tensor<int64_t>({1}, {bad_k})});
    ASSERT_FALSE(out.has_value());
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  }
  out = run_kernel(NodeBuilder("TopK", 11).node(), {x, make_tensor<int64_t>({2}, {1, 1})});
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  out = run_kernel(NodeBuilder("TopK", 11).attr_int("axis", 1).node(), {x, make_tensor<int64_t>({1}, {1})});
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  out = run_kernel(NodeBuilder("TopK", 1).node(), {x});
  EXPECT_FALSE(out.has_value());
  // Zero-size axis with k = 0.
  out = run_kernel(NodeBuilder("TopK", 11).node(), {make_tensor<float>({2, 0}, {}), make_tensor<int64_t>({1}, {0})});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ((*out)[1].shape(), (Shape{2, 0}));
}

}  // namespace
}  // namespace nxrt::cpu::testing
