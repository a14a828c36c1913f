"""Known differences of the Reduce* ops and of the Softmax family (Softmax, LogSoftmax, Hardmax), which normalise
along an axis. The element-wise rules stated in elementwise.py (rank 0, half types rounded once) apply to
reductions too."""

import math

import numpy as np

from .common import Difference


def saturated(values, dtype):
    """float64 values converted toward zero into integer `dtype`, saturating at its range, NaN to 0 (nxrt's
    conversion wherever an integer op computes in float)."""
    info = np.iinfo(dtype)
    values = np.asarray(values, np.float64)
    out = np.zeros(values.shape, dtype)
    high, low = values >= float(info.max), values <= float(info.min)
    out[high], out[low] = info.max, info.min
    inside = ~(high | low | np.isnan(values))
    out[inside] = values[inside].astype(dtype)
    return out


def _reduction_axes(op, opset, inputs, attrs):
    """The axes a Reduce* case reduces, as a tuple (empty with noop_with_empty_axes: only the per-element transform
    applies, as in the reference)."""
    x = inputs[0]
    axes_input = opset >= (13 if op == "ReduceSum" else 18)
    axes = (inputs[1].tolist() if len(inputs) > 1 and inputs[1] is not None else None) if axes_input else \
        attrs.get("axes")
    if not axes:
        return () if axes_input and attrs.get("noop_with_empty_axes", 0) else tuple(range(x.ndim))
    return tuple(a % x.ndim for a in axes)


def cancels_beyond_precision(x):
    """Whether x holds large terms of both signs next to terms below their precision (max + 1 - max): a sum
    whose rounding the order of the additions decides."""
    values = x.astype(np.float64).ravel()
    signed = values[np.isfinite(values) & (values != 0)]
    magnitudes = np.abs(signed)
    if magnitudes.size < 3:
        return False
    digits = {2: 11, 4: 24, 8: 53}.get(x.dtype.itemsize, 24)
    large = magnitudes > magnitudes.min() * 2.0 ** digits
    return bool(large.any() and (signed[large] > 0).any() and (signed[large] < 0).any())


def _exact_sum(values):
    """The sum of float64 `values` correctly rounded (math.fsum), with IEEE's rules for infinities and NaN."""
    if np.isnan(values).any() or (np.isposinf(values).any() and np.isneginf(values).any()):
        return np.nan
    infinite = values[np.isinf(values)]
    return float(infinite[0]) if infinite.size else math.fsum(values.tolist())


def _exact_sums(op, opset, inputs, attrs):
    """ReduceSum / ReduceMean / ReduceLogSum of float inputs from the correctly rounded sum of each reduced set,
    then the op's transform (mean: / count, log), rounded once to the input type."""
    x = inputs[0]
    axes = _reduction_axes(op, opset, inputs, attrs)
    keep = bool(attrs.get("keepdims", 1))
    wide = x.astype(np.float64)
    if axes:
        moved = np.moveaxis(wide, axes, tuple(range(x.ndim - len(axes), x.ndim)))
        kept_shape = moved.shape[:x.ndim - len(axes)]
        count = int(np.prod(moved.shape[x.ndim - len(axes):], dtype=np.int64))
        rows = moved.reshape(int(np.prod(kept_shape, dtype=np.int64)), count)
        sums = np.array([_exact_sum(row) for row in rows], np.float64).reshape(kept_shape)
        if keep:
            sums = np.expand_dims(sums, axes)
    else:
        sums, count = wide, 1
    with np.errstate(all="ignore"):
        if op == "ReduceMean":
            sums = sums / count
        elif op == "ReduceLogSum":
            sums = np.log(sums)
        return [np.asarray(sums).astype(x.dtype)]


def _log_sum_exp(v, axes, keep):
    """log(sum(exp(v))) over `axes`, shifted by the largest finite value (so 710 stays 710 and +inf gives +inf)."""
    finite = np.where(np.isfinite(v), v, -np.inf)
    shift = np.max(finite, axis=axes, keepdims=True, initial=-np.inf) if v.size else np.zeros_like(
        np.sum(v, axis=axes, keepdims=True))
    shift = np.where(np.isfinite(shift), shift, 0.0)
    with np.errstate(all="ignore"):
        out = np.log(np.sum(np.exp(v - shift), axis=axes, keepdims=True)) + shift
    return out if keep else np.squeeze(out, axis=axes)


def _exact_integer_mean(op, opset, inputs, attrs):
    """The mean of integers exactly (Python integers), truncated toward zero; 0 for an empty set."""
    x = inputs[0]
    axes = _reduction_axes(op, opset, inputs, attrs)
    keep = bool(attrs.get("keepdims", 1))
    sums = np.sum(x.astype(object), axis=axes, keepdims=keep) if axes else x.astype(object)
    count = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    mean = np.vectorize(lambda t: 0 if count == 0 else (abs(int(t)) // count) * (1 if int(t) >= 0 else -1),
                        otypes=[object])(sums) if np.size(sums) else np.asarray(sums)
    return [np.asarray(mean).astype(x.dtype).reshape(np.shape(sums))]


def _exact_integer_log_sum(op, opset, inputs, attrs):
    """log of the exact sum of integers (Python integers; -inf for a sum of 0, NaN below), in float64, converted back
    as saturated does (NaN to 0)."""
    x = inputs[0]
    axes = _reduction_axes(op, opset, inputs, attrs)
    keep = bool(attrs.get("keepdims", 1))
    sums = np.sum(x.astype(object), axis=axes, keepdims=keep) if axes else x.astype(object)

    def log_of(total):
        total = int(total)
        return math.log(total) if total > 0 else (-math.inf if total == 0 else math.nan)

    logs = np.vectorize(log_of, otypes=[np.float64])(sums) if np.size(sums) else np.zeros(np.shape(sums))
    return [saturated(np.asarray(logs, np.float64).reshape(np.shape(sums)), x.dtype)]


def _reduce_in_float64(reduce):
    """An integer reduction computed on float64 values by `reduce(values, axes, keepdims)` and converted back as
    saturated does."""
    def expected(op, opset, inputs, attrs):
        x = inputs[0]
        axes = _reduction_axes(op, opset, inputs, attrs)
        with np.errstate(all="ignore"):
            values = reduce(x.astype(np.float64), axes, bool(attrs.get("keepdims", 1)))
        return [saturated(values, x.dtype)]
    return expected


def _reference_result_as(op, opset, inputs, attrs, dtype):
    from property_harness import node_model, run_reference

    results = run_reference(node_model(op, opset, inputs, attrs), inputs)
    return [r.astype(dtype) for r in results]


def _rank0_through_rank1(op, opset, inputs, attrs):
    """A reduction of a rank-0 input, evaluated by the reference as the same value reduced from shape [1]."""
    from property_harness import reference_in_float

    case = [inputs[0].reshape(1), *inputs[1:]]  # a rank-0 input reduces over no axis or all: the same on [1]
    return [r.reshape(()) for r in reference_in_float(op, opset, case, attrs, 1, "")]


def _coerced_through_the_reference(op, inputs, attrs):
    """Softmax / Hardmax before opset 13 on half types: the reference's opset-13 op along the last axis of the
    spec's coerced 2-D input (it rounds every step in the half type, as nxrt's half Softmax does)."""
    from property_harness import node_model, run_reference

    x = inputs[0]
    axis = attrs.get("axis", 1)
    axis = axis + x.ndim if axis < 0 else axis
    flat = x.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), int(np.prod(x.shape[axis:], dtype=np.int64)))
    if flat.size == 0:
        return [x.copy()]
    return [r.reshape(x.shape) for r in run_reference(node_model(op, 13, [flat], {"axis": 1}), [flat])]


def _softmax_family_by_the_spec(op, opset, inputs, attrs):
    """Softmax, LogSoftmax and Hardmax as the spec defines them, in float64 (float32 for half types), rounded once:
    from opset 13 along the single `axis` (default -1); before, on the input coerced to 2-D
    [a_0 * ... * a_(k-1), a_k * ... * a_(n-1)] at `axis` (default 1, which may equal the rank). LogSoftmax is
    (x - max) - log(sum(exp(x - max)))."""
    x = inputs[0]
    if op != "LogSoftmax" and opset < 13 and x.dtype.itemsize == 2:
        return _coerced_through_the_reference(op, inputs, attrs)
    wide = x.astype(np.float32 if x.dtype.itemsize == 2 else np.float64)
    if opset >= 13:
        axis = attrs.get("axis", -1) % x.ndim
        wide = np.moveaxis(wide, axis, -1)
        moved = wide.shape
        wide = wide.reshape(int(np.prod(moved[:-1], dtype=np.int64)), moved[-1]) if wide.ndim else wide.reshape(1, 1)
    else:
        axis = attrs.get("axis", 1)
        axis = axis + x.ndim if axis < 0 else axis
        wide = wide.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), int(np.prod(x.shape[axis:], dtype=np.int64)))
    rows = wide.shape[0]
    with np.errstate(all="ignore"):
        if op == "Hardmax":
            out = np.zeros_like(wide)
            if wide.size:
                out[np.arange(rows), np.argmax(wide, axis=1)] = 1
        else:
            shifted = wide - np.max(wide, axis=1, keepdims=True, initial=-np.inf)
            if op == "Softmax":
                e = np.exp(shifted)
                out = e / np.sum(e, axis=1, keepdims=True)
            else:
                out = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    if opset >= 13:
        out = np.moveaxis(out.reshape(moved), -1, attrs.get("axis", -1) % x.ndim) if x.ndim else out.reshape(())
    with np.errstate(all="ignore"):  # -inf and overflow round to the half type's infinities
        return [out.astype(x.dtype).reshape(x.shape)]


DIFFERENCES = [
    Difference(
        "ReduceL2",
        "For integers the reference squares in the input type (wrapping: 153696^2 in int32 is negative) and takes "
        "the square root of that, converting NaN to INT_MIN. The spec defines sqrt(sum(x^2)); nxrt computes it in "
        "float64 (153696) and converts toward zero.",
        lambda opset, inputs, attrs: inputs[0].dtype.kind in "iu",
        _reduce_in_float64(lambda v, axes, keep: np.sqrt(np.sum(v * v, axis=axes, keepdims=keep))),
    ),
    Difference(
        "ReduceMean",
        "For integers the reference takes the float mean and converts it with astype: the mean of an empty set "
        "(NaN) becomes INT_MIN (uint64: 2^63), a mean beyond 2^53 loses its low digits, "
        "empty mean (NaN) to 0; and its integer sum wraps (the mean of {INT64_MAX, INT64_MAX} as -1). nxrt's "
        "integer mean is exact (a 128-bit sum divided toward zero; INT64_MAX there), 0 for an empty set.",
        lambda opset, inputs, attrs: inputs[0].dtype.kind in "iu",
        _exact_integer_mean,
    ),
    Difference(
        "ReduceSumSquare",
        "For 32-bit integers the reference returns a 64-bit result (numpy's square promotes); the schema's output "
        "type is the input's, as onnxruntime and nxrt give it (summed in the input type, wrapping). Compared with "
        "the reference's 64-bit result converted to the input type.",
        lambda opset, inputs, attrs: inputs[0].dtype in (np.int32, np.uint32),
        lambda op, opset, inputs, attrs: _reference_result_as(op, opset, inputs, attrs, inputs[0].dtype),
    ),
    Difference(
        "ReduceLogSum",
        "The reference refuses integer inputs (\"integer types were removed from the schema in opset 28\"), which the "
        "schema allows before opset 28. nxrt sums the integers exactly (128 bits), takes the log in float64 and "
        "converts toward zero, saturating, NaN to 0 (a float64 sum loses small terms behind large cancelling ones: "
        "{INT64_MAX, INT64_MIN} sums to -1, log NaN, 0; in float64 to 0, log -inf, INT64_MIN).",
        lambda opset, inputs, attrs: inputs[0].dtype.kind in "iu",
        _exact_integer_log_sum,
    ),
    Difference(
        "ReduceLogSumExp",
        "As ReduceLogSum: the reference refuses the integer inputs the schema allows before opset 28. nxrt "
        "computes log(sum(exp)) in float64, shifted by the largest finite value (710 stays 710), and converts "
        "toward zero, saturating, NaN to 0.",
        lambda opset, inputs, attrs: inputs[0].dtype.kind in "iu",
        _reduce_in_float64(_log_sum_exp),
    ),
    *[Difference(
        op,
        "The reference sums floats in numpy's pairwise order in the input type (float32 for half types), so terms "
        "that cancel beyond the type's precision round by that order (max + 1 - max is 0). The spec's sum is the "
        "exact one; nxrt sums with TwoSum compensation (within about one rounding of it while no partial sum "
        "overflows). Compared with the correctly rounded sum (math.fsum) of each reduced set.",
        lambda opset, inputs, attrs: inputs[0].dtype.kind not in "iu" and cancels_beyond_precision(inputs[0]),
        _exact_sums,
    ) for op in ("ReduceSum", "ReduceMean", "ReduceLogSum")],
    Difference(
        "ReduceLogSumExp",
        "The reference subtracts the largest value before exp; when that is infinite it computes inf - inf = NaN. "
        "log(sum(exp(x))) is +inf with a +inf element and -inf over only -inf elements, which nxrt gives (it "
        "shifts by the largest finite value). And it sums and takes the log in the input type: near a sum of 1 "
        "the log keeps few digits (ReduceLogSumExp(float32 [-0, -6]) is 0.0024756517 there, 0.0024756852 "
        "correctly rounded), where nxrt computes in float64 and rounds once. Compared with the shifted form in "
        "float64.",
        lambda opset, inputs, attrs: inputs[0].dtype.kind not in "iu",
        lambda op, opset, inputs, attrs: [_log_sum_exp(
            inputs[0].astype(np.float64), _reduction_axes(op, opset, inputs, attrs),
            bool(attrs.get("keepdims", 1))).astype(inputs[0].dtype)],
    ),
    *[Difference(
        op,
        "The reference fails on a rank-0 input (\"Issues with types [<class 'numpy.ndarray'>]\": its result is a "
        "numpy scalar). Compared with the reference reducing the same value from shape [1].",
        lambda opset, inputs, attrs: inputs[0].ndim == 0,
        _rank0_through_rank1,
    ) for op in ("ReduceLogSum", "ReduceLogSumExp")],
    *[Difference(
        op,
        "Before opset 13 the spec coerces the input to 2-D at `axis` (\"[a_0 * ... * a_{k-1}, a_k * ... * "
        "a_{n-1}]\") and normalises each row; the reference applies the opset-13 form along the single axis "
        "instead (for a [2] input with the default axis 1 it normalises both elements together, where the spec's "
        "rows hold one each). Compared with the spec's coerced form.",
        lambda opset, inputs, attrs: opset < 13,
        _softmax_family_by_the_spec,
    ) for op in ("Softmax", "LogSoftmax", "Hardmax")],
    Difference(
        "LogSoftmax",
        "The reference computes LogSoftmax as log(Softmax(x)) in the input type: near a probability of 1 the "
        "log loses digits (LogSoftmax([-0, 6])[1] is -0.0024756414 there in float32, -0.0024756852 by the formula) "
        "and a probability that underflows gives -inf where the value is finite (x - max - log(sum)). nxrt "
        "computes the spec's (x - max) - log(sum(exp(x - max))) with the sum in double. Compared with that "
        "formula in float64.",
        lambda opset, inputs, attrs: opset >= 13,
        _softmax_family_by_the_spec,
    ),
]
