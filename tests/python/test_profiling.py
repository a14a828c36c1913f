"""SessionOptions.enable_profiling and InferenceSession.end_profiling, read the way onnxruntime's profile is."""

import collections
import json

import numpy as np
import onnxruntime

import helpers
import nxrt


def profile_totals(path):
    """op_name -> summed kernel time (us) over the file's Node events, as a profile reader would compute it."""
    with open(path, encoding="utf-8") as source:
        events = json.load(source)
    totals = collections.Counter()
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            assert event["dur"] >= 0
            totals[event["args"]["op_name"]] += event["dur"]
    return events, totals


def test_profile_lists_every_node_with_its_calls(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model = helpers.two_output_model()
    options = nxrt.SessionOptions()
    options.enable_profiling = True
    options.profile_file_prefix = "nxrt_test"
    session = nxrt.InferenceSession(model, options)
    feed = {"x": np.ones((64, 3), np.float32), "y": np.full((64, 3), 2.0, np.float32)}
    for _ in range(3):
        session.run(None, feed)
    assert session.get_profiling_start_time_ns() > 0
    path = session.end_profiling()
    assert path.startswith("nxrt_test_") and path.endswith(".json")
    events, totals = profile_totals(tmp_path / path)
    nodes = session._sess.profiled_nodes()  # the optimised graph: Sub + Relu may be one fused node
    assert len(nodes) >= 3
    assert [event["args"]["op_name"] for event in events] == [op for _, op, _, _ in nodes]
    assert all(event["args"]["calls"] == 3 for event in events)
    assert len({event["name"] for event in events}) == len(events)
    assert sum(totals.values()) == sum(event["dur"] for event in events)
    assert session.end_profiling() == ""  # profiling ends with the first call, as in onnxruntime

    # onnxruntime's file of the same model reads with the same code.
    ort_options = onnxruntime.SessionOptions()
    ort_options.enable_profiling = True
    ort_options.profile_file_prefix = "ort_test"
    ort_session = onnxruntime.InferenceSession(model, ort_options, providers=["CPUExecutionProvider"])
    ort_session.run(None, feed)
    _, ort_totals = profile_totals(tmp_path / ort_session.end_profiling())
    assert ort_totals


def test_profiling_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    session = nxrt.InferenceSession(helpers.two_output_model())
    session.run(None, {"x": np.ones((2, 3), np.float32), "y": np.ones((2, 3), np.float32)})
    assert session.end_profiling() == ""
    assert session.get_profiling_start_time_ns() == 0
    assert list(tmp_path.iterdir()) == []
