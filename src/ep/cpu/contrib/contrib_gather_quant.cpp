// com.microsoft GatherBlockQuantized (opset 1), as ONNX Runtime's contrib schema defines it:
//   GatherBlockQuantized(data, indices (int32 / int64), scales, zero_points?) attributes gather_axis (0),
//   quantize_axis (1), block_size (128), bits (4) -> output of the scales' type (float, float16, bfloat16):
//   Gather of `data` along gather_axis, each gathered value dequantized as (q - zero_point) * scale with the scale
//   and zero point of its block along quantize_axis. `data` is int4 / uint4 (packed two per byte over the whole
//   tensor) or uint8 holding 8 / bits values per byte along the last axis (bits 2, 4 or 8; then gather_axis is 0
//   and, below 8 bits, differs from quantize_axis). `scales` and `zero_points` (data's type, packed the same way)
//   have data's logical shape with quantize_axis cut into blocks. Without zero_points the zero point is 0 for
//   int4 / uint4 and 2^(bits - 1) for uint8. An index outside [-s, s) (s: the gathered axis) gives zeros.
// FP8 / FP4 data is NOT_IMPLEMENTED.
#include <algorithm>
#include <string>
#include <vector>

#include "ep/cpu/elementwise/unary_common.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

using HalfOrFloat = TypeList<float, Float16, BFloat16>;
constexpr int64_t kGrain = 16384;

// A quantized tensor seen with its logical shape: element i of a row of `row` values sits in byte
// row_index * row_bytes + (i * bits) / 8 (int4 / uint4 rows are the whole tensor).
struct QuantizedView {
  const uint8_t* data = nullptr;
  int64_t bits = 8, row = 1, row_bytes = 1;
  bool is_signed = false;

  int32_t at(int64_t index) const {
    const int64_t r = index / row, i = index % row;
    const int64_t bit = i * bits;
    const uint32_t code = (static_cast<uint32_t>(data[r * row_bytes + bit / 8]) >> (bit % 8)) & ((1u << bits) - 1u);
    return is_signed && code >= (1u << (bits - 1)) ? static_cast<int32_t>(code) - (1 << bits)
                                                   : static_cast<int32_t>(code);
  }
};

class GatherBlockQuantizedKernel final : public Kernel {
 public:
  GatherBlockQuantizedKernel(std::string description, int64_t gather_axis, int64_t quantize_axis, int64_t block,
                             int64_t bits)
      : description_(std::move(description)), gather_axis_(gather_axis), quantize_axis_(quantize_axis),
        block_(block), bits_(bits) {}

  struct Layout {
    Shape logical;  // data's logical shape
    size_t gather = 0, quantize = 0;
    int64_t bits = 4;
  };

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const Layout l, resolve(inputs));
    Shape out(l.logical.begin(), l.logical.begin() + static_cast<std::ptrdiff_t>(l.gather));
    for (int64_t dim : inputs[1]->shape()) out.push_back(dim);
    out.insert(out.end(), l.logical.begin() + static_cast<std::ptrdiff_t>(l.gather) + 1, l.logical.end());
    outputs.assign(1, OutputDesc{inputs[2]->dtype(), std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const Layout l, resolve(inputs));
    const Tensor& data = *inputs[0];
    const Tensor& indices = *inputs[1];
    const Tensor& scales = *inputs[2];
    const Tensor* zero_points = optional_input(inputs, 3);
    const bool uint8 = data.dtype() == DataType::kUInt8;
    const QuantizedView q = view(data, l.logical, l.bits);
    Shape scale_shape = l.logical;
    scale_shape[l.quantize] = (l.logical[l.quantize] + block_ - 1) / block_;
    const QuantizedView zero = zero_points != nullptr ? view(*zero_points, scale_shape, l.bits) : QuantizedView{};
    const int32_t default_zero = uint8 ? (1 << (l.bits - 1)) : 0;
    // Output element (outer, j, inner) reads data element (outer, indices[j], inner).
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < l.gather; ++d) outer *= l.logical[d];
    for (size_t d = l.gather + 1; d < l.logical.size(); ++d) inner *= l.logical[d];
    const int64_t axis = l.logical[l.gather];
    const int64_t count = indices.numel();
    // Strides of the quantize axis in data and in scales, for the block of an element.
    int64_t q_stride = 1;
    for (size_t d = l.quantize + 1; d < l.logical.size(); ++d) q_stride *= l.logical[d];
    const int64_t q_dim = l.logical[l.quantize];
    const int64_t s_dim = scale_shape[l.quantize];
    visit_dtype<HalfOrFloat>(scales.dtype(), [&]<class T>() {
      const T* scale = scales.data<T>();
      T* y = outputs[0].data<T>();
      pool.parallel_for(outer * count, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, inner)),
                        [&](int64_t begin, int64_t end) {
        for (int64_t oj = begin; oj < end; ++oj) {
          const int64_t o = oj / count, j = oj % count;
          int64_t index = indices.dtype() == DataType::kInt64 ? indices.data<int64_t>()[j]
                                                               : indices.data<int32_t>()[j];
          if (index < 0) index += axis;
          T* out = y + oj * inner;
          if (index < 0 || index >= axis) {
            std::fill_n(out, inner, T(0.0f));
            continue;
          }
          const int64_t base = (o * axis + index) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            const int64_t element = base + i;
            // The element's coordinate along quantize_axis becomes its block's in scales.
            const int64_t along = (element / q_stride) % q_dim;
            const int64_t scale_index = (element / (q_stride * q_dim)) * s_dim * q_stride +
                                        (along / block_) * q_stride + element % q_stride;
            const int32_t zp = zero_points != nullptr ? zero.at(scale_index) : default_zero;
            out[i] = T(static_cast<float>(q.at(element) - zp) * static_cast<float>(scale[scale_index]));
          }
        }
      });
    });
    return Status::ok();
  }

 private:
  static QuantizedView view(const Tensor& t, const Shape& logical, int64_t bits) {
    QuantizedView v;
    v.data = t.data<uint8_t>();
    if (t.dtype() == DataType::kUInt8) {
      v.bits = bits;
      v.row = logical.empty() ? 1 : logical.back();
      v.row_bytes = t.rank() == 0 ? 1 : t.shape().back();
    } else {
      v.bits = 4;
      v.is_signed = t.dtype() == DataType::kInt4;
      v.row = std::max<int64_t>(1, t.numel());
      v.row_bytes = 0;  // one row: the whole tensor
    }
    return v;
  }

  Expected<Layout> resolve(KernelInputs inputs) const {
    TRY(require_inputs(inputs, 3, description_));
    const Tensor& data = *inputs[0];
    const DataType type = data.dtype();
    if (type != DataType::kInt4 && type != DataType::kUInt4 && type != DataType::kUInt8) {
      return make_error(is_float8_or_float4(type) ? StatusCode::kNotImplemented : StatusCode::kInvalidArgument,
                        description_, ": data must be int4, uint4 or uint8, got ", data_type_name(type));
    }
    TRY(check_input_type(inputs, 1, type_mask(TypeList<int32_t, int64_t>{}), description_));
    TRY(check_input_type(inputs, 2, type_mask(HalfOrFloat{}), description_));
    const int64_t rank = data.rank();
    if (rank < 1 || gather_axis_ < -rank || gather_axis_ >= rank || quantize_axis_ < -rank ||
        quantize_axis_ >= rank) {
      return error("gather_axis and quantize_axis must lie in [-r, r) for data of rank " + std::to_string(rank));
    }
    Layout l;
    l.gather = static_cast<size_t>(gather_axis_ < 0 ? gather_axis_ + rank : gather_axis_);
    l.quantize = static_cast<size_t>(quantize_axis_ < 0 ? quantize_axis_ + rank : quantize_axis_);
    l.logical = data.shape();
    l.bits = type == DataType::kUInt8 ? bits_ : 4;
    if (type == DataType::kUInt8) {
      if (bits_ != 2 && bits_ != 4 && bits_ != 8) return error("bits must be 2, 4 or 8");
      if (l.gather != 0 || (bits_ < 8 && l.gather == l.quantize)) {
        return error("uint8 data gathers along axis 0, and below 8 bits quantizes along another axis");
      }
      l.logical.back() *= 8 / bits_;
    }
    Shape scale_shape = l.logical;
    scale_shape[l.quantize] = (l.logical[l.quantize] + block_ - 1) / block_;
    if (inputs[2]->shape() != scale_shape) {
      return error("scales " + shape_to_string(inputs[2]->shape()) + " must be " + shape_to_string(scale_shape));
    }
    if (const Tensor* zero = optional_input(inputs, 3)) {
      Shape physical = scale_shape;
      if (type == DataType::kUInt8) physical.back() = (physical.back() * bits_ + 7) / 8;
      if (zero->dtype() != type || zero->shape() != (type == DataType::kUInt8 ? physical : scale_shape)) {
        return error("zero_points must have data's type and the scales' shape (packed like data)");
      }
    }
    return l;
  }

  static bool is_float8_or_float4(DataType type) {
    return type == DataType::kFloat8E4M3FN || type == DataType::kFloat8E4M3FNUZ || type == DataType::kFloat8E5M2 ||
           type == DataType::kFloat8E5M2FNUZ || type == DataType::kFloat4E2M1;
  }

  Status error(const std::string& what) const {
    return make_error(StatusCode::kInvalidArgument, description_, ": ", what);
  }

  std::string description_;
  int64_t gather_axis_, quantize_axis_, block_, bits_;
};

Expected<std::unique_ptr<Kernel>> create_gather_block_quantized(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t gather_axis, info.node.attr_int("gather_axis", 0));
  TRY_ASSIGN(const int64_t quantize_axis, info.node.attr_int("quantize_axis", 1));
  TRY_ASSIGN(const int64_t block, info.node.attr_int("block_size", 128));
  TRY_ASSIGN(const int64_t bits, info.node.attr_int("bits", 4));
  if (block < 16 || block > (int64_t{1} << 30) || (block & (block - 1)) != 0) {
    return make_error(StatusCode::kInvalidArgument, info.node.describe(),
                      ": block_size must be a power of two >= 16, got ", block);
  }
  return std::unique_ptr<Kernel>(std::make_unique<GatherBlockQuantizedKernel>(info.node.describe(), gather_axis,
                                                                              quantize_axis, block, bits));
}

const KernelDef kContribGatherQuantKernels[] = {
    {"GatherBlockQuantized", graph::kMsDomain, 1, kLatestOpset, kAnyType, -1, create_gather_block_quantized},
};

}  // namespace

std::span<const KernelDef> contrib_gather_quant_kernels() { return kContribGatherQuantKernels; }

}  // namespace nxrt::cpu
