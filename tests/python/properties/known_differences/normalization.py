"""Known differences of the normalizations: BatchNormalization, LayerNormalization, RMSNormalization,
LpNormalization, GroupNormalization, MeanVarianceNormalization and the com.microsoft SkipLayerNormalization,
SkipSimplifiedLayerNormalization and EmbedLayerNormalization. batch_norm_by_the_spec, lp_norm_by_the_spec and
mvn_by_the_spec also serve test_normalization_properties.py directly."""

import warnings

import numpy as np

from .common import Difference, _contrib_spec


def batch_norm_by_the_spec(opset, inputs, attrs, training, compute=None):
    """BatchNormalization by the spec's formulas, computed in `compute` (default float64) and rounded once to the
    output types: Y = (X - mean) / sqrt(var + epsilon) * scale + B per channel (per channel and position for
    spatial 0 before opset 9), with the given statistics in inference mode and the batch's (population variance)
    in training mode, where the running statistics are input * momentum + batch * (1 - momentum) in the mean's
    type, and before opset 14 saved_mean / saved_var are the batch mean and variance."""
    x, scale, bias, mean, var = inputs
    compute = np.dtype(compute or np.float64)
    epsilon = compute.type(np.float32(attrs.get("epsilon", 1e-5)))
    momentum = compute.type(np.float32(attrs.get("momentum", 0.9)))
    spatial = attrs.get("spatial", 1) if opset < 9 else 1
    shape = (1, -1) + (1,) * (x.ndim - 2) if spatial else (1, *x.shape[1:])
    axes = (0, *range(2, x.ndim)) if spatial else (0,)
    wide = x.astype(compute)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # statistics of no channels: empty, without numpy's warning
        if training:
            use_mean, use_var = wide.mean(axis=axes), wide.var(axis=axes)
        else:
            use_mean, use_var = mean.astype(compute), var.astype(compute)
        y = ((wide - use_mean.reshape(shape)) / np.sqrt(use_var.reshape(shape) + epsilon)
             * scale.astype(compute).reshape(shape) + bias.astype(compute).reshape(shape))
        outputs = [y.astype(x.dtype)]
        if training:
            outputs += [(mean.astype(compute) * momentum + use_mean * (1 - momentum)).astype(mean.dtype),
                        (var.astype(compute) * momentum + use_var * (1 - momentum)).astype(var.dtype)]
            if opset < 14:
                outputs += [use_mean.astype(x.dtype), use_var.astype(x.dtype)]
    return outputs


def _layer_norm_statistics_in_float(op, opset, inputs, attrs):
    """The reference's LayerNormalization (half types on float32 copies) with Y in X's type and Mean /
    InvStdDev in float32, the stash type; all three outputs (the test keeps those its node has)."""
    from property_harness import node_model, run_reference

    case = [a.astype(np.float32) if a.dtype.itemsize == 2 else a for a in inputs]
    y, mean, inv_std = run_reference(node_model(op, opset, case, attrs, 3), case)
    with np.errstate(all="ignore"):
        return [y.astype(inputs[0].dtype), mean.astype(np.float32), inv_std.astype(np.float32)]


def _rms_norm_in_scale_type(op, opset, inputs, attrs):
    """The reference's RMSNormalization with Y in the scale's type, on copies of X and the scale in float64 where
    either is float64, else in float32 (its Y in X's type would lose the range of a float64 scale)."""
    from property_harness import node_model, run_reference

    wide = np.float64 if np.float64 in (inputs[0].dtype, inputs[1].dtype) else np.float32
    case = [a.astype(wide) for a in inputs]
    with np.errstate(all="ignore"):
        return [run_reference(node_model(op, opset, case, attrs), case)[0].astype(inputs[1].dtype)]


def lp_norm_by_the_spec(inputs, attrs, compute=np.float64):
    """x / (sum(|x|^p))^(1/p) along `axis` (default -1) in `compute`, 0 where the norm is 0, rounded once."""
    x = inputs[0]
    p, axis = attrs.get("p", 2), attrs.get("axis", -1)
    wide = x.astype(compute)
    with np.errstate(all="ignore"):
        norm = np.sum(np.abs(wide) ** p, axis=axis, keepdims=True) ** (1.0 / p)
        return [np.where(norm == 0, 0, wide / norm).astype(x.dtype)]


def _onnxruntime_float_layer_norm(op):
    """Where onnxruntime's float Skip(Simplified)LayerNormalization / EmbedLayerNormalization statistics go wrong
    (see the entries)."""
    def applies(opset, inputs, attrs):
        import contrib_spec

        if op == "EmbedLayerNormalization":
            rows, dtype = contrib_spec.embed_sums(inputs), inputs[2].dtype
        else:
            rows, dtype = contrib_spec.skip_norm_sums(op, inputs), inputs[0].dtype
        return contrib_spec.beyond_float_statistics(rows.reshape(-1, rows.shape[-1]), "Simplified" in op,
                                                    dtype != np.float16)
    return applies


def mvn_by_the_spec(inputs, attrs, compute=np.float64, two_pass=False):
    """MeanVarianceNormalization over `axes` (default [0, 2, 3]) in `compute`, rounded once: the function body's
    (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9), or with two_pass the variance as E[(X - E[X])^2], the spec's
    (X - EX) / sqrt(E(X - EX)^2), which is never negative."""
    x = inputs[0]
    axes = tuple(a % x.ndim for a in attrs.get("axes", [0, 2, 3]))
    wide = x.astype(compute)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the mean of an empty set: NaN, without numpy's warning
        mean = wide.mean(axis=axes, keepdims=True)
        variance = ((wide - mean) ** 2).mean(axis=axes, keepdims=True) if two_pass else \
            (wide * wide).mean(axis=axes, keepdims=True) - mean * mean
        return [((wide - mean) / (np.sqrt(variance) + np.array(1e-9, compute))).astype(x.dtype)]


def _reference_with(op, opset, inputs, attrs):
    """The reference's results for the same inputs with other attributes."""
    from property_harness import node_model, run_reference

    return run_reference(node_model(op, opset, inputs, attrs), inputs)


DIFFERENCES = [
    Difference(
        "BatchNormalization",
        "Before opset 14 the reference has no working form: at opset 7 (its BatchNormalization_6, reading the "
        "absent is_test as training) it returns a tuple and fails, and at opset 9 it normalizes with the running "
        "statistics blended with the batch's even in test mode (momentum has a default, so its inference branch "
        "never runs), and fails on the five training outputs. The spec: one output is test mode, Y = (X - mean) / "
        "sqrt(var + epsilon) * scale + B with the given statistics; five outputs are training mode, Y with the "
        "batch statistics, mean / var the running ones (input * momentum + batch * (1 - momentum)), saved_mean / "
        "saved_var the batch mean and variance, as nxrt gives them. onnxruntime agrees except saved_var, where "
        "it gives the inverse standard deviation 1 / sqrt(var + epsilon). Compared with batch_norm_by_the_spec "
        "(float64, rounded once).",
        lambda opset, inputs, attrs: opset < 14,
        lambda op, opset, inputs, attrs: batch_norm_by_the_spec(opset, inputs, attrs, False),
    ),
    Difference(
        "BatchNormalization",
        "In training mode the reference returns running_mean / running_var in X's type; the schema gives them "
        "the statistics' own type (U at opset 14, T2 from 15), which may differ from X's, as nxrt does. Compared "
        "with batch_norm_by_the_spec (float64, rounded once to each output's type).",
        lambda opset, inputs, attrs: opset >= 14 and attrs.get("training_mode", 0) == 1
        and inputs[3].dtype != inputs[0].dtype,
        lambda op, opset, inputs, attrs: batch_norm_by_the_spec(opset, inputs, attrs, True),
    ),
    Difference(
        "LayerNormalization",
        "The reference returns Mean and InvStdDev in X's type; the schema gives them type U, the stash_type "
        "(float32 by default), as nxrt and onnxruntime do. Compared with the reference's values (half types "
        "computed on float32 copies, Y rounded once) with Mean and InvStdDev in float32.",
        lambda opset, inputs, attrs: inputs[0].dtype != np.float32,
        _layer_norm_statistics_in_float,
    ),
    Difference(
        "RMSNormalization",
        "The reference returns Y in X's type; the schema gives Y the scale's type V (\"Y: V\"), which may differ "
        "from X's (T), as nxrt does. Compared with the reference's values (half types computed on float32 copies) "
        "rounded once to the scale's type.",
        lambda opset, inputs, attrs: inputs[1].dtype != inputs[0].dtype,
        _rms_norm_in_scale_type,
    ),
    Difference(
        "LpNormalization",
        "For p = 1 the reference divides by sum(x) (numpy.power(x, 1).sum()), not by the L1 norm sum(|x|): "
        "LpNormalization([-1, 2], p=1) is [-1, 2] there, [-1/3, 2/3] by the norm, as nxrt and onnxruntime give "
        "it. Compared with x / sum(|x|^p)^(1/p) in float64, rounded once (0 where the norm is 0).",
        lambda opset, inputs, attrs: attrs.get("p", 2) == 1,
        lambda op, opset, inputs, attrs: lp_norm_by_the_spec(inputs, attrs),
    ),
    *[Difference(
        f"com.microsoft.{op}",
        "onnxruntime computes the row statistics of float32 / bfloat16 rows in float32: squares whose sum "
        "overflows it (near |v| = 2^64) give inv_std_var 0 and a zero or NaN output ([3e38, -3e38] normalizes to NaN, "
        "not [1, -1]; the RMS of [3e38, 3e38] gives output 0, not 1 * gamma); squares that underflow it give a "
        "statistic of 0 (the RMS of [1.2e-38] with epsilon 0 is 0 there, inv_std_var inf, output NaN; 1 * gamma by "
        "the spec); a row holding an infinity has mean "
        "NaN there, where the spec's mean is that infinity ([inf, 1]: inf); and it subtracts a float mean from "
        "values far from 0 next to their spread ([1e20, 1e20 + 1e13] normalizes to [0, 1.414], not [-1, 1]). nxrt "
        "takes such rows in double. Compared with the spec's formulas in float64 (contrib_spec.py).",
        _onnxruntime_float_layer_norm(op),
        _contrib_spec("embed_layer_norm" if op.startswith("Embed") else "skip_layer_norm"),
    ) for op in ("SkipLayerNormalization", "SkipSimplifiedLayerNormalization", "EmbedLayerNormalization")],
    Difference(
        "GroupNormalization",
        "The reference (the schema's function body) fails on a zero-size X: its Reshape to [N, num_groups, -1] "
        "cannot infer the -1 from no elements (\"cannot reshape array of size 0\", or \"index 3 is out of "
        "bounds\" for an empty spatial dim). The spec's Y has X's shape, so it is empty, as nxrt gives it; "
        "onnxruntime runs the same function body and fails in the same Reshape.",
        lambda opset, inputs, attrs: inputs[0].size == 0,
        lambda op, opset, inputs, attrs: [inputs[0].copy()],
    ),
    Difference(
        "GroupNormalization",
        "From opset 21 the function body computes stage one (statistics and normalization) in stash_type, float32 "
        "by default, so a float64 X gets float32 precision (5e-7 relative off float64, and a subnormal float64 "
        "value becomes 0: x - mean of 2.2e-309 and 1.1e-309 is 0 there, times an infinite scale NaN). nxrt "
        "computes float64 X in double, more precise than the stash type asks (docs/numerics.md); onnxruntime runs "
        "the function body as the reference does. Compared with the reference at stash_type 11 (float64).",
        lambda opset, inputs, attrs: opset >= 21 and inputs[0].dtype == np.float64 and inputs[0].size > 0
        and attrs.get("stash_type", 1) != 11,
        lambda op, opset, inputs, attrs: _reference_with(op, opset, inputs, {**attrs, "stash_type": 11}),
    ),
    Difference(
        "MeanVarianceNormalization",
        "The reference runs the schema's function body, whose epsilon is a float32 Constant added to the "
        "standard deviation without a cast: for any other X type it fails (\"Input type mismatch: float64 != "
        "float32 (operator 'Add')\"). The body's formula, (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9), holds "
        "for every float type. Half types run through the harness's float32 copies; for float64 nxrt is "
        "compared with that formula in float64 (mvn_by_the_spec). onnxruntime expands the same body for float64 "
        "and fails the same way (\"bound to different types (tensor(double) and tensor(float))\").",
        lambda opset, inputs, attrs: inputs[0].dtype == np.float64,
        lambda op, opset, inputs, attrs: mvn_by_the_spec(inputs, attrs),
    ),
]
