#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Tensor ints(const std::vector<int64_t>& values) {
  return make_tensor<int64_t>({static_cast<int64_t>(values.size())}, values);
}

Tensor iota_int(Shape shape) {
  std::vector<int32_t> values(static_cast<size_t>(shape_numel(shape)));
  std::iota(values.begin(), values.end(), 0);
  return make_tensor<int32_t>(std::move(shape), values);
}

TEST(SliceTest, StepsClampingAndExtremes) {
  const Tensor x = iota_int({3, 4});
  Tensor y = run_one(NodeBuilder("Slice", 13).node(), {x, ints({0, 1}), ints({kMax, 3})});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(to_vector<int32_t>(y), (std::vector<int32_t>{1, 2, 5, 6, 9, 10}));
  Tensor reversed = run_one(NodeBuilder("Slice", 13).node(), {x, ints({-1}), ints({kMin}), ints({1}), ints({-1})});
  EXPECT_EQ(to_vector<int32_t>(reversed), (std::vector<int32_t>{3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8}));
  Tensor stepped = run_one(NodeBuilder("Slice", 13).node(), {x, ints({2, 3}), ints({-kMax, 0}), ints({0, 1}),
                                                             ints({-2, -2})});
  EXPECT_EQ(to_vector<int32_t>(stepped), (std::vector<int32_t>{11, 9, 3, 1}));
  EXPECT_EQ(run_one(NodeBuilder("Slice", 13).node(), {x, ints({3}), ints({1}), ints({1})}).shape(), (Shape{3, 0}));
  Tensor huge_step = run_one(NodeBuilder("Slice", 13).node(), {x, ints({kMax}), ints({kMin}), ints({0}), ints({kMin})});
  EXPECT_EQ(to_vector<int32_t>(huge_step), (std::vector<int32_t>{8, 9, 10, 11}));
  // Opset 1 takes attributes; int32 index inputs from opset 10.
  Tensor v1 = run_one(NodeBuilder("Slice", 1).attr_ints("starts", {1}).attr_ints("ends", {2}).attr_ints("axes", {0}).node(),
                      {x});
  EXPECT_EQ(to_vector<int32_t>(v1), (std::vector<int32_t>{4, 5, 6, 7}));
  Tensor i32 = run_one(NodeBuilder("Slice", 10).node(), {x, make_tensor<int32_t>({1}, {-2}), make_tensor<int32_t>({1}, {100})});
  EXPECT_EQ(to_vector<int32_t>(i32), (std::vector<int32_t>{4, 5, 6, 7, 8, 9, 10, 11}));
}

// Unit-step slices with inner runs of 16+ elements take the direct-copy path (shorter ones the index maps):
// checked against a naive reference for 1..4-D boxes, negative starts, an empty box, one long row split across
// threads, and f64 / int8 elements.
template <class T>
void check_unit_step_slices(int threads) {
  struct Case {
    Shape shape;
    std::vector<int64_t> starts, ends, axes;
  };
  const std::vector<Case> cases = {
      {{100003}, {2}, {-1}, {0}},
      {{17}, {1}, {17}, {0}},
      {{5, 40}, {1, 3}, {4, 36}, {0, 1}},
      {{3, 4, 33}, {-2, 0}, {kMax, 33}, {0, 2}},
      {{2, 3, 5, 64}, {1, 1, 2}, {3, 4, 50}, {1, 2, 3}},
      {{4, 20}, {0}, {0}, {1}},
  };
  for (const Case& c : cases) {
    const int64_t numel = shape_numel(c.shape);
    std::vector<T> values(static_cast<size_t>(numel));
    for (int64_t i = 0; i < numel; ++i) values[i] = static_cast<T>(i % 113 - 50);
    const Tensor x = make_tensor<T>(c.shape, values);
    Tensor y = run_one(NodeBuilder("Slice", 13).node(), {x, ints(c.starts), ints(c.ends), ints(c.axes)}, threads);
    // Reference: walk the output and read the input directly.
    const size_t rank = c.shape.size();
    std::vector<int64_t> start(rank, 0);
    Shape out = c.shape;
    for (size_t i = 0; i < c.axes.size(); ++i) {
      const auto axis = static_cast<size_t>(c.axes[i]);
      const int64_t dim = c.shape[axis];
      const int64_t s = std::clamp<int64_t>(c.starts[i] < 0 ? c.starts[i] + dim : c.starts[i], 0, dim);
      const int64_t e = std::clamp<int64_t>(c.ends[i] < 0 ? c.ends[i] + dim : c.ends[i], 0, dim);
      start[axis] = s;
      out[axis] = std::max<int64_t>(0, e - s);
    }
    ASSERT_EQ(y.shape(), out);
    std::vector<T> expected;
    for (int64_t flat = 0; flat < shape_numel(out); ++flat) {
      int64_t rest = flat, offset = 0, stride = 1;
      for (size_t d = rank; d-- > 0;) {
        offset += (start[d] + rest % out[d]) * stride;
        rest /= out[d];
        stride *= c.shape[d];
      }
      expected.push_back(values[static_cast<size_t>(offset)]);
    }
    EXPECT_EQ(to_vector<T>(y), expected) << shape_to_string(c.shape) << " threads " << threads;
  }
}

TEST(SliceTest, UnitStepBoxesMatchReference) {
  for (int threads : {1, 2}) {
    check_unit_step_slices<double>(threads);
    check_unit_step_slices<int8_t>(threads);
  }
}

// Strided innermost runs (a space-to-depth slice x[..., 1::2], steps 3 and -3 over long rows) are gathered in one
// run per row: checked element by element.
TEST(SliceTest, StridedInnerRowsMatchReference) {
  const Tensor x = iota_int({3, 2, 101});
  const struct {
    int64_t start, end, step;
  } cases[] = {{1, kMax, 2}, {0, 100, 3}, {-1, kMin, -3}, {5, 6, 7}};
  for (const auto& c : cases) {
    Tensor y =
        run_one(NodeBuilder("Slice", 13).node(), {x, ints({c.start}), ints({c.end}), ints({2}), ints({c.step})}, 2);
    std::vector<int32_t> expected;
    for (int32_t row = 0; row < 6; ++row) {
      const int64_t first = c.start < 0 ? c.start + 101 : c.start;
      for (int64_t i = first; c.step > 0 ? i < std::min<int64_t>(c.end, 101) : i >= 0; i += c.step) {
        expected.push_back(row * 101 + static_cast<int32_t>(i));
      }
    }
    EXPECT_EQ(to_vector<int32_t>(y), expected) << c.start << ":" << c.end << ":" << c.step;
  }
}

TEST(SliceTest, RejectsBadParameters) {
  const Tensor x = iota_int({3, 4});
  EXPECT_FALSE(run_kernel(NodeBuilder("Slice", 13).node(), {x, ints({0}), ints({1}), ints({0}), ints({0})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Slice", 13).node(), {x, ints({0, 0}), ints({1})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Slice", 13).node(), {x, ints({0, 0}), ints({1, 1}), ints({1, -1})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Slice", 13).node(), {x, ints({0}), ints({1}), ints({2})}).has_value());
}

TEST(SliceTest, LargeStringsAndThreads) {
  std::vector<std::string> words;
  for (int i = 0; i < 40000; ++i) words.push_back(std::to_string(i));
  const Tensor x = make_tensor<std::string>({200, 200}, words);
  for (int threads : {1, 3}) {
    auto out = run_kernel(NodeBuilder("Slice", 13).node(), {x, ints({199, 1}), ints({-kMax, 200}), ints({0, 1}),
                                                             ints({-1, 2})}, threads);
    ASSERT_TRUE(out.has_value());
    const Tensor& y = (*out)[0];
    EXPECT_EQ(y.shape(), (Shape{200, 100}));
    EXPECT_EQ(y.data<std::string>()[0], "39801");
    EXPECT_EQ(y.data<std::string>()[199 * 100 + 99], "199");
  }
}

TEST(PadTest, Modes) {
  const Tensor x = make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const auto pad = [&](const char* mode, std::vector<int64_t> pads) {
    return to_vector<float>(run_one(NodeBuilder("Pad", 19).attr_string("mode", mode).node(), {x, ints(pads)}));
  };
  EXPECT_EQ(pad("constant", {0, 1, 0, 1}), (std::vector<float>{0, 1, 2, 3, 0, 0, 4, 5, 6, 0}));
  EXPECT_EQ(pad("reflect", {0, 2, 0, 0}), (std::vector<float>{3, 2, 1, 2, 3, 6, 5, 4, 5, 6}));
  EXPECT_EQ(pad("edge", {1, 0, 0, 1}), (std::vector<float>{1, 2, 3, 3, 1, 2, 3, 3, 4, 5, 6, 6}));
  EXPECT_EQ(pad("wrap", {0, 2, 0, 1}), (std::vector<float>{2, 3, 1, 2, 3, 1, 5, 6, 4, 5, 6, 4}));
  // Negative pads crop.
  EXPECT_EQ(pad("constant", {0, -1, 0, 0}), (std::vector<float>{2, 3, 5, 6}));
  EXPECT_EQ(pad("constant", {-1, 0, 0, 0}), (std::vector<float>{4, 5, 6}));
}

TEST(PadTest, ConstantValueAxesAndOldOpsets) {
  const Tensor x = make_tensor<int64_t>({2, 2}, {1, 2, 3, 4});
  Tensor y = run_one(NodeBuilder("Pad", 18).node(), {x, ints({1, 1}), make_tensor<int64_t>({}, {9}), ints({-1})});
  EXPECT_EQ(to_vector<int64_t>(y), (std::vector<int64_t>{9, 1, 2, 9, 9, 3, 4, 9}));
  Tensor v2 = run_one(NodeBuilder("Pad", 2).attr_ints("pads", {1, 0, 0, 0}).attr_float("value", 1.5f).node(),
                      {make_tensor<float>({1, 2}, {7, 8})});
  EXPECT_EQ(to_vector<float>(v2), (std::vector<float>{1.5f, 1.5f, 7, 8}));
  Tensor v1 = run_one(NodeBuilder("Pad", 1).attr_ints("paddings", {0, 1, 0, 0}).node(), {make_tensor<double>({1, 1}, {2})});
  EXPECT_EQ(to_vector<double>(v1), (std::vector<double>{0, 2}));
  Tensor strings = run_one(NodeBuilder("Pad", 13).node(), {make_tensor<std::string>({1}, {"a"}), ints({1, 1}),
                                                           make_tensor<std::string>({}, {"-"})});
  EXPECT_EQ(to_vector<std::string>(strings), (std::vector<std::string>{"-", "a", "-"}));
  Tensor empty = run_one(NodeBuilder("Pad", 13).node(), {make_tensor<float>({0, 2}, {}), ints({1, 0, 0, 0})});
  EXPECT_EQ(to_vector<float>(empty), (std::vector<float>{0, 0}));
}

TEST(PadTest, RejectsBadPads) {
  const Tensor x = make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_FALSE(run_kernel(NodeBuilder("Pad", 13).node(), {x, ints({0, 1, 0})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Pad", 13).node(), {x, ints({0, -4, 0, 0})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Pad", 13).node(), {x, ints({0, kMax, 0, kMax})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Pad", 18).attr_string("mode", "wrap").node(), {x, ints({0, 0, 0, 0})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Pad", 13).attr_string("mode", "edge").node(),
                          {make_tensor<float>({0}, {}), ints({1, 1})}).has_value());
}

TEST(ExpandTest, Broadcasts) {
  const Tensor x = make_tensor<int16_t>({3, 1}, {1, 2, 3});
  for (int threads : {1, 3}) {
    auto out = run_kernel(NodeBuilder("Expand", 13).node(), {x, ints({2, 1, 4})}, threads);
    ASSERT_TRUE(out.has_value());
    EXPECT_EQ((*out)[0].shape(), (Shape{2, 3, 4}));
    EXPECT_EQ(to_vector<int16_t>((*out)[0]),
              (std::vector<int16_t>{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));
  }
  EXPECT_EQ(run_one(NodeBuilder("Expand", 8).node(), {x, ints({1})}).shape(), (Shape{3, 1}));
  EXPECT_EQ(run_one(NodeBuilder("Expand", 8).node(), {x, ints({0})}).shape(), (Shape{3, 0}));
  Tensor scalar = run_one(NodeBuilder("Expand", 13).node(), {make_tensor<bool>({}, {true}), ints({2})});
  EXPECT_EQ(to_vector<bool>(scalar), (std::vector<bool>{true, true}));
  EXPECT_FALSE(run_kernel(NodeBuilder("Expand", 13).node(), {x, ints({4, 2})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Expand", 13).node(), {x, ints({-1, 1})}).has_value());
  // A shape too large to allocate fails cleanly.
  EXPECT_FALSE(run_kernel(NodeBuilder("Expand", 13).node(), {x, ints({int64_t{1} << 50, 1})}).has_value());
}

TEST(TileTest, RepeatsAndOpset1) {
  const Tensor x = make_tensor<uint8_t>({2, 2}, {1, 2, 3, 4});
  Tensor y = run_one(NodeBuilder("Tile", 13).node(), {x, ints({1, 2})});
  EXPECT_EQ(to_vector<uint8_t>(y), (std::vector<uint8_t>{1, 2, 1, 2, 3, 4, 3, 4}));
  Tensor rows = run_one(NodeBuilder("Tile", 6).node(), {x, ints({2, 1})});
  EXPECT_EQ(to_vector<uint8_t>(rows), (std::vector<uint8_t>{1, 2, 3, 4, 1, 2, 3, 4}));
  EXPECT_EQ(run_one(NodeBuilder("Tile", 13).node(), {x, ints({0, 3})}).shape(), (Shape{0, 6}));
  Tensor v1 = run_one(NodeBuilder("Tile", 1).node(), {x, make_tensor<int64_t>({}, {3}), make_tensor<int64_t>({}, {1})});
  EXPECT_EQ(v1.shape(), (Shape{2, 6}));
  EXPECT_FALSE(run_kernel(NodeBuilder("Tile", 13).node(), {x, ints({2})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Tile", 13).node(), {x, ints({-1, 1})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Tile", 13).node(), {x, ints({kMax, 2})}).has_value());
}

}  // namespace
}  // namespace nxrt::cpu::testing
