#include "cli_common.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "core/dispatch.h"
#include "core/shape.h"
#include "onnx/model_proto.h"
#include "session/default_models.h"

namespace nxrt::cli {

namespace {

template <class T>
std::string format_element(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "True" : "False";
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(value);
  } else {
    const double v = static_cast<double>(static_cast<float>(value));
    const double d = std::is_same_v<T, double> ? static_cast<double>(value) : v;
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    char text[64];
    if (d == std::trunc(d) && std::fabs(d) < 1e16) {
      std::snprintf(text, sizeof(text), "%.0f.", d);
    } else {
      std::snprintf(text, sizeof(text), "%.6g", d);
    }
    return text;
  }
}

// Formats element `index` of `tensor`; "?" for element types without a printable form here.
class ElementFormatter {
 public:
  explicit ElementFormatter(const Tensor& tensor) : tensor_(tensor) {}
  std::string operator()(int64_t index) const {
    std::string text = "?";
    const DataType type = tensor_.dtype();
    if (type == DataType::kString) return "'" + tensor_.data<std::string>()[index] + "'";
    visit_dtype<AllPodTypes>(type, [&]<class T>() { text = format_element(tensor_.data<T>()[index]); });
    return text;
  }

 private:
  const Tensor& tensor_;
};

void format_dim(std::string& out, const Tensor& tensor, const ElementFormatter& element, size_t dim,
                int64_t offset, const std::vector<int64_t>& strides, bool summarize, int64_t edge_items) {
  const Shape& shape = tensor.shape();
  const int64_t n = shape[dim];
  const bool last = dim + 1 == shape.size();
  out += '[';
  bool first = true;
  auto separator = [&] {
    if (first) {
      first = false;
      return;
    }
    if (last) {
      out += ' ';
    } else {
      out.append(shape.size() - dim - 1, '\n');
      out.append(dim + 1, ' ');
    }
  };
  auto item = [&](int64_t i) {
    separator();
    if (last) {
      out += element(offset + i * strides[dim]);
    } else {
      format_dim(out, tensor, element, dim + 1, offset + i * strides[dim], strides, summarize, edge_items);
    }
  };
  if (summarize && n > 2 * edge_items) {
    for (int64_t i = 0; i < edge_items; ++i) item(i);
    separator();
    out += "...";
    for (int64_t i = n - edge_items; i < n; ++i) item(i);
  } else {
    for (int64_t i = 0; i < n; ++i) item(i);
  }
  out += ']';
}

}  // namespace

Expected<std::string> load_model_bytes(const std::string& spec) {
  if (spec.rfind(kBuiltinPrefix, 0) == 0) {
    return default_model(spec.substr(std::char_traits<char>::length(kBuiltinPrefix)));
  }
  TRY_ASSIGN(auto mapped, onnx::map_model_file(spec));
  return std::string(mapped->bytes());
}

Expected<std::unique_ptr<Session>> open_session(const std::string& spec, const SessionOptions& options) {
  if (spec.rfind(kBuiltinPrefix, 0) == 0) {
    TRY_ASSIGN(std::string bytes, load_model_bytes(spec));
    return Session::create_from_bytes(bytes, options);
  }
  return Session::create_from_file(spec, options);
}

std::string format_tensor_values(const Tensor& tensor, int64_t threshold, int64_t edge_items) {
  const ElementFormatter element(tensor);
  if (tensor.rank() == 0) return element(0);
  if (tensor.numel() == 0) return "[]";
  std::string out;
  format_dim(out, tensor, element, 0, 0, row_major_strides(tensor.shape()), tensor.numel() > threshold, edge_items);
  return out;
}

std::string describe_tensor(const std::string& name, const Tensor& tensor) {
  return name + ": " + std::string(data_type_name(tensor.dtype())) + " " + shape_to_string(tensor.shape());
}

std::string describe_value(const std::string& name, const graph::TypeInfo& type) {
  std::string text = name + ": " + type.to_string();
  if (type.is_tensor()) text += " " + (type.shape ? graph::symbolic_shape_to_string(*type.shape) : "(rank unknown)");
  return text;
}

int report_error(const Status& status) {
  std::cerr << status.to_string() << "\n";
  return 1;
}

std::optional<int64_t> parse_int(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size()) return std::nullopt;
  return static_cast<int64_t>(value);
}

namespace {

// "simple_add, mlp"
std::string builtin_model_list() {
  std::string text;
  for (std::string_view name : default_model_names()) text += (text.empty() ? "" : ", ") + std::string(name);
  return text;
}

}  // namespace

std::string model_spec_help() {
  return "MODEL is a path to an .onnx file or builtin:NAME with NAME one of: " + builtin_model_list();
}

const CommandSpec& export_builtin_command_spec() {
  static const CommandSpec spec{
      .name = "export-builtin",
      .operands = {"NAME", "PATH"},
      .required_operands = 2,
      .summary = "Write a builtin model to an .onnx file.",
      .description = "NAME (or builtin:NAME) is one of: " + builtin_model_list() + ". PATH is the file to write.",
      .details = "",
      .options = {},
  };
  return spec;
}

int with_command_line(const CommandSpec& spec, const std::vector<std::string>& args,
                      const std::function<int(const ParsedCommandLine&)>& body) {
  Expected<ParsedCommandLine> parsed = parse_command_line(spec, args);
  if (!parsed) return report_error(parsed.status());
  if (parsed->help) {
    print_command_help(spec, std::cout);
    return 0;
  }
  return body(*parsed);
}

int run_export_builtin_command(const std::vector<std::string>& args) {
  return with_command_line(export_builtin_command_spec(), args, [](const ParsedCommandLine& parsed) {
    std::string name = parsed.operands[0];
    const std::string& path = parsed.operands[1];
    if (name.rfind(kBuiltinPrefix, 0) == 0) name = name.substr(std::char_traits<char>::length(kBuiltinPrefix));
    Status status = write_default_model(name, path);
    if (!status.is_ok()) return report_error(status);
    std::cout << "wrote builtin:" << name << " to " << path << "\n";
    return 0;
  });
}

}  // namespace nxrt::cli
