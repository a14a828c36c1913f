"""The ai.onnx.ml feature transforms, encoders and map operators on generated inputs: Binarizer, Scaler, Normalizer,
Imputer, ArrayFeatureExtractor, FeatureVectorizer, OneHotEncoder, LabelEncoder (opsets 1, 2 and 4: every key and
value type, list and tensor attributes, defaults), CategoryMapper, ZipMap, DictVectorizer and CastMap, at every
opset of their schemas and every dtype of their type constraints.

Oracles: onnx.reference for the tensor ops (known_differences/ lists where it is wrong and what replaces it);
onnxruntime, exactly, for the ops the reference does not implement (LabelEncoder-1, CategoryMapper, ZipMap, CastMap
of float maps); the spec's rule for DictVectorizer and for CastMap of string maps, whose values onnxruntime's
Python binding cannot feed (DictVectorizer of float maps is also compared with onnxruntime)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import known_differences
from ml_harness import ML, TENSOR, assert_same_maps, map_type, ml_cases, run_onnxruntime, run_values, value_model
from property_harness import SETTINGS, assert_same, check_node, describe, node_model
from property_values import arrays, elements, shapes


def check_ml(op, opset, inputs, attrs, outputs=1):
    """check_node for an ai.onnx.ml op, against the known difference's oracle where the reference is wrong."""
    expected = known_differences.expected_for(f"{ML}.{op}", opset, inputs, attrs)
    check_node(op, opset, inputs, attrs, outputs, domain=ML, expected=expected)


def check_against_onnxruntime(op, opset, inputs, attrs, outputs=1):
    model = node_model(op, opset, inputs, attrs, outputs, domain=ML)
    check_node(op, opset, inputs, attrs, outputs, domain=ML,
               expected=lambda inputs, attrs: run_onnxruntime(model, inputs))


def per_column(data, columns, values, label):
    """An attribute list of one value or one per column (the spec's two lengths)."""
    length = data.draw(st.sampled_from([1, columns] if columns > 1 else [1]), label=f"{label} length")
    return data.draw(st.lists(values, min_size=length, max_size=length), label=label)


@pytest.mark.parametrize("opset, dtype", list(ml_cases("Binarizer")))
@SETTINGS
@given(data=st.data())
def test_binarizer_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(max_rank=4)), label="x")
    attrs = {} if data.draw(st.booleans(), label="default threshold") else {
        "threshold": data.draw(elements(np.float32), label="threshold")}
    check_ml("Binarizer", opset, [x], attrs)


@pytest.mark.parametrize("opset, dtype", list(ml_cases("Scaler")))
@SETTINGS
@given(data=st.data())
def test_scaler_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(max_rank=3)), label="x")
    columns = x.shape[-1] if x.ndim else 1
    # Both lists given: the spec states no default for either, and onnxruntime refuses one without the other.
    offset = per_column(data, columns, elements(np.float32), "offset")
    scale = data.draw(st.lists(elements(np.float32), min_size=len(offset), max_size=len(offset)), label="scale")
    check_ml("Scaler", opset, [x], {"offset": offset, "scale": scale})


@pytest.mark.parametrize("opset, dtype", list(ml_cases("Normalizer")))
@pytest.mark.parametrize("norm", ["MAX", "L1", "L2"])
@SETTINGS
@given(data=st.data())
def test_normalizer_matches_the_reference(opset, dtype, norm, data):
    # [N, C] or [C] (one row), as the spec's batches.
    x = data.draw(arrays(dtype, shapes(min_rank=1, max_rank=2)), label="x")
    check_ml("Normalizer", opset, [x], {"norm": norm} if norm != "MAX" or data.draw(st.booleans()) else {})


@pytest.mark.parametrize("opset, dtype", list(ml_cases("Imputer")))
@SETTINGS
@given(data=st.data())
def test_imputer_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(max_rank=3)), label="x")
    columns = x.shape[-1] if x.ndim else 1
    present = st.sampled_from(x.ravel().tolist()) if x.size else elements(dtype)
    replaced = data.draw(st.one_of(present, elements(dtype)), label="replaced")
    if dtype.kind == "f":
        imputed = per_column(data, columns, elements(np.float32), "imputed")
        attrs = {"imputed_value_floats": imputed, "replaced_value_float": float(np.float32(replaced))}
    else:
        # "The imputed values must all fit within the width of the tensor element type."
        imputed = per_column(data, columns, elements(dtype), "imputed")
        attrs = {"imputed_value_int64s": imputed, "replaced_value_int64": int(replaced)}
    check_ml("Imputer", opset, [x], attrs)


@pytest.mark.parametrize("opset, dtype", list(ml_cases("ArrayFeatureExtractor")))
@SETTINGS
@given(data=st.data())
def test_array_feature_extractor_matches_the_reference(opset, dtype, data):
    # Rank >= 1: the indices select along the last axis, which a scalar lacks.
    x = data.draw(arrays(dtype, shapes(min_rank=1, max_rank=3)), label="x")
    columns = x.shape[-1]
    index_shape = data.draw(shapes(max_rank=2, min_side=0 if columns == 0 else 1), label="index shape")
    if columns == 0:  # no column to select: only an empty index list is valid
        index_shape = (0,)
    indices = data.draw(arrays(np.int64, index_shape, st.integers(0, max(columns - 1, 0))), label="indices")
    check_ml("ArrayFeatureExtractor", opset, [x, indices], {})


@pytest.mark.parametrize("opset, dtype", list(ml_cases("FeatureVectorizer", "T1")))
@SETTINGS
@given(data=st.data())
def test_feature_vectorizer_matches_the_reference(opset, dtype, data):
    count = data.draw(st.integers(1, 3), label="inputs")
    # Every input [N, C_i] with one N, or [C_i] (one row: then N = 1 for the 2-D ones too). T1 is one type.
    rows = data.draw(st.integers(0, 3), label="rows")
    inputs = []
    for i in range(count):
        one_d = rows == 1 and data.draw(st.booleans(), label=f"1-D {i}")
        width = data.draw(st.integers(0 if not one_d else 1, 4), label=f"width {i}")
        inputs.append(data.draw(arrays(dtype, (width,) if one_d else (rows, width)), label=f"x{i}"))
    dimensions = [data.draw(st.integers(0, 5), label=f"dimension {i}") for i in range(count)]
    check_ml("FeatureVectorizer", opset, inputs, {"inputdimensions": dimensions})


def unknown_categories(x, attrs):
    """Whether some element of x is in no category (the spec's failure with zeros = 0)."""
    categories = set(attrs.get("cats_strings") or attrs.get("cats_int64s"))
    values = x.ravel().tolist()
    if x.dtype.kind == "f":  # truncated toward zero; NaN, infinities and values beyond int64 have no category
        values = [int(v) if np.isfinite(v) and abs(v) < 2.0 ** 63 else None for v in values]
    return any(v not in categories for v in values)


@pytest.mark.parametrize("opset, dtype", list(ml_cases("OneHotEncoder")))
@SETTINGS
@given(data=st.data())
def test_one_hot_encoder_matches_the_reference(opset, dtype, data):
    category = elements(object) if dtype == object else st.integers(-3, 3) | elements(np.int64)
    categories = data.draw(st.lists(category, min_size=1, max_size=5), label="categories")
    if dtype.kind == "i":  # the categories the input type can hold, and others
        info = np.iinfo(dtype)
        held = [c for c in categories if info.min <= c <= info.max]
        values = st.one_of(st.sampled_from(held), elements(dtype)) if held else elements(dtype)
    elif dtype == object:
        values = st.one_of(st.sampled_from(categories), elements(dtype))
    else:  # categories, their neighbours that truncate onto them, and the specials
        values = st.one_of(st.sampled_from(categories).map(float),
                           st.sampled_from(categories).map(lambda c: c + 0.5 if -2 ** 52 < c < 2 ** 52 else 0.0),
                           elements(dtype))
    x = data.draw(arrays(dtype, shapes(max_rank=3), values), label="x")
    attrs = {"cats_strings" if dtype == object else "cats_int64s": categories}
    if data.draw(st.booleans(), label="zeros given"):
        attrs["zeros"] = data.draw(st.sampled_from([0, 1]), label="zeros")
    if attrs.get("zeros", 1) == 0 and unknown_categories(x, attrs):
        model = node_model("OneHotEncoder", opset, [x], attrs, domain=ML)
        with pytest.raises(Exception, match="not a known category"):
            run_values(model, {"x0": x}, "nxrt")
        return
    check_ml("OneHotEncoder", opset, [x], attrs)


LABEL_LISTS = {np.dtype(object): "strings", np.dtype(np.int64): "int64s", np.dtype(np.float32): "floats"}
LABEL_TYPES = [np.dtype(t) for t in (object, np.int64, np.float32, np.int32, np.int16, np.float64)]


def label_attribute(data, prefix, dtype, values, opset):
    """keys_* / values_* as a list attribute (the types that have one) or, from opset 4, a 1-D tensor."""
    if dtype in LABEL_LISTS and (opset < 4 or data.draw(st.booleans(), label=f"{prefix} as a list")):
        return {f"{prefix}_{LABEL_LISTS[dtype]}": values}
    return {f"{prefix}_tensor": numpy_helper.from_array(np.array(values, dtype=dtype))}


def label_default(data, dtype, tensor_values):
    """The default_* attribute matching the values' type, or none (the spec's default then)."""
    if not data.draw(st.booleans(), label="default given"):
        return {}
    value = data.draw(elements(dtype), label="default")
    if tensor_values:
        return {"default_tensor": numpy_helper.from_array(np.array([value], dtype=dtype))}
    return {{"strings": "default_string", "int64s": "default_int64", "floats": "default_float"}[
        LABEL_LISTS[dtype]]: value}


@pytest.mark.parametrize("opset, dtype", list(ml_cases("LabelEncoder", "T1")))
@SETTINGS
@given(data=st.data())
def test_label_encoder_matches_the_reference(opset, dtype, data):
    keys = data.draw(st.lists(elements(dtype), min_size=1, max_size=5), label="keys")
    x = data.draw(arrays(dtype, shapes(max_rank=3), st.one_of(st.sampled_from(keys), elements(dtype))), label="x")
    if opset == 1:
        # Opset 1 maps strings to their index in classes_strings and int64 indices back (the reference has no
        # opset-1 LabelEncoder: compared with onnxruntime).
        classes = data.draw(st.lists(elements(object), min_size=1, max_size=5), label="classes")
        known = st.sampled_from(classes) if dtype == object else st.integers(-2, len(classes) + 1)
        x = data.draw(arrays(dtype, x.shape, known | elements(dtype)), label="x")
        attrs = {"classes_strings": classes}
        for name, values in (("default_int64", elements(np.int64)), ("default_string", elements(object))):
            if data.draw(st.booleans(), label=f"{name} given"):
                attrs[name] = data.draw(values, label=name)
        check_against_onnxruntime("LabelEncoder", opset, [x], attrs)
        return
    value_types = [t for t in LABEL_TYPES if opset >= 4 or t in LABEL_LISTS]
    value_type = data.draw(st.sampled_from(value_types), label="value type")
    values = data.draw(st.lists(elements(value_type), min_size=len(keys), max_size=len(keys)), label="values")
    attrs = {**label_attribute(data, "keys", dtype, keys, opset),
             **label_attribute(data, "values", value_type, values, opset)}
    attrs.update(label_default(data, value_type, "values_tensor" in attrs))
    check_ml("LabelEncoder", opset, [x], attrs)


@pytest.mark.parametrize("opset, dtype", list(ml_cases("CategoryMapper", "T1")))
@SETTINGS
@given(data=st.data())
def test_category_mapper_matches_onnxruntime(opset, dtype, data):
    count = data.draw(st.integers(1, 5), label="pairs")
    strings = data.draw(st.lists(elements(object), min_size=count, max_size=count), label="cats_strings")
    ints = data.draw(st.lists(st.integers(-3, 3) | elements(np.int64), min_size=count, max_size=count), label="ints")
    known = strings if dtype == object else ints
    x = data.draw(arrays(dtype, shapes(max_rank=3), st.one_of(st.sampled_from(known), elements(dtype))), label="x")
    attrs = {"cats_strings": strings, "cats_int64s": ints}
    default = ("default_int64", elements(np.int64)) if dtype == object else ("default_string", elements(object))
    if data.draw(st.booleans(), label="default given"):
        attrs[default[0]] = data.draw(default[1], label="default")
    check_against_onnxruntime("CategoryMapper", opset, [x], attrs)


@pytest.mark.parametrize("key", [TensorProto.INT64, TensorProto.STRING], ids=["int64-labels", "string-labels"])
@SETTINGS
@given(data=st.data())
def test_zipmap_matches_onnxruntime(key, data):
    label = st.integers(-3, 3) | elements(np.int64) if key == TensorProto.INT64 else elements(object)
    labels = data.draw(st.lists(label, min_size=1, max_size=4), label="labels")
    shape = data.draw(st.sampled_from([(len(labels),), (0, len(labels)), (1, len(labels)), (3, len(labels))]),
                      label="shape")
    x = data.draw(arrays(np.float32, shape), label="x")
    attrs = {"classlabels_int64s" if key == TensorProto.INT64 else "classlabels_strings": labels}
    model = value_model("ZipMap", [helper.make_tensor_type_proto(TensorProto.FLOAT, None)],
                        [helper.make_sequence_type_proto(map_type(key, TensorProto.FLOAT))], attrs)
    context = describe("ZipMap", 1, [x], attrs)
    assert_same_maps(run_values(model, {"x0": x}, "nxrt")[0], run_values(model, {"x0": x}, "onnxruntime")[0],
                     context)


# DictVectorizer's input types: map(key, value) for each pair its T1 constraint lists.
DICT_TYPES = [(TensorProto.STRING, TensorProto.INT64), (TensorProto.INT64, TensorProto.STRING),
              (TensorProto.INT64, TensorProto.FLOAT), (TensorProto.INT64, TensorProto.DOUBLE),
              (TensorProto.STRING, TensorProto.FLOAT), (TensorProto.STRING, TensorProto.DOUBLE)]
NUMPY_OF = {TensorProto.STRING: np.dtype(object), TensorProto.INT64: np.dtype(np.int64),
            TensorProto.FLOAT: np.dtype(np.float32), TensorProto.DOUBLE: np.dtype(np.float64)}


@pytest.mark.parametrize("key, value", DICT_TYPES, ids=[f"map-{k}-{v}" for k, v in DICT_TYPES])
@SETTINGS
@given(data=st.data())
def test_dict_vectorizer_matches_the_spec_and_onnxruntime(key, value, data):
    key_values = elements(NUMPY_OF[key]) if key == TensorProto.STRING else st.integers(-3, 3) | elements(np.int64)
    # A repeated vocabulary entry has no defined column in the spec ("the index ... at which the key is found").
    vocabulary = data.draw(st.lists(key_values, min_size=1, max_size=5, unique=True), label="vocabulary")
    # "All keys in the input dictionary must be present in the index mapping vector."
    keys = data.draw(st.lists(st.sampled_from(vocabulary), unique=True), label="keys")
    feed = {k: data.draw(elements(NUMPY_OF[value]), label=f"value of {k!r}") for k in keys}
    attrs = {"string_vocabulary" if key == TensorProto.STRING else "int64_vocabulary": vocabulary}
    model = value_model("DictVectorizer", [map_type(key, value)], [helper.make_tensor_type_proto(value, None)], attrs)
    got = run_values(model, {"x0": feed}, "nxrt")
    # The spec: each vocabulary key's value, zero (the empty string for strings) for keys not in the map; in
    # onnxruntime's [1, n] layout (the spec calls Y 1-D; nxrt keeps onnxruntime's shape, which models expect).
    zero = "" if value == TensorProto.STRING else 0
    expected = [np.array([[feed.get(k, zero) for k in vocabulary]], dtype=NUMPY_OF[value])]
    context = f"DictVectorizer attrs={attrs} map={feed}"
    assert_same(got, expected, context)
    # onnxruntime's Python binding feeds maps of float values only, and no empty map.
    if value == TensorProto.FLOAT and feed:
        assert_same(got, run_values(model, {"x0": feed}, "onnxruntime"), context + " (onnxruntime)")


def cast_map_value(value, cast_to):
    """onnxruntime's conversion of a map value: strings read as strtof / strtoll read the decimal forms generated
    here, floats written as printf's %f, truncated to int64."""
    if isinstance(value, str):
        if cast_to == "TO_FLOAT":
            return float(np.float32(float(value)))
        return int(value.split(".")[0]) if cast_to == "TO_INT64" else value
    return {"TO_FLOAT": value, "TO_INT64": int(value) if cast_to == "TO_INT64" else 0, "TO_STRING": "%f" % value}[
        cast_to]


@pytest.mark.parametrize("value", [TensorProto.FLOAT, TensorProto.STRING], ids=["float-map", "string-map"])
@pytest.mark.parametrize("cast_to", ["TO_FLOAT", "TO_STRING", "TO_INT64"])
@pytest.mark.parametrize("map_form", ["DENSE", "SPARSE"])
@SETTINGS
@given(data=st.data())
def test_cast_map_matches_onnxruntime(value, cast_to, map_form, data):
    max_map = data.draw(st.integers(0, 5), label="max_map")
    # SPARSE places each value at its key: keys >= 0 (those from max_map on are left out); DENSE orders any keys.
    key = st.integers(0, max_map + 2) if map_form == "SPARSE" else st.integers(-3, 3) | elements(np.int64)
    keys = data.draw(st.lists(key, unique=True, max_size=5), label="keys")
    if value == TensorProto.FLOAT:
        numbers = elements(np.float32)
        if cast_to == "TO_INT64":  # the spec does not convert NaN, infinities or values beyond int64 to integers
            numbers = st.floats(-2.0 ** 62, 2.0 ** 62, width=32)
        values = [data.draw(numbers, label=f"value of {k}") for k in keys]
    else:  # decimal strings, as strtof / strtoll read them whole (or up to the decimal point)
        text = st.integers(-10 ** 6, 10 ** 6).map(str) | st.floats(-1e6, 1e6, width=32).map(lambda f: f"{f:.3f}")
        values = [data.draw(text, label=f"value of {k}") for k in keys]
    feed = dict(zip(keys, values))
    out = {"TO_FLOAT": TensorProto.FLOAT, "TO_STRING": TensorProto.STRING, "TO_INT64": TensorProto.INT64}[cast_to]
    attrs = {"cast_to": cast_to, "map_form": map_form, "max_map": max_map}
    model = value_model("CastMap", [map_type(TensorProto.INT64, value)], [helper.make_tensor_type_proto(out, None)],
                        attrs)
    got = run_values(model, {"x0": feed}, "nxrt")
    context = f"CastMap attrs={attrs} map={feed}"
    # onnxruntime's binding feeds no empty map and no string values, and it refuses a SPARSE max_map of 0 (an empty
    # output to the spec): those by its rules below.
    if value == TensorProto.FLOAT and feed and (map_form == "DENSE" or max_map > 0):
        assert_same(got, run_values(model, {"x0": feed}, "onnxruntime"), context)
        return
    # onnxruntime's rules: the values in key order (SPARSE: at their key, 0 or "0.f" elsewhere), converted as
    # cast_map_value does.
    if map_form == "DENSE":
        row = [cast_map_value(feed[k], cast_to) for k in sorted(feed)]
    else:
        row = [cast_map_value(feed[k], cast_to) if k in feed else ("0.f" if cast_to == "TO_STRING" else 0)
               for k in range(max_map)]
    assert_same(got, [np.array([row], dtype={TensorProto.FLOAT: np.float32, TensorProto.INT64: np.int64,
                                              TensorProto.STRING: object}[out]).reshape(1, len(row))], context)


COVERED = {f"{ML}.{op}" for op in ("Binarizer", "Scaler", "Normalizer", "Imputer", "ArrayFeatureExtractor",
                                   "FeatureVectorizer", "OneHotEncoder", "LabelEncoder", "CategoryMapper", "ZipMap",
                                   "DictVectorizer", "CastMap")}
