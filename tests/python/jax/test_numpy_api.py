"""Higher-level jax.numpy / jax.nn / lax functions, exported through whatever primitives they trace to."""

import jax
import jax.numpy as jnp
import pytest
from jax import lax

from jax_harness import check

I32 = jnp.int32

CASES = {
    "dot_product_attention": (lambda q, k, v: jax.nn.dot_product_attention(q, k, v), [("B", 5, 2, 4)] * 3),
    "dot_product_attention_causal": (lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True),
                                     [(2, 5, 2, 4)] * 3),
    "one_hot": (lambda i: jax.nn.one_hot(i, 6), [jax.ShapeDtypeStruct(("B",), I32)]),
    "standardize": (lambda x: jax.nn.standardize(x, axis=-1), [("B", 6)]),
    "einsum_trace": (lambda x: jnp.einsum("ii->", x), [(4, 4)]),
    "einsum_diag": (lambda x: jnp.einsum("ii->i", x), [(4, 4)]),
    "searchsorted": (lambda a, v: jnp.searchsorted(jnp.sort(a), v), [(8,), ("B",)]),
    "interp": (lambda x: jnp.interp(x, jnp.linspace(-2, 2, 9), jnp.sin(jnp.linspace(-2, 2, 9))), [("B",)]),
    "associative_scan": (lambda x: lax.associative_scan(jnp.add, x, axis=0), [(8, 3)]),
    "associative_scan_max": (lambda x: lax.associative_scan(jnp.maximum, x, axis=1), [(2, 7)]),
    "bincount": (lambda i: jnp.bincount(i, length=5), [jax.ShapeDtypeStruct((9,), I32)]),
    "argwhere_sized": (lambda x: jnp.argwhere(x > 0, size=4, fill_value=-1), [(3, 3)]),
    "nonzero_sized": (lambda x: jnp.nonzero(x > 0, size=5, fill_value=0)[0], [(8,)]),
    "polyval": (lambda x: jnp.polyval(jnp.array([1.0, -2.0, 0.5, 3.0]), x), [("B",)]),
    "cross": (lambda a, b: jnp.cross(a, b), [("B", 3), ("B", 3)]),
    "norm_vectors": (lambda x: x / jnp.linalg.norm(x, axis=-1, keepdims=True), [("B", 4)]),
    "cosine_similarity": (lambda a, b: jnp.sum(a * b, -1) / (jnp.linalg.norm(a, axis=-1) * jnp.linalg.norm(b, axis=-1)),
                          [("B", 5), ("B", 5)]),
    "trapezoid": (lambda y: jnp.trapezoid(y, dx=0.1, axis=-1), [("B", 7)]),
    "diff": (lambda x: jnp.diff(x, axis=1), [("B", 6)]),
    "gradient_fn": (lambda x: jax.grad(lambda v: jnp.sum(jnp.sin(v) * v))(x), [("B", 3)]),
    "jacobian_small": (lambda x: jax.jacfwd(lambda v: jnp.tanh(v) * v[::-1])(x), [(4,)]),
    "vmap_grad": (jax.vmap(jax.grad(lambda v: jnp.sum(v ** 3))), [("B", 3)]),
    "hessian_vector": (lambda x, v: jax.jvp(jax.grad(lambda u: jnp.sum(jnp.exp(u) * u)), (x,), (v,))[1],
                       [("B",), ("B",)]),
    "sort_key_val": (lambda k, v: lax.sort_key_val(k, v, dimension=-1), [("B", 5), ("B", 5)]),
    "clip_by_norm": (lambda x: x * jnp.minimum(1.0, 1.0 / (jnp.linalg.norm(x) + 1e-6)), [("B", 3)]),
    "where_three_way": (lambda c, a, b: jnp.where(c > 0, a, jnp.where(c < -0.5, b, 0.0)), [("B",)] * 3),
    "select_piecewise": (lambda x: jnp.piecewise(x, [x < -0.5, x > 0.5], [lambda v: v * 2, lambda v: v ** 2, 0.0]),
                         [("B",)]),
    "take_wrap": (lambda x, i: jnp.take(x, i, axis=0, mode="wrap"), [(5, 2), jax.ShapeDtypeStruct(("N",), I32)]),
    "matrix_power": (lambda x: jnp.linalg.matrix_power(x, 3), [(3, 3)]),
    "kron": (lambda a, b: jnp.kron(a, b), [(2, 2), (2, 3)]),
    "histogram_fixed": (lambda x: jnp.histogram(x, bins=4, range=(-2.0, 2.0))[0], [(16,)]),
    "rot90": (lambda x: jnp.rot90(x), [(3, 4)]),
    "pad_wrap": (lambda x: jnp.pad(x, ((0, 0), (1, 2)), mode="wrap"), [("B", 4)]),
    "logsumexp_where": (lambda x: jax.nn.logsumexp(x, axis=1, where=x > -1.0), [(3, 5)]),
    "softmax_where": (lambda x: jax.nn.softmax(x, axis=-1, where=x > -1.5), [(3, 5)]),
    "isclose": (lambda a, b: jnp.isclose(a, b, atol=0.5), [("B",), ("B",)]),
    "sign_abs_mix": (lambda x: jnp.sign(x) * jnp.sqrt(jnp.abs(x)), [("B", 3)]),
    "float_power": (lambda x: jnp.power(jnp.abs(x) + 1, 2.5), [("B",)]),
    "heaviside": (lambda x: jnp.heaviside(x, 0.5), [("B",)]),
    "sinc": (lambda x: jnp.sinc(x), [("B",)]),
    "deg2rad": (lambda x: jnp.deg2rad(x * 90) + jnp.rad2deg(x), [("B",)]),
    "nan_to_num": (lambda x: jnp.nan_to_num(jnp.log(x)), [("B",)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_api(name):
    fn, inputs = CASES[name]
    check(fn, inputs, int_range=(0, 5), n=2)


@pytest.mark.parametrize("name", ["standardize", "interp", "gradient_fn", "cross", "trapezoid"])
def test_numpy_api_f64(name):
    fn, inputs = CASES[name]
    inputs = [jax.ShapeDtypeStruct(s, jnp.float64) for s in inputs]
    check(fn, inputs, x64=True)
