"""The names onnxruntime exposes from its extension module (``onnxruntime.capi._pybind_state``), so that code and
libraries that import them from there run with ``onnxruntime`` aliased to nxrt."""

from nxrt import (AdapterFormat, ExecutionMode, ExecutionOrder, GraphOptimizationLevel, LoraAdapter,
                  OrtAllocatorType, OrtArenaCfg, OrtDevice, OrtDeviceMemoryType, OrtDeviceVendorId, OrtMemoryInfo, OrtMemoryInfoDeviceType, OrtMemType,
                  OrtSparseFormat, OrtValue, RunOptions, SessionOptions, SparseTensor, create_and_register_allocator,
                  create_and_register_allocator_v2, disable_telemetry_events, enable_telemetry_events,
                  get_all_providers, get_available_providers, get_build_info, get_device, get_version_string,
                  set_default_logger_callback, set_default_logger_severity, set_default_logger_verbosity, set_seed)
from nxrt._status_errors import (  # noqa: F401  (the exception classes, as onnxruntime_pybind11_state's)
    Fail, InvalidArgument, NoSuchFile, NoModel, EngineError, RuntimeException, InvalidProtobuf, ModelLoaded,
    NotImplemented, InvalidGraph, EPFail, ModelLoadCanceled, ModelRequiresCompilation, NotFound)
from nxrt.capi.onnxruntime_pybind11_state import API, EXCEPTIONS
from nxrt.ortvalue import OrtValueVector, is_dlpack_uint8_tensor
from nxrt.session import InferenceSession as _InferenceSession  # noqa: F401  (what onnxruntime wraps)


def get_default_session_options():
    """A new SessionOptions with the defaults (onnxruntime's C-level accessor)."""
    return SessionOptions()


__all__ = EXCEPTIONS + API
