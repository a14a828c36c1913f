"""Matrix products on generated inputs, against the ONNX reference: MatMul (ranks 1 to 4, broadcast batch dims,
zero-size M, K and N), Gemm (transA, transB, alpha, beta, C of every broadcastable shape or absent), Einsum
(matrix and batch products, transposes, traces and diagonals, sums over axes, outer products, ellipses, three
operands, implicit outputs) and MatMulInteger (int8 / uint8 operands in every combination, with and without
scalar, per-row / per-column and N-D zero points), at every opset version where their schema changed (from 7)
and every dtype of their type constraints.

Float values include NaN, infinities, -0.0, subnormals and the type's extremes. A product keeps IEEE semantics:
NaN * 0 and inf * 0 are NaN, inf - inf is NaN, and Gemm's `beta * C` is part of the spec's formula even for
beta = 0 (a NaN or infinite C then gives NaN). The order in which a dot product adds its terms is the
implementation's, and IEEE sums are not associative: where two orders could differ by more than the dtype's
tolerance (terms that cancel beyond the precision, partial sums that may or may not overflow), the case is left
out; see `order_independent`."""

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import known_differences
from property_harness import RTOL, SETTINGS, allowed_dtypes, check_node, op_cases, versions
from property_values import arrays, broadcastable_shapes, is_float

# --- when a float dot product has one answer ------------------------------------------------------------------


def _compute_type(dtype):
    """nxrt and the half-type oracle (property_harness.reference_in_float) multiply half types in float32."""
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


def _representable(value, ctype):
    return Fraction(float(np.array(float(value), ctype))) == value


def _lowest_bit(value):
    """The least significant set bit of a dyadic Fraction (a float's exact value)."""
    return Fraction(value.numerator & -value.numerator, value.denominator)


def _sums_exactly(terms, ctype):
    """Whether every partial sum of `terms` (Fractions), in any order and with or without fused multiply-adds,
    is exact in `ctype`: each term is representable and all lie on the grid of the finest one, with room for
    their total in the type's significand."""
    terms = [t for t in terms if t != 0]
    if not terms:
        return True
    if not all(_representable(t, ctype) for t in terms):
        return False
    grid = min(_lowest_bit(t) for t in terms)
    digits = np.finfo(ctype).nmant + 1
    total = sum(abs(t) for t in terms)
    return total <= grid * 2 ** digits and total <= Fraction(float(np.finfo(ctype).max))


class _Undetermined(Exception):
    """Two admissible evaluation orders may disagree beyond the tolerance."""


def _dot_value(pairs, alpha, beta_c, ctype):
    """alpha * sum(a * b for a, b in pairs) + beta * c (beta_c: (beta, c) or None), as the spec defines it, with a
    bound on the error of any evaluation order in `ctype`. Returns ("nan",), ("inf", sign) or ("finite", exact
    value, error bound); raises _Undetermined where overflow depends on the order."""
    info = np.finfo(ctype)
    unit, tiny, limit = float(info.eps) / 2, float(info.smallest_subnormal), Fraction(float(info.max)) / 4
    infinite, products = [], []
    for a, b in pairs:
        if np.isnan(a) or np.isnan(b) or (np.isinf(a) and b == 0) or (np.isinf(b) and a == 0):
            return ("nan",)
        if np.isinf(a) or np.isinf(b):
            infinite.append(np.sign(a) * np.sign(b))
        else:
            products.append(Fraction(a) * Fraction(b))
    if sum(abs(p) for p in products) > limit:
        raise _Undetermined  # finite partial sums near the type's largest value may or may not overflow
    if infinite:  # finite products cannot cancel an infinity: alpha * (+-inf or NaN) + beta * c in IEEE math
        total = float(np.inf * infinite[0]) if len(set(infinite)) == 1 else float("nan")
        with np.errstate(all="ignore"):
            value = np.float64(alpha) * total
            if beta_c is not None:
                beta, c = beta_c
                if np.isfinite(c) and abs(Fraction(beta) * Fraction(c)) > limit:
                    raise _Undetermined  # beta * c may overflow to the opposite infinity
                value = value + np.float64(beta) * np.float64(c)
        return ("nan",) if np.isnan(value) else ("inf", np.sign(value))
    count = max(len(products), 1)
    exact_sum = sum(products, Fraction(0))
    error = 0.0
    if not _sums_exactly(products, ctype):  # each product and each partial sum rounds once (or fuses)
        error = count * unit * float(sum(abs(p) for p in products)) + count * tiny
    scaled = Fraction(alpha) * exact_sum
    if abs(scaled) + abs(Fraction(alpha)) * Fraction(error) > limit:
        raise _Undetermined
    if error or not _representable(scaled, ctype):
        error = abs(alpha) * error + unit * abs(float(scaled)) + tiny
    if beta_c is None:
        return ("finite", scaled, error)
    beta, c = beta_c
    if np.isnan(c) or np.isinf(c):  # beta * c is NaN for beta 0, else an infinity the finite product cannot cancel
        return ("nan",) if beta == 0 or np.isnan(c) else ("inf", np.sign(beta) * np.sign(c))
    addend = Fraction(beta) * Fraction(c)
    if abs(addend) > limit:
        raise _Undetermined
    total = scaled + addend
    if error or not _sums_exactly([scaled, addend], ctype):
        error = error + unit * (abs(float(scaled)) + 2 * abs(float(addend))) + 2 * tiny
    return ("finite", total, error)


def order_independent(out_dtype, elements):
    """Whether every output element (an iterable of _dot_value argument tuples) has one answer within the
    tolerance of `out_dtype`, whatever order the implementation adds in (both sides may err by the bound)."""
    ctype = _compute_type(out_dtype)
    half = out_dtype != ctype and out_dtype != np.float32
    # A half-type result is the float32 one rounded once: two float32 values within a quarter of the tolerance
    # round to neighbouring half values at most.
    rtol = RTOL[out_dtype] / 4 if half else RTOL[out_dtype]
    out_info = ml_dtypes.finfo(out_dtype) if out_dtype == ml_dtypes.bfloat16 else np.finfo(out_dtype)
    for pairs, alpha, beta_c in elements:
        try:
            value = _dot_value(pairs, alpha, beta_c, ctype)
        except _Undetermined:
            return False
        if value[0] != "finite" or value[2] == 0:
            continue
        magnitude, error = abs(float(value[1])), value[2]
        if half and magnitude + error >= float(out_info.max) * 0.99:
            return False  # rounds to the half type's largest value or to infinity depending on the last bit
        if 2 * error > max(rtol * (magnitude - error), 4 * float(out_info.smallest_subnormal)):
            return False
    return True


def matmul_elements(a, b, alpha=1.0, c=None, beta=0.0):
    """_dot_value arguments of each element of alpha * matmul(a, b) + beta * c (a, b at least 2-D)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a64 = np.broadcast_to(a64, batch + a.shape[-2:])
    b64 = np.broadcast_to(b64, batch + b.shape[-2:])
    rows, cols = a.shape[-2], b.shape[-1]
    c64 = np.broadcast_to(c.astype(np.float64), (rows, cols)) if c is not None else None
    for index in np.ndindex(*batch, rows, cols):
        *where, i, j = index
        pairs = list(zip(a64[(*where, i)].tolist(), b64[(*where, slice(None), j)].tolist()))
        yield pairs, alpha, (None if c64 is None else (beta, float(c64[i, j])))


# --- MatMul ---------------------------------------------------------------------------------------------------


def matmul_shapes(data):
    """A and B shapes of numpy matmul: 1-D operands or [batch..., M, K] x [batch..., K, N], batch dims
    broadcasting (up to rank 4), M, K and N from 0."""
    m, k, n = (data.draw(st.integers(0, 4), label=d) for d in "MKN")
    batch_a, batch_b = data.draw(broadcastable_shapes(2, max_rank=2, max_side=3), label="batch shapes")
    vector_a = data.draw(st.booleans(), label="A is 1-D") and not batch_a
    vector_b = data.draw(st.booleans(), label="B is 1-D") and not batch_b
    return ((k,) if vector_a else (*batch_a, m, k)), ((k,) if vector_b else (*batch_b, k, n))


@pytest.mark.parametrize("opset, dtype", list(op_cases("MatMul", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_matmul_matches_the_reference(opset, dtype, data):
    a_shape, b_shape = matmul_shapes(data)
    a = data.draw(arrays(dtype, a_shape), label="A")
    b = data.draw(arrays(dtype, b_shape), label="B")
    if is_float(dtype):
        a2 = a.reshape(1, -1) if a.ndim == 1 else a
        b2 = b.reshape(-1, 1) if b.ndim == 1 else b
        assume(order_independent(dtype, matmul_elements(a2, b2)))
    check_node("MatMul", opset, [a, b], expected=known_differences.expected_for("MatMul", opset, [a, b], {}),
               half_in_float=True)


# --- Gemm -----------------------------------------------------------------------------------------------------

# Multipliers: the default 1, exact scalings, 0 (NaN and infinities of the product stay NaN) and inexact ones.
FLOAT_MULTIPLIERS = st.sampled_from([1.0, -1.0, 0.5, 2.0, 0.0, 1.5, -0.25, 0.1])
# The spec gives alpha and beta as floats and is silent on how a fractional one scales an integer product
# (nxrt truncates the multiplier to the integer type; the reference scales in float64): integers get whole ones.
INTEGER_MULTIPLIERS = st.sampled_from([1.0, -1.0, 2.0, 0.0, 3.0])


@pytest.mark.parametrize("opset, dtype", list(op_cases("Gemm", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_gemm_matches_the_reference(opset, dtype, data):
    m, k, n = (data.draw(st.integers(0, 4), label=d) for d in "MKN")
    trans_a, trans_b = data.draw(st.integers(0, 1), label="transA"), data.draw(st.integers(0, 1), label="transB")
    a = data.draw(arrays(dtype, (k, m) if trans_a else (m, k)), label="A")
    b = data.draw(arrays(dtype, (n, k) if trans_b else (k, n)), label="B")
    # C broadcasts unidirectionally to [M, N]; optional from opset 11.
    c_shapes = [(), (1,), (n,), (1, 1), (1, n), (m, 1), (m, n)] + ([None] if opset >= 11 else [])
    c_shape = data.draw(st.sampled_from(c_shapes), label="C shape")
    c = None if c_shape is None else data.draw(arrays(dtype, c_shape), label="C")
    multipliers = FLOAT_MULTIPLIERS if is_float(dtype) else INTEGER_MULTIPLIERS
    attrs = {"transA": trans_a, "transB": trans_b}
    for name in ("alpha", "beta"):
        if data.draw(st.booleans(), label=f"has {name}"):
            attrs[name] = data.draw(multipliers, label=name)
    if is_float(dtype):
        alpha = float(np.float32(attrs.get("alpha", 1.0)))  # the attribute is a float32
        beta = float(np.float32(attrs.get("beta", 1.0)))
        assume(order_independent(dtype, matmul_elements(a.T if trans_a else a, b.T if trans_b else b, alpha, c,
                                                        beta)))
    inputs = [a, b, c]
    while inputs[-1] is None:
        inputs.pop()
    check_node("Gemm", opset, inputs, attrs, expected=known_differences.expected_for("Gemm", opset, inputs, attrs),
               half_in_float=True)


# --- Einsum ---------------------------------------------------------------------------------------------------

# Each label's size is drawn from 0 to 3, and an ellipsis stands for broadcast batch dims (0 to 2 of them).
EQUATIONS = [
    "ij,jk->ik", "bij,bjk->bik", "ij,j->i", "i,i->", "ij->ji", "ijk->kji", "ii->i", "ii->", "bii->bi",
    "ij->i", "ij->j", "ijk->", "i,j->ij", "ij,ij->ij", "ij,kj->ik", "...ij,...jk->...ik", "...ii->...i",
    "...j->...", "b...,b...->...", "ij,jk,kl->il", "ij,jk", "ba", "i->i", "ijk,ikl->jl", "ab,ab->",
]


def einsum_values(dtype):
    """Float values on a grid float32 holds with every sum of products the equations form (quarters up to 8),
    with signed zeros, NaN and infinities: any order of multiplying and adding gives the same result, so the
    summation order (the implementation's choice) cannot matter. Integers: the type's full range (wrapping)."""
    if not is_float(dtype):
        return None
    grid = st.integers(-32, 32).map(lambda q: q / 4)
    return st.one_of(grid, grid, st.sampled_from([0.0, -0.0, np.nan, np.inf, -np.inf]))


def einsum_operands(data, equation, dtype):
    terms = equation.split("->")[0].split(",")
    sizes = {label: data.draw(st.integers(0, 3), label=f"size {label}") for label in sorted(set("".join(terms)))
             if label != "."}
    ellipses = data.draw(broadcastable_shapes(len(terms), max_rank=2, max_side=3), label="ellipsis shapes")
    operands = []
    for term, ellipsis in zip(terms, ellipses):
        head, _, tail = term.partition("...")
        shape = [sizes[x] for x in head] + (list(ellipsis) if "..." in term else []) + [sizes[x] for x in tail]
        operands.append(data.draw(arrays(dtype, tuple(shape), einsum_values(dtype)), label=f"operand {term}"))
    return operands


@pytest.mark.parametrize("opset, dtype", list(op_cases("Einsum", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_einsum_matches_the_reference(opset, dtype, data):
    equation = data.draw(st.sampled_from(EQUATIONS), label="equation")
    operands = einsum_operands(data, equation, dtype)
    check_node("Einsum", opset, operands, {"equation": equation}, half_in_float=True)


# --- MatMulInteger --------------------------------------------------------------------------------------------


def zero_point(data, dtype, shape, form, side):
    """A zero point of `form` for an operand of `shape`: a scalar, a 1-D per-row (A: [M]) or per-column (B: [N])
    vector, or N-D: the operand's batch dims with [M, 1] (A) or [1, N] (B)."""
    if form == "scalar":
        return data.draw(arrays(dtype, ()), label=f"{side} zero point")
    if form == "vector":
        return data.draw(arrays(dtype, (shape[-2] if side == "a" else shape[-1],)), label=f"{side} zero point")
    nd = (*shape[:-1], 1) if side == "a" else (*shape[:-2], 1, shape[-1])
    return data.draw(arrays(dtype, nd), label=f"{side} zero point")


@pytest.mark.parametrize("opset", versions("MatMulInteger", first=10))
@pytest.mark.parametrize("a_type", allowed_dtypes("MatMulInteger", 10, "T1"), ids=str)
@pytest.mark.parametrize("b_type", allowed_dtypes("MatMulInteger", 10, "T2"), ids=str)
@SETTINGS
@given(data=st.data())
def test_matmul_integer_matches_the_reference(opset, a_type, b_type, data):
    a_shape, b_shape = matmul_shapes(data)
    a = data.draw(arrays(a_type, a_shape), label="A")
    b = data.draw(arrays(b_type, b_shape), label="B")
    # Per-row and N-D zero points need a matrix operand (a 1-D one takes a scalar only).
    forms = st.sampled_from(["none", "scalar", "vector", "nd"])
    a_form = data.draw(forms if a.ndim >= 2 else st.sampled_from(["none", "scalar"]), label="A zero point form")
    b_form = data.draw(forms if b.ndim >= 2 else st.sampled_from(["none", "scalar"]), label="B zero point form")
    a_zero = None if a_form == "none" else zero_point(data, a_type, a.shape, a_form, "a")
    b_zero = None if b_form == "none" else zero_point(data, b_type, b.shape, b_form, "b")
    inputs = [a, b, a_zero, b_zero]
    if b_zero is None:
        inputs = inputs[:3] if a_zero is not None else inputs[:2]
    check_node("MatMulInteger", opset, inputs,
               expected=known_differences.expected_for("MatMulInteger", opset, inputs, {}))


def test_matmul_integer_empty_zero_point_vectors():
    # A per-row zero point of M = 0 rows ([0] for A of [0, K]) and a per-column one of N = 0 columns.
    for inputs in ([np.zeros((0, 2), np.uint8), np.ones((2, 3), np.uint8), np.zeros((0,), np.uint8)],
                   [np.ones((3, 2), np.uint8), np.zeros((2, 0), np.uint8), None, np.zeros((0,), np.uint8)]):
        check_node("MatMulInteger", 10, inputs,
                   expected=known_differences.expected_for("MatMulInteger", 10, inputs, {}))


COVERED = {"MatMul", "Gemm", "Einsum", "MatMulInteger"}
