"""RNN, GRU and LSTM on generated inputs, at every opset version where their schema changed (7; 14 with layout;
22 with bfloat16) and every dtype of their type constraint: direction forward, reverse and bidirectional,
sequences of length 0 to 3, batches of 0 to 2, with and without the bias, sequence_lens, initial_h / initial_c
and the LSTM peepholes, every activation function of the spec with activation_alpha / activation_beta, clip,
GRU linear_before_reset, LSTM input_forget and both layouts, on values with NaN, infinities and extremes.

The oracle is the ONNX reference where it implements the case; it ignores sequence_lens, clip, input_forget and
the activations, and there known_differences/ compares with the spec's equations in float64 instead. Half
types are compared with the reference on float32 copies rounded once (nxrt carries the state in float32)."""

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import known_differences
from property_harness import SETTINGS, check_node, op_cases
from property_values import arrays, elements

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
ACTIVATIONS_PER_DIRECTION = {"RNN": 1, "GRU": 2, "LSTM": 3}
# The spec's activation functions; the second group takes activation_alpha (and some activation_beta).
PLAIN_ACTIVATIONS = ["Relu", "Tanh", "Sigmoid", "Softsign", "Softplus"]
ALPHA_ACTIVATIONS = ["Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu"]
BETA_ACTIVATIONS = {"Affine", "ScaledTanh", "HardSigmoid"}
PARAMETERS = st.floats(-3, 3, width=32, allow_subnormal=False)


def values(dtype):
    """The dtype's values (NaN, infinities, -0.0, subnormals, tiny ones) with finite magnitudes up to 1e4: the spec
    fixes no order for a gate's sum of terms, and where terms and states overflow the compute type the order
    decides between +-inf and NaN (with 3 steps of unbounded activations and peepholes, magnitudes of 1e4 already
    reach float32's range; such cases are then left out below)."""
    return elements(dtype).filter(lambda v: not math.isfinite(v) or abs(v) <= 1e4)


def draw_activations(data, op, directions):
    """Attributes for the activation functions: none (the defaults), or one list for all directions, with
    activation_alpha / activation_beta values. The spec's "values are consumed in the order of activation
    functions" leaves open whether an activation without alpha takes a slot, so values are drawn only where every
    activation of the list takes them (both readings then agree)."""
    form = data.draw(st.sampled_from(["default", "plain", "alpha", "mixed"]), label="activation form")
    if form == "default":
        return {}
    count = ACTIVATIONS_PER_DIRECTION[op] * directions
    pool = {"plain": PLAIN_ACTIVATIONS, "alpha": ALPHA_ACTIVATIONS,
            "mixed": PLAIN_ACTIVATIONS + ALPHA_ACTIVATIONS}[form]
    names = data.draw(st.lists(st.sampled_from(pool), min_size=count, max_size=count), label="activations")
    attrs = {"activations": names}
    if all(name in ALPHA_ACTIVATIONS for name in names):
        alphas = data.draw(st.lists(PARAMETERS, max_size=count), label="activation_alpha")
        if alphas:
            attrs["activation_alpha"] = alphas
        if all(name in BETA_ACTIVATIONS for name in names):
            betas = data.draw(st.lists(PARAMETERS, max_size=count), label="activation_beta")
            if betas:
                attrs["activation_beta"] = betas
    return attrs


@pytest.mark.parametrize("op, opset, dtype", list(op_cases(tuple(GATES))))
@SETTINGS
@given(data=st.data())
def test_recurrent_matches_the_reference(op, opset, dtype, data):
    direction = data.draw(st.sampled_from(["forward", "reverse", "bidirectional"]), label="direction")
    directions = 2 if direction == "bidirectional" else 1
    steps = data.draw(st.integers(0, 3), label="sequence length")
    batch = data.draw(st.integers(0, 2), label="batch")
    size = data.draw(st.integers(0, 3), label="input size")
    hidden = data.draw(st.integers(1, 3), label="hidden_size")
    layout = data.draw(st.integers(0, 1), label="layout") if opset >= 14 else 0
    gates = GATES[op] * hidden
    state_shape = (batch, directions, hidden) if layout else (directions, batch, hidden)

    def optional(shape, label):
        return data.draw(st.one_of(st.none(), arrays(dtype, shape, values(dtype))), label=label)

    inputs = [data.draw(arrays(dtype, (batch, steps, size) if layout else (steps, batch, size), values(dtype)),
                        label="X"),
              data.draw(arrays(dtype, (directions, gates, size), values(dtype)), label="W"),
              data.draw(arrays(dtype, (directions, gates, hidden), values(dtype)), label="R"),
              optional((directions, 2 * gates), "B"),
              data.draw(st.one_of(st.none(), arrays(np.int32, (batch,), st.integers(0, steps))),
                        label="sequence_lens"),
              optional(state_shape, "initial_h")]
    if op == "LSTM":
        inputs += [optional(state_shape, "initial_c"), optional((directions, 3 * hidden), "P")]
    attrs = {"hidden_size": hidden, **draw_activations(data, op, directions)}
    if direction != "forward" or data.draw(st.booleans(), label="direction given"):
        attrs["direction"] = direction
    if layout or (opset >= 14 and data.draw(st.booleans(), label="layout given")):
        attrs["layout"] = layout
    # A positive threshold: the spec gives clip no default and no meaning for 0 or less.
    clip = data.draw(st.one_of(st.none(), st.sampled_from([1e-3, 0.5, 1.0, 4.0, 1e30])), label="clip")
    if clip is not None:
        attrs["clip"] = clip
    if op == "GRU":
        attrs["linear_before_reset"] = data.draw(st.integers(0, 1), label="linear_before_reset")
    if op == "LSTM":
        attrs["input_forget"] = data.draw(st.integers(0, 1), label="input_forget")
    atol = known_differences.recurrent_rounding_atol(op, inputs, attrs)
    assume(atol is not None)  # the state overflows nxrt's compute type: see values()
    check_node(op, opset, inputs, attrs, outputs=3 if op == "LSTM" else 2, half_in_float=True, atol=atol,
               expected=known_differences.expected_for(op, opset, inputs, attrs))


COVERED = set(GATES)
