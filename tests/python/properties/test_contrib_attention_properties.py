"""com.microsoft attention ops on generated inputs (Attention, MultiHeadAttention, GroupQueryAttention,
QAttention, SparseAttention) against onnxruntime's CPU provider (contrib_harness; onnx.reference has none of them),
at float32 and float16 (onnxruntime's CPU types; the schemas also list bfloat16, which onnxruntime's CPU kernels
lack: SparseAttention's bfloat16 is compared with the spec's formula in float64, contrib_spec.sparse_attention).

Values: ordinary numbers in [-3, 3] mixed with +-0 and subnormals, and NaN in the values (a NaN in one of an
entry's first T_b value rows reaches every output row of the heads that read it, keys the masks hide included: P V
is a product, and 0 * NaN is NaN); SparseAttention's arrays also hold NaN in queries and keys. Infinities are left out:
an infinite score makes the softmax inf - inf, and whether a masked or causally hidden infinite key reaches the sum
depends on where each runtime applies the mask (before the product or as an additive -10000), which the schemas
leave open.

Tolerance: each output is a softmax-weighted sum of values. The scores are sums of head-size products rounded
in float32 in each runtime's own order (onnxruntime's MLAS uses fused multiply-adds) and its exponentials are
approximations of a few ulps: a score error of ~head * 2^-23 * |q| |k| moves a weight by that relative amount,
so outputs may differ by 3e-5 * max|V| (float32; the existing tests' bound) or 2e-2 * max|V| in float16, where
both runtimes round the scores or probabilities to float16 at different steps. Against the float64 formula
(bfloat16), nxrt computes in float32 and rounds once: half an ulp of bfloat16 (2^-9) of max|V| plus the float32
error, within 8e-3 * max|V|."""

import math

import ml_dtypes
import numpy as np
import onnxruntime
import pytest
from hypothesis import given
from hypothesis import strategies as st

import contrib_spec
import helpers
import known_differences
from contrib_harness import BF16, F16, F32, check_contrib, contrib_model
from property_harness import SETTINGS, feeds_of, run_nxrt
from property_values import arrays, special_values

TYPES = [F32, F16]
SCALE_OF_V = {F32: 3e-5, F16: 2e-2, BF16: 8e-3}


def edge_values(dtype, nan=True):
    """+-0, subnormals and the other special values of `dtype` of magnitude at most 1, and NaN when `nan`."""
    return [v for v in special_values(dtype) if (nan and math.isnan(v)) or abs(v) <= 1.0]


def values(dtype):
    # Without NaN: a NaN in a query or key makes a score NaN, and whether a masked NaN score reaches the softmax
    # depends on where each runtime applies the mask (nxrt sets hidden scores, onnxruntime adds -10000 to some).
    # NaN values come from with_nan_value.
    return st.one_of(st.sampled_from(edge_values(dtype, nan=False)), st.floats(-3, 3, width=16))


def with_nan_value(data, a, label):
    """`a` (a value tensor: V or a past V) with one drawn element set to NaN, in about a third of the cases. P V is
    one product over all of an entry's keys: the NaN reaches every output row of the heads that read the key, keys
    the masks hide included (0 * NaN), in both runtimes."""
    if a is None or a.size == 0 or data.draw(st.integers(0, 2), label=f"{label} NaN") != 0:
        return a
    a = a.copy()
    a.reshape(-1)[data.draw(st.integers(0, a.size - 1), label=f"{label} NaN index")] = np.nan
    return a


def largest_magnitude(*tensors):
    """The largest finite |element| of the tensors, at least 1."""
    return max([1.0] + [float(np.max(np.abs(np.nan_to_num(v.astype(np.float64), posinf=0, neginf=0))))
                        for v in tensors if v is not None and v.size])


def tolerance(dtype, *value_tensors):
    """(rtol, atol) of the outputs: SCALE_OF_V[dtype] times the largest finite |value| (at least 1)."""
    return SCALE_OF_V[dtype], SCALE_OF_V[dtype] * largest_magnitude(*value_tensors)


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
    weights[:, 2 * hidden:] = with_nan_value(data, weights[:, 2 * hidden:], "value weights")
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
    value, past_kv[1] = with_nan_value(data, value, "value"), with_nan_value(data, past_kv[1], "past_value")
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
    value, past_kv[1] = with_nan_value(data, value, "value"), with_nan_value(data, past_kv[1], "past_value")
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


# SparseAttention. onnxruntime's CPU kernel needs past and present caches to be one buffer (io binding), a head
# size that is a multiple of 8 (of 16, and rotary halves a multiple of 8, with do_rotary), and is wrong in a step
# where an entry's key length T_b is below total_sequence_length: it writes the probabilities of (entry, head) i
# at i * S * total_sequence_length and reads them back at i * S * T_b, so from the first such pair on the heads
# attend with other heads' (or unwritten) probabilities (1.32: differences of 1 to 3 in outputs within [-3, 3]);
# a right-padded prompt row also takes its softmax over more scores than its row holds. Those steps, and bfloat16
# (no CPU kernel), are compared with the spec's formula in float64 (contrib_spec.sparse_attention).
SPARSE_BLOCK_SIZES = [16, 32]  # the schema's choices (16, 32, 64, 128); the small ones keep the cases small
SPARSE_MAX_TOKENS = 40


def seeded_array(data, dtype, shape, label, bound=3.0, specials=True):
    """An array of `shape`: numbers in [-bound, bound] (float16 values, as `values` draws them) from a drawn seed,
    with up to four drawn elements set to edge values (NaN, +-0, subnormals, ...) when `specials`. The caches hold
    thousands of elements, and an `arrays` strategy draws each one through hypothesis (seconds per case)."""
    seed = data.draw(st.integers(0, 2 ** 32 - 1), label=f"{label} seed")
    a = np.random.default_rng(seed).uniform(-bound, bound, shape).astype(np.float16).astype(np.float32)
    if specials and a.size:
        picks = data.draw(st.lists(st.tuples(st.integers(0, a.size - 1), st.sampled_from(edge_values(dtype))),
                                   max_size=4),
                          label=f"{label} specials")
        for index, value in picks:
            a.reshape(-1)[index] = value
    return a.astype(dtype)


def block_layouts(data, count, blocks):
    """`count` block masks of `blocks` x `blocks` in CSR form: lower triangular (a block row lists blocks up to
    its own), each dense (the causal mask) or any subset, the column arrays padded on the right with -1."""
    masks = []
    for i in range(count):
        mask = np.tril(np.ones((blocks, blocks), bool))
        if not data.draw(st.booleans(), label=f"layout {i} dense"):
            mask &= data.draw(arrays(np.bool_, (blocks, blocks), st.booleans()), label=f"layout {i}")
        masks.append(mask)
    nnz = max(int(m.sum()) for m in masks)
    rows = np.zeros((count, blocks + 1), np.int32)
    cols = np.full((count, nnz), -1, np.int32)
    for i, mask in enumerate(masks):
        rows[i, 1:] = np.cumsum(mask.sum(axis=1))
        listed = np.nonzero(mask)[1]  # row by row, columns ascending
        cols[i, :len(listed)] = listed
    return rows, cols


def sparse_case(data, dtype):
    """A valid SparseAttention step: (inputs, attrs, key lengths, whether onnxruntime computes it). A prompt
    (total_sequence_length = S; entries right-padded to their own lengths, the first one full) or a step of S new
    tokens after a past (every entry at least S keys, the first one total_sequence_length)."""
    kv_heads = data.draw(st.integers(1, 2), label="kv heads")
    heads = kv_heads * data.draw(st.sampled_from([1, 2]), label="group")
    layouts = data.draw(st.sampled_from([n for n in (1, 2, 4) if heads % n == 0]), label="layouts")
    block = data.draw(st.sampled_from(SPARSE_BLOCK_SIZES), label="sparse_block_size")
    mode = data.draw(st.sampled_from(["prompt", "decode", "chunk"]), label="mode")
    batch = data.draw(st.integers(1, 2), label="B")
    if mode == "prompt":
        seq = total = data.draw(st.integers(1, SPARSE_MAX_TOKENS), label="S")
        lengths = [seq] + [data.draw(st.integers(1, seq), label="length") for _ in range(batch - 1)]
    else:
        seq = 1 if mode == "decode" else data.draw(st.integers(2, 3), label="S")
        total = data.draw(st.integers(seq + 1, SPARSE_MAX_TOKENS), label="total_sequence_length")
        lengths = [total] + [data.draw(st.integers(seq, total), label="length") for _ in range(batch - 1)]
    if data.draw(st.booleans(), label="equal lengths"):
        lengths = [total] * batch
    peer = dtype != BF16 and all(t == total for t in lengths)
    rotary = data.draw(st.booleans(), label="do_rotary")
    if peer:
        head = data.draw(st.sampled_from([16, 32] if rotary else [8, 16]), label="head")
        half = data.draw(st.sampled_from([8, 16][:head // 16]), label="rotary half") if rotary else 0
    else:
        head = data.draw(st.integers(2 if rotary else 1, 16), label="head")
        half = data.draw(st.integers(1, head // 2), label="rotary half") if rotary else 0
    blocks = -(-total // block) + data.draw(st.integers(0, 1), label="extra blocks")
    capacity = total + data.draw(st.integers(0, 3), label="extra cache rows")
    rows, cols = block_layouts(data, layouts, blocks)
    draw = lambda shape, label: seeded_array(data, dtype, shape, label)  # noqa: E731
    query = draw((batch, seq, heads * head), "query")
    key, value = (draw((batch, seq, kv_heads * head), name) for name in ("key", "value"))
    if data.draw(st.booleans(), label="packed QKV"):
        query, key, value = np.concatenate([query, key, value], axis=2), None, None
    past_key, past_value = (draw((batch, kv_heads, capacity, head), name) for name in ("past_key", "past_value"))
    attrs = {"num_heads": heads, "kv_num_heads": kv_heads, "sparse_block_size": block}
    scale = data.draw(st.sampled_from([None, 0.1, 0.25]), label="scale")
    if scale is not None:
        attrs["scale"] = scale
    tables = [None, None]
    if rotary:
        attrs.update(do_rotary=1, rotary_interleaved=data.draw(st.integers(0, 1), label="rotary_interleaved"))
        positions = total + data.draw(st.integers(0, 2), label="extra rotary positions")
        tables = [seeded_array(data, dtype, (positions, half), name, bound=1.0, specials=False)
                  for name in ("cos_cache", "sin_cache")]
    inputs = [query, key, value, past_key, past_value, rows, cols, np.array(total, np.int32),
              np.array(lengths, np.int32), *tables]
    return inputs, attrs, lengths, peer


def run_onnxruntime_shared_caches(inputs, attrs):
    """onnxruntime's SparseAttention outputs, past_key / past_value bound as present_key / present_value too (its
    kernel requires one buffer each)."""
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(contrib_model("SparseAttention", inputs, attrs, 3).SerializeToString(),
                                           options, providers=["CPUExecutionProvider"])
    return helpers.run_with_caches_in_place(onnxruntime, session, feeds_of(inputs), {"x3": "y1", "x4": "y2"}, ["y0"])


@pytest.mark.parametrize("dtype", TYPES + [BF16], ids=str)
@SETTINGS
@given(data=st.data())
def test_sparse_attention(dtype, data):
    inputs, attrs, lengths, peer = sparse_case(data, dtype)
    query, key, value = inputs[:3]
    prompt = int(inputs[7]) == query.shape[1]

    def defined(outputs):
        # A right-padded prompt defines each entry's rows below its own length; the caches are defined whole (the
        # past rows not overwritten are kept).
        out, present_key, present_value = outputs
        rows = [out[b, :lengths[b] if prompt else None] for b in range(len(lengths))]
        return [np.concatenate([r.ravel() for r in rows]), present_key, present_value]
    # Output: the file's bound on a softmax-weighted sum of values. Caches: copies of the inputs, or with do_rotary
    # keys rotated in float (two products and a sum, rounded to T): within 2 ulps of T, or 4 ulps of the largest
    # |key| where the sum cancels; rtol (shared by the outputs) covers the caches, atol the output.
    eps = float(ml_dtypes.finfo(dtype).eps)
    output_atol = tolerance(dtype, value if value is not None else query, inputs[4])[1]
    key_atol = 4 * eps * largest_magnitude(key if key is not None else query) if attrs.get("do_rotary") else 0.0
    expected = run_onnxruntime_shared_caches if peer else \
        (lambda i, a: contrib_spec.sparse_attention("SparseAttention", i, a))
    check_contrib("SparseAttention", inputs, attrs, outputs=3, rtol=2 * eps, atol=[output_atol, key_atol, 0.0],
                  expected=expected, defined=defined)


SPARSE_MALFORMED = [
    "block column outside the mask", "block rows decreasing", "block rows beyond nnz", "layouts not dividing heads",
    "column layouts mismatch", "nnz beyond max_blocks^2", "key shape", "key without value", "past shapes differ",
    "past head size", "query width", "lengths shape", "total not a scalar", "total beyond the cache",
    "total beyond the block mask", "total below S", "length zero", "length beyond total", "past length negative",
    "rotary tables too short", "rotary without tables", "rotary half beyond the head", "lengths int64",
    "kv heads not dividing heads", "block size zero",
]


def malformed(name, inputs, attrs, lengths):
    """`inputs` and `attrs` with one documented constraint broken."""
    query, key, value, past_key, past_value, rows, cols, total, key_lengths = inputs[:9]
    tables = inputs[9:]
    batch, seq = query.shape[:2]
    capacity, head = past_key.shape[2:]
    rows, cols, attrs = rows.copy(), cols.copy(), dict(attrs)
    layouts, blocks = rows.shape[0], rows.shape[1] - 1
    if name == "block column outside the mask":  # block row 0 of layout 0 also lists block `blocks`
        cols = np.concatenate([np.full((layouts, 1), blocks, np.int32), cols], axis=1)
        rows[0, 1:] += 1
        rows[1:] += 1
    elif name == "block rows decreasing":
        rows[0, 0] = rows[0, 1] + 1
    elif name == "block rows beyond nnz":
        rows[0, -1] = cols.shape[1] + 1
    elif name == "layouts not dividing heads":
        rows, cols = np.tile(rows[:1], (attrs["num_heads"] + 1, 1)), np.tile(cols[:1], (attrs["num_heads"] + 1, 1))
    elif name == "column layouts mismatch":
        cols = np.concatenate([cols, cols[:1]])
    elif name == "nnz beyond max_blocks^2":
        cols = np.pad(cols, ((0, 0), (0, blocks * blocks + 1 - cols.shape[1])), constant_values=-1)
    elif name == "key shape":
        query = query[..., :attrs["num_heads"] * head]
        key = value = np.zeros((batch, seq + 1, attrs["kv_num_heads"] * head), query.dtype)
    elif name == "key without value":
        query = query[..., :attrs["num_heads"] * head]
        key, value = np.zeros((batch, seq, attrs["kv_num_heads"] * head), query.dtype), None
    elif name == "past shapes differ":
        past_value = np.zeros(past_key.shape[:2] + (capacity + 1, head), past_key.dtype)
    elif name == "past head size":
        past_key = past_value = np.zeros(past_key.shape[:3] + (head + 1,), past_key.dtype)
    elif name == "query width":
        query = np.concatenate([query, query[..., :1]], axis=2)
    elif name == "lengths shape":
        key_lengths = np.append(key_lengths, key_lengths[:1])
    elif name == "total not a scalar":
        total = np.array([total, total], np.int32)
    elif name == "total beyond the cache":
        total = np.array(capacity + 1, np.int32)
    elif name == "total beyond the block mask":
        past_key = past_value = np.zeros(past_key.shape[:2] + (blocks * attrs["sparse_block_size"] + 1, head),
                                         past_key.dtype)
        total = np.array(blocks * attrs["sparse_block_size"] + 1, np.int32)
    elif name == "total below S":
        total = np.array(seq - 1, np.int32)
    elif name == "length zero":
        key_lengths = np.array([0] + lengths[1:], np.int32)
    elif name == "length beyond total":
        key_lengths = np.array([int(total) + 1] + lengths[1:], np.int32)
    elif name == "past length negative":  # a step of 2 new tokens after a past: each entry holds at least 2 keys
        query, key, value = (None if a is None else np.repeat(a[:, :1], 2, axis=1) for a in (query, key, value))
        total = np.array(max(int(total), 3), np.int32)
        past_key = past_value = np.zeros(past_key.shape[:2] + (max(capacity, int(total)), head), past_key.dtype)
        key_lengths = np.array([1] + [int(total)] * (batch - 1), np.int32)
    elif name == "rotary tables too short":
        attrs.update(do_rotary=1)
        tables = [np.zeros((int(total) - 1, 1), query.dtype)] * 2
    elif name == "rotary without tables":
        attrs.update(do_rotary=1)
        tables = []
    elif name == "rotary half beyond the head":
        attrs.update(do_rotary=1)
        tables = [np.zeros((int(total), head // 2 + 1), query.dtype)] * 2
    elif name == "lengths int64":
        key_lengths = key_lengths.astype(np.int64)
    elif name == "kv heads not dividing heads":
        attrs["kv_num_heads"] = attrs["num_heads"] + 1
    elif name == "block size zero":
        attrs["sparse_block_size"] = 0
    return [query, key, value, past_key, past_value, rows, cols, total, key_lengths, *tables], attrs


@pytest.mark.parametrize("name", SPARSE_MALFORMED)
@SETTINGS
@given(data=st.data())
def test_sparse_attention_rejects_malformed_inputs(name, data):
    # An error naming the node (the Python API raises), never a crash or a read past an input.
    inputs, attrs, lengths, _ = sparse_case(data, F32)
    inputs, attrs = malformed(name, inputs, attrs, lengths)
    with pytest.raises(Exception, match="SparseAttention"):
        run_nxrt(contrib_model("SparseAttention", inputs, attrs, 3), inputs)


COVERED = {f"com.microsoft.{op}" for op in (
    "Attention", "MultiHeadAttention", "GroupQueryAttention", "QAttention", "SparseAttention")}
