"""nxrt: a fast embeddable ONNX runtime. ``import nxrt as ort`` runs code written for onnxruntime."""

from nxrt import _nxrt
from nxrt import capi
from nxrt import ops
from nxrt._nxrt import Value
from nxrt.capi import onnxruntime_pybind11_state
from nxrt.friendly import BoundOutputs, Outputs, load
from nxrt.io_binding import IOBinding
from nxrt.lora import AdapterFormat, LoraAdapter
from nxrt.memory_info import (OrtAllocatorType, OrtArenaCfg, OrtDevice, OrtDeviceMemoryType, OrtDeviceVendorId,
                              OrtMemoryInfo, OrtMemoryInfoDeviceType, OrtMemType, create_and_register_allocator,
                              create_and_register_allocator_v2)
from nxrt.options import ExecutionMode, ExecutionOrder, GraphOptimizationLevel, RunOptions, SessionOptions
from nxrt.ortvalue import OrtValue
from nxrt.sparse_tensor import OrtSparseFormat, SparseTensor
from nxrt.session import (InferenceSession, ModelMetadata, NodeArg, get_all_providers,
                          get_available_providers)

__version__ = _nxrt.__version__

__all__ = [
    "AdapterFormat", "BoundOutputs", "ExecutionMode", "ExecutionOrder", "GraphOptimizationLevel", "IOBinding",
    "InferenceSession", "LoraAdapter", "ModelMetadata", "NodeArg", "OrtAllocatorType", "OrtArenaCfg", "OrtDevice",
    "OrtDeviceMemoryType", "OrtDeviceVendorId", "OrtMemType", "OrtMemoryInfo", "OrtMemoryInfoDeviceType",
    "OrtSparseFormat", "OrtValue", "Outputs", "RunOptions", "SessionOptions", "SparseTensor", "Value", "asvalue",
    "builtin_model", "create_and_register_allocator", "create_and_register_allocator_v2", "disable_telemetry_events",
    "enable_telemetry_events", "get_all_providers", "get_available_providers", "get_device", "get_version_string",
    "load", "ops", "set_default_logger_callback", "set_default_logger_severity", "set_seed",
]


def get_device():
    return "CPU"


def get_version_string():
    return __version__


def get_build_info():
    """In onnxruntime's form ("<name> Build Info: key=value, ..., build type=Release")."""
    return f"nxrt Build Info: version={__version__}, providers=CPU, build type={_nxrt.build_type}"


def set_default_logger_severity(severity):
    pass


def set_default_logger_verbosity(verbosity):
    pass


def set_default_logger_callback(callback):
    """Accepted for onnxruntime compatibility; nxrt reports through exceptions and warnings, not a log stream."""


def disable_telemetry_events():
    """nxrt sends no telemetry; accepted for onnxruntime compatibility."""


def enable_telemetry_events():
    """nxrt sends no telemetry; accepted for onnxruntime compatibility."""


def set_seed(seed):
    """Seeds random operators (RandomNormal, RandomUniform, Bernoulli...) that have no seed attribute: accepted for
    onnxruntime compatibility; nxrt's random kernels draw from their own per-node generators."""


def asvalue(obj, copy=False):
    """An nxrt.Value for a numpy array, DLPack producer (torch, jax) or array-like; zero-copy when contiguous."""
    return obj if isinstance(obj, Value) and not copy else Value.from_object(obj, copy)


def builtin_model(name):
    """Bytes of a model embedded in nxrt ("simple_add", "mlp")."""
    return _nxrt.default_model(name)
