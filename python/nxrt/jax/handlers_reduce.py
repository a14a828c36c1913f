"""Reductions, arg-reductions, cumulative ops, sort and top_k."""

import numpy as np

from nxrt.jax.builder import is_symbolic
from nxrt.jax.registry import UnsupportedPrimitiveError, register_primitive


def _dtype(var):
    return np.dtype(var.aval.dtype)


def _reduce(onnx_op):
    def handler(ctx, eqn, x):
        axes = list(eqn.params["axes"])
        if not axes:
            return ctx.op("Identity", x)
        return ctx.op(onnx_op, x, ctx.ints(axes), keepdims=0)
    return handler


for _name, _op in {"reduce_sum": "ReduceSum", "reduce_max": "ReduceMax", "reduce_min": "ReduceMin",
                   "reduce_prod": "ReduceProd"}.items():
    register_primitive(_name)(_reduce(_op))


def _reduce_bool(onnx_op):
    def handler(ctx, eqn, x):
        axes = list(eqn.params["axes"])
        dtype = _dtype(eqn.invars[0])
        if not axes:
            return ctx.op("Identity", x)
        if dtype != np.bool_:
            raise UnsupportedPrimitiveError(eqn.primitive.name, detail=f"bitwise reduction of {dtype}")
        reduced = ctx.op(onnx_op, ctx.cast(x, np.int32), ctx.ints(axes), keepdims=0)
        return ctx.cast(reduced, np.bool_)
    return handler


register_primitive("reduce_and")(_reduce_bool("ReduceMin"))
register_primitive("reduce_or")(_reduce_bool("ReduceMax"))


def _arg_reduce(onnx_op):
    def handler(ctx, eqn, x):
        axis = int(eqn.params["axes"][0])
        index = ctx.op(onnx_op, x, axis=axis, keepdims=0, select_last_index=0)
        dtype = np.dtype(eqn.params["index_dtype"])
        return index if dtype == np.int64 else ctx.cast(index, dtype)
    return handler


register_primitive("argmax")(_arg_reduce("ArgMax"))
register_primitive("argmin")(_arg_reduce("ArgMin"))


@register_primitive("cumsum")
def _cumsum(ctx, eqn, x):
    axis = ctx.scalar(int(eqn.params["axis"]), np.int64)
    return ctx.op("CumSum", x, axis, reverse=int(bool(eqn.params.get("reverse", False))))


def _doubling_scan(ctx, eqn, x, combine, identity):
    """Inclusive scan along ``axis`` by log-step doubling: x[i] = combine(x[i], x[i - k]) for k = 1, 2, 4, ..."""
    axis = int(eqn.params["axis"])
    reverse = bool(eqn.params.get("reverse", False))
    shape = list(eqn.invars[0].aval.shape)
    n = shape[axis]
    if is_symbolic(n):
        raise UnsupportedPrimitiveError(eqn.primitive.name, detail="scan over a symbolic axis")
    dtype = _dtype(eqn.invars[0])
    k = 1
    while k < n:
        pad_shape = list(shape)
        pad_shape[axis] = k
        fill = ctx.zeros(pad_shape, dtype, identity)
        if reverse:
            moved = ctx.slice(x, [k], [n], [axis])
            shifted = ctx.op("Concat", moved, fill, axis=axis)
        else:
            moved = ctx.slice(x, [0], [n - k], [axis])
            shifted = ctx.op("Concat", fill, moved, axis=axis)
        x = combine(x, shifted)
        k *= 2
    return x


def _identity_for(dtype, kind):
    if kind == "prod":
        return 1
    if kind == "logsumexp":
        return -np.inf
    if np.issubdtype(dtype, np.floating):
        return -np.inf if kind == "max" else np.inf
    info = np.iinfo(dtype) if dtype != np.bool_ else None
    if info is None:
        return kind == "min"
    return info.min if kind == "max" else info.max


def _cumulative(kind, onnx_op):
    def handler(ctx, eqn, x):
        dtype = _dtype(eqn.invars[0])
        if kind == "logsumexp":
            def combine(a, b):
                high = ctx.op("Max", a, b)
                low = ctx.op("Min", a, b)
                finite = ctx.op("Not", ctx.op("IsInf", high))
                safe_high = ctx.op("Where", finite, high, ctx.scalar(0, dtype))
                tail = ctx.op("Log", ctx.op("Add", ctx.scalar(1, dtype),
                                            ctx.op("Exp", ctx.op("Sub", low, safe_high))))
                return ctx.op("Where", finite, ctx.op("Add", high, tail), high)
        else:
            def combine(a, b):
                return ctx.op(onnx_op, a, b)
        return _doubling_scan(ctx, eqn, x, combine, _identity_for(dtype, kind))
    return handler


register_primitive("cumprod")(_cumulative("prod", "Mul"))
register_primitive("cummax")(_cumulative("max", "Max"))
register_primitive("cummin")(_cumulative("min", "Min"))
register_primitive("cumlogsumexp")(_cumulative("logsumexp", None))


def _sorted_order(ctx, keys, key_vars, dimension):
    """Int64 indices that sort along ``dimension`` by ``keys`` lexicographically (first key most significant).

    TopK with largest=0 over the whole axis keeps equal keys in index order, i.e. it is a stable ascending sort;
    sorting by the least significant key first and re-sorting by each more significant key gives the order.
    """
    size = ctx.dim(key_vars[0].aval.shape[dimension])
    order = None
    for key, var in reversed(list(zip(keys, key_vars))):
        if np.dtype(var.aval.dtype) == np.bool_:
            key = ctx.cast(key, np.int32)
        if order is not None:
            key = ctx.op("GatherElements", key, order, axis=dimension)
        _, indices = ctx.op("TopK", key, size, axis=dimension, largest=0, sorted=1, outputs=2)
        order = indices if order is None else ctx.op("GatherElements", order, indices, axis=dimension)
    return order


@register_primitive("sort")
def _sort(ctx, eqn, *operands):
    dimension = int(eqn.params["dimension"])
    num_keys = int(eqn.params.get("num_keys", 1))
    order = _sorted_order(ctx, operands[:num_keys], eqn.invars[:num_keys], dimension)
    return [ctx.op("GatherElements", operand, order, axis=dimension) for operand in operands]


@register_primitive("approx_top_k")
def _approx_top_k(ctx, eqn, x):
    axis = int(eqn.params["reduction_dimension"])
    k = int(eqn.params["k"])
    largest = int(bool(eqn.params.get("is_max_k", True)))
    values, indices = ctx.op("TopK", x, ctx.ints([k]), axis=axis, largest=largest, sorted=1, outputs=2)
    dtype = np.dtype(eqn.outvars[1].aval.dtype)
    return values, (indices if dtype == np.int64 else ctx.cast(indices, dtype))


@register_primitive("top_k")
def _top_k(ctx, eqn, x):
    k = int(eqn.params["k"])
    axis = int(eqn.params.get("axis", -1))
    values, indices = ctx.op("TopK", x, ctx.ints([k]), axis=axis, largest=1, sorted=1, outputs=2)
    dtype = np.dtype(eqn.outvars[1].aval.dtype)
    return values, (indices if dtype == np.int64 else ctx.cast(indices, dtype))
