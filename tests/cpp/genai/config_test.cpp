// genai_config.json reading (genai/config.h): both cache layouts, defaults, the search section, and errors that
// name the key.
#include "genai/config.h"

#include <gtest/gtest.h>

#include <string>

#include "genai/json.h"

namespace nxrt::genai {
namespace {

Expected<GenaiConfig> from_text(const std::string& text) {
  auto json = parse_json(text, "genai_config.json");
  if (!json) return json.status();
  return genai_config_from_json(*json, "/models/m/", "genai_config.json");
}

const char* kBuilderStyle = R"({
  "model": {"type": "llama", "bos_token_id": 1, "eos_token_id": [2, 32000], "pad_token_id": 0, "vocab_size": 32064,
            "context_length": 4096,
            "decoder": {"filename": "model.onnx", "head_size": 64, "hidden_size": 768, "num_attention_heads": 12,
                        "num_hidden_layers": 12, "num_key_value_heads": 4,
                        "session_options": {"log_id": "x", "intra_op_num_threads": 2, "provider_options": []},
                        "inputs": {"input_ids": "input_ids", "attention_mask": "attention_mask",
                                   "past_key_names": "past_key_values.%d.key",
                                   "past_value_names": "past_key_values.%d.value"},
                        "outputs": {"logits": "logits", "present_key_names": "present.%d.key",
                                    "present_value_names": "present.%d.value"}}},
  "search": {"do_sample": false, "max_length": 8192, "top_k": 40, "temperature": 0.7, "num_beams": 1,
             "past_present_share_buffer": true, "random_seed": 42}})";

TEST(GenaiConfig, BuilderStyleFolder) {
  auto c = from_text(kBuilderStyle);
  ASSERT_TRUE(c.has_value()) << c.status().to_string();
  EXPECT_EQ(c->folder, "/models/m");
  EXPECT_EQ(c->decoder_path(), "/models/m/model.onnx");
  EXPECT_EQ(c->model_type, "llama");
  EXPECT_EQ(c->eos_token_ids, (std::vector<int32_t>{2, 32000}));
  EXPECT_EQ(c->num_hidden_layers, 12);
  EXPECT_EQ(c->intra_op_num_threads, 2);
  EXPECT_EQ(c->search.max_length, 4096);  // clamped to the context length
  EXPECT_EQ(c->search.top_k, 40);
  EXPECT_DOUBLE_EQ(c->search.temperature, 0.7);
  EXPECT_TRUE(c->search.past_present_share_buffer);
  EXPECT_EQ(c->search.random_seed, 42u);
  EXPECT_EQ(c->names.position_ids, "position_ids");  // a default
  EXPECT_EQ(*layer_name(c->names.past_key, 11), "past_key_values.11.key");
}

TEST(GenaiConfig, CombinedPastAndDefaults) {
  auto c = from_text(R"({"model": {"type": "gpt2", "eos_token_id": 98, "vocab_size": 1000, "context_length": 512,
    "decoder": {"filename": "past.onnx", "head_size": 8, "num_hidden_layers": 5, "num_key_value_heads": 4,
                "inputs": {"past_names": "past_%d"}, "outputs": {"present_names": "present_%d"}}}})");
  ASSERT_TRUE(c.has_value()) << c.status().to_string();
  EXPECT_EQ(c->names.past_combined, "past_%d");
  EXPECT_EQ(c->pad_token_id, 98);  // the first eos id without pad_token_id
  EXPECT_EQ(c->search.max_length, 512);
  EXPECT_EQ(c->search.top_k, 50);
  EXPECT_FALSE(c->search.random_seed.has_value());
}

TEST(GenaiConfig, ErrorsNameTheKey) {
  const struct {
    const char* text;
    const char* message;
    StatusCode code;
  } cases[] = {
      {R"({"model": {"type": "llama"}})", "model.vocab_size is required", StatusCode::kInvalidArgument},
      {R"({"search": {}})", "model is required", StatusCode::kInvalidArgument},
      {R"({"model": {"type": "llama", "vocab_size": 10, "context_length": 8, "eos_token_id": "x",
          "decoder": {}}})", "model.eos_token_id must be", StatusCode::kInvalidArgument},
      {R"({"model": {"type": "llama", "vocab_size": 10, "context_length": 8, "eos_token_id": 1,
          "decoder": {"filename": "m.onnx", "head_size": 8, "num_hidden_layers": 0, "num_key_value_heads": 1}}})",
       "model.decoder.num_hidden_layers must be an integer of at least 1", StatusCode::kInvalidArgument},
      {R"({"model": {"type": "llama", "vocab_size": 10, "context_length": 8, "eos_token_id": 1,
          "decoder": {"filename": "../m.onnx", "head_size": 8, "num_hidden_layers": 1, "num_key_value_heads": 1}}})",
       "model.decoder.filename must be a file inside", StatusCode::kInvalidArgument},
      {R"({"model": {"type": "llama", "vocab_size": 10, "context_length": 8, "eos_token_id": 1,
          "decoder": {"filename": "m.onnx", "head_size": 8, "num_hidden_layers": 1, "num_key_value_heads": 1,
                      "inputs": {"past_key_names": "past.key"}}}})",
       "must hold one %d", StatusCode::kInvalidArgument},
      {R"({"model": {"type": "llama", "vocab_size": 10, "context_length": 8, "eos_token_id": 1,
          "decoder": {"filename": "m.onnx", "head_size": 8, "num_hidden_layers": 1, "num_key_value_heads": 1}},
          "search": {"temperature": -1}})", "search.temperature must be", StatusCode::kInvalidArgument},
      {R"({"model": {"type": "whisper", "encoder": {}, "vocab_size": 10}})", "model.encoder (model type 'whisper')",
       StatusCode::kNotImplemented},
      {R"({"model": {"type": "llama", "vocab_size": 10, "context_length": 8, "eos_token_id": [2, 50256],
          "decoder": {}}})", "model.eos_token_id must be below vocab_size 10", StatusCode::kInvalidArgument},
  };
  for (const auto& c : cases) {
    auto config = from_text(c.text);
    ASSERT_FALSE(config.has_value()) << c.text;
    EXPECT_EQ(config.status().code(), c.code) << config.status().to_string();
    EXPECT_NE(config.status().message().find(c.message), std::string::npos) << config.status().message();
  }
}

TEST(GenaiConfig, SharedGpt2Fixture) {
  // ONNX Runtime GenAI's own CPU test model, beside the repository (../shared/genai).
  const std::string here = __FILE__;
  const std::string folder = here.substr(0, here.rfind("/tests/cpp/")) + "/../shared/genai/tiny-random-gpt2-fp32";
  auto c = load_genai_config(folder);
  if (!c.has_value() && c.status().code() == StatusCode::kNoSuchFile) GTEST_SKIP() << "no fixture at " << folder;
  ASSERT_TRUE(c.has_value()) << c.status().to_string();
  EXPECT_EQ(c->model_type, "gpt2");
  EXPECT_EQ(c->num_hidden_layers, 5);
  EXPECT_EQ(c->names.past_combined, "past_%d");
  EXPECT_EQ(c->eos_token_ids, std::vector<int32_t>{98});
}

TEST(GenaiConfig, MissingFolderIsNoSuchFile) {
  auto c = load_genai_config("/nonexistent/model");
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.status().code(), StatusCode::kNoSuchFile);
  EXPECT_NE(c.status().message().find("/nonexistent/model/genai_config.json"), std::string::npos);
}

}  // namespace
}  // namespace nxrt::genai
