// `nxrt generate FOLDER`: text generation over an ONNX Runtime GenAI model folder (src/genai), streaming the new
// text to stdout and the prefill and decode speeds to stderr.
#include <algorithm>
#include <chrono>
#include <memory>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "genai/chat.h"
#include "genai/generator.h"
#include "genai/template_value.h"

namespace nxrt::cli {

namespace {

struct GenerateArgs {
  std::string folder, prompt, system;
  bool chat = false, interactive = false;
  std::vector<int32_t> prompt_ids;
  int64_t max_new_tokens = 128;
  int threads = 0;
  bool quiet = false;
  std::vector<std::pair<std::string, std::string>> search;  // option name (without --), value
};

Expected<std::vector<int32_t>> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  size_t from = 0;
  while (from <= text.size()) {
    const size_t comma = std::min(text.find(',', from), text.size());
    const auto id = parse_int(text.substr(from, comma - from));
    if (!id || *id < 0 || *id > INT32_MAX) {
      return usage_error(generate_command_spec(), "--prompt-ids must be token ids separated by commas");
    }
    ids.push_back(static_cast<int32_t>(*id));
    from = comma + 1;
  }
  return ids;
}

Expected<double> parse_number(const std::string& name, const std::string& text) {
  try {
    size_t used = 0;
    const double value = std::stod(text, &used);
    if (used == text.size()) return value;
  } catch (...) {
  }
  return usage_error(generate_command_spec(), name + " needs a number, got '" + text + "'");
}

Status apply_search(const std::vector<std::pair<std::string, std::string>>& given, genai::SearchOptions& s) {
  for (const auto& [name, value] : given) {
    TRY_ASSIGN(const double number, parse_number("--" + name, value));
    if (name == "temperature") {
      s.temperature = number;
      s.do_sample = number > 0.0;
    } else if (name == "top-k") {
      s.top_k = static_cast<int64_t>(number);
    } else if (name == "top-p") {
      s.top_p = number;
    } else if (name == "min-p") {
      s.min_p = number;
    } else if (name == "repetition-penalty") {
      s.repetition_penalty = number;
    } else if (name == "seed") {
      s.random_seed = static_cast<uint64_t>(number);
    }
  }
  return Status::ok();
}

Expected<GenerateArgs> parse_generate_args(const ParsedCommandLine& command_line) {
  GenerateArgs args;
  args.folder = command_line.operands[0];
  for (const ParsedOption& option : command_line.options) {
    if (option.name == "--prompt") {
      args.prompt = option.value;
    } else if (option.name == "--prompt-ids") {
      TRY_ASSIGN(args.prompt_ids, parse_ids(option.value));
    } else if (option.name == "--max-new-tokens" || option.name == "--threads") {
      const auto n = parse_int(option.value);
      if (!n || *n < 0 || *n > (1 << 30)) return usage_error(generate_command_spec(), option.name + " needs a count");
      if (option.name == "--threads") {
        args.threads = static_cast<int>(*n);
      } else {
        args.max_new_tokens = *n;
      }
    } else if (option.name == "--quiet") {
      args.quiet = true;
    } else if (option.name == "--chat") {
      args.chat = true;
    } else if (option.name == "--interactive") {
      args.interactive = true;
    } else if (option.name == "--system") {
      args.system = option.value;
      args.chat = true;
    } else {
      args.search.emplace_back(option.name.substr(2), option.value);
    }
  }
  if (args.interactive) {
    if (!args.prompt.empty() || !args.prompt_ids.empty()) {
      return usage_error(generate_command_spec(), "--interactive reads the prompts from stdin");
    }
    return args;
  }
  if (args.prompt.empty() == args.prompt_ids.empty()) {
    return usage_error(generate_command_spec(), "give one of --prompt and --prompt-ids");
  }
  if (args.chat && args.prompt.empty()) return usage_error(generate_command_spec(), "--chat needs --prompt");
  return args;
}

genai::TemplateValue chat_turn(const std::string& role, const std::string& content) {
  genai::TemplateValue turn = genai::TemplateValue::dict();
  turn.set("role", genai::TemplateValue::string(role));
  turn.set("content", genai::TemplateValue::string(content));
  return turn;
}

// A chat on stdin / stdout: each line is a user turn; the conversation is formatted with the folder's chat template
// and only the tokens after the part the generator already holds are run (rewind_to keeps the common prefix).
Status chat(const GenerateArgs& args, std::shared_ptr<const genai::Model> model) {
  if (model->tokenizer() == nullptr) return make_error(StatusCode::kNoSuchFile, args.folder, "/tokenizer.json: missing");
  TRY_ASSIGN(const genai::ChatFormatter formatter, genai::ChatFormatter::from_folder(args.folder));
  genai::SearchOptions search = model->config().search;
  search.do_sample = false;
  search.max_length = model->config().context_length;
  TRY(apply_search(args.search, search));
  genai::TemplateValue::List turns;
  if (!args.system.empty()) turns.push_back(chat_turn("system", args.system));
  std::unique_ptr<genai::Generator> generator;
  const auto& eos = model->config().eos_token_ids;
  std::string line;
  while (std::cerr << "> " << std::flush, std::getline(std::cin, line)) {
    if (line.empty()) continue;
    turns.push_back(chat_turn("user", line));
    TRY_ASSIGN(const std::string text, formatter.apply(genai::TemplateValue::list(turns).json(), true));
    TRY_ASSIGN(const std::vector<int32_t> ids, model->tokenizer()->encode(text, false));
    size_t common = 0;
    if (generator != nullptr) {
      const auto held = generator->sequence(0);
      while (common < held.size() && common < ids.size() && held[common] == ids[common]) ++common;
    }
    if (common == 0) {
      TRY_ASSIGN(generator, genai::Generator::create(model, search));
      TRY(generator->append_tokens({ids}));
    } else {
      TRY(generator->rewind_to(static_cast<int64_t>(common)));
      if (common < ids.size()) TRY(generator->append_tokens({std::vector<int32_t>(ids.begin() + common, ids.end())}));
    }
    genai::TokenizerStream stream(*model->tokenizer());
    std::vector<int32_t> reply;
    for (int64_t n = 0; n < args.max_new_tokens && !generator->is_done(); ++n) {
      TRY(generator->generate_next_token());
      const int32_t token = generator->next_tokens()[0];
      if (std::find(eos.begin(), eos.end(), token) != eos.end()) break;
      reply.push_back(token);
      TRY_ASSIGN(const std::string piece, stream.decode_next(token));
      std::cout << piece << std::flush;
    }
    std::cout << "\n" << std::flush;
    TRY_ASSIGN(const std::string answer, model->tokenizer()->decode(reply, true));
    turns.push_back(chat_turn("assistant", answer));
  }
  std::cerr << "\n";
  return Status::ok();
}

Status generate(const GenerateArgs& args) {
  TRY_ASSIGN(const auto model, genai::Model::load(args.folder, args.threads));
  if (args.interactive) return chat(args, model);
  std::vector<int32_t> ids = args.prompt_ids;
  if (!args.prompt.empty()) {
    if (model->tokenizer() == nullptr) {
      return make_error(StatusCode::kNoSuchFile, args.folder, "/tokenizer.json: needed to encode --prompt");
    }
    std::string text = args.prompt;
    bool add_special_tokens = true;
    if (args.chat) {  // the folder's chat template around one user turn (and a system turn)
      TRY_ASSIGN(const genai::ChatFormatter formatter, genai::ChatFormatter::from_folder(args.folder));
      genai::TemplateValue::List turns;
      if (!args.system.empty()) turns.push_back(chat_turn("system", args.system));
      turns.push_back(chat_turn("user", args.prompt));
      TRY_ASSIGN(text, formatter.apply(genai::TemplateValue::list(turns).json(), true));
      add_special_tokens = false;  // the template writes them
    }
    TRY_ASSIGN(ids, model->tokenizer()->encode(text, add_special_tokens));
  }
  genai::SearchOptions search = model->config().search;
  search.do_sample = false;
  search.max_length = std::min<int64_t>(static_cast<int64_t>(ids.size()) + args.max_new_tokens,
                                        model->config().context_length);
  TRY(apply_search(args.search, search));
  TRY_ASSIGN(auto generator, genai::Generator::create(model, search));
  const auto start = std::chrono::steady_clock::now();
  TRY(generator->append_tokens({ids}));
  const auto prefilled = std::chrono::steady_clock::now();
  std::optional<genai::TokenizerStream> stream;
  if (model->tokenizer() != nullptr) stream.emplace(*model->tokenizer());
  int64_t generated = 0;
  while (!generator->is_done()) {
    TRY(generator->generate_next_token());
    ++generated;
    const int32_t token = generator->next_tokens()[0];
    if (args.quiet) continue;
    if (stream) {
      TRY_ASSIGN(const std::string piece, stream->decode_next(token));
      std::cout << piece << std::flush;
    } else {
      std::cout << token << ' ' << std::flush;
    }
  }
  const auto done = std::chrono::steady_clock::now();
  if (!args.quiet) std::cout << "\n";
  const double prefill_s = std::chrono::duration<double>(prefilled - start).count();
  const double decode_s = std::chrono::duration<double>(done - prefilled).count();
  std::cerr << "prompt: " << ids.size() << " tokens in " << prefill_s * 1e3 << " ms ("
            << static_cast<double>(ids.size()) / std::max(prefill_s, 1e-9) << " tokens/s); generated: " << generated
            << " tokens in " << decode_s * 1e3 << " ms (" << static_cast<double>(generated) / std::max(decode_s, 1e-9)
            << " tokens/s)\n";
  return Status::ok();
}

}  // namespace

const CommandSpec& generate_command_spec() {
  static const CommandSpec spec{
      .name = "generate",
      .operands = {"FOLDER"},
      .required_operands = 1,
      .summary = "Generate text with an ONNX Runtime GenAI model folder.",
      .description = "FOLDER holds genai_config.json, the decoder it names and tokenizer.json. The new text streams\n"
                     "to stdout; prefill and decode speeds go to stderr. Greedy unless --temperature is above 0.",
      .details = "",
      .options = {
          {"--prompt", "TEXT", "the prompt, encoded with the folder's tokenizer"},
          {"--prompt-ids", "IDS", "the prompt as token ids separated by commas (instead of --prompt)"},
          {"--chat", "", "format --prompt as a user turn with the folder's chat template"},
          {"--system", "TEXT", "a system turn before the prompt (implies --chat)"},
          {"--interactive", "", "chat on the terminal: each line of stdin is a user turn (the cache of the\n"
                                "conversation so far is kept between turns)"},
          {"--max-new-tokens", "N", "generate at most N tokens (default 128; the context length bounds it)"},
          {"--temperature", "T", "sample at temperature T (0: greedy, the default)"},
          {"--top-k", "K", "sample from the K most likely tokens (0: all)"},
          {"--top-p", "P", "sample from the most likely tokens holding probability P"},
          {"--min-p", "P", "drop tokens less likely than P times the most likely one"},
          {"--repetition-penalty", "R", "divide the logits of tokens already in the sequence by R"},
          {"--seed", "S", "seed of the sampling (the same seed gives the same tokens)"},
          {"--threads", "N", "intra-op threads (default: the folder's session_options, else one per core)"},
          {"--quiet", "", "print only the speeds"},
      }};
  return spec;
}

int run_generate_command(const std::vector<std::string>& args) {
  return with_command_line(generate_command_spec(), args, [](const ParsedCommandLine& command_line) {
    Expected<GenerateArgs> parsed = parse_generate_args(command_line);
    if (!parsed) return report_error(parsed.status());
    const Status status = generate(*parsed);
    return status.is_ok() ? 0 : report_error(status);
  });
}

}  // namespace nxrt::cli
