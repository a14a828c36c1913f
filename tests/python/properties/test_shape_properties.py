"""Data-movement and per-axis operators on generated inputs (Split in all its forms, Concat, Transpose, Trilu,
CumSum, Softmax / LogSoftmax / Hardmax, Det), at every opset version where their schema changed (from 7) and
every dtype of their type constraint, strings included, against the ONNX reference."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import known_differences
from property_harness import SETTINGS, allowed_dtypes, check_node, op_cases, versions
from property_values import arrays, elements, shapes


def partition(data, total, label):
    """1-4 non-negative sizes adding up to `total`."""
    count = data.draw(st.integers(1, 4), label=f"{label} count")
    cuts = sorted(data.draw(st.lists(st.integers(0, total), min_size=count - 1, max_size=count - 1), label=label))
    bounds = [0, *cuts, total]
    return [b - a for a, b in zip(bounds, bounds[1:])]


@pytest.mark.parametrize("opset, dtype", list(op_cases("Split", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_split_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=1)), label="x")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    dim = x.shape[axis]
    form = data.draw(st.sampled_from(["sizes", "equal", "num_outputs"] if opset >= 18 else ["sizes", "equal"]),
                     label="form")
    attrs, inputs = {"axis": axis}, [x]
    if form == "sizes":
        sizes = partition(data, dim, "sizes")
        outputs = len(sizes)
        if opset >= 13:
            inputs.append(np.array(sizes, np.int64))
        else:
            attrs["split"] = sizes
    elif form == "equal":  # no sizes before opset 18: as many equal parts as outputs
        outputs = data.draw(st.sampled_from([k for k in range(1, 5) if dim % k == 0]), label="outputs")
        assume(opset < 18)  # from 18 on, one of split or num_outputs must be given
    else:
        outputs = data.draw(st.integers(1, max(1, min(4, dim))), label="num_outputs")
        attrs["num_outputs"] = outputs
        chunk = -(-dim // outputs) if dim else 0
        # Every output must get a chunk (the spec's ceil(dim / n) sizes, the last one smaller).
        assume(dim == 0 or chunk * (outputs - 1) < dim)
    check_node("Split", opset, inputs, attrs, outputs=outputs)


@pytest.mark.parametrize("opset, dtype", list(op_cases("Concat", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_concat_matches_the_reference(opset, dtype, data):
    shape = data.draw(shapes(min_rank=1), label="shape")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    count = data.draw(st.integers(1, 3), label="inputs")
    inputs = []
    for i in range(count):
        part = list(shape)
        part[axis] = data.draw(st.integers(0, 3), label=f"dim {i}")
        inputs.append(data.draw(arrays(dtype, tuple(part)), label=f"x{i}"))
    check_node("Concat", opset, inputs, {"axis": axis})


@pytest.mark.parametrize("opset, dtype", list(op_cases("Transpose", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_transpose_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(max_rank=5)), label="x")
    # An empty perm cannot be written as an attribute of a rank-0 input without its type; that case has none.
    perm = data.draw(st.one_of(st.none(), st.permutations(range(x.ndim))), label="perm") if x.ndim else None
    check_node("Transpose", opset, [x], {} if perm is None else {"perm": list(perm)})


@pytest.mark.parametrize("opset, dtype", list(op_cases("Trilu", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_trilu_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=2)), label="x")
    k = data.draw(st.one_of(st.none(), st.integers(-5, 5)), label="k")
    inputs = [x] if k is None else [x, np.array(k, np.int64)]
    attrs = {"upper": data.draw(st.integers(0, 1), label="upper")}
    check_node("Trilu", opset, inputs, attrs, expected=known_differences.expected_for("Trilu", opset, inputs, attrs))


@pytest.mark.parametrize("opset, dtype", list(op_cases("CumSum", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_cumsum_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=1)), label="x")
    axis = np.array(data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis"), np.int64)
    attrs = {"exclusive": data.draw(st.integers(0, 1), label="exclusive"),
             "reverse": data.draw(st.integers(0, 1), label="reverse")}
    check_node("CumSum", opset, [x, axis], attrs, half_in_float=True)


@pytest.mark.parametrize("op, opset, dtype", [pytest.param(op, v, t, id=f"{op}-{v}-{t}")
                                              for op in ("Softmax", "LogSoftmax", "Hardmax") for v in versions(op)
                                              for t in allowed_dtypes(op, v)])
@SETTINGS
@given(data=st.data())
def test_softmax_family_matches_the_reference(op, opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=1)), label="x")
    attrs = {}
    if data.draw(st.booleans(), label="has axis"):
        attrs["axis"] = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    # Half-type Softmax rounds each step in the element type, as the reference does (docs/numerics.md).
    check_node(op, opset, [x], attrs, expected=known_differences.expected_for(op, opset, [x], attrs))


@pytest.mark.parametrize("opset, dtype", list(op_cases("Det", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_det_matches_the_reference(opset, dtype, data):
    n = data.draw(st.integers(0, 4), label="n")
    batch = data.draw(shapes(max_rank=2, max_side=3), label="batch")
    x = data.draw(arrays(dtype, (*batch, n, n), elements(dtype, -4.0, 4.0)), label="x")
    # Det of an ill-conditioned matrix has no digits to compare; keep the well-conditioned ones.
    wide = x.astype(np.float64)
    assume(np.all(np.isfinite(wide)) and np.all(np.abs(wide) < 1e3))
    if n:
        assume(np.all(np.linalg.cond(wide) < 1e3))
    check_node("Det", opset, [x], half_in_float=True)


COVERED = {"Split", "Concat", "Transpose", "Trilu", "CumSum", "Softmax", "LogSoftmax", "Hardmax", "Det"}
