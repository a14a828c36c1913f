"""Losses, box selection and the training optimizers on generated inputs, against the ONNX reference:

- NegativeLogLikelihoodLoss (12, 13, 22) and SoftmaxCrossEntropyLoss (12, 13), every float type of their schema
  and int32 / int64 targets: inputs [N, C, d1, ...] of rank 2-4 with zero-size dims, reduction none / sum / mean
  (and the default), optional weights, ignore_index inside or outside the classes, with some or every target
  ignored, and SoftmaxCrossEntropyLoss's optional log_prob output.
- NonMaxSuppression (10, 11): both box formats, omitted / empty / rank-0 / [1] threshold inputs, negative and
  zero max_output_boxes_per_class, tied scores (kept in box order) and IoU exactly at the threshold (kept).
- ai.onnx.preview.training Adagrad, Adam, Momentum (1): one or two optimized tensors of any shape, float or
  double tensors with a float or double learning rate, update counts 0 (no bias correction) and up, every
  attribute, both Momentum modes.

nxrt computes the losses and the optimizer updates in double and rounds each result once to the output type
(docs/numerics.md), so the reference is evaluated on float64 copies of float, float16 and bfloat16 inputs and its
results rounded once, as the half types are elsewhere in the suite; sums whose terms cancel beyond double
precision are left out (their value depends on the order of the additions)."""

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from onnx import helper

import known_differences
from property_harness import (RTOL, SETTINGS, assert_same, describe, node_model, op_cases, run_nxrt, run_reference,
                              subnormal_atol, versions)
from property_values import arrays, elements, is_float, shapes

TRAINING_DOMAIN = "ai.onnx.preview.training"
# The default-domain opset that models of the training ops import beside it (their own version is 1).
TRAINING_ONNX_OPSET = 21
OPTIMIZERS = {"Adagrad": 1, "Momentum": 1, "Adam": 2}  # optimizer state tensors per optimized tensor
LOSSES = ("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss")


def domain_model(op, domain, inputs, attrs, outputs):
    """A one-node model of `op` from `domain` (version 1), importing the default domain at
    TRAINING_ONNX_OPSET with the IR version that opset needs. property_harness.node_model would import the
    default domain at 21 under IR version 8 (its IR version follows the op's own opset, 1 here)."""
    model = node_model(op, 1, inputs, attrs, outputs, domain)
    del model.opset_import[:]
    model.opset_import.extend([helper.make_opsetid("", TRAINING_ONNX_OPSET), helper.make_opsetid(domain, 1)])
    model.ir_version = 10
    return model


def widened(inputs):
    """float64 copies of the float inputs; integers as they are."""
    return [a.astype(np.float64) if a is not None and is_float(a.dtype) else a for a in inputs]


def in_double(results, dtypes):
    """Reference results computed on float64 copies, rounded once to the output types `dtypes`."""
    with np.errstate(all="ignore"):  # rounding back overflows to inf where the value exceeds the type
        return [np.asarray(r).astype(t) for r, t in zip(results, dtypes)]


def sum_depends_on_order(terms, dtype):
    """Whether a sum of `terms` in double may land on different `dtype` values in different orders of the
    additions (nxrt adds in sequence, numpy pairwise): the recursive-summation error bound (n - 1) * 2^-53 *
    sum|t| exceeds a quarter of the tolerance at the exact sum, or a partial sum may overflow double."""
    values = np.asarray(terms, np.float64).ravel()
    values = values[np.isfinite(values) & (values != 0)]  # infinities and NaN decide the sum in any order
    if values.size < 3:  # one addition is rounded once in either order
        return False
    try:
        exact = abs(math.fsum(values.tolist()))
    except OverflowError:
        return True
    bound = (values.size - 1) * 2.0 ** -53 * float(np.abs(values).sum())
    return bound > max(0.25 * RTOL[np.dtype(dtype)] * exact, subnormal_atol(dtype))


def check(op, opset, inputs, attrs, outputs, expected_dtypes, model):
    """Runs nxrt on `model` and compares with the reference evaluated in double (or with the known-difference
    oracle for this case, looked up by the domain-qualified name outside ai.onnx)."""
    name = f"{TRAINING_DOMAIN}.{op}" if op in OPTIMIZERS else op
    oracle = known_differences.expected_for(name, opset, inputs, attrs)
    if oracle is not None:
        reference = oracle(inputs, attrs)[:outputs]
    else:
        wide = widened(inputs)
        wide_model = model_for(op, opset, wide, attrs, outputs)
        reference = in_double(run_reference(wide_model, wide), expected_dtypes)
    context = describe(name, opset, inputs, attrs)
    try:
        actual = run_nxrt(model, inputs)
    except Exception as error:  # noqa: BLE001 - the message is the finding
        raise AssertionError(f"{context}: nxrt raised {type(error).__name__}: {error}") from None
    assert_same(actual, reference, context)


def model_for(op, opset, inputs, attrs, outputs):
    if op in OPTIMIZERS:
        return domain_model(op, TRAINING_DOMAIN, inputs, attrs, outputs)
    return node_model(op, opset, inputs, attrs, outputs)


# ---------------------------------------------------------------------------------------------------- losses


def loss_terms(op, x, target, weight, ignore_index):
    """The weighted per-element losses (float64) and their weights, for the cancellation check."""
    values = x.astype(np.float64)
    if op == "SoftmaxCrossEntropyLoss":
        with np.errstate(all="ignore"):
            shifted = values - np.max(values, axis=1, keepdims=True)
            values = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    kept = target != ignore_index if ignore_index is not None else np.ones(target.shape, bool)
    safe = np.where(kept, target, 0)
    picked = np.take_along_axis(values, safe[:, None], axis=1)[:, 0]
    w = weight.astype(np.float64)[safe] if weight is not None else np.ones(target.shape)
    with np.errstate(all="ignore"):
        return np.where(kept, -picked * w, 0.0), np.where(kept, w, 0.0)


@pytest.mark.parametrize("op, opset, dtype", list(op_cases(LOSSES, first=12)))
@SETTINGS
@given(data=st.data())
def test_loss_matches_the_reference(op, opset, dtype, data):
    draw = data.draw
    n, classes = draw(st.integers(0, 3), label="N"), draw(st.integers(1, 4), label="C")
    extra = draw(shapes(max_rank=2, max_side=3), label="d1...")
    x = draw(arrays(dtype, (n, classes, *extra)), label="input")
    target_type = draw(st.sampled_from([np.int32, np.int64]), label="target type")
    target = draw(arrays(target_type, (n, *extra), st.integers(0, classes - 1)), label="target")
    attrs = {}
    ignore_index = None
    if draw(st.booleans(), label="ignore_index given"):
        ignore_index = draw(st.sampled_from([-1, -100, 0, classes - 1, classes + 2]), label="ignore_index")
        attrs["ignore_index"] = ignore_index
        if target.size:
            ignored = draw(st.sampled_from(["some", "all"]), label="ignored")
            where = np.ones(target.shape, bool) if ignored == "all" else \
                draw(arrays(np.bool_, target.shape), label="ignored targets")
            target = np.where(where, target.dtype.type(ignore_index), target)
    weight = draw(arrays(dtype, (classes,)), label="weight") if draw(st.booleans(), label="weight") else None
    reduction = draw(st.sampled_from([None, "none", "sum", "mean"]), label="reduction")
    if reduction is not None:
        attrs["reduction"] = reduction
    outputs = 2 if op == "SoftmaxCrossEntropyLoss" and draw(st.booleans(), label="log_prob") else 1
    if reduction != "none":  # left out: sums whose value the order of the additions decides
        terms, weights = loss_terms(op, x, target, weight, ignore_index)
        assume(not sum_depends_on_order(terms, dtype) and not sum_depends_on_order(weights, dtype))
    inputs = [x, target, weight]
    while inputs[-1] is None:
        inputs.pop()
    check(op, opset, inputs, attrs, outputs, [dtype] * outputs, node_model(op, opset, inputs, attrs, outputs))


# -------------------------------------------------------------------------------------------- NonMaxSuppression

# Coordinates on a coarse grid, so boxes overlap, coincide, nest and touch, and IoUs land exactly on thresholds
# such as 0.5; plus the special values. Scores from a few values, so ties are common.
BOX_VALUES = st.one_of(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0, -1.0, 4.0]),
                       st.sampled_from([np.inf, -np.inf, np.nan, -0.0, 1e-45, 3.4e38]))
SCORE_VALUES = st.one_of(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0, -1.0]),
                         st.sampled_from([np.inf, -np.inf, -0.0, 1e-45]), st.floats(-2, 2, width=32))


def scalar_input(data, dtype, values, label):
    """An optional scalar input: omitted, empty, rank 0 or shape [1] (the spec says "a scalar")."""
    form = data.draw(st.sampled_from(["omitted", "empty", "rank 0", "[1]", "[1]"]), label=f"{label} form")
    if form == "omitted":
        return None
    if form == "empty":
        return np.zeros((0,), dtype)
    value = data.draw(values, label=label)
    return np.array(value, dtype) if form == "rank 0" else np.array([value], dtype)


@pytest.mark.parametrize("opset", versions("NonMaxSuppression"))
@SETTINGS
@given(data=st.data())
def test_non_max_suppression_matches_the_reference(opset, data):
    draw = data.draw
    batches, boxes_count = draw(st.integers(0, 2), label="batches"), draw(st.integers(0, 5), label="boxes")
    classes = draw(st.integers(0, 2), label="classes")
    boxes = draw(arrays(np.float32, (batches, boxes_count, 4), BOX_VALUES), label="boxes")
    scores = draw(arrays(np.float32, (batches, classes, boxes_count), SCORE_VALUES), label="scores")
    max_output = scalar_input(data, np.int64, st.sampled_from([0, 1, 2, 5, -1]), "max_output_boxes_per_class")
    iou = scalar_input(data, np.float32, st.sampled_from([0.0, 0.5, 0.25, 1.0, 0.3]), "iou_threshold")
    score_threshold = scalar_input(data, np.float32, SCORE_VALUES, "score_threshold")
    # Without a score threshold every score takes part, and the spec gives NaN no place in the descending order
    # (it selects by score): NaN scores come only with a threshold, which drops them (NaN > t is false).
    assume(score_threshold is not None and score_threshold.size or not np.isnan(scores).any())
    attrs = {}
    if draw(st.booleans(), label="center_point_box given"):
        attrs["center_point_box"] = draw(st.integers(0, 1), label="center_point_box")
    inputs = [boxes, scores, max_output, iou, score_threshold]
    while inputs[-1] is None:
        inputs.pop()
    model = node_model("NonMaxSuppression", opset, inputs, attrs)
    check("NonMaxSuppression", opset, inputs, attrs, 1, [np.dtype(np.int64)], model)


# The spec's words on crafted boxes: (boxes, scores, max_output_boxes_per_class, iou_threshold, center_point_box,
# the selected box indices of batch 0, class 0). Boxes A = [0, 0, 1, 2] and B = [0, 0, 1, 1] overlap with IoU
# exactly 1 / 2, which "boxes with IOU exactly equal to the threshold are kept" keeps at 0.5.
NMS_CASES = {
    "tied scores are taken in box order": ([[0, 0, 1, 1], [2, 2, 3, 3], [4, 4, 5, 5]], [0.5, 0.5, 0.5], 2, 0.5, 0,
                                           [0, 1]),
    "IoU equal to the threshold is kept": ([[0, 0, 1, 2], [0, 0, 1, 1]], [0.9, 0.8], 5, 0.5, 0, [0, 1]),
    "IoU above the threshold is suppressed": ([[0, 0, 1, 2], [0, 0, 1, 1]], [0.9, 0.8], 5, 0.49, 0, [0]),
    "either diagonal": ([[1, 2, 0, 0], [0, 0, 1, 1]], [0.8, 0.9], 5, 0.49, 0, [1]),
    "center point boxes": ([[1, 0.5, 2, 1], [0.5, 0.5, 1, 1]], [0.9, 0.8], 5, 0.5, 1, [0, 1]),
    "zero boxes per class": ([[0, 0, 1, 1]], [0.9], 0, 0.5, 0, []),
}


@pytest.mark.parametrize("case", list(NMS_CASES))
def test_non_max_suppression_follows_the_spec_on_crafted_boxes(case):
    boxes, scores, max_output, iou, center, selected = NMS_CASES[case]
    inputs = [np.array([boxes], np.float32), np.array([[scores]], np.float32), np.array([max_output], np.int64),
              np.array([iou], np.float32)]
    attrs = {"center_point_box": center}
    expected = np.array([[0, 0, i] for i in selected], np.int64).reshape(len(selected), 3)
    model = node_model("NonMaxSuppression", 11, inputs, attrs)
    assert_same(run_nxrt(model, inputs), [expected], f"{case}: {describe('NonMaxSuppression', 11, inputs, attrs)}")
    assert_same(run_reference(model, inputs), [expected], f"{case}, the reference")


# ------------------------------------------------------------------------------------------ training optimizers

# The optimizer states that are accumulated squares (Adagrad's H, Adam's H), by (op, input block): non-negative.
SQUARE_STATES = {("Adagrad", 2), ("Adam", 3)}


def optimizer_attributes(op, data):
    draw = data.draw
    coefficient = st.sampled_from([0.0, 0.5, 0.01, 1.0])
    if op == "Momentum":  # every attribute is required
        return {"alpha": draw(st.sampled_from([0.9, 0.5, 0.0, 1.0]), label="alpha"),
                "beta": draw(st.sampled_from([0.1, 0.5, 1.0, 0.0]), label="beta"),
                "mode": draw(st.sampled_from(["standard", "nesterov"]), label="mode"),
                "norm_coefficient": draw(coefficient, label="norm_coefficient")}
    optional = {"epsilon": st.sampled_from([1e-6, 0.0, 0.5]), "norm_coefficient": coefficient}
    if op == "Adagrad":
        optional["decay_factor"] = st.sampled_from([0.0, 0.5, 0.1])
    else:
        optional.update(alpha=st.sampled_from([0.9, 0.5, 0.0]), beta=st.sampled_from([0.999, 0.5, 0.0]),
                        norm_coefficient_post=coefficient)
    return {name: draw(values, label=name) for name, values in optional.items()
            if draw(st.booleans(), label=f"{name} given")}


@pytest.mark.parametrize("op", list(OPTIMIZERS))
@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.float64)])
@SETTINGS
@given(data=st.data())
def test_optimizer_matches_the_reference(op, dtype, data):
    draw = data.draw
    rate_type = draw(st.sampled_from([np.float32, np.float64]), label="R type")  # T1 is independent of T3
    rate = np.array(draw(st.sampled_from([0.1, 1.0, 0.0, 2.5, -0.5]), label="R"), rate_type)
    count = np.array(draw(st.integers(0, 5), label="T"), np.int64)
    tensors = draw(st.integers(1, 2), label="optimized tensors")
    shapes_drawn = [draw(shapes(max_rank=3, max_side=3), label=f"shape {i}") for i in range(tensors)]
    blocks = 2 + OPTIMIZERS[op]  # X, G, then the state
    values = [[draw(arrays(dtype, shape, elements(dtype).map(abs) if (op, block) in SQUARE_STATES
                           else elements(dtype)), label=f"block {block} tensor {i}")
               for i, shape in enumerate(shapes_drawn)] for block in range(blocks)]
    inputs = [rate, count] + [tensor for block in values for tensor in block]
    attrs = optimizer_attributes(op, data)
    outputs = tensors * (blocks - 1)  # every block but the gradients
    model = domain_model(op, TRAINING_DOMAIN, inputs, attrs, outputs)
    dtypes = [dtype] * outputs
    check(op, 1, inputs, attrs, outputs, dtypes, model)


COVERED = set(LOSSES) | {"NonMaxSuppression"} | {f"{TRAINING_DOMAIN}.{op}" for op in OPTIMIZERS}
