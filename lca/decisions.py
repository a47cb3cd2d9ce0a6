"""What reconstruction decides: node and leaf decisions, work statistics, routing.

The low module both :mod:`lca.reconstruct` (which makes decisions) and
:mod:`lca.export` (which reads them back) build on, so neither imports the
other's internals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lca.derive import Path

__all__ = ["AnswerStats", "ClassLeafDecision", "Decision", "LeafDecision", "NodeDecision",
           "RowsSplit", "Split", "TreeNode", "agreeing", "is_guessed"]


@dataclass(frozen=True)
class Split:
    """An internal node of any tree: the variable it splits on.

    Every builder's node records this much, and everything that routes a
    point reads only this; each builder's own record adds what chose the
    variable (:class:`NodeDecision` for the reconstructor's estimators,
    :class:`RowsSplit` for a data-mode surrogate).
    """

    variable: int


@dataclass(frozen=True)
class NodeDecision(Split):
    """An internal node of the reconstructor: the chosen variable and the counts that chose it.

    ``certified`` is ``None`` in fixed mode; in adaptive mode it says whether
    the anytime bounds certified the choice before the sample cap; with the
    search estimator, whether the lead was certified.

    Score estimator: ``samples`` pairs ``(x, y)``, ``disagreements`` ``D``,
    ``agreements`` ``C`` of the chosen variable; ``margin`` is
    ``C_runner_up - C_chosen``. Search estimator: ``samples`` pairs,
    ``disagreements`` of them searched, ``agreements`` 0, ``votes`` the
    chosen variable's, ``rule`` the test that chose it (``"influence"``, or
    ``"correlation"`` when nothing was flipped, :mod:`lca.search`) and
    ``margin`` its paired flip-edge lead over the runner-up.
    ``low_margin``: the lead fails a sign test (:func:`lca.estimate.lead_is_certified`;
    docs/theory.md §7), so the choice over the runner-up is close to a guess
    (harmless when the two are equally good splits).
    ``guesswork``: the chosen variable is not measurably better than one
    drawn at random (:func:`lca.search.is_guesswork`,
    :func:`lca.estimate.is_guesswork`): the split itself is close to a guess.
    """

    samples: int
    disagreements: int
    agreements: int
    certified: bool | None = None
    runner_up: int | None = None
    margin: int | None = None
    low_margin: bool = False
    votes: int | None = None
    rule: str | None = None
    guesswork: bool = False


@dataclass(frozen=True)
class RowsSplit(Split):
    """An internal node of a data-mode surrogate (:mod:`lca.models.rows`).

    ``points`` the points it decided on, ``rows`` of them fitted rows (the
    rest drawn in its region); the variable is the question of largest Gini
    gain over them.
    """

    points: int
    rows: int


@dataclass(frozen=True)
class LeafDecision:
    """A leaf: its label and the sample sum that set it (``certified`` as for nodes)."""

    label: int
    samples: int
    total: int
    certified: bool | None = None


@dataclass(frozen=True)
class ClassLeafDecision(LeafDecision):
    """A leaf of a multi-class tree (one whose leaves answer one of ``K > 2`` classes).

    ``label`` is the class's index in the tree's ``class_names`` (``0 .. K-1``,
    not ``±1``); ``samples`` the points behind the leaf; ``total`` how many
    of them the model labels with that class (they agree with the leaf).
    A subclass so that everything that routes a point to its leaf treats it
    as a leaf; what reads ``label`` as ``±1`` checks for it.
    """


def agreeing(leaf: LeafDecision) -> int:
    """How many of the leaf's ``samples`` points carry its label."""
    if isinstance(leaf, ClassLeafDecision):
        return leaf.total
    return (leaf.samples + leaf.label * leaf.total) // 2


Decision = NodeDecision | LeafDecision
"""What the reconstructor decides at a node."""
TreeNode = Split | LeafDecision
"""A node of any tree (:class:`lca.export.ReconstructedTree`): a split or a leaf."""


@dataclass
class AnswerStats:
    """Work done: queries to ``f``, nodes and leaves built, cache hits.

    Adaptive and efficient mode also count decisions that reached their
    sample cap without a certificate (``uncertified``, early leaves of the
    efficient mode's "no structure" rule included) and nodes that became
    leaves early (``early_leaves``), of which ``certified_leaves`` carry a
    certificate (docs/theory.md §6 and §7). ``low_margin`` counts nodes
    built whose choice failed the sign test against the runner-up,
    ``guesswork`` nodes built whose choice is not measurably better than a
    random variable, and ``guesswork_answers`` the answers of the call whose
    leaf label is close to a coin flip (:func:`is_guessed`; what
    :class:`lca.LowMarginWarning` reads). ``oracle_calls`` counts the batched
    calls to ``f`` that carried those queries.
    """

    queries: int = 0
    nodes_built: int = 0
    leaves_built: int = 0
    cache_hits: int = 0
    uncertified: int = 0
    early_leaves: int = 0
    low_margin: int = 0
    oracle_calls: int = 0
    certified_leaves: int = 0
    guesswork: int = 0
    guesswork_answers: int = 0

    def __iadd__(self, other: AnswerStats) -> AnswerStats:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        return self

    def count(self, decision: Decision, path_length: int, depth: int) -> None:
        """Count one decision built at a node of ``depth`` on paths of ``path_length``."""
        if isinstance(decision, LeafDecision):
            self.leaves_built += 1
            self.early_leaves += depth < path_length
            self.certified_leaves += depth < path_length and decision.certified is True
        else:
            self.nodes_built += 1
            self.low_margin += decision.low_margin
            self.guesswork += decision.guesswork
        self.uncertified += decision.certified is False


# A leaf's label is a guess when |sum| < sqrt(2 N ln 40): if f were balanced
# on the leaf, a label passes with probability at most 2 e^(-ln 40) = 1/20.
_GUESS_LOG = math.log(40)


def is_guessed(leaf: LeafDecision) -> bool:
    """Is the leaf's label close to a coin flip? Its sample sum fails a sign test.

    Hoeffding: if ``f`` were balanced on the leaf, ``|total|`` over
    ``samples`` points would reach ``t`` with probability at most ``2
    exp(-t^2 / (2 samples))``; the label is a guess unless ``total^2 >= 2
    samples ln 40`` (a 5% two-sided test). Reporting only.
    """
    return leaf.total * leaf.total < 2 * leaf.samples * _GUESS_LOG


def split_rows(points: np.ndarray, rows: np.ndarray, path: Path,
               variable: int) -> dict[Path, np.ndarray]:
    """Route the ``rows`` of ``points`` at node ``path`` to its children by ``variable``."""
    values = points[rows, variable]
    children = {}
    for bit in (-1, 1):
        chosen = rows[values == bit]
        if chosen.size:
            children[path + ((variable, bit),)] = chosen
    return children
