"""Layers and functions that export as native ONNX ops: what to_onnx replaces while it traces.

- Flax NNX / Equinox ``LayerNorm`` -> ``LayerNormalization``, ``RMSNorm`` -> ``RMSNormalization`` (opset 23);
- Flax NNX / Equinox ``Linear`` on a batch of vectors (2-D after vmap) -> ``Gemm``;
- Flax NNX ``BatchNorm`` with running averages and Equinox ``BatchNorm`` in inference -> ``BatchNormalization``;
- Flax NNX / Equinox ``GroupNorm`` -> ``GroupNormalization`` (opset 21, per-channel scale and bias);
- ``flax.nnx.avg_pool`` and Equinox ``AvgPool1d/2d/3d`` -> ``AveragePool`` (max pooling becomes ``MaxPool`` at the
  primitive level, see handlers_nn);
- ``jax.nn`` activations (also under their ``flax.nnx`` names) -> ``Relu``, ``Clip`` (relu6, hard_tanh), ``Elu``,
  ``Selu``, ``LeakyRelu``, ``Celu``, ``HardSigmoid``, ``HardSwish``, ``Softsign``, ``Softplus``, ``Mish``,
  ``Gelu`` (opset 20), ``Swish`` (silu, opset 24); ``softmax`` / ``log_softmax`` over one axis -> ``Softmax`` /
  ``LogSoftmax`` (also inside Flax and Equinox attention, which call them);
- ``jax.nn.dot_product_attention`` on [B, T, N, H] without bias, mask or sequence lengths -> ``Attention``
  (opset 23) between transposes to [B, N, T, H].

While to_onnx traces, these callables are replaced by a call through ``jax.jit`` under a marked name whose body
is a reference formula over the op's inputs (or the library's own function). The marked name determines the op,
its attributes and the argument ranks at the call; native_ops emits the op, or inlines the body where the op
cannot express the call. Outside to_onnx nothing is patched, so verify compares against the libraries' own code.
"""

import contextlib
import dataclasses
import inspect
import sys

import numpy as np

__all__ = ["NativeCall", "native_layers", "native_call_of"]

_MARK = "nxrt_native__"
_ENTRIES = {}
_BODIES = {}


@dataclasses.dataclass(frozen=True)
class NativeCall:
    """A marked call: ONNX ``op`` with ``attrs``, the rank of each argument at the call, and the body (one body
    per distinct (op, attrs, ranks), since those determine what it computes)."""

    op: str
    attrs: dict
    ranks: tuple
    body: object


def native_call_of(jit_name):
    """The NativeCall when ``jit_name`` marks a native layer call, else None."""
    name = str(jit_name or "")
    entry = _ENTRIES.get(name) if name.startswith(_MARK) else None
    if entry is None:
        return None
    op, attrs, ranks = entry
    return NativeCall(op, dict(attrs), ranks, _BODIES[name])


def _marked_call(op, attrs, body, args):
    """Calls ``body(*args)`` through jax.jit under a name that marks it as ONNX ``op`` with ``attrs``."""
    import jax

    entry = (op, tuple(sorted(attrs.items())), tuple(int(np.ndim(a)) for a in args))
    # One name per distinct entry: identical layers trace to identical jaxprs (shared ONNX functions).
    name = next((n for n, e in _ENTRIES.items() if e == entry), f"{_MARK}{op}_{len(_ENTRIES)}")
    _ENTRIES[name] = entry
    _BODIES.setdefault(name, body)
    body.__name__ = body.__qualname__ = name
    return jax.jit(body)(*args)


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


def _norm_call(op, epsilon, args):
    return _marked_call(op, {"epsilon": float(epsilon)}, _norm_reference(op, float(epsilon)), args)


def _batch_norm_call(channel_axis, epsilon, x, scale, bias, mean, var):
    """(x - mean) / sqrt(var + epsilon) * scale + bias with the per-channel vectors along ``channel_axis``."""
    import jax.numpy as jnp

    def body(v, gamma, beta, average, variance):
        shape = [1] * v.ndim
        shape[channel_axis] = v.shape[channel_axis]
        gamma, beta, average, variance = (jnp.reshape(p, shape) for p in (gamma, beta, average, variance))
        return (v - average) * (gamma / jnp.sqrt(variance + epsilon)) + beta

    return _marked_call("BatchNormalization", {"channel_axis": channel_axis, "epsilon": float(epsilon)}, body,
                        (x, scale, bias, mean, var))


def _group_norm_call(layout, groups, epsilon, x, scale, bias):
    """Group normalisation with channels last after one batch axis (Flax) or first with none (Equinox)."""
    import jax.numpy as jnp

    def body(v, s, b):
        if layout == "last":
            grouped = v.reshape(v.shape[:-1] + (groups, v.shape[-1] // groups))
            axes = tuple(range(1, v.ndim - 1)) + (v.ndim,)
            affine_shape = (v.shape[-1],)
        else:
            grouped = v.reshape((groups, v.shape[0] // groups) + v.shape[1:])
            axes = tuple(range(1, grouped.ndim))
            affine_shape = (v.shape[0],) + (1,) * (v.ndim - 1)
        mean = jnp.mean(grouped, axis=axes, keepdims=True)
        var = jnp.mean(jnp.square(grouped - mean), axis=axes, keepdims=True)
        normed = ((grouped - mean) / jnp.sqrt(var + epsilon)).reshape(v.shape)
        return normed * s.reshape(affine_shape) + b.reshape(affine_shape)

    return _marked_call("GroupNormalization", {"layout": layout, "num_groups": int(groups),
                                               "epsilon": float(epsilon)}, body, (x, scale, bias))


def _value(param, like, fill):
    import jax
    import jax.numpy as jnp

    if param is None:
        return jnp.full((like.shape[-1],), fill, dtype=like.dtype)
    value = param if isinstance(param, (jax.Array, np.ndarray)) else param[...]
    return jnp.asarray(value).astype(like.dtype)


def _is_float(x):
    return np.dtype(getattr(x, "dtype", np.float32)) in (np.float32, np.float64)


def _one_axis(axes, ndim):
    """The one axis of ``axes`` counted from the end (-1, -2, ...), or None."""
    axes = tuple(np.atleast_1d(axes))
    if len(axes) != 1:
        return None
    axis = int(axes[0])
    return axis - ndim if axis >= 0 else axis


def _pool_pads(padding, count):
    """"SAME", or ((lo, hi), ...) explicit pads, from Flax / Equinox padding; None for anything else."""
    if isinstance(padding, str):
        return {"SAME": "SAME", "VALID": ((0, 0),) * count}.get(padding.upper())
    pads = tuple(tuple(int(v) for v in pair) for pair in padding)
    return pads if len(pads) == count and all(len(p) == 2 for p in pads) else None


def _flax_patches():
    nnx = sys.modules.get("flax.nnx")
    if nnx is None:
        return []

    def plain_norm(self, x, args, kwargs):
        axes = tuple(np.atleast_1d(self.reduction_axes)) + tuple(np.atleast_1d(self.feature_axes))
        return not (args or kwargs or self.axis_name is not None or any(a not in (-1, x.ndim - 1) for a in axes)
                    or self.dtype not in (None, x.dtype))

    def layer_norm(original):
        def call(self, x, *args, **kwargs):
            if not plain_norm(self, x, args, kwargs):
                return original(self, x, *args, **kwargs)
            scale = _value(self.scale if self.use_scale else None, x, 1.0)
            bias = _value(self.bias if self.use_bias else None, x, 0.0)
            return _norm_call("LayerNormalization", self.epsilon, (x, scale, bias))
        return call

    def rms_norm(original):
        def call(self, x, *args, **kwargs):
            if not plain_norm(self, x, args, kwargs):
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
                    or self.precision is not None or getattr(x, "ndim", 0) < 1:
                return original(self, x, *args, **kwargs)
            bias = _value(self.bias, x, 0.0) if self.bias is not None else jnp.zeros((kernel.shape[-1],), x.dtype)

            def body(v, w, b):
                return jax.lax.dot_general(v, w, (((v.ndim - 1,), (0,)), ((), ()))) + b
            return _marked_call("Gemm", {"trans_b": 0}, body, (x, kernel, bias.astype(x.dtype)))
        return call

    def batch_norm(original):
        def call(self, x, use_running_average=None, **kwargs):
            running = self.use_running_average if use_running_average is None else use_running_average
            axis = _one_axis(self.axis, getattr(x, "ndim", 0))
            if kwargs.get("mask") is not None or set(kwargs) - {"mask"} or running is not True or axis is None \
                    or not _is_float(x) or self.dtype not in (None, x.dtype):
                return original(self, x, use_running_average, **kwargs)
            scale = _value(self.scale if self.use_scale else None, x, 1.0)
            bias = _value(self.bias if self.use_bias else None, x, 0.0)
            return _batch_norm_call(axis, self.epsilon, x, scale, bias, _value(self.mean, x, 0.0),
                                    _value(self.var, x, 1.0))
        return call

    def group_norm(original):
        def call(self, x, *args, **kwargs):
            if args or kwargs or self.reduction_axes is not None or self.axis_name is not None \
                    or not _is_float(x) or self.dtype not in (None, x.dtype) or getattr(x, "ndim", 0) < 2:
                return original(self, x, *args, **kwargs)
            scale = _value(self.scale if self.use_scale else None, x, 1.0)
            bias = _value(self.bias if self.use_bias else None, x, 0.0)
            return _group_norm_call("last", self.num_groups, self.epsilon, x, scale, bias)
        return call

    return [(nnx.LayerNorm, layer_norm), (nnx.RMSNorm, rms_norm), (nnx.Linear, linear),
            (nnx.BatchNorm, batch_norm), (nnx.GroupNorm, group_norm)]


def _equinox_batch_stats(layer, state):
    """(mean, var) an Equinox BatchNorm uses in inference, or None for a mode it does not document."""
    import jax.numpy as jnp

    mode = getattr(layer, "mode", None)
    if mode == "ema":
        return state.get(layer.ema_state_index)
    if mode == "batch":
        counter = state.get(layer.batch_counter)
        hidden_mean, hidden_var = state.get(layer.batch_state_index)
        debias = jnp.where(counter == 0, 1, 1 - layer.momentum ** counter)
        return hidden_mean / debias, hidden_var / debias
    return None


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

    def batch_norm(original):
        def call(self, x, state, *, key=None, inference=None):
            inference = self.inference if inference is None else inference
            stats = _equinox_batch_stats(self, state) if inference is True and _is_float(x) else None
            if stats is None:
                return original(self, x, state, key=key, inference=inference)
            import jax.numpy as jnp

            mean, var = (v.astype(x.dtype) for v in stats)
            channels = (x.shape[0],)
            scale = self.weight.astype(x.dtype) if self.weight is not None else jnp.ones(channels, x.dtype)
            bias = self.bias.astype(x.dtype) if self.bias is not None else jnp.zeros(channels, x.dtype)
            return _batch_norm_call(0, self.eps, x, scale, bias, mean, var), state
        return call

    def group_norm(original):
        def call(self, x, *args, **kwargs):
            if args or kwargs or not _is_float(x) or getattr(x, "ndim", 0) < 1:
                return original(self, x, *args, **kwargs)
            affine = self.channelwise_affine
            channels = (x.shape[0],)
            scale = self.weight.astype(x.dtype) if affine else np.ones(channels, x.dtype)
            bias = self.bias.astype(x.dtype) if affine else np.zeros(channels, x.dtype)
            return _group_norm_call("first", self.groups, self.eps, x, scale, bias)
        return call

    def avg_pool(original):
        def call(self, x, *, key=None):
            pads = _pool_pads(self.padding, len(self.kernel_size))
            if self.use_ceil or pads is None or not _is_float(x) or x.ndim != len(self.kernel_size) + 1:
                return original(self, x, key=key)
            attrs = {"layout": "first", "kernel": tuple(self.kernel_size), "strides": tuple(self.stride),
                     "pads": pads, "count_include_pad": 1}
            return _marked_call("AveragePool", attrs, lambda v: original(self, v), (x,))
        return call

    patches = [(eqx.nn.LayerNorm, layer_norm), (eqx.nn.RMSNorm, rms_norm), (eqx.nn.Linear, linear),
               (eqx.nn.BatchNorm, batch_norm), (eqx.nn.GroupNorm, group_norm)]
    patches += [(getattr(eqx.nn, f"AvgPool{d}d"), avg_pool) for d in (1, 2, 3)]
    return patches


def _flax_avg_pool(original):
    def call(inputs, window_shape, strides=None, padding="VALID", count_include_pad=True):
        window = tuple(int(w) for w in window_shape)
        pads = _pool_pads(padding, len(window))
        if pads is None or not _is_float(inputs) or inputs.ndim not in (len(window) + 1, len(window) + 2):
            return original(inputs, window_shape, strides, padding, count_include_pad)
        stride = tuple(int(s) for s in strides) if strides is not None else (1,) * len(window)
        attrs = {"layout": "last", "kernel": window, "strides": stride, "pads": pads,
                 "count_include_pad": int(bool(count_include_pad))}
        return _marked_call("AveragePool", attrs,
                            lambda v: original(v, window, stride, padding, count_include_pad), (inputs,))
    return call


# jax.nn activation -> (ONNX op, {ONNX attribute: value or the name of the function's parameter}).
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_ACTIVATIONS = {
    "relu": ("Relu", {}), "relu6": ("Clip", {"min": 0.0, "max": 6.0}), "hard_tanh": ("Clip", {"min": -1.0, "max": 1.0}),
    "elu": ("Elu", {"alpha": "alpha"}), "selu": ("Selu", {"alpha": _SELU_ALPHA, "gamma": _SELU_SCALE}),
    "leaky_relu": ("LeakyRelu", {"alpha": "negative_slope"}), "celu": ("Celu", {"alpha": "alpha"}),
    "hard_sigmoid": ("HardSigmoid", {"alpha": 1.0 / 6.0, "beta": 0.5}), "hard_silu": ("HardSwish", {}),
    "hard_swish": ("HardSwish", {}), "soft_sign": ("Softsign", {}), "softplus": ("Softplus", {}),
    "mish": ("Mish", {}), "gelu": ("Gelu", {"approximate": "approximate"}), "silu": ("Swish", {"alpha": 1.0}),
    "swish": ("Swish", {"alpha": 1.0}),
}


def _activation(op, spec):
    def make(original):
        signature = inspect.signature(original)

        def call(x, *args, **kwargs):
            try:
                bound = signature.bind(x, *args, **kwargs)
            except TypeError:
                return original(x, *args, **kwargs)
            bound.apply_defaults()
            params = dict(list(bound.arguments.items())[1:])
            if not _is_float(x) or not all(isinstance(v, (bool, int, float)) for v in params.values()):
                return original(x, *args, **kwargs)
            attrs = {}
            for key, value in spec.items():
                value = params[value] if isinstance(value, str) else value
                attrs[key] = ("tanh" if value else "none") if key == "approximate" else float(value)
            return _marked_call(op, attrs, lambda v: original(v, **params), (x,))
        return call
    return make


def _jax_nn_patches():
    import jax

    def softmax(op):
        def make(original):
            def call(x, axis=-1, where=None, **kwargs):
                if where is not None or kwargs or not isinstance(axis, (int, np.integer)):
                    return original(x, axis=axis, where=where, **kwargs)
                axis_value = int(axis) - x.ndim if int(axis) >= 0 else int(axis)

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
                return original(q, k, v, scale=scale, is_causal=causal)
            attrs = {"scale": scale_value, "is_causal": int(causal), "default_scale": int(scale is None)}
            return _marked_call("Attention", attrs, body, (query, key, value))
        return call

    namespaces = [jax.nn] + [sys.modules[m] for m in ("flax.nnx", "flax.linen") if m in sys.modules]
    patches = [(jax.nn, "dot_product_attention", attention)]
    for namespace in namespaces:
        for name, op in (("softmax", "Softmax"), ("log_softmax", "LogSoftmax")):
            if getattr(namespace, name, None) is getattr(jax.nn, name):
                patches.append((namespace, name, softmax(op)))
        for name, (op, spec) in _ACTIVATIONS.items():
            if getattr(namespace, name, None) is getattr(jax.nn, name, None):
                patches.append((namespace, name, _activation(op, spec)))
        if namespace is not jax.nn and getattr(namespace, "avg_pool", None) is not None:
            patches.append((namespace, "avg_pool", _flax_avg_pool))
    return patches


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
