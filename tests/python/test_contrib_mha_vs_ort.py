"""Differential tests for com.microsoft MultiHeadAttention against onnxruntime (float32 and float16) on random
shapes and every key / value form: separate projections, packed QKV, packed KV (onnxruntime's CPU kernel runs
those unpacked), keys and values already split in heads (a cross-attention cache), with past_key / past_value,
key_padding_mask forms, attention_bias, bias and the causal rule."""

import numpy as np
import onnxruntime
import pytest

import helpers
import nxrt

MS = "com.microsoft"
TOLERANCE = {np.float32: 3e-5, np.float16: 2e-2}
FORMS = ["separate", "packed_qkv", "packed_kv", "heads", "past"]


def key_padding_mask(rng, form, b, s, t):
    if form == "end":
        return rng.integers(1, t + 1, size=b).astype(np.int32)
    if form == "raw2d":
        mask = (rng.random((b, t)) < 0.8).astype(np.int32)
        mask[:, 0] = 1
        return mask
    if form == "raw3d":
        mask = (rng.random((b, s, t)) < 0.8).astype(np.int32)
        mask[:, :, 0] = 1
        return mask
    return None


def mha_case(seed, dtype):
    rng = np.random.default_rng(seed)
    form = FORMS[seed % len(FORMS)]
    b, heads = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    head = int(rng.choice([4, 8, 16]))
    s = int(rng.integers(1, 6))
    kv_len = s if form == "packed_qkv" else int(rng.integers(1, 6))
    past_len = int(rng.integers(1, 5)) if form == "past" else 0
    t = past_len + kv_len
    d = heads * head

    def normal(*shape):
        return rng.standard_normal(shape).astype(dtype)

    query, key, value, past_key, past_value = normal(b, s, d), None, None, None, None
    if form == "separate" or form == "past":
        key, value = normal(b, kv_len, d), normal(b, kv_len, d)
    elif form == "packed_qkv":
        query = normal(b, s, heads, 3, head)
    elif form == "packed_kv":
        key = normal(b, kv_len, heads, 2, head)
    else:
        key, value = normal(b, heads, kv_len, head), normal(b, heads, kv_len, head)
    if form == "past":
        past_key, past_value = normal(b, heads, past_len, head), normal(b, heads, past_len, head)
    bias = normal(3 * d) if seed % 3 == 1 and form in ("separate", "past") else None
    attrs = {"num_heads": heads}
    if seed % 4 == 1 and form in ("separate", "past", "packed_qkv"):
        attrs["unidirectional"] = 1
    if seed % 5 == 3:
        attrs["scale"] = float(rng.uniform(0.05, 0.5))
    mask_form = ["none", "end", "raw2d", "raw3d"][seed % 4] if not attrs.get("unidirectional") else "none"
    attention_bias = normal(int(rng.choice([1, b])), int(rng.choice([1, heads])), s, t) if seed % 6 == 2 else None
    feeds = [("query", query), ("key", key), ("value", value), ("bias", bias),
             ("key_padding_mask", key_padding_mask(rng, mask_form, b, s, t)), ("attention_bias", attention_bias),
             ("past_key", past_key), ("past_value", past_value)]
    outputs = (True, True, True) if form == "past" or seed % 2 else (True,)
    # onnxruntime's CPU kernel has no packed forms: it runs the same inputs unpacked.
    theirs = list(feeds)
    if form == "packed_qkv":
        theirs[:3] = [(name, query[:, :, :, i].reshape(b, s, d)) for i, name in enumerate(("query", "key", "value"))]
    elif form == "packed_kv":
        theirs[1:3] = [(name, key[:, :, :, i].reshape(b, kv_len, d)) for i, name in enumerate(("key", "value"), 0)]
    return feeds, attrs, outputs, theirs


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("seed", range(40))
def test_multi_head_attention(seed, dtype):
    feeds, attrs, outputs, theirs = mha_case(seed, dtype)
    model = helpers.one_node_model("MultiHeadAttention", feeds, outputs, attrs, MS)
    got = helpers.run_feeds(nxrt, model, feeds)
    want = helpers.run_feeds(onnxruntime, helpers.one_node_model("MultiHeadAttention", theirs, outputs, attrs, MS),
                             theirs)
    assert len(got) == len(want)
    for name, g, w in zip(("output", "present_key", "present_value"), got, want):
        assert g.shape == w.shape, f"{name} {attrs}"
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=TOLERANCE[dtype],
                                   atol=TOLERANCE[dtype], err_msg=f"{name} {attrs}")


@pytest.mark.parametrize("case", ["no heads", "bad key", "past with split heads", "cache_indirection"])
def test_multi_head_attention_errors_name_the_node(case):
    q = np.zeros((1, 2, 8), np.float32)
    attrs = {"num_heads": 2}
    feeds = [("query", q), ("key", np.zeros((1, 3, 8), np.float32)), ("value", np.zeros((1, 3, 8), np.float32))]
    if case == "no heads":
        attrs = {}
    elif case == "bad key":
        feeds[1] = ("key", np.zeros((1, 3, 6), np.float32))
    elif case == "past with split heads":
        feeds = [("query", q), ("key", np.zeros((1, 2, 3, 4), np.float32)),
                 ("value", np.zeros((1, 2, 3, 4), np.float32)), ("bias", None), ("key_padding_mask", None),
                 ("attention_bias", None), ("past_key", np.zeros((1, 2, 1, 4), np.float32)),
                 ("past_value", np.zeros((1, 2, 1, 4), np.float32))]
    else:
        feeds += [("bias", None), ("key_padding_mask", None), ("attention_bias", None), ("past_key", None),
                  ("past_value", None), ("past_sequence_length", None),
                  ("cache_indirection", np.zeros((1, 1, 3), np.int32))]
    model = helpers.one_node_model("MultiHeadAttention", feeds, (True,), attrs, MS)
    with pytest.raises(Exception, match="MultiHeadAttention"):
        helpers.run_feeds(nxrt, model, feeds)
