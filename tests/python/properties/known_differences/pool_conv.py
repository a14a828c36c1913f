"""Known differences of the windowed ops: the pools, LRN, Conv, ConvTranspose, DeformConv and Col2Im. The spec's
computations and the predicates that recognise each case live in window_oracles.py; the entries here name them."""

import numpy as np

from .common import Difference


def _window(name):
    """A function of window_oracles.py: the spec's pools, convolutions and LRN and the predicates of their known
    differences (imported on use, as it imports the harness)."""
    import window_oracles

    return getattr(window_oracles, name)


def _window_case(name, *args):
    """For an op, the window_oracles predicate `name` (op, opset, inputs, attrs) as a Difference's applies(opset,
    inputs, attrs); with `args`, `name` makes the predicate from them first (ceil_pad_beyond(2))."""
    def applies(op):
        return lambda opset, inputs, attrs: _window(name)(*args)(op, opset, inputs, attrs) if args else \
            _window(name)(op, opset, inputs, attrs)
    return applies


def _pool_by_the_spec(op, opset, inputs, attrs):
    """window_oracles' pool; "MaxPool with Indices" (MaxPool with its second output) gives [Y, Indices]."""
    kind = {"AveragePool": "average", "MaxPool": "max", "LpPool": "lp", "GlobalMaxPool": "max"}[op.split()[0]]
    if op == "GlobalMaxPool":
        attrs = {"kernel_shape": list(inputs[0].shape[2:])}
    y, indices, _ = _window("pool_by_the_spec")(kind, inputs[0], attrs, attrs.get("p", 2))
    return [y, indices] if op.endswith("Indices") else [y]


def _deform_conv_by_the_spec(op, opset, inputs, attrs):
    x, w, offset, b, mask = (list(inputs) + [None, None])[:5]
    return [_window("deform_conv_by_the_spec")(x, w, offset, b, mask, attrs)[0]]


_REFERENCE_DROPS_NAN = (
    "The reference marks pads with NaN and drops every NaN from a window, the input's included: AveragePool([1, "
    "NaN], kernel 2) is 1 there and LpPool([1, NaN], kernel 2, p 1) 2 (its LpPool is the non-NaN mean of |x|^p "
    "times the kernel size). The spec averages (or sums) the window's values: NaN, which nxrt and onnxruntime give.")


DIFFERENCES = [
    Difference("AveragePool", _REFERENCE_DROPS_NAN,
               lambda opset, inputs, attrs: not attrs.get("count_include_pad", 0)
               and _window("nan_input")("AveragePool", opset, inputs, attrs), _pool_by_the_spec),
    Difference("LpPool", _REFERENCE_DROPS_NAN, _window_case("nan_input")("LpPool"), _pool_by_the_spec),
    *[Difference(
        op,
        "With auto_pad SAME_UPPER, SAME_LOWER or VALID the reference sizes the pads and the output with the "
        "undilated kernel: VALID over 4 values with kernel 2 and dilation 2 gives 3 outputs there, (4 - 3) / 1 + 1 "
        "= 2 by the spec's formula, with windows of 2 values 2 apart. nxrt and onnxruntime follow the spec.",
        _window_case("dilated_auto_pad")(op), _pool_by_the_spec) for op in ("AveragePool", "LpPool")],
    *[Difference(
        op,
        "SAME_UPPER / SAME_LOWER where the spec's pad_shape, (out - 1) * stride + dilated kernel - in, is "
        "negative (stride above the kernel: 5 values, stride 3, kernel 1): the reference pads by that negative "
        "amount, which numpy refuses. Pads are >= 0 by the spec; nxrt and onnxruntime pad nothing (windows at 0 "
        "and 3).",
        _window_case("same_pad_negative")(op), _pool_by_the_spec) for op in ("AveragePool", "LpPool")],
    Difference(
        "AveragePool",
        "With ceil_mode the reference pads the input out to the last window and puts half of that extra pad "
        "(rounded down) at the beginning, which shifts every window once the extra is 2 or more: over [0, 1, 2, "
        "3, 4] with kernel 3 and stride 4 it gives [0.5, 3]; the spec's windows [0, 2] and [4, 6] (taps past the "
        "end pad are not part of a window) give [1, 4], as nxrt and onnxruntime do.",
        _window_case("ceil_pad_beyond", 2)("AveragePool"), _pool_by_the_spec),
    Difference(
        "LpPool",
        "The reference's LpPool is the mean of |x|^p over a window's taps in input and pads, times the kernel "
        "size: the sum only where every tap lies in the input or the pads. A ceil_mode window reaching past the "
        "end pad has fewer taps, so the reference scales its mean up: LpPool([1, 2, 4], kernel 2, stride 2, p 1, "
        "ceil_mode) is [3, 8] there, [3, 4] by the spec; with an extra of 2 or more it also shifts the windows as "
        "its AveragePool does. nxrt and onnxruntime sum the window.",
        _window_case("ceil_pad_beyond", 1)("LpPool"), _pool_by_the_spec),
    *[Difference(
        op,
        "With every stride and dilation 1 the reference runs MaxPool through an older implementation that reads "
        "2-D pads as [top, bottom, left, right] (the spec's order is [x1_begin, x2_begin, x1_end, x2_end]), "
        "mishandles pads in 1-D and 3-D (MaxPool([0, 1, 2, 3, 4], kernel 2, pads [1, 0]) fails), counts them "
        "twice with ceil_mode, handles SAME only in 2-D, pads 2-D inputs with NaN even without pads (which fails "
        "for int8 and uint8), and drops NaN (a window of only NaN fails). nxrt and onnxruntime follow the spec's "
        "geometry and skip NaN unless the whole window is NaN (then NaN).",
        _window_case("unit_max_pool_faults")(op), _pool_by_the_spec) for op in ("MaxPool", "MaxPool with Indices")],
    *[Difference(
        op,
        "With a stride or dilation above 1 the reference's MaxPool sizes SAME_LOWER outputs floor(in / stride) "
        "(the spec: ceil) and pads them as SAME_UPPER, splits a negative SAME pad with floor division (shifting "
        "the windows by one), and keeps a NaN first tap as the maximum (later NaN taps are skipped). nxrt and "
        "onnxruntime skip NaN unless the whole window is NaN.",
        _window_case("strided_max_pool_faults")(op), _pool_by_the_spec) for op in ("MaxPool", "MaxPool with Indices")],
    Difference(
        "MaxPool with Indices",
        "The unit-stride MaxPool of the reference (see above) computes Indices within the plane, without the "
        "(n * C + c) * plane offset of the spec's flat range [0, N x C x D1 x ... x Dn), takes the window's argmax "
        "as coordinates over the output's shape, and ignores storage_order. nxrt and onnxruntime give flat "
        "offsets into X.",
        lambda opset, inputs, attrs: _window("unit_stride_max_pool")(opset, attrs), _pool_by_the_spec),
    Difference(
        "GlobalAveragePool",
        "The reference fails on an empty batch (numpy.average over the spatial axes of a [0, C, ...] array divides "
        "by its zero output size). The output is empty as well, as nxrt and onnxruntime give it.",
        lambda opset, inputs, attrs: inputs[0].shape[0] * inputs[0].shape[1] == 0,
        lambda op, opset, inputs, attrs: [np.zeros(inputs[0].shape[:2] + (1,) * (inputs[0].ndim - 2),
                                                   inputs[0].dtype)]),
    Difference(
        "GlobalMaxPool",
        "The spec defines GlobalMaxPool as MaxPool with the whole plane as its window; the reference's GlobalMaxPool "
        "is numpy's max, which propagates NaN, while its MaxPool skips NaN. nxrt follows MaxPool (NaN only from a "
        "plane of NaN), as onnxruntime does. The reference also reduces axes (R - 2, R - 1) for a rank-R input, the "
        "spatial axes only in 4-D (3-D: the channels and the one spatial axis, 5-D: the last two).",
        lambda opset, inputs, attrs: inputs[0].ndim != 4 or _window("nan_input")("", opset, inputs, attrs),
        _pool_by_the_spec),
    Difference(
        "LRN",
        "The reference loops over the batch size where the spec's square_sum runs over the channels (channels from "
        "N on get a square sum of 0; N > C fails), refuses inputs that are not 4-D (the spec's X is N x C x D1 x "
        "... x Dk), and computes in the input type (float32 squares overflow to inf beyond 1.8e19, giving 0). "
        "Compared with the spec's formula in float64, as nxrt computes it; onnxruntime computes float32 in "
        "float32.",
        _window_case("lrn_reference_faults")("LRN"),
        lambda op, opset, inputs, attrs: _window("lrn_by_the_spec")(inputs[0], attrs)),
    Difference(
        "Conv",
        "The reference dilates W by inserting zero weights between its taps, so the input values a dilation skips "
        "are multiplied by 0: a NaN or infinity there turns the output NaN, where the spec's window does not read "
        "them. Compared with the spec's sum over the dilated taps; nxrt and onnxruntime read only those.",
        _window_case("conv_dilation_faults")("Conv"),
        lambda op, opset, inputs, attrs: [_window("conv_by_the_spec")(*inputs[:2], inputs[2] if len(inputs) > 2
                                                                       else None, attrs)[0]]),
    Difference(
        "ConvTranspose",
        "The reference's ConvTranspose is wrong or fails for group > 1 (it writes one output channel per group and "
        "adds B by the group's local channel), for an empty batch (no output at all), with output_padding (its "
        "col2im then counts blocks over the padded size and fails) and with output_shape (it keeps the given pads, "
        "where the spec derives them from output_shape: SAME_UPPER total / 2 at the beginning, otherwise total - "
        "total / 2). Compared with the spec's sum over the taps that land on each output; nxrt and onnxruntime "
        "follow the spec (onnxruntime checked on groups with bias and on output_shape 5 and 7 over [0, 1, 2], "
        "stride 2).",
        _window_case("conv_transpose_faults")("ConvTranspose"),
        lambda op, opset, inputs, attrs: [_window("conv_transpose_by_the_spec")(
            *inputs[:2], inputs[2] if len(inputs) > 2 else None, attrs)[0]]),
    Difference(
        "DeformConv",
        "The reference's DeformConv runs 2-D inputs only (the spec's X is N x C x D1 x ... x Dn) and normalises "
        "its sampling grid by (side - 1), which divides by zero for a side of 1. Compared with the spec's "
        "multilinear sampling over the 2^R corners around each point, as nxrt computes it.",
        _window_case("deform_conv_faults")("DeformConv"), _deform_conv_by_the_spec),
    Difference(
        "DeformConv",
        "The reference samples through GridSample, which weighs all 2^R corners around a point, also those of "
        "weight 0: a NaN or infinity next to a point on the input's grid (an integral offset) makes it NaN. The "
        "spec: \"Use linear interpolation for fractional offset values\", so a whole coordinate reads that value "
        "alone (with zero offsets DeformConv is Conv). Compared with the spec's multilinear sampling over the "
        "corners of nonzero weight, as nxrt computes it; onnxruntime weighs all corners as the reference does (a "
        "1x1 DeformConv of [[1, 2, inf], ...] with zero offsets gives [1, NaN, inf, ...] in both, [1, 2, inf, ...] "
        "in nxrt).",
        _window_case("non_finite_input")("DeformConv"), _deform_conv_by_the_spec),
    Difference(
        "Col2Im",
        "The reference fails on an empty batch (its result stays None). The output is empty, as nxrt and "
        "onnxruntime give it.",
        lambda opset, inputs, attrs: inputs[0].shape[0] == 0,
        lambda op, opset, inputs, attrs: [_window("col2im_by_the_spec")(
            inputs[0], inputs[1].tolist(), inputs[2].tolist(), attrs)[0]]),
]
