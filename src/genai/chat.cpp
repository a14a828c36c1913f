// Chat formatting from a model folder (contract in chat.h).
#include "genai/chat.h"

#include <fstream>
#include <sstream>

#include "genai/json.h"

namespace nxrt::genai {

namespace {

// The special tokens of tokenizer_config.json: strings, or AddedToken objects with a "content".
TemplateValue special_tokens(const JsonValue* config) {
  TemplateValue specials = TemplateValue::dict();
  if (config == nullptr || !config->is_object()) return specials;
  for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token"}) {
    const JsonValue* v = config->find(key);
    if (v != nullptr && v->is_object()) v = v->find("content");
    if (v != nullptr && v->is_string()) specials.set(key, TemplateValue::string(v->as_string()));
  }
  return specials;
}

Expected<JsonValue> parse_list(const std::string& text, std::string_view what) {
  TRY_ASSIGN(JsonValue json, parse_json(text, what));
  if (!json.is_array()) return make_error(StatusCode::kInvalidArgument, what, ": a JSON list is expected");
  return json;
}

}  // namespace

Expected<ChatFormatter> ChatFormatter::from_source(const std::string& source, const std::string& config_json) {
  ChatFormatter formatter;
  TRY_ASSIGN(formatter.template_, ChatTemplate::parse(source));
  if (!config_json.empty()) {
    TRY_ASSIGN(const JsonValue config, parse_json(config_json, "tokenizer_config.json"));
    formatter.specials_ = special_tokens(&config);
  } else {
    formatter.specials_ = TemplateValue::dict();
  }
  return formatter;
}

Expected<ChatFormatter> ChatFormatter::from_folder(const std::string& folder) {
  const std::string config_path = folder + "/tokenizer_config.json";
  TRY_ASSIGN(const JsonValue config, read_json_file(config_path));
  std::string source;
  const JsonValue* chat = config.find("chat_template");
  if (chat != nullptr && chat->is_string()) {
    source = chat->as_string();
  } else if (chat != nullptr && chat->is_array()) {
    for (const JsonValue& entry : chat->items()) {
      const JsonValue* name = entry.find("name");
      const JsonValue* text = entry.find("template");
      if (name != nullptr && name->is_string() && name->as_string() == "default" && text != nullptr &&
          text->is_string()) {
        source = text->as_string();
      }
    }
  }
  if (source.empty()) {
    std::ifstream file(folder + "/chat_template.jinja", std::ios::binary);
    if (file) {
      std::ostringstream text;
      text << file.rdbuf();
      source = text.str();
    }
  }
  if (source.empty()) {
    return make_error(StatusCode::kInvalidArgument, config_path, ": no chat_template (nor chat_template.jinja)");
  }
  ChatFormatter formatter;
  auto parsed = ChatTemplate::parse(source);
  if (!parsed) return parsed.status().with_context(config_path + ": ");
  formatter.template_ = std::move(*parsed);
  formatter.specials_ = special_tokens(&config);
  return formatter;
}

Expected<std::string> ChatFormatter::apply(const std::string& messages_json, bool add_generation_prompt,
                                           const std::string& tools_json) const {
  TRY_ASSIGN(const JsonValue messages, parse_list(messages_json, "messages"));
  TemplateValue context = TemplateValue::dict();
  for (const auto& [key, value] : specials_.members()) context.set(key, value);
  context.set("messages", TemplateValue::from_json(messages));
  context.set("add_generation_prompt", TemplateValue::boolean(add_generation_prompt));
  // As transformers does, tools and documents are None (defined) when not given.
  context.set("tools", TemplateValue::none());
  context.set("documents", TemplateValue::none());
  if (!tools_json.empty()) {
    TRY_ASSIGN(const JsonValue tools, parse_list(tools_json, "tools"));
    context.set("tools", TemplateValue::from_json(tools));
  }
  return template_.render(context);
}

}  // namespace nxrt::genai
