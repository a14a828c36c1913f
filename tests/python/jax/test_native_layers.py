"""Activations, BatchNorm, GroupNorm and average pooling exported as their ONNX ops (Relu, Gelu, ...,
BatchNormalization, GroupNormalization, AveragePool), checked against JAX on nxrt and onnxruntime; calls the op
cannot express (vmap over another axis, an opset without the op, float64 with float32-only attributes) inline the
primitives instead."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jax_harness import check, optional_module
from jax_harness import op_types as all_op_types

nnx = optional_module("flax.nnx")
eqx = optional_module("equinox")


def op_types(model):
    return [op for op in all_op_types(model) if op != "Identity"]


ACTIVATIONS = {
    "relu": "Relu", "relu6": "Clip", "hard_tanh": "Clip", "elu": "Elu", "selu": "Selu", "leaky_relu": "LeakyRelu",
    "celu": "Celu", "hard_sigmoid": "HardSigmoid", "hard_silu": "HardSwish", "hard_swish": "HardSwish",
    "soft_sign": "Softsign", "softplus": "Softplus", "mish": "Mish", "gelu": "Gelu", "gelu_exact": "Gelu",
    "silu": "Swish", "swish": "Swish",
}
# float64 keeps the op where ONNX's float32 attributes hold the constants exactly (and the op has a float64
# kernel everywhere it matters); the others inline the primitives.
F64_INLINED = {"selu", "leaky_relu", "celu", "hard_sigmoid", "gelu"}


def activation(name, namespace=jax.nn):
    if name == "gelu_exact":
        return lambda x: namespace.gelu(x, approximate=False)
    return lambda x: getattr(namespace, name)(x)


def wide_inputs(dtype):
    return lambda rng, sizes: [(rng.standard_normal((sizes["B"], 7)) * 4).astype(dtype)]


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_exports_its_onnx_op(name):
    opset = 24 if ACTIVATIONS[name] == "Swish" else 21
    model, _ = check(activation(name), [("B", 7)], opset=opset, input_gen=wide_inputs(np.float32))
    assert op_types(model) == [ACTIVATIONS[name]]


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_f64(name):
    opset = 24 if ACTIVATIONS[name] == "Swish" else 21
    spec = jax.ShapeDtypeStruct(("B", 7), jnp.float64)
    model, _ = check(activation(name), [spec], x64=True, opset=opset, input_gen=wide_inputs(np.float64))
    assert (op_types(model) == [ACTIVATIONS[name]]) == (name not in F64_INLINED)


@pytest.mark.parametrize("name", ["relu", "gelu", "silu", "elu", "leaky_relu", "softplus", "hard_swish"])
def test_flax_activation_names_export_onnx_ops(name):
    model, _ = check(activation(name, nnx), [("B", 5)], opset=24)
    assert op_types(model) == [ACTIVATIONS[name]]


def test_activation_parameters_become_attributes():
    model, _ = check(lambda x: (jax.nn.leaky_relu(x, negative_slope=0.2), jax.nn.elu(x, alpha=0.5)), [("B", 4)])
    attrs = {n.op_type: {a.name: a.f for a in n.attribute} for n in model.graph.node}
    assert attrs["LeakyRelu"]["alpha"] == pytest.approx(0.2) and attrs["Elu"]["alpha"] == pytest.approx(0.5)


def test_activation_with_array_parameter_lowers_through_primitives():
    model, _ = check(lambda x, slope: jax.nn.leaky_relu(x, slope), [("B", 4), ()])
    assert "LeakyRelu" not in op_types(model)


def test_gelu_below_opset_20_lowers_through_primitives():
    model, _ = check(jax.nn.gelu, [("B", 4)], opset=18)
    assert "Gelu" not in op_types(model)


def with_statistics(bn, seed=1):
    keys = jax.random.split(jax.random.PRNGKey(seed), 3)
    bn.mean[...] = jax.random.normal(keys[0], bn.mean.shape, bn.mean.dtype)
    bn.var[...] = jax.random.uniform(keys[1], bn.var.shape, bn.var.dtype, minval=0.5, maxval=2.0)
    bn.scale[...] = jax.random.normal(keys[2], bn.scale.shape, bn.scale.dtype)
    return bn


FLAX_BATCH_NORMS = {
    "features": (lambda: nnx.BatchNorm(6, use_running_average=True, rngs=nnx.Rngs(0)), [("B", 6)]),
    "nhwc": (lambda: nnx.BatchNorm(3, use_running_average=True, rngs=nnx.Rngs(0)), [("B", 5, 5, 3)]),
    "axis_1": (lambda: nnx.BatchNorm(3, axis=1, use_running_average=True, rngs=nnx.Rngs(0)), [("B", 3, 4)]),
}


@pytest.mark.parametrize("name", sorted(FLAX_BATCH_NORMS))
def test_flax_batch_norm_exports_batch_normalization(name):
    make, inputs = FLAX_BATCH_NORMS[name]
    model, _ = check(with_statistics(make()), inputs)
    assert "BatchNormalization" in op_types(model)


def test_flax_batch_norm_f64():
    with jax.enable_x64(True):
        bn = with_statistics(nnx.BatchNorm(3, use_running_average=True, param_dtype=jnp.float64, rngs=nnx.Rngs(0)))
    model, _ = check(bn, [jax.ShapeDtypeStruct(("B", 4, 3), jnp.float64)], x64=True)
    assert "BatchNormalization" in op_types(model)


@pytest.mark.parametrize("mode", ["batch", "ema"])
def test_equinox_batch_norm_exports_batch_normalization(mode):
    bn = eqx.nn.BatchNorm(4, axis_name="batch", mode=mode, inference=True)
    state = eqx.nn.State(bn)
    fn = lambda x: jax.vmap(lambda v: bn(v, state)[0], axis_name="batch")(x)  # noqa: E731
    model, _ = check(fn, [("B", 4, 3, 3)])
    assert "BatchNormalization" in op_types(model)


GROUP_NORMS = {
    "flax_sequence": (lambda: nnx.GroupNorm(6, num_groups=3, rngs=nnx.Rngs(0)), [("B", 4, 6)]),
    "flax_features": (lambda: nnx.GroupNorm(6, num_groups=2, rngs=nnx.Rngs(0)), [("B", 6)]),
    "flax_image": (lambda: nnx.GroupNorm(8, num_groups=4, rngs=nnx.Rngs(0)), [("B", 3, 3, 8)]),
    "equinox_vmap": (lambda: jax.vmap(eqx.nn.GroupNorm(2, 4)), [("B", 4, 5)]),
    "equinox_one_example": (lambda: eqx.nn.GroupNorm(2, 4), [(4, 5, 2)]),
    "equinox_no_affine": (lambda: jax.vmap(eqx.nn.GroupNorm(2, 4, channelwise_affine=False)), [("B", 4)]),
}


@pytest.mark.parametrize("name", sorted(GROUP_NORMS))
def test_group_norm_exports_group_normalization(name):
    make, inputs = GROUP_NORMS[name]
    model, _ = check(make(), inputs)
    assert "GroupNormalization" in op_types(model)


def test_group_norm_f64_and_below_opset_21():
    with jax.enable_x64(True):
        gn = nnx.GroupNorm(4, num_groups=2, param_dtype=jnp.float64, rngs=nnx.Rngs(0))
    model, _ = check(gn, [jax.ShapeDtypeStruct(("B", 3, 4), jnp.float64)], x64=True)
    assert "GroupNormalization" in op_types(model)
    model, _ = check(nnx.GroupNorm(4, num_groups=2, rngs=nnx.Rngs(0)), [("B", 3, 4)], opset=18)
    assert "GroupNormalization" not in op_types(model)


AVERAGE_POOLS = {
    "flax_strided": (lambda x: nnx.avg_pool(x, (2, 2), strides=(2, 2)), [("B", 6, 6, 3)]),
    "flax_same": (lambda x: nnx.avg_pool(x, (3, 3), padding="SAME"), [("B", 6, 6, 3)]),
    "flax_same_exclude_pad_symbolic": (lambda x: nnx.avg_pool(x, (3, 3), padding="SAME", count_include_pad=False),
                                       [("B", "H", 6, 3)]),
    "flax_explicit_pads": (lambda x: nnx.avg_pool(x, (3, 3), padding=((1, 0), (2, 1))), [("B", 5, 5, 2)]),
    "flax_1d": (lambda x: nnx.avg_pool(x, (3,), strides=(2,)), [("B", 9, 2)]),
    "flax_no_batch": (lambda x: nnx.avg_pool(x, (2, 2)), [(6, 6, 3)]),
    "equinox_one_example": (lambda: eqx.nn.AvgPool2d(2, 2), [(3, 6, 6)]),
    "equinox_vmap_padded": (lambda: jax.vmap(eqx.nn.AvgPool2d(3, 1, padding=1)), [("B", 3, 6, 6)]),
    "equinox_1d": (lambda: jax.vmap(eqx.nn.AvgPool1d(2, 2)), [("B", 2, 8)]),
}


@pytest.mark.parametrize("name", sorted(AVERAGE_POOLS))
def test_average_pool_exports_average_pool(name):
    make, inputs = AVERAGE_POOLS[name]
    fn = make() if name.startswith("equinox") else make
    model, _ = check(fn, inputs, dims={"H": [4, 7, 9]})
    assert "AveragePool" in op_types(model)


def test_average_pool_f64():
    model, _ = check(lambda x: nnx.avg_pool(x, (2, 2), padding="SAME"), [jax.ShapeDtypeStruct(("B", 5, 5, 2),
                                                                                              jnp.float64)], x64=True)
    assert "AveragePool" in op_types(model)


def test_equinox_max_pool_exports_max_pool():
    model, _ = check(jax.vmap(eqx.nn.MaxPool2d(2, 2)), [("B", 3, 6, 6)])
    assert "MaxPool" in op_types(model)


VMAPPED_OVER_ANOTHER_AXIS = {
    "equinox_linear": (lambda: jax.vmap(eqx.nn.Linear(6, 3, key=jax.random.PRNGKey(0)), in_axes=1), [(6, "B")],
                       "Gemm"),
    "equinox_linear_square": (lambda: jax.vmap(eqx.nn.Linear(6, 3, key=jax.random.PRNGKey(0)), in_axes=1),
                              [(6, 6)], "Gemm"),
    "equinox_layer_norm": (lambda: jax.vmap(eqx.nn.LayerNorm(5), in_axes=1), [(5, "B")], "LayerNormalization"),
    "softmax": (lambda: jax.vmap(lambda v: jax.nn.softmax(v), in_axes=1), [(5, "B")], "Softmax"),
    "equinox_group_norm": (lambda: jax.vmap(eqx.nn.GroupNorm(2, 4), in_axes=1), [(4, "B")],
                           "GroupNormalization"),
}


@pytest.mark.parametrize("name", sorted(VMAPPED_OVER_ANOTHER_AXIS))
def test_vmap_over_another_axis_lowers_through_primitives(name):
    make, inputs, op = VMAPPED_OVER_ANOTHER_AXIS[name]
    model, _ = check(make(), inputs)
    assert op not in op_types(model)


def test_nested_vmap_over_leading_axes_keeps_the_op():
    model, _ = check(jax.vmap(jax.vmap(eqx.nn.LayerNorm(5))), [("B", 3, 5)])
    assert op_types(model) == ["LayerNormalization"]
