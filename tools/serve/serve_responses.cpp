// OpenAI response and chunk bodies (contracts in serve_responses.h).
#include "serve_responses.h"

namespace nxrt::serve {

using nlohmann::json;

std::string ResponseWriter::token_text(int32_t id) const {
  if (tokenizer_ == nullptr) return std::to_string(id);
  const int32_t ids[1] = {id};
  auto text = tokenizer_->decode(ids, false);
  return text ? *text : std::string();
}

json ResponseWriter::logprobs(const std::vector<TokenInfo>& tokens, size_t text_offset) const {
  const auto bytes = [](const std::string& s) {
    json list = json::array();
    for (const unsigned char c : s) list.push_back(c);
    return list;
  };
  if (head_.chat) {
    json content = json::array();
    for (const TokenInfo& t : tokens) {
      const std::string text = token_text(t.id);
      json top = json::array();
      for (const auto& [id, lp] : t.top) {
        const std::string alt = token_text(id);
        top.push_back({{"token", alt}, {"logprob", lp}, {"bytes", bytes(alt)}});
      }
      content.push_back({{"token", text}, {"logprob", t.logprob}, {"bytes", bytes(text)}, {"top_logprobs", top}});
    }
    return {{"content", content}};
  }
  json texts = json::array(), values = json::array(), tops = json::array(), offsets = json::array();
  for (const TokenInfo& t : tokens) {
    const std::string text = token_text(t.id);
    texts.push_back(text);
    values.push_back(t.logprob);
    json top = json::object();
    for (const auto& [id, lp] : t.top) top[token_text(id)] = lp;
    tops.push_back(top);
    offsets.push_back(text_offset);
    text_offset += text.size();
  }
  return {{"tokens", texts}, {"token_logprobs", values}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

json ResponseWriter::usage(int64_t prompt_tokens, int64_t completion_tokens, int64_t cached_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", cached_tokens}}}};
}

json ResponseWriter::response(const std::vector<FinishedChoice>& choices, int64_t prompt_tokens,
                              int64_t cached_tokens) const {
  json list = json::array();
  int64_t completion_tokens = 0;
  for (size_t i = 0; i < choices.size(); ++i) {
    const FinishedChoice& c = choices[i];
    completion_tokens += c.generated;
    json choice = {{"index", i}, {"finish_reason", c.finish}, {"logprobs", nullptr}};
    if (!c.tokens.empty()) choice["logprobs"] = logprobs(c.tokens, 0);
    if (head_.chat) {
      choice["message"] = {{"role", "assistant"}, {"content", c.text}};
    } else {
      choice["text"] = c.text;
    }
    list.push_back(std::move(choice));
  }
  return {{"id", head_.id},
          {"object", head_.chat ? "chat.completion" : "text_completion"},
          {"created", head_.created},
          {"model", head_.model},
          {"system_fingerprint", "nxrt"},
          {"choices", list},
          {"usage", usage(prompt_tokens, completion_tokens, cached_tokens)}};
}

json ResponseWriter::chunk(json choice) const {
  json c = {{"id", head_.id},
            {"object", head_.chat ? "chat.completion.chunk" : "text_completion"},
            {"created", head_.created},
            {"model", head_.model},
            {"system_fingerprint", "nxrt"},
            {"choices", json::array({std::move(choice)})}};
  if (head_.include_usage) c["usage"] = nullptr;
  return c;
}

json ResponseWriter::role_chunk(int64_t index) const {
  return chunk({{"index", index},
                {"delta", {{"role", "assistant"}, {"content", ""}}},
                {"logprobs", nullptr},
                {"finish_reason", nullptr}});
}

json ResponseWriter::text_chunk(int64_t index, const std::string& text, const std::vector<TokenInfo>& tokens,
                                bool with_logprobs, size_t text_offset) const {
  json choice = {{"index", index}, {"logprobs", nullptr}, {"finish_reason", nullptr}};
  if (with_logprobs) choice["logprobs"] = logprobs(tokens, text_offset);
  if (head_.chat) {
    choice["delta"] = {{"content", text}};
  } else {
    choice["text"] = text;
  }
  return chunk(std::move(choice));
}

json ResponseWriter::finish_chunk(int64_t index, const std::string& finish) const {
  json choice = {{"index", index}, {"logprobs", nullptr}, {"finish_reason", finish}};
  if (head_.chat) {
    choice["delta"] = json::object();
  } else {
    choice["text"] = "";
  }
  return chunk(std::move(choice));
}

json ResponseWriter::usage_chunk(int64_t prompt_tokens, int64_t completion_tokens, int64_t cached_tokens) const {
  return {{"id", head_.id},
          {"object", head_.chat ? "chat.completion.chunk" : "text_completion"},
          {"created", head_.created},
          {"model", head_.model},
          {"system_fingerprint", "nxrt"},
          {"choices", json::array()},
          {"usage", usage(prompt_tokens, completion_tokens, cached_tokens)}};
}

std::string ResponseWriter::event(const json& value) {
  return "data: " + value.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

}  // namespace nxrt::serve
