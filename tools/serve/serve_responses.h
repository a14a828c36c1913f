// JSON bodies of the OpenAI completion routes: whole responses, stream chunks and the usage object, for both
// chat.completion and text_completion shapes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "genai/tokenizer.h"
#include "serve_scheduler.h"

namespace nxrt::serve {

// What one response is about.
struct ResponseHead {
  bool chat = false;
  std::string id, model;
  int64_t created = 0;
  bool include_usage = false;  // stream chunks carry "usage": null
};

// A choice once generation ended.
struct FinishedChoice {
  std::string text, finish;
  std::vector<TokenInfo> tokens;
  int64_t generated = 0;
};

class ResponseWriter {
 public:
  ResponseWriter(ResponseHead head, const genai::Tokenizer* tokenizer) : head_(std::move(head)), tokenizer_(tokenizer) {}

  // Whole response of `choices` (index order) with usage.
  nlohmann::json response(const std::vector<FinishedChoice>& choices, int64_t prompt_tokens,
                          int64_t cached_tokens) const;
  // The first chunk of a chat choice: the assistant role and empty content.
  nlohmann::json role_chunk(int64_t index) const;
  // A chunk with new text (and its tokens' log-probabilities when asked) for choice `index`.
  nlohmann::json text_chunk(int64_t index, const std::string& text, const std::vector<TokenInfo>& tokens,
                            bool with_logprobs, size_t text_offset) const;
  // The last chunk of a choice: empty delta / text and the finish reason.
  nlohmann::json finish_chunk(int64_t index, const std::string& finish) const;
  // The chunk after every choice when stream_options.include_usage: no choices, the usage.
  nlohmann::json usage_chunk(int64_t prompt_tokens, int64_t completion_tokens, int64_t cached_tokens) const;

  // cached_tokens: prompt tokens whose cache was reused (usage.prompt_tokens_details.cached_tokens).
  static nlohmann::json usage(int64_t prompt_tokens, int64_t completion_tokens, int64_t cached_tokens);
  // "data: JSON\n\n" with invalid UTF-8 replaced.
  static std::string event(const nlohmann::json& value);

 private:
  nlohmann::json chunk(nlohmann::json choice) const;
  nlohmann::json logprobs(const std::vector<TokenInfo>& tokens, size_t text_offset) const;
  std::string token_text(int32_t id) const;

  ResponseHead head_;
  const genai::Tokenizer* tokenizer_;
};

}  // namespace nxrt::serve
