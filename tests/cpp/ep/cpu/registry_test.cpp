// The CPU registry as a whole: one row per (domain, op, opset), so the order of NXRT_CPU_KERNEL_TABLES never
// decides which kernel a node gets.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ep/cpu/kernel.h"

namespace nxrt::cpu::testing {
namespace {

TEST(CpuRegistry, NoTwoRowsClaimTheSameOpAndOpset) {
  std::map<std::string, std::vector<const KernelDef*>> by_op;
  for (const KernelDef* def : all_kernels()) {
    by_op[std::string(def->domain) + ":" + std::string(def->op_type)].push_back(def);
  }
  ASSERT_GT(by_op.size(), 200u);
  for (const auto& [op, rows] : by_op) {
    for (size_t i = 0; i < rows.size(); ++i) {
      for (size_t j = i + 1; j < rows.size(); ++j) {
        const bool overlap = rows[i]->since_opset <= rows[j]->last_opset && rows[j]->since_opset <= rows[i]->last_opset;
        EXPECT_FALSE(overlap) << op << ": opsets " << rows[i]->since_opset << ".." << rows[i]->last_opset << " and "
                              << rows[j]->since_opset << ".." << rows[j]->last_opset;
      }
    }
  }
}

}  // namespace
}  // namespace nxrt::cpu::testing
