"""Differential runs of one ONNX node: nxrt against onnx.reference.ReferenceEvaluator on the same inputs.

A case is (op, opset, inputs, attributes). `check_node` builds a one-node model at that opset, runs both, and
compares every output: same dtype and shape, values within the tolerance of the dtype (rtol 1e-3 for float16 and
bfloat16, 1e-5 for float32, 1e-7 for float64, exact for integers, bools and strings; atol 0; NaN equals NaN, and
-0.0 equals 0.0). Where the reference itself is wrong for a case, known_differences/ says what to compare
against instead, and why.

NXRT_PROPERTY_EXAMPLES sets hypothesis' example count per test (default: the short deterministic CI run); the
examples are derandomized, so a CI failure reproduces locally with the same count. long_run.py is the long mode:
at least 500 passing examples per operator, counted from hypothesis' statistics."""

import os
import warnings

import ml_dtypes
import numpy as np
import onnx
import onnx.defs
import onnx.numpy_helper
from hypothesis import HealthCheck, settings
from onnx import helper
from onnx.reference import ReferenceEvaluator

import nxrt

EXAMPLES = int(os.environ.get("NXRT_PROPERTY_EXAMPLES", "12"))
# Every property test: deterministic, no example database, no per-example deadline (a first session creation
# compiles nothing, but the reference evaluator is slow on some ops).
SETTINGS = settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck))
# long_run.py sets NXRT_PROPERTY_UNSCALED=1: every test then runs NXRT_PROPERTY_EXAMPLES examples, where the CI
# run gives some suites (copies of data, slow references) a fraction of them through scaled().
UNSCALED = os.environ.get("NXRT_PROPERTY_UNSCALED") == "1"


def scaled(divisor, minimum):
    """SETTINGS with EXAMPLES // divisor examples (at least `minimum`), or EXAMPLES in the long run."""
    return settings(SETTINGS, max_examples=EXAMPLES if UNSCALED else max(minimum, EXAMPLES // divisor))

# ONNX type strings of the type constraints -> numpy dtypes (the ones these tests generate).
NUMPY_OF_TYPE = {
    "tensor(float)": np.dtype(np.float32), "tensor(double)": np.dtype(np.float64),
    "tensor(float16)": np.dtype(np.float16), "tensor(bfloat16)": np.dtype(ml_dtypes.bfloat16),
    "tensor(int8)": np.dtype(np.int8), "tensor(int16)": np.dtype(np.int16), "tensor(int32)": np.dtype(np.int32),
    "tensor(int64)": np.dtype(np.int64), "tensor(uint8)": np.dtype(np.uint8), "tensor(uint16)": np.dtype(np.uint16),
    "tensor(uint32)": np.dtype(np.uint32), "tensor(uint64)": np.dtype(np.uint64), "tensor(bool)": np.dtype(np.bool_),
    "tensor(string)": np.dtype(object),
}
# The float8 formats: generated (property_values) and compared (assert_same, NaN == NaN) like the others, but
# offered by allowed_dtypes / op_cases only when asked for (float8=True), so suites written before them keep their
# cases until they are checked with them.
FLOAT8_OF_TYPE = {
    "tensor(float8e4m3fn)": np.dtype(ml_dtypes.float8_e4m3fn),
    "tensor(float8e4m3fnuz)": np.dtype(ml_dtypes.float8_e4m3fnuz),
    "tensor(float8e5m2)": np.dtype(ml_dtypes.float8_e5m2),
    "tensor(float8e5m2fnuz)": np.dtype(ml_dtypes.float8_e5m2fnuz),
}
NUMPY_OF_TYPE.update(FLOAT8_OF_TYPE)
FLOAT8 = tuple(FLOAT8_OF_TYPE.values())
RTOL = {np.dtype(np.float16): 1e-3, np.dtype(ml_dtypes.bfloat16): 1e-3 * 8, np.dtype(np.float32): 1e-5,
        np.dtype(np.float64): 1e-7}


def elem_type(dtype):
    if dtype == np.dtype(object):
        return onnx.TensorProto.STRING
    if dtype == np.dtype(ml_dtypes.bfloat16):
        return onnx.TensorProto.BFLOAT16
    return helper.np_dtype_to_tensor_dtype(dtype)


def versions(op, domain="", first=7):
    """The opset versions at which `op`'s schema changed, from `first` on (the version in force before `first`
    counts as `first`)."""
    since = sorted(s.since_version for s in onnx.defs.get_all_schemas_with_history()
                   if s.name == op and s.domain == domain)
    kept = [v for v in since if v >= first]
    if any(v < first for v in since) and first not in kept:
        kept.insert(0, first)
    return kept


def allowed_dtypes(op, opset, type_param="T", domain="", float8=False):
    """numpy dtypes of type constraint `type_param` of `op` at `opset` that these tests can generate (the float8
    formats only with float8=True)."""
    schema = onnx.defs.get_schema(op, opset, domain)
    for constraint in schema.type_constraints:
        if constraint.type_param_str == type_param:
            return [NUMPY_OF_TYPE[t] for t in constraint.allowed_type_strs
                    if t in NUMPY_OF_TYPE and (float8 or t not in FLOAT8_OF_TYPE)]
    raise KeyError(f"{op}-{opset} has no type constraint {type_param}")


def op_cases(ops, type_param="T", first=7, with_op=True, float8=False):
    """pytest params for each op of `ops` (one name or several) at each of its versions() from `first` and each
    dtype of its `type_param` constraint there: (op, opset, dtype), or (opset, dtype) without the op."""
    import pytest

    for op in [ops] if isinstance(ops, str) else ops:
        for opset in versions(op, first=first):
            for dtype in allowed_dtypes(op, opset, type_param, float8=float8):
                values = (op, opset, dtype) if with_op else (opset, dtype)
                yield pytest.param(*values, id=f"{op}-{opset}-{dtype}")


def node_model(op, opset, inputs, attrs=None, outputs=1, domain="", node_inputs=None):
    """One-node model bytes; `inputs` are arrays (None: an omitted optional input), graph inputs x0, x1, ... which
    are the node's inputs too unless `node_inputs` names the node's (the others are then read only by subgraphs)."""
    names = ["" if a is None else f"x{i}" for i, a in enumerate(inputs)]
    infos = [helper.make_tensor_value_info(n, elem_type(a.dtype), list(a.shape))
             for n, a in zip(names, inputs) if a is not None]
    out_names = [f"y{i}" for i in range(outputs)]
    node = helper.make_node(op, names if node_inputs is None else node_inputs, out_names, domain=domain,
                            **(attrs or {}))
    graph = helper.make_graph([node], "property", infos, [helper.make_empty_tensor_value_info(n) for n in out_names])
    imports = [helper.make_opsetid("", opset if domain == "" else 21)]
    if domain:
        imports.append(helper.make_opsetid(domain, opset))
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 10 if opset >= 21 else 8
    return model


def feeds_of(inputs):
    return {f"x{i}": a for i, a in enumerate(inputs) if a is not None}


def run_reference(model, inputs):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return [np.asarray(v) for v in ReferenceEvaluator(model).run(None, feeds_of(inputs))]


def run_nxrt(model, inputs):
    feeds = feeds_of(inputs)
    # nxrt's Python binding refuses float8_e5m2 arrays (ml_dtypes gives that type numpy's kind 'f' with one byte,
    # which python/src/numpy_interop.cpp maps to no type before it looks at its ml_dtypes table): such inputs
    # travel as initializers of the model instead of feeds.
    unfeedable = [name for name, a in feeds.items() if a.dtype == np.dtype(ml_dtypes.float8_e5m2)]
    if unfeedable:
        model = model.__class__.FromString(model.SerializeToString())
        kept = [i for i in model.graph.input if i.name not in unfeedable]
        del model.graph.input[:]
        model.graph.input.extend(kept)
        model.graph.initializer.extend(onnx.numpy_helper.from_array(feeds.pop(name), name) for name in unfeedable)
    session = nxrt.InferenceSession(model.SerializeToString())
    return session.run(None, feeds)


def describe(op, opset, inputs, attrs):
    shown = ", ".join(f"{a.dtype}{list(a.shape)}={a.ravel()[:8].tolist()}" if a is not None else "None"
                      for a in inputs)
    return f"{op}-{opset} attrs={attrs} inputs: {shown}"


def subnormal_atol(dtype):
    """Results in a float type's subnormal range keep only a few digits, so they may differ by up to four of its
    smallest subnormals (Selu(-5e-324) is 3 of them; a reference that rounds an intermediate step lands on 4)."""
    info = ml_dtypes.finfo(dtype) if dtype == np.dtype(ml_dtypes.bfloat16) else np.finfo(dtype)
    return 4 * float(info.smallest_subnormal)


def assert_same(actual, expected, context, atol=0.0):
    assert len(actual) == len(expected), f"{context}: {len(actual)} outputs, reference {len(expected)}"
    for i, (a, e) in enumerate(zip(actual, expected)):
        a, e = np.asarray(a), np.asarray(e)
        if e.dtype.kind in "US":  # the reference returns some string outputs as numpy unicode arrays
            e = e.astype(object)
        where = f"{context}: output {i}"
        assert a.dtype == e.dtype, f"{where}: dtype {a.dtype}, reference {e.dtype}"
        assert a.shape == e.shape, f"{where}: shape {a.shape}, reference {e.shape}"
        if a.dtype == object:
            assert a.tolist() == e.tolist(), f"{where}: {a.ravel()[:8].tolist()} != {e.ravel()[:8].tolist()}"
            continue
        if a.dtype in FLOAT8:  # exact, as floats: NaN equals NaN (whatever its sign), -0.0 equals 0.0
            a, e = a.astype(np.float32), e.astype(np.float32)
            bad = ~((a == e) | (np.isnan(a) & np.isnan(e)))
            if bad.any():
                index = tuple(int(j) for j in np.argwhere(bad)[0]) if bad.ndim else ()
                raise AssertionError(f"{where}: {int(bad.sum())} of {bad.size} differ; first at {index}: "
                                     f"nxrt {a[index]!r}, reference {e[index]!r}")
            continue
        if a.dtype in RTOL:
            a64, e64 = a.astype(np.float64), e.astype(np.float64)
            both_nan = np.isnan(a64) & np.isnan(e64)
            with np.errstate(all="ignore"):
                limit = np.maximum(RTOL[a.dtype] * np.abs(e64), max(atol, subnormal_atol(a.dtype)))
                close = (a64 == e64) | (np.abs(a64 - e64) <= limit)
            bad = ~(close | both_nan)
        else:
            bad = a != e
        if bad.any():
            index = tuple(int(j) for j in np.argwhere(bad)[0]) if bad.ndim else ()
            raise AssertionError(f"{where}: {int(bad.sum())} of {bad.size} differ; first at {index}: "
                                 f"nxrt {a[index]!r}, reference {e[index]!r}")


HALF = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def reference_in_float(op, opset, inputs, attrs, outputs, domain, elementwise=0):
    """The reference evaluated on float32 copies of float16 / bfloat16 inputs, its float32 results rounded back
    to the op's half type once. For an element-wise op (`elementwise` > 0: its first `elementwise` inputs
    broadcast together; the others, e.g. Clip's bounds, pass as they are) those inputs are also broadcast and
    flattened to one dimension and the results reshaped. known_differences/elementwise.py says why: the
    reference rounds half types after every step and fails on some rank-0 inputs."""
    present = [a for a in inputs[:elementwise] if a is not None]
    shape = np.broadcast_shapes(*(a.shape for a in present)) if elementwise else None
    # The op's float type is that of its first float input (Pow's base, Where's x); its results come back in it.
    first_float = next((a.dtype for a in inputs if a is not None and (a.dtype.kind == "f" or a.dtype in HALF)), None)
    half = first_float if first_float in HALF else None

    def prepared(a, i):
        if a is None:
            return None
        if i < elementwise:
            a = np.broadcast_to(a, shape).reshape(-1)
        return a.astype(np.float32) if a.dtype in HALF else a

    flat = [prepared(a, i) for i, a in enumerate(inputs)]
    results = run_reference(node_model(op, opset, flat, attrs, outputs, domain), flat)
    with np.errstate(all="ignore"):  # rounding back overflows to inf where the value exceeds the half type
        back = [r.astype(half) if half is not None and r.dtype == np.float32 else r for r in results]
    return [r.reshape(shape) for r in back] if elementwise else back


def check_node(op, opset, inputs, attrs=None, outputs=1, domain="", expected=None, elementwise=0, atol=0.0,
               half_in_float=False, node_inputs=None):
    """Runs the case on nxrt and compares with the reference (or with `expected`, a function of the inputs that
    replaces the reference where known_differences/ documents the reference as wrong). `elementwise` > 0: the
    op is element-wise over its first `elementwise` inputs, and half_in_float: an op whose half-type results are
    the float32 ones rounded once (see reference_in_float). `atol`: an absolute tolerance that
    known_differences/ states for an nxrt kernel (0 elsewhere)."""
    attrs = attrs or {}
    model = node_model(op, opset, inputs, attrs, outputs, domain, node_inputs)
    context = describe(op, opset, inputs, attrs)
    if expected is not None:
        reference = expected(inputs, attrs)
    elif elementwise or half_in_float:
        reference = reference_in_float(op, opset, inputs, attrs, outputs, domain, elementwise)
    else:
        reference = run_reference(model, inputs)
    try:
        actual = run_nxrt(model, inputs)
    except Exception as error:  # noqa: BLE001 - the message is the finding
        raise AssertionError(f"{context}: nxrt raised {type(error).__name__}: {error}") from None
    assert_same(actual, reference, context, atol)
