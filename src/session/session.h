// Session: load -> parse -> import -> infer types/shapes -> create kernels -> plan -> run.
// A Session is immutable after creation; run() may be called from several threads at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "core/value.h"
#include "core/thread_pool.h"
#include "graph/graph.h"

namespace nxrt {

namespace onnx {
class ModelBytes;
}  // namespace onnx

// Per-node wall time of a session's runs (main graph nodes; a control-flow node's time includes its subgraphs).
struct NodeTiming {
  std::string name;
  std::string op_type;
  int64_t calls = 0;
  double total_ms = 0;
};

// Collects NodeTiming across runs; thread-safe (concurrent runs add under a lock).
class NodeProfile {
 public:
  // Adds one run: node_ms[i] is the wall time of graph.nodes[i].
  void add_run(const graph::Graph& graph, std::span<const double> node_ms);
  std::vector<NodeTiming> nodes() const;  // in graph order
  int64_t runs() const;

 private:
  mutable std::mutex mutex_;
  std::vector<NodeTiming> nodes_;
  int64_t runs_ = 0;
};

struct SessionOptions {
  int intra_op_num_threads = 0;  // 0: one per hardware core; 1: no worker threads
  int graph_optimization_level = 99;  // 0 disable, 1 basic, 2 extended, 99 all (ONNX Runtime's values)
  std::map<std::string, int64_t> free_dimension_overrides;  // symbolic dim name -> size
  // Dim denotation (e.g. "DATA_BATCH") -> size, for the graph inputs' dims that carry one and have no fixed size.
  std::map<std::string, int64_t> free_dimension_overrides_by_denotation;
  std::shared_ptr<ThreadPool> shared_thread_pool;  // used instead of a per-session pool when set
  // Times every node of every run into `profile` (created by the session when null; pass one to read it).
  bool enable_profiling = false;
  std::shared_ptr<NodeProfile> profile;
  // Deadline of every run in milliseconds, counted from the start of run() (0: none); RunOptions::run_timeout_ms
  // overrides it per run. ONNX Runtime has no timeout option (only RunOptions' terminate flag); a run past its
  // deadline fails as a terminated one does, with a FAIL status naming the limit and the node where it stopped.
  int64_t run_timeout_ms = 0;
  // Most bytes one tensor may take (0: no limit but what the allocator can give). Checked before a run allocates
  // a node output (an error naming the node, op type, output and bytes) and when an initializer is loaded (an
  // error naming the initializer). Sizes whose element or byte count overflows 64 bits always fail.
  size_t max_tensor_bytes = 0;
  // Providers in preference order, by name ("CPUExecutionProvider", "TestDeviceExecutionProvider"; the short
  // forms without "ExecutionProvider" too). Empty: the CPU alone. The CPU is appended when absent and runs the
  // nodes no other provider takes, unless disable_cpu_fallback (ONNX Runtime's config key
  // "session.disable_cpu_ep_fallback") makes that an error. A provider this build cannot create is an error.
  std::vector<std::string> execution_providers;
  bool disable_cpu_fallback = false;
  // Main-graph initializers by name, used instead of the model's data (ONNX Runtime's AddInitializer /
  // AddExternalInitializers): host tensors of the dtype and shape the model declares, shared, not copied (the caller
  // keeps them unchanged while the session lives); the model's data for them is not read, so its external data
  // file need not exist. A name that is no main-graph initializer fails session creation.
  std::map<std::string, Tensor> initializers;
  // Called once on the imported main graph after the free-dimension overrides and before type and shape inference
  // and optimization (C++ only: embedders such as nxrt.genai narrow a model to what they read). It may add values,
  // graph inputs and nodes; it leaves Value::producer / consumers and the topological node order valid (e.g. with
  // graph::topological_sort). An error fails session creation.
  std::function<Status(graph::Graph&)> edit_graph;
};

// Runs stop between nodes, between subgraph runs of Loop/Scan/If, and between the tasks of long parallel kernels
// (GEMM, convolution) once `terminate` is set or the deadline passes; they then fail with FAIL.
struct RunOptions {
  // Set by another thread to stop runs using these options: ONNX Runtime's "Exiting due to terminate flag being
  // set to true." error.
  const std::atomic<bool>* terminate = nullptr;
  std::string tag;
  // > 0: this run's deadline in milliseconds, instead of SessionOptions::run_timeout_ms; 0: the session's.
  int64_t run_timeout_ms = 0;
};

struct ValueDesc {
  std::string name;
  graph::TypeInfo type;
};

// One node of a session's optimized main graph and the provider that runs it.
struct NodeAssignment {
  std::string name;
  std::string op_type;
  std::string domain;
  std::string provider;  // full name, e.g. "CPUExecutionProvider"
};

struct ModelMetadata {
  std::string producer_name;
  std::string producer_version;
  std::string graph_name;
  std::string domain;
  std::string description;
  std::string graph_description;
  int64_t version = 0;
  int64_t ir_version = 0;
  std::map<std::string, std::string> custom_metadata;
};

struct BoundRunResult;  // session/io_binding.h

class Session {
 public:
  static Expected<std::unique_ptr<Session>> create_from_file(const std::string& path,
                                                             const SessionOptions& options = {});
  static Expected<std::unique_ptr<Session>> create_from_bytes(std::string_view bytes,
                                                              const SessionOptions& options = {});
  // Builds on bytes the caller keeps alive through `bytes` (no copy; initializers may point into them).
  static Expected<std::unique_ptr<Session>> create_from_model_bytes(std::shared_ptr<const onnx::ModelBytes> bytes,
                                                                    const SessionOptions& options = {});
  ~Session();

  const std::vector<ValueDesc>& inputs() const;
  const std::vector<ValueDesc>& outputs() const;
  const ModelMetadata& metadata() const;
  // The optimized main graph's nodes in execution order, each with its provider (a fused elementwise chain as the
  // model's nodes it runs).
  std::vector<NodeAssignment> node_assignments() const;
  const std::map<std::string, int64_t>& opsets() const;
  // The optimized, partitioned main graph (Node::provider says which provider runs each node).
  const graph::Graph& graph() const;
  int num_threads() const;
  // Full names of the session's providers, in preference order (the CPU last).
  std::vector<std::string> providers() const;

  // What the run arena (the blocks runs allocate their unplanned values from) holds: blocks taken from the system
  // allocator so far, bytes cached for later runs, and the most bytes ever in use at once; and the largest planned
  // block of the run states waiting for the next run (see session/memory_plan.h).
  struct ArenaStats {
    int64_t system_allocations = 0;
    int64_t cached_bytes = 0;
    int64_t peak_in_use_bytes = 0;
    int64_t planned_block_bytes = 0;
  };
  ArenaStats arena_stats() const;

  // Feeds are matched to graph inputs by name; outputs are returned in the order of `output_names`
  // (empty: every graph output). Errors are worded as ONNX Runtime's: missing input, unknown name,
  // wrong element type, wrong rank, wrong dim.
  Expected<std::vector<Tensor>> run(std::span<const std::string> input_names, std::span<const Tensor> inputs,
                                    std::span<const std::string> output_names,
                                    const RunOptions& run_options = {}) const;
  // As run(), for models whose inputs or outputs are sequences or optionals (run() refuses those outputs).
  Expected<std::vector<Value>> run_values(std::span<const std::string> input_names, std::span<const Value> inputs,
                                          std::span<const std::string> output_names,
                                          const RunOptions& run_options = {}) const;
  // As run(), writing outputs into caller tensors where it can (IO binding); defined in io_binding.cpp, whose
  // header states the contract. bound_outputs holds one entry per requested output; `allocate_on[i]` (empty: the
  // host) is where an unbound output i is returned.
  Expected<BoundRunResult> run_bound(std::span<const std::string> input_names, std::span<const Tensor> inputs,
                                     std::span<const std::string> output_names, std::span<const Tensor> bound_outputs,
                                     const RunOptions& run_options = {},
                                     std::span<const Device> allocate_on = {}) const;

  // The fast path of callable APIs: one value per graph input in declaration order, every output returned.
  Expected<std::vector<Value>> run_in_order(std::span<const Value> inputs, const RunOptions& run_options = {}) const;

  struct Impl;

 private:
  friend class PreparedRun;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace nxrt
