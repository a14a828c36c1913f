"""Known differences of sequences, optionals and control flow: SequenceInsert, SequenceMap, Optional, Loop and
Scan."""

import numpy as np

from .common import Difference


def _sequence_insert_at_end(op, opset, inputs, attrs):
    """The sequence with the tensor inserted before `position` (at the end for position = length)."""
    sequence, tensor, position = inputs
    result = list(sequence)
    result.insert(int(position), tensor)
    return [result]


def _optional_by_the_spec(opset, inputs):
    """The outputs of the property test's optional graphs: [None] -> has_element of an empty optional; [x, sequence]
    -> has / get of Optional(x) and Optional(sequence), then (opset 18) has of x, of an omitted input, get of x."""
    if inputs[0] is None:
        return [np.array(False)]
    x, sequence = inputs
    outputs = [np.array(True), np.array(True), x, sequence]
    return outputs + ([np.array(True), np.array(False), x] if opset >= 18 else [])


def _loop_iterations(trip, first, conditions):
    """How many iterations the property test's Loop runs: with M and no cond, M (the body's condition is ignored);
    else none with a false first condition, and otherwise until the body's condition conditions[i] is false
    (iteration i included) or M, where given, is reached."""
    if first is None and trip is not None:
        return int(trip)
    if first is not None and not bool(first):
        return 0
    count = int(np.argmin(conditions)) + 1
    return count if trip is None else min(count, int(trip))


def _loop_stacked(op, opset, inputs, attrs):
    """The final state and the scan output [iterations, *state shape] ([0] when no iteration runs: the body's
    output shape is unknown), from the reference run with M = the number of iterations, cond true and every
    body condition true (the same values: the body's condition never reaches its state or scan output)."""
    from property_harness import node_model, run_reference

    trip, first, state, conditions, step = inputs
    iterations = _loop_iterations(trip, first, conditions)
    if iterations == 0:
        return [state, np.zeros((0,), state.dtype)]
    node_attrs = {k: v for k, v in attrs.items() if k != "node_inputs"}
    explicit = [np.array(iterations, np.int64), np.array(True), state, np.ones_like(conditions), step]
    model = node_model(op, opset, explicit, node_attrs, outputs=2, node_inputs=["x0", "x1", "x2"])
    final, scanned = run_reference(model, explicit)
    return [final, scanned.reshape((iterations, *state.shape))]


def _scan_through_axis_zero(op, opset, inputs, attrs):
    """Scan-9+ with one state and one scan input: the reference scanning axis 0 forward of the input moved and
    reversed as the spec's scan_input_axes / scan_input_directions say, its scan outputs reversed and moved back as
    scan_output_directions / scan_output_axes say (a negative output axis counts in the output's rank)."""
    from property_harness import node_model, run_reference

    state, scanned = inputs
    moved = np.moveaxis(scanned, attrs["scan_input_axes"][0], 0)
    if attrs["scan_input_directions"][0]:
        moved = moved[::-1]
    plain = {"body": attrs["body"], "num_scan_inputs": 1}
    final, *outputs = run_reference(node_model(op, opset, [state, moved], plain, outputs=3), [state, moved])
    for k, (axis, direction) in enumerate(zip(attrs["scan_output_axes"], attrs["scan_output_directions"])):
        stacked = outputs[k][::-1] if direction else outputs[k]
        outputs[k] = np.moveaxis(stacked, 0, axis % stacked.ndim)
    return [final, *outputs]


def _scan_strings_as_codes(op, opset, inputs, attrs):
    """A string Scan evaluated on int64 codes of its strings (the body only passes values through), decoded back."""
    import copy

    from onnx import TensorProto

    state, scanned = inputs
    table = sorted(set(state.ravel().tolist()) | set(scanned.ravel().tolist()))
    code = {text: i for i, text in enumerate(table)}
    encode = np.vectorize(lambda t: code[t], otypes=[np.int64])
    body = copy.deepcopy(attrs["body"])
    for value in list(body.input) + list(body.output):
        value.type.tensor_type.elem_type = TensorProto.INT64
    coded = [encode(a) if a.size else a.astype(np.int64) for a in (state, scanned)]
    coded_attrs = dict(attrs, body=body)
    if any(attrs.get(k) and any(attrs[k]) for k in ("scan_input_axes", "scan_input_directions", "scan_output_axes",
                                                   "scan_output_directions")):
        results = _scan_through_axis_zero(op, opset, coded, coded_attrs)
    else:
        from property_harness import node_model, run_reference

        results = run_reference(node_model(op, opset, coded, coded_attrs, outputs=3), coded)
    decode = np.array(table, dtype=object)
    return [decode[r] if r.size else r.astype(object) for r in results]


DIFFERENCES = [
    Difference(
        "SequenceInsert",
        "The spec accepts positions in [-n, n] for a sequence of n tensors, n inserting at the end; the reference "
        "takes the position modulo n, so n inserts at the front. Compared with Python's list.insert at the "
        "position (negative ones counted from the end). onnxruntime inserts at the end.",
        lambda opset, inputs, attrs: inputs[2] is not None and int(inputs[2]) == len(inputs[0]),
        _sequence_insert_at_end,
    ),
    Difference(
        "SequenceMap",
        "For an empty input sequence the reference fails (\"'NoneType' object is not iterable\": it builds its "
        "outputs from the first element). The spec's outputs are sequences of the input's length: empty ones. "
        "onnxruntime returns empty sequences.",
        lambda opset, inputs, attrs: len(inputs[0]) == 0,
        lambda op, opset, inputs, attrs: [[] for _ in range(attrs["outputs"])],
    ),
    Difference(
        "Optional",
        "The reference represents an optional as a one-element list: Optional(x) is [x], Optional() is [None]. "
        "Its OptionalGetElement returns that list instead of the tensor or sequence inside (a sequence of one "
        "tensor where the spec's output is the tensor), and its OptionalHasElement counts [None] as an element "
        "(true where the spec's \"If the input is not provided, the output is an empty optional\" gives false). "
        "Compared with the spec's results: the wrapped value, true for a full optional (and from opset 18 for a "
        "plain tensor), false for an empty one or an omitted input. onnxruntime gives the same.",
        lambda opset, inputs, attrs: True,
        lambda op, opset, inputs, attrs: _optional_by_the_spec(opset, inputs),
    ),
    Difference(
        "Loop",
        "The spec stacks each iteration's scan output along a new first axis ([iterations, *shape]); the reference "
        "concatenates them with numpy.vstack, which gives [iterations, 1] for rank-0 values and [iterations * a, b] "
        "for [a, b] ones, and it fails when no iteration runs (\"need at least one array to concatenate\"). It also "
        "runs no iteration when cond is omitted, where the spec runs M iterations and ignores the body's condition "
        "(\"input (trip_count, \"\") ... analogous to a for loop\"). Compared with the spec's iteration count, the "
        "reference's values for it restacked as the spec says, and an empty [0] scan output for a loop that runs no "
        "iteration (the body's output shape is not declared; onnxruntime gives the same [0]). onnxruntime ends an "
        "(M, \"\") loop at the body's first false condition.",
        lambda opset, inputs, attrs: True,
        _loop_stacked,
    ),
    Difference(
        "Scan",
        "The reference implements only scan axis 0 and the forward direction for inputs and outputs (\"Scan is not "
        "implemented for other input axes than 0\"). Compared with the reference on the scan input moved to axis 0 "
        "(and reversed for direction 1), its scan outputs reversed for direction 1 and moved to their "
        "scan_output_axes, which is what the spec's axes and directions mean. onnxruntime gives the same.",
        lambda opset, inputs, attrs: opset >= 9 and inputs[1].dtype != object
        and (any(attrs["scan_input_axes"]) or any(attrs["scan_input_directions"])
                                                     or any(attrs["scan_output_axes"])
                                                     or any(attrs["scan_output_directions"])),
        _scan_through_axis_zero,
    ),
    Difference(
        "Scan",
        "For strings the reference's scan slices of a rank-1 input are Python str scalars, which its body's "
        "Identity refuses (\"Issues with types [<class 'str'>]\"). Compared with the reference (and the axis and "
        "direction handling above) on int64 codes of the strings, decoded back: the body only passes values "
        "through. onnxruntime gives the same.",
        lambda opset, inputs, attrs: opset >= 9 and inputs[1].dtype == object,
        _scan_strings_as_codes,
    ),
]
