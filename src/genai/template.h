// Chat templates: the Jinja2 subset that the chat_template of a tokenizer_config.json is written in, rendered as
// transformers' apply_chat_template renders it (trim_blocks and lstrip_blocks on, loop controls, tojson without
// HTML escaping, raise_exception and strftime_now as globals).
//
// Supported: text, {{ expressions }}, {# comments #}, whitespace control (-), {% if / elif / else / endif %},
// {% for a[, b] in ... [if cond] %} with else, loop.index / index0 / revindex / revindex0 / first / last / length /
// previtem / nextitem, {% break %} / {% continue %}, {% set x = ... %} and {% set ns.attr = ... %} with namespace();
// literals (strings, numbers, true / false / none in either case, lists, dicts), names, .attribute, [index],
// [start:stop:step], calls, filters (length, count, trim, upper, lower, capitalize, title, tojson(indent), string,
// int, float, list, first, last, join, default / d, items, replace, safe, reverse, sort(attribute), map(attribute),
// selectattr / rejectattr, unique, abs, round, wordcount), tests (defined, undefined, none, string, number, integer,
// float, boolean, true, false, mapping, iterable, sequence, even, odd, divisibleby, eq / ne / lt / le / gt / ge / in),
// operators (or, and, not, in, not in, is, is not, ==, !=, <, <=, >, >=, ~, +, -, *, /, //, %, unary -, x if c else
// y), string methods (strip, lstrip, rstrip, startswith, endswith, split, upper, lower, replace, title, capitalize,
// find, count), dict methods (items, keys, values, get) and the globals range, namespace, raise_exception,
// strftime_now. Anything else (macros, call blocks, includes...) is an error naming its line. Rendering errors
// (an undefined name dereferenced, a type mismatch, raise_exception) are INVALID_ARGUMENT naming the line. Hostile
// templates are bounded: nesting deeper than 100, more than 2M statements or loop iterations, and strings or output
// beyond 64 MiB are errors.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "genai/template_value.h"

namespace nxrt::genai {

struct TemplateProgram;

class ChatTemplate {
 public:
  static Expected<ChatTemplate> parse(std::string_view source);
  // Renders with `context` (a dict) as the global variables.
  Expected<std::string> render(const TemplateValue& context) const;

 private:
  std::shared_ptr<const TemplateProgram> program_;
};

}  // namespace nxrt::genai
