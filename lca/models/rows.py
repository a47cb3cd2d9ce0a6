"""Data mode: one tree grown from the user's fitted rows, one node at a time (:class:`RowsTree`).

The decider behind ``Surrogate(..., distribution="data")``. A HEURISTIC, like
a tree learner: it promises no accuracy, only that every decision is a
deterministic function of ``(model, fitted rows, parameters, seed, path)``,
so any process with the same rows builds the same tree, one path at a time.
``docs/randomness.md`` §10 ("Data-mode nodes") is the normative statement; in
short, node ``path`` (its steps are answers of :class:`ThresholdEncoder`
questions) is decided so:

1. *Region*: the fitted rows whose encoding satisfies every step of ``path``.
2. *Rows*: fitted rows are ranked once by a derived 64-bit key
   (purpose ``"surrogate-rows"``, word ``i`` of the root key for row ``i``;
   ties to the lower row index); the node takes the first ``rows_per_node -
   product_rows`` rows of its region in that order (``product_rows`` 0 by
   default). The order is global, so a node's rows
   include every ancestor row in its region: the split is chosen on the very
   rows it partitions (the selection effect of every tree learner).
3. *Top-up*: a node with ``r < rows_per_node`` rows adds ``rows_per_node - r``
   rows drawn from the product of the fitted marginals restricted to its
   region (each feature a fitted value inside its interval, or of its allowed
   categories, picked by derived words of purpose ``"surrogate-topup"`` under
   the node's path).
4. *Labels*: the model on the raw fitted rows (asked once per row, cached)
   and on the drawn rows.
5. *Split*: a leaf at the depth cap, when the region holds fewer than
   ``min_rows`` rows, when the labels are pure, or when no variable that is
   not constant on the node's fitted rows has a positive Gini gain over its
   points; otherwise the variable of largest gain (exact integer
   comparison), ties to the lowest variable. Leaves take the majority label
   of their points, ``+1`` on a tie.

A multi-class tree (``classes=K``, one leaf answers one of ``K > 2``
classes) labels its points with the model's class (its index in
``classes_``), sums squared counts over the ``K`` classes in the gain
(:func:`best_class_split`), and its leaves (:class:`ClassLeafDecision`)
answer the most common class of their points, the lowest class index on a
tie; a node is pure when its points hold one class. Everything else is as
above.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from lca import derive
from lca.decisions import ClassLeafDecision, Decision, LeafDecision, NodeDecision, split_rows
from lca.derive import Path
from lca.export import ReconstructedTree, tree_from_decisions
from lca.models.oracle import ClassLabels, ModelLabels
from lca.models.sources import Trace, cut
from lca.models.thresholds import ThresholdEncoder
from lca.params import Params
from lca.reconstruct import progress_bar

__all__ = ["MAX_ROWS_PER_NODE", "RowsTree", "best_class_split", "best_split", "gini_split",
           "row_order", "topup_columns"]

ORDER_PURPOSE = "surrogate-rows"
TOPUP_PURPOSE = "surrogate-topup"
# Gains are compared as integer cross-products in int64: with k <= 4096 points
# the largest product, 2 k^3 * k, stays below 2**63.
MAX_ROWS_PER_NODE = 4096


def row_order(seed: int, rows: int) -> np.ndarray:
    """Row indices ranked by their derived key (word ``i`` of stream 0 under
    ``node_key(seed, "surrogate-rows", ())``), ties to the lower index."""
    keys = derive.raw_words(derive.node_key(seed, ORDER_PURPOSE, ()), 0, 0, rows)
    return np.argsort(keys, kind="stable")


def best_split(points: np.ndarray, labels: np.ndarray,
               candidates: np.ndarray) -> int | None:
    """The candidate variable of largest positive Gini gain on ``points``, or ``None``.

    With ``n_s`` points and ``p_s``/``q_s`` of them labelled ``+1``/``-1`` on
    side ``s``, the gain orders as ``S = (p_-^2 + q_-^2)/n_- + (p_+^2 + q_+^2)/n_+``
    (the Gini gain plus a constant); it is positive when ``S > (P^2 + Q^2)/N``
    for the node's totals. ``S = A / B`` with integers ``A, B`` is compared
    exactly (cross-products); ties go to the lowest variable. Candidates
    must be non-constant on ``points``. (:func:`gini_split` on the counts.)
    """
    if candidates.size == 0:
        return None
    candidates = np.sort(candidates)  # ties go to the first: the lowest variable
    positive = labels > 0
    minus = points[:, candidates] < 0
    n1 = minus.sum(axis=0, dtype=np.int64)
    p1 = minus[positive].sum(axis=0, dtype=np.int64)
    total_p = int(positive.sum())
    return gini_split(candidates, n1, [(p1, total_p), (n1 - p1, labels.size - total_p)],
                      labels.size)


def best_class_split(points: np.ndarray, labels: np.ndarray, classes: int,
                     candidates: np.ndarray) -> int | None:
    """:func:`best_split` over ``classes`` classes (``labels`` are class indices).

    With ``n_s`` points on side ``s`` and ``n_{s,c}`` of them of class ``c``,
    ``A_s = sum_c n_{s,c}^2``; the gain orders as ``S = A_- / n_- + A_+ / n_+``,
    compared exactly as ``A = A_- n_+ + A_+ n_-`` over ``B = n_- n_+``, and is
    positive when ``A N > (sum_c N_c^2) B`` for the node's ``N`` points,
    ``N_c`` of class ``c``. Ties go to the lowest variable. With two classes
    this is :func:`best_split`'s rule. (:func:`gini_split` on the counts.)
    """
    if candidates.size == 0:
        return None
    candidates = np.sort(candidates)
    minus = points[:, candidates] < 0
    sides = []
    for c in range(classes):
        mine = labels == c
        total = int(mine.sum())
        if total:
            sides.append((minus[mine].sum(axis=0, dtype=np.int64), total))
    return gini_split(candidates, minus.sum(axis=0, dtype=np.int64), sides, labels.size)


def gini_split(candidates: np.ndarray, minus: np.ndarray,
               classes: Sequence[tuple[np.ndarray, int]], k: int) -> int | None:
    """The rule of :func:`best_split` and :func:`best_class_split`, on counts.

    ``candidates`` are increasing variables; ``minus`` counts, per candidate,
    the ``k`` points on its ``-1`` side (``n_-``); ``classes`` holds, per
    class present, its points on each candidate's ``-1`` side (``n_{-,c}``)
    and its number of points ``N_c``. Returns the candidate of largest
    ``A / B`` among those of positive gain (``A k > (sum_c N_c^2) B``),
    compared exactly, the lowest on a tie, or ``None``.
    """
    if candidates.size == 0:
        return None
    plus = k - minus
    a1 = np.zeros(candidates.size, dtype=np.int64)
    a2 = np.zeros(candidates.size, dtype=np.int64)
    parent = 0
    for below, total in classes:
        above = total - below
        a1 += below * below
        a2 += above * above
        parent += total * total
    a = a1 * plus + a2 * minus
    b = minus * plus
    return _largest(candidates, a, b, a * k > parent * b)


def _largest(candidates: np.ndarray, a: np.ndarray, b: np.ndarray,
             gains: np.ndarray) -> int | None:
    """The candidate of largest ``a / b`` among those with ``gains``, the first on a tie."""
    if not gains.any():
        return None
    # Correctly rounded division is monotone: the exact maximum is among the
    # candidates whose quotient equals the largest quotient.
    quotient = np.where(gains, a / np.maximum(b, 1), -1.0)
    top = np.flatnonzero(quotient == quotient.max())
    best = int(top[0])
    for other in top[1:].tolist():
        if int(a[other]) * int(b[best]) > int(a[best]) * int(b[other]):
            best = other
    return int(candidates[best])


def topup_columns(encoder: ThresholdEncoder, sorted_columns: Sequence[np.ndarray],
                  seed: int, path: Path, count: int,
                  purpose: str = TOPUP_PURPOSE) -> list[np.ndarray]:
    """``count`` rows drawn from the fitted marginals restricted to the region of ``path``.

    Sample ``k``, feature ``j`` reads word ``k * d + j`` of stream 0 under
    ``node_key(seed, purpose, path)`` (``"surrogate-topup"`` for nodes); ``u``
    = its top 32 bits.
    An ordered feature takes ``v[a + floor(u (b - a) / 2**32)]`` where ``v``
    is its sorted fitted values and ``[a, b)`` the positions of those inside
    the region's interval; a categorical one lays its allowed categories'
    fitted rows end to end in category order and takes the category at
    ``floor(u * rows / 2**32)``.
    """
    return _drawn_columns(encoder, sorted_columns,
                          _draw(encoder, sorted_columns, seed, path, count, purpose))


def _draw(encoder: ThresholdEncoder, sorted_columns: Sequence[np.ndarray], seed: int,
          path: Path, count: int, purpose: str) -> np.ndarray:
    """Where each of the :func:`topup_columns` rows takes its values from, ``(count, d)``:
    an ordered feature's position among its sorted fitted values, a categorical
    one's category number (:func:`_drawn_columns` reads the values)."""
    d = encoder.n_features_in_
    words = derive.raw_words(derive.node_key(seed, purpose, path), 0, 0, count * d)
    u = (words >> np.uint64(32)).reshape(count, d)
    # A feature no step of the path tests allows all of it: positions [0, size)
    # of an ordered one, every category of a categorical one. Only the (at most
    # depth) features the path tests need their region.
    a = np.zeros(d, dtype=np.int64)
    b = np.array([values.size for values in sorted_columns], dtype=np.int64)
    allowed: dict[int, frozenset[int]] = {}
    for j in {encoder.feature_index(variable) for variable, _ in path}:
        region = encoder.region(j, path)
        if isinstance(region, frozenset):
            allowed[j] = region
        else:
            a[j] = np.searchsorted(sorted_columns[j], region[0], side="left")
            b[j] = np.searchsorted(sorted_columns[j], region[1], side="left")
            assert b[j] > a[j], "a split keeps fitted rows on both sides"
    position = a + ((u * (b - a).astype(np.uint64)) >> np.uint64(32)).astype(np.int64)
    for j in encoder.categories_:
        rows = sorted_columns[j]  # each category's fitted row count
        if j in allowed:  # a category left out takes no slots (every one has rows)
            rows = rows.copy()
            rows[list(set(range(rows.size)) - allowed[j])] = 0
        ends = np.cumsum(rows)
        slot = (u[:, j] * np.uint64(ends[-1])) >> np.uint64(32)
        position[:, j] = np.searchsorted(ends, slot.astype(np.int64), side="right")
    return position


def _drawn_columns(encoder: ThresholdEncoder, sorted_columns: Sequence[np.ndarray],
                   position: np.ndarray) -> list[np.ndarray]:
    """The columns of drawn rows from where :func:`_draw` says they take their values."""
    return [encoder.categories_[j][position[:, j]] if j in encoder.categories_ else
            values[position[:, j]] for j, values in enumerate(sorted_columns)]


def _varied(minus: np.ndarray, r: int) -> np.ndarray:
    """The split candidates: the variables that ``minus`` (per variable, how many of a
    node's ``r`` fitted rows answer ``-1``) shows answered both ways."""
    return np.flatnonzero((minus > 0) & (minus < r))


def _concatenate(parts: list[Any]) -> np.ndarray:
    """One column of several batches (a categorical column may mix strings and numbers)."""
    if len(parts) == 1:
        return np.asarray(parts[0])
    arrays = [np.asarray(part) for part in parts]
    if len({array.dtype.kind for array in arrays}) > 1:
        arrays = [array.astype(object) for array in arrays]
    return np.concatenate(arrays)


@dataclasses.dataclass(frozen=True)
class LeafRows:
    """A data-mode leaf on the fitted rows among its points: how many, how many agree."""

    rows: int
    agree: int


class RowsTree:
    """The data-mode tree of one seed over fitted rows, decided lazily and cached: the
    :class:`lca.models.sources.TreeSource` of a data-mode surrogate.

    Every public method holds one lock, so threads sharing a tree decide
    each node once and all see the same tree.

    Args:
        encoder: the fitted :class:`ThresholdEncoder`.
        oracle: the model's answers on rows (:class:`lca.models.oracle.ModelLabels`,
            or :class:`lca.models.oracle.ClassLabels` for a multi-class tree).
        columns: the fitted rows' columns in the encoder's order (ordered:
            float64; categorical: the category values); the tree keeps its own
            copy, so later edits of the caller's data change nothing.
        values: each feature's values of those rows as its questions read them
            (ordered: the same doubles; categorical: category numbers), as
            :meth:`ThresholdEncoder.fit_rows` returns them.
        seed, depth, rows_per_node, min_rows, product_rows: see
            :class:`lca.models.Surrogate`.

    The number of classes comes from the oracle: a multi-class tree over
    :class:`ClassLabels`' class indices, else a yes/no tree over ``±1``
    labels. ``queries`` counts every model query (fitted rows once each,
    drawn rows each time).
    """

    builder = "rows"

    def __init__(self, encoder: ThresholdEncoder, oracle: ModelLabels | ClassLabels,
                 columns: Sequence[np.ndarray], values: Sequence[np.ndarray], seed: int,
                 depth: int, rows_per_node: int, min_rows: int, product_rows: int = 0
                 ) -> None:
        self._lock = threading.RLock()
        self.encoder = encoder
        self.oracle = oracle
        self.columns = [np.array(column, copy=True) for column in columns]
        self.seed = seed
        self.depth = depth
        self.rows_per_node = rows_per_node
        self.min_rows = min_rows
        self.product_rows = product_rows
        self.m = len(self.columns[0]) if self.columns else 0
        # Each feature's values as its questions read them: a region is filtered
        # one question at a time, without an (m, n) table of every answer.
        self.values = [np.array(column, copy=True) for column in values]
        # Per feature, what top-up draws from: sorted fitted values (ordered), or
        # each category's number of fitted rows (categorical).
        self.sorted_columns = [np.bincount(values, minlength=encoder.categories_[j].size)
                               if j in encoder.categories_ else np.sort(values)
                               for j, values in enumerate(self.values)]
        self.classes = int(oracle.classes.size) \
            if isinstance(oracle, ClassLabels) and oracle.classes is not None else 0
        self.labels = np.zeros(self.m, dtype=np.int64 if self.classes else np.int8)
        self.asked = np.zeros(self.m, dtype=bool)
        # A node's points are kept as bins, one per feature: the point's level
        # (ThresholdEncoder.levels) in the feature's own run of bins, so that
        # counting bins counts every variable's answers at once (minus_counts).
        # Feature j's run starts at bin offsets_[j] + j and holds its levels
        # 0 .. width (ordered) or -1 .. width - 1 (categorical, shifted by one).
        d = encoder.n_features_in_
        widths = np.diff(encoder.offsets_)
        categorical = np.isin(np.arange(d), list(encoder.categories_))
        first = encoder.offsets_[:-1] + np.arange(d)
        self._bin_of_level = first + categorical          # bin = level + this, per feature
        self._categorical = categorical
        # The level of each sorted fitted value of each ordered feature (column j,
        # row k: of sorted_columns[j][k]): a drawn value's level is looked up by
        # where it was drawn from (_draw), not searched for again.
        self._sorted_levels = encoder.levels([
            np.zeros(self.m, dtype=np.int64) if j in encoder.categories_ else values
            for j, values in enumerate(self.sorted_columns)])
        self._bins = int(encoder.offsets_[-1]) + d
        feature = np.repeat(np.arange(d), widths)         # the feature of each variable
        t = np.arange(encoder.n_bits) - encoder.offsets_[feature]
        self._ordered_variable = ~categorical[feature]
        self._run_start = first[feature]                  # its feature's first bin
        self._variable_bin = self._bin_of_level[feature] + t  # its level t's bin
        # The bins of the rows asked so far, found once when first asked (row i's
        # are self._asked_bins[self._slot[i]]): a node's rows are read, not redone.
        self._asked_bins = np.empty((0, d), dtype=np.int64)
        self._slot = np.full(self.m, -1, dtype=np.int64)
        self.queries = 0
        self.oracle_calls = 0
        self.decisions: dict[Path, Decision] = {}
        self._leaf_rows: dict[Path, LeafRows] = {}
        self._whole: ReconstructedTree | None = None
        self._regions: dict[Path, np.ndarray] = {(): row_order(seed, self.m)}
        self._pending: dict[Path, tuple[np.ndarray, np.ndarray, int]] = {}
        self.params = Params.efficient(encoder.n_bits, depth=depth)

    # -- one node ---------------------------------------------------------------------

    def region(self, path: Path) -> np.ndarray:
        """The fitted rows in the region of ``path``, in rank order."""
        found = self._regions.get(path)
        if found is None:
            parent = self.region(path[:-1])
            variable, bit = path[-1]
            found = parent[self.row_answers(parent, variable) == bit]
            self._regions[path] = found
        return found

    def row_answers(self, rows: np.ndarray, variable: int) -> np.ndarray:
        """The ``±1`` answer of fitted ``rows`` to question ``variable``."""
        j = self.encoder.feature_index(variable)
        t = variable - int(self.encoder.offsets_[j])
        levels = self.encoder.feature_levels(j, self.values[j][rows])
        return np.where(self.encoder.holds(j, levels, t), 1, -1).astype(np.int8)

    def topup_count(self, r: int) -> int:
        """How many rows a node with ``r`` fitted rows draws: ``rows_per_node - r``.

        Every node then decides on ``rows_per_node`` points. A node takes at
        most ``rows_per_node - product_rows`` fitted rows, so it draws at least
        ``product_rows``; with the default ``0`` a region with many rows is
        decided on rows alone.
        """
        return max(0, self.rows_per_node - r)

    def prepare(self, paths: Sequence[Path]) -> None:
        """Ask the model about the points of every node of ``paths`` in one call.

        The call carries the fitted rows not asked yet, then the drawn rows
        of every node (so the model is called once per level of the tree,
        not per node); the points are kept for :meth:`decide`. Labels are
        the same as node by node.
        """
        chosen = {path: self.region(path)[:self.rows_per_node - self.product_rows]
                  for path in paths
                  if path not in self.decisions and path not in self._pending}
        if not chosen:
            return
        every = np.concatenate(list(chosen.values()))
        missing = np.unique(every[~self.asked[every]])
        drawn = {path: _draw(self.encoder, self.sorted_columns, self.seed, path,
                             self.topup_count(int(rows.size)), TOPUP_PURPOSE)
                 for path, rows in chosen.items() if self.topup_count(int(rows.size))}
        # Every drawn row of the level at once, node after node.
        where = np.concatenate(list(drawn.values())) if drawn else \
            np.zeros((0, self.encoder.n_features_in_), dtype=np.int64)
        parts = [[column[missing] for column in self.columns],
                 _drawn_columns(self.encoder, self.sorted_columns, where)]
        parts = [part for part in parts if len(part[0])]
        labels = np.zeros(0, dtype=self.labels.dtype)
        if parts:
            # One model call: the fitted rows not asked yet, then every drawn row.
            together = [_concatenate([part[j] for part in parts])
                        for j in range(self.encoder.n_features_in_)]
            found = self.ask(together)
            self.queries += int(found.size)
            self.oracle_calls += 1
            self.labels[missing] = found[:missing.size]
            self.asked[missing] = True
            labels = found[missing.size:]
        if missing.size:
            self._slot[missing] = np.arange(self._asked_bins.shape[0],
                                            self._asked_bins.shape[0] + missing.size)
            self._asked_bins = np.concatenate(
                [self._asked_bins, self.encoder.levels([values[missing] for values in
                                                        self.values]) + self._bin_of_level])
        ordered = self._sorted_levels[where, np.arange(where.shape[1])]
        drawn_bins = np.where(self._categorical, where, ordered) + self._bin_of_level
        start = 0
        for path, rows in chosen.items():
            points = self._asked_bins[self._slot[rows]]
            own = self.labels[rows]
            if path in drawn:
                stop = start + drawn[path].shape[0]
                points = np.concatenate([points, drawn_bins[start:stop]])
                own = np.concatenate([own, labels[start:stop]])
                start = stop
            self._pending[path] = (points, own, int(rows.size))

    def ask(self, columns: list[np.ndarray]) -> np.ndarray:
        """The model's label of each row of ``columns`` (a multi-class tree: its class index)."""
        oracle = self.oracle
        if isinstance(oracle, ClassLabels):
            return oracle.class_columns(columns)
        return oracle.label_columns(columns)

    def minus_counts(self, bins: np.ndarray, group: np.ndarray | None = None,
                     groups: int = 1) -> np.ndarray:
        """Per variable, how many of the points (their bins) answer it ``-1``; with
        ``group`` (each point's group, below ``groups``), one row per group."""
        if group is None:
            group = np.zeros(bins.shape[0], dtype=np.int64)
        counts = np.bincount((bins + (group * self._bins)[:, None]).ravel(),
                             minlength=groups * self._bins).reshape(groups, self._bins)
        sizes = np.bincount(group, minlength=groups)[:, None]
        # Ordered: cut t is -1 ("x < cut_t") for levels 0 .. t, the bins of its run
        # up to its own; categorical: -1 unless the level is the category.
        running = np.concatenate([np.zeros((groups, 1), dtype=np.int64),
                                  np.cumsum(counts, axis=1)], axis=1)
        return np.where(self._ordered_variable,
                        running[:, self._variable_bin + 1] - running[:, self._run_start],
                        sizes - counts[:, self._variable_bin])

    def node_points(self, path: Path) -> tuple[np.ndarray, np.ndarray, int]:
        """The node's points (its rows, then the drawn ones) as bins (one per feature:
        its level, :meth:`ThresholdEncoder.levels`, in the feature's run of bins), their
        labels, and its row count."""
        self.prepare([path])
        return self._pending.pop(path)

    def decide(self, path: Path) -> Decision:
        """The decision of node ``path`` (its ancestors decided first), cached."""
        found = self.decisions.get(path)
        if found is not None:
            return found
        if path:
            parent = self.decide(path[:-1])
            assert isinstance(parent, NodeDecision) and parent.variable == path[-1][0], \
                f"{path} is not a node of this tree"
        points, labels, r = self.node_points(path)
        drawn = np.arange(labels.size) >= r  # the node's drawn points (after its r rows)
        if self.classes:
            self.decisions[path] = self._decide_classes(path, points, labels, r, drawn)
            return self.decisions[path]
        total = int(labels.astype(np.int64).sum())
        variable = None
        if len(path) < self.depth and self.region(path).size >= self.min_rows \
                and abs(total) < labels.size:
            # Groups: 0/1 fitted rows labelled -1/+1, 2/3 drawn rows labelled -1/+1.
            counts = self.minus_counts(points, 2 * drawn + (labels > 0), 4)
            candidates = _varied(counts[0] + counts[1], r)
            below = (counts[1] + counts[3])[candidates]
            minus = counts.sum(axis=0)[candidates]
            positive = int((labels > 0).sum())
            variable = gini_split(candidates, minus, [(below, positive),
                                                      (minus - below, labels.size - positive)],
                                  labels.size)
        decision: Decision
        if variable is None:
            label = 1 if total >= 0 else -1
            decision = LeafDecision(label, int(labels.size), total)
            self._leaf_rows[path] = LeafRows(r, int((labels[:r] == label).sum()))
        else:
            decision = NodeDecision(variable, int(labels.size), 0, 0, rule="gini")
        self.decisions[path] = decision
        return decision

    def _decide_classes(self, path: Path, points: np.ndarray, labels: np.ndarray,
                        r: int, drawn: np.ndarray) -> Decision:
        """A multi-class node: split as :func:`best_class_split` says, or a class leaf."""
        counts = np.bincount(labels, minlength=self.classes)
        variable = None
        if len(path) < self.depth and self.region(path).size >= self.min_rows \
                and int(counts.max()) < labels.size:
            # Groups: class c's fitted rows are group c, its drawn rows group K + c.
            k = self.classes
            minus = self.minus_counts(points, k * drawn + labels, 2 * k)
            candidates = _varied(minus[:k].sum(axis=0), r)
            sides = [((minus[c] + minus[k + c])[candidates], int(total))
                     for c, total in enumerate(counts.tolist()) if total]
            variable = gini_split(candidates, minus.sum(axis=0)[candidates], sides,
                                  labels.size)
        if variable is not None:
            return NodeDecision(variable, int(labels.size), 0, 0, rule="gini")
        label = int(np.argmax(counts))  # the first maximum: the lowest class index
        self._leaf_rows[path] = LeafRows(r, int((labels[:r] == label).sum()))
        return ClassLeafDecision(label, int(labels.size), int(counts[label]))

    # -- the tree source ------------------------------------------------------------

    @property
    def record(self) -> dict[str, Any]:
        """The builder and its parameters, as the tree's JSON records them (``"params"``)."""
        return {"builder": self.builder, "n": self.encoder.n_bits, "depth": self.depth,
                "rows_per_node": self.rows_per_node, "min_rows": self.min_rows,
                "product_rows": self.product_rows}

    def product_columns(self, samples: int) -> list[np.ndarray]:
        """``samples`` rows of the product of the fitted marginals: the root's top-up rows
        under purpose ``"surrogate-fidelity"`` (what fidelity measures on)."""
        return topup_columns(self.encoder, self.sorted_columns, self.seed, (), samples,
                             purpose="surrogate-fidelity")

    def fitted_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Every fitted row as numbers (:meth:`ThresholdEncoder.numbers`) and the model's
        label of each (a multi-class tree: its class index). Rows the tree has not asked
        about yet are asked now, not counted in :attr:`queries` and not kept."""
        with self._lock:
            labels = self.labels.copy()
            missing = np.flatnonzero(~self.asked)
            if missing.size:
                labels[missing] = self.ask([column[missing] for column in self.columns])
            return self.encoder.numbers(self.columns), labels

    def leaf_rows(self, path: Path) -> LeafRows:
        """The fitted rows among a decided leaf's points, and how many agree with it."""
        with self._lock:
            return self._leaf_rows[path]

    def trace(self, z: np.ndarray) -> Trace:
        """The path of one point, the conditions on its side, and its leaf (decided as needed)."""
        with self._lock:
            if self._whole is not None:
                found, _, conditions, leaf = self._whole.trace(z)
                return Trace(found, conditions, leaf)
            path: Path = ()
            steps = []
            decision = self.decide(path)
            while isinstance(decision, NodeDecision):
                bit = int(z[decision.variable])
                steps.append(self.encoder.describe(decision.variable, bit, path))
                path = path + ((decision.variable, bit),)
                decision = self.decide(path)
            return Trace(path, tuple(steps), decision)

    def answers(self, points: np.ndarray) -> np.ndarray:
        """The tree's label of each point (a multi-class tree: its class index), deciding
        the nodes they reach."""
        with self._lock:
            if self._whole is not None:
                return self._whole.query(points)
            out = np.zeros(points.shape[0], dtype=np.int64 if self.classes else np.int8)
            groups: dict[Path, np.ndarray] = {(): np.arange(points.shape[0])}
            while groups:
                later: dict[Path, np.ndarray] = {}
                self.prepare(list(groups))
                for path, chosen in sorted(groups.items()):
                    decision = self.decide(path)
                    if isinstance(decision, LeafDecision):
                        out[chosen] = decision.label
                    else:
                        later |= split_rows(points, chosen, path, decision.variable)
                groups = later
            return out

    def tree(self, depth: int | None = None, progress: bool = False) -> ReconstructedTree:
        """Every node down to ``depth`` (``None``: the whole tree), as a readable tree; the
        whole tree is kept and answers from then on.

        ``progress=True`` draws a tqdm bar on stderr over the nodes decided (their
        number is not known in advance).
        """
        with self._lock:
            if self._whole is not None:
                return self._whole if depth is None else cut(self._whole, depth)
            level: list[Path] = [()]
            bar = progress_bar(progress, None, "deciding", "nodes")
            try:
                while level:
                    below = []
                    self.prepare(level)
                    for path in level:
                        decision = self.decide(path)
                        if isinstance(decision, NodeDecision) and (depth is None
                                                                   or len(path) < depth):
                            below += [path + ((decision.variable, bit),) for bit in (-1, 1)]
                    bar.update(len(level))
                    level = below
            finally:
                bar.close()
            known = {path: decision for path, decision in self.decisions.items()
                     if depth is None or len(path) <= depth}
            # Threshold questions are not independent uniform bits: a leaf's
            # 2^-depth is no share of anything, so the text shows none.
            tree = dataclasses.replace(
                tree_from_decisions(self.oracle, self.params, self.seed, known),
                uniform_mass=False)
            if depth is None or tree.complete:
                self._whole = tree
            return tree

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()
