// Command-line grammar of the `nxrt` sub-commands: each command declares its operands and options once in a
// CommandSpec, and both the parser and the `nxrt COMMAND --help` text are derived from it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/status.h"

namespace nxrt::cli {

struct OptionSpec {
  std::string name;        // "--input"
  std::string value_name;  // "NAME=FILE"; empty for a switch that takes no value
  std::string help;        // may span lines ('\n'); continuation lines are indented under the first
};

struct CommandSpec {
  std::string name;                   // "run"
  std::vector<std::string> operands;  // "MODEL"; the first `required_operands` must be given
  size_t required_operands = 0;
  std::string summary;                // one line, also listed by `nxrt --help`
  std::string description;            // text under the summary; may be empty
  std::string details;                // text after the option list; may be empty
  std::vector<OptionSpec> options;    // -h/--help is implicit
};

struct ParsedOption {
  std::string name;   // as in the spec ("--input")
  std::string value;  // empty for a switch
};

struct ParsedCommandLine {
  bool help = false;                  // -h or --help was given; nothing else is filled in
  std::vector<std::string> operands;
  std::vector<ParsedOption> options;  // in command-line order; repeated options appear repeatedly
};

// Parses `args` (without the program and command names) against `spec`. Options take their value from the
// next argument or after '=' ("--seed=3"); a next argument that is itself an option of `spec` does not count as
// a value. "--" ends the options. Any "-h"/"--help" yields help = true. INVALID_ARGUMENT, naming the offending
// argument and pointing to `nxrt COMMAND --help`, for an unknown option, a missing or unexpected value, too many
// operands or a missing required operand.
Expected<ParsedCommandLine> parse_command_line(const CommandSpec& spec, const std::vector<std::string>& args);

// Inverse of parse_command_line for `options`: {"--seed=3", "--quiet"}.
std::vector<std::string> options_to_args(const std::vector<ParsedOption>& options);

// "nxrt run [MODEL] [options]"
std::string command_synopsis(const CommandSpec& spec);
// Usage line, summary, description, option table and details.
void print_command_help(const CommandSpec& spec, std::ostream& out);
// INVALID_ARGUMENT "nxrt COMMAND: MESSAGE (see nxrt COMMAND --help)".
Status usage_error(const CommandSpec& spec, const std::string& message);

// Splits one line into arguments as a POSIX shell would without expansions: whitespace separates words,
// '...' quotes literally, "..." quotes with \" \\ \$ \` escapes, and a backslash outside quotes escapes the next
// character. INVALID_ARGUMENT for an unterminated quote or a trailing backslash.
Expected<std::vector<std::string>> split_command_line(const std::string& line);

}  // namespace nxrt::cli
