"""What the ai.onnx.ml property tests share: their (opset, dtype) parameters, float32 attribute values, onnxruntime
as the oracle of the ops onnx.reference does not implement (CategoryMapper, ZipMap, CastMap, LabelEncoder-1), and
one-node models over map and sequence-of-map values, which property_harness.node_model (tensors only) cannot
declare.

onnxruntime is compared exactly there: those ops copy, look up or convert values one by one, so there is nothing
for a tolerance to absorb."""

import warnings

import numpy as np
import onnxruntime
import pytest
from hypothesis import strategies as st
from onnx import TensorProto, helper

import nxrt
from property_harness import allowed_dtypes, feeds_of, versions
from property_values import elements

ML = "ai.onnx.ml"


def ml_cases(op, type_param="T", dtypes=None):
    """pytest params (opset, dtype) for each version of ai.onnx.ml `op` and each dtype of its `type_param`
    constraint there (or of `dtypes`, for ops whose constraint lists types that are not tensors)."""
    for opset in versions(op, domain=ML, first=1):
        for dtype in dtypes if dtypes is not None else allowed_dtypes(op, opset, type_param, domain=ML):
            yield pytest.param(opset, np.dtype(dtype), id=f"{op}-{opset}-{np.dtype(dtype)}")


def float32_values(low=-10.0, high=10.0, specials=True):
    """Python floats that float32 holds exactly (what a FLOAT or FLOATS attribute stores): ordinary ones in
    [low, high], and with `specials` NaN, +-inf, -0.0, subnormals, huge and tiny ones as property_values gives."""
    ordinary = st.floats(low, high, width=32)
    return elements(np.float32, low, high) if specials else ordinary


def run_onnxruntime(model, inputs):
    """onnxruntime's CPU provider on the model and the x0, x1, ... feeds (the oracle where onnx.reference has no
    implementation of the op)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return session.run(None, feeds_of(inputs))


def map_type(key, value):
    return helper.make_map_type_proto(key, helper.make_tensor_type_proto(value, None))


def value_model(op, inputs, outputs, attrs, opset=1):
    """A one-node ai.onnx.ml model over any value types: `inputs` and `outputs` are lists of TypeProtos (from
    map_type, helper.make_tensor_type_proto or helper.make_sequence_type_proto), named x0, x1, ... and y0, ..."""
    in_infos = [helper.make_value_info(f"x{i}", t) for i, t in enumerate(inputs)]
    out_infos = [helper.make_value_info(f"y{i}", t) for i, t in enumerate(outputs)]
    node = helper.make_node(op, [i.name for i in in_infos], [o.name for o in out_infos], domain=ML, **attrs)
    graph = helper.make_graph([node], "property", in_infos, out_infos)
    imports = [helper.make_opsetid("", 17), helper.make_opsetid(ML, opset)]
    return helper.make_model(graph, opset_imports=imports, ir_version=8)


def run_values(model, feeds, runtime):
    """Runs `model` on {x0: ...} feeds with nxrt or onnxruntime ("nxrt" / "onnxruntime")."""
    serialized = model.SerializeToString()
    if runtime == "nxrt":
        return nxrt.InferenceSession(serialized).run(None, feeds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return onnxruntime.InferenceSession(serialized, providers=["CPUExecutionProvider"]).run(None, feeds)


def same_value(a, b):
    """Exact equality of two scalars, NaN equal to NaN (map values: copied, never computed)."""
    if isinstance(a, float) or isinstance(b, float) or isinstance(a, np.floating) or isinstance(b, np.floating):
        return float(a) == float(b) or (np.isnan(float(a)) and np.isnan(float(b)))
    return a == b


def assert_same_maps(actual, expected, context):
    """Maps (dicts) or lists of maps: the same keys in the same order and the same values, NaN equal to NaN."""
    if isinstance(expected, dict):
        actual, expected = [actual], [expected]
    assert isinstance(actual, list) and len(actual) == len(expected), f"{context}: {len(actual)} maps, " \
                                                                      f"expected {len(expected)}"
    for row, (a, e) in enumerate(zip(actual, expected)):
        assert isinstance(a, dict), f"{context}: row {row} is a {type(a).__name__}, not a dict"
        assert list(a) == list(e), f"{context}: row {row}: keys {list(a)} != {list(e)}"
        for key in e:
            assert same_value(a[key], e[key]), f"{context}: row {row}, key {key!r}: {a[key]!r} != {e[key]!r}"


TENSOR = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
          np.dtype(np.int64): TensorProto.INT64, np.dtype(object): TensorProto.STRING}
