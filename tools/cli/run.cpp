// `nxrt run`: runs a model on inputs from .npy files or random data, prints outputs and latency. With no
// arguments it runs the builtin models on fixed inputs and checks the results (the README's first step).
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>
#include <sstream>

#include "cli_common.h"
#include "core/dispatch.h"
#include "import/tensor_file.h"
#include "npy.h"
#include "random_input.h"
#include "session/default_models.h"

namespace nxrt::cli {

namespace {

struct RunArgs {
  std::string model;
  std::map<std::string, std::string> input_files;
  std::map<std::string, int64_t> dims;
  int threads = 0;
  int64_t repeat = 1;
  uint64_t seed = 0;
  std::string output_dir;
  std::string output_format = "npy";
  bool quiet = false;
  bool profile = false;
  std::string batch_file;
};

Status split_assignment(const std::string& flag, const std::string& text, std::string* key, std::string* value) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return usage_error(run_command_spec(), flag + " expects NAME=VALUE, got '" + text + "'");
  }
  *key = text.substr(0, eq);
  *value = text.substr(eq + 1);
  return Status::ok();
}

// Checks the option values of a parsed command line; later occurrences of a single-valued option win.
Expected<RunArgs> parse_run_args(const ParsedCommandLine& command_line) {
  const CommandSpec& spec = run_command_spec();
  RunArgs parsed;
  if (!command_line.operands.empty()) parsed.model = command_line.operands[0];
  for (const auto& [name, value] : command_line.options) {
    std::string key, rest;
    if (name == "--quiet") {
      parsed.quiet = true;
    } else if (name == "--profile") {
      parsed.profile = true;
    } else if (name == "--input") {
      TRY(split_assignment(name, value, &key, &rest));
      parsed.input_files[key] = rest;
    } else if (name == "--dim") {
      TRY(split_assignment(name, value, &key, &rest));
      std::optional<int64_t> size = parse_int(rest);
      if (!size || *size < 0) return usage_error(spec, "--dim " + key + " needs a size >= 0, got '" + rest + "'");
      parsed.dims[key] = *size;
    } else if (name == "--threads" || name == "--repeat" || name == "--seed") {
      std::optional<int64_t> number = parse_int(value);
      if (!number || *number < 0 || (name == "--repeat" && *number < 1) || (name == "--threads" && *number > 4096)) {
        return usage_error(spec, name + " needs a non-negative integer, got '" + value + "'");
      }
      if (name == "--threads") parsed.threads = static_cast<int>(*number);
      if (name == "--repeat") parsed.repeat = *number;
      if (name == "--seed") parsed.seed = static_cast<uint64_t>(*number);
    } else if (name == "--output-dir") {
      parsed.output_dir = value;
    } else if (name == "--output-format") {
      if (value != "npy" && value != "pb") {
        return usage_error(spec, "--output-format is npy or pb, got '" + value + "'");
      }
      parsed.output_format = value;
    } else if (name == "--batch") {
      parsed.batch_file = value;
    }
  }
  return parsed;
}

std::string format_ms(double ms) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(3) << ms << " ms";
  return text.str();
}

void print_tensor(const std::string& name, const Tensor& tensor) {
  std::cout << describe_tensor(name, tensor) << "\n" << format_tensor_values(tensor) << "\n";
}

void print_value(const std::string& name, const Value& value) {
  if (value.is_tensor()) return print_tensor(name, value.tensor());
  if (value.is_none()) {
    std::cout << name << ": optional without a value\n";
    return;
  }
  std::cout << name << ": sequence of " << value.elements().size() << " "
            << data_type_name(value.elem_type()) << " tensors\n";
  for (size_t i = 0; i < value.elements().size(); ++i) {
    print_tensor(name + "[" + std::to_string(i) + "]", value.elements()[i]);
  }
}

std::string describe_value(const std::string& name, const Value& value) {
  if (value.is_tensor()) return describe_tensor(name, value.tensor());
  if (value.is_none()) return name + ": optional without a value";
  return name + ": sequence of " + std::to_string(value.elements().size()) + " tensors";
}

// Runs `repeat` times, prints the outputs of the last run and the latency summary.
Expected<std::vector<Value>> run_and_print(const Session& session, const std::vector<std::string>& names,
                                           const std::vector<Value>& feeds, int64_t repeat, bool quiet = false) {
  std::vector<double> times;
  std::vector<Value> outputs;
  for (int64_t r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    TRY_ASSIGN(outputs, session.run_values(names, feeds, {}));
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  if (quiet) return outputs;
  std::cout << "outputs:\n";
  for (size_t i = 0; i < outputs.size(); ++i) print_value(session.outputs()[i].name, outputs[i]);
  std::sort(times.begin(), times.end());
  const double median = times.size() % 2 ? times[times.size() / 2]
                                         : (times[times.size() / 2 - 1] + times[times.size() / 2]) / 2;
  std::cout << "latency: median " << format_ms(median) << ", min " << format_ms(times.front()) << " over "
            << repeat << (repeat == 1 ? " run" : " runs") << "\n";
  return outputs;
}

// Per op type: calls, total and share of the node time; then the slowest nodes. Times are sums over all runs.
void print_profile(const NodeProfile& profile) {
  const std::vector<NodeTiming> nodes = profile.nodes();
  struct OpTotal {
    std::string op_type;
    int64_t calls = 0;
    double ms = 0;
  };
  std::vector<OpTotal> ops;
  double total_ms = 0;
  for (const NodeTiming& node : nodes) {
    auto it = std::find_if(ops.begin(), ops.end(), [&](const OpTotal& op) { return op.op_type == node.op_type; });
    if (it == ops.end()) it = ops.insert(ops.end(), OpTotal{node.op_type});
    it->calls += node.calls;
    it->ms += node.total_ms;
    total_ms += node.total_ms;
  }
  const auto by_time = [](const auto& a, const auto& b) { return a.total_ms > b.total_ms; };
  std::sort(ops.begin(), ops.end(), [](const OpTotal& a, const OpTotal& b) { return a.ms > b.ms; });
  const int64_t runs = std::max<int64_t>(profile.runs(), 1);
  const auto share = [&](double ms) { return total_ms > 0 ? 100.0 * ms / total_ms : 0.0; };
  std::cout << std::fixed << "profile: " << runs << " runs, node time " << std::setprecision(4) << total_ms / runs
            << " ms per run\n"
            << std::left << std::setw(28) << "op type" << std::right << std::setw(8) << "calls" << std::setw(14)
            << "ms per run" << std::setw(9) << "%" << "\n";
  for (const OpTotal& op : ops) {
    std::cout << std::left << std::setw(28) << op.op_type << std::right << std::setw(8) << op.calls / runs
              << std::setw(14) << std::setprecision(4) << op.ms / runs << std::setw(8) << std::setprecision(1)
              << share(op.ms) << "%\n";
  }
  std::vector<NodeTiming> slowest = nodes;
  for (size_t n = 0; n < slowest.size(); ++n) {
    if (slowest[n].name.empty()) slowest[n].name = "(node " + std::to_string(n) + ")";
  }
  std::sort(slowest.begin(), slowest.end(), by_time);
  slowest.resize(std::min<size_t>(slowest.size(), 20));
  std::cout << "slowest nodes:\n";
  for (const NodeTiming& node : slowest) {
    std::cout << "  " << std::left << std::setw(40) << node.name << std::setw(20)
              << node.op_type << std::right << std::setw(12) << std::setprecision(4) << node.total_ms / runs
              << " ms" << std::setw(8) << std::setprecision(1) << share(node.total_ms) << "%\n";
  }
  std::cout.unsetf(std::ios::floatfield);
}

// A .pb file holds one serialized TensorProto, SequenceProto or OptionalProto (as in ONNX test data sets),
// chosen by the input's declared type; anything else is read as .npy.
Expected<Value> read_input_file(const std::string& path, const graph::TypeInfo& type) {
  if (!path.ends_with(".pb")) {
    TRY_ASSIGN(Tensor tensor, read_npy(path));
    return Value(std::move(tensor));
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) return make_error(StatusCode::kNoSuchFile, "cannot open input file '", path, "'");
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return import::value_from_proto_bytes(bytes, type);
}

Status write_output_file(const std::string& path, const Value& value, const ValueDesc& desc,
                         const std::string& format) {
  if (format != "pb") {
    if (!value.is_tensor()) {
      return make_error(StatusCode::kInvalidArgument, "output '", desc.name,
                        "' is a sequence or optional; write it with --output-format pb");
    }
    return write_npy(path, value.tensor());
  }
  TRY_ASSIGN(std::string bytes, import::value_to_proto_bytes(value, desc.name, desc.type));
  std::ofstream file(path, std::ios::binary);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!file) return make_error(StatusCode::kFail, "cannot write '", path, "'");
  return Status::ok();
}

std::string file_name_for(const std::string& output_name, const std::string& format) {
  std::string name = output_name;
  for (char& c : name) {
    if (c == '/' || c == '\\' || c == ':' || c == ' ') c = '_';
  }
  return name + "." + format;
}

// Runs one model as the options ask, printing to stdout; the first error ends the run and is returned.
Status run_model(const RunArgs& args) {
  SessionOptions options;
  options.intra_op_num_threads = args.threads;
  options.enable_profiling = args.profile;
  if (args.profile) options.profile = std::make_shared<NodeProfile>();
  TRY_ASSIGN(std::unique_ptr<Session> session, open_session(args.model, options));
  const Session& s = *session;

  for (const auto& input_file : args.input_files) {
    const std::string& name = input_file.first;
    const bool known =
        std::any_of(s.inputs().begin(), s.inputs().end(), [&](const ValueDesc& v) { return v.name == name; });
    if (!known) {
      return make_error(StatusCode::kInvalidArgument, "--input names '", name, "', which is not an input of the model");
    }
  }
  std::mt19937_64 rng(args.seed);
  std::vector<std::string> names;
  std::vector<Value> feeds;
  std::ostringstream header;  // printed once every input is ready, so errors come alone
  header << "model: " << args.model << "\ninputs:\n";
  for (const ValueDesc& input : s.inputs()) {
    auto file = args.input_files.find(input.name);
    const bool from_file = file != args.input_files.end();
    Expected<Value> value = from_file ? read_input_file(file->second, input.type) : Expected<Value>(Value());
    if (!from_file) {
      TRY_ASSIGN(Tensor tensor, random_input(input, args.dims, rng));
      value = Value(std::move(tensor));
    }
    if (!value) return value.status();
    header << describe_value(input.name, *value)
           << (from_file ? " from " + file->second : " random (seed " + std::to_string(args.seed) + ")")
           << "\n";
    names.push_back(input.name);
    feeds.push_back(std::move(value).value());
  }
  if (!args.quiet) std::cout << header.str();
  TRY_ASSIGN(std::vector<Value> outputs, run_and_print(s, names, feeds, args.repeat, args.quiet));
  if (args.profile) print_profile(*options.profile);
  if (!args.output_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(args.output_dir, error);
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::filesystem::path path =
          std::filesystem::path(args.output_dir) / file_name_for(s.outputs()[i].name, args.output_format);
      TRY(write_output_file(path.string(), outputs[i], s.outputs()[i], args.output_format));
      if (!args.quiet) std::cout << "wrote " << path.string() << "\n";
    }
  }
  return Status::ok();
}

Tensor float_tensor(Shape shape, const std::vector<float>& values) {
  Tensor tensor = Tensor::allocate(DataType::kFloat32, std::move(shape)).value();
  std::copy(values.begin(), values.end(), tensor.data<float>());
  return tensor;
}

float max_abs_difference(const Tensor& tensor, const std::vector<float>& expected) {
  if (tensor.dtype() != DataType::kFloat32 || tensor.numel() != static_cast<int64_t>(expected.size())) return INFINITY;
  float worst = 0;
  const float* actual = tensor.data<float>();
  for (size_t i = 0; i < expected.size(); ++i) worst = std::max(worst, std::fabs(actual[i] - expected[i]));
  return worst;
}

// Runs one builtin model on fixed inputs and compares with `expected`.
Expected<bool> demo_model(const std::string& name, const std::vector<std::string>& input_names,
                          const std::vector<Value>& feeds, const std::vector<float>& expected) {
  std::cout << "== builtin:" << name << " ==\n";
  TRY_ASSIGN(std::string bytes, default_model(name));
  SessionOptions options;
  options.intra_op_num_threads = 1;
  TRY_ASSIGN(std::unique_ptr<Session> session, Session::create_from_bytes(bytes, options));
  std::cout << "inputs:\n";
  for (size_t i = 0; i < feeds.size(); ++i) print_value(input_names[i], feeds[i]);
  TRY_ASSIGN(std::vector<Value> outputs, run_and_print(*session, input_names, feeds, 1));
  const float difference = outputs.empty() ? INFINITY : max_abs_difference(outputs[0].tensor(), expected);
  const bool ok = difference <= 1e-5f;
  std::cout << "max abs difference from the reference: " << difference << (ok ? " (ok)" : " (MISMATCH)") << "\n";
  return ok;
}

int run_demo() {
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<float> y = {10, 20, 30, 40};
  Expected<bool> add_ok = demo_model("simple_add", {"x", "y"}, {float_tensor({4}, x), float_tensor({4}, y)},
                                     {12, 24, 36, 48});
  if (!add_ok) return report_error(add_ok.status());
  std::vector<float> mlp_x(8);
  for (size_t i = 0; i < mlp_x.size(); ++i) mlp_x[i] = static_cast<float>(i % 5) * 0.25f - 0.5f;
  Expected<bool> mlp_ok = demo_model("mlp", {"x"}, {float_tensor({2, 4}, mlp_x)}, mlp_reference(mlp_x));
  if (!mlp_ok) return report_error(mlp_ok.status());
  if (!*add_ok || !*mlp_ok) {
    std::cerr << "builtin models produced wrong results\n";
    return 1;
  }
  return 0;
}

// One line of a batch file: `base` (the options beside --batch) followed by the line's own arguments.
Status run_batch_line(const std::vector<std::string>& base, const std::string& line) {
  const CommandSpec& spec = run_command_spec();
  TRY_ASSIGN(std::vector<std::string> words, split_command_line(line));
  std::vector<std::string> args = base;
  args.insert(args.end(), words.begin(), words.end());
  TRY_ASSIGN(ParsedCommandLine command_line, parse_command_line(spec, args));
  if (command_line.help) return usage_error(spec, "--help is not allowed in a batch line");
  TRY_ASSIGN(RunArgs run_args, parse_run_args(command_line));
  if (!run_args.batch_file.empty()) return usage_error(spec, "--batch is not allowed in a batch line");
  if (run_args.model.empty()) return usage_error(spec, "missing MODEL");
  return run_model(run_args);
}

// Backslashes and line breaks escaped, so that a message fits on its status line.
std::string escape_message(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c == '\\') {
      escaped += "\\\\";
    } else if (c == '\n') {
      escaped += "\\n";
    } else if (c == '\r') {
      escaped += "\\r";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

// Runs every line of the batch file in turn; see the --batch entry of run_command_spec for the protocol.
int run_batch(const ParsedCommandLine& command_line, const std::string& batch_file) {
  const CommandSpec& spec = run_command_spec();
  if (!command_line.operands.empty()) {
    const std::string& model = command_line.operands[0];
    return report_error(usage_error(spec, "--batch takes MODEL from each line, got '" + model + "'"));
  }
  std::ifstream file;
  if (batch_file != "-") {
    file.open(batch_file);
    if (!file) return report_error(make_error(StatusCode::kNoSuchFile, "cannot open batch file '", batch_file, "'"));
  }
  std::istream& in = batch_file == "-" ? std::cin : file;
  std::vector<ParsedOption> base_options;
  for (const ParsedOption& option : command_line.options) {
    if (option.name != "--batch") base_options.push_back(option);
  }
  const std::vector<std::string> base = options_to_args(base_options);
  bool all_ok = true;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    const Status status = run_batch_line(base, line);
    all_ok = all_ok && status.is_ok();
    std::cout << "nxrt-batch: line " << number << ": "
              << (status.is_ok() ? std::string("ok") : "error: " + escape_message(status.to_string())) << std::endl;
  }
  return all_ok ? 0 : 1;
}

}  // namespace

const CommandSpec& run_command_spec() {
  static const CommandSpec spec{
      .name = "run",
      .operands = {"MODEL"},
      .required_operands = 0,
      .summary = "Run a model; print its outputs and latency.",
      .description = "Inputs come from files (--input) or random data. With no arguments at all, run the builtin\n"
                     "models on fixed inputs and check their results.",
      .details = model_spec_help() + "\n\n" +
                 "Batch mode (--batch FILE): every line of FILE that is neither blank nor starts with '#' holds the\n"
                 "arguments of one run (MODEL and options), split into words as a POSIX shell does: whitespace\n"
                 "separates, '...' and \"...\" quote, \\ escapes. Options given beside --batch come first on every\n"
                 "line. The lines run in turn in one process; an error ends that line's run only. After each line\n"
                 "one status line goes to stdout (flushed), N being the line number in FILE:\n"
                 "  nxrt-batch: line N: ok\n"
                 "  nxrt-batch: line N: error: [ONNXRuntimeError] : CODE : NAME : MESSAGE\n"
                 "with '\\' written '\\\\' and line breaks '\\n' in MESSAGE; a line's error is reported there only,\n"
                 "not on stderr. The exit code is 0 when every line ran ok, else 1.",
      .options = {
          {"--input", "NAME=FILE",
           "feed input NAME from a .npy file, or a .pb file holding a TensorProto, SequenceProto or\n"
           "OptionalProto (as ONNX test data sets do); inputs not given get random data"},
          {"--dim", "SYMBOL=SIZE", "size of a symbolic dimension for random inputs (default 1)"},
          {"--threads", "N", "intra-op threads (default 0: one per core)"},
          {"--repeat", "N", "run N times and report the median and min latency (default 1)"},
          {"--seed", "S", "seed of the random inputs (default 0)"},
          {"--output-dir", "DIR", "write each output to DIR/NAME.npy (NAME.pb with --output-format pb)"},
          {"--output-format", "npy|pb", "file format of --output-dir (default npy)"},
          {"--quiet", "", "print nothing but errors"},
          {"--profile", "", "time every node; print the time per op type and the slowest nodes"},
          {"--batch", "FILE", "run each line of FILE ('-': stdin) as the arguments of one run; see below"},
      },
  };
  return spec;
}

int run_run_command(const std::vector<std::string>& args) {
  if (args.empty()) return run_demo();
  return with_command_line(run_command_spec(), args, [](const ParsedCommandLine& command_line) {
    Expected<RunArgs> parsed = parse_run_args(command_line);
    if (!parsed) return report_error(parsed.status());
    if (!parsed->batch_file.empty()) return run_batch(command_line, parsed->batch_file);
    if (parsed->model.empty()) return report_error(usage_error(run_command_spec(), "missing MODEL"));
    const Status status = run_model(*parsed);
    return status.is_ok() ? 0 : report_error(status);
  });
}

}  // namespace nxrt::cli
