"""Trained models as benchmark black boxes: data, training, oracle.

A :class:`~lca.suite.cases.ModelSpec` names a scikit-learn dataset that ships
inside the package (no download), a small model and the encoder's bits.
:func:`model_oracle` loads the data, trains the model with a fixed
``random_state`` and wraps it with ``lca.models.from_estimator`` over
``lca.models.QuantileEncoder(bits)`` fitted on the features, so uniform ``±1``
points become feature vectors with independent, discretised data marginals
(see :mod:`lca.models`). Training takes well under a second per model and is
deterministic given the data and ``random_state`` (up to floating-point
differences between BLAS builds for the MLP and logistic regression); it
runs in the worker that measures the case, once per process (cached).
"""

from __future__ import annotations

import functools
import time
import warnings
from typing import Any

import numpy as np

from lca.oracle import Oracle
from lca.suite.cases import DATASET_FEATURES, ModelSpec

BENCH_EXTRA = "pip install 'lca[bench]'"
"""How to install what the suite's peer, trained models and plots need (for error messages)."""

DATASET_LABELS = {
    "breast_cancer": "load_breast_cancer: 569 rows, 30 features; +1 = benign (class 1)",
    "wine": "load_wine: 178 rows, 13 features; +1 = class 0 (against classes 1 and 2)",
    "digits": "load_digits: 1,797 rows, 8x8 pixels minus the 3 constant ones; +1 = even "
              "digit",
}
"""How each dataset becomes a binary problem (for the report)."""

MODEL_LABELS = {
    "logistic_regression": "StandardScaler + LogisticRegression(max_iter=1000)",
    "random_forest": "RandomForestClassifier(n_estimators=50, max_depth=8)",
    "gradient_boosting": "GradientBoostingClassifier(n_estimators=50, max_depth=3)",
    "mlp": "StandardScaler + MLPClassifier(hidden_layer_sizes=(32,), max_iter=1000)",
}
"""The models, as constructed (each with ``random_state`` where it has one)."""


def _sklearn() -> Any:
    try:
        import sklearn
    except ImportError as error:
        raise ImportError(f"lca's benchmark suite needs scikit-learn for its trained-model "
                          f"cases: {BENCH_EXTRA}") from error
    return sklearn


def _models_module() -> Any:
    # lca.models holds the model adapters; say so if this lca lacks it.
    try:
        from lca import models
    except ImportError as error:
        raise ImportError("lca's benchmark suite needs lca.models (from_estimator, "
                          "QuantileEncoder) for its trained-model cases") from error
    return models


def load_dataset(name: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Features, 0/1 labels (1 maps to +1) and feature names of a shipped dataset."""
    _sklearn()
    from sklearn import datasets

    if name == "breast_cancer":
        data = datasets.load_breast_cancer()
        x, y = data.data, data.target == 1
    elif name == "wine":
        data = datasets.load_wine()
        x, y = data.data, data.target == 0
    elif name == "digits":
        data = datasets.load_digits()
        # A constant pixel carries no information and its bits would be dead.
        keep = data.data.min(axis=0) < data.data.max(axis=0)
        x, y = data.data[:, keep], data.target % 2 == 0
        data.feature_names = [name for name, kept in zip(data.feature_names, keep, strict=True)
                              if kept]
    else:
        raise ValueError(f"load_dataset: unknown dataset {name!r}; expected one of "
                         f"{sorted(DATASET_FEATURES)}")
    assert x.shape[1] == DATASET_FEATURES[name], (name, x.shape)
    return x.astype(np.float64), y.astype(np.int64), list(data.feature_names)


def make_model(kind: str, seed: int) -> Any:
    """An unfitted model of ``kind`` (see :data:`MODEL_LABELS`) with ``random_state=seed``."""
    _sklearn()
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if kind == "logistic_regression":
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    if kind == "random_forest":
        return RandomForestClassifier(n_estimators=50, max_depth=8, random_state=seed)
    if kind == "gradient_boosting":
        return GradientBoostingClassifier(n_estimators=50, max_depth=3, random_state=seed)
    if kind == "mlp":
        return make_pipeline(StandardScaler(), MLPClassifier(
            hidden_layer_sizes=(32,), max_iter=1000, random_state=seed))
    raise ValueError(f"make_model: unknown model kind {kind!r}; expected one of "
                     f"{sorted(MODEL_LABELS)}")


@functools.lru_cache(maxsize=4)
def model_oracle(spec: ModelSpec, seed: int) -> tuple[Oracle, dict[str, Any]]:
    """The black box of ``spec`` trained with ``random_state=seed``, and facts about it.

    Returns ``(f, info)``: ``f`` is ``lca.models.from_estimator(model, encoder,
    positive=1)`` (the model's label, +1 for class 1); ``info`` holds the
    training accuracy, the training time and the model and dataset labels.
    Cached per process: the peer, every mode and the report share one fit.
    """
    models = _models_module()
    x, y, names = load_dataset(spec.dataset)
    encoder = models.QuantileEncoder(bits=spec.bits, feature_names=names).fit(x)
    if encoder.n_bits != spec.n:
        raise ValueError(f"ModelSpec {spec.key!r}: the encoder has {encoder.n_bits} bits; "
                         f"the spec declares n = {spec.n}")
    model = make_model(spec.model, seed)
    from sklearn.exceptions import ConvergenceWarning

    start = time.perf_counter()
    with warnings.catch_warnings():
        # A convergence warning would only repeat in every worker; the training
        # accuracy in the report says how well each model fits.
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(x, y)
    seconds = time.perf_counter() - start
    f = models.from_estimator(model, encoder, positive=1)
    f.name = spec.key
    info = {"model": MODEL_LABELS[spec.model], "dataset": DATASET_LABELS[spec.dataset],
            "rows": int(x.shape[0]), "features": int(x.shape[1]), "bits": spec.bits,
            "train_accuracy": float(model.score(x, y)), "train_seconds": seconds}
    return f, info
