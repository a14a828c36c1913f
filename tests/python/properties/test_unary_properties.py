"""Element-wise one-input operators on generated inputs, at every opset version where their schema changed (from
7) and every dtype of its type constraint, against the ONNX reference (property_harness.py)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

import known_differences
from property_harness import SETTINGS, check_node, op_cases
from property_values import arrays, shapes

# Ops whose only input is the data tensor; value: (type parameter of the input, attribute strategies by name).
# Float attributes are float32 values (what an AttributeProto holds).
f32 = {"width": 32, "allow_nan": False}
UNARY = {
    "Abs": ("T", {}), "Neg": ("T", {}), "Sign": ("T", {}), "Exp": ("T", {}), "Log": ("T", {}),
    "Sqrt": ("T", {}), "Reciprocal": ("T", {}), "Floor": ("T", {}), "Ceil": ("T", {}), "Round": ("T", {}),
    "Erf": ("T", {}), "Sin": ("T", {}), "Cos": ("T", {}), "Tan": ("T", {}), "Asin": ("T", {}), "Acos": ("T", {}),
    "Atan": ("T", {}), "Sinh": ("T", {}), "Cosh": ("T", {}), "Asinh": ("T", {}), "Acosh": ("T", {}),
    "Atanh": ("T", {}), "Sigmoid": ("T", {}), "Tanh": ("T", {}), "Relu": ("T", {}), "Softplus": ("T", {}),
    "Softsign": ("T", {}), "Mish": ("T", {}), "HardSwish": ("T", {}), "IsNaN": ("T1", {}), "Not": ("T", {}),
    "BitwiseNot": ("T", {}),
    "IsInf": ("T1", {"detect_negative": st.integers(0, 1), "detect_positive": st.integers(0, 1)}),
    "LeakyRelu": ("T", {"alpha": st.floats(-2, 2, **f32)}),
    "Elu": ("T", {"alpha": st.floats(-2, 2, **f32)}),
    "Celu": ("T", {"alpha": st.floats(0.125, 4, **f32)}),
    "Selu": ("T", {"alpha": st.floats(0, 3, **f32), "gamma": st.floats(0, 3, **f32)}),
    "HardSigmoid": ("T", {"alpha": st.floats(-1, 1, **f32), "beta": st.floats(-1, 1, **f32)}),
    "ThresholdedRelu": ("T", {"alpha": st.floats(-2, 2, **f32)}),
    "Shrink": ("T", {"bias": st.floats(-2, 2, **f32), "lambd": st.floats(0, 2, **f32)}),
    "Gelu": ("T", {"approximate": st.sampled_from(["none", "tanh"])}),
    "Swish": ("T", {"alpha": st.floats(-2, 2, **f32)}),
}


@pytest.mark.parametrize("op, opset, dtype", [p for op, (type_param, _) in UNARY.items()
                                              for p in op_cases(op, type_param)])
@SETTINGS
@given(data=st.data())
def test_unary_op_matches_the_reference(op, opset, dtype, data):
    x = data.draw(arrays(dtype, shapes()), label="x")
    attrs = {name: data.draw(strategy, label=name) for name, strategy in UNARY[op][1].items()}
    check_node(op, opset, [x], attrs, expected=known_differences.expected_for(op, opset, [x], attrs),
               elementwise=1, atol=known_differences.kernel_atol(op, dtype))


@pytest.mark.parametrize("opset, dtype", list(op_cases("Clip", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_clip_matches_the_reference(opset, dtype, data):
    """Bounds as optional scalar inputs from opset 11, as float attributes before."""
    x = data.draw(arrays(dtype, shapes()), label="x")
    inputs, attrs = [x], {}
    if opset >= 11:
        bounds = [data.draw(st.one_of(st.none(), arrays(dtype, ())), label=name) for name in ("min", "max")]
        while bounds and bounds[-1] is None:
            bounds.pop()
        inputs += bounds
    else:
        for name in ("min", "max"):
            if data.draw(st.booleans(), label=f"has {name}"):
                attrs[name] = data.draw(st.floats(-20, 20, width=32), label=name)
    check_node("Clip", opset, inputs, attrs, expected=known_differences.expected_for("Clip", opset, inputs, attrs),
               elementwise=1)


COVERED = set(UNARY) | {"Clip"}
