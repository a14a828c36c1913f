// gather_logit_rows (genai/decoder_tensors.h) through SessionOptions::edit_graph: a decoder whose logits come from a
// row-wise projection returns the rows named by the added positions input, equal to those rows of the full run;
// other graphs are left as they are; and the genai Model uses it on ONNX Runtime GenAI's GPT-2 test folder.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "genai/decoder_tensors.h"
#include "genai/generator.h"
#include "onnx/model_writer.h"
#include "session/session.h"

namespace nxrt::genai {
namespace {

namespace w = onnx::write;

constexpr int64_t kHidden = 3, kVocab = 4;

// hidden = x + 1 ([batch, positions, 3]); logits = hidden x W (W: 3 x 4, or a graph input when `weight_input`).
w::Model projection_model(bool weight_input) {
  std::vector<float> weight(kHidden * kVocab);
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = 0.25f * static_cast<float>(i) - 1.0f;
  w::Model model;
  model.graph.inputs = {{"x", 1, {std::string("batch"), std::string("positions"), kHidden}}};
  if (weight_input) {
    model.graph.inputs.push_back({"w", 1, {kHidden, kVocab}});
  } else {
    model.graph.initializers = {w::float_tensor("w", {kHidden, kVocab}, weight)};
  }
  model.graph.initializers.push_back(w::float_tensor("one", {}, {1.0f}));
  model.graph.outputs = {{"logits", 1, {std::string("batch"), std::string("positions"), kVocab}}};
  model.graph.nodes = {{"Add", {"x", "one"}, {"hidden"}, {}, "add", ""},
                       {"MatMul", {"hidden", "w"}, {"logits"}, {}, "lm_head", ""}};
  return model;
}

struct Narrowed {
  std::unique_ptr<Session> session;
  bool gathered = false;
};

Narrowed narrowed_session(const w::Model& model) {
  Narrowed out;
  SessionOptions options;
  options.edit_graph = [&out](graph::Graph& graph) {
    out.gathered = gather_logit_rows(graph, "logits");
    return Status::ok();
  };
  auto session = Session::create_from_bytes(w::encode_model(model), options);
  EXPECT_TRUE(session.has_value()) << session.status().to_string();
  if (session) out.session = std::move(*session);
  return out;
}

Tensor input_tensor(int64_t batch, int64_t positions) {
  Tensor x = *Tensor::allocate(DataType::kFloat32, Shape{batch, positions, kHidden});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = 0.5f * static_cast<float>(i % 7) - 1.5f;
  return x;
}

TEST(LogitRows, ReturnsTheRowsEachSequenceAsksFor) {
  const Narrowed narrowed = narrowed_session(projection_model(false));
  ASSERT_TRUE(narrowed.session);
  ASSERT_TRUE(narrowed.gathered);
  const auto& inputs = narrowed.session->inputs();
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[1].name, kLogitPositionsInput);
  EXPECT_EQ(graph::symbolic_shape_to_string(*narrowed.session->outputs()[0].type.shape), "[batch,1,4]");

  auto full = Session::create_from_bytes(w::encode_model(projection_model(false)));
  ASSERT_TRUE(full.has_value());
  const int64_t batch = 3, positions = 5;
  const Tensor x = input_tensor(batch, positions);
  const std::vector<std::string> x_name{"x"};
  auto all = (*full)->run(x_name, std::vector<Tensor>{x}, {});
  ASSERT_TRUE(all.has_value()) << all.status().to_string();

  const std::vector<int64_t> wanted{4, 0, 2};
  const std::vector<std::string> names{"x", kLogitPositionsInput};
  auto rows = narrowed.session->run(names, std::vector<Tensor>{x, *logit_positions_tensor(wanted)}, {});
  ASSERT_TRUE(rows.has_value()) << rows.status().to_string();
  ASSERT_EQ((*rows)[0].shape(), (Shape{batch, 1, kVocab}));
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<float> expected(kVocab), got(kVocab);
    position_logits((*all)[0], b, wanted[static_cast<size_t>(b)], kVocab, expected.data());
    last_position_logits((*rows)[0], b, kVocab, got.data());
    EXPECT_EQ(got, expected) << "row " << b;
  }

  // A position past the run's positions is an error naming the gather, not a read out of bounds.
  const std::vector<int64_t> outside{5, 0, 0};
  auto bad = narrowed.session->run(names, std::vector<Tensor>{x, *logit_positions_tensor(outside)}, {});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("GatherND"), std::string::npos) << bad.status().message();
}

TEST(LogitRows, LeavesOtherGraphsUnchanged) {
  // The projection's weight is not an initializer: it may mix positions, so nothing is gathered.
  const Narrowed by_input = narrowed_session(projection_model(true));
  ASSERT_TRUE(by_input.session);
  EXPECT_FALSE(by_input.gathered);
  EXPECT_EQ(by_input.session->inputs().size(), 2u);

  // The logits are also read by another node.
  w::Model read_twice = projection_model(false);
  read_twice.graph.nodes.push_back({"Relu", {"logits"}, {"relu"}, {}, "relu", ""});
  read_twice.graph.outputs.push_back({"relu", 1, {std::string("batch"), std::string("positions"), kVocab}});
  const Narrowed twice = narrowed_session(read_twice);
  ASSERT_TRUE(twice.session);
  EXPECT_FALSE(twice.gathered);

  // The model already has a value of the input's name.
  w::Model taken = projection_model(false);
  taken.graph.nodes[0].outputs = {kLogitPositionsInput};
  taken.graph.nodes[1].inputs[0] = kLogitPositionsInput;
  const Narrowed named = narrowed_session(taken);
  ASSERT_TRUE(named.session);
  EXPECT_FALSE(named.gathered);
}

TEST(LogitRows, TheGenaiModelGathersTheGpt2FixturesLogits) {
  const std::string here = __FILE__;
  const std::string folder = here.substr(0, here.rfind("/tests/cpp/")) + "/../shared/genai/tiny-random-gpt2-fp32";
  auto model = Model::load(folder, 1);
  if (!model) GTEST_SKIP() << "no shared genai fixture: " << model.status().to_string();
  EXPECT_TRUE((*model)->io().logit_positions);
  EXPECT_EQ((*model)->io().feeds.back(), kLogitPositionsInput);
}

}  // namespace
}  // namespace nxrt::genai
