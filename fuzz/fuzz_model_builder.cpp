#include "fuzz_model_builder.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string_view>
#include <thread>
#include <utility>

#include "fuzz_bytes.h"
#include "fuzz_op_catalog.h"
#include "session/session.h"

namespace nxrt::fuzz {

namespace {

namespace write = onnx::write;

// op_ref tags 240..255: ops that make graphs (constants, control flow, sequences, shape plumbing).
constexpr std::string_view kStructuralOps[16] = {"Constant", "Identity", "If",        "Loop",     "Scan",
                                                 "SequenceConstruct",    "Cast",      "Shape",    "Reshape",
                                                 "Add",      "MatMul",   "Relu",      "Concat",   "Gather",
                                                 "Transpose", "Unsqueeze"};
constexpr std::string_view kCommonAttributeNames[] = {"axis", "axes", "alpha", "beta", "keepdims", "perm",
                                                      "mode", "to",   "value", "kernel_shape", "pads", "strides"};

// onnx AttributeProto.AttributeType values.
enum AttributeKind : int {
  kFloat = 1, kInt = 2, kString = 3, kTensor = 4, kGraph = 5, kFloats = 6, kInts = 7, kStrings = 8,
  kTensors = 9, kGraphs = 10, kSparseTensor = 11
};

constexpr uint64_t kValidTypes = ((uint64_t{1} << (kMaxDataTypeValue + 1)) - 1) & ~uint64_t{1};
constexpr uint64_t kNonStringTypes = kValidTypes & ~(uint64_t{1} << static_cast<int>(DataType::kString));

DataType nth_type(uint64_t mask, unsigned n) {
  for (; n > 0; --n) mask &= mask - 1;
  return static_cast<DataType>(std::countr_zero(mask));
}

void clamp_elements(std::vector<int64_t>& dims) {
  auto count = [&] {
    int64_t product = 1;
    for (const int64_t dim : dims) product *= dim;
    return product;
  };
  while (count() > kMaxTensorElements) {
    int64_t& largest = *std::max_element(dims.begin(), dims.end());
    largest /= 2;
  }
}

struct NodeTarget {
  const CatalogOp* op = nullptr;
  int opset = 0;
  const cpu::KernelDef* row = nullptr;
  const OpSchema* schema = nullptr;
  std::vector<DataType> input_types;  // dtype each new input got; kUndefined for reused values
};

class CaseDecoder {
 public:
  // kernel_names: values in0.., out0.. (kernel cases); otherwise v0...
  CaseDecoder(std::span<const uint8_t> bytes, bool kernel_names)
      : in_(bytes), catalog_(OpCatalog::get()), kernel_names_(kernel_names) {}

  FuzzCase kernel_case() {
    read_flags();
    const CatalogOp& op = catalog_.op(read_op_ref());
    const int opset = catalog_.choose_opset(op, in_.u8());
    opsets_ = {{"", op.domain.empty() ? opset : 21}};
    for (size_t d = 1; d < std::size(kFuzzDomains); ++d) {
      opsets_[std::string(kFuzzDomains[d])] = op.domain == kFuzzDomains[d] ? opset : max_fuzz_opset(kFuzzDomains[d]);
    }
    NodeTarget target = make_target(op, opset);
    write::Node node = begin_node(target);
    std::vector<std::string> visible;
    for (size_t i = 0; i < target.input_types.size(); ++i) {
      node.inputs.push_back(new_input(target, i));
      if (!node.inputs.back().empty()) visible.push_back(node.inputs.back());
    }
    finish_node(node, target, 0, visible);
    add_graph_outputs(node.outputs);
    graph().nodes.push_back(std::move(node));
    return finish_case();
  }

  FuzzCase graph_case() {
    read_flags();
    const uint8_t onnx_opset = in_.u8();
    opsets_ = {{"", onnx_opset >= 1 && onnx_opset <= 28 ? onnx_opset : 1 + onnx_opset % 28}};
    opsets_["ai.onnx.ml"] = 1 + in_.u8() % 5;
    for (const std::string_view domain : {"com.microsoft", "ai.onnx.preview.training", "com.nxrt"}) {
      opsets_[std::string(domain)] = 1;
    }
    const int nodes = 2 + in_.u8() % 5;
    std::vector<std::string> visible;
    std::vector<std::string> last_outputs;
    for (int n = 0; n < nodes; ++n) {
      last_outputs = graph_node(graph(), visible, 0);
      if ((flags_ & 8) == 0) add_graph_outputs(last_outputs);
    }
    if ((flags_ & 8) != 0) add_graph_outputs(last_outputs);
    return finish_case();
  }

 private:
  write::Graph& graph() { return case_.model.graph; }

  std::string next_name(std::string_view prefix) { return std::string(prefix) + std::to_string(names_++); }

  void read_flags() {
    flags_ = in_.u8();
    static constexpr int kLevels[4] = {0, 99, 1, 2};
    case_.graph_optimization_level = kLevels[flags_ & 3];
    case_.run_twice = (flags_ & 4) != 0;
  }

  FuzzCase finish_case() {
    case_.model.opset_imports.clear();
    for (const auto& [domain, version] : opsets_) case_.model.opset_imports.push_back({domain, version});
    return std::move(case_);
  }

  void add_graph_outputs(const std::vector<std::string>& names) {
    for (const std::string& name : names) {
      if (name.empty()) continue;
      write::ValueInfo output;
      output.name = name;
      output.has_type = false;
      graph().outputs.push_back(std::move(output));
    }
  }

  size_t read_op_ref() {
    const uint8_t tag = in_.u8();
    if (tag == 0) return catalog_.find("", "Identity");
    if (tag < 64) {
      const std::string name = in_.text(tag);
      return catalog_.find(kFuzzDomains[in_.u8() % std::size(kFuzzDomains)], name);
    }
    if (tag < 240) return ((static_cast<size_t>(tag - 64) << 8) | in_.u8()) % catalog_.size();
    return catalog_.find("", kStructuralOps[tag - 240]);
  }

  NodeTarget make_target(const CatalogOp& op, int opset) {
    NodeTarget target{&op, opset, catalog_.row_for(op, opset), catalog_.schema_for(op, opset), {}};
    int min_inputs = 1;
    int max_inputs = 4;
    if (target.schema != nullptr) {
      min_inputs = target.schema->min_inputs;
      max_inputs = std::max<int>(min_inputs, target.schema->max_inputs);
    }
    const int count = min_inputs + in_.u8() % (max_inputs - min_inputs + 1);
    target.input_types.assign(static_cast<size_t>(count), DataType::kUndefined);
    return target;
  }

  write::Node begin_node(const NodeTarget& target) {
    write::Node node;
    node.op_type = std::string(target.op->op_type);
    node.domain = std::string(target.op->domain);
    node.name = next_name("n");
    return node;
  }

  // Outputs, then attributes (whose graph bodies may read `visible`).
  void finish_node(write::Node& node, const NodeTarget& target, int depth, const std::vector<std::string>& visible) {
    const uint8_t v = in_.u8();
    int min_outputs = 1;
    int max_outputs = 1;
    if (target.schema != nullptr) {
      min_outputs = target.schema->min_outputs;
      max_outputs = std::max<int>(min_outputs, target.schema->max_outputs);
    }
    const int count = min_outputs + (v & 15) % (max_outputs - min_outputs + 1);
    for (int i = 0; i < count; ++i) {
      const bool omitted = i < 4 && target.schema != nullptr && ((v >> (4 + i)) & 1) != 0 &&
                           ((target.schema->optional_outputs >> i) & 1) != 0;
      node.outputs.push_back(omitted ? std::string() : next_name(depth == 0 && kernel_names_ ? "out" : "v"));
    }
    const int64_t attributes = small_value(in_.u8());
    for (int64_t a = 0; a < attributes; ++a) node.attributes.push_back(attribute(target.schema, depth, visible));
  }

  const SchemaInput* input_spec(const NodeTarget& target, size_t index) const {
    if (target.schema == nullptr || target.schema->input_count == 0) return nullptr;
    const auto inputs = OpCatalog::inputs(*target.schema);
    return &inputs[std::min(index, inputs.size() - 1)];
  }

  DataType choose_dtype(uint8_t v, const NodeTarget& target, size_t index) const {
    const SchemaInput* spec = input_spec(target, index);
    const bool type_input = target.row != nullptr && target.row->type_input >= 0 &&
                            static_cast<size_t>(target.row->type_input) == index;
    uint64_t mask = spec != nullptr ? spec->types & kValidTypes : 0;
    if (mask == 0) mask = type_input ? target.row->types & kValidTypes : kNonStringTypes;
    if (mask == 0) mask = kNonStringTypes;
    if (v == 0 && spec != nullptr && spec->same_type_as < index &&
        target.input_types[spec->same_type_as] != DataType::kUndefined) {
      return target.input_types[spec->same_type_as];
    }
    if (v < 64 && ((mask >> v) & 1) != 0) return static_cast<DataType>(v);
    uint64_t pick = mask;
    if (type_input && (mask & target.row->types) != 0) pick = mask & target.row->types;
    return nth_type(pick, v % static_cast<unsigned>(std::popcount(pick)));
  }

  std::vector<int64_t> read_shape() {
    std::vector<int64_t> dims(in_.u8() % 7);
    for (int64_t& dim : dims) dim = small_value(in_.u8());
    clamp_elements(dims);
    return dims;
  }

  // Element values from the data section into `data` (storage bytes of `dtype`, or std::string objects).
  void fill_values(DataType dtype, int64_t count, void* data) {
    if (dtype == DataType::kString) {
      auto* strings = static_cast<std::string*>(data);
      for (int64_t i = 0; i < count; ++i) {
        const auto bytes = in_.tail(static_cast<size_t>(small_value(in_.tail_u8())));
        strings[i].assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      }
      return;
    }
    const size_t size = data_type_storage_bytes(dtype, count);
    const auto bytes = in_.tail(size);
    if (!bytes.empty()) std::memcpy(data, bytes.data(), bytes.size());
    std::memset(static_cast<char*>(data) + bytes.size(), 0, size - bytes.size());
  }

  write::Tensor raw_tensor(std::string name, DataType dtype, const std::vector<int64_t>& dims) {
    write::Tensor tensor;
    tensor.name = std::move(name);
    tensor.data_type = static_cast<int32_t>(dtype);
    tensor.dims = dims;
    int64_t count = 1;
    for (const int64_t dim : dims) count *= dim;
    tensor.raw_data.assign(data_type_storage_bytes(dtype, count), '\0');
    fill_values(dtype, count, tensor.raw_data.data());
    return tensor;
  }

  void add_feed(const std::string& name, DataType dtype, const std::vector<int64_t>& dims, int declared_shape) {
    write::ValueInfo info;
    info.name = name;
    info.elem_type = static_cast<int32_t>(dtype);
    info.has_shape = declared_shape != 2;
    for (const int64_t dim : dims) {
      info.dims.push_back(declared_shape == 1 ? write::Dim("d" + std::to_string(dim)) : write::Dim(dim));
    }
    graph().inputs.push_back(std::move(info));
    auto tensor = Tensor::allocate(dtype, dims);
    if (!tensor) return;  // the run then reports the missing feed
    fill_values(dtype, tensor->numel(), tensor->raw_data());
    if (dtype == DataType::kBool) {
      auto* bytes = static_cast<uint8_t*>(tensor->raw_data());
      for (int64_t i = 0; i < tensor->numel(); ++i) bytes[i] &= 1;
    }
    case_.feed_names.push_back(name);
    case_.feeds.emplace_back(std::move(*tensor));
  }

  // A new main-graph input, initializer or sequence (kernel_input); "" when omitted.
  std::string new_input(NodeTarget& target, size_t index) {
    const uint8_t mode = in_.u8();
    if ((mode & 3) == 2) return {};
    const SchemaInput* spec = input_spec(target, index);
    const DataType dtype = choose_dtype(in_.u8(), target, index);
    target.input_types[index] = dtype;
    const int declared_shape = (mode >> 2) & 3;
    const std::string name = next_name(kernel_names_ ? "in" : "v");
    const bool sequence = spec != nullptr && (spec->kinds & kTakesSequence) != 0 &&
                          ((spec->kinds & kTakesTensor) == 0 || (mode & 0x10) != 0);
    if (sequence) {
      write::Node join;
      join.name = next_name("n");
      join.outputs = {name};
      const int count = in_.u8() % 4;
      for (int e = 0; e < count; ++e) {
        join.inputs.push_back(name + "_" + std::to_string(e));
        add_feed(join.inputs.back(), dtype, read_shape(), declared_shape);
      }
      join.op_type = count == 0 ? "SequenceEmpty" : "SequenceConstruct";
      if (count == 0) join.attributes.push_back(write::attr_int("dtype", static_cast<int64_t>(dtype)));
      graph().nodes.push_back(std::move(join));
      return name;
    }
    const std::vector<int64_t> dims = read_shape();
    if ((mode & 3) == 1 && dtype != DataType::kString) {
      graph().initializers.push_back(raw_tensor(name, dtype, dims));
    } else {
      add_feed(name, dtype, dims, declared_shape);
    }
    return name;
  }

  write::Attribute attribute(const OpSchema* schema, int depth, const std::vector<std::string>& visible) {
    const uint8_t tag = in_.u8();
    write::Attribute result;
    if ((tag & 0x80) != 0) {
      result.name = in_.text(tag & 0x7f);
    } else if (schema != nullptr && schema->attribute_count > 0) {
      result.name = OpCatalog::attributes(*schema)[tag % schema->attribute_count].name;
    } else {
      result.name = std::string(kCommonAttributeNames[tag % std::size(kCommonAttributeNames)]);
    }
    const SchemaAttribute* declared = OpCatalog::find_attribute(schema, result.name);
    const uint8_t kind_byte = in_.u8();
    int kind = kind_byte >= 1 && kind_byte <= 8 ? kind_byte : (declared != nullptr ? int{declared->kind} : int{kInt});
    if (kind == kTensors || kind == kSparseTensor) kind = kTensor;
    if (kind == kGraphs) kind = kGraph;
    if (kind < kFloat || kind > kStrings) kind = kInt;
    result.type = kind;
    switch (kind) {
      case kFloat: result.f = in_.f32(); break;
      case kInt: result.i = in_.varint(); break;
      case kString: result.s = in_.text(static_cast<size_t>(small_value(in_.u8()))); break;
      case kTensor: {
        DataType dtype = static_cast<DataType>(in_.u8() % (kMaxDataTypeValue + 1));
        if (dtype == DataType::kUndefined || dtype == DataType::kString) dtype = DataType::kFloat32;
        const std::vector<int64_t> dims = read_shape();
        result.t = std::make_shared<write::Tensor>(raw_tensor({}, dtype, dims));
        break;
      }
      case kGraph: result.g = std::make_shared<write::Graph>(body(depth + 1, visible)); break;
      case kFloats: result.floats.resize(static_cast<size_t>(small_value(in_.u8())));
        for (float& value : result.floats) value = in_.f32();
        break;
      case kInts: result.ints.resize(static_cast<size_t>(small_value(in_.u8())));
        for (int64_t& value : result.ints) value = in_.varint();
        break;
      default: result.strings.resize(static_cast<size_t>(small_value(in_.u8())));
        for (std::string& value : result.strings) value = in_.text(static_cast<size_t>(small_value(in_.u8())));
        break;
    }
    return result;
  }

  write::Graph body(int depth, std::vector<std::string> visible) {
    write::Graph result;
    result.name = next_name("g");
    const int inputs = in_.u8() % 4;
    for (int i = 0; i < inputs; ++i) {
      write::ValueInfo input;
      input.name = next_name("b");
      const int dtype = in_.u8() % (kMaxDataTypeValue + 1);
      input.elem_type = dtype == 0 ? 1 : dtype;
      const uint8_t shape = in_.u8();
      input.has_shape = shape % 8 != 7;
      for (int d = 0; input.has_shape && d < shape % 8; ++d) {
        input.dims.emplace_back(input.name + "_" + std::to_string(d));
      }
      visible.push_back(input.name);
      result.inputs.push_back(std::move(input));
    }
    const int nodes = in_.u8() % 3;
    for (int n = 0; depth < kMaxBodyDepth && n < nodes; ++n) graph_node(result, visible, depth);
    const int outputs = 1 + in_.u8() % 3;
    for (int o = 0; o < outputs; ++o) {
      const uint8_t source = in_.u8();
      write::ValueInfo output;
      output.has_type = false;
      if (visible.empty()) {
        output.name = next_name("v");
        result.nodes.push_back(
            {"Constant", {}, {output.name}, {write::attr_float("value_float", 1.0f)}, next_name("n"), ""});
      } else if ((source & 0x80) != 0) {
        output.name = next_name("v");
        const std::string& read = visible[(source & 0x7f) % visible.size()];
        result.nodes.push_back({"Identity", {read}, {output.name}, {}, next_name("n"), ""});
      } else {
        output.name = visible[source % visible.size()];
      }
      result.outputs.push_back(std::move(output));
    }
    return result;
  }

  // A node of a graph case or of a body; returns its outputs (also made visible).
  std::vector<std::string> graph_node(write::Graph& target_graph, std::vector<std::string>& visible, int depth) {
    const size_t first = read_op_ref();
    const CatalogOp* op = &catalog_.op(first);
    int opset = 0;
    for (size_t step = 0; step < catalog_.size(); ++step) {
      op = &catalog_.op(first + step);
      const auto found = opsets_.find(std::string(op->domain));
      opset = found != opsets_.end() ? found->second : 1;
      if (catalog_.row_for(*op, opset) != nullptr) break;
    }
    NodeTarget target = make_target(*op, opset);
    write::Node node = begin_node(target);
    for (size_t i = 0; i < target.input_types.size(); ++i) {
      const uint8_t source = in_.u8();
      if (source == 255) {
        node.inputs.emplace_back();
      } else if (source < 192 && !visible.empty()) {
        node.inputs.push_back(visible[source % visible.size()]);
      } else {
        node.inputs.push_back(new_input(target, i));
        if (!node.inputs.back().empty()) visible.push_back(node.inputs.back());
      }
    }
    finish_node(node, target, depth, visible);
    std::vector<std::string> outputs = node.outputs;
    for (const std::string& name : outputs) {
      if (!name.empty()) visible.push_back(name);
    }
    target_graph.nodes.push_back(std::move(node));
    return outputs;
  }
  FuzzBytes in_;
  const OpCatalog& catalog_;
  const bool kernel_names_;
  FuzzCase case_;
  std::map<std::string, int> opsets_;
  uint8_t flags_ = 0;
  int names_ = 0;
};

// Sets `terminate` once an armed run passes its deadline, so a model that legitimately runs for a very long
// time (a Loop with a huge trip count) ends with a Status instead of tripping libFuzzer's per-input timeout. One
// thread for the process, polling; it is never joined (the process exits under it).
class RunWatchdog {
 public:
  static RunWatchdog& get() {
    static RunWatchdog* const watchdog = new RunWatchdog();  // never destroyed: its thread outlives main()
    return *watchdog;
  }

  const std::atomic<bool>* arm(std::chrono::milliseconds budget) {
    terminate_.store(false);
    deadline_ns_.store((std::chrono::steady_clock::now() + budget).time_since_epoch().count());
    return &terminate_;
  }
  void disarm() { deadline_ns_.store(0); }

 private:
  RunWatchdog() {
    std::thread([this] {
      for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        const int64_t deadline = deadline_ns_.load();
        if (deadline != 0 && std::chrono::steady_clock::now().time_since_epoch().count() > deadline) {
          terminate_.store(true);
        }
      }
    }).detach();
  }

  std::atomic<bool> terminate_{false};
  std::atomic<int64_t> deadline_ns_{0};
};

}  // namespace

FuzzCase decode_kernel_case(std::span<const uint8_t> bytes) { return CaseDecoder(bytes, true).kernel_case(); }

FuzzCase decode_graph_case(std::span<const uint8_t> bytes) { return CaseDecoder(bytes, false).graph_case(); }

void run_fuzz_case(const FuzzCase& fuzz_case) {
  const std::string bytes = onnx::write::encode_model(fuzz_case.model);
  SessionOptions options;
  options.intra_op_num_threads = 1;
  options.graph_optimization_level = fuzz_case.graph_optimization_level;
  static const bool verbose = std::getenv("NXRT_FUZZ_VERBOSE") != nullptr;
  auto session = Session::create_from_bytes(bytes, options);
  if (!session) {
    if (verbose) std::fprintf(stderr, "session: %s\n", session.status().to_string().c_str());
    return;
  }
  RunOptions run_options;
  for (int run = 0; run < (fuzz_case.run_twice ? 2 : 1); ++run) {
    run_options.terminate = RunWatchdog::get().arm(kRunBudget);
    auto outputs = (*session)->run_values(fuzz_case.feed_names, fuzz_case.feeds, {}, run_options);
    RunWatchdog::get().disarm();
    if (verbose) std::fprintf(stderr, "run: %s\n", outputs ? "ok" : outputs.status().to_string().c_str());
  }
}

}  // namespace nxrt::fuzz
