"""com.microsoft attention ops on generated inputs (Attention, MultiHeadAttention, GroupQueryAttention,
QAttention) against onnxruntime's CPU provider (contrib_harness; onnx.reference has none of them), at float32 and
float16 (onnxruntime's CPU types; the schemas also list bfloat16, which onnxruntime's CPU kernels lack).

Values: ordinary numbers in [-3, 3] mixed with NaN, +-0 and subnormals (a NaN reaches every output its row's
softmax touches). Infinities are left out: an infinite score makes the softmax inf - inf, and whether a masked or
causally hidden infinite key reaches the sum depends on where each runtime applies the mask (before the product or
as an additive -10000), which the schemas leave open.

Tolerance: each output is a softmax-weighted sum of values. The scores are sums of head-size products rounded
in float32 in each runtime's own order (onnxruntime's MLAS uses fused multiply-adds) and its exponentials are
approximations of a few ulps: a score error of ~head * 2^-23 * |q| |k| moves a weight by that relative amount,
so outputs may differ by 3e-5 * max|V| (float32; the existing tests' bound) or 2e-2 * max|V| in float16, where
both runtimes round the scores or probabilities to float16 at different steps."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import known_differences
from contrib_harness import F16, F32, check_contrib
from property_harness import SETTINGS
from property_values import arrays, special_values

TYPES = [F32, F16]
SCALE_OF_V = {F32: 3e-5, F16: 2e-2}


def values(dtype):
    specials = [v for v in special_values(dtype) if not math.isinf(v) and abs(v) <= 1.0]
    return st.one_of(st.sampled_from(specials), st.floats(-3, 3, width=16))


def tolerance(dtype, *value_tensors):
    """(rtol, atol) of the outputs: SCALE_OF_V[dtype] times the largest finite |value| (at least 1)."""
    largest = max([1.0] + [float(np.max(np.abs(np.nan_to_num(v.astype(np.float64), posinf=0, neginf=0))))
                           for v in value_tensors if v is not None and v.size])
    return SCALE_OF_V[dtype], SCALE_OF_V[dtype] * largest


def key_mask(data, form, batch, seq, total):
    """A key padding / attention mask of `form` (int32): "lengths" [B] (valid keys from the start, at least one),
    "2d" [B, T] or "3d" [B, S, T] (0 masks a key; each row keeps its first key so no row is all masked)."""
    if form == "lengths":
        return data.draw(arrays(np.int32, (batch,), st.integers(1, total)), label="mask lengths")
    shape = (batch, total) if form == "2d" else (batch, seq, total)
    mask = data.draw(arrays(np.int32, shape, st.integers(0, 1)), label="mask")
    mask[..., 0] = 1
    return mask


@pytest.mark.parametrize("dtype", TYPES, ids=str)
@SETTINGS
@given(data=st.data())
def test_attention(dtype, data):
    batch, seq, heads, head = (data.draw(st.integers(1, n), label=name)
                               for n, name in ((2, "B"), (4, "S"), (2, "N"), (4, "head")))
    hidden_in = data.draw(st.integers(1, 4), label="input hidden")
    hidden = heads * head
    x = data.draw(arrays(dtype, (batch, seq, hidden_in), values(dtype)), label="input")
    weights = data.draw(arrays(dtype, (hidden_in, 3 * hidden), values(dtype)), label="weights")
    bias = data.draw(arrays(dtype, (3 * hidden,), values(dtype)), label="bias")
    form = data.draw(st.sampled_from([None, "lengths", "2d", "3d"]), label="mask form")
    mask = None if form is None else key_mask(data, form, batch, seq, seq)
    attention_bias = data.draw(st.one_of(st.none(), arrays(dtype, (1, heads, seq, seq), values(dtype))),
                               label="attention_bias")
    attrs = {"num_heads": heads, "unidirectional": data.draw(st.integers(0, 1), label="unidirectional")}
    scale = data.draw(st.sampled_from([None, 0.25, 1.0]), label="scale")
    if scale is not None:
        attrs["scale"] = scale
    inputs = [x, weights, bias, mask, None, attention_bias]
    projected = np.abs(np.nan_to_num(x.astype(np.float64))) @ np.abs(np.nan_to_num(weights.astype(np.float64)))
    rtol, atol = tolerance(dtype, projected + np.abs(np.nan_to_num(bias.astype(np.float64))))
    check_contrib("Attention", inputs, attrs, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", TYPES, ids=str)
@SETTINGS
@given(data=st.data())
def test_multi_head_attention(dtype, data):
    batch, seq, kv_seq, heads, head = (data.draw(st.integers(1, n), label=name) for n, name in
                                       ((2, "B"), (4, "S"), (4, "L"), (2, "N"), (4, "head")))
    hidden = heads * head
    form = data.draw(st.sampled_from(["separate", "past", "heads"]), label="key form")
    past = data.draw(st.integers(1, 3), label="past") if form == "past" else 0
    total = past + kv_seq
    query = data.draw(arrays(dtype, (batch, seq, hidden), values(dtype)), label="query")
    kv_shape = (batch, heads, kv_seq, head) if form == "heads" else (batch, kv_seq, hidden)
    key = data.draw(arrays(dtype, kv_shape, values(dtype)), label="key")
    value = data.draw(arrays(dtype, kv_shape, values(dtype)), label="value")
    bias = None if form == "heads" else \
        data.draw(st.one_of(st.none(), arrays(dtype, (3 * hidden,), values(dtype))), label="bias")
    mask_form = data.draw(st.sampled_from([None, "lengths", "2d", "3d"]), label="mask form")
    mask = None if mask_form is None else key_mask(data, mask_form, batch, seq, total)
    attention_bias = data.draw(st.one_of(st.none(), arrays(dtype, (batch, 1, seq, total), values(dtype))),
                               label="attention_bias")
    past_kv = [data.draw(arrays(dtype, (batch, heads, past, head), values(dtype)), label=name)
               for name in ("past_key", "past_value")] if past else [None, None]
    attrs = {"num_heads": heads}
    # unidirectional: onnxruntime's CPU kernel applies the causal rule to self attention (query and keys of one
    # length, no past) only.
    if form == "separate" and seq == kv_seq:
        attrs["unidirectional"] = data.draw(st.integers(0, 1), label="unidirectional")
    inputs = [query, key, value, bias, mask, attention_bias, *past_kv]
    outputs = 3 if past else 1
    rtol, atol = tolerance(dtype, value, past_kv[1], bias)
    check_contrib("MultiHeadAttention", inputs, attrs, outputs=outputs, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", TYPES, ids=str)
@SETTINGS
@given(data=st.data())
def test_group_query_attention(dtype, data):
    kv_heads = data.draw(st.integers(1, 2), label="kv heads")
    heads = kv_heads * data.draw(st.sampled_from([1, 2]), label="group")
    head = data.draw(st.sampled_from([8, 16]), label="head")  # onnxruntime: a multiple of 8
    mode = data.draw(st.sampled_from(["prompt", "decode", "chunk"]), label="mode")
    batch = 1 if mode == "chunk" else data.draw(st.integers(1, 2), label="B")  # onnxruntime: a chunk at batch 1
    seq = 1 if mode == "decode" else data.draw(st.integers(1, 4), label="S")
    past = 0 if mode == "prompt" else data.draw(st.integers(1, 3), label="past buffer")
    if mode == "prompt":  # entries padded on the right: their own lengths, the first one full
        totals = [seq] + [data.draw(st.integers(1, seq), label="length") for _ in range(batch - 1)]
    else:  # the first entry fills its past buffer; the others may use less of it
        totals = [past + seq] + [data.draw(st.integers(1, past), label="past used") + seq for _ in range(batch - 1)]
    total = max(totals)
    attrs = {"num_heads": heads, "kv_num_heads": kv_heads}
    for name, strategy in (("local_window_size", st.integers(1, 3)), ("softcap", st.sampled_from([1.0, 4.0])),
                           ("scale", st.sampled_from([0.1, 0.5])), ("smooth_softmax", st.just(1))):
        if data.draw(st.booleans(), label=f"with {name}"):
            attrs[name] = data.draw(strategy, label=name)
    query = data.draw(arrays(dtype, (batch, seq, heads * head), values(dtype)), label="query")
    key = data.draw(arrays(dtype, (batch, seq, kv_heads * head), values(dtype)), label="key")
    value = data.draw(arrays(dtype, (batch, seq, kv_heads * head), values(dtype)), label="value")
    past_kv = [data.draw(arrays(dtype, (batch, kv_heads, past, head), values(dtype)), label=name)
               for name in ("past_key", "past_value")] if past else [None, None]
    if data.draw(st.booleans(), label="packed QKV"):
        query, key, value = np.concatenate([query, key, value], axis=2), None, None
    inputs = [query, key, value, *past_kv, np.array(totals, np.int32) - 1, np.array(total, np.int32)]

    def defined(outputs):
        # The contract covers each entry's new rows below its own length and present rows below its total; the
        # rest is padding whose content neither runtime promises.
        out, present_key, present_value = outputs
        rows = [out[b, :min(seq, totals[b])] for b in range(batch)]
        keys = [p[b, :, :totals[b]] for p in (present_key, present_value) for b in range(batch)]
        return [np.concatenate([r.ravel() for r in rows]), np.concatenate([k.ravel() for k in keys])]
    rtol, atol = tolerance(dtype, value if value is not None else query, past_kv[1])
    check_contrib("GroupQueryAttention", inputs, attrs, outputs=3, rtol=rtol, atol=atol, defined=defined)


@pytest.mark.parametrize("weight_type", [np.dtype(np.int8), np.dtype(np.uint8)], ids=str)
@SETTINGS
@given(data=st.data())
def test_qattention(weight_type, data):
    batch, seq, heads, head = (data.draw(st.integers(1, n), label=name)
                               for n, name in ((2, "B"), (4, "S"), (2, "N"), (4, "head")))
    hidden_in, hidden = data.draw(st.integers(1, 4), label="input hidden"), heads * head
    quant = lambda dtype, shape, label: data.draw(  # noqa: E731
        arrays(dtype, shape, st.integers(int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))), label=label)
    x = quant(np.uint8, (batch, seq, hidden_in), "input")  # uint8 input: onnxruntime's CPU kernel
    weight = quant(weight_type, (hidden_in, 3 * hidden), "weight")
    bias = data.draw(arrays(F32, (3 * hidden,), values(F32)), label="bias")
    input_scale = np.array(data.draw(st.floats(2.0 ** -8, 0.05), label="input_scale"), np.float32)
    weight_scale = np.array(data.draw(st.floats(2.0 ** -8, 0.05), label="weight_scale"), np.float32)
    mask = data.draw(st.one_of(st.none(), arrays(np.int32, (batch,), st.integers(1, seq))), label="mask_index")
    inputs = [x, weight, bias, input_scale, weight_scale, mask, quant(np.uint8, (), "input_zero_point"),
              quant(weight_type, (), "weight_zero_point")]
    attrs = {"num_heads": heads, "unidirectional": data.draw(st.integers(0, 1), label="unidirectional")}
    # The projection is an exact integer sum scaled in float32; then as the float Attention.
    projected = np.abs(x.astype(np.float64) - float(inputs[6])) @ \
        np.abs(weight.astype(np.float64) - float(inputs[7])) * float(input_scale) * float(weight_scale)
    rtol, atol = tolerance(F32, projected + np.abs(np.nan_to_num(bias.astype(np.float64))))
    check_contrib("QAttention", inputs, attrs, rtol=rtol, atol=atol,
                  expected=known_differences.expected_for("com.microsoft.QAttention", 1, inputs, attrs))


COVERED = {f"com.microsoft.{op}" for op in (
    "Attention", "MultiHeadAttention", "GroupQueryAttention", "QAttention")}
