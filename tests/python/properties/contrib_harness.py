"""Differential runs of one com.microsoft node: nxrt against onnxruntime's CPU provider (a peer, not ground truth)
or, for the types and ops onnxruntime's CPU provider lacks, against a float64 numpy form of the contrib spec
(docs/ContribOperators.md of onnxruntime).

onnx.reference has no com.microsoft ops, so every comparison states its own tolerance next to the test: `rtol`
relative to the expected value and `atol` absolute (both 0 means exact), NaN equals NaN, -0.0 equals 0.0, and
infinities must match in sign. The model imports ai.onnx 21 and com.microsoft 1 (property_harness.node_model)."""

import warnings

import ml_dtypes
import numpy as np
import onnx
import onnxruntime

from property_harness import describe, feeds_of, node_model, run_nxrt, subnormal_atol

MS = "com.microsoft"
BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)

_ORT_OPTIONS = onnxruntime.SessionOptions()
# No fusions or constant folding: onnxruntime runs the one node as the model states it.
_ORT_OPTIONS.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
_ORT_OPTIONS.log_severity_level = 3
_ORT_OPTIONS.intra_op_num_threads = 1


def contrib_model(op, inputs, attrs=None, outputs=1):
    return node_model(op, 1, inputs, attrs, outputs, domain=MS)


def run_onnxruntime(model, inputs, like=None):
    """onnxruntime's outputs for `inputs`. Its Python API has no bfloat16 arrays: where an input or an output is
    bfloat16, the arrays pass as uint16 bits through OrtValues, the outputs into buffers of the dtypes and shapes
    of `like` (nxrt's outputs; onnxruntime refuses a buffer of another shape)."""
    session = onnxruntime.InferenceSession(model.SerializeToString(), _ORT_OPTIONS,
                                           providers=["CPUExecutionProvider"])
    feeds = feeds_of(inputs)
    if not any(a.dtype == BF16 for a in list(feeds.values()) + list(like or [])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [np.asarray(v) for v in session.run(None, feeds)]
    binding = session.io_binding()
    for name, a in feeds.items():
        binding.bind_ortvalue_input(name, _ort_value(np.ascontiguousarray(a)))
    buffers = [np.zeros(r.shape, r.dtype) for r in like]
    for i, buffer in enumerate(buffers):
        binding.bind_ortvalue_output(f"y{i}", _ort_value(buffer))
    session.run_with_iobinding(binding)
    return buffers


def _ort_value(a):
    """An OrtValue over `a`'s memory (bfloat16 as its uint16 bits)."""
    if a.dtype == BF16:
        return onnxruntime.OrtValue.ortvalue_from_numpy_with_onnx_type(a.view(np.uint16), onnx.TensorProto.BFLOAT16)
    return onnxruntime.OrtValue.ortvalue_from_numpy(a)


def assert_close(actual, expected, context, rtol, atol=0.0):
    """Every output: same dtype and shape; floats within max(rtol * |expected|, atol, four of the type's smallest
    subnormals: a result in the subnormal range keeps few digits) or both NaN or equal (infinities of one sign);
    integers within atol. `atol` is a number, an array of the output's shape, or a list of those, one per
    output."""
    assert len(actual) == len(expected), f"{context}: {len(actual)} outputs, expected {len(expected)}"
    atols = atol if isinstance(atol, list) else [atol] * len(expected)
    for i, (a, e, atol) in enumerate(zip(actual, expected, atols)):
        a, e = np.asarray(a), np.asarray(e)
        where = f"{context}: output {i}"
        assert a.dtype == e.dtype, f"{where}: dtype {a.dtype}, expected {e.dtype}"
        assert a.shape == e.shape, f"{where}: shape {a.shape}, expected {e.shape}"
        if a.dtype.kind == "f" or a.dtype == BF16:
            a64, e64 = a.astype(np.float64), e.astype(np.float64)
            with np.errstate(all="ignore"):
                limit = np.maximum(np.maximum(rtol * np.abs(e64), atol), subnormal_atol(a.dtype))
                close = (a64 == e64) | (np.abs(a64 - e64) <= limit)
            bad = ~(close | (np.isnan(a64) & np.isnan(e64)))
        else:
            bad = np.abs(a.astype(np.int64) - e.astype(np.int64)) > atol
        if bad.any():
            index = tuple(int(j) for j in np.argwhere(bad)[0]) if bad.ndim else ()
            raise AssertionError(f"{where}: {int(bad.sum())} of {bad.size} differ; first at {index}: "
                                 f"nxrt {a[index]!r}, expected {e[index]!r}")


def check_contrib(op, inputs, attrs=None, outputs=1, rtol=0.0, atol=0.0, expected=None, peer_inputs=None,
                  defined=None):
    """Runs the node on nxrt and compares with onnxruntime, or with `expected(inputs, attrs)` (a list of arrays:
    the spec's form, where onnxruntime's CPU provider lacks the op or type, or is wrong). `atol` as assert_close
    takes it, or a function of the expected outputs that gives it. `peer_inputs`: the same case as onnxruntime
    takes it (an omitted optional input given its default value, where onnxruntime fails on the omission).
    `defined(outputs)`: the parts of the outputs the op's contract defines (e.g. rows below a sequence length),
    compared instead of the whole outputs."""
    attrs = attrs or {}
    model = contrib_model(op, inputs, attrs, outputs)
    context = describe(op, 1, inputs, attrs)
    try:
        actual = run_nxrt(model, inputs)
    except Exception as error:  # noqa: BLE001 - the message is the finding
        raise AssertionError(f"{context}: nxrt raised {type(error).__name__}: {error}") from None
    if expected is not None:
        with np.errstate(all="ignore"):
            reference = [np.asarray(r) for r in expected(inputs, attrs)]
    else:
        if peer_inputs is None:
            reference = run_onnxruntime(model, inputs, like=actual)
        else:
            reference = run_onnxruntime(contrib_model(op, peer_inputs, attrs, outputs), peer_inputs, like=actual)
    if defined is not None:
        actual, reference = defined(actual), defined(reference)
    assert_close(actual, reference, context, rtol, atol(reference) if callable(atol) else atol)


def wide(a):
    """float64 copy of a float array (any width)."""
    return np.asarray(a).astype(np.float64)


def rounded(values, dtype):
    """float64 results rounded once to `dtype` (overflow gives the type's infinities)."""
    with np.errstate(all="ignore"):
        return np.asarray(values, np.float64).astype(dtype)
