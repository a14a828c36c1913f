"""Known differences of Attention, FlexAttention, CausalConvWithState, the losses (NegativeLogLikelihoodLoss,
SoftmaxCrossEntropyLoss) and the training op Adam."""

import math

import numpy as np

from .common import Difference


def _attention_total_keys(inputs):
    """past_sequence_length + kv_sequence_length of an Attention case."""
    past_key = inputs[4] if len(inputs) > 4 else None
    return inputs[1].shape[2 if inputs[1].ndim == 4 else 1] + (past_key.shape[2] if past_key is not None else 0)


def _attention_query_length(inputs):
    return inputs[0].shape[2 if inputs[0].ndim == 4 else 1]


def _causal_with_query_broadcast_mask(inputs, attrs):
    """is_causal with an attn_mask of rank 1, or one that broadcasts over several queries (dimension -2 of 1)."""
    mask = inputs[3] if len(inputs) > 3 else None
    return bool(attrs.get("is_causal")) and mask is not None and (
        mask.ndim == 1 or (mask.shape[-2] == 1 and _attention_query_length(inputs) != 1))


def _integer_mask(inputs):
    return len(inputs) > 3 and inputs[3] is not None and inputs[3].dtype.kind in "iu"


def _attention_head_size(inputs, attrs):
    q = inputs[0]
    return q.shape[3] if q.ndim == 4 else q.shape[2] // attrs["q_num_heads"]


def _float64_default_scale(inputs, attrs):
    return inputs[0].dtype == np.float64 and not attrs.get("scale")


def _attention_without_keys(op, opset, inputs, attrs):
    """Attention over no keys at all: every query row is fully masked, so Y is zeros; present_key / present_value
    are the empty concatenation of past and new, and qk_matmul_output has no columns."""
    q, k, v = inputs[:3]
    if q.ndim == 3:
        q_heads, kv_heads = attrs["q_num_heads"], attrs["kv_num_heads"]
        batch, q_len = q.shape[:2]
        head, v_head = q.shape[2] // q_heads, v.shape[2] // kv_heads
        y = np.zeros((batch, q_len, q_heads * v_head), q.dtype)
    else:
        batch, q_heads, q_len, head = q.shape
        kv_heads, v_head = k.shape[1], v.shape[3]
        y = np.zeros((batch, q_heads, q_len, v_head), q.dtype)
    return [y, np.zeros((batch, kv_heads, 0, head), q.dtype), np.zeros((batch, kv_heads, 0, v_head), v.dtype),
            np.zeros((batch, q_heads, q_len, 0), q.dtype)]


def _attention_reference_run(op, opset, inputs, attrs):
    """The reference on one 4-D Attention case (all four outputs). With softcap and a half type it is the
    reference's own _compute_attention given the softcap as a Python float, with which numpy keeps the half type
    through the softcap as the function body does."""
    from property_harness import HALF, node_model, run_reference

    if not (attrs.get("softcap") and inputs[0].dtype in HALF):
        return run_reference(node_model(op, opset, inputs, attrs, 4), inputs)
    from onnx.reference.ops.op_attention import _compute_attention

    padded = list(inputs) + [None] * (7 - len(inputs))
    keywords = {k: a for k, a in attrs.items() if k != "softcap"}
    with np.errstate(all="ignore"):
        results = _compute_attention(*padded, softcap=float(attrs["softcap"]), _validate_attention25=opset >= 25,
                                     **keywords)
    return [np.asarray(r) for r in results]


def _attention_reference(op, opset, inputs, attrs):
    """The reference on an Attention case with each of its faults below worked around without changing the
    spec's result: float64 without a scale given the float32 default scale; an integer mask converted to T; with
    is_causal, a mask broadcast over the queries; with softcap in mode 0, qk_matmul_output from the same case
    without softcap; no keys by the fully-masked rule; 3-D inputs through their 4-D form (heads split out in
    front of the sequence), Y merged back to 3-D; half types with softcap through _attention_reference_run."""
    inputs = list(inputs)
    if _float64_default_scale(inputs, attrs):
        attrs = {**attrs, "scale": float(np.float32(1) / np.sqrt(np.float32(_attention_head_size(inputs, attrs))))}
    if _integer_mask(inputs):
        inputs[3] = inputs[3].astype(inputs[0].dtype)
    if _causal_with_query_broadcast_mask(inputs, attrs):
        mask = inputs[3] if inputs[3].ndim >= 2 else inputs[3].reshape(1, -1)
        queries = _attention_query_length(inputs)
        inputs[3] = np.broadcast_to(mask, (*mask.shape[:-2], queries, mask.shape[-1])).copy()
    if attrs.get("softcap") and attrs.get("qk_matmul_output_mode", 0) == 0:
        capped = _attention_reference(op, opset, inputs, {**attrs, "qk_matmul_output_mode": 1})
        raw = _attention_reference(op, opset, inputs, {k: a for k, a in attrs.items() if k != "softcap"})
        return capped[:3] + raw[3:]
    if _attention_total_keys(inputs) == 0:
        return _attention_without_keys(op, opset, inputs, attrs)
    if inputs[0].ndim == 4:
        return _attention_reference_run(op, opset, inputs, attrs)
    q_heads, kv_heads = attrs["q_num_heads"], attrs["kv_num_heads"]

    def split(x, heads):
        return x.reshape(x.shape[0], x.shape[1], heads, x.shape[2] // heads).transpose(0, 2, 1, 3)

    case = [split(inputs[0], q_heads), split(inputs[1], kv_heads), split(inputs[2], kv_heads), *inputs[3:]]
    results = _attention_reference_run(op, opset, case,
                                       {k: a for k, a in attrs.items() if k not in ("q_num_heads", "kv_num_heads")})
    y = results[0]
    results[0] = y.transpose(0, 2, 1, 3).reshape(y.shape[0], y.shape[2], y.shape[1] * y.shape[3])
    return results


class _BFloat16MatmulNumpy:
    """numpy, except that matmul of bfloat16 operands returns bfloat16 (ml_dtypes' matmul returns float32)."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def matmul(a, b):
        result = np.matmul(a, b)
        bfloat16 = np.asarray(a).dtype
        return result.astype(bfloat16) if str(bfloat16) == "bfloat16" and result.dtype != bfloat16 else result


def _flex_attention_matmul_in_bfloat16(op, opset, inputs, attrs):
    """The reference's FlexAttention computation with its bfloat16 matrix products rounded to bfloat16."""
    from onnx.reference import ReferenceEvaluator
    from onnx.reference.ops.aionnx_preview import op_flex_attention

    mods = {name: ReferenceEvaluator(attrs[name], opsets={"": 23}) for name in ("score_mod", "prob_mod")
            if name in attrs}
    original = op_flex_attention.np
    op_flex_attention.np = _BFloat16MatmulNumpy()
    try:
        with np.errstate(all="ignore"):
            return list(op_flex_attention._compute_flex_attention(
                *inputs, scale=attrs.get("scale"), softmax_precision=attrs.get("softmax_precision"), **mods))
    finally:
        op_flex_attention.np = original


def _causal_conv_function_body(op, opset, inputs, attrs):
    """CausalConvWithState by its function body for a half type T: the depthwise Conv as one op (the reference on
    float32 copies, rounded once to T, as the suite compares Conv), then for silu / swish the activation in float
    on that rounded ConvOut (Cast to float, Sigmoid, Mul, CastLike to T); present_state is a copy."""
    from property_harness import node_model, run_reference

    dtype = inputs[0].dtype
    wide = [a.astype(np.float32) if a is not None else None for a in inputs]
    plain = {k: a for k, a in attrs.items() if k != "activation"}
    conv, state = run_reference(node_model(op, opset, wide, plain, 2), wide)
    with np.errstate(all="ignore"):
        conv = conv.astype(dtype)
        if attrs.get("activation", "none") != "none":
            x = conv.astype(np.float32)
            conv = (x * (np.float32(1) / (np.float32(1) + np.exp(-x)))).astype(dtype)
    return [conv, state.astype(dtype)]


def _sum_in_double(values):
    """The exact sum of float64 values rounded once (numpy's sum where they hold infinities or overflow)."""
    values = np.asarray(values, np.float64).ravel()
    try:
        return math.fsum(values.tolist())
    except (OverflowError, ValueError):  # a finite overflow, or +inf and -inf together
        with np.errstate(all="ignore"):
            return float(np.sum(values))


def _loss_by_the_spec(op, opset, inputs, attrs):
    """NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss by the spec's formulas in float64, each result rounded
    once to the input type: SoftmaxCrossEntropyLoss's log-probabilities as the function body's LogSoftmax along
    axis 1, (x - max) - log(sum(exp(x - max))); loss -w[c] * logp[n, c, ...] (w = 1 without weights), 0 and weight
    0 where the target is ignore_index; "mean" divides the summed losses by the summed weights (the function body's
    Div: 0 / 0 = NaN when every target is ignored). Returns (loss, log_prob); callers keep the outputs they have."""
    x, target = inputs[0], inputs[1]
    weight = inputs[2] if len(inputs) > 2 else None
    values = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if op == "SoftmaxCrossEntropyLoss" and values.size:
            shifted = values - np.max(values, axis=1, keepdims=True)
            values = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
        ignore_index = attrs.get("ignore_index")
        kept = target != ignore_index if ignore_index is not None else np.ones(target.shape, bool)
        safe = np.where(kept, target, 0).astype(np.int64)
        picked = np.take_along_axis(values, safe[:, None], axis=1)[:, 0] if target.size else np.zeros(target.shape)
        w = weight.astype(np.float64)[safe] if weight is not None else np.ones(target.shape)
        loss = np.where(kept, -picked * w, 0.0)
        reduction = attrs.get("reduction", "mean")
        if reduction == "sum":
            loss = np.array(_sum_in_double(loss))
        elif reduction == "mean":
            loss = np.array(np.float64(_sum_in_double(loss)) / np.float64(_sum_in_double(np.where(kept, w, 0.0))))
        return [loss.astype(x.dtype), values.astype(x.dtype)]


def _adam_by_the_spec(op, opset, inputs, attrs):
    """Adam's update of each optimized tensor in float64 (the spec's formulas, in the order of the reference's
    single-tensor form), rounded once to the tensor's type: outputs X'1..n, V'1..n, H'1..n."""
    rate, count = float(inputs[0]), int(inputs[1])
    n = (len(inputs) - 2) // 4
    defaults = {"alpha": 0.9, "beta": 0.999, "epsilon": 1e-6, "norm_coefficient": 0.0, "norm_coefficient_post": 0.0}
    alpha, beta, epsilon, norm, post = (float(np.float32(attrs.get(k, d))) for k, d in defaults.items())
    xs, vs, hs = [], [], []
    with np.errstate(all="ignore"):
        adjusted = rate * np.sqrt(1 - np.float64(beta) ** count) / (1 - np.float64(alpha) ** count) if count > 0 \
            else rate
        for i in range(n):
            x, g, v, h = (inputs[2 + k * n + i].astype(np.float64) for k in range(4))
            g = norm * x + g
            v = alpha * v + (1 - alpha) * g
            h = beta * h + (1 - beta) * (g * g)
            x = (1 - post) * (x - adjusted * (v / (np.sqrt(h) + epsilon)))
            dtype = inputs[2 + i].dtype
            xs.append(x.astype(dtype))
            vs.append(v.astype(dtype))
            hs.append(h.astype(dtype))
    return xs + vs + hs


DIFFERENCES = [
    Difference(
        "Attention",
        "With no keys at all (kv_sequence_length and past_sequence_length 0) the reference fails (\"zero-size array "
        "to reduction operation maximum\": its softmax and fully-masked-row guard take a max over the empty key "
        "axis). Every query row is then fully masked, which \"produces a zero output row\" by the spec: Y is "
        "zeros, present_key / present_value are empty and qk_matmul_output has no columns. onnxruntime refuses "
        "(\"KV sequence length must be greater than 0\").",
        lambda opset, inputs, attrs: _attention_total_keys(inputs) == 0,
        _attention_reference,
    ),
    Difference(
        "Attention",
        "For 3-D inputs whose Y is empty (batch 0, q_sequence_length 0 or v_head_size 0) the reference fails "
        "(\"cannot reshape array of size 0 into shape (0,0,newaxis)\": it merges the heads back with a -1 "
        "dimension). Compared with the reference on the 4-D form of the same inputs, its Y merged back to 3-D. "
        "onnxruntime refuses an empty query (\"Q sequence length must be greater than 0\").",
        lambda opset, inputs, attrs: inputs[0].ndim == 3 and (inputs[0].shape[0] * inputs[0].shape[1] == 0
                                                               or inputs[2].shape[2] == 0),
        _attention_reference,
    ),
    Difference(
        "Attention",
        "With is_causal the reference builds the causal frontier from the attn_mask's own last two dimensions, so "
        "a mask that broadcasts over the queries (dimension -2 of 1) gets query 0's frontier for every query (a "
        "[1, 2] bool mask [False, True] with two queries: query 1 sees no key, its Y row is 0), and a mask of "
        "rank 1 fails (\"not enough values to unpack\"). The spec's frontier is per query (\"query i attends key j "
        "iff j <= i + offset\"), composed with the broadcast mask. Compared with the reference given the mask "
        "broadcast over the queries. onnxruntime refuses both masks (\"attn_mask must be 2D or 3D or 4D\", "
        "\"inconsistent q_sequence_length\").",
        lambda opset, inputs, attrs: _causal_with_query_broadcast_mask(inputs, attrs),
        _attention_reference,
    ),
    Difference(
        "Attention",
        "For float16 and bfloat16 with softcap the reference computes the softcap, the bias and the softmax in "
        "float32: the attribute reaches it as a numpy float32, which promotes the half-type scores (x / softcap). "
        "The function body casts softcap to T and rounds every step to T (Cast(softcap, T), Div, Tanh, Mul, Add, "
        "Softmax), as nxrt does: a float16 score of 6.6e-07 with softcap 30 is 0 after the function body's "
        "softcap (6.6e-07 / 30 underflows in float16), 6.6e-07 in the reference. Compared with the reference's "
        "own computation given the softcap as a Python float, which keeps the half type. onnxruntime computes "
        "the softcap in float32, as the reference does.",
        lambda opset, inputs, attrs: bool(attrs.get("softcap")) and inputs[0].dtype.itemsize == 2,
        _attention_reference,
    ),
    Difference(
        "Attention",
        "With softcap and qk_matmul_output_mode 0 the reference's qk_matmul_output is the soft-capped scores; the "
        "spec's mode 0 is \"the output of qk matmul\" (the function body's Identity(QKAttnWeight), before the "
        "softcap), mode 1 the soft-capped one. Compared with the reference's qk_matmul_output of the same case "
        "without softcap (Y and present_key / present_value from the case as given). onnxruntime gives the raw "
        "scores, as nxrt does.",
        lambda opset, inputs, attrs: bool(attrs.get("softcap")) and attrs.get("qk_matmul_output_mode", 0) == 0,
        _attention_reference,
    ),
    Difference(
        "Attention",
        "For float64 inputs without a scale the reference computes the default scale 1 / sqrt(head_size) and its "
        "square root in float64; the function body computes them in float (Cast(head_size, float), Sqrt, Div, "
        "Sqrt) and casts sqrt(scale) to T1, as the reference does for a given scale (a float32 attribute). The "
        "square roots differ by 3e-8 relative, probabilities of scores near 4 by 1e-7. Compared with the "
        "reference given that float32 default scale. onnxruntime computes the scale in float, as nxrt does.",
        lambda opset, inputs, attrs: _float64_default_scale(inputs, attrs),
        _attention_reference,
    ),
    Difference(
        "Attention",
        "For an integer attn_mask the reference adds the mask to the bias in numpy's promoted type (float64 for "
        "int32 and int64 masks) and runs the softmax there; the function body casts the bias to T (AttnBiasT = "
        "Cast(..., T1)) and computes the softmax in T, as nxrt does (float16 probabilities differ by ulps). "
        "Compared with the reference given the mask converted to T (its values are small integers, exact in every "
        "float type). onnxruntime accepts integer masks.",
        lambda opset, inputs, attrs: _integer_mask(inputs),
        _attention_reference,
    ),
    Difference(
        "ai.onnx.preview.FlexAttention",
        "For bfloat16 the reference's scores Q K^T (numpy's matmul of ml_dtypes bfloat16, which returns float32) "
        "are not rounded to bfloat16; the function body's Score = MatMul(QScaled, KTranspose) is in T and only "
        "then cast to the softmax precision, as nxrt computes it (2.25 * 2.4375 is 5.5 in bfloat16, 5.484375 in "
        "the reference, 1.5% apart after the exponential). Compared with the reference's computation with its "
        "bfloat16 products rounded to bfloat16. onnxruntime has no FlexAttention.",
        lambda opset, inputs, attrs: str(inputs[0].dtype) == "bfloat16",
        _flex_attention_matmul_in_bfloat16,
    ),
    Difference(
        "CausalConvWithState",
        "For float16 and bfloat16 the reference computes the depthwise convolution in the half type, rounding "
        "every product and partial sum (3.671875 * -2.25 + 1 is -7.265625 in float16 there, -7.26171875 summed in "
        "float32 and rounded once). The function body's Conv is one op, which nxrt computes in float32 and "
        "rounds once as it does Conv (the suite compares Conv's half types with the reference in float32, "
        "rounded once); the activation then runs in float on the rounded ConvOut. Compared with that. "
        "onnxruntime's CausalConvWithState has no half-type kernel to compare.",
        lambda opset, inputs, attrs: inputs[0].dtype.itemsize == 2,
        _causal_conv_function_body,
    ),
    Difference(
        "NegativeLogLikelihoodLoss",
        "With ignore_index -1, no weights and reduction mean the reference divides the summed losses by the count "
        "of every target, ignored ones included (it takes np.mean where no weights are given and ignore_index is "
        "-1); for any other ignore_index it divides by the count of the targets not ignored. The spec's mean "
        "divides \"by the sum of applied weights\" (the function body: ReduceSum of the losses over ReduceSum of "
        "the weights, 0 for an ignored target), so every target ignored gives 0 / 0 = NaN. Compared with the "
        "spec's formulas in float64. onnxruntime gives the spec's mean (0.2231 where the reference gives 0.1116).",
        lambda opset, inputs, attrs: attrs.get("ignore_index") == -1 and len(inputs) < 3
        and attrs.get("reduction", "mean") == "mean",
        _loss_by_the_spec,
    ),
    Difference(
        "NegativeLogLikelihoodLoss",
        "The reference fails on an empty input (\"cannot reshape array of size 0 into shape (0,1,newaxis)\": it "
        "flattens the trailing dims with -1). The spec's losses are then empty; their sum is 0 and their mean "
        "0 / 0 = NaN (the function body's ReduceSum over ReduceSum). Compared with the spec's formulas. "
        "onnxruntime gives 0 for the mean too.",
        lambda opset, inputs, attrs: inputs[0].size == 0,
        _loss_by_the_spec,
    ),
    Difference(
        "SoftmaxCrossEntropyLoss",
        "The reference takes the log-probabilities as log(softmax(x)) in the input type: a probability that "
        "underflows gives -inf where the log-probability is finite (float32 scores [0, 200]: log_prob [-inf, 0] "
        "there, [-200, 0] by the formula, and the loss of label 0 inf instead of 200), and near a probability of 1 "
        "the log loses digits (float32 [-0, 6]: -0.0024756414 there, -0.0024756852 by the formula). The function "
        "body takes LogSoftmax, (x - max) - log(sum(exp(x - max))). Compared with that formula, and the loss on "
        "it, in float64 (as nxrt computes them). onnxruntime gives [-200, 0] too.",
        lambda opset, inputs, attrs: True,
        _loss_by_the_spec,
    ),
    Difference(
        "ai.onnx.preview.training.Adam",
        "For more than one optimized tensor the reference converts every output to float32 (a double X' loses "
        "the digits beyond float32). The outputs have the inputs' type T3. Compared with the spec's update in "
        "float64 rounded once to the tensor's type (the reference's single-tensor form). onnxruntime has no "
        "training ops.",
        lambda opset, inputs, attrs: len(inputs) > 6,
        _adam_by_the_spec,
    ),
]
