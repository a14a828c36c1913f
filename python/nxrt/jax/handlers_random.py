"""Random numbers: JAX's threefry PRNG lowered to exact uint32 ONNX arithmetic, and bitcast_convert_type.

A key travels through the graph as its raw data (uint32 [..., 2] for threefry). ``random_seed``, ``random_bits``,
``random_split`` and ``random_fold_in`` are lowered by tracing the key implementation's own function for that
operation into a jaxpr and inlining it, so the bits match JAX exactly; the only primitive left is
``threefry2x32`` (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011: 20 rounds of
add / rotate / xor with a key injection every 4 rounds), emitted as Add, BitShift, BitwiseOr and BitwiseXor on
uint32 (Add wraps modulo 2^32).

``bitcast_convert_type`` between unsigned/signed integers and floats of the same width is emulated with integer
and float arithmetic (ONNX has no bitcast): integer -> float decodes sign, exponent and mantissa (normals,
subnormals, zeros, infinities and NaN); float -> integer encodes them (NaN becomes the canonical quiet NaN).
"""

import numpy as np

from nxrt.jax.registry import UnsupportedPrimitiveError, register_primitive

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA


def _key_impl(aval, primitive):
    impl = getattr(getattr(aval, "dtype", None), "_impl", None)
    if impl is None:
        raise UnsupportedPrimitiveError(primitive, detail=f"key dtype {aval.dtype} has no PRNG implementation")
    return impl


def _key_data_aval(aval, impl):
    import jax
    return jax.ShapeDtypeStruct(tuple(aval.shape) + tuple(impl.key_shape), np.uint32)


def _lower_traced(ctx, fn, arg_avals, args, batch_dims=0):
    """Inlines the jaxpr of ``fn`` (vmapped over ``batch_dims`` leading dims of every argument)."""
    import jax
    for _ in range(batch_dims):
        fn = jax.vmap(fn)
    closed = jax.make_jaxpr(fn)(*arg_avals)
    return ctx.lower(closed, list(args))


@register_primitive("random_wrap", "random_unwrap")
def _random_identity(ctx, eqn, keys):
    return keys


@register_primitive("random_seed")
def _random_seed(ctx, eqn, seed):
    import jax
    impl = eqn.params["impl"]
    aval = eqn.invars[0].aval
    seed_aval = jax.ShapeDtypeStruct((), aval.dtype)
    return _lower_traced(ctx, impl.seed, [jax.ShapeDtypeStruct(aval.shape, aval.dtype)] if aval.shape else
                         [seed_aval], [seed], batch_dims=len(aval.shape))


@register_primitive("random_bits")
def _random_bits(ctx, eqn, keys):
    aval = eqn.invars[0].aval
    impl = _key_impl(aval, "random_bits")
    bit_width, shape = eqn.params["bit_width"], tuple(eqn.params["shape"])
    if not all(isinstance(d, (int, np.integer)) for d in shape):
        raise UnsupportedPrimitiveError("random_bits", detail="a symbolic output shape")
    return _lower_traced(ctx, lambda k: impl.random_bits(k, bit_width, shape), [_key_data_aval(aval, impl)],
                         [keys], batch_dims=len(aval.shape))


@register_primitive("random_split")
def _random_split(ctx, eqn, keys):
    aval = eqn.invars[0].aval
    impl = _key_impl(aval, "random_split")
    shape = tuple(eqn.params["shape"])
    return _lower_traced(ctx, lambda k: impl.split(k, shape), [_key_data_aval(aval, impl)], [keys],
                         batch_dims=len(aval.shape))


@register_primitive("random_fold_in")
def _random_fold_in(ctx, eqn, keys, data):
    import jax
    aval = eqn.invars[0].aval
    impl = _key_impl(aval, "random_fold_in")
    if tuple(eqn.invars[1].aval.shape) != tuple(aval.shape):
        raise UnsupportedPrimitiveError("random_fold_in", detail="data broadcast against a key array")
    data_aval = jax.ShapeDtypeStruct(aval.shape, eqn.invars[1].aval.dtype)
    return _lower_traced(ctx, impl.fold_in, [_key_data_aval(aval, impl), data_aval], [keys, data],
                         batch_dims=len(aval.shape))


@register_primitive("iota_2x32_shape")
def _iota_2x32_shape(ctx, eqn):
    shape = tuple(eqn.params["shape"])
    if not all(isinstance(d, (int, np.integer)) for d in shape):
        raise UnsupportedPrimitiveError("iota_2x32_shape", detail="a symbolic shape")
    size = int(np.prod(shape, dtype=np.int64))
    index = np.arange(size, dtype=np.uint64).reshape(shape)
    # The row-major index of every element as a 64-bit counter split into high and low 32-bit words.
    return [ctx.const((index >> np.uint64(32)).astype(np.uint32)), ctx.const(index.astype(np.uint32))]


def _u32(ctx, value):
    return ctx.scalar(np.uint32(value & 0xFFFFFFFF), np.uint32)


def _rotate_left(ctx, x, bits):
    left = ctx.op("BitShift", x, _u32(ctx, bits), direction="LEFT")
    right = ctx.op("BitShift", x, _u32(ctx, 32 - bits), direction="RIGHT")
    return ctx.op("BitwiseOr", left, right)


@register_primitive("threefry2x32")
def _threefry2x32(ctx, eqn, key1, key2, x0, x1):
    shape = tuple(eqn.outvars[0].aval.shape)
    # The primitive broadcasts its four operands to one shape.
    operands = []
    for name, var in zip((key1, key2, x0, x1), eqn.invars):
        operands.append(name if tuple(var.aval.shape) == shape else ctx.expand(name, shape))
    k1, k2, v0, v1 = operands
    k3 = ctx.op("BitwiseXor", ctx.op("BitwiseXor", k1, k2), _u32(ctx, _PARITY))
    keys = (k1, k2, k3)
    v0 = ctx.op("Add", v0, keys[0])
    v1 = ctx.op("Add", v1, keys[1])
    for block in range(5):
        for rotation in _ROTATIONS[block % 2]:
            v0 = ctx.op("Add", v0, v1)
            v1 = ctx.op("BitwiseXor", v0, _rotate_left(ctx, v1, rotation))
        v0 = ctx.op("Add", v0, keys[(block + 1) % 3])
        v1 = ctx.op("Add", ctx.op("Add", v1, keys[(block + 2) % 3]), _u32(ctx, block + 1))
    return [v0, v1]


_LAYOUT = {  # float dtype -> (unsigned dtype, mantissa bits, exponent bias, exponent all-ones)
    np.dtype(np.float32): (np.uint32, 23, 127, 0xFF),
    np.dtype(np.float64): (np.uint64, 52, 1023, 0x7FF),
}


def _int_to_float(ctx, bits, unsigned, float_dtype):
    udt, mbits, bias, emax = _LAYOUT[float_dtype]
    width = np.dtype(udt).itemsize * 8
    u = bits if unsigned else ctx.cast(bits, udt)
    sign = ctx.op("BitShift", u, ctx.scalar(width - 1, udt), direction="RIGHT")
    exponent = ctx.op("BitwiseAnd", ctx.op("BitShift", u, ctx.scalar(mbits, udt), direction="RIGHT"),
                      ctx.scalar(emax, udt))
    mantissa = ctx.cast(ctx.op("BitwiseAnd", u, ctx.scalar((1 << mbits) - 1, udt)), float_dtype)
    fraction = ctx.op("Mul", mantissa, ctx.scalar(2.0 ** -mbits, float_dtype))
    exp_float = ctx.op("Sub", ctx.cast(exponent, float_dtype), ctx.scalar(bias, float_dtype))
    scale = ctx.op("Pow", ctx.scalar(2.0, float_dtype), exp_float)
    normal = ctx.op("Mul", ctx.op("Add", fraction, ctx.scalar(1.0, float_dtype)), scale)
    subnormal = ctx.op("Mul", mantissa, ctx.scalar(2.0 ** (1 - bias - mbits), float_dtype))
    is_zero_exp = ctx.op("Equal", exponent, ctx.scalar(0, udt))
    is_max_exp = ctx.op("Equal", exponent, ctx.scalar(emax, udt))
    special = ctx.op("Where", ctx.op("Equal", mantissa, ctx.scalar(0.0, float_dtype)),
                     ctx.scalar(np.inf, float_dtype), ctx.scalar(np.nan, float_dtype))
    magnitude = ctx.op("Where", is_zero_exp, subnormal, ctx.op("Where", is_max_exp, special, normal))
    negative = ctx.op("Equal", sign, ctx.scalar(1, udt))
    return ctx.op("Where", negative, ctx.op("Neg", magnitude), magnitude)


def _float_to_int(ctx, x, float_dtype, int_dtype):
    udt, mbits, bias, emax = _LAYOUT[float_dtype]
    width = np.dtype(udt).itemsize * 8
    f = lambda v: ctx.scalar(v, float_dtype)
    u = lambda v: ctx.scalar(v, udt)
    magnitude = ctx.op("Abs", x)
    # Sign bit, including -0.0 (1 / -0.0 = -inf) and negative NaN is not distinguishable: NaN gets sign 0.
    negative = ctx.op("Or", ctx.op("Less", x, f(0.0)),
                      ctx.op("And", ctx.op("Equal", x, f(0.0)), ctx.op("Less", ctx.op("Div", f(1.0), x), f(0.0))))
    smallest_normal = 2.0 ** (1 - bias)
    is_normal = ctx.op("GreaterOrEqual", magnitude, f(smallest_normal))
    safe = ctx.op("Where", is_normal, magnitude, f(1.0))
    # floor(log2(m)) estimated, then corrected by one step either way so that 2^e <= m < 2^(e+1) holds exactly.
    estimate = ctx.op("Floor", ctx.op("Div", ctx.op("Log", safe), f(np.log(2.0))))
    power = ctx.op("Pow", f(2.0), estimate)
    estimate = ctx.op("Where", ctx.op("Less", safe, power), ctx.op("Sub", estimate, f(1.0)), estimate)
    power = ctx.op("Pow", f(2.0), estimate)
    estimate = ctx.op("Where", ctx.op("GreaterOrEqual", safe, ctx.op("Mul", power, f(2.0))),
                      ctx.op("Add", estimate, f(1.0)), estimate)
    power = ctx.op("Pow", f(2.0), estimate)
    normal_mantissa = ctx.op("Mul", ctx.op("Sub", ctx.op("Div", safe, power), f(1.0)), f(2.0 ** mbits))
    # 2^(bias - 1 + mbits) overflows the float type: scale in two exact steps.
    subnormal_mantissa = ctx.op("Mul", ctx.op("Mul", magnitude, f(2.0 ** (bias - 1))), f(2.0 ** mbits))
    is_inf = ctx.op("IsInf", x)
    is_nan = ctx.op("IsNaN", x)
    exponent = ctx.op("Where", is_normal, ctx.cast(ctx.op("Add", estimate, f(float(bias))), udt), u(0))
    exponent = ctx.op("Where", ctx.op("Or", is_inf, is_nan), u(emax), exponent)
    mantissa = ctx.op("Where", is_normal, normal_mantissa, subnormal_mantissa)
    mantissa = ctx.op("Where", ctx.op("Or", is_inf, is_nan), f(0.0), mantissa)
    mantissa_bits = ctx.cast(mantissa, udt)
    mantissa_bits = ctx.op("Where", is_nan, u(1 << (mbits - 1)), mantissa_bits)
    sign = ctx.op("Where", ctx.op("And", negative, ctx.op("Not", is_nan)), u(1 << (width - 1)), u(0))
    bits = ctx.op("BitwiseOr", ctx.op("BitwiseOr", sign, ctx.op("BitShift", exponent, u(mbits), direction="LEFT")),
                  mantissa_bits)
    return bits if np.dtype(int_dtype) == np.dtype(udt) else ctx.cast(bits, int_dtype)


@register_primitive("bitcast_convert_type")
def _bitcast_convert_type(ctx, eqn, x):
    src = np.dtype(eqn.invars[0].aval.dtype)
    dst = np.dtype(eqn.params["new_dtype"])
    if src == dst:
        return x
    if src.itemsize != dst.itemsize:
        raise UnsupportedPrimitiveError("bitcast_convert_type", detail=f"{src} -> {dst} changes the element size")
    if src.kind in "iu" and dst in _LAYOUT:
        return _int_to_float(ctx, x, src.kind == "u", dst)
    if src in _LAYOUT and dst.kind in "iu":
        return _float_to_int(ctx, x, src, dst)
    if src.kind in "iu" and dst.kind in "iu":
        return ctx.cast(x, dst)
    raise UnsupportedPrimitiveError("bitcast_convert_type", detail=f"{src} -> {dst}")
