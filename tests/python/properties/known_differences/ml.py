"""Known differences of the ai.onnx.ml operators: Scaler, Normalizer, Imputer, FeatureVectorizer,
OneHotEncoder, LabelEncoder, LinearRegressor, LinearClassifier, TreeEnsemble, TreeEnsembleRegressor and
SVMRegressor."""

import math

import numpy as np

from .common import Difference


def _ml_reference(op, inputs, attrs, outputs=1, opset=1):
    """The reference's results for an ai.onnx.ml case (`op` without its domain)."""
    from property_harness import node_model, run_reference

    return run_reference(node_model(op, opset, inputs, attrs, outputs, domain="ai.onnx.ml"), inputs)


def _scaler_in_float64(op, opset, inputs, attrs):
    """Scaler: the reference on float64 copies (at least 1-D), converted to float32 once in the input's shape."""
    x = inputs[0]
    result = _ml_reference("Scaler", [x.astype(np.float64).reshape(x.shape or (1,))], attrs)[0]
    with np.errstate(all="ignore"):  # beyond float32's range: +-inf
        return [result.astype(np.float32).reshape(x.shape)]


def _as_rows(x):
    """x as rows of its last dimension, [-1, C] (a rank-0 x: one row of one)."""
    columns = x.shape[-1] if x.ndim else 1
    return x.reshape(int(np.prod(x.shape[:-1], dtype=np.int64)) if x.ndim else 1, columns)


def _normalizer_divisors(x, norm):
    """Each row's divisor in float64 by the norm's formula: max |x|, sum |x| or sqrt(sum x^2) (NaN in a row: NaN)."""
    rows = _as_rows(x).astype(np.float64)
    with np.errstate(all="ignore"):
        if norm == "MAX":
            return np.max(np.abs(rows), axis=1, initial=0.0) if rows.shape[1] else np.zeros(len(rows))
        if norm == "L1":
            return np.sum(np.abs(rows), axis=1)
        return np.sqrt(np.sum(rows * rows, axis=1))


def _normalizer_by_the_spec(op, opset, inputs, attrs):
    x = inputs[0]
    rows = _as_rows(x).astype(np.float64)
    divisors = _normalizer_divisors(x, attrs.get("norm", "MAX"))[:, None]
    with np.errstate(all="ignore"):
        out = np.where(divisors == 0, rows, rows / np.where(divisors == 0, 1.0, divisors))
    return [out.astype(np.float32).reshape(x.shape)]


def _normalizer_reference_wrong(opset, inputs, attrs):
    """Where the reference's Normalizer differs from the formula: not float32 [N, C], a divisor under its 1e-30
    floor, a NaN row under MAX (np.max propagates it, as the formula does, but the floor hides 0 * inf) or a
    float32 sum of squares / of magnitudes that overflows where the float64 one does not."""
    x = inputs[0]
    if x.dtype != np.float32 or x.ndim != 2 or x.size == 0:
        return True
    norm = attrs.get("norm", "MAX")
    exact = _normalizer_divisors(x, norm)
    with np.errstate(all="ignore"):  # the reference's float32 divisors
        magnitudes = np.abs(x)
        in_float32 = (np.max(magnitudes, axis=1) if norm == "MAX" else np.sum(magnitudes, axis=1) if norm == "L1"
                      else np.sqrt(np.sum(x * x, axis=1))).astype(np.float64)
        off = ~((in_float32 == exact) | (np.abs(in_float32 - exact) <= 1e-6 * np.abs(exact)))
    finite = np.isfinite(x).all(axis=1)
    return bool(((exact > 0) & (exact < 1e-30)).any() or (finite & off).any())


def _imputer_on_rows(op, opset, inputs, attrs):
    """Imputer of any rank: the reference on the input as rows of its last dimension ([-1, C]), reshaped back."""
    x = inputs[0]
    return [_ml_reference("Imputer", [_as_rows(x)], attrs)[0].reshape(x.shape)]


def _feature_vectorizer_rows(op, opset, inputs, attrs):
    """The reference with each 1-D input given as the spec's [1, C], its result converted to float32."""
    rows = [a.reshape(1, -1) if a.ndim == 1 else a for a in inputs]
    return [_ml_reference("FeatureVectorizer", rows, attrs)[0].astype(np.float32)]


def _one_hot_by_the_spec(op, opset, inputs, attrs):
    """One column per listed category (a repeated category: its last column); numbers truncated toward zero to
    int64 first, NaN, infinities and values outside int64 matching none."""
    x = inputs[0]
    categories = attrs.get("cats_strings") or attrs.get("cats_int64s")
    column = {c: i for i, c in enumerate(categories)}
    out = np.zeros((x.size, len(categories)), np.float32)
    for i, v in enumerate(x.ravel().tolist()):
        if isinstance(v, float):
            v = int(v) if math.isfinite(v) and abs(v) < 2.0 ** 63 else None
        if v in column:
            out[i, column[v]] = 1.0
    return [out.reshape(*x.shape, len(categories))]


def _tensor_attribute_values(tensor):
    """A TensorProto's elements as a list; strings read from the proto itself (numpy's bytes arrays drop a
    string's trailing NULs)."""
    from onnx import TensorProto, numpy_helper

    if tensor.data_type == TensorProto.STRING:
        return [s.decode("utf-8") for s in tensor.string_data]
    return numpy_helper.to_array(tensor).ravel().tolist()


def _label_encoder_keys_and_values(attrs):
    """LabelEncoder's key and value lists from its keys_* / values_* attributes."""
    def pick(prefix):
        for suffix in ("strings", "int64s", "floats"):
            if f"{prefix}_{suffix}" in attrs:
                return list(attrs[f"{prefix}_{suffix}"])
        return _tensor_attribute_values(attrs[f"{prefix}_tensor"])
    return pick("keys"), pick("values")


def _label_encoder_default(attrs, dtype):
    if "default_tensor" in attrs:
        return _tensor_attribute_values(attrs["default_tensor"])[0]
    if dtype == object:
        return attrs.get("default_string", "_Unused")
    if dtype.kind == "f":
        return attrs.get("default_float", -0.0)
    return attrs.get("default_int64", -1)


def _label_encoder_by_the_spec(op, opset, inputs, attrs):
    """Look-up by value, the last of repeated keys winning; NaN matches a NaN key; at opset 2 (bit-wise
    comparison) -0.0 and 0.0 are different keys, from opset 4 the same one."""
    x = inputs[0]
    keys, values = _label_encoder_keys_and_values(attrs)
    out_dtype = _label_encoder_value_dtype(attrs)

    def canonical(v):
        if isinstance(v, float):
            if math.isnan(v):
                return "nan"
            if v == 0 and opset < 4:
                return ("zero", math.copysign(1.0, v))
            return v + 0.0
        return v
    table = {canonical(k): v for k, v in zip(keys, values)}
    default = _label_encoder_default(attrs, out_dtype)
    found = [table.get(canonical(v), default) for v in x.ravel().tolist()]
    return [np.array(found, dtype=out_dtype).reshape(x.shape)]


def _label_encoder_value_dtype(attrs):
    if "values_tensor" in attrs:
        from onnx import numpy_helper

        return numpy_helper.to_array(attrs["values_tensor"]).dtype
    return np.dtype({"values_strings": object, "values_int64s": np.int64, "values_floats": np.float32}[
        next(k for k in attrs if k.startswith("values_"))])


def _label_encoder_reference_wrong(opset, inputs, attrs):
    """The reference never matches a NaN key, matches -0.0 with 0.0 at opset 2, fails without default_tensor and
    loses the trailing NULs of strings in tensor attributes (numpy bytes)."""
    x = inputs[0]
    if opset >= 4 and "values_tensor" in attrs and "default_tensor" not in attrs:
        return True
    tensors = [attrs[name] for name in ("keys_tensor", "values_tensor", "default_tensor") if name in attrs]
    if any(v.endswith("\x00") for t in tensors if t.data_type == 8 for v in _tensor_attribute_values(t)):
        return True
    if x.dtype.kind != "f" or x.size == 0:
        return False
    keys, _ = _label_encoder_keys_and_values(attrs)
    has_nan = any(math.isnan(k) for k in keys) and bool(np.isnan(x).any())
    zeros = opset < 4 and any(k == 0 for k in keys) and bool((x == 0).any())
    return has_nan or zeros


def _probit(values):
    """1.41421356 * erf^-1(2v - 1) by Winitzki's approximation, as the reference and onnxruntime compute it, with
    erf^-1(+-1) = +-inf (the limit; the reference returns 0 there)."""
    x = 2.0 * np.asarray(values, np.float64) - 1.0
    with np.errstate(all="ignore"):
        square = (1.0 - x) * (1.0 + x)
        log = np.log(square)
        a = 2.0 / (np.pi * 0.147) + 0.5 * log
        root = np.where(square == 0, np.inf, np.sqrt(-a + np.sqrt(a * a - log / 0.147)))
        return 1.41421356 * np.where(x < 0, -1.0, 1.0) * root


def _post_transformed(scores, post):
    """The reference's post-transforms (onnx.reference's _common_classifier) on rows of scores, in their type;
    PROBIT as _probit."""
    from onnx.reference.ops.aionnxml._common_classifier import expit, softmax, softmax_zero

    z = np.array(scores, copy=True)
    if z.size == 0 or post in (None, "NONE", 0):
        return z
    with np.errstate(all="ignore"):
        if post in ("LOGISTIC", 2):
            return expit(z)
        if post in ("SOFTMAX", 1):
            return softmax(z)
        if post in ("SOFTMAX_ZERO", 3):
            return softmax_zero(z)
        return _probit(z).astype(z.dtype)


def _linear_scores(x, attrs, count):
    """float64 scores of a linear model: x . coefficients[t] + intercepts[t] for each of `count` coefficient rows
    (intercepts zeros when omitted), as [N, count] for x [N, F] or [F]. The products are formed one by one: numpy's
    matrix product (BLAS) makes NaN * 0 zero, which IEEE arithmetic does not."""
    rows = (x.reshape(1, -1) if x.ndim == 1 else x).astype(np.float64)
    weights = np.array(attrs["coefficients"], np.float64).reshape(count, rows.shape[1])
    intercepts = np.array(attrs.get("intercepts") or [0.0] * count, np.float64)
    with np.errstate(all="ignore"):
        return np.sum(rows[:, None, :] * weights[None, :, :], axis=2) + intercepts


def _linear_regressor_in_float64(op, opset, inputs, attrs):
    """The spec's scores in float64 (_linear_scores), the reference's post-transform in float64, converted to
    float32 once."""
    scores = _linear_scores(inputs[0], attrs, attrs.get("targets", 1))
    with np.errstate(all="ignore"):
        return [_post_transformed(scores, attrs.get("post_transform", "NONE")).astype(np.float32)]


def _linear_classifier_in_float64(op, opset, inputs, attrs):
    """The spec's scores in float64 (_linear_scores; a single row with two class labels as [-s, s]), converted to
    float32 once; then as the reference continues for float32 inputs: the post-transform in float32 and the label,
    the argmax (the first NaN, else the first largest) or for one score column the threshold 0 (0.5 after a
    post-transform): the first label (1 without labels) at or above it, else 0 (or the empty string)."""
    x = inputs[0]
    post = attrs.get("post_transform", "NONE")
    classes = len(attrs["coefficients"]) // (x.shape[-1])
    labels = attrs.get("classlabels_ints") or attrs.get("classlabels_strings")
    scores = _linear_scores(x, attrs, classes)
    if classes == 1 and labels is not None and len(labels) == 2:
        scores = np.concatenate([-scores, scores], axis=1)
    with np.errstate(all="ignore"):
        scores = _post_transformed(scores.astype(np.float32), post)
        if scores.shape[1] > 1:
            label = [labels[i] if labels is not None else i for i in np.argmax(scores, axis=1)]
        else:
            positive = scores[:, 0] >= (0 if post == "NONE" else 0.5)
            label = [(labels[0] if labels is not None else 1) if p else (0 if labels is None or isinstance(
                labels[0], int) else "") for p in positive]
    string_labels = "classlabels_strings" in attrs
    return [np.array(label, dtype=object if string_labels else np.int64).reshape(len(scores)), scores]


def _tree_ensemble_by_the_spec(op, opset, inputs, attrs):
    """TreeEnsemble (opset 5): the reference on the input (float16: on a float32 copy, rounded once), after
    rewriting each BRANCH_NEQ node as the BRANCH_EQ node with swapped branches and inverted missing-value track
    (the same tree for every input, NaN included, where the reference's NEQ sends NaN true); targets no leaf
    reaches read 0 under MIN and MAX; then the post-transform."""
    from onnx import numpy_helper

    x = inputs[0]
    result_shape = (x.shape[0], attrs["n_targets"])
    if x.shape[0] == 0:
        return [np.zeros(result_shape, x.dtype)]
    fixed = {**attrs, "nodes_trueleafs": list(attrs["nodes_trueleafs"]),
             "nodes_falseleafs": list(attrs["nodes_falseleafs"])}
    modes = numpy_helper.to_array(attrs["nodes_modes"]).copy()
    if (modes == 5).any():
        neq = modes == 5
        modes[neq] = 4
        swap = {}
        for side in ("nodeids", "leafs"):
            true, false = list(attrs[f"nodes_true{side}"]), list(attrs[f"nodes_false{side}"])
            swap[f"nodes_true{side}"] = [f if n else t for t, f, n in zip(true, false, neq)]
            swap[f"nodes_false{side}"] = [t if n else f for t, f, n in zip(true, false, neq)]
        missing = list(attrs.get("nodes_missing_value_tracks_true") or [0] * len(modes))
        fixed.update(swap, nodes_modes=numpy_helper.from_array(modes),
                     nodes_missing_value_tracks_true=[1 - m if n else m for m, n in zip(missing, neq)])
    # A one-leaf tree (a root whose both branches are one leaf): the reference reads the leaf at the root's node
    # index instead of the one named; given as a root over that leaf and a copy of it.
    weights = numpy_helper.to_array(attrs["leaf_weights"])
    targets, false_ids = list(attrs["leaf_targetids"]), list(fixed["nodes_falsenodeids"])
    for root in attrs["tree_roots"]:
        if fixed["nodes_trueleafs"][root] and fixed["nodes_falseleafs"][root] and \
                fixed["nodes_truenodeids"][root] == false_ids[root]:
            weights = np.append(weights, weights[false_ids[root]])
            targets.append(targets[false_ids[root]])
            false_ids[root] = len(targets) - 1
    fixed.update(leaf_weights=numpy_helper.from_array(weights), leaf_targetids=targets, nodes_falsenodeids=false_ids)
    wide = x.astype(np.float32) if x.dtype == np.float16 else x
    result = _ml_reference("TreeEnsemble", [wide], fixed, opset=opset)[0]
    if attrs.get("aggregate_function", 1) in (2, 3):  # the targets some leaf reaches: a count of them above 0
        ones = numpy_helper.from_array(np.ones(len(targets), weights.dtype))
        counted = {**fixed, "leaf_weights": ones, "aggregate_function": 1}
        result[_ml_reference("TreeEnsemble", [wide], counted, opset=opset)[0] == 0] = 0
    with np.errstate(all="ignore"):
        return [_post_transformed(result.astype(np.float64), attrs.get("post_transform", 0)).astype(x.dtype)]


def _svm_kernel_value(svm, x, v, kernel):
    """K(x, v) as nxrt computes it: x . v in float32 (the reference's kernel_dot for LINEAR), the kernel of that
    in float64 rounded to float32 once; RBF's |x - v|^2 in float64."""
    with np.errstate(all="ignore"):
        if kernel == "RBF":
            distance = float(np.sum((x.astype(np.float64) - v.astype(np.float64)) ** 2))
            return float(np.float32(np.exp(-svm.gamma_ * distance)))
        dot = float(np.float32(svm.kernel_dot(x, v, "LINEAR")))
        if kernel == "POLY":
            return float(np.float32(np.power(svm.gamma_ * dot + svm.coef0_, float(svm.degree_))))
        return float(np.float32(np.tanh(svm.gamma_ * dot + svm.coef0_))) if kernel == "SIGMOID" else dot


def _svm_regressor_with_double_sums(op, opset, inputs, attrs):
    """SVMRegressor as nxrt computes it: the kernel values of _svm_kernel_value (the reference's parameters and
    kernel formulas) summed in float64 (rho + sum of coefficient x kernel value), the linear form x . coefficients
    + rho in float64; +-1 for one_class; then the reference's post-transforms in float64, rounded to float32."""
    from onnx.reference.ops.aionnxml.op_svm_helper import SVMCommon

    x = inputs[0]
    rows = (x.reshape(1, -1) if x.ndim == 1 else x).astype(np.float32)
    names = ("coefficients", "kernel_params", "kernel_type", "n_supports", "one_class", "rho", "support_vectors")
    defaults = {"kernel_type": "LINEAR", "n_supports": 0, "one_class": 0}
    svm = SVMCommon(**{name: attrs.get(name, defaults.get(name)) for name in names})
    supports = attrs.get("n_supports", 0)
    coefficients = np.array(attrs["coefficients"], np.float64)
    values = []
    with np.errstate(all="ignore"):
        for row in rows:
            if supports:
                vectors = np.array(attrs["support_vectors"], np.float32).reshape(supports, -1)
                kernels = [_svm_kernel_value(svm, row, v, attrs.get("kernel_type", "LINEAR")) for v in vectors]
                value = float(attrs["rho"][0])
                for c, k in zip(coefficients.tolist(), kernels):
                    value += c * k
            else:
                value = float(attrs["rho"][0]) + float(np.sum(row.astype(np.float64) * coefficients))
            values.append((1.0 if value > 0 else -1.0) if attrs.get("one_class", 0) else value)
        result = np.array(values, np.float64).reshape(len(rows), 1)
        return [_post_transformed(result, attrs.get("post_transform", "NONE")).astype(np.float32)]


def _as_float_lists(attrs):
    """The legacy tree ensembles' *_as_tensor attributes as their float list forms (the reference reads only
    those; the values are float32 in the property tests, so the lists hold them exactly)."""
    from onnx import numpy_helper

    fixed = dict(attrs)
    for name in [n for n in attrs if n.endswith("_as_tensor")]:
        fixed[name[:-len("_as_tensor")]] = numpy_helper.to_array(fixed.pop(name)).astype(np.float64).tolist()
    return fixed


def _tree_ensemble_regressor_by_the_reference(op, opset, inputs, attrs):
    """The reference on float64 [N, F] copies with list attributes, missing-value tracks 0 when omitted and no
    post-transform; then its post-transform in float64, converted to float32 once."""
    x = inputs[0]
    rows = (x.reshape(1, -1) if x.ndim == 1 else x).astype(np.float64)
    fixed = {**_as_float_lists(attrs), "post_transform": "NONE"}
    fixed.setdefault("nodes_missing_value_tracks_true", [0] * len(attrs["nodes_treeids"]))
    result = _ml_reference("TreeEnsembleRegressor", [rows], fixed, opset=opset)[0]
    with np.errstate(all="ignore"):
        return [_post_transformed(result.reshape(len(rows), attrs["n_targets"]),
                                  attrs.get("post_transform", "NONE")).astype(np.float32)]


DIFFERENCES = [
    # ai.onnx.ml (test_ml_properties.py, test_ml_model_properties.py)
    Difference(
        "ai.onnx.ml.Scaler",
        "The schema's Y is float; the reference returns the input's type (int32 (x - 1.5) * 0.5 of -3 is -2 "
        "there, -2.25 in float) and for a rank-0 input a [1] result (its length-1 offset list broadcasts). "
        "Compared with the reference on float64 copies, converted to float32 once in the input's shape (nxrt "
        "computes in double; onnxruntime gives the same float results and refuses rank 0).",
        lambda opset, inputs, attrs: inputs[0].dtype != np.float32 or inputs[0].ndim == 0,
        _scaler_in_float64,
    ),
    Difference(
        "ai.onnx.ml.Normalizer",
        "The reference divides by max(divisor, 1e-30) where the spec divides unless the divisor is zero ([1e-40, 0] "
        "under MAX is [1e-10, 0] there, [1, 0] by the spec), computes float32 rows in float32 (L2 of [1e20] "
        "overflows to 0 there, 1 in float64), returns float64 for double and integer inputs (the schema's Y is "
        "float) and fails on a 1-D input (the spec's one row). Compared with the formula in float64: max |x|, "
        "sum |x|, sqrt(sum x^2) (the spec writes max(X) and sum(X); the norms' absolute values, as the reference "
        "and scikit-learn read them), a zero divisor leaving the row as it is. onnxruntime divides by the signed "
        "max(X) (MAX of [-3, 1, 2] is [-1.5, 0.5, 1]) and sums float32 squares (L2 of [1e20] is NaN).",
        _normalizer_reference_wrong,
        _normalizer_by_the_spec,
    ),
    Difference(
        "ai.onnx.ml.Imputer",
        "The reference refuses inputs that are not 2-D (\"x must be a matrix\"); the spec's [*, F] takes any rank "
        "(onnxruntime and nxrt). Compared with the reference on the input as [-1, F] rows, reshaped back.",
        lambda opset, inputs, attrs: inputs[0].ndim != 2,
        _imputer_on_rows,
    ),
    Difference(
        "ai.onnx.ml.FeatureVectorizer",
        "The reference reshapes a 1-D input [C] to [C, 1] (C rows) where the spec treats it as [1, C], and returns "
        "the inputs' type where the schema's Y is float. Compared with the reference on 1-D inputs given as "
        "[1, C], converted to float32 (onnxruntime also gives float).",
        lambda opset, inputs, attrs: inputs[0].dtype != np.float32 or any(a.ndim == 1 for a in inputs),
        _feature_vectorizer_rows,
    ),
    Difference(
        "ai.onnx.ml.OneHotEncoder",
        "For float and double inputs the spec casts \"to integers\" before the look-up; the reference looks the "
        "float up as it is (2.5 matches no category there, category 2 after the cast, as nxrt and onnxruntime "
        "give). It implements ranks 1 and 2 only (the spec: any), fails on an empty input with zeros = 0 (np.min of "
        "nothing), and with a repeated category sizes the output by the distinct ones and fails (the spec: one "
        "column per listed category; nxrt and onnxruntime set the last one's). Compared with the spec's rule.",
        lambda opset, inputs, attrs: inputs[0].dtype.kind == "f" or inputs[0].ndim not in (1, 2) or (
            attrs.get("zeros", 1) == 0 and inputs[0].size == 0) or len(
            set(attrs.get("cats_strings") or attrs.get("cats_int64s"))) < len(
            attrs.get("cats_strings") or attrs.get("cats_int64s")),
        _one_hot_by_the_spec,
    ),
    Difference(
        "ai.onnx.ml.LabelEncoder",
        "The reference never maps a NaN input (dict look-up: NaN != NaN) where the spec maps it (\"even a float NaN "
        "can be mapped\", opset 2; \"NaN match any input NaN\", opset 4); at opset 2 it maps -0.0 to the value of "
        "key 0.0 where the spec compares bit-wise; at opset 4 it fails on a values_tensor without default_tensor "
        "(the spec's default is {-1}, {-0.f} or {\"_Unused\"} by type); a string ending in NUL in a tensor "
        "attribute loses the NUL (numpy bytes). Compared with the spec's look-up, the "
        "last of repeated keys winning (opset 4: \"the last key takes precedence\", as the reference does). "
        "onnxruntime maps no NaN, maps -0.0 as 0.0, takes the first of repeated keys and has no opset 4.",
        _label_encoder_reference_wrong,
        _label_encoder_by_the_spec,
    ),
    Difference(
        "ai.onnx.ml.LinearRegressor",
        "The reference implements post_transform NONE only (NotImplementedError), adds NaN when intercepts are "
        "omitted (np.array(None)), casts the coefficients to integer inputs' type and returns the input's type "
        "(the schema's Y is float), computes float32 inputs in float32 (x . w loses the digits that cancel), "
        "returns a 1-D input's scores as [targets] (the spec's one example: [1, targets]) and takes numpy's "
        "matrix product, which makes NaN * 0 zero. Compared with x . w + b in float64 (products one by one), "
        "the reference's own post-transforms (PROBIT as _probit) in float64, converted to float32 once; nxrt "
        "computes in double.",
        lambda opset, inputs, attrs: True,
        _linear_regressor_in_float64,
    ),
    Difference(
        "ai.onnx.ml.LinearClassifier",
        "The reference adds NaN scores when intercepts are omitted, computes in float32 (integer inputs lose their "
        "digits beyond 2^24; x . w loses what cancels) but in float64 for double inputs (Z then float64, the "
        "schema's is float), and its PROBIT gives 0 for a score of 0 or 1 (its erf^-1(+-1) returns 0; the limit, "
        "which nxrt and onnxruntime give, is -inf / +inf); numpy's matrix product makes NaN * 0 zero. Compared "
        "with x . w + b in float64 (products one by one), converted to float32 once, then the reference's own "
        "float32 post-transform and label rule.",
        lambda opset, inputs, attrs: True,
        _linear_classifier_in_float64,
    ),
    Difference(
        "ai.onnx.ml.TreeEnsemble",
        "The reference ignores post_transform (the spec: \"the transform to apply to the score\"), fails on an "
        "input of no rows (apply_along_axis), sends a NaN true at a BRANCH_NEQ node without a missing-value track "
        "(NaN != split; the spec: the false branch when nodes_missing_value_tracks_true is 0), leaves a target "
        "no leaf reaches at +-float max under MIN / MAX (nxrt: 0, as under SUM), reads a one-leaf tree's weight "
        "at the root's node index instead of the leaf it names and adds float16 weights in float16. Compared with "
        "the reference on float32 copies of float16 inputs with NEQ nodes rewritten as the equivalent EQ nodes, "
        "unreached MIN / MAX targets 0, then its own post-transforms.",
        lambda opset, inputs, attrs: True,
        _tree_ensemble_by_the_spec,
    ),
    Difference(
        "ai.onnx.ml.SVMRegressor",
        "The reference implements post_transform NONE only (the spec: \"the transform to apply to the score\"; "
        "onnxruntime reads it and applies none), treats a 1-D input's elements as rows and sums in float32: "
        "3.4e38 x 2 overflows to inf and inf - inf gives NaN where the double sum is -inf, and a linear "
        "coefficient of 1.4e-45 times 0.5 underflows to 0 where the double product is positive (one_class's sign "
        "flips). Compared with the reference's kernels and parameters in nxrt's arithmetic (x . v in float32, the "
        "kernel of it in float64 rounded once, RBF distances in float64, sums and the linear form in float64), "
        "then the reference's post-transforms.",
        lambda opset, inputs, attrs: True,
        _svm_regressor_with_double_sums,
    ),
    Difference(
        "ai.onnx.ml.TreeEnsembleRegressor",
        "The reference implements post_transform NONE only, fails on *_as_tensor attributes (it reads the list "
        "forms) and on a NaN feature when nodes_missing_value_tracks_true is omitted (the spec: false for every "
        "node), returns integer inputs' type (the schema's Y is float) and treats a 1-D input's elements as "
        "rows. Compared with the reference on float64 [N, F] copies with the list forms and tracks of 0, then "
        "its own post-transforms in float64, converted to float32 once (nxrt sums in double).",
        lambda opset, inputs, attrs: True,
        _tree_ensemble_regressor_by_the_reference,
    ),
]
