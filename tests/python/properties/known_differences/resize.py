"""Known differences of Resize and Upsample: the reference's Resize run with its faults worked around, or the
spec's coordinate transforms computed directly."""

import numpy as np

from .common import Difference


def _reference_resize_unclipped(opset, inputs, attrs):
    """The reference's Resize at `opset`, its float results converted to the input type as IEEE rounding does
    (it clips them to the type's finite range first, so +-inf becomes +-max); integers as it converts them.
    cubic_coeff_a reaches its cubic coefficients as a float64 number (it passes numpy.float32, which makes the
    coefficients float32)."""
    from unittest import mock

    import onnx.numpy_helper
    from onnx.reference.ops import op_resize
    from property_harness import node_model, run_reference

    def in_float64(coefficients):
        return lambda ratio, scale, A=-0.75: coefficients(ratio, scale, A=float(A))

    saturate_cast = onnx.numpy_helper.saturate_cast

    def converted(x, dtype):
        if np.issubdtype(dtype, np.integer):  # saturating also where float(max) = 2^63 or 2^64 wraps in astype
            info, rounded = np.iinfo(dtype), np.round(np.asarray(x, np.float64))
            inside = saturate_cast(x, dtype)
            return np.where(rounded >= float(info.max), info.max,
                            np.where(rounded <= float(info.min), info.min, inside)).astype(dtype)
        with np.errstate(all="ignore"):
            return np.asarray(x).astype(dtype)

    if "axes" in attrs:  # the reference transposes by the axes as given, which fails for negative ones
        attrs = {**attrs, "axes": [a % inputs[0].ndim for a in attrs["axes"]]}
    if opset >= 11 and len(inputs) > 1 and inputs[1] is not None:  # it computes crop coordinates in roi's type
        inputs = [inputs[0], inputs[1].astype(np.float64), *inputs[2:]]
    with mock.patch.object(onnx.numpy_helper, "saturate_cast", converted), \
            mock.patch.object(op_resize, "_cubic_coeffs", in_float64(op_resize._cubic_coeffs)), \
            mock.patch.object(op_resize, "_cubic_coeffs_antialias", in_float64(op_resize._cubic_coeffs_antialias)):
        return run_reference(node_model("Resize", opset, inputs, attrs), inputs)


def _reference_knows(attrs):
    """Whether the reference implements the case's coordinate_transformation_mode (not tf_half_pixel_for_nn)."""
    return attrs.get("coordinate_transformation_mode") != "tf_half_pixel_for_nn"


def _resize_64_bit_extremes(x, beyond=2.0 ** 62):
    """Whether X is a 64-bit integer tensor with values beyond `beyond` (2^62: where float(max) overflows back;
    2^53: where float64 loses digits)."""
    return x.dtype in (np.int64, np.uint64) and x.size > 0 and bool(
        (np.abs(x.astype(np.float64)) > beyond).any())


def _resize_fill(value, dtype):
    """extrapolation_value in X's type, converted as the reference converts results (integers rounded half to
    even and clipped)."""
    if dtype == np.bool_:
        return np.bool_(value)
    if np.issubdtype(dtype, np.integer):  # saturating also where float(max) = 2^63 or 2^64 wraps in astype
        info, rounded = np.iinfo(dtype), np.round(value)
        return np.array(info.max if rounded >= float(info.max) else info.min if rounded <= float(info.min)
                        else rounded).astype(dtype)
    return np.array(value).astype(dtype)


def _resize_nearest_through_indices(op, opset, inputs, attrs):
    """Nearest resizing with the source elements the reference chooses (found by resizing a tensor of element
    indices, in float64), the elements then copied; tf_crop_and_resize positions outside the input take
    extrapolation_value."""
    x = inputs[0]
    indices = np.arange(x.size, dtype=np.float64).reshape(x.shape)
    probe = {k: v for k, v in attrs.items() if k != "antialias"}  # no effect on nearest; the reference refuses it
    probe["extrapolation_value"] = -1.0
    positions = _reference_resize_unclipped(opset, [indices, *inputs[1:]], probe)[0]
    taken = x.ravel()[np.clip(positions, 0, None).astype(np.int64)]
    return [np.where(positions < 0, _resize_fill(attrs.get("extrapolation_value", 0.0), x.dtype), taken)]


def _resize_float_can_overflow(x):
    """Whether X is a float tensor holding NaN, an infinity, or values that interpolation (cubic weights reach
    1.4) can carry past the type's range."""
    if x.dtype.kind in "iub" or x.size == 0:
        return False
    wide = x.astype(np.float64)
    import ml_dtypes

    return bool(not np.isfinite(wide).all() or np.abs(wide).max() > float(ml_dtypes.finfo(x.dtype).max) / 4)


def _resize_asymmetric_by_the_spec(op, opset, inputs, attrs):
    """Resize-10 and Upsample: output lengths floor(length * scale), source coordinate x_resized / scale; nearest
    takes floor(x) where the axis grows or keeps its length and ceil(x) where it shrinks (onnxruntime's rule for
    these versions, which its backend tests fix), clamped; linear as the reference's Resize-11 with
    coordinate_transformation_mode asymmetric."""
    x = inputs[0]
    scales = np.asarray(attrs["scales"] if len(inputs) < 2 else inputs[1], np.float32).astype(np.float64)
    if attrs.get("mode", "nearest") != "nearest":
        case = [x, np.array([], np.float32), scales.astype(np.float32)]
        return _reference_resize_unclipped(11, case, {"mode": "linear",
                                                      "coordinate_transformation_mode": "asymmetric"})
    picks = []
    for length, scale in zip(x.shape, scales):
        source = np.arange(int(np.floor(length * scale))) / scale
        chosen = np.floor(source) if scale >= 1 else np.ceil(source)
        picks.append(np.clip(chosen, 0, max(length - 1, 0)).astype(np.int64))
    return [x[np.ix_(*picks)] if picks else x.copy()]


def _resize_tf_half_pixel_for_nn(op, opset, inputs, attrs):
    """Resize-11 nearest with tf_half_pixel_for_nn: x_original = (x_resized + 0.5) / scale per the spec, the
    element chosen as the reference's nearest_mode rules choose (an integral x is itself; otherwise floor or
    floor + 1, ties by the mode), clamped to the axis."""
    x, scales, sizes = inputs[0], inputs[2], inputs[3] if len(inputs) > 3 else None
    mode = attrs.get("nearest_mode", "round_prefer_floor")
    picks = []
    for axis, length in enumerate(x.shape):
        if sizes is not None and sizes.size:
            out, scale = int(sizes[axis]), int(sizes[axis]) / length if length else 1.0
        else:
            scale = float(scales[axis])
            out = int(np.floor(length * scale))
        source = (np.arange(out) + 0.5) / scale
        below = np.floor(source)
        ratio = source - below
        up = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5, "floor": ratio < 0,
              "ceil": ratio > 0}[mode]
        picks.append(np.clip(below + up, 0, max(length - 1, 0)).astype(np.int64))
    return [x[np.ix_(*picks)]]


DIFFERENCES = [
    Difference(
        "Resize",
        "Resize-10 takes (X, scales); the reference reads its second input as roi and fails (\"output_size is "
        "None and scale_factors is None\"). The spec gives output lengths floor(length * scale) and the modes "
        "nearest and linear, no coordinate rule: compared with asymmetric coordinates (x / scale), nearest as "
        "floor when an axis grows and ceil when it shrinks, as onnxruntime does for opset 10 and its backend "
        "tests fix.",
        lambda opset, inputs, attrs: opset == 10,
        _resize_asymmetric_by_the_spec,
    ),
    Difference(
        "Resize",
        "The reference resizes nearest as a two-tap interpolation in float64 with weights 0 and 1, so a NaN or "
        "infinity next to the chosen element gives NaN (0 * inf), it clips float results to the type's finite "
        "range (+-inf becomes +-max), rounds 64-bit integers beyond 2^53 to float64 (int64 min + 1 comes back "
        "as int64 min), fails on bool (\"not inexact\") and refuses antialias = 1, which the "
        "spec applies to linear and cubic only. Nearest copies \"the nearest pixel\": compared with the elements "
        "the reference chooses (found by resizing element indices). onnxruntime copies the element too.",
        lambda opset, inputs, attrs: attrs.get("mode", "nearest") == "nearest" and _reference_knows(attrs) and (
            inputs[0].dtype == np.bool_ or _resize_float_can_overflow(inputs[0]) or bool(attrs.get("antialias"))
            or _resize_64_bit_extremes(inputs[0], 2.0 ** 53)),
        _resize_nearest_through_indices,
    ),
    Difference(
        "Resize",
        "The reference clips linear and cubic float results to the type's finite range: an infinite input (or a "
        "cubic overshoot past max) gives +-max where the interpolated value is +-inf; for int64 and uint64 it "
        "clips to float(max) = 2^63 or 2^64, which numpy's astype wraps (uint64 max resized by 1 gives 0). "
        "Compared with the reference's float64 result rounded to the type as IEEE does, integers saturating. "
        "onnxruntime gives inf.",
        lambda opset, inputs, attrs: (_resize_float_can_overflow(inputs[0]) or _resize_64_bit_extremes(inputs[0]))
        and _reference_knows(attrs),
        lambda op, opset, inputs, attrs: _reference_resize_unclipped(opset, inputs, attrs),
    ),
    Difference(
        "Resize",
        "The reference transposes X by the axes as given and fails on a negative one (\"axes don't match "
        "array\"), which the spec accepts (\"Accepted range is [-r, r-1]\"). Compared with the reference given "
        "the same axes counted from the front.",
        lambda opset, inputs, attrs: any(a < 0 for a in attrs.get("axes", [])) and _reference_knows(attrs),
        lambda op, opset, inputs, attrs: _reference_resize_unclipped(opset, inputs, attrs),
    ),
    Difference(
        "Upsample",
        "The reference implements Upsample only for nearest with integer scales (\"Not implemented for "
        "mode='linear'\") and fails at opset 7 (scales as an attribute). Compared with the spec as for Resize-10: "
        "output lengths floor(length * scale), asymmetric coordinates, nearest taking floor (Upsample's scales "
        "are at least 1), linear as the reference's Resize-11 asymmetric.",
        lambda opset, inputs, attrs: opset < 9 or attrs.get("mode", "nearest") != "nearest" or bool(
            (np.asarray(inputs[1]) != np.round(np.asarray(inputs[1]))).any()),
        _resize_asymmetric_by_the_spec,
    ),
    Difference(
        "Resize",
        "The reference does not implement coordinate_transformation_mode tf_half_pixel_for_nn (Resize-11: "
        "\"Invalid coordinate_transformation_mode\"). Compared with the spec's x_original = (x_resized + 0.5) / "
        "scale and the reference's nearest_mode rules (the mode is tested with nearest, which it was made for).",
        lambda opset, inputs, attrs: attrs.get("coordinate_transformation_mode") == "tf_half_pixel_for_nn",
        _resize_tf_half_pixel_for_nn,
    ),
    Difference(
        "Resize",
        "With tf_crop_and_resize the reference computes x_original from roi's elements in roi's type (float16: "
        "(end - start) and start * (length - 1) rounded to 11 bits), so a position at the crop's edge "
        "(start 0.30005, end 1, length 4) falls just outside and takes extrapolation_value where the spec's "
        "formula on the values lands on the edge. Compared with the reference given roi as float64; nxrt "
        "computes the coordinates in double.",
        lambda opset, inputs, attrs: attrs.get("coordinate_transformation_mode") == "tf_crop_and_resize"
        and inputs[1] is not None and inputs[1].dtype != np.float64,
        lambda op, opset, inputs, attrs: _reference_resize_unclipped(opset, inputs, attrs),
    ),
    Difference(
        "Resize",
        "The reference passes cubic_coeff_a to its cubic coefficients as numpy.float32, so they are computed in "
        "float32 (7 digits): a cubic resize of int32 [524286, 0] by 1.3 gives 172256.34 where the float64 "
        "coefficients give 172256.71 (172256 against 172257 after rounding). Compared with the reference given "
        "the coefficient as a float64 number; nxrt computes in double.",
        lambda opset, inputs, attrs: attrs.get("mode") == "cubic" and _reference_knows(attrs),
        lambda op, opset, inputs, attrs: _reference_resize_unclipped(opset, inputs, attrs),
    ),
]
