"""Hypothesis strategies for operator inputs: shapes with zero and one sized dims, broadcastable shape tuples, and
values that mix ordinary numbers with the dtype's special values (NaN, +-inf, -0.0, subnormals, min and max,
huge and tiny magnitudes; empty and non-ASCII strings)."""

import math

import ml_dtypes
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = (np.dtype(np.float16), BFLOAT16, np.dtype(np.float32), np.dtype(np.float64))
# The float8 formats (not in FLOATS: is_float stays False for them). Each has 256 codes, so their arrays are drawn
# as codes, every value of the format (NaN, infinities where it has them, -0.0, subnormals, max) equally likely.
FLOAT8 = tuple(np.dtype(t) for t in (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2,
                                     ml_dtypes.float8_e5m2fnuz))


def is_float(dtype):
    return np.dtype(dtype) in FLOATS


def is_float8(dtype):
    return np.dtype(dtype) in FLOAT8


def float8_values(dtype):
    """Every value of float8 `dtype` as a Python float (NaN once)."""
    values = np.arange(256, dtype=np.uint8).view(np.dtype(dtype)).astype(np.float64)
    distinct = {(float(v), math.copysign(1.0, v)) for v in values if not np.isnan(v)}  # keeps -0.0 beside 0.0
    return [v for v, _ in sorted(distinct)] + [math.nan]


def special_values(dtype):
    """The edge values of `dtype` that every generated array may hold."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return [False, True]
    if dtype == object:
        return ["", "a", "\u00e9t\u00e9", "\U0001f600", " ", "A\u0000B"]
    if is_float8(dtype):
        return float8_values(dtype)
    if is_float(dtype):
        info = ml_dtypes.finfo(dtype) if dtype == BFLOAT16 else np.finfo(dtype)
        values = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, float(info.eps), float(info.tiny),
                  float(info.smallest_subnormal), -float(info.smallest_subnormal), float(info.max),
                  -float(info.max), float(info.max) ** 0.5, 2.0 ** int(np.log2(float(info.max)) / 2)]
        return [float(np.array(v, dtype).astype(np.float64)) for v in values]
    info = np.iinfo(dtype)
    values = [0, 1, info.max, info.min, info.max - 1, 2]
    if info.min < 0:
        values += [-1, info.min + 1]
    return values


def elements(dtype, low=-10.0, high=10.0):
    """Scalars of `dtype`: special values a third of the time, else ordinary ones (floats in [low, high], some of
    huge or tiny magnitude; integers over the dtype's range, mostly small)."""
    dtype = np.dtype(dtype)
    specials = st.sampled_from(special_values(dtype))
    if dtype == np.bool_:
        return st.booleans()
    if dtype == object:
        return st.one_of(specials, st.text(max_size=6))
    if is_float8(dtype):  # the format's values in [low, high], and its NaN and infinities
        return st.sampled_from([v for v in float8_values(dtype) if low <= v <= high or not math.isfinite(v)])
    if is_float(dtype):
        width = 16 if dtype == np.float16 else 32 if dtype in (np.float32, BFLOAT16) else 64
        huge, tiny = (2.0 ** 100, 2.0 ** -100) if width > 16 else (2.0 ** 15, 2.0 ** -14)
        ordinary = st.one_of(st.floats(low, high, width=width), st.floats(-huge, huge, width=width),
                             st.floats(-tiny, tiny, width=width))
        values = st.one_of(specials, ordinary, ordinary)
        return values.map(lambda v: float(np.array(v, dtype).astype(np.float64)))
    info = np.iinfo(dtype)
    small = st.integers(max(int(info.min), -20), min(int(info.max), 20))
    return st.one_of(specials, small, small, st.integers(int(info.min), int(info.max)))


def arrays(dtype, shape, elements_strategy=None):
    """Arrays of `dtype` and `shape` (a shape or a strategy of shapes). bfloat16 arrays are drawn as float32 values
    that bfloat16 holds exactly."""
    dtype = np.dtype(dtype)
    values = elements_strategy if elements_strategy is not None else elements(dtype)
    if dtype == BFLOAT16:
        return hnp.arrays(np.float32, shape, elements=values.map(np.float32)).map(lambda a: a.astype(BFLOAT16))
    if dtype == object:
        return hnp.arrays(object, shape, elements=values)
    if is_float8(dtype):
        if elements_strategy is None:
            return hnp.arrays(np.uint8, shape).map(lambda a: a.view(dtype))
        return hnp.arrays(np.float32, shape, elements=values.map(np.float32)).map(lambda a: a.astype(dtype))
    if is_float(dtype):
        values = values.map(lambda v: np.array(v, dtype).item())
    return hnp.arrays(dtype, shape, elements=values)


def shapes(min_rank=0, max_rank=4, min_side=0, max_side=4):
    return hnp.array_shapes(min_dims=min_rank, max_dims=max_rank, min_side=min_side, max_side=max_side)


def broadcastable_shapes(count, max_rank=4, max_side=4):
    """`count` shapes that broadcast together (numpy / ONNX multidirectional rules), dims 0 to max_side."""
    return hnp.mutually_broadcastable_shapes(num_shapes=count, min_dims=0, max_dims=max_rank, min_side=0,
                                             max_side=max_side).map(lambda s: s.input_shapes)
