"""Index and shape operators on generated inputs (Gather, GatherElements, Slice, Expand, Tile, Reshape, Flatten,
Squeeze, Unsqueeze, Identity), at every opset version where their schema changed (from 7) and every dtype of
their type constraint, strings included, against the ONNX reference."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import known_differences
from property_harness import SETTINGS, allowed_dtypes, check_node, op_cases, versions
from property_values import arrays, shapes


@pytest.mark.parametrize("opset, dtype", list(op_cases("Gather", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_gather_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=1)), label="x")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    dim = x.shape[axis]
    index_shape = data.draw(shapes(max_rank=2), label="index shape")
    assume(dim > 0 or np.prod(index_shape) == 0)
    index_type = data.draw(st.sampled_from([np.int32, np.int64]), label="index type")
    indices = data.draw(arrays(index_type, index_shape, st.integers(-dim, max(dim - 1, -dim))), label="indices")
    check_node("Gather", opset, [x, indices], {"axis": axis})


@pytest.mark.parametrize("opset, dtype", list(op_cases("GatherElements", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_gather_elements_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=1, min_side=1)), label="x")
    # Non-negative: the reference's shape check indexes the dims with the axis as given.
    axis = data.draw(st.integers(0, x.ndim - 1), label="axis")
    # The reference requires the other dims to equal the data's (the spec allows smaller ones).
    index_shape = tuple(d if i != axis % x.ndim else data.draw(st.integers(0, 4), label="axis dim")
                        for i, d in enumerate(x.shape))
    dim = x.shape[axis]
    indices = data.draw(arrays(np.int64, index_shape, st.integers(-dim, dim - 1)), label="indices")
    check_node("GatherElements", opset, [x, indices], {"axis": axis})


# From opset 10: starts and ends as inputs, with steps.
@pytest.mark.parametrize("opset, dtype", list(op_cases("Slice", first=10, with_op=False)))
@SETTINGS
@given(data=st.data())
def test_slice_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=1)), label="x")
    axes = data.draw(st.lists(st.integers(-x.ndim, x.ndim - 1), unique_by=lambda a: a % x.ndim, min_size=1,
                              max_size=x.ndim), label="axes")
    bound = st.one_of(st.integers(-6, 6), st.sampled_from([np.iinfo(np.int64).min, np.iinfo(np.int64).max]))
    starts = [data.draw(bound, label="start") for _ in axes]
    ends = [data.draw(bound, label="end") for _ in axes]
    steps = [data.draw(st.sampled_from([1, 2, 3, -1, -2]), label="step") for _ in axes]
    inputs = [x, np.array(starts, np.int64), np.array(ends, np.int64), np.array(axes, np.int64),
              np.array(steps, np.int64)]
    check_node("Slice", opset, inputs)


@pytest.mark.parametrize("opset, dtype", list(op_cases("Expand", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_expand_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(max_rank=3)), label="x")
    lead = data.draw(st.lists(st.integers(0, 3), max_size=2), label="leading dims")
    # Each of x's dims: kept, or 1 where x has 1 and the target grows it (numpy broadcasting both ways).
    tail = [data.draw(st.sampled_from([d, 1] if d != 1 else [1, 0, 2, 3]), label=f"dim {i}")
            for i, d in enumerate(x.shape)]
    check_node("Expand", opset, [x, np.array(lead + tail, np.int64)])


@pytest.mark.parametrize("opset, dtype", list(op_cases("Tile", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_tile_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=1, max_rank=3)), label="x")
    repeats = np.array([data.draw(st.integers(0, 3), label=f"repeat {i}") for i in range(x.ndim)], np.int64)
    check_node("Tile", opset, [x, repeats])


@pytest.mark.parametrize("opset, dtype", list(op_cases("Reshape", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_reshape_matches_the_reference(opset, dtype, data):
    assume(opset >= 7)
    x = data.draw(arrays(dtype, shapes(max_rank=3, min_side=1)), label="x")
    size = x.size
    divisors = [d for d in range(1, size + 1) if size % d == 0]
    first = data.draw(st.sampled_from(divisors), label="first")
    target = [first, size // first]
    choice = data.draw(st.sampled_from(["plain", "infer", "copy"]), label="form")
    if choice == "infer":
        target[data.draw(st.integers(0, 1), label="inferred")] = -1
    elif choice == "copy" and x.ndim >= 1 and x.shape[0] == first:
        target[0] = 0
    check_node("Reshape", opset, [x, np.array(target, np.int64)])


@pytest.mark.parametrize("op", ["Squeeze", "Unsqueeze", "Flatten", "Identity"])
@pytest.mark.parametrize("opset_index", [0, -1])
@SETTINGS
@given(data=st.data())
def test_squeeze_unsqueeze_flatten_identity(op, opset_index, data):
    opset = versions(op)[opset_index]
    dtype = data.draw(st.sampled_from(allowed_dtypes(op, opset, "V" if op == "Identity" and opset >= 14 else "T")),
                      label="dtype")
    x = data.draw(arrays(dtype, shapes(max_rank=4, max_side=3)), label="x")
    attrs, inputs = {}, [x]
    if op == "Squeeze":
        ones = [i for i, d in enumerate(x.shape) if d == 1]
        # Sorted: the reference's opset-1 Squeeze removes unsorted axes one after another from the shrinking shape.
        axes = sorted(data.draw(st.lists(st.sampled_from(ones), unique=True), label="axes")) if ones else []
        if axes:
            if opset >= 13:
                inputs.append(np.array(axes, np.int64))
            else:
                attrs["axes"] = axes
    elif op == "Unsqueeze":
        axes = sorted(data.draw(st.lists(st.integers(0, x.ndim + 1), unique=True, min_size=1, max_size=2),
                                label="axes"))
        axes = [a for i, a in enumerate(axes) if a <= x.ndim + i]
        assume(axes)
        if opset >= 13:
            inputs.append(np.array(axes, np.int64))
        else:
            attrs["axes"] = axes
    elif op == "Flatten":
        # Negative axes from opset 11 on (before, nxrt refuses them as the spec's range [0, R] says).
        attrs["axis"] = data.draw(st.integers(-x.ndim if opset >= 11 else 0, x.ndim), label="axis")
    check_node(op, opset, inputs, attrs, expected=known_differences.expected_for(op, opset, inputs, attrs))


COVERED = {"Gather", "GatherElements", "Slice", "Expand", "Tile", "Reshape", "Squeeze", "Unsqueeze", "Flatten",
           "Identity"}
