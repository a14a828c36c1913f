"""Elementwise lax primitives: each exported alone (symbolic batch dimension) and checked against JAX."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import nxrt.jax
from jax_harness import check

POSITIVE = lambda x: jnp.abs(x) + 0.1  # noqa: E731
UNIT = lambda x: jnp.tanh(x) * 0.9  # noqa: E731

UNARY = {
    "neg": lax.neg, "sign": lax.sign, "floor": lax.floor, "ceil": lax.ceil, "exp": lax.exp,
    "exp2": lax.exp2, "log": lambda x: lax.log(POSITIVE(x)), "log1p": lambda x: lax.log1p(POSITIVE(x) - 0.05),
    "expm1": lax.expm1, "tanh": lax.tanh, "logistic": lax.logistic, "sin": lax.sin, "cos": lax.cos,
    "tan": lambda x: lax.tan(UNIT(x)), "asin": lambda x: lax.asin(UNIT(x)), "acos": lambda x: lax.acos(UNIT(x)),
    "atan": lax.atan, "sinh": lax.sinh, "cosh": lax.cosh, "asinh": lax.asinh,
    "acosh": lambda x: lax.acosh(POSITIVE(x) + 1.0), "atanh": lambda x: lax.atanh(UNIT(x)),
    "sqrt": lambda x: lax.sqrt(POSITIVE(x)), "rsqrt": lambda x: lax.rsqrt(POSITIVE(x)), "cbrt": lax.cbrt,
    "abs": lax.abs, "erf": lax.erf, "erfc": lax.erfc, "square": lax.square,
    "round_away": lambda x: lax.round(x * 3),
    "round_even": lambda x: lax.round(x * 3, lax.RoundingMethod.TO_NEAREST_EVEN),
    "is_finite": lambda x: lax.is_finite(x / (x > 0)),
    "integer_pow3": lambda x: lax.integer_pow(x, 3), "integer_pow_neg2": lambda x: lax.integer_pow(POSITIVE(x), -2),
    "integer_pow0": lambda x: lax.integer_pow(x, 0), "integer_pow7": lambda x: lax.integer_pow(x, 7),
    "stop_gradient": lambda x: lax.stop_gradient(x) * 2, "reduce_precision": lambda x: lax.reduce_precision(x, 8, 23),
    "reduce_precision_f16": lambda x: lax.reduce_precision(x * 1e3, 5, 10),
}

BINARY = {
    "add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div, "max": lax.max, "min": lax.min,
    "pow": lambda x, y: lax.pow(POSITIVE(x), y), "rem": lax.rem, "atan2": lax.atan2,
    "nextafter_free_mix": lambda x, y: x * 2 - y / 3,
    "logaddexp": jnp.logaddexp, "hypot": jnp.hypot,
    "fmod": jnp.fmod, "floor_divide": jnp.floor_divide, "mod": jnp.mod,
}

COMPARE = {"eq": lax.eq, "ne": lax.ne, "lt": lax.lt, "le": lax.le, "gt": lax.gt, "ge": lax.ge}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_f32(name):
    check(UNARY[name], [("B", 5)])


@pytest.mark.parametrize("name", ["exp", "log", "tanh", "logistic", "sin", "sqrt", "erf", "cbrt", "atan",
                                  "integer_pow3", "expm1", "log1p", "asinh", "rsqrt"])
def test_unary_f64(name):
    check(UNARY[name], [("B", 5)], x64=True)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_f32(name):
    check(BINARY[name], [("B", 4), ("B", 4)])


@pytest.mark.parametrize("name", ["add", "mul", "div", "pow", "atan2", "rem"])
def test_binary_f64(name):
    check(BINARY[name], [("B", 3), ("B", 3)], x64=True)


@pytest.mark.parametrize("name", sorted(COMPARE))
@pytest.mark.parametrize("dtype", [jnp.float32, jnp.int32])
def test_compare(name, dtype):
    spec = jax.ShapeDtypeStruct(("B", 3), dtype)
    check(COMPARE[name], [spec, spec], int_range=(-3, 3))


@pytest.mark.parametrize("op", ["and", "or", "xor", "not"])
@pytest.mark.parametrize("dtype", [jnp.bool_, jnp.int32, jnp.uint8])
def test_logical_bitwise(op, dtype):
    fns = {"and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor,
           "not": lambda x, y: lax.bitwise_not(x)}
    spec = jax.ShapeDtypeStruct(("B", 4), dtype)
    check(fns[op], [spec, spec], int_range=(0, 200))


@pytest.mark.parametrize("op", ["shift_left", "shift_right_logical", "shift_right_arithmetic"])
@pytest.mark.parametrize("dtype", [jnp.int32, jnp.uint32])
def test_shifts(op, dtype):
    fn = getattr(lax, op)
    spec = jax.ShapeDtypeStruct(("B",), dtype)

    def gen(rng, sizes):
        x = rng.integers(-1000 if dtype == jnp.int32 else 0, 1000, size=(sizes["B"],)).astype(dtype)
        return [x, rng.integers(0, 8, size=(sizes["B"],)).astype(dtype)]

    check(fn, [spec, spec], input_gen=gen)


@pytest.mark.parametrize("dtype", [jnp.int32, jnp.int64])
def test_integer_division_and_remainder(dtype):
    spec = jax.ShapeDtypeStruct(("B",), dtype)

    def gen(rng, sizes):
        y = rng.integers(1, 7, size=(sizes["B"],)) * rng.choice([-1, 1], size=(sizes["B"],))
        return [rng.integers(-50, 50, size=(sizes["B"],)).astype(dtype), y.astype(dtype)]

    x64 = dtype == jnp.int64
    check(lambda x, y: (lax.div(x, y), lax.rem(x, y), x // y, x % y), [spec, spec], input_gen=gen, x64=x64)


@pytest.mark.parametrize("cases", [2, 3, 4])
def test_select_n(cases):
    spec = jax.ShapeDtypeStruct(("B", 3), jnp.float32)
    which = jax.ShapeDtypeStruct(("B", 3), jnp.bool_ if cases == 2 else jnp.int32)
    check(lambda w, *xs: lax.select_n(w, *xs), [which] + [spec] * cases, int_range=(0, cases))


def test_where_and_clamp():
    check(lambda x, lo, hi: (jnp.where(x > 0, x, -x), lax.clamp(lo, x, lo + jnp.abs(hi)), jnp.clip(x, -0.5, 0.5)),
          [("B", 4), ("B", 4), ("B", 4)])


@pytest.mark.parametrize("src,dst", [(jnp.float32, jnp.int32), (jnp.int32, jnp.float32), (jnp.float32, jnp.bool_),
                                     (jnp.bool_, jnp.float32), (jnp.int32, jnp.uint8), (jnp.float32, jnp.float16),
                                     (jnp.int32, jnp.int8), (jnp.uint8, jnp.int32)])
def test_convert_element_type(src, dst):
    spec = jax.ShapeDtypeStruct(("B", 3), src)
    scale = 3.0 if src == jnp.float32 else 1
    check(lambda x: lax.convert_element_type(x * scale, dst), [spec], int_range=(0, 100))


def test_convert_f32_f64():
    check(lambda x: (x.astype(jnp.float32) * 2).astype(jnp.float64), [jax.ShapeDtypeStruct(("B",), jnp.float64)],
          x64=True)


@pytest.mark.parametrize("name", ["relu", "relu6", "gelu", "gelu_exact", "silu", "softplus", "elu", "selu",
                                  "leaky_relu", "celu", "hard_sigmoid", "hard_swish", "hard_tanh", "log_sigmoid",
                                  "sigmoid", "soft_sign", "mish", "glu", "softmax", "log_softmax", "tanh",
                                  "squareplus", "sparse_plus"])
def test_activation(name):
    fns = {"gelu_exact": lambda x: jax.nn.gelu(x, approximate=False), "tanh": jnp.tanh,
           "softmax": lambda x: jax.nn.softmax(x, axis=-1), "log_softmax": lambda x: jax.nn.log_softmax(x, axis=-1),
           "glu": lambda x: jax.nn.glu(x, axis=-1)}
    fn = fns.get(name) or getattr(jax.nn, name)
    check(fn, [("B", 6)])


def test_scalar_literals_and_weak_types():
    check(lambda x: (x * 2 + 1.5, 3.0 - x, x / 2, jnp.float32(2) ** x), [("B",)])


def test_nan_handling_matches():
    check(lambda x: jnp.where(jnp.isnan(jnp.log(x)), 0.0, jnp.log(x)), [("B",)])


def test_constants_float64_weights():
    w = np.linspace(-1, 1, 5)
    check(lambda x: x * w + np.pi, [jax.ShapeDtypeStruct(("B", 5), jnp.float64)], x64=True)


@pytest.mark.parametrize("x64", [False, True])
def test_erf_inv(x64):
    dtype = jnp.float64 if x64 else jnp.float32
    check(lambda x: (lax.erf_inv(jnp.tanh(x) * 0.99), jax.scipy.special.ndtri(jax.nn.sigmoid(x) * 0.98 + 0.01)),
          [jax.ShapeDtypeStruct(("B", 5), dtype)], x64=x64, n=3)


def test_reduce_precision_f64_to_f32_and_unsupported_widths():
    check(lambda x: lax.reduce_precision(x * 1e-3, 8, 23), [jax.ShapeDtypeStruct(("B", 3), jnp.float64)], x64=True)
    with pytest.raises(nxrt.jax.UnsupportedPrimitiveError, match="reduce_precision"):
        nxrt.jax.to_onnx(lambda x: lax.reduce_precision(x, 4, 3), [("B",)])


def test_bool_max_min():
    spec = jax.ShapeDtypeStruct(("B", 4), jnp.bool_)
    check(lambda a, b: (jnp.maximum(a, b), jnp.minimum(a, b)), [spec, spec])


@pytest.mark.parametrize("dtype", [jnp.int8, jnp.uint8, jnp.uint16, jnp.int32, jnp.uint32, jnp.int64, jnp.uint64])
def test_population_count_and_clz(dtype):
    info = np.iinfo(dtype)
    x64 = np.dtype(dtype).itemsize == 8

    def gen(rng, sizes):
        x = rng.integers(info.min, info.max, size=(sizes["B"], 6), dtype=dtype, endpoint=True)
        x[0, :4] = [0, info.max, info.min, 1]
        return [x]

    check(lambda x: (lax.population_count(x), lax.clz(x), jnp.bitwise_count(x)),
          [jax.ShapeDtypeStruct(("B", 6), dtype)], input_gen=gen, x64=x64, n=3)


SPECIAL_VALUES = [0.0, -1.0, -2.0, 1.0, 2.0, 0.5, -0.5, -2.5, 1e-8, -1e-8, 1.4616321449683622, 30.0, 1e6, np.inf,
                  -np.inf, np.nan]


@pytest.mark.parametrize("inputs", ["normal", "wide", "special"])
@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_lgamma_digamma(name, x64, inputs):
    dtype = np.float64 if x64 else np.float32

    def gen(rng, sizes):
        shape = (sizes["B"], 8)
        if inputs == "normal":
            x = rng.standard_normal(shape) * 3
        elif inputs == "wide":
            x = np.exp(rng.uniform(-15, 15, shape)) * rng.choice([-1.0, 1.0], shape)
        else:
            x = np.resize(np.array(SPECIAL_VALUES), shape)
        return [x.astype(dtype)]

    check(getattr(lax, name), [jax.ShapeDtypeStruct(("B", 8), dtype)], x64=x64, input_gen=gen, n=3)


def test_special_functions_built_on_lgamma():
    import jax.scipy.special as sp

    check(lambda x: (sp.gammaln(x), sp.betaln(jnp.abs(x) + 0.5, 2.5), sp.digamma(jnp.abs(x) + 0.1)),
          [jax.ShapeDtypeStruct(("B", 4), jnp.float64)], x64=True)
