"""Reductions (Reduce*, ArgMax, ArgMin) on generated inputs: any subset of axes (negative ones too, none, and an
empty list with and without noop_with_empty_axes), keepdims, zero-size dims, at every opset version where their
schema changed (from 7; axes as an attribute, then as an input) and every dtype of their type constraint, against
the ONNX reference."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import known_differences
from property_harness import SETTINGS, check_node, op_cases
from property_values import arrays, is_float, shapes

REDUCE = ("ReduceSum", "ReduceMean", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum",
          "ReduceLogSumExp", "ReduceMax", "ReduceMin")
ARG = ("ArgMax", "ArgMin")


def partial_sums_may_overflow(x):
    """Whether the finite elements' magnitudes add up beyond the accumulator's range (float32 for half types): a
    partial sum may then overflow to an infinity or not depending on the order of the additions."""
    finite = np.abs(x.astype(np.float64))
    finite = finite[np.isfinite(finite)]
    limit = float(np.finfo(np.float64 if x.dtype == np.float64 else np.float32).max)
    with np.errstate(over="ignore"):
        return bool(finite.sum() >= limit)


def axes_are_an_input(op, opset):
    return opset >= (13 if op == "ReduceSum" else 18)


@pytest.mark.parametrize("op, opset, dtype", list(op_cases(REDUCE)))
@SETTINGS
@given(data=st.data())
def test_reduction_matches_the_reference(op, opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(max_rank=4)), label="x")
    rank = x.ndim
    axes = data.draw(st.one_of(st.none(), st.lists(st.integers(-rank, rank - 1), unique_by=lambda a: a % rank,
                                                       max_size=rank) if rank else st.none()), label="axes")
    attrs = {"keepdims": data.draw(st.integers(0, 1), label="keepdims")}
    inputs = [x]
    if axes_are_an_input(op, opset):
        attrs["noop_with_empty_axes"] = data.draw(st.integers(0, 1), label="noop_with_empty_axes")
        if axes is not None:
            inputs.append(np.array(axes, np.int64))
    elif axes:  # before the axes input an empty list means "all" only by omission
        attrs["axes"] = axes
    if op in ("ReduceSum", "ReduceMean", "ReduceLogSum") and is_float(dtype):
        # nxrt's sums are compensated; known_differences compares sets that cancel beyond the precision with the
        # exact sum. Only sets whose partial sums can overflow (then inf or finite by the order) are left out.
        assume(not partial_sums_may_overflow(x))
    if op == "ReduceProd" and is_float(dtype):
        # IEEE products are not associative: a set holding a zero, or values whose partial product can underflow
        # to 0, together with values whose product overflows (or an infinity) is 0, inf or NaN depending on the
        # order of the multiplications (nxrt multiplies in 8 interleaved lanes, numpy in sequence); neither is
        # wrong, so such sets are left out.
        wide = np.abs(x.astype(np.float64))
        info = np.finfo(np.float32 if dtype != np.float64 else np.float64)
        with np.errstate(all="ignore"):
            overflows = np.isinf(wide).any() or np.sum(np.log2(wide[wide > 1])) >= np.log2(float(info.max))
            reaches_zero = (wide == 0).any() or np.sum(np.log2(wide[(wide > 0) & (wide < 1)])) <= np.log2(
                float(info.smallest_subnormal)) + 1
        assume(not (reaches_zero and overflows))
    check_node(op, opset, inputs, attrs, expected=known_differences.expected_for(op, opset, inputs, attrs),
               half_in_float=True)


@pytest.mark.parametrize("op, opset, dtype", list(op_cases(ARG)))
@SETTINGS
@given(data=st.data())
def test_arg_reduction_matches_the_reference(op, opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=1, max_rank=4)), label="x")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    if x.shape[axis] == 0:
        x = np.concatenate([x, np.zeros_like(x, shape=x.shape[:axis % x.ndim] + (1,) + x.shape[axis % x.ndim + 1:])],
                           axis=axis)
    attrs = {"axis": axis, "keepdims": data.draw(st.integers(0, 1), label="keepdims")}
    if opset >= 12:
        attrs["select_last_index"] = data.draw(st.integers(0, 1), label="select_last_index")
    check_node(op, opset, [x], attrs, expected=known_differences.expected_for(op, opset, [x], attrs))


COVERED = set(REDUCE) | set(ARG)
