"""Serving a saved :class:`lca.models.Surrogate`: its one tree, without its model.

A Surrogate saved with :meth:`~lca.models.Surrogate.to_json` holds the whole
tree ``T_seed`` of its seed (and its encoder), so a replica started with
``lca serve --model FILE`` answers that tree with no oracle and no query:
``/answer`` and ``/explain`` take points of the encoder's bits (``±1``, as
everywhere in lca) and must name the saved seed; another seed would need the
model, and is refused with a 422 naming ``seed``. A multi-class surrogate
(one tree whose leaves answer a class) answers the model's class labels,
which ``/describe`` lists under ``"classes"``.
"""

from __future__ import annotations

import os
import stat
from typing import Any

import numpy as np

from lca.decisions import AnswerStats
from lca.export import ReconstructedTree
from lca.oracle import Oracle
from lca.reconstruct import Explanation

__all__ = ["SavedTree", "TreeOracle", "load_saved"]


class TreeOracle(Oracle):
    """The saved tree as an oracle: names, ``n`` and its own values (for ``/describe``)."""

    def __init__(self, tree: ReconstructedTree) -> None:
        self.tree = tree
        self.n = tree.n
        self.name = tree.oracle
        self.features = dict(tree.features)

    def query(self, points: np.ndarray) -> np.ndarray:
        return self.tree.query(points)


class SavedTree:
    """Answers like a :class:`lca.Reconstructor`, from a complete saved tree of one seed.

    Only the methods and attributes ``lca.serve`` uses: :meth:`answer_many`,
    :meth:`explain`, :attr:`last_stats` (no query is ever spent), and
    :attr:`classes`: the model's class labels of a multi-class tree (whose
    answers are indices into them), else ``None`` (answers ``±1``).
    """

    def __init__(self, tree: ReconstructedTree, classes: list[Any] | None = None) -> None:
        if not tree.complete:
            raise ValueError("lca serve --model: the saved tree has unexplored nodes; save "
                             "the Surrogate after Surrogate.tree() (to_json does)")
        self.tree = tree
        self.seed = tree.seed
        self.classes = classes
        self.last_stats = AnswerStats()

    def answer_many(self, points: np.ndarray, seed: int, **_: Any) -> np.ndarray:
        assert seed == self.seed, "the app refuses other seeds"
        self.last_stats = AnswerStats()
        return self.tree.query(points)

    def explain(self, z: np.ndarray, seed: int) -> Explanation:
        assert seed == self.seed, "the app refuses other seeds"
        path, nodes, conditions, leaf = self.tree.trace(z)
        self.last_stats = AnswerStats()
        return Explanation(seed, path, leaf.label, nodes, leaf, AnswerStats(), conditions)


def load_saved(path: str) -> tuple[SavedTree, TreeOracle]:
    """The answerer and the oracle view of the Surrogate saved at ``path``.

    The document is checked whole by :meth:`lca.models.Surrogate.from_json`
    (every field, its consistency with the tree and the encoder, the
    digest) before anything answers from it. Raises ``ValueError`` starting
    ``argument --model:`` if the file cannot be read or is not a saved Surrogate.
    """
    from lca.models import Surrogate
    from lca.models._data import plain

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
    tree = surrogate.tree()
    classes = [plain(c) for c in surrogate.classes_] if tree.multiclass else None
    return SavedTree(tree, classes), TreeOracle(tree)
