"""gather and scatter (scatter, scatter-add, -sub, -mul, -min, -max) as Gather / GatherND / ScatterND.

The operand is transposed so that batching dimensions come first and indexed dimensions next, in the order the
index vector names them; the remaining window dimensions follow. That turns any XLA-style gather or scatter
whose indexed dimensions take single elements into one GatherND / ScatterND plus transposes. A gather that takes
whole slices along one axis (``x[i]``, ``jnp.take``, embedding lookups) becomes a plain ``Gather``.

Gather start indices are clamped so that each window fits, as XLA defines gather (and as JAX computes
``x[i]``, whose mode is PROMISE_IN_BOUNDS); FILL_OR_DROP also replaces out-of-bounds windows by the fill value.
"""

import numpy as np

from nxrt.jax.builder import Aval
from nxrt.jax.registry import UnsupportedPrimitiveError, register_primitive


def _mode_name(mode):
    return str(mode).rsplit(".", 1)[-1].upper()


def _fill_value(dtype, fill):
    if fill is not None:
        return fill
    if np.issubdtype(dtype, np.floating) or dtype.name == "bfloat16":
        return np.nan
    if dtype == np.bool_:
        return True
    info = np.iinfo(dtype)
    return info.min if np.issubdtype(dtype, np.signedinteger) else info.max


def _bounds_and_clamp(ctx, indices, upper, need_valid=True):
    """(valid, clamped): ``indices`` [..., k] int64 against per-component inclusive upper bounds (int64 [k]);
    valid is None unless ``need_valid``."""
    zero = ctx.ints([0])
    clamped = ctx.op("Max", ctx.op("Min", indices, upper), zero)
    if not need_valid:
        return None, clamped
    valid_each = ctx.op("And", ctx.op("GreaterOrEqual", indices, zero), ctx.op("LessOrEqual", indices, upper))
    valid = ctx.cast(ctx.op("ReduceMin", ctx.cast(valid_each, np.int32), ctx.ints([-1]), keepdims=0), np.bool_)
    return valid, clamped


def _upper(ctx, operand_shape, slice_sizes, dims):
    return ctx.op("Sub", ctx.shape([operand_shape[d] for d in dims]), ctx.shape([slice_sizes[d] for d in dims]))


def _window_offsets(ctx, indices, n_ib, index_map, windowed, sizes):
    """Indices [*ib, k] -> [*ib, *window, k]: every element of each window on an indexed dimension becomes its
    own single-element gather (start + 0 .. size-1 along that dimension's component)."""
    k = len(index_map)
    n_w = len(windowed)
    indices = ctx.unsqueeze(indices, list(range(n_ib, n_ib + n_w)))
    for t, d in enumerate(windowed):
        line = ctx.op("Range", ctx.scalar(0, np.int64), ctx.dim_scalar(sizes[d]), ctx.scalar(1, np.int64))
        shape = [1] * (n_ib + n_w + 1)
        shape[n_ib + t] = sizes[d]
        one_hot = np.zeros(k, np.int64)
        one_hot[index_map.index(d)] = 1
        offsets = ctx.op("Mul", ctx.reshape(line, shape), ctx.const(one_hot))
        indices = ctx.op("Add", indices, offsets)
    return indices


@register_primitive("gather")
def _gather(ctx, eqn, operand, indices):
    p = eqn.params
    dn = p["dimension_numbers"]
    offset_dims = list(dn.offset_dims)
    collapsed = list(dn.collapsed_slice_dims)
    index_map = list(dn.start_index_map)
    obd = list(getattr(dn, "operand_batching_dims", ()))
    sbd = list(getattr(dn, "start_indices_batching_dims", ()))
    sizes = list(p["slice_sizes"])
    shape = list(eqn.invars[0].aval.shape)
    ishape = list(eqn.invars[1].aval.shape)
    dtype = np.dtype(eqn.invars[0].aval.dtype)
    rank, n_ib = len(shape), len(ishape) - 1
    if not index_map:
        raise UnsupportedPrimitiveError("gather", detail="empty start_index_map")
    rest = [d for d in range(rank) if d not in obd and d not in index_map]
    partial = [d for d in rest if str(sizes[d]) != str(shape[d])]
    if partial:
        operand = ctx.slice(operand, [0] * len(partial), [sizes[d] for d in partial], partial)
    indices = ctx.cast(indices, np.int64)
    fill = _mode_name(p.get("mode")) == "FILL_OR_DROP"
    valid, indices = _bounds_and_clamp(ctx, indices, _upper(ctx, shape, sizes, index_map), need_valid=fill)
    whole = [j for j, d in enumerate(index_map) if d not in collapsed and str(sizes[d]) == str(shape[d])]
    if whole and len(whole) < len(index_map):
        # A window spanning its whole axis starts at 0 once clamped: that index component carries nothing.
        keep = [j for j in range(len(index_map)) if j not in whole]
        indices = ctx.op("Gather", indices, ctx.ints(keep), axis=-1)
        index_map = [index_map[j] for j in keep]
        rest = [d for d in range(rank) if d not in obd and d not in index_map]
    axis = _single_axis_take(index_map, collapsed, obd, offset_dims, shape, sizes, n_ib)
    if axis is not None:
        out = ctx.op("Gather", operand, ctx.squeeze(indices, [n_ib]), axis=axis)
        return _fill_invalid(ctx, out, valid, offset_dims, dtype, p.get("fill_value"))
    operand = ctx.transpose(operand, obd + index_map + rest)
    others = [i for i in range(n_ib) if i not in sbd]
    windowed = [d for d in index_map if str(sizes[d]) != "1"]
    if windowed:
        indices = _window_offsets(ctx, indices, n_ib, index_map, windowed, sizes)
    n_w = len(windowed)
    indices = ctx.transpose(indices, sbd + others + list(range(n_ib, n_ib + n_w + 1)))
    out = ctx.op("GatherND", operand, indices, batch_dims=len(obd))
    labels = [("ib", i) for i in sbd + others] + [("op", d) for d in windowed] + [("op", d) for d in rest]
    kept_indexed = [d for d in index_map if d not in collapsed and d not in windowed]
    if kept_indexed:
        out = ctx.unsqueeze(out, list(range(len(labels), len(labels) + len(kept_indexed))))
        labels += [("op", d) for d in kept_indexed]
    window_dims = [d for d in range(rank) if d not in collapsed and d not in obd]
    out_rank = n_ib + len(offset_dims)
    final, batch_counter = [], 0
    for j in range(out_rank):
        if j in offset_dims:
            final.append(labels.index(("op", window_dims[offset_dims.index(j)])))
        else:
            final.append(labels.index(("ib", batch_counter)))
            batch_counter += 1
    out = ctx.transpose(out, final)
    return _fill_invalid(ctx, out, valid, offset_dims, dtype, p.get("fill_value"))


def _fill_invalid(ctx, out, valid, offset_dims, dtype, fill_value):
    """``out`` with the windows whose start was out of bounds replaced by the fill value (``valid`` None: as is)."""
    if valid is None:
        return out
    # valid has the index batch shape; put it where the batch dims sit in the output.
    valid = ctx.unsqueeze(valid, offset_dims)
    return ctx.op("Where", valid, out, ctx.scalar(_fill_value(dtype, fill_value), dtype))


def _single_axis_take(index_map, collapsed, obd, offset_dims, shape, sizes, n_ib):
    """The axis ``a`` when the gather is ONNX ``Gather(operand, indices, axis=a)``: one indexed axis taken element
    by element, every other axis kept whole, and the index batch dims placed where ``a`` was."""
    if obd or len(index_map) != 1:
        return None
    a = index_map[0]
    rank = len(shape)
    if collapsed != [a] or str(sizes[a]) != "1":
        return None
    if any(str(sizes[d]) != str(shape[d]) for d in range(rank) if d != a):
        return None
    expected = list(range(a)) + list(range(a + n_ib, n_ib + rank - 1))
    return a if offset_dims == expected else None


_REDUCTIONS = {"scatter": "none", "scatter-add": "add", "scatter_add": "add", "scatter-sub": "sub",
               "scatter_sub": "sub", "scatter-mul": "mul",
               "scatter_mul": "mul", "scatter-min": "min", "scatter_min": "min", "scatter-max": "max",
               "scatter_max": "max"}


def _neutral(dtype, reduction):
    if reduction in ("add", "sub"):
        return 0
    if reduction == "mul":
        return 1
    if np.issubdtype(dtype, np.floating):
        return np.inf if reduction == "min" else -np.inf
    info = np.iinfo(dtype)
    return info.max if reduction == "min" else info.min


@register_primitive(*_REDUCTIONS)
def _scatter(ctx, eqn, operand, indices, updates):
    p = eqn.params
    reduction = _REDUCTIONS[eqn.primitive.name]
    if reduction == "sub":
        # x - u as x + (-u); unsigned integers negate by wrapping (0 - u), as their subtraction does.
        dtype = np.dtype(eqn.invars[2].aval.dtype)
        negate = np.issubdtype(dtype, np.unsignedinteger)
        updates = ctx.op("Sub", ctx.scalar(0, dtype), updates) if negate else ctx.op("Neg", updates)
        reduction = "add"
    dn = p["dimension_numbers"]
    window = list(dn.update_window_dims)
    inserted = list(dn.inserted_window_dims)
    index_map = list(dn.scatter_dims_to_operand_dims)
    obd = list(getattr(dn, "operand_batching_dims", ()))
    sbd = list(getattr(dn, "scatter_indices_batching_dims", ()))
    shape = list(eqn.invars[0].aval.shape)
    ishape = list(eqn.invars[1].aval.shape)
    ushape = list(eqn.invars[2].aval.shape)
    dtype = np.dtype(eqn.invars[0].aval.dtype)
    rank, n_ib = len(shape), len(ishape) - 1
    window_dims = [d for d in range(rank) if d not in inserted and d not in obd]
    window_size = {d: ushape[u] for d, u in zip(window_dims, window)}
    rest = [d for d in range(rank) if d not in obd and d not in index_map]
    for d in window_dims:
        if d not in index_map and str(window_size[d]) != str(shape[d]):
            raise UnsupportedPrimitiveError(eqn.primitive.name, detail="partial window on a non-indexed dimension")
    windowed = [d for d in index_map if d in window_size and str(window_size[d]) != "1"]
    indices = ctx.cast(indices, np.int64)
    if obd:
        parts = []
        batch_shape = ishape[:-1]
        for axis in sbd:
            line = ctx.op("Range", ctx.scalar(0, np.int64), ctx.dim_scalar(batch_shape[axis]),
                          ctx.scalar(1, np.int64))
            keep = [1] * n_ib
            keep[axis] = batch_shape[axis]
            parts.append(ctx.unsqueeze(ctx.expand(ctx.reshape(line, keep), batch_shape), [n_ib]))
        indices = ctx.op("Concat", *parts, indices, axis=-1)
    full_map = obd + index_map
    sizes = {d: window_size.get(d, 1) for d in full_map}
    mode = _mode_name(p.get("mode"))
    perm = obd + index_map + rest
    data = ctx.transpose(operand, perm)
    scatter_axes = [u for u in range(len(ushape)) if u not in window]
    single = [window[window_dims.index(d)] for d in window_dims if d in index_map and d not in windowed]
    updates = ctx.squeeze(updates, single)
    remaining = [u for u in range(len(ushape)) if u not in single]
    windowed_axes = [window[window_dims.index(d)] for d in windowed]
    rest_axes = [window[window_dims.index(d)] for d in rest]
    updates = ctx.transpose(updates, [remaining.index(u) for u in scatter_axes + windowed_axes + rest_axes])
    update_fn = p.get("update_jaxpr") if reduction == "none" else None
    in_order = update_fn is not None and not _returns_update(update_fn)
    valid = None
    if mode in ("CLIP", "FILL_OR_DROP"):
        upper = _upper(ctx, shape, sizes, full_map)
        valid, indices = _bounds_and_clamp(ctx, indices, upper, need_valid=mode == "FILL_OR_DROP")
    rows = None
    if valid is not None and reduction == "none" and not in_order:
        data, indices, rows = _route_to_scratch(ctx, data, indices, valid, sizes[full_map[0]], dtype)
    if windowed:
        indices = _window_offsets(ctx, indices, n_ib, full_map, windowed, sizes)
    lead = n_ib + len(windowed)
    if in_order:
        data_shape = [shape[d] for d in perm]
        out = _scatter_in_order(ctx, data, data_shape, indices, updates, valid, update_fn,
                                p.get("update_consts", ()), lead, len(full_map), dtype)
    else:
        if valid is not None and reduction != "none":
            mask = ctx.unsqueeze(valid, list(range(n_ib, lead + len(rest))))
            updates = ctx.op("Where", mask, updates, ctx.scalar(_neutral(dtype, reduction), dtype))
        out = ctx.op("ScatterND", data, indices, updates, reduction=None if reduction == "none" else reduction)
    if rows is not None:
        out = ctx.op("Slice", out, ctx.ints([0]), rows, ctx.ints([0]))
    inverse = [0] * rank
    for i, d in enumerate(perm):
        inverse[d] = i
    return ctx.transpose(out, inverse)


def _returns_update(jaxpr):
    """Whether a scatter's update computation is ``lambda old, new: new`` (a plain set)."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    return not jaxpr.eqns and jaxpr.outvars[0] is jaxpr.invars[1]


def _route_to_scratch(ctx, data, indices, valid, window, dtype):
    """(data, indices, rows) for a set-scatter that drops out-of-bounds windows: the data gets ``window`` scratch
    rows appended on axis 0 and invalid starts point at them, so a dropped update never overwrites a kept one;
    ``rows`` (int64 [1]) is where the caller cuts the scratch off again."""
    rows = ctx.op("Shape", data, start=0, end=1)
    scratch_shape = ctx.op("Concat", ctx.dim(window), ctx.op("Shape", data, start=1), axis=0)
    data = ctx.op("Concat", data, ctx.op("Expand", ctx.scalar(0, dtype), scratch_shape), axis=0)
    k = ctx.op("Shape", indices, start=-1)
    scratch_start = ctx.op("Concat", rows, ctx.op("Expand", ctx.ints([0]), ctx.op("Sub", k, ctx.ints([1]))),
                           axis=0)
    indices = ctx.op("Where", ctx.unsqueeze(valid, [-1]), indices, scratch_start)
    return data, indices, rows


def _scatter_in_order(ctx, data, data_shape, indices, updates, valid, update_fn, consts, lead, k, dtype):
    """A scatter whose update computation is not a reduction ONNX has (``x.at[i].apply(f)``): an ONNX Loop applies
    the updates one at a time, in order, so repeated indices compose as in XLA; invalid ones (drop mode) write
    back the old value."""
    flat_indices = ctx.op("Reshape", indices, ctx.ints([-1, k]))
    flat_updates = ctx.op("Reshape", updates, ctx.op("Concat", ctx.ints([-1]),
                                                     ctx.op("Shape", updates, start=lead), axis=0))
    flat_valid = None
    if valid is not None:
        valid = ctx.op("Expand", valid, ctx.op("Shape", indices, end=lead))
        flat_valid = ctx.op("Reshape", valid, ctx.ints([-1]))
    count = ctx.op("Squeeze", ctx.op("Shape", flat_indices, start=0, end=1), ctx.ints([0]))
    step, keep_going, current = ctx.fresh("i"), ctx.fresh("cond"), ctx.fresh("data")
    slab_rank = 1 + len(data_shape) - k

    def body(child):
        at = child.op("Unsqueeze", step, child.ints([0]))
        where = child.op("Gather", flat_indices, at, axis=0)
        old = child.op("GatherND", current, where)
        new = child.lower(update_fn, [old, child.op("Gather", flat_updates, at, axis=0)], consts=consts)[0]
        if flat_valid is not None:
            ok = child.unsqueeze(child.op("Gather", flat_valid, at, axis=0), list(range(1, slab_rank)))
            new = child.op("Where", ok, new, old)
        return [child.op("Identity", keep_going), child.op("ScatterND", current, where, new)]

    inputs = [(step, np.int64, ()), (keep_going, np.bool_, ()), (current, dtype, data_shape)]
    graph = ctx.subgraph("scatter_step", inputs, body, [Aval(np.bool_, ()), Aval(dtype, data_shape)])
    return ctx.op("Loop", count, None, data, body=graph)
