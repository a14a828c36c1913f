// Turns fuzzer bytes into a model, its feeds and session options (fuzz_kernel: one node of any registered op;
// fuzz_graph: a small graph), and runs it. Every byte string decodes to some model; a Status from the session is
// a normal outcome, a crash, hang, leak or sanitizer report is a bug.
//
// Byte format. The header is read from the front; tensor values are read from the back (the data section), so
// a mutation of the header never re-reads value bytes as structure. Both readers stop where they meet; past
// that, header reads give 0 and value reads give zero bytes. In the grammar u8 is one byte, small(u8) is the
// byte itself when < 64 and else (byte - 64) % 9, varint is zigzag LEB128 (at most 10 bytes), f32 is 4 bytes
// little-endian.
//
//   kernel case := flags:u8 op_ref opset:u8 n_inputs:u8 kernel_input* outputs attributes
//   graph case  := flags:u8 onnx_opset:u8 ml_opset:u8 n_nodes:u8 graph_node*
//   flags       := bits 0-1 graph_optimization_level (0: 0, 1: 99, 2: 1, 3: 2); bit 2 run twice;
//                  bit 3 (graph case) only the last node's outputs are graph outputs
//   op_ref      := t:u8, t in 1..63: op type name[t] domain:u8 (index into kFuzzDomains); an unregistered name
//                  picks an op by its hash. 64..239: index ((t - 64) << 8 | u8) into the catalog. 240..255: one
//                  of kStructuralOps. 0: Identity.
//   opset:u8       kernel case: the op's opset when a registry row covers it, else chosen from the rows' ranges.
//                  graph case: onnx_opset is used when in 1..28 (else 1 + v % 28), ml_opset is 1 + v % 5,
//                  other domains 1; a node whose op has no row at that opset takes the next op that has one.
//   n_inputs:u8    min_inputs + v % (max_inputs - min_inputs + 1) of the op's schema (1..4 without one).
//   kernel_input := mode:u8 [dtype:u8 tensor_shape | dtype:u8 count:u8 tensor_shape{count % 4}]
//     mode bits 0-1: 0/3 graph input fed at run, 1 initializer (strings: fed), 2 omitted ("", nothing follows);
//     bits 2-3 the declared shape of a fed input: 0/3 exact, 1 symbolic names, 2 none; bit 4 a sequence (where
//     the schema allows one; always where it takes only sequences): `count` fed tensors joined by a
//     SequenceConstruct (SequenceEmpty for 0) helper node.
//     dtype: 0 is the dtype of the earlier input of the same type constraint; a value the input allows is
//     itself; else allowed[v % n], where `allowed` is the schema's type list narrowed to the registry row's
//     types for the row's type input.
//   tensor_shape := rank:u8 (% 7) dim:u8{rank} (small); more than 4096 elements halves the largest dim
//                  until it fits. Values: storage bytes from the data section (bools fed as v & 1); a string
//                  element is len:u8 (small) then that many bytes, both from the data section.
//   outputs     := v:u8: min_outputs + (v & 15) % (max_outputs - min_outputs + 1) outputs; bit 4 + i of v
//                  omits optional output i.
//   attributes  := count:u8 (small) attribute*
//   attribute   := name:u8 kind:u8 value
//     name: bit 7 set: a literal name of (name & 127) bytes follows; else schema attribute v % n (an op without
//     schema attributes falls back to kCommonAttributeNames).
//     kind: 1 FLOAT, 2 INT, 3 STRING, 4 TENSOR, 5 GRAPH, 6 FLOATS, 7 INTS, 8 STRINGS; anything else the
//     schema's kind for the name (INT for an unknown name).
//     value: FLOAT f32 | INT varint | STRING len:u8 (small) bytes | TENSOR dtype:u8 (% 27, undefined and
//     string read as float) tensor_shape | GRAPH graph_body | FLOATS count:u8 (small) f32* | INTS count:u8
//     (small) varint* | STRINGS count:u8 (small) (len:u8 (small) bytes)*
//   graph_body  := n_inputs:u8 (% 4) (dtype:u8 (% 27) shape:u8)* n_nodes:u8 (% 3; 0 at nesting depth 2)
//                  graph_node* n_outputs:u8 (1 + % 3) source:u8*
//     a body input's shape byte: % 8 == 7 no shape, else that rank of symbolic dims. A source names a visible
//     value (body inputs, enclosing values, earlier body outputs): (source & 127) % count; bit 7 wraps it in
//     an Identity node. With nothing visible the body outputs a Constant scalar.
//   graph_node  := op_ref n_inputs:u8 graph_input* outputs attributes
//   graph_input := src:u8: 255 omitted; < 192 with values visible: visible value src % count; else a new
//                  kernel_input (a main-graph input or initializer).
// Names: a kernel case's node reads in0.., writes out0..; graph cases name values v0.., nodes n0...
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/value.h"
#include "onnx/model_writer.h"

namespace nxrt::fuzz {

inline constexpr int64_t kMaxTensorElements = 4096;
inline constexpr int kMaxBodyDepth = 2;
// A run still going after this long is ended through RunOptions::terminate: far more than any fuzz case needs
// (inputs of at most 4096 elements), far less than libFuzzer's -timeout, and cheap when a model legitimately
// runs for hours (a Loop with a huge trip count).
inline constexpr std::chrono::milliseconds kRunBudget{250};

struct FuzzCase {
  onnx::write::Model model;
  std::vector<std::string> feed_names;
  std::vector<Value> feeds;
  int graph_optimization_level = 0;
  bool run_twice = false;
};

// Decodes a kernel case (one node of any registered op). Never fails.
FuzzCase decode_kernel_case(std::span<const uint8_t> bytes);
// Decodes a graph case (2-6 nodes). Never fails.
FuzzCase decode_graph_case(std::span<const uint8_t> bytes);

// Encodes the model, creates a session (one thread, the case's optimization level) and runs it (twice when
// asked), each run ended through RunOptions::terminate after kRunBudget. Statuses are ignored; with
// NXRT_FUZZ_VERBOSE set in the environment each is printed on stderr.
void run_fuzz_case(const FuzzCase& fuzz_case);

}  // namespace nxrt::fuzz
