// Decoder feeds and fetches (contracts in decoder_tensors.h).
#include "genai/decoder_tensors.h"

#include <algorithm>

#include "core/half.h"

namespace nxrt::genai {

namespace {

// Whether every position of `node`'s first output depends only on the same position of its first input.
bool is_row_wise_projection(const graph::Graph& graph, const graph::Node& node) {
  if (node.inputs.empty() || node.inputs[0] == graph::kNoValue) return false;
  if (node.domain == graph::kMsDomain) return node.op_type == "MatMulNBits";
  if (node.domain != graph::kOnnxDomain || node.op_type != "MatMul" || node.inputs.size() != 2) return false;
  const int weight = node.inputs[1];
  return weight != graph::kNoValue && graph.values[weight].initializer && graph.values[weight].initializer->rank() == 2;
}

}  // namespace

void put_index(Tensor& t, int64_t i, int64_t value) {
  if (t.dtype() == DataType::kInt32) {
    t.data<int32_t>()[i] = static_cast<int32_t>(value);
  } else {
    t.data<int64_t>()[i] = value;
  }
}

Status check_logits(const Tensor& logits, int64_t batch, int64_t vocab) {
  if (logits.rank() != 3 || logits.shape()[0] != batch || logits.shape()[1] < 1 || logits.shape()[2] < vocab ||
      (logits.dtype() != DataType::kFloat32 && logits.dtype() != DataType::kFloat16)) {
    return make_error(StatusCode::kInvalidArgument, "genai: logits ", shape_to_string(logits.shape()),
                      " must be float [batch, positions, vocab_size ", vocab, "]");
  }
  return Status::ok();
}

void last_position_logits(const Tensor& logits, int64_t row, int64_t vocab, float* out) {
  position_logits(logits, row, logits.shape()[1] - 1, vocab, out);
}

void position_logits(const Tensor& logits, int64_t row, int64_t position, int64_t vocab, float* out) {
  const int64_t positions = logits.shape()[1], width = logits.shape()[2];
  const int64_t at = (row * positions + position) * width;
  for (int64_t v = 0; v < vocab; ++v) {
    out[v] = logits.dtype() == DataType::kFloat32 ? logits.data<float>()[at + v]
                                                  : static_cast<float>(logits.data<Float16>()[at + v]);
  }
}

bool gather_logit_rows(graph::Graph& graph, const std::string& logits) {
  const int out = graph.find_value(logits);
  if (out == graph::kNoValue || graph.find_value(kLogitPositionsInput) != graph::kNoValue) return false;
  const graph::Value& logits_value = graph.values[out];
  if (!logits_value.is_graph_output || !logits_value.consumers.empty() || logits_value.producer == graph::kNoValue) {
    return false;
  }
  const int projection = logits_value.producer;
  if (!is_row_wise_projection(graph, graph.nodes[projection])) return false;
  const int hidden = graph.nodes[projection].inputs[0];
  const std::optional<graph::SymbolicShape> declared = logits_value.type.shape;

  const int positions = graph.add_value(kLogitPositionsInput);
  const graph::Dim batch = declared && declared->size() == 3 ? (*declared)[0] : graph::Dim::unknown();
  const graph::Dim one = graph::Dim::known(1);
  graph.values[positions].type = graph::TypeInfo::tensor(DataType::kInt64, graph::SymbolicShape{batch, one, one});
  graph.values[positions].is_graph_input = true;
  graph.inputs.push_back(positions);
  std::string rows_name = graph.values[hidden].name + "/logit_rows";
  while (graph.find_value(rows_name) != graph::kNoValue) rows_name += "_";
  const int rows = graph.add_value(rows_name);

  graph::Node gather;
  gather.name = graph.nodes[projection].name + "/logit_rows";
  gather.op_type = "GatherND";
  gather.domain = graph::kOnnxDomain;
  const auto onnx_opset = graph.opsets.find(graph::kOnnxDomain);
  gather.opset = static_cast<int>(std::max<int64_t>(13, onnx_opset != graph.opsets.end() ? onnx_opset->second : 0));
  gather.inputs = {hidden, positions};
  gather.outputs = {rows};
  gather.attributes.push_back(graph::make_int_attribute("batch_dims", 1));
  graph.nodes[projection].inputs[0] = rows;
  graph.nodes.insert(graph.nodes.begin() + projection, std::move(gather));
  if (declared && declared->size() == 3) (*graph.values[out].type.shape)[1] = graph::Dim::known(1);
  graph::rebuild_links(graph);
  return true;
}

Expected<Tensor> logit_positions_tensor(std::span<const int64_t> positions) {
  const int64_t batch = static_cast<int64_t>(positions.size());
  TRY_ASSIGN(Tensor t, Tensor::allocate(DataType::kInt64, Shape{batch, 1, 1}));
  std::copy(positions.begin(), positions.end(), t.data<int64_t>());
  return t;
}

}  // namespace nxrt::genai
