"""JAX random numbers (threefry) and bitcast_convert_type exported as exact ONNX integer arithmetic: the
exported bits equal JAX's, and the floats drawn from them match JAX within the usual tolerance."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import nxrt
import nxrt.jax
from jax_harness import check


def _key_bits(rng, sizes):
    return [rng.integers(0, 2**32, size=(2,), dtype=np.uint32)]


def run_nxrt(model, *arrays):
    session = nxrt.InferenceSession(model.SerializeToString())
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, arrays)))


@pytest.mark.parametrize("shape", [(1,), (7,), (3, 5)])
def test_random_bits_match_jax_exactly(shape):
    def bits(key):
        return jax.random.bits(key, shape, dtype=jnp.uint32)

    model = nxrt.jax.to_onnx(bits, [jax.ShapeDtypeStruct((2,), jnp.uint32)])
    for seed in (0, 1, 12345, 2**32 - 1):
        key = np.asarray(jax.random.PRNGKey(seed))
        (got,) = run_nxrt(model, key)
        np.testing.assert_array_equal(got, np.asarray(bits(key)))


def test_seed_split_fold_in_inside_the_function():
    def draw(x):
        key = jax.random.PRNGKey(42)
        k1, k2 = jax.random.split(key)
        k3 = jax.random.fold_in(k2, 7)
        return x + jax.random.uniform(k1, x.shape) + jax.random.normal(k3, x.shape)

    check(draw, [(4, 3)])


@pytest.mark.parametrize("x64", [False, True])
def test_uniform_normal_bernoulli_from_a_key_input(x64):
    def draw(key, x):
        u = jax.random.uniform(key, x.shape, dtype=x.dtype)
        n = jax.random.normal(jax.random.fold_in(key, 1), x.shape, dtype=x.dtype)
        b = jax.random.bernoulli(jax.random.fold_in(key, 2), 0.3, x.shape)
        return x * u + n, b

    dtype = jnp.float64 if x64 else jnp.float32
    check(draw, [jax.ShapeDtypeStruct((2,), jnp.uint32), jax.ShapeDtypeStruct((5, 4), dtype)], x64=x64,
          input_gen=lambda rng, sizes: _key_bits(rng, sizes) + [rng.standard_normal((5, 4)).astype(dtype)])


def test_split_into_many_keys_and_vmap_over_them():
    def draw(key):
        keys = jax.random.split(key, 4)
        return jax.vmap(lambda k: jax.random.uniform(k, (3,)))(keys)

    check(draw, [jax.ShapeDtypeStruct((2,), jnp.uint32)], input_gen=_key_bits)


@pytest.mark.parametrize("src,dst", [(np.uint32, np.float32), (np.int32, np.float32), (np.uint64, np.float64),
                                     (np.int64, np.float64)])
def test_bitcast_integer_to_float(src, dst):
    x64 = np.dtype(src).itemsize == 8
    fn = lambda bits: lax.bitcast_convert_type(bits, dst)
    with jax.enable_x64(x64):
        model = nxrt.jax.to_onnx(fn, [jax.ShapeDtypeStruct((64,), src)], enable_double_precision=x64)
        rng = np.random.default_rng(0)
        floats = np.concatenate([rng.standard_normal(40) * 10.0 ** rng.integers(-30, 30, 40),
                                 [0.0, -0.0, np.inf, -np.inf, 1.0, 2.0, 0.5, -3.0],
                                 np.finfo(dst).tiny * np.array([1, 0.5, 0.25, 2**-20, 3, -1, -0.5, 7.5]),
                                 np.finfo(dst).max * np.array([1, -1, 0.5, 0.25, 1, 1, 1, 1])]).astype(dst)
        bits = floats.view(src)
        (got,) = run_nxrt(model, bits)
        np.testing.assert_array_equal(got.view(src), np.asarray(fn(bits)).view(src))
        nan_bits = np.array([np.float32("nan")], dst).view(src)
        nan_model = nxrt.jax.to_onnx(fn, [jax.ShapeDtypeStruct((1,), src)], enable_double_precision=x64)
        assert np.isnan(run_nxrt(nan_model, nan_bits)[0]).all()


@pytest.mark.parametrize("dtype,int_dtype", [(np.float32, np.uint32), (np.float32, np.int32),
                                             (np.float64, np.uint64), (np.float64, np.int64)])
def test_bitcast_float_to_integer(dtype, int_dtype):
    x64 = np.dtype(dtype).itemsize == 8
    fn = lambda x: lax.bitcast_convert_type(x, int_dtype)
    with jax.enable_x64(x64):
        model = nxrt.jax.to_onnx(fn, [jax.ShapeDtypeStruct((56,), dtype)], enable_double_precision=x64)
        rng = np.random.default_rng(1)
        x = np.concatenate([rng.standard_normal(32) * 10.0 ** rng.integers(-30, 30, 32),
                            [0.0, -0.0, np.inf, -np.inf, 1.0, 2.0, 0.5, -3.0, 1.5, 0.75, 3.0, 4.0 - 2**-20],
                            np.finfo(dtype).tiny * np.array([1, 0.5, 0.25, 2**-20, 3, -1, -0.5, 7.5]),
                            np.finfo(dtype).max * np.array([1, -1, 0.5, 0.25])]).astype(dtype)
        (got,) = run_nxrt(model, x)
        np.testing.assert_array_equal(got, np.asarray(fn(x)))


def test_signbit_and_copysign():
    def fn(x, y):
        return jnp.signbit(x), jnp.copysign(x, y)

    check(fn, [(9,), (9,)], input_gen=lambda rng, sizes: [
        np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 3.5, -2.25, 1e-40], np.float32),
        np.array([-1.0, 1.0, -0.0, 0.0, -2.0, 2.0, -1.0, 1.0, -1.0], np.float32)])
