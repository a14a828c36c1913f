#include <cstdint>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

Tensor scalar_i64(int64_t v) { return make_tensor<int64_t>({1}, {v}); }
Tensor scalar_f32(float v) { return make_tensor<float>({1}, {v}); }

// Three boxes [y1, x1, y2, x2]: 0 and 1 overlap heavily (IoU 0.81), 2 is far away.
const std::vector<float> kBoxes = {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 10, 1, 11};

TEST(NonMaxSuppression, SuppressesOverlapsPerClassInScoreOrder) {
  const Tensor boxes = make_tensor<float>({1, 3, 4}, kBoxes);
  const Tensor scores = make_tensor<float>({1, 2, 3}, {0.9f, 0.95f, 0.3f, 0.1f, 0.2f, 0.8f});
  const auto got = to_vector<int64_t>(run_one(NodeBuilder("NonMaxSuppression", 11).node(),
                                              {boxes, scores, scalar_i64(5), scalar_f32(0.5f), scalar_f32(0.0f)}));
  EXPECT_EQ(got, (std::vector<int64_t>{0, 0, 1, 0, 0, 2, 0, 1, 2, 0, 1, 1}));
}

TEST(NonMaxSuppression, LimitsThresholdsAndDefaults) {
  const Tensor boxes = make_tensor<float>({1, 3, 4}, kBoxes);
  const Tensor scores = make_tensor<float>({1, 1, 3}, {0.9f, 0.95f, 0.3f});
  Tensor limited = run_one(NodeBuilder("NonMaxSuppression", 11).node(),
                           {boxes, scores, scalar_i64(1), scalar_f32(0.5f), scalar_f32(0.0f)});
  EXPECT_EQ(limited.shape(), (Shape{1, 3}));
  EXPECT_EQ(to_vector<int64_t>(limited), (std::vector<int64_t>{0, 0, 1}));
  // Score threshold is strict: 0.3 is dropped at 0.3.
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("NonMaxSuppression", 11).node(),
                                       {boxes, scores, scalar_i64(5), scalar_f32(0.5f), scalar_f32(0.3f)})),
            (std::vector<int64_t>{0, 0, 1}));
  // No max_output_boxes_per_class: nothing is selected.
  EXPECT_EQ(run_one(NodeBuilder("NonMaxSuppression", 11).node(), {boxes, scores}).shape(), (Shape{0, 3}));
  // iou_threshold 0.9 keeps the 0.81 overlap.
  EXPECT_EQ(run_one(NodeBuilder("NonMaxSuppression", 11).node(), {boxes, scores, scalar_i64(5), scalar_f32(0.9f)})
                .shape(),
            (Shape{3, 3}));
}

TEST(NonMaxSuppression, CenterPointFormatAndFlippedCorners) {
  // Same geometry as kBoxes in [xc, yc, w, h].
  const Tensor centers = make_tensor<float>({1, 3, 4}, {0.5f, 0.5f, 1, 1, 0.6f, 0.5f, 1, 1, 10.5f, 0.5f, 1, 1});
  const Tensor scores = make_tensor<float>({1, 1, 3}, {0.9f, 0.95f, 0.3f});
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("NonMaxSuppression", 11).attr_int("center_point_box", 1).node(),
                                       {centers, scores, scalar_i64(5), scalar_f32(0.5f)})),
            (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  const Tensor flipped = make_tensor<float>({1, 3, 4}, {1, 1, 0, 0, 0, 1.1f, 1, 0.1f, 1, 11, 0, 10});
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("NonMaxSuppression", 11).node(),
                                       {flipped, scores, scalar_i64(5), scalar_f32(0.5f)})),
            (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
}

TEST(NonMaxSuppression, RejectsBadInputs) {
  const Tensor boxes = make_tensor<float>({1, 3, 4}, kBoxes);
  auto mismatch = run_kernel(NodeBuilder("NonMaxSuppression", 11).node(),
                             {boxes, make_tensor<float>({1, 1, 2}, {1, 2}), scalar_i64(1)});
  ASSERT_FALSE(mismatch.has_value());
  EXPECT_EQ(mismatch.status().code(), StatusCode::kInvalidArgument);
  auto bad_box = run_kernel(NodeBuilder("NonMaxSuppression", 11).node(),
                            {make_tensor<float>({1, 1, 3}, {0, 0, 1}), make_tensor<float>({1, 1, 1}, {1})});
  EXPECT_FALSE(bad_box.has_value());
  auto bad_attr = run_kernel(NodeBuilder("NonMaxSuppression", 11).attr_int("center_point_box", 2).node(),
                             {boxes, make_tensor<float>({1, 1, 3}, {1, 2, 3})});
  ASSERT_FALSE(bad_attr.has_value());
  EXPECT_EQ(bad_attr.status().code(), StatusCode::kInvalidGraph);
}

}  // namespace
}  // namespace nxrt::cpu::testing
