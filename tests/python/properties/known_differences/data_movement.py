"""Known differences of the data-movement ops: Trilu, Flatten, Shape, GatherND, OneHot, Unique, Pad,
CenterCropPad, ScatterElements, ScatterND and Range."""

import math

import numpy as np

from .common import Difference


def _trilu_strings(op, opset, inputs, attrs):
    x = inputs[0]
    k = int(inputs[1]) if len(inputs) > 1 and inputs[1] is not None else 0
    rows, cols = x.shape[-2:]
    keep = np.triu(np.ones((rows, cols), bool), k) if attrs.get("upper", 1) else np.tril(np.ones((rows, cols), bool), k)
    out = np.where(keep, x, "").astype(object)
    return [out.reshape(x.shape)]


def _flattened(x, axis):
    axis = axis + x.ndim if axis < 0 else axis
    return [x.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), int(np.prod(x.shape[axis:], dtype=np.int64)))]


def _shape_by_the_spec(op, opset, inputs, attrs):
    """Shape's start and end as the spec clamps them: a negative one counts from the back, then into [0, rank]."""
    rank = inputs[0].ndim

    def clamped(value, default):
        value = default if value is None else value
        return min(max(value + rank if value < 0 else value, 0), rank)

    start, end = clamped(attrs.get("start"), 0), clamped(attrs.get("end"), rank)
    return [np.array(inputs[0].shape[start:max(start, end)], np.int64)]


def _gather_nd_by_the_spec(op, opset, inputs, attrs):
    """GatherND one index tuple at a time: output[batch..., position...] = data[batch..., *tuple]."""
    data, indices = inputs
    batch_dims, k = attrs.get("batch_dims", 0), indices.shape[-1]
    out = np.empty(indices.shape[:-1] + data.shape[batch_dims + k:], data.dtype)
    for position in np.ndindex(indices.shape[:-1]):
        out[position] = data[position[:batch_dims] + tuple(int(i) for i in indices[position])]
    return [out]


def _onnx_one_hot_by_the_spec(op, opset, inputs, attrs):
    """OneHot as the spec words it: depth and indices cast to int64 (toward zero); an index in [-depth, depth - 1]
    (from opset 11; [0, depth - 1] before) puts on_value at its class, every other position holds off_value."""
    indices, depth, values = inputs
    depth = int(depth.reshape(-1)[0].astype(np.float64)) if depth.dtype.kind not in "iu" else int(depth.reshape(-1)[0])
    axis = attrs.get("axis", -1)
    axis = axis + indices.ndim + 1 if axis < 0 else axis
    classes = np.array([int(v) for v in indices.astype(np.float64 if indices.dtype.kind not in "iu" else object)
                        .reshape(-1).tolist()], np.int64).reshape(indices.shape)
    if opset >= 11:
        classes = np.where(classes < 0, classes + depth, classes)
    depth_axis = np.arange(depth).reshape((1,) * axis + (depth,) + (1,) * (indices.ndim - axis))
    hot = np.expand_dims(classes, axis) == depth_axis
    return [np.where(hot, values[1:2], values[0:1]).astype(values.dtype)]


def _one_hot_arithmetic_is_inexact(values):
    """Whether the reference's indicator * (on - off) + off misses on_value or off_value, or cannot be computed."""
    if values.dtype == object or values.dtype == np.bool_:
        return True
    if values.dtype.kind in "iu":  # wraps modulo 2^bits both ways: exact
        return False
    off, on = values[0:1], values[1:2]
    with np.errstate(all="ignore"):
        gives_on, gives_off = (on - off) + off, (on - off) * 0 + off
    return not (np.array_equal(gives_on, on) and np.array_equal(gives_off, off))


def _unique_key(value):
    """Unique's equality and order: numbers ascending, -0.0 equal to 0.0, NaN after every number and equal to NaN
    (numpy.unique's equal_nan, which the reference gets on flattened inputs), strings by code point."""
    if isinstance(value, float):
        return (1, 0.0) if math.isnan(value) else (0, value + 0.0)
    return (0, value)


def _unique_by_the_spec(op, opset, inputs, attrs):
    """Unique's four outputs: the distinct elements (flattened) or slices along `axis` (compared element by element
    with _unique_key), sorted or in the order of their first occurrence, with first-occurrence indices, inverse
    indices and counts."""
    x, axis = inputs[0], attrs.get("axis")
    wide = x.astype(np.float64) if x.dtype.kind == "f" or x.dtype.name == "bfloat16" else x
    if axis is None:
        keys = [(_unique_key(v),) for v in wide.reshape(-1).tolist()]
    else:
        moved = np.moveaxis(wide, axis % x.ndim, 0)
        keys = [tuple(_unique_key(v) for v in np.asarray(moved[i]).reshape(-1).tolist())
                for i in range(moved.shape[0])]
    first, counts = {}, {}
    for position, key in enumerate(keys):
        first.setdefault(key, position)
        counts[key] = counts.get(key, 0) + 1
    order = sorted(first) if attrs.get("sorted", 1) else sorted(first, key=first.get)
    place = {key: i for i, key in enumerate(order)}
    firsts = np.array([first[key] for key in order], np.int64)
    y = x.reshape(-1)[firsts] if axis is None else np.take(x, firsts, axis=axis)
    return [y, firsts, np.array([place[key] for key in keys], np.int64),
            np.array([counts[key] for key in order], np.int64)]


def _strings_zero_filled_empty(array):
    """A string result in which the reference wrote its numeric zero fill (the integer 0) where "" belongs."""
    if array.dtype != object:
        return array
    return np.array([v if isinstance(v, str) else "" for v in array.reshape(-1).tolist()], object).reshape(array.shape)


def _pad_widths(opset, inputs, attrs):
    """(begin, end) pads of every axis of a Pad case (the pads attribute before opset 11; the axes input from 18)."""
    x = inputs[0]
    pads = list(attrs["pads"]) if opset < 11 else inputs[1].tolist()
    axes = inputs[3].tolist() if len(inputs) > 3 and inputs[3] is not None else list(range(x.ndim))
    widths = [(0, 0)] * x.ndim
    for i, axis in enumerate(axes):
        widths[axis % x.ndim] = (pads[i], pads[i + len(axes)])
    return widths


def _pad_removing_first(op, opset, inputs, attrs):
    """Pad through the reference on the input cropped by the negative pads and padded by the positive ones, its
    string zero fill written as ""."""
    from property_harness import node_model, run_reference

    x = inputs[0]
    widths = _pad_widths(opset, inputs, attrs)
    kept = x[tuple(slice(max(-b, 0), d - max(-e, 0)) for d, (b, e) in zip(x.shape, widths))]
    added = [max(b, 0) for b, _ in widths] + [max(e, 0) for _, e in widths]
    if opset < 11:
        case, case_attrs = [kept], {**attrs, "pads": added}
    else:  # every axis's pads, so no axes input
        case, case_attrs = [kept, np.array(added, np.int64), *inputs[2:3]], attrs
    return [_strings_zero_filled_empty(r) for r in run_reference(node_model(op, opset, case, case_attrs), case)]


def _center_crop_pad_strings(op, opset, inputs, attrs):
    from property_harness import node_model, run_reference

    return [_strings_zero_filled_empty(r) for r in run_reference(node_model(op, opset, inputs, attrs), inputs)]


def _scatter_elements_nan_propagating(op, opset, inputs, attrs):
    """ScatterElements' max / min reduction with numpy.maximum / minimum (NaN from either side propagates)."""
    data, indices, updates = inputs
    axis = attrs.get("axis", 0) % data.ndim
    combine = np.maximum if attrs["reduction"] == "max" else np.minimum
    out = data.copy()
    for position in np.ndindex(indices.shape):
        target = tuple(int(indices[position]) if d == axis else i for d, i in enumerate(position))
        out[target] = combine(out[target], updates[position])
    return [out]


def _scatter_nd_strings_by_code_point(op, opset, inputs, attrs):
    """ScatterND's max / min reduction of strings by code point (Python's order), element by element."""
    data, indices, updates = inputs
    out = data.copy()
    for position in np.ndindex(indices.shape[:-1]):
        target = tuple(int(i) for i in indices[position])
        current, update = np.asarray(out[target], object), np.asarray(updates[position], object)
        keep = (update < current) if attrs["reduction"] == "max" else (current < update)
        out[target] = np.where(keep, current, update)
    return [out]


def _range_count_through_float(opset, inputs, attrs):
    """Whether numpy.arange's count, ceil of (limit - start) / delta divided into a float, misses the exact count of
    an integer Range."""
    if inputs[0].dtype.kind not in "iu":
        return False
    start, limit, delta = (int(a) for a in inputs)
    return max(-((start - limit) // delta), 0) != max(math.ceil((limit - start) / delta), 0)


def _range_of_integers_exactly(op, opset, inputs, attrs):
    """An integer Range with the spec's count, max(ceil((limit - start) / delta), 0), in exact integer arithmetic."""
    start, limit, delta = (int(a) for a in inputs)
    return [np.array([start + i * delta for i in range(max(-((start - limit) // delta), 0))], inputs[0].dtype)]


DIFFERENCES = [
    Difference(
        "Trilu",
        "For strings the reference fills the zeroed triangle with the integer 0 (numpy.triu on an object array); "
        "a string tensor's zero is the empty string, which nxrt writes.",
        lambda opset, inputs, attrs: inputs[0].dtype == object,
        _trilu_strings,
    ),
    Difference(
        "Flatten",
        "The reference fails on zero-size inputs (it reshapes to (rows, -1), which numpy cannot infer from 0 "
        "elements). Compared with the spec's [a_0 * ... * a_(axis-1), a_axis * ... * a_(n-1)] reshape.",
        lambda opset, inputs, attrs: inputs[0].size == 0,
        lambda op, opset, inputs, attrs: _flattened(inputs[0], attrs.get("axis", 1)),
    ),
    Difference(
        "Shape",
        "For an end below -rank the reference adds the rank once and slices with the still negative result, which "
        "Python counts from the back again: Shape([2, 3, 4] input, end=-4) is [2, 3] there. The spec clamps end + "
        "rank into [0, rank]: an empty shape, as nxrt and onnxruntime give it.",
        lambda opset, inputs, attrs: attrs.get("end", 0) < -inputs[0].ndim,
        _shape_by_the_spec,
    ),
    Difference(
        "GatherND",
        "The reference reshapes the indices to (batch, -1, k), which numpy cannot do for zero index tuples (\"cannot "
        "reshape array of size 0\"). The spec's output is then empty, of shape indices.shape[:-1] + "
        "data.shape[batch_dims + k:], as nxrt and onnxruntime give it.",
        lambda opset, inputs, attrs: inputs[1].size == 0,
        _gather_nd_by_the_spec,
    ),
    Difference(
        "OneHot",
        "The reference takes numpy.arange(depth), which numpy 2 refuses for a depth of shape [1] (\"only "
        "0-dimensional arrays can be converted to Python scalars\"); the spec allows a \"Scalar or rank 1 tensor "
        "containing exactly one element\". Compared with the spec's OneHot; onnxruntime takes either shape.",
        lambda opset, inputs, attrs: inputs[1].ndim != 0,
        _onnx_one_hot_by_the_spec,
    ),
    Difference(
        "OneHot",
        "The spec casts a non-integer depth and non-integer indices to int64; the reference keeps the fractions: "
        "depth 3.5 gives 4 classes there (numpy.arange(3.5)), 3 by the spec, and index 1.5 matches no class there, "
        "class 1 by the spec. nxrt casts toward zero; onnxruntime gives 3 classes for depth 3.5 and has no float "
        "indices.",
        lambda opset, inputs, attrs: any(a.dtype.kind not in "iu" and bool((a.astype(np.float64) % 1 != 0).any())
                                         for a in inputs[:2]),
        _onnx_one_hot_by_the_spec,
    ),
    Difference(
        "OneHot",
        "OneHot-9 says indices \"outside the range [0, depth) will result in one-hot representation with all "
        "'off_value' values\"; the reference counts a negative index from the back at every opset (OneHot-11's "
        "rule), as onnxruntime also does at opset 9. nxrt follows each opset's wording.",
        lambda opset, inputs, attrs: opset < 11 and bool((inputs[0].astype(np.float64) < 0).any()),
        _onnx_one_hot_by_the_spec,
    ),
    Difference(
        "OneHot",
        "The spec fills on_value at each index's class and off_value elsewhere; the reference computes indicator * "
        "(on - off) + off, which fails for strings and bools (numpy has no subtraction for them), gives NaN where "
        "on or off is infinite and misses them where they differ greatly in magnitude (on 1, off 1e8 in float32 "
        "gives 0). nxrt and onnxruntime copy the two values (onnxruntime has no bool values).",
        lambda opset, inputs, attrs: _one_hot_arithmetic_is_inexact(inputs[2]),
        _onnx_one_hot_by_the_spec,
    ),
    Difference(
        "Unique",
        "With sorted=0 the reference reorders the sorted results by first occurrence with numpy.take(x, indices, "
        "axis=0): on the input as given instead of the flattened one (a [2, 2] input gives rows, not elements) and "
        "along axis 0 instead of `axis`, and it fails on a rank-0 input. Compared with the spec's outputs in "
        "first-occurrence order, which nxrt and onnxruntime give (Unique([[2, 1], [1, 3]], sorted=0) is [2, 1, 3]).",
        lambda opset, inputs, attrs: not attrs.get("sorted", 1) and not (
            inputs[0].ndim == 1 and attrs.get("axis", 0) in (0, -1)),
        _unique_by_the_spec,
    ),
    Difference(
        "Unique",
        "With an axis the reference calls numpy.unique(axis=...), which refuses string tensors and ignores "
        "equal_nan: two slices holding NaN at the same place stay distinct there, while for a flattened input the "
        "reference counts NaN equal to NaN. nxrt compares slices element by element with the flattened rule (NaN "
        "equals NaN, -0.0 equals 0.0, NaN sorts last, strings by code point), as onnxruntime does (one [NaN, 1] "
        "row from two).",
        lambda opset, inputs, attrs: "axis" in attrs and (
            inputs[0].dtype == object or bool(np.isnan(inputs[0].astype(np.float64)).any())),
        _unique_by_the_spec,
    ),
    Difference(
        "Pad",
        "The reference passes the pads to numpy.pad, which refuses negative widths; the spec's pads \"add or remove "
        "(if negative)\" elements. Compared with the reference on the input cropped by the negative pads, padded "
        "by the positive ones: removal first, as onnxruntime does (wrap of [1, 2, 3, 4] with pads [-1, 1] is [2, "
        "3, 4, 2]; onnxruntime refuses reflect pads beyond the remaining elements, which nxrt reflects again as "
        "numpy does).",
        lambda opset, inputs, attrs: min((p for w in _pad_widths(opset, inputs, attrs) for p in w), default=0) < 0,
        _pad_removing_first,
    ),
    Difference(
        "Pad",
        "A string tensor padded in constant mode without constant_value gets the integer 0 from the reference "
        "(numpy.pad's default); the spec's default is \"0, empty string, or False\", so \"\" for strings, which "
        "nxrt writes (onnxruntime has no string Pad).",
        lambda opset, inputs, attrs: inputs[0].dtype == object and inputs[0].ndim > 0
        and attrs.get("mode", "constant") == "constant" and (len(inputs) < 3 or inputs[2] is None),
        _pad_removing_first,
    ),
    Difference(
        "CenterCropPad",
        "The reference pads into numpy.zeros of the input's type, which for strings holds the integer 0; the "
        "zero of a string tensor is \"\" (Pad's default constant), which nxrt writes. onnxruntime has no string "
        "CenterCropPad.",
        lambda opset, inputs, attrs: inputs[0].dtype == object,
        _center_crop_pad_strings,
    ),
    Difference(
        "ScatterElements",
        "The reference's max / min reduction is Python's max / min, which keep the first argument when a NaN takes "
        "part: a NaN update leaves the data value (max(1, nan) = 1) while a NaN already in the data stays. Its "
        "ScatterND uses numpy.maximum / minimum, which propagate NaN from either side; the spec words both "
        "reductions alike. nxrt propagates NaN in both ops, as onnxruntime does (ScatterElements([1], [0], [nan], "
        "max) is [nan] there).",
        lambda opset, inputs, attrs: attrs.get("reduction") in ("max", "min") and inputs[0].dtype.kind in "fV"
        and bool(np.isnan(inputs[2].astype(np.float64)).any()),
        _scatter_elements_nan_propagating,
    ),
    Difference(
        "ScatterND",
        "The reference's max / min reduction is numpy.maximum / minimum, which have no loop for strings (the "
        "object elements become '<U' arrays: \"ufunc 'maximum' did not contain a loop\"); its ScatterElements takes "
        "Python's max / min, code point order. nxrt orders strings that way in both ops (bytewise UTF-8); "
        "onnxruntime refuses string max / min.",
        lambda opset, inputs, attrs: inputs[0].dtype == object and attrs.get("reduction") in ("max", "min"),
        _scatter_nd_strings_by_code_point,
    ),
    Difference(
        "Pad",
        "For a rank-0 input the reference passes an empty pads list to numpy.pad, which refuses it (\"`pad_width` "
        "must be of integral type\": an empty array is float). A rank-0 tensor has no axis to pad: the output is "
        "the input, as nxrt and onnxruntime give it.",
        lambda opset, inputs, attrs: inputs[0].ndim == 0,
        lambda op, opset, inputs, attrs: [inputs[0].copy()],
    ),
    Difference(
        "Range",
        "For integers the reference's numpy.arange divides (limit - start) by delta into a float64 before the ceil, "
        "which rounds a quotient just above an integer down to it: Range(0, INT64_MAX, INT64_MAX - 1) has 1 element "
        "there, 2 by the spec's ceil((limit - start) / delta) ([0, INT64_MAX - 1]). nxrt counts exactly (128-bit "
        "integers), and onnxruntime also gives 2 elements. Compared with the exact count.",
        _range_count_through_float,
        _range_of_integers_exactly,
    ),
]
