"""Call-like primitives (inlined, or ONNX functions) and control flow: cond -> If, while -> Loop, scan -> Loop."""

import numpy as np

from nxrt.jax.builder import Aval
from nxrt.jax.functions import emit_function_call, function_name_of
from nxrt.jax.native_layers import native_call_of
from nxrt.jax.native_ops import emit_native
from nxrt.jax.registry import UnsupportedPrimitiveError, register_primitive

INT64_MIN = np.iinfo(np.int64).min
_CALLS = ("pjit", "jit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr",
          "remat", "remat2", "checkpoint", "custom_lin", "named_call")


def _body_jaxpr(eqn):
    for key in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
        if key in eqn.params:
            return eqn.params[key]
    raise UnsupportedPrimitiveError(eqn.primitive.name, detail="call without a jaxpr parameter")


@register_primitive(*_CALLS)
def _call(ctx, eqn, *args):
    jaxpr = _body_jaxpr(eqn)
    native = native_call_of(eqn.params.get("name", ""))
    if native is not None:
        return emit_native(ctx, native, jaxpr, args)
    function = function_name_of(eqn.params.get("name", ""))
    if function is not None:
        return emit_function_call(ctx, function, jaxpr, args, [v.aval for v in eqn.outvars])
    return ctx.lower(jaxpr, args)


def _aval_inputs(ctx, prefix, avals):
    return [(ctx.fresh(prefix), a.dtype, a.shape) for a in avals]


def _platform_branch(platforms):
    """Index of the entry for the CPU among per-platform alternatives (None is the default entry)."""
    for i, names in enumerate(platforms):
        if names is None or "cpu" in names:
            return i
    return len(platforms) - 1


@register_primitive("platform_index")
def _platform_index(ctx, eqn):
    return ctx.scalar(_platform_branch(eqn.params["platforms"]), np.dtype(eqn.outvars[0].aval.dtype))


@register_primitive("cond")
def _cond(ctx, eqn, index, *operands):
    branches = list(eqn.params["branches"])
    if eqn.params.get("branches_platforms"):
        return ctx.lower(branches[_platform_branch(eqn.params["branches_platforms"])], operands)
    out_avals = [v.aval for v in eqn.outvars]
    index_dtype = np.dtype(eqn.invars[0].aval.dtype)
    if len(branches) == 1:
        return ctx.lower(branches[0], operands)

    def branch_graph(builder, k):
        return builder.subgraph(f"branch{k}", [], lambda child: child.lower(branches[k], operands), out_avals)

    def choose(builder, first):
        """If over branches[first:]: branch `first` when index == first, else the rest."""
        if first == len(branches) - 2:
            then_k, else_k = first + 1, first
            if index_dtype == np.bool_:
                cond = index
            else:
                cond = builder.op("Equal", index, builder.scalar(first + 1, index_dtype)) if first else \
                    builder.op("Not", builder.op("Equal", index, builder.scalar(0, index_dtype)))
            return builder.op("If", cond, outputs=len(out_avals), then_branch=branch_graph(builder, then_k),
                              else_branch=branch_graph(builder, else_k))
        cond = builder.op("Equal", index, builder.scalar(first, index_dtype))
        rest = builder.subgraph(f"switch{first}", [], lambda child: _as_list(choose(child, first + 1)), out_avals)
        return builder.op("If", cond, outputs=len(out_avals), then_branch=branch_graph(builder, first),
                          else_branch=rest)

    return _as_list(choose(ctx, 0))


def _as_list(names):
    return [names] if isinstance(names, str) else list(names)


@register_primitive("while")
def _while(ctx, eqn, *args):
    p = eqn.params
    cond_jaxpr, body_jaxpr = p["cond_jaxpr"], p["body_jaxpr"]
    nc, nb = int(p["cond_nconsts"]), int(p["body_nconsts"])
    cond_consts, body_consts, init = args[:nc], args[nc:nc + nb], args[nc + nb:]
    carry_avals = [v.aval for v in eqn.outvars]
    first = ctx.lower(cond_jaxpr, list(cond_consts) + list(init))[0]
    iteration, cond_in = ctx.fresh("iter"), ctx.fresh("cond")
    carried = _aval_inputs(ctx, "carry", carry_avals)

    def body(child):
        names = [n for n, _, _ in carried]
        new = child.lower(body_jaxpr, list(body_consts) + names)
        keep_going = child.lower(cond_jaxpr, list(cond_consts) + new)[0]
        return [keep_going] + new

    bool_aval = cond_jaxpr.out_avals[0] if hasattr(cond_jaxpr, "out_avals") else None
    graph = ctx.subgraph("while_body", [(iteration, np.int64, ()), (cond_in, np.bool_, ())] + carried, body,
                         [bool_aval or Aval(np.bool_, ())] + carry_avals)
    return _as_list(ctx.op("Loop", None, first, *init, outputs=len(init), body=graph))


@register_primitive("scan")
def _scan(ctx, eqn, *args):
    p = eqn.params
    jaxpr = p["jaxpr"]
    n_consts, n_carry = int(p["num_consts"]), int(p["num_carry"])
    length, reverse = p["length"], bool(p["reverse"])
    consts, init, xs = args[:n_consts], args[n_consts:n_consts + n_carry], args[n_consts + n_carry:]
    carry_avals = [v.aval for v in eqn.outvars[:n_carry]]
    ys_avals = [v.aval for v in eqn.outvars[n_carry:]]
    iteration, cond_in = ctx.fresh("iter"), ctx.fresh("cond")
    carried = _aval_inputs(ctx, "carry", carry_avals)
    trip_count = ctx.dim_scalar(length)

    def body(child):
        step = iteration
        if reverse:
            step = child.op("Sub", child.op("Sub", trip_count, child.scalar(1, np.int64)), iteration)
        slices = [child.op("Gather", x, step, axis=0) for x in xs]
        outs = child.lower(jaxpr, list(consts) + [n for n, _, _ in carried] + slices)
        return [child.op("Identity", cond_in)] + outs

    y_slice_avals = [Aval(a.dtype, a.shape[1:]) for a in ys_avals]  # one iteration's piece of each output
    graph = ctx.subgraph("scan_body", [(iteration, np.int64, ()), (cond_in, np.bool_, ())] + carried, body,
                         [Aval(np.bool_, ())] + carry_avals + y_slice_avals)
    outs = _as_list(ctx.op("Loop", trip_count, None, *init, outputs=len(init) + len(ys_avals), body=graph))
    if reverse:
        outs = outs[:n_carry] + [ctx.slice(y, [-1], [INT64_MIN], [0], [-1]) for y in outs[n_carry:]]
    return outs
