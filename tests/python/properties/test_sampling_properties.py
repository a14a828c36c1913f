"""GridSample and RoiAlign on generated inputs, at every opset version where their schemas changed (GridSample
16, 20, 22; RoiAlign 10, 16, 22) and every dtype of their data constraint that nxrt implements.

GridSample: 2-D (the only rank before opset 20) and, from opset 20, 1-D and 3-D spatial inputs; every mode
(bilinear / linear, nearest, bicubic / cubic), padding_mode and align_corners; grids with points inside, on and
beyond the [-1, 1] box, NaN and infinities; every float grid type; data with the dtype's special values. Oracle:
the spec's formulas in float64 (grid_sample_by_the_spec below), rounded once to the data type (integers half to
even, saturating; docs/numerics.md), not the reference, which denormalizes coordinates in float32, computes the
weights in the data type (integer weights truncate to 0, half-type weights round at every step), fails on empty
outputs and on NaN or infinite coordinates, and knows only opset 20's mode names. Nearest points are drawn away
from the half-integer ties where float rounding of the coordinate decides the pixel.

RoiAlign: both modes, output sizes 1, 2, 4, sampling_ratio 0 (adaptive), 1, 2, 4, spatial_scale, both
coordinate_transformation_modes (opset 16 on), boxes inside, across and outside the image (inverted ones too),
batch_indices over the batch, zero boxes; data with NaN and infinities. Sample positions are kept exact
(dyadic_sampling below).

RoiAlign's oracle: the ONNX reference (on float32 copies of float16 / bfloat16 inputs, rounded once), except at
opset 10, where it applies a later version's default (roi_align_reference).

Left out: GridSample's string and bool data (the schema allows them; nxrt's kernel and onnxruntime implement the
numeric types only, and interpolating them has no meaning)."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import known_differences
from property_harness import SETTINGS, allowed_dtypes, check_node, op_cases, reference_in_float, versions
from property_values import BFLOAT16, arrays, elements

COVERED = {"GridSample", "RoiAlign"}

GRID_MODES = {16: ["bilinear", "nearest", "bicubic"], 20: ["linear", "nearest", "cubic"]}
GRID_MODES[22] = GRID_MODES[20]


def grid_cases():
    for opset in versions("GridSample", first=16):
        for dtype in allowed_dtypes("GridSample", opset, "T1"):
            if dtype not in (np.dtype(object), np.dtype(np.bool_)):
                yield pytest.param(opset, dtype, id=f"GridSample-{opset}-{dtype}")


def grid_points(data, dtype, shape):
    """Normalized coordinates: mostly in [-1.25, 1.25] (points beyond the box exercise padding), some specials;
    values float32 holds (so float32 and float64 coordinate arithmetic start from the same number)."""
    values = st.one_of(st.sampled_from([-1.0, 1.0, 0.0, -0.5, 0.5, np.nan, np.inf, -np.inf, 2.0, -3.5]),
                       st.floats(-1.25, 1.25, width=32), st.floats(-1.25, 1.25, width=32))
    return data.draw(arrays(dtype, shape, values), label="grid")


def off_nearest_ties(grid, sizes, align_corners):
    """Whether no coordinate of `grid` lands within 1e-4 of a half-integer pixel position (where nearest rounding
    of float32 and float64 coordinates may go different ways)."""
    for axis, size in enumerate(reversed(sizes)):
        g = grid[..., axis].astype(np.float64)
        g = g[np.isfinite(g)]
        x = (g + 1) / 2 * (size - 1) if align_corners else ((g + 1) * size - 1) / 2
        if (np.abs(x - np.floor(x) - 0.5) < 1e-4).any():
            return False
    return True


def reflect(x, lo, hi):
    """The spec's reflection of x into [lo, hi] by the nearer border, repeated."""
    span = hi - lo
    if span <= 0:
        return lo
    if lo <= x <= hi:
        return x
    distance = lo - x if x < lo else x - hi
    flips = math.floor(distance / span)
    rest = distance - flips * span
    if x < lo:
        return lo + rest if flips % 2 == 0 else hi - rest
    return hi - rest if flips % 2 == 0 else lo + rest


def cubic_coefficients(t, a=-0.75):
    near = lambda s: ((a + 2) * s - (a + 3)) * s * s + 1  # noqa: E731
    far = lambda s: ((a * s - 5 * a) * s + 8 * a) * s - 4 * a  # noqa: E731
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def axis_taps(normalized, size, mode, padding, align_corners):
    """(index or None for a zero tap, weight) pairs of one axis, or None where the point has no position."""
    g = float(normalized)
    x = (g + 1) / 2 * (size - 1) if align_corners else ((g + 1) * size - 1) / 2
    if math.isnan(x) or (math.isinf(x) and padding == "reflection"):
        return None
    lo, hi = (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)
    if mode == "nearest":
        x = float(np.rint(x))
    if x < lo or x > hi:
        if padding == "border":
            x = min(max(x, 0.0), size - 1.0)
        elif padding == "reflection":
            x = reflect(x, lo, hi)
    x = min(max(x, -1e9), 1e9)

    def pixel(i):
        if 0 <= i < size:
            return i
        if padding == "zeros":
            return None
        if padding == "border":
            return min(max(i, 0), size - 1)
        return min(max(int(reflect(float(i), lo, hi)), 0), size - 1)

    if mode == "nearest":
        return [(pixel(int(x)), 1.0)]
    base = math.floor(x)
    t = x - base
    if mode == "linear":
        return [(pixel(base), 1 - t), (pixel(base + 1), t)]
    return [(pixel(base - 1 + j), w) for j, w in enumerate(cubic_coefficients(t))]


def grid_sample_by_the_spec(inputs, attrs, opset):
    x, grid = inputs
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(attrs.get("mode", "linear"), attrs.get("mode", "linear"))
    padding, align = attrs.get("padding_mode", "zeros"), attrs.get("align_corners", 0)
    sizes = x.shape[2:]
    data = x.astype(np.float64) if x.dtype.kind == "f" or x.dtype == BFLOAT16 else x
    y = np.zeros(x.shape[:2] + grid.shape[1:-1], np.float64)
    for n in range(x.shape[0]):
        for point in np.ndindex(*grid.shape[1:-1]):
            coordinates = grid[(n, *point)][::-1]
            taps = [axis_taps(g, size, mode, padding, align) for g, size in zip(coordinates, sizes)]
            for c in range(x.shape[1]):
                if any(t is None for t in taps):
                    y[(n, c, *point)] = math.nan
                    continue
                total = 0.0
                for combination in itertools.product(*taps):
                    if any(i is None for i, _ in combination):
                        continue
                    weight = 1.0
                    for _, w in combination:
                        weight *= w
                    total += weight * float(data[(n, c, *(i for i, _ in combination))])
                y[(n, c, *point)] = total
    if x.dtype.kind in "iu":  # half to even, saturating; an undefined (NaN) point is 0
        return [known_differences.saturated(np.rint(y), x.dtype)]
    with np.errstate(all="ignore"):
        return [y.astype(x.dtype)]


@pytest.mark.parametrize("opset, dtype", list(grid_cases()))
@SETTINGS
@given(data=st.data())
def test_grid_sample_matches_the_reference(opset, dtype, data):
    spatial_rank = 2 if opset < 20 else data.draw(st.integers(1, 3), label="spatial rank")
    batch, channels = data.draw(st.integers(0, 2), label="N"), data.draw(st.integers(1, 2), label="C")
    sizes = [data.draw(st.integers(1, 4), label="input side") for _ in range(spatial_rank)]
    out_sizes = [data.draw(st.integers(0, 3), label="output side") for _ in range(spatial_rank)]
    x = data.draw(arrays(dtype, (batch, channels, *sizes)), label="X")
    grid_type = data.draw(st.sampled_from(allowed_dtypes("GridSample", opset, "T2")), label="grid type")
    grid = grid_points(data, grid_type, (batch, *out_sizes, spatial_rank))
    attrs = {}
    mode = data.draw(st.sampled_from(GRID_MODES[opset]), label="mode")
    if mode != GRID_MODES[opset][0] or data.draw(st.booleans(), label="mode given"):
        attrs["mode"] = mode
    padding = data.draw(st.sampled_from(["zeros", "border", "reflection"]), label="padding_mode")
    if padding != "zeros" or data.draw(st.booleans(), label="padding_mode given"):
        attrs["padding_mode"] = padding
    align = data.draw(st.integers(0, 1), label="align_corners")
    if align or data.draw(st.booleans(), label="align_corners given"):
        attrs["align_corners"] = align
    if mode == "nearest":
        assume(off_nearest_ties(grid, sizes, align))
    check_node("GridSample", opset, [x, grid], attrs,
               expected=lambda inputs, attrs: grid_sample_by_the_spec(inputs, attrs, opset))


def roi_boxes(data, dtype, count, height, width):
    """`count` boxes (x1, y1, x2, y2) in input pixels before spatial_scale: inside, across and beyond the image,
    some inverted (x2 < x1) or empty. Coordinates are multiples of 1/8 (exact in every float type), so the bin
    counts of the adaptive sampling (ceil of a box side over the output size) do not depend on the precision the
    box is computed in: the reference computes in the rois' type, nxrt in double."""
    eighths = st.integers(-16, 8 * max(height, width) + 16).map(lambda k: k / 8)
    return data.draw(arrays(dtype, (count, 4), eighths), label="rois")


def dyadic_sampling(rois, attrs, opset):
    """Whether every sample position is a short binary fraction, exact in float32 and float64 alike: the bin
    sides (box side / output size) and their sampling grid (sampling_ratio, or the adaptive ceil of the bin side)
    are powers of two. Elsewhere positions round differently in the reference's float32 and nxrt's double, which
    decides between 0 * inf (NaN) and tiny * inf (inf) at a pixel edge."""
    half_pixel = opset >= 16 and attrs.get("coordinate_transformation_mode", "half_pixel") == "half_pixel"
    scale, ratio = attrs.get("spatial_scale", 1.0), attrs.get("sampling_ratio", 0)
    for box in rois.astype(np.float64):
        sides = (box[3] - box[1]) * scale, (box[2] - box[0]) * scale
        for side, out in zip(sides, (attrs.get("output_height", 1), attrs.get("output_width", 1))):
            if not half_pixel:
                side = max(side, 1.0)
            grid = ratio if ratio > 0 else math.ceil(side / out)
            if grid > 0 and (grid & (grid - 1)):
                return False
    return True


def roi_align_reference(opset):
    """RoiAlign-10's boxes are output_half_pixel (no -0.5 offset, sides of at least one pixel), the behaviour that
    opset 16's coordinate_transformation_mode keeps under that name; the reference applies opset 16's default
    half_pixel at opset 10 too. Oracle there: the reference at opset 16 with output_half_pixel."""
    if opset >= 16:
        return None
    return lambda inputs, attrs: reference_in_float(
        "RoiAlign", 16, inputs, {**attrs, "coordinate_transformation_mode": "output_half_pixel"}, 1, "")


@pytest.mark.parametrize("opset, dtype", list(op_cases("RoiAlign", "T1", first=10, with_op=False)))
@SETTINGS
@given(data=st.data())
def test_roi_align_matches_the_reference(opset, dtype, data):
    batch, channels = data.draw(st.integers(1, 2), label="N"), data.draw(st.integers(1, 2), label="C")
    height, width = data.draw(st.integers(1, 5), label="H"), data.draw(st.integers(1, 5), label="W")
    x = data.draw(arrays(dtype, (batch, channels, height, width), elements(dtype)), label="X")
    count = data.draw(st.integers(0, 3), label="rois")
    rois = roi_boxes(data, dtype, count, height, width)
    batch_indices = np.array([data.draw(st.integers(0, batch - 1), label="batch index") for _ in range(count)],
                             np.int64)
    attrs = {}
    for name, values in (("mode", ["avg", "max"]), ("output_height", [1, 2, 4]), ("output_width", [1, 2, 4]),
                         ("sampling_ratio", [0, 1, 2, 4]), ("spatial_scale", [1.0, 0.5, 0.25, 2.0])):
        if data.draw(st.booleans(), label=f"{name} given"):
            attrs[name] = data.draw(st.sampled_from(values), label=name)
    if opset >= 16 and data.draw(st.booleans(), label="coordinate_transformation_mode given"):
        attrs["coordinate_transformation_mode"] = data.draw(st.sampled_from(["half_pixel", "output_half_pixel"]),
                                                            label="coordinate_transformation_mode")
    assume(dyadic_sampling(rois, attrs, opset))
    inputs = [x, rois, batch_indices]
    check_node("RoiAlign", opset, inputs, attrs, expected=roi_align_reference(opset), half_in_float=True)


def test_malformed_sampling_inputs_raise():
    """Inputs outside the schemas give an error naming the node, never a crash."""
    import nxrt
    from property_harness import node_model

    x = np.zeros((1, 1, 2, 2), np.float32)
    cases = [("GridSample", 16, [x, np.zeros((1, 2, 2, 3), np.float32)], {}),  # grid's last dim is not 2
             ("GridSample", 16, [x, np.zeros((2, 2, 2, 2), np.float32)], {}),  # batch mismatch
             ("RoiAlign", 16, [x, np.zeros((1, 4), np.float32), np.array([1], np.int64)], {}),  # batch index 1
             ("RoiAlign", 16, [x, np.zeros((1, 3), np.float32), np.array([0], np.int64)], {}),  # box of 3
             ("RoiAlign", 16, [x, np.zeros((2, 4), np.float32), np.array([0], np.int64)], {})]  # one index
    for op, opset, inputs, attrs in cases:
        model = node_model(op, opset, inputs, attrs)
        with pytest.raises(Exception, match=op):
            session = nxrt.InferenceSession(model.SerializeToString())
            session.run(None, {f"x{i}": a for i, a in enumerate(inputs)})
