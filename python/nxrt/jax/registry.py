"""The primitive registry: one handler per JAX primitive, extensible by users.

A handler is called as ``handler(ctx, eqn, *inputs)`` where ``ctx`` is the :class:`~nxrt.jax.builder.GraphBuilder`
of the graph being built, ``eqn`` the jaxpr equation (``eqn.params``, ``eqn.invars[i].aval``,
``eqn.outvars[i].aval``) and ``inputs`` the ONNX value names of the equation's operands. It returns the ONNX value
name of the single output, or a sequence of names, one per ``eqn.outvars``.
"""

__all__ = ["UnsupportedPrimitiveError", "handler_for", "register_primitive", "registered_primitives"]

_HANDLERS = {}

_HOW_TO_ADD = '''Add a handler before exporting, for example:

    import nxrt.jax

    @nxrt.jax.register_primitive("{name}")
    def _{ident}(ctx, eqn, *inputs):
        # eqn.params holds the primitive's parameters; eqn.outvars[0].aval its output shape and dtype
        return ctx.op("SomeOnnxOp", *inputs)

See docs/jax_export.md, "Adding a primitive".'''


class UnsupportedPrimitiveError(NotImplementedError):
    """A jaxpr equation uses a primitive (or a parameter combination) that has no ONNX lowering."""

    def __init__(self, primitive, where="", detail=""):
        self.primitive = primitive
        self.where = where
        self.detail = detail
        lines = [f"nxrt.jax: cannot export primitive '{primitive}'" + (f": {detail}" if detail else "")]
        if where:
            lines.append(f"  used at {where}")
        if not detail:
            ident = "".join(c if c.isalnum() else "_" for c in primitive)
            lines.append(_HOW_TO_ADD.format(name=primitive, ident=ident))
        super().__init__("\n".join(lines))


def register_primitive(*names, override=True):
    """Decorator registering ``handler(ctx, eqn, *inputs)`` for the JAX primitives called ``names``.

    A later registration for the same name replaces the earlier one unless ``override`` is False, so a plugin can
    replace a built-in lowering (for example to emit a fused ONNX op).
    """
    if not names:
        raise TypeError("register_primitive needs at least one primitive name")

    def decorate(handler):
        for name in names:
            if override or name not in _HANDLERS:
                _HANDLERS[name] = handler
        return handler

    return decorate


def handler_for(name):
    """The handler registered for primitive ``name``, or None."""
    return _HANDLERS.get(name)


def registered_primitives():
    """Sorted names of every primitive with a handler."""
    return sorted(_HANDLERS)
