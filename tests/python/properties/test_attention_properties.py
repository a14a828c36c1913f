"""Attention-family operators on generated inputs, against the ONNX reference unless stated:

- Attention (opsets 23, 24, 25; bfloat16, float16, float, double): 3-D inputs with q_num_heads / kv_num_heads
  and 4-D inputs, multi-head, grouped-query and multi-query head counts, zero-length sequences, past_key /
  past_value, bool / float / integer attn_mask of rank 1-4 (shorter than the keys from 24 on, rows of -inf),
  is_causal, scale, softcap, softmax_precision, every qk_matmul_output_mode with all four outputs,
  nonpad_kv_seqlen (24, 25) and the sliding window (25).
- RotaryEmbedding (23): 3-D and 4-D inputs, interleaved or split halves, partial rotary_embedding_dim,
  position_ids present (cache [max_position, dim/2]) or absent (cache [batch, sequence, dim/2]).
- TensorScatter (24): every dtype the harness generates (strings and bools included), linear and circular mode,
  any non-batch axis (negative too), write_indices present or absent.
- SwiGLU (28), LinearAttention (27: every update_rule, per-head and per-key decay, shared beta, past_state of
  another float type), CausalConvWithState (27: bias, past_state, activations).
- ai.onnx.preview FlexAttention (1): grouped-query heads, scale, softmax_precision, score_mod / prob_mod
  subgraphs.
- SimplifiedLayerNormalization: not an ONNX schema (onnxruntime registers it in the default domain, version 1,
  and so does nxrt), so onnxruntime is the oracle there, with the tolerance stated at its test.

Values mix ordinary numbers with NaN, infinities, -0.0 and subnormals; the float types' huge magnitudes are
left out where a dot product would add them to small ones (see attention_elements)."""

import numpy as np
import onnx
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from onnx import helper

import known_differences
import window_oracles
from property_harness import (SETTINGS, allowed_dtypes, assert_same, check_node, describe, elem_type, feeds_of,
                              node_model, op_cases, run_nxrt, run_reference)
from property_values import BFLOAT16, arrays, elements, shapes, special_values

HALF_AND_FLOATS = (np.dtype(np.float16), BFLOAT16, np.dtype(np.float32), np.dtype(np.float64))
# softmax_precision (a TensorProto data type) -> numpy type.
SOFTMAX_PRECISION_TYPES = {1: np.dtype(np.float32), 10: np.dtype(np.float16), 11: np.dtype(np.float64),
                           16: BFLOAT16}


def attention_elements(dtype):
    """Scalars of a float `dtype` for products summed over a head: the special values (NaN, infinities, -0.0,
    subnormals, eps, tiny) and ordinary numbers in [-4, 4]. The type's max and other huge magnitudes are left
    out: QK^T and P*V add several products, and when a huge one cancels another the result depends on the
    order of the additions (numpy's BLAS and nxrt's GEMM both round correctly, each in its own order)."""
    huge = float(np.finfo(np.float16).max if dtype == np.float16 else 2.0 ** 20)
    specials = [v for v in special_values(dtype) if not np.isfinite(v) or abs(v) < huge]
    width = 16 if dtype == np.float16 else 32 if dtype in (np.float32, BFLOAT16) else 64
    ordinary = st.floats(-4.0, 4.0, width=width)
    # Mostly ordinary: one NaN or infinity poisons a whole row of scores.
    return st.one_of(st.sampled_from(specials), *[ordinary] * 5)


def digits(dtype):
    return {np.dtype(np.float16): 11, BFLOAT16: 8, np.dtype(np.float32): 24}.get(np.dtype(dtype), 53)


def assert_same_at_precision(actual, expected, context, precision, softmax_outputs):
    """assert_same, except that the outputs in `softmax_outputs` (Y, the probabilities) are compared at the
    tolerance of the softmax precision type where that holds fewer digits than the output's type: a float64 Y
    from a float32 softmax keeps float32's digits (numpy's and glibc's float32 exp differ by an ulp at times)."""
    assert len(actual) == len(expected), f"{context}: {len(actual)} outputs, reference {len(expected)}"
    for i, (a, e) in enumerate(zip(actual, expected)):
        a, e = np.asarray(a), np.asarray(e)
        if precision is not None and i in softmax_outputs and digits(precision) < digits(e.dtype):
            assert a.dtype == e.dtype, f"{context}: output {i}: dtype {a.dtype}, reference {e.dtype}"
            with np.errstate(all="ignore"):
                a, e = a.astype(precision), e.astype(precision)
        assert_same([a], [e], f"{context} (output {i})")


def nxrt_outputs(model, inputs, context):
    try:
        return run_nxrt(model, inputs)
    except Exception as error:  # noqa: BLE001 - the message is the finding
        raise AssertionError(f"{context}: nxrt raised {type(error).__name__}: {error}") from None


def float_array(dtype, shape, data, label):
    return data.draw(arrays(dtype, shape, attention_elements(dtype)), label=label)


@pytest.mark.parametrize("opset, dtype", list(op_cases("Attention", type_param="T1", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_attention_matches_the_reference(opset, dtype, data):
    draw = data.draw
    four_d = draw(st.booleans(), label="4-D")
    batch = draw(st.integers(0, 2), label="batch")
    kv_heads = draw(st.integers(1, 2), label="kv_num_heads")
    q_heads = kv_heads * draw(st.sampled_from([1, 2]), label="group")
    q_len, kv_len = draw(st.integers(0, 3), label="q length"), draw(st.integers(0, 3), label="kv length")
    head, v_head = draw(st.integers(1, 3), label="head size"), draw(st.integers(0, 3), label="v head size")
    if four_d:
        qkv = [(batch, q_heads, q_len, head), (batch, kv_heads, kv_len, head), (batch, kv_heads, kv_len, v_head)]
    else:
        qkv = [(batch, q_len, q_heads * head), (batch, kv_len, kv_heads * head), (batch, kv_len, kv_heads * v_head)]
    q, k, v = (float_array(dtype, shape, data, name) for shape, name in zip(qkv, "QKV"))
    attrs = {}
    if not four_d:  # the head counts are attributes of 3-D inputs only ("Must be used with 3D inputs")
        attrs.update(q_num_heads=q_heads, kv_num_heads=kv_heads)

    past_len = draw(st.one_of(st.none(), st.integers(0, 2)), label="past length")
    past_key = past_value = nonpad = None
    if past_len is not None:
        past_key = float_array(dtype, (batch, kv_heads, past_len, head), data, "past_key")
        past_value = float_array(dtype, (batch, kv_heads, past_len, v_head), data, "past_value")
    total = (past_len or 0) + kv_len
    # nonpad_kv_seqlen (from 24) is for an external cache: "should not be used together with past_key".
    if opset >= 24 and past_len is None and draw(st.booleans(), label="nonpad_kv_seqlen"):
        nonpad = draw(arrays(np.int64, (batch,), st.integers(0, kv_len)), label="nonpad_kv_seqlen")

    causal = draw(st.booleans(), label="is_causal")
    if causal:
        attrs["is_causal"] = 1
    mask = None
    # The spec's masks are bool or "a float mask of the same type as query, key, value". Its type constraint also
    # admits integers, whose values its function body casts to T and adds; it pads a short mask and builds the
    # causal bias by casting -inf to the mask's type, undefined for integers, so integer masks come without
    # is_causal and at full length.
    mask_kind = draw(st.sampled_from(["none", "bool", "float"] + ([] if causal else ["integer"])), label="mask kind")
    if mask_kind != "none":
        rank = draw(st.integers(1, 4), label="mask rank")
        full = (batch, q_heads, q_len, total)[4 - rank:]
        dims = [draw(st.sampled_from([d, 1]), label=f"mask dim {i}") for i, d in enumerate(full[:-1])]
        # From 24 the last dimension may be shorter than the keys (padded with -inf), but it must cover the
        # longest nonpad_kv_seqlen.
        shortest = max([0, *nonpad.tolist()]) if nonpad is not None else 0
        last = draw(st.integers(shortest, total), label="mask length") if opset >= 24 and mask_kind != "integer" \
            else total
        shape = (*dims, last)
        if mask_kind == "bool":
            mask = draw(arrays(np.bool_, shape), label="mask")
        elif mask_kind == "float":
            # "a float mask of the same type as query, key, value"; rows of -inf are fully masked rows.
            mask = float_array(dtype, shape, data, "mask")
            if mask.ndim >= 2 and mask.shape[-2] > 0 and draw(st.booleans(), label="-inf row"):
                mask[..., 0, :] = -np.inf
        else:
            mask_type = draw(st.sampled_from([np.int8, np.int32, np.int64, np.uint8]), label="mask type")
            mask = draw(arrays(mask_type, shape, st.integers(-3, 3) if mask_type != np.uint8 else
                               st.integers(0, 3)), label="mask")

    if draw(st.booleans(), label="scale given"):
        attrs["scale"] = draw(st.sampled_from([0.25, 0.5, 1.0, 2.0, 0.1]), label="scale")
    if draw(st.booleans(), label="softcap given"):
        attrs["softcap"] = draw(st.sampled_from([0.0, 0.5, 1.0, 30.0]), label="softcap")
    if draw(st.booleans(), label="softmax_precision given"):
        attrs["softmax_precision"] = draw(st.sampled_from([1, 10, 11, 16]), label="softmax_precision")
    attrs["qk_matmul_output_mode"] = draw(st.integers(0, 3), label="qk_matmul_output_mode")
    if opset >= 25:
        attrs["left_window_size"] = draw(st.integers(-1, 2), label="left_window_size")
        attrs["right_window_size"] = draw(st.integers(-1, 2), label="right_window_size")

    inputs = [q, k, v, mask, past_key, past_value] + ([nonpad] if opset >= 24 else [])
    while inputs[-1] is None:
        inputs.pop()
    oracle = known_differences.expected_for("Attention", opset, inputs, attrs)
    model = node_model("Attention", opset, inputs, attrs, 4)
    expected = oracle(inputs, attrs) if oracle is not None else run_reference(model, inputs)
    context = describe("Attention", opset, inputs, attrs)
    probabilities = {0, 3} if attrs["qk_matmul_output_mode"] == 3 else {0}
    assert_same_at_precision(nxrt_outputs(model, inputs, context), expected, context,
                             SOFTMAX_PRECISION_TYPES.get(attrs.get("softmax_precision")), probabilities)


@pytest.mark.parametrize("opset, dtype", list(op_cases("RotaryEmbedding", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_rotary_embedding_matches_the_reference(opset, dtype, data):
    draw = data.draw
    batch, seq = draw(st.integers(0, 2), label="batch"), draw(st.integers(0, 3), label="sequence")
    heads, head = draw(st.integers(1, 2), label="heads"), draw(st.integers(0, 6), label="head size")
    rotary = draw(st.sampled_from([0, *range(2, head + 1, 2)]), label="rotary_embedding_dim")
    assume(rotary or head % 2 == 0)  # the whole head rotates by default: it must split into pairs
    half = (rotary or head) // 2
    attrs = {"interleaved": draw(st.integers(0, 1), label="interleaved")}
    if rotary:
        attrs["rotary_embedding_dim"] = rotary
    if draw(st.booleans(), label="3-D"):
        x = draw(arrays(dtype, (batch, seq, heads * head)), label="X")
        attrs["num_heads"] = heads  # "Must be provided when input is a 3D tensor"
    else:
        x = draw(arrays(dtype, (batch, heads, seq, head)), label="X")
    if draw(st.booleans(), label="position_ids"):
        max_position = draw(st.integers(1, 4), label="max position")
        positions = draw(arrays(np.int64, (batch, seq), st.integers(0, max_position - 1)), label="position_ids")
        cache_shape = (max_position, half)
    else:
        positions, cache_shape = None, (batch, seq, half)
    cos = draw(arrays(dtype, cache_shape), label="cos_cache")
    sin = draw(arrays(dtype, cache_shape), label="sin_cache")
    check_node("RotaryEmbedding", opset, [x, cos, sin, positions], attrs)


@pytest.mark.parametrize("opset, dtype", list(op_cases("TensorScatter", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_tensor_scatter_matches_the_reference(opset, dtype, data):
    draw = data.draw
    rank = draw(st.integers(2, 4), label="rank")
    axis = draw(st.integers(1, rank - 1), label="axis")  # "It cannot be 0 (the batch dimension)"
    shape = [draw(st.integers(0, 3), label=f"dim {i}") for i in range(rank)]
    shape[axis] = draw(st.integers(1, 4), label="max sequence length")
    update_shape = list(shape)
    update_shape[axis] = draw(st.integers(0, shape[axis]), label="sequence length")
    past = draw(arrays(dtype, tuple(shape)), label="past_cache")
    update = draw(arrays(dtype, tuple(update_shape)), label="update")
    mode = draw(st.sampled_from(["linear", "circular"]), label="mode")
    attrs = {"mode": mode, "axis": axis - rank if draw(st.booleans(), label="negative axis") else axis}
    inputs = [past, update]
    if draw(st.booleans(), label="write_indices"):
        # linear: "requires write_indices+sequence_length<=max_sequence_length"; circular wraps around.
        last = shape[axis] - update_shape[axis] if mode == "linear" else shape[axis] - 1
        inputs.append(draw(arrays(np.int64, (shape[0],), st.integers(0, last)), label="write_indices"))
    check_node("TensorScatter", opset, inputs, attrs)


@pytest.mark.parametrize("opset, dtype", list(op_cases("SwiGLU", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_swiglu_matches_the_reference(opset, dtype, data):
    shape = data.draw(shapes(max_rank=4), label="shape")
    a, b = data.draw(arrays(dtype, shape), label="A"), data.draw(arrays(dtype, shape), label="B")
    attrs = {}
    if data.draw(st.booleans(), label="alpha given"):
        attrs["alpha"] = data.draw(st.sampled_from([1.0, 1.702, 0.5, -1.0, 0.0]), label="alpha")
    check_node("SwiGLU", opset, [a, b], attrs,
               expected=known_differences.expected_for("SwiGLU", opset, [a, b], attrs))


LINEAR_TYPES = [np.dtype(np.float32), np.dtype(np.float16), BFLOAT16]


@pytest.mark.parametrize("opset, dtype", list(op_cases("LinearAttention", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_linear_attention_matches_the_reference(opset, dtype, data):
    draw = data.draw
    batch, steps = draw(st.integers(0, 2), label="batch"), draw(st.integers(0, 3), label="steps")
    kv_heads = draw(st.integers(1, 2), label="kv_num_heads")
    q_heads = kv_heads * draw(st.sampled_from([1, 2]), label="group")
    d_k, d_v = draw(st.integers(1, 3), label="d_k"), draw(st.integers(1, 3), label="d_v")
    rule = draw(st.sampled_from(["linear", "gated", "delta", "gated_delta"]), label="update_rule")
    attrs = {"q_num_heads": q_heads, "kv_num_heads": kv_heads}
    if rule != "gated_delta" or draw(st.booleans(), label="rule given"):
        attrs["update_rule"] = rule
    if draw(st.booleans(), label="scale given"):
        attrs["scale"] = draw(st.sampled_from([0.0, 0.5, 2.0]), label="scale")
    if draw(st.booleans(), label="chunk_size given"):
        attrs["chunk_size"] = draw(st.sampled_from([1, 2, 64]), label="chunk_size")  # a hint, no effect
    query = float_array(dtype, (batch, steps, q_heads * d_k), data, "query")
    key = float_array(dtype, (batch, steps, kv_heads * d_k), data, "key")
    value = float_array(dtype, (batch, steps, kv_heads * d_v), data, "value")
    past = None
    if draw(st.booleans(), label="past_state"):
        state_type = draw(st.sampled_from(LINEAR_TYPES), label="state type")
        past = float_array(state_type, (batch, kv_heads, d_k, d_v), data, "past_state")
    decay = beta = None
    if rule in ("gated", "gated_delta"):
        width = draw(st.sampled_from([kv_heads, kv_heads * d_k]), label="decay width")
        # decay is a log-space gate: exp(decay) multiplies the state each step.
        decay = data.draw(arrays(dtype, (batch, steps, width), st.floats(-3.0, 1.0, width=16)), label="decay")
    if rule in ("delta", "gated_delta"):
        width = draw(st.sampled_from([kv_heads, 1]), label="beta width")
        beta = data.draw(arrays(dtype, (batch, steps, width), st.floats(0.0, 1.0, width=16)), label="beta")
    inputs = [query, key, value, past, decay, beta]
    while inputs[-1] is None:
        inputs.pop()
    check_node("LinearAttention", opset, inputs, attrs, outputs=2)


def depthwise_sums_are_ambiguous(x, weight, bias, past, dtype):
    """Whether some output of the depthwise causal convolution is a sum of products (and the bias) whose value
    depends on the order of the additions beyond the test tolerance (window_oracles.sums)."""
    acc = window_oracles.accumulation_type(dtype)
    batch, channels, length = x.shape
    kernel = weight.shape[2]
    left = past if past is not None else np.zeros((batch, channels, kernel - 1), dtype)
    padded = np.concatenate([left, x], axis=2).astype(np.float64)
    if length == 0 or batch == 0:
        return False
    windows = np.stack([padded[:, :, t:t + kernel] for t in range(length)], axis=2)  # [B, C, L, k]
    with np.errstate(all="ignore"):
        products = windows * weight.astype(np.float64)[None, :, None, 0, :]
    terms = window_oracles.to_acc(products, acc)
    overflowed = np.isinf(terms) & np.isfinite(products)
    if bias is not None:
        shift = np.broadcast_to(bias.astype(np.float64)[None, :, None, None], (batch, channels, length, 1))
        terms = np.concatenate([terms, shift], axis=3)
        overflowed = np.concatenate([overflowed, np.zeros(shift.shape, bool)], axis=3)
    return bool(window_oracles.sums(terms, acc, dtype, exact_terms=False, overflowed=overflowed)[1].any())


@pytest.mark.parametrize("opset, dtype", list(op_cases("CausalConvWithState", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_causal_conv_with_state_matches_the_reference(opset, dtype, data):
    draw = data.draw
    batch, channels = draw(st.integers(0, 2), label="batch"), draw(st.integers(1, 3), label="channels")
    length, kernel = draw(st.integers(0, 4), label="length"), draw(st.integers(1, 4), label="kernel")
    x = float_array(dtype, (batch, channels, length), data, "input")
    weight = float_array(dtype, (channels, 1, kernel), data, "weight")
    bias = float_array(dtype, (channels,), data, "bias") if draw(st.booleans(), label="bias") else None
    past = float_array(dtype, (batch, channels, kernel - 1), data, "past_state") \
        if draw(st.booleans(), label="past_state") else None
    attrs = {}
    if draw(st.booleans(), label="activation given"):
        attrs["activation"] = draw(st.sampled_from(["none", "silu", "swish"]), label="activation")
    # Sums whose result the order of the additions decides beyond the tolerance (cancellation, partial sums
    # that may overflow) are left out: window_oracles.sums marks them, as for Conv.
    assume(not depthwise_sums_are_ambiguous(x, weight, bias, past, dtype))
    inputs = [x, weight, bias, past]
    while inputs[-1] is None:
        inputs.pop()
    check_node("CausalConvWithState", opset, inputs, attrs, outputs=2,
               expected=known_differences.expected_for("CausalConvWithState", opset, inputs, attrs))


PREVIEW_DOMAIN = "ai.onnx.preview"


def modifier(name, kind, dtype):
    """A FlexAttention modifier subgraph of one input and one output of element type `dtype`."""
    tensor_type = elem_type(dtype)
    nodes = []
    if kind in ("Mul", "Add"):
        constant = helper.make_tensor("c", tensor_type, [], [0.5 if kind == "Mul" else -1.0])
        nodes.append(helper.make_node("Constant", [], ["c"], value=constant))
        nodes.append(helper.make_node(kind, ["x", "c"], ["y"]))
    else:
        nodes.append(helper.make_node(kind, ["x"], ["y"]))
    return helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", tensor_type, None)],
                             [helper.make_tensor_value_info("y", tensor_type, None)])


def preview_model(op, inputs, attrs, onnx_opset=23):
    """A one-node model of an ai.onnx.preview op (version 1) beside the default domain at `onnx_opset`."""
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op, names, ["y0"], domain=PREVIEW_DOMAIN, **attrs)
    graph = helper.make_graph([node], "property",
                              [helper.make_tensor_value_info(n, elem_type(a.dtype), list(a.shape))
                               for n, a in zip(names, inputs)], [helper.make_empty_tensor_value_info("y0")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", onnx_opset),
                                                    helper.make_opsetid(PREVIEW_DOMAIN, 1)])
    model.ir_version = 10
    return model


@pytest.mark.parametrize("dtype", allowed_dtypes("FlexAttention", 1, "T1", domain=PREVIEW_DOMAIN))
@SETTINGS
@given(data=st.data())
def test_flex_attention_matches_the_reference(dtype, data):
    draw = data.draw
    batch, kv_heads = draw(st.integers(0, 2), label="batch"), draw(st.integers(1, 2), label="kv heads")
    q_heads = kv_heads * draw(st.sampled_from([1, 2]), label="group")
    # At least one key: FlexAttention has no fully-masked-row rule, its softmax over no keys is 0 / 0 (and the
    # reference fails on the empty maximum).
    q_len, kv_len = draw(st.integers(0, 3), label="q length"), draw(st.integers(1, 3), label="kv length")
    head, v_head = draw(st.integers(1, 3), label="head size"), draw(st.integers(0, 3), label="v head size")
    q = float_array(dtype, (batch, q_heads, q_len, head), data, "Q")
    k = float_array(dtype, (batch, kv_heads, kv_len, head), data, "K")
    v = float_array(dtype, (batch, kv_heads, kv_len, v_head), data, "V")
    attrs = {}
    if draw(st.booleans(), label="scale given"):
        attrs["scale"] = draw(st.sampled_from([0.25, 1.0, 2.0]), label="scale")
    compute = np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)
    if draw(st.booleans(), label="softmax_precision given"):
        precision = draw(st.sampled_from(list(SOFTMAX_PRECISION_TYPES)), label="softmax_precision")
        attrs["softmax_precision"] = precision
        compute = SOFTMAX_PRECISION_TYPES[precision]
    # The modifiers see the scores and probabilities in the softmax precision.
    score_kind = draw(st.sampled_from([None, "Tanh", "Mul", "Neg", "Add"]), label="score_mod")
    if score_kind:
        attrs["score_mod"] = modifier("score_mod", score_kind, compute)
    prob_kind = draw(st.sampled_from([None, "Mul", "Sqrt", "Identity"]), label="prob_mod")
    if prob_kind:
        attrs["prob_mod"] = modifier("prob_mod", prob_kind, compute)
    inputs = [q, k, v]
    model = preview_model("FlexAttention", inputs, attrs)
    shown = {name: a for name, a in attrs.items() if not name.endswith("_mod")}
    context = describe("FlexAttention", 1, inputs, shown) + f" score_mod={score_kind} prob_mod={prob_kind}"
    oracle = known_differences.expected_for(f"{PREVIEW_DOMAIN}.FlexAttention", 1, inputs, attrs)
    expected = oracle(inputs, attrs) if oracle is not None else run_reference(model, inputs)
    assert_same_at_precision(nxrt_outputs(model, inputs, context), expected, context,
                             SOFTMAX_PRECISION_TYPES.get(attrs.get("softmax_precision")), {0})


def onnxruntime_outputs(model, inputs):
    import onnxruntime

    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds_of(inputs))


# onnxruntime accumulates a float row's mean square in float32 (nxrt in double): where x^2 summed over a row
# passes float32's range onnxruntime's inv_std_var is 0 and Y zero, nxrt's the value. So values stay below 2^60
# (a row of at most 27 squares of them fits float32), which leaves the NaN, infinities, subnormals and zeros in.
SLN_LIMIT = 2.0 ** 60


@pytest.mark.parametrize("dtype", HALF_AND_FLOATS)
@SETTINGS
@given(data=st.data())
def test_simplified_layer_normalization_matches_onnxruntime(dtype, data):
    """SimplifiedLayerNormalization against onnxruntime (it is not an ONNX schema: onnxruntime defines it, in the
    default domain, version 1): Y = X / sqrt(mean(X^2 over the axes from `axis` on) + epsilon) * scale, and
    inv_std_var = 1 / sqrt(mean + epsilon) in stash_type (float). Tolerance: the suite's (rtol 1e-3 float16,
    8e-3 bfloat16, 1e-5 float, 1e-7 double; atol 0): both compute the row statistics in at least float and round
    Y once. onnxruntime has no bfloat16 kernel: bfloat16 cases are compared with onnxruntime's float32 result
    on the same values, rounded once to bfloat16."""
    draw = data.draw
    values = elements(dtype).filter(lambda v: not np.isfinite(v) or abs(v) < SLN_LIMIT)
    x = draw(arrays(dtype, shapes(min_rank=1, max_rank=3, max_side=3), values), label="X")
    axis = draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    scale = draw(arrays(dtype, x.shape[axis % x.ndim:], values), label="scale")
    attrs = {"axis": axis}
    if draw(st.booleans(), label="epsilon given"):
        attrs["epsilon"] = draw(st.sampled_from([1e-5, 1e-6, 0.0, 0.5]), label="epsilon")
    with_inv_std = draw(st.booleans(), label="inv_std_var")
    outputs = 2 if with_inv_std else 1
    inputs = [x, scale]
    model = node_model("SimplifiedLayerNormalization", 1, inputs, attrs, outputs)
    del model.opset_import[:]
    model.opset_import.append(helper.make_opsetid("", 21))  # registered at version 1 of the default domain
    model.ir_version = 10
    if scale.size == 0:
        # onnxruntime refuses rows of no elements ("Size of X.shape[axis:] must be at least 1"). nxrt normalizes
        # nothing: Y is empty and inv_std_var is 1 / sqrt(0 / 0 + epsilon) = NaN for each of the (empty) rows.
        stat_shape = x.shape[:axis % x.ndim] + (1,) * (x.ndim - axis % x.ndim)
        expected = [x.copy(), np.full(stat_shape, np.nan, np.float32)][:outputs]
    elif dtype == BFLOAT16:
        wide = [a.astype(np.float32) for a in inputs]
        wide_model = node_model("SimplifiedLayerNormalization", 1, wide, attrs, outputs)
        wide_model.CopyFrom(model)
        for value in wide_model.graph.input:
            value.type.tensor_type.elem_type = onnx.TensorProto.FLOAT
        expected = onnxruntime_outputs(wide_model, wide)
        expected[0] = expected[0].astype(BFLOAT16)
    else:
        expected = onnxruntime_outputs(model, inputs)
    context = describe("SimplifiedLayerNormalization", 1, inputs, attrs)
    assert_same(nxrt_outputs(model, inputs, context), expected, context)


COVERED = {"Attention", "RotaryEmbedding", "TensorScatter", "SwiGLU", "LinearAttention", "CausalConvWithState",
           f"{PREVIEW_DOMAIN}.FlexAttention", "SimplifiedLayerNormalization"}
