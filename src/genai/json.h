// JSON values for the files of a generative model folder (genai_config.json, tokenizer.json,
// tokenizer_config.json), parsed per RFC 8259: strings are decoded to UTF-8 (\u escapes with surrogate pairs; a
// lone surrogate or invalid UTF-8 is an error), numbers are kept as double and, when written as integers that fit,
// as int64 too. Object members keep their order; find() returns the last member of a name. Nesting deeper than
// kMaxJsonDepth is an error, so hostile files cannot exhaust the stack. Errors give the line and column.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace nxrt::genai {

inline constexpr int kMaxJsonDepth = 256;

class JsonValue {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  using Members = std::vector<std::pair<std::string, JsonValue>>;

  JsonValue() = default;
  static JsonValue boolean(bool value);
  static JsonValue number(double value, std::optional<int64_t> integer, std::string literal = {});
  static JsonValue string(std::string value);
  static JsonValue array(std::vector<JsonValue> items);
  static JsonValue object(Members members);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_number() const { return kind_ == Kind::kNumber; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_array() const { return kind_ == Kind::kArray; }
  bool is_object() const { return kind_ == Kind::kObject; }

  // The value of its kind; callers check the kind first (a wrong kind gives false, 0, "" or an empty list).
  bool as_bool() const { return bool_; }
  double as_number() const { return number_; }
  // The number when it was written as an integer that fits int64.
  std::optional<int64_t> as_int() const { return integer_; }
  const std::string& as_string() const { return kind_ == Kind::kString ? string_ : empty_string(); }
  // A parsed number's text as written (empty for numbers made by number() without one).
  const std::string& number_literal() const { return kind_ == Kind::kNumber ? string_ : empty_string(); }
  const std::vector<JsonValue>& items() const { return items_; }
  const Members& members() const { return members_; }

  // The object's last member called `key`, or null (also when this is not an object).
  const JsonValue* find(std::string_view key) const;

 private:
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  double number_ = 0.0;
  std::optional<int64_t> integer_;
  static const std::string& empty_string();
  std::string string_;  // a string, or a number's literal
  std::vector<JsonValue> items_;
  Members members_;
};

// The kind's name as error messages print it ("object", "string"...).
std::string_view json_kind_name(JsonValue::Kind kind);

// Parses one JSON text (surrounding whitespace allowed). `what` names the source in errors (a path).
Expected<JsonValue> parse_json(std::string_view text, std::string_view what);

// Reads and parses a file; a missing file is NO_SUCHFILE naming the path.
Expected<JsonValue> read_json_file(const std::string& path);

}  // namespace nxrt::genai
