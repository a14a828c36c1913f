"""Known differences of the signal ops (HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix) and of the
image ops (ImageDecoder, AffineGrid, NonMaxSuppression)."""

import numpy as np

from .common import Difference


def _one_sample_symmetric_window(opset, inputs, attrs):
    """A symmetric window of one sample in an integer output type (where the spec's window is NaN)."""
    integer_types = {2, 3, 4, 5, 6, 7, 12, 13}
    return attrs.get("periodic", 1) == 0 and int(inputs[0]) == 1 and attrs.get("output_datatype", 1) in integer_types


def _nan_window_as_integer(op, opset, inputs, attrs):
    from onnx.helper import tensor_dtype_to_np_dtype

    return [np.zeros(1, tensor_dtype_to_np_dtype(attrs["output_datatype"]))]


def _window_in_float64(op, opset, inputs, attrs):
    """The reference's window computed in float64 (output_datatype double), rounded once to the output type."""
    from onnx.helper import tensor_dtype_to_np_dtype
    from property_harness import node_model, run_reference

    wide = {**attrs, "output_datatype": 11}
    window = run_reference(node_model(op, opset, inputs, wide), inputs)[0]
    with np.errstate(all="ignore"):
        return [window.astype(tensor_dtype_to_np_dtype(attrs.get("output_datatype", 1)))]


def _mel_with_float64_edges(op, opset, inputs, attrs):
    """The reference's MelWeightMatrix with the edge frequencies given as float64."""
    from property_harness import node_model, run_reference

    case = [*inputs[:3], *(a.astype(np.float64) for a in inputs[3:5])]
    return run_reference(node_model(op, opset, case, attrs), case)


def _affine_grid_by_the_spec(op, opset, inputs, attrs):
    """AffineGrid in float64, rounded once to theta's type: the base grid of each spatial axis of length n is
    linspace(-1, 1) at the pixel centres, (2i + 1) / n - 1, or with align_corners at the corners,
    -1 + 2i / (n - 1); each point (x, y[, z], 1) (x along the last axis) is multiplied by theta's rows with every
    product formed (inf * 0 is NaN) and summed in order."""
    theta, size = inputs[0], [int(v) for v in inputs[1]]
    spatial = size[2:]
    if attrs.get("align_corners", 0):
        axes = [-1 + 2 * np.arange(n) / (n - 1) if n > 1 else np.full(n, -1.0) for n in spatial]
    else:
        axes = [(2 * np.arange(n) + 1) / n - 1 for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")
    points = np.stack([*reversed(mesh), np.ones(mesh[0].shape)], axis=-1)  # (..., k + 1)
    wide = theta.astype(np.float64)
    with np.errstate(all="ignore"):
        grid = np.zeros((size[0], *spatial, len(spatial)))
        for batch in range(size[0]):
            for row in range(len(spatial)):
                total = np.zeros(points.shape[:-1])
                for column in range(len(spatial) + 1):
                    total = total + wide[batch, row, column] * points[..., column]
                grid[batch, ..., row] = total
        return [grid.astype(theta.dtype)]


def _pillow_mode(blob):
    import io

    import PIL.Image

    return PIL.Image.open(io.BytesIO(blob.tobytes())).mode


def _decoded_through_rgb(op, opset, inputs, attrs):
    """Pillow's decode converted to RGB (alpha dropped, grey and palette expanded), channels reversed for BGR; for
    Grayscale Pillow's conversion of the decoded image to L."""
    import io

    import PIL.Image

    image = PIL.Image.open(io.BytesIO(inputs[0].tobytes()))
    if attrs.get("pixel_format", "RGB") == "Grayscale":
        return [np.asarray(image.convert("L"))[:, :, None]]
    rgb = np.asarray(image.convert("RGB"))
    return [rgb[:, :, ::-1].copy() if attrs.get("pixel_format") == "BGR" else rgb]


def _nms_reference_fails(opset, inputs, attrs):
    """NonMaxSuppression inputs the reference cannot read (see _nms_with_defaults)."""
    padded = list(inputs) + [None] * (5 - len(inputs))
    return (padded[2] is None or padded[2].size == 0 or int(padded[2].ravel()[0]) < 0 or padded[3] is None
            or any(a is not None and a.ndim == 0 for a in padded[2:]))


def _nms_with_defaults(op, opset, inputs, attrs):
    """The reference given the spec's defaults for what it cannot read: an omitted, empty or negative
    max_output_boxes_per_class as [0], an omitted iou_threshold as [0.0], scalars of rank 0 as shape [1]."""
    from property_harness import node_model, run_reference

    inputs = list(inputs) + [None] * (5 - len(inputs))
    if inputs[2] is None or inputs[2].size == 0 or int(inputs[2].ravel()[0]) < 0:
        inputs[2] = np.array([0], np.int64)
    if inputs[3] is None:
        inputs[3] = np.array([0.0], np.float32)
    inputs = [a.reshape(1) if a is not None and a.ndim == 0 else a for a in inputs]
    while inputs[-1] is None:
        inputs.pop()
    return run_reference(node_model(op, opset, inputs, attrs), inputs)


DIFFERENCES = [
    *[Difference(
        op,
        "A symmetric window of one sample is NaN by the spec's function body (AngularIncrement = Tau / (size - 1) "
        "is inf, Range * inf is 0 * inf), then Cast to output_datatype; a Cast of NaN to an integer type is "
        "undefined. The reference converts with numpy's astype (INT32_MIN and INT64_MIN, 2^63 for uint64, 0 for "
        "the narrow types). nxrt converts NaN to 0, its rule wherever float math yields an integer. onnxruntime "
        "gives INT64_MIN for int64.",
        _one_sample_symmetric_window,
        _nan_window_as_integer,
    ) for op in ("HannWindow", "HammingWindow", "BlackmanWindow")],
    *[Difference(
        op,
        "The reference computes Hann and Hamming windows in the output type (np.arange(size, dtype=output type)), "
        "rounding every step: HammingWindow(5)[4] in float16 is 0.403 there, 0.4023 rounded once, and the zero of "
        "a symmetric HannWindow(2) is sin(float32(pi))^2 = 7.6e-15 in float32 (1.5e-32 in float64). The spec "
        "defines the values, not a precision; nxrt computes in float64 and rounds once (as the reference's "
        "BlackmanWindow does for every type). Compared with the reference's float64 window rounded once. "
        "onnxruntime computes in float32.",
        lambda opset, inputs, attrs: attrs.get("output_datatype", 1) in (1, 10, 16),
        _window_in_float64,
    ) for op in ("HannWindow", "HammingWindow")],
    Difference(
        "MelWeightMatrix",
        "The reference computes the mel edges in the type of lower_edge_hertz and upper_edge_hertz (float16, "
        "bfloat16 and float32 arithmetic: lower_edge_hertz / 700, log1p, ...) before it floors them to DFT bins, "
        "so an edge close to a bin boundary lands on another bin than the float64 computation (dft_length 3, "
        "sample_rate 8, edges 0.5 and 2.5 Hz in float16 give one triangle a row less). The spec defines the "
        "mel scale, not a precision; nxrt computes in float64. Compared with the reference given float64 edges. "
        "onnxruntime computes in float32.",
        lambda opset, inputs, attrs: inputs[3].dtype != np.float64,
        _mel_with_float64_edges,
    ),
    Difference(
        "AffineGrid",
        "The reference returns float32 grids for every theta type (the output type is theta's, T1), builds the "
        "base grid with np.arange (its middle point of 3 is -1.1e-16, not 0) and multiplies through numpy's BLAS, "
        "which skips zero factors (inf * 0 gives 0). Compared with the spec's grid in float64: linspace points "
        "(2i + 1) / n - 1 (align_corners: -1 + 2i / (n - 1)) times theta with every product formed, rounded once "
        "to theta's type. onnxruntime computes in theta's type.",
        lambda opset, inputs, attrs: True,
        _affine_grid_by_the_spec,
    ),
    Difference(
        "ImageDecoder",
        "The spec's RGB and BGR outputs are [H, W, 3]; the reference returns Pillow's array in the file's own mode, "
        "[H, W] for grey and palette images and [H, W, 4] for ones with alpha. Compared with Pillow's image "
        "converted to RGB (alpha dropped, colours as stored), reversed for BGR. onnxruntime gives [H, W, 3].",
        lambda opset, inputs, attrs: _pillow_mode(inputs[0]) not in ("RGB", "L")
        or (_pillow_mode(inputs[0]) == "L" and attrs.get("pixel_format", "RGB") != "Grayscale"),
        _decoded_through_rgb,
    ),
    Difference(
        "NonMaxSuppression",
        "The reference fails where max_output_boxes_per_class is omitted, empty or negative (\"'NoneType' / 'int' "
        "object has no attribute 'size'\": it clamps a negative count to a Python 0) or iou_threshold is omitted, "
        "and on scalars of rank 0 (it reads element [0]). The spec's defaults are 0 boxes (an empty result) and "
        "an IoU threshold of 0, and it calls the inputs scalars. Compared with the reference given [0] for those "
        "counts (its own clamp), [0.0] and the scalars as shape [1]. onnxruntime reads them the same way.",
        _nms_reference_fails,
        _nms_with_defaults,
    ),
]
