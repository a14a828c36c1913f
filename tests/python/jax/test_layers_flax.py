"""Flax NNX layers in inference mode, checked against JAX (which ONNX ops they become: test_native_layers.py)."""

import jax
import jax.numpy as jnp
import pytest

from jax_harness import check, optional_module

nnx = optional_module("flax.nnx")


def rngs():
    return nnx.Rngs(0)


LAYERS = {
    "linear": (lambda: nnx.Linear(6, 4, rngs=rngs()), [("B", 6)]),
    "linear_no_bias": (lambda: nnx.Linear(6, 4, use_bias=False, rngs=rngs()), [("B", 6)]),
    "linear_3d": (lambda: nnx.Linear(6, 4, rngs=rngs()), [("B", "T", 6)]),
    "linear_general": (lambda: nnx.LinearGeneral(6, (2, 3), rngs=rngs()), [("B", 6)]),
    "einsum": (lambda: nnx.Einsum("bi,io->bo", (6, 4), rngs=rngs()), [("B", 6)]),
    "embed": (lambda: nnx.Embed(10, 4, rngs=rngs()), [jax.ShapeDtypeStruct(("B", "T"), jnp.int32)]),
    "layer_norm": (lambda: nnx.LayerNorm(6, rngs=rngs()), [("B", 6)]),
    "layer_norm_no_scale": (lambda: nnx.LayerNorm(6, use_scale=False, rngs=rngs()), [("B", 3, 6)]),
    "rms_norm": (lambda: nnx.RMSNorm(6, rngs=rngs()), [("B", 6)]),
    "batch_norm_inference": (lambda: nnx.BatchNorm(6, use_running_average=True, rngs=rngs()), [("B", 6)]),
    "group_norm": (lambda: nnx.GroupNorm(6, num_groups=3, rngs=rngs()), [("B", 4, 6)]),
    "dropout_deterministic": (lambda: nnx.Dropout(0.5, deterministic=True, rngs=rngs()), [("B", 6)]),
    "conv_same": (lambda: nnx.Conv(3, 4, kernel_size=(3, 3), rngs=rngs()), [("B", 6, 6, 3)]),
    "conv_strided_valid": (lambda: nnx.Conv(3, 4, kernel_size=(3, 3), strides=2, padding="VALID", rngs=rngs()),
                           [(1, 7, 7, 3)]),
    "conv_1d": (lambda: nnx.Conv(3, 4, kernel_size=(3,), rngs=rngs()), [("B", 8, 3)]),
    "conv_transpose": (lambda: nnx.ConvTranspose(3, 2, kernel_size=(3, 3), strides=(2, 2), rngs=rngs()),
                       [(1, 4, 4, 3)]),
    "multi_head_attention": (lambda: nnx.MultiHeadAttention(num_heads=2, in_features=8, qkv_features=8,
                                                            decode=False, deterministic=True, rngs=rngs()),
                             [("B", 5, 8)]),
    "lora_linear": (lambda: nnx.LoRA(6, 2, 4, rngs=rngs()), [("B", 6)]),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_nnx_layer(name):
    make, inputs = LAYERS[name]
    layer = make()
    check(layer, inputs, int_range=(0, 10))


def test_nnx_sequential_mlp():
    model = nnx.Sequential(nnx.Linear(5, 8, rngs=rngs()), nnx.relu, nnx.Linear(8, 3, rngs=rngs()))
    check(model, [("B", 5)])


POOLS = {
    "max_pool": lambda x: nnx.max_pool(x, (2, 2), strides=(2, 2)),
    "avg_pool": lambda x: nnx.avg_pool(x, (2, 2), strides=(2, 2)),
    "avg_pool_same": lambda x: nnx.avg_pool(x, (3, 3), padding="SAME"),
    "min_pool": lambda x: nnx.min_pool(x, (2, 2)),
}


@pytest.mark.parametrize("name", sorted(POOLS))
def test_nnx_pooling(name):
    check(POOLS[name], [("B", 6, 6, 3)])


ACTIVATIONS = ["relu", "gelu", "silu", "swish", "sigmoid", "tanh", "elu", "leaky_relu", "softplus", "softmax",
               "log_softmax", "celu", "selu", "hard_tanh", "relu6", "glu"]


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_nnx_activation(name):
    check(getattr(nnx, name), [("B", 8)])


def test_nnx_layer_f64():
    with jax.enable_x64(True):
        layer = nnx.Linear(4, 3, param_dtype=jnp.float64, dtype=jnp.float64, rngs=rngs())
        norm = nnx.LayerNorm(3, param_dtype=jnp.float64, dtype=jnp.float64, rngs=rngs())
    check(lambda x: norm(layer(x)), [jax.ShapeDtypeStruct(("B", 4), jnp.float64)], x64=True)


@pytest.mark.parametrize("opset", [21, 23])
def test_nnx_norms_export_native_ops(opset):
    ln = nnx.LayerNorm(6, rngs=rngs())
    rms = nnx.RMSNorm(6, rngs=rngs())
    model, _ = check(lambda x: rms(ln(x)), [("B", 3, 6)], opset=opset)
    ops = [n.op_type for n in model.graph.node]
    assert "LayerNormalization" in ops
    assert ("RMSNormalization" in ops) == (opset >= 23)


def test_nnx_layer_norm_native_ops_off():
    ln = nnx.LayerNorm(6, rngs=rngs())
    model, _ = check(ln, [("B", 6)], native_ops=False)
    assert "LayerNormalization" not in [n.op_type for n in model.graph.node]


def test_nnx_layer_norm_multi_axis_falls_back():
    ln = nnx.LayerNorm(6, reduction_axes=(-2, -1), feature_axes=-1, rngs=rngs())
    model, _ = check(ln, [("B", 4, 6)])
    assert "LayerNormalization" not in [n.op_type for n in model.graph.node]
