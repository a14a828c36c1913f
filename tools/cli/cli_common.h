// Shared pieces of the `nxrt` command-line tool: model specs (a path or builtin:NAME), numpy-like tensor
// printing, error reporting and the sub-commands' entry points.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "command_line.h"
#include "core/status.h"
#include "core/tensor.h"
#include "graph/type_info.h"
#include "session/session.h"

namespace nxrt::cli {

inline constexpr const char* kBuiltinPrefix = "builtin:";

// Serialized model of `spec`: the builtin model for "builtin:NAME", else the file's bytes (NO_SUCHFILE when
// it cannot be read).
Expected<std::string> load_model_bytes(const std::string& spec);
Expected<std::unique_ptr<Session>> open_session(const std::string& spec, const SessionOptions& options);

// numpy's str() layout: "[1. 2.5 3.]", nested brackets per dim, rows on new lines; tensors with more than
// `threshold` elements show only the first and last `edge_items` entries of each dim around "...".
std::string format_tensor_values(const Tensor& tensor, int64_t threshold = 64, int64_t edge_items = 3);
// "z: float [4]"
std::string describe_tensor(const std::string& name, const Tensor& tensor);
// "x: tensor(float) [B,4]"
std::string describe_value(const std::string& name, const graph::TypeInfo& type);

// Prints status.to_string() to stderr and returns the process exit code 1.
int report_error(const Status& status);

// The common start of every sub-command: parses `args` for `spec`, then prints the help (returns 0) when asked,
// reports a usage error (returns 1), or returns body(parsed command line)'s exit code.
int with_command_line(const CommandSpec& spec, const std::vector<std::string>& args,
                      const std::function<int(const ParsedCommandLine&)>& body);

// Parses a whole decimal integer; nullopt on junk or overflow.
std::optional<int64_t> parse_int(const std::string& text);

// "MODEL is a path to an .onnx file or builtin:NAME with NAME one of: ...", for help texts.
std::string model_spec_help();

// Grammar and help text of each sub-command (the single source of both).
const CommandSpec& info_command_spec();
const CommandSpec& run_command_spec();
const CommandSpec& export_builtin_command_spec();
const CommandSpec& generate_command_spec();
const CommandSpec& serve_command_spec();  // tools/serve/serve_command.cpp

// Entry points of the sub-commands; `args` excludes the program and command names. Each returns the process
// exit code: 0 on success or after printing its --help, 1 after report_error.
int run_info_command(const std::vector<std::string>& args);
int run_run_command(const std::vector<std::string>& args);
int run_export_builtin_command(const std::vector<std::string>& args);
int run_generate_command(const std::vector<std::string>& args);
int run_serve_command(const std::vector<std::string>& args);

}  // namespace nxrt::cli
