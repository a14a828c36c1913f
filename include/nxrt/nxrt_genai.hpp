// Header-only C++17 wrapper over the nxrt.genai C API (nxrt_genai.h), in the style of nxrt.hpp: RAII owners, and
// a non-NULL status becomes an nxrt::cxx::Error.
//
//   nxrt::cxx::GenaiModel model("phi3-int4");
//   nxrt::cxx::GenaiGenerator generator(model, R"({"max_length": 256})");
//   generator.append_text(model.apply_chat_template(R"([{"role": "user", "content": "Hi"}])"));
//   while (!generator.is_done()) {
//     generator.generate_next_token();
//     std::cout << generator.next_text() << std::flush;
//   }
#ifndef NXRT_NXRT_GENAI_HPP_
#define NXRT_NXRT_GENAI_HPP_

#include <string>
#include <vector>

#include "nxrt/nxrt.hpp"
#include "nxrt/nxrt_genai.h"

namespace nxrt {
namespace cxx {

class GenaiModel {
 public:
  explicit GenaiModel(const std::string& folder, int threads = 0) {
    NxrtGenaiModel* model = nullptr;
    detail::check(nxrt_genai_create_model(folder.c_str(), threads, &model));
    model_.reset(model);
  }
  const NxrtGenaiModel* get() const { return model_.get(); }

  std::vector<int32_t> encode(const std::string& text, bool add_special_tokens = true) const {
    int32_t* ids = nullptr;
    size_t count = 0;
    detail::check(nxrt_genai_encode(model_.get(), text.c_str(), add_special_tokens ? 1 : 0, &ids, &count));
    std::vector<int32_t> out(ids, ids + count);
    nxrt_genai_release_tokens(ids);
    return out;
  }
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = true) const {
    char* text = nullptr;
    detail::check(nxrt_genai_decode(model_.get(), ids.data(), ids.size(), skip_special_tokens ? 1 : 0, &text));
    return owned(text);
  }
  std::string apply_chat_template(const std::string& messages_json, bool add_generation_prompt = true,
                                  const std::string& tools_json = "") const {
    char* text = nullptr;
    detail::check(nxrt_genai_apply_chat_template(model_.get(), messages_json.c_str(),
                                         tools_json.empty() ? nullptr : tools_json.c_str(),
                                         add_generation_prompt ? 1 : 0, &text));
    return owned(text);
  }

 private:
  static std::string owned(char* text) {
    std::string out(text);
    nxrt_genai_release_string(text);
    return out;
  }
  struct Release {
    void operator()(NxrtGenaiModel* m) const { nxrt_genai_release_model(m); }
  };
  std::unique_ptr<NxrtGenaiModel, Release> model_;
};

class GenaiGenerator {
 public:
  // The model must outlive the generator.
  explicit GenaiGenerator(const GenaiModel& model, const std::string& search_options_json = "") {
    NxrtGenaiGenerator* generator = nullptr;
    detail::check(nxrt_genai_create_generator(model.get(), search_options_json.c_str(), &generator));
    generator_.reset(generator);
  }
  void append_tokens(const std::vector<int32_t>& ids) {
    detail::check(nxrt_genai_append_tokens(generator_.get(), ids.data(), ids.size()));
  }
  void append_text(const std::string& text) { detail::check(nxrt_genai_append_text(generator_.get(), text.c_str())); }
  void generate_next_token() { detail::check(nxrt_genai_generate_next_token(generator_.get())); }
  bool is_done() const { return nxrt_genai_is_done(generator_.get()) != 0; }
  void rewind_to(size_t length) { detail::check(nxrt_genai_rewind_to(generator_.get(), length)); }
  int32_t next_token() const {
    int32_t token = 0;
    detail::check(nxrt_genai_next_token(generator_.get(), &token));
    return token;
  }
  std::string next_text() {
    const char* text = nullptr;
    detail::check(nxrt_genai_next_text(generator_.get(), &text));
    return text;
  }
  std::vector<int32_t> sequence() const {
    const int32_t* ids = nullptr;
    size_t count = 0;
    detail::check(nxrt_genai_sequence(generator_.get(), &ids, &count));
    return std::vector<int32_t>(ids, ids + count);
  }

 private:
  struct Release {
    void operator()(NxrtGenaiGenerator* g) const { nxrt_genai_release_generator(g); }
  };
  std::unique_ptr<NxrtGenaiGenerator, Release> generator_;
};

}  // namespace cxx
}  // namespace nxrt

#endif  // NXRT_NXRT_GENAI_HPP_
