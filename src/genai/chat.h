// Chat formatting of a model folder: the chat template of tokenizer_config.json ("chat_template", a string or a
// list of named templates whose "default" one is used) or of chat_template.jinja, rendered with the messages, the
// tools, add_generation_prompt and the special tokens of tokenizer_config.json (bos_token, eos_token, unk_token,
// pad_token) as transformers' apply_chat_template does.
#pragma once

#include <string>

#include "core/status.h"
#include "genai/template.h"

namespace nxrt::genai {

class ChatFormatter {
 public:
  // NO_SUCHFILE when the folder has no tokenizer_config.json; INVALID_ARGUMENT when it has no chat template.
  static Expected<ChatFormatter> from_folder(const std::string& folder);
  // A template given as text, with the special tokens of `tokenizer_config_json` (may be empty).
  static Expected<ChatFormatter> from_source(const std::string& source, const std::string& tokenizer_config_json);

  // `messages_json`: a JSON list of {"role", "content", ...}; `tools_json`: a JSON list or empty.
  Expected<std::string> apply(const std::string& messages_json, bool add_generation_prompt,
                              const std::string& tools_json = "") const;

 private:
  ChatTemplate template_;
  TemplateValue specials_;  // a dict of the special-token strings
};

}  // namespace nxrt::genai
