"""Elementwise lax primitives: arithmetic, transcendental and special functions (erf_inv, lgamma, digamma),
comparison, logical/bitwise (with bit counts), select, casts."""

import numpy as np

from nxrt.jax.registry import UnsupportedPrimitiveError, register_primitive

_UNARY = {
    "neg": "Neg", "sign": "Sign", "floor": "Floor", "ceil": "Ceil", "exp": "Exp", "log": "Log", "tanh": "Tanh",
    "logistic": "Sigmoid", "sin": "Sin", "cos": "Cos", "tan": "Tan", "asin": "Asin", "acos": "Acos",
    "atan": "Atan", "sinh": "Sinh", "cosh": "Cosh", "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh",
    "sqrt": "Sqrt", "abs": "Abs", "erf": "Erf",
}
_BINARY = {
    "add": "Add", "sub": "Sub", "mul": "Mul", "pow": "Pow",
    "eq": "Equal", "lt": "Less", "le": "LessOrEqual", "gt": "Greater", "ge": "GreaterOrEqual",
}
_IDENTITY = ("copy", "copy_p", "optimization_barrier", "stop_gradient")
# (exponent bits, mantissa bits) of the float types reduce_precision can round to by a cast there and back.
_PRECISIONS = {(5, 10): np.float16, (8, 23): np.float32, (11, 52): np.float64}


def _dtype(var):
    return np.dtype(var.aval.dtype)


def _is_float(var):
    return np.issubdtype(_dtype(var), np.floating) or _dtype(var).name == "bfloat16"


def _unary(onnx_op):
    return lambda ctx, eqn, x: ctx.op(onnx_op, x)


def _binary(onnx_op):
    return lambda ctx, eqn, x, y: ctx.op(onnx_op, x, y)


for _name, _op in _UNARY.items():
    register_primitive(_name)(_unary(_op))
for _name, _op in _BINARY.items():
    register_primitive(_name)(_binary(_op))


@register_primitive("max", "min")
def _max_min(ctx, eqn, x, y):
    if _dtype(eqn.invars[0]) == np.bool_:
        return ctx.op("Or" if eqn.primitive.name == "max" else "And", x, y)
    return ctx.op("Max" if eqn.primitive.name == "max" else "Min", x, y)


@register_primitive(*_IDENTITY)
def _identity(ctx, eqn, *xs):
    return [ctx.op("Identity", x) for x in xs]


@register_primitive("reduce_precision")
def _reduce_precision(ctx, eqn, x):
    dtype = _dtype(eqn.invars[0])
    finfo = np.finfo(dtype)
    bits = (int(eqn.params["exponent_bits"]), int(eqn.params["mantissa_bits"]))
    if bits[0] >= finfo.nexp and bits[1] >= finfo.nmant:
        return ctx.op("Identity", x)
    target = _PRECISIONS.get(bits)
    if target is None:
        raise UnsupportedPrimitiveError("reduce_precision", detail=f"rounding to {bits[0]} exponent and "
                                                                  f"{bits[1]} mantissa bits")
    return ctx.cast(ctx.cast(x, target), dtype)


@register_primitive("add_any")
def _add_any(ctx, eqn, x, y):
    return ctx.op("Add", x, y)


# Total-order comparisons (searchsorted, sort helpers) agree with the plain ones on every value except NaN and
# signed zeros, which ONNX comparisons do not order.
for _name, _op in {"eq_to": "Equal", "lt_to": "Less", "le_to": "LessOrEqual", "gt_to": "Greater",
                   "ge_to": "GreaterOrEqual"}.items():
    register_primitive(_name)(_binary(_op))


@register_primitive("ne")
def _ne(ctx, eqn, x, y):
    return ctx.op("Not", ctx.op("Equal", x, y))


@register_primitive("div")
def _div(ctx, eqn, x, y):
    if _is_float(eqn.invars[0]):
        return ctx.op("Div", x, y)
    # lax.div on integers rounds toward zero: |x| // |y| with the sign of x*y.
    if np.issubdtype(_dtype(eqn.invars[0]), np.unsignedinteger):
        return ctx.op("Div", x, y)
    q = ctx.op("Div", ctx.op("Abs", x), ctx.op("Abs", y))
    negative = ctx.op("Xor", ctx.op("Less", x, ctx.scalar(0, _dtype(eqn.invars[0]))),
                      ctx.op("Less", y, ctx.scalar(0, _dtype(eqn.invars[1]))))
    return ctx.op("Where", negative, ctx.op("Neg", q), q)


@register_primitive("rem")
def _rem(ctx, eqn, x, y):
    return ctx.op("Mod", x, y, fmod=1)


@register_primitive("square")
def _square(ctx, eqn, x):
    return ctx.op("Mul", x, x)


@register_primitive("rsqrt")
def _rsqrt(ctx, eqn, x):
    return ctx.op("Reciprocal", ctx.op("Sqrt", x))


@register_primitive("cbrt")
def _cbrt(ctx, eqn, x):
    third = ctx.scalar(1.0 / 3.0, _dtype(eqn.invars[0]))
    return ctx.op("Mul", ctx.op("Sign", x), ctx.op("Pow", ctx.op("Abs", x), third))


@register_primitive("exp2")
def _exp2(ctx, eqn, x):
    return ctx.op("Pow", ctx.scalar(2.0, _dtype(eqn.invars[0])), x)


@register_primitive("log1p")
def _log1p(ctx, eqn, x):
    one = ctx.scalar(1.0, _dtype(eqn.invars[0]))
    u = ctx.op("Add", x, one)
    # log(u) * x / (u - 1) corrects the rounding of 1 + x (exact where u == 1).
    denom = ctx.op("Sub", u, one)
    ratio = ctx.op("Div", x, ctx.op("Where", ctx.op("Equal", denom, ctx.scalar(0, _dtype(eqn.invars[0]))), one,
                                    denom))
    corrected = ctx.op("Mul", ctx.op("Log", u), ratio)
    return ctx.op("Where", ctx.op("Equal", u, one), x, corrected)


@register_primitive("expm1")
def _expm1(ctx, eqn, x):
    dtype = _dtype(eqn.invars[0])
    one = ctx.scalar(1.0, dtype)
    u = ctx.op("Exp", x)
    um1 = ctx.op("Sub", u, one)
    # (u - 1) * x / log(u) corrects cancellation for small |x|; plain u - 1 elsewhere.
    log_u = ctx.op("Log", u)
    safe = ctx.op("Where", ctx.op("Equal", log_u, ctx.scalar(0, dtype)), one, log_u)
    corrected = ctx.op("Mul", um1, ctx.op("Div", x, safe))
    small = ctx.op("Less", ctx.op("Abs", x), ctx.scalar(0.5, dtype))
    return ctx.op("Where", ctx.op("Equal", u, one), x, ctx.op("Where", small, corrected, um1))


@register_primitive("erfc")
def _erfc(ctx, eqn, x):
    return ctx.op("Sub", ctx.scalar(1.0, _dtype(eqn.invars[0])), ctx.op("Erf", x))


_ERF_INV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                    -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERF_INV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                 0.00943887047, 1.00167406, 2.83297682)


@register_primitive("erf_inv")
def _erf_inv(ctx, eqn, x):
    """Giles' single-precision polynomial approximation, refined by Newton steps on Erf (two for float64)."""
    dtype = _dtype(eqn.invars[0])
    c = lambda v: ctx.scalar(v, dtype)  # noqa: E731
    one = c(1.0)
    w = ctx.op("Neg", ctx.op("Log", ctx.op("Mul", ctx.op("Sub", one, x), ctx.op("Add", one, x))))

    def poly(t, coefficients):
        p = c(coefficients[0])
        for coefficient in coefficients[1:]:
            p = ctx.op("Add", ctx.op("Mul", p, t), c(coefficient))
        return p

    central = poly(ctx.op("Sub", w, c(2.5)), _ERF_INV_CENTRAL)
    tail = poly(ctx.op("Sub", ctx.op("Sqrt", w), c(3.0)), _ERF_INV_TAIL)
    y = ctx.op("Mul", ctx.op("Where", ctx.op("Less", w, c(5.0)), central, tail), x)
    finite = ctx.op("Not", ctx.op("IsInf", y))
    for _ in range(2 if dtype == np.float64 else 1):
        slope = ctx.op("Mul", c(2.0 / np.sqrt(np.pi)), ctx.op("Exp", ctx.op("Neg", ctx.op("Mul", y, y))))
        step = ctx.op("Div", ctx.op("Sub", ctx.op("Erf", y), x), slope)
        y = ctx.op("Where", finite, ctx.op("Sub", y, step), y)
    return y


@register_primitive("is_finite")
def _is_finite(ctx, eqn, x):
    return ctx.op("Not", ctx.op("Or", ctx.op("IsInf", x), ctx.op("IsNaN", x)))


@register_primitive("round")
def _round(ctx, eqn, x):
    method = int(eqn.params.get("rounding_method", 0))
    if method == 1:
        return ctx.op("Round", x)
    dtype = _dtype(eqn.invars[0])
    magnitude = ctx.op("Floor", ctx.op("Add", ctx.op("Abs", x), ctx.scalar(0.5, dtype)))
    return ctx.op("Mul", ctx.op("Sign", x), magnitude)


@register_primitive("integer_pow")
def _integer_pow(ctx, eqn, x):
    y = int(eqn.params["y"])
    if y == 0:
        return ctx.op("Add", ctx.op("Mul", x, ctx.scalar(0, _dtype(eqn.invars[0]))),
                      ctx.scalar(1, _dtype(eqn.invars[0])))
    result, base, n = None, x, abs(y)
    while n:
        if n & 1:
            result = base if result is None else ctx.op("Mul", result, base)
        n >>= 1
        if n:
            base = ctx.op("Mul", base, base)
    return ctx.op("Reciprocal", result) if y < 0 else result


@register_primitive("atan2")
def _atan2(ctx, eqn, y, x):
    dtype = _dtype(eqn.invars[0])
    zero, pi = ctx.scalar(0, dtype), ctx.scalar(np.pi, dtype)
    half_pi = ctx.scalar(np.pi / 2, dtype)
    x_zero = ctx.op("Equal", x, zero)
    safe_x = ctx.op("Where", x_zero, ctx.scalar(1, dtype), x)
    base = ctx.op("Atan", ctx.op("Div", y, safe_x))
    y_neg = ctx.op("Less", y, zero)
    # x < 0: shift by +pi (y >= 0) or -pi (y < 0); x == 0: +-pi/2 by the sign of y (0 when y == 0).
    shifted = ctx.op("Where", y_neg, ctx.op("Sub", base, pi), ctx.op("Add", base, pi))
    on_axis = ctx.op("Mul", ctx.op("Sign", y), half_pi)
    result = ctx.op("Where", ctx.op("Less", x, zero), shifted, base)
    return ctx.op("Where", x_zero, on_axis, result)


@register_primitive("clamp")
def _clamp(ctx, eqn, low, x, high):
    return ctx.op("Min", ctx.op("Max", x, low), high)


def _logical(bool_op, bitwise_op):
    def handler(ctx, eqn, *xs):
        op_type = bool_op if _dtype(eqn.invars[0]) == np.bool_ else bitwise_op
        return ctx.op(op_type, *xs)
    return handler


register_primitive("and")(_logical("And", "BitwiseAnd"))
register_primitive("or")(_logical("Or", "BitwiseOr"))
register_primitive("xor")(_logical("Xor", "BitwiseXor"))
register_primitive("not")(_logical("Not", "BitwiseNot"))


def _unsigned_of(dtype):
    return np.dtype(f"uint{dtype.itemsize * 8}")


def _shift(direction):
    def handler(ctx, eqn, x, y):
        dtype = _dtype(eqn.invars[0])
        if np.issubdtype(dtype, np.unsignedinteger):
            return ctx.op("BitShift", x, y, direction=direction)
        unsigned = _unsigned_of(dtype)
        shifted = ctx.op("BitShift", ctx.cast(x, unsigned), ctx.cast(y, unsigned), direction=direction)
        return ctx.cast(shifted, dtype)
    return handler


register_primitive("shift_left")(_shift("LEFT"))
register_primitive("shift_right_logical")(_shift("RIGHT"))


@register_primitive("shift_right_arithmetic")
def _shift_right_arithmetic(ctx, eqn, x, y):
    dtype = _dtype(eqn.invars[0])
    if np.issubdtype(dtype, np.unsignedinteger):
        return ctx.op("BitShift", x, y, direction="RIGHT")
    unsigned = _unsigned_of(dtype)
    # floor(x / 2**y): truncating division, minus one where a negative x left a remainder.
    power = ctx.cast(ctx.op("BitShift", ctx.scalar(1, unsigned), ctx.cast(y, unsigned), direction="LEFT"), dtype)
    q = ctx.op("Div", x, power)
    remainder_negative = ctx.op("Less", ctx.op("Mod", x, power, fmod=1), ctx.scalar(0, dtype))
    return ctx.op("Where", remainder_negative, ctx.op("Sub", q, ctx.scalar(1, dtype)), q)

@register_primitive("select_n")
def _select_n(ctx, eqn, which, *cases):
    if len(cases) == 1:
        return ctx.op("Identity", cases[0])
    if _dtype(eqn.invars[0]) == np.bool_:
        return ctx.op("Where", which, cases[1], cases[0])
    result = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        hit = ctx.op("Equal", which, ctx.scalar(i, _dtype(eqn.invars[0])))
        result = ctx.op("Where", hit, cases[i], result)
    return result


@register_primitive("convert_element_type")
def _convert_element_type(ctx, eqn, x):
    src, dst = _dtype(eqn.invars[0]), np.dtype(eqn.params["new_dtype"])
    if src == dst:
        return ctx.op("Identity", x)
    return ctx.cast(x, dst)



def _as_unsigned(ctx, eqn, x):
    """(bits, unsigned dtype, original dtype): ``x`` reinterpreted as the unsigned integer of its width."""
    dtype = _dtype(eqn.invars[0])
    unsigned = _unsigned_of(dtype)
    return (x if dtype == unsigned else ctx.cast(x, unsigned)), unsigned, dtype


@register_primitive("population_count")
def _population_count(ctx, eqn, x):
    """Bit count by pairwise sums in ever wider fields (2, 4, 8 bits), then byte sums folded by shifts."""
    bits, unsigned, dtype = _as_unsigned(ctx, eqn, x)
    width = unsigned.itemsize * 8

    def pattern(byte):
        return ctx.scalar(int.from_bytes(bytes([byte]) * unsigned.itemsize, "little"), unsigned)

    def shift(v, n):
        return ctx.op("BitShift", v, ctx.scalar(n, unsigned), direction="RIGHT")

    bits = ctx.op("Sub", bits, ctx.op("BitwiseAnd", shift(bits, 1), pattern(0x55)))
    bits = ctx.op("Add", ctx.op("BitwiseAnd", bits, pattern(0x33)),
                  ctx.op("BitwiseAnd", shift(bits, 2), pattern(0x33)))
    bits = ctx.op("BitwiseAnd", ctx.op("Add", bits, shift(bits, 4)), pattern(0x0F))
    step = 8
    while step < width:
        bits = ctx.op("Add", bits, shift(bits, step))
        step *= 2
    count = ctx.op("BitwiseAnd", bits, ctx.scalar(0x7F if width < 128 else 0xFF, unsigned))
    return count if dtype == unsigned else ctx.cast(count, dtype)


@register_primitive("clz")
def _clz(ctx, eqn, x):
    """Leading zeros by binary search: where the top ``s`` bits are zero, count them and shift them out."""
    bits, unsigned, dtype = _as_unsigned(ctx, eqn, x)
    width = unsigned.itemsize * 8
    count = ctx.op("Mul", bits, ctx.scalar(0, unsigned))
    s = width // 2
    while s:
        top_zero = ctx.op("Less", bits, ctx.scalar(1 << (width - s), unsigned))
        count = ctx.op("Where", top_zero, ctx.op("Add", count, ctx.scalar(s, unsigned)), count)
        shifted = ctx.op("BitShift", bits, ctx.scalar(s, unsigned), direction="LEFT")
        bits = ctx.op("Where", top_zero, shifted, bits)
        s //= 2
    # After the search only a zero input has its top bit clear.
    is_zero = ctx.op("Equal", bits, ctx.scalar(0, unsigned))
    count = ctx.op("Where", is_zero, ctx.op("Add", count, ctx.scalar(1, unsigned)), count)
    return count if dtype == unsigned else ctx.cast(count, dtype)


# lgamma (log |Gamma|) and digamma have no ONNX op. Both are computed in float64 whatever the input type (float16/32
# results are rounded once at the end), from closed formulas that need no loops:
# - lgamma: the Lanczos approximation (g = 7, nine terms) for x >= 0.5 and the reflection formula
#   lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x) below; poles (0, -1, -2, ...) give +inf.
# - digamma: x < 0 reflects, psi(x) = psi(1 - x) - pi cot(pi x); then the recurrence psi(w) = psi(w + 1) - 1/w
#   lifts the argument to w >= 10 in ten masked steps, where the asymptotic series is exact to float64 rounding.
#   Poles give NaN, as JAX does.
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7)
# Coefficients of w^-2k in psi(w) ~ log(w) - 1/(2w) - sum_k B_2k / (2k w^2k), k = 1..7.
_DIGAMMA_SERIES = (1.0 / 12, -1.0 / 120, 1.0 / 252, -1.0 / 240, 1.0 / 132, -691.0 / 32760, 1.0 / 12)
_DIGAMMA_SHIFT = 10


def _in_float64(handler):
    """Runs ``handler(ctx, x, c)`` on ``x`` cast to float64 (c(v) makes a float64 constant) and casts back."""
    def wrapped(ctx, eqn, x):
        dtype = np.dtype(eqn.invars[0].aval.dtype)
        wide = x if dtype == np.float64 else ctx.cast(x, np.float64)
        out = handler(ctx, wide, lambda v: ctx.scalar(v, np.float64))
        return out if dtype == np.float64 else ctx.cast(out, dtype)
    return wrapped


def _distance_to_integer(ctx, x):
    """x - round(x), in [-0.5, 0.5]: exact, so pi times it keeps the precision of sin/tan near integers."""
    return ctx.op("Sub", x, ctx.op("Round", x))


def _lanczos_lgamma(ctx, w, c):
    """lgamma(w) for w >= 0.5."""
    z = ctx.op("Sub", w, c(1.0))
    series = c(_LANCZOS[0])
    for i, coefficient in enumerate(_LANCZOS[1:], start=1):
        series = ctx.op("Add", series, ctx.op("Div", c(coefficient), ctx.op("Add", z, c(float(i)))))
    t = ctx.op("Add", z, c(_LANCZOS_G + 0.5))
    power = ctx.op("Mul", ctx.op("Add", z, c(0.5)), ctx.op("Log", t))
    out = ctx.op("Add", ctx.op("Sub", power, t), c(0.5 * np.log(2 * np.pi)))
    return ctx.op("Add", out, ctx.op("Log", series))


@register_primitive("lgamma")
@_in_float64
def _lgamma(ctx, x, c):
    reflect = ctx.op("Less", x, c(0.5))
    w = ctx.op("Where", reflect, ctx.op("Sub", c(1.0), x), x)
    direct = _lanczos_lgamma(ctx, w, c)
    sine = ctx.op("Abs", ctx.op("Sin", ctx.op("Mul", c(np.pi), _distance_to_integer(ctx, x))))
    reflected = ctx.op("Sub", ctx.op("Sub", c(np.log(np.pi)), ctx.op("Log", sine)), direct)
    out = ctx.op("Where", reflect, reflected, direct)
    return ctx.op("Where", ctx.op("IsInf", x), c(np.inf), out)


@register_primitive("digamma")
@_in_float64
def _digamma(ctx, x, c):
    reflect = ctx.op("Less", x, c(0.0))
    w = ctx.op("Where", reflect, ctx.op("Sub", c(1.0), x), x)
    lifted = c(0.0)
    for _ in range(_DIGAMMA_SHIFT):
        small = ctx.op("Less", w, c(float(_DIGAMMA_SHIFT)))
        lifted = ctx.op("Add", lifted, ctx.op("Where", small, ctx.op("Reciprocal", w), c(0.0)))
        w = ctx.op("Where", small, ctx.op("Add", w, c(1.0)), w)
    inv2 = ctx.op("Reciprocal", ctx.op("Mul", w, w))
    series = c(_DIGAMMA_SERIES[-1])
    for coefficient in reversed(_DIGAMMA_SERIES[:-1]):
        series = ctx.op("Add", ctx.op("Mul", series, inv2), c(coefficient))
    series = ctx.op("Mul", series, inv2)
    psi = ctx.op("Sub", ctx.op("Sub", ctx.op("Log", w), ctx.op("Div", c(0.5), w)), series)
    psi = ctx.op("Sub", psi, lifted)
    angle = ctx.op("Mul", c(np.pi), _distance_to_integer(ctx, x))
    cotangent = ctx.op("Div", ctx.op("Cos", angle), ctx.op("Sin", angle))
    psi = ctx.op("Where", reflect, ctx.op("Sub", psi, ctx.op("Mul", c(np.pi), cotangent)), psi)
    pole = ctx.op("And", ctx.op("LessOrEqual", x, c(0.0)), ctx.op("Equal", x, ctx.op("Round", x)))
    return ctx.op("Where", pole, c(np.nan), psi)
