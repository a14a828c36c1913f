"""Calls (jit, custom_jvp, custom_vjp, checkpoint) inlined, and cond / switch / while_loop / fori_loop / scan."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from jax_harness import check, op_types


def test_nested_jit_is_inlined():
    inner = jax.jit(lambda x: jnp.sin(x) * 2)
    model, _ = check(lambda x: inner(inner(x)) + 1, [("B", 3)])
    assert "If" not in op_types(model)


def test_custom_jvp_inlined():
    @jax.custom_jvp
    def f(x):
        return jnp.log1p(jnp.exp(x))

    f.defjvp(lambda primals, tangents: (f(primals[0]), tangents[0] * jax.nn.sigmoid(primals[0])))
    check(f, [("B", 4)])


def test_custom_vjp_inlined():
    @jax.custom_vjp
    def f(x):
        return jnp.tanh(x) * 3

    f.defvjp(lambda x: (f(x), x), lambda x, g: (g,))
    check(f, [("B", 4)])


def test_checkpoint_inlined():
    check(jax.checkpoint(lambda x: jnp.cos(x) @ x.T), [("B", 4)])


@pytest.mark.parametrize("x64", [False, True])
def test_cond(x64):
    fn = lambda p, x: lax.cond(p > 0, lambda v: v * 2.0, lambda v: -v, x)  # noqa: E731
    dtype = jnp.float64 if x64 else jnp.float32
    model, _ = check(fn, [jax.ShapeDtypeStruct((), dtype), jax.ShapeDtypeStruct(("B", 3), dtype)], x64=x64, n=4)
    assert "If" in op_types(model)


def test_cond_multiple_operands_and_outputs():
    def fn(p, x, y):
        return lax.cond(p, lambda a, b: (a + b, a * 2), lambda a, b: (a - b, b * 3), x, y)

    check(fn, [jax.ShapeDtypeStruct((), jnp.bool_), ("B", 2), ("B", 2)], n=4)


def test_cond_branch_uses_outer_constant():
    w = np.arange(3, dtype=np.float32)
    check(lambda p, x: lax.cond(p > 0, lambda v: v * w, lambda v: v + w, x), [(), ("B", 3)], n=4)


@pytest.mark.parametrize("branches", [2, 3, 4])
def test_switch(branches):
    fns = [lambda v, k=k: v * (k + 1) + k for k in range(branches)]
    check(lambda i, x: lax.switch(i, fns, x), [jax.ShapeDtypeStruct((), jnp.int32), ("B", 2)],
          int_range=(-1, branches + 1), n=6)


def test_nested_cond():
    def fn(p, q, x):
        return lax.cond(p > 0, lambda v: lax.cond(q > 0, jnp.sin, jnp.cos, v), lambda v: v * 0.5, x)

    check(fn, [(), (), ("B",)], n=6)


def test_while_loop():
    def fn(x):
        return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.1 + 0.1), (0, x))

    model, _ = check(fn, [("B", 3)])
    assert "Loop" in op_types(model)


def test_while_loop_data_dependent():
    def fn(x):
        def body(c):
            v, n = c
            return v * 0.5, n + 1
        return lax.while_loop(lambda c: jnp.max(jnp.abs(c[0])) > 0.1, body, (x, jnp.int32(0)))

    check(fn, [("B", 4)])


def test_while_loop_with_consts():
    w = np.linspace(0.5, 0.9, 3).astype(np.float32)
    check(lambda x, t: lax.while_loop(lambda c: c[1] < t, lambda c: (c[0] * w, c[1] + 1.0), (x, 0.0)),
          [(3,), ()], input_gen=lambda rng, s: [rng.standard_normal(3).astype(np.float32), np.float32(4)])


@pytest.mark.parametrize("upper", [0, 1, 4])
def test_fori_loop_static(upper):
    check(lambda x: lax.fori_loop(0, upper, lambda i, v: v * 0.9 + jnp.sin(v) * i, x), [("B", 2)])


def test_fori_loop_dynamic_bound():
    fn = lambda n, x: lax.fori_loop(0, n, lambda i, v: v + i.astype(jnp.float32), x)  # noqa: E731
    check(fn, [jax.ShapeDtypeStruct((), jnp.int32), ("B",)], int_range=(0, 6), n=4)


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_cumulative(reverse):
    def fn(xs):
        return lax.scan(lambda c, x: (c + x, c * x), jnp.zeros(xs.shape[1:]), xs, reverse=reverse)

    model, _ = check(fn, [(5, "B")])
    assert "Loop" in op_types(model)


def test_scan_symbolic_length():
    check(lambda xs: lax.scan(lambda c, x: (c * 0.5 + x, jnp.tanh(c)), jnp.zeros(3), xs), [("T", 3)])


def test_scan_rnn_cell():
    w = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32) * 0.5

    def fn(h0, xs):
        def cell(h, x):
            h = jnp.tanh(h @ w + x)
            return h, h.sum()
        return lax.scan(cell, h0, xs)

    check(fn, [(4,), ("T", 4)])


def test_scan_multiple_carries_no_xs():
    check(lambda x: lax.scan(lambda c, _: ((c[0] + 1.0, c[1] * 0.5), c[0]), (x, x), None, length=3), [("B",)])


def test_scan_f64_physics_integrator():
    def step(state, _):
        q, p = state
        p = p - 0.01 * jnp.sin(q)
        q = q + 0.01 * p
        return (q, p), q

    check(lambda q, p: lax.scan(step, (q, p), None, length=50), [jax.ShapeDtypeStruct(("B",), jnp.float64)] * 2,
          x64=True)


def test_map():
    check(lambda xs: lax.map(lambda x: jnp.sum(x ** 2), xs), [("B", 3)])


def test_vmap_of_cond_becomes_select():
    check(jax.vmap(lambda p, x: lax.cond(p > 0, jnp.sin, jnp.cos, x)), [("B",), ("B",)])


def test_loop_inside_cond():
    def fn(p, x):
        return lax.cond(p > 0, lambda v: lax.fori_loop(0, 3, lambda i, a: a * 2, v), lambda v: v, x)

    check(fn, [(), ("B",)], n=4)


def test_cond_inside_scan():
    def fn(xs):
        return lax.scan(lambda c, x: (lax.cond(x > 0, lambda: c + x, lambda: c - x), c), 0.0, xs)

    check(fn, [("T",)])
