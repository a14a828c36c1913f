"""XGBoost and LightGBM models converted by onnxmltools (TreeEnsembleClassifier / Regressor, ZipMap for LightGBM's
classifiers), run by nxrt against onnxruntime (same process) and against the library's own predictions, also with
missing values (NaN) in the rows."""

import warnings

import numpy as np
import pytest

import helpers
import nxrt

ort = pytest.importorskip("onnxruntime")
xgboost = pytest.importorskip("xgboost")
lightgbm = pytest.importorskip("lightgbm")
onnxmltools = pytest.importorskip("onnxmltools")

CASES = ["XGBClassifier 2", "XGBClassifier 3", "XGBRegressor", "LGBMClassifier 2", "LGBMClassifier 3",
         "LGBMRegressor"]


def fitted(name, missing):
    from sklearn.datasets import make_classification, make_regression

    if "Regressor" in name:
        x, y = make_regression(400, 6, random_state=0)
    else:
        x, y = make_classification(400, 6, n_informative=4, n_classes=int(name[-1]), random_state=0)
    x = x.astype(np.float32)
    if missing:
        x[np.random.default_rng(0).random(x.shape) < 0.1] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name.startswith("XGB"):
            estimator = getattr(xgboost, name.split()[0])(n_estimators=25, max_depth=4, random_state=0)
        else:
            estimator = getattr(lightgbm, name.split()[0])(n_estimators=25, random_state=0, verbose=-1)
        estimator.fit(x, y)
    return estimator, x


@pytest.mark.parametrize("missing", [False, True], ids=["dense", "with NaN"])
@pytest.mark.parametrize("name", CASES)
def test_boosted_trees_match_onnxruntime_and_the_library(name, missing):
    from onnxmltools.convert.common.data_types import FloatTensorType

    estimator, x = fitted(name, missing)
    convert = onnxmltools.convert_xgboost if name.startswith("XGB") else onnxmltools.convert_lightgbm
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        serialized = convert(estimator, initial_types=[("X", FloatTensorType([None, 6]))],
                             target_opset=15).SerializeToString()
    options = ort.SessionOptions()
    options.log_severity_level = 3  # the converters declare a label shape of [1]
    want = ort.InferenceSession(serialized, options, providers=["CPUExecutionProvider"]).run(None, {"X": x})
    got = nxrt.InferenceSession(serialized).run(None, {"X": x})
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, list):  # ZipMap: a dict of class -> probability per row
            helpers.assert_maps_match(g, w, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64), rtol=1e-4, atol=1e-4)
    if "Regressor" in name:
        np.testing.assert_allclose(np.asarray(got[0]).ravel(), estimator.predict(x), rtol=1e-4, atol=1e-3)
    else:
        agree = float(np.mean(np.asarray(got[0]).ravel() == estimator.predict(x).ravel()))
        assert agree >= 0.99, f"labels agree with {name}.predict on {agree:.1%} of rows"
