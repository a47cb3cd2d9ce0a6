"""Readable trees out: the part of ``T_seed`` decided so far, as one frozen object.

:meth:`lca.Reconstructor.export` collects the decisions a reconstructor holds
(node cache, and the record when ``record=True``);
:meth:`lca.Reconstructor.materialize` decides the top levels first. Both
return a :class:`ReconstructedTree`, which evaluates points
(:meth:`~ReconstructedTree.query`), writes and reads JSON and converts to
:class:`lca.targets.DecisionTree`. Its readable views (text rules, Graphviz
DOT, a matplotlib drawing of the top levels) are :mod:`lca.render`'s; the
methods :meth:`~ReconstructedTree.to_text`, ``to_dot``, ``draw`` and
``shown`` call them.

A node that was never decided (or was evicted from the cache and not
recorded) is *unexplored*: it is shown as such, and :meth:`query` refuses a
point that reaches it rather than guessing. Conditions are the oracle's
readable ones (:meth:`lca.oracle.Oracle.describe`), captured at export time,
so a tree read back from JSON prints the same without its oracle.

Everything here is a deterministic function of the decisions exported: the
tree holds exactly the decisions of ``T_seed`` that the reconstructor made.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from lca import render
from lca._tree_json import FORMAT, FORMAT_VERSION, read_document
from lca.decisions import ClassLeafDecision, LeafDecision, RowsSplit, Split, TreeNode, split_rows
from lca.derive import Path
from lca.oracle import check_points
from lca.params import Params
from lca.render import Shown
from lca.targets import DecisionTree

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "ReconstructedTree",
    "Shown",
    "UnexploredNodeError",
]



class UnexploredNodeError(LookupError):
    """A point reached a node of ``T_seed`` that the exported tree does not hold.

    Attributes:
        path: the unexplored node, as ``(variable, bit)`` pairs from the root.
    """

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


@dataclass(frozen=True)
class ReconstructedTree:
    """The decided part of ``T_seed``: internal nodes, leaves, unexplored subtrees.

    Attributes:
        seed: the seed of ``T_seed``.
        n: number of variables.
        oracle: the oracle's name.
        params: the :class:`lca.Params` fields (``dataclasses.asdict``).
        decisions: decision of every node held, keyed by its path
            (``(variable, bit)`` pairs from the root); only nodes reachable
            from the root through decided nodes are kept.
        conditions: for each internal node, the readable conditions of its
            ``-1`` and ``+1`` branches, from the oracle's ``describe``.
        features: the readable name of the feature each variable on a node
            belongs to (from the oracle's ``feature_of``, e.g. a model
            wrapped by :mod:`lca.models`); a variable without one is shown
            as ``x<i>``.
        class_names: readable names of the ``-1`` and ``+1`` labels (from
            the oracle's ``label_names``), or ``None`` for ``-1``/``+1``; in
            a multi-class tree (leaves :class:`lca.decisions.ClassLeafDecision`,
            whose label is a class index) one name per class.
        uniform_mass: whether a leaf's probability under uniform points is
            its share of the inputs (true when the variables are independent
            uniform bits, as for a reconstructed oracle or the encoder's
            product distribution). False for a data-mode surrogate's
            threshold questions, which are neither: its text then shows no
            share.
    """

    seed: int
    n: int
    oracle: str
    params: Mapping[str, Any]
    decisions: Mapping[Path, TreeNode]
    conditions: Mapping[Path, tuple[str, str]]
    features: Mapping[int, str] = dataclasses.field(default_factory=dict)
    class_names: tuple[str, ...] | None = None
    uniform_mass: bool = True

    # -- structure -------------------------------------------------------------

    def walk(self) -> Iterator[tuple[Path, TreeNode | None]]:
        """Every node in pre-order (``-1`` branch first); ``None`` marks an unexplored one."""
        stack: list[Path] = [()]
        while stack:
            path = stack.pop()
            decision = self.decisions.get(path)
            yield path, decision
            if isinstance(decision, Split):
                stack.append(path + ((decision.variable, 1),))
                stack.append(path + ((decision.variable, -1),))

    @property
    def internal_nodes(self) -> dict[Path, Split]:
        """The internal nodes held, by path."""
        return {p: d for p, d in self.decisions.items() if isinstance(d, Split)}

    @property
    def leaves(self) -> dict[Path, LeafDecision]:
        """The leaves held, by path (in adaptive mode, early leaves too)."""
        return {p: d for p, d in self.decisions.items() if isinstance(d, LeafDecision)}

    @property
    def unexplored(self) -> tuple[Path, ...]:
        """The roots of the unexplored subtrees, in pre-order."""
        return tuple(path for path, decision in self.walk() if decision is None)

    @property
    def complete(self) -> bool:
        """Whether every root-to-leaf path ends in a decided leaf."""
        return not self.unexplored

    @property
    def multiclass(self) -> bool:
        """Whether the leaves answer a class index into :attr:`class_names` (not ``±1``)."""
        return any(isinstance(d, ClassLeafDecision) for d in self.decisions.values())

    def describe_path(self, path: Path) -> str:
        """The conditions along ``path`` joined by ``' -> '``, or ``'(root)'``."""
        steps = []
        for i, (variable, bit) in enumerate(path):
            minus, plus = self.conditions.get(
                path[:i], (f"x{variable}=-1", f"x{variable}=+1"))
            steps.append(plus if bit > 0 else minus)
        return " -> ".join(steps) or "(root)"

    # -- evaluation ------------------------------------------------------------

    def trace(self, z: np.ndarray) -> tuple[Path, tuple[Split, ...], tuple[str, ...],
                                            LeafDecision]:
        """The path of one point ``z`` (``n`` values ``±1``, as checked by the caller)
        down this tree: its steps, the nodes passed, their conditions on ``z``'s
        side, and the leaf reached.

        Raises:
            UnexploredNodeError: ``z`` reaches an unexplored node.
        """
        path: Path = ()
        nodes: list[Split] = []
        conditions: list[str] = []
        decision = self.decisions.get(path)
        while isinstance(decision, Split):
            bit = int(z[decision.variable])
            nodes.append(decision)
            conditions.append(self.conditions[path][0 if bit < 0 else 1])
            path = path + ((decision.variable, bit),)
            decision = self.decisions.get(path)
        if decision is None:
            raise UnexploredNodeError(
                f"ReconstructedTree.trace: the point reaches node {self.describe_path(path)} "
                f"(path {path}), which is unexplored in this export of T_{self.seed}", path)
        return path, tuple(nodes), tuple(conditions), decision

    def query(self, points: Any) -> np.ndarray:
        """The tree's label on every row of an ``(m, n)`` array of ``±1``, as ``int8``
        (a multi-class tree: the class index into :attr:`class_names`, as ``int64``).

        Raises:
            UnexploredNodeError: a row reaches an unexplored node (the error
                names the node and the first such row).
        """
        points = check_points(points, self.n, what="points")
        out = np.zeros(points.shape[0], dtype=np.int64 if self.multiclass else np.int8)
        groups: dict[Path, np.ndarray] = {(): np.arange(points.shape[0])}
        while groups:
            next_groups: dict[Path, np.ndarray] = {}
            for path, rows in groups.items():
                decision = self.decisions.get(path)
                if decision is None:
                    raise UnexploredNodeError(
                        f"ReconstructedTree.query: row {int(rows.min())} reaches node "
                        f"{self.describe_path(path)} (path {path}), which is unexplored "
                        f"in this export of T_{self.seed}; decide it with "
                        "Reconstructor.materialize or answer the row with "
                        "Reconstructor.answer_many", path)
                if isinstance(decision, LeafDecision):
                    out[rows] = decision.label
                    continue
                next_groups |= split_rows(points, rows, path, decision.variable)
            groups = next_groups
        return out

    def to_decision_tree(self) -> DecisionTree:
        """The tree as a :class:`lca.targets.DecisionTree` (needs a complete tree).

        ``DecisionTree`` has no notion of an unexplored subtree, so an
        incomplete tree is refused with ``ValueError`` rather than filled in.
        """
        if self.multiclass:
            raise ValueError("ReconstructedTree.to_decision_tree: the leaves of this tree "
                             f"answer one of {len(self.class_names or ())} classes, and "
                             "lca.targets.DecisionTree holds -1/+1 labels only")
        missing = self.unexplored
        if missing:
            raise ValueError(
                f"ReconstructedTree.to_decision_tree: {len(missing)} subtree(s) are "
                f"unexplored (first: {self.describe_path(missing[0])}) and "
                "lca.targets.DecisionTree cannot represent them; materialize the whole "
                "tree first (Reconstructor.materialize(seed))")
        order = [path for path, _ in self.walk()]
        ids = {path: i for i, path in enumerate(order)}
        size = len(order)
        var = np.full(size, -1, dtype=np.int64)
        minus = np.full(size, -1, dtype=np.int64)
        plus = np.full(size, -1, dtype=np.int64)
        value = np.zeros(size, dtype=np.int64)
        for path, i in ids.items():
            decision = self.decisions[path]
            if isinstance(decision, Split):
                var[i] = decision.variable
                minus[i] = ids[path + ((decision.variable, -1),)]
                plus[i] = ids[path + ((decision.variable, 1),)]
            else:
                value[i] = decision.label
        return DecisionTree(self.n, var, minus, plus, value)

    # -- readable output: lca.render ---------------------------------------------

    def shown(self, merge: bool = True) -> dict[Path, Shown]:
        """Every node as drawn, equal-label sibling leaves merged (:func:`lca.render.shown`)."""
        return render.shown(self, merge)

    def to_text(self, merge: bool = True) -> str:
        """Indented rules, one line per branch (:func:`lca.render.to_text`)."""
        return render.to_text(self, merge)

    def to_dot(self, merge: bool = True) -> str:
        """Graphviz DOT of the tree (:func:`lca.render.to_dot`)."""
        return render.to_dot(self, merge)

    # -- JSON ------------------------------------------------------------------

    def to_json(self, indent: int | None = None) -> str:
        """JSON with a format tag and version; :meth:`from_json` reads it back exactly.

        The document is an object with ``"format": "lca.ReconstructedTree"``,
        ``"version": 1``, ``"seed"``, ``"n"``, ``"oracle"`` (its name),
        ``"params"`` (the :class:`lca.Params` fields) and ``"nodes"``: the
        decided nodes in pre-order (``-1`` branch first), each
        ``{"path": [[variable, bit], ...], "kind": "node" | "split" | "leaf" | "class",
        "decision": {field: value, ...}}`` plus, for ``"node"``,
        ``"conditions": [if_minus, if_plus]``. A child of a ``"node"`` that is
        not listed is unexplored; ``"class"`` is the leaf of a multi-class
        tree (:class:`lca.decisions.ClassLeafDecision`). Decisions are written field by field
        (``dataclasses.asdict``), so new decision fields are carried without
        changes here. Optional: ``"features"`` (``{variable: name}``),
        ``"class_names"`` (``[minus, plus]``, or one per class), written when the tree has them,
        and ``"uniform_mass": false`` when :attr:`uniform_mass` is false.
        """
        nodes = []
        for path, decision in self.walk():
            if decision is None:
                continue
            entry: dict[str, Any] = {
                "path": [list(step) for step in path],
                "kind": "split" if isinstance(decision, RowsSplit) else
                        "node" if isinstance(decision, Split) else
                        "class" if isinstance(decision, ClassLeafDecision) else "leaf",
                "decision": dataclasses.asdict(decision),
            }
            if isinstance(decision, Split):
                entry["conditions"] = list(self.conditions[path])
            nodes.append(entry)
        document = {"format": FORMAT, "version": FORMAT_VERSION, "seed": self.seed,
                    "n": self.n, "oracle": self.oracle, "params": dict(self.params),
                    "nodes": nodes, **_readable_fields(self)}
        return json.dumps(document, indent=indent)

    @classmethod
    def from_json(cls, text: str | bytes) -> ReconstructedTree:
        """The tree written by :meth:`to_json`, checked node by node.

        Every document is checked before a tree is built, so a tree read
        back answers exactly as the one written, or not at all: the format
        and version; the keys of every object, each given once; ``seed`` an
        int in ``[0, 2**64)``, ``n`` in ``[1, 2**31 - 1]``, ``params`` with
        the same ``n`` and an int ``depth``; every path a list of
        ``[variable, bit]`` pairs with bits ``±1``, variables in ``[0, n)``,
        none twice, at most ``min(depth, n)`` steps; paths all different and
        forming one tree (each entry's parent listed, a node whose variable
        is the entry's last step); every decision field of its type, leaf
        labels ``±1``, node variables in ``[0, n)`` and not on their path.

        Raises:
            TypeError: ``text`` is not a ``str`` or ``bytes``.
            ValueError: anything else is wrong; the message names the node
                (its path and entry number) and the field.
        """
        return cls(**read_document(text))
    def draw(self, max_levels: int = 4, ax: Any = None, merge: bool = True) -> Any:
        """Draw the nodes down to depth ``max_levels`` with matplotlib (:func:`lca.render.draw`)."""
        return render.draw(self, max_levels, ax, merge)


def _readable_fields(tree: ReconstructedTree) -> dict[str, Any]:
    """The optional readable fields of the JSON document (absent when empty)."""
    fields: dict[str, Any] = {}
    if tree.features:
        fields["features"] = {str(variable): name for variable, name in
                              sorted(tree.features.items())}
    if tree.class_names is not None:
        fields["class_names"] = list(tree.class_names)
    if not tree.uniform_mass:
        fields["uniform_mass"] = False
    return fields


class Described(Protocol):
    """What names a tree's conditions: an :class:`lca.Oracle`, or a model's answers on rows."""

    name: str

    def describe(self, variable: int, bit: int, path: Path = ()) -> str:
        """The condition ``variable = bit`` in the oracle's words."""


def tree_from_decisions(oracle: Described, params: Params | Mapping[str, Any], seed: int,
                        known: Mapping[Path, TreeNode]) -> ReconstructedTree:
    """The tree of the decisions in ``known`` reachable from the root of ``T_seed``.

    ``params`` is what built them: :class:`lca.Params`, or the record of
    another builder (a mapping with at least ``n`` and ``depth``, such as a
    data-mode surrogate's). Conditions come from ``oracle.describe``; node
    names from ``oracle.feature_of(variable)`` and label names from
    ``oracle.label_names`` when the oracle has them (a model wrapped by
    :mod:`lca.models`). Used by :meth:`lca.Reconstructor.export`,
    :meth:`lca.Reconstructor.materialize` and the data-mode surrogate.
    """
    decisions: dict[Path, TreeNode] = {}
    conditions: dict[Path, tuple[str, str]] = {}
    stack: list[Path] = [()]
    while stack:
        path = stack.pop()
        decision = known.get(path)
        if decision is None:
            continue
        decisions[path] = decision
        if isinstance(decision, Split):
            conditions[path] = (oracle.describe(decision.variable, -1, path),
                                oracle.describe(decision.variable, 1, path))
            stack += [path + ((decision.variable, bit),) for bit in (1, -1)]
    feature_of = getattr(oracle, "feature_of", None)
    features = {} if feature_of is None else {
        decision.variable: feature_of(decision.variable)
        for decision in decisions.values() if isinstance(decision, Split)}
    names = getattr(oracle, "label_names", None)
    record = dataclasses.asdict(params) if isinstance(params, Params) else dict(params)
    return ReconstructedTree(seed=seed, n=record["n"], oracle=oracle.name,
                             params=record, decisions=decisions,
                             conditions=conditions, features=features,
                             class_names=None if names is None else tuple(names))
