"""Sliding-window operators (the pools, Conv, ConvTranspose, DeformConv, Col2Im, LRN) computed by the words of the
ONNX spec in float64, for test_pool_properties.py, test_conv_properties.py and the known differences of those ops
where the reference is wrong (whose predicates are at the end of this file).

Each oracle lists, per output element, the terms its sum adds (window values, or products of an input and a
weight; a zero pad times a weight counts, as the spec pads with zeros), then sums them as `sums` does: exactly,
rounded once to the kernel's accumulation type (float32 for float16, bfloat16 and float32; float64 for float64).
`sums` also says which sums no float implementation can be held to the test tolerance on: those whose terms
cancel beyond it, or whose partial sums or products may overflow in one order and not in another (the spec
leaves the order of the additions open)"""

import itertools

import numpy as np

from property_harness import RTOL, subnormal_atol


def accumulation_type(dtype):
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


def resolve_window(in_sizes, kernel, attrs):
    """Per spatial dim (out size, pad at the beginning, pad at the end), as the spec of the pools and Conv defines
    them: explicit pads with floor (or ceil_mode's ceil), where "sliding windows that would start in the right
    padded region are ignored"; SAME_UPPER / SAME_LOWER pad (out - 1) * stride + dilated kernel - in (at least 0)
    for out = ceil(in / stride), the odd pad at the end (UPPER) or the beginning (LOWER); VALID pads nothing."""
    rank = len(in_sizes)
    strides = attrs.get("strides") or [1] * rank
    dilations = attrs.get("dilations") or [1] * rank
    pads = attrs.get("pads") or [0] * (2 * rank)
    auto_pad = attrs.get("auto_pad", "NOTSET")
    dims = []
    for i, size in enumerate(in_sizes):
        stride, span = strides[i], (kernel[i] - 1) * dilations[i] + 1
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            out = -(-size // stride)
            total = max(0, (out - 1) * stride + span - size)
            begin = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            dims.append((out, begin, total - begin))
        elif auto_pad == "VALID":
            dims.append(((size - span) // stride + 1, 0, 0))
        else:
            begin, end = pads[i], pads[i + rank]
            extent = size + begin + end - span
            out = (-(-extent // stride) if attrs.get("ceil_mode", 0) else extent // stride) + 1
            if attrs.get("ceil_mode", 0) and (out - 1) * stride >= size + begin:
                out -= 1
            dims.append((out, begin, end))
    return dims


def window_taps(in_sizes, kernel, attrs, dims, out_index):
    """The taps of one output's window in row-major kernel order: (input position or None for a pad, kernel
    position). Taps past the end pad (ceil_mode's last windows) are not part of the window."""
    rank = len(in_sizes)
    strides = attrs.get("strides") or [1] * rank
    dilations = attrs.get("dilations") or [1] * rank
    per_dim = []
    for i in range(rank):
        start = out_index[i] * strides[i] - dims[i][1]
        taps = []
        for k in range(kernel[i]):
            p = start + k * dilations[i]
            if p < in_sizes[i] + dims[i][2]:
                taps.append((p if 0 <= p < in_sizes[i] else None, k))
        per_dim.append(taps)
    for combo in itertools.product(*per_dim):
        inside = all(p is not None for p, _ in combo)
        yield (tuple(p for p, _ in combo) if inside else None), tuple(k for _, k in combo)


def has_empty_window(in_sizes, kernel, attrs):
    """Whether some output's window covers no input value (pads or dilation gaps only)."""
    dims = resolve_window(in_sizes, kernel, attrs)
    rank = len(in_sizes)
    strides = attrs.get("strides") or [1] * rank
    dilations = attrs.get("dilations") or [1] * rank
    for i, (out, begin, _) in enumerate(dims):
        for o in range(out):
            start = o * strides[i] - begin
            if not any(0 <= start + k * dilations[i] < in_sizes[i] for k in range(kernel[i])):
                return True
    return False


def sums(terms, acc, out_dtype, exact_terms, overflowed=None, extra_roundings=0, magnitudes=None):
    """(sums rounded to `acc`, ambiguous) of float64 `terms` [..., T], each already rounded to `acc` (a product
    that overflows it is infinite; `overflowed` marks those). NaN, or infinities of both signs, give NaN;
    infinities of one sign give that infinity.

    A sum is ambiguous where the order of the additions, or whether a product is rounded before it is added (a
    fused multiply-add keeps an overflowing product finite: fma(-4, FLT_MAX, +inf) is +inf where -inf + inf is
    NaN), decides the result beyond the test's tolerance:
    - infinities of both signs, one of them from an overflowing product;
    - cancellation: the recursive-summation bound u * (steps * sum|t| + |sum|) above a quarter of the tolerance,
      with steps T - 2 for exact terms, T - 1 for products rounded once (`exact_terms` False), plus
      `extra_roundings` for terms rounded more often, and sum|t| from `magnitudes` where a term is itself a sum;
    - partial sums that can overflow to an infinity the exact sum does not reach, or a sum within that bound of
      the type's max."""
    info = np.finfo(acc)
    big, unit, count = float(info.max), float(info.eps) / 2, terms.shape[-1]
    with np.errstate(all="ignore"):
        has_nan = np.isnan(terms).any(-1)
        plus_inf, minus_inf = (terms == np.inf).any(-1), (terms == -np.inf).any(-1)
        finite = np.where(np.isfinite(terms), terms, 0.0)
        positive = np.where(finite > 0, finite, 0.0).sum(-1)
        negative = -np.where(finite < 0, finite, 0.0).sum(-1)
        exact = finite.sum(-1)
        absolute = positive + negative if magnitudes is None else np.where(np.isfinite(magnitudes), magnitudes,
                                                                             0.0).sum(-1)
        steps = max(count - (2 if exact_terms else 1), 0) + extra_roundings
        error = unit * (steps * absolute + np.abs(exact))
        tiny = (finite != 0) & (np.abs(finite) < float(info.tiny))
        error = error + 0.5 * float(info.smallest_subnormal) * tiny.sum(-1)
        margin = 1 - 2 * (count + 1) * unit
        may_overflow_up, may_overflow_down = positive >= big * margin, negative >= big * margin
        value = exact.astype(acc).astype(np.float64)
        value = np.where(plus_inf, np.inf, np.where(minus_inf, -np.inf, value))
        nan = has_nan | (plus_inf & minus_inf)
        value = np.where(nan, np.nan, value)
        finite_only = ~(plus_inf | minus_inf | has_nan)
        near_max = np.abs(np.abs(exact) - big) <= big * (1 - margin)
        tolerance = np.maximum(RTOL[np.dtype(out_dtype)] * np.abs(exact), subnormal_atol(out_dtype))
        ambiguous = finite_only & ((may_overflow_up & (negative > 0)) | (may_overflow_down & (positive > 0)) | near_max
                                   | (error > 0.25 * tolerance))
        ambiguous |= ~nan & plus_inf & may_overflow_down
        ambiguous |= ~nan & minus_inf & may_overflow_up
        if overflowed is not None:
            true_plus = ((terms == np.inf) & ~overflowed).any(-1)
            true_minus = ((terms == -np.inf) & ~overflowed).any(-1)
            ambiguous |= ~has_nan & plus_inf & minus_inf & ~(true_plus & true_minus)
    return value, ambiguous


def to_acc(values, acc):
    """float64 values rounded to `acc` and back (a value beyond acc's range becomes infinite)."""
    with np.errstate(all="ignore"):
        return np.asarray(values, np.float64).astype(acc).astype(np.float64)


def rounded(values, dtype):
    with np.errstate(all="ignore"):
        return np.asarray(values).astype(dtype)


def pool_by_the_spec(kind, x, attrs, p=2):
    """(Y, Indices, ambiguous) of MaxPool / AveragePool / LpPool (`kind` "max", "average", "lp") on x [N, C, ...].
    A window reads the input values it covers. AveragePool divides the sum by their count, or with
    count_include_pad by the taps in input and pads (not taps past the end pad); LpPool is (sum |v|^p)^(1/p)
    (pads add 0); MaxPool skips NaN unless every value is NaN (the first tap then), the first maximum wins, and
    Indices are flat offsets into X: (n * C + c) * plane + the spatial offset, row-major, or column-major over the
    spatial dims with storage_order 1. A window with no input value averages to NaN (0 / 0; with
    count_include_pad to 0) and has an Lp norm of 0; MaxPool has no value there: `ambiguous` marks those windows
    and the sums that `sums` marks."""
    acc = accumulation_type(x.dtype)
    spatial, kernel = x.shape[2:], attrs["kernel_shape"]
    dims = resolve_window(spatial, kernel, attrs)
    out_shape = tuple(d[0] for d in dims)
    y = np.zeros(x.shape[:2] + out_shape, np.float64)
    indices = np.full(y.shape, -1, np.int64)
    ambiguous = np.zeros(y.shape, bool)
    plane = int(np.prod(spatial, dtype=np.int64))
    column_major = attrs.get("storage_order", 0) == 1
    offset_strides = [int(np.prod(spatial[:i] if column_major else spatial[i + 1:], dtype=np.int64))
                      for i in range(len(spatial))]
    values64 = x.astype(np.float64)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        image = values64[n, c]
        for out_index in itertools.product(*(range(d[0]) for d in dims)):
            taps = list(window_taps(spatial, kernel, attrs, dims, out_index))
            inside = [pos for pos, _ in taps if pos is not None]
            where = (n, c, *out_index)
            if not inside:  # only pads (or gaps): the average of no values is NaN, of pads 0; no maximum
                y[where] = 0.0 if kind == "lp" or attrs.get("count_include_pad", 0) else np.nan
                ambiguous[where] = kind == "max"
                continue
            values = np.array([image[pos] for pos in inside])
            if kind == "max":
                numbers = [i for i, v in enumerate(values) if not np.isnan(v)]
                best = max(numbers, key=lambda i: (values[i], -i)) if numbers else 0
                y[where] = values[best]
                spot = sum(q * s for q, s in zip(inside[best], offset_strides))
                indices[where] = (n * x.shape[1] + c) * plane + spot
                continue
            with np.errstate(all="ignore"):
                terms = to_acc(np.abs(values) ** p, acc) if kind == "lp" else values
            total, unclear = sums(terms[None, :], acc, x.dtype, exact_terms=kind != "lp")
            ambiguous[where] = unclear[0]
            if kind == "lp":
                with np.errstate(all="ignore"):
                    y[where] = to_acc(total[0] ** (1.0 / p), acc)
            else:
                count = len(taps) if attrs.get("count_include_pad", 0) else len(inside)
                y[where] = to_acc(total[0] / count, acc)
    return rounded(y, x.dtype), indices, ambiguous


def conv_by_the_spec(x, w, b, attrs):
    """(Y, ambiguous) of Conv: y[n, m, o] = sum over the channels c of m's group and the kernel taps k of
    x_padded[n, c, o * stride - pad + k * dilation] * w[m, c, k], plus b[m]; pads read 0 (0 times an infinite
    or NaN weight is NaN), and the taps a dilation skips are not read."""
    acc = accumulation_type(x.dtype)
    group = attrs.get("group", 1)
    spatial, kernel = x.shape[2:], w.shape[2:]
    dims = resolve_window(spatial, kernel, attrs)
    out_shape = tuple(d[0] for d in dims)
    taps = int(np.prod(kernel, dtype=np.int64))
    columns = np.zeros(x.shape[:2] + (taps,) + out_shape)  # im2col: the tap values of every output, pads 0
    x64 = x.astype(np.float64)
    for out_index in itertools.product(*(range(d[0]) for d in dims)):
        for t, (pos, _) in enumerate(window_taps(spatial, kernel, attrs, dims, out_index)):
            if pos is not None:
                columns[(slice(None), slice(None), t, *out_index)] = x64[(slice(None), slice(None), *pos)]
    per_group_in, per_group_out = x.shape[1] // group, w.shape[0] // group
    parts, finite_parts = [], []
    with np.errstate(all="ignore"):
        for g in range(group):
            reads = columns[:, g * per_group_in:(g + 1) * per_group_in][:, None]  # [N, 1, Cg, T, out...]
            weights = w[g * per_group_out:(g + 1) * per_group_out].astype(np.float64).reshape(
                (1, per_group_out, per_group_in, taps) + (1,) * len(out_shape))
            parts.append(reads * weights)
            finite_parts.append(np.isfinite(reads) & np.isfinite(weights))
    def as_terms(blocks):  # the groups' [N, M / group, Cg, T, out...] -> [N, M, out..., Cg * T]
        joined = np.concatenate(blocks, axis=1)
        return np.moveaxis(joined.reshape(joined.shape[:2] + (per_group_in * taps,) + out_shape), 2, -1)

    terms, finite_factors = as_terms(parts), as_terms(finite_parts)
    if b is not None:
        terms = np.concatenate([terms, np.broadcast_to(b.astype(np.float64).reshape(
            (1, -1) + (1,) * len(out_shape) + (1,)), terms.shape[:-1] + (1,))], axis=-1)
        finite_factors = np.concatenate([finite_factors, np.ones(terms.shape[:-1] + (1,), bool)], axis=-1)
    terms = to_acc(terms, acc)
    total, ambiguous = sums(terms, acc, x.dtype, exact_terms=False, overflowed=np.isinf(terms) & finite_factors)
    return rounded(total, x.dtype), ambiguous


def conv_transpose_window(in_sizes, kernel, attrs):
    """Per spatial dim (out size, pad at the beginning) of ConvTranspose: out = stride * (in - 1) +
    output_padding + dilated kernel - pads; with output_shape (its last R values), or SAME_* (out = in * stride),
    the total pad is the natural size minus out, split as the spec's pseudo-code does: SAME_UPPER
    total / 2 at the beginning, otherwise total - total / 2 (floor division, so a negative total extends the
    output)."""
    rank = len(in_sizes)
    strides = attrs.get("strides") or [1] * rank
    dilations = attrs.get("dilations") or [1] * rank
    extra = attrs.get("output_padding") or [0] * rank
    pads = attrs.get("pads") or [0] * (2 * rank)
    auto_pad = attrs.get("auto_pad", "NOTSET")
    requested = list(attrs["output_shape"][-rank:]) if attrs.get("output_shape") else None
    if requested is None and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        requested = [n * s for n, s in zip(in_sizes, strides)]
    dims = []
    for i, size in enumerate(in_sizes):
        natural = strides[i] * (size - 1) + extra[i] + (kernel[i] - 1) * dilations[i] + 1
        if requested is not None:
            total = natural - requested[i]
            begin = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            dims.append((requested[i], begin))
        elif auto_pad == "VALID":
            dims.append((natural, 0))
        else:
            dims.append((natural - pads[i] - pads[i + rank], pads[i]))
    return dims


def conv_transpose_by_the_spec(x, w, b, attrs):
    """(Y, ambiguous) of ConvTranspose: y[n, g * M/g + m, o] = b + the sum over the channels c of group g, the
    input positions i and the kernel taps k with o = i * stride + k * dilation - pad_begin of x[n, c, i] *
    w[c, m, k]."""
    acc = accumulation_type(x.dtype)
    group = attrs.get("group", 1)
    spatial, kernel = x.shape[2:], w.shape[2:]
    dims = conv_transpose_window(spatial, kernel, attrs)
    out_shape = tuple(d[0] for d in dims)
    rank = len(spatial)
    strides = attrs.get("strides") or [1] * rank
    dilations = attrs.get("dilations") or [1] * rank
    per_group_in, per_group_out = x.shape[1] // group, w.shape[1]
    contributions = {}  # output position -> list of (input position, kernel tap)
    for pos in itertools.product(*(range(n) for n in spatial)):
        for k in itertools.product(*(range(n) for n in kernel)):
            o = tuple(pos[d] * strides[d] + k[d] * dilations[d] - dims[d][1] for d in range(rank))
            if all(0 <= o[d] < out_shape[d] for d in range(rank)):
                contributions.setdefault(o, []).append((pos, k))
    width = max((len(v) for v in contributions.values()), default=0) * per_group_in + 1
    terms = np.zeros((x.shape[0], group * per_group_out, *out_shape, width))
    finite_factors = np.ones(terms.shape, bool)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    with np.errstate(all="ignore"):
        for o, taps in contributions.items():
            for m in range(group * per_group_out):
                g, m_local = divmod(m, per_group_out)
                column = 0
                for c in range(g * per_group_in, (g + 1) * per_group_in):
                    for pos, k in taps:
                        read, weight = x64[(slice(None), c, *pos)], w64[(c, m_local, *k)]
                        terms[(slice(None), m, *o, column)] = read * weight
                        finite_factors[(slice(None), m, *o, column)] = np.isfinite(read) & np.isfinite(weight)
                        column += 1
    if b is not None:
        terms[..., -1] = b.astype(np.float64).reshape((1, -1) + (1,) * rank)
    terms = to_acc(terms, acc)
    total, ambiguous = sums(terms, acc, x.dtype, exact_terms=False, overflowed=np.isinf(terms) & finite_factors)
    return rounded(total, x.dtype), ambiguous

def order_decides_product(a, b, c, acc):
    """Whether a * b * c in `acc` depends on the order of the two multiplications (the spec does not give one):
    a pair's product overflows where the whole does not (inf times a zero third factor is NaN), or underflows
    below the normal range where the whole does not (finite factors)."""
    info = np.finfo(acc)
    factors = (float(a), float(b), float(c))
    if not all(np.isfinite(f) for f in factors):
        return False
    whole = abs(factors[0] * factors[1] * factors[2])
    for i, j in ((0, 1), (0, 2), (1, 2)):
        pair = abs(factors[i] * factors[j])
        if (pair > float(info.max)) != (whole > float(info.max)) or (
                0 < pair < float(info.tiny) and whole >= float(info.tiny)):
            return True
    return False

def deform_conv_by_the_spec(x, w, offset, b, mask, attrs):
    """(Y, ambiguous) of DeformConv: Conv whose tap k of output o reads x at o * stride - pad + k * dilation plus
    offset[n, og, k, :, o] (og: the channel's offset group), by multilinear interpolation over the 2^R corners
    around that point (corners outside the input read 0; a corner of weight 0 is not read), times mask[n, og, k,
    o] (1 without a mask), times the weight. The sampled value is exact here (float64); an output is ambiguous
    also where order_decides_product says so for a sample, its mask value and its weight."""
    acc = accumulation_type(x.dtype)
    group, offset_group = attrs.get("group", 1), attrs.get("offset_group", 1)
    spatial, kernel = x.shape[2:], w.shape[2:]
    rank = len(spatial)
    dims = resolve_window(spatial, kernel, attrs)
    out_shape = tuple(d[0] for d in dims)
    strides = attrs.get("strides") or [1] * rank
    dilations = attrs.get("dilations") or [1] * rank
    kernel_taps = list(itertools.product(*(range(n) for n in kernel)))
    offsets = offset.astype(np.float64).reshape((x.shape[0], offset_group, len(kernel_taps), rank) + out_shape)
    scales = (mask.astype(np.float64).reshape((x.shape[0], offset_group, len(kernel_taps)) + out_shape)
              if mask is not None else np.ones((x.shape[0], offset_group, len(kernel_taps)) + out_shape))
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    per_group_in, per_group_out = x.shape[1] // group, w.shape[0] // group
    per_offset_group = x.shape[1] // offset_group
    width = per_group_in * len(kernel_taps) + 1
    terms = np.zeros((x.shape[0], w.shape[0]) + out_shape + (width,))
    magnitudes = np.zeros(terms.shape)
    finite_factors = np.ones(terms.shape, bool)
    ambiguous = np.zeros(terms.shape[:-1], bool)
    with np.errstate(all="ignore"):
        for n, o in itertools.product(range(x.shape[0]), itertools.product(*(range(d) for d in out_shape))):
            for c in range(x.shape[1]):
                og = c // per_offset_group
                for t, k in enumerate(kernel_taps):
                    point = [o[d] * strides[d] - dims[d][1] + k[d] * dilations[d] + offsets[(n, og, t, d) + o]
                             for d in range(rank)]
                    base = [np.floor(p) for p in point]
                    corners = []
                    for high in itertools.product((0, 1), repeat=rank):
                        spot = tuple(int(base[d]) + high[d] for d in range(rank))
                        weight = np.prod([(point[d] - base[d]) if high[d] else 1 - (point[d] - base[d])
                                          for d in range(rank)])
                        if weight != 0 and all(0 <= spot[d] < spatial[d] for d in range(rank)):
                            corners.append(weight * x64[(n, c) + spot])
                    sample, size = (sum(corners), sum(abs(v) for v in corners)) if corners else (0.0, 0.0)
                    scale = scales[(n, og, t) + o]
                    masked = sample * scale
                    column = (c % per_group_in) * len(kernel_taps) + t
                    for m in range((c // per_group_in) * per_group_out, (c // per_group_in + 1) * per_group_out):
                        weight_value = w64[(m, c % per_group_in) + k]
                        terms[(n, m) + o + (column,)] = masked * weight_value
                        magnitudes[(n, m) + o + (column,)] = size * abs(scale * weight_value)
                        finite_factors[(n, m) + o + (column,)] = bool(np.isfinite(sample) and np.isfinite(scale)
                                                                       and np.isfinite(weight_value))
                        ambiguous[(n, m) + o] |= order_decides_product(sample, scale, weight_value, acc)
    if b is not None:
        terms[..., -1] = b.astype(np.float64).reshape((1, -1) + (1,) * rank)
        magnitudes[..., -1] = np.abs(terms[..., -1])
    terms = to_acc(terms, acc)
    total, unclear = sums(terms, acc, x.dtype, exact_terms=False, overflowed=np.isinf(terms) & finite_factors,
                          extra_roundings=2 ** rank + 2, magnitudes=magnitudes)
    return rounded(total, x.dtype), unclear | ambiguous


def col2im_by_the_spec(data, image_shape, block_shape, attrs):
    """(Y, ambiguous) of Col2Im: y[n, c, p] = the sum of data[n, c * B + k, l] over the blocks l and block taps k
    with p = l * stride - pad + k * dilation (B: the block's size). Integer sums wrap as numpy's do."""
    rank = len(image_shape)
    strides = attrs.get("strides") or [1] * rank
    dilations = attrs.get("dilations") or [1] * rank
    pads = attrs.get("pads") or [0] * (2 * rank)
    blocks = [(image_shape[i] + pads[i] + pads[i + rank] - (block_shape[i] - 1) * dilations[i] - 1) // strides[i] + 1
              for i in range(rank)]
    taps = list(itertools.product(*(range(n) for n in block_shape)))
    channels = data.shape[1] // len(taps)
    contributions = {}
    for l, block in enumerate(itertools.product(*(range(n) for n in blocks))):
        for t, k in enumerate(taps):
            p = tuple(block[i] * strides[i] - pads[i] + k[i] * dilations[i] for i in range(rank))
            if all(0 <= p[i] < image_shape[i] for i in range(rank)):
                contributions.setdefault(p, []).append((t, l))
    if data.dtype.kind in "iu":
        y = np.zeros((data.shape[0], channels) + tuple(image_shape), data.dtype)
        with np.errstate(all="ignore"):
            for p, sources in contributions.items():
                for t, l in sources:
                    y[(slice(None), slice(None)) + p] += data[:, t::len(taps)][:, :channels, l]
        return y, np.zeros(y.shape, bool)
    acc = accumulation_type(data.dtype)
    width = max((len(v) for v in contributions.values()), default=0) + 1
    terms = np.zeros((data.shape[0], channels) + tuple(image_shape) + (width,))
    values = data.astype(np.float64).reshape(data.shape[0], channels, len(taps), data.shape[2])
    for p, sources in contributions.items():
        for column, (t, l) in enumerate(sources):
            terms[(slice(None), slice(None)) + p + (column,)] = values[:, :, t, l]
    total, ambiguous = sums(terms, acc, data.dtype, exact_terms=True)
    return rounded(total, data.dtype), ambiguous

def lrn_by_the_spec(x, attrs):
    """LRN: square_sum[n, c] = sum of x[n, i]^2 for i in [max(0, c - floor((size - 1) / 2)), min(C - 1, c +
    ceil((size - 1) / 2))], y = x / (bias + alpha / size * square_sum) ^ beta, in float64 (as nxrt computes
    it for every type), rounded once."""
    size = attrs["size"]
    alpha, beta, bias = attrs.get("alpha", 1e-4), attrs.get("beta", 0.75), attrs.get("bias", 1.0)
    # The attributes are float32 in the model: the kernel sees their float32 values.
    alpha, beta, bias = (float(np.float32(v)) for v in (alpha, beta, bias))
    v = x.astype(np.float64)
    channels = x.shape[1]
    square_sum = np.zeros_like(v)
    with np.errstate(all="ignore"):
        for c in range(channels):
            lo, hi = max(0, c - (size - 1) // 2), min(channels - 1, c + -(-(size - 1) // 2))
            square_sum[:, c] = np.sum(v[:, lo:hi + 1] ** 2, axis=1)
        return [rounded(v / (bias + alpha / size * square_sum) ** beta, x.dtype)]



# Where onnx.reference's pools are wrong (known_differences/ states each with its reason). Each takes the case as
# known_differences' predicates do: (op, opset, inputs, attrs).

def _geometry(inputs, attrs):
    x = inputs[0]
    rank = x.ndim - 2
    kernel = attrs["kernel_shape"]
    strides = attrs.get("strides") or [1] * rank
    dilations = attrs.get("dilations") or [1] * rank
    return x.shape[2:], kernel, strides, dilations, resolve_window(x.shape[2:], kernel, attrs)


def nan_input(op, opset, inputs, attrs):
    return bool(np.isnan(inputs[0].astype(np.float64)).any())


def dilated_auto_pad(op, opset, inputs, attrs):
    return attrs.get("auto_pad", "NOTSET") != "NOTSET" and max(attrs.get("dilations") or [1]) > 1


def ceil_pad_beyond(amount):
    """ceil_mode windows that reach `amount` or more taps past the end pad in some dim."""
    def applies(op, opset, inputs, attrs):
        if not attrs.get("ceil_mode", 0) or attrs.get("auto_pad", "NOTSET") != "NOTSET":
            return False
        spatial, kernel, strides, dilations, dims = _geometry(inputs, attrs)
        return any((out - 1) * s + (k - 1) * d + 1 - size - begin - end >= amount
                   for size, k, s, d, (out, begin, end) in zip(spatial, kernel, strides, dilations, dims))
    return applies


def same_pad_negative(op, opset, inputs, attrs):
    """SAME_* where the spec's pad_shape formula, (out - 1) * stride + dilated kernel - in, is negative."""
    if attrs.get("auto_pad", "NOTSET") not in ("SAME_UPPER", "SAME_LOWER"):
        return False
    spatial, kernel, strides, dilations, dims = _geometry(inputs, attrs)
    return any((out - 1) * s + (k - 1) * d + 1 - size < 0
               for size, k, s, d, (out, _, _) in zip(spatial, kernel, strides, dilations, dims))


def unit_stride_max_pool(opset, attrs):
    """The reference runs MaxPool with every stride and dilation 1 through another implementation."""
    return all(v == 1 for v in (attrs.get("strides") or [1]) + (attrs.get("dilations") or [1]))


def unit_max_pool_faults(op, opset, inputs, attrs):
    """The unit-stride MaxPool of the reference: pads read as [top, bottom, left, right], only in 2-D, and counted
    twice with ceil_mode; 2-D inputs padded with NaN even where no pad is asked for (which fails for integers);
    SAME only in 2-D; NaN dropped (an all-NaN window fails)."""
    if not unit_stride_max_pool(opset, attrs):
        return False
    x = inputs[0]
    rank, integer = x.ndim - 2, x.dtype.kind in "iu"
    pads = attrs.get("pads") or [0] * (2 * rank)
    same = attrs.get("auto_pad", "NOTSET") in ("SAME_UPPER", "SAME_LOWER")
    return (any(pads) and (rank != 2 or pads[1] != pads[2] or attrs.get("ceil_mode", 0))) or (same and rank != 2) or (
        integer and rank == 2) or nan_input(op, opset, inputs, attrs)


def strided_max_pool_faults(op, opset, inputs, attrs):
    """The strided MaxPool of the reference: SAME_LOWER sized floor(in / stride) and padded as SAME_UPPER, a
    negative SAME pad split with floor division, and a NaN first tap kept as the maximum."""
    if unit_stride_max_pool(opset, attrs):
        return False
    return attrs.get("auto_pad") == "SAME_LOWER" or same_pad_negative(op, opset, inputs, attrs) or \
        nan_input(op, opset, inputs, attrs)


def lrn_reference_faults(op, opset, inputs, attrs):
    """The reference's LRN loops over the batch size instead of the channels, takes only 4-D inputs, and computes
    in the input type (float32 squares overflow beyond 1.8e19)."""
    x = inputs[0]
    if x.ndim != 4 or x.shape[0] != x.shape[1]:
        return True
    wide = np.abs(x.astype(np.float64))
    with np.errstate(all="ignore"):
        squares = float(np.max(wide[np.isfinite(wide)] ** 2, initial=0.0)) * attrs["size"]
    return x.dtype == np.float32 and squares >= float(np.finfo(np.float32).max) / 4


def conv_dilation_faults(op, opset, inputs, attrs):
    """The reference's Conv dilates W by inserting zero taps: an input value a dilation skips is multiplied by 0."""
    x = inputs[0]
    return max(attrs.get("dilations") or [1]) > 1 and not np.isfinite(x.astype(np.float64)).all()


def conv_transpose_faults(op, opset, inputs, attrs):
    """The reference's ConvTranspose: groups above 1, an empty batch, output_padding and output_shape."""
    return attrs.get("group", 1) > 1 or inputs[0].shape[0] == 0 or any(attrs.get("output_padding") or [0]) or \
        bool(attrs.get("output_shape"))


def deform_conv_faults(op, opset, inputs, attrs):
    """The reference's DeformConv runs 2-D only and divides by (side - 1) to normalise its grid."""
    x = inputs[0]
    return x.ndim != 4 or min(x.shape[2:]) < 2


def non_finite_input(op, opset, inputs, attrs):
    return any(a is not None and not np.isfinite(a.astype(np.float64)).all() for a in inputs)
