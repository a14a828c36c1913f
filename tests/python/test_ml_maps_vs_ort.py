"""Map values and the ai.onnx.ml operators over them, against onnxruntime (same process): ZipMap (int and string
labels, repeated labels, a 1-D row), DictVectorizer (string and int64 keys, every value type), CastMap (TO_FLOAT /
TO_STRING / TO_INT64, DENSE and SPARSE), dicts and lists of dicts fed to map inputs and returned by graphs that pass
them through, the declared type strings, and errors for bad maps and bad attributes."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import helpers
import nxrt

ort = pytest.importorskip("onnxruntime")

ML = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)]


def model(nodes, inputs, outputs):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=ML, ir_version=8).SerializeToString()


def map_info(name, key, value):
    return helper.make_value_info(name, helper.make_map_type_proto(key, helper.make_tensor_type_proto(value, None)))


def seq_map_info(name, key, value):
    return helper.make_value_info(name, helper.make_sequence_type_proto(
        helper.make_map_type_proto(key, helper.make_tensor_type_proto(value, None))))


def both(serialized, feeds):
    want = ort.InferenceSession(serialized, providers=["CPUExecutionProvider"]).run(None, feeds)
    got = nxrt.InferenceSession(serialized).run(None, feeds)
    return got, want


@pytest.mark.parametrize("labels", [[3, 1, 2], [10, -4, 7, 0, 5], ["b", "a", "c"], ["x", "y", "x", "z"], [2, 2]])
@pytest.mark.parametrize("shape", [(4, None), (1, None), (None,)])
def test_zipmap_matches_onnxruntime(labels, shape):
    strings = isinstance(labels[0], str)
    attrs = {"classlabels_strings": labels} if strings else {"classlabels_int64s": labels}
    key = TensorProto.STRING if strings else TensorProto.INT64
    serialized = model([helper.make_node("ZipMap", ["X"], ["Z"], domain="ai.onnx.ml", **attrs)],
                       [helper.make_tensor_value_info("X", TensorProto.FLOAT, None)],
                       [seq_map_info("Z", key, TensorProto.FLOAT)])
    rows = shape[0]
    x = np.random.default_rng(len(labels)).standard_normal(
        (rows, len(labels)) if rows else (len(labels),)).astype(np.float32)
    got, want = both(serialized, {"X": x})
    helpers.assert_maps_match(got[0], want[0])
    assert len(got[0]) == (rows or 1)


def test_zipmap_refuses_a_column_count_other_than_the_labels():
    serialized = model([helper.make_node("ZipMap", ["X"], ["Z"], domain="ai.onnx.ml", classlabels_int64s=[0, 1, 2])],
                       [helper.make_tensor_value_info("X", TensorProto.FLOAT, None)],
                       [seq_map_info("Z", TensorProto.INT64, TensorProto.FLOAT)])
    session = nxrt.InferenceSession(serialized)
    with pytest.raises(nxrt.capi.onnxruntime_pybind11_state.InvalidArgument, match="ZipMap.*4 columns.*3 class labels"):
        session.run(None, {"X": np.zeros((2, 4), np.float32)})
    with pytest.raises(nxrt.capi.onnxruntime_pybind11_state.InvalidArgument, match="must be \\[N, C\\] or \\[C\\]"):
        session.run(None, {"X": np.zeros((1, 2, 3), np.float32)})
    both_labels = model([helper.make_node("ZipMap", ["X"], ["Z"], domain="ai.onnx.ml", classlabels_int64s=[0],
                                          classlabels_strings=["a"])],
                        [helper.make_tensor_value_info("X", TensorProto.FLOAT, None)],
                        [seq_map_info("Z", TensorProto.INT64, TensorProto.FLOAT)])
    with pytest.raises(Exception, match="exactly one of classlabels_strings and classlabels_int64s"):
        nxrt.InferenceSession(both_labels)


DICT_CASES = [
    (TensorProto.STRING, TensorProto.FLOAT, {"b": 2.5, "a": -1.0, "zz": 7.0}, ["a", "c", "b", "a"]),
    (TensorProto.STRING, TensorProto.DOUBLE, {"x": 1e-3, "y": 4.0}, ["y", "x", "w"]),
    (TensorProto.STRING, TensorProto.INT64, {"k": 3, "m": -8}, ["m", "k", "n"]),
    (TensorProto.INT64, TensorProto.FLOAT, {5: 1.5, -2: 0.25, 9: 3.0}, [9, 5, 0, -2]),
    (TensorProto.INT64, TensorProto.DOUBLE, {1: 2.0}, [0, 1]),
    (TensorProto.INT64, TensorProto.STRING, {4: "four", 1: "one"}, [1, 2, 4]),
]


@pytest.mark.parametrize("key, value, feed, vocabulary", DICT_CASES)
def test_dict_vectorizer_matches_onnxruntime(key, value, feed, vocabulary):
    attr = {"string_vocabulary": vocabulary} if key == TensorProto.STRING else {"int64_vocabulary": vocabulary}
    serialized = model([helper.make_node("DictVectorizer", ["X"], ["Y"], domain="ai.onnx.ml", **attr)],
                       [map_info("X", key, value)], [helper.make_tensor_value_info("Y", value, None)])
    session = nxrt.InferenceSession(serialized)
    got = session.run(None, {"X": feed})[0]
    zero = "" if value == TensorProto.STRING else 0
    np.testing.assert_array_equal(got, [[feed.get(v, zero) for v in vocabulary]])
    theirs = ort.InferenceSession(serialized, providers=["CPUExecutionProvider"])
    assert session.get_inputs()[0].type == theirs.get_inputs()[0].type
    if value == TensorProto.FLOAT:  # onnxruntime's Python binding feeds maps of float values only
        want = theirs.run(None, {"X": feed})[0]
        assert got.dtype == want.dtype and got.shape == want.shape == (1, len(vocabulary))
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("value", [TensorProto.FLOAT, TensorProto.STRING])
@pytest.mark.parametrize("cast_to", ["TO_FLOAT", "TO_STRING", "TO_INT64"])
@pytest.mark.parametrize("form", ["DENSE", "SPARSE"])
def test_cast_map_matches_onnxruntime(value, cast_to, form):
    out_type = {"TO_FLOAT": TensorProto.FLOAT, "TO_STRING": TensorProto.STRING, "TO_INT64": TensorProto.INT64}[cast_to]
    serialized = model([helper.make_node("CastMap", ["X"], ["Y"], domain="ai.onnx.ml", cast_to=cast_to,
                                         map_form=form, max_map=6)],
                       [map_info("X", TensorProto.INT64, value)], [helper.make_tensor_value_info("Y", out_type, None)])
    numbers = {4: 2.75, 0: -1.5, 2: 10.0, 9: 3.0}  # key 9 lies past max_map: left out of a SPARSE output
    feed = numbers if value == TensorProto.FLOAT else {k: str(v) for k, v in numbers.items()}
    got = nxrt.InferenceSession(serialized).run(None, {"X": feed})[0]
    # onnxruntime's rules: floats written as printf's %f, strings read as strtof / strtoll, "0.f" or 0 as padding.
    cast = {"TO_FLOAT": lambda v: np.float32(float(v)), "TO_INT64": lambda v: int(float(v)),
            "TO_STRING": lambda v: v if isinstance(v, str) else "%f" % v}[cast_to]
    if form == "DENSE":
        expected = [cast(feed[k]) for k in sorted(feed)]
    else:
        expected = [cast(feed[k]) if k in feed else ("0.f" if cast_to == "TO_STRING" else 0) for k in range(6)]
    np.testing.assert_array_equal(got, np.array([expected], dtype=got.dtype))
    if value == TensorProto.FLOAT:  # onnxruntime's Python binding feeds maps of float values only
        want = ort.InferenceSession(serialized, providers=["CPUExecutionProvider"]).run(None, {"X": feed})[0]
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_cast_map_refuses_unreadable_strings_and_negative_sparse_keys():
    def cast(form, cast_to="TO_FLOAT"):
        return nxrt.InferenceSession(model(
            [helper.make_node("CastMap", ["X"], ["Y"], domain="ai.onnx.ml", cast_to=cast_to, map_form=form,
                              max_map=3)],
            [map_info("X", TensorProto.INT64, TensorProto.STRING)], [helper.make_tensor_value_info("Y", 1, None)]))
    with pytest.raises(nxrt.capi.onnxruntime_pybind11_state.InvalidArgument, match="map value 'abc' is not a float"):
        cast("DENSE").run(None, {"X": {1: "abc"}})
    with pytest.raises(nxrt.capi.onnxruntime_pybind11_state.InvalidArgument, match="keys must be >= 0, found -1"):
        cast("SPARSE").run(None, {"X": {-1: "2.0", 1: "3"}})
    with pytest.raises(Exception, match="cast_to = 'TO_BOOL'"):
        cast("DENSE", "TO_BOOL")


def test_maps_pass_through_a_graph_as_dicts():
    """A graph that returns its map and sequence-of-maps inputs: dicts (keys sorted, as onnxruntime's std::map
    iterates them) and lists of dicts come back."""
    serialized = model([], [map_info("M", TensorProto.STRING, TensorProto.DOUBLE),
                            seq_map_info("S", TensorProto.INT64, TensorProto.FLOAT)],
                       [map_info("M", TensorProto.STRING, TensorProto.DOUBLE),
                        seq_map_info("S", TensorProto.INT64, TensorProto.FLOAT)])
    feeds = {"M": {"z": 1.0, "a": 2.0, "m": -3.5}, "S": [{3: 1.0, 1: 2.0}, {}, {7: 0.5}]}
    got = nxrt.InferenceSession(serialized).run(None, feeds)  # onnxruntime's binding feeds no map(string, double)
    helpers.assert_maps_match(got[0], {"a": 2.0, "m": -3.5, "z": 1.0})
    helpers.assert_maps_match(got[1], [{1: 2.0, 3: 1.0}, {}, {7: 0.5}])
    float_maps = model([], [seq_map_info("S", TensorProto.INT64, TensorProto.FLOAT)],
                       [seq_map_info("S", TensorProto.INT64, TensorProto.FLOAT)])
    try:
        want = ort.InferenceSession(float_maps, providers=["CPUExecutionProvider"]).run(None, {"S": feeds["S"]})
    except Exception:  # noqa: BLE001 - onnxruntime's binding may refuse a sequence of maps as a feed
        want = None
    if want is not None:
        helpers.assert_maps_match(nxrt.InferenceSession(float_maps).run(None, {"S": feeds["S"]})[0], want[0])


def test_a_map_input_refuses_other_feeds():
    serialized = model([helper.make_node("DictVectorizer", ["X"], ["Y"], domain="ai.onnx.ml", int64_vocabulary=[1])],
                       [map_info("X", TensorProto.INT64, TensorProto.FLOAT)],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    session = nxrt.InferenceSession(serialized)
    with pytest.raises(Exception):
        session.run(None, {"X": np.zeros(3, np.float32)})
    with pytest.raises(TypeError):
        session.run(None, {"X": {"a": 1.0}})  # string keys for an int64-keyed map
    np.testing.assert_array_equal(session.run(None, {"X": {np.int64(1): 4.0}})[0], [[4.0]])


def test_sklearn_dict_vectorizer_pipeline_matches_onnxruntime():
    """scikit-learn's DictVectorizer in front of a classifier (skl2onnx: a map input, ZipMap output)."""
    pytest.importorskip("sklearn")
    pytest.importorskip("skl2onnx")
    from skl2onnx import convert_sklearn
    from skl2onnx.common.data_types import DictionaryType, FloatTensorType, StringTensorType
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    rng = np.random.default_rng(0)
    rows = [{"a": float(rng.normal()), "b": float(rng.normal()), "c": float(rng.normal())} for _ in range(60)]
    labels = np.array([int(r["a"] + r["b"] > 0) for r in rows])
    pipe = make_pipeline(DictVectorizer(sparse=False), LogisticRegression()).fit(rows, labels)
    onx = convert_sklearn(pipe, initial_types=[("X", DictionaryType(StringTensorType([1]), FloatTensorType([1])))],
                          target_opset={"": 17, "ai.onnx.ml": 3})
    serialized = onx.SerializeToString()
    for row in rows[:10]:
        got, want = both(serialized, {"X": row})
        np.testing.assert_array_equal(got[0], want[0])
        assert list(got[1][0]) == list(want[1][0])
        np.testing.assert_allclose(list(got[1][0].values()), list(want[1][0].values()), rtol=1e-5, atol=1e-6)


def test_run_with_ort_values_returns_maps_as_non_tensor_ortvalues():
    serialized = model([helper.make_node("ZipMap", ["X"], ["Z"], domain="ai.onnx.ml", classlabels_int64s=[4, 2])],
                       [helper.make_tensor_value_info("X", TensorProto.FLOAT, None)],
                       [seq_map_info("Z", TensorProto.INT64, TensorProto.FLOAT)])
    x = np.array([[0.25, 0.75]], np.float32)
    got = nxrt.InferenceSession(serialized).run_with_ort_values(None, {"X": nxrt.OrtValue.ortvalue_from_numpy(x)})
    want = ort.InferenceSession(serialized, providers=["CPUExecutionProvider"]).run_with_ort_values(
        None, {"X": ort.OrtValue.ortvalue_from_numpy(x)})
    assert (got[0].is_tensor(), got[0].data_type()) == (want[0].is_tensor(), want[0].data_type())
    for value in (got[0], want[0]):
        with pytest.raises(RuntimeError):
            value.numpy()
    assert "[{2: 0.75, 4: 0.25}]" in repr(got[0])
    passthrough = model([], [seq_map_info("S", TensorProto.INT64, TensorProto.FLOAT)],
                        [seq_map_info("S", TensorProto.INT64, TensorProto.FLOAT)])
    again = nxrt.InferenceSession(passthrough).run_with_ort_values(None, {"S": got[0]})  # fed back as it came
    assert again[0]._object == [{2: 0.75, 4: 0.25}]
