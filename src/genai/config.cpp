// genai_config.json reading (contract in config.h).
#include "genai/config.h"

#include <algorithm>
#include <cmath>

#include "genai/json.h"

namespace nxrt::genai {

namespace {

// Reads members of one JSON object into typed fields, naming "path.key" in errors.
class Reader {
 public:
  Reader(const JsonValue& object, std::string path, std::string_view what)
      : object_(object), path_(std::move(path)), what_(what) {}

  Status integer(std::string_view key, int64_t& out, bool required = false, int64_t low = 0) const {
    const JsonValue* v = object_.find(key);
    if (v == nullptr || v->is_null()) return required ? missing(key) : Status::ok();
    if (!v->as_int() || *v->as_int() < low) return wrong(key, "an integer of at least " + std::to_string(low));
    out = *v->as_int();
    return Status::ok();
  }

  Status number(std::string_view key, double& out, double low = -INFINITY) const {
    const JsonValue* v = object_.find(key);
    if (v == nullptr || v->is_null()) return Status::ok();
    if (!v->is_number() || !std::isfinite(v->as_number()) || v->as_number() < low) return wrong(key, "a finite number");
    out = v->as_number();
    return Status::ok();
  }

  Status boolean(std::string_view key, bool& out) const {
    const JsonValue* v = object_.find(key);
    if (v == nullptr || v->is_null()) return Status::ok();
    if (!v->is_bool()) return wrong(key, "true or false");
    out = v->as_bool();
    return Status::ok();
  }

  Status string(std::string_view key, std::string& out, bool required = false) const {
    const JsonValue* v = object_.find(key);
    if (v == nullptr || v->is_null()) return required ? missing(key) : Status::ok();
    if (!v->is_string() || v->as_string().empty()) return wrong(key, "a nonempty string");
    out = v->as_string();
    return Status::ok();
  }

  // A member that must be an object when present (null when absent).
  Expected<const JsonValue*> object(std::string_view key, bool required = false) const {
    const JsonValue* v = object_.find(key);
    if (v == nullptr || v->is_null()) {
      if (required) return missing(key);
      return static_cast<const JsonValue*>(nullptr);
    }
    if (!v->is_object()) return wrong(key, "an object");
    return v;
  }

  std::string child(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  Status missing(std::string_view key) const {
    return make_error(StatusCode::kInvalidArgument, what_, ": ", child(key), " is required");
  }
  Status wrong(std::string_view key, const std::string& expected) const {
    return make_error(StatusCode::kInvalidArgument, what_, ": ", child(key), " must be ", expected);
  }

 private:
  const JsonValue& object_;
  std::string path_;
  std::string_view what_;
};

Status read_token_ids(const JsonValue& model, std::string_view what, GenaiConfig& c) {
  const Reader r(model, "model", what);
  int64_t bos = -1, pad = -1;
  TRY(r.integer("bos_token_id", bos, false, -1));
  TRY(r.integer("pad_token_id", pad, false, -1));
  if (bos > INT32_MAX || pad > INT32_MAX) return r.wrong("bos_token_id", "an id below 2^31");
  c.bos_token_id = static_cast<int32_t>(bos);
  c.pad_token_id = static_cast<int32_t>(pad);
  const JsonValue* eos = model.find("eos_token_id");
  if (eos == nullptr || eos->is_null()) return r.missing("eos_token_id");
  const std::vector<JsonValue> single{eos->is_array() ? JsonValue() : *eos};
  for (const JsonValue& id : eos->is_array() ? eos->items() : single) {
    if (!id.as_int() || *id.as_int() < 0 || *id.as_int() > INT32_MAX) {
      return r.wrong("eos_token_id", "a token id or a list of them");
    }
    c.eos_token_ids.push_back(static_cast<int32_t>(*id.as_int()));
  }
  if (c.eos_token_ids.empty()) return r.wrong("eos_token_id", "a token id or a nonempty list of them");
  if (c.pad_token_id < 0) c.pad_token_id = c.eos_token_ids.front();
  // As onnxruntime_genai, every special id must be a token of the model.
  for (const int32_t id : c.eos_token_ids) {
    if (id >= c.vocab_size) return r.wrong("eos_token_id", "below vocab_size " + std::to_string(c.vocab_size));
  }
  if (c.pad_token_id >= c.vocab_size || c.bos_token_id >= c.vocab_size) {
    return r.wrong(c.pad_token_id >= c.vocab_size ? "pad_token_id" : "bos_token_id",
                   "below vocab_size " + std::to_string(c.vocab_size));
  }
  return Status::ok();
}

Status read_decoder(const JsonValue& decoder, std::string_view what, GenaiConfig& c) {
  const Reader r(decoder, "model.decoder", what);
  TRY(r.string("filename", c.decoder_filename, true));
  if (c.decoder_filename.find("..") != std::string::npos || c.decoder_filename.front() == '/') {
    return r.wrong("filename", "a file inside the model folder");
  }
  TRY(r.integer("num_hidden_layers", c.num_hidden_layers, true, 1));
  TRY(r.integer("head_size", c.head_size, true, 1));
  TRY(r.integer("num_key_value_heads", c.num_key_value_heads, true, 1));
  TRY(r.integer("num_attention_heads", c.num_attention_heads, false, 1));
  TRY(r.integer("hidden_size", c.hidden_size, false, 1));
  if (c.num_hidden_layers > 4096 || c.num_key_value_heads > 65536 || c.head_size > 65536) {
    return make_error(StatusCode::kInvalidArgument, what, ": model.decoder layer or head counts are out of range");
  }
  TRY_ASSIGN(const JsonValue* options, r.object("session_options"));
  if (options != nullptr) {
    TRY(Reader(*options, "model.decoder.session_options", what)
            .integer("intra_op_num_threads", c.intra_op_num_threads, false, 0));
  }
  TRY_ASSIGN(const JsonValue* inputs, r.object("inputs"));
  if (inputs != nullptr) {
    const Reader in(*inputs, "model.decoder.inputs", what);
    TRY(in.string("input_ids", c.names.input_ids));
    TRY(in.string("inputs_embeds", c.names.inputs_embeds));
    TRY(in.string("attention_mask", c.names.attention_mask));
    TRY(in.string("position_ids", c.names.position_ids));
    TRY(in.string("past_key_names", c.names.past_key));
    TRY(in.string("past_value_names", c.names.past_value));
    TRY(in.string("past_names", c.names.past_combined));
  }
  TRY_ASSIGN(const JsonValue* outputs, r.object("outputs"));
  if (outputs != nullptr) {
    const Reader out(*outputs, "model.decoder.outputs", what);
    TRY(out.string("logits", c.names.logits));
    TRY(out.string("present_key_names", c.names.present_key));
    TRY(out.string("present_value_names", c.names.present_value));
    TRY(out.string("present_names", c.names.present_combined));
  }
  if (c.names.past_combined.empty() != c.names.present_combined.empty()) {
    return make_error(StatusCode::kInvalidArgument, what, ": model.decoder.inputs.past_names and ",
                      "outputs.present_names come together");
  }
  for (const std::string* pattern : {&c.names.past_key, &c.names.past_value, &c.names.past_combined,
                                     &c.names.present_key, &c.names.present_value, &c.names.present_combined}) {
    if (!pattern->empty()) TRY(layer_name(*pattern, 0).status());
  }
  return Status::ok();
}

}  // namespace

Status read_search_options(const JsonValue& search, std::string_view what, SearchOptions& s, bool strict) {
  if (!search.is_object()) return make_error(StatusCode::kInvalidArgument, what, ": search options must be an object");
  if (strict) {
    static const char* const kKnown[] = {
        "max_length", "min_length", "do_sample", "temperature", "top_p", "min_p", "top_k", "repetition_penalty",
        "presence_penalty", "frequency_penalty", "num_beams", "num_return_sequences", "no_repeat_ngram_size",
        "length_penalty", "diversity_penalty", "early_stopping", "past_present_share_buffer", "random_seed"};
    for (const auto& [key, value] : search.members()) {
      if (std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown)) {
        return make_error(StatusCode::kInvalidArgument, what, ": unknown search option '", key, "'");
      }
    }
  }
  const Reader r(search, "search", what);
  TRY(r.integer("max_length", s.max_length));
  TRY(r.integer("min_length", s.min_length));
  TRY(r.boolean("do_sample", s.do_sample));
  TRY(r.number("temperature", s.temperature, 0.0));
  TRY(r.number("top_p", s.top_p, 0.0));
  TRY(r.number("min_p", s.min_p, 0.0));
  TRY(r.integer("top_k", s.top_k));
  TRY(r.number("repetition_penalty", s.repetition_penalty, 0.0));
  TRY(r.number("presence_penalty", s.presence_penalty));
  TRY(r.number("frequency_penalty", s.frequency_penalty));
  TRY(r.integer("num_beams", s.num_beams, false, 1));
  TRY(r.integer("num_return_sequences", s.num_return_sequences, false, 1));
  TRY(r.integer("no_repeat_ngram_size", s.no_repeat_ngram_size));
  TRY(r.number("length_penalty", s.length_penalty));
  TRY(r.number("diversity_penalty", s.diversity_penalty));
  TRY(r.boolean("early_stopping", s.early_stopping));
  TRY(r.boolean("past_present_share_buffer", s.past_present_share_buffer));
  int64_t seed = -1;
  TRY(r.integer("random_seed", seed, false, -1));
  if (seed >= 0) s.random_seed = static_cast<uint64_t>(seed);
  return Status::ok();
}


Expected<std::string> layer_name(const std::string& pattern, int64_t layer) {
  const size_t at = pattern.find("%d");
  if (at == std::string::npos || pattern.find('%', at + 2) != std::string::npos ||
      pattern.find('%') != at) {
    return make_error(StatusCode::kInvalidArgument, "genai_config.json: the layer name pattern '", pattern,
                      "' must hold one %d");
  }
  return pattern.substr(0, at) + std::to_string(layer) + pattern.substr(at + 2);
}

Expected<GenaiConfig> genai_config_from_json(const JsonValue& json, const std::string& folder, std::string_view what) {
  if (!json.is_object()) return make_error(StatusCode::kInvalidArgument, what, ": the document must be an object");
  GenaiConfig c;
  c.folder = folder;
  while (c.folder.size() > 1 && c.folder.back() == '/') c.folder.pop_back();
  const Reader root(json, "", what);
  TRY_ASSIGN(const JsonValue* model, root.object("model", true));
  const Reader r(*model, "model", what);
  TRY(r.string("type", c.model_type, true));
  for (const char* section : {"encoder", "vision", "speech", "embedding", "pipeline", "decoder_pipeline"}) {
    if (const JsonValue* v = model->find(section); v != nullptr && !v->is_null()) {
      return make_error(StatusCode::kNotImplemented, what, ": model.", section, " (model type '", c.model_type,
                        "') is not supported: nxrt.genai runs decoder-only models");
    }
  }
  TRY(r.integer("vocab_size", c.vocab_size, true, 1));
  TRY(r.integer("context_length", c.context_length, true, 1));
  TRY(read_token_ids(*model, what, c));
  TRY_ASSIGN(const JsonValue* decoder, r.object("decoder", true));
  TRY(read_decoder(*decoder, what, c));
  TRY_ASSIGN(const JsonValue* search, root.object("search"));
  if (search != nullptr) TRY(read_search_options(*search, what, c.search, false));
  if (c.search.max_length == 0 || c.search.max_length > c.context_length) c.search.max_length = c.context_length;
  return c;
}

Expected<GenaiConfig> load_genai_config(const std::string& folder) {
  const std::string path = folder + "/genai_config.json";
  TRY_ASSIGN(const JsonValue json, read_json_file(path));
  return genai_config_from_json(json, folder, path);
}

}  // namespace nxrt::genai
