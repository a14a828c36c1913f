// Chat-template rendering (contract in template.h): statements write text; expressions evaluate to
// TemplateValue with Jinja2's semantics for the supported subset.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <unordered_map>

#include "genai/template_ast.h"
#include "genai/template_builtins.h"
#include "genai/unicode.h"

namespace nxrt::genai {

namespace {

using Value = TemplateValue;
using Kind = TemplateValue::Kind;

enum class Flow { kNormal, kBreak, kContinue };

// Limits: a template cannot build more than this much output, nor run more statements and loop iterations.
constexpr size_t kMaxOutputBytes = size_t{64} << 20;
constexpr int64_t kMaxSteps = 2'000'000;

class Renderer {
 public:
  explicit Renderer(const Value& globals) { scopes_.push_back(globals); }

  Expected<Flow> run(const TemplateBody& body, std::string& out) {
    for (const auto& stmt : body) {
      if (++steps_ > kMaxSteps) return template_error(stmt->line, "the template ran more than 2M steps");
      TRY_ASSIGN(const Flow flow, execute(*stmt, out));
      if (flow != Flow::kNormal) return flow;
      if (out.size() > kMaxOutputBytes) return template_error(stmt->line, "the output exceeds 64 MiB");
    }
    return Flow::kNormal;
  }

 private:
  Expected<Flow> execute(const TemplateStmt& s, std::string& out) {
    switch (s.kind) {
      case TemplateStmt::Kind::kText: out += s.text; return Flow::kNormal;
      case TemplateStmt::Kind::kOutput: {
        TRY_ASSIGN(const Value v, eval(*s.expr));
        out += v.str();
        return Flow::kNormal;
      }
      case TemplateStmt::Kind::kIf:
        for (size_t i = 0; i < s.bodies.size(); ++i) {
          bool take = i >= s.conditions.size();
          if (!take) {
            TRY_ASSIGN(const Value c, eval(*s.conditions[i]));
            take = c.truthy();
          }
          if (take) return run(s.bodies[i], out);
        }
        return Flow::kNormal;
      case TemplateStmt::Kind::kFor: return execute_for(s, out);
      case TemplateStmt::Kind::kSet: {
        TRY_ASSIGN(Value v, eval(*s.expr));
        if (s.targets.size() == 1) {
          scopes_.back().set(s.targets[0], std::move(v));
          return Flow::kNormal;
        }
        const Value target = lookup(s.targets[0]);
        if (!target.is_dict() || target.find("__namespace__") == nullptr) {
          return template_error(s.line, "'" + s.targets[0] + "' is not a namespace");
        }
        target.set(s.targets[1], std::move(v));
        return Flow::kNormal;
      }
      case TemplateStmt::Kind::kBreak: return Flow::kBreak;
      case TemplateStmt::Kind::kContinue: return Flow::kContinue;
    }
    return Flow::kNormal;
  }

  Expected<Flow> execute_for(const TemplateStmt& s, std::string& out) {
    TRY_ASSIGN(const Value iterable, eval(*s.expr));
    TRY_ASSIGN(Value::List items, iterate(iterable, s.line));
    if (!s.conditions.empty()) {  // the loop's own filter runs before loop.* is known
      Value::List kept;
      for (const Value& item : items) {
        scopes_.push_back(Value::dict());
        bind_targets(s, item);
        auto keep = eval(*s.conditions[0]);
        scopes_.pop_back();
        if (!keep) return keep.status();
        if (keep->truthy()) kept.push_back(item);
      }
      items = std::move(kept);
    }
    // As Jinja2 does, the else block runs unless some iteration ran its body to the end (neither break nor
    // continue), not only for an empty sequence.
    bool completed = false;
    const int64_t n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n; ++i) {
      if (++steps_ > kMaxSteps) return template_error(s.line, "the template ran more than 2M steps");
      scopes_.push_back(Value::dict());
      bind_targets(s, items[static_cast<size_t>(i)]);
      Value loop = Value::dict();
      loop.set("index", Value::integer(i + 1));
      loop.set("index0", Value::integer(i));
      loop.set("revindex", Value::integer(n - i));
      loop.set("revindex0", Value::integer(n - i - 1));
      loop.set("first", Value::boolean(i == 0));
      loop.set("last", Value::boolean(i == n - 1));
      loop.set("length", Value::integer(n));
      loop.set("previtem", i > 0 ? items[static_cast<size_t>(i - 1)] : Value());
      loop.set("nextitem", i + 1 < n ? items[static_cast<size_t>(i + 1)] : Value());
      scopes_.back().set("loop", loop);
      auto flow = run(s.bodies[0], out);
      scopes_.pop_back();
      if (!flow) return flow.status();
      if (*flow == Flow::kBreak) break;
      completed = completed || *flow == Flow::kNormal;
    }
    if (!completed && s.bodies.size() > 1) return run(s.bodies[1], out);
    return Flow::kNormal;
  }

  void bind_targets(const TemplateStmt& s, const Value& item) {
    if (s.targets.size() == 1) {
      scopes_.back().set(s.targets[0], item);
      return;
    }
    for (size_t t = 0; t < s.targets.size(); ++t) {
      const bool unpack = item.is_list() && t < item.items().size();
      scopes_.back().set(s.targets[t], unpack ? item.items()[t] : Value());
    }
  }

  Expected<Value::List> iterate(const Value& v, int line) {
    if (v.is_list()) return v.items();
    if (v.is_dict()) {
      Value::List keys;
      for (const auto& [key, value] : v.members()) keys.push_back(Value::string(key));
      return keys;
    }
    if (v.is_string()) {
      Value::List chars;
      for (std::string& c : utf8_characters(v.as_string())) chars.push_back(Value::string(std::move(c)));
      return chars;
    }
    if (v.is_undefined() || v.is_none()) return Value::List{};
    return template_error(line, "a " + template_type_name(v) + " is not iterable");
  }

  Value lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (const Value* v = it->find(name)) return *v;
    }
    return Value();
  }

  Expected<Value> eval(const TemplateExpr& e);
  Expected<Value> call(const TemplateExpr& e);
  // Evaluates e.args[first..]: positional values, then the trailing keyword ones.
  Status arguments(const TemplateExpr& e, size_t first, std::vector<Value>& args, TemplateKeywords& keywords);

  std::vector<Value> scopes_;  // dicts: globals, then one per loop iteration
  int64_t steps_ = 0;
};

// Python's index normalisation for a sequence of `size` (negative counts from the end).
int64_t normalize_index(int64_t i, int64_t size) { return i < 0 ? i + size : i; }


Expected<Value> Renderer::eval(const TemplateExpr& e) {
  using EK = TemplateExpr::Kind;
  switch (e.kind) {
    case EK::kLiteral: return e.value;
    case EK::kName: return lookup(e.name);
    case EK::kAttribute: {
      TRY_ASSIGN(const Value obj, eval(*e.args[0]));
      if (obj.is_undefined()) return template_error(e.line, "an undefined value has no attribute '" + e.name + "'");
      const Value* member = obj.find(e.name);
      return member != nullptr ? *member : Value();
    }
    case EK::kIndex: {
      TRY_ASSIGN(const Value obj, eval(*e.args[0]));
      TRY_ASSIGN(const Value key, eval(*e.args[1]));
      if (obj.is_undefined()) return template_error(e.line, "an undefined value cannot be indexed");
      if (obj.is_dict()) {
        const Value* member = key.is_string() ? obj.find(key.as_string()) : nullptr;
        return member != nullptr ? *member : Value();
      }
      if ((obj.is_list() || obj.is_string()) && key.kind() == Kind::kInt) {
        const std::vector<std::string> chars = obj.is_string() ? utf8_characters(obj.as_string()) : std::vector<std::string>{};
        const int64_t size = obj.is_list() ? static_cast<int64_t>(obj.items().size()) : static_cast<int64_t>(chars.size());
        const int64_t i = normalize_index(key.as_int(), size);
        if (i < 0 || i >= size) return Value();
        return obj.is_list() ? obj.items()[static_cast<size_t>(i)] : Value::string(chars[static_cast<size_t>(i)]);
      }
      return template_error(e.line, "a " + template_type_name(obj) + " cannot be indexed by a " + template_type_name(key));
    }
    case EK::kSlice: {
      TRY_ASSIGN(const Value obj, eval(*e.args[0]));
      Value bounds[3];
      for (int i = 0; i < 3; ++i) {
        if (e.args[static_cast<size_t>(i) + 1] != nullptr) {
          TRY_ASSIGN(bounds[i], eval(*e.args[static_cast<size_t>(i) + 1]));
        }
      }
      if (!obj.is_list() && !obj.is_string()) return template_error(e.line, "a " + template_type_name(obj) + " cannot be sliced");
      const std::vector<std::string> chars = obj.is_string() ? utf8_characters(obj.as_string()) : std::vector<std::string>{};
      const int64_t size = obj.is_list() ? static_cast<int64_t>(obj.items().size()) : static_cast<int64_t>(chars.size());
      const int64_t step = bounds[2].kind() == Kind::kInt ? bounds[2].as_int() : 1;
      if (step == 0) return template_error(e.line, "a slice step of 0");
      const auto bound = [&](const Value& v, int64_t fallback) {
        if (v.kind() != Kind::kInt) return fallback;
        const int64_t i = normalize_index(v.as_int(), size);
        return step > 0 ? std::clamp<int64_t>(i, 0, size) : std::clamp<int64_t>(i, -1, size - 1);
      };
      const int64_t start = bound(bounds[0], step > 0 ? 0 : size - 1);
      const int64_t stop = bound(bounds[1], step > 0 ? size : -1);
      Value::List items;
      std::string text;
      for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
        if (obj.is_list()) {
          items.push_back(obj.items()[static_cast<size_t>(i)]);
        } else {
          text += chars[static_cast<size_t>(i)];
        }
        if (__builtin_add_overflow(i, step, &i)) break;
      }
      return obj.is_list() ? Value::list(std::move(items)) : Value::string(std::move(text));
    }
    case EK::kCall: return call(e);
    case EK::kFilter:
    case EK::kTest: {
      TRY_ASSIGN(const Value input, eval(*e.args[0]));
      std::vector<Value> args;
      TemplateKeywords keywords;
      TRY(arguments(e, 1, args, keywords));
      if (e.kind == EK::kTest) {
        TRY_ASSIGN(const bool result, apply_test(e.name, input, args, e.line));
        return Value::boolean(result != e.negated);
      }
      return apply_filter(e.name, input, args, keywords, e.line);
    }
    case EK::kNot: {
      TRY_ASSIGN(const Value v, eval(*e.args[0]));
      return Value::boolean(!v.truthy());
    }
    case EK::kNegate: {
      TRY_ASSIGN(const Value v, eval(*e.args[0]));
      if (v.kind() == Kind::kFloat || (v.is_number() && v.as_int() == INT64_MIN)) return Value::floating(-v.as_float());
      if (v.is_number()) return Value::integer(-v.as_int());
      return template_error(e.line, "cannot negate a " + template_type_name(v));
    }
    case EK::kAnd: {
      TRY_ASSIGN(const Value a, eval(*e.args[0]));
      if (!a.truthy()) return a;
      return eval(*e.args[1]);
    }
    case EK::kOr: {
      TRY_ASSIGN(const Value a, eval(*e.args[0]));
      if (a.truthy()) return a;
      return eval(*e.args[1]);
    }
    case EK::kConditional: {
      TRY_ASSIGN(const Value c, eval(*e.args[1]));
      if (c.truthy()) return eval(*e.args[0]);
      return e.args[2] != nullptr ? eval(*e.args[2]) : Expected<Value>(Value());
    }
    case EK::kBinary: {
      TRY_ASSIGN(const Value a, eval(*e.args[0]));
      TRY_ASSIGN(const Value b, eval(*e.args[1]));
      return apply_binary(e.name, a, b, e.line);
    }
    case EK::kList: {
      Value::List items;
      for (const auto& item : e.args) {
        TRY_ASSIGN(Value v, eval(*item));
        items.push_back(std::move(v));
      }
      return Value::list(std::move(items));
    }
    case EK::kDict: {
      Value d = Value::dict();
      for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
        TRY_ASSIGN(const Value key, eval(*e.args[i]));
        TRY_ASSIGN(Value v, eval(*e.args[i + 1]));
        d.set(key.str(), std::move(v));
      }
      return d;
    }
  }
  return Value();
}

Status Renderer::arguments(const TemplateExpr& e, size_t first, std::vector<Value>& args,
                           TemplateKeywords& keywords) {
  const size_t positional = e.args.size() - e.keywords.size();
  for (size_t i = first; i < e.args.size(); ++i) {
    TRY_ASSIGN(Value v, eval(*e.args[i]));
    if (i < positional) {
      args.push_back(std::move(v));
    } else {
      keywords.emplace_back(e.keywords[i - positional], std::move(v));
    }
  }
  return Status::ok();
}

Expected<Value> Renderer::call(const TemplateExpr& e) {
  const TemplateExpr& callee = *e.args[0];
  std::vector<Value> args;
  TemplateKeywords keywords;
  if (callee.kind == TemplateExpr::Kind::kAttribute) {
    TRY_ASSIGN(const Value self, eval(*callee.args[0]));
    TRY(arguments(e, 1, args, keywords));
    return call_method(self, callee.name, args, e.line);
  }
  if (callee.kind == TemplateExpr::Kind::kName && lookup(callee.name).is_undefined()) {
    TRY(arguments(e, 1, args, keywords));
    return call_global(callee.name, args, keywords, e.line);
  }
  return template_error(e.line, "only methods and the globals range, namespace, raise_exception and strftime_now "
                              "can be called");
}

}  // namespace

Expected<std::string> ChatTemplate::render(const TemplateValue& context) const {
  if (!context.is_dict()) return make_error(StatusCode::kInvalidArgument, "chat template: the context must be a dict");
  Renderer renderer(context);
  std::string out;
  TRY(renderer.run(program_->body, out).status());
  return out;
}

}  // namespace nxrt::genai
