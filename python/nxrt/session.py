"""InferenceSession with onnxruntime's interface, plus nxrt's friendly calling conventions."""

import collections.abc
import json
import os
import threading
import time
import warnings
import weakref

import numpy as np

from nxrt import _nxrt
from nxrt.friendly import BoundOutputs, Outputs, feed_from_arguments
from nxrt.io_binding import IOBinding
from nxrt.memory_info import _cpu_memory_info
from nxrt.model_copy import with_initializers_inline, write_model_copy
from nxrt.options import SessionOptions
from nxrt.ortvalue import OrtValue, OrtValueVector

__all__ = ["InferenceSession", "ModelMetadata", "NodeArg", "get_all_providers", "get_available_providers"]

_CPU = "CPUExecutionProvider"
# Test-only: a second device on every machine (docs/python.md, "Execution providers"). Accepted by name, never
# listed by get_available_providers(), so that code picking every available provider does not land on it.
_TEST_DEVICE = "TestDeviceExecutionProvider"
_DISABLE_CPU_FALLBACK = "session.disable_cpu_ep_fallback"
_EP_FAIL = 11  # StatusCode::kEpFail, raised as capi.onnxruntime_pybind11_state.EPFail
_LOAD_CONFIG_FROM_MODEL = "session.load_model_config_from_model"
_RECORD_ASSIGNMENT = "session.record_ep_graph_assignment_info"
_EXTERNAL_INITIALIZERS_FILE = "session.optimized_model_external_initializers_file_name"
_EXTERNAL_INITIALIZERS_MIN_SIZE = "session.optimized_model_external_initializers_min_size_in_bytes"


class OrtEpAssignedNode:
    """A node of the optimized graph (get_provider_graph_assignment_info)."""

    def __init__(self, name, op_type, domain):
        self.name, self.op_type, self.domain = name, op_type, domain

    def __repr__(self):
        return f"OrtEpAssignedNode(name={self.name!r}, op_type={self.op_type!r}, domain={self.domain!r})"


class OrtEpAssignedSubgraph:
    """Nodes one provider runs together (get_provider_graph_assignment_info)."""

    def __init__(self, ep_name, nodes):
        self.ep_name = ep_name
        self._nodes = list(nodes)

    def get_nodes(self):
        return list(self._nodes)

    def __repr__(self):
        return f"OrtEpAssignedSubgraph(ep_name={self.ep_name!r}, nodes={self._nodes!r})"


def _options_from_model_config(options, metadata):
    """`options` with the session options a model's "ort_config" metadata gives (onnxruntime's format: JSON whose
    "session_options" holds integer intra_op_num_threads, inter_op_num_threads, execution_mode (0 sequential,
    1 parallel), graph_optimization_level (0, 1, 2 or 99) and enable_profiling (0 or 1); other keys ignored), as a
    copy; `options` itself when the model has none. InvalidArgument for JSON that does not parse or a bad value."""
    import copy

    from nxrt.options import ExecutionMode, GraphOptimizationLevel

    text = metadata.get("ort_config")
    if text is None:
        return options
    try:
        config = json.loads(text)
    except ValueError as error:
        _nxrt._raise_status(2, f"Json stored in the `ort_config` key cannot be parsed. Error message: {error}")
    given = config.get("session_options") if isinstance(config, dict) else None
    if not isinstance(given, dict):
        return options
    allowed = {"intra_op_num_threads": lambda v: v >= 0, "inter_op_num_threads": lambda v: v >= 0,
               "execution_mode": lambda v: v in (0, 1), "graph_optimization_level": lambda v: v in (0, 1, 2, 99),
               "enable_profiling": lambda v: v in (0, 1)}
    configured = copy.copy(options)
    for key, value in given.items():
        if key not in allowed:
            continue  # as onnxruntime: other session options in the JSON are ignored
        if not isinstance(value, int) or isinstance(value, bool):
            _nxrt._raise_status(2, f"{key} option in the model file must be an integer")
        if not allowed[key](value):
            _nxrt._raise_status(2, f"Unsupported value for {key} in ORT config: {value}")
        if key == "execution_mode":
            value = ExecutionMode(value)
        elif key == "graph_optimization_level":
            value = GraphOptimizationLevel(value)
        elif key == "enable_profiling":
            value = bool(value)
        setattr(configured, key, value)
    return configured


def get_available_providers():
    return [_CPU]


def get_all_providers():
    return [
        "TensorrtExecutionProvider",
        "CUDAExecutionProvider",
        "MIGraphXExecutionProvider",
        "ROCMExecutionProvider",
        "OpenVINOExecutionProvider",
        "DnnlExecutionProvider",
        "CoreMLExecutionProvider",
        "DmlExecutionProvider",
        "XnnpackExecutionProvider",
        "WebGpuExecutionProvider",
        "AzureExecutionProvider",
        _CPU,
    ]


class NodeArg:
    """Name, type string ('tensor(float)') and shape (ints, symbolic names as str, None when unknown)."""

    __slots__ = ("name", "type", "shape")

    def __init__(self, name, type, shape):
        self.name = name
        self.type = type
        self.shape = shape

    def __str__(self):
        return f"NodeArg(name='{self.name}', type='{self.type}', shape={self.shape})"

    __repr__ = __str__


class ModelMetadata:
    __slots__ = ("producer_name", "graph_name", "domain", "description", "graph_description", "version",
                 "custom_metadata_map")

    def __init__(self, fields):
        for name in self.__slots__:
            setattr(self, name, fields[name])


def _provider_pairs(providers, provider_options):
    """onnxruntime's argument rules: names, or (name, options) pairs, or names with a parallel options list."""
    if not isinstance(providers, collections.abc.Sequence) or isinstance(providers, str):
        raise ValueError("'providers' should be a sequence.")
    if provider_options is not None:
        if not isinstance(provider_options, collections.abc.Sequence):
            raise ValueError("'provider_options' should be a sequence.")
        if len(providers) != len(provider_options):
            raise ValueError("'providers' and 'provider_options' should be the same length if both are given.")
        if not all(isinstance(p, str) for p in providers):
            raise ValueError("Only string values for 'providers' are supported if 'provider_options' is given.")
        if not all(isinstance(o, dict) for o in provider_options):
            raise ValueError("'provider_options' values must be dicts.")
        return list(zip(providers, provider_options))
    pairs = []
    for provider in providers:
        if isinstance(provider, str):
            pairs.append((provider, {}))
        elif (isinstance(provider, tuple) and len(provider) == 2 and isinstance(provider[0], str)
              and isinstance(provider[1], dict)):
            pairs.append(provider)
        else:
            raise ValueError("'providers' values must be either strings or (string, dict) tuples.")
    return pairs


def check_and_normalize_provider_args(providers, provider_options, available_provider_names):
    """onnxruntime's helper of the same name: (names, options) from `providers` (names or (name, options) pairs)
    and an optional parallel `provider_options` list, options as string pairs. A name not in
    `available_provider_names` gives a UserWarning and stays (the session decides); a repeated one is left out with
    a UserWarning (its first options kept); a malformed argument is ValueError. None gives ([], [])."""
    if providers is None:
        return [], []
    names, options = [], []
    for name, opts in _provider_pairs(providers, provider_options):
        if name not in available_provider_names:
            warnings.warn(f"Specified provider '{name}' is not in available provider names."
                          f"Available providers: '{', '.join(available_provider_names)}'")
        if name in names:
            warnings.warn(f"Duplicate provider '{name}' encountered, ignoring.")
            continue
        names.append(name)
        options.append({str(k): str(v) for k, v in opts.items()})
    return names, options


def _normalize_providers(providers, provider_options, fallback_to_cpu):
    """Validated (names, options) for the requested providers.

    A provider onnxruntime knows (get_all_providers) that this build cannot run raises EPFail, as the C API's
    nxrt_session_options_append_execution_provider does: nxrt never runs on the CPU in place of a requested
    device. A name that is no provider at all is handled as onnxruntime handles it: a UserWarning, then the CPU
    when `fallback_to_cpu`, else RuntimeError("Unknown Provider Type: ...").
    """
    if providers is None:
        return [_CPU], [{}]
    available = get_available_providers()
    names, options, unknown = [], [], []
    for name, opts in _provider_pairs(providers, provider_options):
        if name not in available and name != _TEST_DEVICE:
            if name in get_all_providers():
                _nxrt._raise_status(
                    _EP_FAIL, f"{name} was requested but this build of nxrt cannot run it (available: "
                              f"{', '.join(available)}); nxrt does not fall back to the CPU")
            warnings.warn(f"Specified provider '{name}' is not in available provider names."
                          f"Available providers: '{', '.join(available)}'")
            unknown.append(name)
            continue
        if name in names:
            warnings.warn(f"Duplicate provider '{name}' encountered, ignoring.")
            continue
        names.append(name)
        options.append({str(k): str(v) for k, v in opts.items()})
    if unknown:
        if not fallback_to_cpu:
            raise RuntimeError(f"Unknown Provider Type: {unknown[0]}")
        return [_CPU], [{}]
    if not names:
        names, options = [_CPU], [{}]
    return names, options


# Feed values that carry no element type of their own, and the numpy type of each ONNX tensor type.
_PYTHON_VALUES = (list, tuple, int, float, bool, str)
_NUMPY_OF_ONNX = {
    "tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16,
    "tensor(int8)": np.int8, "tensor(int16)": np.int16, "tensor(int32)": np.int32, "tensor(int64)": np.int64,
    "tensor(uint8)": np.uint8, "tensor(uint16)": np.uint16, "tensor(uint32)": np.uint32,
    "tensor(uint64)": np.uint64, "tensor(bool)": np.bool_, "tensor(string)": object,
}


class _NativeSession:
    """InferenceSession._sess: the engine's session, as onnxruntime's C-level one is reached from scripts: every
    method of nxrt's native session, plus onnxruntime's C-level run_with_ort_values(feeds, output_names,
    run_options) returning an OrtValueVector. Holds its InferenceSession weakly (the session holds this)."""

    def __init__(self, native, owner):
        self._native = native
        self._owner = weakref.ref(owner)
        self.run = native.run  # the per-call paths skip __getattr__
        self.run_values = native.run_values

    def __getattr__(self, name):
        return getattr(self._native, name)

    def run_with_ort_values(self, feeds, output_names, run_options=None):
        return OrtValueVector(self._owner().run_with_ort_values(output_names, feeds, run_options))


class InferenceSession:
    """Runs an ONNX model on nxrt's engine: the CPU, or the providers given in ``providers``.

    Compatible with onnxruntime.InferenceSession, and also callable: ``session(x, y)``, ``session(x=..., y=...)``
    or ``session({"x": ...})`` return the single output itself or an :class:`Outputs` container.

    Unlike onnxruntime, asking for a provider this build cannot run (``CUDAExecutionProvider``) raises EPFail
    instead of warning and running on the CPU (docs/python.md, "Execution providers").
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        if isinstance(path_or_bytes, (str, os.PathLike)):
            model = os.fspath(path_or_bytes)
        elif isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            model = bytes(path_or_bytes)
        else:
            raise TypeError(f"Unable to load from type '{type(path_or_bytes)}'")
        self._model_path = model if isinstance(model, str) else None
        self._sess_options = sess_options if sess_options is not None else SessionOptions()
        self._enable_fallback = int(kwargs.get("enable_fallback", 1)) == 1
        self._providers, self._provider_options = _normalize_providers(providers, provider_options,
                                                                       self._enable_fallback)
        options = self._sess_options
        for limit in ("run_timeout_ms", "max_tensor_bytes"):
            if int(getattr(options, limit)) < 0:
                _nxrt._raise_status(2, f"SessionOptions.{limit} must be >= 0 (0: no limit), got "
                                       f"{getattr(options, limit)}")
        self._read_options(model, options)
        self._sess = self._create(self._providers)
        if (options._config.get(_LOAD_CONFIG_FROM_MODEL, "0") == "1" or
                os.environ.get("ORT_LOAD_CONFIG_FROM_MODEL") == "1"):
            configured = _options_from_model_config(options, self._sess.metadata()["custom_metadata_map"])
            if configured is not options:  # the model's ort_config changes options the engine reads
                self._sess_options = options = configured  # and get_session_options() reports them
                self._read_options(model, options)
                self._sess = self._create(self._providers)
        self._inputs_meta = [NodeArg(*desc) for desc in self._sess.inputs()]
        self._outputs_meta = [NodeArg(*desc) for desc in self._sess.outputs()]
        self._input_names = tuple(arg.name for arg in self._inputs_meta)
        self._output_names = tuple(arg.name for arg in self._outputs_meta)
        # The numpy type a Python list or scalar fed to each input becomes (see _typed_feed).
        self._feed_dtypes = {arg.name: _NUMPY_OF_ONNX.get(arg.type) for arg in self._inputs_meta}
        self._overridable = None
        if options.optimized_model_filepath:
            self._write_model(options.optimized_model_filepath, model, options._config)

    def _read_options(self, model, options):
        """The options the engine reads, taken once: set_providers re-creates the session from these, not from
        later changes."""
        self._profiling = bool(options.enable_profiling)
        self._profiling_start_ns = time.time_ns() if self._profiling else 0
        if options._files_in_memory:
            source_dir = os.path.dirname(os.path.abspath(model)) if isinstance(model, str) else None
            data = model if isinstance(model, bytes) else open(model, "rb").read()
            try:
                model = with_initializers_inline(data, source_dir, options._files_in_memory)
            except (ValueError, OSError) as error:
                _nxrt._raise_status(2, f"external initializers from files in memory: {error}")
        self._create_args = (model, int(options.intra_op_num_threads), int(options.graph_optimization_level),
                             dict(options._free_dimensions), self._profiling, int(options.run_timeout_ms),
                             int(options.max_tensor_bytes))
        self._disable_cpu_fallback = options._config.get(_DISABLE_CPU_FALLBACK, "0") == "1"
        self._initializers = dict(options._initializers)
        self._free_denotations = dict(options._free_denotations)

    def _create(self, providers):
        return _NativeSession(self._create_native(providers), self)

    def _create_native(self, providers):
        return _nxrt.Session.create(*self._create_args, execution_providers=list(providers),
                                    disable_cpu_fallback=self._disable_cpu_fallback,
                                    initializers={name: value._value for name, value in self._initializers.items()},
                                    free_dimension_denotations=self._free_denotations)

    @staticmethod
    def _write_model(target, model, config):
        """nxrt keeps no optimised graph to serialise: the loaded model is written, its initializers placed as the
        optimized_model_external_initializers_* config entries say (nxrt.model_copy)."""
        source_dir = os.path.dirname(os.path.abspath(model)) if isinstance(model, str) else None
        data = model if isinstance(model, bytes) else open(model, "rb").read()
        write_model_copy(data, source_dir, target, config.get(_EXTERNAL_INITIALIZERS_FILE),
                         int(config.get(_EXTERNAL_INITIALIZERS_MIN_SIZE, "1024")))

    # onnxruntime API

    def run(self, output_names, input_feed, run_options=None):
        if run_options is not None and "_adapters" in getattr(run_options, "__dict__", ()):
            input_feed = run_options._with_adapters(input_feed)
        if any(isinstance(value, _PYTHON_VALUES) for value in input_feed.values()):
            input_feed = self._typed_feed(input_feed)
        try:
            return self._sess.run(output_names or None, input_feed, run_options)
        except TypeError:
            if not any(isinstance(value, np.ndarray) and value.dtype.kind == "V" for value in input_feed.values()):
                raise
        return self._sess.run(output_names or None, self._typed_feed(input_feed), run_options)

    def run_async(self, output_names, input_feed, callback, user_data, run_options=None):
        """run() on another thread, then callback(results, user_data, err) there: err is "" and results the outputs,
        or err the error's text and results empty. The thread holds the session and the feeds until the callback
        returns (the caller may drop its own references at once)."""
        # Checked here, as onnxruntime validates the feed before it starts the run.
        self._sess.check_required_inputs(input_feed if isinstance(input_feed, dict) else dict(input_feed))

        def work():
            try:
                results, err = self.run(output_names, input_feed, run_options), ""
            except Exception as error:  # noqa: BLE001 - reported to the callback as onnxruntime does
                results, err = [], str(error)
            callback(results, user_data, err)

        threading.Thread(target=work, name="nxrt-run-async", daemon=True).start()

    def get_provider_graph_assignment_info(self):
        """Which provider runs each node of the optimized graph, as onnxruntime reports it: a list of
        OrtEpAssignedSubgraph (ep_name, get_nodes() -> OrtEpAssignedNode with name, op_type, domain), one per node;
        only when the session options set "session.record_ep_graph_assignment_info" to "1"."""
        if self._sess_options._config.get(_RECORD_ASSIGNMENT, "0") != "1":
            _nxrt._raise_status(1, f"Session configuration entry '{_RECORD_ASSIGNMENT}' must be set to \"1\" to "
                                   "retrieve EP graph assignment information.")
        return [OrtEpAssignedSubgraph(provider, [OrtEpAssignedNode(name, op_type, domain)])
                for name, op_type, domain, provider in self._sess.node_assignments()]

    def get_input_memory_infos(self):
        """Where each input is read from: host memory (nxrt's feeds; IO binding binds device buffers itself)."""
        return [_cpu_memory_info() for _ in self._inputs_meta]

    def get_input_epdevices(self):
        """The execution-provider device of each input: None for each (onnxruntime's entries for inputs no plugin
        provider's device reads; nxrt has no plugin providers)."""
        return [None for _ in self._inputs_meta]

    def get_output_memory_infos(self):
        return [_cpu_memory_info() for _ in self._outputs_meta]

    def _typed_feed(self, input_feed):
        """Python lists, tuples and scalars become arrays of the input's declared element type, as onnxruntime
        converts them (a list of floats fed to a float input is float32, not float64)."""
        typed = dict(input_feed)
        for name, value in input_feed.items():
            dtype = self._feed_dtypes.get(name)
            if isinstance(value, _PYTHON_VALUES) and dtype is not None:
                typed[name] = np.asarray(value, dtype=dtype)
            elif dtype is object and isinstance(value, np.ndarray) and value.dtype.kind == "V":
                # Raw byte records fed to a string input are UTF-8 strings, as onnxruntime reads them.
                typed[name] = np.array([bytes(v).decode("utf-8") for v in value.ravel()],
                                       dtype=object).reshape(value.shape)
        return typed

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        feed = {name: value._feed() if isinstance(value, OrtValue) else value
                for name, value in input_dict_ort_values.items()}
        if run_options is not None and "_adapters" in getattr(run_options, "__dict__", ()):
            feed = run_options._with_adapters(feed)
        names = list(output_names) if output_names else list(self._output_names)
        types = {arg.name: arg.type for arg in self._outputs_meta}
        return [OrtValue(value) if isinstance(value, _nxrt.Value) else OrtValue._of_object(value, types.get(name))
                for name, value in zip(names, self._sess.run_values(output_names or None, feed, run_options))]

    def run_with_ortvaluevector(self, run_options, feed_names, feeds, fetch_names, fetches, fetch_devices):
        results = self.run_with_ort_values(fetch_names, dict(zip(feed_names, feeds)), run_options)
        fetches[:] = results
        return fetches

    def io_binding(self):
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        if iobinding._session is not self:
            raise ValueError("IOBinding must be used with the session that created it.")
        iobinding._run(run_options)

    def get_inputs(self):
        return list(self._inputs_meta)

    def get_outputs(self):
        return list(self._outputs_meta)

    def get_overridable_initializers(self):
        if self._overridable is None:
            self._overridable = [NodeArg(*desc) for desc in self._sess.overridable_initializers()]
        return list(self._overridable)

    def get_modelmeta(self):
        return ModelMetadata(self._sess.metadata())

    def get_providers(self):
        """The session's providers in preference order; the CPU is appended when it was not asked for."""
        return self._sess.providers()

    def get_provider_options(self):
        options = dict(zip(self._providers, self._provider_options))
        return {name: dict(options.get(name, {})) for name in self._sess.providers()}

    def get_session_options(self):
        return self._sess_options

    def set_providers(self, providers=None, provider_options=None):
        """Re-creates the session on these providers. Same policy as the constructor, except that an unknown
        provider name always raises (as in onnxruntime, whose fallback covers only session creation and runs); on
        any error the session keeps its providers."""
        names, options = _normalize_providers(providers, provider_options, False)
        self._sess = self._create(names)
        self._providers, self._provider_options = names, options

    def disable_fallback(self):
        self._enable_fallback = False

    def enable_fallback(self):
        self._enable_fallback = True

    def end_profiling(self):
        """Writes the node times collected so far to ``<profile_file_prefix>_<date>_<time>.json`` in the current
        directory (Chrome trace format, as onnxruntime) and returns its name; "" when profiling is off.

        Each node of the optimised graph is one ``"cat": "Node"`` event named ``<node>_kernel_time`` (a repeated or
        empty node name gets ``_<index>``) whose ``dur`` is its total time over all runs in microseconds, with
        ``op_name`` and ``calls`` in ``args`` (onnxruntime writes one event per node and run; summing ``dur`` per
        node gives the same totals).
        """
        if not self._profiling:
            return ""
        self._profiling = False
        events, seen = [], set()
        for index, (name, op_type, calls, total_ms) in enumerate(self._sess.profiled_nodes()):
            # Unnamed nodes, and fused nodes sharing a joined name, are told apart by their index.
            name = name if name and name not in seen else f"{name or 'node'}_{index}"
            seen.add(name)
            events.append({"cat": "Node", "pid": os.getpid(), "tid": 0, "ph": "X", "ts": 0,
                           "dur": int(round(total_ms * 1000.0)), "name": f"{name}_kernel_time",
                           "args": {"op_name": op_type, "calls": calls}})
        start_s, start_ns = divmod(self._profiling_start_ns, 1_000_000_000)
        stamp = time.strftime("%Y-%m-%d_%H-%M-%S", time.localtime(start_s))
        path = f"{self._sess_options.profile_file_prefix}_{stamp}_{start_ns // 1_000_000:03d}.json"
        with open(path, "w", encoding="utf-8") as out:
            json.dump(events, out)
        return path

    def get_profiling_start_time_ns(self):
        return self._profiling_start_ns

    # friendly API

    @property
    def input_names(self):
        return self._input_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def opsets(self):
        return self._sess.opsets()

    def __call__(self, *args, **kwargs):
        if not kwargs:
            result = self._sess.run_positional(args)
            if result is not NotImplemented:
                return result if len(self._output_names) == 1 else Outputs(self._output_names, result)
        results = self._sess.run(None, feed_from_arguments(self._input_names, args, kwargs), None)
        if len(results) == 1:
            return results[0]
        return Outputs(self._output_names, results)

    def run_with_values(self, *args, **kwargs):
        """Like calling the session, but returns nxrt.Value objects (DLPack producers)."""
        results = self._sess.run_values(None, feed_from_arguments(self._input_names, args, kwargs), None)
        if len(results) == 1:
            return results[0]
        return Outputs(self._output_names, results)

    def bind_outputs(self, *names):
        """A callable view of this session that computes and returns only `names`."""
        return BoundOutputs(self, names)

    def __repr__(self):
        inputs = ", ".join(str(arg) for arg in self._inputs_meta)
        outputs = ", ".join(str(arg) for arg in self._outputs_meta)
        return f"nxrt.InferenceSession(inputs=[{inputs}], outputs=[{outputs}])"
