"""The names onnxruntime's extension module (``onnxruntime.capi.onnxruntime_pybind11_state``) exposes: the exception
classes (one per ONNX Runtime status code) and the API that ``onnxruntime.capi._pybind_state`` re-exports from it.
The classes are defined in nxrt._status_errors and imported by absolute name, so that copies of this module loaded
under an alias hold the very same classes. The API names resolve on first use (this module is imported while the
nxrt package itself is still being initialised)."""

from nxrt._status_errors import (  # noqa: F401
    Fail,
    InvalidArgument,
    NoSuchFile,
    NoModel,
    EngineError,
    RuntimeException,
    InvalidProtobuf,
    ModelLoaded,
    NotImplemented,
    InvalidGraph,
    EPFail,
    ModelLoadCanceled,
    ModelRequiresCompilation,
    NotFound,
)

EXCEPTIONS = ["Fail", "InvalidArgument", "NoSuchFile", "NoModel", "EngineError", "RuntimeException",
              "InvalidProtobuf", "ModelLoaded", "NotImplemented", "InvalidGraph", "EPFail", "ModelLoadCanceled",
              "ModelRequiresCompilation", "NotFound"]
API = ["AdapterFormat", "ExecutionMode", "ExecutionOrder", "GraphOptimizationLevel", "LoraAdapter", "OrtAllocatorType",
       "OrtArenaCfg", "OrtDevice", "OrtDeviceMemoryType", "OrtDeviceVendorId", "OrtMemType", "OrtMemoryInfo", "OrtMemoryInfoDeviceType",
       "OrtSparseFormat", "OrtValue", "OrtValueVector", "RunOptions", "SessionOptions", "SparseTensor",
       "create_and_register_allocator", "create_and_register_allocator_v2", "disable_telemetry_events",
       "enable_telemetry_events", "get_all_providers", "get_available_providers", "get_build_info",
       "get_default_session_options", "get_device", "get_version_string", "is_dlpack_uint8_tensor",
       "set_default_logger_callback", "set_default_logger_severity", "set_default_logger_verbosity", "set_seed"]

__all__ = EXCEPTIONS + API


def __getattr__(name):
    if name in API:
        from nxrt.capi import _pybind_state

        return getattr(_pybind_state, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
