"""Serving a saved :class:`lca.models.Surrogate`: its one tree, without its model.

A Surrogate saved with :meth:`~lca.models.Surrogate.to_json` holds the whole
tree ``T_seed`` of its seed (and its encoder), so a replica started with
``lca serve --model FILE`` answers that tree with no oracle and no query:
``/answer`` and ``/explain`` take points of the encoder's bits (``±1``, as
everywhere in lca) and must name the saved seed; another seed would need the
model, and is refused with a 422 naming ``seed``. Answers are the model's
labels, as :meth:`~lca.models.Surrogate.predict` gives them (``classes_``:
a yes/no tree's two, a multi-class tree's all), each as JSON carries it: a
one-vs-rest surrogate's ``Not(c)`` as its text ``"not c"``, NumPy scalars as
plain numbers. ``/describe`` lists them under ``"classes"``, with the tree's
builder, mode and recorded parameters and the fitted features (their names,
kinds and categories) (:meth:`SavedTree.description`).

Rows of raw feature values (``"rows"`` of ``/answer``, ``"row"`` of
``/explain``) are encoded here with the saved encoder, as
``Surrogate.predict`` encodes them, so they get its answers
(:meth:`SavedTree.encode_rows`).
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Callable
from typing import Any

import numpy as np

from lca.decisions import AnswerStats
from lca.export import ReconstructedTree
from lca.models import BinaryEncoder, Not, QuantileEncoder, Surrogate, ThresholdEncoder
from lca.models._data import plain
from lca.models.questions import category_key
from lca.oracle import Oracle
from lca.reconstruct import Explanation

__all__ = ["SavedTree", "TreeOracle", "load_saved", "served_label"]


class TreeOracle(Oracle):
    """The saved tree as an oracle: names, ``n`` and its own values (for ``/describe``)."""

    def __init__(self, tree: ReconstructedTree) -> None:
        self.tree = tree
        self.n = tree.n
        self.name = tree.oracle
        self.features = dict(tree.features)

    def query(self, points: np.ndarray) -> np.ndarray:
        return self.tree.query(points)


def served_label(label: Any) -> Any:
    """A class label as JSON carries it: ``Not(c)`` as its text ``"not c"``, a NumPy
    scalar as the Python value it holds (a saved surrogate's labels are strings, finite
    numbers or bools: ``to_json`` refuses others)."""
    return str(label) if isinstance(label, Not) else plain(label)


class SavedTree:
    """Answers like a :class:`lca.Reconstructor`, from the complete saved tree of one seed.

    Only the methods and attributes ``lca.serve`` uses: :meth:`answer_many`,
    :meth:`explain`, :attr:`last_stats` (no query is ever spent), and for the
    replies :meth:`labels` (the model's label of each answer), :attr:`classes`
    (every label, JSON-safe, in the order of the surrogate's ``classes_``)
    and :meth:`description`.
    """

    def __init__(self, surrogate: Surrogate) -> None:
        tree = surrogate.tree()
        if not tree.complete:
            raise ValueError("lca serve --model: the saved tree has unexplored nodes; save "
                             "the Surrogate after Surrogate.tree() (to_json does)")
        self.surrogate = surrogate
        self.tree = tree
        self.seed = tree.seed
        self.classes = [served_label(c) for c in surrogate.classes_]
        self.features = describe_features(surrogate.encoder_)
        self._checks = [_cell_check(surrogate.encoder_, j, feature)
                        for j, feature in enumerate(self.features)]
        self.last_stats = AnswerStats()

    def answer_many(self, points: np.ndarray, seed: int, **_: Any) -> np.ndarray:
        """The tree's answers: ``±1``, or a multi-class tree's class indices."""
        assert seed == self.seed, "the app refuses other seeds"
        self.last_stats = AnswerStats()
        return self.tree.query(points)

    def explain(self, z: np.ndarray, seed: int) -> Explanation:
        assert seed == self.seed, "the app refuses other seeds"
        path, nodes, conditions, leaf = self.tree.trace(z)
        self.last_stats = AnswerStats()
        return Explanation(seed, path, leaf.label, nodes, leaf, AnswerStats(), conditions)

    def labels(self, answers: np.ndarray) -> list[Any]:
        """The model's label of each of the tree's answers, as ``Surrogate.predict`` gives
        it (by its own mapping, so the two cannot drift apart), JSON-safe."""
        return [served_label(label)
                for label in self.surrogate.labels(answers).tolist()]

    def description(self) -> dict[str, Any]:
        """What ``/describe`` says of the surrogate beside the oracle and the limits."""
        surrogate, params = self.surrogate, dict(self.tree.params)
        return {
            "mode": surrogate.distribution_,
            "builder": surrogate.tree_.builder,
            "params": params,
            "params_text": ", ".join(f"{key}={value!r}" for key, value in params.items()),
            "classes": self.classes,
            "features": self.features,
        }

    def encode_rows(self, rows: list[list[Any]], field: str) -> np.ndarray:
        """The points of rows of raw feature values (each a list of the fitted columns'
        values, in order), encoded as ``Surrogate.predict`` encodes rows: the saved
        encoder's ``encode`` of them as one array of objects, so that they get its answers.

        Raises ``ValueError`` naming ``field`` and the place at fault (``rows[i]``, or
        ``row`` when ``field`` is ``"row"``), checked first so that the message names the
        cell: a row of another length; in an ordered column a value other than a number
        (``true``/``false`` count as 1 and 0; ``null`` is a missing value in data mode,
        and in product mode in a column whose encoder has missing bins, which any other
        column has no bits for); in a binary one
        other than 0 or 1; in a product-mode categorical one a value ``fit`` never saw,
        which the encoder has no bits for; anywhere an int beyond the largest double.
        ``predict`` refuses the same values. A data-mode categorical column takes any
        other value: one ``fit`` never saw, ``null`` included, answers "no" to each of
        its category questions, as in ``predict``.
        """
        width = len(self.features)
        for i, row in enumerate(rows):
            if len(row) != width:
                raise ValueError(f"'{_place(field, i)}' must hold {width} values, one per "
                                 f"fitted feature in order (GET /describe lists them); got "
                                 f"{len(row)}")
        for i, row in enumerate(rows):
            for j, (valid, expected) in enumerate(self._checks):
                if not valid(row[j]):
                    feature = self.features[j]
                    raise ValueError(f"'{_place(field, i)}[{j}]' (feature {feature['name']!r}, "
                                     f"{feature['kind']}) must be {expected}; got "
                                     f"{_json_text(row[j])}")
        values = np.empty((len(rows), width), dtype=object)
        if rows:  # numpy reads no rows as shape (0,), which does not fit (0, width)
            values[...] = rows
        try:
            return self.surrogate.encoder_.encode(values)
        except (TypeError, ValueError, ArithmeticError) as error:  # the checks leave none
            raise ValueError(f"'{field}' could not be encoded: {error}") from None


def describe_features(encoder: Any) -> list[dict[str, Any]]:
    """Each fitted column, in order: its ``name`` and ``kind``: ``"ordered"`` (numbers,
    compared with the encoder's thresholds), ``"categorical"`` (with its fitted
    ``categories``) or ``"binary"`` (0 or 1, :class:`lca.models.BinaryEncoder`)."""
    ordered: frozenset[int] = getattr(encoder, "ordered_", frozenset())  # number levels
    out: list[dict[str, Any]] = []
    for j, name in enumerate(encoder.feature_names):
        if isinstance(encoder, BinaryEncoder):
            out.append({"name": name, "kind": "binary"})
        elif j in encoder.categories_ and j not in ordered:
            out.append({"name": name, "kind": "categorical",
                        "categories": [plain(c) for c in encoder.categories_[j].tolist()]})
        else:
            out.append({"name": name, "kind": "ordered"})
    return out


def _place(field: str, i: int) -> str:
    return f"{field}[{i}]" if field == "rows" else field


def _json_text(value: Any) -> str:
    """A cell as its request wrote it, cut short (a number may have thousands of digits)."""
    text = "null" if value is None else repr(value) if isinstance(value, str) else \
        str(value).lower() if isinstance(value, bool) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _number(value: Any) -> bool:
    """Whether a JSON value is a number a real column takes: finite as a double."""
    return type(value) in (int, float, bool) and _double(value)


def _double(value: Any) -> bool:
    """Whether a JSON value is no int beyond the largest double (a category is looked up
    as a double, and ``predict`` refuses such an int)."""
    try:
        return type(value) is not int or math.isfinite(float(value))
    except OverflowError:
        return False


_CellCheck = tuple[Callable[[Any], bool], str]
_CATEGORY = "a category: a string, a number finite as a double, true, false or null"


def _cell_check(encoder: Any, j: int, feature: dict[str, Any]) -> _CellCheck:
    """What a value of ``feature`` (column ``j``) must be, and that said in words."""
    kind = feature["kind"]
    # Null is a missing value in data mode, and in product mode where fit saw some.
    if kind == "ordered" and (isinstance(encoder, ThresholdEncoder)
                              or isinstance(encoder, QuantileEncoder)
                              and j in encoder.missing_bin_):
        return (lambda value: value is None or _number(value)), \
            "a number, finite as a double, or null (missing)"
    if kind == "ordered":
        return _number, "a number, finite as a double"
    if kind == "binary":
        return (lambda value: _number(value) and float(value) in (0.0, 1.0)), "0 or 1"
    if not isinstance(encoder, QuantileEncoder):  # data mode: any category answers
        return _double, _CATEGORY
    keys = {category_key(category) for category in feature["categories"]}

    def known(value: Any) -> bool:
        return value is not None and _double(value) and category_key(value) in keys

    return known, (f"one of its categories {feature['categories']} (a product-mode "
                   "surrogate has no bits for another)")


def load_saved(path: str) -> tuple[SavedTree, TreeOracle]:
    """The answerer and the oracle view of the Surrogate saved at ``path``.

    The document is checked whole by :meth:`lca.models.Surrogate.from_json`
    (every field, its consistency with the tree and the encoder, the
    digest) before anything answers from it. Raises ``ValueError`` starting
    ``argument --model:`` if the file cannot be read or is not a saved Surrogate.
    """
    try:
        # A device or a pipe (/dev/zero, a FIFO) would be read forever or block: files only.
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise ValueError(f"argument --model: cannot read {path!r}: not a regular file")
        with open(path, "rb") as handle:  # bytes: json finds the encoding, or says why not
            text = handle.read()
    except OSError as error:
        raise ValueError(f"argument --model: cannot read {path!r}: "
                         f"{error.strerror or error}") from None
    try:
        surrogate = Surrogate.from_json(text)
    except ValueError as error:
        # Said as the option, so that the fields the message names in quotes
        # ('depth', 'seed') are not taken for options of lca serve.
        raise ValueError(f"argument --model: {path!r} is not a saved lca.models.Surrogate: "
                         f"{error}") from None
    answerer = SavedTree(surrogate)
    return answerer, TreeOracle(answerer.tree)
