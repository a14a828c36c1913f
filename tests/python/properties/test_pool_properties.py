"""Pooling operators on generated inputs: AveragePool, MaxPool (Y alone, and Y with Indices in both storage
orders), LpPool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool, MaxUnpool, MaxRoiPool and LRN, over 1-D, 2-D and 3-D
spatial dims, zero-size batches, every auto_pad, explicit pads, strides, dilations, ceil_mode, count_include_pad and
p, values with NaN, infinities and the dtype's extremes, at every opset version where the schema changed (from 7) and
every dtype of the type constraint.

Oracle: the ONNX reference, except where known_differences/ documents it wrong (then window_oracles.py's
implementation of the spec's words). GlobalLpPool has no reference implementation: the spec defines it as LpPool over
the whole plane, which window_oracles computes. MaxRoiPool has none either: onnxruntime's (Caffe's ROI pooling, as
the spec's pooled_shape / spatial_scale describe) decides which input value each bin takes (see
test_max_roi_pool_matches_onnxruntime). Sums whose float rounding depends on the order of the additions beyond the
tolerance are left out (window_oracles.sums says when)."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import known_differences
import window_oracles
from property_harness import SETTINGS, check_node, node_model, op_cases, run_nxrt
from property_values import arrays

POOLS = ("AveragePool", "MaxPool", "LpPool")
KIND = {"AveragePool": "average", "MaxPool": "max", "LpPool": "lp"}
# The opset from which each pool's schema has the attribute.
CEIL_MODE_FROM = {"AveragePool": 10, "MaxPool": 10, "LpPool": 18}
DILATIONS_FROM = {"AveragePool": 19, "MaxPool": 10, "LpPool": 18}


def pool_input_shapes(max_rank=3):
    """[N, C, spatial...]: N 0 to 2 (0: a zero-size batch), C 1 to 2, 1 to 3 spatial dims of 1 to 4 (3 in 3-D)."""
    return st.integers(1, max_rank).flatmap(lambda rank: st.tuples(
        st.integers(0, 2), st.integers(1, 2), *[st.integers(1, 4 if rank < 3 else 3)] * rank))


def draw_window_attrs(data, op, opset, spatial):
    """kernel_shape 1 to 3 per dim, and optionally strides 1 to 3, dilations 1 to 2, ceil_mode, and one auto_pad:
    NOTSET with pads 0 to dilated kernel - 1 per side (or no pads), SAME_UPPER, SAME_LOWER or VALID."""
    rank = len(spatial)
    kernel = [data.draw(st.integers(1, 3), label="kernel") for _ in range(rank)]
    attrs = {"kernel_shape": kernel}
    if data.draw(st.booleans(), label="strides given"):
        attrs["strides"] = [data.draw(st.integers(1, 3), label="stride") for _ in range(rank)]
    if opset >= DILATIONS_FROM.get(op, 7) and data.draw(st.booleans(), label="dilations given"):
        attrs["dilations"] = [data.draw(st.integers(1, 2), label="dilation") for _ in range(rank)]
    dilations = attrs.get("dilations") or [1] * rank
    auto_pad = data.draw(st.sampled_from(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]), label="auto_pad")
    if auto_pad != "NOTSET":
        attrs["auto_pad"] = auto_pad
    elif data.draw(st.booleans(), label="pads given"):
        spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)] * 2
        attrs["pads"] = [data.draw(st.integers(0, span - 1), label="pad") for span in spans]
    if auto_pad == "NOTSET" and opset >= CEIL_MODE_FROM.get(op, 99) and data.draw(st.booleans(), label="ceil"):
        attrs["ceil_mode"] = 1
    return attrs


def covers_a_window(spatial, attrs):
    """Whether each spatial dim with its explicit pads holds a whole dilated window (the spec's floor formula then
    gives at least one output; SAME always gives one)."""
    if attrs.get("auto_pad") in ("SAME_UPPER", "SAME_LOWER"):
        return True
    rank = len(spatial)
    pads = attrs.get("pads") or [0] * (2 * rank)  # none with VALID
    dilations = attrs.get("dilations") or [1] * rank
    return all(n + pads[i] + pads[i + rank] >= (k - 1) * d + 1
               for i, (n, k, d) in enumerate(zip(spatial, attrs["kernel_shape"], dilations)))


@pytest.mark.parametrize("op, opset, dtype", list(op_cases(POOLS)))
@SETTINGS
@given(data=st.data())
def test_pool_matches_the_reference(op, opset, dtype, data):
    shape = data.draw(pool_input_shapes(), label="shape")
    spatial = shape[2:]
    attrs = draw_window_attrs(data, op, opset, spatial)
    # A padded input shorter than the window has no output by the floor formula (nxrt rejects it); ceil_mode's
    # single window over such an input is test_ceil_mode_window_longer_than_the_input.
    assume(covers_a_window(spatial, attrs))
    if op == "AveragePool":
        attrs["count_include_pad"] = data.draw(st.integers(0, 1), label="count_include_pad")
    if op == "LpPool":
        attrs["p"] = data.draw(st.integers(1, 3), label="p")
    outputs = 2 if op == "MaxPool" and opset >= 8 and data.draw(st.booleans(), label="indices") else 1
    if outputs == 2:
        attrs["storage_order"] = data.draw(st.integers(0, 1), label="storage_order")
    x = data.draw(arrays(dtype, shape), label="x")
    # The spec gives no maximum of no values (the reference fails on such a window; nxrt gives 0, Indices -1).
    assume(op != "MaxPool" or not window_oracles.has_empty_window(spatial, attrs["kernel_shape"], attrs))
    if op != "MaxPool":
        _, _, ambiguous = window_oracles.pool_by_the_spec(KIND[op], x, attrs, attrs.get("p", 2))
        assume(not ambiguous.any())
    key = "MaxPool with Indices" if outputs == 2 else op
    check_node(op, opset, [x], attrs, outputs, expected=known_differences.expected_for(key, opset, [x], attrs),
               half_in_float=True)


@pytest.mark.parametrize("op", POOLS)
def test_ceil_mode_window_longer_than_the_input(op):
    """ceil((1 - 2) / 2 + 1) = 1 output: one window over x[0] and a tap past the end. The reference and
    onnxruntime give that window's pool (0 for x = [0])."""
    x = np.zeros((1, 1, 1), np.float32)
    attrs = {"kernel_shape": [2], "strides": [2], "ceil_mode": 1}
    check_node(op, 18 if op == "LpPool" else 19, [x], attrs)


GLOBAL_POOLS = ("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")


@pytest.mark.parametrize("op, opset, dtype", list(op_cases(GLOBAL_POOLS)))
@SETTINGS
@given(data=st.data())
def test_global_pool_matches_the_reference(op, opset, dtype, data):
    shape = data.draw(pool_input_shapes(), label="shape")
    if op != "GlobalMaxPool" and data.draw(st.booleans(), label="empty plane"):
        # An empty plane averages to NaN (0 / 0, as the reference's numpy mean gives it) and has an Lp norm of 0.
        # GlobalMaxPool is left out there: the spec gives no maximum of no values and the reference fails.
        shape = shape[:-1] + (0,)
    x = data.draw(arrays(dtype, shape), label="x")
    spatial = list(x.shape[2:])
    attrs = {"p": data.draw(st.integers(1, 3), label="p")} if op == "GlobalLpPool" else {}
    expected = None
    if op != "GlobalMaxPool":
        kind = "lp" if op == "GlobalLpPool" else "average"
        y, _, ambiguous = window_oracles.pool_by_the_spec(kind, x, {"kernel_shape": spatial}, attrs.get("p", 2))
        assume(not ambiguous.any())
        if op == "GlobalLpPool":  # no reference implementation: the spec's LpPool over the whole plane
            expected = lambda inputs, attrs: [y]  # noqa: E731
    expected = expected or known_differences.expected_for(op, opset, [x], attrs)
    check_node(op, opset, [x], attrs, expected=expected, half_in_float=True)


@pytest.mark.parametrize("opset, dtype", list(op_cases("LRN", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_lrn_matches_the_reference(opset, dtype, data):
    rank = data.draw(st.sampled_from([3, 4, 4, 5]), label="rank")
    shape = tuple(data.draw(st.integers(1 if i == 1 else 0, 4 if i < 2 else 3), label="dim") for i in range(rank))
    x = data.draw(arrays(dtype, shape), label="x")
    attrs = {"size": data.draw(st.integers(1, 5), label="size")}
    for name, values in (("alpha", [1e-4, 0.5, 2.0]), ("beta", [0.75, 0.5, 1.0, 2.0]), ("bias", [1.0, 2.0, 0.5])):
        if data.draw(st.booleans(), label=f"{name} given"):
            attrs[name] = data.draw(st.sampled_from(values), label=name)
    check_node("LRN", opset, [x], attrs, expected=known_differences.expected_for("LRN", opset, [x], attrs),
               half_in_float=True)


@pytest.mark.parametrize("opset, dtype", list(op_cases("MaxUnpool", type_param="T1", first=9, with_op=False)))
@SETTINGS
@given(data=st.data())
def test_max_unpool_matches_the_reference(opset, dtype, data):
    shape = data.draw(pool_input_shapes(), label="shape")
    rank = len(shape) - 2
    kernel = [data.draw(st.integers(1, 3), label="kernel") for _ in range(rank)]
    strides = [data.draw(st.integers(1, 3), label="stride") for _ in range(rank)]
    pads = [data.draw(st.integers(0, k - 1), label="pad") for k in kernel * 2]
    inferred = [(n - 1) * s + k - pads[i] - pads[i + rank]
                for i, (n, s, k) in enumerate(zip(shape[2:], strides, kernel))]
    assume(min(inferred) >= 1)  # pads that leave no output
    x = data.draw(arrays(dtype, shape), label="x")
    # Indices anywhere in the unpooled tensor (as MaxPool's Indices, flat over N x C x the inferred dims), repeats
    # included: the later element of X wins, in the reference as in nxrt.
    total = int(np.prod(shape[:2] + tuple(inferred)))
    indices = data.draw(arrays(np.int64, shape, st.integers(0, max(total - 1, 0))), label="indices")
    inputs = [x, indices]
    if data.draw(st.booleans(), label="output_shape given"):
        # A larger output keeps the inferred block in its leading corner (the spec's backend test
        # maxunpool_export_with_output_shape: indices 5, 7, 13, 15 of a 4x4 block land so in a 5x5 output).
        grown = [d + data.draw(st.integers(0, 2), label="growth") for d in inferred]
        inputs.append(np.array(list(shape[:2]) + grown, np.int64))
    check_node("MaxUnpool", opset, inputs, {"kernel_shape": kernel, "strides": strides, "pads": pads})


@pytest.mark.parametrize("opset, dtype", list(op_cases("MaxRoiPool", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_max_roi_pool_matches_onnxruntime(opset, dtype, data):
    """onnxruntime's MaxRoiPool (Caffe's bins, which the spec's pooled_shape and spatial_scale describe) runs
    float32 and float16 only, and before opset 22. It runs here at opset 21 on a float32 proxy of X that holds each
    value's rank among X's numbers (1 for the smallest) and 0.5 for NaN; each bin's largest rank maps back to its
    value (0: an empty bin, which gives 0; 0.5: a bin of only NaN, which gives NaN by MaxPool's rule). Exact
    for every dtype. onnxruntime's own NaN handling differs: a NaN that is the last value of a bin wins there."""
    import onnxruntime

    shape = (data.draw(st.integers(1, 2), label="N"), data.draw(st.integers(1, 2), label="C"),
             data.draw(st.integers(1, 5), label="H"), data.draw(st.integers(1, 5), label="W"))
    x = data.draw(arrays(dtype, shape), label="x")
    count = data.draw(st.integers(0, 3), label="rois")
    # Box corners on a quarter grid (exact in every float type), some outside the image; a scale of 0.5 makes
    # halves that round away from zero.
    coordinate = st.integers(-4, 4 * max(shape[2:]) + 4).map(lambda q: q / 4)
    rois = np.array([[data.draw(st.integers(0, shape[0] - 1), label="batch")]
                     + [data.draw(coordinate, label="corner") for _ in range(4)] for _ in range(count)],
                    np.float64).reshape(count, 5).astype(dtype)
    attrs = {"pooled_shape": [data.draw(st.integers(1, 3), label="pooled") for _ in range(2)],
             "spatial_scale": data.draw(st.sampled_from([1.0, 0.5, 2.0, 0.25]), label="spatial_scale")}
    wide = x.astype(np.float64)
    nan = np.isnan(wide)
    numbers = np.unique(wide[~nan])  # sorted; 0.0 and -0.0 share a rank
    ranks = np.where(nan, 0.5, np.searchsorted(numbers, np.where(nan, 0, wide)) + 1.0)
    proxy = [ranks.astype(np.float32), rois.astype(np.float32)]
    session = onnxruntime.InferenceSession(node_model("MaxRoiPool", min(opset, 21), proxy, attrs)
                                           .SerializeToString(), providers=["CPUExecutionProvider"])
    picked = session.run(None, {"x0": proxy[0], "x1": proxy[1]})[0].astype(np.float64)
    lookup = np.concatenate([[0.0], numbers])
    values = lookup[np.floor(picked).astype(np.int64)]
    expected = np.where(picked == 0.5, np.nan, values).astype(dtype)
    check_node("MaxRoiPool", opset, [x, rois], attrs, expected=lambda inputs, attrs: [expected])


def test_max_pool_3x3_stride_2_with_another_row_stride():
    """Regression: the whole-plane 3x3 stride-2 MaxPool kernel (avx2 / avx512 tiers, planes without NaN or zeros)
    strided 2 along the rows whatever the row stride: with strides [3, 2] it read output row 1's window from input
    row 1 instead of 2 (5.01 instead of -0.875)."""
    x = np.array([-2.979927, 7.8288836, -7.836297, -3.5888188, -9.047259, -5.114923, 2.1581945, 5.010272,
                  -5.5941286, 6.751252, -8.869345, -2.3206978, -6.035454, -np.inf, -0.8753782, -1.2089354],
                 np.float32).reshape(1, 1, 4, 4)
    attrs = {"kernel_shape": [3, 3], "strides": [3, 2], "auto_pad": "SAME_UPPER"}
    expected = window_oracles.pool_by_the_spec("max", x, attrs)[0]
    np.testing.assert_array_equal(run_nxrt(node_model("MaxPool", 12, [x], attrs), [x])[0], expected)


COVERED = set(POOLS) | set(GLOBAL_POOLS) | {"LRN", "MaxUnpool", "MaxRoiPool"}
