"""Signal operators on generated inputs, against the ONNX reference: DFT (forward, inverse, onesided forward
(RFFT) and inverse (IRFFT), dft_length shorter and longer than the axis, the axis as an attribute at opset 17 and
as an input from opset 20, int32 and int64 lengths), STFT (real and complex signals, windows, frame_length,
frame_step, onesided), HannWindow, HammingWindow and BlackmanWindow (periodic and symmetric, every output_datatype)
and MelWeightMatrix (every output_datatype), each at every opset version where its schema changed and every float
dtype of its type constraint.

The transforms are sums of n products, so their rounding error scales with the line's L1 norm rather than with
each output value: a bin where large terms cancel keeps only the absolute accuracy of the sum. nxrt computes every
transform in double precision and rounds once to the element type (its documented contract, signal.cpp); the
oracle is the reference evaluated on float64 copies of the inputs (numpy's FFT of float32 data runs in float32)
and rounded once the same way, compared per bin within the dtype's rtol or 64 float64 epsilons of the line's L1
norm. A line holding NaN or an infinity has no unique IEEE result: where inf - inf and inf * 0 arise depends on
the order of the butterflies and on which twiddle factors an algorithm takes as exactly 0 (numpy's pocketfft
gives IRFFT([0, inf, 0]) = [inf, 0, -inf, 0], the sum's inf * cos(pi / 2) is NaN), so there the property is only
that the non-finite input reaches nxrt's output line."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import known_differences
from property_harness import (HALF, RTOL, SETTINGS, allowed_dtypes, check_node, describe, node_model, op_cases,
                              run_nxrt, run_reference, subnormal_atol)
from property_values import arrays, shapes

FLOAT64_EPS = float(np.finfo(np.float64).eps)
WINDOWS = ("HannWindow", "HammingWindow", "BlackmanWindow")
# output_datatype values (TensorProto) of the windows' and MelWeightMatrix's T2 / T3 constraints.
NUMERIC_OUTPUT_TYPES = {"tensor(uint8)": 2, "tensor(int8)": 3, "tensor(uint16)": 4, "tensor(int16)": 5,
                        "tensor(int32)": 6, "tensor(int64)": 7, "tensor(float16)": 10, "tensor(double)": 11,
                        "tensor(uint32)": 12, "tensor(uint64)": 13, "tensor(bfloat16)": 16, "tensor(float)": 1}


def output_type_cases(ops, type_param):
    """(op, opset, output_datatype) params for every output type of `type_param` the schema allows."""
    import onnx.defs

    for op in ops:
        schema = onnx.defs.get_schema(op, 17)
        allowed = next(c.allowed_type_strs for c in schema.type_constraints if c.type_param_str == type_param)
        for name in allowed:
            yield pytest.param(op, 17, NUMERIC_OUTPUT_TYPES[name], id=f"{op}-17-{name[7:-1]}")


def compare_transform(op, opset, inputs, attrs, lines_of_output, input_line_finite, input_line_norm):
    """Runs the case on nxrt and on the reference (on float64 copies, rounded once) and compares line by line.
    `lines_of_output(y)` reshapes an output to [lines, bins, components]; `input_line_finite` and
    `input_line_norm` give, per line, whether all inputs that reach it are finite and their L1 norm."""
    model = node_model(op, opset, inputs, attrs)
    context = describe(op, opset, inputs, attrs)
    dtype = inputs[0].dtype
    wide = [a.astype(np.float64) if a is not None and a.dtype.kind == "f" or a is not None and a.dtype in HALF
            else a for a in inputs]
    with np.errstate(all="ignore"):
        expected = run_reference(node_model(op, opset, wide, attrs), wide)[0].astype(dtype)
    try:
        actual = run_nxrt(model, inputs)[0]
    except Exception as error:  # noqa: BLE001 - the message is the finding
        raise AssertionError(f"{context}: nxrt raised {type(error).__name__}: {error}") from None
    assert actual.dtype == expected.dtype, f"{context}: dtype {actual.dtype}, reference {expected.dtype}"
    assert actual.shape == expected.shape, f"{context}: shape {actual.shape}, reference {expected.shape}"
    a, e = lines_of_output(actual).astype(np.float64), lines_of_output(expected).astype(np.float64)
    type_max = float(ml_dtypes.finfo(dtype).max)
    for line in range(a.shape[0]):
        where = f"{context}: line {line}: nxrt {a[line].ravel()[:8].tolist()}, reference {e[line].ravel()[:8].tolist()}"
        if not input_line_finite[line]:
            assert not np.isfinite(a[line]).all(), f"{where}: a non-finite input leaves every value finite"
            continue
        absolute = max(64 * FLOAT64_EPS * input_line_norm[line], subnormal_atol(dtype))
        if absolute > type_max:
            # The sum's rounding error exceeds the element type's range (a float32 window of 3e38 times a
            # signal of 3e38): a bin may round to a finite value or overflow to inf in either order of the sum.
            continue
        with np.errstate(all="ignore"):
            limit = np.maximum(RTOL[dtype] * np.abs(e[line]), absolute)
            close = (a[line] == e[line]) | (np.abs(a[line] - e[line]) <= limit) | (np.isnan(a[line]) &
                                                                                  np.isnan(e[line]))
            # A bin within the error bound of the type's largest value may round to it or overflow.
            edge = np.minimum(np.abs(a[line]), np.abs(e[line])) >= type_max - absolute
            close |= edge & (np.sign(a[line]) == np.sign(e[line]))
        assert close.all(), f"{where}: {int((~close).sum())} values differ"


def as_complex_lines(x, axis, used):
    """x [..., n, ..., components] as [lines, used, components] along `axis`, the first `used` samples kept."""
    moved = np.moveaxis(x.astype(np.float64), axis, -2)[..., :used, :]
    return moved.reshape(-1, moved.shape[-2], moved.shape[-1])


def line_summary(lines):
    with np.errstate(all="ignore"):
        finite = np.isfinite(lines).all(axis=(1, 2))
        norm = np.abs(lines).sum(axis=(1, 2))
    return finite, norm


@pytest.mark.parametrize("opset, dtype", list(op_cases("DFT", type_param="T1", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_dft_matches_the_reference(opset, dtype, data):
    inverse = data.draw(st.integers(0, 1), label="inverse")
    onesided = data.draw(st.integers(0, 1), label="onesided")
    # Onesided: a forward transform takes a real signal (complex ones only at opset 17, whose text does not
    # restrict them) and an inverse one a complex half spectrum, as the spec says.
    components = 2 if inverse and onesided else 1 if onesided and opset >= 20 else data.draw(
        st.sampled_from([1, 2]), label="components")
    signal = data.draw(shapes(min_rank=1, max_rank=3, min_side=1, max_side=4), label="signal shape")
    x = data.draw(arrays(dtype, (*signal, components)), label="x")
    rank = x.ndim
    axis = data.draw(st.sampled_from([*range(0, rank - 1), *range(-rank, -1)]), label="axis")
    length = x.shape[axis]
    dft_length = data.draw(st.one_of(st.none(), st.integers(1, 6)), label="dft_length")
    if inverse and onesided and dft_length is None:
        # The IRFFT default 2 * (length - 1) is 0 for a one-bin spectrum: no transform length.
        assume(length > 1)
    n = dft_length if dft_length is not None else 2 * (length - 1) if inverse and onesided else length
    length_type = data.draw(st.sampled_from([np.int32, np.int64]), label="dft_length type")
    attrs = {"inverse": inverse, "onesided": onesided}
    inputs = [x, None if dft_length is None else np.array(dft_length, length_type)]
    if opset >= 20:
        if axis != -2 or data.draw(st.booleans(), label="axis given"):
            inputs.append(np.array(axis, np.int64))
    else:
        attrs["axis"] = axis
    # An IRFFT reads bins 0 .. n/2 (numpy.fft.irfft's cropping); other transforms the first n samples.
    used = n // 2 + 1 if inverse and onesided else n
    lines = as_complex_lines(x, axis, used)
    finite, norm = line_summary(lines)
    compare_transform("DFT", opset, inputs, attrs, lambda y: as_complex_lines(y, axis, y.shape[axis]), finite, norm)


@pytest.mark.parametrize("opset, dtype", list(op_cases("STFT", type_param="T1", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_stft_matches_the_reference(opset, dtype, data):
    components = data.draw(st.sampled_from([1, 2]), label="components")
    batch = data.draw(st.integers(0, 2), label="batch")
    length = data.draw(st.integers(1, 8), label="signal length")
    x = data.draw(arrays(dtype, (batch, length, components)), label="signal")
    frame_length = data.draw(st.integers(1, length), label="frame length")
    step = data.draw(st.integers(1, 4), label="frame_step")
    index_type = data.draw(st.sampled_from([np.int32, np.int64]), label="index type")
    form = data.draw(st.sampled_from(["window", "frame_length", "both", "neither"]), label="form")
    if form == "neither":
        frame_length = length
    window = data.draw(arrays(dtype, (frame_length,)), label="window") if form in ("window", "both") else None
    # "if the input or window tensors are complex, then onesided output is not possible" (the window is real).
    onesided = 0 if components == 2 else data.draw(st.integers(0, 1), label="onesided")
    inputs = [x, np.array(step, index_type), window,
              np.array(frame_length, index_type) if form in ("frame_length", "both") else None]
    frames = 1 + (length - frame_length) // step
    starts = np.arange(frames) * step
    signal = x.astype(np.float64)
    weights = np.ones(frame_length) if window is None else window.astype(np.float64)
    with np.errstate(all="ignore"):
        framed = np.stack([signal[:, s:s + frame_length, :] * weights[:, None] for s in starts], axis=1)
    finite, norm = line_summary(framed.reshape(-1, frame_length, components))
    compare_transform("STFT", opset, inputs, {"onesided": onesided},
                      lambda y: y.reshape(-1, y.shape[2], y.shape[3]), finite, norm)


@pytest.mark.parametrize("op, opset, output_datatype", list(output_type_cases(WINDOWS, "T2")))
@SETTINGS
@given(data=st.data())
def test_window_matches_the_reference(op, opset, output_datatype, data):
    size_type = data.draw(st.sampled_from([np.int32, np.int64]), label="size type")
    size = np.array(data.draw(st.integers(0, 12), label="size"), size_type)
    attrs = {"periodic": data.draw(st.integers(0, 1), label="periodic"), "output_datatype": output_datatype}
    if data.draw(st.booleans(), label="defaults"):  # periodic 1, output_datatype 1 (float)
        attrs = {}
    check_node(op, opset, [size], attrs, expected=known_differences.expected_for(op, opset, [size], attrs))


@pytest.mark.parametrize("op, opset, output_datatype", list(output_type_cases(["MelWeightMatrix"], "T3")))
@SETTINGS
@given(data=st.data())
def test_mel_weight_matrix_matches_the_reference(op, opset, output_datatype, data):
    index_type = data.draw(st.sampled_from([np.int32, np.int64]), label="index type")
    hertz_type = data.draw(st.sampled_from(allowed_dtypes(op, opset, "T2")), label="hertz type")
    mel_bins = data.draw(st.integers(0, 6), label="num_mel_bins")
    dft_length = data.draw(st.integers(1, 24), label="dft_length")
    sample_rate = data.draw(st.sampled_from([8, 100, 8000, 16000, 44100]), label="sample_rate")
    nyquist = sample_rate / 2
    # Edges on a grid of 1/8 Hz that every hertz type holds (float16 to 2048 exactly, beyond as rounded).
    lower = data.draw(st.integers(0, int(nyquist * 8)), label="lower_edge_hertz") / 8
    upper = data.draw(st.integers(int(lower * 8), int(nyquist * 8)), label="upper_edge_hertz") / 8
    inputs = [np.array(mel_bins, index_type), np.array(dft_length, index_type), np.array(sample_rate, index_type),
              np.array(lower, hertz_type), np.array(upper, hertz_type)]
    # The reference writes rows at floor((dft_length + 1) * hz / sample_rate) without a bound: an edge at the
    # Nyquist frequency with an odd dft_length lands one row past the matrix and the reference raises. The spec
    # says nothing of edges beyond the spectrogram; such cases are left out.
    top = np.floor((dft_length + 1) * float(inputs[4]) / sample_rate)
    assume(top <= dft_length // 2)
    check_node(op, opset, inputs, {"output_datatype": output_datatype},
               expected=known_differences.expected_for(op, opset, inputs, {"output_datatype": output_datatype}))


COVERED = {"DFT", "STFT", "MelWeightMatrix", *WINDOWS}
