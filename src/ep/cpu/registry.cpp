// The CPU provider's registry: every table of NXRT_CPU_KERNEL_TABLES (ep/cpu/kernel.h), in that order.
#include <vector>

#include "ep/cpu/kernel.h"
#include "ep/kernel_registry.h"

namespace nxrt::cpu {

namespace {

using FamilyFn = std::span<const KernelDef> (*)();

#define NXRT_KERNEL_TABLE_ENTRY(name) name##_kernels,
constexpr FamilyFn kFamilies[] = {NXRT_CPU_KERNEL_TABLES(NXRT_KERNEL_TABLE_ENTRY)};
#undef NXRT_KERNEL_TABLE_ENTRY

}  // namespace

const ep::KernelRegistry& cpu_registry() {
  static const ep::KernelRegistry registry = [] {
    std::vector<std::span<const KernelDef>> tables;
    for (FamilyFn family : kFamilies) tables.push_back(family());
    return ep::KernelRegistry(tables);
  }();
  return registry;
}

const KernelDef* find_kernel(std::string_view domain, std::string_view op_type, int opset) {
  return cpu_registry().find(domain, op_type, opset);
}

std::vector<const KernelDef*> all_kernels() { return cpu_registry().rows(); }

}  // namespace nxrt::cpu
