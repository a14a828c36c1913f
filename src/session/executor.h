// Runs a created session once: validates feeds against the model, executes nodes in topological order,
// allocating each output from the session arena when its node runs and releasing every value after its last reader.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "session/session_impl.h"

namespace nxrt {

// Caller buffers for graph values (IO binding), indexed by value id of the main graph (null: allocate). The
// tensor kernel producing such a value writes into the buffer when the dtype and shape it computes match;
// otherwise it allocates as usual and the caller copies. Empty: no bound buffers.
using BoundBuffers = std::span<const Tensor* const>;

// A run state of the session's pool, held for the lifetime of this object (one run, or a PreparedRun's life).
// Its values are sized for the main graph and all reset. Destroying it needs only the pool, not the session.
class LeasedRunState {
 public:
  explicit LeasedRunState(const Session::Impl& session);
  ~LeasedRunState();
  LeasedRunState(const LeasedRunState&) = delete;
  LeasedRunState& operator=(const LeasedRunState&) = delete;
  RunState& operator*() const { return *state_; }
  RunState* operator->() const { return state_.get(); }

 private:
  std::shared_ptr<RunStatePool> pool_;
  std::unique_ptr<RunState> state_;
};

// Sets state.values[id] = inputs[i] for each feed `input_names[i]`, with ONNX Runtime's checks and wording (unknown
// name, fed twice, type and shape, missing input). `ids` (optional) receives the value id of each feed.
Status bind_feeds(const Session::Impl& session, std::span<const std::string> input_names,
                  std::span<const Value> inputs, RunState& state, std::vector<int>* ids = nullptr);
// state.wanted = the value ids of `output_names` (empty: every graph output); "Invalid output name" else.
Status bind_outputs(const Session::Impl& session, std::span<const std::string> output_names, RunState& state);

// Runs with the feeds matched by name and returns the requested outputs on the host.
Expected<std::vector<Value>> execute(const Session::Impl& session, std::span<const std::string> input_names,
                                     std::span<const Value> inputs, std::span<const std::string> output_names,
                                     const RunOptions& run_options);

// A copy of `tensor` on `target` (the host or the device of one of the session's providers), made by the provider
// on the device side; device to device goes through the host. INVALID_ARGUMENT for a device the session lacks.
Expected<Tensor> copy_to_device(const Session::Impl& session, const Tensor& tensor, Device target);
// As copy_to_device, into the existing `target` (same dtype and element count).
Status copy_into(const Session::Impl& session, const Tensor& source, const Tensor& target);

// The value id of graph input (or overridable initializer) `name`; INVALID_ARGUMENT ("Invalid input name") else.
Expected<int> feed_id(const Session::Impl& session, const std::string& name);
// The value id of graph output `name`; INVALID_ARGUMENT ("Invalid output name") else.
Expected<int> output_id(const Session::Impl& session, const std::string& name);
// ONNX Runtime's checks of a feed against the declared type and shape of value `id`.
Status check_feed_value(const Session::Impl& session, int id, const Value& value);

// Runs the main graph once. `state.values` holds the validated feeds (every graph input set) and `state.wanted`
// the requested outputs; `feeds` are the caller's values (an output sharing their storage is copied). `results`
// receives one value per wanted output, on output_devices[i] (empty: the host). Every value of the state is
// reset when it returns, and its planned block laid out again when this run outgrew it.
Status run_main(const Session::Impl& session, RunState& state, std::span<const Value> feeds,
                const RunOptions& run_options, BoundBuffers bound, std::span<const Device> output_devices,
                std::vector<Value>& results);

// Feeds `inputs` to the graph inputs in declaration order and returns every output.
Expected<std::vector<Value>> execute_in_order(const Session::Impl& session, std::span<const Value> inputs,
                                              const RunOptions& run_options);

}  // namespace nxrt
