"""Readable views of a :class:`~lca.export.ReconstructedTree`: text rules, Graphviz DOT, a drawing.

:func:`shown` is the view all three draw from: every node as shown, sibling
leaves of one label merged into one (the function is unchanged). A leaf
shows its class, its share of the inputs and how many of its samples agree;
an internal node its feature; an edge its condition, as the oracle described
it at export time. :class:`~lca.export.ReconstructedTree`'s ``shown``,
``to_text``, ``to_dot`` and ``draw`` call these. Everything here is a
deterministic function of the tree; matplotlib is imported by :func:`draw`
on use.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lca._validate import check_int
from lca.decisions import LeafDecision, agreeing
from lca.derive import Path

if TYPE_CHECKING:  # the tree's module imports this one
    from lca.export import ReconstructedTree

__all__ = ["Shown", "draw", "shown", "to_dot", "to_text"]


@dataclass(frozen=True)
class Shown:
    """A node of :func:`shown`: an internal node, a leaf or an unexplored subtree.

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


def shown(tree: ReconstructedTree, merge: bool = True) -> dict[Path, Shown]:
    """Every node as drawn: with ``merge``, equal-label sibling leaves become one leaf.

    A node whose two subtrees are (after merging) leaves with the same
    label is shown as one leaf carrying their summed samples and shares:
    the tree computes the same function, with fewer splits on paper.
    Keys are the paths of the nodes shown (children of a merged node are
    not shown). A deterministic function of the tree.
    """
    views: dict[Path, Shown] = {}
    for path, decision in reversed(list(tree.walk())):  # children before parents
        if decision is None:
            views[path] = Shown("unexplored")
        elif isinstance(decision, LeafDecision):
            views[path] = Shown("leaf", decision.label, decision.samples,
                                agreeing(decision),
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


def _label_text(tree: ReconstructedTree, label: int) -> str:
    if tree.class_names is None:
        return f"{label:+d}"
    if len(tree.class_names) > 2:  # a multi-class tree: the label is a class index
        return tree.class_names[label]
    return tree.class_names[0 if label < 0 else 1]

def _leaf_text(tree: ReconstructedTree, view: Shown, lines: bool = False) -> str:
    """``label (12.5% of inputs, 60/64 samples agree)``, or on three lines (no share of
    the inputs when the tree has none: ``tree.uniform_mass`` false)."""
    parts = [f"{_percent(view.mass)} of inputs"] if tree.uniform_mass else []
    if view.samples:
        parts.append(f"{view.agree}/{view.samples} samples agree")
    if lines:
        return "\n".join([_label_text(tree, view.label), *parts])
    label = _label_text(tree, view.label)
    return f"{label} ({', '.join(parts)})" if parts else label

def _node_name(tree: ReconstructedTree, variable: int) -> str:
    return tree.features.get(variable, f"x{variable}")

def _summary(tree: ReconstructedTree, views: Mapping[Path, Shown]) -> str:
    merged = sum(view.merged for view in views.values())
    line = (f"T_{tree.seed} of {tree.oracle} (n={tree.n}): "
            f"{len(tree.internal_nodes)} internal nodes, {len(tree.leaves)} "
            f"leaves, {len(tree.unexplored)} unexplored")
    if merged:
        line += (f"; {merged} split(s) whose leaves all have one label shown merged "
                 "(the function is unchanged)")
    return line


def to_text(tree: ReconstructedTree, merge: bool = True) -> str:
    """Indented rules: one line per branch, its condition, then its subtree.

    A leaf is shown as its class name (``class_names``; else
    ``+1``/``-1``) with its share of the inputs (its probability under
    the uniform distribution of points, which is the encoder's product
    distribution for a model; none when ``tree.uniform_mass`` is false, as
    for a data-mode surrogate) and how many of its samples agree with its
    label; an unexplored subtree as ``(unexplored)``. With ``merge``
    (the default) a split whose leaves all have one label is shown as
    one leaf, and the header says how many: the function is unchanged.
    """
    views = shown(tree, merge)
    lines = [_summary(tree, views)]

    def outcome(path: Path) -> str | None:
        view = views[path]
        if view.kind == "unexplored":
            return "(unexplored)"
        if view.kind == "leaf":
            return _leaf_text(tree, view)
        return None

    def emit(path: Path, indent: int) -> None:
        variable = views[path].variable
        for bit, condition in zip((-1, 1), tree.conditions[path], strict=True):
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

def to_dot(tree: ReconstructedTree, merge: bool = True) -> str:
    """Graphviz DOT: internal nodes named by their feature, branch conditions on the edges.

    Leaves are boxes with their class name and shares (as in
    :func:`to_text`); unexplored subtrees are dashed boxes labelled
    ``unexplored``. ``merge`` as in :func:`to_text`; the graph's label
    says how many splits were merged.
    """
    views = shown(tree, merge)
    lines = [f"digraph T_{tree.seed} {{", '  node [fontname="Helvetica"];',
             '  edge [fontname="Helvetica", fontsize=10];',
             f'  label="{_dot_escape(_summary(tree, views))}"; labelloc=t; fontsize=10;']
    ids: dict[Path, str] = {}
    for path, view in views.items():  # pre-order: parents first
        name = ids[path] = f"n{len(ids)}"
        if view.kind == "unexplored":
            lines.append(f'  {name} [label="unexplored", shape=box, style=dashed];')
        elif view.kind == "leaf":
            lines.append(f'  {name} [label="{_dot_escape(_leaf_text(tree, view, lines=True))}", '
                         'shape=box];')
        else:
            lines.append(f'  {name} [label="{_dot_escape(_node_name(tree, view.variable))}"'
                         ', shape=ellipse];')
        if path:
            parent = path[:-1]
            bit = path[-1][1]
            condition = tree.conditions[parent][0 if bit < 0 else 1]
            lines.append(f'  {ids[parent]} -> {name} [label="{_dot_escape(condition)}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def draw(tree: ReconstructedTree, max_levels: int = 4, ax: Any = None,
         merge: bool = True) -> Any:
    """Draw the nodes down to depth ``max_levels`` with matplotlib; returns the axes.

    Levels count as ``materialize``'s ``depth`` does: the root is level 0,
    so ``rec.materialize(seed, depth=d).draw(max_levels=d)`` draws every
    node it decided. Internal nodes are named by their feature, leaves by
    their class with their shares (as in :func:`to_text`), edges by their
    conditions; an internal node whose children are deeper than
    ``max_levels`` is marked ``…``. ``merge`` as in :func:`to_text` (the
    title says how many splits were merged). Without ``ax`` the figure is
    sized from what is drawn, one slot per node at the bottom of each
    branch and one row per level, and the axes fill it below the title.
    matplotlib is imported on use (``pip install 'lca[plot]'``).
    """
    max_levels = check_int("ReconstructedTree.draw", "max_levels", max_levels, 0)
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError("ReconstructedTree.draw needs matplotlib "
                          "(pip install 'lca[plot]')") from error
    views = shown(tree, merge)
    drawn = [(p, v) for p, v in views.items() if len(p) <= max_levels]
    x = _x_positions(drawn)
    slots = round(max(x.values())) + 1
    rows = max(len(p) for p, _ in drawn) + 1
    title = _title(tree, views, max_levels)
    if ax is None:
        ax = _filled_axes(plt, slots, rows, title.split("\n"))
    for path, view in drawn:
        _draw_node(ax, tree, path, view, x[path], max_levels)
        if path:
            _draw_edge(ax, tree, path, x)
    # Half a slot and half a row around the outermost nodes: room for their boxes.
    ax.set_xlim(-0.5, slots - 0.5)
    ax.set_ylim(-rows + 0.5, 0.5)
    ax.set_axis_off()
    ax.set_title(title, fontsize=10)
    return ax


# Inches per slot and per level: a slot holds the widest usual box (a leaf's
# "251/253 samples agree" at 8 points, a feature name wrapped at 18 characters),
# a level a three-line leaf box and the edge labels above it; a title
# character at 10 points.
_SLOT_INCHES, _LEVEL_INCHES, _TITLE_LINE_INCHES, _TITLE_CHAR_INCHES = 1.7, 1.1, 0.25, 0.085
_MOST_INCHES = 100.0  # wider trees are squeezed: a PNG past ~10^4 pixels helps nobody


def _filled_axes(plt: Any, slots: int, rows: int, title: list[str]) -> Any:
    """Axes on a new figure sized for ``slots`` by ``rows`` nodes and the ``title``'s
    lines, filling it below the title."""
    top = 0.2 + _TITLE_LINE_INCHES * len(title)
    width = min(max(_SLOT_INCHES * slots,
                    _TITLE_CHAR_INCHES * max(map(len, title)) + 0.4), _MOST_INCHES)
    height = _LEVEL_INCHES * rows + top
    figure = plt.figure(figsize=(width, height))
    return figure.add_axes((0.0, 0.0, 1.0, 1.0 - top / height))


def _x_positions(drawn: list[tuple[Path, Shown]]) -> dict[Path, float]:
    """Horizontal places: drawn leaves in consecutive slots, parents midway over children."""
    # y is minus the depth; the bottom of what is shown takes the slots.
    x: dict[Path, float] = {}
    slot = 0
    for path, view in reversed(drawn):  # children before parents
        children = [c for c in (path + ((view.variable, b),) for b in (-1, 1)) if c in x]
        if view.kind == "node" and children:
            x[path] = sum(x[c] for c in children) / len(children)
        else:
            x[path] = float(slot)
            slot += 1
    # reversed pre-order numbers the rightmost first; mirror to read left to right.
    right = max(x.values())
    return {p: right - v for p, v in x.items()}


def _draw_node(ax: Any, tree: ReconstructedTree, path: Path, view: Shown, x: float,
               max_levels: int) -> None:
    """The box of one node at ``x``: unexplored, a leaf with its shares, or a feature name."""
    box = dict(boxstyle="round,pad=0.3", facecolor="white", edgecolor="0.3")
    if view.kind == "unexplored":
        label, style = "unexplored", dict(box, linestyle="--", edgecolor="0.6")
    elif view.kind == "leaf":
        label, style = _leaf_text(tree, view, lines=True), dict(box, facecolor="0.9")
    else:
        cut = len(path) == max_levels
        label = textwrap.fill(_node_name(tree, view.variable), 18) + (" …" if cut else "")
        style = box
    ax.text(x, -len(path), label, ha="center", va="center", bbox=style,
            fontsize=8 if view.kind == "leaf" else 9, zorder=3)


def _draw_edge(ax: Any, tree: ReconstructedTree, path: Path, x: dict[Path, float]) -> None:
    """The line from the parent of ``path`` to it, labelled with the branch's condition."""
    parent = path[:-1]
    condition = tree.conditions[parent][0 if path[-1][1] < 0 else 1]
    ax.plot([x[parent], x[path]], [-len(parent), -len(path)], color="0.5",
            linewidth=1, zorder=1)
    # Nearer the child than the parent, wrapped: siblings' labels
    # would otherwise overlap under a wide parent.
    ax.text(0.35 * x[parent] + 0.65 * x[path], -len(path) + 0.35,
            textwrap.fill(condition, 20),
            ha="center", va="center", fontsize=7, color="0.2", zorder=2,
            bbox=dict(boxstyle="square,pad=0.1", facecolor="white",
                      edgecolor="none"))


def _title(tree: ReconstructedTree, views: dict[Path, Shown], max_levels: int) -> str:
    """The drawing's title: the tree, whether levels were cut off, how many splits merged."""
    merged = sum(view.merged for view in views.values())
    return (f"T_{tree.seed} of {tree.oracle}"
            + (f" (to depth {max_levels})" if any(
                len(p) > max_levels for p in views) else "")
            + (f"\n{merged} split(s) between equal-label leaves merged; the "
               "function is unchanged" if merged else ""))


def _percent(share: float) -> str:
    """A share as a short percentage: ``12.5%``, ``0.39%``, ``<0.01%``."""
    if share >= 0.1:
        return f"{share:.1%}".replace(".0%", "%")
    return f"{share:.2%}" if share >= 1e-4 else "<0.01%"


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
