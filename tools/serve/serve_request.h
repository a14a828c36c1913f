// OpenAI request bodies of `nxrt serve` (POST /v1/chat/completions and /v1/completions), parsed and validated
// before anything reaches the model: every field the server takes is checked for its JSON type and range, and a
// violation is an ApiError naming the field (HTTP 400; an unknown model is 404). Unknown fields are ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nxrt::serve {

// The OpenAI error object: {"error": {"message", "type", "param", "code"}} with an HTTP status.
struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // empty: null
  std::string code;   // empty: null
};

// What the request may ask of this server.
struct ServedModel {
  std::string id;              // the name clients give as "model"
  int64_t vocab_size = 0;
  int64_t context_length = 0;
  int64_t max_choices = 1;     // n (times the prompts of a completion) fits in one batch
};

struct CompletionRequest {
  bool chat = false;
  std::string model;
  // chat: the messages as a JSON list of {"role", "content": string} for the chat template (text parts joined).
  std::string messages_json;
  // completions: one or more prompts, each text or token ids.
  std::vector<std::string> prompt_texts;
  std::vector<std::vector<int32_t>> prompt_ids;
  bool prompt_is_ids = false;
  std::optional<int64_t> max_tokens;  // unset: what the context leaves
  int64_t n = 1;
  double temperature = 1.0, top_p = 1.0, min_p = 0.0;
  int64_t top_k = 0;  // 0: every token
  double presence_penalty = 0.0, frequency_penalty = 0.0, repetition_penalty = 1.0;
  std::optional<uint64_t> seed;
  std::vector<std::string> stop;  // at most 4, none empty
  std::vector<std::pair<int32_t, float>> logit_bias;
  int64_t logprobs = -1;  // < 0: none; else the number of alternatives per token (top_logprobs)
  bool echo = false;      // completions: the prompt text before the completion
  bool stream = false, include_usage = false;
};

// Parses `body` (at most `max_depth` nested arrays / objects, checked before parsing) for the chat route
// (`chat`) or the completions route.
std::optional<ApiError> parse_completion_request(const std::string& body, bool chat, const ServedModel& served,
                                                 CompletionRequest& request);

// A /tokenize body: {"prompt": text} (vLLM's name) or {"content": text} (llama.cpp's), and optionally
// "add_special_tokens": bool (default true). `field` names the one given.
struct TokenizeRequest {
  std::string text;
  const char* field = "prompt";
  bool add_special_tokens = true;
};
std::optional<ApiError> parse_tokenize_request(const std::string& body, TokenizeRequest& request);
// A /detokenize body: {"tokens": [ids]}.
std::optional<ApiError> parse_token_field(const std::string& body, const ServedModel& served,
                                          std::vector<int32_t>& tokens);

// The error as the response body.
std::string error_body(const ApiError& error);

}  // namespace nxrt::serve
