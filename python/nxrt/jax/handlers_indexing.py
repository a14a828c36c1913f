"""gather and scatter (scatter, scatter-add, -mul, -min, -max) as GatherND / ScatterND.

The operand is transposed so that batching dimensions come first and indexed dimensions next, in the order the
index vector names them; the remaining window dimensions follow. That turns any XLA-style gather or scatter
whose indexed dimensions take single elements into one GatherND / ScatterND plus transposes.
"""

import numpy as np

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


def _bounds_and_clamp(ctx, indices, upper):
    """(valid, clamped): ``indices`` [..., k] int64 against per-component inclusive upper bounds (int64 [k])."""
    zero = ctx.ints([0])
    valid_each = ctx.op("And", ctx.op("GreaterOrEqual", indices, zero), ctx.op("LessOrEqual", indices, upper))
    valid = ctx.cast(ctx.op("ReduceMin", ctx.cast(valid_each, np.int32), ctx.ints([-1]), keepdims=0), np.bool_)
    clamped = ctx.op("Max", ctx.op("Min", indices, upper), zero)
    return valid, clamped


def _upper(ctx, operand_shape, slice_sizes, dims):
    return ctx.op("Sub", ctx.shape([operand_shape[d] for d in dims]), ctx.ints([slice_sizes[d] for d in dims]))


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
    mode = _mode_name(p.get("mode"))
    valid = None
    if mode in ("CLIP", "FILL_OR_DROP"):
        upper = _upper(ctx, shape, sizes, index_map)
        valid, indices = _bounds_and_clamp(ctx, indices, upper)
        if mode == "CLIP":
            valid = None
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
    if valid is not None:
        # valid has the index batch shape; put it where the batch dims sit in the output.
        valid = ctx.unsqueeze(valid, offset_dims)
        fill = ctx.scalar(_fill_value(dtype, p.get("fill_value")), dtype)
        out = ctx.op("Where", valid, out, fill)
    return out


_REDUCTIONS = {"scatter": "none", "scatter-add": "add", "scatter_add": "add", "scatter-mul": "mul",
               "scatter_mul": "mul", "scatter-min": "min", "scatter_min": "min", "scatter-max": "max",
               "scatter_max": "max"}


def _neutral(dtype, reduction):
    if reduction == "add":
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
    valid = None
    if mode in ("CLIP", "FILL_OR_DROP"):
        upper = _upper(ctx, shape, sizes, full_map)
        valid, indices = _bounds_and_clamp(ctx, indices, upper)
    if windowed:
        indices = _window_offsets(ctx, indices, n_ib, full_map, windowed, sizes)
    if mode == "FILL_OR_DROP":
        mask = ctx.unsqueeze(valid, list(range(n_ib, n_ib + len(windowed) + len(rest))))
        if reduction == "none":
            keep = ctx.op("GatherND", data, indices)
        else:
            keep = ctx.scalar(_neutral(dtype, reduction), dtype)
        updates = ctx.op("Where", mask, updates, keep)
    out = ctx.op("ScatterND", data, indices, updates, reduction=None if reduction == "none" else reduction)
    inverse = [0] * rank
    for i, d in enumerate(perm):
        inverse[d] = i
    return ctx.transpose(out, inverse)
