"""How faithful a surrogate is: agreement with its model, the baselines, and what to worry about.

:meth:`lca.models.Surrogate.fidelity` and :meth:`~lca.models.Surrogate.report`
measure a tree against its model on rows and on the product distribution;
this module holds what they return (:class:`Fidelity`, :class:`Agreement`,
:class:`Rules`, :class:`OnRows`, counted by :func:`on_path` and
:func:`on_leaves`), the rules that turn the counts into
concerns (:class:`LowFidelityWarning`, :func:`judge`), the yardstick a data
scientist would build instead: a plain scikit-learn tree fitted on the
model's labels of the same rows (:func:`rows_tree_agreement`), and the text
of the report (:func:`report_text`). It takes what it measures as plain
values, so it needs nothing of the surrogate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from lca.decisions import LeafDecision, agreeing, split_rows
from lca.derive import Path
from lca.export import ReconstructedTree
from lca.models._data import plain

__all__ = ["FAR_BELOW", "VISIBLE_SHARE", "Agreement", "Fidelity", "LowFidelityWarning",
           "OnRows", "Rules"]

# Agreement on the rows given more than this below the agreement on the product
# distribution is reported (LowFidelityWarning): the rows are then unlike the
# independent features the tree was built for. A tenth is more than the two 95%
# half-widths together at 500 rows and the default 2,000 samples (0.061 + 0.030),
# so sampling alone rarely triggers it.
FAR_BELOW = Fraction(1, 10)
# A leaf holding at least this share of the rows is visible in their agreement:
# when it answers a label fewer of its rows get from the model than the most common
# one, that is said (a leaf of a handful of rows is not).
VISIBLE_SHARE = Fraction(1, 20)
# Leaves the report lists, those holding the most of the rows given.
_REPORTED_LEAVES = 10


class LowFidelityWarning(UserWarning):
    """On the rows given, the tree agrees with the model no better than the majority label,
    or far (more than :data:`FAR_BELOW`) below its agreement on the product distribution,
    or a leaf holding a visible share of the rows answers against their most common label."""


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
        leaf: the leaf's decision: its label and the points behind it
            (product mode: ``leaf.samples`` points of the encoder's product
            distribution, ``(samples + label * total) / 2`` of them agreeing
            with the label; a multi-class tree's
            :class:`lca.decisions.ClassLeafDecision`: its class index, ``total``
            of its points of that class).
        by_feature: one condition per feature on the path, in the order the
            path first tests it: the intersection of that feature's steps (an
            interval, or a set of categories; a feature's later steps are
            described given its earlier ones, so its last step's condition is
            the intersection).
        on_rows: the leaf on the rows given (:class:`OnRows`), or ``None``
            when no rows were given.
        fitted: data mode: the fitted rows among the leaf's points and how
            many of them the model labels as the leaf does
            (:class:`lca.models.rows.LeafRows`); ``None`` in product mode.
    """

    conditions: tuple[str, ...]
    prediction: Any
    path: Path
    leaf: LeafDecision
    by_feature: tuple[str, ...]
    on_rows: OnRows | None = None
    fitted: Any = None

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
    surrogate was fitted on are not independent of it (its questions and
    splits were chosen on them), so on those the interval is only
    indicative; on held-out rows it holds as stated.
    """

    rate: float
    halfwidth: float
    rows: int

    def __str__(self) -> str:
        return f"{self.rate:.3f} ± {self.halfwidth:.3f} ({self.rows} rows)"

    def samples_text(self) -> str:
        """The agreement on product samples, said so (``str`` counts rows)."""
        return f"{self.rate:.3f} ± {self.halfwidth:.3f} ({self.rows} samples)"


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
        rows_tree: on the rows given, the agreement of the yardstick: a plain
            scikit-learn ``DecisionTreeClassifier`` of the same depth fitted
            on the model's labels of the fitted rows (data mode, with
            scikit-learn installed; else ``None``).
    """

    product: Agreement | None
    data: Agreement | None = None
    baseline: float | None = None
    concerns: tuple[str, ...] = ()
    rows_tree: float | None = None

    def __str__(self) -> str:
        product = ("" if self.product is None else
                   f"on the product distribution {self.product.samples_text()}")
        if self.data is None:
            return product or "nothing measured"
        return (f"on the rows given {self.data}, majority-label baseline "
                f"{self.baseline:.3f}" + (f"; {product}" if product else ""))


def agreement(tree: np.ndarray, model: np.ndarray) -> Agreement:
    """The share of equal answers, with its 95% Hoeffding half-width."""
    from lca.tester import hoeffding_halfwidth

    rows = int(tree.size)
    return Agreement(float(np.mean(tree == model)), hoeffding_halfwidth(rows, 0.05), rows)


def majority(labels: np.ndarray, classes: int) -> tuple[int, int]:
    """The most common label of ``labels`` (class indices below ``classes``, or ``±1``
    when ``classes`` is 0) and how many rows hold it; the lowest index, or ``+1``, on a tie."""
    if classes:
        counts = np.bincount(labels, minlength=classes)
        top = int(np.argmax(counts))
        return top, int(counts[top])
    plus = int((labels > 0).sum())
    return (1, plus) if plus >= labels.size - plus else (-1, labels.size - plus)


def against_majority(leaves: Sequence[tuple[str, LeafDecision, np.ndarray]], rows: int,
                     classes: int, what: str) -> list[str]:
    """A sentence per leaf holding at least :data:`VISIBLE_SHARE` of ``rows`` whose label is
    not the majority of the model's labels of its rows (``leaves``: each leaf's text, its
    decision and the model's labels of its rows; ``what`` names the rows)."""
    out = []
    for text, leaf, labels in leaves:
        if Fraction(labels.size, rows) < VISIBLE_SHARE or labels.size == 0:
            continue
        agree = int((labels == leaf.label).sum())
        # Fewer rows than the most common label holds: with two labels, fewer than half;
        # with K classes, fewer than the plurality (a leaf answering the plurality of a
        # mixed region answers what most of its rows get, and is not flagged).
        if agree < majority(labels, classes)[1]:
            out.append(f"the leaf {text} holds {labels.size} of the {rows} {what} "
                       f"({labels.size / rows:.0%}) and answers against the model on "
                       f"{labels.size - agree} of them: its label is not their majority.")
    return out


def rows_tree_agreement(fitted: np.ndarray, fitted_labels: np.ndarray, rows: np.ndarray,
                        labels: np.ndarray, depth: int) -> float | None:
    """Agreement on ``rows`` of scikit-learn's ``DecisionTreeClassifier(max_depth=depth,
    random_state=0)`` fitted on ``fitted`` rows and the model's labels of them (rows as
    numbers: ordered features as they are, categorical ones as category numbers);
    ``None`` without scikit-learn, or for values it cannot take (it reads float32)."""
    try:
        from sklearn.tree import DecisionTreeClassifier
    except ImportError:  # an optional yardstick
        return None
    limit = np.finfo(np.float32).max
    if np.abs(fitted).max(initial=0) > limit or np.abs(rows).max(initial=0) > limit:
        return None
    tree = DecisionTreeClassifier(max_depth=max(depth, 1), random_state=0)
    tree.fit(fitted, fitted_labels)
    return float(np.mean(tree.predict(rows) == labels))


def judge(sampled: tuple[np.ndarray, np.ndarray] | None, answers: np.ndarray,
          labels: np.ndarray, classes: int, label: Callable[[Any], np.ndarray],
          leaves: Sequence[tuple[Rules, np.ndarray]]) -> Fidelity:
    """The tree against the model on the rows given (its ``answers``, the model's ``labels``)
    and on the product sample (``sampled``: the tree's and the model's answers there), and
    what :class:`LowFidelityWarning` says of them; the yardstick is left to the caller.

    ``classes`` is a multi-class tree's number of classes (0 for a yes/no tree),
    ``label`` gives the model's labels of answers, ``leaves`` the rules of
    each leaf the rows reach and the model's labels of those rows. The
    product agreement is compared exactly, as fractions.
    """
    product = on_product = None
    if sampled is not None:
        product = agreement(*sampled)
        on_product = Fraction(int((sampled[0] == sampled[1]).sum()), sampled[0].size)
    data = agreement(answers, labels)
    rows, agree = labels.size, int((answers == labels).sum())
    top, most = majority(labels, classes)
    concerns = []
    if agree <= most:
        concerns.append(
            f"on the {rows} rows given the tree agrees with the model on "
            f"{data.rate:.3f}, no better than always answering the model's most common "
            f"label {plain(label([top])[0])!r} ({most / rows:.3f}): its rules say little "
            "about these rows.")
    if product is not None and on_product is not None \
            and Fraction(agree, rows) < on_product - FAR_BELOW:
        concerns.append(
            f"on the {rows} rows given the tree agrees with the model on "
            f"{data.rate:.3f}, more than {float(FAR_BELOW):g} below its {product.rate:.3f} "
            "on the product distribution it was built for (features independent, "
            "each with its own marginal): these rows are unlike it.")
    concerns += against_majority([(" AND ".join(rules.by_feature) or "(every row)", rules.leaf,
                                   held) for rules, held in leaves], rows, classes, "rows given")
    return Fidelity(product, data, most / rows, tuple(concerns))


def reached(tree: ReconstructedTree,
            points: np.ndarray) -> dict[Path, tuple[LeafDecision, np.ndarray]]:
    """Each leaf of a whole tree that rows of ``points`` reach, and those rows."""
    found: dict[Path, tuple[LeafDecision, np.ndarray]] = {}
    groups: dict[Path, np.ndarray] = {(): np.arange(points.shape[0])}
    while groups:
        later: dict[Path, np.ndarray] = {}
        for path, chosen in groups.items():
            decision = tree.decisions[path]
            if isinstance(decision, LeafDecision):
                found[path] = (decision, chosen)
            else:
                later |= split_rows(points, chosen, path, decision.variable)
        groups = later
    return found


def on_path(points: np.ndarray, labels: np.ndarray, path: Path, label: int) -> OnRows:
    """How the leaf at the end of ``path`` (answering ``label``) fares on rows: how many of
    ``points`` reach it, and on how many of those the model's ``labels`` are its label."""
    reach = np.ones(points.shape[0], dtype=bool)
    for variable, bit in path:
        reach &= points[:, variable] == bit
    return OnRows(int(reach.sum()), int((labels[reach] == label).sum()), points.shape[0])


def on_leaves(tree: ReconstructedTree, points: np.ndarray,
              labels: np.ndarray) -> dict[Path, OnRows]:
    """:func:`on_path` of every leaf of a whole tree, the rows split once down the tree."""
    rows = points.shape[0]
    found = {path: (chosen.size, int((labels[chosen] == leaf.label).sum()))
             for path, (leaf, chosen) in reached(tree, points).items()}
    return {path: OnRows(*found.get(path, (0, 0)), rows)
            for path, node in tree.walk() if isinstance(node, LeafDecision)}


def path_conditions(tree: ReconstructedTree, path: Path) -> tuple[str, ...]:
    """The conditions of a leaf's path, root first."""
    return tuple(tree.conditions[path[:k]][0 if bit < 0 else 1]
                 for k, (_, bit) in enumerate(path))


def report_text(tree: ReconstructedTree, classes: np.ndarray, *, threshold: float | None,
                method: str | None, encoder: Any, features: int,
                rows: tuple[int, str] | None, queries: int | None,
                fidelity: Fidelity | None, leaves: Sequence[Rules] | None) -> str:
    """The text of :meth:`lca.models.Surrogate.report`.

    What the whole ``tree`` answers (the model's ``classes``; with a
    ``threshold``, the model's ``method`` whose score it cuts, ``None``
    without the model), the ``encoder`` and its number of input
    ``features``, the tree's size, in data mode its fitted ``rows`` (their
    count and digest) and the model ``queries`` it cost. Then ``fidelity``
    (``None``: read from JSON without the model, and the text says how to
    pass it): the agreement on the rows given first, beside the
    majority-label baseline and the yardstick (a plain tree fitted on the
    model's labels of the fitted rows, data mode), then the agreement on the
    product distribution, a ``warning:`` line per
    :class:`LowFidelityWarning` sentence, and last the ``leaves`` counted on
    the rows given (``None``: no rows), those holding the most of them.
    """
    merged = sum(view.merged for view in tree.shown().values())
    names = [str(c) for c in classes]
    question = (f"one tree over its {len(names)} classes {names!r}" if len(classes) > 2
                else f"{names[1]!r} vs {names[0]!r}")
    if threshold is not None and method is not None:
        question += f" ({method} >= {threshold:g})"
    lines = [
        f"Surrogate of {tree.oracle}: {question}",
        f"  encoder: {encoder!r}, {features} features -> "
        + (f"{tree.n} bits" if rows is None else
           f"{tree.n} threshold questions; distribution 'data' over "
           f"{rows[0]} fitted rows, {rows[1]}"),
        f"  tree T_{tree.seed}: depth {max((len(p) for p in tree.decisions), default=0)}, "
        f"{len(tree.internal_nodes)} splits, {len(tree.leaves)} leaves"
        + (f" ({merged} splits between equal-label leaves merged in the text)"
           if merged else ""),
    ]
    if rows is not None:
        lines.append("  a heuristic (a tree learner over the fitted rows, no accuracy "
                     "guarantee); leaves count fitted rows")
    if queries is not None:
        lines.append(f"  model queries spent building the tree: {queries:,}")
    if fidelity is None:
        lines.append("  agreement with the model: not measured, this Surrogate was read "
                     "from JSON without its model; pass it: Surrogate.from_json(text, "
                     "model=model)")
        return "\n".join(lines)
    if fidelity.data is not None:
        lines.append(f"  agreement on the rows given: {fidelity.data}; majority-label "
                     f"baseline {fidelity.baseline:.3f}")
        if fidelity.rows_tree is not None:  # the yardstick of a rows tree, of its depth
            lines.append(f"  a plain tree of depth {tree.params['depth']} fitted on the "
                         "model's labels of the fitted rows (scikit-learn) agrees on "
                         f"{fidelity.rows_tree:.3f} of them")
    if fidelity.product is not None:
        lines.append(f"  agreement on the product distribution (features "
                     f"independent): {fidelity.product.samples_text()}")
    lines += [f"  warning: {concern}" for concern in fidelity.concerns]
    if leaves is not None:
        # Leaves counted on rows: on_rows is never None here.
        ranked = sorted(leaves, key=lambda rules: -rules.on_rows.reach)  # type: ignore[union-attr]
        shown = ranked[:_REPORTED_LEAVES]
        lines.append(f"  the {len(shown)} leaves holding the most of the rows given "
                     f"(of {len(ranked)}):")
        lines += [f"    {rules}" for rules in shown]
    return "\n".join(lines)
