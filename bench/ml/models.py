"""ai.onnx.ml models as scikit-learn users export them, for the CPU benchmark (``bench/suite/run.py --suite ml``):
forests, boosting, SVMs, linear models, naive Bayes, a neural network and a pipeline fitted here on synthetic data
(scikit-learn, fixed seeds) and converted by skl2onnx (TreeEnsembleClassifier / Regressor, SVMClassifier /
Regressor, LinearClassifier / Regressor, Scaler and plain MatMul graphs; ZipMap off so both runtimes return
tensors, but for one logistic regression with skl2onnx's default ZipMap, which returns a list of dicts), and
XGBoost / LightGBM classifiers converted by onnxmltools when those are installed, each at batch 1 and at 10,000
rows. Fitting takes under a minute; nothing is downloaded.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "suite"))
from models import Case  # noqa: E402

ROWS = (1, 10_000)


def estimators():
    from sklearn import decomposition, ensemble, linear_model, naive_bayes, neural_network, pipeline, preprocessing
    from sklearn import svm, tree

    return [
        ("random forest classifier, 100 trees, depth 10, 3 classes", "clf",
         ensemble.RandomForestClassifier(100, max_depth=10, random_state=0)),
        ("extra trees classifier, 100 trees, depth 8, 2 classes", "clf2",
         ensemble.ExtraTreesClassifier(100, max_depth=8, random_state=0)),
        ("gradient boosting classifier, 100 x 3 trees, depth 3", "clf",
         ensemble.GradientBoostingClassifier(n_estimators=100, random_state=0)),
        ("random forest regressor, 100 trees, depth 12", "reg",
         ensemble.RandomForestRegressor(100, max_depth=12, random_state=0)),
        ("gradient boosting regressor, 300 trees, depth 4", "reg",
         ensemble.GradientBoostingRegressor(n_estimators=300, max_depth=4, random_state=0)),
        ("decision tree regressor, depth 16", "reg", tree.DecisionTreeRegressor(max_depth=16, random_state=0)),
        ("SVC rbf, 3 classes", "clf", svm.SVC()),
        ("SVR rbf", "reg", svm.SVR()),
        ("logistic regression, 3 classes", "clf", linear_model.LogisticRegression(max_iter=1000)),
        ("logistic regression, 3 classes, ZipMap", "clf-zipmap", linear_model.LogisticRegression(max_iter=1000)),
        ("linear regression", "reg", linear_model.LinearRegression()),
        ("Gaussian naive Bayes, 3 classes", "clf", naive_bayes.GaussianNB()),
        ("MLP classifier, 2 x 64 hidden, 3 classes", "clf",
         neural_network.MLPClassifier((64, 64), max_iter=200, random_state=0)),
        ("scaler + PCA(8) + logistic regression pipeline, 3 classes", "clf",
         pipeline.make_pipeline(preprocessing.StandardScaler(), decomposition.PCA(8),
                                linear_model.LogisticRegression(max_iter=1000))),
    ]


def boosted_estimators():
    """XGBoost and LightGBM classifiers, when those libraries and onnxmltools are installed."""
    try:
        import lightgbm
        import onnxmltools  # noqa: F401
        import xgboost
    except ImportError:
        return []
    return [
        ("XGBoost classifier, 100 x 3 trees, depth 6 (onnxmltools)", "xgb",
         xgboost.XGBClassifier(n_estimators=100, max_depth=6, random_state=0)),
        ("LightGBM classifier, 100 x 3 trees, ZipMap (onnxmltools)", "lgbm",
         lightgbm.LGBMClassifier(n_estimators=100, random_state=0, verbose=-1)),
    ]


def convert(kind, estimator, x):
    from skl2onnx import to_onnx

    if kind in ("xgb", "lgbm"):
        import onnxmltools
        from onnxmltools.convert.common.data_types import FloatTensorType

        to = onnxmltools.convert_xgboost if kind == "xgb" else onnxmltools.convert_lightgbm
        return to(estimator, initial_types=[("X", FloatTensorType([None, x.shape[1]]))], target_opset=15)
    options = {id(estimator): {"zipmap": False}} if kind in ("clf", "clf2") else None
    return to_onnx(estimator, x[:1], options=options, target_opset={"": 17, "ai.onnx.ml": 3})


def build_all():
    from sklearn.datasets import make_classification, make_regression

    cases = []
    for name, kind, estimator in estimators() + boosted_estimators():
        if kind.startswith("clf") or kind in ("xgb", "lgbm"):
            x, y = make_classification(20_000, 20, n_informative=10, n_classes=2 if kind == "clf2" else 3,
                                       random_state=0)
        else:
            x, y = make_regression(20_000, 20, n_informative=10, noise=0.1, random_state=0)
        x = x.astype(np.float32)
        estimator.fit(x[:10_000], y[:10_000])
        model = convert(kind, estimator, x).SerializeToString()
        notes = "onnxmltools" if kind in ("xgb", "lgbm") else "scikit-learn via skl2onnx"
        for rows in ROWS:
            cases.append(Case(f"{name}, {rows} rows", model, {"X": x[10_000:10_000 + rows]}, rtol=1e-5, atol=1e-5,
                              notes=notes))
    return cases
