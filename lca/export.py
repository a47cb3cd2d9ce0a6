"""Readable trees out: the part of ``T_seed`` decided so far, as one frozen object.

:meth:`lca.Reconstructor.export` collects the decisions a reconstructor holds
(node cache, and the record when ``record=True``);
:meth:`lca.Reconstructor.materialize` decides the top levels first. Both
return a :class:`ReconstructedTree`, which evaluates points
(:meth:`~ReconstructedTree.query`), prints rules
(:meth:`~ReconstructedTree.to_text`), writes JSON and Graphviz DOT, converts to
:class:`lca.targets.DecisionTree` and draws its top levels with matplotlib.

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
import textwrap
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from lca._tree_json import FORMAT, FORMAT_VERSION, read_document
from lca._validate import check_int
from lca.derive import Path
from lca.oracle import Oracle, check_points
from lca.decisions import Decision, LeafDecision, NodeDecision, split_rows
from lca.params import Params
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
class Shown:
    """A node of :meth:`ReconstructedTree.shown`: an internal node, a leaf or an unexplored subtree.

    A leaf carries its label, its samples and how many of them agree with
    the label (summed over merged leaves), ``mass`` its probability under
    uniform points, and ``merged`` the number of splits merged into it.
    """

    kind: str
    label: int = 0
    samples: int = 0
    agree: int = 0
    mass: float = 0.0
    merged: int = 0
    variable: int = -1


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
            the oracle's ``label_names``), or ``None`` for ``-1``/``+1``.
    """

    seed: int
    n: int
    oracle: str
    params: Mapping[str, Any]
    decisions: Mapping[Path, Decision]
    conditions: Mapping[Path, tuple[str, str]]
    features: Mapping[int, str] = dataclasses.field(default_factory=dict)
    class_names: tuple[str, str] | None = None

    # -- structure -------------------------------------------------------------

    def walk(self) -> Iterator[tuple[Path, Decision | None]]:
        """Every node in pre-order (``-1`` branch first); ``None`` marks an unexplored one."""
        stack: list[Path] = [()]
        while stack:
            path = stack.pop()
            decision = self.decisions.get(path)
            yield path, decision
            if isinstance(decision, NodeDecision):
                stack.append(path + ((decision.variable, 1),))
                stack.append(path + ((decision.variable, -1),))

    @property
    def internal_nodes(self) -> dict[Path, NodeDecision]:
        """The internal nodes held, by path."""
        return {p: d for p, d in self.decisions.items() if isinstance(d, NodeDecision)}

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

    def describe_path(self, path: Path) -> str:
        """The conditions along ``path`` joined by ``' -> '``, or ``'(root)'``."""
        steps = []
        for i, (variable, bit) in enumerate(path):
            minus, plus = self.conditions.get(
                path[:i], (f"x{variable}=-1", f"x{variable}=+1"))
            steps.append(plus if bit > 0 else minus)
        return " -> ".join(steps) or "(root)"

    # -- evaluation ------------------------------------------------------------

    def trace(self, z: np.ndarray) -> tuple[Path, tuple[NodeDecision, ...], tuple[str, ...],
                                            LeafDecision]:
        """The path of one point ``z`` (``n`` values ``±1``, as checked by the caller)
        down this tree: its steps, the nodes passed, their conditions on ``z``'s
        side, and the leaf reached.

        Raises:
            UnexploredNodeError: ``z`` reaches an unexplored node.
        """
        path: Path = ()
        nodes: list[NodeDecision] = []
        conditions: list[str] = []
        decision = self.decisions.get(path)
        while isinstance(decision, NodeDecision):
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
        """The tree's label on every row of an ``(m, n)`` array of ``±1``, as ``int8``.

        Raises:
            UnexploredNodeError: a row reaches an unexplored node (the error
                names the node and the first such row).
        """
        points = check_points(points, self.n, what="points")
        out = np.zeros(points.shape[0], dtype=np.int8)
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
            if isinstance(decision, NodeDecision):
                var[i] = decision.variable
                minus[i] = ids[path + ((decision.variable, -1),)]
                plus[i] = ids[path + ((decision.variable, 1),)]
            else:
                value[i] = decision.label
        return DecisionTree(self.n, var, minus, plus, value)

    # -- readable output -------------------------------------------------------

    def shown(self, merge: bool = True) -> dict[Path, Shown]:
        """Every node as drawn: with ``merge``, equal-label sibling leaves become one leaf.

        A node whose two subtrees are (after merging) leaves with the same
        label is shown as one leaf carrying their summed samples and shares:
        the tree computes the same function, with fewer splits on paper.
        Keys are the paths of the nodes shown (children of a merged node are
        not shown). A deterministic function of the tree.
        """
        views: dict[Path, Shown] = {}
        for path, decision in reversed(list(self.walk())):  # children before parents
            if decision is None:
                views[path] = Shown("unexplored")
            elif isinstance(decision, LeafDecision):
                views[path] = Shown("leaf", decision.label, decision.samples,
                                    (decision.samples + decision.label * decision.total) // 2,
                                    0.5 ** len(path))
            else:
                minus, plus = (views[path + ((decision.variable, bit),)] for bit in (-1, 1))
                if merge and minus.kind == plus.kind == "leaf" and minus.label == plus.label:
                    views[path] = Shown("leaf", minus.label, minus.samples + plus.samples,
                                        minus.agree + plus.agree, minus.mass + plus.mass,
                                        minus.merged + plus.merged + 1)
                else:
                    views[path] = Shown("node", variable=decision.variable)
        kept: dict[Path, Shown] = {}
        stack: list[Path] = [()]
        while stack:
            path = stack.pop()
            kept[path] = views[path]
            if views[path].kind == "node":
                variable = views[path].variable
                stack += [path + ((variable, bit),) for bit in (1, -1)]
        return kept

    def _label_text(self, label: int) -> str:
        if self.class_names is None:
            return f"{label:+d}"
        return self.class_names[0 if label < 0 else 1]

    def _leaf_text(self, view: Shown, lines: bool = False) -> str:
        """``label (12.5% of inputs, 60/64 samples agree)``, or on three lines."""
        parts = [f"{_percent(view.mass)} of inputs"]
        if view.samples:
            parts.append(f"{view.agree}/{view.samples} samples agree")
        if lines:
            return "\n".join([self._label_text(view.label), *parts])
        return f"{self._label_text(view.label)} ({', '.join(parts)})"

    def _node_name(self, variable: int) -> str:
        return self.features.get(variable, f"x{variable}")

    def _summary(self, views: Mapping[Path, Shown]) -> str:
        merged = sum(view.merged for view in views.values())
        line = (f"T_{self.seed} of {self.oracle} (n={self.n}): "
                f"{len(self.internal_nodes)} internal nodes, {len(self.leaves)} "
                f"leaves, {len(self.unexplored)} unexplored")
        if merged:
            line += (f"; {merged} split(s) whose leaves all have one label shown merged "
                     "(the function is unchanged)")
        return line

    def to_text(self, merge: bool = True) -> str:
        """Indented rules: one line per branch, its condition, then its subtree.

        A leaf is shown as its class name (``class_names``; else
        ``+1``/``-1``) with its share of the inputs (its probability under
        the uniform distribution of points, which is the encoder's product
        distribution for a model) and how many of its samples agree with its
        label; an unexplored subtree as ``(unexplored)``. With ``merge``
        (the default) a split whose leaves all have one label is shown as
        one leaf, and the header says how many: the function is unchanged.
        """
        views = self.shown(merge)
        lines = [self._summary(views)]

        def outcome(path: Path) -> str | None:
            view = views[path]
            if view.kind == "unexplored":
                return "(unexplored)"
            if view.kind == "leaf":
                return self._leaf_text(view)
            return None

        def emit(path: Path, indent: int) -> None:
            variable = views[path].variable
            for bit, condition in zip((-1, 1), self.conditions[path]):
                child = path + ((variable, bit),)
                end = outcome(child)
                if end is None:
                    lines.append(f"{'    ' * indent}{condition}:")
                    emit(child, indent + 1)
                else:
                    lines.append(f"{'    ' * indent}{condition}: {end}")

        root = outcome(())
        if root is None:
            emit((), 0)
        else:
            lines.append(root)
        return "\n".join(lines)

    def to_dot(self, merge: bool = True) -> str:
        """Graphviz DOT: internal nodes named by their feature, branch conditions on the edges.

        Leaves are boxes with their class name and shares (as in
        :meth:`to_text`); unexplored subtrees are dashed boxes labelled
        ``unexplored``. ``merge`` as in :meth:`to_text`; the graph's label
        says how many splits were merged.
        """
        views = self.shown(merge)
        lines = [f"digraph T_{self.seed} {{", '  node [fontname="Helvetica"];',
                 '  edge [fontname="Helvetica", fontsize=10];',
                 f'  label="{_dot_escape(self._summary(views))}"; labelloc=t; fontsize=10;']
        ids: dict[Path, str] = {}
        for path, view in views.items():  # pre-order: parents first
            name = ids[path] = f"n{len(ids)}"
            if view.kind == "unexplored":
                lines.append(f'  {name} [label="unexplored", shape=box, style=dashed];')
            elif view.kind == "leaf":
                lines.append(f'  {name} [label="{_dot_escape(self._leaf_text(view, lines=True))}", '
                             'shape=box];')
            else:
                lines.append(f'  {name} [label="{_dot_escape(self._node_name(view.variable))}"'
                             ', shape=ellipse];')
            if path:
                parent = path[:-1]
                bit = path[-1][1]
                condition = self.conditions[parent][0 if bit < 0 else 1]
                lines.append(f'  {ids[parent]} -> {name} [label="{_dot_escape(condition)}"];')
        lines.append("}")
        return "\n".join(lines) + "\n"

    # -- JSON ------------------------------------------------------------------

    def to_json(self, indent: int | None = None) -> str:
        """JSON with a format tag and version; :meth:`from_json` reads it back exactly.

        The document is an object with ``"format": "lca.ReconstructedTree"``,
        ``"version": 1``, ``"seed"``, ``"n"``, ``"oracle"`` (its name),
        ``"params"`` (the :class:`lca.Params` fields) and ``"nodes"``: the
        decided nodes in pre-order (``-1`` branch first), each
        ``{"path": [[variable, bit], ...], "kind": "node" | "leaf",
        "decision": {field: value, ...}}`` plus, for ``"node"``,
        ``"conditions": [if_minus, if_plus]``. A child of a ``"node"`` that is
        not listed is unexplored. Decisions are written field by field
        (``dataclasses.asdict``), so new decision fields are carried without
        changes here. Optional: ``"features"`` (``{variable: name}``) and
        ``"class_names"`` (``[minus, plus]``), written when the tree has them.
        """
        nodes = []
        for path, decision in self.walk():
            if decision is None:
                continue
            entry: dict[str, Any] = {
                "path": [list(step) for step in path],
                "kind": "node" if isinstance(decision, NodeDecision) else "leaf",
                "decision": dataclasses.asdict(decision),
            }
            if isinstance(decision, NodeDecision):
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

    # -- drawing ---------------------------------------------------------------

    def draw(self, max_levels: int = 4, ax: Any = None, merge: bool = True) -> Any:
        """Draw the top ``max_levels`` levels with matplotlib; returns the axes.

        Internal nodes are named by their feature, leaves by their class
        with their shares (as in :meth:`to_text`), edges by their
        conditions. Nodes deeper than ``max_levels - 1`` are not drawn; an
        internal node whose children are cut off is marked ``…``. ``merge``
        as in :meth:`to_text` (the title says how many splits were merged).
        matplotlib is imported on use (``pip install 'lca[plot]'``).
        """
        max_levels = check_int("ReconstructedTree.draw", "max_levels", max_levels, 1)
        try:
            import matplotlib.pyplot as plt
        except ImportError as error:  # pragma: no cover - depends on the environment
            raise ImportError("ReconstructedTree.draw needs matplotlib "
                              "(pip install 'lca[plot]')") from error
        if ax is None:
            _, ax = plt.subplots(figsize=(min(2 + 2.6 * 2 ** (max_levels - 1), 30),
                                          1.4 * max_levels + 0.6))
        views = self.shown(merge)
        shown = [(p, v) for p, v in views.items() if len(p) < max_levels]
        # x: drawn leaves (bottom of what is shown) take consecutive slots,
        # parents sit midway between their children; y: minus the depth.
        x: dict[Path, float] = {}
        slot = 0
        for path, view in reversed(shown):  # children before parents
            children = [c for c in (path + ((view.variable, b),) for b in (-1, 1)) if c in x]
            if view.kind == "node" and children:
                x[path] = sum(x[c] for c in children) / len(children)
            else:
                x[path] = float(slot)
                slot += 1
        # reversed pre-order numbers the rightmost first; mirror to read left to right.
        right = max(x.values())
        x = {p: right - v for p, v in x.items()}
        box = dict(boxstyle="round,pad=0.3", facecolor="white", edgecolor="0.3")
        for path, view in shown:
            if view.kind == "unexplored":
                label, style = "unexplored", dict(box, linestyle="--", edgecolor="0.6")
            elif view.kind == "leaf":
                label, style = self._leaf_text(view, lines=True), dict(box, facecolor="0.9")
            else:
                cut = len(path) == max_levels - 1
                label = textwrap.fill(self._node_name(view.variable), 18) + (" …" if cut else "")
                style = box
            ax.text(x[path], -len(path), label, ha="center", va="center", bbox=style,
                    fontsize=8 if view.kind == "leaf" else 9, zorder=3)
            if path:
                parent = path[:-1]
                condition = self.conditions[parent][0 if path[-1][1] < 0 else 1]
                ax.plot([x[parent], x[path]], [-len(parent), -len(path)], color="0.5",
                        linewidth=1, zorder=1)
                # Nearer the child than the parent, wrapped: siblings' labels
                # would otherwise overlap under a wide parent.
                ax.text(0.35 * x[parent] + 0.65 * x[path], -len(path) + 0.35,
                        textwrap.fill(condition, 20),
                        ha="center", va="center", fontsize=7, color="0.2", zorder=2,
                        bbox=dict(boxstyle="square,pad=0.1", facecolor="white",
                                  edgecolor="none"))
        ax.set_xlim(-0.7, right + 0.7)
        ax.set_ylim(-(max(len(p) for p, _ in shown)) - 0.6, 0.6)
        ax.set_axis_off()
        merged = sum(view.merged for view in views.values())
        ax.set_title(f"T_{self.seed} of {self.oracle}"
                     + (f" (top {max_levels} levels)" if any(
                         len(p) >= max_levels for p in views) else "")
                     + (f"\n{merged} split(s) between equal-label leaves merged; the "
                        "function is unchanged" if merged else ""), fontsize=10)
        return ax


def _readable_fields(tree: ReconstructedTree) -> dict[str, Any]:
    """The optional readable fields of the JSON document (absent when empty)."""
    fields: dict[str, Any] = {}
    if tree.features:
        fields["features"] = {str(variable): name for variable, name in
                              sorted(tree.features.items())}
    if tree.class_names is not None:
        fields["class_names"] = list(tree.class_names)
    return fields


def _percent(share: float) -> str:
    """A share as a short percentage: ``12.5%``, ``0.39%``, ``<0.01%``."""
    if share >= 0.1:
        return f"{share:.1%}".replace(".0%", "%")
    return f"{share:.2%}" if share >= 1e-4 else "<0.01%"


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def tree_from_decisions(oracle: Oracle, params: Params, seed: int,
                        known: Mapping[Path, Decision]) -> ReconstructedTree:
    """The tree of the decisions in ``known`` reachable from the root of ``T_seed``.

    Conditions come from ``oracle.describe``; node names from
    ``oracle.feature_of(variable)`` and label names from
    ``oracle.label_names`` when the oracle has them (a model wrapped by
    :mod:`lca.models`). Used by
    :meth:`lca.Reconstructor.export` and :meth:`lca.Reconstructor.materialize`.
    """
    decisions: dict[Path, Decision] = {}
    conditions: dict[Path, tuple[str, str]] = {}
    stack: list[Path] = [()]
    while stack:
        path = stack.pop()
        decision = known.get(path)
        if decision is None:
            continue
        decisions[path] = decision
        if isinstance(decision, NodeDecision):
            conditions[path] = (oracle.describe(decision.variable, -1, path),
                                oracle.describe(decision.variable, 1, path))
            stack += [path + ((decision.variable, bit),) for bit in (1, -1)]
    feature_of = getattr(oracle, "feature_of", None)
    features = {} if feature_of is None else {
        decision.variable: feature_of(decision.variable)
        for decision in decisions.values() if isinstance(decision, NodeDecision)}
    names = getattr(oracle, "label_names", None)
    return ReconstructedTree(seed=seed, n=params.n, oracle=oracle.name,
                             params=dataclasses.asdict(params), decisions=decisions,
                             conditions=conditions, features=features,
                             class_names=None if names is None else tuple(names))
