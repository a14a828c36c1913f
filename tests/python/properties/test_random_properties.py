"""Random operators on generated attributes and inputs (RandomUniform, RandomUniformLike, RandomNormal,
RandomNormalLike, Bernoulli, Multinomial, Dropout). nxrt's generators are not numpy's, so values cannot be compared
with the reference: the tests compare what the spec fixes (output dtype and shape with the reference's) and check
the values' properties: the range of a uniform, the moments of a large sample against the distribution's (bounds of
six standard errors, deterministic through the seed), the certain outcomes (probability 0 and 1, a scale of 0, a
class of probability 0), and that one seed gives the same values in two sessions. Dropout in inference mode and
with ratio 0 is deterministic and compared with the reference value for value."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from onnx import helper

from property_harness import (SETTINGS, allowed_dtypes, assert_same, describe, elem_type, node_model, run_nxrt,
                              run_reference, versions)
from property_values import BFLOAT16, arrays, shapes

SAMPLE = 4096  # elements of the moment checks: six standard errors of a mean are then 0.09 standard deviations


def generator_cases(op, type_param="T", first=1):
    for opset in versions(op, first=first):
        for dtype in allowed_dtypes(op, opset, type_param):
            yield pytest.param(opset, dtype, id=f"{op}-{opset}-{dtype}")


def run_both(op, opset, inputs, attrs, outputs=1):
    """nxrt's outputs, checked to have the reference's dtypes and shapes, as float64 arrays (and the originals)."""
    model = node_model(op, opset, inputs, attrs, outputs)
    context = describe(op, opset, inputs, attrs)
    expected = run_reference(model, inputs)
    actual = run_nxrt(model, inputs)
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert a.dtype == e.dtype and a.shape == e.shape, \
            f"{context}: output {i} is {a.dtype}{list(a.shape)}, reference {e.dtype}{list(e.shape)}"
    return actual, context


def assert_repeatable(op, opset, inputs, attrs, first, context):
    """With a seed, a second session gives the same values."""
    again = run_nxrt(node_model(op, opset, inputs, attrs, len(first)), inputs)
    for a, b in zip(first, again):
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), f"{context}: the same seed gave other values"


def float_attr(data, label, low, high):
    return float(np.float32(data.draw(st.floats(low, high, width=32), label=label)))


def drawn_opset_and_dtype(op, opset_index, data):
    """The generator's opset (first or last version) and an output dtype drawn from its constraint (T for the
    shape-attribute forms, T2 for the *Like ones)."""
    opset = versions(op)[opset_index]
    dtype = data.draw(st.sampled_from(allowed_dtypes(op, opset, "T2" if op.endswith("Like") else "T")), label="dtype")
    return opset, dtype


@pytest.mark.parametrize("op", ["RandomUniform", "RandomUniformLike"])
@pytest.mark.parametrize("opset_index", [0, -1])
@SETTINGS
@given(data=st.data())
def test_uniform_values_lie_in_low_high(op, opset_index, data):
    opset, dtype = drawn_opset_and_dtype(op, opset_index, data)
    low = float_attr(data, "low", -4, 4)
    high = low + float_attr(data, "width", 0.5, 8)
    attrs = {"low": low, "high": high, "seed": float_attr(data, "seed", 0, 1000), "dtype": elem_type(dtype)}
    size = data.draw(st.sampled_from([0, 3, SAMPLE]), label="size")
    inputs = []
    if op == "RandomUniform":
        attrs["shape"] = [size, 1]
    else:
        inputs = [np.zeros((size, 1), data.draw(st.sampled_from([np.float32, np.int64, np.bool_]), label="like"))]
    (values,), context = run_both(op, opset, inputs, attrs)
    wide = values.astype(np.float64)
    # The spec draws from [low, high); rounding to the dtype is monotonic, so the values lie between the bounds
    # rounded to it (which may be high itself or the next value above it).
    low_rounded, high_rounded = (float(np.array(b, np.float64).astype(dtype).astype(np.float64)) for b in (low, high))
    assert ((wide >= low_rounded) & (wide <= high_rounded)).all(), f"{context}: values outside [{low}, {high}]"
    if size == SAMPLE:
        standard_error = (high - low) / math.sqrt(12 * SAMPLE)
        assert abs(wide.mean() - (low + high) / 2) < 6 * standard_error, f"{context}: mean {wide.mean()}"
    assert_repeatable(op, opset, inputs, attrs, [values], context)


@pytest.mark.parametrize("op", ["RandomNormal", "RandomNormalLike"])
@pytest.mark.parametrize("opset_index", [0, -1])
@SETTINGS
@given(data=st.data())
def test_normal_moments(op, opset_index, data):
    opset, dtype = drawn_opset_and_dtype(op, opset_index, data)
    mean = float_attr(data, "mean", -4, 4)
    scale = data.draw(st.sampled_from([0.0, 0.5, 1.0, 3.0]), label="scale")
    attrs = {"mean": mean, "scale": scale, "seed": float_attr(data, "seed", 0, 1000), "dtype": elem_type(dtype)}
    size = data.draw(st.sampled_from([0, 1, SAMPLE]), label="size")
    inputs = []
    if op == "RandomNormal":
        attrs["shape"] = [2, size // 2] if size > 1 else [size]
    else:
        inputs = [np.zeros((size,), np.float64)]
    (values,), context = run_both(op, opset, inputs, attrs)
    wide = values.astype(np.float64)
    assert np.isfinite(wide).all(), f"{context}: non-finite values"
    if scale == 0:
        expected = float(np.array(mean, np.float32).astype(dtype).astype(np.float64))
        assert (wide == expected).all(), f"{context}: scale 0 gave values other than the mean"
    elif size == SAMPLE:
        rounding = 0.01 * abs(mean) if dtype in (np.dtype(np.float16), BFLOAT16) else 0.0
        assert abs(wide.mean() - mean) < 6 * scale / math.sqrt(SAMPLE) + rounding, f"{context}: mean {wide.mean()}"
        assert abs(wide.std() / scale - 1) < 0.1, f"{context}: standard deviation {wide.std()}"
    assert_repeatable(op, opset, inputs, attrs, [values], context)


@pytest.mark.parametrize("opset, dtype", list(generator_cases("Bernoulli", "T1", first=15)))
@SETTINGS
@given(data=st.data())
def test_bernoulli_outcomes(opset, dtype, data):
    """Outputs are 0 or 1; probability 0 and 1 are certain; a large sample's mean is the probability's."""
    p = data.draw(st.sampled_from([0.0, 1.0, 0.25, 0.5]), label="p")
    size = data.draw(st.sampled_from([0, 5, SAMPLE]), label="size")
    probabilities = np.full((size,), p, dtype)
    attrs = {"seed": float_attr(data, "seed", 0, 1000)}
    out_dtype = data.draw(st.sampled_from([None, *allowed_dtypes("Bernoulli", opset, "T2")]), label="output dtype")
    if out_dtype is not None:
        attrs["dtype"] = elem_type(out_dtype)
    (values,), context = run_both("Bernoulli", opset, [probabilities], attrs)
    wide = values.astype(np.float64)
    assert np.isin(wide, [0.0, 1.0]).all(), f"{context}: values other than 0 and 1"
    if p in (0.0, 1.0):
        assert (wide == p).all(), f"{context}: probability {p} is certain"
    elif size == SAMPLE:
        assert abs(wide.mean() - p) < 6 * math.sqrt(p * (1 - p) / SAMPLE), f"{context}: mean {wide.mean()}"
    assert_repeatable("Bernoulli", opset, [probabilities], attrs, [values], context)


@pytest.mark.parametrize("opset, dtype", list(generator_cases("Multinomial", "T1", first=7)))
@SETTINGS
@given(data=st.data())
def test_multinomial_draws_possible_classes(opset, dtype, data):
    """Each row's samples index its classes, never one whose log-probability is -inf; with one possible class,
    every sample is it."""
    batch, classes = data.draw(st.integers(1, 3), label="batch"), data.draw(st.integers(1, 5), label="classes")
    logits = data.draw(arrays(dtype, (batch, classes), st.one_of(st.floats(-3, 3), st.just(-np.inf))), label="logits")
    logits[:, data.draw(st.integers(0, classes - 1), label="kept class")] = 0.0  # each row has a possible class
    attrs = {"sample_size": data.draw(st.integers(1, 6), label="sample_size"),
             "seed": float_attr(data, "seed", 0, 1000)}
    if data.draw(st.booleans(), label="int64 output"):
        attrs["dtype"] = elem_type(np.dtype(np.int64))
    # The reference has no Multinomial: the spec fixes the output, [batch_size, sample_size] of `dtype` (int32).
    context = describe("Multinomial", opset, [logits], attrs)
    (samples,) = run_nxrt(node_model("Multinomial", opset, [logits], attrs), [logits])
    expected_dtype = np.int64 if attrs.get("dtype") == elem_type(np.dtype(np.int64)) else np.int32
    assert samples.dtype == expected_dtype and samples.shape == (batch, attrs["sample_size"]), \
        f"{context}: {samples.dtype}{list(samples.shape)}"
    for row in range(batch):
        possible = np.flatnonzero(np.isfinite(logits[row].astype(np.float64)))
        assert np.isin(samples[row], possible).all(), \
            f"{context}: row {row} drew {samples[row].tolist()}, possible classes {possible.tolist()}"
    assert_repeatable("Multinomial", opset, [logits], attrs, [samples], context)


def dropout_cases():
    for opset in versions("Dropout", first=7):
        for dtype in allowed_dtypes("Dropout", opset):
            yield pytest.param(opset, dtype, id=f"Dropout-{opset}-{dtype}")


@pytest.mark.parametrize("opset, dtype", list(dropout_cases()))
@SETTINGS
@given(data=st.data())
def test_dropout(opset, dtype, data):
    """Inference (no training_mode, or false), and training with ratio 0: the input and an all-true mask, compared
    with the reference. Training with a ratio in (0, 1): each element is 0 where the mask is false and
    x / (1 - ratio) where it is true."""
    x = data.draw(arrays(dtype, shapes(max_rank=3)), label="x")
    outputs = 1 if opset < 10 else data.draw(st.integers(1, 2), label="outputs")
    ratio = data.draw(st.sampled_from([0.0, 0.25, 0.5]), label="ratio")
    training = opset >= 12 and data.draw(st.booleans(), label="training_mode")
    inputs, attrs = [x], {}
    if opset >= 12:
        inputs += [np.array(ratio, np.float32), np.array(training)]
        attrs["seed"] = 7
    else:
        attrs["ratio"] = ratio
    if not training or ratio == 0:
        model = node_model("Dropout", opset, inputs, attrs, outputs)
        assert_same(run_nxrt(model, inputs), run_reference(model, inputs), describe("Dropout", opset, inputs, attrs))
        return
    y, mask = run_nxrt(node_model("Dropout", opset, inputs, attrs, 2), inputs)
    context = describe("Dropout", opset, inputs, attrs)
    assert mask.dtype == np.bool_ and mask.shape == x.shape and y.shape == x.shape and y.dtype == x.dtype, context
    with np.errstate(all="ignore"):
        kept = (x.astype(np.float64) / (1 - ratio)).astype(x.dtype)
    assert_same([np.where(mask, y, 0).astype(x.dtype), y[~mask].astype(np.float64)],
                [np.where(mask, kept, 0).astype(x.dtype), np.zeros(int((~mask).sum()))], context)


COVERED = {"RandomUniform", "RandomUniformLike", "RandomNormal", "RandomNormalLike", "Bernoulli", "Multinomial",
           "Dropout"}
