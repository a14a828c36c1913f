"""Equinox layers in inference mode (batched with jax.vmap where the layer takes one example)."""

import jax
import jax.numpy as jnp
import pytest

from jax_harness import check, optional_module

eqx = optional_module("equinox")


def key(i=0):
    return jax.random.PRNGKey(i)


LAYERS = {
    "linear": (lambda: jax.vmap(eqx.nn.Linear(6, 4, key=key())), [("B", 6)]),
    "linear_no_bias": (lambda: jax.vmap(eqx.nn.Linear(6, 4, use_bias=False, key=key())), [("B", 6)]),
    "linear_scalar_in": (lambda: jax.vmap(eqx.nn.Linear("scalar", 3, key=key())), [("B",)]),
    "mlp": (lambda: jax.vmap(eqx.nn.MLP(5, 2, width_size=8, depth=2, key=key())), [("B", 5)]),
    "embedding": (lambda: jax.vmap(eqx.nn.Embedding(10, 4, key=key())), [jax.ShapeDtypeStruct(("B",), jnp.int32)]),
    "layer_norm": (lambda: jax.vmap(eqx.nn.LayerNorm(6)), [("B", 6)]),
    "rms_norm": (lambda: jax.vmap(eqx.nn.RMSNorm(6)), [("B", 6)]),
    "group_norm": (lambda: jax.vmap(eqx.nn.GroupNorm(2, 4)), [("B", 4, 5)]),
    "dropout_inference": (lambda: eqx.nn.Dropout(0.3, inference=True), [("B", 6)]),
    "conv2d": (lambda: jax.vmap(eqx.nn.Conv2d(3, 4, 3, padding=1, key=key())), [("B", 3, 6, 6)]),
    "conv1d": (lambda: eqx.nn.Conv1d(2, 3, 3, key=key()), [(2, 8)]),
    "conv_transpose2d": (lambda: eqx.nn.ConvTranspose2d(2, 3, 3, stride=2, key=key()), [(2, 4, 4)]),
    "max_pool2d": (lambda: eqx.nn.MaxPool2d(2, 2), [(3, 6, 6)]),
    "avg_pool2d": (lambda: eqx.nn.AvgPool2d(2, 2), [(3, 6, 6)]),
    "adaptive_avg_pool": (lambda: eqx.nn.AdaptiveAvgPool2d((2, 2)), [(3, 6, 6)]),
    "multihead_attention": (lambda: _mha(), [("T", 8)]),
    "gru_cell": (lambda: _cell(eqx.nn.GRUCell(4, 5, key=key())), [(4,), (5,)]),
    "lstm_cell": (lambda: _lstm(), [(4,), (5,), (5,)]),
    "prelu": (lambda: eqx.nn.PReLU(), [("B", 6)]),
    "sequential": (lambda: jax.vmap(eqx.nn.Sequential([eqx.nn.Linear(4, 6, key=key()), eqx.nn.Lambda(jax.nn.gelu),
                                                       eqx.nn.Linear(6, 2, key=key(1))])), [("B", 4)]),
}


def _mha():
    mha = eqx.nn.MultiheadAttention(num_heads=2, query_size=8, key=key())
    return lambda x: mha(x, x, x)


def _cell(cell):
    return lambda x, h: cell(x, h)


def _lstm():
    cell = eqx.nn.LSTMCell(4, 5, key=key())
    return lambda x, h, c: cell(x, (h, c))


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_equinox_layer(name):
    make, inputs = LAYERS[name]
    check(make(), inputs, int_range=(0, 10))


def test_equinox_batch_norm_inference():
    bn = eqx.nn.BatchNorm(4, axis_name="batch", mode="batch", inference=True)
    state = eqx.nn.State(bn)
    fn = lambda x: jax.vmap(lambda v: bn(v, state)[0], axis_name="batch")(x)  # noqa: E731
    check(fn, [("B", 4)])


def test_equinox_mlp_f64():
    with jax.enable_x64(True):
        mlp = eqx.nn.MLP(3, 2, width_size=5, depth=2, key=key(), dtype=jnp.float64)
    check(jax.vmap(mlp), [jax.ShapeDtypeStruct(("B", 3), jnp.float64)], x64=True)


def test_equinox_norms_export_native_ops():
    ln = eqx.nn.LayerNorm(6)
    rms = eqx.nn.RMSNorm(6, use_bias=False)
    model, _ = check(jax.vmap(lambda x: rms(ln(x))), [("B", 6)], opset=23)
    ops = [n.op_type for n in model.graph.node]
    assert "LayerNormalization" in ops and "RMSNormalization" in ops
