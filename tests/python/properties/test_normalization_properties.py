"""Normalization operators on generated inputs, against the ONNX reference: BatchNormalization (inference and
training mode, with the training outputs its schema has at each version, spatial 0 at opset 7, mixed parameter
types from opset 14), LayerNormalization (every axis, negative ones too, with and without B, Mean / InvStdDev
outputs), InstanceNormalization, GroupNormalization (both versions: per-group then per-channel scale and bias,
every num_groups that divides C), RMSNormalization (every axis, scale of another float type),
LpNormalization (p 1 and 2, every axis) and MeanVarianceNormalization (any non-empty set of axes, negative ones
too, and the default), at every opset version where their schema changed (from 7) and every float dtype.

Values hold NaN, infinities, -0.0, subnormals and magnitudes up to 2^24 (float16: 2^14), and shapes hold zero-size
dims. Larger magnitudes are left out: their squares overflow float32, the precision the reference (and the
spec's default stash_type) computes statistics in, while nxrt accumulates them in double, so the two differ by
design (docs/numerics.md). A statistic of values that cancel beyond the type's precision (the variance of
1 + eps and 1) has no single answer at that precision either: a case is compared only where the reference
computed in the dtype (float32 for half types, rounded once) agrees with it computed in float64 to half the
tolerance (float64 cases: the spec's formula in float64 and in long double; `agrees_in_float64`), and where adding
the bias does not cancel the normalized value beyond the tolerance (`bias_cancels`)."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import known_differences
from property_harness import RTOL, SETTINGS, allowed_dtypes, check_node, node_model, op_cases, run_reference
from property_values import arrays, is_float, shapes, special_values

# --- values and the conditioning filter -----------------------------------------------------------------------


def bound_of(dtype):
    return 2.0 ** 14 if dtype == np.float16 else 2.0 ** 24


def norm_values(dtype):
    """Float scalars of `dtype`: the special values up to bound_of(dtype) (NaN and infinities included), ordinary
    ones in [-10, 10], up to the bound, and tiny ones."""
    bound = bound_of(dtype)
    specials = [v for v in special_values(dtype) if not np.isfinite(v) or abs(v) <= bound]
    width = 16 if dtype == np.float16 else 32 if dtype in (np.float32, ml_dtypes.bfloat16) else 64
    ordinary = st.one_of(st.floats(-10, 10, width=width), st.floats(-bound, bound, width=width),
                         st.floats(-2.0 ** -20, 2.0 ** -20, width=width))
    return st.one_of(st.sampled_from(specials), ordinary, ordinary).map(
        lambda v: float(np.array(v, dtype).astype(np.float64)))


def norm_arrays(dtype, shape):
    return arrays(dtype, shape, norm_values(dtype))


def _close(narrow, wide, dtype):
    """narrow and wide (float64 arrays) agree within half the tolerance of `dtype` once both are rounded to it."""
    with np.errstate(all="ignore"):
        n, w = narrow.astype(dtype).astype(np.float64), wide.astype(dtype).astype(np.float64)
        info = ml_dtypes.finfo(dtype) if dtype == ml_dtypes.bfloat16 else np.finfo(dtype)
        limit = np.maximum(RTOL[np.dtype(dtype)] / 2 * np.abs(w), 2 * float(info.smallest_subnormal))
        return bool(((n == w) | (np.isnan(n) & np.isnan(w)) | (np.abs(n - w) <= limit)).all())


def agrees_in_float64(evaluate, inputs, out_dtypes, formula):
    """Whether each output has one answer at its dtype's precision. Outputs below float64: `evaluate` (a list of
    inputs -> a list of outputs) on float32 copies of the float inputs agrees with it on float64 copies, within
    half the tolerance of the output's dtype; where it does not, the values cancel or round beyond the dtype's
    precision and two correct float32 evaluation orders may differ. float64 outputs: `formula` (inputs, compute
    type -> outputs) in float64 agrees with it in long double (the reference runs in no wider type). An empty X
    has no values to round."""
    if inputs[0].size == 0:
        return True

    def copies(wide):
        return [None if a is None else a.astype(wide) if is_float(a.dtype) else a for a in inputs]

    pairs = {}  # computed once, for the outputs that need them
    for i, dtype in enumerate(out_dtypes):
        wide = np.dtype(dtype) == np.float64
        if wide not in pairs:
            pairs[wide] = (formula(inputs, np.float64), formula(inputs, np.longdouble)) if wide else \
                (evaluate(copies(np.float32)), evaluate(copies(np.float64)))
        narrow, exact = pairs[wide]
        if not _close(np.asarray(narrow[i], np.float64), np.asarray(exact[i], np.float64), dtype):
            return False
    return True


def bias_cancels(formula, inputs, dtype):
    """Whether Y = T + B (T: X normalized and scaled, B: input 2) cancels beyond the tolerance of `dtype`: two float
    evaluations, each within a few roundings of |T| + |B|, may then differ by more than rtol * |Y| (-1 + 1 is 0
    by one and 6e-8 by another; the f32-vs-f64 agreement misses it where both land on the same value). T and Y
    come from `formula` in long double."""
    if len(inputs) < 3 or inputs[2] is None or inputs[0].size == 0:
        return False
    unbiased = [*inputs[:2], np.zeros_like(inputs[2]), *inputs[3:]]
    y = np.asarray(formula(inputs, np.longdouble)[0], np.float64)
    t = np.asarray(formula(unbiased, np.longdouble)[0], np.float64)
    unit = float(np.finfo(np.float64 if dtype == np.float64 else np.float32).eps) / 2
    info = ml_dtypes.finfo(dtype) if dtype == ml_dtypes.bfloat16 else np.finfo(dtype)
    with np.errstate(all="ignore"):
        error = 10 * unit * (np.abs(t) + np.abs(y - t))  # five roundings on either side
        return bool((np.isfinite(error) & (error > RTOL[np.dtype(dtype)] * np.abs(y))
                     & (error > 4 * float(info.smallest_subnormal))).any())


def _moments(values, axes):
    mean = values.mean(axis=axes, keepdims=True)
    return mean, ((values - mean) ** 2).mean(axis=axes, keepdims=True)


def formula_of(op, opset, attrs, outputs=1):
    """The spec's math of LayerNormalization, RMSNormalization, InstanceNormalization or GroupNormalization as a
    function (inputs, compute type -> outputs), for conditioning float64 cases in long double."""
    epsilon = float(np.float32(attrs.get("epsilon", 1e-5)))

    def evaluate(inputs, compute):
        x, *params = [a.astype(compute) for a in inputs]
        channels = (1, -1) + (1,) * (x.ndim - 2)
        with np.errstate(all="ignore"):
            if op == "RMSNormalization":
                axes = tuple(range(attrs["axis"] % x.ndim, x.ndim))
                return [x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + epsilon) * params[0]]
            if op == "LayerNormalization":
                mean, variance = _moments(x, tuple(range(attrs["axis"] % x.ndim, x.ndim)))
                inv_std = 1 / np.sqrt(variance + epsilon)
                return [(x - mean) * inv_std * params[0] + (params[1] if len(params) > 1 else 0), mean,
                        inv_std][:outputs]
            if op == "InstanceNormalization":
                mean, variance = _moments(x, tuple(range(2, x.ndim)))
                return [(x - mean) / np.sqrt(variance + epsilon) * params[0].reshape(channels)
                        + params[1].reshape(channels)]
            groups = attrs["num_groups"]  # GroupNormalization: per-group parameters before opset 21
            grouped = x.reshape(x.shape[0], groups, -1)
            mean, variance = _moments(grouped, (2,))
            normalized = ((grouped - mean) / np.sqrt(variance + epsilon)).reshape(x.shape)
            scale, bias = (p if opset >= 21 else np.repeat(p, x.shape[1] // groups) for p in params)
            return [normalized * scale.reshape(channels) + bias.reshape(channels)]

    return evaluate


def reference_of(op, opset, attrs, outputs=1):
    return lambda inputs: run_reference(node_model(op, opset, inputs, attrs, outputs), inputs)


def first(outputs, expected):
    """`expected` (a full list of outputs) cut to the first `outputs`; None stays None."""
    return None if expected is None else (lambda inputs, attrs: expected(inputs, attrs)[:outputs])


EPSILONS = st.sampled_from([None, 0.0, 1e-3, 0.5])


def with_epsilon(data, attrs):
    epsilon = data.draw(EPSILONS, label="epsilon")
    if epsilon is not None:
        attrs["epsilon"] = epsilon
    return attrs


def channel_input(data, dtype, min_rank=2):
    """[N, C, spatial...] with rank 2 to 4 and zero-size N, C or spatial dims."""
    return data.draw(norm_arrays(dtype, shapes(min_rank=min_rank, max_rank=4, max_side=3)), label="X")


# --- BatchNormalization ---------------------------------------------------------------------------------------


def batch_norm_case(data, opset, dtype, spatial):
    x = channel_input(data, dtype)
    params = (x.shape[1],) if spatial else x.shape[1:]
    # From opset 14 the running statistics have their own type (U, then T2), and from 15 scale / bias theirs (T1).
    stat_type = data.draw(st.sampled_from(allowed_dtypes("BatchNormalization", opset, "T2" if opset >= 15 else "U")),
                          label="mean type") if opset >= 14 else dtype
    param_type = data.draw(st.sampled_from(allowed_dtypes("BatchNormalization", opset, "T1")),
                           label="scale type") if opset >= 15 else dtype
    scale, bias = (data.draw(norm_arrays(param_type, params), label=name) for name in ("scale", "B"))
    mean = data.draw(norm_arrays(stat_type, params), label="mean")
    var = data.draw(norm_arrays(stat_type, params), label="var")
    return [x, scale, bias, mean, var]


@pytest.mark.parametrize("op, opset, dtype", list(op_cases("BatchNormalization")))
@SETTINGS
@given(data=st.data())
def test_batch_normalization_matches_the_reference(op, opset, dtype, data):
    spatial = data.draw(st.integers(0, 1), label="spatial") if opset < 9 else 1
    inputs = batch_norm_case(data, opset, dtype, spatial)
    x = inputs[0]
    attrs = with_epsilon(data, {} if opset >= 9 else {"spatial": spatial})
    # Training mode: before opset 14 requested by the optional outputs (five), from 14 by training_mode (three).
    training = data.draw(st.booleans(), label="training")
    outputs = 1
    if training:
        reduced = x.shape[0] * int(np.prod(x.shape[2:])) if spatial else x.shape[0]
        # The batch mean of an empty set (N or a spatial dim 0, with channels) is undefined in the spec
        # (ReduceMean of no values).
        assume(reduced > 0 or inputs[3].size == 0)
        attrs["momentum"] = data.draw(st.sampled_from([0.0, 0.5, 0.9, 1.0]), label="momentum")
        outputs = 5 if opset < 14 else data.draw(st.integers(1, 3), label="outputs")
        if opset >= 14:
            attrs["training_mode"] = 1
    stat_type = inputs[3].dtype
    out_dtypes = [dtype, stat_type, stat_type, dtype, dtype][:outputs]

    def spec(case, compute=None):
        return known_differences.batch_norm_by_the_spec(opset, case, attrs, training, compute)[:outputs]

    # Conditioned as the reference computes (its scale * (x - mean) may underflow where the spec's order does not);
    # before opset 14, where the reference has no working form, as the spec's formulas compute.
    evaluate = reference_of(op, opset, attrs, outputs) if opset >= 14 else lambda case: spec(case, case[0].dtype)
    assume(agrees_in_float64(evaluate, inputs, out_dtypes, spec) and not bias_cancels(spec, inputs, dtype))
    expected = first(outputs, known_differences.expected_for(op, opset, inputs, attrs))
    if training and opset < 14:  # the same difference: the reference has no working training mode before 14
        expected = lambda case, _: spec(case)  # noqa: E731
    check_node(op, opset, inputs, attrs, outputs=outputs, expected=expected, half_in_float=True)


# --- LayerNormalization and RMSNormalization ------------------------------------------------------------------


def row_norm_case(data, dtype, param_type):
    """X of rank 1 to 4, an axis in [-rank, rank), and a parameter broadcastable to the normalized dims: a suffix of
    X.shape[axis:] with some dims 1."""
    x = data.draw(norm_arrays(dtype, shapes(min_rank=1, max_rank=4, max_side=3)), label="X")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    normalized = x.shape[axis:]
    kept = data.draw(st.integers(0, len(normalized)), label="parameter rank")

    def parameter(label):
        dims = [d if data.draw(st.booleans(), label=f"{label} keeps dim {i}") else 1
                for i, d in enumerate(normalized[len(normalized) - kept:])]
        return data.draw(norm_arrays(param_type, tuple(dims)), label=label)

    return x, axis, parameter


@pytest.mark.parametrize("op, opset, dtype", list(op_cases("LayerNormalization")))
@SETTINGS
@given(data=st.data())
def test_layer_normalization_matches_the_reference(op, opset, dtype, data):
    x, axis, parameter = row_norm_case(data, dtype, dtype)
    inputs = [x, parameter("Scale")]
    if data.draw(st.booleans(), label="has B"):
        inputs.append(parameter("B"))
    # stash_type stays 1 (float32): the reference implements no other.
    attrs = with_epsilon(data, {"axis": axis})
    outputs = data.draw(st.integers(1, 3), label="outputs")
    out_dtypes = [dtype] + [np.dtype(np.float32)] * (outputs - 1)
    formula = formula_of(op, opset, attrs, outputs)
    assume(agrees_in_float64(reference_of(op, opset, attrs, outputs), inputs, out_dtypes, formula)
           and not bias_cancels(formula, inputs, dtype))
    check_node(op, opset, inputs, attrs, outputs=outputs, half_in_float=True,
               expected=first(outputs, known_differences.expected_for(op, opset, inputs, attrs)))


@pytest.mark.parametrize("op, opset, dtype", list(op_cases("RMSNormalization")))
@SETTINGS
@given(data=st.data())
def test_rms_normalization_matches_the_reference(op, opset, dtype, data):
    scale_type = data.draw(st.sampled_from(allowed_dtypes(op, opset, "V")), label="scale type")
    x, axis, parameter = row_norm_case(data, dtype, scale_type)
    inputs = [x, parameter("scale")]
    attrs = with_epsilon(data, {"axis": axis})  # stash_type stays 1: the reference implements no other
    assume(agrees_in_float64(reference_of(op, opset, attrs), inputs, [scale_type], formula_of(op, opset, attrs)))
    check_node(op, opset, inputs, attrs, half_in_float=True,
               expected=known_differences.expected_for(op, opset, inputs, attrs))


# --- InstanceNormalization and GroupNormalization -------------------------------------------------------------


@pytest.mark.parametrize("op, opset, dtype", list(op_cases("InstanceNormalization")))
@SETTINGS
@given(data=st.data())
def test_instance_normalization_matches_the_reference(op, opset, dtype, data):
    x = channel_input(data, dtype)
    inputs = [x] + [data.draw(norm_arrays(dtype, (x.shape[1],)), label=name) for name in ("scale", "B")]
    attrs = with_epsilon(data, {})
    formula = formula_of(op, opset, attrs)
    assume(agrees_in_float64(reference_of(op, opset, attrs), inputs, [dtype], formula)
           and not bias_cancels(formula, inputs, dtype))
    check_node(op, opset, inputs, attrs, half_in_float=True,
               expected=known_differences.expected_for(op, opset, inputs, attrs))


@pytest.mark.parametrize("op, opset, dtype", list(op_cases("GroupNormalization")))
@SETTINGS
@given(data=st.data())
def test_group_normalization_matches_the_reference(op, opset, dtype, data):
    groups = data.draw(st.integers(1, 3), label="num_groups")
    per_group = data.draw(st.integers(1, 2), label="channels per group")
    batch = data.draw(st.integers(0, 2), label="N")
    spatial = data.draw(shapes(max_rank=2, max_side=3), label="spatial dims")
    x = data.draw(norm_arrays(dtype, (batch, groups * per_group, *spatial)), label="X")
    params = groups if opset < 21 else groups * per_group  # per group at 18, per channel from 21
    inputs = [x] + [data.draw(norm_arrays(dtype, (params,)), label=name) for name in ("scale", "bias")]
    attrs = with_epsilon(data, {"num_groups": groups})
    formula = formula_of(op, opset, attrs)
    assume(agrees_in_float64(reference_of(op, opset, attrs), inputs, [dtype], formula)
           and not bias_cancels(formula, inputs, dtype))
    check_node(op, opset, inputs, attrs, half_in_float=True,
               expected=known_differences.expected_for(op, opset, inputs, attrs))


# --- LpNormalization and MeanVarianceNormalization ------------------------------------------------------------


@pytest.mark.parametrize("op, opset, dtype", list(op_cases("LpNormalization")))
@SETTINGS
@given(data=st.data())
def test_lp_normalization_matches_the_reference(op, opset, dtype, data):
    x = data.draw(norm_arrays(dtype, shapes(min_rank=1, max_rank=4)), label="X")
    attrs = {}
    for name, values in (("axis", st.integers(-x.ndim, x.ndim - 1)), ("p", st.sampled_from([1, 2]))):
        if data.draw(st.booleans(), label=f"has {name}"):
            attrs[name] = data.draw(values, label=name)
    expected = known_differences.expected_for(op, opset, [x], attrs)
    evaluate = (lambda case: known_differences.lp_norm_by_the_spec(case, attrs, case[0].dtype)) if expected else \
        reference_of(op, opset, attrs)
    assume(agrees_in_float64(evaluate, [x], [dtype],
                             lambda case, compute: known_differences.lp_norm_by_the_spec(case, attrs, compute)))
    check_node(op, opset, [x], attrs, half_in_float=True, expected=expected)


@pytest.mark.parametrize("op, opset, dtype", list(op_cases("MeanVarianceNormalization")))
@SETTINGS
@given(data=st.data())
def test_mean_variance_normalization_matches_the_reference(op, opset, dtype, data):
    x = data.draw(norm_arrays(dtype, shapes(min_rank=1, max_rank=4)), label="X")
    attrs = {}
    # The default axes [0, 2, 3] need rank 4. An empty list is left out: the function body's ReduceMean reads
    # it as "every axis" and a plain reading as "no axis", and the spec does not say which.
    if x.ndim != 4 or data.draw(st.booleans(), label="explicit axes"):
        attrs["axes"] = data.draw(st.lists(st.integers(-x.ndim, x.ndim - 1), min_size=1, max_size=x.ndim,
                                           unique_by=lambda a: a % x.ndim), label="axes")
    # The function body's E[X^2] - E[X]^2 cancels wherever the variance is small next to the mean: compared only
    # where it agrees with the two-pass variance computed wider (float64; long double for float64 X).
    narrow, wide = (np.float64, np.longdouble) if dtype == np.float64 else (np.float32, np.float64)
    assume(x.size == 0 or _close(known_differences.mvn_by_the_spec([x], attrs, narrow)[0].astype(np.float64),
                                 known_differences.mvn_by_the_spec([x], attrs, wide, two_pass=True)[0]
                                 .astype(np.float64), dtype))
    check_node(op, opset, [x], attrs, half_in_float=True,
               expected=known_differences.expected_for(op, opset, [x], attrs))


COVERED = {"BatchNormalization", "LayerNormalization", "InstanceNormalization", "GroupNormalization",
           "RMSNormalization", "LpNormalization", "MeanVarianceNormalization"}
