// nxrt._nxrt.GenaiTokenizer: the C++ tokenizer of nxrt.genai (src/genai/tokenizer.h) as seen from Python.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <vector>

#include "errors.h"
#include "genai/json.h"
#include "genai/tokenizer.h"

namespace nb = nanobind;

namespace nxrt::python {

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
}

}  // namespace nxrt::python
