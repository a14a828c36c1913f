// nxrt._nxrt.GenaiTokenizer: the C++ tokenizer of nxrt.genai (src/genai/tokenizer.h) as seen from Python.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nanobind/stl/shared_ptr.h>

#include "errors.h"
#include "genai/chat.h"
#include "genai/generator.h"
#include "genai/json.h"
#include "genai/tokenizer.h"

namespace nb = nanobind;

namespace nxrt::python {

namespace {

// Search options from the model's defaults with the given ones (onnxruntime_genai's set_search_options names).
genai::SearchOptions search_options(const genai::Model& model, const nb::dict& given) {
  genai::SearchOptions s = model.config().search;
  for (const auto& [key_handle, value] : given) {
    const std::string key = nb::cast<std::string>(key_handle);
    if (key == "max_length") s.max_length = nb::cast<int64_t>(value);
    else if (key == "min_length") s.min_length = nb::cast<int64_t>(value);
    else if (key == "do_sample") s.do_sample = nb::cast<bool>(value);
    else if (key == "temperature") s.temperature = nb::cast<double>(value);
    else if (key == "top_k") s.top_k = nb::cast<int64_t>(value);
    else if (key == "top_p") s.top_p = nb::cast<double>(value);
    else if (key == "min_p") s.min_p = nb::cast<double>(value);
    else if (key == "repetition_penalty") s.repetition_penalty = nb::cast<double>(value);
    else if (key == "presence_penalty") s.presence_penalty = nb::cast<double>(value);
    else if (key == "frequency_penalty") s.frequency_penalty = nb::cast<double>(value);
    else if (key == "num_beams") s.num_beams = nb::cast<int64_t>(value);
    else if (key == "num_return_sequences") s.num_return_sequences = nb::cast<int64_t>(value);
    else if (key == "past_present_share_buffer") s.past_present_share_buffer = nb::cast<bool>(value);
    else if (key == "random_seed") s.random_seed = static_cast<uint64_t>(nb::cast<int64_t>(value));
    else if (key == "early_stopping") s.early_stopping = nb::cast<bool>(value);
    else if (key == "length_penalty") s.length_penalty = nb::cast<double>(value);
    else throw_status(StatusCode::kInvalidArgument, "unknown search option '" + key + "'");
  }
  return s;
}

}  // namespace

void register_genai(nb::module_& m) {
  nb::class_<genai::Tokenizer>(m, "GenaiTokenizer", "A tokenizer read from a tokenizer.json.")
      .def_static(
          "from_file",
          [](const std::string& path) {
            nb::gil_scoped_release release;
            return value_or_throw(genai::Tokenizer::from_file(path));
          },
          nb::arg("path"))
      .def_static(
          "from_json_text",
          [](const std::string& text) {
            nb::gil_scoped_release release;
            const genai::JsonValue json = value_or_throw(genai::parse_json(text, "tokenizer.json"));
            return value_or_throw(genai::Tokenizer::from_json(json, "tokenizer.json"));
          },
          nb::arg("text"))
      .def(
          "encode",
          [](const genai::Tokenizer& t, const std::string& text, bool add_special_tokens) {
            nb::gil_scoped_release release;
            return value_or_throw(t.encode(text, add_special_tokens));
          },
          nb::arg("text"), nb::arg("add_special_tokens") = true)
      .def(
          "decode",
          [](const genai::Tokenizer& t, const std::vector<int32_t>& ids, bool skip_special_tokens) {
            std::string text;
            {
              nb::gil_scoped_release release;
              text = value_or_throw(t.decode(ids, skip_special_tokens));
            }
            return text;
          },
          nb::arg("ids"), nb::arg("skip_special_tokens") = false)
      .def(
          "token_to_id", [](const genai::Tokenizer& t, const std::string& token) { return t.token_to_id(token); },
          nb::arg("token"))
      .def("id_to_token", &genai::Tokenizer::id_to_token, nb::arg("id"))
      .def_prop_ro("vocab_size", &genai::Tokenizer::vocab_size);
  nb::class_<genai::TokenizerStream>(m, "GenaiTokenizerStream", "Incremental decoding of generated tokens.")
      .def(nb::init<const genai::Tokenizer&, bool>(), nb::arg("tokenizer"), nb::arg("skip_special_tokens") = true,
           nb::keep_alive<1, 2>())
      .def(
          "decode",
          [](genai::TokenizerStream& stream, int32_t id) {
            std::string text;
            {
              nb::gil_scoped_release release;
              text = value_or_throw(stream.decode_next(id));
            }
            return text;
          },
          nb::arg("id"));
  nb::class_<genai::ChatFormatter>(m, "GenaiChatFormatter", "The chat template of a model folder.")
      .def_static(
          "from_folder",
          [](const std::string& folder) { return value_or_throw(genai::ChatFormatter::from_folder(folder)); },
          nb::arg("folder"))
      .def_static(
          "from_source",
          [](const std::string& source, const std::string& config) {
            return value_or_throw(genai::ChatFormatter::from_source(source, config));
          },
          nb::arg("source"), nb::arg("tokenizer_config") = "")
      .def(
          "apply",
          [](const genai::ChatFormatter& f, const std::string& messages, bool add_generation_prompt,
             const std::string& tools) {
            nb::gil_scoped_release release;
            return value_or_throw(f.apply(messages, add_generation_prompt, tools));
          },
          nb::arg("messages"), nb::arg("add_generation_prompt") = true, nb::arg("tools") = "");
  nb::class_<genai::Model>(m, "GenaiModel", "A generative model folder (genai_config.json, decoder, tokenizer).")
      .def_static(
          "load",
          [](const std::string& folder, int threads) {
            nb::gil_scoped_release release;
            return std::const_pointer_cast<genai::Model>(value_or_throw(genai::Model::load(folder, threads)));
          },
          nb::arg("folder"), nb::arg("threads") = 0)
      .def_prop_ro("type", [](const genai::Model& model) { return model.config().model_type; })
      .def_prop_ro("vocab_size", [](const genai::Model& model) { return model.config().vocab_size; })
      .def_prop_ro("context_length", [](const genai::Model& model) { return model.config().context_length; })
      .def_prop_ro("eos_token_ids", [](const genai::Model& model) { return model.config().eos_token_ids; });
  nb::class_<genai::Generator>(m, "GenaiGenerator", "Token generation over a GenaiModel.")
      .def(
          "__init__",
          [](genai::Generator* self, std::shared_ptr<genai::Model> model, const nb::dict& options) {
            auto generator = value_or_throw(genai::Generator::create(model, search_options(*model, options)));
            new (self) genai::Generator(std::move(*generator));
          },
          nb::arg("model"), nb::arg("options") = nb::dict())
      .def(
          "append_tokens",
          [](genai::Generator& g, const std::vector<std::vector<int32_t>>& prompts) {
            nb::gil_scoped_release release;
            throw_if_error(g.append_tokens(prompts));
          },
          nb::arg("prompts"))
      .def("generate_next_token",
           [](genai::Generator& g) {
             nb::gil_scoped_release release;
             throw_if_error(g.generate_next_token());
           })
      .def("is_done", &genai::Generator::is_done)
      .def(
          "rewind_to", [](genai::Generator& g, int64_t length) { throw_if_error(g.rewind_to(length)); },
          nb::arg("length"))
      .def("get_sequence",
           [](const genai::Generator& g, int64_t i) {
             if (i < 0 || i >= g.batch_size()) throw_status(StatusCode::kInvalidArgument, "no such sequence");
             const auto tokens = g.sequence(i);
             return std::vector<int32_t>(tokens.begin(), tokens.end());
           },
           nb::arg("index"))
      .def("get_next_tokens", &genai::Generator::next_tokens)
      .def("get_logits", [](const genai::Generator& g) { return g.logits(); });
}

}  // namespace nxrt::python
