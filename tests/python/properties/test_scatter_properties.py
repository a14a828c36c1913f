"""Index-tuple and scatter operators and Pad on generated inputs (GatherND with batch_dims; ScatterND and
ScatterElements with every reduction of their opset; the deprecated Scatter; Pad in each mode, with negative
pads and the axes input), at every opset version where their schema changed (from 7) and every dtype of their
type constraints, strings included, against the ONNX reference (known_differences/ where it is wrong).
Scatter has no reference implementation; the spec calls it ScatterElements without reductions, so the reference's
ScatterElements-11 is its oracle."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import known_differences
from property_harness import SETTINGS, allowed_dtypes, check_node, node_model, op_cases, run_reference, scaled
from property_values import arrays, elements, shapes

# Kernels that move elements without computing on them (one path per element size, plus strings) run each
# (opset, dtype) case on fewer examples: the op's logic gets them over all its cases together, and the suite stays
# in its CI budget. Ops that compare or combine values keep SETTINGS.
COPY_SETTINGS = scaled(5, 2)
# Ops that compare or combine values over many (opset, dtype) cases: half the examples a case, still hundreds an op.
MANY_CASES_SETTINGS = scaled(2, 4)


# Reductions of ScatterND and ScatterElements: "none" always, add and mul from opset 16, min and max from 18.
REDUCTIONS = {11: ["none"], 13: ["none"], 16: ["none", "add", "mul"], 18: ["none", "add", "mul", "min", "max"]}


def reductions(opset, dtype):
    """The reductions a case may take. Strings: add concatenates and max / min compare by code point (the
    reference's numpy object arithmetic; onnxruntime concatenates too); mul has no meaning for them (the reference
    raises, nxrt and onnxruntime refuse it)."""
    return [r for r in REDUCTIONS[opset] if not (dtype == object and r == "mul")]


def check(op, opset, inputs, attrs=None):
    """check_node with the known_differences/ oracle where the reference is wrong for this case."""
    check_node(op, opset, inputs, attrs, expected=known_differences.expected_for(op, opset, inputs, attrs or {}))


def index_shape_for(dims, lead):
    """`lead` (the index dims before the tuple), with its last dim made 0 where `dims` has an empty axis: no index
    exists into one, so such a case takes no tuple."""
    if 0 in dims and lead:
        return (*lead[:-1], 0)
    return (0,) if 0 in dims else tuple(lead)


def index_tuples(data, dims, count, unique, label):
    """`count` index tuples into `dims` (each index in [-s, s-1]), distinct after normalisation when `unique`."""
    if not dims or count == 0:
        return [()] * count
    points = st.tuples(*(st.integers(-d, d - 1) for d in dims))
    normal = (lambda p: tuple(i % d for i, d in zip(p, dims))) if unique else None
    return data.draw(st.lists(points, min_size=count, max_size=count, unique_by=normal), label=label)


@pytest.mark.parametrize("opset, dtype", list(op_cases("GatherND", with_op=False)))
@COPY_SETTINGS
@given(data=st.data())
def test_gather_nd_matches_the_reference(opset, dtype, data):
    # Empty data a third of the time: the other cases gather something.
    min_side = data.draw(st.sampled_from([0, 1, 1]), label="min side")
    x = data.draw(arrays(dtype, shapes(min_rank=1, min_side=min_side, max_side=3)), label="x")
    batch_dims = data.draw(st.integers(0, x.ndim - 1), label="batch_dims") if opset >= 12 else 0
    k = data.draw(st.integers(1, x.ndim - batch_dims), label="tuple length")
    addressed = x.shape[batch_dims:batch_dims + k]
    middle = index_shape_for(addressed, data.draw(shapes(max_rank=2, min_side=1, max_side=3), label="index dims"))
    index_shape = (*x.shape[:batch_dims], *middle, k)
    count = int(np.prod(index_shape[:-1], dtype=np.int64))
    tuples = index_tuples(data, addressed, count, False, "indices")
    indices = np.array(tuples, np.int64).reshape(index_shape)
    attrs = {"batch_dims": batch_dims} if opset >= 12 else {}
    check("GatherND", opset, [x, indices], attrs)


@pytest.mark.parametrize("opset, dtype", list(op_cases("ScatterND", with_op=False)))
@MANY_CASES_SETTINGS
@given(data=st.data())
def test_scatter_nd_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=1, max_side=3)), label="x")
    reduction = data.draw(st.sampled_from(reductions(opset, dtype)), label="reduction")
    k = data.draw(st.integers(1, x.ndim), label="tuple length")
    lead = index_shape_for(x.shape[:k], data.draw(shapes(min_rank=1, max_rank=2, max_side=3), label="index dims"))
    count = int(np.prod(lead, dtype=np.int64))
    # Without a reduction the spec leaves the result of a repeated index to the unspecified update order.
    tuples = index_tuples(data, x.shape[:k], count, reduction == "none", "indices")
    indices = np.array(tuples, np.int64).reshape(*lead, k)
    updates = data.draw(arrays(dtype, (*lead, *x.shape[k:])), label="updates")
    attrs = {"reduction": reduction} if opset >= 16 else {}
    check("ScatterND", opset, [x, indices, updates], attrs)


def scatter_elements_case(data, opset, dtype, reduction, negative=True):
    """data, indices, updates and axis of a ScatterElements case: indices no larger than data in any dim, their
    values in [-s, s-1] (from 0 when not `negative`), distinct along the axis without a reduction."""
    x = data.draw(arrays(dtype, shapes(min_rank=1, max_side=3)), label="x")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    side = x.shape[axis]
    index_shape = tuple(data.draw(st.integers(0, d), label=f"index dim {i}") for i, d in enumerate(x.shape))
    index_type = data.draw(st.sampled_from(allowed_dtypes("ScatterElements", max(opset, 11), "Tind")), label="Tind")
    low = -side if negative else 0
    if reduction == "none":
        # Distinct targets along the axis (the spec leaves repeated ones to the update order): each line of the
        # indices along the axis is a prefix of a permutation of the axis, shifted by -side where negative.
        moved = np.moveaxis(np.zeros(index_shape, np.int64), axis, -1)
        for line in itertools.product(*(range(d) for d in moved.shape[:-1])):
            order = data.draw(st.permutations(range(side)), label="line")[:moved.shape[-1]]
            shifts = [data.draw(st.booleans(), label="negative") and negative for _ in order]
            moved[line] = [i - side if s else i for i, s in zip(order, shifts)]
        indices = np.moveaxis(moved, -1, axis).astype(index_type)
    else:
        indices = data.draw(arrays(index_type, index_shape, st.integers(low, max(side - 1, low))), label="indices")
    updates = data.draw(arrays(dtype, index_shape), label="updates")
    return x, indices, updates, axis


@pytest.mark.parametrize("opset, dtype", list(op_cases("ScatterElements", with_op=False)))
@MANY_CASES_SETTINGS
@given(data=st.data())
def test_scatter_elements_matches_the_reference(opset, dtype, data):
    reduction = data.draw(st.sampled_from(reductions(opset, dtype)), label="reduction")
    x, indices, updates, axis = scatter_elements_case(data, opset, dtype, reduction)
    attrs = {"axis": axis}
    if opset >= 16:
        attrs["reduction"] = reduction
    check("ScatterElements", opset, [x, indices, updates], attrs)


@pytest.mark.parametrize("opset, dtype", list(op_cases("Scatter", with_op=False)))
@COPY_SETTINGS
@given(data=st.data())
def test_scatter_matches_scatter_elements(opset, dtype, data):
    # Scatter-9 does not mention negative indices (Scatter-11 allows [-s, s-1], as ScatterElements-11).
    x, indices, updates, axis = scatter_elements_case(data, opset, dtype, "none", negative=opset >= 11)
    inputs = [x, indices, updates]

    def scatter_elements(inputs, attrs):
        return run_reference(node_model("ScatterElements", 11, inputs, attrs), inputs)

    check_node("Scatter", opset, inputs, {"axis": axis}, expected=scatter_elements)


def pad_widths(data, shape, rank, mode):
    """(begin, end) per axis of `shape`: in half the cases only adding, else also removing (negative, down to the
    whole axis); non-constant modes add nothing to an axis left empty (there is nothing to repeat).

    The reference's cost (numpy.pad, then the comparison) grows with the output, the product of side + begin + end
    over up to five axes: pads of 20 on a [4, 4, 4, 4, 4] input make 165 million elements and take ~20 s a case.
    So each side adds at most 3 on inputs of rank <= 3 and 1 above (sides <= 3: at most 9^3 or 5^5 elements),
    still past an axis' length, where reflect and wrap repeat."""
    most = 3 if rank <= 3 else 1
    removing = data.draw(st.booleans(), label="removing")
    widths = []
    for i, side in enumerate(shape):
        begin = data.draw(st.integers(-side if removing else 0, most), label=f"begin {i}")
        end = data.draw(st.integers(-(side + min(begin, 0)) if removing else 0, most), label=f"end {i}")
        if mode != "constant" and side + min(begin, 0) + min(end, 0) == 0:
            begin, end = min(begin, 0), min(end, 0)
        widths.append((begin, end))
    return widths


@pytest.mark.parametrize("opset, dtype", list(op_cases("Pad", with_op=False)))
@COPY_SETTINGS
@given(data=st.data())
def test_pad_matches_the_reference(opset, dtype, data):
    # Before opset 11 the pads are an attribute, which cannot be an empty list (no type to infer): rank >= 1.
    x = data.draw(arrays(dtype, shapes(min_rank=0 if opset >= 11 else 1, max_rank=5, max_side=3)), label="x")
    modes = ["constant", "reflect", "edge"] + (["wrap"] if opset >= 19 else [])
    mode = data.draw(st.sampled_from(modes), label="mode")
    axes = list(range(x.ndim))
    axes_input = None
    if opset >= 18 and x.ndim and data.draw(st.booleans(), label="has axes"):
        axes = data.draw(st.lists(st.integers(-x.ndim, x.ndim - 1), unique_by=lambda a: a % x.ndim, min_size=1,
                                  max_size=x.ndim), label="axes")
        axes_type = data.draw(st.sampled_from(allowed_dtypes("Pad", opset, "Tind")), label="axes type")
        axes_input = np.array(axes, axes_type)
    widths = pad_widths(data, [x.shape[a] for a in axes], x.ndim, mode)
    pads = [b for b, _ in widths] + [e for _, e in widths]
    attrs = {"mode": mode}
    if opset < 11:  # pads and the float value as attributes
        attrs["pads"] = pads
        if data.draw(st.booleans(), label="has value"):
            attrs["value"] = data.draw(elements(np.float32), label="value")
        check("Pad", opset, [x], attrs)
        return
    value = None
    if mode == "constant" and data.draw(st.booleans(), label="has constant_value"):
        value = data.draw(arrays(dtype, ()), label="constant_value")
    inputs = [x, np.array(pads, np.int64), value]
    if axes_input is not None:
        inputs.append(axes_input)
    check("Pad", opset, inputs, attrs)


COVERED = {"GatherND", "ScatterND", "ScatterElements", "Scatter", "Pad"}
