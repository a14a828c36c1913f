// Data-movement kernels: Identity, Reshape (views), Transpose (by element size), Constant (shared attribute).
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "ep/cpu/microkernels/cpu_features.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/transpose_block.h"

namespace nxrt::cpu {

namespace {

class IdentityKernel final : public Kernel {
 public:
  explicit IdentityKernel(std::string description) : description_(std::move(description)) {}
  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0");
    }
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), inputs[0]->shape()});
    return Status::ok();
  }
  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    outputs[0] = inputs[0]->reshaped(inputs[0]->shape());
    return Status::ok();
  }
  int alias_input() const override { return 0; }
  // In a session Identity forwards any value (tensor, sequence or optional) unchanged.
  bool takes_values() const override { return true; }
  Status run_values(std::span<const Value* const> inputs, std::span<Value> outputs, RunContext&) const override {
    if (inputs.empty() || inputs[0] == nullptr || !inputs[0]->is_set()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0");
    }
    outputs[0] = *inputs[0];
    return Status::ok();
  }

 private:
  std::string description_;
};

class ReshapeKernel final : public Kernel {
 public:
  ReshapeKernel(std::string description, bool allow_zero)
      : description_(std::move(description)), allow_zero_(allow_zero) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.size() < 2 || inputs[0] == nullptr || inputs[1] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": expects inputs 0 (data) and 1 (shape)");
    }
    const Tensor& data = *inputs[0];
    const Tensor& shape_tensor = *inputs[1];
    if (shape_tensor.dtype() != DataType::kInt64 || shape_tensor.rank() != 1) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (shape) must be a 1-D int64 tensor, got ",
                        data_type_name(shape_tensor.dtype()), " shape ", shape_to_string(shape_tensor.shape()));
    }
    const int64_t* requested = shape_tensor.data<int64_t>();
    const int64_t count = shape_tensor.numel();
    Shape out(static_cast<size_t>(count));
    int infer_at = -1;
    bool has_zero = false;
    int64_t known = 1;
    auto bad = [&](const char* why) {
      return make_error(StatusCode::kInvalidArgument, description_, ": cannot reshape input 0 shape ",
                        shape_to_string(data.shape()), " to ",
                        shape_to_string(std::span<const int64_t>(requested, static_cast<size_t>(count))), ": ", why);
    };
    for (int64_t i = 0; i < count; ++i) {
      int64_t dim = requested[i];
      if (dim == -1) {
        if (infer_at >= 0) return bad("more than one -1");
        infer_at = static_cast<int>(i);
        continue;
      }
      if (dim < -1) return bad("negative dimension");
      if (dim == 0) {
        has_zero = true;
        if (!allow_zero_) {
          if (i >= static_cast<int64_t>(data.rank())) return bad("0 refers to a dimension past the input rank");
          dim = data.shape()[static_cast<size_t>(i)];
        }
      }
      out[static_cast<size_t>(i)] = dim;
      if (__builtin_mul_overflow(known, dim, &known)) return bad("element count overflows");
    }
    if (allow_zero_ && has_zero && infer_at >= 0) return bad("allowzero=1 forbids 0 together with -1");
    if (infer_at >= 0) {
      if (known == 0) return bad("cannot infer -1 when the other dimensions have zero elements");
      if (data.numel() % known != 0) return bad("element count is not divisible");
      out[static_cast<size_t>(infer_at)] = data.numel() / known;
    } else if (known != data.numel()) {
      return bad("element count differs");
    }
    outputs.assign(1, OutputDesc{data.dtype(), std::move(out)});
    return Status::ok();
  }
  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    outputs[0] = inputs[0]->reshaped(outputs[0].shape());
    return Status::ok();
  }
  int alias_input() const override { return 0; }

 private:
  std::string description_;
  bool allow_zero_;
};

// Unit dims are dropped and output dims that are adjacent, in order, in the input are merged, so the
// odometer below touches few levels; a plain 2-D transpose becomes out_dims [R,C] with in_strides [1,R].
struct TransposePlan {
  Shape out_dims;
  DimList in_strides;  // input stride of each output dim
};

TransposePlan make_transpose_plan(const Shape& in, std::span<const int64_t> perm) {
  DimList axis_stride(in.size(), 1);
  for (size_t d = in.size(); d-- > 1;) axis_stride[d - 1] = axis_stride[d] * in[d];
  TransposePlan plan;
  int64_t previous = -1;
  for (const int64_t axis : perm) {
    if (in[static_cast<size_t>(axis)] == 1) continue;
    bool contiguous = previous >= 0 && axis > previous;
    for (int64_t between = previous + 1; contiguous && between < axis; ++between) {
      contiguous = in[static_cast<size_t>(between)] == 1;
    }
    if (contiguous) {
      plan.out_dims.back() *= in[static_cast<size_t>(axis)];
      plan.in_strides.back() = axis_stride[static_cast<size_t>(axis)];
    } else {
      plan.out_dims.push_back(in[static_cast<size_t>(axis)]);
      plan.in_strides.push_back(axis_stride[static_cast<size_t>(axis)]);
    }
    previous = axis;
  }
  if (plan.out_dims.empty()) {
    plan.out_dims.push_back(1);
    plan.in_strides.push_back(1);
  }
  return plan;
}

template <class T>
void transpose_nd(const T* in, T* out, const TransposePlan& plan, int64_t numel, ThreadPool& pool) {
  const size_t rank = plan.out_dims.size();
  const int64_t inner = plan.out_dims.back();
  const int64_t inner_stride = plan.in_strides.back();
  const int64_t rows = numel / inner;
  pool.parallel_for(rows, std::max<int64_t>(1, 65536 / inner), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t rest = row;
      int64_t offset = 0;
      for (size_t d = rank - 1; d-- > 0;) {
        offset += (rest % plan.out_dims[d]) * plan.in_strides[d];
        rest /= plan.out_dims[d];
      }
      T* dst = out + row * inner;
      const T* src = in + offset;
      for (int64_t i = 0; i < inner; ++i) dst[i] = src[i * inner_stride];
    }
  });
}

// Input offset of the first element of output block `block`, where a block spans the last `inner_dims` output
// dims.
inline int64_t block_offset(const TransposePlan& plan, int64_t block, size_t inner_dims) {
  int64_t offset = 0;
  for (size_t d = plan.out_dims.size() - inner_dims; d-- > 0;) {
    offset += (block % plan.out_dims[d]) * plan.in_strides[d];
    block /= plan.out_dims[d];
  }
  return offset;
}

// The last output dim is contiguous in the input (e.g. [0,2,1,3] splitting attention heads): row copies.
template <class T>
void transpose_rows(const T* in, T* out, const TransposePlan& plan, int64_t numel, ThreadPool& pool) {
  const int64_t inner = plan.out_dims.back();
  pool.parallel_for(numel / inner, std::max<int64_t>(1, 65536 / inner), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      std::copy_n(in + block_offset(plan, row, 1), inner, out + row * inner);
    }
  });
}

// The last two output dims [C, R] read an input matrix of R rows of C contiguous elements, rows `row_stride` apart
// (e.g. [0,1,3,2] for K^T, [0,2,3,1] for NCHW->NHWC or for splitting heads out of [B, S, H, D] into [B, H, D, S]):
// a tiled 2-D transpose per leading index.
template <class T>
void transpose_batched_2d(const T* in, T* out, const TransposePlan& plan, int64_t numel, ThreadPool& pool) {
  constexpr int64_t kTile = 32;
  const size_t rank = plan.out_dims.size();
  const int64_t cols = plan.out_dims[rank - 2];  // input columns = output rows
  const int64_t rows = plan.out_dims[rank - 1];  // input rows = output columns
  const int64_t row_stride = plan.in_strides[rank - 1];
  // The register block transpose of the CPU's tier (16 x 16 blocks of 32-bit elements), or none.
  decltype(&transpose_32bit_block__avx512) block_transpose = nullptr;
#if defined(__x86_64__)
  if (cpu_isa_at_least(CpuIsa::kAvx512)) {
    block_transpose = transpose_32bit_block__avx512;
  } else if (cpu_isa_at_least(CpuIsa::kAvx2)) {
    block_transpose = transpose_32bit_block__avx2;
  }
#endif
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const int64_t tasks = numel / (rows * cols) * row_tiles;
  pool.parallel_for(tasks, std::max<int64_t>(1, 65536 / (kTile * std::max<int64_t>(cols, 1))),
                    [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t batch = task / row_tiles;
      const T* src = in + block_offset(plan, batch, 2);
      T* dst = out + batch * rows * cols;
      const int64_t r0 = (task % row_tiles) * kTile;
      const int64_t r1 = std::min(rows, r0 + kTile);
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        const int64_t c1 = std::min(cols, c0 + kTile);
        if (sizeof(T) == 4 && block_transpose != nullptr) {
          for (int64_t r = r0; r < r1; r += 16) {
            for (int64_t c = c0; c < c1; c += 16) {
              block_transpose(src + r * row_stride + c, row_stride, dst + c * rows + r, rows,
                              std::min<int64_t>(16, r1 - r), std::min<int64_t>(16, c1 - c));
            }
          }
          continue;
        }
        for (int64_t c = c0; c < c1; ++c) {
          for (int64_t r = r0; r < r1; ++r) dst[c * rows + r] = src[r * row_stride + c];
        }
      }
    }
  });
}

template <class T>
void transpose_typed(const Tensor& input, Tensor& output, std::span<const int64_t> perm, ThreadPool& pool) {
  const T* in = static_cast<const T*>(input.raw_data());
  T* out = static_cast<T*>(output.raw_data());
  const TransposePlan plan = make_transpose_plan(input.shape(), perm);
  const size_t rank = plan.out_dims.size();
  if constexpr (std::is_trivially_copyable_v<T>) {
    if (plan.in_strides.back() == 1) {
      transpose_rows(in, out, plan, input.numel(), pool);
      return;
    }
    if (rank >= 2 && plan.in_strides[rank - 2] == 1) {
      transpose_batched_2d(in, out, plan, input.numel(), pool);
      return;
    }
  }
  transpose_nd(in, out, plan, input.numel(), pool);
}

class TransposeKernel final : public Kernel {
 public:
  TransposeKernel(std::string description, std::vector<int64_t> perm, bool has_perm)
      : description_(std::move(description)), perm_(std::move(perm)), has_perm_(has_perm) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0");
    }
    const Tensor& x = *inputs[0];
    if (is_sub_byte_type(x.dtype())) {
      return make_error(StatusCode::kNotImplemented, description_, ": input 0 type ", data_type_name(x.dtype()),
                        " is not supported");
    }
    const DimList perm = resolved_perm(x.rank());
    if (perm.size() != x.rank()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": perm ", shape_to_string(perm_),
                        " has length ", perm_.size(), " but input 0 shape ", shape_to_string(x.shape()), " has rank ",
                        x.rank());
    }
    for (const int64_t axis : perm) {
      if (axis >= static_cast<int64_t>(x.rank())) {
        return make_error(StatusCode::kInvalidArgument, description_, ": perm ", shape_to_string(perm_),
                          " has axis ", axis, " out of range for input 0 shape ", shape_to_string(x.shape()));
      }
    }
    Shape out(x.rank());
    for (size_t i = 0; i < perm.size(); ++i) out[i] = x.shape()[static_cast<size_t>(perm[i])];
    outputs.assign(1, OutputDesc{x.dtype(), std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    if (x.numel() == 0) return Status::ok();
    const DimList perm = resolved_perm(x.rank());
    if (x.dtype() == DataType::kString) {
      transpose_typed<std::string>(x, outputs[0], perm, pool);
      return Status::ok();
    }
    switch (data_type_bits(x.dtype())) {
      case 8: transpose_typed<uint8_t>(x, outputs[0], perm, pool); break;
      case 16: transpose_typed<uint16_t>(x, outputs[0], perm, pool); break;
      case 32: transpose_typed<uint32_t>(x, outputs[0], perm, pool); break;
      case 64: transpose_typed<uint64_t>(x, outputs[0], perm, pool); break;
      case 128: {
        struct Pair {
          uint64_t lo, hi;
        };
        transpose_typed<Pair>(x, outputs[0], perm, pool);
        break;
      }
      default:
        return make_error(StatusCode::kNotImplemented, description_, ": input 0 type ", data_type_name(x.dtype()),
                          " is not supported");
    }
    return Status::ok();
  }

 private:
  DimList resolved_perm(size_t rank) const {
    if (has_perm_) return perm_;
    DimList perm(rank);
    for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
    return perm;
  }

  std::string description_;
  DimList perm_;
  bool has_perm_;
};

class ConstantKernel final : public Kernel {
 public:
  explicit ConstantKernel(Tensor value) : value_(std::move(value)) {}
  Status reshape(KernelInputs, std::vector<OutputDesc>& outputs) const override {
    outputs.assign(1, OutputDesc{value_.dtype(), value_.shape()});
    return Status::ok();
  }
  Status run(KernelInputs, std::span<Tensor> outputs, ThreadPool&) const override {
    outputs[0] = value_;
    return Status::ok();
  }
  const Tensor* constant_output() const override { return &value_; }

 private:
  Tensor value_;
};

Expected<std::unique_ptr<Kernel>> create_identity(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<IdentityKernel>(info.node.describe()));
}

Expected<std::unique_ptr<Kernel>> create_reshape(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t allow_zero, info.node.attr_int("allowzero", 0));
  return std::unique_ptr<Kernel>(
      std::make_unique<ReshapeKernel>(info.node.describe(), info.opset() >= 14 && allow_zero != 0));
}

Expected<std::unique_ptr<Kernel>> create_transpose(const KernelInfo& info) {
  const bool has_perm = info.node.find_attribute("perm") != nullptr;
  TRY_ASSIGN(std::vector<int64_t> perm, info.node.attr_ints("perm", {}));
  std::vector<bool> seen(perm.size(), false);
  for (const int64_t axis : perm) {
    if (axis < 0 || axis >= static_cast<int64_t>(perm.size()) || seen[static_cast<size_t>(axis)]) {
      return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": attribute perm ", shape_to_string(perm),
                        " is not a permutation");
    }
    seen[static_cast<size_t>(axis)] = true;
  }
  return std::unique_ptr<Kernel>(std::make_unique<TransposeKernel>(info.node.describe(), std::move(perm), has_perm));
}

template <class T>
Expected<Tensor> tensor_from_values(const std::vector<T>& values, Shape shape) {
  TRY_ASSIGN(Tensor tensor, Tensor::allocate(data_type_of<T>, std::move(shape)));
  std::copy(values.begin(), values.end(), tensor.data<T>());
  return tensor;
}

Expected<std::unique_ptr<Kernel>> create_constant(const KernelInfo& info) {
  const graph::Node& node = info.node;
  const graph::Attribute* found = nullptr;
  for (const graph::Attribute& attribute : node.attributes) {
    if (attribute.name.rfind("value", 0) != 0 && attribute.name != "sparse_value") continue;
    if (found != nullptr) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": attributes '", found->name, "' and '",
                        attribute.name, "' are both set; exactly one value attribute is allowed");
    }
    found = &attribute;
  }
  if (found == nullptr) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": no value attribute is set");
  }
  using Type = graph::Attribute::Type;
  const std::string& name = found->name;
  Tensor value;
  if ((name == "value" || name == "sparse_value") && found->type == Type::kTensor && found->t.is_valid()) {
    value = found->t;  // a sparse_value arrives dense (the importer expands sparse tensors)
  } else if (name == "value_float" && found->type == Type::kFloat) {
    TRY_ASSIGN(value, tensor_from_values(std::vector<float>{found->f}, Shape{}));
  } else if (name == "value_floats" && found->type == Type::kFloats) {
    TRY_ASSIGN(value, tensor_from_values(found->floats, Shape{static_cast<int64_t>(found->floats.size())}));
  } else if (name == "value_int" && found->type == Type::kInt) {
    TRY_ASSIGN(value, tensor_from_values(std::vector<int64_t>{found->i}, Shape{}));
  } else if (name == "value_ints" && found->type == Type::kInts) {
    TRY_ASSIGN(value, tensor_from_values(found->ints, Shape{static_cast<int64_t>(found->ints.size())}));
  } else if (name == "value_string" && found->type == Type::kString) {
    TRY_ASSIGN(value, tensor_from_values(std::vector<std::string>{found->s}, Shape{}));
  } else if (name == "value_strings" && found->type == Type::kStrings) {
    TRY_ASSIGN(value, tensor_from_values(found->strings, Shape{static_cast<int64_t>(found->strings.size())}));
  } else {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute '", name, "' has type ",
                      graph::attribute_type_name(found->type), ", which is not a valid Constant value");
  }
  return std::unique_ptr<Kernel>(std::make_unique<ConstantKernel>(std::move(value)));
}

const KernelDef kTensorKernels[] = {
    {"Identity", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, 0, create_identity},
    {"Reshape", graph::kOnnxDomain, 5, kLatestOpset, kAnyType, 0, create_reshape},
    {"Transpose", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, 0, create_transpose},
    {"Constant", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, -1, create_constant},
};

}  // namespace

std::span<const KernelDef> tensor_kernels() { return kTensorKernels; }

}  // namespace nxrt::cpu
