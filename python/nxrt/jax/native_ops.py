"""Emission of native ONNX ops for the calls native_layers marks.

A marked call records the op, its attributes and the rank of every argument at the call. When the call's jaxpr
still has those ranks, the arguments are exactly what the op consumes. When ``jax.vmap`` added leading batch axes
to the data argument (the first), the op applies only if the jaxpr is the body vmapped over axis 0 of that
argument: the jaxpr is compared with a trace of exactly that, so a vmap over another axis (``in_axes=1``), or over
the weights, inlines the body instead of emitting an op with the wrong layout.

Each emitter returns the output names, or None when the op cannot express the call (rank, dtype, opset, padding),
in which case the body is inlined.
"""

import numpy as np

from nxrt.jax.builder import onnx_dtype

__all__ = ["emit_native"]

_MIN_OPSET = {"LayerNormalization": 17, "RMSNormalization": 23, "Attention": 23, "Softmax": 13, "LogSoftmax": 13,
              "Gemm": 13, "BatchNormalization": 15, "GroupNormalization": 21, "AveragePool": 19, "Relu": 14,
              "Clip": 13, "Elu": 6, "Selu": 6, "LeakyRelu": 16, "Celu": 12, "HardSigmoid": 6, "HardSwish": 14,
              "Softsign": 1, "Softplus": 1, "Mish": 18, "Gelu": 20, "Swish": 24}
# Ops whose float attributes are float32 in ONNX: a float64 call needs values that float32 holds exactly.
_FLOAT_ATTRIBUTES = ("alpha", "gamma", "beta")


def _vmapped_lead(call, closed):
    """Leading batch axes vmap added to the call's data argument: 0 when the call is as traced, k when its jaxpr
    equals the body vmapped k times over axis 0 of that argument, None otherwise."""
    import jax

    avals = list(closed.in_avals)
    ranks = [len(a.shape) for a in avals]
    if tuple(ranks) == call.ranks:
        return 0
    lead = ranks[0] - call.ranks[0]
    if lead <= 0 or tuple(ranks[1:]) != call.ranks[1:]:
        return None
    traced_fn = jax.jit(call.body)
    for _ in range(lead):
        traced_fn = jax.vmap(traced_fn, in_axes=(0,) + (None,) * (len(avals) - 1))
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in avals]
    try:
        traced = jax.make_jaxpr(traced_fn)(*specs)
    except Exception:  # the body cannot take the per-example shapes: not this call's structure
        return None
    eqns = traced.jaxpr.eqns
    if len(eqns) != 1 or "jaxpr" not in eqns[0].params:
        return None
    inner = eqns[0].params["jaxpr"]
    same_consts = len(inner.consts) == len(closed.consts) and all(
        np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(inner.consts, closed.consts))
    return lead if same_consts and str(inner.jaxpr) == str(closed.jaxpr) else None


def _stash(aval):
    """stash_type for the normalisation ops: float64 statistics for float64 data, the default otherwise."""
    return onnx_dtype(np.float64) if np.dtype(aval.dtype) == np.float64 else None


def _emit_norm(ctx, op, attrs, avals, args, lead):
    return [ctx.op(op, *args, axis=-1, epsilon=attrs["epsilon"], stash_type=_stash(avals[0]))]


def _emit_softmax(ctx, op, attrs, avals, args, lead):
    return [ctx.op(op, *args, axis=attrs["axis"])]


def _emit_gemm(ctx, op, attrs, avals, args, lead):
    x, w, b = avals
    if len(x.shape) != 2 or len(w.shape) != 2 or len(b.shape) != 1:
        return None
    return [ctx.op("Gemm", *args, transB=attrs["trans_b"])]


def _emit_attention(ctx, op, attrs, avals, args, lead):
    q, k, v = avals
    if lead or any(len(a.shape) != 4 for a in avals) or q.dtype != k.dtype or q.dtype != v.dtype:
        return None
    # The scale attribute is float32: a float64 call needs a scale float32 holds exactly (head size 4, 16, 64 ...).
    if np.dtype(q.dtype) == np.float64 and float(np.float32(attrs["scale"])) != attrs["scale"]:
        return None
    heads = [ctx.transpose(name, [0, 2, 1, 3]) for name in args]
    out = ctx.op("Attention", *heads, scale=attrs["scale"], is_causal=attrs["is_causal"])
    return [ctx.transpose(out, [0, 2, 1, 3])]


def _inverse(perm):
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return inverse


def _channel_second(ctx, x, rank, channel):
    """``x`` transposed so that axis ``channel`` comes second (after one other axis); returns (x, perm)."""
    perm = [a for a in range(rank) if a != channel]
    perm.insert(1, channel)
    return ctx.transpose(x, perm), perm


def _emit_batch_norm(ctx, op, attrs, avals, args, lead):
    rank = len(avals[0].shape)
    axis = attrs["channel_axis"]
    channel = axis + lead if axis >= 0 else rank + axis
    x = args[0]
    if rank == 1:
        y = ctx.op("BatchNormalization", ctx.unsqueeze(x, [0]), *args[1:], epsilon=attrs["epsilon"])
        return [ctx.squeeze(y, [0])]
    x, perm = _channel_second(ctx, x, rank, channel)
    y = ctx.op("BatchNormalization", x, *args[1:], epsilon=attrs["epsilon"])
    return [ctx.transpose(y, _inverse(perm))]


def _emit_group_norm(ctx, op, attrs, avals, args, lead):
    """GroupNormalization over [N, C, ...]: Flax puts channels last after one batch axis, Equinox first with no
    batch axis (one from vmap)."""
    rank = len(avals[0].shape)
    x = args[0]
    channels_last = attrs["layout"] == "last"
    if channels_last and (lead or rank < 2):
        return None
    if not channels_last and lead > 1:
        return None
    perm = list(range(rank))
    if channels_last:
        x, perm = _channel_second(ctx, x, rank, rank - 1)
    elif not lead:
        x = ctx.unsqueeze(x, [0])
    expanded = len(avals[0].shape) + (0 if channels_last or lead else 1) == 2
    if expanded:
        x = ctx.unsqueeze(x, [2])
    y = ctx.op("GroupNormalization", x, *args[1:], epsilon=attrs["epsilon"], num_groups=attrs["num_groups"],
               stash_type=_stash(avals[0]))
    if expanded:
        y = ctx.squeeze(y, [2])
    if not channels_last and not lead:
        y = ctx.squeeze(y, [0])
    return [ctx.transpose(y, _inverse(perm))]


def _emit_average_pool(ctx, op, attrs, avals, args, lead):
    """AveragePool over [N, C, spatial...]: the spatial axes are the last ones before the channel axis (Flax,
    channels last) or after it (Equinox, channels first); at most one batch axis before them all."""
    kernel = list(attrs["kernel"])
    n, rank = len(kernel), len(avals[0].shape)
    batch = rank - n - 1
    if batch not in (0, 1) or not 1 <= n <= 3 or not np.issubdtype(np.dtype(avals[0].dtype), np.floating):
        return None
    pads = attrs["pads"]
    if pads != "SAME" and any(lo >= k or hi >= k for (lo, hi), k in zip(pads, kernel)):
        return None
    if attrs["layout"] == "last":
        perm = list(range(batch)) + [rank - 1] + list(range(batch, rank - 1))
    else:
        perm = list(range(rank))
    x = ctx.transpose(args[0], perm)
    if not batch:
        x = ctx.unsqueeze(x, [0])
    padding = {"auto_pad": "SAME_UPPER"} if pads == "SAME" else {"pads": [lo for lo, _ in pads] +
                                                                 [hi for _, hi in pads]}
    y = ctx.op("AveragePool", x, kernel_shape=kernel, strides=list(attrs["strides"]),
               count_include_pad=attrs["count_include_pad"], **padding)
    if not batch:
        y = ctx.squeeze(y, [0])
    return [ctx.transpose(y, _inverse(perm))]


def _emit_activation(ctx, op, attrs, avals, args, lead):
    dtype = np.dtype(avals[0].dtype)
    if not np.issubdtype(dtype, np.floating):
        return None
    if op == "Celu" and dtype != np.float32:
        return None
    # onnxruntime's float64 Gelu(approximate="tanh") is only float32-accurate; the primitives are exact anywhere.
    if op == "Gelu" and dtype == np.float64 and attrs["approximate"] == "tanh":
        return None
    values = {k: v for k, v in attrs.items() if k in _FLOAT_ATTRIBUTES}
    if dtype == np.float64 and any(float(np.float32(v)) != v for v in values.values()):
        return None
    if op == "Clip":
        return [ctx.op("Clip", args[0], ctx.scalar(attrs["min"], dtype), ctx.scalar(attrs["max"], dtype))]
    extra = {"approximate": attrs["approximate"]} if "approximate" in attrs else {}
    return [ctx.op(op, args[0], **values, **extra)]


_EMITTERS = {"LayerNormalization": _emit_norm, "RMSNormalization": _emit_norm, "Softmax": _emit_softmax,
             "LogSoftmax": _emit_softmax, "Gemm": _emit_gemm, "Attention": _emit_attention,
             "BatchNormalization": _emit_batch_norm, "GroupNormalization": _emit_group_norm,
             "AveragePool": _emit_average_pool}


def emit_native(ctx, call, closed, args):
    """Emits the native op for a marked call, or inlines its reference body when the op cannot express it."""
    out = None
    if ctx.opset >= _MIN_OPSET[call.op]:
        lead = _vmapped_lead(call, closed)
        if lead is not None:
            emitter = _EMITTERS.get(call.op, _emit_activation)
            out = emitter(ctx, call.op, call.attrs, list(closed.in_avals), list(args), lead)
    return out if out is not None else ctx.lower(closed, args)
