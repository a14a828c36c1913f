"""Resize: nxrt against onnxruntime (float32) and onnx.reference (float64, which onnxruntime's CPU Resize lacks)
on random shapes and attribute combinations.

Resized axes have length 4 or 8 and scales are multiples of 1/4, so every scale, output length and source
coordinate is exact in float32 as well as float64; the runtimes then agree even at nearest-mode ties. A second
family uses arbitrary sizes for the continuous modes (linear, cubic), where rounding differences stay small.

Nearest mode and integer data are exact: nxrt must equal onnx.reference, and so must onnxruntime (a peer, not an
oracle) except for the cases in KNOWN_ONNXRUNTIME_WRONG."""

import itertools
import random

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import nxrt

# onnxruntime answers that differ from the ONNX spec, keyed by (mode, element type); each entry says how and what
# is asserted instead of equality.
KNOWN_ONNXRUNTIME_WRONG = {
    ("linear", np.dtype(dtype).name): "truncates interpolated integers toward zero instead of rounding half to "
                                      "even: asserted within 1 of the exact answer"
    for dtype in (np.int8, np.uint8, np.int32)
}

EXACT_SCALES = [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0]
COORDINATES = ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric"]
NEAREST_MODES = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]


def resize_model(x, attributes, roi=None, scales=None, sizes=None, opset=19):
    elem = TensorProto.FLOAT if x.dtype == np.float32 else TensorProto.DOUBLE
    initializers = []
    names = ["x", "", "", ""]
    if roi is not None:
        initializers.append(numpy_helper.from_array(np.asarray(roi, np.float32), "roi"))
        names[1] = "roi"
    if scales is not None:
        initializers.append(numpy_helper.from_array(np.asarray(scales, np.float32), "scales"))
        names[2] = "scales"
    if sizes is not None:
        initializers.append(numpy_helper.from_array(np.asarray(sizes, np.int64), "sizes"))
        names[3] = "sizes"
    while names[-1] == "":
        names.pop()
    node = helper.make_node("Resize", names, ["y"], **attributes)
    graph = helper.make_graph([node], "resize", [helper.make_tensor_value_info("x", elem, list(x.shape))],
                              [helper.make_tensor_value_info("y", elem, None)], initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    return model


def run_nxrt(model, x):
    return nxrt.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]


def run_ort(model, x):
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def run_reference(model, x):
    return ReferenceEvaluator(model).run(None, {"x": x})[0]


def reference_tolerance(mode):
    """onnx.reference evaluates cubic weights with the float32 attribute cubic_coeff_a, which keeps them in float32
    precision even for float64 data; nxrt computes them in float64."""
    return 1e-5 if mode == "cubic" else 1e-12


def random_attributes(rng, mode):
    attributes = {"mode": mode, "coordinate_transformation_mode": rng.choice(COORDINATES)}
    if mode == "nearest":
        attributes["nearest_mode"] = rng.choice(NEAREST_MODES)
    if mode == "cubic":
        attributes["cubic_coeff_a"] = rng.choice([-0.75, -0.5])
        attributes["exclude_outside"] = rng.choice([0, 1])
    return attributes


def exact_case(seed, mode, ort_layouts):
    """Shape, attributes and scales/sizes where every coordinate is exact. With ort_layouts, linear and cubic
    cases keep to what onnxruntime's CPU Resize accepts: 2-D inputs, or 4-D inputs resized on axes 2 and 3."""
    rng = random.Random(seed)
    if ort_layouts and mode != "nearest":
        rank = rng.choice([2, 4])
        candidates = range(rank) if rank == 2 else [2, 3]
    else:
        rank = rng.choice([1, 2, 3, 4])
        candidates = range(rank)
    resized = sorted(rng.sample(list(candidates), rng.randint(1, min(len(candidates), 2))))
    shape = [rng.choice([4, 8]) if d in resized else rng.randint(1, 3) for d in range(rank)]
    attributes = random_attributes(rng, mode)
    scales = [rng.choice(EXACT_SCALES) if d in resized else 1.0 for d in range(rank)]
    use_axes = rng.random() < 0.3 and len(resized) < rank
    if use_axes:
        attributes["axes"] = resized
        scales = [scales[d] for d in resized]
    if rng.random() < 0.5:
        axes = resized if use_axes else range(rank)
        return shape, attributes, None, [int(shape[d] * s) for d, s in zip(axes, scales)]
    return shape, attributes, scales, None


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("seed", range(40))
def test_exact_grid_float32_matches_onnxruntime(mode, seed):
    shape, attributes, scales, sizes = exact_case(seed * 3 + ["nearest", "linear", "cubic"].index(mode), mode, True)
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    model = resize_model(x, attributes, scales=scales, sizes=sizes)
    want = run_ort(model, x)
    got = run_nxrt(model, x)
    assert got.shape == want.shape, (attributes, scales, sizes)
    if mode == "nearest":  # data movement: exact
        exact = run_reference(model, x)
        np.testing.assert_array_equal(got, exact, err_msg=f"nxrt {(attributes, scales, sizes)}")
        np.testing.assert_array_equal(want, exact, err_msg=f"onnxruntime {(attributes, scales, sizes)}")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=str((attributes, scales, sizes)))


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("seed", range(25))
def test_exact_grid_float64_matches_reference(mode, seed):
    shape, attributes, scales, sizes = exact_case(1000 + seed * 3 + ["nearest", "linear", "cubic"].index(mode), mode, False)
    x = np.random.default_rng(seed).standard_normal(shape)
    model = resize_model(x, attributes, scales=scales, sizes=sizes)
    want = run_reference(model, x)
    got = run_nxrt(model, x)
    assert got.dtype == np.float64
    tolerance = reference_tolerance(mode)
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance, err_msg=str((attributes, scales, sizes)))


@pytest.mark.parametrize("seed", range(40))
def test_arbitrary_sizes_continuous_modes(seed):
    rng = random.Random(seed)
    mode = rng.choice(["linear", "cubic"])
    shape = [1, rng.randint(1, 3), rng.randint(2, 9), rng.randint(2, 9)]
    sizes = [1, shape[1], rng.randint(2, 13), rng.randint(2, 13)]
    attributes = random_attributes(rng, mode)
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    model = resize_model(x, attributes, sizes=sizes)
    got = run_nxrt(model, x)
    np.testing.assert_allclose(got, run_ort(model, x), rtol=1e-4, atol=1e-4, err_msg=str((attributes, sizes)))
    x64 = x.astype(np.float64)
    model64 = resize_model(x64, attributes, sizes=sizes)
    tolerance = reference_tolerance(mode)
    np.testing.assert_allclose(run_nxrt(model64, x64), run_reference(model64, x64), rtol=tolerance, atol=tolerance,
                               err_msg=str((attributes, sizes)))


@pytest.mark.parametrize("mode,seed", list(itertools.product(["linear", "cubic"], range(10))))
def test_antialias_downsampling(mode, seed):
    rng = random.Random(seed)
    shape = [1, 2, rng.choice([4, 8]), 8]
    scales = [1.0, 1.0, rng.choice([0.25, 0.5, 0.75]), rng.choice([0.25, 0.5, 1.0])]
    attributes = {"mode": mode, "antialias": 1}
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    model = resize_model(x, attributes, scales=scales)
    np.testing.assert_allclose(run_nxrt(model, x), run_ort(model, x), rtol=1e-4, atol=1e-5)
    x64 = x.astype(np.float64)
    model64 = resize_model(x64, attributes, scales=scales)
    tolerance = reference_tolerance(mode)
    np.testing.assert_allclose(run_nxrt(model64, x64), run_reference(model64, x64), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("seed", range(10))
def test_crop_and_resize(mode, seed):
    """Crops inside the image against onnxruntime; crops reaching outside (extrapolation) against onnx.reference,
    since onnxruntime 1.32 disagrees with the reference there. onnxruntime also ignores the roi of an axis whose
    output length equals its input length, so the sizes differ from the input's. onnx.reference computes the crop
    coordinates from the float32 roi in float32, hence the looser float64 tolerance."""
    rng = np.random.default_rng(seed)
    shape = [1, 1, 5, 6]
    starts = rng.uniform(0.0, 0.5, 2)
    ends = starts + rng.uniform(0.2, 0.5, 2)
    sizes = [1, 1, int(rng.choice([2, 3, 4, 6, 7])), int(rng.choice([2, 3, 4, 5, 7]))]
    attributes = {"mode": mode, "coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": 7.5}
    x = rng.standard_normal(shape).astype(np.float32)
    model = resize_model(x, attributes, roi=[0, 0, *starts, 1, 1, *ends], sizes=sizes)
    if mode != "nearest":  # nearest ties depend on float32 vs float64 coordinates
        np.testing.assert_allclose(run_nxrt(model, x), run_ort(model, x), rtol=1e-4, atol=1e-4)
    outside_starts = rng.uniform(-0.4, 0.2, 2)
    outside_ends = outside_starts + rng.uniform(0.5, 1.4, 2)
    x64 = x.astype(np.float64)
    model64 = resize_model(x64, attributes, roi=[0, 0, *outside_starts, 1, 1, *outside_ends], sizes=sizes)
    tolerance = max(reference_tolerance(mode), 1e-6)
    np.testing.assert_allclose(run_nxrt(model64, x64), run_reference(model64, x64), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
def test_keep_aspect_ratio_policy(policy):
    x = np.random.default_rng(0).standard_normal([1, 2, 4, 8]).astype(np.float32)
    attributes = {"mode": "linear", "keep_aspect_ratio_policy": policy, "axes": [2, 3]}
    model = resize_model(x, attributes, sizes=[8, 8])
    got, want = run_nxrt(model, x), run_ort(model, x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_invalid_scales_raise():
    x = np.zeros([1, 4], np.float32)
    model = resize_model(x, {"mode": "linear"}, scales=[1.0, -2.0])
    with pytest.raises(Exception, match="scales"):
        run_nxrt(model, x)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scales", [[1, 1, 2, 3], [1, 1, 0.5, 0.25], [1, 1, 1.5, 0.75]])
def test_opset10_asymmetric(mode, scales):
    x = np.random.default_rng(1).standard_normal([1, 2, 4, 8]).astype(np.float32)
    node = helper.make_node("Resize", ["x", "scales"], ["y"], mode=mode)
    graph = helper.make_graph([node], "resize10", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              initializer=[numpy_helper.from_array(np.asarray(scales, np.float32), "scales")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 10)])
    model.ir_version = 9
    np.testing.assert_allclose(run_nxrt(model, x), run_ort(model, x), rtol=1e-5, atol=1e-6)


def test_opset11_tf_half_pixel_for_nn():
    """onnx.reference lacks tf_half_pixel_for_nn; the exact answer is numpy indexing with the spec's source
    coordinate (i + 0.5) / scale rounded half down (the default round_prefer_floor; no coordinate here is a tie)."""
    x = np.random.default_rng(2).standard_normal([1, 1, 4, 8]).astype(np.float32)
    attributes = {"mode": "nearest", "coordinate_transformation_mode": "tf_half_pixel_for_nn"}
    scales = [1, 1, 1.5, 0.75]
    model = resize_model(x, attributes, roi=[], scales=scales, opset=11)
    exact = x
    for axis in (2, 3):
        length = x.shape[axis]
        source = (np.arange(int(length * scales[axis])) + 0.5) / scales[axis]
        exact = np.take(exact, np.clip(np.ceil(source - 0.5).astype(np.int64), 0, length - 1), axis=axis)
    np.testing.assert_array_equal(run_nxrt(model, x), exact)
    np.testing.assert_array_equal(run_ort(model, x), exact)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_integer_types(dtype, mode):
    info = np.iinfo(dtype)
    low, high = max(info.min, -1000), min(info.max, 1000)
    x = np.random.default_rng(3).integers(low, high, [1, 1, 4, 8]).astype(dtype)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode,
                            coordinate_transformation_mode="align_corners")
    graph = helper.make_graph([node], "resize_int", [helper.make_tensor_value_info("x", elem, x.shape)],
                              [helper.make_tensor_value_info("y", elem, None)],
                              initializer=[numpy_helper.from_array(np.asarray([1, 1, 2, 0.5], np.float32),
                                                                   "scales")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    got, want, exact = run_nxrt(model, x), run_ort(model, x), run_reference(model, x)
    assert got.dtype == want.dtype == exact.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, exact)
    if (mode, np.dtype(dtype).name) in KNOWN_ONNXRUNTIME_WRONG:
        np.testing.assert_allclose(want.astype(np.int64), exact.astype(np.int64), rtol=0, atol=1)
    else:
        np.testing.assert_array_equal(want, exact)
