"""Shape and data-movement primitives with static and symbolic dimensions."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from jax_harness import check

CASES = {
    "broadcast_scalar": (lambda x: x + jnp.zeros((3, 4)), [()]),
    "broadcast_row": (lambda x: jnp.broadcast_to(x, (3, 4)), [(4,)]),
    "broadcast_col": (lambda x: jnp.broadcast_to(x[:, None], ("B" and 5, 4)), [(5,)]),
    "broadcast_in_dim_middle": (lambda x: lax.broadcast_in_dim(x, (2, 5, 3), (0, 2)), [(2, 3)]),
    "broadcast_symbolic": (lambda x, y: x[:, None, :] * y[None, :, :], [("B", 4), (3, 4)]),
    "reshape_flatten": (lambda x: x.reshape(-1), [("B", 3, 2)]),
    "reshape_merge": (lambda x: x.reshape(x.shape[0], -1), [("B", 3, 4)]),
    "reshape_split": (lambda x: x.reshape(x.shape[0], 2, 6), [("B", 12)]),
    "reshape_static": (lambda x: x.reshape(6, 2), [(3, 4)]),
    "transpose_2d": (lambda x: x.T, [("B", 3)]),
    "transpose_3d": (lambda x: jnp.transpose(x, (2, 0, 1)), [("B", 3, 4)]),
    "moveaxis": (lambda x: jnp.moveaxis(x, 0, -1), [(2, "B", 4)]),
    "squeeze": (lambda x: jnp.squeeze(x, axis=(1, 3)), [("B", 1, 3, 1)]),
    "expand_dims": (lambda x: jnp.expand_dims(x, (0, 2)), [("B", 3)]),
    "concatenate": (lambda x, y: jnp.concatenate([x, y, x], axis=1), [("B", 2), ("B", 3)]),
    "concatenate_batch": (lambda x, y: jnp.concatenate([x, y], axis=0), [("B", 2), ("C", 2)]),
    "stack": (lambda x, y: jnp.stack([x, y], axis=1), [("B", 3), ("B", 3)]),
    "split_even": (lambda x: jnp.split(x, 3, axis=1), [("B", 6)]),
    "split_uneven": (lambda x: jnp.split(x, [1, 4], axis=1), [("B", 6)]),
    "slice_basic": (lambda x: x[:, 1:3], [("B", 5)]),
    "slice_strided": (lambda x: x[:, ::2], [("B", 7)]),
    "slice_symbolic_end": (lambda x: x[1:], [("B", 3)]),
    "slice_negative_step": (lambda x: x[:, ::-1], [("B", 4)]),
    "rev": (lambda x: lax.rev(x, (0, 1)), [("B", 4)]),
    "flip": (lambda x: jnp.flip(x, axis=1), [(3, 4)]),
    "pad_constant": (lambda x: jnp.pad(x, ((1, 2), (0, 3))), [("B", 3)]),
    "pad_value": (lambda x: lax.pad(x, 1.5, ((0, 0, 0), (2, 1, 0))), [("B", 3)]),
    "pad_interior": (lambda x: lax.pad(x, 0.0, ((0, 0, 0), (1, 1, 2))), [("B", 3)]),
    "pad_negative": (lambda x: lax.pad(x, 0.0, ((0, 0, 0), (-1, 2, 0))), [(2, 5)]),
    "pad_negative_interior": (lambda x: lax.pad(x, -1.0, ((-1, -1, 1), (0, 0, 0))), [(4, 2)]),
    "pad_edge": (lambda x: jnp.pad(x, ((1, 1), (2, 2)), mode="edge"), [(3, 4)]),
    "pad_reflect": (lambda x: jnp.pad(x, ((0, 0), (2, 2)), mode="reflect"), [(3, 5)]),
    "tile": (lambda x: jnp.tile(x, (2, 3)), [("B", 2)]),
    "repeat": (lambda x: jnp.repeat(x, 3, axis=1), [(2, 3)]),
    "iota_arange": (lambda x: x + jnp.arange(x.shape[0], dtype=jnp.float32)[:, None], [("B", 3)]),
    "iota_2d": (lambda x: x * lax.broadcasted_iota(jnp.float32, (4, 5), 1), [(4, 5)]),
    "eye": (lambda x: x @ jnp.eye(4, dtype=jnp.float32), [("B", 4)]),
    "tril": (lambda x: jnp.tril(x), [(4, 4)]),
    "triu_k": (lambda x: jnp.triu(x, k=1), [(3, 5)]),
    "ravel_symbolic": (lambda x: x.ravel() * 2, [("B", "C")]),
    "atleast_2d": (lambda x: jnp.atleast_2d(x) + 1, [("B",)]),
    "roll": (lambda x: jnp.roll(x, 2, axis=1), [(2, 5)]),
    "meshgrid": (lambda x, y: jnp.meshgrid(x, y), [(3,), (4,)]),
    "outer": (lambda x, y: jnp.outer(x, y), [("B",), ("C",)]),
    "diagonal": (lambda x: jnp.diagonal(x), [(4, 4)]),
    "zeros_like_symbolic": (lambda x: jnp.zeros_like(x) + jnp.ones(x.shape), [("B", 2)]),
    "full_symbolic": (lambda x: jnp.full((x.shape[0], 3), 2.5) * x[:, :1], [("B", 2)]),
    "linspace": (lambda x: x * jnp.linspace(0.0, 1.0, 5), [("B", 5)]),
    "unstack": (lambda x: jnp.unstack(x, axis=1), [("B", 3)]),
    "unstack_single": (lambda x: jnp.unstack(x, axis=0), [(1, "B")]),
    "iterate_rows": (lambda x: [row * k for k, row in enumerate(x)], [(3, "B")]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_shape_op(name):
    fn, inputs = CASES[name]
    check(fn, inputs)


@pytest.mark.parametrize("name", ["reshape_merge", "transpose_3d", "concatenate", "pad_interior", "slice_strided",
                                  "tile", "iota_arange"])
def test_shape_op_f64(name):
    fn, inputs = CASES[name]
    check(fn, inputs, x64=True)


def _index_gen(shape, high):
    def gen(rng, sizes):
        dims = tuple(sizes.get(d, d) if isinstance(d, str) else d for d in shape)
        return [rng.standard_normal(dims).astype(np.float32), np.int32(rng.integers(-2, high))]
    return gen


@pytest.mark.parametrize("size", [1, 2, 3])
def test_dynamic_slice(size):
    fn = lambda x, i: lax.dynamic_slice(x, (i, 0), (size, 4))  # noqa: E731
    check(fn, [(6, 4), jax.ShapeDtypeStruct((), jnp.int32)], input_gen=_index_gen((6, 4), 8), n=4)


def test_dynamic_slice_symbolic_batch():
    fn = lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis=1)  # noqa: E731
    check(fn, [("B", 6), jax.ShapeDtypeStruct((), jnp.int32)], input_gen=_index_gen(("B", 6), 7), n=4)


@pytest.mark.parametrize("shape", [(2, 4), (1, 4), (6, 4)])
def test_dynamic_update_slice(shape):
    fn = lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 0))  # noqa: E731

    def gen(rng, sizes):
        return [rng.standard_normal((6, 4)).astype(np.float32), rng.standard_normal(shape).astype(np.float32),
                np.int32(rng.integers(-1, 8))]

    check(fn, [(6, 4), shape, jax.ShapeDtypeStruct((), jnp.int32)], input_gen=gen, n=4)


def test_dynamic_update_slice_symbolic():
    fn = lambda x, u: lax.dynamic_update_slice_in_dim(x, u, 1, axis=1)  # noqa: E731
    check(fn, [("B", 5), ("B", 2)])


def test_dynamic_index_scalar():
    fn = lambda x, i: x[i] * 2  # noqa: E731
    check(fn, [(5, 3), jax.ShapeDtypeStruct((), jnp.int32)], input_gen=_index_gen((5, 3), 5), n=4)


def test_dynamic_slice_f64():
    fn = lambda x, i: lax.dynamic_slice(x, (0, i), (2, 2))  # noqa: E731

    def gen(rng, sizes):
        return [rng.standard_normal((3, 5)), np.int64(rng.integers(0, 5))]

    check(fn, [jax.ShapeDtypeStruct((3, 5), jnp.float64), jax.ShapeDtypeStruct((), jnp.int64)], input_gen=gen,
          x64=True, n=3)
