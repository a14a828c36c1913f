// The nxrt.genai C API (include/nxrt/nxrt_genai.h) over src/genai.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "capi/c_api_internal.h"
#include "genai/chat.h"
#include "genai/generator.h"
#include "genai/json.h"
#include "nxrt/nxrt_genai.h"

struct NxrtGenaiModel {
  std::shared_ptr<const nxrt::genai::Model> model;
};

struct NxrtGenaiGenerator {
  std::shared_ptr<const nxrt::genai::Model> model;
  std::unique_ptr<nxrt::genai::Generator> generator;
  std::optional<nxrt::genai::TokenizerStream> stream;
  std::string piece;  // the text nxrt_genai_next_text lent last
};

namespace {

using nxrt::capi::guard;
using nxrt::capi::null_argument;
using nxrt::capi::to_c_status;

NxrtStatus* no_tokenizer(const nxrt::genai::Model& model) {
  return nxrt::capi::make_c_status(NXRT_NO_SUCHFILE, model.config().folder + "/tokenizer.json: the model folder has "
                                                                             "no tokenizer");
}

// A malloc'ed copy, released with free() by the nxrt_genai_release_* functions.
template <class T>
T* malloc_copy(const T* data, size_t count) {
  T* out = static_cast<T*>(std::malloc(std::max<size_t>(count, 1) * sizeof(T)));
  if (out == nullptr) throw std::bad_alloc();
  if (count > 0) std::memcpy(out, data, count * sizeof(T));
  return out;
}

}  // namespace

extern "C" {

NxrtStatus* nxrt_genai_create_model(const char* folder, int threads, NxrtGenaiModel** out) {
  if (folder == nullptr) return null_argument("nxrt_genai_create_model", "folder");
  if (out == nullptr) return null_argument("nxrt_genai_create_model", "out");
  return guard([&]() -> NxrtStatus* {
    auto model = nxrt::genai::Model::load(folder, threads);
    if (!model) return to_c_status(model.status());
    *out = new NxrtGenaiModel{std::move(*model)};
    return nullptr;
  });
}

void nxrt_genai_release_model(NxrtGenaiModel* model) { delete model; }

NxrtStatus* nxrt_genai_encode(const NxrtGenaiModel* model, const char* text, int add_special_tokens, int32_t** ids,
                              size_t* count) {
  if (model == nullptr) return null_argument("nxrt_genai_encode", "model");
  if (text == nullptr) return null_argument("nxrt_genai_encode", "text");
  if (ids == nullptr || count == nullptr) return null_argument("nxrt_genai_encode", ids == nullptr ? "ids" : "count");
  return guard([&]() -> NxrtStatus* {
    const nxrt::genai::Tokenizer* tokenizer = model->model->tokenizer();
    if (tokenizer == nullptr) return no_tokenizer(*model->model);
    auto encoded = tokenizer->encode(text, add_special_tokens != 0);
    if (!encoded) return to_c_status(encoded.status());
    *ids = malloc_copy(encoded->data(), encoded->size());
    *count = encoded->size();
    return nullptr;
  });
}

void nxrt_genai_release_tokens(int32_t* ids) { std::free(ids); }

NxrtStatus* nxrt_genai_decode(const NxrtGenaiModel* model, const int32_t* ids, size_t count, int skip_special_tokens,
                              char** text) {
  if (model == nullptr) return null_argument("nxrt_genai_decode", "model");
  if (ids == nullptr && count > 0) return null_argument("nxrt_genai_decode", "ids");
  if (text == nullptr) return null_argument("nxrt_genai_decode", "text");
  return guard([&]() -> NxrtStatus* {
    const nxrt::genai::Tokenizer* tokenizer = model->model->tokenizer();
    if (tokenizer == nullptr) return no_tokenizer(*model->model);
    auto decoded = tokenizer->decode(std::span<const int32_t>(ids, count), skip_special_tokens != 0);
    if (!decoded) return to_c_status(decoded.status());
    *text = malloc_copy(decoded->c_str(), decoded->size() + 1);
    return nullptr;
  });
}

NxrtStatus* nxrt_genai_apply_chat_template(const NxrtGenaiModel* model, const char* messages_json,
                                           const char* tools_json, int add_generation_prompt, char** text) {
  if (model == nullptr) return null_argument("nxrt_genai_apply_chat_template", "model");
  if (messages_json == nullptr) return null_argument("nxrt_genai_apply_chat_template", "messages_json");
  if (text == nullptr) return null_argument("nxrt_genai_apply_chat_template", "text");
  return guard([&]() -> NxrtStatus* {
    auto formatter = nxrt::genai::ChatFormatter::from_folder(model->model->config().folder);
    if (!formatter) return to_c_status(formatter.status());
    auto rendered = formatter->apply(messages_json, add_generation_prompt != 0, tools_json != nullptr ? tools_json : "");
    if (!rendered) return to_c_status(rendered.status());
    *text = malloc_copy(rendered->c_str(), rendered->size() + 1);
    return nullptr;
  });
}

void nxrt_genai_release_string(char* text) { std::free(text); }

NxrtStatus* nxrt_genai_create_generator(const NxrtGenaiModel* model, const char* search_options_json,
                                        NxrtGenaiGenerator** out) {
  if (model == nullptr) return null_argument("nxrt_genai_create_generator", "model");
  if (out == nullptr) return null_argument("nxrt_genai_create_generator", "out");
  return guard([&]() -> NxrtStatus* {
    nxrt::genai::SearchOptions search = model->model->config().search;
    if (search_options_json != nullptr && search_options_json[0] != '\0') {
      auto options = nxrt::genai::parse_json(search_options_json, "search options");
      if (!options) return to_c_status(options.status());
      const nxrt::Status read = nxrt::genai::read_search_options(*options, "search options", search, true);
      if (!read.is_ok()) return to_c_status(read);
    }
    auto generator = nxrt::genai::Generator::create(model->model, search);
    if (!generator) return to_c_status(generator.status());
    auto handle = std::make_unique<NxrtGenaiGenerator>();
    handle->model = model->model;
    handle->generator = std::move(*generator);
    if (model->model->tokenizer() != nullptr) handle->stream.emplace(*model->model->tokenizer());
    *out = handle.release();
    return nullptr;
  });
}

void nxrt_genai_release_generator(NxrtGenaiGenerator* generator) { delete generator; }

NxrtStatus* nxrt_genai_append_tokens(NxrtGenaiGenerator* generator, const int32_t* ids, size_t count) {
  if (generator == nullptr) return null_argument("nxrt_genai_append_tokens", "generator");
  if (ids == nullptr && count > 0) return null_argument("nxrt_genai_append_tokens", "ids");
  return guard([&]() -> NxrtStatus* {
    return to_c_status(generator->generator->append_tokens({std::vector<int32_t>(ids, ids + count)}));
  });
}

NxrtStatus* nxrt_genai_append_text(NxrtGenaiGenerator* generator, const char* text) {
  if (generator == nullptr) return null_argument("nxrt_genai_append_text", "generator");
  if (text == nullptr) return null_argument("nxrt_genai_append_text", "text");
  return guard([&]() -> NxrtStatus* {
    const nxrt::genai::Tokenizer* tokenizer = generator->model->tokenizer();
    if (tokenizer == nullptr) return no_tokenizer(*generator->model);
    // Special tokens (a template's BOS) only in front of the prompt.
    auto ids = tokenizer->encode(text, generator->generator->batch_size() == 0);
    if (!ids) return to_c_status(ids.status());
    return to_c_status(generator->generator->append_tokens({*ids}));
  });
}

NxrtStatus* nxrt_genai_generate_next_token(NxrtGenaiGenerator* generator) {
  if (generator == nullptr) return null_argument("nxrt_genai_generate_next_token", "generator");
  return guard([&]() -> NxrtStatus* { return to_c_status(generator->generator->generate_next_token()); });
}

NxrtStatus* nxrt_genai_rewind_to(NxrtGenaiGenerator* generator, size_t length) {
  if (generator == nullptr) return null_argument("nxrt_genai_rewind_to", "generator");
  return guard([&]() -> NxrtStatus* {
    return to_c_status(generator->generator->rewind_to(static_cast<int64_t>(std::min<size_t>(length, INT64_MAX))));
  });
}

int nxrt_genai_is_done(const NxrtGenaiGenerator* generator) {
  return generator == nullptr || generator->generator->is_done() ? 1 : 0;
}

NxrtStatus* nxrt_genai_next_token(const NxrtGenaiGenerator* generator, int32_t* token) {
  if (generator == nullptr) return null_argument("nxrt_genai_next_token", "generator");
  if (token == nullptr) return null_argument("nxrt_genai_next_token", "token");
  if (generator->generator->batch_size() == 0) {
    return nxrt::capi::make_c_status(NXRT_INVALID_ARGUMENT, "nxrt_genai_next_token: no tokens yet");
  }
  *token = generator->generator->next_tokens()[0];
  return nullptr;
}

NxrtStatus* nxrt_genai_next_text(NxrtGenaiGenerator* generator, const char** text) {
  if (generator == nullptr) return null_argument("nxrt_genai_next_text", "generator");
  if (text == nullptr) return null_argument("nxrt_genai_next_text", "text");
  return guard([&]() -> NxrtStatus* {
    if (!generator->stream) return no_tokenizer(*generator->model);
    if (generator->generator->batch_size() == 0) {
      return nxrt::capi::make_c_status(NXRT_INVALID_ARGUMENT, "nxrt_genai_next_text: no tokens yet");
    }
    auto piece = generator->stream->decode_next(generator->generator->next_tokens()[0]);
    if (!piece) return to_c_status(piece.status());
    generator->piece = std::move(*piece);
    *text = generator->piece.c_str();
    return nullptr;
  });
}

NxrtStatus* nxrt_genai_sequence(const NxrtGenaiGenerator* generator, const int32_t** ids, size_t* count) {
  if (generator == nullptr) return null_argument("nxrt_genai_sequence", "generator");
  if (ids == nullptr || count == nullptr) return null_argument("nxrt_genai_sequence", ids == nullptr ? "ids" : "count");
  if (generator->generator->batch_size() == 0) {
    *ids = nullptr;
    *count = 0;
    return nullptr;
  }
  const auto tokens = generator->generator->sequence(0);
  *ids = tokens.data();
  *count = tokens.size();
  return nullptr;
}

}  // extern "C"
