"""More scikit-learn models converted by skl2onnx, run by nxrt against onnxruntime (same process) and against the
estimator itself: HistGradientBoosting, the categorical encoders (string and int64 categories), a ColumnTransformer
pipeline over numeric and one-hot columns, and float64 models where the converter offers them (issue: drop-in for
onnxruntime's ai.onnx.ml users). Scores within 1e-4 of onnxruntime (float64: 1e-9), labels equal to onnxruntime's and to the estimator's
predict on at least 99% of rows."""

import warnings

import numpy as np
import pytest

import helpers
import nxrt

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("sklearn")
pytest.importorskip("skl2onnx")


def run_both(model, feeds):
    serialized = model.SerializeToString()
    want = ort.InferenceSession(serialized, providers=["CPUExecutionProvider"]).run(None, feeds)
    got = nxrt.InferenceSession(serialized).run(None, feeds)
    return got, want


def classification(rows=300, classes=3, seed=0):
    from sklearn.datasets import make_classification

    x, y = make_classification(rows, 6, n_informative=4, n_classes=classes, random_state=seed)
    return x.astype(np.float32), y


def integer_flags(monkeypatch):
    """skl2onnx 1.20 passes HistGradientBoosting's missing-value tracks as numpy booleans, which onnx.helper refuses
    for an INTS attribute (the converter's bug): the flags are handed over as the 0 / 1 the schema means."""
    from skl2onnx.common import _container

    make_node = _container.make_node

    def with_integer_flags(*args, **attrs):
        for key, value in attrs.items():
            if isinstance(value, (list, np.ndarray)) and any(isinstance(v, (bool, np.bool_)) for v in value):
                attrs[key] = [int(v) for v in value]
        return make_node(*args, **attrs)

    monkeypatch.setattr(_container, "make_node", with_integer_flags)


@pytest.mark.parametrize("name", ["HistGradientBoostingClassifier", "HistGradientBoostingClassifier binary",
                                  "HistGradientBoostingRegressor"])
def test_hist_gradient_boosting(name, monkeypatch):
    from sklearn import ensemble
    from skl2onnx import to_onnx

    integer_flags(monkeypatch)

    if "Regressor" in name:
        from sklearn.datasets import make_regression
        x, y = make_regression(300, 6, random_state=0)
        x = x.astype(np.float32)
        estimator = ensemble.HistGradientBoostingRegressor(max_iter=20, random_state=0)
    else:
        x, y = classification(classes=2 if "binary" in name else 3)
        estimator = ensemble.HistGradientBoostingClassifier(max_iter=20, random_state=0)
    x[::17, 2] = np.nan  # missing values take the trees' learned side
    estimator.fit(x, y)
    options = {id(estimator): {"zipmap": False}} if "Classifier" in name else None
    model = to_onnx(estimator, x[:1], options=options, target_opset={"": 17, "ai.onnx.ml": 3})
    got, want = run_both(model, {"X": x})
    helpers.assert_outputs_match(got, want, rtol=1e-4, atol=1e-4)
    if "Classifier" in name:
        assert float(np.mean(got[0].ravel() == estimator.predict(x))) >= 0.99
    else:
        np.testing.assert_allclose(got[0].ravel(), estimator.predict(x), rtol=1e-4, atol=1e-3)


def categorical_frame(rows=200, seed=0):
    rng = np.random.default_rng(seed)
    colors = np.array(["red", "green", "blue", "vert", "été"], dtype=object)[rng.integers(0, 5, rows)]
    sizes = rng.integers(0, 4, rows).astype(np.int64)
    numbers = rng.standard_normal((rows, 2)).astype(np.float32)
    return colors.reshape(-1, 1), sizes.reshape(-1, 1), numbers


@pytest.mark.parametrize("encoder", ["OneHotEncoder strings", "OneHotEncoder int64", "OrdinalEncoder strings"])
def test_categorical_encoders(encoder):
    from sklearn import preprocessing
    from skl2onnx import to_onnx

    colors, sizes, _ = categorical_frame()
    column = colors if "strings" in encoder else sizes
    estimator = (preprocessing.OneHotEncoder(handle_unknown="ignore") if "OneHot" in encoder
                 else preprocessing.OrdinalEncoder())
    estimator.fit(column)
    model = to_onnx(estimator, column[:1], target_opset={"": 17, "ai.onnx.ml": 3})
    probe = column.copy()
    if "OneHot" in encoder:  # an unseen category encodes as all zeros (handle_unknown="ignore")
        probe[0, 0] = "mauve" if "strings" in encoder else 9
    got, want = run_both(model, {"X": probe})
    helpers.assert_outputs_match(got, want, rtol=0, atol=0)
    expected = estimator.transform(probe)
    expected = expected.toarray() if hasattr(expected, "toarray") else expected
    np.testing.assert_allclose(np.asarray(got[0], np.float64).reshape(expected.shape), expected)


def test_column_transformer_pipeline():
    """Scaled numeric columns beside a one-hot encoded categorical one, then a classifier (one float input: mixed
    column types need a DataFrame)."""
    from sklearn import compose, linear_model, pipeline, preprocessing
    from skl2onnx import to_onnx

    _, sizes, numbers = categorical_frame(300)
    x = np.concatenate([numbers, sizes.astype(np.float32)], axis=1)
    y = ((numbers[:, 0] > 0) + (sizes[:, 0] > 1)).astype(np.int64)
    columns = compose.ColumnTransformer([("scaled", preprocessing.StandardScaler(), [0, 1]),
                                         ("one_hot", preprocessing.OneHotEncoder(handle_unknown="ignore"), [2])])
    estimator = pipeline.make_pipeline(columns, linear_model.LogisticRegression(max_iter=500))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(x, y)
    model = to_onnx(estimator, x[:1], options={id(estimator): {"zipmap": False}},
                    target_opset={"": 17, "ai.onnx.ml": 3})
    got, want = run_both(model, {"X": x})
    helpers.assert_outputs_match(got, want, rtol=1e-4, atol=1e-4)
    assert float(np.mean(got[0].ravel() == estimator.predict(x))) >= 0.99


@pytest.mark.parametrize("name", ["LinearRegression", "Ridge", "StandardScaler", "GaussianProcessRegressor",
                                  "LogisticRegression"])
def test_float64_models(name):
    from sklearn import gaussian_process, linear_model, preprocessing
    from skl2onnx import to_onnx

    x, y = classification(120)
    x = x.astype(np.float64)
    estimator = {"LinearRegression": linear_model.LinearRegression(), "Ridge": linear_model.Ridge(),
                 "StandardScaler": preprocessing.StandardScaler(),
                 "GaussianProcessRegressor": gaussian_process.GaussianProcessRegressor(),
                 "LogisticRegression": linear_model.LogisticRegression(max_iter=500)}[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(x, y.astype(np.float64) if name != "LogisticRegression" else y)
    options = {id(estimator): {"zipmap": False}} if name == "LogisticRegression" else None
    model = to_onnx(estimator, x[:1], options=options, target_opset={"": 17, "ai.onnx.ml": 3})
    got, want = run_both(model, {"X": x})
    tolerance = 1e-6 if name == "GaussianProcessRegressor" else 1e-9
    helpers.assert_outputs_match(got, want, rtol=tolerance, atol=tolerance)
    if name == "StandardScaler":
        np.testing.assert_allclose(got[0], estimator.transform(x), rtol=1e-12, atol=1e-12)
    elif name == "LogisticRegression":
        np.testing.assert_allclose(got[1], estimator.predict_proba(x), rtol=1e-9, atol=1e-12)
    else:
        np.testing.assert_allclose(got[0].ravel(), estimator.predict(x), rtol=1e-6, atol=1e-6)
