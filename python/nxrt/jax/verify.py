"""verify: run a JAX callable and its exported model on the same random inputs and report the largest error."""

import dataclasses

import numpy as np
import onnx

from nxrt.jax.export import DOUBLE_PRECISION_KEY, x64_mode

__all__ = ["VerifyResult", "verify", "random_inputs"]

DEFAULT_SIZES = (3, 1, 5, 2, 4, 7)
_ONNX_TO_NUMPY = {
    onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.DOUBLE: np.float64, onnx.TensorProto.FLOAT16: np.float16,
    onnx.TensorProto.INT8: np.int8, onnx.TensorProto.INT16: np.int16, onnx.TensorProto.INT32: np.int32,
    onnx.TensorProto.INT64: np.int64, onnx.TensorProto.UINT8: np.uint8, onnx.TensorProto.UINT16: np.uint16,
    onnx.TensorProto.UINT32: np.uint32, onnx.TensorProto.UINT64: np.uint64, onnx.TensorProto.BOOL: np.bool_,
}


@dataclasses.dataclass
class VerifyResult:
    """Largest error per runtime over all trials.

    ``max_error`` is max |got - want| / max(1, |want|) (absolute for small values, relative for large ones);
    ``max_abs_error`` the plain absolute difference. ``skipped`` maps a runtime to the reason it could not run
    the model (only runtimes other than nxrt are skipped; nxrt failures raise).
    """

    max_error: dict
    max_abs_error: dict
    trials: list
    skipped: dict

    def ok(self, tolerance):
        return all(e <= tolerance for e in self.max_error.values())

    def __str__(self):
        parts = [f"{rt}: max error {e:.3g} (abs {self.max_abs_error[rt]:.3g})" for rt, e in self.max_error.items()]
        parts += [f"{rt}: skipped ({why})" for rt, why in self.skipped.items()]
        return f"verify over {len(self.trials)} trials: " + "; ".join(parts)


def _model_inputs(model):
    initializers = {t.name for t in model.graph.initializer}
    specs = []
    for vi in model.graph.input:
        if vi.name in initializers:
            continue
        tensor = vi.type.tensor_type
        dims = [d.dim_param if d.HasField("dim_param") else int(d.dim_value) for d in tensor.shape.dim]
        specs.append((vi.name, np.dtype(_ONNX_TO_NUMPY[tensor.elem_type]), dims))
    return specs


def random_inputs(specs, sizes, rng, int_range=(0, 4)):
    """Random arrays for (name, dtype, dims) specs; symbolic dims take their value from ``sizes``."""
    out = {}
    for name, dtype, dims in specs:
        shape = tuple(sizes[d] if isinstance(d, str) else d for d in dims)
        if dtype == np.bool_:
            out[name] = rng.random(shape) < 0.5
        elif np.issubdtype(dtype, np.integer):
            low, high = int_range
            if np.issubdtype(dtype, np.unsignedinteger):
                low = max(low, 0)
            out[name] = rng.integers(low, high, size=shape).astype(dtype)
        else:
            out[name] = rng.standard_normal(shape).astype(dtype)
    return out


def _error(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        raise AssertionError(f"shape mismatch: got {got.shape}, expected {want.shape}")
    if got.dtype != want.dtype:
        raise AssertionError(f"dtype mismatch: got {got.dtype}, expected {want.dtype}")
    if got.size == 0:
        return 0.0, 0.0
    if want.dtype == np.bool_ or np.issubdtype(want.dtype, np.integer):
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        return float(diff.max()), float(diff.max())
    g, w = got.astype(np.float64), want.astype(np.float64)
    same = (np.isnan(g) & np.isnan(w)) | (g == w)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(same, 0.0, np.abs(g - w))
    diff = np.where(np.isnan(diff), np.inf, diff)
    return float((diff / np.maximum(1.0, np.abs(np.where(np.isfinite(w), w, 0.0)))).max()), float(diff.max())


def _runner(runtime, model_bytes):
    if runtime == "nxrt":
        import nxrt
        session = nxrt.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    elif runtime == "onnxruntime":
        import onnxruntime
        session = onnxruntime.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    else:
        raise ValueError(f"unknown runtime '{runtime}'")
    return lambda feeds: session.run(None, feeds)


def verify(fn, model, n=3, *, input_params=None, dims=None, seed=0, int_range=(0, 4), inputs=None,
           runtimes=("nxrt",), enable_double_precision=None, require_first=False):
    """Runs ``fn`` under JAX and ``model`` (ModelProto, bytes or path) on the same random inputs ``n`` times.

    Every symbolic dimension takes a different concrete size in each trial (from ``dims[name]`` when given, a
    list of sizes to cycle through). ``inputs(rng, sizes)`` may supply the positional inputs itself (a list of
    arrays); integer inputs are otherwise drawn from ``int_range``. ``input_params`` are the keyword arguments
    given to to_onnx (array-valued ones are graph inputs and drawn at random too). Returns a VerifyResult; nxrt
    (or, with ``require_first``, the first runtime listed) failures raise, other runtimes that cannot load the
    model are reported in ``skipped``.
    """
    import jax

    if isinstance(model, (str, bytes)) and not isinstance(model, bytes):
        model = onnx.load(model)
    elif isinstance(model, bytes):
        model = onnx.load_from_string(model)
    props = {p.key: p.value for p in model.metadata_props}
    x64 = props.get(DOUBLE_PRECISION_KEY) == "1" if enable_double_precision is None else enable_double_precision
    model_bytes = model.SerializeToString()
    specs = _model_inputs(model)
    params = dict(input_params or {})
    dynamic = [k for k, v in params.items() if hasattr(v, "shape") and hasattr(v, "dtype")]
    static = {k: v for k, v in params.items() if k not in dynamic}
    n_positional = len(specs) - len(dynamic)
    symbols = sorted({d for _, _, ds in specs for d in ds if isinstance(d, str)})
    runners, skipped = {}, {}
    required = runtimes[0] if require_first else "nxrt"
    for runtime in runtimes:
        try:
            runners[runtime] = _runner(runtime, model_bytes)
        except Exception as error:  # a reference runtime that cannot load the model is reported, not fatal
            if runtime == required:
                raise
            skipped[runtime] = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
    rng = np.random.default_rng(seed)
    max_error = {rt: 0.0 for rt in runners}
    max_abs = {rt: 0.0 for rt in runners}
    trials = []
    for trial in range(n):
        sizes = {}
        for k, sym in enumerate(symbols):
            choices = (dims or {}).get(sym, DEFAULT_SIZES)
            sizes[sym] = int(choices[(trial + k) % len(choices)])
        feeds = random_inputs(specs, sizes, rng, int_range)
        if inputs is not None:
            given = inputs(rng, sizes)
            feeds.update({name: np.asarray(v) for (name, _, _), v in zip(specs, given)})
        with x64_mode(x64):
            args = [jax.numpy.asarray(feeds[name]) for name, _, _ in specs]
            kwargs = dict(static)
            kwargs.update(zip(dynamic, args[n_positional:]))
            want = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(fn(*args[:n_positional], **kwargs))]
        record = {"sizes": sizes, "errors": {}}
        for runtime, run in runners.items():
            try:
                got = run(feeds)
            except Exception as error:
                if runtime == required:
                    raise
                skipped[runtime] = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
                continue
            if len(got) != len(want):
                raise AssertionError(f"{runtime}: {len(got)} outputs, JAX gave {len(want)}")
            errors = [_error(g, w) for g, w in zip(got, want)]
            rel = max((e for e, _ in errors), default=0.0)
            ab = max((a for _, a in errors), default=0.0)
            record["errors"][runtime] = rel
            max_error[runtime] = max(max_error[runtime], rel)
            max_abs[runtime] = max(max_abs[runtime], ab)
        trials.append(record)
    for runtime in skipped:
        max_error.pop(runtime, None)
        max_abs.pop(runtime, None)
    return VerifyResult(max_error, max_abs, trials, skipped)
