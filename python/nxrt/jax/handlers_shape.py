"""Shape and data-movement primitives: broadcast, reshape, transpose, squeeze, concatenate, split, unstack, pad,
slices, dynamic slices, rev and iota."""

import numpy as np

from nxrt.jax.builder import is_symbolic
from nxrt.jax.registry import UnsupportedPrimitiveError, register_primitive

INT64_MIN = np.iinfo(np.int64).min


def _shape(var):
    return tuple(var.aval.shape)


def _same_dims(a, b):
    return len(a) == len(b) and all(str(x) == str(y) for x, y in zip(a, b))


@register_primitive("broadcast_in_dim")
def _broadcast_in_dim(ctx, eqn, x, *dynamic):
    if dynamic:
        raise UnsupportedPrimitiveError("broadcast_in_dim", detail="dynamic shape operands are not supported")
    out_shape = tuple(eqn.params["shape"])
    in_shape = _shape(eqn.invars[0])
    dims = tuple(eqn.params["broadcast_dimensions"])
    if _same_dims(in_shape, out_shape):
        return ctx.op("Identity", x)
    trailing = tuple(range(len(out_shape) - len(in_shape), len(out_shape)))
    if dims != trailing:
        # broadcast_dimensions is strictly increasing: the missing axes are new size-1 axes.
        x = ctx.unsqueeze(x, [d for d in range(len(out_shape)) if d not in dims])
    return ctx.expand(x, out_shape)


@register_primitive("reshape")
def _reshape(ctx, eqn, x, *dynamic):
    if dynamic:
        raise UnsupportedPrimitiveError("reshape", detail="dynamic shape operands are not supported")
    if eqn.params.get("dimensions") not in (None, ()):
        x = ctx.transpose(x, eqn.params["dimensions"])
    return ctx.reshape(x, eqn.params["new_sizes"])


@register_primitive("transpose")
def _transpose(ctx, eqn, x):
    perm = list(eqn.params["permutation"])
    return ctx.op("Transpose", x, perm=perm) if perm != sorted(perm) else ctx.op("Identity", x)


@register_primitive("squeeze")
def _squeeze(ctx, eqn, x):
    return ctx.op("Squeeze", x, ctx.ints(eqn.params["dimensions"])) if eqn.params["dimensions"] else \
        ctx.op("Identity", x)


@register_primitive("expand_dims")
def _expand_dims(ctx, eqn, x):
    return ctx.unsqueeze(x, eqn.params["dimensions"])


@register_primitive("concatenate")
def _concatenate(ctx, eqn, *xs):
    return ctx.op("Concat", *xs, axis=int(eqn.params["dimension"]))


@register_primitive("stack")
def _stack(ctx, eqn, *xs):
    axis = int(eqn.params["axis"])
    return ctx.op("Concat", *[ctx.unsqueeze(x, [axis]) for x in xs], axis=axis)


@register_primitive("tile")
def _tile(ctx, eqn, x):
    reps = list(eqn.params["reps"])
    rank = len(eqn.invars[0].aval.shape)
    if len(reps) > rank:
        x = ctx.unsqueeze(x, list(range(len(reps) - rank)))
    return ctx.op("Tile", x, ctx.shape([1] * (rank - len(reps)) + reps))


@register_primitive("dim_as_value")
def _dim_as_value(ctx, eqn):
    dtype = np.dtype(eqn.outvars[0].aval.dtype)
    value = ctx.dim_scalar(eqn.params["dim"])
    return value if dtype == np.int64 else ctx.cast(value, dtype)


@register_primitive("split")
def _split(ctx, eqn, x):
    sizes = eqn.params["sizes"]
    axis = int(eqn.params["axis"])
    if len(sizes) == 1:
        return [ctx.op("Identity", x)]
    split = ctx.shape(sizes)
    return ctx.op("Split", x, split, axis=axis, outputs=len(sizes))


@register_primitive("unstack")
def _unstack(ctx, eqn, x):
    axis = int(eqn.params["axis"])
    count = len(eqn.outvars)
    if count == 1:
        return [ctx.squeeze(x, [axis])]
    pieces = ctx.op("Split", x, ctx.ints([1] * count), axis=axis, outputs=count)
    return [ctx.squeeze(piece, [axis]) for piece in pieces]


@register_primitive("slice")
def _slice(ctx, eqn, x):
    starts = eqn.params["start_indices"]
    limits = eqn.params["limit_indices"]
    strides = eqn.params["strides"]
    axes = [a for a in range(len(starts))
            if not (starts[a] == 0 and str(limits[a]) == str(_shape(eqn.invars[0])[a])
                    and (strides is None or strides[a] == 1))]
    if not axes:
        return ctx.op("Identity", x)
    args = [x, ctx.shape([starts[a] for a in axes]), ctx.shape([limits[a] for a in axes]), ctx.ints(axes)]
    if strides is not None and any(strides[a] != 1 for a in axes):
        args.append(ctx.ints([strides[a] for a in axes]))
    return ctx.op("Slice", *args)


@register_primitive("rev")
def _rev(ctx, eqn, x):
    axes = list(eqn.params["dimensions"])
    if not axes:
        return ctx.op("Identity", x)
    return ctx.slice(x, [-1] * len(axes), [INT64_MIN] * len(axes), axes, [-1] * len(axes))


def _clamped_starts(ctx, eqn, indices, operand_shape, sizes):
    """Int64 [rank] tensor of start indices clamped to [0, dim - size], as dynamic_slice does."""
    parts = [ctx.op("Reshape", ctx.cast(i, np.int64), ctx.ints([1])) for i in indices]
    starts = ctx.op("Concat", *parts, axis=0) if len(parts) > 1 else parts[0]
    upper = ctx.op("Sub", ctx.shape(operand_shape), ctx.shape(sizes))
    return ctx.op("Max", ctx.op("Min", starts, upper), ctx.ints([0] * len(indices)))


@register_primitive("dynamic_slice")
def _dynamic_slice(ctx, eqn, x, *indices):
    sizes = tuple(eqn.params["slice_sizes"])
    shape = _shape(eqn.invars[0])
    indices = indices[:len(shape)]
    starts = _clamped_starts(ctx, eqn, indices, shape, sizes)
    ends = ctx.op("Add", starts, ctx.shape(sizes))
    return ctx.op("Slice", x, starts, ends, ctx.ints(range(len(shape))))


def window_indices(ctx, starts, window_shape):
    """Int64 tensor [*window_shape, rank]: the operand coordinates of every element of a window at ``starts``
    (an int64 [rank] tensor)."""
    rank = len(window_shape)
    coords = []
    for axis, size in enumerate(window_shape):
        start = ctx.op("Gather", starts, ctx.scalar(axis, np.int64), axis=0)
        stop = ctx.op("Add", start, ctx.dim_scalar(size))
        line = ctx.op("Range", start, stop, ctx.scalar(1, np.int64))
        shape = [1] * rank
        shape[axis] = size
        line = ctx.reshape(line, shape)
        coords.append(ctx.unsqueeze(ctx.expand(line, window_shape), [rank]))
    return ctx.op("Concat", *coords, axis=-1) if rank > 1 else coords[0]


@register_primitive("dynamic_update_slice")
def _dynamic_update_slice(ctx, eqn, x, update, *indices):
    shape = _shape(eqn.invars[0])
    update_shape = _shape(eqn.invars[1])
    if not shape:
        return ctx.op("Identity", update)
    starts = _clamped_starts(ctx, eqn, indices, shape, update_shape)
    return ctx.op("ScatterND", x, window_indices(ctx, starts, update_shape), update)


@register_primitive("iota")
def _iota(ctx, eqn):
    dtype = np.dtype(eqn.params["dtype"])
    shape = tuple(eqn.params["shape"])
    dimension = int(eqn.params["dimension"])
    line = ctx.op("Range", ctx.scalar(0, np.int64), ctx.dim_scalar(shape[dimension]), ctx.scalar(1, np.int64))
    if dtype != np.int64:
        line = ctx.cast(line, dtype)
    if len(shape) == 1:
        return line
    keep = [1] * len(shape)
    keep[dimension] = shape[dimension]
    return ctx.expand(ctx.reshape(line, keep), shape)


@register_primitive("pad")
def _pad(ctx, eqn, x, value):
    config = [tuple(c) for c in eqn.params["padding_config"]]
    shape = list(_shape(eqn.invars[0]))
    for axis, (_, _, interior) in enumerate(config):
        if interior:
            x = _interior_pad(ctx, x, value, shape, axis, interior)
            shape[axis] = shape[axis] * (interior + 1) - interior
    los = [c[0] for c in config]
    his = [c[1] for c in config]
    if any(is_symbolic(p) for p in los + his):
        raise UnsupportedPrimitiveError("pad", detail="symbolic padding amounts are not supported")
    if any(p < 0 for p in los + his):
        axes = [a for a in range(len(config)) if los[a] < 0 or his[a] < 0]
        starts = [max(0, -los[a]) for a in axes]
        ends = [his[a] if his[a] < 0 else np.iinfo(np.int64).max for a in axes]
        x = ctx.slice(x, starts, ends, axes)
        los = [max(0, p) for p in los]
        his = [max(0, p) for p in his]
    if not any(los + his):
        return ctx.op("Identity", x)
    return ctx.op("Pad", x, ctx.ints(los + his), value, mode="constant")


def _interior_pad(ctx, x, value, shape, axis, interior):
    """Inserts ``interior`` copies of ``value`` between neighbours along ``axis``."""
    rank = len(shape)
    x = ctx.unsqueeze(x, [axis + 1])
    pads = [0] * (2 * (rank + 1))
    pads[rank + 1 + axis + 1] = interior
    x = ctx.op("Pad", x, ctx.ints(pads), value, mode="constant")
    merged = list(shape)
    merged[axis] = shape[axis] * (interior + 1)
    x = ctx.reshape(x, merged)
    return ctx.op("Slice", x, ctx.ints([0]), ctx.op("Sub", ctx.dim(merged[axis]), ctx.ints([interior])),
                  ctx.ints([axis]))
