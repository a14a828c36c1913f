// NonMaxSuppression (10, 11).
// Per (batch, class): boxes whose score is strictly above score_threshold are visited by descending score
// (ties: lower box index first); a box is kept unless its IoU with an already kept box is strictly above
// iou_threshold; at most max_output_boxes_per_class are kept. Output rows are (batch, class, box) in that
// order. Boxes are [y1, x1, y2, x2] with either diagonal (center_point_box 0) or [xc, yc, w, h] (1). IoU math is
// in float, as the reference does it.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

struct Corners {
  float x_min, x_max, y_min, y_max;
};

Corners corners(const float* box, bool center_point) {
  if (center_point) {
    const float half_w = box[2] / 2;
    const float half_h = box[3] / 2;
    return {box[0] - half_w, box[0] + half_w, box[1] - half_h, box[1] + half_h};
  }
  return {std::min(box[1], box[3]), std::max(box[1], box[3]), std::min(box[0], box[2]), std::max(box[0], box[2])};
}

bool suppresses(const Corners& a, const Corners& b, float iou_threshold) {
  const float ix_min = std::max(a.x_min, b.x_min);
  const float ix_max = std::min(a.x_max, b.x_max);
  if (ix_max <= ix_min) return false;
  const float iy_min = std::max(a.y_min, b.y_min);
  const float iy_max = std::min(a.y_max, b.y_max);
  if (iy_max <= iy_min) return false;
  const float intersection = (ix_max - ix_min) * (iy_max - iy_min);
  if (intersection <= 0) return false;
  const float area_a = (a.x_max - a.x_min) * (a.y_max - a.y_min);
  const float area_b = (b.x_max - b.x_min) * (b.y_max - b.y_min);
  const float union_area = area_a + area_b - intersection;
  if (area_a <= 0 || area_b <= 0 || union_area <= 0) return false;
  return intersection / union_area > iou_threshold;
}

class NonMaxSuppressionKernel final : public Kernel {
 public:
  NonMaxSuppressionKernel(std::string description, bool center_point)
      : description_(std::move(description)), center_point_(center_point) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const std::vector<int64_t> selected, select(inputs));
    outputs.assign(1, OutputDesc{DataType::kInt64, Shape{static_cast<int64_t>(selected.size() / 3), 3}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    TRY_ASSIGN(const std::vector<int64_t> selected, select(inputs));
    std::copy(selected.begin(), selected.end(), outputs[0].data<int64_t>());
    return Status::ok();
  }

 private:
  const Tensor* input_at(KernelInputs inputs, size_t index) const {
    return index < inputs.size() ? inputs[index] : nullptr;
  }

  Expected<float> scalar_float(KernelInputs inputs, size_t index, const char* name, float fallback) const {
    const Tensor* t = input_at(inputs, index);
    if (t == nullptr || t->numel() == 0) return fallback;
    if (t->dtype() != DataType::kFloat32 || t->numel() != 1) {
      return make_error(StatusCode::kInvalidArgument, description_, ": ", name, " must be a float scalar");
    }
    return t->data<float>()[0];
  }

  // Flattened (batch, class, box) triples.
  Expected<std::vector<int64_t>> select(KernelInputs inputs) const {
    const Tensor* boxes = input_at(inputs, 0);
    const Tensor* scores = input_at(inputs, 1);
    if (boxes == nullptr || scores == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing boxes or scores");
    }
    if (boxes->dtype() != DataType::kFloat32 || scores->dtype() != DataType::kFloat32 || boxes->rank() != 3 ||
        scores->rank() != 3 || boxes->shape()[2] != 4) {
      return make_error(StatusCode::kInvalidArgument, description_,
                        ": boxes must be float [batch, boxes, 4] and scores float [batch, classes, boxes]");
    }
    const int64_t batches = boxes->shape()[0];
    const int64_t count = boxes->shape()[1];
    const int64_t classes = scores->shape()[1];
    if (scores->shape()[0] != batches || scores->shape()[2] != count) {
      return make_error(StatusCode::kInvalidArgument, description_, ": scores shape ",
                        shape_to_string(scores->shape()), " does not match boxes shape ",
                        shape_to_string(boxes->shape()));
    }
    int64_t max_output = 0;
    if (const Tensor* t = input_at(inputs, 2); t != nullptr && t->numel() > 0) {
      if (t->dtype() != DataType::kInt64 || t->numel() != 1) {
        return make_error(StatusCode::kInvalidArgument, description_,
                          ": max_output_boxes_per_class must be an int64 scalar");
      }
      max_output = t->data<int64_t>()[0];
    }
    TRY_ASSIGN(const float iou_threshold, scalar_float(inputs, 3, "iou_threshold", 0.0f));
    const Tensor* score_tensor = input_at(inputs, 4);
    const bool has_score_threshold = score_tensor != nullptr && score_tensor->numel() > 0;
    TRY_ASSIGN(const float score_threshold, scalar_float(inputs, 4, "score_threshold", 0.0f));

    std::vector<int64_t> selected;
    if (max_output <= 0) return selected;
    const float* box_data = boxes->data<float>();
    const float* score_data = scores->data<float>();
    std::vector<Corners> box_corners(static_cast<size_t>(count));
    std::vector<int64_t> order;
    std::vector<int64_t> kept;
    for (int64_t b = 0; b < batches; ++b) {
      for (int64_t i = 0; i < count; ++i) {
        box_corners[static_cast<size_t>(i)] = corners(box_data + (b * count + i) * 4, center_point_);
      }
      for (int64_t c = 0; c < classes; ++c) {
        const float* s = score_data + (b * classes + c) * count;
        order.clear();
        for (int64_t i = 0; i < count; ++i) {
          if (!has_score_threshold || s[i] > score_threshold) order.push_back(i);
        }
        std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return s[x] > s[y]; });
        kept.clear();
        for (int64_t candidate : order) {
          if (static_cast<int64_t>(kept.size()) >= max_output) break;
          const Corners& box = box_corners[static_cast<size_t>(candidate)];
          const bool drop = std::any_of(kept.begin(), kept.end(), [&](int64_t k) {
            return suppresses(box_corners[static_cast<size_t>(k)], box, iou_threshold);
          });
          if (!drop) kept.push_back(candidate);
        }
        for (int64_t k : kept) selected.insert(selected.end(), {b, c, k});
      }
    }
    return selected;
  }

  std::string description_;
  bool center_point_;
};

Expected<std::unique_ptr<Kernel>> create_non_max_suppression(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t center_point_box, info.node.attr_int("center_point_box", 0));
  if (center_point_box != 0 && center_point_box != 1) {
    return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": center_point_box must be 0 or 1, got ",
                      center_point_box);
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<NonMaxSuppressionKernel>(info.node.describe(), center_point_box == 1));
}

const KernelDef kDetectionKernels[] = {
    {"NonMaxSuppression", graph::kOnnxDomain, 10, kLatestOpset, type_mask(TypeList<float>{}), 0,
     create_non_max_suppression},
};

}  // namespace

std::span<const KernelDef> detection_kernels() { return kDetectionKernels; }

}  // namespace nxrt::cpu
