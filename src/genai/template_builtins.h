// The built-in operations of the chat-template language (genai/template.h): binary operators, filters, tests,
// string / dict / list methods and the globals range, namespace, raise_exception and strftime_now, with Jinja2's
// (and Python's) semantics for the supported cases. Errors name the template line.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "genai/template_value.h"

namespace nxrt::genai {

using TemplateKeywords = std::vector<std::pair<std::string, TemplateValue>>;

// INVALID_ARGUMENT "chat template line N: what", the form of every template error.
Status template_error(int line, const std::string& what);

// "string", "list", "undefined value"... for error messages.
std::string template_type_name(const TemplateValue& v);

Expected<TemplateValue> apply_binary(const std::string& op, const TemplateValue& a, const TemplateValue& b, int line);
Expected<TemplateValue> apply_filter(const std::string& name, const TemplateValue& input,
                                     const std::vector<TemplateValue>& args, const TemplateKeywords& keywords,
                                     int line);
Expected<bool> apply_test(const std::string& name, const TemplateValue& input, const std::vector<TemplateValue>& args,
                          int line);
Expected<TemplateValue> call_method(const TemplateValue& self, const std::string& name,
                                    const std::vector<TemplateValue>& args, int line);
Expected<TemplateValue> call_global(const std::string& name, const std::vector<TemplateValue>& args,
                                    const TemplateKeywords& keywords, int line);

}  // namespace nxrt::genai
