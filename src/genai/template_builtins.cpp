// Built-in operations of the chat-template language (contract in template_builtins.h).
#include "genai/template_builtins.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>

#include "genai/unicode.h"

namespace nxrt::genai {

namespace {

using Value = TemplateValue;
using Kind = TemplateValue::Kind;

bool is_integral(const Value& v) { return v.kind() == Kind::kInt || v.kind() == Kind::kBool; }

// The largest string an operation may build (the same bound as a template's whole output).
constexpr size_t kMaxStringBytes = size_t{64} << 20;

Expected<Value> sized_string(std::string s, int line) {
  if (s.size() > kMaxStringBytes) return template_error(line, "a string of more than 64 MiB");
  return Value::string(std::move(s));
}

const Value* keyword(const TemplateKeywords& keywords, std::string_view name) {
  for (const auto& [key, value] : keywords) {
    if (key == name) return &value;
  }
  return nullptr;
}

// The argument at `index`, else the keyword `name`, else null.
const Value* argument(const std::vector<Value>& args, size_t index, const TemplateKeywords& keywords,
                      std::string_view name) {
  if (index < args.size()) return &args[index];
  return keyword(keywords, name);
}

bool is_space_at(const std::string& s, size_t at, size_t& next) {
  char32_t c = 0;
  next = at;
  return decode_utf8(s, next, c) && is_white_space(c);
}

std::string strip(const std::string& s, bool left, bool right, const Value* chars) {
  size_t begin = 0, end = s.size();
  if (chars != nullptr && chars->is_string()) {
    const std::string& set = chars->as_string();
    while (left && begin < end && set.find(s[begin]) != std::string::npos) ++begin;
    while (right && end > begin && set.find(s[end - 1]) != std::string::npos) --end;
    return s.substr(begin, end - begin);
  }
  size_t next = 0;
  while (left && begin < end && is_space_at(s, begin, next)) begin = next;
  while (right && end > begin) {
    size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    if (!is_space_at(s, start, next)) break;
    end = start;
  }
  return s.substr(begin, end - begin);
}

std::string ascii_case(std::string s, bool upper) {
  for (char& c : s) {
    if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
    if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return s;
}

std::string capitalize(const std::string& s) {
  std::string out = ascii_case(s, false);
  if (!out.empty()) out[0] = ascii_case(out.substr(0, 1), true)[0];
  return out;
}

// Python's str.title() for ASCII letters; other letters keep their case but count as letters (no word start).
std::string title(const std::string& s) {
  std::string out;
  bool start = true;
  for (size_t at = 0; at < s.size();) {
    const size_t begin = at;
    char32_t c = 0;
    if (!decode_utf8(s, at, c)) {
      c = 0xFFFD;
      at = begin + 1;
    }
    std::string piece = s.substr(begin, at - begin);
    if (c < 0x80) piece = ascii_case(piece, start);
    out += piece;
    start = !is_letter(c);
  }
  return out;
}

std::string replace(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
  if (from.empty()) return s;
  std::string out;
  size_t at = 0;
  for (int64_t done = 0; count < 0 || done < count; ++done) {
    const size_t found = s.find(from, at);
    if (found == std::string::npos) break;
    out += s.substr(at, found - at) + to;
    at = found + from.size();
  }
  return out + s.substr(at);
}

Value split(const std::string& s, const Value* separator, int64_t max_split) {
  Value::List parts;
  if (separator == nullptr || separator->is_none()) {  // runs of white space, none at the ends
    size_t at = 0, next = 0;
    while (true) {
      while (at < s.size() && is_space_at(s, at, next)) at = next;
      if (at >= s.size()) break;
      if (max_split >= 0 && static_cast<int64_t>(parts.size()) == max_split) {
        parts.push_back(Value::string(strip(s.substr(at), false, true, nullptr)));
        break;
      }
      size_t end = at;
      while (end < s.size() && !is_space_at(s, end, next)) end = next > end ? next : end + 1;
      parts.push_back(Value::string(s.substr(at, end - at)));
      at = end;
    }
    return Value::list(std::move(parts));
  }
  const std::string& sep = separator->as_string();
  size_t at = 0;
  while (!sep.empty() && (max_split < 0 || static_cast<int64_t>(parts.size()) < max_split)) {
    const size_t found = s.find(sep, at);
    if (found == std::string::npos) break;
    parts.push_back(Value::string(s.substr(at, found - at)));
    at = found + sep.size();
  }
  parts.push_back(Value::string(s.substr(at)));
  return Value::list(std::move(parts));
}

Expected<Value> number_op(const std::string& op, const Value& a, const Value& b, int line) {
  const bool integers = is_integral(a) && is_integral(b);
  const double x = a.as_float(), y = b.as_float();
  if (integers && (op == "+" || op == "-" || op == "*")) {
    int64_t result = 0;
    const bool overflow = op == "+"   ? __builtin_add_overflow(a.as_int(), b.as_int(), &result)
                          : op == "-" ? __builtin_sub_overflow(a.as_int(), b.as_int(), &result)
                                      : __builtin_mul_overflow(a.as_int(), b.as_int(), &result);
    if (overflow) return template_error(line, "integer overflow in " + op);
    return Value::integer(result);
  }
  if (op == "+") return Value::floating(x + y);
  if (op == "-") return Value::floating(x - y);
  if (op == "*") return Value::floating(x * y);
  if (y == 0.0 && (op == "/" || op == "//" || op == "%")) return template_error(line, "division by zero");
  if (op == "/") return Value::floating(x / y);
  if (integers) {
    const int64_t p = a.as_int(), q = b.as_int();
    if (p == INT64_MIN && q == -1) return template_error(line, "integer overflow in " + op);
    int64_t quotient = p / q, remainder = p % q;
    if (remainder != 0 && ((remainder < 0) != (q < 0))) {
      --quotient;
      remainder += q;
    }
    return op == "//" ? Value::integer(quotient) : Value::integer(remainder);
  }
  const double floor = std::floor(x / y);
  return op == "//" ? Value::floating(floor) : Value::floating(x - floor * y);
}

Expected<Value> select_attribute(const Value& input, const std::vector<Value>& args, bool keep_matches, int line) {
  if (!input.is_list() || args.empty() || !args[0].is_string()) {
    return template_error(line, "selectattr / rejectattr take a list and an attribute name");
  }
  Value::List kept;
  for (const Value& item : input.items()) {
    const Value* member = item.find(args[0].as_string());
    const Value value = member != nullptr ? *member : Value();
    bool match = value.truthy();
    if (args.size() > 1) {
      if (!args[1].is_string()) return template_error(line, "a test name must be a string");
      const std::vector<Value> rest(args.begin() + 2, args.end());
      TRY_ASSIGN(match, apply_test(args[1].as_string(), value, rest, line));
    }
    if (match == keep_matches) kept.push_back(item);
  }
  return Value::list(std::move(kept));
}

}  // namespace

Status template_error(int line, const std::string& what) {
  return make_error(StatusCode::kInvalidArgument, "chat template line ", line, ": ", what);
}

std::string template_type_name(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined: return "undefined value";
    case Kind::kNone: return "None";
    case Kind::kBool: return "boolean";
    case Kind::kInt: return "integer";
    case Kind::kFloat: return "float";
    case Kind::kString: return "string";
    case Kind::kList: return "list";
    case Kind::kDict: return "dict";
  }
  return "value";
}

Expected<Value> apply_binary(const std::string& op, const Value& a, const Value& b, int line) {
  if (op == "==") return Value::boolean(a == b);
  if (op == "!=") return Value::boolean(!(a == b));
  if (op == "<" || op == "<=" || op == ">" || op == ">=") {
    const auto order = Value::compare(a, b);
    if (!order) return template_error(line, "cannot compare a " + template_type_name(a) + " with a " + template_type_name(b));
    const int c = *order;
    return Value::boolean(op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0);
  }
  if (op == "in") {
    if (b.is_string() && a.is_string()) return Value::boolean(b.as_string().find(a.as_string()) != std::string::npos);
    if (b.is_list()) return Value::boolean(std::any_of(b.items().begin(), b.items().end(), [&](const Value& v) { return v == a; }));
    if (b.is_dict()) return Value::boolean(a.is_string() && b.find(a.as_string()) != nullptr);
    if (b.is_undefined()) return template_error(line, "'in' an undefined value");
    return template_error(line, "'in' a " + template_type_name(b));
  }
  if (op == "~") {
    if (a.str().size() + b.str().size() > kMaxStringBytes) return template_error(line, "a string of more than 64 MiB");
    return Value::string(a.str() + b.str());
  }
  if (a.is_number() && b.is_number()) return number_op(op, a, b, line);
  if (op == "+" && a.is_string() && b.is_string()) {
    if (a.as_string().size() + b.as_string().size() > kMaxStringBytes) {
      return template_error(line, "a string of more than 64 MiB");
    }
    return Value::string(a.as_string() + b.as_string());
  }
  if (op == "+" && a.is_list() && b.is_list()) {
    Value::List items = a.items();
    items.insert(items.end(), b.items().begin(), b.items().end());
    return Value::list(std::move(items));
  }
  if (op == "*" && a.is_string() && is_integral(b)) {
    const int64_t times = std::max<int64_t>(b.as_int(), 0);
    if (!a.as_string().empty() && static_cast<uint64_t>(times) > kMaxStringBytes / a.as_string().size()) {
      return template_error(line, "a string of more than 64 MiB");
    }
    std::string out;
    for (int64_t i = 0; i < times; ++i) out += a.as_string();
    return Value::string(std::move(out));
  }
  return template_error(line, "unsupported operand types for " + op + ": " + template_type_name(a) + " and " +
                            template_type_name(b));
}

Expected<Value> apply_filter(const std::string& name, const Value& input, const std::vector<Value>& args,
                             const TemplateKeywords& keywords, int line) {
  const Value* arg0 = argument(args, 0, keywords, name == "tojson" ? "indent" : name == "join" ? "d" : "");
  if (name == "length" || name == "count") return Value::integer(input.length());
  if (name == "safe") return input;
  if (name == "string") return Value::string(input.str());
  if (name == "default" || name == "d") {
    const Value* fallback = argument(args, 0, keywords, "default_value");
    const Value* boolean = argument(args, 1, keywords, "boolean");
    const bool replace_falsy = boolean != nullptr && boolean->truthy();
    if (input.is_undefined() || (replace_falsy && !input.truthy())) return fallback != nullptr ? *fallback : Value::string("");
    return input;
  }
  if (name == "tojson") {
    const int64_t indent = arg0 != nullptr && is_integral(*arg0) ? arg0->as_int() : -1;
    if (indent > 64) return template_error(line, "tojson indent above 64");
    return sized_string(input.json(static_cast<int>(indent)), line);
  }
  if (name == "items") {
    if (!input.is_dict()) return template_error(line, "items needs a dict");
    Value::List pairs;
    for (const auto& [key, value] : input.members()) pairs.push_back(Value::list({Value::string(key), value}));
    return Value::list(std::move(pairs));
  }
  if (name == "list") {
    if (input.is_list()) return Value::list(input.items());
    Value::List items;
    if (input.is_dict()) {
      for (const auto& [key, value] : input.members()) items.push_back(Value::string(key));
    } else if (input.is_string()) {
      for (std::string& c : utf8_characters(input.as_string())) items.push_back(Value::string(std::move(c)));
    }
    return Value::list(std::move(items));
  }
  if (name == "first" || name == "last") {
    if (input.is_list()) {
      if (input.items().empty()) return Value();
      return name == "first" ? input.items().front() : input.items().back();
    }
    if (input.is_string() && !input.as_string().empty()) {  // the first or last character, not byte
      const std::vector<std::string> chars = utf8_characters(input.as_string());
      return Value::string(name == "first" ? chars.front() : chars.back());
    }
    return Value();
  }
  if (name == "reverse") {
    if (input.is_string()) return Value::string(std::string(input.as_string().rbegin(), input.as_string().rend()));
    if (!input.is_list()) return template_error(line, "reverse needs a list or a string");
    return Value::list(Value::List(input.items().rbegin(), input.items().rend()));
  }
  if (name == "join") {
    if (!input.is_list()) return template_error(line, "join needs a list");
    const std::string separator = arg0 != nullptr ? arg0->str() : "";
    std::string out;
    for (size_t i = 0; i < input.items().size() && out.size() <= kMaxStringBytes; ++i) {
      out += (i ? separator : "") + input.items()[i].str();
    }
    return sized_string(std::move(out), line);
  }
  if (name == "map") {
    const Value* attribute = keyword(keywords, "attribute");
    if (!input.is_list() || attribute == nullptr || !attribute->is_string()) {
      return template_error(line, "map is supported with attribute= on a list");
    }
    Value::List out;
    for (const Value& item : input.items()) {
      const Value* member = item.find(attribute->as_string());
      out.push_back(member != nullptr ? *member : Value());
    }
    return Value::list(std::move(out));
  }
  if (name == "selectattr" || name == "rejectattr") return select_attribute(input, args, name == "selectattr", line);
  if (name == "unique") {
    if (!input.is_list()) return template_error(line, "unique needs a list");
    Value::List out;
    for (const Value& item : input.items()) {
      if (std::none_of(out.begin(), out.end(), [&](const Value& v) { return v == item; })) out.push_back(item);
    }
    return Value::list(std::move(out));
  }
  if (name == "sort") {
    if (!input.is_list()) return template_error(line, "sort needs a list");
    const Value* attribute = keyword(keywords, "attribute");
    const Value* reverse = keyword(keywords, "reverse");
    Value::List items = input.items();
    const auto key = [&](const Value& v) {
      const Value* member = attribute != nullptr && attribute->is_string() ? v.find(attribute->as_string()) : nullptr;
      return member != nullptr ? *member : v;
    };
    std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
      const auto order = Value::compare(key(a), key(b));
      return order && (reverse != nullptr && reverse->truthy() ? *order > 0 : *order < 0);
    });
    return Value::list(std::move(items));
  }
  if (input.is_number() && (name == "abs" || name == "int" || name == "float" || name == "round")) {
    if (name == "abs") {
      if (input.kind() == Kind::kFloat || input.as_int() == INT64_MIN) return Value::floating(std::fabs(input.as_float()));
      return Value::integer(input.as_int() < 0 ? -input.as_int() : input.as_int());
    }
    if (name == "int") return Value::integer(input.as_int());
    if (name == "float") return Value::floating(input.as_float());
    const int64_t digits = arg0 != nullptr && is_integral(*arg0) ? arg0->as_int() : 0;
    const double scale = std::pow(10.0, static_cast<double>(digits));
    return Value::floating(std::round(input.as_float() * scale) / scale);
  }
  if (name == "int" || name == "float") {
    if (input.is_string()) {
      const std::string text = strip(input.as_string(), true, true, nullptr);
      double v = 0;
      const auto done = std::from_chars(text.data(), text.data() + text.size(), v);
      if (done.ec == std::errc() && done.ptr == text.data() + text.size()) {
        return name == "int" ? Value::integer(Value::floating(v).as_int()) : Value::floating(v);
      }
    }
    return name == "int" ? Value::integer(0) : Value::floating(0.0);
  }
  if (!input.is_string()) {
    return template_error(line, "filter '" + name + "' is not supported on a " + template_type_name(input));
  }
  const std::string& s = input.as_string();
  if (name == "trim") return Value::string(strip(s, true, true, arg0));
  if (name == "upper") return Value::string(ascii_case(s, true));
  if (name == "lower") return Value::string(ascii_case(s, false));
  if (name == "capitalize") return Value::string(capitalize(s));
  if (name == "title") return Value::string(title(s));
  if (name == "wordcount") return Value::integer(split(s, nullptr, -1).length());
  if (name == "replace" && args.size() >= 2 && args[0].is_string() && args[1].is_string()) {
    return sized_string(replace(s, args[0].as_string(), args[1].as_string(), args.size() > 2 ? args[2].as_int() : -1),
                        line);
  }
  if (name == "escape" || name == "e") {
    std::string out;
    for (const char c : s) {
      out += c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '"' ? "&#34;" : c == '\'' ? "&#39;" : std::string(1, c);
    }
    return Value::string(std::move(out));
  }
  return template_error(line, "filter '" + name + "' is not supported");
}

Expected<bool> apply_test(const std::string& name, const Value& input, const std::vector<Value>& args, int line) {
  if (name == "defined") return !input.is_undefined();
  if (name == "undefined") return input.is_undefined();
  if (name == "none") return input.is_none();
  if (name == "string") return input.is_string();
  if (name == "number") return input.is_number();
  if (name == "integer") return input.kind() == Kind::kInt;
  if (name == "float") return input.kind() == Kind::kFloat;
  if (name == "boolean") return input.kind() == Kind::kBool;
  if (name == "true") return input.kind() == Kind::kBool && input.as_bool();
  if (name == "false") return input.kind() == Kind::kBool && !input.as_bool();
  if (name == "mapping") return input.is_dict();
  if (name == "iterable") return input.is_list() || input.is_dict() || input.is_string();
  if (name == "sequence") return input.is_list() || input.is_dict() || input.is_string();
  if (name == "lower") return input.is_string() && ascii_case(input.as_string(), false) == input.as_string();
  if (name == "upper") return input.is_string() && ascii_case(input.as_string(), true) == input.as_string();
  if (name == "even" || name == "odd") {
    if (!is_integral(input)) return template_error(line, "'" + name + "' needs an integer");
    return (input.as_int() % 2 == 0) == (name == "even");
  }
  if (name == "divisibleby") {
    if (!is_integral(input) || args.empty() || !is_integral(args[0]) || args[0].as_int() == 0) {
      return template_error(line, "divisibleby needs integers and a nonzero divisor");
    }
    return input.as_int() % args[0].as_int() == 0;
  }
  if (name == "sameas") return !args.empty() && input.kind() == args[0].kind() && input == args[0];
  static const std::pair<const char*, const char*> kComparisons[] = {
      {"eq", "=="}, {"equalto", "=="}, {"==", "=="}, {"ne", "!="}, {"!=", "!="}, {"lt", "<"}, {"lessthan", "<"},
      {"le", "<="}, {"gt", ">"}, {"greaterthan", ">"}, {"ge", ">="}, {"in", "in"}};
  for (const auto& [test, op] : kComparisons) {
    if (name == test) {
      if (args.empty()) return template_error(line, "test '" + name + "' needs an argument");
      TRY_ASSIGN(const Value result, apply_binary(op, input, args[0], line));
      return result.truthy();
    }
  }
  return template_error(line, "test '" + name + "' is not supported");
}

Expected<Value> call_method(const Value& self, const std::string& name, const std::vector<Value>& args, int line) {
  if (self.is_dict()) {
    if (name == "items" || name == "keys" || name == "values") {
      Value::List out;
      for (const auto& [key, value] : self.members()) {
        out.push_back(name == "items" ? Value::list({Value::string(key), value}) : name == "keys" ? Value::string(key) : value);
      }
      return Value::list(std::move(out));
    }
    if (name == "get" && !args.empty()) {
      const Value* member = args[0].is_string() ? self.find(args[0].as_string()) : nullptr;
      return member != nullptr ? *member : args.size() > 1 ? args[1] : Value::none();
    }
  }
  if (self.is_string()) {
    const std::string& s = self.as_string();
    const Value* a0 = args.empty() ? nullptr : &args[0];
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
      return Value::string(strip(s, name != "rstrip", name != "lstrip", a0));
    }
    if (name == "upper" || name == "lower") return Value::string(ascii_case(s, name == "upper"));
    if (name == "title") return Value::string(title(s));
    if (name == "capitalize") return Value::string(capitalize(s));
    if (name == "split") return split(s, a0, args.size() > 1 && is_integral(args[1]) ? args[1].as_int() : -1);
    if (name == "replace" && args.size() >= 2 && args[0].is_string() && args[1].is_string()) {
      return sized_string(
          replace(s, args[0].as_string(), args[1].as_string(), args.size() > 2 ? args[2].as_int() : -1), line);
    }
    if ((name == "startswith" || name == "endswith") && a0 != nullptr) {
      const Value::List options = a0->is_list() ? a0->items() : Value::List{*a0};
      for (const Value& option : options) {
        if (!option.is_string()) return template_error(line, name + " needs strings");
        const std::string& o = option.as_string();
        const bool hit = o.size() <= s.size() &&
                         (name == "startswith" ? s.compare(0, o.size(), o) == 0 : s.compare(s.size() - o.size(), o.size(), o) == 0);
        if (hit) return Value::boolean(true);
      }
      return Value::boolean(false);
    }
    if ((name == "find" || name == "count") && a0 != nullptr && a0->is_string()) {
      if (name == "find") {
        const size_t at = s.find(a0->as_string());
        return Value::integer(at == std::string::npos ? -1 : static_cast<int64_t>(at));
      }
      int64_t count = 0;
      for (size_t at = s.find(a0->as_string()); !a0->as_string().empty() && at != std::string::npos;
           at = s.find(a0->as_string(), at + a0->as_string().size())) {
        ++count;
      }
      return Value::integer(count);
    }
    if (name == "join" && a0 != nullptr && a0->is_list()) {
      std::string out;
      for (size_t i = 0; i < a0->items().size() && out.size() <= kMaxStringBytes; ++i) {
        out += (i ? s : "") + a0->items()[i].str();
      }
      return sized_string(std::move(out), line);
    }
  }
  if (self.is_undefined()) return template_error(line, "method '" + name + "' of an undefined value");
  return template_error(line, "method '" + name + "' is not supported on a " + template_type_name(self));
}

Expected<Value> call_global(const std::string& name, const std::vector<Value>& args, const TemplateKeywords& keywords,
                            int line) {
  if (name == "range") {
    if (args.empty() || args.size() > 3 || !std::all_of(args.begin(), args.end(), is_integral)) {
      return template_error(line, "range takes one to three integers");
    }
    const int64_t start = args.size() > 1 ? args[0].as_int() : 0;
    const int64_t stop = args.size() > 1 ? args[1].as_int() : args[0].as_int();
    const int64_t step = args.size() > 2 ? args[2].as_int() : 1;
    if (step == 0) return template_error(line, "range step of 0");
    Value::List out;
    for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
      if (out.size() >= (size_t{1} << 20)) return template_error(line, "range of more than 2^20 items");
      out.push_back(Value::integer(i));
      if (__builtin_add_overflow(i, step, &i)) break;
    }
    return Value::list(std::move(out));
  }
  if (name == "namespace") {
    Value ns = Value::dict();
    ns.set("__namespace__", Value::boolean(true));
    for (const auto& [key, value] : keywords) ns.set(key, value);
    return ns;
  }
  if (name == "raise_exception") {
    return make_error(StatusCode::kInvalidArgument, "chat template line ", line, ": raise_exception: ",
                      args.empty() ? std::string() : args[0].str());
  }
  if (name == "strftime_now") {
    if (args.empty() || !args[0].is_string()) return template_error(line, "strftime_now takes a format string");
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char buffer[256];
    const size_t n = std::strftime(buffer, sizeof buffer, args[0].as_string().c_str(), &local);
    return Value::string(std::string(buffer, n));
  }
  return template_error(line, "'" + name + "' is undefined or not callable");
}

}  // namespace nxrt::genai
