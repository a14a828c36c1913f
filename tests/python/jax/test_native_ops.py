"""Layers and jax.nn functions exported as the matching ONNX ops (Gemm, Softmax, LogSoftmax, Attention), each
checked against JAX on nxrt and onnxruntime, and falling back to primitives where the op cannot express the call."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import nxrt.jax
from jax_harness import check, optional_module
from jax_harness import op_types as all_op_types


def op_types(model):
    """The main graph's op types without the Identity nodes that name outputs."""
    return [op for op in all_op_types(model) if op != "Identity"]


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_exports_softmax(axis):
    model, _ = check(lambda x: jax.nn.softmax(x, axis=axis), [("B", 7)], opset=21)
    assert op_types(model) == ["Softmax"]


def test_log_softmax_exports_log_softmax_in_f64():
    model, _ = check(lambda x: jax.nn.log_softmax(x), [("B", 5)], x64=True, opset=21)
    assert op_types(model) == ["LogSoftmax"]


def test_softmax_over_several_axes_lowers_through_primitives():
    model, _ = check(lambda x: jax.nn.softmax(x, axis=(0, 1)), [(3, 4)], opset=21)
    assert "Softmax" not in op_types(model)


def test_native_ops_off_keeps_primitives():
    model, _ = check(jax.nn.softmax, [(3, 4)], opset=21, native_ops=False)
    assert "Softmax" not in op_types(model)


@pytest.mark.parametrize("causal", [False, True])
def test_dot_product_attention_exports_attention(causal):
    def attend(q, k, v):
        return jax.nn.dot_product_attention(q, k, v, is_causal=causal)

    model, _ = check(attend, [("B", 6, 2, 8)] * 3, opset=23)
    assert "Attention" in op_types(model)


def attention_reference(q, k, v, causal):
    """Scaled dot-product attention over [B, T, N, H] computed in the inputs' precision throughout."""
    scores = jnp.einsum("btnh,bsnh->bnts", q, k) / jnp.sqrt(q.shape[-1]).astype(q.dtype)
    if causal:
        t, s = scores.shape[-2:]
        scores = jnp.where(jnp.tril(jnp.ones((t, s), bool)), scores, -jnp.inf)
    return jnp.einsum("bnts,bsnh->btnh", jax.nn.softmax(scores, axis=-1), v)


@pytest.mark.parametrize("causal", [False, True])
def test_dot_product_attention_f64_is_float64_end_to_end(causal):
    """Head size 16: the scale 1/4 is exact in Attention's float32 attribute, so the op is float64 throughout.
    jax.nn.dot_product_attention itself computes its softmax in float32 even under x64 (its float64 result is
    float32-accurate): the model is compared with it at 1e-6 and with a float64 reference of the formula at 1e-10."""
    def attend(q, k, v):
        return jax.nn.dot_product_attention(q, k, v, is_causal=causal)

    spec = jax.ShapeDtypeStruct(("B", 6, 2, 16), jnp.float64)
    model, _ = check(attend, [spec] * 3, x64=True, opset=23, tol=1e-6)
    assert "Attention" in op_types(model)
    result = nxrt.jax.verify(lambda q, k, v: attention_reference(q, k, v, causal), model, n=3,
                             runtimes=("nxrt", "onnxruntime"))
    assert result.ok(1e-10), result


def test_dot_product_attention_f64_with_inexact_scale_lowers_through_primitives():
    """Head size 8: 1/sqrt(8) does not fit a float32 attribute, so float64 inlines JAX's own computation, which
    includes its float32 softmax: runtimes agree with it to float32 accuracy only."""
    spec = jax.ShapeDtypeStruct(("B", 6, 2, 8), jnp.float64)
    model, _ = check(lambda q, k, v: jax.nn.dot_product_attention(q, k, v), [spec] * 3, x64=True, opset=23,
                     tol=1e-6)
    assert "Attention" not in op_types(model)


def test_dot_product_attention_below_opset_23_lowers_through_primitives():
    model, _ = check(lambda q, k, v: jax.nn.dot_product_attention(q, k, v), [(1, 4, 2, 8)] * 3, opset=21)
    assert "Attention" not in op_types(model)


def test_dot_product_attention_with_mask_lowers_through_primitives():
    mask = np.tril(np.ones((4, 4), bool))[None, None]

    def attend(q, k, v):
        return jax.nn.dot_product_attention(q, k, v, mask=jnp.asarray(mask))

    model, _ = check(attend, [(1, 4, 2, 8)] * 3, opset=23)
    assert "Attention" not in op_types(model)


def test_flax_linear_on_a_batch_exports_gemm():
    nnx = optional_module("flax.nnx")

    layer = nnx.Linear(6, 3, rngs=nnx.Rngs(0))
    model, _ = check(layer, [("B", 6)], opset=21)
    assert op_types(model) == ["Gemm"]


def test_flax_linear_on_a_sequence_keeps_matmul():
    nnx = optional_module("flax.nnx")

    layer = nnx.Linear(6, 3, rngs=nnx.Rngs(0))
    model, _ = check(layer, [(2, "T", 6)], opset=21)
    assert "Gemm" not in op_types(model)
    assert "MatMul" in op_types(model)


def test_flax_linear_f64_exports_gemm():
    nnx = optional_module("flax.nnx")

    with jax.enable_x64(True):
        layer = nnx.Linear(5, 4, rngs=nnx.Rngs(1), param_dtype=jnp.float64)
    model, _ = check(layer, [("B", 5)], x64=True, opset=21)
    assert op_types(model) == ["Gemm"]


def test_equinox_linear_under_vmap_exports_gemm():
    eqx = optional_module("equinox")

    layer = eqx.nn.Linear(6, 3, key=jax.random.PRNGKey(0))
    model, _ = check(jax.vmap(layer), [("B", 6)], opset=21)
    assert op_types(model) == ["Gemm"]


def test_equinox_linear_on_one_vector_lowers_through_primitives():
    eqx = optional_module("equinox")

    layer = eqx.nn.Linear(6, 3, use_bias=False, key=jax.random.PRNGKey(0))
    model, _ = check(layer, [(6,)], opset=21)
    assert "Gemm" not in op_types(model)


@pytest.mark.parametrize("opset", [21, 23])
def test_flax_multi_head_attention(opset):
    nnx = optional_module("flax.nnx")

    attention = nnx.MultiHeadAttention(num_heads=2, in_features=8, qkv_features=8, decode=False,
                                       rngs=nnx.Rngs(0))
    model, _ = check(lambda x: attention(x), [("B", 5, 8)], opset=opset)
    assert ("Attention" in op_types(model)) == (opset >= 23)


def test_flax_mlp_exports_gemm_relu_softmax():
    nnx = optional_module("flax.nnx")

    class Classifier(nnx.Module):
        def __init__(self, rngs):
            self.hidden = nnx.Linear(8, 16, rngs=rngs)
            self.out = nnx.Linear(16, 4, rngs=rngs)

        def __call__(self, x):
            return jax.nn.softmax(self.out(jax.nn.relu(self.hidden(x))))

    model, _ = check(Classifier(nnx.Rngs(0)), [("B", 8)], opset=21)
    assert op_types(model).count("Gemm") == 2
    assert "Softmax" in op_types(model)
