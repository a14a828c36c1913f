"""dot_general (MatMul), conv_general_dilated (Conv) and reduce_window (MaxPool, or strided slices)."""

import itertools
import math

import numpy as np

from nxrt.jax.builder import is_symbolic
from nxrt.jax.handlers_shape import _interior_pad
from nxrt.jax.registry import UnsupportedPrimitiveError, register_primitive

INT64_MAX = np.iinfo(np.int64).max


def _dtype(var):
    return np.dtype(var.aval.dtype)


def _prod(dims):
    return math.prod(dims, start=1)


@register_primitive("dot_general")
def _dot_general(ctx, eqn, lhs, rhs):
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lc, rc, lb, rb = list(lc), list(rc), list(lb), list(rb)
    ls, rs = list(eqn.invars[0].aval.shape), list(eqn.invars[1].aval.shape)
    out_dtype = _dtype(eqn.outvars[0])
    if _dtype(eqn.invars[0]) != out_dtype:
        lhs = ctx.cast(lhs, out_dtype)
    if _dtype(eqn.invars[1]) != out_dtype:
        rhs = ctx.cast(rhs, out_dtype)
    lfree = [d for d in range(len(ls)) if d not in lc and d not in lb]
    rfree = [d for d in range(len(rs)) if d not in rc and d not in rb]
    if not lb and len(lc) == 1 and lc[0] == len(ls) - 1 and len(rs) in (1, 2) and len(rc) == 1:
        # x[..., K] @ w[K, N] (or w[N, K] transposed, or a vector w[K]): one MatMul, numpy broadcasting.
        if len(rs) == 2 and rc[0] == 1:
            rhs = ctx.transpose(rhs, [1, 0])
        return ctx.op("MatMul", lhs, rhs)
    out_shape = [ls[d] for d in lb] + [ls[d] for d in lfree] + [rs[d] for d in rfree]
    batch = [ls[d] for d in lb]
    lhs = ctx.transpose(lhs, lb + lfree + lc)
    rhs = ctx.transpose(rhs, rb + rc + rfree)
    m, k, n = _prod([ls[d] for d in lfree]), _prod([ls[d] for d in lc]), _prod([rs[d] for d in rfree])
    if not (len(lfree) == 1 and len(lc) == 1):
        lhs = ctx.reshape(lhs, batch + [m, k])
    if not (len(rfree) == 1 and len(rc) == 1):
        rhs = ctx.reshape(rhs, batch + [k, n])
    out = ctx.op("MatMul", lhs, rhs)
    if not (len(lfree) == 1 and len(rfree) == 1):
        out = ctx.reshape(out, out_shape)
    return out


def _inverse(perm):
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return inverse


@register_primitive("conv_general_dilated")
def _conv_general_dilated(ctx, eqn, lhs, rhs):
    p = eqn.params
    if int(p.get("batch_group_count", 1)) != 1:
        raise UnsupportedPrimitiveError("conv_general_dilated", detail="batch_group_count > 1")
    lhs_spec, rhs_spec, out_spec = (list(s) for s in p["dimension_numbers"])
    out_dtype = _dtype(eqn.outvars[0])
    if _dtype(eqn.invars[0]) != out_dtype:
        lhs = ctx.cast(lhs, out_dtype)
    if _dtype(eqn.invars[1]) != out_dtype:
        rhs = ctx.cast(rhs, out_dtype)
    x = ctx.transpose(lhs, lhs_spec)
    w = ctx.transpose(rhs, rhs_spec)
    in_shape = [eqn.invars[0].aval.shape[d] for d in lhs_spec]
    spatial = len(lhs_spec) - 2
    lhs_dilation = list(p.get("lhs_dilation") or [1] * spatial)
    if any(d != 1 for d in lhs_dilation):
        zero = ctx.scalar(0, out_dtype)
        for i, factor in enumerate(lhs_dilation):
            if factor != 1:
                x = _interior_pad(ctx, x, zero, in_shape, 2 + i, factor - 1)
                in_shape[2 + i] = in_shape[2 + i] * factor - (factor - 1)
    padding = [tuple(pad) for pad in p["padding"]]
    if any(lo < 0 or hi < 0 for lo, hi in padding):
        axes = [2 + i for i, (lo, hi) in enumerate(padding) if lo < 0 or hi < 0]
        x = ctx.slice(x, [max(0, -padding[a - 2][0]) for a in axes],
                      [padding[a - 2][1] if padding[a - 2][1] < 0 else INT64_MAX for a in axes], axes)
        padding = [(max(0, lo), max(0, hi)) for lo, hi in padding]
    pads = [lo for lo, _ in padding] + [hi for _, hi in padding]
    kernel = [eqn.invars[1].aval.shape[d] for d in rhs_spec[2:]]
    out = ctx.op("Conv", x, w, strides=list(p["window_strides"]), pads=pads,
                 dilations=list(p.get("rhs_dilation") or [1] * spatial), group=int(p["feature_group_count"]),
                 kernel_shape=[int(k) for k in kernel])
    return ctx.transpose(out, _inverse(out_spec))


_WINDOW_OPS = {"add": ("Add", 0), "max": ("Max", "min"), "min": ("Min", "max"), "mul": ("Mul", 1)}


def _identity(dtype, kind):
    if isinstance(kind, int):
        return kind
    if np.issubdtype(dtype, np.floating):
        return -np.inf if kind == "min" else np.inf
    info = np.iinfo(dtype)
    return info.min if kind == "min" else info.max


def _max_pool_layout(eqn):
    """(pooled axes, kept axes, "SAME" or None) when reduce_window max/min is an ONNX MaxPool: float data, no base
    dilation, 1 to 3 pooled axes, kept axes with unit window and stride and no padding, each pad smaller than its
    window (or symbolic "SAME" padding, left to MaxPool's auto_pad)."""
    p = eqn.params
    if not np.issubdtype(_dtype(eqn.invars[0]), np.floating):
        return None
    window, strides = list(p["window_dimensions"]), list(p["window_strides"])
    padding = [tuple(pad) for pad in p["padding"]]
    base = list(p.get("base_dilation") or [1] * len(window))
    wdil = list(p.get("window_dilation") or [1] * len(window))
    pooled = [a for a in range(len(window)) if window[a] != 1 or strides[a] != 1 or any(padding[a])]
    kept = [a for a in range(len(window)) if a not in pooled]
    if any(f != 1 for f in base) or not 1 <= len(pooled) <= 3 or any(wdil[a] != 1 for a in kept):
        return None
    if any(is_symbolic(v) for pair in padding for v in pair):
        # Symbolic pads come from "SAME" over a symbolic axis: MaxPool's auto_pad computes them at run time.
        from jax import lax

        dilated = [(w - 1) * d + 1 for w, d in zip(window, wdil)]
        same = lax.padtype_to_pads(eqn.invars[0].aval.shape, dilated, strides, "SAME")
        return (pooled, kept, "SAME") if [str(tuple(v)) for v in same] == [str(v) for v in padding] else None
    if any(lo < 0 or hi < 0 or lo >= window[a] or hi >= window[a] for a, (lo, hi) in enumerate(padding)):
        return None
    return pooled, kept, None


def _max_pool(ctx, eqn, x, negate, layout):
    """reduce_window max (or min, as -max(-x)) as MaxPool: kept axes move in front (size-1 ones dropped when there
    are more than two) and are folded into the [N, C] MaxPool expects, pooled axes follow."""
    p = eqn.params
    pooled, kept, auto_pad = layout
    shape = list(eqn.invars[0].aval.shape)
    out_shape = list(eqn.outvars[0].aval.shape)
    padding = [tuple(p["padding"][a]) for a in pooled]
    wdil = list(p.get("window_dilation") or [1] * len(shape))
    if negate:
        x = ctx.op("Neg", x)
    x = ctx.transpose(x, kept + pooled)
    unit = [i for i, a in enumerate(kept) if str(shape[a]) == "1"] if len(kept) > 2 else []
    x = ctx.squeeze(x, unit)
    lead = [shape[a] for i, a in enumerate(kept) if i not in unit]
    missing = list(range(2 - len(lead))) if len(lead) < 2 else []
    if len(lead) > 2:
        x = ctx.reshape(x, [_prod(lead[:-1]), lead[-1]] + [shape[a] for a in pooled])
    x = ctx.unsqueeze(x, missing)
    pads = {"auto_pad": "SAME_UPPER"} if auto_pad else {"pads": [lo for lo, _ in padding] + [hi for _, hi in padding]}
    y = ctx.op("MaxPool", x, kernel_shape=[int(p["window_dimensions"][a]) for a in pooled],
               strides=[int(p["window_strides"][a]) for a in pooled], dilations=[int(wdil[a]) for a in pooled],
               **pads)
    y = ctx.squeeze(y, missing)
    if len(lead) > 2:
        y = ctx.reshape(y, [out_shape[a] for i, a in enumerate(kept) if i not in unit] +
                        [out_shape[a] for a in pooled])
    y = ctx.unsqueeze(y, unit)
    y = ctx.transpose(y, _inverse(kept + pooled))
    return ctx.op("Neg", y) if negate else y


def _reduce_window(ctx, eqn, x, reducer, init=None):
    """Pooling: MaxPool for max/min where it applies, otherwise a combination of strided slices, one per window
    offset: exact, works for any layout and on every ONNX runtime (no pooling kernel needed)."""
    p = eqn.params
    layout = _max_pool_layout(eqn) if reducer in ("max", "min") else None
    if layout is not None:
        result = _max_pool(ctx, eqn, x, reducer == "min", layout)
        return result if init is None else ctx.op(_WINDOW_OPS[reducer][0], result, init)
    onnx_op, identity_kind = _WINDOW_OPS[reducer]
    dtype = _dtype(eqn.invars[0])
    identity = ctx.scalar(_identity(dtype, identity_kind), dtype)
    window = list(p["window_dimensions"])
    strides = list(p["window_strides"])
    padding = [tuple(pad) for pad in p["padding"]]
    base = list(p.get("base_dilation") or [1] * len(window))
    wdil = list(p.get("window_dilation") or [1] * len(window))
    shape = list(eqn.invars[0].aval.shape)
    for axis, factor in enumerate(base):
        if factor != 1:
            x = _interior_pad(ctx, x, identity, shape, axis, factor - 1)
            shape[axis] = shape[axis] * factor - (factor - 1)
    if any(lo or hi for lo, hi in padding):
        if any(lo < 0 or hi < 0 for lo, hi in padding):
            raise UnsupportedPrimitiveError(eqn.primitive.name, detail="negative window padding")
        x = ctx.op("Pad", x, ctx.ints([lo for lo, _ in padding] + [hi for _, hi in padding]), identity,
                   mode="constant")
    out_shape = list(eqn.outvars[0].aval.shape)
    axes = [a for a in range(len(window)) if window[a] != 1 or strides[a] != 1]
    if any(is_symbolic(out_shape[a]) for a in axes):
        raise UnsupportedPrimitiveError(eqn.primitive.name, detail="pooling over a symbolic axis")
    result = None
    for offsets in itertools.product(*[range(window[a]) for a in axes]):
        starts = [o * wdil[a] for o, a in zip(offsets, axes)]
        ends = [s + (out_shape[a] - 1) * strides[a] + 1 for s, a in zip(starts, axes)]
        piece = ctx.slice(x, starts, ends, axes, [strides[a] for a in axes]) if axes else x
        result = piece if result is None else ctx.op(onnx_op, result, piece)
    if init is not None:
        result = ctx.op(onnx_op, result, init)
    return result


for _name, _kind in {"reduce_window_sum": "add", "reduce_window_max": "max", "reduce_window_min": "min"}.items():
    register_primitive(_name)(lambda ctx, eqn, x, _kind=_kind: _reduce_window(ctx, eqn, x, _kind))


@register_primitive("reduce_window")
def _reduce_window_generic(ctx, eqn, *args):
    jaxpr = eqn.params["jaxpr"]
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    names = [e.primitive.name for e in jaxpr.eqns]
    if len(args) != 2 or len(names) != 1 or names[0] not in _WINDOW_OPS:
        raise UnsupportedPrimitiveError("reduce_window", detail=f"reduction computation {names}")
    x, init = args
    return _reduce_window(ctx, eqn, x, names[0], init)
