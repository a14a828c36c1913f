#include "random_input.h"

#include <type_traits>

#include "core/dispatch.h"

namespace nxrt::cli {

Expected<Tensor> random_input(const ValueDesc& input, const std::map<std::string, int64_t>& dims,
                              std::mt19937_64& rng) {
  if (!input.type.is_tensor()) {
    return make_error(StatusCode::kNotImplemented, "input '", input.name, "' of type ", input.type.to_string(),
                      " cannot be generated; pass it with --input");
  }
  if (!input.type.shape) {
    return make_error(StatusCode::kInvalidArgument, "input '", input.name,
                      "' has an unknown rank; pass it with --input NAME=FILE.npy");
  }
  Shape shape;
  for (const graph::Dim& dim : *input.type.shape) {
    auto it = dims.find(dim.param);
    shape.push_back(dim.is_known() ? dim.value : (dim.is_symbolic() && it != dims.end()) ? it->second : 1);
  }
  TRY_ASSIGN(Tensor tensor, Tensor::allocate(input.type.elem_type, shape));
  const int64_t n = tensor.numel();
  const bool filled = visit_dtype<AllPodTypes>(tensor.dtype(), [&]<class T>() {
    T* data = tensor.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        data[i] = (rng() & 1) != 0;
      } else if constexpr (std::is_integral_v<T>) {
        data[i] = static_cast<T>(rng() % 10);
      } else {
        data[i] = T(std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng));
      }
    }
  });
  if (!filled) {
    return make_error(StatusCode::kNotImplemented, "cannot generate random ", data_type_name(tensor.dtype()),
                      " data for input '", input.name, "'; pass it with --input");
  }
  return tensor;
}

}  // namespace nxrt::cli
