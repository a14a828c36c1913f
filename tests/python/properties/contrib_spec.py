"""The com.microsoft contrib ops as onnxruntime's contrib spec (docs/ContribOperators.md) defines them, in float64
numpy, for the types onnxruntime's CPU provider lacks and the cases where its answer is wrong
(known_differences/). Each function takes (op, inputs, attrs) and returns the list of outputs, rounded once to the
op's type. Float attributes are float32 in the model, so they enter as float32 values."""

import math

import numpy as np

from contrib_harness import rounded, wide

_ERFC = np.vectorize(math.erfc, otypes=[np.float64])
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def attr_float(attrs, name, default):
    return float(np.float32(attrs.get(name, default)))


def compute_type(dtype):
    """The type nxrt and onnxruntime compute a float op of `dtype` in: float64 for float64, else float32."""
    return np.float64 if dtype == np.float64 else np.float32


def gelu_family(op, inputs, attrs):
    """Gelu, BiasGelu: 0.5 v (1 + erf(v / sqrt 2)); FastGelu: 0.5 v (1 + tanh(sqrt(2 / pi) (v + 0.044715 v^3)));
    QuickGelu: v sigmoid(alpha v); v = X (+ bias) in the compute type (where it overflows, as both runtimes' sums
    do, Gelu(-inf) is -inf * 0 = NaN). Written without the cancellation of 1 + erf / 1 + tanh near -1
    (the same functions: 0.5 v erfc(-v / sqrt 2), v sigmoid(2 u)), so tiny results keep their digits."""
    x, bias = inputs[0], inputs[1] if len(inputs) > 1 else None
    c = compute_type(x.dtype)
    with np.errstate(all="ignore"):
        v = (x.astype(c) + (bias.astype(c) if bias is not None else c(0))).astype(np.float64)
        if op == "FastGelu":
            y = v / (1.0 + np.exp(-2.0 * _SQRT_2_OVER_PI * (v + 0.044715 * v ** 3)))
        elif op == "QuickGelu":
            y = v / (1.0 + np.exp(-attr_float(attrs, "alpha", 1.702) * v))
        else:
            y = 0.5 * v * _ERFC(-v / math.sqrt(2.0)) if v.size else v
    return [rounded(y, x.dtype)]


def bias_add(op, inputs, attrs):
    x, bias, skip = inputs
    c = compute_type(x.dtype)
    with np.errstate(all="ignore"):
        return [rounded((x.astype(c) + bias.astype(c)) + skip.astype(c), x.dtype)]


def softmax_from(v, axis):
    """softmax of float64 `v` over its dims from `axis` on, flattened, shifted by each row's largest value."""
    if not v.size:
        return v
    rows = v.reshape(int(np.prod(v.shape[:axis], dtype=np.int64)), -1)
    with np.errstate(all="ignore"):
        e = np.exp(rows - np.max(rows, axis=1, keepdims=True))
        return (e / np.sum(e, axis=1, keepdims=True)).reshape(v.shape)


def bias_softmax(op, inputs, attrs):
    """softmax(data + bias) over the dims from `axis` (default 1); the sum in the compute type (it overflows there
    as the op's own sum does), the rest in float64."""
    x, bias = inputs
    c = compute_type(x.dtype)
    with np.errstate(all="ignore"):
        total = (x.astype(c) + bias.astype(c)).astype(np.float64)
    return [rounded(softmax_from(total, attrs.get("axis", 1) % x.ndim), x.dtype)]


def layer_norm_rows(total, gamma, beta, epsilon, simplified):
    """(y, mean, inv_std) of float64 rows over the last dim: (v - mean) / sqrt(var + eps) * gamma (+ beta), or
    v / sqrt(mean(v^2) + eps) * gamma (mean 0) for the simplified (RMS) form."""
    with np.errstate(all="ignore"):
        mean = np.zeros(total.shape[:-1] + (1,)) if simplified else np.mean(total, axis=-1, keepdims=True)
        centred = total - mean
        inv_std = 1.0 / np.sqrt(np.mean(centred * centred, axis=-1, keepdims=True) + epsilon)
        y = centred * inv_std * wide(gamma)
        if beta is not None:
            y = y + wide(beta)
    return y, mean, inv_std


def skip_layer_norm(op, inputs, attrs):
    """Skip(Simplified)LayerNormalization: outputs (output, mean, inv_std_var, input_skip_bias_sum); the sum in the
    compute type (as both runtimes keep it), the statistics and the normalization in float64."""
    simplified = op == "SkipSimplifiedLayerNormalization"
    x, skip, gamma = inputs[:3]
    beta = None if simplified else (inputs[3] if len(inputs) > 3 else None)
    bias = inputs[3 if simplified else 4] if len(inputs) > (3 if simplified else 4) else None
    c = compute_type(x.dtype)
    with np.errstate(all="ignore"):
        total = x.astype(c) + skip.astype(c) + (bias.astype(c) if bias is not None else c(0))
    y, mean, inv_std = layer_norm_rows(total.astype(np.float64), gamma, beta,
                                       attr_float(attrs, "epsilon", 1e-12), simplified)
    return [rounded(y, x.dtype), rounded(mean, np.float32), rounded(inv_std, np.float32), rounded(total, x.dtype)]


def embed_sums(inputs):
    """EmbedLayerNormalization's rows before the norm: word[id] + position[pos] (+ segment[seg]) per token in the
    compute type, as float64 [B, S, H]; positions are position_ids ([B, S] or [1, S]) or 0 .. S-1."""
    ids, segment_ids, words, positions, segments, _, _, _, position_ids = (list(inputs) + [None] * 9)[:9]
    c = compute_type(words.dtype)
    pos = np.broadcast_to(position_ids if position_ids is not None else np.arange(ids.shape[1]), ids.shape)
    with np.errstate(all="ignore"):
        total = words.astype(c)[ids] + positions.astype(c)[pos]
        if segments is not None and segment_ids is not None:
            total = total + segments.astype(c)[segment_ids]
    return total.astype(np.float64)


def embed_layer_norm(op, inputs, attrs):
    """EmbedLayerNormalization: the layer norm of embed_sums; outputs (output, mask_index (the ones in each mask
    row, int32; 0 without a mask), embedding_sum)."""
    ids, words, gamma, beta, mask = inputs[0], inputs[2], inputs[5], inputs[6], (list(inputs) + [None] * 9)[7]
    total = embed_sums(inputs)
    y, _, _ = layer_norm_rows(total, gamma, beta, attr_float(attrs, "epsilon", 1e-12), False)
    mask_index = (np.sum(mask == 1, axis=1) if mask is not None else np.zeros(ids.shape[0])).astype(np.int32)
    return [rounded(y, words.dtype), mask_index, rounded(total, words.dtype)]


def skip_norm_sums(op, inputs):
    """The rows Skip(Simplified)LayerNormalization normalizes: input + skip (+ bias) in the compute type, as
    float64 [rows, H]."""
    simplified = op == "SkipSimplifiedLayerNormalization"
    x, skip = inputs[:2]
    bias = inputs[3 if simplified else 4] if len(inputs) > (3 if simplified else 4) else None
    c = compute_type(x.dtype)
    with np.errstate(all="ignore"):
        total = x.astype(c) + skip.astype(c) + (bias.astype(c) if bias is not None else c(0))
    return total.astype(np.float64).reshape(-1, x.shape[-1])


def beyond_float_statistics(rows, simplified, float_range):
    """Whether a row's statistics leave what float32 arithmetic holds: an infinity in the row, a sum of squares
    near or beyond float32's range (>= 2^127), or a nonzero mean square (RMS) or variance below 2^-100 where float32
    squares underflow (`float_range`: these two for float32 / bfloat16 rows, not float16 ones), or (layer norm, not
    RMS) a mean more than 8 standard deviations from 0, where the float mean's rounding moves the result."""
    if not rows.size:
        return False
    finite = np.where(np.isfinite(rows), rows, 0.0)
    with np.errstate(all="ignore"):
        mean = np.zeros(len(rows)) if simplified else np.mean(finite, axis=1)
        spread = np.mean((finite - mean[:, None]) ** 2, axis=1)
        squares = np.sum(finite ** 2, axis=1)
    if np.isinf(rows).any():
        return True
    if float_range and ((squares >= 2.0 ** 127) | ((spread > 0) & (spread < 2.0 ** -100))).any():
        return True
    return not simplified and bool((np.abs(mean) > 8 * np.sqrt(spread)).any())


def dot_elements(dtype, high=10.0):
    """Values for ops that sum products: ordinary numbers in [-high, high] and the special values whose sums do not
    depend on the order of the additions (NaN, +-inf, +-0, subnormals, 1, 0.5, eps); no huge finite values, whose
    partial sums overflow in one order and not in another."""
    from hypothesis import strategies as st

    from property_values import elements, special_values

    huge = 2.0 ** 10
    specials = [v for v in special_values(dtype) if not (math.isfinite(v) and abs(v) > huge)]
    return st.one_of(st.sampled_from(specials), elements(dtype, -high, high).filter(
        lambda v: not math.isfinite(v) or abs(v) <= high))


def trans_batch(a, flag):
    """FusedMatMul's transBatch: a [d0, d1, .., d(r-2), d(r-1)] read as [d1, .., d(r-2), d0, d(r-1)]."""
    if not flag or a.ndim < 3:
        return a
    return np.moveaxis(a, 0, a.ndim - 2)


def fused_matmul(op, inputs, attrs):
    """alpha * op(A) @ op(B) in float64 (numpy matmul broadcasting), rounded once."""
    a, b = (wide(v) for v in inputs)
    a, b = trans_batch(a, attrs.get("transBatchA", 0)), trans_batch(b, attrs.get("transBatchB", 0))
    if attrs.get("transA", 0):
        a = np.swapaxes(a, -1, -2)
    if attrs.get("transB", 0):
        b = np.swapaxes(b, -1, -2)
    with np.errstate(all="ignore"):
        return [rounded(attr_float(attrs, "alpha", 1.0) * np.matmul(a, b), inputs[0].dtype)]


def activation(name, v, alpha=None, beta=None):
    """The fused activations both runtimes share, on float64 `v` (alpha, beta: their float32 parameters)."""
    with np.errstate(all="ignore"):
        if name == "Relu":
            return np.where(v < 0, 0.0, v)
        if name == "Tanh":
            return np.tanh(v)
        if name == "Sigmoid":
            return 1.0 / (1.0 + np.exp(-v))
        if name == "LeakyRelu":
            return np.where(v < 0, alpha * v, v)
        if name == "HardSigmoid":
            return np.clip(alpha * v + beta, 0.0, 1.0)
        if name == "Clip":
            return np.minimum(np.maximum(v, alpha), beta)
    return v


def fused_gemm(op, inputs, attrs):
    """activation(alpha * A' B' + beta * C) in float64; beta * C is computed even where beta is 0 (0 * NaN)."""
    a, b = wide(inputs[0]), wide(inputs[1])
    a = a.T if attrs.get("transA", 0) else a
    b = b.T if attrs.get("transB", 0) else b
    with np.errstate(all="ignore"):
        y = attr_float(attrs, "alpha", 1.0) * (a @ b)
        if len(inputs) > 2 and inputs[2] is not None:
            y = y + attr_float(attrs, "beta", 1.0) * wide(inputs[2])
        y = activation(attrs.get("activation", ""), y, *(attr_float(attrs, f"activation_{p}", 0.0)
                                                         for p in ("alpha", "beta")))
    return [rounded(y, inputs[0].dtype)]


def conv2d(x, w, group, strides, pads, dilations):
    """Direct N-D convolution (cross-correlation, as ONNX Conv) of float64 x [N, C, spatial...] with w
    [M, C / group, kernel...]; pads are [begin..., end...]."""
    rank = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + rank]) for i in range(rank)])
    n, channels = x.shape[:2]
    m = w.shape[0]
    kernel = w.shape[2:]
    out_shape = [(x.shape[2 + i] - dilations[i] * (kernel[i] - 1) - 1) // strides[i] + 1 for i in range(rank)]
    y = np.zeros([n, m] + out_shape)
    per_group, out_per_group = channels // group, m // group
    for out_index in np.ndindex(*out_shape):
        for k_index in np.ndindex(*kernel):
            at = tuple(out_index[i] * strides[i] + k_index[i] * dilations[i] for i in range(rank))
            for g in range(group):
                patch = x[(slice(None), slice(g * per_group, (g + 1) * per_group)) + at]  # [N, C/g]
                weights = w[(slice(g * out_per_group, (g + 1) * out_per_group), slice(None)) + k_index]  # [M/g, C/g]
                y[(slice(None), slice(g * out_per_group, (g + 1) * out_per_group)) + out_index] += patch @ weights.T
    return y


def fused_conv(op, inputs, attrs):
    """activation(Conv(X, W) + B + Z) in float64 (explicit pads; the test passes no auto_pad)."""
    x, w = wide(inputs[0]), wide(inputs[1])
    rank = x.ndim - 2
    with np.errstate(all="ignore"):
        y = conv2d(x, w, attrs.get("group", 1), attrs.get("strides", [1] * rank), attrs.get("pads", [0] * 2 * rank),
                   attrs.get("dilations", [1] * rank))
        if len(inputs) > 2 and inputs[2] is not None:
            y = y + wide(inputs[2]).reshape((1, -1) + (1,) * rank)
        if len(inputs) > 3 and inputs[3] is not None:
            y = y + wide(inputs[3])
        params = [float(np.float32(p)) for p in attrs.get("activation_params", [])] + [None, None]
        y = activation(attrs.get("activation", ""), y, params[0], params[1])
    return [rounded(y, inputs[0].dtype)]


def quantize(values, dtype):
    """saturate(round_half_even(values)) into integer `dtype` (values already divided by the scale, zero point
    added); NaN to the zero point's side is not reached here (the tests' values are finite)."""
    info = np.iinfo(dtype)
    return np.clip(np.rint(values), info.min, info.max).astype(dtype)


def _zero(z):
    return 0.0 if z is None else float(z)


def qlinear_binary(op, inputs, attrs):
    """QLinearAdd: C = (A_scale (A - A_zp) + B_scale (B - B_zp)) / C_scale + C_zp; QLinearMul: C = (A - A_zp)
    (B - B_zp) A_scale B_scale / C_scale + C_zp; in float64, rounded half to even and saturated."""
    a, sa, za, b, sb, zb, sc, zc = (list(inputs) + [None] * 8)[:8]
    da, db = wide(a) - _zero(za), wide(b) - _zero(zb)
    if op == "QLinearAdd":
        v = (float(sa) * da + float(sb) * db) / float(sc)
    else:
        v = da * db * (float(sa) * float(sb) / float(sc))
    return [quantize(v + _zero(zc), a.dtype)]


def matmul_integer_to_float(op, inputs, attrs):
    """MatMulIntegerToFloat: a_scale * b_scale[n] * sum_k (A - a_zero_point) (B - b_zero_point[n]) + bias[n],
    exact sums scaled in float64, rounded once to the scales' type (K = 0: the bias, or 0)."""
    a, b, a_scale, b_scale, a_zero, b_zero, bias = (list(inputs) + [None] * 7)[:7]
    da = a.astype(np.int64) - (0 if a_zero is None else int(a_zero))
    db = b.astype(np.int64) - (0 if b_zero is None else b_zero.astype(np.int64))
    y = np.matmul(da, db).astype(np.float64) * float(a_scale) * wide(b_scale)
    if bias is not None:
        y = y + wide(bias)
    return [rounded(y, a_scale.dtype)]


def dynamic_quantize(a):
    """DynamicQuantizeLinear of float32 `a`, in float32: (uint8 values, scale, zero point)."""
    low, high = np.float32(min(0.0, float(a.min(initial=0)))), np.float32(max(0.0, float(a.max(initial=0))))
    scale = np.float32((high - low) / np.float32(255)) if high > low else np.float32(1)
    zero = np.float32(np.clip(np.rint(-low / scale), 0, 255))
    return np.clip(np.rint(a / scale) + zero, 0, 255).astype(np.uint8), scale, np.uint8(zero)


def dynamic_quantize_matmul(op, inputs, attrs):
    """DynamicQuantizeMatMul: A quantized as DynamicQuantizeLinear does, then MatMulIntegerToFloat."""
    a, b, b_scale, b_zero, bias = (list(inputs) + [None] * 5)[:5]
    q, scale, zero = dynamic_quantize(a)
    return matmul_integer_to_float(op, [q, b, scale, b_scale, np.array(zero), b_zero, bias], attrs)


def qgemm(op, inputs, attrs):
    """QGemm: alpha * a_scale * b_scale[n] * (sum_k (A' - a_zp) (B' - b_zp[n]) + C), exact sums scaled in float64;
    with y_scale and y_zero_point that quantized (half to even, saturated), else float32."""
    a, a_scale, a_zero, b, b_scale, b_zero, c, y_scale, y_zero = (list(inputs) + [None] * 9)[:9]
    a = a.T if attrs.get("transA", 0) else a
    b = b.T if attrs.get("transB", 0) else b
    acc = np.matmul(a.astype(np.int64) - int(a_zero), b.astype(np.int64) - b_zero.astype(np.int64))
    if c is not None:
        acc = acc + c.astype(np.int64)
    y = attr_float(attrs, "alpha", 1.0) * float(a_scale) * acc.astype(np.float64) * wide(b_scale)
    if y_zero is None:
        return [rounded(y, np.float32)]
    return [quantize(y / float(y_scale) + float(y_zero), y_zero.dtype)]


def u8s8_pairs_overflow(a, b):
    """Whether some output of uint8 A [..., M, K] times int8 B [K, N] has two products (of the raw values) whose
    sum leaves int16: the pairs that onnxruntime's AVX2 kernel adds with saturation."""
    if a.dtype != np.uint8 or b.dtype != np.int8 or not a.size or not b.size:
        return False
    products = np.abs(a.astype(np.int64)[..., :, :, None] * b.astype(np.int64)[None, :, :] if a.ndim == 2 else
                      a.astype(np.int64)[..., :, None] * b.astype(np.int64))  # [..., M, K, N]
    top_two = -np.sort(-products, axis=-2)[..., :2, :].sum(axis=-2) if products.shape[-2] > 1 else 0
    return bool(np.max(top_two) > 32767)


def unpack_bits(packed, bits, count):
    """The first `count` `bits`-wide values of uint8 rows, low bits first: [..., bytes] -> [..., count] float64."""
    values = np.stack([(packed >> shift) & ((1 << bits) - 1) for shift in range(0, 8, bits)], axis=-1)
    return values.reshape(packed.shape[:-1] + (-1,))[..., :count].astype(np.float64)


def nbits_weights(inputs, attrs):
    """MatMulNBits' dequantized W [N, K] in float64: (q - zero_point) * scale per block of K."""
    b, scales, zeros = inputs[1], inputs[2], inputs[3] if len(inputs) > 3 else None
    bits, block, k = attrs.get("bits", 4), attrs["block_size"], attrs["K"]
    n, blocks = scales.shape
    z = (np.full((n, blocks), float(2 ** (bits - 1))) if zeros is None else
         unpack_bits(zeros, bits, blocks) if zeros.dtype == np.uint8 else wide(zeros))
    q = unpack_bits(b, bits, block).reshape(n, -1)[:, :blocks * block]
    return ((q - np.repeat(z, block, axis=1)) * np.repeat(wide(scales), block, axis=1))[:, :k]


def matmul_nbits(op, inputs, attrs):
    """MatMulNBits: A W^T (+ bias) in float64, rounded once to A's type."""
    a, bias = inputs[0], inputs[5] if len(inputs) > 5 else None
    with np.errstate(all="ignore"):
        y = wide(a) @ nbits_weights(inputs, attrs).T + (0.0 if bias is None else wide(bias))
    return [rounded(y, a.dtype)]


def qattention(op, inputs, attrs):
    """QAttention as the float Attention (run by onnxruntime) of the dequantized input and weight: the schema's
    projection is (input - input_zero_point) input_scale times (weight - weight_zero_point) weight_scale, + bias."""
    from contrib_harness import contrib_model, run_onnxruntime

    x, weight, bias, x_scale, w_scale, mask, x_zero, w_zero = (list(inputs) + [None] * 8)[:8]
    dequantized_x = ((x.astype(np.float64) - _zero(x_zero)) * float(x_scale)).astype(np.float32)
    dequantized_w = ((weight.astype(np.float64) - (0 if w_zero is None else w_zero.astype(np.float64))) *
                     w_scale.astype(np.float64)).astype(np.float32)
    floats = [dequantized_x, dequantized_w, bias, mask]
    return run_onnxruntime(contrib_model("Attention", floats, attrs), floats)


def rotate_half_pairs(x, cos, sin, interleaved):
    """Rotary embedding of float64 head rows x [..., H] by one position's cos / sin [R / 2]: pairs (i, i + R / 2),
    or (2i, 2i + 1) when interleaved, turned by that angle; columns from R on pass unchanged."""
    half = len(cos)
    x = x.copy()
    first = slice(0, 2 * half, 2) if interleaved else slice(0, half)
    second = slice(1, 2 * half, 2) if interleaved else slice(half, 2 * half)
    x1, x2 = x[..., first].copy(), x[..., second].copy()
    x[..., first] = x1 * cos - x2 * sin
    x[..., second] = x2 * cos + x1 * sin
    return x


def sparse_layout_hides(rows, cols, layout, block, position):
    """Whether block-sparse `layout` (CSR rows [L, M + 1], cols [L, nnz]) masks keys of the query at `position`,
    and the block columns its block row lists. As onnxruntime's kernel reads the layouts: a layout with as many
    blocks as the dense causal mask (M (M + 1) / 2) masks nothing, nor does a block row that lists r + 1 blocks."""
    blocks = rows.shape[1] - 1
    r = position // block
    listed = cols[layout, rows[layout, r]:rows[layout, r + 1]]
    sparse = rows[layout, -1] < blocks * (blocks + 1) // 2 and len(listed) != r + 1
    return sparse, listed


def sparse_attention(op, inputs, attrs):
    """SparseAttention in float64: outputs (output, present_key, present_value), each rounded once to T.

    The step is a prompt when total_sequence_length equals S (every entry's past length P_b is then 0), else
    P_b = key_total_sequence_lengths[b] - S. The S new key / value rows (rotated at positions P_b + s with
    do_rotary, as is the query) go to rows P_b + s of the caches, which otherwise keep the past. Query head n reads
    key / value head n / (N / Nk) and layout n % L; the query at position p sees keys j <= p with j < T_b; a sparse
    layout gives the keys outside the blocks its block row lists float32's lowest score (so a row whose every key
    is masked so attends to them uniformly). Scores scale * q . k (default 1 / sqrt(H)), softmax, and then the
    product with the first T_b value rows in IEEE arithmetic: a hidden key has probability 0, and 0 * NaN is NaN."""
    query, key, value, past_key, past_value, rows, cols, total, lengths, cos, sin = (list(inputs) + [None] * 11)[:11]
    heads, kv_heads, block = attrs["num_heads"], attrs["kv_num_heads"], attrs["sparse_block_size"]
    batch, seq, width = query.shape
    packed = key is None
    head = width // (heads + 2 * kv_heads) if packed else width // heads
    q = wide(query).reshape(batch, seq, -1, head)
    k = q[:, :, heads:heads + kv_heads] if packed else wide(key).reshape(batch, seq, kv_heads, head)
    v = q[:, :, heads + kv_heads:] if packed else wide(value).reshape(batch, seq, kv_heads, head)
    q = q[:, :, :heads]
    rotary, interleaved = attrs.get("do_rotary", 0), attrs.get("rotary_interleaved", 0)
    scale = attr_float(attrs, "scale", 0.0) or 1.0 / math.sqrt(head)
    present_key, present_value = wide(past_key), wide(past_value)
    output = np.zeros((batch, seq, heads, head))
    prompt = int(total) == seq
    with np.errstate(all="ignore"):
        for b in range(batch):
            t = int(lengths[b])
            past = 0 if prompt else t - seq
            for s in range(seq):
                new_key = k[b, s]
                if rotary:
                    new_key = rotate_half_pairs(new_key, wide(cos[past + s]), wide(sin[past + s]), interleaved)
                present_key[b, :, past + s] = new_key
                present_value[b, :, past + s] = v[b, s]
            for n in range(heads):
                g, layout = n // (heads // kv_heads), n % rows.shape[0]
                for s in range(seq):
                    position = past + s
                    row = q[b, s, n]
                    if rotary:
                        row = rotate_half_pairs(row, wide(cos[position]), wide(sin[position]), interleaved)
                    scores = scale * (present_key[b, g, :t] @ row)
                    visible = min(position + 1, t)
                    sparse, listed = sparse_layout_hides(rows, cols, layout, block, position)
                    if sparse:
                        hidden = ~np.isin(np.arange(visible) // block, listed)
                        scores[:visible][hidden] = float(np.finfo(np.float32).min)
                    scores[visible:] = -np.inf
                    weights = np.exp(scores - np.max(scores))
                    output[b, s, n] = (weights / np.sum(weights)) @ present_value[b, g, :t]
    dtype = query.dtype
    return [rounded(output.reshape(batch, seq, heads * head), dtype), rounded(present_key, dtype),
            rounded(present_value, dtype)]
