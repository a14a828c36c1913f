// Bounds on structure whose depth or size a model file decides. A model is untrusted input: every recursion
// over its graphs, types and functions checks these before it recurses, so a hostile file gets an
// INVALID_ARGUMENT naming what was too deep, the limit and where, never a stack overflow or an OOM.
// The parser (src/onnx), the importer's function inlining (src/import), shape inference (src/graph) and the
// optimizer (src/optimizer) all use these values, so a model accepted by one layer is accepted by the next.
#pragma once

#include <cstdint>

namespace nxrt::graph {

// Subgraph levels below the main graph: the main graph (and a function body) is level 0, the branches of an If
// in it level 1, a Loop body inside that branch level 2. Exporters produce a handful of levels; 64 leaves ample
// room while keeping each walk over nested graphs (parse, import, inference, session creation, a run through
// nested control flow) a few hundred stack frames deep, which fits the smallest thread stacks callers use.
inline constexpr int kMaxGraphNesting = 64;

// TypeProto levels counting the outermost: tensor(float) is 1, seq(tensor(float)) is 2,
// optional(seq(map(int64,tensor(float)))) is 4. Real types nest two or three levels; 64 bounds the
// recursion of the type parser and of every printer and converter of types by the same margin as graphs.
inline constexpr int kMaxTypeNesting = 64;

// Model-local function calls active at once while inlining: a main-graph node calling f is depth 1, a node
// of f's body calling g is depth 2. Calls through subgraphs of a body count too. Function libraries
// layer a few levels (a model op calling a helper calling a primitive); 64 matches the graph bound.
inline constexpr int kMaxFunctionCallDepth = 64;

// Nodes emitted by inlining model-local functions, counting every node of every expanded body (a call node
// counts as one, so empty bodies fan out too). A call chain fanning out two calls per level reaches 2^64
// nodes within the depth bound; 2^20 (about a million) is several times the node count of the largest
// exported models, and counting up to it takes milliseconds where materialising it would take gigabytes.
inline constexpr int64_t kMaxInlinedNodes = int64_t{1} << 20;

}  // namespace nxrt::graph
