// String operators: StringNormalizer, StringConcat, StringSplit, RegexFullMatch (TfIdfVectorizer lives in
// string_tfidf.cpp). Case mapping is ASCII only: bytes outside A-Z / a-z (UTF-8 sequences included) are kept;
// the `locale` attribute is accepted and otherwise ignored. RegexFullMatch compiles its pattern with RE2, whose
// syntax the spec names; RE2 matches in time linear in the input without recursion, so no input string or pattern
// can overflow the stack or backtrack exponentially.
#include <re2/re2.h>

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ep/cpu/elementwise/broadcast.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> string_tfidf_kernels();

namespace {

constexpr DataTypeMask kStringMask = type_mask(TypeList<std::string>{});

std::string ascii_lower(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

std::string ascii_upper(std::string text) {
  for (char& c : text) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return text;
}

Status require_string_input(KernelInputs inputs, size_t index, const std::string& description) {
  if (index >= inputs.size() || inputs[index] == nullptr) {
    return make_error(StatusCode::kInvalidArgument, description, ": missing input ", index);
  }
  if (inputs[index]->dtype() != DataType::kString) {
    return make_error(StatusCode::kInvalidArgument, description, ": input ", index, " must be string, got ",
                      data_type_name(inputs[index]->dtype()));
  }
  return Status::ok();
}

enum class CaseChange { kNone, kLower, kUpper };

// Drops the elements that are stop words, then changes case. Accepts [C] and [1, C]; an all-dropped input
// yields a single empty string ([1] or [1, 1]).
class StringNormalizerKernel final : public Kernel {
 public:
  StringNormalizerKernel(std::string description, CaseChange change, bool case_sensitive,
                         std::vector<std::string> stopwords)
      : description_(std::move(description)), change_(change), case_sensitive_(case_sensitive) {
    for (std::string& word : stopwords) stopwords_.insert(case_sensitive_ ? word : ascii_lower(word));
  }

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_string_input(inputs, 0, description_));
    const Tensor& x = *inputs[0];
    if (!(x.rank() == 1 || (x.rank() == 2 && x.shape()[0] == 1))) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 shape ", shape_to_string(x.shape()),
                        " must be [C] or [1, C]");
    }
    const int64_t kept = std::max<int64_t>(1, static_cast<int64_t>(kept_indices(x).size()));
    outputs.assign(1, OutputDesc{DataType::kString, x.rank() == 1 ? Shape{kept} : Shape{1, kept}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    const Tensor& x = *inputs[0];
    const std::string* in = x.data<std::string>();
    std::string* out = outputs[0].data<std::string>();
    const std::vector<int64_t> kept = kept_indices(x);
    if (kept.empty()) {
      out[0].clear();
      return Status::ok();
    }
    for (size_t i = 0; i < kept.size(); ++i) {
      const std::string& word = in[kept[i]];
      out[i] = change_ == CaseChange::kLower ? ascii_lower(word) : change_ == CaseChange::kUpper ? ascii_upper(word) : word;
    }
    return Status::ok();
  }

 private:
  std::vector<int64_t> kept_indices(const Tensor& x) const {
    std::vector<int64_t> kept;
    const std::string* in = x.data<std::string>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (!stopwords_.empty() && stopwords_.count(case_sensitive_ ? in[i] : ascii_lower(in[i])) > 0) continue;
      kept.push_back(i);
    }
    return kept;
  }

  std::string description_;
  CaseChange change_;
  bool case_sensitive_;
  std::unordered_set<std::string> stopwords_;
};

class StringConcatKernel final : public Kernel {
 public:
  explicit StringConcatKernel(std::string description) : description_(std::move(description)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_string_input(inputs, 0, description_));
    TRY(require_string_input(inputs, 1, description_));
    const auto shape = broadcast_shapes(inputs[0]->shape(), inputs[1]->shape());
    if (!shape) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input shapes ",
                        shape_to_string(inputs[0]->shape()), " and ", shape_to_string(inputs[1]->shape()),
                        " do not broadcast");
    }
    outputs.assign(1, OutputDesc{DataType::kString, *shape});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    if (outputs[0].numel() == 0) return Status::ok();
    broadcast_binary(inputs[0]->data<std::string>(), inputs[0]->shape(), inputs[1]->data<std::string>(),
                     inputs[1]->shape(), outputs[0].data<std::string>(), outputs[0].shape(), pool,
                     [](const std::string& a, const std::string& b) { return a + b; }, 1024);
    return Status::ok();
  }

 private:
  std::string description_;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// Python's str.split: with a delimiter, every occurrence splits (empty pieces kept); without one, runs of
// whitespace split and leading/trailing whitespace is dropped. At most `maxsplit` splits when it is >= 0; the
// unsplit remainder then keeps its trailing whitespace.
std::vector<std::string> split_string(const std::string& text, const std::string& delimiter, int64_t maxsplit) {
  std::vector<std::string> pieces;
  if (!delimiter.empty()) {
    size_t start = 0;
    while (maxsplit < 0 || static_cast<int64_t>(pieces.size()) < maxsplit) {
      const size_t at = text.find(delimiter, start);
      if (at == std::string::npos) break;
      pieces.push_back(text.substr(start, at - start));
      start = at + delimiter.size();
    }
    pieces.push_back(text.substr(start));
    return pieces;
  }
  size_t i = 0;
  const size_t n = text.size();
  while (true) {
    while (i < n && is_space(text[i])) ++i;
    if (i == n) break;
    if (maxsplit >= 0 && static_cast<int64_t>(pieces.size()) == maxsplit) {
      pieces.push_back(text.substr(i));  // the remainder keeps its trailing whitespace, as in Python
      break;
    }
    const size_t start = i;
    while (i < n && !is_space(text[i])) ++i;
    pieces.push_back(text.substr(start, i - start));
  }
  return pieces;
}

class StringSplitKernel final : public Kernel {
 public:
  StringSplitKernel(std::string description, std::string delimiter, int64_t maxsplit)
      : description_(std::move(description)), delimiter_(std::move(delimiter)), maxsplit_(maxsplit) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_string_input(inputs, 0, description_));
    const Tensor& x = *inputs[0];
    int64_t widest = 0;
    const std::string* in = x.data<std::string>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      widest = std::max<int64_t>(widest, static_cast<int64_t>(split_string(in[i], delimiter_, maxsplit_).size()));
    }
    Shape y_shape = x.shape();
    y_shape.push_back(widest);
    outputs.assign({OutputDesc{DataType::kString, y_shape}, OutputDesc{DataType::kInt64, x.shape()}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    const Tensor& x = *inputs[0];
    const std::string* in = x.data<std::string>();
    std::string* y = outputs[0].data<std::string>();
    int64_t* counts = outputs[1].data<int64_t>();
    const int64_t widest = outputs[0].shape().back();
    for (int64_t i = 0; i < x.numel(); ++i) {
      std::vector<std::string> pieces = split_string(in[i], delimiter_, maxsplit_);
      counts[i] = static_cast<int64_t>(pieces.size());
      for (int64_t j = 0; j < widest; ++j) {
        y[i * widest + j] = j < counts[i] ? std::move(pieces[static_cast<size_t>(j)]) : std::string();
      }
    }
    return Status::ok();
  }

 private:
  std::string description_;
  std::string delimiter_;
  int64_t maxsplit_;  // -1: unlimited
};

class RegexFullMatchKernel final : public Kernel {
 public:
  // `pattern` compiled without error; RE2 objects are safe to match from several threads at once.
  RegexFullMatchKernel(std::string description, std::unique_ptr<const re2::RE2> pattern)
      : description_(std::move(description)), pattern_(std::move(pattern)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_string_input(inputs, 0, description_));
    outputs.assign(1, OutputDesc{DataType::kBool, inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    const std::string* in = inputs[0]->data<std::string>();
    bool* out = outputs[0].data<bool>();
    for (int64_t i = 0; i < inputs[0]->numel(); ++i) out[i] = re2::RE2::FullMatch(in[i], *pattern_);
    return Status::ok();
  }

 private:
  std::string description_;
  std::unique_ptr<const re2::RE2> pattern_;
};

Expected<std::unique_ptr<Kernel>> create_string_normalizer(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const std::string action, node.attr_string("case_change_action", "NONE"));
  CaseChange change = CaseChange::kNone;
  if (action == "LOWER") {
    change = CaseChange::kLower;
  } else if (action == "UPPER") {
    change = CaseChange::kUpper;
  } else if (action != "NONE") {
    return make_error(StatusCode::kInvalidArgument, node.describe(), ": attribute case_change_action = '", action,
                      "' must be LOWER, UPPER or NONE");
  }
  TRY_ASSIGN(const int64_t case_sensitive, node.attr_int("is_case_sensitive", 0));
  std::vector<std::string> stopwords;
  if (const graph::Attribute* a = node.find_attribute("stopwords")) {
    if (a->type != graph::Attribute::Type::kStrings) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute stopwords must be strings");
    }
    stopwords = a->strings;
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<StringNormalizerKernel>(node.describe(), change, case_sensitive != 0, std::move(stopwords)));
}

Expected<std::unique_ptr<Kernel>> create_string_concat(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<StringConcatKernel>(info.node.describe()));
}

Expected<std::unique_ptr<Kernel>> create_string_split(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const std::string delimiter, node.attr_string("delimiter", ""));
  const bool has_maxsplit = node.find_attribute("maxsplit") != nullptr;
  TRY_ASSIGN(const int64_t maxsplit, node.attr_int("maxsplit", -1));
  if (has_maxsplit && maxsplit < 0) {
    return make_error(StatusCode::kInvalidArgument, node.describe(), ": attribute maxsplit = ", maxsplit,
                      " is negative");
  }
  return std::unique_ptr<Kernel>(std::make_unique<StringSplitKernel>(node.describe(), delimiter, maxsplit));
}

Expected<std::unique_ptr<Kernel>> create_regex_full_match(const KernelInfo& info) {
  const graph::Node& node = info.node;
  if (node.find_attribute("pattern") == nullptr) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": required attribute 'pattern' is missing");
  }
  TRY_ASSIGN(const std::string pattern, node.attr_string("pattern", ""));
  re2::RE2::Options options;
  options.set_log_errors(false);
  auto compiled = std::make_unique<const re2::RE2>(pattern, options);
  if (!compiled->ok()) {
    return make_error(StatusCode::kInvalidArgument, node.describe(), ": attribute pattern '", pattern,
                      "' is not a valid RE2 regular expression (", compiled->error(), ")");
  }
  return std::unique_ptr<Kernel>(std::make_unique<RegexFullMatchKernel>(node.describe(), std::move(compiled)));
}

const KernelDef kStringKernels[] = {
    {"StringNormalizer", graph::kOnnxDomain, 10, kLatestOpset, kStringMask, 0, create_string_normalizer},
    {"StringConcat", graph::kOnnxDomain, 20, kLatestOpset, kStringMask, 0, create_string_concat},
    {"StringSplit", graph::kOnnxDomain, 20, kLatestOpset, kStringMask, 0, create_string_split},
    {"RegexFullMatch", graph::kOnnxDomain, 20, kLatestOpset, kStringMask, 0, create_regex_full_match},
};

std::vector<KernelDef> all_string_kernels() {
  std::vector<KernelDef> rows(std::begin(kStringKernels), std::end(kStringKernels));
  for (const KernelDef& row : string_tfidf_kernels()) rows.push_back(row);
  return rows;
}

}  // namespace

std::span<const KernelDef> string_kernels() {
  static const std::vector<KernelDef> rows = all_string_kernels();
  return rows;
}

}  // namespace nxrt::cpu
