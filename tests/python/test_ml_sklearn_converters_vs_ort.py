"""scikit-learn estimators converted by skl2onnx, run by nxrt against onnxruntime (same process) and against the
estimator itself: linear models, SVMs, nearest neighbours, naive Bayes, scalers and other transformers, trees,
forests, boosting, bagging, neural networks and pipelines (45 estimators; issue: drop-in for onnxruntime's
ai.onnx.ml users). Scores within 1e-4 of onnxruntime, labels equal to onnxruntime's; labels also agree with the
estimator's predict on at least 99% of rows (float32 against scikit-learn's float64 may flip a near-tie).
"""

import warnings

import numpy as np
import pytest

import helpers
import nxrt

ort = pytest.importorskip("onnxruntime")


def estimator_cases():
    from sklearn import (cluster, decomposition, discriminant_analysis, ensemble, feature_selection, impute,
                         linear_model, naive_bayes, neighbors, neural_network, pipeline, preprocessing, svm, tree)
    return {
        "LogisticRegression": (linear_model.LogisticRegression(max_iter=500), "3 classes"),
        "LogisticRegression binary": (linear_model.LogisticRegression(max_iter=500), "2 classes"),
        "SGDClassifier": (linear_model.SGDClassifier(random_state=0), "3 classes"),
        "RidgeClassifier": (linear_model.RidgeClassifier(), "3 classes"),
        "Perceptron": (linear_model.Perceptron(random_state=0), "3 classes"),
        "LinearRegression": (linear_model.LinearRegression(), "regression"),
        "Ridge": (linear_model.Ridge(), "regression"),
        "Lasso": (linear_model.Lasso(), "regression"),
        "ElasticNet": (linear_model.ElasticNet(), "regression"),
        "SGDRegressor": (linear_model.SGDRegressor(random_state=0), "regression"),
        "LinearSVC": (svm.LinearSVC(random_state=0), "3 classes"),
        "LinearSVR": (svm.LinearSVR(random_state=0), "regression"),
        "SVC rbf": (svm.SVC(), "3 classes"),
        "SVC poly": (svm.SVC(kernel="poly", degree=2), "3 classes"),
        "SVC sigmoid binary": (svm.SVC(kernel="sigmoid"), "2 classes"),
        "SVC probability": (svm.SVC(probability=True, random_state=0), "3 classes"),
        "SVC binary": (svm.SVC(), "2 classes"),
        "NuSVC": (svm.NuSVC(), "3 classes"),
        "SVR": (svm.SVR(), "regression"),
        "NuSVR": (svm.NuSVR(), "regression"),
        "OneClassSVM": (svm.OneClassSVM(), "unsupervised"),
        "KNeighborsClassifier": (neighbors.KNeighborsClassifier(), "3 classes"),
        "KNeighborsRegressor": (neighbors.KNeighborsRegressor(), "regression"),
        "GaussianNB": (naive_bayes.GaussianNB(), "3 classes"),
        "MultinomialNB": (naive_bayes.MultinomialNB(), "3 classes, non-negative"),
        "BernoulliNB": (naive_bayes.BernoulliNB(), "3 classes"),
        "StandardScaler": (preprocessing.StandardScaler(), "transform"),
        "MinMaxScaler": (preprocessing.MinMaxScaler(), "transform"),
        "RobustScaler": (preprocessing.RobustScaler(), "transform"),
        "MaxAbsScaler": (preprocessing.MaxAbsScaler(), "transform"),
        "Normalizer": (preprocessing.Normalizer(), "transform"),
        "PolynomialFeatures": (preprocessing.PolynomialFeatures(), "transform"),
        "PCA": (decomposition.PCA(3), "transform"),
        "TruncatedSVD": (decomposition.TruncatedSVD(3, random_state=0), "transform"),
        "SimpleImputer": (impute.SimpleImputer(), "transform"),
        "KMeans": (cluster.KMeans(3, n_init=2, random_state=0), "unsupervised"),
        "MLPClassifier": (neural_network.MLPClassifier(max_iter=300, random_state=0), "3 classes"),
        "MLPRegressor": (neural_network.MLPRegressor(max_iter=300, random_state=0), "regression"),
        "LinearDiscriminantAnalysis": (discriminant_analysis.LinearDiscriminantAnalysis(), "3 classes"),
        "DecisionTreeClassifier": (tree.DecisionTreeClassifier(max_depth=5, random_state=0), "3 classes"),
        "RandomForestClassifier": (ensemble.RandomForestClassifier(10, max_depth=5, random_state=0), "3 classes"),
        "ExtraTreesRegressor": (ensemble.ExtraTreesRegressor(10, max_depth=5, random_state=0), "regression"),
        "GradientBoostingClassifier": (ensemble.GradientBoostingClassifier(n_estimators=10, random_state=0),
                                       "3 classes"),
        "AdaBoostClassifier": (ensemble.AdaBoostClassifier(n_estimators=10, random_state=0), "3 classes"),
        "BaggingClassifier": (ensemble.BaggingClassifier(n_estimators=5, random_state=0), "3 classes"),
        "Pipeline StandardScaler + LogisticRegression": (
            pipeline.make_pipeline(preprocessing.StandardScaler(), linear_model.LogisticRegression(max_iter=500)),
            "3 classes"),
        "Pipeline PCA + SVC": (pipeline.make_pipeline(decomposition.PCA(4), svm.SVC()), "3 classes"),
        "Pipeline SelectKBest + Ridge": (pipeline.make_pipeline(feature_selection.SelectKBest(k=3),
                                                                 linear_model.Ridge()), "regression"),
    }


NAMES = ["LogisticRegression", "LogisticRegression binary", "SGDClassifier", "RidgeClassifier", "Perceptron",
         "LinearRegression", "Ridge", "Lasso", "ElasticNet", "SGDRegressor", "LinearSVC", "LinearSVR", "SVC rbf",
         "SVC poly", "SVC sigmoid binary", "SVC probability", "SVC binary", "NuSVC", "SVR", "NuSVR", "OneClassSVM",
         "KNeighborsClassifier", "KNeighborsRegressor", "GaussianNB", "MultinomialNB", "BernoulliNB",
         "StandardScaler", "MinMaxScaler", "RobustScaler", "MaxAbsScaler", "Normalizer", "PolynomialFeatures", "PCA",
         "TruncatedSVD", "SimpleImputer", "KMeans", "MLPClassifier", "MLPRegressor", "LinearDiscriminantAnalysis",
         "DecisionTreeClassifier", "RandomForestClassifier", "ExtraTreesRegressor", "GradientBoostingClassifier",
         "AdaBoostClassifier", "BaggingClassifier", "Pipeline StandardScaler + LogisticRegression",
         "Pipeline PCA + SVC", "Pipeline SelectKBest + Ridge"]


@pytest.mark.parametrize("name", NAMES)
def test_converted_estimator_matches_onnxruntime_and_the_estimator(name):
    pytest.importorskip("sklearn")
    pytest.importorskip("skl2onnx")
    from sklearn.datasets import make_classification, make_regression
    from skl2onnx import to_onnx

    estimator, data = estimator_cases()[name]
    if data == "regression":
        x, y = make_regression(300, 6, random_state=0)
    else:
        x, y = make_classification(300, 6, n_informative=4, n_classes=2 if data == "2 classes" else 3,
                                   random_state=0)
    x = np.abs(x) if "non-negative" in data else x
    x = x.astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if data in ("transform", "unsupervised"):
            estimator.fit(x)
        else:
            estimator.fit(x, y)
        classifier = hasattr(estimator, "predict_proba") or "classes" in data
        try:  # ZipMap off (a classifier's scores as a tensor) where the converter offers the option
            model = to_onnx(estimator, x[:1], options={id(estimator): {"zipmap": False}} if "classes" in data else None,
                            target_opset={"": 17, "ai.onnx.ml": 3})
        except NameError:
            model = to_onnx(estimator, x[:1], target_opset={"": 17, "ai.onnx.ml": 3})
    serialized = model.SerializeToString()
    want = ort.InferenceSession(serialized, providers=["CPUExecutionProvider"]).run(None, {"X": x})
    got = nxrt.InferenceSession(serialized).run(None, {"X": x})
    helpers.assert_outputs_match(got, want, rtol=1e-4, atol=1e-4)
    if "classes" in data and classifier:
        agree = float(np.mean(np.asarray(got[0]).ravel() == estimator.predict(x).ravel()))
        assert agree >= 0.99, f"labels agree with {name}.predict on {agree:.1%} of rows"


CLASSIFIERS = [name for name in NAMES if "classes" in estimator_cases()[name][1]
               and name not in ("RidgeClassifier", "Perceptron", "LinearSVC", "SGDClassifier")]


@pytest.mark.parametrize("labels", ["int", "str"])
@pytest.mark.parametrize("name", CLASSIFIERS)
def test_classifier_with_zipmap_matches_onnxruntime(name, labels):
    """skl2onnx's default for classifiers: the probabilities leave through ZipMap as a list of dicts (class label ->
    probability), with int or string class labels."""
    pytest.importorskip("sklearn")
    pytest.importorskip("skl2onnx")
    from sklearn.datasets import make_classification
    from skl2onnx import to_onnx

    estimator, data = estimator_cases()[name]
    x, y = make_classification(200, 6, n_informative=4, n_classes=2 if data == "2 classes" else 3, random_state=1)
    x = (np.abs(x) if "non-negative" in data else x).astype(np.float32)
    if labels == "str":
        y = np.array(["cat", "dog", "bird"])[y]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(x, y)
        model = to_onnx(estimator, x[:1], target_opset={"": 17, "ai.onnx.ml": 3})
    serialized = model.SerializeToString()
    assert any(node.op_type == "ZipMap" for node in model.graph.node)
    want = ort.InferenceSession(serialized, providers=["CPUExecutionProvider"]).run(None, {"X": x})
    session = nxrt.InferenceSession(serialized)
    got = session.run(None, {"X": x})
    assert [o.type for o in session.get_outputs()] == [o.type for o in ort.InferenceSession(
        serialized, providers=["CPUExecutionProvider"]).get_outputs()]
    np.testing.assert_array_equal(got[0], want[0])
    helpers.assert_maps_match(got[1], want[1], rtol=1e-4, atol=1e-4)
