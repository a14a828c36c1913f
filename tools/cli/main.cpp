// `nxrt`: command-line front end of the runtime.
#include <iostream>
#include <string>
#include <vector>

#include "cli_common.h"
#include "nxrt/nxrt.h"
#include "session/default_models.h"

namespace {

void print_help() {
  std::cout <<
      R"(usage: nxrt COMMAND [ARGS]

commands:
  info MODEL                    inputs/outputs with types and symbolic shapes, opsets, producer, op histogram
  run [MODEL] [options]         run a model and print its outputs and latency; with no arguments, run the
                                builtin models on fixed inputs and check the results
      --input NAME=FILE         feed an input from a .npy file or a TensorProto .pb file (others get random data)
      --dim SYMBOL=SIZE         size of a symbolic dimension for random inputs (default 1)
      --threads N               intra-op threads (0: one per core)
      --repeat N                run N times and report median/min latency
      --seed S                  seed of the random inputs (default 0)
      --output-dir DIR          write each output to DIR/NAME.npy (or NAME.pb with --output-format pb)
      --output-format npy|pb   file format of --output-dir (default npy)
      --quiet                   print nothing but errors
      --profile                 time every node; print time per op type and the slowest nodes
  export-builtin NAME PATH      write a builtin model to an .onnx file

MODEL is a path to an .onnx file or builtin:NAME with NAME one of: )";
  bool first = true;
  for (std::string_view name : nxrt::default_model_names()) {
    std::cout << (first ? "" : ", ") << name;
    first = false;
  }
  std::cout << "\n\noptions:\n  -h, --help     this text\n  -V, --version  print the version\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    print_help();
    return args.empty() ? 1 : 0;
  }
  if (args[0] == "-V" || args[0] == "--version") {
    std::cout << "nxrt " << nxrt_version_string() << "\n";
    return 0;
  }
  const std::string command = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "info") return nxrt::cli::run_info_command(rest);
  if (command == "run") return nxrt::cli::run_run_command(rest);
  if (command == "export-builtin") return nxrt::cli::run_export_builtin_command(rest);
  return nxrt::cli::report_error(nxrt::Status(nxrt::StatusCode::kInvalidArgument,
                                              "unknown command '" + command + "' (see nxrt --help)"));
}
