// `nxrt`: command-line front end of the runtime.
#include <iostream>
#include <string>
#include <vector>

#include "cli_common.h"
#include "nxrt/nxrt.h"

namespace {

struct Command {
  const nxrt::cli::CommandSpec& spec;
  int (*entry)(const std::vector<std::string>&);
};

std::vector<Command> commands() {
  using namespace nxrt::cli;
  return {{info_command_spec(), run_info_command},
          {run_command_spec(), run_run_command},
          {generate_command_spec(), run_generate_command},
          {serve_command_spec(), run_serve_command},
          {export_builtin_command_spec(), run_export_builtin_command}};
}

// Lists the commands with their one-line summaries; the full text is in `nxrt COMMAND --help`.
void print_help() {
  std::cout << "usage: nxrt COMMAND [ARGS]\n\ncommands:\n";
  for (const Command& command : commands()) {
    const std::string synopsis = nxrt::cli::command_synopsis(command.spec).substr(5);
    std::cout << "  " << synopsis << std::string(synopsis.size() < 28 ? 28 - synopsis.size() : 1, ' ')
              << command.spec.summary << "\n";
  }
  std::cout << "\nRun 'nxrt COMMAND --help' (or 'nxrt help COMMAND') for a command's arguments and options.\n"
            << nxrt::cli::model_spec_help()
            << "\n\noptions:\n  -h, --help     print this help and exit\n  -V, --version  print the version\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || (args[0] == "help" && args.size() == 1)) {
    print_help();
    return args.empty() ? 1 : 0;
  }
  if (args[0] == "-V" || args[0] == "--version") {
    std::cout << "nxrt " << nxrt_version_string() << "\n";
    return 0;
  }
  if (args[0] == "help") args = {args[1], "--help"};
  const std::string name = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  for (const Command& command : commands()) {
    if (command.spec.name == name) return command.entry(rest);
  }
  const std::string what = name.rfind("-", 0) == 0 ? "unknown option '" : "unknown command '";
  return nxrt::cli::report_error(
      nxrt::Status(nxrt::StatusCode::kInvalidArgument, what + name + "' (see nxrt --help)"));
}
