// com.microsoft quantized elementwise ops on uint8 / int8 with per-tensor (scalar) scales and zero points, as
// ONNX Runtime's contrib schemas define them:
//   QLinearAdd / QLinearMul(A, A_scale, A_zero_point?, B, B_scale, B_zero_point?, C_scale, C_zero_point?):
//     C = quantize(dequantize(A) op dequantize(B)) with numpy broadcasting;
//   QLinearSigmoid(X, X_scale, X_zero_point?, Y_scale, Y_zero_point?) and QLinearLeakyRelu(..., alpha 0.01):
//     Y = quantize(f(dequantize(X))), through a 256-entry table built per run;
//   QLinearConcat(Y_scale, Y_zero_point, (X_i, X_i_scale, X_i_zero_point)...; axis): Concat of the X_i, each
//     requantized to Y's parameters (copied where they match);
//   QLinearWhere(condition, X, x_scale, x_zero_point, Y, y_scale, y_zero_point, z_scale, z_zero_point): Where with
//     X and Y requantized to Z's parameters, all three broadcast;
//   QLinearSoftmax(X, x_scale, x_zero_point?, y_scale, y_zero_point; opset, axis): Softmax of dequantize(X) as
//     Softmax of that opset defines the axis (before 13: the input coerced to 2-D at axis; from 13: one axis), axis
//     -1 by default in both, quantized;
//   QLinearGlobalAveragePool(X, x_scale, x_zero_point, y_scale, y_zero_point; channels_last): the mean over the
//     spatial dims of NCHW (or, channels_last, NHWC) X, from the exact integer sum:
//     y = quantize((sum(x) - count * x_zero_point) * x_scale / count).
//   QLinearAveragePool: contrib_qlinear_pool.cpp.
// dequantize and quantize as contrib_qlinear_common.h defines them. A value within float rounding of a half-way
// point may land on either neighbour of another runtime's.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ep/cpu/contrib/contrib_qlinear_common.h"
#include "ep/cpu/elementwise/broadcast.h"
#include "ep/cpu/elementwise/unary_common.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

using qlinear::kGrain;
using qlinear::kQuantTypes;
using qlinear::QuantParams;
using qlinear::quantize;
using qlinear::read_params;

class QLinearUnaryKernel final : public Kernel {
 public:
  enum class Function { kSigmoid, kLeakyRelu };

  QLinearUnaryKernel(std::string description, Function function, float alpha)
      : description_(std::move(description)), function_(function), alpha_(alpha) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(check_input_type(inputs, 0, kQuantTypes, description_));
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY(check_input_type(inputs, 0, kQuantTypes, description_));
    const DataType type = inputs[0]->dtype();
    TRY_ASSIGN(const QuantParams x, read_params(inputs, 1, 2, type, description_));
    TRY_ASSIGN(const QuantParams y, read_params(inputs, 3, 4, type, description_));
    visit_dtype<TypeList<uint8_t, int8_t>>(type, [&]<class Q>() {
      std::array<Q, 256> table;
      for (int code = 0; code < 256; ++code) {
        const Q q = static_cast<Q>(static_cast<uint8_t>(code));
        const float v = (static_cast<float>(q) - static_cast<float>(x.zero)) * x.scale;
        const float f = function_ == Function::kSigmoid ? 1.0f / (1.0f + std::exp(-v)) : (v >= 0 ? v : alpha_ * v);
        table[static_cast<uint8_t>(q)] = quantize<Q>(f, y);
      }
      const Q* in = inputs[0]->data<Q>();
      Q* out = outputs[0].data<Q>();
      pool.parallel_for(inputs[0]->numel(), kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = table[static_cast<uint8_t>(in[i])];
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  Function function_;
  float alpha_;
};

class QLinearBinaryKernel final : public Kernel {
 public:
  QLinearBinaryKernel(std::string description, bool multiply)
      : description_(std::move(description)), multiply_(multiply) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const Shape out, output_shape(inputs));
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), out});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const Shape out, output_shape(inputs));
    const DataType type = inputs[0]->dtype();
    TRY_ASSIGN(const QuantParams a, read_params(inputs, 1, 2, type, description_));
    TRY_ASSIGN(const QuantParams b, read_params(inputs, 4, 5, type, description_));
    TRY_ASSIGN(const QuantParams c, read_params(inputs, 6, 7, type, description_));
    visit_dtype<TypeList<uint8_t, int8_t>>(type, [&]<class Q>() {
      const bool multiply = multiply_;
      broadcast_binary(inputs[0]->data<Q>(), inputs[0]->shape(), inputs[3]->data<Q>(), inputs[3]->shape(),
                       outputs[0].data<Q>(), out, pool, [&](Q qa, Q qb) {
                         const float va = (static_cast<float>(qa) - static_cast<float>(a.zero)) * a.scale;
                         const float vb = (static_cast<float>(qb) - static_cast<float>(b.zero)) * b.scale;
                         return quantize<Q>(multiply ? va * vb : va + vb, c);
                       }, kGrain);
    });
    return Status::ok();
  }

 private:
  Expected<Shape> output_shape(KernelInputs inputs) const {
    for (size_t required : {0, 1, 3, 4, 6}) {
      if (optional_input(inputs, required) == nullptr) {
        return make_error(StatusCode::kInvalidArgument, description_, ": missing input ", required);
      }
    }
    TRY(check_input_type(inputs, 0, kQuantTypes, description_));
    if (inputs[3]->dtype() != inputs[0]->dtype()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": A and B must have one type");
    }
    auto out = broadcast_shapes(inputs[0]->shape(), inputs[3]->shape());
    if (!out) {
      return make_error(StatusCode::kInvalidArgument, description_, ": shapes ", shape_to_string(inputs[0]->shape()),
                        " and ", shape_to_string(inputs[3]->shape()), " do not broadcast");
    }
    return *out;
  }

  std::string description_;
  bool multiply_;
};

// The 256-entry table that requantizes codes of parameters `from` to parameters `to`.
template <class Q>
std::array<Q, 256> requantize_table(const QuantParams& from, const QuantParams& to) {
  std::array<Q, 256> table;
  for (int code = 0; code < 256; ++code) {
    const Q q = static_cast<Q>(static_cast<uint8_t>(code));
    table[static_cast<uint8_t>(q)] = quantize<Q>((static_cast<float>(q) - static_cast<float>(from.zero)) * from.scale,
                                                 to);
  }
  return table;
}

bool same_params(const QuantParams& a, const QuantParams& b) { return a.scale == b.scale && a.zero == b.zero; }

class QLinearConcatKernel final : public Kernel {
 public:
  QLinearConcatKernel(std::string description, int64_t axis) : description_(std::move(description)), axis_(axis) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const Layout layout, resolve(inputs));
    outputs.assign(1, OutputDesc{inputs[1]->dtype(), layout.out});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const Layout layout, resolve(inputs));
    const DataType type = inputs[1]->dtype();
    TRY_ASSIGN(const QuantParams y, read_params(inputs, 0, 1, type, description_));
    std::vector<QuantParams> params;
    for (size_t i = 2; i < inputs.size(); i += 3) {
      TRY_ASSIGN(const QuantParams x, read_params(inputs, i + 1, i + 2, type, description_));
      params.push_back(x);
    }
    visit_dtype<TypeList<uint8_t, int8_t>>(type, [&]<class Q>() {
      Q* out = outputs[0].data<Q>();
      const int64_t out_row = layout.out[layout.axis] * layout.inner;
      int64_t column = 0;  // where the current input starts within an output row
      for (size_t t = 0; t < params.size(); ++t) {
        const Tensor& x = *inputs[2 + 3 * t];
        const int64_t row = x.shape()[layout.axis] * layout.inner;
        const Q* in = x.data<Q>();
        const bool copy = same_params(params[t], y);
        const std::array<Q, 256> table = requantize_table<Q>(params[t], y);
        pool.parallel_for(layout.outer, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, row)),
                          [&](int64_t begin, int64_t end) {
          for (int64_t o = begin; o < end; ++o) {
            const Q* src = in + o * row;
            Q* dst = out + o * out_row + column;
            if (copy) {
              std::copy_n(src, row, dst);
            } else {
              for (int64_t i = 0; i < row; ++i) dst[i] = table[static_cast<uint8_t>(src[i])];
            }
          }
        });
        column += row;
      }
    });
    return Status::ok();
  }

 private:
  struct Layout {
    Shape out;
    size_t axis = 0;
    int64_t outer = 1, inner = 1;
  };

  Expected<Layout> resolve(KernelInputs inputs) const {
    if (inputs.size() < 5 || (inputs.size() - 2) % 3 != 0) {
      return make_error(StatusCode::kInvalidArgument, description_,
                        ": inputs must be Y_scale, Y_zero_point, then (tensor, scale, zero point) for each input");
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i] == nullptr) return make_error(StatusCode::kInvalidArgument, description_, ": missing input ", i);
    }
    TRY(check_input_type(inputs, 1, kQuantTypes, description_));
    const Shape& first = inputs[2]->shape();
    const int64_t rank = static_cast<int64_t>(first.size());
    if (axis_ < -rank || axis_ >= rank) {
      return make_error(StatusCode::kInvalidArgument, description_, ": axis ", axis_, " is out of range for rank ",
                        rank);
    }
    Layout layout;
    layout.axis = static_cast<size_t>(axis_ < 0 ? axis_ + rank : axis_);
    layout.out = first;
    layout.out[layout.axis] = 0;
    for (size_t i = 2; i < inputs.size(); i += 3) {
      const Shape& shape = inputs[i]->shape();
      if (inputs[i]->dtype() != inputs[1]->dtype()) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " must have Y_zero_point's type");
      }
      bool match = shape.size() == first.size();
      for (size_t d = 0; match && d < shape.size(); ++d) match = d == layout.axis || shape[d] == first[d];
      if (!match) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " shape ",
                          shape_to_string(shape), " differs from ", shape_to_string(first), " outside axis ",
                          layout.axis);
      }
      layout.out[layout.axis] += shape[layout.axis];
    }
    for (size_t d = 0; d < layout.axis; ++d) layout.outer *= first[d];
    for (size_t d = layout.axis + 1; d < first.size(); ++d) layout.inner *= first[d];
    return layout;
  }

  std::string description_;
  int64_t axis_;
};

class QLinearWhereKernel final : public Kernel {
 public:
  explicit QLinearWhereKernel(std::string description) : description_(std::move(description)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const Shape out, output_shape(inputs));
    outputs.assign(1, OutputDesc{inputs[1]->dtype(), out});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const Shape out, output_shape(inputs));
    const DataType type = inputs[1]->dtype();
    TRY_ASSIGN(const QuantParams x, read_params(inputs, 2, 3, type, description_));
    TRY_ASSIGN(const QuantParams y, read_params(inputs, 5, 6, type, description_));
    TRY_ASSIGN(const QuantParams z, read_params(inputs, 7, 8, type, description_));
    visit_dtype<TypeList<uint8_t, int8_t>>(type, [&]<class Q>() {
      const std::array<Q, 256> from_x = requantize_table<Q>(x, z);
      const std::array<Q, 256> from_y = requantize_table<Q>(y, z);
      const bool* condition = inputs[0]->data<bool>();
      const Q* xs = inputs[1]->data<Q>();
      const Q* ys = inputs[4]->data<Q>();
      Q* result = outputs[0].data<Q>();
      const auto plan = make_broadcast_plan<3>(
          {std::span<const int64_t>(inputs[0]->shape()), std::span<const int64_t>(inputs[1]->shape()),
           std::span<const int64_t>(inputs[4]->shape())},
          out);
      for_each_broadcast_run(plan, pool, [&](int64_t at, const std::array<int64_t, 3>& offsets, int64_t count) {
        for (int64_t i = 0; i < count; ++i) {
          result[at + i] = condition[offsets[0] + i * plan.step[0]]
                               ? from_x[static_cast<uint8_t>(xs[offsets[1] + i * plan.step[1]])]
                               : from_y[static_cast<uint8_t>(ys[offsets[2] + i * plan.step[2]])];
        }
      }, kGrain);
    });
    return Status::ok();
  }

 private:
  Expected<Shape> output_shape(KernelInputs inputs) const {
    TRY(require_inputs(inputs, 9, description_));
    for (size_t i : {0, 1, 2, 4, 5, 7}) {
      if (inputs[i] == nullptr) return make_error(StatusCode::kInvalidArgument, description_, ": missing input ", i);
    }
    TRY(check_input_type(inputs, 0, type_mask(TypeList<bool>{}), description_));
    TRY(check_input_type(inputs, 1, kQuantTypes, description_));
    if (inputs[4]->dtype() != inputs[1]->dtype()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": X and Y must have one type");
    }
    const std::array<const Tensor*, 3> data = {inputs[0], inputs[1], inputs[4]};
    return broadcast_input_shapes(data, true, description_);
  }

  std::string description_;
};

class QLinearSoftmaxKernel final : public Kernel {
 public:
  QLinearSoftmaxKernel(std::string description, int64_t opset, int64_t axis)
      : description_(std::move(description)), opset_(opset), axis_(axis) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(resolve(inputs).status());
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const Rows rows, resolve(inputs));
    const DataType type = inputs[0]->dtype();
    TRY_ASSIGN(const QuantParams x, read_params(inputs, 1, 2, type, description_));
    TRY_ASSIGN(const QuantParams y, read_params(inputs, 3, 4, type, description_));
    // exp(-d * x_scale) for a code d below the row's maximum.
    std::array<float, 256> decay;
    for (int d = 0; d < 256; ++d) decay[static_cast<size_t>(d)] = std::exp(-static_cast<float>(d) * x.scale);
    visit_dtype<TypeList<uint8_t, int8_t>>(type, [&]<class Q>() {
      const Q* in = inputs[0]->data<Q>();
      Q* out = outputs[0].data<Q>();
      pool.parallel_for(rows.outer * rows.inner, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, rows.n)),
                        [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t base = (r / rows.inner) * rows.n * rows.inner + r % rows.inner;
          int top = std::numeric_limits<int>::min();
          for (int64_t i = 0; i < rows.n; ++i) top = std::max<int>(top, in[base + i * rows.inner]);
          float sum = 0.0f;
          for (int64_t i = 0; i < rows.n; ++i) sum += decay[static_cast<size_t>(top - in[base + i * rows.inner])];
          for (int64_t i = 0; i < rows.n; ++i) {
            out[base + i * rows.inner] = quantize<Q>(decay[static_cast<size_t>(top - in[base + i * rows.inner])] / sum, y);
          }
        }
      });
    });
    return Status::ok();
  }

 private:
  // Rows of n values, inner apart (the softmax axis), outer x inner of them.
  struct Rows {
    int64_t outer = 1, n = 1, inner = 1;
  };

  Expected<Rows> resolve(KernelInputs inputs) const {
    // x_zero_point (input 2) is optional (0 by default); y_zero_point (4) is not.
    for (size_t i : {0, 1, 3, 4}) {
      if (optional_input(inputs, i) == nullptr) {
        return make_error(StatusCode::kInvalidArgument, description_, ": missing input ", i);
      }
    }
    TRY(check_input_type(inputs, 0, kQuantTypes, description_));
    const Shape& shape = inputs[0]->shape();
    const int64_t rank = static_cast<int64_t>(shape.size());
    const bool coerced = opset_ < 13;
    const int64_t axis = axis_;
    if (rank == 0 || axis < -rank || axis >= rank + (coerced ? 1 : 0)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": axis ", axis, " is out of range for rank ",
                        rank);
    }
    const size_t a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
    Rows rows;
    for (size_t d = 0; d < a; ++d) rows.outer *= shape[d];
    if (coerced) {
      for (size_t d = a; d < shape.size(); ++d) rows.n *= shape[d];
    } else {
      rows.n = shape[a];
      for (size_t d = a + 1; d < shape.size(); ++d) rows.inner *= shape[d];
    }
    if (rows.n == 0) rows.outer = 0;
    return rows;
  }

  std::string description_;
  int64_t opset_, axis_;
};

class QLinearGlobalAveragePoolKernel final : public Kernel {
 public:
  QLinearGlobalAveragePoolKernel(std::string description, bool channels_last)
      : description_(std::move(description)), channels_last_(channels_last) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const Shape out, output_shape(inputs));
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), out});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const Shape out, output_shape(inputs));
    const DataType type = inputs[0]->dtype();
    TRY_ASSIGN(const QuantParams x, read_params(inputs, 1, 2, type, description_));
    TRY_ASSIGN(const QuantParams y, read_params(inputs, 3, 4, type, description_));
    const Shape& shape = inputs[0]->shape();
    const int64_t batch = shape[0];
    const int64_t channels = channels_last_ ? shape.back() : shape[1];
    const int64_t count = channels == 0 || batch == 0 ? 0 : inputs[0]->numel() / (batch * channels);
    // Values of one channel are `step` apart, starting `start(channel)` into the image.
    const int64_t step = channels_last_ ? channels : 1;
    const float scale = count == 0 ? 0.0f : x.scale / static_cast<float>(count);
    visit_dtype<TypeList<uint8_t, int8_t>>(type, [&]<class Q>() {
      const Q* in = inputs[0]->data<Q>();
      Q* result = outputs[0].data<Q>();
      pool.parallel_for(batch * channels, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, count)),
                        [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const int64_t n = p / channels, c = p % channels;
          const Q* image = in + n * channels * count + (channels_last_ ? c : c * count);
          int64_t sum = 0;
          for (int64_t i = 0; i < count; ++i) sum += image[i * step];
          result[p] = quantize<Q>(static_cast<float>(sum - count * x.zero) * scale, y);
        }
      });
    });
    return Status::ok();
  }

 private:
  Expected<Shape> output_shape(KernelInputs inputs) const {
    TRY_ASSIGN(const Shape shape, qlinear::check_pool_inputs(inputs, description_));
    Shape out(shape.size(), 1);
    out[0] = shape[0];
    if (channels_last_) {
      out.back() = shape.back();
    } else {
      out[1] = shape[1];
    }
    return out;
  }

  std::string description_;
  bool channels_last_;
};

Expected<std::unique_ptr<Kernel>> create_qlinear_add(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<QLinearBinaryKernel>(info.node.describe(), false));
}

Expected<std::unique_ptr<Kernel>> create_qlinear_mul(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<QLinearBinaryKernel>(info.node.describe(), true));
}

Expected<std::unique_ptr<Kernel>> create_qlinear_sigmoid(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(
      std::make_unique<QLinearUnaryKernel>(info.node.describe(), QLinearUnaryKernel::Function::kSigmoid, 0.0f));
}

Expected<std::unique_ptr<Kernel>> create_qlinear_leaky_relu(const KernelInfo& info) {
  TRY_ASSIGN(const float alpha, info.node.attr_float("alpha", 0.01f));
  return std::unique_ptr<Kernel>(
      std::make_unique<QLinearUnaryKernel>(info.node.describe(), QLinearUnaryKernel::Function::kLeakyRelu, alpha));
}

Expected<std::unique_ptr<Kernel>> create_qlinear_concat(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t axis, info.node.attr_int("axis", std::numeric_limits<int64_t>::min()));
  if (axis == std::numeric_limits<int64_t>::min()) {
    return make_error(StatusCode::kInvalidArgument, info.node.describe(), ": attribute axis is required");
  }
  return std::unique_ptr<Kernel>(std::make_unique<QLinearConcatKernel>(info.node.describe(), axis));
}

Expected<std::unique_ptr<Kernel>> create_qlinear_where(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<QLinearWhereKernel>(info.node.describe()));
}

Expected<std::unique_ptr<Kernel>> create_qlinear_softmax(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t opset, info.node.attr_int("opset", -1));
  TRY_ASSIGN(const int64_t axis, info.node.attr_int("axis", -1));
  if (opset < 1) {
    return make_error(StatusCode::kInvalidArgument, info.node.describe(),
                      ": attribute opset (the Softmax version whose axis rule applies) is required");
  }
  return std::unique_ptr<Kernel>(std::make_unique<QLinearSoftmaxKernel>(info.node.describe(), opset, axis));
}

Expected<std::unique_ptr<Kernel>> create_qlinear_global_average_pool(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t channels_last, info.node.attr_int("channels_last", 0));
  return std::unique_ptr<Kernel>(
      std::make_unique<QLinearGlobalAveragePoolKernel>(info.node.describe(), channels_last != 0));
}

const KernelDef kContribQLinearKernels[] = {
    {"QLinearAdd", graph::kMsDomain, 1, kLatestOpset, kQuantTypes, 0, create_qlinear_add},
    {"QLinearMul", graph::kMsDomain, 1, kLatestOpset, kQuantTypes, 0, create_qlinear_mul},
    {"QLinearSigmoid", graph::kMsDomain, 1, kLatestOpset, kQuantTypes, 0, create_qlinear_sigmoid},
    {"QLinearLeakyRelu", graph::kMsDomain, 1, kLatestOpset, kQuantTypes, 0, create_qlinear_leaky_relu},
    {"QLinearConcat", graph::kMsDomain, 1, kLatestOpset, kQuantTypes, 1, create_qlinear_concat},
    {"QLinearWhere", graph::kMsDomain, 1, kLatestOpset, kQuantTypes, 1, create_qlinear_where},
    {"QLinearSoftmax", graph::kMsDomain, 1, kLatestOpset, kQuantTypes, 0, create_qlinear_softmax},
    {"QLinearGlobalAveragePool", graph::kMsDomain, 1, kLatestOpset, kQuantTypes, 0,
     create_qlinear_global_average_pool},
    {"QLinearAveragePool", graph::kMsDomain, 1, kLatestOpset, kQuantTypes, 0, qlinear::create_qlinear_average_pool},
};

}  // namespace

std::span<const KernelDef> contrib_qlinear_kernels() { return kContribQLinearKernels; }

}  // namespace nxrt::cpu
