"""Export-and-check helper shared by the nxrt.jax tests: export with nxrt.jax.to_onnx, run JAX, nxrt and
onnxruntime on random inputs with nxrt.jax.verify, and require agreement within 1e-5 (f32) / 1e-10 (f64)."""

import onnx
import pytest

import nxrt.jax

F32_TOL = 1e-5
F64_TOL = 1e-10
_WORST = {}


def _missing_op(error):
    text = f"{type(error).__name__}: {error}"
    if type(error).__name__ == "NotImplemented" or "NOT_IMPLEMENTED" in text:
        return text.splitlines()[0][:300]
    return None


def check(fn, inputs, *, x64=False, tol=None, n=2, dims=None, int_range=(0, 4), input_gen=None, ort=True,
          ort_tol=None, **export_kwargs):
    """Exports ``fn``, verifies it against JAX and returns (model, VerifyResult)."""
    model = nxrt.jax.to_onnx(fn, inputs, enable_double_precision=x64, **export_kwargs)
    onnx.checker.check_model(model)
    runtimes = ("nxrt", "onnxruntime") if ort else ("nxrt",)
    try:
        result = nxrt.jax.verify(fn, model, n=n, dims=dims, int_range=int_range, inputs=input_gen,
                                 runtimes=runtimes, input_params=export_kwargs.get("input_params"))
    except Exception as error:
        missing = _missing_op(error)
        if not missing:
            raise
        # Still check the export itself on onnxruntime, then skip: nxrt did not run it.
        if ort:
            try:
                reference = nxrt.jax.verify(fn, model, n=n, dims=dims, int_range=int_range, inputs=input_gen,
                                            runtimes=("onnxruntime",), require_first=True,
                                            input_params=export_kwargs.get("input_params"))
            except Exception as ort_error:
                if not _missing_op(ort_error):
                    raise
                pytest.skip(f"nxrt and onnxruntime are missing an op this model needs: {missing}")
            limit = ort_tol if ort_tol is not None else (tol if tol is not None else (F64_TOL if x64 else F32_TOL))
            assert reference.max_error["onnxruntime"] <= limit, f"onnxruntime: {reference}"
        pytest.skip(f"nxrt is missing an op this model needs: {missing}")
    kind = "f64" if x64 else "f32"
    if tol is not None:
        kind += f", cases checked at {tol:g}"
    tol = tol if tol is not None else (F64_TOL if x64 else F32_TOL)
    for runtime, err in result.max_error.items():
        key = (runtime, kind)
        _WORST[key] = max(_WORST.get(key, 0.0), err)
        limit = tol if runtime == "nxrt" or ort_tol is None else ort_tol
        assert err <= limit, f"{runtime}: {result}"
    return model, result


def optional_module(name):
    """Imports `name` (flax.nnx, equinox); when it is not installed, skips the calling test, or the whole module
    when called at module level, with a reason naming the package."""
    package = name.split(".")[0]
    return pytest.importorskip(name, reason=f"needs {package} (requirements/heavy.txt)")


def error_summary():
    return [f"nxrt.jax max error ({runtime}, {kind}): {err:.3g}" for (runtime, kind), err in sorted(_WORST.items())]


def op_types(model):
    """Every op type in the main graph (not subgraphs or functions)."""
    return [node.op_type for node in model.graph.node]
