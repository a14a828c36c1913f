// Bounds on inlining model-local functions (ModelProto.functions), checked on the parsed model before the
// importer builds anything. Inlining replaces every node whose (domain, op_type) names a model function by
// the function's body, recursively; a model can make that infinite (a function calling itself) or
// exponential (f1 calling f2 twice, f2 calling f3 twice, ...). This check walks the expansion the importer
// would perform, counting instead of building, so such a model is refused in time and memory bounded by
// graph/model_limits.h rather than by the machine.
#pragma once

#include <string_view>

#include "core/status.h"
#include "onnx/model_proto.h"

namespace nxrt::onnx {

// Walks the main graph as import::import_model expands it: a call is replaced by the callee's body (its
// attribute references resolved against the calling node, then the callee's defaults), GRAPH and GRAPHS
// attributes (also those a body reaches through ref_attr_name) are walked as nested graphs. INVALID_ARGUMENT,
// naming the functions involved and the graph and node the expansion started from, when
// - a function calls itself, directly or through other functions or subgraphs ("f -> g -> f");
// - calls nest deeper than graph::kMaxFunctionCallDepth;
// - more than graph::kMaxInlinedNodes nodes would be inlined;
// - an inlined body brings subgraphs deeper than graph::kMaxGraphNesting.
// A model without functions returns at once. Attribute errors the importer reports (a reference outside a
// function, a missing graph) are left to it.
Status check_function_expansion(const ModelProto& model);

// The domain a node or function resolves in: "ai.onnx" is the default domain "".
std::string_view normalized_domain(std::string_view domain);

}  // namespace nxrt::onnx
