"""A trained model as an oracle: :func:`from_estimator` and :class:`ModelOracle`.

:func:`from_estimator` wraps a batched model (a scikit-learn-style estimator,
a LightGBM model, a Pipeline, or a plain function of a 2-D array) as an
:class:`lca.Oracle`. An encoder (:mod:`lca.models.encoders`) turns the
oracle's ``±1`` points into the model's input rows, and the model's outputs
become ``±1`` by an explicit rule: ``positive=`` class, or ``threshold=`` on
a score. A model fitted with feature names (``feature_names_in_``) is called
with a DataFrame under those names, as it was trained.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np

from lca._validate import check_int, check_real
from lca.derive import Path
from lca.models._data import MAX_FEATURES, make_frame, plain, stack
from lca.models.encoders import BinaryEncoder, Encoder, QuantileEncoder
from lca.models.questions import Questions
from lca.oracle import Oracle, OracleError, check_points

__all__ = [
    "ClassLabels",
    "ModelLabels",
    "ModelOracle",
    "from_classifier",
    "from_estimator",
]

METHODS = ("predict", "predict_proba", "decision_function")


class _ModelCalls:
    """A fitted model called on rows as it was trained, with its answers checked.

    ``encoder`` (any :class:`lca.models.questions.Questions`) selects and
    orders a DataFrame's columns and describes the variables; the model is
    called with a DataFrame under ``columns`` (the names it was fitted with)
    or with an array when ``columns`` is ``None``.
    """

    def __init__(self, model: Any, encoder: Questions, method: str, auto: bool,
                 positive: Any, threshold: float | None, classes: np.ndarray | None,
                 column: int | None, name: str,
                 columns: tuple[Any, ...] | None = None) -> None:
        self.model = model
        self.encoder = encoder
        self.method = method
        self.auto = auto
        self.positive = positive
        self.threshold = threshold
        self.classes = classes
        self.column = column
        self.name = name
        self.columns = columns
        self.n = encoder.n_bits

    def _call(self, features: Any) -> Any:
        function = getattr(self.model, self.method, None)
        rows = features.shape[0]
        try:
            raw = (function if function is not None else self.model)(features)
        except Exception as error:
            error.add_note(f"while calling {self.method} of model {self.name!r} on "
                           f"{rows} rows")
            raise
        return np.asarray(raw)

    def _for_model(self, columns: list[np.ndarray]) -> Any:
        """Columns in the encoder's order as the model takes them."""
        dtypes = self.encoder.model_dtypes_
        if dtypes:  # integer and bool columns go back in their own dtype (values unchanged)
            columns = [column.astype(dtypes[j]) if j in dtypes else column
                       for j, column in enumerate(columns)]
        if self.columns is None:
            return stack(columns)
        labels = self.encoder.columns_ if self.encoder.columns_ is not None else self.columns
        frame = make_frame(columns, labels, self.encoder.categorical_dtypes_)
        # Fitted on the same columns in another order: the model's order.
        return frame if tuple(labels) == self.columns else frame[list(self.columns)]

    def _fail(self, message: str) -> OracleError:
        return OracleError(f"model {self.name!r} ({self.method}) {message}")

    def describe(self, variable: int, bit: int, path: Path = ()) -> str:
        """The condition ``variable = bit`` as the encoder reads it, e.g. ``"age >= 40.5"``."""
        return self.encoder.describe(variable, bit, path)

    def feature_of(self, variable: int) -> str:
        """The name of the feature that owns ``variable`` (for node labels)."""
        return self.encoder.feature_of(variable)


class ModelLabels(_ModelCalls):
    """A model's yes/no answer on rows: its outputs mapped to ``±1`` by an explicit rule.

    ``predict`` outputs equal to ``positive`` give ``+1``, every other known
    class ``-1``; scores (``decision_function``, the ``positive`` column of
    ``predict_proba``, or a regressor's ``predict``) give ``+1`` when
    ``>= threshold``. Anything else a model returns (an unknown class, a
    label the mapping cannot produce, NaN or complex scores, a wrong length,
    shape or number of columns) raises :class:`lca.OracleError` naming the
    model. A data-mode :class:`lca.models.Surrogate` asks it about rows;
    :class:`ModelOracle` adds the ``±1`` points of a product encoder.
    """

    def label_rows(self, X: Any) -> np.ndarray:
        """The model's ``±1`` label of each row of data ``X`` (array or DataFrame).

        A DataFrame's columns are taken by name; the model is called with a
        DataFrame under its fitted column names when it was fitted with them.
        """
        data = self.encoder._select("ModelLabels.label_rows", X)
        return self.label_columns(list(data.columns))

    def label_columns(self, columns: list[np.ndarray]) -> np.ndarray:
        """The model's ``±1`` label of each row of ``columns`` (in the encoder's order)."""
        return self._map(self._call(self._for_model(columns)), len(columns[0]))

    def _map(self, outputs: np.ndarray, m: int) -> np.ndarray:
        if self.threshold is None:
            return self._labels(outputs, m)
        return self._scores(outputs, m, self.threshold)

    def _labels(self, outputs: np.ndarray, m: int) -> np.ndarray:
        if outputs.ndim == 2 and outputs.shape[1:] == (1,):
            outputs = outputs[:, 0]
        if outputs.shape != (m,):
            raise self._fail(f"returned shape {outputs.shape} for {m} rows; expected "
                             f"({m},) or ({m}, 1) class labels")
        if self.classes is not None:
            known = np.zeros(m, dtype=bool)
            if _numeric(outputs) == _numeric(self.classes):
                if self.classes.size <= 8:  # a few comparisons beat np.isin's set-up
                    for label in self.classes:
                        known |= outputs == label
                else:
                    known = np.isin(outputs, self.classes)
        elif (np.issubdtype(outputs.dtype, np.number) and outputs.dtype.kind != "c") \
                or outputs.dtype == np.bool_:
            known = (outputs == 0) | (outputs == 1) | (outputs == -1)
        else:
            known = np.zeros(m, dtype=bool)
        if not known.all():
            bad = outputs[~known][0]
            bad = bad.item() if isinstance(bad, np.generic) else bad
            expected = (f"one of its classes {self.classes.tolist()}" if self.classes is not
                        None else "a binary label in {0, 1} or {-1, +1}")
            raise self._fail(f"returned {bad!r}, which the mapping does not know; expected "
                             f"{expected}")
        if self.classes is None and self.positive in (0, -1):
            # 0/1 labels and ±1 labels cannot both be meant: positive=0 says 0/1,
            # positive=-1 says ±1, so the other convention's label is a mix-up
            # under which one side of the mapping could never be produced.
            other = -1 if self.positive == 0 else 0
            if (outputs == other).any():
                raise self._fail(
                    f"returned {other}, but positive={self.positive!r} means "
                    f"{'0/1' if other == -1 else '±1'} labels, so this model's labels "
                    f"{'{-1, +1}' if other == -1 else '{0, 1}'} could never map to +1 "
                    f"through positive={self.positive!r}; pass positive=1 or "
                    f"positive={other}")
        return np.where(outputs == self.positive, 1, -1).astype(np.int8)

    def _scores(self, outputs: np.ndarray, m: int, threshold: float) -> np.ndarray:
        if outputs.dtype.kind == "c":
            raise self._fail(f"returned complex scores (dtype {outputs.dtype}); threshold="
                             f"{threshold!r} needs real scores")
        if self.method == "predict_proba" and self.classes is not None \
                and (outputs.ndim != 2 or outputs.shape != (m, self.classes.size)):
            raise self._fail(
                f"returned shape {outputs.shape} for {m} rows; a model with classes "
                f"{self.classes.tolist()} must return ({m}, {self.classes.size}) "
                f"probabilities, one column per class, for positive="
                f"{self.positive!r} to pick one")
        if outputs.ndim == 2 and self.column is not None and outputs.shape[1] > 1:
            if self.column >= outputs.shape[1]:
                raise self._fail(f"returned {outputs.shape[1]} score columns; positive="
                                 f"{self.positive!r} asks for column {self.column}")
            outputs = outputs[:, self.column]
        elif outputs.ndim == 2 and outputs.shape[1] == 1:
            outputs = outputs[:, 0]
        if outputs.shape != (m,):
            raise self._fail(f"returned shape {outputs.shape} for {m} rows; expected "
                             f"({m},) scores" + ("" if self.column is None else
                                                 f" or ({m}, k) with k > {self.column}"))
        if outputs.dtype == np.bool_ or not np.issubdtype(outputs.dtype, np.number):
            raise self._fail(f"returned dtype {outputs.dtype}; expected numeric scores")
        scores = outputs.astype(np.float64)
        finite = np.isfinite(scores)
        if not finite.all():
            raise self._fail(f"returned {scores[~finite][0]} at row "
                             f"{int(np.flatnonzero(~finite)[0])}; scores must be finite")
        if self.method == "predict_proba" and (scores.min() < 0 or scores.max() > 1):
            bad = scores[(scores < 0) | (scores > 1)][0]
            raise self._fail(f"returned probability {bad}; expected values in [0, 1]")
        return np.where(scores >= threshold, 1, -1).astype(np.int8)

    @property
    def label_names(self) -> tuple[str, ...]:
        """Readable names of the ``-1`` and ``+1`` answers, e.g. ``("malignant", "benign")``;
        of a multi-class oracle, one per class (in ``classes`` order)."""
        positive = plain(self.positive)
        if self.classes is not None and (self.threshold is None or self.method ==
                                         "predict_proba" or self.classes.size == 2):
            chosen = positive_class(self.positive, self.classes)
            others = [c for c in self.classes.tolist() if c != chosen]
            if len(others) == 1:
                return str(others[0]), str(chosen)
            return f"not {chosen}", str(chosen)
        if self.threshold is None:
            return f"not {positive}", str(positive)
        score = (f"{self.method}[:, {self.column}]" if self.column is not None
                 else self.method)
        return f"{score} < {self.threshold:g}", f"{score} >= {self.threshold:g}"

    @property
    def answer_labels(self) -> np.ndarray:
        """The model's labels of the ``-1`` and ``+1`` answers, the classes a surrogate's
        ``predict`` answers in: a binary model's classes ``[other, positive]``,
        ``[Not(c), c]`` for one class ``c`` of a multi-class model, ``[False, True]`` for
        a model without classes."""
        classes = self.classes
        if classes is None:
            return np.array([False, True])
        positive = positive_class(self.positive, classes)
        if classes.size == 2:
            other = [c for c in classes.tolist() if c != positive][0]
            return np.array([other, positive], dtype=classes.dtype)
        return np.array([Not(positive), positive], dtype=object)

    def __repr__(self) -> str:
        rule = (f"positive={self.positive!r}" if self.threshold is None else
                f"score >= {self.threshold!r}" + (f" (column of {self.positive!r})"
                                                   if self.column is not None else ""))
        how = " (auto)" if self.auto else ""
        return (f"<{type(self).__name__} {self.name!r} n={self.n} method={self.method!r}{how} "
                f"{rule} encoder={self.encoder!r}>")


class ClassLabels(_ModelCalls):
    """A classifier of more than two classes whose answer on a row is its class, not a yes/no.

    Build it with :func:`from_classifier`. It answers rows (never ``±1``
    points): :meth:`class_rows` and :meth:`class_columns` give the index in
    ``classes`` of ``predict``'s class of each row; a label not among them is
    an :class:`lca.OracleError`.
    """

    def class_rows(self, X: Any) -> np.ndarray:
        """The index in ``classes`` of the model's class of each row of data ``X``, as int64."""
        data = self.encoder._select("ClassLabels.class_rows", X)
        return self.class_columns(list(data.columns))

    def class_columns(self, columns: list[np.ndarray]) -> np.ndarray:
        """The index in ``classes`` of ``predict``'s class of each row of ``columns``
        (in the encoder's order), as int64."""
        assert self.classes is not None
        m = len(columns[0])
        outputs = self._call(self._for_model(columns))
        if outputs.ndim == 2 and outputs.shape[1:] == (1,):
            outputs = outputs[:, 0]
        if outputs.shape != (m,):
            raise self._fail(f"returned shape {outputs.shape} for {m} rows; expected "
                             f"({m},) or ({m}, 1) class labels")
        found = np.full(m, -1, dtype=np.int64)
        if _numeric(outputs) == _numeric(self.classes):
            for index, label in enumerate(self.classes.tolist()):
                found[outputs == label] = index
        if (found < 0).any():
            bad = outputs[found < 0][0]
            bad = bad.item() if isinstance(bad, np.generic) else bad
            raise self._fail(f"returned {bad!r}, which is not one of its classes "
                             f"{self.classes.tolist()}")
        return found

    @property
    def label_names(self) -> tuple[str, ...]:
        """The classes as text, in ``classes`` order."""
        assert self.classes is not None
        return tuple(str(plain(c)) for c in self.classes.tolist())

    @property
    def answer_labels(self) -> np.ndarray:
        """The model's classes, one for each class index the tree answers."""
        return np.array(self.classes)

    def __repr__(self) -> str:
        return f"<ClassLabels {self.name!r} classes={self.classes!r} encoder={self.encoder!r}>"


class ModelOracle(ModelLabels, Oracle):
    """A batched model as an oracle over a product encoder; build it with :func:`from_estimator`.

    ``query(points)`` decodes the ``±1`` points with the encoder, calls the
    model's ``method`` once on the whole batch, and maps its outputs to
    ``±1`` as :class:`ModelLabels` does. The oracle is deterministic when
    the model is, and pickles whenever the model does.

    Attributes:
        columns: the column names the model is called with (a DataFrame),
            or ``None`` for an array.
    """

    encoder: Encoder

    def query(self, points: np.ndarray) -> np.ndarray:
        if not (isinstance(points, np.ndarray) and points.dtype == np.int8
                and points.ndim == 2 and points.shape[1] == self.n):
            # The library always sends int8 (m, n); validate anything else a user sends.
            points = check_points(points, self.n, what=f"points of {self.name!r}")
        return self._map(self._call(self._inputs(points)), points.shape[0])

    def _inputs(self, points: np.ndarray) -> Any:
        """The model's input rows for ``points``: a DataFrame under ``columns`` or an array."""
        values = self.encoder._decode_values(points)
        if self.columns is None and not self.encoder.categories_:
            return values
        return self._for_model(self.encoder._columns_of(values))


class Not:
    """The label "any class but ``label``": the no-side of a one-vs-rest surrogate's answers.

    A surrogate of "the model predicts ``c``" (``positive=c`` for a model of
    more than two classes) answers ``c`` or ``Not(c)``. ``Not(c)`` compares
    equal to every value except ``c``, so that both comparisons a reader of
    scikit-learn code writes mean what they say: ``surrogate.predict(X) == c``
    is true exactly where the tree answers ``c``, and ``surrogate.predict(X)
    == model.predict(X)`` is true exactly where the tree and the model agree
    on the question (the model answering ``c``, or any other class where the
    tree answers ``Not(c)``). ``str`` reads ``"not c"``.
    """

    __slots__ = ("label",)

    def __init__(self, label: Any) -> None:
        self.label = plain(label)

    def __eq__(self, other: Any) -> Any:
        if isinstance(other, Not):
            return self.label == other.label
        return not _among(self.label, np.array([plain(other)], dtype=object))

    def __ne__(self, other: Any) -> Any:
        return not self == other

    def __hash__(self) -> int:
        return hash((Not, self.label))

    def __repr__(self) -> str:
        return f"Not({self.label!r})"

    def __str__(self) -> str:
        return f"not {self.label}"


def positive_class(positive: Any, classes: np.ndarray | None) -> Any:
    """The class on the ``+1`` side: ``positive``, or the model's last class when it is ``None``.

    ``positive=None`` means the last of ``classes`` (``classes_[1]`` of a
    binary model: the class its decision_function scores); for a model
    without classes it stays ``None``. The one home of that rule.
    """
    if positive is None and classes is not None:
        return plain(classes[-1])
    return plain(positive)


def model_classes(model: Any) -> np.ndarray | None:
    """The model's ``classes_`` as a 1-D array, or None when it has none.

    Classes are at least two different labels of one kind (strings, numbers
    within int64, or bools), as a saved surrogate can write them; anything
    else is refused here, naming the model, before it could fail later.
    """
    owner = "lca.models"
    classes = getattr(model, "classes_", None)
    if classes is None:
        return None
    name = type(model).__name__
    if isinstance(classes, list) and classes and isinstance(classes[0], np.ndarray):
        raise TypeError(f"{owner}: multi-output models (a list of classes_ arrays) are not "
                        "supported; wrap one output at a time.")
    try:
        labels = np.asarray(classes)
    except ValueError as error:  # ragged
        raise TypeError(f"{owner}: the classes_ of model {name} must be 1-D labels. Got "
                        f"{classes!r} ({error}).") from None
    if labels.ndim != 1:
        raise TypeError(f"{owner}: the classes_ of model {name} must be 1-D labels. Got "
                        f"shape {labels.shape}.")
    # The labels as the model holds them: numpy would turn [1, "a"] into strings.
    values = [plain(value) for value in (classes.tolist() if isinstance(classes, np.ndarray)
                                         else list(classes))]
    kinds = {"str" if isinstance(v, str) else "bool" if isinstance(v, bool) else
             "number" if isinstance(v, (int, float)) else type(v).__name__ for v in values}
    if len(values) < 2 or len(kinds) != 1 or not kinds <= {"str", "bool", "number"} \
            or len({(type(v) is str, v) for v in values}) != len(values):
        raise ValueError(f"{owner}: the classes_ of model {name} must be at least two "
                         "different labels of one kind (strings, numbers or bools). Got "
                         f"{values!r}" + (": a model of one class has nothing to distil "
                                          "(every row gets that class)."
                                          if len(values) == 1 else "."))
    if any(isinstance(v, int) and not -(1 << 63) <= v < 1 << 63 for v in values) or \
            any(isinstance(v, float) and not math.isfinite(v) for v in values):
        raise ValueError(f"{owner}: the classes_ of model {name} must be finite numbers within "
                         f"int64 when they are numbers. Got {values!r}.")
    if any(isinstance(v, str) and v.endswith("\x00") for v in classes):
        raise ValueError(f"{owner}: a class of model {name} ends in a NUL character, which "
                         f"numpy's string arrays drop; rename it. Got {list(classes)!r}.")
    return labels


def _pick_method(model: Any, method: Any, threshold: Any, owner: str) -> tuple[str, bool]:
    has = [name for name in METHODS if callable(getattr(model, name, None))]
    if method is not None:
        if method not in METHODS:
            raise ValueError(f"The 'method' parameter of {owner} must be one of "
                             f"{METHODS} or None. Got {method!r} instead.")
        if has and method not in has:
            raise ValueError(f"{owner}: model {type(model).__name__} has no method "
                             f"{method!r} (it has {has}).")
        if not has and not callable(model):
            raise TypeError(f"The 'model' parameter of {owner} must be callable or have "
                            f"one of the methods {METHODS}. Got {type(model).__name__}.")
        return method, False
    if not has and not callable(model):
        raise TypeError(f"The 'model' parameter of {owner} must be callable or have one "
                        f"of the methods {METHODS}. Got {type(model).__name__}.")
    if threshold is None:
        if has and "predict" not in has:
            raise ValueError(f"{owner}: model {type(model).__name__} has no predict; "
                             f"pass threshold= to threshold its {has[0]} scores.")
        return "predict", True
    if not has:
        return "decision_function", True
    scorers = [name for name in ("decision_function", "predict_proba") if name in has]
    if len(scorers) == 2:
        raise ValueError(f"{owner}: threshold={threshold!r} is ambiguous for "
                         f"{type(model).__name__}, which has both decision_function and "
                         "predict_proba; pass method='decision_function' or "
                         "method='predict_proba'.")
    if not scorers:
        if model_classes(model) is None:
            return "predict", True  # a regressor: its predictions are the scores
        raise ValueError(f"{owner}: threshold= needs scores, but classifier "
                         f"{type(model).__name__} has neither decision_function nor "
                         "predict_proba; use positive= with predict instead.")
    return scorers[0], True


def from_estimator(model: Any, encoder: Encoder | None = None, *, positive: Any = None,
                   method: str | None = None, threshold: float | None = None,
                   n: int | None = None) -> ModelOracle:
    """Wrap a batched model as an :class:`lca.Oracle` (a picklable :class:`ModelOracle`).

    The model is any object with ``predict``, ``predict_proba`` or
    ``decision_function`` (scikit-learn style), or a plain function of a 2-D
    array; it is called once per batch of points, on the encoder's decoded
    rows: a DataFrame under the model's ``feature_names_in_`` when it was
    fitted with names, so it sees what it was trained on.

    Output mapping to ``±1`` (always explicit):

    * labels (``method='predict'``): ``positive`` is the class mapped to
      ``+1``; every other class maps to ``-1``. Labels may be ints, bools,
      floats, strings, ``(m,)`` or ``(m, 1)``. A model with ``classes_`` may
      only return those classes; one without must return ``0/1`` or ``±1``
      labels (``positive=0`` means 0/1 labels and ``positive=-1`` means ±1
      labels; a label of the other convention is an error).
    * scores (``method='decision_function'`` or ``'predict_proba'``, or
      ``'predict'`` of a regressor, a model without ``classes_``): ``+1``
      when the score is ``>= threshold``. A 1-D (or ``(m, 1)``) output is the
      score; with several columns the column of class ``positive`` (by
      ``classes_``; an int column index for models without it) is used.
      ``predict_proba`` of a model with ``classes_`` must return one column
      per class.

    ``method=None`` picks ``'predict'`` when no ``threshold`` is given, else
    the model's one scoring method (both present is ambiguous and raises;
    ``predict`` for a regressor); ``repr`` says which and that it was picked
    automatically. For a plain function, ``method`` only says what its
    output means.

    Args:
        model: the fitted model (or batched function).
        encoder: a *fitted* encoder (:class:`QuantileEncoder`,
            :class:`BinaryEncoder`). ``None`` means the model takes the
            bits as 0/1 features directly (``+1 -> 0``, ``-1 -> 1``); then
            ``n=`` is required, to say so (lca cannot see whether a fitted
            model's features are 0/1), and names come from
            ``model.feature_names_in_`` when present.
        positive: the class mapped to ``+1`` (labels), or whose score column
            is thresholded.
        method: ``'predict'``, ``'predict_proba'``, ``'decision_function'``
            or ``None`` (automatic).
        threshold: the score cut for scoring methods.
        n: the number of 0/1 features when ``encoder`` is ``None``, at most
            ``2**20``; with an encoder, optional and checked.

    Raises:
        TypeError: wrong argument types, an unfitted encoder, a model that
            is neither callable nor has a known method.
        ValueError: an ambiguous or inconsistent mapping (e.g. ``positive``
            not among ``classes_``, a multi-class model without ``positive``,
            ``threshold`` with a classifier's ``predict``), no encoder and no
            ``n``, or sizes that disagree.
    """
    owner = "lca.models.from_estimator"
    mapping = _mapping(owner, model, positive, method, threshold)
    encoder = _encoder_for(owner, model, mapping["name"], encoder, n)
    return ModelOracle(model, encoder, **mapping,
                       columns=_model_columns(owner, model, mapping["name"], encoder))


def model_labels(model: Any, encoder: Questions, *, positive: Any = None,
                 method: str | None = None, threshold: float | None = None) -> ModelLabels:
    """The model's ``±1`` answer on rows, for any fitted questions (a data-mode surrogate's
    :class:`lca.models.ThresholdEncoder` included); the mapping is checked as
    :func:`from_estimator` checks it."""
    owner = "lca.models.Surrogate"
    mapping = _mapping(owner, model, positive, method, threshold)
    _check_questions(owner, model, mapping["name"], encoder)
    return ModelLabels(model, encoder, **mapping,
                       columns=_model_columns(owner, model, mapping["name"], encoder))


def surrogate_mapping(owner: str, model: Any, positive: Any,
                      threshold: Any) -> tuple[Any, str | None]:
    """The ``positive`` and ``method`` a :class:`lca.models.Surrogate` wraps ``model`` with
    for a yes/no tree, from its ``positive=`` and ``threshold=``: the last class when no
    class is given, and a score of ``predict_proba`` before ``decision_function``
    (``method`` ``None``: as :func:`from_estimator` picks it)."""
    classes = model_classes(model)
    name = type(model).__name__
    if classes is None:
        if threshold is None and positive is None:
            raise ValueError(
                f"{owner}: model {name} has no classes_ (a regressor or a plain "
                "function); pass threshold= (model.predict(x) >= threshold is the "
                "positive side), or positive= for a function with 0/1 or ±1 labels.")
        return positive, None
    if positive is None:
        if classes.size > 2:
            raise ValueError(
                f"{owner}: model {name} has {classes.size} classes "
                f"{classes.tolist()}, and a product-distribution tree answers one yes/no "
                "question. Pass positive=c for 'the model predicts c' (predict then "
                "answers c or lca.models.Not(c)); for ONE tree whose leaves answer the "
                "model's class use distribution='data' (the default) without "
                "positive=; for a product-distribution tree of every class fit one "
                "surrogate per class: {c: Surrogate(model, positive=c).fit(X) for c in "
                "model.classes_}.")
        positive = positive_class(None, classes)
    if threshold is None:
        return positive, None
    if callable(getattr(model, "predict_proba", None)):
        return positive, "predict_proba"
    # decision_function of a binary model scores classes_[1]; from_estimator
    # refuses positive=classes_[0] with it rather than flip silently.
    return (None if classes.size == 2 and positive == positive_class(None, classes)
            else positive), None


def answers_classes(owner: str, model: Any, positive: Any, threshold: Any) -> bool:
    """Whether a data-mode :class:`lca.models.Surrogate`'s one tree answers the class of a
    multi-class ``model`` (no ``positive=``)."""
    classes = model_classes(model)
    if classes is None or classes.size <= 2 or positive is not None:
        return False
    if threshold is not None:
        raise ValueError(
            f"{owner}: threshold={threshold!r} cuts the score of one class, but model "
            f"{type(model).__name__} has {classes.size} classes "
            f"{classes.tolist()} and no positive= is given. Pass positive=c for the "
            "tree of 'score of c >= threshold', or drop threshold for one tree whose "
            "leaves answer the model's class.")
    return True


def rows_oracle(model: Any, encoder: Questions, *, multiclass: bool, positive: Any,
                method: str | None, threshold: Any) -> ModelLabels | ClassLabels:
    """The model's answers on rows of ``encoder``'s questions, as a surrogate asks them:
    its class (``multiclass``), else ``±1`` by the mapping (a product encoder's
    :class:`ModelOracle` answers points too)."""
    if multiclass:
        return from_classifier(model, encoder)
    if isinstance(encoder, Encoder):
        return from_estimator(model, encoder, positive=positive, method=method,
                              threshold=threshold)
    return model_labels(model, encoder, positive=positive, method=method, threshold=threshold)


def _mapping(owner: str, model: Any, positive: Any, method: Any,
             threshold: Any) -> dict[str, Any]:
    """The checked rule from the model's outputs to ``±1``: method, positive, threshold,
    score column, and the model's classes and name."""
    method, auto = _pick_method(model, method, threshold, owner)
    classes = model_classes(model)
    name = getattr(model, "__name__", None) or type(model).__name__
    threshold = _check_threshold(owner, method, threshold, classes)
    column = None
    if method == "predict" and threshold is None:
        _check_label_positive(owner, name, positive, classes)
    else:
        column = _score_column(owner, name, method, positive, classes)
    return dict(method=method, auto=auto, positive=positive, threshold=threshold,
                classes=classes, column=column, name=name)


def from_classifier(model: Any, encoder: Questions) -> ClassLabels:
    """A classifier of more than two classes whose answer on a row is its class, not a yes/no.

    :meth:`ClassLabels.class_columns` and :meth:`ClassLabels.class_rows`
    give the index in ``model.classes_`` of ``predict``'s class of each row;
    its ``label_names`` are the classes as text. It answers rows, not ``±1``
    points. The model is called as :func:`from_estimator` calls it (a
    DataFrame under its fitted names).

    Raises:
        TypeError: a model without ``predict``, an unfitted encoder.
        ValueError: a model without ``classes_`` or with fewer than three,
            or whose width differs from the encoder's.
    """
    owner = "lca.models.from_classifier"
    name = getattr(model, "__name__", None) or type(model).__name__
    if not callable(getattr(model, "predict", None)):
        raise TypeError(f"The 'model' parameter of {owner} must have predict (its class of "
                        f"each row). Got {type(model).__name__}.")
    classes = model_classes(model)
    if classes is None or classes.size < 3:
        raise ValueError(f"The 'model' parameter of {owner} must be a classifier of more than "
                         "two classes (classes_). Got "
                         + ("no classes_." if classes is None else
                            f"classes {classes.tolist()}."))
    _check_questions(owner, model, name, encoder)
    return ClassLabels(model, encoder, "predict", True, None, None, classes, None, name,
                       _model_columns(owner, model, name, encoder))


def _check_threshold(owner: str, method: str, threshold: Any,
                     classes: np.ndarray | None) -> float | None:
    """The checked threshold: required by scores, refused by a classifier's labels."""
    if threshold is not None:
        threshold = check_real(owner, "threshold", threshold, -math.inf, math.inf)
    elif method != "predict":
        raise ValueError(f"{owner}: method={method!r} gives scores; pass threshold= "
                         "(score >= threshold maps to +1).")
    if method == "predict" and threshold is not None and classes is not None:
        raise ValueError(f"{owner}: threshold= applies to scores, not to predict's "
                         "labels; pass method='decision_function' or 'predict_proba', "
                         "or drop threshold.")
    return threshold


def _check_label_positive(owner: str, name: str, positive: Any,
                          classes: np.ndarray | None) -> None:
    """Check that ``positive`` is one of the labels ``predict`` returns."""
    if positive is None:
        detail = (f" (its classes are {classes.tolist()})" if classes is not None else "")
        raise ValueError(f"{owner}: pass positive=, the class of {name}{detail} that "
                         "maps to +1 (every other class maps to -1).")
    if classes is not None and not _among(positive, classes):
        raise ValueError(f"{owner}: positive={positive!r} is not one of the model's "
                         f"classes {classes.tolist()}.")
    if classes is None and not (isinstance(positive, (Real, np.number, bool))
                                and positive in (0, 1, -1)):
        raise ValueError(f"{owner}: model {name} has no classes_, so its labels must "
                         "be 0/1 or ±1 and positive= one of them. "
                         f"Got positive={positive!r}.")


def _score_column(owner: str, name: str, method: str, positive: Any,
                  classes: np.ndarray | None) -> int | None:
    """The score column ``positive`` picks, or None when the scores are one column."""
    column = None
    if method == "predict":
        if positive is not None:
            raise ValueError(f"{owner}: positive={positive!r} has no meaning for the "
                             f"predictions of regressor {name}, which are thresholded: "
                             "predict >= threshold maps to +1; drop positive.")
    elif positive is not None:
        column = _column(owner, name, positive, classes)
    elif classes is not None and classes.size > 2:
        raise ValueError(f"{owner}: {name} has {classes.size} classes "
                         f"{classes.tolist()}; pass positive= to choose the score column.")
    elif method == "predict_proba" and classes is not None:
        raise ValueError(f"{owner}: pass positive= (one of {classes.tolist()}) to choose "
                         "which class's probability is thresholded.")
    if method == "decision_function" and classes is not None and classes.size == 2 and \
            column == 0:
        raise ValueError(f"{owner}: the decision_function of a binary model scores its "
                         f"second class {classes.tolist()[1]!r}; use "
                         f"positive={classes.tolist()[1]!r} (or "
                         "None) and a threshold on that score.")
    if method == "decision_function" and classes is not None and classes.size == 2:
        column = None  # a binary model's decision_function has one column
    return column


def _check_questions(owner: str, model: Any, name: str, encoder: Any) -> None:
    """Check that ``encoder`` is fitted questions as wide as the model's input."""
    if not isinstance(encoder, Questions):
        raise TypeError(f"The 'encoder' parameter of {owner} must be a fitted lca.models "
                        "encoder (QuantileEncoder, BinaryEncoder or ThresholdEncoder). Got "
                        f"{type(encoder).__name__} instead.")
    encoder._check_fitted(owner)
    _check_width(owner, model, name, encoder)


def _check_width(owner: str, model: Any, name: str, encoder: Questions) -> None:
    """Check that the model takes as many features as the encoder produces."""
    width = getattr(model, "n_features_in_", None)
    if width is not None and int(width) != encoder.n_features_in_:
        raise ValueError(f"{owner}: model {name} takes {int(width)} features but the "
                         f"encoder produces {encoder.n_features_in_}.")


def _model_columns(owner: str, model: Any, name: str,
                   encoder: Questions) -> tuple[Any, ...] | None:
    """The column names to call the model with, or None to call it with an array.

    A model fitted with names (``feature_names_in_``) gets a DataFrame under
    them; a scikit-learn-style model fitted without (``n_features_in_`` but no
    names) gets an array; anything else gets what the encoder was fitted on.
    """
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        names = tuple(names.tolist() if isinstance(names, np.ndarray) else names)
        if encoder.columns_ is not None and set(encoder.columns_) != set(names):
            raise ValueError(f"{owner}: model {name} was fitted on columns "
                             f"{list(names)!r} but the encoder on {list(encoder.columns_)!r}.")
        return names
    if getattr(model, "n_features_in_", None) is not None:
        return None
    return encoder.columns_


def _numeric(array: np.ndarray) -> bool:
    return array.dtype == np.bool_ or np.issubdtype(array.dtype, np.number)


def _among(value: Any, classes: np.ndarray) -> bool:
    # Python equality, so that 1 == 1.0 == True and a string never equals a number.
    return any(value == known for known in classes.tolist())


def _column(owner: str, name: str, positive: Any, classes: np.ndarray | None) -> int:
    if classes is not None:
        where = [i for i, known in enumerate(classes.tolist()) if known == positive]
        if len(where) != 1:
            raise ValueError(f"{owner}: positive={positive!r} is not one of the model's "
                             f"classes {classes.tolist()}.")
        return where[0]
    if isinstance(positive, bool) or not isinstance(positive, Integral) or positive < 0:
        raise ValueError(f"{owner}: model {name} has no classes_, so positive= must be "
                         f"the int column index of the score to use. Got {positive!r}.")
    return int(positive)


def _encoder_for(owner: str, model: Any, name: str, encoder: Any, n: Any) -> Encoder:
    if encoder is None:
        width = getattr(model, "n_features_in_", None)
        if n is None:
            if width is None:
                raise ValueError(f"{owner}: the model has no n_features_in_; pass n=, the "
                                 "number of 0/1 features it takes, or an encoder.")
            raise ValueError(
                f"{owner}: no encoder given, so model {name} would get 0/1 features, and "
                f"lca cannot see whether its {int(width)} features are 0/1. For real-valued "
                "or categorical features pass encoder=QuantileEncoder().fit(X) (or use "
                "lca.models.Surrogate(model).fit(X)); for 0/1 features pass "
                f"encoder=BinaryEncoder().fit(X), which checks, or n={int(width)}.")
        n = check_int(owner, "n", n, 1, MAX_FEATURES)
        names = getattr(model, "feature_names_in_", None)
        names = None if names is None else [str(label) for label in names]
        encoder = BinaryEncoder.of_width(owner, n, names)
        _check_width(owner, model, name, encoder)
        return encoder
    if not isinstance(encoder, (BinaryEncoder, QuantileEncoder)):
        kind = type(encoder).__name__
        raise TypeError(f"The 'encoder' parameter of {owner} must be a fitted product "
                        "encoder (QuantileEncoder or BinaryEncoder), whose points decode into "
                        f"rows, or None. Got {kind} instead"
                        + ("; its points are regions of rows, not rows: a data-mode "
                           "Surrogate asks the model about rows." if kind == "ThresholdEncoder"
                           else "."))
    _check_questions(owner, model, name, encoder)
    if n is not None and check_int(owner, "n", n, 1, MAX_FEATURES) != encoder.n_bits:
        raise ValueError(f"{owner}: n={n} disagrees with the encoder's n_bits="
                         f"{encoder.n_bits}.")
    return encoder
