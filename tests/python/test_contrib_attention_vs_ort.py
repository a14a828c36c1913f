"""Differential tests for com.microsoft Attention against onnxruntime (float32 and float16) on random shapes, masks,
caches and attributes, and ONNX Runtime GenAI's test model tiny-random-gpt2-fp32 (EmbedLayerNormalization,
Attention with the past_%d cache, SkipLayerNormalization, FastGelu): 32 greedy steps give the same tokens as
onnxruntime, with logits within 1e-4."""

import pathlib

import numpy as np
import onnxruntime
import pytest

import helpers
import nxrt

MS = "com.microsoft"
GPT2 = pathlib.Path(__file__).resolve().parents[3] / "shared" / "genai" / "tiny-random-gpt2-fp32" / "past.onnx"
LOWEST = float(np.finfo(np.float32).min)


def attention_model(feeds, attrs, constants, with_present):
    return helpers.one_node_model("Attention", feeds, (True, with_present), attrs, MS, constants)


run = helpers.run_feeds


def random_mask(rng, form, b, s, t, past):
    if form == "none":
        return None
    if form == "raw2d":
        return (rng.random((b, t)) < 0.8).astype(np.int32)
    if form == "raw3d":
        return (rng.random((b, s, t)) < 0.8).astype(np.int32)
    ends = rng.integers(1, t + 1, size=b).astype(np.int32)
    if form == "end":
        return ends
    starts = np.minimum(rng.integers(0, t, size=b), ends - 1).astype(np.int32)
    return np.concatenate([ends, starts])


def attention_case(seed, dtype):
    rng = np.random.default_rng(seed)
    b, s = int(rng.integers(1, 4)), int(rng.integers(1, 7))
    heads, head = int(rng.integers(1, 4)), int(rng.choice([4, 8, 16]))
    hidden_in = int(rng.integers(3, 20))
    past_len = int(rng.integers(1, 6)) if seed % 3 == 0 else 0
    t = past_len + s
    sizes = (heads * head, heads * head, heads * head)
    attrs = {"num_heads": heads}
    if seed % 5 == 2 and past_len == 0:
        sizes = (heads * head, heads * head, heads * int(rng.choice([2, 4, 12])))
        attrs["qkv_hidden_sizes"] = list(sizes)
    if seed % 2:
        attrs["unidirectional"] = 1
    if seed % 7 == 3:
        attrs["scale"] = float(rng.uniform(0.05, 0.5))
    form = ["none", "raw2d", "raw3d", "end", "end_start"][seed % 5]
    if form in ("end", "end_start") and attrs.get("unidirectional"):
        form = "raw2d"
    if seed % 4 == 0:
        attrs["mask_filter_value"] = LOWEST
    x = rng.standard_normal((b, s, hidden_in)).astype(dtype)
    w = (rng.standard_normal((hidden_in, sum(sizes))) / np.sqrt(hidden_in)).astype(dtype)
    bias = rng.standard_normal(sum(sizes)).astype(dtype) if seed % 6 != 5 else None
    past = rng.standard_normal((2, b, heads, past_len, head)).astype(dtype) if past_len else None
    attention_bias = None
    if seed % 4 == 3 and past is None:  # onnxruntime refuses past with attention_bias
        attention_bias = rng.standard_normal((int(rng.choice([1, b])), int(rng.choice([1, heads])), s, t)).astype(dtype)
    feeds = [("x", x), ("w", w), ("bias", bias), ("mask", random_mask(rng, form, b, s, t, past_len)), ("past", past),
             ("attention_bias", attention_bias)]
    constants = ("w", "bias") if seed % 2 == 0 else ()
    with_present = (past is not None or seed % 3 == 1) and sizes[1] == sizes[2]
    return feeds, attrs, constants, with_present


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("seed", range(40))
def test_attention_matches_onnxruntime(seed, dtype):
    feeds, attrs, constants, with_present = attention_case(seed, dtype)
    model = attention_model(feeds, attrs, constants, with_present)
    got = run(nxrt, model, feeds, constants)
    want = run(onnxruntime, model, feeds, constants)
    tol = 2e-5 if dtype == np.float32 else 2e-2
    assert len(got) == len(want)
    for name, g, w in zip(("output", "present"), got, want):
        assert g.shape == w.shape, f"{name}: {g.shape} vs {w.shape} ({attrs})"
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol,
                                   err_msg=f"{name} {attrs}")


def test_attention_fully_masked_rows_average_the_values():
    """A row whose keys are all hidden: with the filter at float's lowest, every key gets the same weight (as in
    onnxruntime), not NaN."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 8)).astype(np.float32)
    w = rng.standard_normal((8, 24)).astype(np.float32)
    mask = np.zeros((1, 3), np.int32)
    feeds = [("x", x), ("w", w), ("bias", None), ("mask", mask)]
    model = attention_model(feeds, {"num_heads": 2, "mask_filter_value": LOWEST}, (), False)
    (got,) = run(nxrt, model, feeds, ())
    (want,) = run(onnxruntime, model, feeds, ())
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["4-D mask", "share buffer", "bad past", "bad mask", "present of unequal heads"])
def test_attention_errors_name_the_node(case):
    x = np.zeros((1, 2, 8), np.float32)
    w = np.zeros((8, 24), np.float32)
    attrs = {"num_heads": 2}
    feeds = [("x", x), ("w", w), ("bias", None)]
    if case == "4-D mask":
        feeds.append(("mask", np.ones((1, 1, 2, 2), np.int32)))
    elif case == "share buffer":
        attrs["past_present_share_buffer"] = 1
    elif case == "bad past":
        feeds += [("mask", None), ("past", np.zeros((2, 1, 3, 1, 4), np.float32))]
    elif case == "bad mask":
        feeds.append(("mask", np.ones((4,), np.int32)))
    else:
        attrs["qkv_hidden_sizes"] = [8, 8, 4]
        feeds[1] = ("w", np.zeros((8, 20), np.float32))
    model = attention_model(feeds, attrs, (), case == "present of unequal heads")
    with pytest.raises(Exception, match="Attention"):
        session = nxrt.InferenceSession(model)
        session.run(None, {k: v for k, v in feeds if v is not None})


# ---- ONNX Runtime GenAI's tiny GPT-2 -------------------------------------------------------------------------

def greedy(session, prompt, steps):
    """Greedy decoding with the past_%d cache, batch entries left-padded to one length (pad id 98, mask 0)."""
    batch = len(prompt)
    length = max(len(p) for p in prompt)
    ids = np.full((batch, length), 98, np.int32)
    mask = np.zeros((batch, length), np.int32)
    for i, p in enumerate(prompt):
        ids[i, length - len(p):] = p
        mask[i, length - len(p):] = 1
    positions = np.maximum(np.cumsum(mask, axis=1) - 1, 0).astype(np.int32)
    past = {f"past_{i}": np.zeros((2, batch, 4, 0, 8), np.float32) for i in range(5)}
    tokens, all_logits = [], []
    for _ in range(steps):
        out = session.run(None, {"input_ids": ids, "position_ids": positions, "attention_mask": mask, **past})
        logits = out[0][:, -1, :]
        all_logits.append(logits)
        next_ids = logits.argmax(axis=-1)
        tokens.append(next_ids)
        past = {f"past_{i}": out[1 + i] for i in range(5)}
        ids = next_ids[:, None].astype(np.int32)
        positions = positions[:, -1:] + 1
        mask = np.concatenate([mask, np.ones((batch, 1), np.int32)], axis=1)
    return np.stack(tokens, axis=1), np.stack(all_logits, axis=1)


@pytest.mark.skipif(not GPT2.exists(), reason=f"the shared genai fixture is not at {GPT2}")
def test_tiny_gpt2_greedy_matches_onnxruntime():
    prompt = [[11, 500, 23, 999, 7], [42, 3]]
    ours = nxrt.InferenceSession(str(GPT2))
    theirs = onnxruntime.InferenceSession(str(GPT2), providers=["CPUExecutionProvider"])
    got_tokens, got_logits = greedy(ours, prompt, 32)
    want_tokens, want_logits = greedy(theirs, prompt, 32)
    np.testing.assert_allclose(got_logits, want_logits, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(got_tokens, want_tokens)
