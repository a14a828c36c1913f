// The parsed form of a chat template (genai/template.h): expressions and statements, shared by the parser
// (template_parse.cpp) and the renderer (template_render.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "genai/template.h"
#include "genai/template_value.h"

namespace nxrt::genai {

struct TemplateExpr {
  enum class Kind {
    kLiteral,   // value
    kName,      // name
    kAttribute, // args[0].name
    kIndex,     // args[0][args[1]]
    kSlice,     // args[0][args[1]:args[2]:args[3]] (missing parts are null pointers)
    kCall,      // args[0](args[1..]) with keyword names for the last keywords.size() arguments
    kFilter,    // args[0] | name(args[1..])
    kTest,      // args[0] is [not] name(args[1..]) (negated)
    kNot,       // not args[0]
    kNegate,    // -args[0]
    kBinary,    // args[0] op args[1]
    kAnd,
    kOr,
    kConditional,  // args[0] if args[1] else args[2] (args[2] may be null: undefined)
    kList,         // [args...]
    kDict,         // {keys[i]: args[i]} with keys as expressions args[2i], values args[2i + 1]
  };
  Kind kind = Kind::kLiteral;
  int line = 0;
  TemplateValue value;
  std::string name;  // name, attribute, filter, test, or the binary operator
  bool negated = false;
  std::vector<std::unique_ptr<TemplateExpr>> args;
  std::vector<std::string> keywords;  // names of the trailing keyword arguments of a call or filter
};

struct TemplateStmt {
  enum class Kind { kText, kOutput, kIf, kFor, kSet, kBreak, kContinue };
  Kind kind = Kind::kText;
  int line = 0;
  std::string text;                                  // kText
  std::unique_ptr<TemplateExpr> expr;                // kOutput; kFor's iterable; kSet's value
  std::vector<std::unique_ptr<TemplateExpr>> conditions;  // kIf: one per branch (else: none); kFor: its filter
  std::vector<std::vector<std::unique_ptr<TemplateStmt>>> bodies;  // kIf: one per branch, then else; kFor: body, else
  std::vector<std::string> targets;  // kFor: loop variables; kSet: name, or namespace and attribute
};

using TemplateBody = std::vector<std::unique_ptr<TemplateStmt>>;

struct TemplateProgram {
  TemplateBody body;
};

}  // namespace nxrt::genai
