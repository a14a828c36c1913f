"""Native ONNX ops for common layers and functions.

- Flax NNX / Equinox ``LayerNorm`` -> ``LayerNormalization``, ``RMSNorm`` -> ``RMSNormalization`` (opset 23);
- Flax NNX / Equinox ``Linear`` on a batch of vectors (2-D after vmap) -> ``Gemm``;
- ``jax.nn.softmax`` / ``jax.nn.log_softmax`` over one axis -> ``Softmax`` / ``LogSoftmax`` (also inside Flax and
  Equinox attention, which call them);
- ``jax.nn.dot_product_attention`` on [B, T, N, H] without bias, mask or sequence lengths -> ``Attention``
  (opset 23) between transposes to [B, N, T, H].

While to_onnx traces, these callables are replaced by a call through ``jax.jit`` under a marked name whose body
is a reference formula over the op's inputs. The exporter's call handler recognises the mark and emits the ONNX op;
anything it cannot express (several normalised axes, other ranks, an opset without the op) falls back to inlining
that body. Outside to_onnx nothing is patched, so verify compares against the libraries' own code.
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
    entry = _ATTRS.get(name) if name.startswith(_MARK) else None
    return None if entry is None else (entry[0], dict(entry[1]))


def _norm_reference(op, epsilon):
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


def _marked_call(op, attrs, body, args):
    """Calls ``body(*args)`` through jax.jit under a name that marks it as ONNX ``op`` with ``attrs``."""
    import jax

    entry = (op, tuple(sorted(attrs.items())))
    # One name per distinct (op, attributes): identical layers trace to identical jaxprs (shared ONNX functions).
    name = next((n for n, e in _ATTRS.items() if e == entry), f"{_MARK}{op}_{len(_ATTRS)}")
    _ATTRS[name] = entry
    body.__name__ = body.__qualname__ = name
    return jax.jit(body)(*args)


def _norm_call(op, epsilon, args):
    return _marked_call(op, {"epsilon": float(epsilon)}, _norm_reference(op, float(epsilon)), args)


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
            return _norm_call("LayerNormalization", self.epsilon, (x, scale, bias))
        return call

    def rms_norm(original):
        def call(self, x, *args, **kwargs):
            axes = tuple(np.atleast_1d(self.reduction_axes)) + tuple(np.atleast_1d(self.feature_axes))
            if args or kwargs or self.axis_name is not None or any(a not in (-1, x.ndim - 1) for a in axes) \
                    or self.dtype not in (None, x.dtype):
                return original(self, x, *args, **kwargs)
            return _norm_call("RMSNormalization", self.epsilon,
                                (x, _value(self.scale if self.use_scale else None, x, 1.0)))
        return call

    def linear(original):
        def call(self, x, *args, **kwargs):
            import jax
            import jax.numpy as jnp

            kernel = self.kernel[...]
            if args or kwargs or self.dtype not in (None, x.dtype) or kernel.dtype != x.dtype \
                    or self.dot_general is not jax.lax.dot_general or self.preferred_element_type is not None \
                    or getattr(x, "ndim", 0) < 1:
                return original(self, x, *args, **kwargs)
            bias = _value(self.bias, x, 0.0) if self.bias is not None else jnp.zeros((kernel.shape[-1],), x.dtype)
            precision = self.precision

            def body(v, w, b):
                y = jax.lax.dot_general(v, w, (((v.ndim - 1,), (0,)), ((), ())), precision=precision)
                return y + b
            return _marked_call("Gemm", {"trans_b": 0}, body, (x, kernel, bias.astype(x.dtype)))
        return call

    return [(nnx.LayerNorm, layer_norm), (nnx.RMSNorm, rms_norm), (nnx.Linear, linear)]


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
            return _norm_call("LayerNormalization", self.eps, (x, scale, bias))
        return call

    def rms_norm(original):
        def call(self, x, *args, **kwargs):
            if args or kwargs or len(tuple(np.atleast_1d(self.shape))) != 1 or self.use_bias:
                return original(self, x, *args, **kwargs)
            return _norm_call("RMSNormalization", self.eps,
                                (x, _value(self.weight if self.use_weight else None, x, 1.0)))
        return call

    def linear(original):
        def call(self, x, *args, **kwargs):
            import jax.numpy as jnp

            if args or kwargs or "scalar" in (self.in_features, self.out_features) \
                    or getattr(x, "ndim", 0) != 1 or self.weight.dtype != x.dtype:
                return original(self, x, *args, **kwargs)
            bias = self.bias if self.bias is not None else jnp.zeros((self.weight.shape[0],), x.dtype)

            def body(v, w, b):
                return w @ v + b
            return _marked_call("Gemm", {"trans_b": 1}, body, (x, self.weight, bias))
        return call

    return [(eqx.nn.LayerNorm, layer_norm), (eqx.nn.RMSNorm, rms_norm), (eqx.nn.Linear, linear)]


def _jax_nn_patches():
    import jax

    def softmax(op):
        def make(original):
            def call(x, axis=-1, where=None, **kwargs):
                if where is not None or kwargs or not isinstance(axis, (int, np.integer)):
                    return original(x, axis=axis, where=where, **kwargs)
                axis_value = int(axis)

                def body(v):
                    return original(v, axis=axis_value)
                return _marked_call(op, {"axis": axis_value}, body, (x,))
            return call
        return make

    def attention(original):
        def call(query, key, value, bias=None, mask=None, *, scale=None, is_causal=False, **kwargs):
            plain = all(v is None or v is False for v in kwargs.values())
            if bias is not None or mask is not None or not plain or getattr(query, "ndim", 0) != 4:
                return original(query, key, value, bias, mask, scale=scale, is_causal=is_causal, **kwargs)
            scale_value = float(scale) if scale is not None else float(1.0 / np.sqrt(query.shape[-1]))
            causal = bool(is_causal)

            def body(q, k, v):
                return original(q, k, v, scale=scale_value, is_causal=causal)
            return _marked_call("Attention", {"scale": scale_value, "is_causal": int(causal)}, body,
                                (query, key, value))
        return call

    return [(jax.nn, "softmax", softmax("Softmax")), (jax.nn, "log_softmax", softmax("LogSoftmax")),
            (jax.nn, "dot_product_attention", attention)]


@contextlib.contextmanager
def native_layers(enabled=True):
    """Within the block, supported layers and functions trace to marked calls the exporter turns into native ONNX
    ops."""
    patched = []
    try:
        if enabled:
            targets = [(cls, "__call__", make) for cls, make in _flax_patches() + _equinox_patches()]
            for owner, attribute, make in targets + _jax_nn_patches():
                original = owner.__dict__.get(attribute)
                if original is None:
                    continue
                setattr(owner, attribute, make(original))
                patched.append((owner, attribute, original))
        yield
    finally:
        for owner, attribute, original in reversed(patched):
            setattr(owner, attribute, original)


_MIN_OPSET = {"LayerNormalization": 17, "RMSNormalization": 23, "Attention": 23, "Softmax": 13, "LogSoftmax": 13,
              "Gemm": 13}


def _emit_gemm(ctx, attrs, avals, args):
    x, w, b = avals
    if len(x.shape) != 2 or len(w.shape) != 2 or len(b.shape) != 1:
        return None
    return [ctx.op("Gemm", *args, transB=attrs["trans_b"])]


def _emit_attention(ctx, attrs, avals, args):
    q, k, v = avals
    if any(len(a.shape) != 4 for a in avals) or q.dtype != k.dtype or q.dtype != v.dtype:
        return None
    heads = [ctx.transpose(name, [0, 2, 1, 3]) for name in args]
    out = ctx.op("Attention", *heads, scale=attrs["scale"], is_causal=attrs["is_causal"])
    return [ctx.transpose(out, [0, 2, 1, 3])]


def emit_native(ctx, native, closed, args):
    """Emits the native op for a marked call, or inlines its reference body when the op cannot express it."""
    op, attrs = native
    avals = list(closed.in_avals)
    out = None
    if ctx.opset >= _MIN_OPSET[op]:
        if op in ("LayerNormalization", "RMSNormalization"):
            out = [ctx.op(op, *args, axis=-1, epsilon=attrs["epsilon"])]
        elif op in ("Softmax", "LogSoftmax"):
            out = [ctx.op(op, *args, axis=attrs["axis"])]
        elif op == "Gemm":
            out = _emit_gemm(ctx, attrs, avals, args)
        elif op == "Attention":
            out = _emit_attention(ctx, attrs, avals, args)
    return out if out is not None else ctx.lower(closed, args)
