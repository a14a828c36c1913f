"""Elementwise lax primitives: arithmetic, transcendental, comparison, logical/bitwise, select, casts."""

import numpy as np

from nxrt.jax.registry import register_primitive

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
_IDENTITY = ("copy", "copy_p", "reduce_precision", "optimization_barrier", "stop_gradient")


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

