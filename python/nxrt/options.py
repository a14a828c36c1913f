"""SessionOptions and the enums of onnxruntime, with the same names and values."""

import enum

from nxrt._nxrt import RunOptions as _NativeRunOptions

__all__ = ["ExecutionMode", "ExecutionOrder", "GraphOptimizationLevel", "RunOptions", "SessionOptions"]


class RunOptions(_NativeRunOptions):
    """Per-run options (onnxruntime.RunOptions), plus the LoRA adapters whose parameters runs with them feed."""

    def add_active_adapter(self, adapter):
        from nxrt.lora import LoraAdapter

        if not isinstance(adapter, LoraAdapter):
            raise TypeError("add_active_adapter takes a LoraAdapter")
        self.__dict__.setdefault("_adapters", []).append(adapter)

    def _with_adapters(self, feed):
        """`feed` with the active adapters' parameters added (a name the caller feeds keeps the caller's value)."""
        adapters = self.__dict__.get("_adapters")
        if not adapters:
            return feed
        merged = {}
        for adapter in adapters:
            merged.update(adapter._feeds())
        merged.update(feed)
        return merged


class GraphOptimizationLevel(enum.IntEnum):
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class ExecutionOrder(enum.IntEnum):
    DEFAULT = 0
    PRIORITY_BASED = 1
    MEMORY_EFFICIENT = 2


class SessionOptions:
    """Options read once when an InferenceSession is created (later changes do not affect it).

    intra_op_num_threads (0: one thread per core), graph_optimization_level, free dimension overrides,
    enable_profiling and profile_file_prefix (see InferenceSession.end_profiling) reach the engine; the other
    fields are kept for compatibility and reported back unchanged.

    Two limits are nxrt's own (onnxruntime has neither):
    run_timeout_ms: deadline of every run in milliseconds (0: none); RunOptions.run_timeout_ms overrides it per
        run. A run past it raises Fail naming the limit and the node where it stopped.
    max_tensor_bytes: most bytes one tensor may take (0: no limit). A larger initializer fails session creation
        and a larger node output fails the run before it is allocated, both with InvalidArgument naming the
        tensor and its size.
    """

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.execution_order = ExecutionOrder.DEFAULT
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.enable_cpu_mem_arena = True
        self.enable_profiling = False
        self.profile_file_prefix = "onnxruntime_profile_"
        self.log_severity_level = -1
        self.log_verbosity_level = 0
        self.logid = ""
        self.optimized_model_filepath = ""
        self.use_deterministic_compute = False
        self.run_timeout_ms = 0
        self.max_tensor_bytes = 0
        self._config = {}
        self._free_dimensions = {}
        self._initializers = {}  # name -> OrtValue (add_initializer)
        self._free_denotations = {}
        self._files_in_memory = {}  # external data file name -> bytes (add_external_initializers_from_files_in_memory)

    def add_session_config_entry(self, key, value):
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key):
        if key not in self._config:  # onnxruntime's class and text
            raise RuntimeError(f"SessionOptions does not have configuration with key: {key}")
        return self._config[key]

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        if int(dim_value) < 0:
            raise ValueError("free dimension overrides must be non-negative")
        self._free_dimensions[str(dim_name)] = int(dim_value)

    def add_free_dimension_override_by_denotation(self, dim_denotation, dim_value):
        """Fixes the graph inputs' free dims whose denotation is `dim_denotation` (e.g. "DATA_BATCH")."""
        if int(dim_value) < 0:
            raise ValueError("free dimension overrides must be non-negative")
        self._free_denotations[str(dim_denotation)] = int(dim_value)

    def add_initializer(self, name, ort_value):
        """Uses `ort_value` (an OrtValue on the host, of the dtype and shape the model declares) for the model's
        initializer `name` in sessions created with these options, without a copy: keep it alive and unchanged. The
        model's own data for it is not read (its external data file need not exist)."""
        from nxrt.ortvalue import OrtValue

        if not isinstance(ort_value, OrtValue):
            raise TypeError(f"add_initializer takes an OrtValue, not {type(ort_value).__name__}")
        self._initializers[str(name)] = ort_value

    def add_external_initializers(self, names, ort_values):
        """add_initializer for each name and OrtValue, as onnxruntime offers it for weights kept outside the model."""
        if len(names) != len(ort_values):
            raise ValueError("add_external_initializers takes as many names as values")
        for name, value in zip(names, ort_values):
            self.add_initializer(name, value)

    def add_external_initializers_from_files_in_memory(self, file_names, buffers, lengths):
        """External data files given as bytes (the first lengths[i] bytes of buffers[i] for file_names[i]): sessions
        created with these options read initializers whose external data names one of them from memory. nxrt
        then loads the model with every initializer stored in it (nxrt.model_copy.with_initializers_inline)."""
        if not (len(file_names) == len(buffers) == len(lengths)):
            raise ValueError("add_external_initializers_from_files_in_memory takes as many file names, buffers and "
                             "lengths")
        for name, buffer, length in zip(file_names, buffers, lengths):
            view = memoryview(buffer).cast("B")
            if not 0 <= int(length) <= len(view):
                raise ValueError(f"external data file '{name}': length {length} is outside its buffer of "
                                 f"{len(view)} bytes")
            self._files_in_memory[str(name)] = view[:int(length)]

    def register_custom_ops_library(self, library_path):
        raise NotImplementedError("nxrt does not load custom op libraries")
