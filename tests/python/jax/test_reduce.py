"""Reductions, arg-reductions, cumulative ops, sort and top_k."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import nxrt.jax
from jax_harness import check

REDUCTIONS = {"sum": jnp.sum, "max": jnp.max, "min": jnp.min, "prod": jnp.prod, "mean": jnp.mean,
              "var": jnp.var, "std": jnp.std, "logsumexp": jax.nn.logsumexp, "norm": jnp.linalg.norm}
AXES = {"all": None, "last": -1, "first": 0, "pair": (0, 2)}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("axes", sorted(AXES))
def test_reduction(name, axes):
    fn = REDUCTIONS[name]
    axis = AXES[axes]
    check(lambda x: fn(x, axis=axis), [("B", 3, 4)])


def test_spectral_norm_is_reported_unsupported():
    """The default norm over two axes is Frobenius (a reduction); ord=2 needs an SVD, which has no lowering."""
    with pytest.raises(nxrt.jax.UnsupportedPrimitiveError, match="svd"):
        nxrt.jax.to_onnx(lambda x: jnp.linalg.norm(x, ord=2, axis=(0, 1)), [(3, 4)])


@pytest.mark.parametrize("name", ["sum", "max", "mean", "var"])
def test_reduction_f64(name):
    check(lambda x: REDUCTIONS[name](x, axis=1), [("B", 5)], x64=True)


def test_reduction_keepdims():
    check(lambda x: (jnp.sum(x, axis=1, keepdims=True), jnp.max(x, axis=0, keepdims=True)), [("B", 3)])


@pytest.mark.parametrize("dtype", [jnp.int32, jnp.bool_])
def test_integer_and_bool_reductions(dtype):
    spec = jax.ShapeDtypeStruct(("B", 4), dtype)
    if dtype == jnp.bool_:
        fn = lambda x: (jnp.all(x, axis=1), jnp.any(x, axis=0), jnp.sum(x, axis=1))  # noqa: E731
    else:
        fn = lambda x: (jnp.sum(x, axis=1), jnp.max(x, axis=0), jnp.min(x), jnp.prod(x, axis=1))  # noqa: E731
    check(fn, [spec], int_range=(-3, 4))


@pytest.mark.parametrize("fn_name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_arg_reductions(fn_name, axis):
    fn = getattr(jnp, fn_name)
    check(lambda x: fn(x, axis=axis), [("B", 3, 5)])


def test_argmax_ties_pick_first():
    spec = jax.ShapeDtypeStruct(("B", 6), jnp.int32)
    check(lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x, axis=1)), [spec], int_range=(0, 2))


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
def test_cumulative(name, reverse, axis):
    fn = getattr(lax, name)
    check(lambda x: fn(x, axis=axis, reverse=reverse), [(5, 6)])


def test_cumsum_symbolic_axis():
    check(lambda x: jnp.cumsum(x, axis=0), [("B", 3)])


def test_cumulative_int():
    spec = jax.ShapeDtypeStruct((7,), jnp.int32)
    check(lambda x: (jnp.cumsum(x), lax.cummax(x, 0), lax.cumprod(x, 0)), [spec], int_range=(-3, 4))


def test_cumulative_f64():
    check(lambda x: (jnp.cumsum(x, axis=1), jnp.cumprod(x, axis=1)), [jax.ShapeDtypeStruct((3, 9), jnp.float64)],
          x64=True)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_sort(axis):
    check(lambda x: jnp.sort(x, axis=axis), [("B", 4, 5)])


def test_sort_stable_with_ties():
    spec = jax.ShapeDtypeStruct(("B", 8), jnp.int32)
    check(lambda x: (jnp.sort(x, axis=1), jnp.argsort(x, axis=1, stable=True)), [spec], int_range=(0, 3))


def test_argsort_float():
    check(lambda x: jnp.argsort(x, axis=-1), [("B", 6)])


def test_sort_multiple_operands():
    check(lambda k, v: lax.sort((k, v), dimension=1, num_keys=1), [("B", 5), ("B", 5)])


def test_sort_descending():
    check(lambda x: jnp.sort(x, axis=1, descending=True), [("B", 5)])


@pytest.mark.parametrize("k", [1, 3])
def test_top_k(k):
    check(lambda x: lax.top_k(x, k), [("B", 6)])


def test_top_k_f64():
    check(lambda x: lax.top_k(x, 2), [jax.ShapeDtypeStruct(("B", 4), jnp.float64)], x64=True)


def test_median_via_sort():
    check(lambda x: jnp.median(x, axis=1), [(4, 7)])


def test_softmax_cross_entropy():
    def loss(logits, labels):
        return -jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(labels, 5), axis=-1)

    check(loss, [("B", 5), jax.ShapeDtypeStruct(("B",), jnp.int32)], int_range=(0, 5))


def test_reduce_precision_of_mean_large():
    check(lambda x: jnp.mean(x * 100.0, axis=0), [(64, 3)])


def test_count_nonzero():
    check(lambda x: jnp.count_nonzero(x > 0, axis=1), [("B", 6)])


def test_unique_counts_sorted_static():
    check(lambda x: jnp.sort(x.reshape(-1))[::2], [(3, 4)])


def test_percentile_like():
    check(lambda x: jnp.quantile(x, 0.5, axis=1, method="lower"), [(3, 5)])


def test_mean_int_input():
    check(lambda x: jnp.mean(x, axis=1), [jax.ShapeDtypeStruct(("B", 4), jnp.int32)], int_range=(-5, 5))


def test_cumsum_bool():
    check(lambda x: jnp.cumsum(x, axis=1), [jax.ShapeDtypeStruct((2, 5), jnp.bool_)])


def test_max_of_empty_symbolic_is_identity_free():
    check(lambda x: jnp.max(x, axis=0, initial=-1.0), [("B", 2)])


def test_nan_reductions():
    check(lambda x: (jnp.nansum(jnp.where(x > 1, jnp.nan, x), axis=1),
                     jnp.nanmax(jnp.where(x > 1, jnp.nan, x), axis=1)), [(4, 6)])


def test_where_reduction_masked_mean():
    check(lambda x, m: jnp.sum(x * m, axis=1) / jnp.maximum(jnp.sum(m, axis=1), 1.0),
          [("B", 5), ("B", 5)])


def test_argmax_int64_index_x64():
    check(lambda x: jnp.argmax(x, axis=1), [jax.ShapeDtypeStruct(("B", 5), jnp.float64)], x64=True)


def test_round_trip_sort_values_indices():
    def fn(x):
        idx = jnp.argsort(x, axis=1)
        return jnp.take_along_axis(x, idx, axis=1)

    check(fn, [("B", 6)])


def test_np_based_constant_reduction():
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    check(lambda x: x + jnp.sum(w, axis=0), [("B", 4)])


def test_lexicographic_sort():
    spec = jax.ShapeDtypeStruct(("B", 7), jnp.int32)
    check(lambda a, b, v: lax.sort((a, b, v), dimension=1, num_keys=2), [spec, spec, ("B", 7)], int_range=(0, 3))


def test_lexsort():
    spec = jax.ShapeDtypeStruct((9,), jnp.int32)
    check(lambda a, b: jnp.lexsort((a, b)), [spec, spec], int_range=(0, 3))


def test_approx_max_k():
    check(lambda x: lax.approx_max_k(x, 2), [("B", 6)])


def test_approx_min_k():
    check(lambda x: lax.approx_min_k(x, 3), [("B", 6)])


@pytest.mark.parametrize("name", ["cumprod", "cummax", "cummin", "cumlogsumexp"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("layout", ["first", "middle", "last"])
def test_cumulative_symbolic_axis(name, reverse, layout):
    shape, axis = {"first": (("T", 3), 0), "middle": ((2, "T", 3), 1), "last": (("B", "T"), 1)}[layout]
    model, _ = check(lambda x: getattr(lax, name)(x, axis=axis, reverse=reverse), [shape], n=4,
                     dims={"T": [1, 2, 7, 16], "B": [3, 1, 2]})
    assert "Loop" in [n.op_type for n in model.graph.node]


def test_cumulative_symbolic_axis_int_and_f64():
    check(lambda x: lax.cummax(x, 0), [jax.ShapeDtypeStruct(("T", 2), jnp.int32)], int_range=(-50, 50), n=3)
    check(lambda x: jnp.cumprod(x, axis=1), [jax.ShapeDtypeStruct((2, "T"), jnp.float64)], x64=True, n=3)


@pytest.mark.parametrize("dtype", [jnp.int32, jnp.uint8, jnp.bool_])
def test_bitwise_reductions(dtype):
    def fn(x):
        return (lax.reduce_and(x, (1,)), lax.reduce_or(x, (1, 2)), lax.reduce_xor(x, (2,)), lax.reduce_xor(x, (1,)),
                lax.reduce_and(x, (0,)), lax.reduce_or(x, (0, 1, 2)))

    check(fn, [jax.ShapeDtypeStruct(("B", 5, 3), dtype)], int_range=(0, 255), n=3)


def test_bitwise_reductions_numpy_api():
    spec = jax.ShapeDtypeStruct((4, 7), jnp.int32)
    check(lambda x: (jnp.bitwise_and.reduce(x, axis=1), jnp.bitwise_or.reduce(x, axis=0),
                     jnp.bitwise_xor.reduce(x, axis=1)), [spec], int_range=(0, 1000))
