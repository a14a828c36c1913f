"""Differential tests for com.microsoft GroupQueryAttention and RotaryEmbedding against onnxruntime (float32 and
float16) on random shapes, caches and attributes. GroupQueryAttention is compared on the rows its contract
defines: output rows below each entry's new-token count and present rows below its total length."""

import numpy as np
import onnxruntime
import pytest

import helpers
import nxrt

MS = "com.microsoft"
TOLERANCE = {np.float32: 3e-5, np.float16: 2e-2}


def compare(got, want, dtype, what):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=TOLERANCE[dtype],
                               atol=TOLERANCE[dtype], err_msg=what)


# ---- RotaryEmbedding ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("seed", range(12))
def test_rotary_embedding(seed, dtype):
    rng = np.random.default_rng(seed)
    b, s, heads = (int(v) for v in rng.integers(1, 4, size=3))
    head = int(rng.choice([4, 8, 16]))
    rotary = head if seed % 3 else head // 2
    max_position = s + int(rng.integers(0, 6))
    cos = rng.standard_normal((max_position, rotary // 2)).astype(dtype)
    sin = rng.standard_normal((max_position, rotary // 2)).astype(dtype)
    attrs = {"interleaved": int(seed % 2)}
    if seed % 4 == 0:
        x = rng.standard_normal((b, heads, s, head)).astype(dtype)
    else:
        x = rng.standard_normal((b, s, heads * head)).astype(dtype)
        if rotary != head or seed % 4 == 1:
            attrs["num_heads"] = heads
    if rotary != head:
        attrs["rotary_embedding_dim"] = rotary
        attrs["num_heads"] = heads
    if seed % 5 == 2:
        positions = np.array([int(rng.integers(0, max_position - s + 1))], np.int64)
    else:
        positions = rng.integers(0, max_position, size=(b, s)).astype(np.int64)
    feeds = [("x", x), ("positions", positions), ("cos", cos), ("sin", sin)]
    model = helpers.one_node_model("RotaryEmbedding", feeds, (True,), attrs, MS)
    (got,) = helpers.run_feeds(nxrt, model, feeds)
    (want,) = helpers.run_feeds(onnxruntime, model, feeds)
    compare(got, want, dtype, f"RotaryEmbedding {attrs}")


# ---- GroupQueryAttention --------------------------------------------------------------------------------------

def gqa_case(seed, dtype):
    rng = np.random.default_rng(seed)
    kv = int(rng.choice([1, 2]))
    heads = kv * int(rng.choice([1, 2, 4]))
    rotary = seed % 3 == 1 or seed % 8 == 0
    # onnxruntime's rotary path needs head sizes that are multiples of 16 and cache widths multiples of 8.
    head = int(rng.choice([16, 32])) if rotary else int(rng.choice([8, 16]))
    mode = ["prompt", "decode", "chunk"][seed % 3]
    b = 1 if mode == "chunk" else int(rng.integers(1, 4))
    s = 1 if mode == "decode" else int(rng.integers(2, 6))
    past_buffer = 0 if mode == "prompt" else int(rng.integers(1, 6))
    if mode == "prompt":
        totals = rng.integers(1, s + 1, size=b) if seed % 2 else np.full(b, s)
        totals[0] = s  # total_sequence_length is at least the sequence length
    else:
        totals = np.minimum(rng.integers(1, past_buffer + 1, size=b), past_buffer) + s
        totals[0] = past_buffer + s
    total = int(totals.max())
    attrs = {"num_heads": heads, "kv_num_heads": kv}
    if seed % 4 == 1:
        attrs["local_window_size"] = int(rng.integers(1, 4))
    if seed % 5 == 2:
        attrs["softcap"] = float(rng.uniform(1.0, 5.0))
    if seed % 7 == 3:
        attrs["scale"] = float(rng.uniform(0.05, 0.5))
    if seed % 6 == 4:
        attrs["smooth_softmax"] = 1
    q = rng.standard_normal((b, s, heads * head)).astype(dtype)
    k = rng.standard_normal((b, s, kv * head)).astype(dtype)
    v = rng.standard_normal((b, s, kv * head)).astype(dtype)
    past_k = rng.standard_normal((b, kv, past_buffer, head)).astype(dtype) if mode != "prompt" else None
    past_v = rng.standard_normal((b, kv, past_buffer, head)).astype(dtype) if mode != "prompt" else None
    feeds = [("query", q), ("key", k), ("value", v)]
    if seed % 4 == 2:
        feeds = [("query", np.concatenate([q, k, v], axis=2)), ("key", None), ("value", None)]
    feeds += [("past_key", past_k), ("past_value", past_v), ("seqlens_k", (totals - 1).astype(np.int32)),
              ("total_sequence_length", np.array(total, np.int32))]
    optional = {"cos": None, "sin": None, "position_ids": None, "attention_bias": None}
    if rotary:
        attrs["do_rotary"] = 1
        attrs["rotary_interleaved"] = int(seed % 2)
        half = head // 2 if seed % 5 else 8
        optional["cos"] = rng.standard_normal((total + 4, half)).astype(dtype)
        optional["sin"] = rng.standard_normal((total + 4, half)).astype(dtype)
    if seed % 9 == 5:
        optional["attention_bias"] = rng.standard_normal((b, 1, s, total)).astype(dtype)
    feeds += list(optional.items())
    return feeds, attrs, totals, s


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("seed", range(36))
def test_group_query_attention(seed, dtype):
    feeds, attrs, totals, s = gqa_case(seed, dtype)
    model = helpers.one_node_model("GroupQueryAttention", feeds, (True, True, True), attrs, MS)
    got = helpers.run_feeds(nxrt, model, feeds)
    want = helpers.run_feeds(onnxruntime, model, feeds)
    assert [g.shape for g in got] == [w.shape for w in want]
    for entry, total in enumerate(totals):
        valid = min(s, int(total))
        compare(got[0][entry, :valid], want[0][entry, :valid], dtype, f"output entry {entry} {attrs}")
        for name, g, w in (("present_key", got[1], want[1]), ("present_value", got[2], want[2])):
            compare(g[entry, :, :total], w[entry, :, :total], dtype, f"{name} entry {entry} {attrs}")


@pytest.mark.parametrize("case", ["prompt", "padded prompt", "chunk after past", "local window", "late NaN value"])
def test_group_query_attention_long_prompts_in_several_row_blocks(case):
    # Prompts longer than one block of query rows (each block attends only up to its last row's position, unless
    # a value row past it is NaN: P V is one product over all keys, and 0 * NaN reaches every row, as onnxruntime's).
    rng = np.random.default_rng(11)
    past = 37 if case == "chunk after past" else 0
    b, s, heads, kv, head = 1 if past else 2, 150, 4, 2, 16  # onnxruntime takes a chunk after a past at batch 1
    q, k, v = (rng.standard_normal((b, s, n * head)).astype(np.float32) for n in (heads, kv, kv))
    if case == "late NaN value":
        v[1, 140, 3] = np.nan  # entry 1, key / value head 0, hidden from rows 0-139
    totals = np.full(b, past + s)
    if case == "padded prompt":
        totals[1] = 90  # the second entry's last 60 rows are padding
    past_kv = [rng.standard_normal((b, kv, past, head)).astype(np.float32) for _ in range(2)] if past else [None] * 2
    feeds = [("query", q), ("key", k), ("value", v), ("past_key", past_kv[0]), ("past_value", past_kv[1]),
             ("seqlens_k", (totals - 1).astype(np.int32)), ("total_sequence_length", np.array(past + s, np.int32)),
             ("cos", None), ("sin", None), ("position_ids", None), ("attention_bias", None)]
    attrs = {"num_heads": heads, "kv_num_heads": kv}
    if case == "local window":
        attrs["local_window_size"] = 70
    model = helpers.one_node_model("GroupQueryAttention", feeds, (True, True, True), attrs, MS)
    got = helpers.run_feeds(nxrt, model, feeds)
    want = helpers.run_feeds(onnxruntime, model, feeds)
    if case == "late NaN value":
        # Column 3 of the heads that read key / value head 0 (heads 0 and 1), in every row; nothing else.
        assert np.isnan(want[0][1, :, [3, head + 3]]).all() and np.isnan(want[0]).sum() == 2 * s
    for entry, total in enumerate(totals):
        valid = min(s, int(total) - past)
        compare(got[0][entry, :valid], want[0][entry, :valid], np.float32, f"{case} output entry {entry}")
        for g, w in ((got[1], want[1]), (got[2], want[2])):
            compare(g[entry, :, :total], w[entry, :, :total], np.float32, f"{case} present entry {entry}")


def small_prompt(rng, b, s, heads, kv, head):
    q, k, v = (rng.standard_normal((b, s, n * head)).astype(np.float32) for n in (heads, kv, kv))
    return [("query", q), ("key", k), ("value", v), ("past_key", None), ("past_value", None),
            ("seqlens_k", np.full(b, s - 1, np.int32)), ("total_sequence_length", np.array(s, np.int32)),
            ("cos", None), ("sin", None), ("position_ids", None), ("attention_bias", None)]


def causal_reference(q, k, v, heads, kv, sink=None):
    """Prompt attention in float64: q [B, S, N, H], k / v [B, S, Nk, H]; the sink joins each denominator."""
    b, s, _, head = q.shape
    out = np.zeros(q.shape)
    for entry in range(b):
        for n in range(heads):
            g = n // (heads // kv)
            for t in range(s):
                scores = k[entry, :t + 1, g] @ q[entry, t, n] / np.sqrt(head)
                top = scores.max() if sink is None else max(scores.max(), sink[n])
                e = np.exp(scores - top)
                total = e.sum() + (0 if sink is None else np.exp(sink[n] - top))
                out[entry, t, n] = e / total @ v[entry, :t + 1, g]
    return out.reshape(b, s, heads * head)


def test_group_query_attention_head_sink():
    rng = np.random.default_rng(3)
    b, s, heads, kv, head = 2, 3, 4, 2, 8
    feeds = small_prompt(rng, b, s, heads, kv, head) + [("head_sink", rng.standard_normal(heads).astype(np.float32))]
    model = helpers.one_node_model("GroupQueryAttention", feeds, (True, True, True),
                                   {"num_heads": heads, "kv_num_heads": kv}, MS)
    got = helpers.run_feeds(nxrt, model, feeds)
    want = helpers.run_feeds(onnxruntime, model, feeds)
    for g, w in zip(got, want):
        compare(g, w, np.float32, "head_sink")


def test_group_query_attention_qk_norm_against_numpy():
    """onnxruntime's CPU kernel refuses q_norm_weight / k_norm_weight: numpy reference (per-head RMS norm of the
    queries and new keys, also in present_key)."""
    rng = np.random.default_rng(4)
    b, s, heads, kv, head = 2, 3, 4, 2, 8
    feeds = small_prompt(rng, b, s, heads, kv, head)
    q_weight, k_weight = (rng.uniform(0.5, 1.5, head).astype(np.float32) for _ in range(2))
    feeds += [("head_sink", None), ("k_scale", None), ("v_scale", None), ("q_norm_weight", q_weight),
              ("k_norm_weight", k_weight)]
    model = helpers.one_node_model("GroupQueryAttention", feeds, (True, True, True),
                                   {"num_heads": heads, "kv_num_heads": kv, "qk_norm_epsilon": 1e-5}, MS)
    got = helpers.run_feeds(nxrt, model, feeds)

    def rms(x, weight):
        return x / np.sqrt((x.astype(np.float64) ** 2).mean(-1, keepdims=True) + 1e-5) * weight

    q = rms(feeds[0][1].reshape(b, s, heads, head), q_weight)
    k = rms(feeds[1][1].reshape(b, s, kv, head), k_weight)
    v = feeds[2][1].reshape(b, s, kv, head)
    compare(got[0], causal_reference(q, k, v, heads, kv), np.float32, "qk norm output")
    compare(got[1], k.transpose(0, 2, 1, 3), np.float32, "qk norm present_key")


@pytest.mark.parametrize("case", ["seqlens beyond total", "past too short", "heads", "quantized cache"])
def test_group_query_attention_errors_name_the_node(case):
    b, s, heads, kv, head = 1, 2, 2, 1, 4
    attrs = {"num_heads": heads, "kv_num_heads": kv}
    seqlens = np.array([s - 1], np.int32)
    past = None
    if case == "seqlens beyond total":
        seqlens = np.array([s + 3], np.int32)
    elif case == "past too short":
        seqlens = np.array([s + 3], np.int32)
        past = np.zeros((b, kv, 1, head), np.float32)
    elif case == "heads":
        attrs["kv_num_heads"] = 3
    else:
        attrs["k_quant_type"] = "PER_TENSOR"
    total = np.array(int(seqlens[0]) + 1 if case == "past too short" else s, np.int32)
    feeds = [("query", np.zeros((b, s, heads * head), np.float32)), ("key", np.zeros((b, s, kv * head), np.float32)),
             ("value", np.zeros((b, s, kv * head), np.float32)), ("past_key", past), ("past_value", past),
             ("seqlens_k", seqlens), ("total_sequence_length", total)]
    model = helpers.one_node_model("GroupQueryAttention", feeds, (True, True, True), attrs, MS)
    with pytest.raises(Exception, match="GroupQueryAttention"):
        helpers.run_feeds(nxrt, model, feeds)
