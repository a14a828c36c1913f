#include "ep/cpu/cpu_provider.h"

#include <cstring>

#include "optimizer/optimizer.h"

namespace nxrt::cpu {

namespace {

class CpuProvider final : public ep::ExecutionProvider {
 public:
  std::string_view name() const override { return kCpuProviderName; }
  Device device() const override { return Device{}; }
  Allocator& allocator() const override { return cpu_allocator(); }

  Status copy(const Tensor& source, const Tensor& target, ep::Stream*) const override {
    if (!ep::is_host(source.device()) || !ep::is_host(target.device())) {
      return make_error(StatusCode::kInvalidArgument, "CPUExecutionProvider copies host memory only, got ",
                        device_name(source.device()), " to ", device_name(target.device()));
    }
    if (source.dtype() != target.dtype() || source.numel() != target.numel()) {
      return make_error(StatusCode::kInvalidArgument, "copy between ", tensor_type_string(source.dtype()), " of ",
                        source.numel(), " elements and ", tensor_type_string(target.dtype()), " of ", target.numel());
    }
    if (source.dtype() == DataType::kString) {
      const auto* from = source.data<std::string>();
      auto* to = target.data<std::string>();
      for (int64_t i = 0; i < source.numel(); ++i) to[i] = from[i];
    } else if (source.storage_bytes() > 0 && source.raw_data() != target.raw_data()) {
      std::memmove(target.raw_data(), source.raw_data(), source.storage_bytes());
    }
    return Status::ok();
  }

  const ep::KernelRegistry& registry() const override { return cpu_registry(); }

  Status optimize(graph::Graph& graph, int level) const override {
    return optimizer::optimize_cpu_nodes(graph, level, kCpuProviderName);
  }
};

}  // namespace

std::shared_ptr<const ep::ExecutionProvider> cpu_provider() {
  static const std::shared_ptr<const ep::ExecutionProvider> provider = std::make_shared<CpuProvider>();
  return provider;
}

}  // namespace nxrt::cpu
