// `nxrt info MODEL`: what a model declares, read straight from the ModelProto (no session, so it also works
// for models whose ops the runtime cannot run yet).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include "cli_common.h"
#include "core/data_type.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/cpu_features.h"
#include "onnx/model_proto.h"

namespace nxrt::cli {

namespace {

std::string elem_type_name(int32_t value) {
  std::optional<DataType> type = data_type_from_int(value);
  return type ? std::string(data_type_name(*type)) : "type" + std::to_string(value);
}

std::string type_to_string(const onnx::TypeProto& type) {
  using Kind = onnx::TypeProto::Kind;
  auto element = [&] { return type.element ? type_to_string(*type.element) : std::string("?"); };
  switch (type.kind) {
    case Kind::kTensor:
    case Kind::kSparseTensor: {
      std::string text = std::string(type.kind == Kind::kTensor ? "tensor(" : "sparse_tensor(") +
                         elem_type_name(type.elem_type) + ")";
      if (!type.has_shape) return text + " (rank unknown)";
      text += " [";
      for (size_t i = 0; i < type.shape.size(); ++i) {
        if (i) text += ",";
        const onnx::TensorShapeDim& dim = type.shape[i];
        if (dim.has_value) {
          text += std::to_string(dim.dim_value);
        } else if (!dim.dim_param.empty()) {
          text += std::string(dim.dim_param);
        } else {
          text += "?";
        }
      }
      return text + "]";
    }
    case Kind::kSequence: return "seq(" + element() + ")";
    case Kind::kOptional: return "optional(" + element() + ")";
    case Kind::kMap: return "map(" + elem_type_name(type.map_key_type) + "," + element() + ")";
    case Kind::kUnset: break;
  }
  return "unknown";
}

void count_ops(const onnx::GraphProto& graph, std::map<std::string, int64_t>& histogram, int64_t& nodes) {
  for (const onnx::NodeProto& node : graph.node) {
    std::string key = node.domain.empty() || node.domain == "ai.onnx"
                          ? std::string(node.op_type)
                          : std::string(node.domain) + "." + std::string(node.op_type);
    ++histogram[key];
    ++nodes;
    for (const onnx::AttributeProto& attribute : node.attribute) {
      if (attribute.g) count_ops(*attribute.g, histogram, nodes);
      for (const auto& subgraph : attribute.graphs) {
        if (subgraph) count_ops(*subgraph, histogram, nodes);
      }
    }
  }
}

std::string domain_name(std::string_view domain) {
  return domain.empty() ? std::string("ai.onnx") : std::string(domain);
}

// Ops of `graph` (and its subgraphs) that no CPU kernel row covers at the model's opset of their domain, counted
// as "domain.op (opset N)"; calls of the model's local functions are not ops.
void count_missing_ops(const onnx::GraphProto& graph, const std::map<std::string, int64_t>& opsets,
                       const std::set<std::string>& local_functions, std::map<std::string, int64_t>& missing) {
  for (const onnx::NodeProto& node : graph.node) {
    const std::string domain = node.domain == "ai.onnx" ? std::string() : std::string(node.domain);
    const std::string op = domain_name(domain) + "." + std::string(node.op_type);
    const auto opset = opsets.find(domain);
    const int version = opset == opsets.end() ? 1 : static_cast<int>(std::min<int64_t>(opset->second, 1 << 20));
    if (!local_functions.count(op) && cpu::find_kernel(domain, node.op_type, version) == nullptr) {
      ++missing[op + " (opset " + std::to_string(version) + ")"];
    }
    for (const onnx::AttributeProto& attribute : node.attribute) {
      if (attribute.g) count_missing_ops(*attribute.g, opsets, local_functions, missing);
      for (const auto& subgraph : attribute.graphs) {
        if (subgraph) count_missing_ops(*subgraph, opsets, local_functions, missing);
      }
    }
  }
}

// The custom (not ai.onnx, ai.onnx.ml or ai.onnx.preview.training) domains the model imports, and the ops no CPU
// kernel runs: known before any session is created.
void print_domains_and_missing_ops(const onnx::ModelProto& model, const onnx::GraphProto& graph) {
  std::map<std::string, int64_t> opsets;
  std::cout << "custom domains:";
  bool any_custom = false;
  for (const onnx::OperatorSetIdProto& opset : model.opset_import) {
    const std::string domain = opset.domain == "ai.onnx" ? std::string() : std::string(opset.domain);
    opsets[domain] = opset.version;
    if (domain.empty() || domain == "ai.onnx.ml" || domain == "ai.onnx.preview.training") continue;
    std::cout << " " << domain << "=" << opset.version;
    any_custom = true;
  }
  std::cout << (any_custom ? "\n" : " none\n");
  std::set<std::string> local_functions;
  for (const onnx::FunctionProto& function : model.functions) {
    local_functions.insert(domain_name(function.domain) + "." + std::string(function.name));
  }
  std::map<std::string, int64_t> missing;
  count_missing_ops(graph, opsets, local_functions, missing);
  std::cout << "ops without a CPU kernel:" << (missing.empty() ? " none" : "") << "\n";
  for (const auto& [op, count] : missing) std::cout << "  " << op << "  " << count << "\n";
}

int64_t initializer_elements(const onnx::GraphProto& graph) {
  int64_t total = 0;
  for (const onnx::TensorProto& tensor : graph.initializer) {
    int64_t count = 1;
    for (int64_t dim : tensor.dims) count *= dim;
    total += count;
  }
  return total;
}

}  // namespace

const CommandSpec& info_command_spec() {
  static const CommandSpec spec{
      .name = "info",
      .operands = {"MODEL"},
      .required_operands = 1,
      .summary = "Print a model's inputs, outputs, opsets, custom domains, ops without a kernel and op histogram.",
      .description = "Reads the ModelProto without creating a session, so it also works for models whose ops nxrt\n"
                     "cannot run. Shapes keep their symbolic dimensions; the op histogram includes subgraphs.",
      .details = model_spec_help(),
      .options = {},
  };
  return spec;
}

namespace {

// Prints the inputs, outputs, metadata and op histogram of the model named by `spec`; returns the exit code.
int print_model_info(const std::string& spec) {
  Expected<std::string> bytes = load_model_bytes(spec);
  if (!bytes) return report_error(bytes.status());
  Expected<onnx::ModelProto> parsed = onnx::parse_model(*bytes);
  if (!parsed) return report_error(parsed.status());
  const onnx::ModelProto& model = *parsed;
  if (!model.graph) return report_error(Status(StatusCode::kInvalidGraph, "model has no graph"));
  const onnx::GraphProto& graph = *model.graph;

  std::cout << "model: " << spec << " (" << bytes->size() << " bytes)\n";
  std::cout << "cpu isa: " << cpu::cpu_isa_name(cpu::active_cpu_isa()) << " (detected "
            << cpu::cpu_isa_name(cpu::detected_cpu_isa()) << "; NXRT_CPU_ISA=generic|avx2|avx512 lowers it)\n";
  std::cout << "ir_version: " << model.ir_version << "\n";
  std::cout << "producer: " << model.producer_name;
  if (!model.producer_version.empty()) std::cout << " " << model.producer_version;
  std::cout << "\n";
  std::cout << "opset imports:";
  for (const onnx::OperatorSetIdProto& opset : model.opset_import) {
    std::cout << " " << (opset.domain.empty() ? std::string_view("ai.onnx") : opset.domain) << "=" << opset.version;
  }
  std::cout << "\n";
  print_domains_and_missing_ops(model, graph);
  std::cout << "graph: " << graph.name << "\n";

  std::set<std::string_view> initializer_names;
  for (const onnx::TensorProto& tensor : graph.initializer) initializer_names.insert(tensor.name);
  std::cout << "inputs:\n";
  for (const onnx::ValueInfoProto& input : graph.input) {
    if (initializer_names.count(input.name)) continue;
    std::cout << "  " << input.name << ": " << (input.has_type ? type_to_string(input.type) : "unknown") << "\n";
  }
  std::cout << "outputs:\n";
  for (const onnx::ValueInfoProto& output : graph.output) {
    std::cout << "  " << output.name << ": " << (output.has_type ? type_to_string(output.type) : "unknown") << "\n";
  }
  std::cout << "initializers: " << graph.initializer.size() << " (" << initializer_elements(graph)
            << " elements)\n";

  std::map<std::string, int64_t> histogram;
  int64_t nodes = 0;
  count_ops(graph, histogram, nodes);
  std::vector<std::pair<std::string, int64_t>> ops(histogram.begin(), histogram.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  size_t width = 0;
  for (const auto& op : ops) width = std::max(width, op.first.size());
  std::cout << "nodes: " << nodes << " (including subgraphs)\n";
  std::cout << "op histogram:\n";
  for (const auto& [op, count] : ops) {
    std::cout << "  " << op << std::string(width - op.size() + 2, ' ') << count << "\n";
  }
  return 0;
}

}  // namespace

int run_info_command(const std::vector<std::string>& args) {
  return with_command_line(info_command_spec(), args, [](const ParsedCommandLine& command_line) {
    return print_model_info(command_line.operands[0]);
  });
}

}  // namespace nxrt::cli
