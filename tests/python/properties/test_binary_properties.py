"""Element-wise operators of two or more inputs (multidirectional broadcasting, PRelu's unidirectional slope,
Where's condition, the variadic Max / Min / Sum / Mean) on generated inputs, at every opset version where their
schema changed (from 7) and every dtype of their type constraints, against the ONNX reference."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import known_differences
from property_harness import SETTINGS, allowed_dtypes, check_node, op_cases, versions
from property_values import arrays, broadcastable_shapes, is_float, shapes

# Two inputs of one type T; value: attribute strategies by name.
BINARY = {
    "Add": {}, "Sub": {}, "Mul": {}, "Div": {}, "BitwiseAnd": {}, "BitwiseOr": {}, "BitwiseXor": {}, "And": {},
    "Or": {}, "Xor": {}, "Equal": {}, "Less": {}, "Greater": {}, "LessOrEqual": {}, "GreaterOrEqual": {},
    "Mod": {"fmod": st.integers(0, 1)}, "BitShift": {"direction": st.sampled_from(["LEFT", "RIGHT"])},
}
VARIADIC = ("Max", "Min", "Sum", "Mean")


def without_zeros(a):
    """Integer divisors with 0 replaced by 1: integer division by zero is undefined in the spec, and nxrt's Div
    reports it as an error (test_integer_division_by_zero_is_an_error)."""
    a = a.copy()
    a[a == 0] = 1
    return a


@pytest.mark.parametrize("op, opset, dtype", list(op_cases(BINARY)))
@SETTINGS
@given(data=st.data())
def test_binary_op_matches_the_reference(op, opset, dtype, data):
    first_shape, second_shape = data.draw(broadcastable_shapes(2), label="shapes")
    a = data.draw(arrays(dtype, first_shape), label="a")
    b = data.draw(arrays(dtype, second_shape), label="b")
    attrs = {name: data.draw(strategy, label=name) for name, strategy in BINARY[op].items()}
    if op == "Mod" and is_float(dtype):
        attrs["fmod"] = 1  # the spec requires fmod 1 for floating-point inputs
    if op == "Div" and not is_float(dtype):
        b = without_zeros(b)
    if op == "BitShift":
        # Shifts of the type's width or more are undefined in the spec (C and numpy disagree); keep them below.
        b = b % np.array(8 * dtype.itemsize, dtype)
    inputs = [a, b]
    check_node(op, opset, inputs, attrs, expected=known_differences.expected_for(op, opset, inputs, attrs),
               elementwise=2)


@pytest.mark.parametrize("op, opset, dtype", list(op_cases(("Pow",))))
@SETTINGS
@given(data=st.data())
def test_pow_matches_the_reference_for_every_exponent_type(op, opset, dtype, data):
    exponent_types = allowed_dtypes(op, opset, "T1") if opset >= 12 else [dtype]  # one type T before opset 12
    exponent_type = data.draw(st.sampled_from(exponent_types), label="exponent type")
    first_shape, second_shape = data.draw(broadcastable_shapes(2), label="shapes")
    base = data.draw(arrays(dtype, first_shape), label="base")
    exponent = data.draw(arrays(exponent_type, second_shape), label="exponent")
    if not is_float(dtype) and not is_float(exponent_type):
        # A negative integer exponent of an integer base has no integer result (the spec leaves it undefined).
        assume(not (exponent < 0).any())
    inputs = [base, exponent]
    check_node(op, opset, inputs, expected=known_differences.expected_for(op, opset, inputs, {}), elementwise=2)


@pytest.mark.parametrize("op, opset, dtype", list(op_cases(VARIADIC)))
@SETTINGS
@given(data=st.data())
def test_variadic_op_matches_the_reference(op, opset, dtype, data):
    count = data.draw(st.integers(1, 3), label="inputs")
    if opset < 8:  # before opset 8 every input has the output's shape (no broadcasting)
        input_shapes = [data.draw(shapes(), label="shape")] * count
    else:
        input_shapes = data.draw(broadcastable_shapes(count), label="shapes")
    inputs = [data.draw(arrays(dtype, shape), label=f"x{i}") for i, shape in enumerate(input_shapes)]
    check_node(op, opset, inputs, expected=known_differences.expected_for(op, opset, inputs, {}),
               elementwise=count)


@pytest.mark.parametrize("op, opset, dtype", list(op_cases(("PRelu",))))
@SETTINGS
@given(data=st.data())
def test_prelu_slope_broadcasts_to_the_input(op, opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=1)), label="x")
    # The slope broadcasts unidirectionally: a suffix of X's dims, each kept or 1.
    suffix = data.draw(st.integers(0, x.ndim), label="slope rank")
    slope_shape = tuple(d if data.draw(st.booleans(), label=f"keep {i}") else 1
                        for i, d in enumerate(x.shape[x.ndim - suffix:]))
    slope = data.draw(arrays(dtype, slope_shape), label="slope")
    inputs = [x, slope]
    check_node(op, opset, inputs, expected=known_differences.expected_for(op, opset, inputs, {}), elementwise=2)


@pytest.mark.parametrize("opset, dtype", [pytest.param(v, t, id=f"Where-{v}-{t}") for v in versions("Where")
                                          for t in allowed_dtypes("Where", v)])
@SETTINGS
@given(data=st.data())
def test_where_matches_the_reference(opset, dtype, data):
    condition_shape, first_shape, second_shape = data.draw(broadcastable_shapes(3), label="shapes")
    inputs = [data.draw(arrays(np.bool_, condition_shape), label="condition"),
              data.draw(arrays(dtype, first_shape), label="x"), data.draw(arrays(dtype, second_shape), label="y")]
    check_node("Where", opset, inputs, elementwise=3)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64])
def test_integer_division_by_zero_is_an_error(dtype):
    """Undefined in the spec; nxrt fails the run with an error naming the node instead of trapping or returning
    an arbitrary value (the reference gives 0 with a numpy warning). Integer Mod by zero gives 0 in nxrt as in
    the reference (numpy), so the generated Mod cases keep their zero divisors."""
    op = "Div"
    import nxrt

    from property_harness import node_model

    inputs = [np.array([5, 7], dtype), np.array([1, 0], dtype)]
    session = nxrt.InferenceSession(node_model(op, 13, inputs).SerializeToString())
    with pytest.raises(Exception, match=op):
        session.run(None, {"x0": inputs[0], "x1": inputs[1]})


COVERED = set(BINARY) | set(VARIADIC) | {"Pow", "PRelu", "Where"}
