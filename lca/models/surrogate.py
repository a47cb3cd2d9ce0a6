"""Distil a trained model into one fixed, readable decision tree: :class:`Surrogate`.

A scikit-learn-style estimator around :func:`lca.models.from_estimator` and
:class:`lca.Reconstructor`: ``fit(X)`` learns only the encoder from the rows
(no labels: the model is the oracle); every answer after that is the value of
one fixed tree ``T_seed``, built locally, the path of each row with a bounded
number of model queries, identical in every process.

Why one module of this size: :class:`Surrogate` is one estimator whose
methods (fit, predict, explain, tree, fidelity, report, JSON) share its fitted
state; the saved document's checks live apart in :mod:`lca.models._state`.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from lca import derive
from lca._validate import check_flag, check_int, check_real, check_seed
from lca.decisions import LeafDecision, NodeDecision, agreeing, split_rows
from lca.derive import Path
from lca.export import ReconstructedTree
from lca.models._data import is_frame, is_series, plain
from lca.models._state import MAX_DEPTH, encoder_state, read_document, write_document
from lca.models.encoders import BinaryEncoder, Encoder, QuantileEncoder
from lca.models.oracle import (
    ModelOracle,
    from_classifier,
    from_estimator,
    model_classes,
    positive_class,
)
from lca.models.rows import MAX_ROWS_PER_NODE, LeafRows, RowsTree, topup_columns
from lca.models.thresholds import ThresholdEncoder
from lca.params import Params
from lca.reconstruct import Reconstructor

__all__ = [
    "Agreement",
    "Fidelity",
    "LowFidelityWarning",
    "OnRows",
    "Rules",
    "Surrogate",
]

_PARAMS = ("model", "positive", "threshold", "depth", "seed", "params", "encoder",
           "distribution", "rows_per_node", "min_rows", "product_rows")
DISTRIBUTIONS = ("product", "data")

# What the value-like constructor arguments may be, declared once and checked
# when fit runs (the constructor only stores them, as scikit-learn's estimators
# do). The model, positive class, threshold, params and encoder are checked
# against each other where they meet (from_estimator and _params).
_PARAMETER_CONSTRAINTS: dict[str, Callable[[str, str, Any], Any]] = {
    "depth": functools.partial(check_int, low=0, high=MAX_DEPTH),
    "seed": lambda owner, name, value: check_seed(owner, value, name),
    "rows_per_node": functools.partial(check_int, low=1, high=MAX_ROWS_PER_NODE),
    "min_rows": functools.partial(check_int, low=1),
    "product_rows": functools.partial(check_int, low=0, high=MAX_ROWS_PER_NODE - 1),
}

# Agreement on the rows given more than this below the agreement on the product
# distribution is reported (LowFidelityWarning): the rows are then unlike the
# independent features the tree was built for. A tenth is more than the two 95%
# half-widths together at 500 rows and the default 2,000 samples (0.061 + 0.030),
# so sampling alone rarely triggers it.
FAR_BELOW = Fraction(1, 10)
# Leaves report() lists, those holding the most of the rows given.
_REPORTED_LEAVES = 10


class LowFidelityWarning(UserWarning):
    """On the rows given, the tree agrees with the model no better than the majority label,
    or far (more than :data:`FAR_BELOW`) below its agreement on the product distribution."""


@dataclass(frozen=True)
class OnRows:
    """How one leaf fares on the rows given: how many reach it, on how many the model agrees.

    Attributes:
        reach: rows whose path ends at the leaf.
        agree: of those, rows on which the model gives the leaf's answer.
        rows: rows given in all.
    """

    reach: int
    agree: int
    rows: int

    def __str__(self) -> str:
        text = f"{self.reach} of {self.rows} rows given ({self.reach / self.rows:.1%})"
        if self.reach:
            text += f", the model agrees on {self.agree} ({self.agree / self.reach:.0%})"
        return text


@dataclass(frozen=True)
class Rules:
    """The rules of one leaf of ``T_seed``: the path to it, its answer, and how it fares.

    Attributes:
        conditions: the readable condition of each step, root first.
        prediction: the surrogate's answer, in the model's labels.
        path: the ``(variable, bit)`` steps of the path.
        leaf: the leaf's decision: its label and the product samples behind it
            (``leaf.samples`` points of the encoder's product distribution,
            ``(samples + label * total) / 2`` of them agreeing with the label;
            a multi-class tree's :class:`lca.decisions.ClassLeafDecision`:
            its class index, ``total`` of its points of that class).
        by_feature: one condition per feature on the path, in the order the
            path first tests it: the intersection of that feature's steps (an
            interval, or a set of categories; a feature's later steps are
            described given its earlier ones, so its last step's condition is
            the intersection).
        on_rows: the leaf on the rows given (:class:`OnRows`), or ``None``
            when no rows were given.
        fitted: data mode (``distribution="data"``): the fitted rows among
            the leaf's points and how many of them the model labels as the
            leaf does (``leaf.samples`` counts those rows and the rows drawn
            in the leaf's region); ``None`` in product mode.
    """

    conditions: tuple[str, ...]
    prediction: Any
    path: Path
    leaf: LeafDecision
    by_feature: tuple[str, ...]
    on_rows: OnRows | None = None
    fitted: LeafRows | None = None

    def __str__(self) -> str:
        agree = agreeing(self.leaf)
        # A union of intervals ("a < 1 or 2 <= a < 3") is bracketed among the ANDs.
        rules = " AND ".join(f"({rule})" if " or " in rule else rule
                             for rule in self.by_feature) or "(every row)"
        on_rows = "" if self.on_rows is None else f"{self.on_rows}; "
        if self.fitted is not None:
            return (f"{rules} => {self.prediction!r} (leaf: {on_rows}{self.fitted.agree}/"
                    f"{self.fitted.rows} fitted rows agree, {agree}/{self.leaf.samples} "
                    "with the rows drawn in its region)")
        return (f"{rules} => {self.prediction!r} (leaf: {on_rows}{agree}/{self.leaf.samples} "
                "product samples agree)")


@dataclass(frozen=True)
class Agreement:
    """The share of ``rows`` on which the tree and the model agree, with a 95% half-width.

    ``halfwidth`` is Hoeffding's, ``sqrt(ln(2/0.05) / (2 rows))``: the
    interval ``rate ± halfwidth`` holds the true agreement with probability at
    least 95% when the rows are independent draws (from the product
    distribution, or from the data distribution for data rows). Rows the
    encoder was fitted on are not independent of the encoder (its bins were
    cut on them), so on those the interval is only indicative; on held-out
    rows it holds as stated.
    """

    rate: float
    halfwidth: float
    rows: int

    def __str__(self) -> str:
        return f"{self.rate:.3f} ± {self.halfwidth:.3f} ({self.rows} rows)"


@dataclass(frozen=True)
class Fidelity:
    """Agreement of the surrogate with its model on the rows given and on the product distribution.

    Attributes:
        product: agreement on points of the encoder's product distribution
            (data mode: rows drawn from the product of the fitted rows'
            marginals), or ``None`` for a data-mode Surrogate read from JSON,
            which no longer holds the rows to draw from.
        data: agreement on the rows given, or ``None`` when none were.
        baseline: on the rows given, the share of the model's most common
            label (a multi-class tree: its most common class): the agreement
            of a tree that always answers it.
        concerns: what :class:`LowFidelityWarning` said, one sentence each
            (empty when nothing was wrong).
    """

    product: Agreement | None
    data: Agreement | None = None
    baseline: float | None = None
    concerns: tuple[str, ...] = ()

    def __str__(self) -> str:
        product = ("" if self.product is None else
                   f"on the product distribution {_samples(self.product)}")
        if self.data is None:
            return product or "nothing measured"
        return (f"on the rows given {self.data}, majority-label baseline "
                f"{self.baseline:.3f}" + (f"; {product}" if product else ""))


class Surrogate:
    """A trained model distilled into one fixed decision tree ``T_seed`` (scikit-learn style).

    ``fit(X)`` takes the rows the model works on (an array or a pandas
    DataFrame; no labels) and fits the encoder; feature names come from the
    columns. By default (``distribution="data"``) the encoder is a
    :class:`ThresholdEncoder` (questions "``x >= c``" and "``x == c``") and
    the tree is grown from the fitted rows (data mode, below). With
    ``distribution="product"``, real-valued columns are cut into
    ``2**bits`` equal-mass bins, categorical ones (by name, strings welcome)
    keep their categories, and the surrogate is the tree ``T_seed`` that
    :class:`lca.Reconstructor` builds with the model as oracle, under the
    encoder's product distribution (features independent, each with its
    discretised data marginal; see :mod:`lca.models.encoders`). Nothing of
    the tree is built at fit time: :meth:`predict` and :meth:`explain` build
    the paths they need (cached), :meth:`tree` the whole tree. Every answer
    is a deterministic function of ``(model, X, parameters)``.

    The tree answers one yes/no question, the *positive side*:

    * a binary classifier: the model predicts ``positive`` (default: its
      ``classes_[1]``); with ``threshold=`` its probability of ``positive``
      (``predict_proba``, else ``decision_function``) is ``>= threshold``.
      ``predict`` returns the model's labels; ``classes_`` is
      ``[other class, positive]``.
    * a multi-class classifier (``K > 2`` classes) in data mode, without
      ``positive=``: not a yes/no question but ONE tree whose leaves answer
      a class (the model's ``predict``; :mod:`lca.models.rows`); ``predict``
      returns the model's classes and ``classes_`` is the model's. With
      ``positive=`` (required in product mode) the question is "the model
      predicts ``positive``" (the one-vs-rest tree); ``classes_`` is
      ``[False, True]``.
    * a regressor (no ``classes_``): ``threshold=`` is required, the
      question is ``model.predict(x) >= threshold``; ``classes_`` is
      ``[False, True]``.

    Args:
        model: the fitted model (anything :func:`lca.models.from_estimator`
            takes).
        positive: the class on the positive side (see above).
        threshold: a cut on scores (probabilities, decision values, or a
            regressor's predictions).
        depth: the depth cap of the tree.
        seed: selects the tree ``T_seed``.
        params: ``None`` for ``lca.Params.efficient(n, depth=depth)``; a
            mapping of keyword arguments for :meth:`lca.Params.efficient`
            (e.g. ``{"pairs": 128}``); or a full :class:`lca.Params` (its
            ``n`` must be the encoder's number of bits, and its own depth is
            used).
        encoder: an unfitted (or fitted: it is refitted on ``X``) encoder;
            ``None`` for ``QuantileEncoder(bits=3, categorical="auto")``
            (with ``distribution="data"``: a :class:`ThresholdEncoder`,
            ``None`` for ``ThresholdEncoder(cuts=64)``).
        distribution: ``"data"`` (the default): a tree grown from the
            fitted rows themselves (see below); or ``"product"``: the
            reconstructor under the encoder's product distribution (above),
            the paper's setting and the default before data mode existed.
        rows_per_node: data mode: the fitted rows a node decides on (the
            first of its region in a derived order), topped up to this many
            points with rows drawn in its region; in ``[1, 4096]``.
        min_rows: data mode: a node whose region holds fewer fitted rows is
            a leaf.
        product_rows: data mode: a stated mix. Every node draws at least
            this many of its ``rows_per_node`` points from the product of the
            fitted marginals restricted to its region (and takes at most
            ``rows_per_node - product_rows`` fitted rows); ``0`` (the
            default) draws only where the region runs out of rows. In
            ``[0, rows_per_node)``: a node needs a fitted row to split.

    **Data mode** (``distribution="data"``) is a HEURISTIC, a tree learner
    over the user's rows with no accuracy guarantee: every node takes the
    first ``rows_per_node`` fitted rows of its region in an order derived
    from the seed (so it sees its ancestors' rows in its region, and its
    split is chosen on the rows it partitions), tops them up with rows drawn
    from the fitted marginals restricted to its region, asks the model about
    all of them (each fitted row once), and splits on the threshold question
    ("``x >= c``", "``x == c``") of largest Gini gain; :mod:`lca.models.rows`
    and ``docs/randomness.md`` §10 state it exactly. It is still one fixed
    tree per ``(model, rows, parameters, seed)``, built path by path and
    identical in every process given the same rows; ``rows_digest_`` (the
    SHA-256 of the fitted rows) is part of its identity and of its JSON.
    ``queries_`` counts the model queries spent on the tree; ``params``
    does not apply.

    Fitted attributes: ``encoder_``, ``oracle_`` (the
    :class:`lca.models.ModelOracle`), ``params_``, ``reconstructor_``
    (product mode) or ``rows_tree_`` and ``rows_digest_`` (data mode),
    ``distribution_``, ``classes_``, ``n_features_in_``,
    ``feature_names_in_`` (for a DataFrame).
    """

    def __init__(self, model: Any, *, positive: Any = None, threshold: float | None = None,
                 depth: int = 12, seed: int = 0, params: Params | Mapping[str, Any] | None = None,
                 encoder: Encoder | None = None, distribution: str = "data",
                 rows_per_node: int = 128, min_rows: int = 4, product_rows: int = 0) -> None:
        self.model = model
        self.positive = positive
        self.threshold = threshold
        self.depth = depth
        self.seed = seed
        self.params = params
        self.encoder = encoder
        self.distribution = distribution
        self.rows_per_node = rows_per_node
        self.min_rows = min_rows
        self.product_rows = product_rows

    # -- scikit-learn protocol -------------------------------------------------

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's arguments (``deep`` is accepted for scikit-learn and unused)."""
        return {name: getattr(self, name) for name in _PARAMS}

    def set_params(self, **params: Any) -> Surrogate:
        """Set constructor arguments; refit afterwards. Returns self."""
        for name, value in params.items():
            if name not in _PARAMS:
                raise ValueError(f"Invalid parameter {name!r} for estimator Surrogate. "
                                 f"Valid parameters are: {list(_PARAMS)!r}.")
            setattr(self, name, value)
        return self

    def __sklearn_clone__(self) -> Surrogate:
        # The model is the oracle, not a sub-estimator to refit: a clone keeps
        # the same fitted model (scikit-learn's clone would return an unfitted copy).
        params = self.get_params()
        params["encoder"] = copy.deepcopy(self.encoder)
        params["params"] = copy.deepcopy(self.params)
        return type(self)(**params)

    def __repr__(self) -> str:
        given = {name: getattr(self, name) for name in _PARAMS[1:]}
        defaults = {"positive": None, "threshold": None, "depth": 12, "seed": 0,
                    "params": None, "encoder": None, "distribution": "data",
                    "rows_per_node": 128, "min_rows": 4, "product_rows": 0}
        extra = "".join(f", {k}={v!r}" for k, v in given.items() if v is not defaults[k]
                        and v != defaults[k])
        return f"Surrogate({type(self.model).__name__}{extra})"

    # -- fitting -----------------------------------------------------------------

    def fit(self, X: Any, y: Any = None) -> Surrogate:
        """Fit the encoder on the rows of ``X`` and set up the tree; returns self.

        ``y`` is ignored (accepted so pipelines can pass it): the labels
        come from the model. No model query is spent here beyond what
        validation needs (none).

        Raises:
            TypeError, ValueError: bad parameters, data the encoder refuses
                (with the column named), or a model/mapping that
                :func:`lca.models.from_estimator` refuses.
        """
        owner = "Surrogate.fit"
        depth = _PARAMETER_CONSTRAINTS["depth"](owner, "depth", self.depth)
        seed = _PARAMETER_CONSTRAINTS["seed"]("Surrogate", "seed", self.seed)
        distribution = self.distribution
        if not isinstance(distribution, str) or distribution not in DISTRIBUTIONS:
            raise ValueError(f"The 'distribution' parameter of {owner} must be one of "
                             f"{DISTRIBUTIONS!r}. Got {distribution!r} instead.")
        if distribution == "data" and self._all_classes(owner):
            return self._fit_data(owner, X, depth, seed, None, None, multiclass=True)
        positive, method = self._mapping(owner)
        if distribution == "data":
            return self._fit_data(owner, X, depth, seed, positive, method)
        if self.encoder is None:
            encoder: Encoder = QuantileEncoder(bits=3, categorical="auto")
        elif isinstance(self.encoder, (QuantileEncoder, BinaryEncoder)):
            encoder = copy.deepcopy(self.encoder)
        else:
            raise TypeError(f"The 'encoder' parameter of {owner} must be a QuantileEncoder, "
                            f"a BinaryEncoder or None (a ThresholdEncoder with "
                            f"distribution='data'). Got {type(self.encoder).__name__} "
                            "instead.")
        encoder.fit(X)
        oracle = from_estimator(self.model, encoder, positive=positive, method=method,
                                threshold=self.threshold)
        params = self._params(owner, oracle.n, depth)
        self.encoder_ = encoder
        self.oracle_ = oracle
        self.params_ = params
        self.reconstructor_ = Reconstructor(oracle, params)
        for stale in ("rows_tree_", "rows_digest_"):
            if hasattr(self, stale):
                delattr(self, stale)
        return self._fitted(X, seed, oracle)

    def _fitted(self, X: Any, seed: int, oracle: ModelOracle) -> Surrogate:
        """Set the attributes both distributions share; returns self."""
        self.seed_ = seed
        self.distribution_ = "data" if isinstance(self.encoder_, ThresholdEncoder) else "product"
        self.classes_ = self._classes_of(oracle)
        self.n_features_in_ = self.encoder_.n_features_in_
        if is_frame(X):
            self.feature_names_in_ = np.array([str(c) for c in X.columns], dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.tree_: ReconstructedTree | None = None  # the whole tree once built, or None
        self.leaf_rows_: dict[Path, LeafRows] | None = None  # data mode, with tree_
        return self

    def _fit_data(self, owner: str, X: Any, depth: int, seed: int, positive: Any,
                  method: str | None, multiclass: bool = False) -> Surrogate:
        """Data mode: threshold questions over the rows of ``X``, a :class:`RowsTree`
        (``multiclass``: one tree over the model's classes)."""
        rows_per_node = _PARAMETER_CONSTRAINTS["rows_per_node"](owner, "rows_per_node",
                                                               self.rows_per_node)
        min_rows = _PARAMETER_CONSTRAINTS["min_rows"](owner, "min_rows", self.min_rows)
        product_rows = _PARAMETER_CONSTRAINTS["product_rows"](owner, "product_rows",
                                                             self.product_rows)
        if product_rows >= rows_per_node:
            raise ValueError(f"The 'product_rows' parameter of {owner} must be below "
                             f"rows_per_node={rows_per_node} (a node needs a fitted row to "
                             f"split). Got {product_rows!r} instead.")
        if self.params is not None:
            raise ValueError(f"The 'params' parameter of {owner} configures the product "
                             "distribution's reconstructor; with distribution='data' pass "
                             "rows_per_node= and min_rows= instead. Got "
                             f"params={self.params!r}.")
        if self.encoder is None:
            encoder = ThresholdEncoder()
        elif isinstance(self.encoder, ThresholdEncoder):
            encoder = copy.deepcopy(self.encoder)
        else:
            raise TypeError(f"The 'encoder' parameter of {owner} must be a ThresholdEncoder "
                            "or None with distribution='data'. Got "
                            f"{type(self.encoder).__name__} instead.")
        columns, values = encoder.fit_rows(X)
        oracle = from_classifier(self.model, encoder) if multiclass else \
            from_estimator(self.model, encoder, positive=positive, method=method,
                           threshold=self.threshold)
        builder = RowsTree(encoder, oracle, columns, values, seed, depth,
                           rows_per_node, min_rows, product_rows,
                           classes=oracle.classes.size if multiclass else 0)  # type: ignore[union-attr]
        self.encoder_ = encoder
        self.oracle_ = oracle
        self.params_ = builder.params
        self.rows_tree_ = builder
        self.rows_digest_ = encoder.rows_digest_
        self.rows_per_node_, self.min_rows_ = rows_per_node, min_rows
        self.product_rows_ = product_rows
        if hasattr(self, "reconstructor_"):
            del self.reconstructor_
        return self._fitted(X, seed, oracle)

    def _all_classes(self, owner: str) -> bool:
        """Whether the tree answers a class of a multi-class model (no ``positive=``)."""
        classes = model_classes(self.model)
        if classes is None or classes.size <= 2 or self.positive is not None:
            return False
        if self.threshold is not None:
            raise ValueError(
                f"{owner}: threshold={self.threshold!r} cuts the score of one class, but model "
                f"{type(self.model).__name__} has {classes.size} classes "
                f"{classes.tolist()} and no positive= is given. Pass positive=c for the "
                "tree of 'score of c >= threshold', or drop threshold for one tree whose "
                "leaves answer the model's class.")
        return True

    def _mapping(self, owner: str) -> tuple[Any, str | None]:
        """The ``positive`` and ``method`` to wrap the model with."""
        classes = model_classes(self.model)
        name = type(self.model).__name__
        positive = self.positive
        if classes is None:
            if self.threshold is None and positive is None:
                raise ValueError(
                    f"{owner}: model {name} has no classes_ (a regressor or a plain "
                    "function); pass threshold= (model.predict(x) >= threshold is the "
                    "positive side), or positive= for a function with 0/1 or ±1 labels.")
            return positive, None
        if positive is None:
            if classes.size > 2:
                raise ValueError(
                    f"{owner}: model {name} has {classes.size} classes "
                    f"{classes.tolist()}, and a surrogate tree answers one yes/no "
                    "question. Pass positive=c for 'the model predicts c' (predict "
                    "then returns True/False); for ONE tree whose leaves answer the "
                    "model's class use distribution='data' (the default) without "
                    "positive=; for a product-distribution tree of every class fit one "
                    "surrogate per class: {c: Surrogate(model, positive=c).fit(X) for c in "
                    "model.classes_}.")
            positive = positive_class(None, classes)
        if self.threshold is None:
            return positive, None
        if callable(getattr(self.model, "predict_proba", None)):
            return positive, "predict_proba"
        # decision_function of a binary model scores classes_[1]; from_estimator
        # refuses positive=classes_[0] with it rather than flip silently.
        return (None if classes.size == 2 and positive == positive_class(None, classes)
                else positive), None

    def _params(self, owner: str, n: int, depth: int) -> Params:
        given = self.params
        if given is None:
            return Params.efficient(n, depth=depth)
        if isinstance(given, Params):
            if given.n != n:
                raise ValueError(f"The 'params' parameter of {owner} has n={given.n}, but "
                                 f"the encoder makes {n} bits of these data; pass a mapping "
                                 "of Params.efficient arguments (e.g. {'pairs': 128}) to "
                                 "have n filled in.")
            return given
        if not isinstance(given, Mapping):
            raise TypeError(f"The 'params' parameter of {owner} must be None, an lca.Params "
                            "or a mapping of Params.efficient arguments. Got "
                            f"{type(given).__name__} instead.")
        try:
            return Params.efficient(n, **{"depth": depth, **given})
        except TypeError as error:
            raise TypeError(f"The 'params' parameter of {owner} must hold arguments of "
                            f"lca.Params.efficient. Got {dict(given)!r} ({error}).") from error

    @staticmethod
    def _classes_of(oracle: ModelOracle) -> np.ndarray:
        """``[negative, positive]`` labels: a binary model's classes, else ``[False, True]``;
        the model's classes for a multi-class tree."""
        classes = oracle.classes
        if oracle.multiclass:
            return np.array(classes)
        if classes is not None and classes.size == 2:
            positive = positive_class(oracle.positive, classes)
            other = [c for c in classes.tolist() if c != positive][0]
            return np.array([other, positive], dtype=classes.dtype)
        return np.array([False, True])

    def _check_fitted(self, owner: str) -> None:
        if not hasattr(self, "encoder_"):
            raise ValueError(f"This Surrogate is not fitted yet; call fit(X) before "
                             f"{owner}.")

    # -- answers -------------------------------------------------------------------

    def _answers(self, points: np.ndarray) -> np.ndarray:
        if self.tree_ is not None:
            return self.tree_.query(points)
        if hasattr(self, "rows_tree_"):
            return self.rows_tree_.answer_many(points)
        return self.reconstructor_.answer_many(points, self.seed_)

    def _builds(self) -> bool:
        """Whether this Surrogate can decide nodes (fitted here, not read from JSON)."""
        return hasattr(self, "reconstructor_") or hasattr(self, "rows_tree_")

    @property
    def queries_(self) -> int:
        """Model queries spent deciding the tree's nodes so far (not by fidelity)."""
        if hasattr(self, "rows_tree_"):
            return self.rows_tree_.queries
        return self.reconstructor_.stats.queries

    @property
    def _multiclass(self) -> bool:
        """Whether the tree's answers are class indices into ``classes_`` (not ``±1``)."""
        return len(self.classes_) > 2

    def _labels(self, answers: np.ndarray) -> np.ndarray:
        if self._multiclass:
            return self.classes_[answers]
        return np.where(answers > 0, self.classes_[1], self.classes_[0])

    def predict(self, X: Any) -> np.ndarray:
        """The tree's answer on every row of ``X``, in the model's labels (``classes_``).

        Rows are encoded (the encoder's ``encode``) and answered by
        ``T_seed``: the same answers as ``tree().query`` on the encoded rows
        and as :meth:`explain`, in any process. No rows give an empty array
        (of the labels' dtype).
        """
        self._check_fitted("predict")
        return self._labels(self._answers(self.encoder_.encode(X)))

    def explain(self, row: Any, X: Any = None) -> Rules:
        """The rules that decide one row: its path in ``T_seed``, built locally.

        ``row`` is one row: a 1-D sequence, a pandas Series, or a 2-D array
        or DataFrame with one row. With rows ``X`` (held-out rows, say), the
        leaf is also counted on them (``Rules.on_rows``: how many reach it,
        on how many of those the model gives its answer); that asks the model
        about every row of ``X``.
        """
        self._check_fitted("explain")
        z = self.encoder_.encode(_one_row(row))[0]
        if self.tree_ is not None:
            path, _, conditions, leaf = self.tree_.trace(z)
        elif hasattr(self, "rows_tree_"):
            path, conditions, leaf = self.rows_tree_.trace(z)
        else:
            explained = self.reconstructor_.explain(z, self.seed_)
            path, conditions, leaf = explained.path, explained.conditions, explained.leaf
        on_rows = None
        if X is not None:
            points, model = self._rows_and_labels("explain", X)
            reach = np.ones(points.shape[0], dtype=bool)
            for variable, bit in path:
                reach &= points[:, variable] == bit
            on_rows = OnRows(int(reach.sum()), int((model[reach] == leaf.label).sum()),
                             points.shape[0])
        return self._rules(path, conditions, leaf, on_rows)

    def leaves(self, X: Any = None) -> tuple[Rules, ...]:
        """The rules of every leaf of ``T_seed``, in the tree's order (``-1`` branch first).

        Builds the whole tree (:meth:`tree`). With rows ``X``, each leaf is
        also counted on them (``Rules.on_rows``), asking the model about
        every row once; without, only the product samples behind each leaf
        are known (``Rules.leaf``).
        """
        self._check_fitted("leaves")
        tree = self.tree()
        found: dict[Path, tuple[int, int]] = {}
        rows = 0
        if X is not None:
            points, model = self._rows_and_labels("leaves", X)
            rows = points.shape[0]
            groups: dict[Path, np.ndarray] = {(): np.arange(rows)}
            while groups:
                later: dict[Path, np.ndarray] = {}
                for path, chosen in groups.items():
                    decision = tree.decisions[path]
                    if isinstance(decision, LeafDecision):
                        found[path] = (chosen.size,
                                       int((model[chosen] == decision.label).sum()))
                    else:
                        later |= split_rows(points, chosen, path, decision.variable)
                groups = later
        out = []
        for path, node in tree.walk():
            if isinstance(node, LeafDecision):
                conditions = tuple(tree.conditions[path[:k]][0 if bit < 0 else 1]
                                   for k, (_, bit) in enumerate(path))
                on_rows = None if X is None else OnRows(*found.get(path, (0, 0)), rows)
                out.append(self._rules(path, conditions, node, on_rows))
        return tuple(out)

    def _rules(self, path: Path, conditions: tuple[str, ...], leaf: LeafDecision,
               on_rows: OnRows | None) -> Rules:
        # A feature's steps are described given its earlier ones on the path
        # (QuantileEncoder.describe), so its last condition is their intersection;
        # it keeps the place of the feature's first step.
        last: dict[int, str] = {}
        for (variable, _), condition in zip(path, conditions, strict=True):
            last[self.encoder_.feature_index(variable)] = condition
        fitted = None
        if self.distribution_ == "data":
            found = (self.leaf_rows_ if self.tree_ is not None and self.leaf_rows_ is not None
                     else self.rows_tree_.leaf_rows)
            fitted = found[path]
        return Rules(tuple(conditions), plain(self._labels(np.array([leaf.label]))[0]), path,
                     leaf, tuple(last.values()), on_rows, fitted)

    def _rows_and_labels(self, owner: str, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """The encoded rows of ``X`` and the model's ``±1`` label of each (a multi-class
        tree: its class index) (one model call)."""
        oracle = self._oracle(owner)
        points = self.encoder_.encode(X)
        if points.shape[0] == 0:  # checked before the model is asked about no rows
            raise ValueError(f"The 'X' parameter of Surrogate.{owner} must have at least "
                             "one row: agreement on no rows is undefined. Got 0 rows.")
        return points, oracle.class_rows(X) if self._multiclass else oracle.label_rows(X)

    def tree(self, depth: int | None = None, *, progress: bool = False) -> ReconstructedTree:
        """``T_seed`` decided down to ``depth`` (``None``: the whole tree), readable.

        The whole tree is kept and then answers :meth:`predict` and
        :meth:`explain` (the same answers as the reconstructor's, or in data
        mode as the nodes decided one path at a time). ``progress=True``
        draws a tqdm bar on stderr over the decisions (in data mode over
        the nodes decided, whose number is not known in advance).
        """
        self._check_fitted("tree")
        owner = "Surrogate.tree"
        if depth is not None:
            depth = check_int(owner, "depth", depth, 0)
        if self.tree_ is not None:
            if depth is None:
                return self.tree_
            return _cut(self.tree_, depth)
        if not self._builds():
            raise ValueError(f"{owner}: this Surrogate was read from JSON without its model "
                             "and holds no complete tree.")
        if hasattr(self, "rows_tree_"):
            tree = self.rows_tree_.materialize(depth, progress)
            if depth is None or tree.complete:
                self.tree_ = tree
                self.leaf_rows_ = {path: self.rows_tree_.leaf_rows[path] for path in tree.leaves}
            return tree
        levels = self.params_.path_length if depth is None else min(depth,
                                                                     self.params_.path_length)
        tree = self.reconstructor_.materialize(
            self.seed_, depth, progress=progress,
            max_decisions=max(1 << 16, (1 << (levels + 1)) - 1))
        if depth is None or tree.complete:
            self.tree_ = tree
        return tree

    # -- quality -------------------------------------------------------------------

    def fidelity(self, X: Any = None, *, samples: int = 2000) -> Fidelity:
        """Agreement of the tree with the model, with 95% Hoeffding intervals.

        On the rows given, when ``X`` is given (held-out rows, for an interval
        that holds; see :class:`Agreement`): the tree's answer on each encoded
        row against the model's on the raw row, so discretisation error
        counts, beside the *majority-label baseline*, the share of the
        model's most common label on those rows (what a tree that always
        answers it would score). On the product distribution: ``samples``
        points derived from the seed (purpose ``"surrogate-fidelity"``), the
        tree's answer against the model's on the decoded point.

        One :class:`LowFidelityWarning` (its sentences also in
        ``Fidelity.concerns``) when, on the rows given, the tree agrees with
        the model on no more rows than the baseline does, or on a share more
        than :data:`FAR_BELOW` (0.1) below its share on the product
        distribution (compared exactly, as fractions). Model queries spent
        here are not counted in ``reconstructor_.stats`` (the tree's own
        queries are).
        """
        self._check_fitted("fidelity")
        samples = check_int("Surrogate.fidelity", "samples", samples, 1)
        oracle = self._oracle("fidelity")
        product = on_product = None
        if self.distribution_ == "product":
            points = derive.sample_points(self.seed_, "surrogate-fidelity", oracle.n, samples)
            tree, model = self._answers(points), oracle.query(points)
        elif hasattr(self, "rows_tree_"):
            # Data mode: rows of the product of the fitted marginals, drawn as a
            # node's top-up rows are (at the root, purpose "surrogate-fidelity").
            builder = self.rows_tree_
            columns = topup_columns(builder.encoder, builder.sorted_columns, self.seed_, (),
                                    samples, purpose="surrogate-fidelity")
            tree = self._answers(builder.encoder.encode_columns(columns)[0])
            model = (oracle.class_columns(columns) if self._multiclass else
                     oracle.label_columns(columns))
        if self.distribution_ == "product" or hasattr(self, "rows_tree_"):
            product = _agreement(tree, model)
            on_product = Fraction(int((tree == model).sum()), samples)
        if X is None:
            return Fidelity(product)
        encoded, labels = self._rows_and_labels("fidelity", X)
        answers = self._answers(encoded)
        data = _agreement(answers, labels)
        rows, agree = labels.size, int((answers == labels).sum())
        if self._multiclass:
            counts = np.bincount(labels, minlength=len(self.classes_))
            majority = int(counts.max())
            common = self.classes_[int(np.argmax(counts))]
        else:
            positive = int((labels > 0).sum())
            majority = max(positive, rows - positive)
            common = self.classes_[1] if positive >= rows - positive else self.classes_[0]
        concerns = []
        if agree <= majority:
            concerns.append(
                f"on the {rows} rows given the tree agrees with the model on "
                f"{data.rate:.3f}, no better than always answering the model's most common "
                f"label {plain(common)!r} ({majority / rows:.3f}): its rules say little "
                "about these rows.")
        if product is not None and on_product is not None \
                and Fraction(agree, rows) < on_product - FAR_BELOW:
            concerns.append(
                f"on the {rows} rows given the tree agrees with the model on "
                f"{data.rate:.3f}, more than {float(FAR_BELOW):g} below its {product.rate:.3f} "
                "on the product distribution it was built for (features independent, "
                "each with its own marginal): these rows are unlike it.")
        if concerns:
            warnings.warn("Surrogate.fidelity: " + " Also, ".join(concerns),
                          LowFidelityWarning, stacklevel=2)
        return Fidelity(product, data, majority / rows, tuple(concerns))

    def _oracle(self, owner: str) -> ModelOracle:
        if not hasattr(self, "oracle_"):
            raise ValueError(f"Surrogate.{owner} compares with the model, which this "
                             "Surrogate (read from JSON) does not hold; pass it: "
                             "Surrogate.from_json(text, model=model).")
        return self.oracle_

    def report(self, X: Any = None) -> str:
        """A short text summary: mapping, encoder, tree size, queries, fidelity, leaves.

        Builds the whole tree and measures :meth:`fidelity`. With rows ``X``
        (held-out rows, ideally) the agreement on them comes first, beside
        the majority-label baseline, then the agreement on the product
        distribution, a ``warning:`` line per :class:`LowFidelityWarning`
        sentence, and the leaves that hold the most of the rows, each
        counted on the rows (and its product samples, labelled as such).
        """
        self._check_fitted("report")
        tree = self.tree()
        views = tree.shown()
        merged = sum(view.merged for view in views.values())
        names = [str(c) for c in self.classes_]
        lines = [
            (f"Surrogate of {tree.oracle}: one tree over its {len(names)} classes {names!r}"
             if self._multiclass else f"Surrogate of {tree.oracle}: {names[1]!r} vs {names[0]!r}")
            + (f" ({self.oracle_.method} >= {self.threshold:g})" if hasattr(self, "oracle_")
               and self.threshold is not None else ""),
            f"  encoder: {self.encoder_!r}, {self.n_features_in_} features -> "
            + (f"{tree.n} bits" if self.distribution_ == "product" else
               f"{tree.n} threshold questions; distribution 'data' over "
               f"{getattr(self.encoder_, 'n_rows_', 0)} fitted rows, {self.rows_digest_}"),
            f"  tree T_{tree.seed}: depth {max((len(p) for p in tree.decisions), default=0)}, "
            f"{len(tree.internal_nodes)} splits, {len(tree.leaves)} leaves"
            + (f" ({merged} splits between equal-label leaves merged in the text)"
               if merged else ""),
        ]
        if self.distribution_ == "data":
            lines.append("  a heuristic (a tree learner over the fitted rows, no accuracy "
                         "guarantee); leaves count fitted rows")
        if hasattr(self, "oracle_"):
            if self._builds():
                lines.append(f"  model queries spent building the tree: {self.queries_:,}")
            fidelity = self.fidelity(X)
            if fidelity.data is not None:
                lines.append(f"  agreement on the rows given: {fidelity.data}; majority-label "
                             f"baseline {fidelity.baseline:.3f}")
            if fidelity.product is not None:
                lines.append(f"  agreement on the product distribution (features "
                             f"independent): {_samples(fidelity.product)}")
            lines += [f"  warning: {concern}" for concern in fidelity.concerns]
            if X is not None:
                # leaves(X) counts every leaf on X: on_rows is never None here.
                leaves = sorted(self.leaves(X),
                                key=lambda rules: -rules.on_rows.reach)  # type: ignore[union-attr]
                shown = leaves[:_REPORTED_LEAVES]
                lines.append(f"  the {len(shown)} leaves holding the most of the rows given "
                             f"(of {len(leaves)}):")
                lines += [f"    {rules}" for rules in shown]
        return "\n".join(lines)

    # -- JSON ------------------------------------------------------------------------

    def to_json(self, indent: int | None = None) -> str:
        """The whole tree, the encoder and the mapping as JSON (not the model).

        :meth:`from_json` reads it back into a Surrogate whose ``predict``,
        ``explain`` and ``tree`` equal this one's on every row, and whose
        ``to_json`` is this text again; give it the model too for
        :meth:`fidelity`. The document carries a ``"digest"`` (SHA-256 of
        everything else), so an edited or corrupted file is refused.
        """
        self._check_fitted("to_json")
        tree = self.tree()
        threshold = self.threshold
        if threshold is not None:  # the number the oracle compares with
            threshold = check_real("Surrogate.to_json", "threshold", threshold, -math.inf,
                                   math.inf)
        fields = {
            "model": tree.oracle, "positive": plain(self.positive), "threshold": threshold,
            "depth": plain(self.depth), "seed": self.seed_,
            "classes": [plain(c) for c in self.classes_],
            "feature_names_in": (None if not hasattr(self, "feature_names_in_")
                                 else self.feature_names_in_.tolist()),
            "encoder": encoder_state(self.encoder_),
            "tree": json.loads(tree.to_json()),
        }
        if self.distribution_ == "data":
            assert self.leaf_rows_ is not None, "tree() keeps the leaves' rows with the tree"
            fields["distribution"] = "data"
            fields["rows"] = {
                "digest": self.rows_digest_, "count": getattr(self.encoder_, "n_rows_", 0),
                "rows_per_node": self.rows_per_node_, "min_rows": self.min_rows_,
                # Written only for a stated mix: documents of the default read as before.
                **({"product_rows": self.product_rows_} if self.product_rows_ else {}),
                "leaves": [[[list(step) for step in path], found.rows, found.agree]
                           for path, node in tree.walk() if isinstance(node, LeafDecision)
                           for found in [self.leaf_rows_[path]]]}
        return write_document(fields, indent)

    @classmethod
    def from_json(cls, text: str | bytes, model: Any = None, *,
                  allow_version_1: bool = False) -> Surrogate:
        """The Surrogate :meth:`to_json` wrote; with ``model`` it can measure fidelity again.

        The whole document is checked before anything is built from it:
        every field's type and range, and its consistency with the tree and
        the encoder (seed, number of bits, each node's conditions and
        feature, the classes), no key given twice, no NaN or infinity, then
        the digest. ``model``, when given, must have the saved classes.

        Args:
            text: the JSON (``str`` or ``bytes``).
            model: the fitted model, for :meth:`fidelity` and :meth:`report`.
            allow_version_1: read a document written by an earlier lca
                (format version 1, without a digest): its fields are checked
                alike, but an edit that keeps them consistent cannot be
                detected. Save it again with :meth:`to_json` to add the digest.

        Raises:
            TypeError: ``text`` is not ``str`` or ``bytes``.
            ValueError: anything wrong with the document (one error, naming
                the field), or a ``model`` that does not fit it.
        """
        owner = "Surrogate.from_json"
        check_flag(owner, "allow_version_1", allow_version_1)
        saved = read_document(text, allow_version_1=allow_version_1)
        rows = saved.rows
        surrogate = cls(model, positive=saved.positive, threshold=saved.threshold,
                        depth=saved.depth, seed=saved.seed,
                        distribution="product" if rows is None else "data")
        surrogate.encoder_ = saved.encoder
        surrogate.params_ = saved.params
        surrogate.seed_ = saved.seed
        surrogate.distribution_ = "product" if rows is None else "data"
        surrogate.leaf_rows_ = None
        if rows is not None:
            surrogate.set_params(rows_per_node=rows.rows_per_node, min_rows=rows.min_rows,
                                 product_rows=rows.product_rows)
            surrogate.rows_per_node_, surrogate.min_rows_ = rows.rows_per_node, rows.min_rows
            surrogate.product_rows_ = rows.product_rows
            surrogate.rows_digest_ = rows.digest
            surrogate.leaf_rows_ = dict(rows.leaves)
        surrogate.classes_ = saved.classes
        surrogate.n_features_in_ = saved.encoder.n_features_in_
        if saved.feature_names_in is not None:
            surrogate.feature_names_in_ = np.array(saved.feature_names_in, dtype=object)
        surrogate.tree_ = saved.tree
        if model is not None:
            if surrogate._multiclass:
                oracle = from_classifier(model, surrogate.encoder_)
            else:
                positive, method = surrogate._mapping(owner)
                oracle = from_estimator(model, surrogate.encoder_, positive=positive,
                                        method=method, threshold=surrogate.threshold)
            classes = cls._classes_of(oracle)
            assert saved.tree.class_names is not None, "read_document refuses a tree without them"
            if classes.tolist() != saved.classes.tolist() or \
                    tuple(oracle.label_names) != saved.tree.class_names:
                raise ValueError(f"{owner}: the model {oracle.name!r} answers "
                                 f"{list(oracle.label_names)!r}, but the saved surrogate "
                                 f"{list(saved.tree.class_names)!r}; pass the model it was "
                                 "fitted with.")
            surrogate.oracle_ = oracle
            if rows is None:
                surrogate.reconstructor_ = Reconstructor(oracle, surrogate.params_)
        return surrogate


def _samples(agreement: Agreement) -> str:
    """An agreement on product samples, said so (``str(agreement)`` counts rows)."""
    return f"{agreement.rate:.3f} ± {agreement.halfwidth:.3f} ({agreement.rows} samples)"


def _agreement(tree: np.ndarray, model: np.ndarray) -> Agreement:
    from lca.tester import hoeffding_halfwidth

    rows = int(tree.size)
    return Agreement(float(np.mean(tree == model)), hoeffding_halfwidth(rows, 0.05), rows)



def _one_row(row: Any) -> Any:
    """A single row as a one-row 2-D input (a DataFrame stays a DataFrame)."""
    if is_frame(row):
        if row.shape[0] != 1:
            raise ValueError("The 'row' parameter of Surrogate.explain must be one row. "
                             f"Got a DataFrame of {row.shape[0]} rows.")
        return row
    if is_series(row):
        return row.to_frame().T.infer_objects()
    array = np.asarray(row, dtype=None if not isinstance(row, (list, tuple)) else object)
    if array.ndim == 2 and array.shape[0] == 1:
        return array
    if array.ndim != 1:
        raise ValueError("The 'row' parameter of Surrogate.explain must be one row (1-D, "
                         f"or 2-D with one row). Got shape {array.shape}.")
    if array.dtype == object and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                     for v in array):
        array = array.astype(np.float64)
    return array[None, :]


def _cut(tree: ReconstructedTree, depth: int) -> ReconstructedTree:
    """The top ``depth`` levels of a tree (nodes below are unexplored), as materialize gives."""
    decisions = {p: d for p, d in tree.decisions.items() if len(p) <= depth}
    conditions = {p: c for p, c in tree.conditions.items() if len(p) <= depth}
    used = {d.variable for d in decisions.values() if isinstance(d, NodeDecision)}
    features = {v: name for v, name in tree.features.items() if v in used}
    return dataclasses.replace(tree, decisions=decisions, conditions=conditions,
                               features=features)
