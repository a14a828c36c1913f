"""Reductions, arg-reductions, cumulative ops, sort and top_k."""

import numpy as np

from nxrt.jax.builder import Aval, is_symbolic
from nxrt.jax.registry import register_primitive


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


_BITWISE = {"reduce_and": ("And", "BitwiseAnd", -1), "reduce_or": ("Or", "BitwiseOr", 0),
            "reduce_xor": ("Xor", "BitwiseXor", 0)}


def _tree_reduce(ctx, x, shape, axis, combine, identity, dtype):
    """Reduces ``axis`` (kept as size 1) in log2(n) steps of ``combine``: halves of a static axis, the last element
    of the doubling scan for a symbolic one (which must not be empty)."""
    n = shape[axis]
    if is_symbolic(n):
        scanned = _doubling_loop(ctx, Aval(dtype, shape), x, lambda b, lhs, rhs: b.op(combine, lhs, rhs),
                                 identity, axis, False)
        return ctx.op("Gather", scanned, ctx.ints([-1]), axis=axis)
    if n == 0:
        out_shape = list(shape)
        out_shape[axis] = 1
        return ctx.zeros(out_shape, dtype, identity)
    while n > 1:
        half = n // 2
        merged = ctx.op(combine, ctx.slice(x, [0], [half], [axis]), ctx.slice(x, [half], [2 * half], [axis]))
        x = ctx.op("Concat", merged, ctx.slice(x, [2 * half], [n], [axis]), axis=axis) if n % 2 else merged
        n = half + n % 2
    return x


@register_primitive(*_BITWISE)
def _reduce_bitwise(ctx, eqn, x):
    """Logical reductions of booleans (all/any through ReduceMin/Max of 0/1), bitwise ones of integers and xor
    of either by a tree of pairwise combines over each static axis."""
    axes = sorted(int(a) for a in eqn.params["axes"])
    dtype = _dtype(eqn.invars[0])
    if not axes:
        return ctx.op("Identity", x)
    bool_op, int_op, int_identity = _BITWISE[eqn.primitive.name]
    if dtype == np.bool_ and eqn.primitive.name != "reduce_xor":
        onnx_op = "ReduceMin" if eqn.primitive.name == "reduce_and" else "ReduceMax"
        return ctx.cast(ctx.op(onnx_op, ctx.cast(x, np.int32), ctx.ints(axes), keepdims=0), np.bool_)
    combine = bool_op if dtype == np.bool_ else int_op
    identity = bool(int_identity) if dtype == np.bool_ else np.array(int_identity).astype(dtype)[()]
    shape = list(eqn.invars[0].aval.shape)
    for axis in axes:
        x = _tree_reduce(ctx, x, shape, axis, combine, identity, dtype)
        shape[axis] = 1
    return ctx.squeeze(x, axes)


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
    """Inclusive scan along ``axis`` by log-step doubling: x[i] = combine(x[i], x[i - k]) for k = 1, 2, 4, ...,
    with x[i - k] the identity before the start.

    ``combine(builder, a, b)`` emits through ``builder``. A static axis unrolls the steps; a symbolic one runs
    them in a Loop while k < n.
    """
    axis = int(eqn.params["axis"])
    reverse = bool(eqn.params.get("reverse", False))
    shape = list(eqn.invars[0].aval.shape)
    n = shape[axis]
    dtype = _dtype(eqn.invars[0])
    if is_symbolic(n):
        return _doubling_loop(ctx, eqn.invars[0].aval, x, combine, identity, axis, reverse)
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
        x = combine(ctx, x, shifted)
        k *= 2
    return x


def _doubling_loop(ctx, aval, x, combine, identity, axis, reverse):
    """The doubling steps of ``_doubling_scan`` as an ONNX Loop carrying (k, x), for a symbolic axis length."""
    dtype = np.dtype(aval.dtype)
    rank = len(aval.shape)
    n = ctx.dim(aval.shape[axis])
    one = ctx.ints([1])
    step_in, x_in = ctx.fresh("k"), ctx.fresh("x")

    def body(child):
        parts = [child.op("Shape", x_in, end=axis)] if axis else []
        parts.append(step_in)
        if axis + 1 < rank:
            parts.append(child.op("Shape", x_in, start=axis + 1))
        fill = child.op("Expand", child.scalar(identity, dtype), child.op("Concat", *parts, axis=0))
        kept = child.op("Sub", n, step_in)
        axes = child.ints([axis])
        if reverse:
            moved = child.op("Slice", x_in, step_in, n, axes)
            shifted = child.op("Concat", moved, fill, axis=axis)
        else:
            moved = child.op("Slice", x_in, child.ints([0]), kept, axes)
            shifted = child.op("Concat", fill, moved, axis=axis)
        doubled = child.op("Mul", step_in, child.ints([2]))
        keep_going = child.op("Squeeze", child.op("Less", doubled, n), child.ints([0]))
        return [keep_going, doubled, combine(child, x_in, shifted)]

    inputs = [(ctx.fresh("iter"), np.int64, ()), (ctx.fresh("cond"), np.bool_, ()), (step_in, np.int64, (1,)),
              (x_in, dtype, aval.shape)]
    graph = ctx.subgraph("cumulative_body", inputs, body,
                         [Aval(np.bool_, ()), Aval(np.int64, (1,)), Aval(dtype, aval.shape)])
    keep_going = ctx.op("Squeeze", ctx.op("Less", one, n), ctx.ints([0]))
    _, out = ctx.op("Loop", None, keep_going, one, x, outputs=2, body=graph)
    return out


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
            def combine(b, lhs, rhs):
                high = b.op("Max", lhs, rhs)
                low = b.op("Min", lhs, rhs)
                finite = b.op("Not", b.op("IsInf", high))
                safe_high = b.op("Where", finite, high, b.scalar(0, dtype))
                tail = b.op("Log", b.op("Add", b.scalar(1, dtype), b.op("Exp", b.op("Sub", low, safe_high))))
                return b.op("Where", finite, b.op("Add", high, tail), high)
        else:
            def combine(b, lhs, rhs):
                return b.op(onnx_op, lhs, rhs)
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
