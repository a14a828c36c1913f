"""@onnx_function: export a function or module class as a named ONNX function (FunctionProto) instead of inline.

The decorated callable runs through ``jax.jit`` under a marked name; the exporter recognises the resulting ``jit``
equation, lowers its jaxpr once per distinct signature into a FunctionProto in the ``nxrt.jax.functions`` domain,
and calls it with a node. Arrays the body closes over (a module's weights) become extra function inputs fed from
the caller's constants, so instances of one module class that differ only in weights share one function.
"""

import functools

import numpy as np
from onnx import helper

__all__ = ["onnx_function", "function_name_of", "emit_function_call"]

FUNCTION_DOMAIN = "nxrt.jax.functions"
_MARK = "nxrt_onnx_function__"


def function_name_of(jit_name):
    """The user-facing function name if ``jit_name`` marks an @onnx_function call, else None."""
    name = str(jit_name or "")
    return name[len(_MARK):] if name.startswith(_MARK) else None


def onnx_function(target=None, *, name=None):
    """Decorator: calls of the decorated function, or of instances of the decorated class, are exported as one
    named ONNX function each (``@onnx_function`` or ``@onnx_function(name="Block")``)."""
    if target is None:
        return functools.partial(onnx_function, name=name)
    import jax

    label = name or getattr(target, "__name__", "function")
    ident = "".join(c if c.isalnum() or c == "_" else "_" for c in label)

    def run_marked(call, args):
        call.__name__ = _MARK + ident
        call.__qualname__ = call.__name__
        return jax.jit(call)(*args)

    if isinstance(target, type):
        original = target.__call__

        @functools.wraps(original)
        def method(self, *args, **kwargs):
            return run_marked(lambda *a: original(self, *a, **kwargs), args)

        target.__call__ = method
        return target

    @functools.wraps(target)
    def wrapper(*args, **kwargs):
        return run_marked(lambda *a: target(*a, **kwargs), args)

    return wrapper


def _signature(jaxpr, consts, arg_avals):
    parts = [str(jaxpr)]
    parts += [f"{np.asarray(c).dtype}{np.shape(c)}" for c in consts]
    parts += [f"{a.dtype}{tuple(str(d) for d in a.shape)}" for a in arg_avals]
    return "|".join(parts)


def emit_function_call(ctx, name, closed, args, out_avals):
    """Emits a call node to the FunctionProto for ``closed`` (built on first use); returns the output names."""
    from nxrt.jax.builder import GraphBuilder, is_symbolic

    consts = list(getattr(closed, "consts", ()))
    jaxpr = getattr(closed, "jaxpr", closed)
    arg_avals = [v.aval for v in jaxpr.invars]
    exporter = ctx.exporter
    key = _signature(jaxpr, consts, arg_avals)
    cache = exporter.__dict__.setdefault("function_keys", {})
    fn_name = cache.get(key)
    if fn_name is None:
        taken = {f.name for f in exporter.functions.values()}
        fn_name, suffix = name, 1
        while fn_name in taken:
            suffix += 1
            fn_name = f"{name}_{suffix}"
        const_inputs = [f"w{i}" for i in range(len(consts))]
        arg_inputs = [f"x{i}" for i in range(len(args))]
        body = GraphBuilder(exporter, function_inputs=const_inputs + arg_inputs)
        for input_name, aval in zip(arg_inputs, arg_avals):
            for axis, d in enumerate(aval.shape):
                var = d._to_var() if is_symbolic(d) and hasattr(d, "_to_var") else None
                if var is not None and var not in body.dim_sources:
                    body.dim_sources[var] = (lambda n=input_name, a=axis: body.op("Shape", n, start=a, end=a + 1))
        outs = body.lower(jaxpr, arg_inputs, consts=const_inputs)
        out_names = [f"y{i}" for i in range(len(outs))]
        for out, out_name in zip(outs, out_names):
            body.op("Identity", out, outputs=[out_name])
        exporter.functions[fn_name] = helper.make_function(
            FUNCTION_DOMAIN, fn_name, const_inputs + arg_inputs, out_names, body.nodes,
            opset_imports=[helper.make_opsetid("", exporter.opset), helper.make_opsetid(FUNCTION_DOMAIN, 1)])
        cache[key] = fn_name
    const_names = [ctx.const(np.asarray(c)) for c in consts]
    outs = ctx.op(fn_name, *const_names, *args, outputs=len(out_avals), domain=FUNCTION_DOMAIN)
    return [outs] if isinstance(outs, str) else outs
