"""Sequence and optional operators on generated inputs (SequenceConstruct, SequenceEmpty, SequenceAt, SequenceErase,
SequenceInsert, SequenceLength, ConcatFromSequence, SplitToSequence, SequenceMap, Optional, OptionalHasElement,
OptionalGetElement), at every opset version where their schema changed and every tensor dtype of their type
constraints, strings included, against the ONNX reference. Sequences enter and leave the one-node models as graph
inputs and outputs (Python lists of arrays); optionals are built and read inside a small graph."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from onnx import TensorProto, helper

import known_differences
from property_harness import SETTINGS, allowed_dtypes, assert_same, elem_type, run_nxrt, versions
from property_values import arrays, shapes


def value_info(name, value, dtype):
    """A graph input / output description: a sequence of `dtype` tensors for a list, a tensor otherwise."""
    if isinstance(value, list):
        return helper.make_tensor_sequence_value_info(name, elem_type(dtype), None)
    return helper.make_tensor_value_info(name, elem_type(value.dtype), list(value.shape))


def graph_model(nodes, feeds, outputs, opset, dtype):
    """A model of `nodes` whose inputs are `feeds` (name -> array or list of arrays of `dtype`)."""
    inputs = [value_info(name, value, dtype) for name, value in feeds.items()]
    graph = helper.make_graph(nodes, "property", inputs, [helper.make_empty_tensor_value_info(n) for n in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10 if opset >= 21 else 8
    return model


def reference_run(model, feeds):
    from onnx.reference import ReferenceEvaluator

    with np.errstate(all="ignore"):
        return ReferenceEvaluator(model).run(None, feeds)


def assert_same_values(actual, expected, context):
    """Tensors as assert_same compares them; sequences element by element, with the same length."""
    assert len(actual) == len(expected), f"{context}: {len(actual)} outputs, reference {len(expected)}"
    for i, (a, e) in enumerate(zip(actual, expected)):
        if isinstance(e, list):
            assert isinstance(a, list), f"{context}: output {i} is {type(a).__name__}, reference a sequence"
            assert_same_values(a, e, f"{context}: output {i}")
        else:
            assert_same([a], [np.asarray(e)], f"{context}: output {i}")


def check_graph(nodes, feeds, outputs, opset, dtype, expected=None):
    """Runs the graph on nxrt and compares with the reference, or with `expected` (the outputs known_differences/
    gives where the reference is wrong)."""
    model = graph_model(nodes, feeds, outputs, opset, dtype)
    shown = {k: ([a.shape for a in v] if isinstance(v, list) else (v.shape, v.ravel()[:4].tolist()))
             for k, v in feeds.items()}
    context = f"{[n.op_type for n in nodes]}-{opset} {dtype} attrs={[n.attribute for n in nodes]} feeds={shown}"
    if expected is None:
        expected = reference_run(model, feeds)
    try:
        actual = run_nxrt(model, []) if not feeds else _run_nxrt_feeds(model, feeds)
    except Exception as error:  # noqa: BLE001 - the message is the finding
        raise AssertionError(f"{context}: nxrt raised {type(error).__name__}: {error}") from None
    assert_same_values(actual, expected, context)


def _run_nxrt_feeds(model, feeds):
    import nxrt

    return nxrt.InferenceSession(model.SerializeToString()).run(None, feeds)


def sequence_cases(op):
    """(opset, dtype) params of a sequence op: its versions from 11 and the tensor types of its constraint."""
    for opset in versions(op, first=11):
        type_param = "T" if op not in ("SequenceEmpty", "SequenceErase", "SequenceLength") else "S"
        if type_param == "S":
            dtypes = allowed_dtypes("SequenceConstruct", 11)
        else:
            dtypes = allowed_dtypes(op, opset, type_param if op != "SequenceMap" else "V")
        for dtype in dtypes:
            yield pytest.param(opset, dtype, id=f"{op}-{opset}-{dtype}")


def tensor_lists(data, dtype, same_shape=False, min_size=0):
    """A list of 0 to 4 arrays of `dtype` (ranks 0 to 3; one shape for all with same_shape)."""
    count = data.draw(st.integers(min_size, 4), label="length")
    if same_shape:
        shape = data.draw(shapes(max_rank=3, max_side=3), label="shape")
        return [data.draw(arrays(dtype, shape), label=f"element {i}") for i in range(count)]
    return [data.draw(arrays(dtype, shapes(max_rank=3, max_side=3)), label=f"element {i}") for i in range(count)]


def position(data, index_type, low, high):
    return np.array(data.draw(st.integers(low, high), label="position"), index_type)


@pytest.mark.parametrize("opset, dtype", list(sequence_cases("SequenceConstruct")))
@SETTINGS
@given(data=st.data())
def test_sequence_construct_and_length(opset, dtype, data):
    elements = tensor_lists(data, dtype, min_size=1)
    names = [f"x{i}" for i in range(len(elements))]
    nodes = [helper.make_node("SequenceConstruct", names, ["s"]), helper.make_node("SequenceLength", ["s"], ["n"])]
    check_graph(nodes, dict(zip(names, elements)), ["s", "n"], opset, dtype)


@pytest.mark.parametrize("opset, dtype", list(sequence_cases("SequenceEmpty")))
@SETTINGS
@given(data=st.data())
def test_sequence_empty_then_insert(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(max_rank=2)), label="x")
    nodes = [helper.make_node("SequenceEmpty", [], ["s"], dtype=elem_type(dtype)),
             helper.make_node("SequenceInsert", ["s", "x"], ["t"]),
             helper.make_node("SequenceLength", ["s"], ["n"])]
    check_graph(nodes, {"x": x}, ["t", "n"], opset, dtype)


@pytest.mark.parametrize("opset, dtype", list(sequence_cases("SequenceAt")))
@SETTINGS
@given(data=st.data())
def test_sequence_at(opset, dtype, data):
    sequence = tensor_lists(data, dtype, min_size=1)
    index_type = data.draw(st.sampled_from([np.int32, np.int64]), label="index type")
    at = position(data, index_type, -len(sequence), len(sequence) - 1)
    check_graph([helper.make_node("SequenceAt", ["s", "p"], ["y"])], {"s": sequence, "p": at}, ["y"], opset, dtype)


@pytest.mark.parametrize("opset, dtype", list(sequence_cases("SequenceErase")))
@SETTINGS
@given(data=st.data())
def test_sequence_erase(opset, dtype, data):
    sequence = tensor_lists(data, dtype, min_size=1)
    feeds, names = {"s": sequence}, ["s"]
    if data.draw(st.booleans(), label="position given"):  # absent: the last tensor
        index_type = data.draw(st.sampled_from([np.int32, np.int64]), label="index type")
        feeds["p"], names = position(data, index_type, -len(sequence), len(sequence) - 1), ["s", "p"]
    check_graph([helper.make_node("SequenceErase", names, ["y"])], feeds, ["y"], opset, dtype)


@pytest.mark.parametrize("opset, dtype", list(sequence_cases("SequenceInsert")))
@SETTINGS
@given(data=st.data())
def test_sequence_insert(opset, dtype, data):
    sequence = tensor_lists(data, dtype, min_size=1)
    feeds, names = {"s": sequence, "x": data.draw(arrays(dtype, shapes(max_rank=2)), label="x")}, ["s", "x"]
    if data.draw(st.booleans(), label="position given"):  # absent: at the end
        index_type = data.draw(st.sampled_from([np.int32, np.int64]), label="index type")
        feeds["p"], names = position(data, index_type, -len(sequence), len(sequence)), ["s", "x", "p"]
    case = [sequence, feeds["x"], feeds.get("p")]
    oracle = known_differences.expected_for("SequenceInsert", opset, case, {})
    check_graph([helper.make_node("SequenceInsert", names, ["y"])], feeds, ["y"], opset, dtype,
                expected=oracle(case, {}) if oracle else None)


@pytest.mark.parametrize("opset, dtype", list(sequence_cases("ConcatFromSequence")))
@SETTINGS
@given(data=st.data())
def test_concat_from_sequence(opset, dtype, data):
    new_axis = data.draw(st.integers(0, 1), label="new_axis")
    shape = data.draw(shapes(min_rank=1, max_rank=3, max_side=3), label="shape")
    rank = len(shape)
    axis = data.draw(st.integers(-rank - new_axis, rank - 1 + new_axis), label="axis")
    count = data.draw(st.integers(1, 4), label="length")
    sequence = []
    for i in range(count):
        element_shape = list(shape)
        if not new_axis:  # the concatenated axis may differ between elements
            element_shape[axis] = data.draw(st.integers(0, 3), label=f"axis dim {i}")
        sequence.append(data.draw(arrays(dtype, tuple(element_shape)), label=f"element {i}"))
    node = helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=axis, new_axis=new_axis)
    check_graph([node], {"s": sequence}, ["y"], opset, dtype)


@pytest.mark.parametrize("opset, dtype", list(sequence_cases("SplitToSequence")))
@SETTINGS
@given(data=st.data())
def test_split_to_sequence(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=1, max_rank=3, max_side=4)), label="x")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    dim = x.shape[axis]
    form = data.draw(st.sampled_from(["none", "scalar", "sizes"]), label="split form")
    feeds, names, attrs = {"x": x}, ["x"], {"axis": axis}
    if form == "none":  # chunks of one; keepdims 0 drops the split axis
        attrs["keepdims"] = data.draw(st.integers(0, 1), label="keepdims")
    elif form == "scalar":  # chunks of that size, the last one smaller (the reference needs a size > 0)
        chunk = data.draw(st.integers(1, max(dim, 1)), label="chunk")
        feeds["split"], names = np.array(chunk, np.int64), ["x", "split"]
    else:
        sizes, left = [], dim
        while left > 0:
            sizes.append(data.draw(st.integers(0, left), label="size") or left)
            left -= sizes[-1]
        feeds["split"], names = np.array(sizes or [0], np.int64), ["x", "split"]
    check_graph([helper.make_node("SplitToSequence", names, ["y"], **attrs)], feeds, ["y"], opset, dtype)


@pytest.mark.parametrize("opset, dtype", list(sequence_cases("SequenceMap")))
@SETTINGS
@given(data=st.data())
def test_sequence_map(opset, dtype, data):
    """A body that returns its element, its shape and the extra input: each output a sequence, one entry per
    element of the input sequence; the extra input is passed as a plain tensor (the same for every element)."""
    sequence = tensor_lists(data, dtype)
    extra = data.draw(arrays(dtype, shapes(max_rank=2)), label="extra")
    body = helper.make_graph(
        [helper.make_node("Identity", ["element"], ["same"]), helper.make_node("Shape", ["element"], ["shape"]),
         helper.make_node("Identity", ["extra_in"], ["extra_out"])], "body",
        [helper.make_tensor_value_info("element", elem_type(dtype), None),
         helper.make_tensor_value_info("extra_in", elem_type(dtype), None)],
        [helper.make_tensor_value_info(n, t, None) for n, t in
         (("same", elem_type(dtype)), ("shape", TensorProto.INT64), ("extra_out", elem_type(dtype)))])
    node = helper.make_node("SequenceMap", ["s", "e"], ["a", "b", "c"], body=body)
    oracle = known_differences.expected_for("SequenceMap", opset, [sequence, extra], {"outputs": 3})
    check_graph([node], {"s": sequence, "e": extra}, ["a", "b", "c"], opset, dtype,
                expected=oracle([sequence, extra], {"outputs": 3}) if oracle else None)


def optional_cases():
    for opset in sorted(set(versions("Optional", first=15) + versions("OptionalHasElement", first=15)
                            + versions("OptionalGetElement", first=15))):
        for dtype in allowed_dtypes("SequenceConstruct", 11):
            yield pytest.param(opset, dtype, id=f"Optional-{opset}-{dtype}")


@pytest.mark.parametrize("opset, dtype", list(optional_cases()))
@SETTINGS
@given(data=st.data())
def test_optional_has_and_get_element(opset, dtype, data):
    """Optional of a tensor and of a sequence: OptionalHasElement and OptionalGetElement of each; from opset 18
    OptionalHasElement also takes a plain tensor (true) and an omitted input (false), OptionalGetElement a plain
    tensor (itself)."""
    x = data.draw(arrays(dtype, shapes(max_rank=3, max_side=3)), label="x")
    sequence = tensor_lists(data, dtype)
    nodes = [helper.make_node("Optional", ["x"], ["full"]),
             helper.make_node("Optional", ["s"], ["full_sequence"]),
             helper.make_node("OptionalHasElement", ["full"], ["has_full"]),
             helper.make_node("OptionalHasElement", ["full_sequence"], ["has_sequence"]),
             helper.make_node("OptionalGetElement", ["full"], ["got"]),
             helper.make_node("OptionalGetElement", ["full_sequence"], ["got_sequence"])]
    outputs = ["has_full", "has_sequence", "got", "got_sequence"]
    if opset >= 18:
        nodes += [helper.make_node("OptionalHasElement", ["x"], ["has_tensor"]),
                  helper.make_node("OptionalHasElement", [""], ["has_nothing"]),
                  helper.make_node("OptionalGetElement", ["x"], ["got_tensor"])]
        outputs += ["has_tensor", "has_nothing", "got_tensor"]
    oracle = known_differences.expected_for("Optional", opset, [x, sequence], {})
    check_graph(nodes, {"x": x, "s": sequence}, outputs, opset, dtype,
                expected=oracle([x, sequence], {}) if oracle else None)


@pytest.mark.parametrize("opset, dtype", list(optional_cases()))
def test_an_empty_optional_has_no_element(opset, dtype):
    """Optional without an input, of the tensor type and of the sequence type (the `type` attribute)."""
    tensor_type = helper.make_tensor_type_proto(elem_type(dtype), None)
    for element_type in (tensor_type, helper.make_sequence_type_proto(tensor_type)):
        nodes = [helper.make_node("Optional", [], ["empty"], type=element_type),
                 helper.make_node("OptionalHasElement", ["empty"], ["has_empty"])]
        oracle = known_differences.expected_for("Optional", opset, [None], {})
        check_graph(nodes, {}, ["has_empty"], opset, dtype, expected=oracle([None], {}) if oracle else None)


COVERED = {"SequenceConstruct", "SequenceEmpty", "SequenceAt", "SequenceErase", "SequenceInsert", "SequenceLength",
           "ConcatFromSequence", "SplitToSequence", "SequenceMap", "Optional", "OptionalHasElement",
           "OptionalGetElement"}
