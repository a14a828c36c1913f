// Values of the chat-template language (a Jinja2 subset, genai/template.h): undefined, none, booleans, integers,
// floats, strings, lists and dicts (ordered, string keys), with Python's printing (str and repr), truthiness,
// equality and ordering, and JSON output as transformers' tojson writes it (json.dumps with ensure_ascii off).
// Lists and dicts are shared: a copy of a Value refers to the same list or dict, as Python's names do.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nxrt::genai {

class JsonValue;

class TemplateValue {
 public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict };
  using List = std::vector<TemplateValue>;
  using Dict = std::vector<std::pair<std::string, TemplateValue>>;

  TemplateValue() = default;  // undefined
  static TemplateValue none();
  static TemplateValue boolean(bool v);
  static TemplateValue integer(int64_t v);
  static TemplateValue floating(double v);
  static TemplateValue string(std::string v);
  static TemplateValue list(List items = {});
  static TemplateValue dict(Dict members = {});
  static TemplateValue from_json(const JsonValue& json);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat || kind_ == Kind::kBool; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_dict() const { return kind_ == Kind::kDict; }

  bool as_bool() const { return bool_; }
  // Floats truncate toward zero, saturating at the int64 range (NaN gives 0).
  int64_t as_int() const;
  double as_float() const { return kind_ == Kind::kFloat ? float_ : static_cast<double>(int_); }
  const std::string& as_string() const { return string_; }
  List& items() const { return *list_; }
  Dict& members() const { return *dict_; }

  // A dict's member, or null.
  const TemplateValue* find(std::string_view key) const;
  // Sets a dict's member (replacing one of the same name).
  void set(const std::string& key, TemplateValue value) const;

  bool truthy() const;
  // Python's str(): strings as they are, None as "None", booleans "True" / "False", floats as repr.
  std::string str() const;
  // Python's repr(): strings quoted.
  std::string repr() const;
  // JSON text; indent < 0: one line with ", " and ": " separators.
  std::string json(int indent = -1) const;
  int64_t length() const;

  friend bool operator==(const TemplateValue& a, const TemplateValue& b);
  // Ordering of numbers with numbers and strings with strings; nullopt for other pairs.
  static std::optional<int> compare(const TemplateValue& a, const TemplateValue& b);

 private:
  void write_json(std::string& out, int indent, int depth) const;

  Kind kind_ = Kind::kUndefined;
  bool bool_ = false;
  int64_t int_ = 0;
  double float_ = 0.0;
  std::string string_;
  std::shared_ptr<List> list_;
  std::shared_ptr<Dict> dict_;
};

// Python's repr() of a float ("1.0", "0.1", "1e+20", "inf", "nan").
std::string python_float_repr(double v);

}  // namespace nxrt::genai
