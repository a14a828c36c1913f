"""Differential tests for com.microsoft SparseAttention against a numpy reference and onnxruntime (float32 and
float16): random block layouts (sparse and dense, one or several per model), prompt and decode steps with
per-entry key lengths, packed and separate Q / K / V, rotary or not. onnxruntime's CPU kernel needs the present
caches to be the past buffers, so both runtimes run through IO binding with one OrtValue bound as past and present;
nxrt also runs plainly (separate buffers) and must agree with itself. Every output row and every cache row is
compared.

onnxruntime 1.32's CPU kernel writes each head's probabilities at a stride of total_sequence_length but reads them
back at a stride of the entry's own key length, so when an entry's key length is below total_sequence_length its
heads after the first attend with another head's probabilities. nxrt is compared with onnxruntime only where every
key length equals total_sequence_length, and with the numpy reference everywhere."""

import numpy as np
import onnxruntime
import pytest

import helpers
import nxrt

MS = "com.microsoft"
TOLERANCE = {np.float32: 3e-5, np.float16: 2e-2}


def random_layouts(rng, count, blocks, dense):
    """`count` lower-triangular block masks in CSR form (the diagonal always kept), column arrays padded with -1."""
    masks = []
    for _ in range(count):
        mask = np.tril(np.ones((blocks, blocks), np.int32))
        if not dense:
            mask &= (rng.random((blocks, blocks)) < 0.5).astype(np.int32)
            np.fill_diagonal(mask, 1)
        masks.append(mask)
    nnz = max(int(m.sum()) for m in masks)
    rows = np.zeros((count, blocks + 1), np.int32)
    cols = np.full((count, nnz), -1, np.int32)
    for i, mask in enumerate(masks):
        listed = [c for r in range(blocks) for c in np.nonzero(mask[r])[0]]
        rows[i, 1:] = np.cumsum(mask.sum(axis=1))
        cols[i, :len(listed)] = listed
    return rows, cols


def sparse_case(seed, dtype):
    rng = np.random.default_rng(seed)
    kv = int(rng.choice([1, 2]))
    heads = kv * int(rng.choice([1, 2, 4]))
    head = int(rng.choice([16, 32]))
    block = int(rng.choice([16, 32]))
    blocks = int(rng.integers(2, 5))
    max_length = block * blocks
    capacity = max_length + int(rng.integers(0, 9))
    b = int(rng.integers(1, 4))
    prompt = seed % 3 == 0
    if prompt:
        s = int(rng.integers(1, max_length + 1))
        lengths = np.full(b, s, np.int32)
    else:
        s = int(rng.choice([1, 1, 2, 3]))
        lengths = rng.integers(s, max_length + 1, size=b).astype(np.int32)
        if seed % 3 == 1:  # every entry as long as the longest: the case onnxruntime computes correctly
            lengths[:] = lengths.max()
    total = s if prompt else int(lengths.max())
    layouts = int(rng.choice([d for d in (1, 2, 4) if heads % d == 0]))
    rows, cols = random_layouts(rng, layouts, blocks, dense=seed % 5 == 4)
    packed = seed % 4 == 1
    rotary = seed % 2 == 0
    attrs = {"num_heads": heads, "kv_num_heads": kv, "sparse_block_size": block, "do_rotary": int(rotary),
             "rotary_interleaved": int(rotary and seed % 4 == 2)}
    if seed % 7 == 3:
        attrs["scale"] = 0.3
    query = rng.standard_normal((b, s, (heads + 2 * kv) * head if packed else heads * head)).astype(dtype)
    key = None if packed else rng.standard_normal((b, s, kv * head)).astype(dtype)
    value = None if packed else rng.standard_normal((b, s, kv * head)).astype(dtype)
    past_key = rng.standard_normal((b, kv, capacity, head)).astype(dtype)
    past_value = rng.standard_normal((b, kv, capacity, head)).astype(dtype)
    cos = sin = None
    if rotary:
        half = int(rng.choice([d for d in (8, 16) if d <= head // 2]))
        angles = rng.uniform(0, np.pi, size=(max_length + 4, half))
        cos, sin = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
    feeds = [("query", query), ("key", key), ("value", value), ("past_key", past_key), ("past_value", past_value),
             ("block_row_indices", rows), ("block_col_indices", cols), ("total_sequence_length", np.array(total, np.int32)),
             ("key_total_sequence_lengths", lengths), ("cos_cache", cos), ("sin_cache", sin)]
    return feeds, attrs


def run_shared(runtime, model, feeds):
    """Runs with past_key / past_value bound as present_key / present_value too; returns output, key and value."""
    session = runtime.InferenceSession(model, providers=["CPUExecutionProvider"])
    return helpers.run_with_caches_in_place(runtime, session, dict(feeds), {"past_key": "out1", "past_value": "out2"},
                                            ["out0"])


def rotate(x, cos, sin, position, interleaved):
    half = cos.shape[1]
    x = x.copy()
    if interleaved:
        x1, x2 = x[0:2 * half:2].copy(), x[1:2 * half:2].copy()
        x[0:2 * half:2] = x1 * cos[position] - x2 * sin[position]
        x[1:2 * half:2] = x2 * cos[position] + x1 * sin[position]
    else:
        x1, x2 = x[:half].copy(), x[half:2 * half].copy()
        x[:half] = x1 * cos[position] - x2 * sin[position]
        x[half:2 * half] = x2 * cos[position] + x1 * sin[position]
    return x


def reference(feeds, attrs):
    """SparseAttention in float64 from its contract: output, present_key, present_value."""
    f = {name: (None if value is None else np.asarray(value, np.float64) if value.dtype.kind == "f" else value)
         for name, value in feeds}
    heads, kv, block = attrs["num_heads"], attrs["kv_num_heads"], attrs["sparse_block_size"]
    b_count, s_count, width = f["query"].shape
    packed = f["key"] is None
    head = width // (heads + 2 * kv) if packed else width // heads
    query = f["query"].reshape(b_count, s_count, -1, head)
    keys = query[:, :, heads:heads + kv] if packed else f["key"].reshape(b_count, s_count, kv, head)
    values = query[:, :, heads + kv:] if packed else f["value"].reshape(b_count, s_count, kv, head)
    present_key, present_value = f["past_key"].copy(), f["past_value"].copy()
    total = int(f["total_sequence_length"])
    lengths = f["key_total_sequence_lengths"]
    rows, cols = f["block_row_indices"], f["block_col_indices"]
    blocks = rows.shape[1] - 1
    scale = attrs.get("scale", 1.0 / np.sqrt(head))
    rotary, interleaved = attrs["do_rotary"], attrs["rotary_interleaved"]
    output = np.zeros((b_count, s_count, heads, head))
    for b in range(b_count):
        past = 0 if total == s_count else int(lengths[b]) - s_count
        t = int(lengths[b])
        for s in range(s_count):
            for g in range(kv):
                k = keys[b, s, g]
                if rotary:
                    k = rotate(k, f["cos_cache"], f["sin_cache"], past + s, interleaved)
                present_key[b, g, past + s] = k
                present_value[b, g, past + s] = values[b, s, g]
        for n in range(heads):
            g, layout = n // (heads // kv), n % rows.shape[0]
            sparse = rows[layout, -1] < blocks * (blocks + 1) // 2
            for s in range(s_count):
                position = past + s
                q = query[b, s, n]
                if rotary:
                    q = rotate(q, f["cos_cache"], f["sin_cache"], position, interleaved)
                scores = scale * (present_key[b, g, :t] @ q)
                scores[min(position + 1, t):] = -np.inf
                r = position // block
                listed = cols[layout, rows[layout, r]:rows[layout, r + 1]]
                if sparse and len(listed) != r + 1:
                    hidden = ~np.isin(np.arange(t) // block, listed)
                    hidden[min(position + 1, t):] = False
                    scores[hidden] = np.finfo(np.float32).min
                probs = np.exp(scores - scores.max())
                output[b, s, n] = (probs / probs.sum()) @ present_value[b, g, :t]
    return output.reshape(b_count, s_count, heads * head), present_key, present_value


def compare(got, want, dtype, what):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=TOLERANCE[dtype],
                               atol=TOLERANCE[dtype], err_msg=what)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("seed", range(30))
def test_sparse_attention(seed, dtype):
    feeds, attrs = sparse_case(seed, dtype)
    model = helpers.one_node_model("SparseAttention", feeds, (True, True, True), attrs, MS)
    ours = run_shared(nxrt, model, feeds)
    plain = helpers.run_feeds(nxrt, model, feeds)
    for name, got, same, want in zip(("output", "present_key", "present_value"), ours, plain, reference(feeds, attrs)):
        compare(got, want, dtype, f"{name} vs numpy, {attrs}")
        np.testing.assert_array_equal(same, got, err_msg=f"{name}: separate buffers vs shared, {attrs}")
    f = dict(feeds)
    if np.all(f["key_total_sequence_lengths"] == f["total_sequence_length"]):
        for name, got, want in zip(("output", "present_key", "present_value"), ours,
                                   run_shared(onnxruntime, model, feeds)):
            compare(got, want, dtype, f"{name} vs onnxruntime, {attrs}")


def test_sparse_attention_masks_follow_the_layout():
    # One head, block 16, 3 blocks; layout row 2 lists blocks 0 and 2 only: the queries of block 2 must not see the
    # keys of block 1. Checked against numpy on a prompt of 48 tokens with V = one-hot positions.
    s, head = 48, 16
    rows = np.array([[0, 1, 3, 5]], np.int32)
    cols = np.array([[0, 0, 1, 0, 2]], np.int32)
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, s, head)).astype(np.float32)
    k = rng.standard_normal((1, s, head)).astype(np.float32)
    v = np.zeros((1, s, head), np.float32)
    v[0, :, :] = (np.arange(s)[:, None] % head == np.arange(head)[None, :]) * (1.0 + np.arange(s)[:, None] // head)
    feeds = [("query", q), ("key", k), ("value", v), ("past_key", np.zeros((1, 1, s, head), np.float32)),
             ("past_value", np.zeros((1, 1, s, head), np.float32)), ("block_row_indices", rows),
             ("block_col_indices", cols), ("total_sequence_length", np.array(s, np.int32)),
             ("key_total_sequence_lengths", np.array([s], np.int32))]
    model = helpers.one_node_model("SparseAttention", feeds, (True, True, True),
                                   {"num_heads": 1, "kv_num_heads": 1, "sparse_block_size": 16}, MS)
    got = run_shared(nxrt, model, feeds)[0][0]
    scores = (q[0] @ k[0].T) / np.sqrt(head)
    allowed = np.tril(np.ones((s, s), bool))
    allowed[32:, 16:32] = False
    scores = np.where(allowed, scores, -np.inf)
    probs = np.exp(scores - scores.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(got, probs @ v[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", ["column outside the mask", "rows decreasing", "length beyond total",
                                  "heads not a multiple of layouts"])
def test_sparse_attention_errors_name_the_node(case):
    feeds, attrs = sparse_case(1, np.float32)
    feeds = dict(feeds)
    if case == "column outside the mask":
        feeds["block_col_indices"] = feeds["block_col_indices"].copy()
        feeds["block_col_indices"][0, 0] = 99
    elif case == "rows decreasing":
        feeds["block_row_indices"] = feeds["block_row_indices"].copy()
        feeds["block_row_indices"][0, 1] = feeds["block_row_indices"][0, -1] + 1
    elif case == "length beyond total":
        feeds["key_total_sequence_lengths"] = feeds["key_total_sequence_lengths"] + 1000
    else:
        attrs = dict(attrs, num_heads=3 * attrs["kv_num_heads"])
        feeds["block_row_indices"] = np.tile(feeds["block_row_indices"][:1], (4, 1))
        feeds["block_col_indices"] = np.tile(feeds["block_col_indices"][:1], (4, 1))
        width = 3 * attrs["kv_num_heads"] + 2 * attrs["kv_num_heads"]
        head = feeds["past_key"].shape[3]
        feeds["query"] = np.zeros(feeds["query"].shape[:2] + (width * head,), np.float32)
    feeds = list(feeds.items())
    model = helpers.one_node_model("SparseAttention", feeds, (True, True, True), attrs, MS)
    with pytest.raises(Exception, match="SparseAttention"):
        helpers.run_feeds(nxrt, model, feeds)
