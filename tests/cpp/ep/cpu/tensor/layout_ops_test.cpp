#include <numeric>
#include <string>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

Tensor iota_int(Shape shape) {
  std::vector<int32_t> values(static_cast<size_t>(shape_numel(shape)));
  std::iota(values.begin(), values.end(), 0);
  return make_tensor<int32_t>(std::move(shape), values);
}

// numpy-style reference: y[b, c, h*bs+i, w*bs+j] = x[b, channel(c, i, j), h, w].
std::vector<int32_t> depth_to_space_reference(const Tensor& x, int64_t bs, bool crd) {
  const Shape& s = x.shape();
  const int64_t c_out = s[1] / (bs * bs);
  std::vector<int32_t> out(static_cast<size_t>(x.numel()));
  for (int64_t b = 0; b < s[0]; ++b)
    for (int64_t c = 0; c < c_out; ++c)
      for (int64_t h = 0; h < s[2] * bs; ++h)
        for (int64_t w = 0; w < s[3] * bs; ++w) {
          const int64_t i = h % bs, j = w % bs;
          const int64_t channel = crd ? c * bs * bs + i * bs + j : (i * bs + j) * c_out + c;
          out[static_cast<size_t>(((b * c_out + c) * s[2] * bs + h) * s[3] * bs + w)] =
              x.data<int32_t>()[((b * s[1] + channel) * s[2] + h / bs) * s[3] + w / bs];
        }
  return out;
}

TEST(DepthToSpaceTest, DcrAndCrdRoundTrip) {
  const Tensor x = iota_int({2, 8, 3, 5});
  for (const char* mode : {"DCR", "CRD"}) {
    for (int threads : {1, 3}) {
      auto y = run_kernel(NodeBuilder("DepthToSpace", 13).attr_int("blocksize", 2).attr_string("mode", mode).node(), {x},
                          threads);
      ASSERT_TRUE(y.has_value()) << y.status().to_string();
      EXPECT_EQ((*y)[0].shape(), (Shape{2, 2, 6, 10}));
      EXPECT_EQ(to_vector<int32_t>((*y)[0]), depth_to_space_reference(x, 2, std::string(mode) == "CRD"));
      auto back = run_kernel(NodeBuilder("SpaceToDepth", 28).attr_int("blocksize", 2).attr_string("mode", mode).node(),
                             {(*y)[0]}, threads);
      ASSERT_TRUE(back.has_value()) << back.status().to_string();
      EXPECT_EQ(to_vector<int32_t>((*back)[0]), to_vector<int32_t>(x));
    }
  }
}

TEST(DepthToSpaceTest, RejectsBadShapes) {
  EXPECT_FALSE(run_kernel(NodeBuilder("DepthToSpace", 13).attr_int("blocksize", 2).node(), {iota_int({1, 6, 2, 2})})
                   .has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("SpaceToDepth", 13).attr_int("blocksize", 2).node(), {iota_int({1, 1, 3, 2})})
                   .has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("SpaceToDepth", 13).attr_int("blocksize", 0).node(), {iota_int({1, 1, 2, 2})})
                   .has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("DepthToSpace", 13).attr_int("blocksize", 1).node(), {iota_int({4, 2})})
                   .has_value());
  // CRD for SpaceToDepth only from opset 28.
  EXPECT_FALSE(run_kernel(NodeBuilder("SpaceToDepth", 13).attr_int("blocksize", 1).attr_string("mode", "CRD").node(),
                          {iota_int({1, 1, 2, 2})})
                   .has_value());
}

TEST(ReverseSequenceTest, BatchAndTimeAxes) {
  const Tensor x = make_tensor<float>({4, 4}, {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15});
  Tensor y = run_one(NodeBuilder("ReverseSequence", 10).node(), {x, make_tensor<int64_t>({4}, {4, 3, 2, 1})});
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{3, 6, 9, 12, 2, 5, 8, 13, 1, 4, 10, 14, 0, 7, 11, 15}));
  const Tensor z = make_tensor<std::string>({2, 3}, {"a", "b", "c", "d", "e", "f"});
  Tensor r = run_one(NodeBuilder("ReverseSequence", 10).attr_int("batch_axis", 0).attr_int("time_axis", 1).node(),
                     {z, make_tensor<int64_t>({2}, {0, 3})});
  EXPECT_EQ(to_vector<std::string>(r), (std::vector<std::string>{"a", "b", "c", "f", "e", "d"}));
  EXPECT_FALSE(run_kernel(NodeBuilder("ReverseSequence", 10).node(), {x, make_tensor<int64_t>({4}, {5, 1, 1, 1})})
                   .has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("ReverseSequence", 10).node(), {x, make_tensor<int64_t>({3}, {1, 1, 1})})
                   .has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("ReverseSequence", 10).attr_int("batch_axis", 0).node(),
                          {x, make_tensor<int64_t>({4}, {1, 1, 1, 1})})
                   .has_value());
}

TEST(TriluTest, UpperLowerAndExtremeK) {
  const Tensor x = iota_int({2, 3, 3});
  Tensor upper = run_one(NodeBuilder("Trilu", 14).node(), {x});
  EXPECT_EQ(to_vector<int32_t>(upper),
            (std::vector<int32_t>{0, 1, 2, 0, 4, 5, 0, 0, 8, 9, 10, 11, 0, 13, 14, 0, 0, 17}));
  Tensor lower = run_one(NodeBuilder("Trilu", 14).attr_int("upper", 0).node(), {x, make_tensor<int64_t>({}, {-1})});
  EXPECT_EQ(to_vector<int32_t>(lower),
            (std::vector<int32_t>{0, 0, 0, 3, 0, 0, 6, 7, 0, 0, 0, 0, 12, 0, 0, 15, 16, 0}));
  const int64_t big = std::numeric_limits<int64_t>::max();
  Tensor none = run_one(NodeBuilder("Trilu", 14).node(), {x, make_tensor<int64_t>({}, {big})});
  EXPECT_EQ(to_vector<int32_t>(none), std::vector<int32_t>(18, 0));
  Tensor all = run_one(NodeBuilder("Trilu", 14).attr_int("upper", 0).node(), {x, make_tensor<int64_t>({}, {big})});
  EXPECT_EQ(to_vector<int32_t>(all), to_vector<int32_t>(x));
  Tensor everything = run_one(NodeBuilder("Trilu", 14).node(),
                              {x, make_tensor<int64_t>({}, {std::numeric_limits<int64_t>::min()})});
  EXPECT_EQ(to_vector<int32_t>(everything), to_vector<int32_t>(x));
  EXPECT_EQ(run_one(NodeBuilder("Trilu", 14).node(), {iota_int({3, 0})}).shape(), (Shape{3, 0}));
  EXPECT_FALSE(run_kernel(NodeBuilder("Trilu", 14).node(), {iota_int({3})}).has_value());
}

TEST(EyeLikeTest, DtypeAndOffsets) {
  const Tensor x = make_tensor<int32_t>({3, 4}, std::vector<int32_t>(12, 5));
  Tensor y = run_one(NodeBuilder("EyeLike", 9).attr_int("k", 1).node(), {x});
  EXPECT_EQ(to_vector<int32_t>(y), (std::vector<int32_t>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  Tensor d = run_one(NodeBuilder("EyeLike", 22).attr_int("dtype", 11).attr_int("k", -2).node(), {x});
  EXPECT_EQ(to_vector<double>(d), (std::vector<double>{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}));
  Tensor h = run_one(NodeBuilder("EyeLike", 22).attr_int("dtype", 10).node(), {make_tensor<bool>({2, 2}, {0, 0, 0, 0})});
  EXPECT_EQ(to_float_vector(h), (std::vector<float>{1, 0, 0, 1}));
  Tensor far = run_one(NodeBuilder("EyeLike", 22).attr_int("k", std::numeric_limits<int64_t>::min()).node(), {x});
  EXPECT_EQ(to_vector<int32_t>(far), std::vector<int32_t>(12, 0));
  EXPECT_FALSE(run_kernel(NodeBuilder("EyeLike", 22).node(), {iota_int({4})}).has_value());
}

}  // namespace
}  // namespace nxrt::cpu::testing
