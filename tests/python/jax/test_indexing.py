"""gather and scatter in the forms jnp indexing, take, take_along_axis and .at[] emit."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from jax_harness import check, op_types, optional_module

I32 = jnp.int32


def idx(*shape):
    return jax.ShapeDtypeStruct(shape, I32)


GATHERS = {
    "take_rows": (lambda x, i: x[i], [(6, 3), idx("N")], 6),
    "take_rows_2d_index": (lambda x, i: x[i], [(6, 3), idx(2, "N")], 6),
    "take_cols": (lambda x, i: x[:, i], [("B", 6), idx("N")], 6),
    "take_middle_axis": (lambda x, i: x[:, i, :], [(2, 5, 3), idx(4)], 5),
    "take_two_axes": (lambda x, i, j: x[i, j], [(5, 6, 2), idx("N"), idx("N")], 5),
    "take_negative": (lambda x, i: x[i - 3], [(6, 3), idx("N")], 3),
    "jnp_take_fill": (lambda x, i: jnp.take(x, i, axis=0), [(6, 4), idx("N")], 6),
    "jnp_take_clip": (lambda x, i: jnp.take(x, i, axis=1, mode="clip"), [(3, 5), idx("N")], 9),
    "jnp_take_fill_oob": (lambda x, i: jnp.take(x, i, axis=0, mode="fill", fill_value=-7.0), [(4, 2), idx("N")], 7),
    "take_along_axis_last": (lambda x, i: jnp.take_along_axis(x, i, axis=1), [("B", 6), idx("B", 4)], 6),
    "take_along_axis_first": (lambda x, i: jnp.take_along_axis(x, i, axis=0), [(5, 3), idx(2, 3)], 5),
    "take_along_axis_3d": (lambda x, i: jnp.take_along_axis(x, i, axis=1), [(2, 5, 3), idx(2, 4, 3)], 5),
    "embedding_lookup": (lambda table, ids: table[ids], [(10, 4), idx("B", "T")], 10),
    "index_with_slice": (lambda x, i: x[i, 1:3], [(6, 4), idx("N")], 6),
    "boolean_mask_static": (lambda x: x[:, np.array([True, False, True, True])], [("B", 4)], 1),
    "fancy_constant_index": (lambda x: x[np.array([2, 0, 1])], [(3, 4)], 1),
    "slice_symbolic_gather": (lambda x: x[1:, :2], [("B", 3)], 1),
    "scalar_int_index": (lambda x, i: x[:, i], [("B", 5), idx()], 5),
    "diagonal_gather": (lambda x: jnp.diagonal(x, offset=1), [(4, 5)], 1),
    "vmap_index": (jax.vmap(lambda row, i: row[i]), [("B", 5), idx("B")], 5),
    "vmap_dynamic_slice": (jax.vmap(lambda row, i: lax.dynamic_slice(row, (i,), (2,))), [("B", 6), idx("B")], 6),
    "gather_f64": None,
}


@pytest.mark.parametrize("name", sorted(k for k, v in GATHERS.items() if v is not None))
def test_gather(name):
    fn, inputs, high = GATHERS[name]
    check(fn, inputs, int_range=(0, high), n=3)


def test_gather_out_of_bounds_clamps_as_jax_does():
    # x[i] is a PROMISE_IN_BOUNDS gather: XLA clamps the start, after jnp has wrapped negative indices once.
    check(lambda x, i: (x[i], x[:, i]), [(4, 3), idx("N")], int_range=(-9, 9), n=4)


@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
def test_at_get_modes(mode):
    check(lambda x, i, j: x.at[i, j].get(mode=mode, fill_value=-1.0), [(5, 4), idx("N"), idx("N")],
          int_range=(-7, 8), n=4)


def test_take_exports_onnx_gather():
    model, _ = check(lambda x, i: jnp.take(x, i, axis=1, mode="clip"), [(3, 6), idx("B", 2)], int_range=(0, 6))
    assert "Gather" in op_types(model) and "GatherND" not in op_types(model)


def test_flax_embed_exports_onnx_gather():
    nnx = optional_module("flax.nnx")

    model, _ = check(nnx.Embed(10, 4, rngs=nnx.Rngs(0)), [idx("B", "T")], int_range=(0, 10))
    assert "Gather" in op_types(model) and "GatherND" not in op_types(model)


def test_gather_f64():
    check(lambda x, i: x[i] * 2.0, [jax.ShapeDtypeStruct((5, 2), jnp.float64), jax.ShapeDtypeStruct(("N",), jnp.int64)],
          x64=True, int_range=(0, 5))


SCATTERS = {
    "set_rows": (lambda x, i, u: x.at[i].set(u), [(6, 3), idx(2), (2, 3)]),
    "add_rows_duplicates": (lambda x, i, u: x.at[i].add(u), [(4, 3), idx(5), (5, 3)]),
    "mul_rows": (lambda x, i, u: x.at[i].multiply(u), [(4, 3), idx(3), (3, 3)]),
    "max_rows": (lambda x, i, u: x.at[i].max(u), [(4, 3), idx(3), (3, 3)]),
    "min_rows": (lambda x, i, u: x.at[i].min(u), [(4, 3), idx(3), (3, 3)]),
    "set_scalar_index": (lambda x, i, u: x.at[i].set(u), [(5, 2), idx(), (2,)]),
    "set_cols": (lambda x, i, u: x.at[:, i].set(u), [("B", 5), idx(2), ("B", 2)]),
    "add_elements": (lambda x, i, j, u: x.at[i, j].add(u), [(4, 5), idx(3), idx(3), (3,)]),
    "set_broadcast_value": (lambda x, i: x.at[i].set(0.0), [(5, 3), idx(2)]),
    "set_slice_static": (lambda x, u: x.at[1:3].set(u), [(5, 3), (2, 3)]),
    "add_slice_cols": (lambda x, u: x.at[:, ::2].add(u), [(3, 6), (3, 3)]),
    "segment_sum": (lambda d, s: jax.ops.segment_sum(d, s, num_segments=4), [("B", 3), idx("B")]),
    "segment_max": (lambda d, s: jax.ops.segment_max(d, s, num_segments=4), [(6, 2), idx(6)]),
    "put_along_axis": (lambda x, i, u: jnp.put_along_axis(x, i, u, axis=1, inplace=False),
                       [(3, 5), idx(3, 1), (3, 1)]),
    "vmap_set": (jax.vmap(lambda row, i, v: row.at[i].set(v)), [("B", 5), idx("B"), ("B",)]),
    "bincount_like": (lambda i: jnp.zeros(5).at[i].add(1.0), [idx("N")]),
    "one_hot_scatter": (lambda i: jnp.zeros((i.shape[0], 4)).at[jnp.arange(i.shape[0]), i].set(1.0), [idx(6)]),
    "subtract_rows": (lambda x, i, u: x.at[i].subtract(u), [(4, 3), idx(5), (5, 3)]),
    "subtract_cols_symbolic": (lambda x, i, u: x.at[:, i].subtract(u), [("B", 4), idx(3), ("B", 3)]),
    "divide_rows": (lambda x, i, u: x.at[i].divide(u + 3.0), [(4, 3), idx(2), (2, 3)]),
    "set_rows_clip": (lambda x, i, u: x.at[i].set(u, mode="clip"), [(4, 3), idx(2), (2, 3)]),
    "add_rows_promise_in_bounds": (lambda x, i, u: x.at[i].add(u, mode="promise_in_bounds"),
                                   [(4, 3), idx(3), (3, 3)]),
    "apply_rows": (lambda x, i: x.at[i].apply(jnp.sin), [(4, 3), idx(2)]),
}


@pytest.mark.parametrize("name", sorted(SCATTERS))
def test_scatter(name):
    fn, inputs = SCATTERS[name]
    check(fn, inputs, int_range=(0, 3), n=3)


def test_scatter_drops_out_of_bounds():
    check(lambda x, i, u: x.at[i].add(u), [(3, 2), idx(4), (4, 2)], int_range=(-1, 6), n=4)


@pytest.mark.parametrize("mode", ["clip", "drop"])
def test_scatter_out_of_bounds_modes(mode):
    check(lambda x, i, u: (x.at[i].set(u, mode=mode), x.at[i].subtract(u, mode=mode)), [(3, 2), idx(4), (4, 2)],
          int_range=(-2, 6), n=4)


@pytest.mark.parametrize("dtype", [jnp.int32, jnp.uint8])
def test_scatter_subtract_integers(dtype):
    spec = jax.ShapeDtypeStruct((6,), dtype)
    check(lambda x, i, u: x.at[i].subtract(u), [spec, idx(4), jax.ShapeDtypeStruct((4,), dtype)], int_range=(0, 6))


def test_scatter_set_f64():
    check(lambda x, i, u: x.at[i].set(u),
          [jax.ShapeDtypeStruct((5, 2), jnp.float64), jax.ShapeDtypeStruct((2,), jnp.int64),
           jax.ShapeDtypeStruct((2, 2), jnp.float64)], x64=True, int_range=(0, 5))


def test_scatter_int_values():
    check(lambda x, i, u: x.at[i].add(u),
          [jax.ShapeDtypeStruct((5,), I32), idx(3), jax.ShapeDtypeStruct((3,), I32)], int_range=(0, 5))


def test_dynamic_update_index_in_loop_body_style():
    check(lambda x, i, v: lax.dynamic_update_index_in_dim(x, v, i, axis=0), [(5, 3), idx(), (3,)],
          int_range=(0, 5), n=3)
