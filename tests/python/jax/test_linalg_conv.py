"""dot_general in its common forms, conv_general_dilated (ONNX Conv) and reduce_window pooling."""

import jax
import jax.numpy as jnp
import pytest
from jax import lax

from jax_harness import check

DOTS = {
    "matmul": (lambda a, b: a @ b, [("B", 4), (4, 3)]),
    "matmul_transposed_rhs": (lambda a, b: a @ b.T, [("B", 4), (3, 4)]),
    "matvec": (lambda a, b: a @ b, [("B", 4), (4,)]),
    "vecmat": (lambda a, b: a @ b, [(4,), (4, 3)]),
    "dot_vectors": (lambda a, b: jnp.dot(a, b), [(5,), (5,)]),
    "batched_matmul": (lambda a, b: a @ b, [("B", 3, 4), ("B", 4, 2)]),
    "broadcast_batch": (lambda a, b: a @ b, [("B", 3, 4), (4, 2)]),
    "einsum_bij_bjk": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), [(2, 3, 4), (2, 4, 5)]),
    "einsum_attention_scores": (lambda q, k: jnp.einsum("bhqd,bhkd->bhqk", q, k), [("B", 2, 3, 4), ("B", 2, 5, 4)]),
    "einsum_outer_batch": (lambda a, b: jnp.einsum("bi,bj->bij", a, b), [("B", 3), ("B", 4)]),
    "einsum_contract_two": (lambda a, b: jnp.einsum("ijk,jkl->il", a, b), [(2, 3, 4), (3, 4, 5)]),
    "einsum_batch_middle": (lambda a, b: jnp.einsum("ibj,jbk->bik", a, b), [(3, 2, 4), (4, 2, 5)]),
    "tensordot": (lambda a, b: jnp.tensordot(a, b, axes=([1, 2], [0, 1])), [("B", 3, 4), (3, 4, 2)]),
    "inner": (lambda a, b: jnp.inner(a, b), [("B", 4), (3, 4)]),
    "int_matmul": (lambda a, b: a @ b,
                   [jax.ShapeDtypeStruct((3, 4), jnp.int32), jax.ShapeDtypeStruct((4, 2), jnp.int32)]),
    "preferred_type": (lambda a, b: lax.dot(a, b, preferred_element_type=jnp.float32),
                       [jax.ShapeDtypeStruct((3, 4), jnp.float16), jax.ShapeDtypeStruct((4, 2), jnp.float16)]),
    "linear_3d_input": (lambda x, w, b: x @ w + b, [("B", "T", 8), (8, 4), (4,)]),
}


@pytest.mark.parametrize("name", sorted(DOTS))
def test_dot_general(name):
    fn, inputs = DOTS[name]
    check(fn, inputs, int_range=(-3, 4))


@pytest.mark.parametrize("name", ["matmul", "batched_matmul", "einsum_attention_scores", "tensordot"])
def test_dot_general_f64(name):
    fn, inputs = DOTS[name]
    inputs = [jax.ShapeDtypeStruct(s, jnp.float64) for s in inputs]
    check(fn, inputs, x64=True)


CONVS = {
    "nhwc_same": dict(x=("B", 8, 8, 3), w=(3, 3, 3, 4), strides=(1, 1), padding="SAME", dn=("NHWC", "HWIO", "NHWC")),
    "nchw_valid": dict(x=(2, 3, 7, 7), w=(4, 3, 3, 3), strides=(1, 1), padding="VALID", dn=("NCHW", "OIHW", "NCHW")),
    "strided": dict(x=(1, 9, 9, 2), w=(3, 3, 2, 4), strides=(2, 2), padding="SAME", dn=("NHWC", "HWIO", "NHWC")),
    "dilated": dict(x=(1, 9, 9, 2), w=(3, 3, 2, 2), strides=(1, 1), padding="VALID", dn=("NHWC", "HWIO", "NHWC"),
                    rhs_dilation=(2, 2)),
    "grouped": dict(x=(1, 6, 6, 4), w=(3, 3, 2, 4), strides=(1, 1), padding="SAME", dn=("NHWC", "HWIO", "NHWC"),
                    groups=2),
    "depthwise": dict(x=(1, 6, 6, 3), w=(3, 3, 1, 3), strides=(1, 1), padding="SAME", dn=("NHWC", "HWIO", "NHWC"),
                      groups=3),
    "conv1d": dict(x=("B", 10, 3), w=(3, 3, 5), strides=(1,), padding="SAME", dn=("NWC", "WIO", "NWC")),
    "transposed_lhs_dilation": dict(x=(1, 4, 4, 2), w=(3, 3, 2, 2), strides=(1, 1), padding=((2, 2), (2, 2)),
                                    dn=("NHWC", "HWIO", "NHWC"), lhs_dilation=(2, 2)),
    "explicit_asymmetric_padding": dict(x=(1, 5, 5, 1), w=(2, 2, 1, 1), strides=(1, 1), padding=((1, 0), (0, 1)),
                                        dn=("NHWC", "HWIO", "NHWC")),
}


@pytest.mark.parametrize("name", sorted(CONVS))
def test_conv(name):
    c = CONVS[name]

    def fn(x, w):
        return lax.conv_general_dilated(x, w, c["strides"], c["padding"], lhs_dilation=c.get("lhs_dilation"),
                                        rhs_dilation=c.get("rhs_dilation"), dimension_numbers=c["dn"],
                                        feature_group_count=c.get("groups", 1))

    check(fn, [c["x"], c["w"]])


def test_conv_f64():
    fn = lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))  # noqa
    check(fn, [jax.ShapeDtypeStruct((1, 5, 5, 2), jnp.float64), jax.ShapeDtypeStruct((3, 3, 2, 3), jnp.float64)],
          x64=True)


POOLS = {
    "max_2x2": lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
    "max_3x3_same": lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 1, 1, 1), "SAME"),
    "sum_2x2": lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
    "avg_3x3_stride2": lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 2, 2, 1), "SAME") / 9.0,
    "min_pool": lambda x: lax.reduce_window(x, jnp.inf, lax.min, (1, 2, 1, 1), (1, 1, 1, 1), "VALID"),
    "dilated_window": lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 1, 1, 1), "VALID",
                                                  window_dilation=(1, 2, 2, 1)),
    "base_dilation": lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "VALID",
                                                 base_dilation=(1, 2, 2, 1)),
    "non_identity_init": lambda x: lax.reduce_window(x, 1.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
    "pool_1d_symbolic_batch": lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 1, 1), (1, 2, 1, 1), "VALID"),
}


@pytest.mark.parametrize("name", sorted(POOLS))
def test_pooling(name):
    check(POOLS[name], [("B", 6, 6, 2)])


def test_pooling_f64():
    check(POOLS["avg_3x3_stride2"], [jax.ShapeDtypeStruct((2, 5, 5, 1), jnp.float64)], x64=True)


def test_cumulative_window_sum_int():
    fn = lambda x: lax.reduce_window(x, 0, lax.add, (3,), (1,), "SAME")  # noqa: E731
    check(fn, [jax.ShapeDtypeStruct((7,), jnp.int32)], int_range=(-5, 5))


@pytest.mark.parametrize("name", ["max_2x2", "max_3x3_same", "min_pool", "dilated_window", "pool_1d_symbolic_batch"])
def test_max_min_pooling_exports_max_pool(name):
    model, _ = check(POOLS[name], [("B", 6, 6, 2)])
    assert "MaxPool" in [n.op_type for n in model.graph.node]


@pytest.mark.parametrize("reducer", ["max", "min"])
def test_pooling_over_symbolic_spatial_axes(reducer):
    init, op = (-jnp.inf, lax.max) if reducer == "max" else (jnp.inf, lax.min)
    fn = lambda x: lax.reduce_window(x, init, op, (1, 3, 2, 1), (1, 2, 2, 1), "SAME")  # noqa: E731
    check(fn, [("B", "H", "W", 2)], dims={"H": [4, 7, 9], "W": [5, 6, 8]}, n=3)


def test_pooling_fold_many_kept_axes():
    fn = lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 1), (1, 1, 2, 1), "VALID")  # noqa: E731
    check(fn, [("B", 2, 6, 3)])
