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
    """

    seed: int
    n: int
    oracle: str
    params: Mapping[str, Any]
    decisions: Mapping[Path, Decision]
    conditions: Mapping[Path, tuple[str, str]]

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

    # -- text formats ----------------------------------------------------------

    def to_text(self) -> str:
        """Indented rules: one line per branch, its condition, then its subtree.

        A leaf is shown as its label (``+1``/``-1``), an unexplored subtree as
        ``(unexplored)``.
        """
        header = (f"T_{self.seed} of {self.oracle} (n={self.n}): "
                  f"{len(self.internal_nodes)} internal nodes, {len(self.leaves)} "
                  f"leaves, {len(self.unexplored)} unexplored")
        lines = [header]

        def outcome(path: Path) -> str | None:
            decision = self.decisions.get(path)
            if decision is None:
                return "(unexplored)"
            if isinstance(decision, LeafDecision):
                return f"{decision.label:+d}"
            return None

        def emit(path: Path, indent: int) -> None:
            decision = self.decisions[path]
            assert isinstance(decision, NodeDecision)
            for bit, condition in zip((-1, 1), self.conditions[path]):
                child = path + ((decision.variable, bit),)
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

    def to_dot(self) -> str:
        """Graphviz DOT: internal nodes ``x<i>``, branch conditions on the edges.

        Leaves are boxes labelled ``+1``/``-1``; unexplored subtrees are dashed
        boxes labelled ``unexplored``.
        """
        lines = [f"digraph T_{self.seed} {{", '  node [fontname="Helvetica"];',
                 '  edge [fontname="Helvetica", fontsize=10];']
        ids: dict[Path, str] = {}
        for path, decision in self.walk():
            name = ids[path] = f"n{len(ids)}"
            if decision is None:
                lines.append(f'  {name} [label="unexplored", shape=box, style=dashed];')
            elif isinstance(decision, LeafDecision):
                lines.append(f'  {name} [label="{decision.label:+d}", shape=box];')
            else:
                lines.append(f'  {name} [label="x{decision.variable}", shape=ellipse];')
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
        changes here.
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
                    "nodes": nodes}
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

    def draw(self, max_levels: int = 4, ax: Any = None) -> Any:
        """Draw the top ``max_levels`` levels with matplotlib; returns the axes.

        Nodes deeper than ``max_levels - 1`` are not drawn; an internal node
        whose children are cut off is marked ``…``. matplotlib is imported on
        use (``pip install 'lca[plot]'``).
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
        shown = [(p, d) for p, d in self.walk() if len(p) < max_levels]
        # x: drawn leaves (bottom of what is shown) take consecutive slots,
        # parents sit midway between their children; y: minus the depth.
        x: dict[Path, float] = {}
        slot = 0
        for path, decision in reversed(shown):  # children before parents
            children = [c for c in (path + ((getattr(decision, "variable", -1), b),)
                                    for b in (-1, 1)) if c in x]
            if isinstance(decision, NodeDecision) and children:
                x[path] = sum(x[c] for c in children) / len(children)
            else:
                x[path] = float(slot)
                slot += 1
        # reversed pre-order numbers the rightmost first; mirror to read left to right.
        right = max(x.values())
        x = {p: right - v for p, v in x.items()}
        box = dict(boxstyle="round,pad=0.3", facecolor="white", edgecolor="0.3")
        for path, decision in shown:
            if decision is None:
                label, style = "unexplored", dict(box, linestyle="--", edgecolor="0.6")
            elif isinstance(decision, LeafDecision):
                label, style = f"{decision.label:+d}", dict(box, facecolor="0.9")
            else:
                cut = len(path) == max_levels - 1
                label, style = f"x{decision.variable}" + (" …" if cut else ""), box
            ax.text(x[path], -len(path), label, ha="center", va="center", bbox=style,
                    fontsize=9, zorder=3)
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
        ax.set_title(f"T_{self.seed} of {self.oracle}"
                     + (f" (top {max_levels} levels)" if any(
                         len(p) >= max_levels for p, _ in self.walk()) else ""), fontsize=10)
        return ax


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def tree_from_decisions(oracle: Oracle, params: Params, seed: int,
                        known: Mapping[Path, Decision]) -> ReconstructedTree:
    """The tree of the decisions in ``known`` reachable from the root of ``T_seed``.

    Conditions come from ``oracle.describe``. Used by
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
    return ReconstructedTree(seed=seed, n=params.n, oracle=oracle.name,
                             params=dataclasses.asdict(params), decisions=decisions,
                             conditions=conditions)
