#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "bytes_view.h"
#include "core/map_value.h"
#include "errors.h"
#include "numpy_interop.h"
#include "onnx/model_proto.h"
#include "session/io_binding.h"
#include "session/session.h"
#include "value.h"

namespace nb = nanobind;

namespace nxrt::python {

namespace {

// onnxruntime.RunOptions. `terminate` is atomic: another thread may set it while a run holds no GIL.
struct PyRunOptions {
  std::atomic<bool> terminate{false};
  std::string logid;
  int log_severity_level = -1;
  int log_verbosity_level = 0;
  bool only_execute_path_to_fetches = false;
  std::map<std::string, std::string> config;
  int64_t run_timeout_ms = 0;  // > 0: this run's deadline instead of the session's
};

// A Python bytes object as the model's bytes: the session reads it in place instead of copying it. Holds a
// reference; the last owner may be any thread, so the release takes the GIL (skipped once Python is finalizing).
class PythonBytesModel final : public onnx::ModelBytes {
 public:
  // Needs the GIL; `bytes` must be a bytes object. bytes() is then callable without it.
  explicit PythonBytesModel(nb::handle bytes) : object_(bytes.ptr()), view_(bytes_view(object_)) {
    Py_INCREF(object_);
  }
  ~PythonBytesModel() override {
    if (!Py_IsInitialized()) return;
    nb::gil_scoped_acquire acquire;
    Py_DECREF(object_);
  }
  PythonBytesModel(const PythonBytesModel&) = delete;
  PythonBytesModel& operator=(const PythonBytesModel&) = delete;

  std::string_view bytes() const override { return view_; }
  const std::string& directory() const override { return directory_; }

 private:
  PyObject* object_;
  std::string_view view_;  // into object_, which is immutable
  std::string directory_;
};

struct PySession {
  std::unique_ptr<Session> session;
  nb::object model_source;  // the path (str) or bytes the session was created from
  std::vector<nb::object> initializer_owners;  // the Values whose tensors SessionOptions.add_initializer gave
  std::vector<nb::object> required_input_names;  // Python str, for the missing-input check
  std::shared_ptr<NodeProfile> profile;           // set when profiling is enabled
};

std::string utf8(nb::handle text) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_Check(text.ptr()) ? PyUnicode_AsUTF8AndSize(text.ptr(), &size) : nullptr;
  if (!data) throw nb::type_error("expected a str");
  return std::string(data, static_cast<size_t>(size));
}

nb::object shape_list(const graph::TypeInfo& type) {
  nb::list dims;
  if (!type.shape) return dims;
  for (const graph::Dim& dim : *type.shape) {
    if (dim.is_known()) {
      dims.append(dim.value);
    } else if (dim.is_symbolic()) {
      dims.append(nb::str(dim.param.c_str()));
    } else {
      dims.append(nb::none());
    }
  }
  return dims;
}

nb::list describe(const std::vector<ValueDesc>& values) {
  nb::list out;
  for (const ValueDesc& value : values) {
    out.append(nb::make_tuple(value.name, value.type.to_string(), shape_list(value.type)));
  }
  return out;
}

std::unique_ptr<PySession> create_session(nb::handle model, int intra_op_num_threads, int graph_optimization_level,
                                          const std::map<std::string, int64_t>& free_dimension_overrides,
                                          bool enable_profiling, int64_t run_timeout_ms, uint64_t max_tensor_bytes,
                                          const std::vector<std::string>& execution_providers,
                                          bool disable_cpu_fallback, nb::dict initializers,
                                          const std::map<std::string, int64_t>& free_dimension_denotations) {
  SessionOptions options;
  options.free_dimension_overrides_by_denotation = free_dimension_denotations;
  std::vector<nb::object> initializer_owners;
  for (auto [name, value] : initializers) {
    if (!nb::isinstance<PyValue>(value)) throw nb::type_error("initializers must be nxrt Values (OrtValue._value)");
    options.initializers[nb::cast<std::string>(name)] = nb::cast<PyValue&>(value).tensor;
    initializer_owners.push_back(nb::borrow(value));
  }
  options.execution_providers = execution_providers;
  options.disable_cpu_fallback = disable_cpu_fallback;
  options.run_timeout_ms = run_timeout_ms;
  options.max_tensor_bytes = static_cast<size_t>(max_tensor_bytes);
  options.intra_op_num_threads = intra_op_num_threads;
  options.graph_optimization_level = graph_optimization_level;
  options.free_dimension_overrides = free_dimension_overrides;
  auto result = std::make_unique<PySession>();
  if (enable_profiling) {
    result->profile = std::make_shared<NodeProfile>();
    options.enable_profiling = true;
    options.profile = result->profile;
  }
  result->model_source = nb::borrow(model);
  result->initializer_owners = std::move(initializer_owners);
  std::optional<Expected<std::unique_ptr<Session>>> created;
  if (PyBytes_Check(model.ptr())) {
    // `bytes` outlives `release`: when creation fails, the last reference (and its Py_DECREF) then goes with
    // the GIL held, not from inside the released region.
    auto bytes = std::make_shared<const PythonBytesModel>(model);
    nb::gil_scoped_release release;
    created.emplace(Session::create_from_model_bytes(bytes, options));
  } else {
    const std::string path = utf8(model);
    nb::gil_scoped_release release;
    created.emplace(Session::create_from_file(path, options));
  }
  result->session = value_or_throw(std::move(*created));
  for (const ValueDesc& input : result->session->inputs()) {
    if (input.type.kind == graph::TypeInfo::Kind::kOptional) continue;
    result->required_input_names.push_back(nb::str(input.name.c_str()));
  }
  return result;
}

// onnxruntime checks this in Python with this exact text; code matching on it keeps working.
void check_required_inputs(const PySession& self, nb::handle feed) {
  nb::list missing;
  for (const nb::object& name : self.required_input_names) {
    const int found = PyDict_Contains(feed.ptr(), name.ptr());
    if (found < 0) throw nb::python_error();
    if (!found) missing.append(name);
  }
  if (missing.size() == 0) return;
  nb::object keys = nb::steal(PyDict_Keys(feed.ptr()));
  nb::object text = nb::steal(
      PyUnicode_FromFormat("Required inputs (%R) are missing from input feed (%R).", missing.ptr(), keys.ptr()));
  if (!text.is_valid()) throw nb::python_error();
  PyErr_SetObject(PyExc_ValueError, text.ptr());
  throw nb::python_error();
}

// One Python key or value of a map as element `i` of `t` (int64, float, double or string), as ONNX Runtime takes
// them: int-likes (also numpy integers) for int64, numbers for floats, str for strings.
void put_map_element(PyObject* item, Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kInt64: {
      nb::object index = nb::steal(PyNumber_Index(item));
      if (!index.is_valid()) throw nb::python_error();
      const long long v = PyLong_AsLongLong(index.ptr());
      if (v == -1 && PyErr_Occurred()) throw nb::python_error();
      t.data<int64_t>()[i] = v;
      return;
    }
    case DataType::kString: {
      Py_ssize_t size = 0;
      const char* text = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &size) : nullptr;
      if (text == nullptr) {
        if (PyErr_Occurred()) throw nb::python_error();
        throw nb::type_error("a map of strings takes str keys / values");
      }
      t.data<std::string>()[i].assign(text, static_cast<size_t>(size));
      return;
    }
    default: {
      const double v = PyFloat_AsDouble(item);
      if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
      if (t.dtype() == DataType::kFloat32) {
        t.data<float>()[i] = static_cast<float>(v);
      } else {
        t.data<double>()[i] = v;
      }
    }
  }
}

// The map of a Python dict for an input declared map(K, V) (`declared`; unknown types: int or str keys and float
// values, as the first pair suggests).
Value::Map map_from_dict(PyObject* dict, const graph::TypeInfo* declared) {
  DataType key_type = declared ? declared->map_key_type : DataType::kUndefined;
  DataType value_type = declared && declared->element ? declared->element->elem_type : DataType::kUndefined;
  const Py_ssize_t count = PyDict_Size(dict);
  Py_ssize_t position = 0;
  PyObject* key = nullptr;
  PyObject* value = nullptr;
  if (key_type == DataType::kUndefined || value_type == DataType::kUndefined) {
    if (PyDict_Next(dict, &position, &key, &value)) {
      if (key_type == DataType::kUndefined) key_type = PyUnicode_Check(key) ? DataType::kString : DataType::kInt64;
      if (value_type == DataType::kUndefined) {
        value_type = PyUnicode_Check(value) ? DataType::kString
                     : PyLong_Check(value)  ? DataType::kInt64
                                            : DataType::kFloat32;
      }
    }
    if (key_type == DataType::kUndefined) key_type = DataType::kInt64;
    if (value_type == DataType::kUndefined) value_type = DataType::kFloat32;
  }
  if (!is_map_key_type(key_type) || !is_map_value_type(value_type)) {
    throw nb::type_error("nxrt maps have int64 or string keys and float, double, int64 or string values");
  }
  Tensor keys = value_or_throw(Tensor::allocate(key_type, Shape{count}));
  Tensor values = value_or_throw(Tensor::allocate(value_type, Shape{count}));
  position = 0;
  for (int64_t i = 0; PyDict_Next(dict, &position, &key, &value); ++i) {
    put_map_element(key, keys, i);
    put_map_element(value, values, i);
  }
  return value_or_throw(sorted_map(keys, values));
}

// A feed: anything tensor-like; for a sequence input also a list or tuple of tensor-likes, for an optional input
// also None (no element), for a map input a dict and for a sequence-of-maps input a list of dicts.
Value value_from_feed(const PySession& self, std::string_view name, PyObject* object, std::vector<nb::object>& keep) {
  using Kind = graph::TypeInfo::Kind;
  const bool is_list = PyList_Check(object) || PyTuple_Check(object);
  if (object != Py_None && !is_list && !PyDict_Check(object)) return Value(tensor_from_object(object, keep));
  const graph::TypeInfo* declared = nullptr;  // the input's declared type, which decides what the container is
  for (const ValueDesc& input : self.session->inputs()) {
    if (input.name == name) declared = &input.type;
  }
  if (PyDict_Check(object)) {
    if (declared && declared->kind != Kind::kMap && declared->kind != Kind::kUnknown) {
      throw nb::type_error(("input '" + std::string(name) + "' is " + declared->to_string() + ", not a map").c_str());
    }
    return Value::map(map_from_dict(object, declared));
  }
  if (is_list && declared && declared->kind == Kind::kSequence && declared->element &&
      declared->element->kind == Kind::kMap) {
    nb::object items = nb::steal(PySequence_List(object));
    if (!items.is_valid()) throw nb::python_error();
    std::vector<Value::Map> maps;
    for (Py_ssize_t i = 0; i < PyList_Size(items.ptr()); ++i) {
      PyObject* item = PyList_GetItem(items.ptr(), i);
      if (!PyDict_Check(item)) throw nb::type_error("a sequence of maps takes a list of dicts");
      maps.push_back(map_from_dict(item, declared->element.get()));
    }
    const graph::TypeInfo& element = *declared->element;
    const DataType key_type = !maps.empty() ? maps[0].keys.dtype() : element.map_key_type;
    const DataType value_type = !maps.empty()       ? maps[0].values.dtype()
                                : element.element ? element.element->elem_type
                                                  : DataType::kUndefined;
    return Value::map_sequence(key_type, value_type, std::move(maps));
  }
  const graph::TypeInfo* container = declared;
  if (container && container->kind == Kind::kOptional && container->element) {
    if (object == Py_None) {
      const bool of_sequence = container->element->kind == Kind::kSequence;
      const graph::TypeInfo* element = of_sequence ? container->element->element.get() : container->element.get();
      return Value::none(element ? element->elem_type : DataType::kUndefined, of_sequence);
    }
    container = container->element.get();
  }
  if (container && container->kind == Kind::kSequence && object != Py_None) {
    std::vector<Tensor> elements;
    nb::object items = nb::steal(PySequence_List(object));
    if (!items.is_valid()) {
      PyErr_Clear();
      throw nb::type_error("expected a list");
    }
    for (Py_ssize_t i = 0; i < PyList_Size(items.ptr()); ++i) {
      elements.push_back(tensor_from_object(PyList_GetItem(items.ptr(), i), keep));
    }
    const DataType elem_type = !elements.empty() ? elements[0].dtype()
                               : container->element ? container->element->elem_type
                                                    : DataType::kUndefined;
    return Value::sequence(elem_type, std::move(elements));
  }
  return Value(tensor_from_object(object, keep));
}

// Element `i` of a map's keys or values as a Python int, float or str.
nb::object python_map_element(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kInt64: return nb::steal(PyLong_FromLongLong(t.data<int64_t>()[i]));
    case DataType::kFloat32: return nb::steal(PyFloat_FromDouble(t.data<float>()[i]));
    case DataType::kFloat64: return nb::steal(PyFloat_FromDouble(t.data<double>()[i]));
    default: {
      const std::string& text = t.data<std::string>()[i];
      return nb::steal(PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
    }
  }
}

// `keys`: the map's keys as Python objects, when the caller has them already (maps of a sequence that share one key
// tensor, as ZipMap's rows do).
nb::dict dict_from_map(const Value::Map& map, const std::vector<nb::object>* keys = nullptr) {
  nb::dict dict;
  for (int64_t i = 0; i < map.keys.numel(); ++i) {
    nb::object key = keys != nullptr ? (*keys)[static_cast<size_t>(i)] : python_map_element(map.keys, i);
    nb::object item = python_map_element(map.values, i);
    if (!key.is_valid() || !item.is_valid()) throw nb::python_error();
    if (PyDict_SetItem(dict.ptr(), key.ptr(), item.ptr()) < 0) throw nb::python_error();
  }
  return dict;
}

// numpy array for a tensor, list of arrays for a sequence, None for an optional without an element, a dict for a
// map and a list of dicts for a sequence of maps (as onnxruntime returns them).
nb::object object_from_value(const Value& value) {
  if (value.is_tensor()) return numpy_from_tensor(value.tensor());
  if (value.is_none()) return nb::none();
  if (value.is_map()) return dict_from_map(value.map());
  if (value.is_map_sequence()) {
    nb::list maps;
    std::vector<nb::object> shared_keys;
    const void* shared = nullptr;  // the key tensor whose objects shared_keys holds
    for (const Value::Map& map : value.maps()) {
      if (map.keys.raw_data() != shared || map.keys.numel() != static_cast<int64_t>(shared_keys.size())) {
        shared_keys.clear();
        for (int64_t i = 0; i < map.keys.numel(); ++i) shared_keys.push_back(python_map_element(map.keys, i));
        shared = map.keys.raw_data();
      }
      maps.append(dict_from_map(map, &shared_keys));
    }
    return maps;
  }
  nb::list elements;
  for (const Tensor& element : value.elements()) elements.append(numpy_from_tensor(element));
  return elements;
}

// A run's inputs, converted from a Python mapping of names to feeds.
struct Feeds {
  std::vector<std::string> names;
  std::vector<Value> values;
  std::vector<nb::object> keep;  // Python objects the values point into
};

Feeds feeds_from(const PySession& self, nb::handle input_feed) {
  nb::object feed = nb::borrow(input_feed);
  if (!PyDict_Check(feed.ptr())) {
    feed = nb::steal(PyDict_New());
    if (PyDict_Update(feed.ptr(), input_feed.ptr()) < 0) throw nb::python_error();
  }
  check_required_inputs(self, feed);

  Feeds feeds;
  const Py_ssize_t count = PyDict_Size(feed.ptr());
  feeds.names.reserve(static_cast<size_t>(count));
  feeds.values.reserve(static_cast<size_t>(count));
  Py_ssize_t position = 0;
  PyObject* key = nullptr;
  PyObject* value = nullptr;
  while (PyDict_Next(feed.ptr(), &position, &key, &value)) {
    Py_ssize_t size = 0;
    const char* text = PyUnicode_Check(key) ? PyUnicode_AsUTF8AndSize(key, &size) : nullptr;
    if (!text) throw nb::type_error("input names must be str");
    feeds.names.emplace_back(text, static_cast<size_t>(size));
    feeds.values.push_back(value_from_feed(self, feeds.names.back(), value, feeds.keep));
  }
  return feeds;
}

RunOptions run_options_from(PyRunOptions* run_options) {
  RunOptions options;
  if (run_options) {
    options.terminate = &run_options->terminate;
    options.tag = run_options->logid;
    options.run_timeout_ms = run_options->run_timeout_ms;
  }
  return options;
}

std::vector<Value> run_session(const PySession& self, nb::handle output_names, nb::handle input_feed,
                               PyRunOptions* run_options) {
  const Feeds feeds = feeds_from(self, input_feed);
  std::vector<std::string> wanted;
  if (!output_names.is_none()) {
    for (nb::handle name : output_names) wanted.push_back(utf8(name));
  }
  const RunOptions options = run_options_from(run_options);
  std::optional<Expected<std::vector<Value>>> result;
  {
    nb::gil_scoped_release release;
    result.emplace(self.session->run_values(feeds.names, feeds.values, wanted, options));
  }
  return value_or_throw(std::move(*result));
}

// IO binding: Session::run_bound. Output i is written into bound_outputs[i] (an nxrt.Value; in place when the
// engine can, see session/io_binding.h) or, when that entry is None, allocated on output_devices[i] ("cpu",
// "test_device"). Tensor feeds only.
std::vector<Tensor> run_on_devices(const PySession& self, const std::vector<std::string>& output_names,
                                   nb::handle input_feed, PyRunOptions* run_options,
                                   const std::vector<std::string>& output_devices, nb::handle bound_outputs) {
  if (output_devices.size() != output_names.size()) {
    throw nb::value_error("run_bound needs one device per output name");
  }
  std::vector<Device> devices;
  for (const std::string& device : output_devices) devices.push_back(device_from_name(device));
  const Feeds feeds = feeds_from(self, input_feed);
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < feeds.values.size(); ++i) {
    if (!feeds.values[i].is_tensor()) {
      throw_status(StatusCode::kInvalidArgument, "input '" + feeds.names[i] + "': outputs bound to a device need "
                                                 "tensor inputs (not sequences or optionals)");
    }
    inputs.push_back(feeds.values[i].tensor());
  }
  std::vector<Tensor> bound(output_names.size());
  if (!bound_outputs.is_none()) {
    const nb::list targets = nb::cast<nb::list>(bound_outputs);
    if (targets.size() != output_names.size()) throw nb::value_error("run_bound needs one bound output per name");
    for (size_t i = 0; i < bound.size(); ++i) {
      if (!targets[i].is_none()) bound[i] = nb::cast<const PyValue&>(targets[i]).tensor;
    }
  }
  const RunOptions options = run_options_from(run_options);
  std::optional<Expected<BoundRunResult>> result;
  {
    nb::gil_scoped_release release;
    result.emplace(self.session->run_bound(feeds.names, inputs, output_names, bound, options, devices));
  }
  return value_or_throw(std::move(*result)).outputs;
}

// The callable API's fast path: arrays given positionally, one per model input in order, every output.
std::vector<Value> run_positional(const PySession& self, nb::handle args) {
  const std::vector<ValueDesc>& inputs = self.session->inputs();
  const Py_ssize_t count = PyTuple_Size(args.ptr());
  if (static_cast<size_t>(count) != inputs.size()) {
    throw nb::type_error("run_positional expects one array per model input");
  }
  std::vector<Value> values;
  std::vector<nb::object> keep;
  values.reserve(inputs.size());
  for (Py_ssize_t i = 0; i < count; ++i) {
    values.push_back(value_from_feed(self, inputs[static_cast<size_t>(i)].name, PyTuple_GetItem(args.ptr(), i), keep));
  }
  std::optional<Expected<std::vector<Value>>> result;
  {
    nb::gil_scoped_release release;
    result.emplace(self.session->run_in_order(values));
  }
  return value_or_throw(std::move(*result));
}

nb::list overridable_initializers(const PySession& self) {
  std::shared_ptr<const onnx::ModelBytes> bytes;
  if (PyBytes_Check(self.model_source.ptr())) {
    bytes = onnx::model_bytes_from_buffer(bytes_view(self.model_source.ptr()));
  } else {
    bytes = value_or_throw(onnx::map_model_file(utf8(self.model_source)));
  }
  const onnx::ModelProto model = value_or_throw(onnx::parse_model(bytes->bytes()));
  std::set<std::string_view> initializer_names;
  for (const onnx::TensorProto& initializer : model.graph->initializer) initializer_names.insert(initializer.name);
  std::vector<ValueDesc> descs;
  const graph::Graph& graph = self.session->graph();
  for (const onnx::ValueInfoProto& input : model.graph->input) {
    if (!initializer_names.count(input.name)) continue;
    const int id = graph.find_value(std::string(input.name));
    if (id != graph::kNoValue) descs.push_back(ValueDesc{graph.values[id].name, graph.values[id].type});
  }
  return describe(descs);
}

nb::dict metadata_dict(const ModelMetadata& metadata) {
  nb::dict out;
  out["producer_name"] = metadata.producer_name;
  out["producer_version"] = metadata.producer_version;
  out["graph_name"] = metadata.graph_name;
  out["domain"] = metadata.domain;
  out["description"] = metadata.description;
  out["graph_description"] = metadata.graph_description;
  out["version"] = metadata.version;
  out["ir_version"] = metadata.ir_version;
  nb::dict custom;
  for (const auto& [key, value] : metadata.custom_metadata) custom[key.c_str()] = value;
  out["custom_metadata_map"] = custom;
  return out;
}

}  // namespace

void register_session(nb::module_& m) {
  nb::class_<PyRunOptions>(m, "RunOptions", "Per-run options (onnxruntime.RunOptions).")
      .def(nb::init<>())
      .def_prop_rw(
          "terminate", [](const PyRunOptions& self) { return self.terminate.load(); },
          [](PyRunOptions& self, bool value) { self.terminate.store(value); },
          "Set to True (from any thread) to make current and later runs with these options fail.")
      .def_rw("logid", &PyRunOptions::logid)
      .def_rw("log_severity_level", &PyRunOptions::log_severity_level)
      .def_rw("log_verbosity_level", &PyRunOptions::log_verbosity_level)
      .def_rw("only_execute_path_to_fetches", &PyRunOptions::only_execute_path_to_fetches)
      .def_rw("run_timeout_ms", &PyRunOptions::run_timeout_ms,
              "> 0: deadline of runs with these options in milliseconds, instead of SessionOptions.run_timeout_ms; "
              "0 (default): the session's. nxrt only: onnxruntime has no run timeout (set `terminate` from a "
              "timer thread there).")
      .def("add_run_config_entry",
           [](PyRunOptions& self, const std::string& key, const std::string& value) { self.config[key] = value; })
      .def("get_run_config_entry", [](const PyRunOptions& self, const std::string& key) {
        const auto found = self.config.find(key);
        if (found == self.config.end()) {  // onnxruntime's class and text
          throw std::runtime_error("RunOptions does not have configuration with key: " + key);
        }
        return found->second;
      });

  nb::class_<PySession>(m, "Session", "The C++ session behind nxrt.InferenceSession.")
      .def_static("create", &create_session, nb::arg("model"), nb::arg("intra_op_num_threads") = 0,
                  nb::arg("graph_optimization_level") = 99,
                  nb::arg("free_dimension_overrides") = std::map<std::string, int64_t>{},
                  nb::arg("enable_profiling") = false, nb::arg("run_timeout_ms") = 0,
                  nb::arg("max_tensor_bytes") = 0, nb::arg("execution_providers") = std::vector<std::string>{},
                  nb::arg("disable_cpu_fallback") = false, nb::arg("initializers") = nb::dict(),
                  nb::arg("free_dimension_denotations") = std::map<std::string, int64_t>{},
                  "execution_providers: names in preference order (empty: the CPU alone; the CPU is appended when "
                  "absent); disable_cpu_fallback: a node no listed provider but the CPU runs is an error.")
      .def("providers", [](const PySession& self) { return self.session->providers(); },
           "Full names of the session's providers, in preference order (the CPU last).")
      .def(
          "profiled_nodes",
          [](const PySession& self) {
            nb::list out;
            if (!self.profile) return out;
            for (const NodeTiming& node : self.profile->nodes()) {
              out.append(nb::make_tuple(node.name, node.op_type, node.calls, node.total_ms));
            }
            return out;
          },
          "(name, op_type, calls, total ms) per node of the optimised graph, summed over the runs so far; empty "
          "unless the session was created with profiling enabled.")
      .def("inputs", [](const PySession& self) { return describe(self.session->inputs()); })
      .def("outputs", [](const PySession& self) { return describe(self.session->outputs()); })
      .def("overridable_initializers", &overridable_initializers)
      .def("metadata", [](const PySession& self) { return metadata_dict(self.session->metadata()); })
      .def("check_required_inputs", &check_required_inputs, nb::arg("input_feed"),
           "Raises onnxruntime's ValueError when the dict `input_feed` lacks a required input (run() checks this too).")
      .def(
          "node_assignments",
          [](const PySession& self) {
            nb::list out;
            for (const NodeAssignment& a : self.session->node_assignments()) {
              out.append(nb::make_tuple(a.name, a.op_type, a.domain, a.provider));
            }
            return out;
          },
          "(name, op_type, domain, provider) of each node of the optimized main graph, in execution order.")
      .def("opsets", [](const PySession& self) { return self.session->opsets(); })
      .def_prop_ro("num_threads", [](const PySession& self) { return self.session->num_threads(); })
      .def(
          "run",
          [](const PySession& self, nb::handle output_names, nb::handle feed, PyRunOptions* run_options) {
            std::vector<Value> results = run_session(self, output_names, feed, run_options);
            nb::list out;
            for (const Value& value : results) out.append(object_from_value(value));
            return out;
          },
          nb::arg("output_names").none(), nb::arg("input_feed"), nb::arg("run_options").none() = nb::none(),
          "Runs the model; returns numpy arrays that own the output buffers (no copy), lists of arrays for "
          "sequences and None for optionals without an element.")
      .def(
          "run_values",
          [](const PySession& self, nb::handle output_names, nb::handle feed, PyRunOptions* run_options) {
            std::vector<Value> results = run_session(self, output_names, feed, run_options);
            nb::list out;
            for (Value& value : results) {
              out.append(value.is_tensor() ? make_value(std::move(value.tensor())) : object_from_value(value));
            }
            return out;
          },
          nb::arg("output_names").none(), nb::arg("input_feed"), nb::arg("run_options").none() = nb::none(),
          "Runs the model; returns nxrt.Value objects.")
      .def(
          "run_bound",
          [](const PySession& self, const std::vector<std::string>& output_names, nb::handle feed,
             PyRunOptions* run_options, const std::vector<std::string>& output_devices, nb::handle bound_outputs) {
            std::vector<Tensor> results =
                run_on_devices(self, output_names, feed, run_options, output_devices, bound_outputs);
            nb::list out;
            for (Tensor& tensor : results) out.append(make_value(std::move(tensor)));
            return out;
          },
          nb::arg("output_names"), nb::arg("input_feed"), nb::arg("run_options").none(), nb::arg("output_devices"),
          nb::arg("bound_outputs").none() = nb::none(),
          "Runs the model; returns nxrt.Value objects: output i written into bound_outputs[i] when given (in place "
          "where the engine can), else allocated on output_devices[i] ('cpu', 'test_device').")
      .def(
          "run_positional",
          [](const PySession& self, nb::tuple args) -> nb::object {
            const Py_ssize_t count = PyTuple_Size(args.ptr());
            if (static_cast<size_t>(count) != self.session->inputs().size() ||
                (count > 0 && PyDict_Check(PyTuple_GetItem(args.ptr(), 0)))) {
              return nb::borrow(Py_NotImplemented);
            }
            std::vector<Value> results = run_positional(self, args);
            if (results.size() == 1) return object_from_value(results[0]);
            nb::list out;
            for (const Value& value : results) out.append(object_from_value(value));
            return out;
          },
          nb::arg("args"),
          "Runs the model on one array per input, in input order. Returns the output itself when the model has "
          "one, else a list of every output; NotImplemented when `args` is not one array per input.");
}

}  // namespace nxrt::python
