// The kernel rows one execution provider registers, indexed by (domain, op type) for lookup by opset.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ep/kernel.h"

namespace nxrt::ep {

class KernelRegistry {
 public:
  // Rows of every table, in table order; for one (domain, op type) the first row whose opset range matches wins.
  explicit KernelRegistry(std::span<const std::span<const KernelDef>> tables);

  // The row for (domain, op_type) whose opset range contains `opset`; nullptr when none.
  const KernelDef* find(std::string_view domain, std::string_view op_type, int opset) const;
  // The row that can run `node` of `graph`: op and opset match and, where inference knows it, the dtype of the
  // row's type input is registered. nullptr when none.
  const KernelDef* find_for(const graph::Graph& graph, const graph::Node& node) const;
  const std::vector<const KernelDef*>& rows() const { return rows_; }

 private:
  std::unordered_map<std::string, std::vector<const KernelDef*>> by_op_;  // "domain\x1fop_type" -> rows
  std::vector<const KernelDef*> rows_;
};

}  // namespace nxrt::ep
