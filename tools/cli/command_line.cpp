#include "command_line.h"

#include <algorithm>
#include <cctype>

namespace nxrt::cli {

namespace {

bool is_help_flag(const std::string& arg) { return arg == "-h" || arg == "--help"; }

const OptionSpec* find_option(const CommandSpec& spec, const std::string& name) {
  auto it = std::find_if(spec.options.begin(), spec.options.end(),
                         [&](const OptionSpec& option) { return option.name == name; });
  return it == spec.options.end() ? nullptr : &*it;
}

std::string option_label(const OptionSpec& option) {
  return option.value_name.empty() ? option.name : option.name + " " + option.value_name;
}

// Writes `text` with every line after the first indented by `indent` columns.
void write_indented(std::ostream& out, const std::string& text, size_t indent) {
  size_t start = 0;
  while (true) {
    const size_t end = text.find('\n', start);
    out << text.substr(start, end - start) << "\n";
    if (end == std::string::npos) return;
    out << std::string(indent, ' ');
    start = end + 1;
  }
}

}  // namespace

Status usage_error(const CommandSpec& spec, const std::string& message) {
  return Status(StatusCode::kInvalidArgument,
                "nxrt " + spec.name + ": " + message + " (see nxrt " + spec.name + " --help)");
}

Expected<ParsedCommandLine> parse_command_line(const CommandSpec& spec, const std::vector<std::string>& args) {
  ParsedCommandLine parsed;
  const auto end_of_options = std::find(args.begin(), args.end(), "--");
  if (std::any_of(args.begin(), end_of_options, is_help_flag)) {
    parsed.help = true;
    return parsed;
  }
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!options_done && arg == "--") {
      options_done = true;
      continue;
    }
    if (options_done || arg.size() < 2 || arg[0] != '-') {
      if (parsed.operands.size() >= spec.operands.size()) {
        return usage_error(spec, "unexpected argument '" + arg + "'");
      }
      parsed.operands.push_back(arg);
      continue;
    }
    const size_t eq = arg.rfind("--", 0) == 0 ? arg.find('=') : std::string::npos;
    const std::string name = arg.substr(0, eq);
    const OptionSpec* option = find_option(spec, name);
    if (!option) return usage_error(spec, "unknown option '" + name + "'");
    if (option->value_name.empty()) {
      if (eq != std::string::npos) return usage_error(spec, name + " takes no value, got '" + arg + "'");
      parsed.options.push_back({name, ""});
      continue;
    }
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size() && args[i + 1] != "--" && !find_option(spec, args[i + 1])) {
      value = args[++i];
    }
    if (value.empty()) return usage_error(spec, name + " needs a value: " + option_label(*option));
    parsed.options.push_back({name, std::move(value)});
  }
  if (parsed.operands.size() < spec.required_operands) {
    return usage_error(spec, "missing " + spec.operands[parsed.operands.size()]);
  }
  return parsed;
}

std::vector<std::string> options_to_args(const std::vector<ParsedOption>& options) {
  std::vector<std::string> args;
  for (const ParsedOption& option : options) {
    args.push_back(option.value.empty() ? option.name : option.name + "=" + option.value);
  }
  return args;
}

std::string command_synopsis(const CommandSpec& spec) {
  std::string text = "nxrt " + spec.name;
  for (size_t i = 0; i < spec.operands.size(); ++i) {
    text += i < spec.required_operands ? " " + spec.operands[i] : " [" + spec.operands[i] + "]";
  }
  if (!spec.options.empty()) text += " [options]";
  return text;
}

void print_command_help(const CommandSpec& spec, std::ostream& out) {
  out << "usage: " << command_synopsis(spec) << "\n\n";
  write_indented(out, spec.summary, 0);
  if (!spec.description.empty()) write_indented(out, spec.description, 0);
  out << "\noptions:\n";
  std::vector<std::pair<std::string, std::string>> rows;
  for (const OptionSpec& option : spec.options) rows.emplace_back(option_label(option), option.help);
  rows.emplace_back("-h, --help", "print this help and exit");
  size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.first.size());
  const size_t column = width + 4;
  for (const auto& [label, help] : rows) {
    out << "  " << label << std::string(column - 2 - label.size(), ' ');
    write_indented(out, help, column);
  }
  if (!spec.details.empty()) {
    out << "\n";
    write_indented(out, spec.details, 0);
  }
}

Expected<std::vector<std::string>> split_command_line(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\') {
      if (i + 1 >= line.size()) return make_error(StatusCode::kInvalidArgument, "trailing backslash in '", line, "'");
      word += line[++i];
    } else if (c == '\'') {
      const size_t close = line.find('\'', i + 1);
      if (close == std::string::npos) return make_error(StatusCode::kInvalidArgument, "unterminated ' in '", line, "'");
      word += line.substr(i + 1, close - i - 1);
      i = close;
    } else if (c == '"') {
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        const bool escape = line[i] == '\\' && i + 1 < line.size() &&
                            std::string_view("\"\\$`").find(line[i + 1]) != std::string_view::npos;
        word += line[escape ? ++i : i];
      }
      if (i >= line.size()) return make_error(StatusCode::kInvalidArgument, "unterminated \" in '", line, "'");
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

}  // namespace nxrt::cli
