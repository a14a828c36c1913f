"""Native ONNX ops for common layers: LayerNorm -> LayerNormalization, RMSNorm -> RMSNormalization.

While to_onnx traces, the ``__call__`` of Flax NNX LayerNorm / RMSNorm and Equinox LayerNorm / RMSNorm is replaced
by a call through ``jax.jit`` under a marked name whose body is the layer's formula written over (x, scale, bias).
The exporter's call handler recognises the mark and emits the single ONNX op; anything it cannot express (several
normalised axes, an opset without the op) falls back to inlining that body. Outside to_onnx the layers are
untouched, so verify compares against the libraries' own code.
"""

import contextlib
import sys

import numpy as np

__all__ = ["native_layers", "native_op_of", "emit_native"]

_MARK = "nxrt_native__"
_ATTRS = {}


def native_op_of(jit_name):
    """(op, attributes) when ``jit_name`` marks a native layer call, else None."""
    name = str(jit_name or "")
    return _ATTRS.get(name) if name.startswith(_MARK) else None


def _reference(op, epsilon):
    import jax.numpy as jnp

    if op == "LayerNormalization":
        def body(x, scale, bias):
            mean = jnp.mean(x, axis=-1, keepdims=True)
            var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
            return (x - mean) * (1.0 / jnp.sqrt(var + epsilon)) * scale + bias
    else:
        def body(x, scale):
            return x * (1.0 / jnp.sqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + epsilon)) * scale
    return body


def _marked_call(op, epsilon, args):
    import jax

    body = _reference(op, float(epsilon))
    entry = (op, {"epsilon": float(epsilon)})
    # One name per distinct (op, attributes): identical layers trace to identical jaxprs (shared ONNX functions).
    name = next((n for n, e in _ATTRS.items() if e == entry), f"{_MARK}{op}_{len(_ATTRS)}")
    _ATTRS[name] = entry
    body.__name__ = body.__qualname__ = name
    return jax.jit(body)(*args)


def _value(param, like, fill):
    import jax
    import jax.numpy as jnp

    if param is None:
        return jnp.full((like.shape[-1],), fill, dtype=like.dtype)
    value = param if isinstance(param, (jax.Array, np.ndarray)) else param[...]
    return jnp.asarray(value).astype(like.dtype)


def _flax_patches():
    nnx = sys.modules.get("flax.nnx")
    if nnx is None:
        return []

    def layer_norm(original):
        def call(self, x, *args, **kwargs):
            axes = tuple(np.atleast_1d(self.reduction_axes)) + tuple(np.atleast_1d(self.feature_axes))
            if args or kwargs or self.axis_name is not None or any(a not in (-1, x.ndim - 1) for a in axes) \
                    or self.dtype not in (None, x.dtype):
                return original(self, x, *args, **kwargs)
            scale = _value(self.scale if self.use_scale else None, x, 1.0)
            bias = _value(self.bias if self.use_bias else None, x, 0.0)
            return _marked_call("LayerNormalization", self.epsilon, (x, scale, bias))
        return call

    def rms_norm(original):
        def call(self, x, *args, **kwargs):
            axes = tuple(np.atleast_1d(self.reduction_axes)) + tuple(np.atleast_1d(self.feature_axes))
            if args or kwargs or self.axis_name is not None or any(a not in (-1, x.ndim - 1) for a in axes) \
                    or self.dtype not in (None, x.dtype):
                return original(self, x, *args, **kwargs)
            return _marked_call("RMSNormalization", self.epsilon,
                                (x, _value(self.scale if self.use_scale else None, x, 1.0)))
        return call

    return [(nnx.LayerNorm, layer_norm), (nnx.RMSNorm, rms_norm)]


def _equinox_patches():
    eqx = sys.modules.get("equinox")
    if eqx is None:
        return []

    def layer_norm(original):
        def call(self, x, *args, **kwargs):
            if args or kwargs or len(tuple(np.atleast_1d(self.shape))) != 1:
                return original(self, x, *args, **kwargs)
            scale = _value(self.weight if self.use_weight else None, x, 1.0)
            bias = _value(self.bias if self.use_bias else None, x, 0.0)
            return _marked_call("LayerNormalization", self.eps, (x, scale, bias))
        return call

    def rms_norm(original):
        def call(self, x, *args, **kwargs):
            if args or kwargs or len(tuple(np.atleast_1d(self.shape))) != 1 or self.use_bias:
                return original(self, x, *args, **kwargs)
            return _marked_call("RMSNormalization", self.eps,
                                (x, _value(self.weight if self.use_weight else None, x, 1.0)))
        return call

    return [(eqx.nn.LayerNorm, layer_norm), (eqx.nn.RMSNorm, rms_norm)]


@contextlib.contextmanager
def native_layers(enabled=True):
    """Within the block, supported layers trace to marked calls the exporter turns into native ONNX ops."""
    patched = []
    try:
        if enabled:
            for cls, make in _flax_patches() + _equinox_patches():
                original = cls.__dict__.get("__call__")
                if original is None:
                    continue
                cls.__call__ = make(original)
                patched.append((cls, original))
        yield
    finally:
        for cls, original in patched:
            cls.__call__ = original


_MIN_OPSET = {"LayerNormalization": 17, "RMSNormalization": 23}


def emit_native(ctx, native, closed, args):
    """Emits the native op for a marked call, or inlines its reference body when the opset lacks the op."""
    op, attrs = native
    if ctx.opset < _MIN_OPSET[op]:
        return ctx.lower(closed, args)
    return [ctx.op(op, *args, axis=-1, epsilon=attrs["epsilon"])]
