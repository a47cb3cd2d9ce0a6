"""Distil a trained model into one fixed, readable decision tree: :class:`Surrogate`.

A scikit-learn-style estimator: ``fit(X)`` takes the rows the model works on
(no labels: the model is the oracle) and picks the tree's source
(:mod:`lca.models.sources`); every answer after that is the value of one
fixed tree ``T_seed``, built locally, the path of each row with a bounded
number of model queries, identical in every process and thread. How faithful
it is: :mod:`lca.models.quality`; the saved document: :mod:`lca.models._state`.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from lca._validate import check_flag, check_int, check_seed
from lca.decisions import LeafDecision
from lca.derive import Path
from lca.export import ReconstructedTree
from lca.models._data import is_frame, one_row, plain
from lca.models._state import MAX_DEPTH, read_document, write_document
from lca.models.encoders import BinaryEncoder, Encoder, QuantileEncoder
from lca.models.oracle import (
    ClassLabels,
    ModelLabels,
    answers_classes,
    from_estimator,
    rows_oracle,
    surrogate_mapping,
)
from lca.models.quality import (
    Fidelity,
    LowFidelityWarning,
    OnRows,
    Rules,
    agreement,
    judge,
    on_leaves,
    on_path,
    path_conditions,
    reached,
    report_text,
)
from lca.models.questions import Questions
from lca.models.rows import MAX_ROWS_PER_NODE, MAX_SHARED_ROWS, RowsTree
from lca.models.sources import ProductTree, TreeSource, product_params
from lca.models.thresholds import ThresholdEncoder
from lca.params import Params
from lca.reconstruct import Reconstructor

__all__ = ["Surrogate"]

_PARAMS = ("model", "positive", "threshold", "depth", "seed", "params", "encoder",
           "distribution", "rows_per_node", "min_rows", "shared_rows")
# A tree to read: at most 16 leaves. Deeper trees follow the model more closely on
# held-out rows and read less easily (docs/surrogates.md measures the trade at 3, 5 and 8).
DEFAULT_DEPTH = 4
_DEFAULTS: dict[str, Any] = {"positive": None, "threshold": None, "depth": DEFAULT_DEPTH,
                             "seed": 0,
                             "params": None, "encoder": None, "distribution": "data",
                             "rows_per_node": 128, "min_rows": 4, "shared_rows": 768}
DISTRIBUTIONS = ("product", "data")
# Product-distribution points fidelity (and report) compares the tree and the model on.
PRODUCT_SAMPLES = 2000
_DATA_ATTRIBUTES = ("rows_digest_", "rows_per_node_", "min_rows_", "shared_rows_")

# What the value-like constructor arguments may be, declared once and checked
# when fit runs (the constructor only stores them, as scikit-learn's estimators
# do). The model, positive class, threshold, params and encoder are checked
# against each other where they meet (from_estimator and product_params).
_PARAMETER_CONSTRAINTS: dict[str, Callable[[str, str, Any], Any]] = {
    "depth": functools.partial(check_int, low=0, high=MAX_DEPTH),
    "seed": lambda owner, name, value: check_seed(owner, value, name),
    "rows_per_node": functools.partial(check_int, low=1, high=MAX_ROWS_PER_NODE),
    "min_rows": functools.partial(check_int, low=1, high=MAX_ROWS_PER_NODE),
    "shared_rows": functools.partial(check_int, low=0, high=MAX_SHARED_ROWS),
}


class Surrogate:
    """A trained model distilled into one fixed decision tree ``T_seed`` (scikit-learn style).

    ``fit(X)`` takes the rows the model works on (an array or a pandas
    DataFrame, whose columns name the features; no labels) and fits the
    encoder; nothing of the tree is built then: :meth:`predict` and
    :meth:`explain` build the paths they need (cached), :meth:`tree` the
    whole tree. Every answer is a deterministic function of ``(model, X,
    parameters)``, and a fitted surrogate may be shared between threads: its
    tree is built under a lock, so every thread gets the same answers.

    **Data mode** (``distribution="data"``, the default) is a HEURISTIC, a
    tree learner over the fitted rows with no accuracy guarantee: each node
    takes fitted rows of its region in an order derived from the seed, tops
    them up with rows shaped like its own, and splits on the
    :class:`ThresholdEncoder` question ("``x >= c``", "``x == c``", "``x``
    is missing") of largest weighted Gini gain (:mod:`lca.models.rows` and
    ``docs/randomness.md`` §10 state it exactly). It is still one fixed tree
    per ``(model, rows, parameters, seed)``, identical in every process
    given the same rows; ``fit`` keeps its own copy of them. **Product
    mode** (``distribution="product"``, the paper's setting) is the tree
    ``T_seed`` that :class:`lca.Reconstructor` builds with the model as
    oracle under the encoder's product distribution (features independent,
    each with its discretised data marginal; :mod:`lca.models.encoders`); a
    numeric column's missing values get bins of their own (NaN to the model),
    and one ``fit`` saw none missing in refuses them at ``predict``.

    ``predict`` answers in the model's own labels (``classes_``):

    * a binary classifier: the tree answers "the model predicts ``positive``"
      (default: its ``classes_[1]``); with ``threshold=`` "its probability of
      ``positive`` (``predict_proba``, else ``decision_function``) is
      ``>= threshold``". ``classes_`` is ``[other class, positive]``.
    * a multi-class classifier (``K > 2`` classes) in data mode, without
      ``positive=``: ONE tree whose leaves answer a class (the model's
      ``predict``); ``classes_`` is the model's. With ``positive=c``
      (required in product mode) the tree answers "the model predicts
      ``c``" (one-vs-rest): ``predict`` returns ``c`` or
      :class:`lca.models.Not` ``(c)``, a label that equals every class but
      ``c``, so ``predict(X) == c`` and ``predict(X) == model.predict(X)``
      both mean what they say; ``classes_`` is ``[Not(c), c]``.
    * a regressor (no ``classes_``): ``threshold=`` is required; the tree
      answers ``model.predict(x) >= threshold``; ``classes_`` is
      ``[False, True]``.

    Args:
        model: the fitted model (anything :func:`lca.models.from_estimator`
            takes).
        positive: the class on the positive side (see above).
        threshold: a cut on scores (probabilities, decision values, or a
            regressor's predictions).
        depth: the depth cap of the tree (default 4: at most 16 leaves, a tree
            to read; deeper trees follow the model more closely).
        seed: selects the tree ``T_seed``.
        params: product mode: ``None`` for ``lca.Params.efficient(n,
            depth=depth)``; a mapping of keyword arguments for
            :meth:`lca.Params.efficient` (e.g. ``{"pairs": 128}``); or a full
            :class:`lca.Params` (its ``n`` must be the encoder's number of
            bits, and its own depth is used).
        encoder: an unfitted (or fitted: it is refitted on ``X``) encoder;
            ``None`` for ``ThresholdEncoder(cuts=64)`` in data mode,
            ``QuantileEncoder(bits=3, categorical="auto")`` in product mode.
        distribution: ``"data"`` or ``"product"`` (above).
        rows_per_node: data mode: the fitted rows a node takes at least (the
            first of its region in a derived order, all of them when it holds
            fewer), topped up to this many points with rows shaped like its
            own, drawn in its region; in ``[1, 4096]``.
        min_rows: data mode: a node whose region holds fewer fitted rows is
            a leaf; a leaf with at least this many answers its fitted rows'
            most common label; in ``[1, 4096]``.
        shared_rows: data mode: the first rows of the derived order, which
            every node holding them takes (so the top of the tree is decided
            on many rows); in ``[0, 2**20]``.

    Fitted attributes: ``tree_`` (the tree's one source:
    :class:`lca.models.sources.ProductTree`, :class:`lca.models.rows.RowsTree`,
    or for a surrogate read from JSON :class:`lca.models.sources.SavedTree`),
    ``encoder_``, ``oracle_`` (the model's answers,
    :class:`lca.models.ModelOracle` in product mode; ``None`` for a
    surrogate read from JSON without its model), ``params_`` (product mode's
    :class:`lca.Params`; ``None`` in data mode), ``queries_``,
    ``distribution_``, ``seed_``, ``classes_``, ``n_features_in_``,
    ``feature_names_in_`` (for a DataFrame); in data mode also
    ``rows_digest_`` (the SHA-256 of the fitted rows, part of the tree's
    identity and of its JSON), ``rows_per_node_``, ``min_rows_`` and
    ``shared_rows_``.
    """

    tree_: TreeSource
    oracle_: ModelLabels | ClassLabels | None

    def __init__(self, model: Any, *, positive: Any = None, threshold: float | None = None,
                 depth: int = DEFAULT_DEPTH, seed: int = 0,
                 params: Params | Mapping[str, Any] | None = None,
                 encoder: Any = None, distribution: str = "data",
                 rows_per_node: int = 128, min_rows: int = 4, shared_rows: int = 768) -> None:
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
        self.shared_rows = shared_rows

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
        extra = "".join(f", {name}={getattr(self, name)!r}" for name in _PARAMS[1:]
                        if not _same(getattr(self, name), _DEFAULTS[name]))
        model = (type(self.model).__name__ if self.model is not None else
                 f"<read from JSON: {self.tree_.tree().oracle}>" if hasattr(self, "tree_")
                 else "None")
        return f"Surrogate({model}{extra})"

    # -- fitting -----------------------------------------------------------------

    def fit(self, X: Any, y: Any = None) -> Surrogate:
        """Fit the encoder on the rows of ``X`` and pick the tree's source; returns self.

        ``y`` is ignored (accepted so pipelines can pass it): the labels
        come from the model. No model query is spent here.

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
        if distribution == "data":
            self._fit_data(owner, X, depth, seed)
        else:
            self._fit_product(owner, X, depth, seed)
        self.seed_ = seed
        self.distribution_ = distribution
        self.n_features_in_ = self.encoder_.n_features_in_
        if is_frame(X):
            self.feature_names_in_ = np.array([str(c) for c in X.columns], dtype=object)
        else:  # scikit-learn's convention: set only when fitted with feature names
            self.__dict__.pop("feature_names_in_", None)
        return self

    def _fit_product(self, owner: str, X: Any, depth: int, seed: int) -> None:
        """Product mode: a product encoder and the reconstructor over the model's oracle."""
        positive, method = self._mapping(owner)
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
        self.params_: Params | None = product_params(owner, self.params, oracle.n, depth)
        self.encoder_: Questions = encoder
        self.oracle_ = oracle
        self.classes_ = oracle.answer_labels
        self.tree_ = ProductTree(Reconstructor(oracle, self.params_), seed)
        for stale in _DATA_ATTRIBUTES:  # a refit keeps nothing of an earlier fit
            self.__dict__.pop(stale, None)

    def _fit_data(self, owner: str, X: Any, depth: int, seed: int) -> None:
        """Data mode: threshold questions over the rows of ``X``, a :class:`RowsTree`."""
        rows_per_node, min_rows, shared_rows = (
            _PARAMETER_CONSTRAINTS[name](owner, name, getattr(self, name))
            for name in ("rows_per_node", "min_rows", "shared_rows"))
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
        multiclass = answers_classes(owner, self.model, self.positive, self.threshold)
        positive, method = (None, None) if multiclass else self._mapping(owner)
        columns, values = encoder.fit_rows(X)
        oracle = rows_oracle(self.model, encoder, multiclass=multiclass, positive=positive,
                             method=method, threshold=self.threshold)
        self.tree_ = RowsTree(encoder, oracle, columns, values, seed, depth, rows_per_node,
                              min_rows, shared_rows)
        self.encoder_ = encoder
        self.oracle_ = oracle
        self.params_ = None
        self.classes_ = oracle.answer_labels
        self.rows_digest_ = encoder.rows_digest_
        self.rows_per_node_, self.min_rows_ = rows_per_node, min_rows
        self.shared_rows_ = shared_rows

    def _mapping(self, owner: str) -> tuple[Any, str | None]:
        """The ``positive`` and ``method`` to wrap the model with."""
        return surrogate_mapping(owner, self.model, self.positive, self.threshold)

    def _check_fitted(self, owner: str) -> None:
        if not hasattr(self, "tree_"):
            raise ValueError(f"This Surrogate is not fitted yet; call fit(X) before "
                             f"{owner}.")

    # -- answers -------------------------------------------------------------------

    @property
    def queries_(self) -> int | None:
        """Model queries spent deciding the tree's nodes so far (not by fidelity or report);
        for a surrogate read from JSON, those its document recorded (``None`` for a document
        of format 2 or earlier, which did not record them)."""
        self._check_fitted("queries_")
        return self.tree_.queries

    @property
    def _multiclass(self) -> bool:
        """Whether the tree's answers are class indices into ``classes_`` (not ``±1``)."""
        return len(self.classes_) > 2

    def labels(self, answers: Any) -> np.ndarray:
        """The model's labels (``classes_``) of the tree's answers: ``±1`` of a yes/no tree,
        class indices of a multi-class one (what ``tree().query`` and a served replica's
        points give). :meth:`predict` is ``labels`` of the encoded rows' answers."""
        self._check_fitted("labels")
        answers = np.asarray(answers)
        if self._multiclass:
            return self.classes_[answers]
        return np.where(answers > 0, self.classes_[1], self.classes_[0])

    def predict(self, X: Any) -> np.ndarray:
        """The tree's answer on every row of ``X``, in the model's labels (``classes_``).

        Rows are encoded (the encoder's ``encode``) and answered by
        ``T_seed``: the same answers as ``tree().query`` on the encoded rows
        and as :meth:`explain`, in any process or thread. No rows give an
        empty array (of the labels' dtype).
        """
        self._check_fitted("predict")
        return self.labels(self.tree_.answers(self.encoder_.encode(X)))

    def explain(self, row: Any, X: Any = None) -> Rules:
        """The rules that decide one row: its path in ``T_seed``, built locally.

        ``row`` is one row: a 1-D sequence, a pandas Series, or a 2-D array
        or DataFrame with one row. With rows ``X`` (held-out rows, say), the
        leaf is also counted on them (``Rules.on_rows``: how many reach it,
        on how many of those the model gives its answer); that asks the model
        about every row of ``X``.
        """
        self._check_fitted("explain")
        trace = self.tree_.trace(self.encoder_.encode(one_row("Surrogate.explain", row))[0])
        on_rows = (None if X is None else
                   on_path(*self._rows_and_labels("explain", X), trace.path, trace.leaf.label))
        return self._rules(trace.path, trace.conditions, trace.leaf, on_rows)

    def leaves(self, X: Any = None) -> tuple[Rules, ...]:
        """The rules of every leaf of ``T_seed``, in the tree's order (``-1`` branch first).

        Builds the whole tree (:meth:`tree`). With rows ``X``, each leaf is
        also counted on them (``Rules.on_rows``), asking the model about
        every row once; without, only the points behind each leaf are known
        (``Rules.leaf``, and ``Rules.fitted`` in data mode).
        """
        self._check_fitted("leaves")
        return self._leaves(None if X is None else self._rows_and_labels("leaves", X))

    def _leaves(self, rows: tuple[np.ndarray, np.ndarray] | None) -> tuple[Rules, ...]:
        """:meth:`leaves`, counted on ``rows`` (encoded rows and the model's labels)."""
        tree = self.tree()
        counted = None if rows is None else on_leaves(tree, *rows)
        return tuple(self._rules(path, path_conditions(tree, path), node,
                                 None if counted is None else counted[path])
                     for path, node in tree.walk() if isinstance(node, LeafDecision))

    def _rules(self, path: Path, conditions: tuple[str, ...], leaf: LeafDecision,
               on_rows: OnRows | None) -> Rules:
        # A feature's steps are described given its earlier ones on the path
        # (QuantileEncoder.describe), so its last condition is their intersection;
        # it keeps the place of the feature's first step.
        last: dict[int, str] = {}
        for (variable, _), condition in zip(path, conditions, strict=True):
            last[self.encoder_.feature_index(variable)] = condition
        return Rules(tuple(conditions), plain(self.labels([leaf.label])[0]), path,
                     leaf, tuple(last.values()), on_rows, self.tree_.leaf_rows(path))

    def _fitted_rows(self) -> int:
        """How many rows a data-mode surrogate was fitted on."""
        assert isinstance(self.encoder_, ThresholdEncoder), "data mode's questions"
        return self.encoder_.n_rows_

    def _oracle(self, owner: str) -> ModelLabels | ClassLabels:
        if self.oracle_ is None:
            raise ValueError(f"Surrogate.{owner} compares with the model, which this "
                             "Surrogate (read from JSON) does not hold; pass it: "
                             "Surrogate.from_json(text, model=model).")
        return self.oracle_

    def _rows_and_labels(self, owner: str, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """The encoded rows of ``X`` and the model's ``±1`` label of each (a multi-class
        tree: its class index) (one model call)."""
        oracle = self._oracle(owner)
        points = self.encoder_.encode(X)
        if points.shape[0] == 0:  # checked before the model is asked about no rows
            raise ValueError(f"The 'X' parameter of Surrogate.{owner} must have at least "
                             "one row: agreement on no rows is undefined. Got 0 rows.")
        if isinstance(oracle, ClassLabels):
            return points, oracle.class_rows(X)
        return points, oracle.label_rows(X)

    def tree(self, depth: int | None = None, *, progress: bool = False) -> ReconstructedTree:
        """``T_seed`` decided down to ``depth`` (``None``: the whole tree), readable.

        The whole tree is kept and then answers :meth:`predict` and
        :meth:`explain` (the same answers as deciding node by node).
        ``progress=True`` draws a tqdm bar on stderr over the decisions (in
        data mode over the nodes decided, whose number is not known in
        advance).
        """
        self._check_fitted("tree")
        if depth is not None:
            depth = check_int("Surrogate.tree", "depth", depth, 0)
        check_flag("Surrogate.tree", "progress", progress)
        return self.tree_.tree(depth, progress)

    # -- quality -------------------------------------------------------------------

    def fidelity(self, X: Any = None, *, samples: int = PRODUCT_SAMPLES) -> Fidelity:
        """Agreement of the tree with the model, with 95% Hoeffding intervals.

        On the rows given, when ``X`` is given (held-out rows, for an interval
        that holds; see :class:`Agreement`): the tree's answer on each encoded
        row against the model's on the raw row, so discretisation error
        counts, beside the *majority-label baseline*, the share of the
        model's most common label on those rows (what a tree that always
        answers it would score), and in data mode the agreement of a plain
        scikit-learn tree of the same depth fitted on the model's labels of
        the fitted rows (``Fidelity.rows_tree``, when scikit-learn is
        installed). On the product distribution: ``samples`` points derived
        from the seed (purpose ``"surrogate-fidelity"``), the tree's answer
        against the model's on the decoded point.

        One :class:`LowFidelityWarning` (its sentences also in
        ``Fidelity.concerns``) when, on the rows given, the tree agrees with
        the model on no more rows than the baseline does, or on a share more
        than :data:`FAR_BELOW` (0.1) below its share on the product
        distribution (compared exactly, as fractions), or a leaf holding at
        least 5% of them answers a label fewer of its rows get from the model
        than their most common one (of K classes: not their plurality). Model
        queries spent here are not counted in ``queries_``.
        """
        self._check_fitted("fidelity")
        return self._fidelity(X, samples, None)

    def _fidelity(self, X: Any, samples: int,
                  rows: tuple[np.ndarray, np.ndarray] | None) -> Fidelity:
        """:meth:`fidelity`, on ``rows`` (``X`` encoded and the model's labels) when the
        caller has them already, so that the model is asked about ``X`` once."""
        samples = check_int("Surrogate.fidelity", "samples", samples, 1)
        sampled = self.tree_.product_sample(self._oracle("fidelity"), samples)
        if X is None:
            return Fidelity(None if sampled is None else agreement(*sampled))
        points, labels = self._rows_and_labels("fidelity", X) if rows is None else rows
        answers = self.tree_.answers(points)
        tree = self.tree()
        leaves = [(self._rules(path, path_conditions(tree, path), leaf, None), labels[chosen])
                  for path, (leaf, chosen) in reached(tree, points).items()]
        fidelity = judge(sampled, answers, labels,
                         len(self.classes_) if self._multiclass else 0, self.labels, leaves)
        if fidelity.concerns:  # raised at the line that called fidelity or report
            warnings.warn("Surrogate.fidelity: " + " Also, ".join(fidelity.concerns),
                          LowFidelityWarning, stacklevel=3)
        return dataclasses.replace(fidelity, rows_tree=self.tree_.yardstick(X, labels))

    def report(self, X: Any = None) -> str:
        """A short text summary: mapping, encoder, tree size, queries, fidelity, leaves.

        Builds the whole tree. With the model (always, unless read from JSON
        without it: then it says how to pass it) it measures :meth:`fidelity`
        on rows ``X`` (held-out rows, ideally) and on the product
        distribution, and counts the leaves on ``X``; the lines are laid out
        by :func:`lca.models.quality.report_text`.
        """
        self._check_fitted("report")
        fidelity = leaves = None
        if self.oracle_ is not None:
            # The model is asked about X once, for the agreement and the leaves alike.
            rows = None if X is None else self._rows_and_labels("fidelity", X)
            fidelity = self._fidelity(X, PRODUCT_SAMPLES, rows)
            leaves = None if rows is None else self._leaves(rows)
        return report_text(
            self.tree(), self.classes_, threshold=self.threshold,
            method=None if self.oracle_ is None else self.oracle_.method,
            encoder=self.encoder_, features=self.n_features_in_,
            rows=(None if self.distribution_ == "product" else
                  (self._fitted_rows(), self.rows_digest_)),
            queries=self.queries_, fidelity=fidelity, leaves=leaves)

    # -- JSON ------------------------------------------------------------------------

    def to_json(self, indent: int | None = None) -> str:
        """The whole tree, the encoder and the mapping as JSON (not the model).

        :meth:`from_json` reads it back into a Surrogate whose ``predict``,
        ``explain``, ``tree`` and ``queries_`` equal this one's, and whose
        ``to_json`` is this text again; give it the model too for
        :meth:`fidelity`. The document carries a ``"digest"`` (SHA-256 of
        everything else), so an edited or corrupted file is refused. The text
        is read back before it is returned: a surrogate holding a value JSON
        cannot write exactly (a class or column label that is not a string, a
        finite number or a bool) is refused here, naming the value.
        """
        self._check_fitted("to_json")
        return write_document(
            self.tree(), self.encoder_, indent, positive=self.positive,
            threshold=self.threshold,
            # The tree's depth cap: a product tree's is its lca.Params' (given ones included).
            depth=self.depth if self.params_ is None else self.params_.depth,
            seed=self.seed_, classes=self.classes_,
            feature_names_in=getattr(self, "feature_names_in_", None), queries=self.queries_,
            leaf_rows=self.tree_.leaf_rows if self.distribution_ == "data" else None)

    @classmethod
    def from_json(cls, text: str | bytes, model: Any = None, *,
                  allow_old_version: bool = False) -> Surrogate:
        """The Surrogate :meth:`to_json` wrote; with ``model`` it can measure fidelity again.

        The whole document is checked before anything is built from it:
        every field's type and range, and its consistency with the tree and
        the encoder (seed, number of bits, each node's conditions, feature
        and counts, the builder's parameters, the classes), no key given
        twice, no NaN or infinity, then the digest. ``model``, when given,
        must have the saved classes.

        Args:
            text: the JSON (``str`` or ``bytes``).
            model: the fitted model, for :meth:`fidelity` and :meth:`report`
                (without it they say so and measure nothing against it).
            allow_old_version: read a document written by an earlier lca
                (format 1, without a digest, so an edit that keeps the fields
                consistent cannot be detected; or format 2, which records
                neither the tree's builder nor its queries: ``queries_`` is
                ``None``). Its fields are checked alike. A product-mode one
                saves again in this format; a format 2 data-mode tree, grown by
                an earlier rule, answers but does not save again.

        Raises:
            TypeError: ``text`` is not ``str`` or ``bytes``.
            ValueError: anything wrong with the document (one error, naming
                the field), or a ``model`` that does not fit it.
        """
        owner = "Surrogate.from_json"
        check_flag(owner, "allow_old_version", allow_old_version)
        saved = read_document(text, allow_old_version=allow_old_version)
        rows = saved.rows
        surrogate = cls(model, **saved.arguments())
        surrogate.encoder_, surrogate.seed_ = saved.encoder, saved.seed
        surrogate.distribution_, surrogate.params_ = saved.distribution, saved.params
        surrogate.tree_ = saved.source()
        if rows is not None:
            surrogate.rows_per_node_, surrogate.min_rows_ = rows.rows_per_node, rows.min_rows
            surrogate.shared_rows_, surrogate.rows_digest_ = rows.shared_rows, rows.digest
        surrogate.classes_ = saved.classes
        surrogate.n_features_in_ = saved.encoder.n_features_in_
        if saved.feature_names_in is not None:
            surrogate.feature_names_in_ = np.array(saved.feature_names_in, dtype=object)
        surrogate.oracle_ = (None if model is None else
                             surrogate._saved_oracle(owner, model, saved.tree))
        return surrogate

    def _saved_oracle(self, owner: str, model: Any,
                      tree: ReconstructedTree) -> ModelLabels | ClassLabels:
        """The model's answers for a surrogate read from JSON, checked against its classes."""
        multiclass = self._multiclass
        positive, method = (None, None) if multiclass else self._mapping(owner)
        oracle = rows_oracle(model, self.encoder_, multiclass=multiclass, positive=positive,
                             method=method, threshold=self.threshold)
        if oracle.answer_labels.tolist() != self.classes_.tolist() or \
                tuple(oracle.label_names) != tree.class_names:
            raise ValueError(f"{owner}: the model {oracle.name!r} answers "
                             f"{list(oracle.label_names)!r}, but the saved surrogate "
                             f"{list(tree.class_names or ())!r}; pass the model it was "
                             "fitted with.")
        return oracle


def _same(value: Any, default: Any) -> bool:
    """Whether a constructor argument is its default (``repr`` leaves those out)."""
    return value is default or (type(value) is type(default) and value == default)
