"""Pieces of onnxruntime's Python surface that scripts written for it use (issue: nxrt as a drop-in): feeds given
as Python lists typed by the input, np.asarray of an OrtValue, OrtValue.from_dlpack of a bare capsule, the
``onnxruntime.capi._pybind_state`` import path through a plain alias, and the logging / telemetry / seed calls."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from onnx import TensorProto, helper

import nxrt

ort = pytest.importorskip("onnxruntime")


def identity_model(element_type):
    graph = helper.make_graph([helper.make_node("Identity", ["a"], ["b"])], "g",
                              [helper.make_tensor_value_info("a", element_type, [None])],
                              [helper.make_tensor_value_info("b", element_type, [None])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


@pytest.mark.parametrize("element_type,feed", [(TensorProto.FLOAT, [1.0, 2.5]), (TensorProto.INT64, [3, -4]),
                                               (TensorProto.BOOL, [True, False]), (TensorProto.DOUBLE, [0.5]),
                                               (TensorProto.STRING, ["a", "bc"]), (TensorProto.INT32, [7])])
def test_python_lists_are_fed_as_the_input_type(element_type, feed):
    model = identity_model(element_type)
    got = nxrt.InferenceSession(model).run(None, {"a": feed})[0]
    want = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"a": feed})[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_numpy_reads_an_ortvalue_and_from_dlpack_takes_a_capsule():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    value = nxrt.OrtValue.ortvalue_from_numpy(x)
    np.testing.assert_array_equal(np.asarray(value), x)
    assert np.asarray(value, dtype=np.float64).dtype == np.float64
    again = nxrt.OrtValue.from_dlpack(value.__dlpack__())
    assert again.shape() == [2, 3]
    np.testing.assert_array_equal(again.numpy(), x)


def test_a_plain_alias_imports_capi_pybind_state():
    code = textwrap.dedent("""
        import sys
        import nxrt
        sys.modules["onnxruntime"] = nxrt
        import onnxruntime
        from onnxruntime.capi._pybind_state import Fail, InvalidArgument, SessionOptions, get_available_providers
        from onnxruntime.capi.onnxruntime_pybind11_state import Fail as Fail2
        assert Fail is Fail2 and SessionOptions is nxrt.SessionOptions
        assert "CPUExecutionProvider" in get_available_providers()
        try:  # an error nxrt raises is caught through the aliased module's class
            onnxruntime.InferenceSession(b"not a model")
        except onnxruntime.capi.onnxruntime_pybind11_state.InvalidProtobuf:
            pass
        onnxruntime.disable_telemetry_events()
        onnxruntime.enable_telemetry_events()
        onnxruntime.set_seed(7)
        onnxruntime.set_default_logger_callback(lambda *args: None)
        print("ok")
    """)
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == "ok"
