// genai_config.json of an ONNX Runtime GenAI model folder, read as onnxruntime_genai reads it for decoder-only
// models: model.type, the token ids (eos_token_id may be a list), vocab_size, context_length, model.decoder
// (filename, session_options, the layer and head counts, the input / output names with their defaults, past and
// present either per key / value or combined as past_%d / present_%d) and the "search" defaults. A missing required
// key or a value of the wrong kind is INVALID_ARGUMENT naming the key; sections nxrt does not run (encoder, vision,
// speech, embedding, pipeline) are NOT_IMPLEMENTED naming them. Unknown keys elsewhere are ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace nxrt::genai {

class JsonValue;

struct SearchOptions {
  int64_t max_length = 0;  // 0: the context length
  int64_t min_length = 0;
  bool do_sample = false;
  double temperature = 1.0, top_p = 1.0, min_p = 0.0;
  int64_t top_k = 50;
  double repetition_penalty = 1.0, presence_penalty = 0.0, frequency_penalty = 0.0;
  int64_t num_beams = 1, num_return_sequences = 1, no_repeat_ngram_size = 0;
  double length_penalty = 1.0, diversity_penalty = 0.0;
  bool early_stopping = true;
  bool past_present_share_buffer = false;
  std::optional<uint64_t> random_seed;
};

struct DecoderNames {
  std::string input_ids = "input_ids", inputs_embeds = "inputs_embeds", attention_mask = "attention_mask",
              position_ids = "position_ids";
  // Per-layer names with one %d; either key and value apart, or combined (past_%d: [2, B, Nk, S, H]).
  std::string past_key = "past_key_values.%d.key", past_value = "past_key_values.%d.value", past_combined;
  std::string logits = "logits", present_key = "present.%d.key", present_value = "present.%d.value",
              present_combined;
};

struct GenaiConfig {
  std::string folder;  // where genai_config.json was read, without a trailing slash
  std::string model_type;
  int64_t vocab_size = 0, context_length = 0;
  int32_t bos_token_id = -1, pad_token_id = -1;
  std::vector<int32_t> eos_token_ids;
  std::string decoder_filename;
  int64_t num_hidden_layers = 0, num_key_value_heads = 0, head_size = 0, num_attention_heads = 0, hidden_size = 0;
  int64_t intra_op_num_threads = 0;  // 0: the runtime's default
  DecoderNames names;
  SearchOptions search;

  // The decoder's path (folder / filename).
  std::string decoder_path() const { return folder + "/" + decoder_filename; }
};

// Reads FOLDER/genai_config.json.
Expected<GenaiConfig> load_genai_config(const std::string& folder);
// The same from a parsed document (`what` names it in errors).
Expected<GenaiConfig> genai_config_from_json(const JsonValue& json, const std::string& folder, std::string_view what);

// Search options of a JSON object (the "search" section, or a caller's overrides) over `s`; with `strict` an unknown
// key is INVALID_ARGUMENT naming it.
Status read_search_options(const JsonValue& object, std::string_view what, SearchOptions& s, bool strict);

// A per-layer name ("past_key_values.%d.key") for layer i; INVALID_ARGUMENT unless it holds exactly one %d.
Expected<std::string> layer_name(const std::string& pattern, int64_t layer);

}  // namespace nxrt::genai
