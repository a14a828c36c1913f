// String operators: StringNormalizer, StringConcat, StringSplit, RegexFullMatch (TfIdfVectorizer lives in
// string_tfidf.cpp). StringNormalizer changes case code point by code point with Unicode's simple case mapping
// (one code point to one: "été" <-> "ÉTÉ", "ß" has no simple upper case and stays), the same for every locale;
// the `locale` attribute is accepted and otherwise ignored. Bytes that are not valid UTF-8 are kept as they are.
// RegexFullMatch compiles its pattern with RE2, whose syntax the spec names; RE2 matches in time linear in the
// input without recursion, so no input string or pattern can overflow the stack or backtrack exponentially.
#include <re2/re2.h>

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#if defined(__GLIBC__)
#include <locale.h>
#include <wctype.h>
#endif

#include "ep/cpu/elementwise/broadcast.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> string_tfidf_kernels();

namespace {

constexpr DataTypeMask kStringMask = type_mask(TypeList<std::string>{});

enum class CaseChange { kNone, kLower, kUpper };

#if defined(__GLIBC__)
// glibc's C.UTF-8 locale holds Unicode's simple case mappings; created once, read-only afterwards (the *_l
// functions never touch the process's global locale). Null where the C library lacks it.
locale_t unicode_case_locale() {
  static const locale_t locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  return locale;
}
#endif

char32_t change_code_point_case(char32_t code_point, CaseChange change) {
#if defined(__GLIBC__)
  if (const locale_t locale = unicode_case_locale(); locale != static_cast<locale_t>(nullptr)) {
    const auto wide = static_cast<wint_t>(code_point);
    return static_cast<char32_t>(change == CaseChange::kLower ? towlower_l(wide, locale) : towupper_l(wide, locale));
  }
#endif
  if (change == CaseChange::kLower && code_point >= U'A' && code_point <= U'Z') return code_point - U'A' + U'a';
  if (change == CaseChange::kUpper && code_point >= U'a' && code_point <= U'z') return code_point - U'a' + U'A';
  return code_point;
}

// The length of the well-formed UTF-8 sequence at text[at] and its code point, or 0 where the bytes there are
// not one (a stray continuation byte, a truncated or overlong sequence, a surrogate, past U+10FFFF).
size_t decode_utf8(const std::string& text, size_t at, char32_t& code_point) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || at + length > text.size()) return 0;
  char32_t value = length == 1 ? lead : lead & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xC0) != 0x80) return 0;
    value = (value << 6) | (byte(at + i) & 0x3F);
  }
  static constexpr char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < kSmallest[length] || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return 0;
  code_point = value;
  return length;
}

void append_utf8(char32_t code_point, std::string& out) {
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

std::string change_case(const std::string& text, CaseChange change) {
  if (change == CaseChange::kNone) return text;
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    char32_t code_point = 0;
    const size_t length = decode_utf8(text, at, code_point);
    if (length == 0) {
      out.push_back(text[at++]);
      continue;
    }
    append_utf8(change_code_point_case(code_point, change), out);
    at += length;
  }
  return out;
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

// Drops the elements that are stop words, then changes case. Accepts [C] and [1, C]; an all-dropped input
// yields a single empty string ([1] or [1, 1]).
class StringNormalizerKernel final : public Kernel {
 public:
  StringNormalizerKernel(std::string description, CaseChange change, bool case_sensitive,
                         std::vector<std::string> stopwords)
      : description_(std::move(description)), change_(change), case_sensitive_(case_sensitive) {
    for (std::string& word : stopwords) stopwords_.insert(case_sensitive_ ? word : change_case(word, CaseChange::kLower));
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
      out[i] = change_case(word, change_);
    }
    return Status::ok();
  }

 private:
  std::vector<int64_t> kept_indices(const Tensor& x) const {
    std::vector<int64_t> kept;
    const std::string* in = x.data<std::string>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (!stopwords_.empty() &&
          stopwords_.count(case_sensitive_ ? in[i] : change_case(in[i], CaseChange::kLower)) > 0) {
        continue;
      }
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

// Unicode's White_Space characters as Python's str.isspace sees them (the C0 separators U+001C-U+001F included).
bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// The byte length of the white-space character at text[at], 0 where there is none.
size_t white_space_at(const std::string& text, size_t at) {
  char32_t code_point = 0;
  const size_t length = decode_utf8(text, at, code_point);
  return length != 0 && is_white_space(code_point) ? length : 0;
}

// Python's str.split: with a delimiter, every occurrence splits (empty pieces kept); without one, runs of
// white space (Unicode's, in UTF-8) split and leading/trailing white space is dropped. At most `maxsplit` splits
// when it is >= 0; the unsplit remainder then keeps its trailing white space.
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
    for (size_t space = 0; i < n && (space = white_space_at(text, i)) != 0;) i += space;
    if (i == n) break;
    if (maxsplit >= 0 && static_cast<int64_t>(pieces.size()) == maxsplit) {
      pieces.push_back(text.substr(i));  // the remainder keeps its trailing white space, as in Python
      break;
    }
    const size_t start = i;
    while (i < n && white_space_at(text, i) == 0) ++i;
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
