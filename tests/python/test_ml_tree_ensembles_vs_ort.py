"""ai.onnx.ml TreeEnsembleRegressor / TreeEnsembleClassifier against onnxruntime (same process) and scikit-learn.

Two sources of models: scikit-learn estimators converted by skl2onnx (the files users have; also checked against the
estimator's own predictions), and random forests written directly, which reach the attribute forms converters
rarely write (every aggregate function, base-value count, post-transform, branch mode, missing-value tracks, leaf
roots, *_as_tensor attributes, int and double inputs, binary models with one weighted class). Scores: float32
outputs within 1e-5 relative of onnxruntime (both sum float weights, nxrt in double); labels equal.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import helpers
import nxrt

ort = pytest.importorskip("onnxruntime")

MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]
TRANSFORMS = ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"]


def random_trees(rng, trees, features, leaf_root_every=0):
    """Node attributes of `trees` random trees (depth 1-4) and the (tree, node) ids of their leaves."""
    attrs = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "nodes_values",
                             "nodes_truenodeids", "nodes_falsenodeids", "nodes_missing_value_tracks_true")}
    leaves = []
    for tree in range(trees):
        nodes = []

        def grow(depth):
            index = len(nodes)
            nodes.append(None)
            if depth == 0 or (leaf_root_every and tree % leaf_root_every == 0 and index == 0) or rng.random() < 0.2:
                nodes[index] = ("LEAF",)
                return index
            true_id = grow(depth - 1)
            false_id = grow(depth - 1)
            nodes[index] = (MODES[rng.integers(len(MODES))], int(rng.integers(features)),
                            float(np.round(rng.normal() * 4) / 4), true_id, false_id, int(rng.random() < 0.3))
            return index

        grow(int(rng.integers(1, 5)))
        for node_id, node in enumerate(nodes):
            attrs["nodes_treeids"].append(tree)
            attrs["nodes_nodeids"].append(node_id)
            if node[0] == "LEAF":
                attrs["nodes_featureids"].append(0)
                attrs["nodes_modes"].append("LEAF")
                attrs["nodes_values"].append(0.0)
                attrs["nodes_truenodeids"].append(0)
                attrs["nodes_falsenodeids"].append(0)
                attrs["nodes_missing_value_tracks_true"].append(0)
                leaves.append((tree, node_id))
            else:
                mode, feature, split, true_id, false_id, missing = node
                attrs["nodes_featureids"].append(feature)
                attrs["nodes_modes"].append(mode)
                attrs["nodes_values"].append(split)
                attrs["nodes_truenodeids"].append(true_id)
                attrs["nodes_falsenodeids"].append(false_id)
                attrs["nodes_missing_value_tracks_true"].append(missing)
    return attrs, leaves


def as_tensor_attrs(attrs, names, dtype):
    """Moves float list attributes to their opset-3 *_as_tensor form."""
    for name in names:
        if name in attrs:
            attrs[name + "_as_tensor"] = onnx.numpy_helper.from_array(np.array(attrs.pop(name), dtype=dtype))
    return attrs


def model_of(op, attrs, x_type, features, outputs, opset):
    x = helper.make_tensor_value_info("X", x_type, [None, features])
    node = helper.make_node(op, ["X"], [o.name for o in outputs], domain="ai.onnx.ml", **attrs)
    graph = helper.make_graph([node], "trees", [x], outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", opset)],
                             ir_version=8).SerializeToString()


def features_of(rng, rows, features, x_type):
    # Quarters: exact in every input type, so that float, double and int64 rows take the same branches.
    x = np.round(rng.normal(size=(rows, features)) * 4) / 4
    if x_type == TensorProto.INT64:
        return np.round(x * 2).astype(np.int64)
    x[rng.random(x.shape) < 0.1] = np.nan
    return x.astype(np.float64 if x_type == TensorProto.DOUBLE else np.float32)


def both(model, feeds):
    want = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)
    got = nxrt.InferenceSession(model).run(None, feeds)
    return got, want


def compare(op, attrs, x_type, features, outputs, opset, x):
    """nxrt on X as typed against onnxruntime, which lacks kernels for some input types (int64 and int32 regressors;
    double rows with float opset-3 tensors): there it runs the same forest on X as float32 (exact: the features are
    quarters)."""
    got = nxrt.InferenceSession(model_of(op, attrs, x_type, features, outputs, opset)).run(None, {"X": x})
    try:
        want = ort.InferenceSession(model_of(op, attrs, x_type, features, outputs, opset),
                                    providers=["CPUExecutionProvider"]).run(None, {"X": x})
    except Exception:  # no kernel, or no opset-3 tensors of that type: the float forest on float rows
        want = ort.InferenceSession(model_of(op, attrs, TensorProto.FLOAT, features, outputs, opset),
                                    providers=["CPUExecutionProvider"]).run(None, {"X": x.astype(np.float32)})
    helpers.assert_outputs_match(got, want)


@pytest.mark.parametrize("seed", range(40))
def test_random_regressor_matches_onnxruntime(seed):
    rng = np.random.default_rng(seed)
    features, targets = int(rng.integers(1, 6)), int(rng.integers(1, 4))
    attrs, leaves = random_trees(rng, int(rng.integers(1, 8)), features, leaf_root_every=3 if seed % 4 == 0 else 0)
    for key in ("target_treeids", "target_nodeids", "target_ids", "target_weights"):
        attrs[key] = []
    for tree, node in leaves:
        for target in rng.choice(targets, size=int(rng.integers(1, targets + 1)), replace=False):
            attrs["target_treeids"].append(tree)
            attrs["target_nodeids"].append(node)
            attrs["target_ids"].append(int(target))
            attrs["target_weights"].append(float(np.round(rng.normal(), 2)))
    attrs["n_targets"] = targets
    attrs["aggregate_function"] = ["SUM", "AVERAGE", "MIN", "MAX"][seed % 4]
    attrs["post_transform"] = TRANSFORMS[(seed // 4) % len(TRANSFORMS)]
    # onnxruntime takes no base values or one per target.
    if seed % 3 != 0:
        attrs["base_values"] = [float(v) for v in np.round(rng.normal(size=targets), 2)]
    x_type = [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64][seed % 3]
    opset = 3 if seed % 2 else 1
    if opset == 3:
        attrs = as_tensor_attrs(attrs, ["nodes_values", "target_weights", "base_values"], np.float32)
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, targets])
    compare("TreeEnsembleRegressor", attrs, x_type, features, [y], opset, features_of(rng, 64, features, x_type))


@pytest.mark.parametrize("seed", range(60))
def test_random_classifier_matches_onnxruntime(seed):
    rng = np.random.default_rng(1000 + seed)
    features = int(rng.integers(1, 6))
    classes = 2 if seed % 2 == 0 else int(rng.integers(3, 6))
    attrs, leaves = random_trees(rng, int(rng.integers(1, 8)), features, leaf_root_every=3 if seed % 5 == 0 else 0)
    # Binary models weight one class (class 1 or 0); the others weight every class at some leaves.
    one_class = classes == 2 and seed % 4 == 0
    positive = seed % 8 == 0
    for key in ("class_treeids", "class_nodeids", "class_ids", "class_weights"):
        attrs[key] = []
    for tree, node in leaves:
        chosen = [seed % 3 % 2] if one_class else rng.choice(classes, size=int(rng.integers(1, classes + 1)),
                                                                 replace=False)
        for c in chosen:
            attrs["class_treeids"].append(tree)
            attrs["class_nodeids"].append(node)
            attrs["class_ids"].append(int(c))
            weight = float(np.round(rng.normal(), 2))
            attrs["class_weights"].append(abs(weight) if positive else weight)
    if seed % 3 == 0:
        attrs["classlabels_strings"] = [f"class_{i}" for i in range(classes)]
    else:
        attrs["classlabels_int64s"] = list(range(classes)) if seed % 3 == 1 else [int(v) for v in
                                                                                   range(10, 10 + 7 * classes, 7)]
    if (seed // 2) % 2:  # onnxruntime takes no base values or one per class
        attrs["base_values"] = [float(v) for v in np.round(rng.normal(size=classes), 2)]
    # PROBIT of a single binary score leaves onnxruntime's second column unwritten: not compared.
    attrs["post_transform"] = TRANSFORMS[(seed // 6) % (len(TRANSFORMS) - (classes == 2))]
    x_type = [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64][(seed // 3) % 3]
    opset = 3 if seed % 2 else 1
    if opset == 3:
        attrs = as_tensor_attrs(attrs, ["nodes_values", "class_weights", "base_values"], np.float32)
    label_type = TensorProto.STRING if "classlabels_strings" in attrs else TensorProto.INT64
    outputs = [helper.make_tensor_value_info("label", label_type, [None]),
               helper.make_tensor_value_info("scores", TensorProto.FLOAT, [None, classes])]
    compare("TreeEnsembleClassifier", attrs, x_type, features, outputs, opset, features_of(rng, 64, features, x_type))


def test_invalid_forests_are_refused_with_the_node_named():
    rng = np.random.default_rng(0)
    attrs, leaves = random_trees(rng, 2, 3)
    attrs.update(target_treeids=[t for t, _ in leaves], target_nodeids=[n for _, n in leaves],
                 target_ids=[0] * len(leaves), target_weights=[1.0] * len(leaves), n_targets=1)
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, 1])

    def refused(changes, message):
        with pytest.raises(Exception, match=message):
            nxrt.InferenceSession(model_of("TreeEnsembleRegressor", dict(attrs, **changes), TensorProto.FLOAT, 3, [y], 1))

    refused({"target_ids": [0] * (len(leaves) - 1) + [1]}, "TreeEnsembleRegressor.*target_ids value 1 is outside")
    refused({"nodes_truenodeids": [99 if m != "LEAF" else 0 for m in attrs["nodes_modes"]]}, "tree 0 has no node 99")
    refused({"nodes_modes": ["BRANCH_SOMETIMES" if m != "LEAF" else m for m in attrs["nodes_modes"]]},
            "BRANCH_SOMETIMES")
    refused({"n_targets": 0}, "n_targets must be at least 1")
    refused({"aggregate_function": "MEDIAN"}, "MEDIAN")
    refused({"nodes_values": attrs["nodes_values"][:-1]}, "differ in length")
    # A leaf without weights adds nothing (as in onnxruntime), and X must hold the features the trees read.
    attrs["nodes_featureids"] = [2] * len(attrs["nodes_featureids"])
    session = nxrt.InferenceSession(model_of("TreeEnsembleRegressor", attrs, TensorProto.FLOAT, None, [y], 1))
    assert session.run(None, {"X": np.zeros((2, 3), np.float32)})[0].shape == (2, 1)
    with pytest.raises(Exception, match="TreeEnsembleRegressor.*has 1 features but the trees read feature 2"):
        session.run(None, {"X": np.zeros((2, 1), np.float32)})


ESTIMATORS = ["decision tree classifier", "random forest classifier", "extra trees classifier",
              "gradient boosting classifier", "decision tree regressor", "random forest regressor",
              "extra trees regressor", "gradient boosting regressor", "adaboost regressor"]


def estimator_of(name):
    from sklearn import ensemble, tree
    return {
        "decision tree classifier": tree.DecisionTreeClassifier(max_depth=6, random_state=0),
        "random forest classifier": ensemble.RandomForestClassifier(12, max_depth=6, random_state=0),
        "extra trees classifier": ensemble.ExtraTreesClassifier(12, max_depth=6, random_state=0),
        "gradient boosting classifier": ensemble.GradientBoostingClassifier(n_estimators=12, random_state=0),
        "decision tree regressor": tree.DecisionTreeRegressor(max_depth=6, random_state=0),
        "random forest regressor": ensemble.RandomForestRegressor(12, max_depth=6, random_state=0),
        "extra trees regressor": ensemble.ExtraTreesRegressor(12, max_depth=6, random_state=0),
        "gradient boosting regressor": ensemble.GradientBoostingRegressor(n_estimators=12, random_state=0),
        "adaboost regressor": ensemble.AdaBoostRegressor(n_estimators=6, random_state=0),
    }[name]


# Classifiers: two classes, three classes, string labels; regressors: one target and (where the estimator fits
# several) three targets.
SKLEARN_CASES = [(name, variant) for name in ESTIMATORS
                 for variant in (["binary", "multiclass", "string labels"] if name.endswith("classifier") else
                                 ["one target"] + ([] if "boost" in name else ["three targets"]))]


@pytest.mark.parametrize("name,variant", SKLEARN_CASES)
def test_scikit_learn_forests_match_the_estimator_and_onnxruntime(name, variant):
    pytest.importorskip("sklearn")
    pytest.importorskip("skl2onnx")
    from sklearn.base import clone
    from sklearn.datasets import make_classification, make_regression
    from skl2onnx import to_onnx

    kind = "clf" if name.endswith("classifier") else "reg"
    estimator = estimator_of(name)
    if kind == "reg":
        x, y = make_regression(400, 8, n_targets=3 if variant == "three targets" else 1, random_state=1)
    else:
        x, y = make_classification(400, 8, n_informative=5, n_classes=2 if variant == "binary" else 3, random_state=2)
        if variant == "string labels":
            y = np.array(["ant", "bee", "cat"])[y]
    x = x.astype(np.float32)
    model = clone(estimator).fit(x, y)
    options = {id(model): {"zipmap": False}} if kind == "clf" else None
    onx = to_onnx(model, x[:1], options=options, target_opset={"": 17, "ai.onnx.ml": 3})
    assert any(node.op_type.startswith("TreeEnsemble") for node in onx.graph.node)
    feeds = {"X": x}
    got, want = both(onx.SerializeToString(), feeds)
    helpers.assert_outputs_match(got, want)
    if kind == "clf":
        np.testing.assert_array_equal(got[0], model.predict(x))
        np.testing.assert_allclose(got[1], model.predict_proba(x), rtol=1e-4, atol=1e-5)
    else:
        np.testing.assert_allclose(got[0].reshape(np.shape(y)), model.predict(x), rtol=1e-4,
                                   atol=1e-4 * float(np.max(np.abs(y))))
