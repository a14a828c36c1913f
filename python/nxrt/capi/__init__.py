"""Mirrors onnxruntime.capi so that `from nxrt.capi.onnxruntime_pybind11_state import Fail` works."""
