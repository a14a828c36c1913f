#include <array>

#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

const KernelDef* find_kernel(std::string_view domain, std::string_view op_type, int opset) {
  static const std::array<std::span<const KernelDef>, 4> families = {elementwise_kernels(), matmul_kernels(),
                                                                     tensor_kernels(), cast_kernels()};
  for (const auto& family : families) {
    for (const KernelDef& def : family) {
      if (def.op_type == op_type && def.domain == domain && def.since_opset <= opset && opset <= def.last_opset) {
        return &def;
      }
    }
  }
  return nullptr;
}

Status missing_kernel_error(const graph::Node& node, std::string_view detail) {
  return make_error(StatusCode::kNotImplemented, "Could not find an implementation for ", node.op_type, "(",
                    node.opset, ") node with name '", node.name, "'", detail.empty() ? "" : ": ", detail);
}

}  // namespace nxrt::cpu
