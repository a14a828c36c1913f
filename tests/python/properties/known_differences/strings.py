"""Known differences of the string ops (StringNormalizer, StringSplit, TfIdfVectorizer, RegexFullMatch) and of
Cast / CastLike into and out of strings."""

import math

import numpy as np

from .common import Difference


def _cast_types(inputs, attrs):
    """(source, destination) numpy dtypes of a Cast case (attribute `to`) or a CastLike one (input target_type)."""
    from onnx.helper import tensor_dtype_to_np_dtype

    if len(inputs) > 1:
        return inputs[0].dtype, inputs[1].dtype
    return inputs[0].dtype, np.dtype(object) if attrs["to"] == 8 else np.dtype(tensor_dtype_to_np_dtype(attrs["to"]))


def _shortest_scientific(value, dtype):
    """The fewest significant digits, as "d.ddde+XX", that read back through float32 (float64 for float64) to the
    same value of `dtype`; a float8 value prints as the float32 it is."""
    import ml_dtypes

    if dtype in (np.float16, np.float32, np.float64) or dtype.itemsize == 1:
        kind = dtype.type if dtype in (np.float16, np.float32, np.float64) else np.float32
        return np.format_float_scientific(kind(value), unique=True, trim="-", exp_digits=2)
    for digits in range(17):  # bfloat16
        text = f"{value:.{digits}e}"
        if float(np.float32(float(text)).astype(ml_dtypes.bfloat16)) == value:
            return text
    raise AssertionError(f"no digits read back to {value}")


def _float_strings(op, opset, inputs, attrs):
    """Float elements as the spec's plain representation: the shortest round-trip digits of the value in its own
    type, positional for 1e-4 <= |x| < 1e16 and zero ("1024.0", "0.1", "-0.0"), scientific elsewhere ("1e+16",
    "6e-05"); "nan", "inf", "-inf"."""
    from decimal import Decimal

    x = inputs[0]
    out = []
    for value in x.astype(np.float64).ravel().tolist():
        if math.isnan(value) or math.isinf(value):
            out.append("nan" if math.isnan(value) else "inf" if value > 0 else "-inf")
            continue
        scientific = _shortest_scientific(value, x.dtype)
        number = Decimal(scientific)
        if number == 0 or Decimal("1e-4") <= abs(number) < Decimal("1e16"):
            text = format(number, "f")
            out.append(text if "." in text else text + ".0")
        else:
            out.append(scientific)
    return [np.array(out, dtype=object).reshape(x.shape)]


def _casts_to_string_from_float(opset, inputs, attrs):
    """A cast into string from float32, float16, bfloat16 or a float8 format (not float64: the reference is right
    there)."""
    source, to = _cast_types(inputs, attrs)
    return to == np.dtype(object) and source.name.startswith(("float16", "float32", "bfloat16", "float8"))


def _parsed_strings_through_the_reference(op, opset, inputs, attrs):
    """Strings parsed as Python floats (the spec's literals: "1e-5", "+INF", "nan" in any case), then the
    reference's Cast (or CastLike) from float64 with the same attributes."""
    from property_harness import node_model, run_reference

    x = inputs[0]
    floats = np.array([float(s) for s in x.ravel().tolist()], np.float64).reshape(x.shape)
    case = [floats, *inputs[1:]]
    node_attrs = attrs if op == "Cast" else {k: v for k, v in attrs.items() if k != "to"}
    return run_reference(node_model(op, opset, case, node_attrs), case)


def _strings_to_bool(op, opset, inputs, attrs):
    """nxrt's rule: "true" / "false" in any letter case, else the number the literal spells, nonzero (NaN too) is
    True."""
    def truth(text):
        return text.lower() == "true" or (text.lower() != "false" and float(text) != 0)

    x = inputs[0]
    return [np.array([truth(s) for s in x.ravel().tolist()], dtype=np.bool_).reshape(x.shape)]


def _simple_case(text, upper):
    """Unicode's simple case mapping, code point by code point (Python's str.upper / str.lower use the full
    mapping, which turns some code points into several: those keep their simple mapping, "ß" -> "ß", "İ" -> "i")."""
    def one(c):
        mapped = c.upper() if upper else c.lower()
        return mapped if len(mapped) == 1 else ("i" if c == "\u0130" and not upper else c)
    return "".join(one(c) for c in text)


def _string_normalizer_by_the_spec(op, opset, inputs, attrs):
    """The elements that are not stop words (compared after lower-casing unless is_case_sensitive), case-changed;
    one empty string where none is left."""
    x = inputs[0]
    fold = (lambda w: w) if attrs.get("is_case_sensitive", 0) else (lambda w: _simple_case(w, upper=False))
    stops = {fold(w) for w in attrs.get("stopwords", [])}
    action = attrs.get("case_change_action", "NONE")
    kept = [w if action == "NONE" else _simple_case(w, upper=action == "UPPER")
            for w in x.ravel().tolist() if fold(w) not in stops] or [""]
    return [np.array(kept, dtype=object).reshape((len(kept),) if x.ndim == 1 else (1, len(kept)))]


def _string_split_rank0(op, opset, inputs, attrs):
    """The reference's split of the same string as shape [1], reshaped to the rank-0 input's outputs."""
    from property_harness import node_model, run_reference

    flat = [inputs[0].reshape(1)]
    pieces, counts = run_reference(node_model(op, opset, flat, attrs, outputs=2), flat)
    return [pieces.reshape(pieces.shape[1:]).astype(object), counts.reshape(())]


def _tfidf_with_unit_weights(op, opset, inputs, attrs):
    from property_harness import node_model, run_reference

    weighted = dict(attrs, weights=[1.0] * len(attrs["ngram_indexes"]))
    return run_reference(node_model(op, opset, inputs, weighted), inputs)


def _regex_full_match_ascii_classes(op, opset, inputs, attrs):
    import re

    regex = re.compile(attrs["pattern"], re.ASCII)
    x = inputs[0]
    return [np.array([regex.fullmatch(v) is not None for v in x.ravel().tolist()], dtype=bool).reshape(x.shape)]


DIFFERENCES = [
    *[Difference(
        op,
        "The spec: \"When casting from numeric tensors to string tensors, plain floating-point representation (such "
        "as '314.15926') would be used\". The reference writes numpy's str(), which turns scientific from 1e3 "
        "for float16 ('1e+03', '1.024e+03') and from 1e6 for float32 ('2.1474836e+09'), and it fails "
        "for bfloat16 and the float8 formats ('cannot cast dtype bfloat16 to StrDType'). nxrt writes the "
        "shortest round-trip digits of the value in its type (a float8 value as the float32 it is), positional "
        "for 1e-4 <= |x| < 1e16 for every type, as the reference does for float64 ('1024.0', "
        "'2147483600.0'). onnxruntime writes %.8g-style '1000', '2.1474836e+09', 'INF', 'NaN' "
        "and cannot cast float8 or bfloat16 to string.",
        _casts_to_string_from_float,
        _float_strings,
    ) for op in ("Cast", "CastLike")],
    *[Difference(
        op,
        "The reference fails to parse strings into bfloat16 and the float8 formats ('Issues with types'). The "
        "spec parses number literals into float types; compared with the literals parsed as float64 and the "
        "reference's Cast from float64 (one rounding; nxrt parses to double and rounds once). onnxruntime "
        "parses with std::stod and converts.",
        lambda opset, inputs, attrs: inputs[0].dtype == object and _cast_types(inputs, attrs)[1].name.startswith(
            ("bfloat16", "float8")),
        _parsed_strings_through_the_reference,
    ) for op in ("Cast", "CastLike")],
    *[Difference(
        op,
        "String -> bool: the reference gives numpy's truth of a non-empty string ('0', 'False' and "
        "'0.0' are True). The spec defines no string -> bool literals; nxrt reads the number a literal "
        "spells (nonzero, NaN included, is True) and 'true' / 'false' in any letter case. onnxruntime "
        "parses an unsigned integer ('0' is False, 'True' fails).",
        lambda opset, inputs, attrs: inputs[0].dtype == object and _cast_types(inputs, attrs)[1] == np.bool_,
        _strings_to_bool,
    ) for op in ("Cast", "CastLike")],
    Difference(
        "StringNormalizer",
        "The spec removes the elements equal to a stop word, then changes case, and gives one empty string where "
        "nothing is left. The reference also strips accents (\"été\" -> \"ete\" with case_change_action NONE), "
        "removes stop words as space-separated words inside each element, and drops empty elements. Compared with "
        "the spec's steps, case changed by Unicode's simple case mapping (nxrt's choice for every locale; "
        "onnxruntime gives the same under a UTF-8 locale and refuses the default en_US where it is not installed).",
        lambda opset, inputs, attrs: True,
        _string_normalizer_by_the_spec,
    ),
    Difference(
        "StringSplit",
        "The reference fails on a rank-0 input (\"object of type 'NoneType' has no len()\"). Compared with the "
        "reference splitting the same string as shape [1]: pieces [k], count []. onnxruntime gives the same.",
        lambda opset, inputs, attrs: inputs[0].ndim == 0,
        _string_split_rank0,
    ),
    Difference(
        "TfIdfVectorizer",
        "The spec: \"By default, weights is an all-one tensor\"; the reference fails in modes IDF and TFIDF "
        "without weights (\"object of type 'NoneType' has no len()\"). Compared with the reference given "
        "all-one weights. onnxruntime gives the same.",
        lambda opset, inputs, attrs: attrs.get("mode") != "TF" and "weights" not in attrs,
        _tfidf_with_unit_weights,
    ),
    Difference(
        "RegexFullMatch",
        "The spec's patterns are RE2's, whose Perl classes \\w, \\d, \\s (and \\b) are ASCII only; the reference "
        "matches with Python's re, where they are Unicode classes (\\w* matches \"été\" there, not in RE2). "
        "Compared with Python's re in ASCII mode for patterns holding those classes. onnxruntime (RE2) gives the "
        "same.",
        lambda opset, inputs, attrs: any(c in attrs["pattern"] for c in ("\\w", "\\W", "\\d", "\\D", "\\s", "\\S",
                                                                        "\\b", "\\B")),
        _regex_full_match_ascii_classes,
    ),
]
