"""Control-flow operators on generated inputs (If, Loop, Scan) against the ONNX reference, at every opset version
where their schema changed and every tensor dtype of their type constraint: branches and bodies that read
outer-scope values, zero-trip and condition-ended loops, scan outputs of zero-size and several-dim states, scan
axes and directions (negative axes included)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

import known_differences
from property_harness import SETTINGS, allowed_dtypes, check_node, elem_type, feeds_of, node_model, scaled, versions
from property_values import arrays, shapes

# The ops move tensors without looking at their values, so each op/opset/dtype case runs fewer examples than
# the element-wise suites (the long run scales them with NXRT_PROPERTY_EXAMPLES all the same).
FEWER = scaled(4, 3)


def tensor_cases(op, type_param="V", first=1):
    """(opset, dtype) params: each opset where `op` changed and each tensor dtype the harness generates."""
    for opset in versions(op, first=first):
        for dtype in allowed_dtypes(op, opset, type_param):
            yield pytest.param(opset, dtype, id=f"{op}-{opset}-{dtype}")


def combine(dtype, opset):
    """The op a body at `opset` applies to two values of `dtype`: Add where Add takes the type there, Xor for
    bools, else None (a pass-through: strings, and the integers Add takes only from later opsets)."""
    if dtype == np.bool_:
        return "Xor"
    return "Add" if dtype in allowed_dtypes("Add", opset) else None


def info(name, dtype, shape=None):
    return helper.make_tensor_value_info(name, elem_type(np.dtype(dtype)), shape)


def body_step(dtype, opset, a, b, out):
    """A node computing `out` from `a` and `b` (combine(dtype, opset)), or passing `a` through where none applies."""
    op = combine(dtype, opset)
    return helper.make_node(op, [a, b], [out]) if op else helper.make_node("Identity", [a], [out])


@pytest.mark.parametrize("opset, dtype", list(tensor_cases("If")))
@FEWER
@given(data=st.data())
def test_if_picks_its_branch(opset, dtype, data):
    """then: x combined with the outer y; else: y, and a second output x in both (each branch reads outer values)."""
    x = data.draw(arrays(dtype, shapes(max_rank=3, max_side=3)), label="x")
    y = data.draw(arrays(dtype, x.shape), label="y")
    cond = np.array(data.draw(st.booleans(), label="cond"))
    then_branch = helper.make_graph([body_step(dtype, opset, "x1", "x2", "then_out"),
                                     helper.make_node("Identity", ["x1"], ["then_x"])], "then", [],
                                    [info("then_out", dtype), info("then_x", dtype)])
    else_branch = helper.make_graph([helper.make_node("Identity", ["x2"], ["else_out"]),
                                     helper.make_node("Identity", ["x1"], ["else_x"])], "else", [],
                                    [info("else_out", dtype), info("else_x", dtype)])
    # The node's own inputs: cond only; x1 and x2 are the graph inputs x1, x2 the branches capture.
    check_node("If", opset, [cond, x, y], {"then_branch": then_branch, "else_branch": else_branch}, outputs=2,
               node_inputs=["x0"])


@pytest.mark.parametrize("opset, dtype", list(tensor_cases("Loop")))
@FEWER
@given(data=st.data())
def test_loop_carries_state_and_scans(opset, dtype, data):
    """state <- combine(state, step) each iteration, the state before the step scanned out; the body's condition is
    conditions[iteration] (the loop also ends at the trip count M where it is given). M and the first condition may
    be omitted (not both: that loop would never end; without M a false condition ends it by iteration 5), M may be 0
    and the first condition false."""
    state = data.draw(arrays(dtype, shapes(max_rank=2, max_side=3)), label="state")
    step = data.draw(arrays(dtype, state.shape), label="step")
    form = data.draw(st.sampled_from(["M and cond", "M only", "cond only"]), label="form")
    trip = np.array(data.draw(st.integers(0, 4), label="M"), np.int64)
    first = np.array(data.draw(st.booleans(), label="first cond") if form != "cond only" else True)
    conditions = np.array(data.draw(st.lists(st.booleans(), min_size=5, max_size=5), label="conditions") + [False])
    body = helper.make_graph(
        [helper.make_node("Gather", ["x3", "iteration"], ["cond_out"]),
         body_step(dtype, opset, "state_in", "x4", "state_out"),
         helper.make_node("Identity", ["state_in"], ["scanned"])], "body",
        [helper.make_tensor_value_info("iteration", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []), info("state_in", dtype)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), info("state_out", dtype),
         info("scanned", dtype)])
    node_inputs = ["x0" if form != "cond only" else "", "x1" if form != "M only" else "", "x2"]
    inputs = [trip if form != "cond only" else None, first if form != "M only" else None, state, conditions, step]
    oracle = known_differences.expected_for("Loop", opset, inputs, {"body": body, "node_inputs": node_inputs})
    check_node("Loop", opset, inputs, {"body": body}, outputs=2, node_inputs=node_inputs,
               expected=lambda inputs, attrs: oracle(inputs, dict(attrs, node_inputs=node_inputs)))


def scan_cases():
    for opset in versions("Scan", first=9):
        for dtype in allowed_dtypes("Scan", opset, "V"):
            yield pytest.param(opset, dtype, id=f"Scan-{opset}-{dtype}")


@pytest.mark.parametrize("opset, dtype", list(scan_cases()))
@FEWER
@given(data=st.data())
def test_scan_over_axes_and_directions(opset, dtype, data):
    """One state (combined with each scanned slice) and one scan input; the body emits the state and the slice as
    scan outputs. Scan axes and directions of the input and of each output are drawn, negative axes included."""
    length = data.draw(st.integers(1, 4), label="sequence length")
    slice_shape = data.draw(shapes(max_rank=2, max_side=3), label="slice shape")
    axis = data.draw(st.integers(-(len(slice_shape) + 1), len(slice_shape)), label="input axis")
    scanned_shape = list(slice_shape)
    scanned_shape.insert(axis % (len(slice_shape) + 1), length)
    scanned = data.draw(arrays(dtype, tuple(scanned_shape)), label="scan input")
    state = data.draw(arrays(dtype, tuple(slice_shape)), label="state")
    rank = len(slice_shape) + 1
    attrs = {"num_scan_inputs": 1, "scan_input_axes": [axis],
             "scan_input_directions": [data.draw(st.integers(0, 1), label="input direction")],
             "scan_output_axes": [data.draw(st.integers(-rank, rank - 1), label=f"output axis {i}") for i in range(2)],
             "scan_output_directions": [data.draw(st.integers(0, 1), label=f"output direction {i}") for i in range(2)]}
    attrs["body"] = helper.make_graph(
        [body_step(dtype, opset, "state_in", "slice", "state_out"),
         helper.make_node("Identity", ["state_in"], ["emitted"]),
         helper.make_node("Identity", ["slice"], ["slice_out"])], "body",
        [info("state_in", dtype), info("slice", dtype)],
        [info("state_out", dtype), info("emitted", dtype), info("slice_out", dtype)])
    check_node("Scan", opset, [state, scanned], attrs, outputs=3,
               expected=known_differences.expected_for("Scan", opset, [state, scanned], attrs))


@pytest.mark.parametrize("dtype", allowed_dtypes("Scan", 8, "V"), ids=str)
@FEWER
@given(data=st.data())
def test_scan_8_with_batch_and_sequence_lens(dtype, data):
    """Scan-8: a leading batch axis, the scan along axis 1, sequence_lens per batch row (omitted: the full length)
    and each input's direction. The reference has no Scan-8 (it implements the opset-9 signature only), so this
    compares with onnxruntime, exactly (the spec leaves the padding of short rows' scan outputs open; both pad
    with zeros, empty strings for strings)."""
    batch, length = data.draw(st.integers(1, 3), label="batch"), data.draw(st.integers(1, 4), label="length")
    slice_shape = data.draw(shapes(max_rank=1, max_side=3), label="slice shape")
    scanned = data.draw(arrays(dtype, (batch, length, *slice_shape)), label="scan input")
    state = data.draw(arrays(dtype, (batch, *slice_shape)), label="state")
    # Lengths from 1: a row of no iterations has no scan output shape to pad (nxrt and onnxruntime refuse 0).
    lens = np.array([data.draw(st.integers(1, length), label=f"len {b}") for b in range(batch)], np.int64) \
        if data.draw(st.booleans(), label="sequence_lens given") else None
    body = helper.make_graph(
        [body_step(dtype, 8, "state_in", "slice", "state_out"), helper.make_node("Identity", ["slice"], ["slice_out"])],
        "body", [info("state_in", dtype), info("slice", dtype)], [info("state_out", dtype), info("slice_out", dtype)])
    attrs = {"body": body, "num_scan_inputs": 1, "directions": [data.draw(st.integers(0, 1), label="direction")]}
    check_node("Scan", 8, [lens, state, scanned], attrs, outputs=2, expected=onnxruntime_outputs("Scan", 8, attrs, 2))


def onnxruntime_outputs(op, opset, attrs, outputs):
    """An `expected` function for check_node: onnxruntime's outputs for the same one-node model."""
    def expected(inputs, _):
        import onnxruntime

        model = node_model(op, opset, inputs, attrs, outputs)
        session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return session.run(None, feeds_of(inputs))
    return expected


COVERED = {"If", "Loop", "Scan"}
