"""The names scripts import from onnxruntime's ``onnxruntime.capi.onnxruntime_inference_collection`` (where
onnxruntime defines its Python session classes), for code run with ``onnxruntime`` aliased to nxrt."""

from nxrt.io_binding import IOBinding
from nxrt.ortvalue import OrtValue
from nxrt.session import InferenceSession, check_and_normalize_provider_args
from nxrt.sparse_tensor import SparseTensor

Session = InferenceSession  # onnxruntime's base class of InferenceSession

__all__ = ["IOBinding", "InferenceSession", "OrtValue", "Session", "SparseTensor", "check_and_normalize_provider_args"]
