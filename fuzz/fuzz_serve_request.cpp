// libFuzzer entry point: the request parsing and validation of `nxrt serve` (tools/serve/serve_request.h) on
// arbitrary bytes. The first byte picks the route (chat completions, completions, /tokenize, /detokenize) and the
// rest is the request body. Every body must yield a request or an ApiError whose error body serializes; crashes,
// hangs, sanitizer reports and accepted requests outside the validated ranges are bugs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "serve_request.h"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

void check_request(const nxrt::serve::CompletionRequest& r, const nxrt::serve::ServedModel& served) {
  require(r.n >= 1 && r.n <= served.max_choices);
  require(!r.max_tokens || (*r.max_tokens >= 1 && *r.max_tokens <= served.context_length));
  require(r.temperature >= 0.0 && r.temperature <= 2.0 && r.top_p > 0.0 && r.top_p <= 1.0);
  require(r.stop.size() <= 4);
  for (const std::string& s : r.stop) require(!s.empty());
  for (const auto& [token, bias] : r.logit_bias) require(token >= 0 && token < served.vocab_size && bias >= -100 && bias <= 100);
  for (const auto& prompt : r.prompt_ids) {
    for (const int32_t t : prompt) require(t >= 0 && t < served.vocab_size);
  }
  require(r.chat ? !r.messages_json.empty() : !(r.prompt_ids.empty() && r.prompt_texts.empty()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const nxrt::serve::ServedModel served{"m", 1000, 512, 8};
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::optional<nxrt::serve::ApiError> error;
  switch (data[0] % 4) {
    case 0:
    case 1: {
      nxrt::serve::CompletionRequest request;
      error = nxrt::serve::parse_completion_request(body, data[0] % 4 == 0, served, request);
      if (!error) check_request(request, served);
      break;
    }
    case 2: {
      nxrt::serve::TokenizeRequest request;
      error = nxrt::serve::parse_tokenize_request(body, request);
      break;
    }
    default: {
      std::vector<int32_t> tokens;
      error = nxrt::serve::parse_token_field(body, served, tokens);
      for (const int32_t t : tokens) require(t >= 0 && t < served.vocab_size);
      break;
    }
  }
  if (error) {
    require(error->status == 400 || error->status == 404);
    require(!nxrt::serve::error_body(*error).empty());
  }
  return 0;
}
