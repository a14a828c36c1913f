"""Exception classes named and shaped as onnxruntime's (one per ONNX Runtime status code), as onnxruntime exposes
them from ``onnxruntime.capi.onnxruntime_pybind11_state``. Defined in nxrt._status_errors (imported by absolute
name, so that copies of this module loaded under an alias hold the very same classes)."""

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

__all__ = ["Fail", "InvalidArgument", "NoSuchFile", "NoModel", "EngineError", "RuntimeException", "InvalidProtobuf",
    "ModelLoaded", "NotImplemented", "InvalidGraph", "EPFail", "ModelLoadCanceled", "ModelRequiresCompilation",
    "NotFound"]
