// OpenAI request parsing and validation (contracts in serve_request.h).
#include "serve_request.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace nxrt::serve {

namespace {

using nlohmann::json;

constexpr int kMaxDepth = 64;

// True when `body` nests arrays / objects deeper than `limit` (strings and escapes skipped), so that nothing
// recursive ever sees a deeper document.
bool nests_deeper_than(const std::string& body, int limit) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

ApiError invalid(const std::string& param, const std::string& message) {
  return ApiError{400, message, "invalid_request_error", param, ""};
}

std::optional<ApiError> parse_object(const std::string& body, json& out) {
  if (nests_deeper_than(body, kMaxDepth)) {
    return invalid("", "the request body nests deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  try {
    out = json::parse(body);
  } catch (const json::exception& e) {  // parse errors, and numbers past the range of a double
    return invalid("", std::string("the request body is not valid JSON: ") + e.what());
  }
  if (!out.is_object()) return invalid("", "the request body must be a JSON object");
  return std::nullopt;
}

// Reads an optional number field within [low, high].
std::optional<ApiError> number(const json& body, const char* name, double low, double high, double& out) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) return invalid(name, std::string("'") + name + "' must be a number");
  const double value = it->get<double>();
  if (!(value >= low && value <= high)) {
    return invalid(name, std::string("'") + name + "' must lie in [" + json(low).dump() + ", " + json(high).dump() +
                             "], got " + json(value).dump());
  }
  out = value;
  return std::nullopt;
}

std::optional<ApiError> integer(const json& body, const char* name, int64_t low, int64_t high,
                                std::optional<int64_t>& out) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer()) return invalid(name, std::string("'") + name + "' must be an integer");
  // Unsigned values past INT64_MAX are above every bound; the others convert exactly.
  const bool too_large = it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX);
  const int64_t value = too_large ? INT64_MAX : it->get<int64_t>();
  if ((too_large && high < INT64_MAX) || value < low || value > high) {
    return invalid(name, std::string("'") + name + "' must lie in [" + std::to_string(low) + ", " +
                             std::to_string(high) + "], got " + it->dump());
  }
  out = value;
  return std::nullopt;
}

std::optional<ApiError> boolean(const json& body, const char* name, bool& out) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean()) return invalid(name, std::string("'") + name + "' must be true or false");
  out = it->get<bool>();
  return std::nullopt;
}

std::optional<ApiError> token_list(const json& list, const char* name, int64_t vocab, std::vector<int32_t>& out) {
  if (!list.is_array()) return invalid(name, std::string("'") + name + "' must be a list of token ids");
  for (const json& t : list) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= vocab || (t.is_number_unsigned() &&
        t.get<uint64_t>() >= static_cast<uint64_t>(vocab))) {
      return invalid(name, std::string("'") + name + "' holds " + t.dump() + ", not a token id in [0, " +
                               std::to_string(vocab) + ")");
    }
    out.push_back(static_cast<int32_t>(t.get<int64_t>()));
  }
  return std::nullopt;
}

// messages: [{"role": system | developer | user | assistant | tool, "content": string | [text parts] | null}].
std::optional<ApiError> messages(const json& body, CompletionRequest& request) {
  const auto it = body.find("messages");
  if (it == body.end()) return invalid("messages", "'messages' is required");
  if (!it->is_array() || it->empty()) return invalid("messages", "'messages' must be a non-empty list");
  json normalized = json::array();
  for (size_t i = 0; i < it->size(); ++i) {
    const json& message = (*it)[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!message.is_object()) return invalid(where, "'" + where + "' must be an object");
    const auto role = message.find("role");
    if (role == message.end() || !role->is_string()) return invalid(where + ".role", "'" + where + ".role' is required");
    const std::string r = role->get<std::string>();
    if (r != "system" && r != "developer" && r != "user" && r != "assistant" && r != "tool") {
      return invalid(where + ".role", "'" + where + ".role' must be system, developer, user, assistant or tool, got '" +
                                          r + "'");
    }
    std::string text;
    const auto content = message.find("content");
    if (content == message.end() || content->is_null()) {
      if (r != "assistant") return invalid(where + ".content", "'" + where + ".content' is required");
    } else if (content->is_string()) {
      text = content->get<std::string>();
    } else if (content->is_array()) {
      for (const json& part : *content) {
        const auto type = part.is_object() ? part.find("type") : part.end();
        const auto part_text = part.is_object() ? part.find("text") : part.end();
        if (type == part.end() || !type->is_string() || type->get<std::string>() != "text" || part_text == part.end() ||
            !part_text->is_string()) {
          return invalid(where + ".content", "'" + where + ".content' parts must be {\"type\": \"text\", \"text\": ...}");
        }
        text += part_text->get<std::string>();
      }
    } else {
      return invalid(where + ".content", "'" + where + ".content' must be a string or a list of text parts");
    }
    normalized.push_back({{"role", r == "developer" ? "system" : r}, {"content", text}});
  }
  request.messages_json = normalized.dump();
  return std::nullopt;
}

// prompt: a string, a list of strings, a list of token ids, or a list of token-id lists.
std::optional<ApiError> prompts(const json& body, int64_t vocab, CompletionRequest& request) {
  const auto it = body.find("prompt");
  if (it == body.end()) return invalid("prompt", "'prompt' is required");
  if (it->is_string()) {
    request.prompt_texts.push_back(it->get<std::string>());
    return std::nullopt;
  }
  if (!it->is_array() || it->empty()) return invalid("prompt", "'prompt' must be a string or a non-empty list");
  if ((*it)[0].is_number()) {
    request.prompt_is_ids = true;
    request.prompt_ids.emplace_back();
    return token_list(*it, "prompt", vocab, request.prompt_ids.back());
  }
  for (const json& p : *it) {
    if (p.is_string() && !request.prompt_is_ids) {
      request.prompt_texts.push_back(p.get<std::string>());
    } else if (p.is_array() && request.prompt_texts.empty()) {
      request.prompt_is_ids = true;
      request.prompt_ids.emplace_back();
      if (auto e = token_list(p, "prompt", vocab, request.prompt_ids.back())) return e;
    } else {
      return invalid("prompt", "'prompt' must list only strings or only token-id lists");
    }
  }
  return std::nullopt;
}

std::optional<ApiError> stop_strings(const json& body, CompletionRequest& request) {
  const auto it = body.find("stop");
  if (it == body.end() || it->is_null()) return std::nullopt;
  const json list = it->is_string() ? json::array({*it}) : *it;
  if (!list.is_array() || list.size() > 4) return invalid("stop", "'stop' must be a string or a list of at most 4");
  for (const json& s : list) {
    if (!s.is_string() || s.get<std::string>().empty()) return invalid("stop", "'stop' strings must be non-empty strings");
    request.stop.push_back(s.get<std::string>());
  }
  return std::nullopt;
}

std::optional<ApiError> logit_bias(const json& body, int64_t vocab, CompletionRequest& request) {
  const auto it = body.find("logit_bias");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_object() || it->size() > 300) return invalid("logit_bias", "'logit_bias' must map at most 300 token ids");
  for (const auto& [key, value] : it->items()) {
    size_t used = 0;
    long long id = -1;
    try {
      id = std::stoll(key, &used);
    } catch (...) {
      used = 0;
    }
    if (used != key.size() || key.empty() || id < 0 || id >= vocab) {
      return invalid("logit_bias", "'logit_bias' key '" + key + "' is not a token id in [0, " + std::to_string(vocab) + ")");
    }
    if (!value.is_number() || !(value.get<double>() >= -100.0 && value.get<double>() <= 100.0)) {
      return invalid("logit_bias", "'logit_bias' values must lie in [-100, 100]");
    }
    request.logit_bias.emplace_back(static_cast<int32_t>(id), value.get<float>());
  }
  return std::nullopt;
}

std::optional<ApiError> sampling(const json& body, bool chat, CompletionRequest& r) {
  std::optional<int64_t> value;
  if (auto e = number(body, "temperature", 0.0, 2.0, r.temperature)) return e;
  if (auto e = number(body, "top_p", 0.0, 1.0, r.top_p)) return e;
  if (r.top_p <= 0.0) return invalid("top_p", "'top_p' must be above 0");
  if (auto e = number(body, "min_p", 0.0, 1.0, r.min_p)) return e;
  if (auto e = number(body, "presence_penalty", -2.0, 2.0, r.presence_penalty)) return e;
  if (auto e = number(body, "frequency_penalty", -2.0, 2.0, r.frequency_penalty)) return e;
  if (auto e = number(body, "repetition_penalty", 0.01, 100.0, r.repetition_penalty)) return e;
  if (auto e = integer(body, "top_k", -1, 1 << 30, value)) return e;
  if (value) r.top_k = std::max<int64_t>(*value, 0);
  value.reset();
  if (auto e = integer(body, "seed", INT64_MIN, INT64_MAX, value)) return e;
  if (value) r.seed = static_cast<uint64_t>(*value);
  if (chat) {
    bool wanted = false;
    if (auto e = boolean(body, "logprobs", wanted)) return e;
    value.reset();
    if (auto e = integer(body, "top_logprobs", 0, 20, value)) return e;
    if (value && !wanted) return invalid("top_logprobs", "'top_logprobs' needs 'logprobs': true");
    if (wanted) r.logprobs = value.value_or(0);
  } else {
    value.reset();
    if (auto e = integer(body, "logprobs", 0, 5, value)) return e;
    if (value) r.logprobs = *value;
    if (auto e = boolean(body, "echo", r.echo)) return e;
  }
  return std::nullopt;
}

// Fields this server cannot honour are refused rather than ignored: an answer that silently breaks the asked-for
// format (JSON mode, a tool call) is worse for a client than a clear 400.
std::optional<ApiError> unsupported_features(const json& body) {
  const auto format = body.find("response_format");
  if (format != body.end() && !format->is_null()) {
    const auto type = format->is_object() ? format->find("type") : format->end();
    if (type == format->end() || !type->is_string()) {
      return invalid("response_format", "'response_format' must be an object with a string 'type'");
    }
    if (*type != "text") {
      return invalid("response_format", "'response_format' type '" + type->get<std::string>() +
                                            "' is not supported by this server (only 'text')");
    }
  }
  const auto tools = body.find("tools");
  const auto choice = body.find("tool_choice");
  const bool no_tool_call = choice != body.end() && choice->is_string() && *choice == "none";
  if (tools != body.end() && !tools->is_null() && !(tools->is_array() && tools->empty()) && !no_tool_call) {
    return invalid("tools", "tool calls are not supported by this server; send no 'tools' or 'tool_choice': 'none'");
  }
  const auto functions = body.find("functions");
  if (functions != body.end() && !functions->is_null()) {
    return invalid("functions", "function calls are not supported by this server");
  }
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> parse_completion_request(const std::string& body, bool chat, const ServedModel& served,
                                                 CompletionRequest& r) {
  json doc;
  if (auto e = parse_object(body, doc)) return e;
  r.chat = chat;
  const auto model = doc.find("model");
  if (model == doc.end() || !model->is_string()) return invalid("model", "'model' is required (a string)");
  r.model = model->get<std::string>();
  if (r.model != served.id) {
    return ApiError{404, "The model '" + r.model + "' does not exist; this server serves '" + served.id + "'",
                    "invalid_request_error", "model", "model_not_found"};
  }
  if (auto e = chat ? messages(doc, r) : prompts(doc, served.vocab_size, r)) return e;
  if (auto e = unsupported_features(doc)) return e;
  std::optional<int64_t> value;
  const char* length_field = chat && doc.contains("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  if (auto e = integer(doc, length_field, 1, served.context_length, value)) return e;
  r.max_tokens = value;
  if (!chat && !r.max_tokens) r.max_tokens = 16;  // the completions API's default
  value.reset();
  if (auto e = integer(doc, "n", 1, 128, value)) return e;
  r.n = value.value_or(1);
  const int64_t prompts = chat ? 1 : static_cast<int64_t>(r.prompt_is_ids ? r.prompt_ids.size() : r.prompt_texts.size());
  if (r.n * prompts > served.max_choices) {
    return invalid(r.n > served.max_choices ? "n" : "prompt",
                   "this server decodes at most " + std::to_string(served.max_choices) +
                       " sequences per request (n times the prompts)");
  }
  if (auto e = sampling(doc, chat, r)) return e;
  if (auto e = stop_strings(doc, r)) return e;
  if (auto e = logit_bias(doc, served.vocab_size, r)) return e;
  if (auto e = boolean(doc, "stream", r.stream)) return e;
  const auto options = doc.find("stream_options");
  if (options != doc.end() && !options->is_null()) {
    if (!options->is_object()) return invalid("stream_options", "'stream_options' must be an object");
    if (!r.stream) return invalid("stream_options", "'stream_options' needs 'stream': true");
    if (auto e = boolean(*options, "include_usage", r.include_usage)) return e;
  }
  return std::nullopt;
}

std::optional<ApiError> parse_tokenize_request(const std::string& body, TokenizeRequest& request) {
  json doc;
  if (auto e = parse_object(body, doc)) return e;
  const auto prompt = doc.find("prompt");
  const auto content = doc.find("content");
  if (prompt != doc.end() && prompt->is_string()) {
    request.text = prompt->get<std::string>();
  } else if (content != doc.end() && content->is_string()) {
    request.field = "content";
    request.text = content->get<std::string>();
  } else {
    return invalid("prompt", "'prompt' must be a string");
  }
  const auto special = doc.find("add_special_tokens");
  if (special != doc.end()) {
    if (!special->is_boolean()) return invalid("add_special_tokens", "'add_special_tokens' must be true or false");
    request.add_special_tokens = special->get<bool>();
  }
  return std::nullopt;
}

std::optional<ApiError> parse_token_field(const std::string& body, const ServedModel& served,
                                          std::vector<int32_t>& tokens) {
  json doc;
  if (auto e = parse_object(body, doc)) return e;
  const auto it = doc.find("tokens");
  if (it == doc.end()) return invalid("tokens", "'tokens' is required");
  return token_list(*it, "tokens", served.vocab_size, tokens);
}

std::string error_body(const ApiError& error) {
  json e = {{"message", error.message}, {"type", error.type}, {"param", nullptr}, {"code", nullptr}};
  if (!error.param.empty()) e["param"] = error.param;
  if (!error.code.empty()) e["code"] = error.code;
  return json{{"error", e}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace nxrt::serve
