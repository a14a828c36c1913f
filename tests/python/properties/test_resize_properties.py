"""Resize and Upsample on generated inputs, at every opset version where their schema changed (Resize 10, 11, 13,
18, 19; Upsample 7, 9, 10) and every dtype of their type constraint the harness generates: modes nearest, linear
and cubic, every coordinate_transformation_mode and nearest_mode of the version, cubic_coeff_a, exclude_outside,
extrapolation_value with tf_crop_and_resize and its roi, antialias, axes (negative ones too),
keep_aspect_ratio_policy, scales (growing, shrinking, not integral) against sizes, zero-size dims, and values with
NaN, infinities and extremes, against the ONNX reference (known_differences/ says where it is wrong: Resize-10,
nearest next to NaN or inf, infinities clipped to max, Upsample beyond integer nearest).

AffineGrid (opset 20, every float type, 2-D and 3-D, align_corners) is compared with the spec's grid in float64:
the reference returns float32 for every type.

Left out: string tensors, which the schema allows and nxrt's Resize does not implement, and the complex types,
which the harness does not generate. Booleans are resized with mode nearest only (interpolating them has no
meaning; nxrt resamples them as nearest in every mode). GridSample and RoiAlign are not covered here yet."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import known_differences
from property_harness import SETTINGS, allowed_dtypes, check_node, op_cases, versions
from property_values import arrays, shapes

# float32 scales: growing, shrinking, integral and not (0.7 * 10 is 6.99999988 in float64: the output length is
# floor of the exact product, as in the reference).
SCALES = [0.25, 0.5, 0.6, 0.7, 0.75, 1.0, 1.3, 1.5, 1.75, 2.0, 2.5, 3.0]
COORDINATE_MODES = {11: ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                         "tf_crop_and_resize"],
                    13: ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize"]}
COORDINATE_MODES[18] = COORDINATE_MODES[13]
COORDINATE_MODES[19] = [*COORDINATE_MODES[13], "half_pixel_symmetric"]
NEAREST_MODES = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
ROI_BOUNDS = [-0.5, -0.25, 0.0, 0.125, 0.3, 0.5, 0.8, 1.0, 1.25]


def type_cases(op, first):
    """(opset, dtype) params of every version of `op` from `first` and every dtype of its data constraint (T
    before Resize-11, T1 after) but strings."""
    for opset in versions(op, first=first):
        param = "T1" if op == "Resize" and opset >= 11 else "T"
        for dtype in allowed_dtypes(op, opset, param):
            if dtype != np.dtype(object):
                yield pytest.param(opset, dtype, id=f"{op}-{opset}-{dtype}")


def draw_scales(data, count, label):
    return np.array([data.draw(st.sampled_from(SCALES), label=f"{label} {i}") for i in range(count)], np.float32)


@pytest.mark.parametrize("opset, dtype", list(type_cases("Resize", 10)))
@SETTINGS
@given(data=st.data())
def test_resize_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=1, max_rank=4, max_side=4)), label="X")
    modes = ["nearest"] if dtype == np.bool_ else ["nearest", "linear"] + (["cubic"] if opset >= 11 else [])
    attrs = {"mode": data.draw(st.sampled_from(modes), label="mode")}
    if opset == 10:
        check_node("Resize", opset, [x, draw_scales(data, x.ndim, "scale")], attrs,
                   expected=known_differences.expected_for("Resize", opset, [x], attrs))
        return
    axes = list(range(x.ndim))
    # With axes the reference reshapes X to (-1, ...), which numpy cannot do for a zero-size X.
    if opset >= 18 and x.size and data.draw(st.booleans(), label="axes given"):
        axes = data.draw(st.lists(st.integers(-x.ndim, x.ndim - 1), min_size=1, max_size=x.ndim,
                                  unique_by=lambda a: a % x.ndim), label="axes")
        attrs["axes"] = axes
    coordinate_modes = COORDINATE_MODES[opset]
    if attrs["mode"] != "nearest":  # the TensorFlow nearest-neighbour rule, tested (see its known difference) there
        coordinate_modes = [m for m in coordinate_modes if m != "tf_half_pixel_for_nn"]
    coordinates = data.draw(st.sampled_from(coordinate_modes), label="coordinate_transformation_mode")
    attrs["coordinate_transformation_mode"] = coordinates
    if attrs["mode"] == "nearest":
        attrs["nearest_mode"] = data.draw(st.sampled_from(NEAREST_MODES), label="nearest_mode")
    if attrs["mode"] == "cubic":
        attrs["cubic_coeff_a"] = data.draw(st.sampled_from([-0.75, -0.5, -1.0, 0.0, 0.25]), label="cubic_coeff_a")
    if attrs["mode"] != "nearest":
        # With nearest the one sampling location may lie outside, and renormalizing its zero weight divides by 0.
        attrs["exclude_outside"] = data.draw(st.integers(0, 1), label="exclude_outside")
    if opset >= 18 and data.draw(st.booleans(), label="antialias given"):
        attrs["antialias"] = data.draw(st.integers(0, 1), label="antialias")
    scale_type = data.draw(st.sampled_from(allowed_dtypes("Resize", opset, "T2")), label="scales / roi type")
    roi = np.array([], scale_type)
    if coordinates == "tf_crop_and_resize":
        attrs["extrapolation_value"] = data.draw(st.sampled_from([0.0, -1.5, 10.0, 0.5, 1e30]),
                                                 label="extrapolation_value")
        starts = [data.draw(st.sampled_from(ROI_BOUNDS), label="roi start") for _ in axes]
        ends = [data.draw(st.sampled_from(ROI_BOUNDS), label="roi end") for _ in axes]
        roi = np.array(starts + ends, scale_type)
    use_sizes = data.draw(st.booleans(), label="sizes")
    scales, sizes = np.array([], np.float32), None
    if use_sizes:
        # A zero-size input dim can only stay empty (the reference divides by it).
        sizes = np.array([data.draw(st.integers(0, 6), label="size") if x.shape[a] else 0 for a in axes], np.int64)
        if opset >= 18:
            attrs["keep_aspect_ratio_policy"] = data.draw(st.sampled_from(["stretch", "not_larger", "not_smaller"]),
                                                          label="keep_aspect_ratio_policy")
            # The policies scale every axis by one factor of sizes / in_size over the axes: an empty axis has none.
            if attrs["keep_aspect_ratio_policy"] != "stretch" and 0 in [x.shape[a] for a in axes]:
                attrs["keep_aspect_ratio_policy"] = "stretch"
    else:
        scales = draw_scales(data, len(axes), "scale").astype(scale_type)
    # Opset 11 requires roi and scales (empty when unused); from 13 they are optional.
    inputs = [x, roi if roi.size or opset == 11 else None, scales if scales.size or opset == 11 else None, sizes]
    check_node("Resize", opset, inputs, attrs, expected=known_differences.expected_for("Resize", opset, inputs, attrs))


@pytest.mark.parametrize("opset, dtype", list(type_cases("Upsample", 7)))
@SETTINGS
@given(data=st.data())
def test_upsample_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=1, max_rank=4, max_side=3)), label="X")
    modes = ["nearest"] if dtype == np.bool_ else ["nearest", "linear"]
    attrs = {"mode": data.draw(st.sampled_from(modes), label="mode")}
    # "The scale array along each dimension. It takes value greater than or equal to 1."
    scales = [data.draw(st.sampled_from([1.0, 1.5, 2.0, 3.0, 1.3]), label=f"scale {i}") for i in range(x.ndim)]
    inputs = [x]
    if opset < 9:
        attrs["scales"] = scales
    else:
        inputs.append(np.array(scales, np.float32))
    check_node("Upsample", opset, inputs, attrs,
               expected=known_differences.expected_for("Upsample", opset, inputs, attrs))


@pytest.mark.parametrize("opset, dtype", list(op_cases("AffineGrid", type_param="T1", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_affine_grid_matches_the_spec(opset, dtype, data):
    spatial = data.draw(st.sampled_from([2, 3]), label="spatial rank")
    align_corners = data.draw(st.integers(0, 1), label="align_corners")
    # With align_corners a one-point axis has no corners to align (the reference divides by n - 1 = 0).
    sides = st.integers(2 if align_corners else 0, 4)
    size = [data.draw(st.integers(0, 2), label="N"), data.draw(st.integers(1, 2), label="C"),
            *(data.draw(sides, label="side") for _ in range(spatial))]
    theta = data.draw(arrays(dtype, (size[0], spatial, spatial + 1)), label="theta")
    attrs = {"align_corners": align_corners} if align_corners or data.draw(st.booleans(), label="given") else {}
    inputs = [theta, np.array(size, np.int64)]
    check_node("AffineGrid", opset, inputs, attrs,
               expected=known_differences.expected_for("AffineGrid", opset, inputs, attrs))


COVERED = {"Resize", "Upsample", "AffineGrid"}
