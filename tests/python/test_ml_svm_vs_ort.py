"""ai.onnx.ml SVMClassifier / SVMRegressor with random attributes against onnxruntime (same process): every kernel,
post-transform, the support-vector and linear forms, probabilities, two and more classes, int and string labels,
float / double / int64 rows. Scores within 1e-4 (both compute in float); labels equal.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper

import helpers
import nxrt

ort = pytest.importorskip("onnxruntime")

KERNELS = ["LINEAR", "POLY", "RBF", "SIGMOID"]
TRANSFORMS = ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"]


def model_of(op, attrs, x_type, outputs):
    node = helper.make_node(op, ["X"], [o.name for o in outputs], domain="ai.onnx.ml", **attrs)
    graph = helper.make_graph([node], "svm", [helper.make_tensor_value_info("X", x_type, None)], outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)],
                             ir_version=8).SerializeToString()


def compare(model, x):
    want = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"X": x})
    got = nxrt.InferenceSession(model).run(None, {"X": x})
    helpers.assert_outputs_match(got, want, rtol=1e-4, atol=1e-4)


def kernel_attrs(rng, seed):
    return {"kernel_type": KERNELS[seed % 4], "kernel_params": [0.2, 0.5, 2.0]}


@pytest.mark.parametrize("seed", range(40))
def test_random_svm_classifier_matches_onnxruntime(seed):
    rng = np.random.default_rng(seed)
    classes, features = (2 if seed % 3 == 0 else int(rng.integers(3, 5))), int(rng.integers(1, 5))
    attrs = kernel_attrs(rng, seed)
    linear = seed % 5 == 4
    if linear:
        coefficients = rng.normal(size=classes * features)
        if seed % 2:
            coefficients = np.abs(coefficients)
        attrs.update(coefficients=[float(c) for c in coefficients], rho=[float(rng.normal())])
    else:
        per_class = [int(v) for v in rng.integers(1, 4, size=classes)]
        supports = sum(per_class)
        pairs = classes * (classes - 1) // 2
        attrs.update(vectors_per_class=per_class,
                     support_vectors=[float(v) for v in rng.normal(size=supports * features)],
                     coefficients=[float(v) for v in rng.normal(size=(classes - 1) * supports)],
                     rho=[float(v) for v in rng.normal(size=pairs)])
        if seed % 4 == 1:
            attrs.update(prob_a=[float(v) for v in rng.normal(-2, 0.5, size=pairs)],
                         prob_b=[float(v) for v in rng.normal(0, 0.2, size=pairs)])
    # PROBIT of a two-class decision value leaves onnxruntime's second column unwritten: not compared.
    attrs["post_transform"] = TRANSFORMS[(seed // 2) % (len(TRANSFORMS) - (classes == 2 and not linear))]
    if seed % 2:
        attrs["classlabels_strings"] = [f"c{i}" for i in range(classes)]
        label_type = TensorProto.STRING
    else:
        attrs["classlabels_ints"] = [int(v) for v in range(3, 3 + 2 * classes, 2)]
        label_type = TensorProto.INT64
    x_type = [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64][seed % 3]
    x = np.round(rng.normal(size=(16, features)) * 4) / 4
    x = x.astype({TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64, TensorProto.INT64: np.int64}[x_type])
    outputs = [helper.make_tensor_value_info("label", label_type, None),
               helper.make_tensor_value_info("scores", TensorProto.FLOAT, None)]
    compare(model_of("SVMClassifier", attrs, x_type, outputs), x)


@pytest.mark.parametrize("seed", range(16))
def test_random_svm_regressor_matches_onnxruntime(seed):
    rng = np.random.default_rng(100 + seed)
    features = int(rng.integers(1, 5))
    attrs = kernel_attrs(rng, seed)
    if seed % 4 == 3:
        attrs.update(n_supports=0, coefficients=[float(v) for v in rng.normal(size=features)], rho=[0.25])
    else:
        supports = int(rng.integers(1, 6))
        attrs.update(n_supports=supports, support_vectors=[float(v) for v in rng.normal(size=supports * features)],
                     coefficients=[float(v) for v in rng.normal(size=supports)], rho=[float(rng.normal())])
    attrs["one_class"] = int(seed % 5 == 0)
    x = (np.round(rng.normal(size=(16, features)) * 4) / 4).astype(np.float32)
    compare(model_of("SVMRegressor", attrs, TensorProto.FLOAT, [helper.make_tensor_value_info("Y", TensorProto.FLOAT,
                                                                                              None)]), x)


def test_svm_attributes_that_do_not_agree_are_refused():
    attrs = {"vectors_per_class": [1, 1], "support_vectors": [0.0, 1.0, 2.0, 3.0], "coefficients": [1.0],
             "rho": [0.0], "classlabels_ints": [0, 1]}
    outputs = [helper.make_tensor_value_info("label", TensorProto.INT64, None),
               helper.make_tensor_value_info("scores", TensorProto.FLOAT, None)]
    with pytest.raises(Exception, match="SVMClassifier.*do not agree"):
        nxrt.InferenceSession(model_of("SVMClassifier", attrs, TensorProto.FLOAT, outputs))
    with pytest.raises(Exception, match="kernel_type 'CUBIC'"):
        nxrt.InferenceSession(model_of("SVMClassifier", dict(attrs, coefficients=[1.0, 1.0], kernel_type="CUBIC"),
                                       TensorProto.FLOAT, outputs))
