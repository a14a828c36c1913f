"""Run deadlines (SessionOptions / RunOptions.run_timeout_ms), the terminate flag and SessionOptions.max_tensor_bytes.

onnxruntime has neither limit: its RunOptions only has `terminate`, whose error message nxrt shares (checked
against onnxruntime itself below). Runs that must stop would otherwise never end, so no assertion is timed.
"""

import threading

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import nxrt
from nxrt.capi.onnxruntime_pybind11_state import Fail, InvalidArgument, InvalidProtobuf

FOREVER = np.array(np.iinfo(np.int64).max, np.int64)
START = np.zeros(1, np.float32)
TERMINATE_MESSAGE = "Exiting due to terminate flag being set to true."


def _model(nodes, inputs, outputs, initializers=(), opset=21):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model.SerializeToString()


def _loop_model():
    """Loop(m) adding 1 to a [1] float each iteration."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["acc_in", "one"], ["acc_out"], name="add")],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [1])],
        initializer=[helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])])
    return _model(
        [helper.make_node("Loop", ["m", "", "start"], ["total"], name="loop", body=body)],
        [helper.make_tensor_value_info("m", TensorProto.INT64, []),
         helper.make_tensor_value_info("start", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("total", TensorProto.FLOAT, [1])])


def _session(model, **limits):
    options = nxrt.SessionOptions()
    for name, value in limits.items():
        setattr(options, name, value)
    return nxrt.InferenceSession(model, options)


def test_limits_default_to_none():
    options = nxrt.SessionOptions()
    assert options.run_timeout_ms == 0
    assert options.max_tensor_bytes == 0
    assert nxrt.RunOptions().run_timeout_ms == 0


def test_session_timeout_stops_an_unbounded_loop():
    session = _session(_loop_model(), run_timeout_ms=50)
    total, = session.run(None, {"m": np.array(4, np.int64), "start": START})
    np.testing.assert_array_equal(total, [4.0])
    with pytest.raises(Fail, match=r"run_timeout_ms \(50 ms\)") as raised:
        session.run(None, {"m": FOREVER, "start": START})
    assert "Name:'loop'" in str(raised.value)
    assert str(raised.value).startswith("[ONNXRuntimeError] : 1 : FAIL : ")


def test_run_option_timeout_overrides_the_session_one():
    session = _session(_loop_model(), run_timeout_ms=600_000)
    run_options = nxrt.RunOptions()
    run_options.run_timeout_ms = 30
    with pytest.raises(Fail, match=r"run_timeout_ms \(30 ms\)"):
        session.run(None, {"m": FOREVER, "start": START}, run_options)


def test_negative_limits_are_invalid():
    with pytest.raises(InvalidArgument, match="run_timeout_ms"):
        _session(_loop_model(), run_timeout_ms=-1)
    with pytest.raises(InvalidArgument, match="max_tensor_bytes"):
        _session(_loop_model(), max_tensor_bytes=-1)
    run_options = nxrt.RunOptions()
    run_options.run_timeout_ms = -3
    with pytest.raises(InvalidArgument, match="run_timeout_ms"):
        _session(_loop_model()).run(None, {"m": np.array(1, np.int64), "start": START}, run_options)


def test_terminate_from_another_thread_stops_a_running_loop():
    session = _session(_loop_model())
    run_options = nxrt.RunOptions()
    run_options.run_timeout_ms = 600_000  # a broken flag fails the test (timeout message) instead of hanging it
    timer = threading.Timer(0.02, lambda: setattr(run_options, "terminate", True))
    timer.start()
    try:
        with pytest.raises(Fail, match=TERMINATE_MESSAGE):
            session.run(None, {"m": FOREVER, "start": START}, run_options)
    finally:
        timer.cancel()


def test_terminate_message_matches_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    model = _loop_model()
    feeds = {"m": np.array(2, np.int64), "start": START}
    ort_options = ort.RunOptions()
    ort_options.terminate = True
    with pytest.raises(Exception) as ort_error:
        ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds, ort_options)
    nxrt_options = nxrt.RunOptions()
    nxrt_options.terminate = True
    with pytest.raises(Fail) as nxrt_error:
        _session(model).run(None, feeds, nxrt_options)
    assert TERMINATE_MESSAGE in str(ort_error.value)
    assert str(nxrt_error.value) == f"[ONNXRuntimeError] : 1 : FAIL : {TERMINATE_MESSAGE}"


def _int64s(name, dims):
    return helper.make_tensor_value_info(name, TensorProto.INT64, dims)


def _floats(name, values):
    return helper.make_tensor(name, TensorProto.FLOAT, [len(values)], values)


def _y(elem_type=TensorProto.FLOAT):
    return helper.make_tensor_value_info("y", elem_type, None)


COUNT = 1 << 30
HUGE_REQUESTS = {
    "ConstantOfShape": (_model([helper.make_node("ConstantOfShape", ["n"], ["y"], name="big")], [_int64s("n", [1])],
                               [_y()]), np.array([COUNT], np.int64), 4 * COUNT),
    "Expand": (_model([helper.make_node("Expand", ["x", "n"], ["y"], name="big")], [_int64s("n", [1])], [_y()],
                      [_floats("x", [1.0])]), np.array([COUNT], np.int64), 4 * COUNT),
    "Tile": (_model([helper.make_node("Tile", ["x", "n"], ["y"], name="big")], [_int64s("n", [1])], [_y()],
                    [_floats("x", [1.0])]), np.array([COUNT], np.int64), 4 * COUNT),
    "Range": (_model([helper.make_node("Range", ["zero", "n", "one"], ["y"], name="big")], [_int64s("n", [])],
                     [_y(TensorProto.INT64)],
                     [helper.make_tensor("zero", TensorProto.INT64, [], [0]),
                      helper.make_tensor("one", TensorProto.INT64, [], [1])]), np.array(COUNT, np.int64), 8 * COUNT),
    "Pad": (_model([helper.make_node("Pad", ["x", "n"], ["y"], name="big")], [_int64s("n", [2])], [_y()],
                   [_floats("x", [1.0])]), np.array([0, COUNT - 1], np.int64), 4 * COUNT),
}


@pytest.mark.parametrize("op", sorted(HUGE_REQUESTS))
def test_huge_outputs_fail_naming_node_output_and_bytes(op):
    model, n, needed = HUGE_REQUESTS[op]
    session = _session(model, max_tensor_bytes=1 << 20)
    with pytest.raises(InvalidArgument) as raised:
        session.run(None, {"n": n})
    message = str(raised.value)
    assert f"running {op} node. Name:'big'" in message
    assert "output 'y'" in message
    assert f"needs {needed} bytes, more than max_tensor_bytes (1048576)" in message


def test_overflowing_sizes_fail_without_a_limit():
    session = _session(_model([helper.make_node("ConstantOfShape", ["n"], ["y"], name="big")], [_int64s("n", [2])],
                              [_y()]))
    with pytest.raises(InvalidArgument, match="ConstantOfShape"):
        session.run(None, {"n": np.array([1 << 31, 1 << 31], np.int64)})


def test_initializer_over_the_limit_fails_at_creation():
    model = _model([helper.make_node("Identity", ["weights"], ["y"])], [], [_y()], [_floats("weights", [1.0] * 256)])
    _session(model, max_tensor_bytes=1024)
    with pytest.raises(InvalidArgument, match=r"initializer 'weights'.*need 1024 bytes, more than max_tensor_bytes"):
        _session(model, max_tensor_bytes=1000)


def test_initializer_whose_dims_overflow_fails_at_creation():
    weights = onnx.TensorProto()
    weights.name = "weights"
    weights.data_type = TensorProto.FLOAT
    weights.dims.extend([1 << 40, 1 << 40])
    weights.raw_data = b""
    model = _model([helper.make_node("Identity", ["weights"], ["y"])], [], [_y()], [weights])
    with pytest.raises(InvalidProtobuf, match="'weights'"):
        _session(model)
