"""Convolution operators on generated inputs: Conv, ConvTranspose (strides, dilations, pads, output_padding,
output_shape, group), DeformConv (offsets, mask, offset_group, group) and Col2Im, over 1-D, 2-D and 3-D spatial
dims (DeformConv: 1-D to 3-D, the reference runs 2-D only), zero-size batches, every auto_pad, bias or none, values
with NaN, infinities and the dtype's extremes, at every opset version where the schema changed (from 7) and every
dtype of the type constraint that nxrt registers.

Oracle: the ONNX reference, except where known_differences/ documents it wrong (then window_oracles.py's
implementation of the spec's words). A sum of products has no single float answer where the order of the additions,
or a fused multiply-add, decides it beyond the tolerance (terms that cancel, overflowing partial sums or products):
window_oracles.sums marks those and such inputs are left out."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import known_differences
import window_oracles
from property_harness import SETTINGS, check_node, op_cases
from property_values import arrays, is_float


def draw_conv_shapes(data, rank_max=3, batch_min=0):
    """(x shape, w shape as Conv's [M, C / group, kernel...], group): N 0 to 2, group 1 to 2, 1 to 2 channels per
    group in and out, spatial dims 1 to 4 (3 in 3-D), kernel 1 to 3."""
    rank = data.draw(st.integers(1, rank_max), label="rank")
    group = data.draw(st.integers(1, 2), label="group")
    per_group_in, per_group_out = (data.draw(st.integers(1, 2), label="channels") for _ in range(2))
    spatial = tuple(data.draw(st.integers(1, 4 if rank < 3 else 3), label="side") for _ in range(rank))
    kernel = tuple(data.draw(st.integers(1, 3), label="kernel") for _ in range(rank))
    batch = data.draw(st.integers(batch_min, 2), label="N")
    return (batch, group * per_group_in) + spatial, (group * per_group_out, per_group_in) + kernel, group


def draw_conv_attrs(data, rank, group, auto_pad=True):
    """group, and optionally kernel_shape-free window attributes: strides 1 to 3, dilations 1 to 2, and an
    auto_pad (NOTSET with pads 0 to 2 per side or none, SAME_UPPER, SAME_LOWER, VALID)."""
    attrs = {"group": group} if group > 1 or data.draw(st.booleans(), label="group given") else {}
    if data.draw(st.booleans(), label="strides given"):
        attrs["strides"] = [data.draw(st.integers(1, 3), label="stride") for _ in range(rank)]
    if data.draw(st.booleans(), label="dilations given"):
        attrs["dilations"] = [data.draw(st.integers(1, 2), label="dilation") for _ in range(rank)]
    choice = data.draw(st.sampled_from(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"] if auto_pad
                                       else ["NOTSET"]), label="auto_pad")
    if choice != "NOTSET":
        attrs["auto_pad"] = choice
    elif data.draw(st.booleans(), label="pads given"):
        attrs["pads"] = [data.draw(st.integers(0, 2), label="pad") for _ in range(2 * rank)]
    return attrs


def has_outputs(dims):
    # A padded input shorter than the dilated kernel leaves no output by the spec's formula; nxrt and the
    # reference reject it.
    return all(d[0] >= 1 for d in dims)


@pytest.mark.parametrize("opset, dtype", list(op_cases("Conv", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_conv_matches_the_reference(opset, dtype, data):
    x_shape, w_shape, group = draw_conv_shapes(data)
    attrs = draw_conv_attrs(data, len(x_shape) - 2, group)
    if data.draw(st.booleans(), label="kernel_shape given"):
        attrs["kernel_shape"] = list(w_shape[2:])
    assume(has_outputs(window_oracles.resolve_window(x_shape[2:], w_shape[2:], attrs)))
    x = data.draw(arrays(dtype, x_shape), label="x")
    w = data.draw(arrays(dtype, w_shape), label="w")
    b = data.draw(arrays(dtype, (w_shape[0],)), label="b") if data.draw(st.booleans(), label="bias") else None
    assume(not window_oracles.conv_by_the_spec(x, w, b, attrs)[1].any())
    inputs = [x, w] if b is None else [x, w, b]
    check_node("Conv", opset, inputs, attrs, expected=known_differences.expected_for("Conv", opset, inputs, attrs),
               half_in_float=True)


@pytest.mark.parametrize("opset, dtype", list(op_cases("ConvTranspose", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_conv_transpose_matches_the_reference(opset, dtype, data):
    x_shape, conv_w_shape, group = draw_conv_shapes(data)
    rank = len(x_shape) - 2
    # ConvTranspose's W is [C, M / group, kernel...]: Conv's in and out channel counts swap.
    w_shape = (x_shape[1], conv_w_shape[0] // group) + conv_w_shape[2:]
    attrs = draw_conv_attrs(data, rank, group)
    strides, dilations = attrs.get("strides") or [1] * rank, attrs.get("dilations") or [1] * rank
    if data.draw(st.booleans(), label="output_padding given"):
        # "output_padding ... must be less than stride or dilation" per dim (the spec's shape inference rule).
        attrs["output_padding"] = [data.draw(st.integers(0, max(s, d) - 1), label="output_padding")
                                   for s, d in zip(strides, dilations)]
    if data.draw(st.booleans(), label="output_shape given"):
        natural = [d[0] for d in window_oracles.conv_transpose_window(x_shape[2:], w_shape[2:],
                                                                       {**attrs, "pads": None, "auto_pad": "VALID"})]
        # Any size from 2 below to 2 above the unpadded one: the spec derives the pads from it (a negative total
        # pad extends the output).
        attrs["output_shape"] = [max(1, n + data.draw(st.integers(-2, 2), label="output size")) for n in natural]
    assume(has_outputs(window_oracles.conv_transpose_window(x_shape[2:], w_shape[2:], attrs)))
    x = data.draw(arrays(dtype, x_shape), label="x")
    w = data.draw(arrays(dtype, w_shape), label="w")
    b = data.draw(arrays(dtype, (w_shape[1] * group,)), label="b") if data.draw(st.booleans(), label="bias") else None
    assume(not window_oracles.conv_transpose_by_the_spec(x, w, b, attrs)[1].any())
    inputs = [x, w] if b is None else [x, w, b]
    check_node("ConvTranspose", opset, inputs, attrs, half_in_float=True,
               expected=known_differences.expected_for("ConvTranspose", opset, inputs, attrs))


@pytest.mark.parametrize("opset, dtype", list(op_cases("DeformConv", first=19, with_op=False)))
@SETTINGS
@given(data=st.data())
def test_deform_conv_matches_the_reference(opset, dtype, data):
    x_shape, w_shape, group = draw_conv_shapes(data, rank_max=3)
    rank = len(x_shape) - 2
    attrs = draw_conv_attrs(data, rank, group, auto_pad=False)  # DeformConv has no auto_pad
    if data.draw(st.booleans(), label="offset_group 2") and x_shape[1] % 2 == 0:
        attrs["offset_group"] = 2
    dims = window_oracles.resolve_window(x_shape[2:], w_shape[2:], attrs)
    assume(has_outputs(dims))
    out_shape = tuple(d[0] for d in dims)
    taps, offset_group = int(np.prod(w_shape[2:])), attrs.get("offset_group", 1)
    x = data.draw(arrays(dtype, x_shape), label="x")
    w = data.draw(arrays(dtype, w_shape), label="w")
    # Offsets on a quarter grid from -3 to 3 (exact in every float type; whole numbers put a point on the input's
    # grid). A NaN or infinite offset is left out: the spec does not say where such a point reads.
    quarters = st.integers(-12, 12).map(lambda q: q / 4)
    offset = data.draw(arrays(dtype, (x_shape[0], offset_group * taps * rank) + out_shape, quarters), label="offset")
    b = data.draw(arrays(dtype, (w_shape[0],)), label="b") if data.draw(st.booleans(), label="bias") else None
    mask = data.draw(arrays(dtype, (x_shape[0], offset_group * taps) + out_shape), label="mask") \
        if data.draw(st.booleans(), label="mask given") else None
    assume(not window_oracles.deform_conv_by_the_spec(x, w, offset, b, mask, attrs)[1].any())
    inputs = [x, w, offset, b, mask] if mask is not None else [x, w, offset] + ([b] if b is not None else [])
    check_node("DeformConv", opset, inputs, attrs, half_in_float=True,
               expected=known_differences.expected_for("DeformConv", opset, inputs, attrs))


# Col2Im's constraint also lists string, bool and the complex types; nxrt registers the numeric types only (a sum of
# overlapping blocks has no meaning for strings and bools). Complex types are not generated by the harness.
@pytest.mark.parametrize("opset, dtype", [p for p in op_cases("Col2Im", first=18, with_op=False)
                                          if p.values[1].kind in "iuf" or p.values[1].itemsize == 2])
@SETTINGS
@given(data=st.data())
def test_col2im_matches_the_reference(opset, dtype, data):
    rank = data.draw(st.integers(1, 3), label="rank")
    image = [data.draw(st.integers(1, 4 if rank < 3 else 3), label="image") for _ in range(rank)]
    block = [data.draw(st.integers(1, 3), label="block") for _ in range(rank)]
    attrs = draw_conv_attrs(data, rank, 1, auto_pad=False)
    attrs.pop("group", None)
    dims = window_oracles.resolve_window(image, block, attrs)
    assume(has_outputs(dims))  # an image smaller than the dilated block has no block
    channels, batch = data.draw(st.integers(1, 2), label="C"), data.draw(st.integers(0, 2), label="N")
    data_shape = (batch, channels * int(np.prod(block)), int(np.prod([d[0] for d in dims])))
    values = data.draw(arrays(dtype, data_shape), label="data")
    inputs = [values, np.array(image, np.int64), np.array(block, np.int64)]
    if is_float(dtype):
        assume(not window_oracles.col2im_by_the_spec(values, image, block, attrs)[1].any())
    check_node("Col2Im", opset, inputs, attrs, half_in_float=True,
               expected=known_differences.expected_for("Col2Im", opset, inputs, attrs))


COVERED = {"Conv", "ConvTranspose", "DeformConv", "Col2Im"}
