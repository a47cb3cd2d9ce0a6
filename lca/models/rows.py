"""Data mode: one tree grown from the user's fitted rows, one node at a time (:class:`RowsTree`).

The decider behind ``Surrogate(..., distribution="data")``. A HEURISTIC, like
a tree learner: it promises no accuracy, only that every decision is a
deterministic function of ``(model, fitted rows, parameters, seed, path)``,
so any process with the same rows builds the same tree, one path at a time.
``docs/randomness.md`` §10 ("Data-mode nodes") is the normative statement; in
short, node ``path`` (its steps are answers of :class:`ThresholdEncoder`
questions) is decided so:

1. *Region*: the fitted rows whose encoding satisfies every step of ``path``.
2. *Rows*: fitted rows are ranked once by a derived 64-bit key (purpose
   ``"surrogate-rows"``). The first ``shared_rows`` of that order are every
   node's: a node takes all of them in its region, and at least the first
   ``rows_per_node`` rows of its region when it holds that many. The order
   is global, so a node's rows include every ancestor row in its region: a
   split is chosen on the very rows it partitions (the selection effect of
   every tree learner), and one path asks the model about at most
   ``shared_rows`` rows plus ``rows_per_node`` per level.
3. *Drawn rows*: a node with ``r < rows_per_node`` rows draws
   ``rows_per_node - r`` more, shaped like its rows: each is one of its rows
   with each feature, on a derived coin, replaced by a fitted value inside
   the region (so it stays in the region; purpose ``"surrogate-topup"``).
4. *Labels*: the model on the fitted rows (asked once per row, cached) and
   on the drawn rows. Every node but the root asks again about its parent's
   first row, in a later call than the parent's: a model that answers a row
   two ways is an error, as in product mode.
5. *Weights*: real rows decide. Drawn rows weigh ``min(r, t) / t`` of a
   fitted row each (``t`` drawn rows): together never more than the
   node's fitted rows.
6. *Split*: a leaf at the depth cap, when the region holds fewer than
   ``min_rows`` rows, or when the weighted labels are pure; otherwise the
   question of largest weighted Gini gain among those the node's rows answer
   both ways (exact integer comparisons, the lowest variable on a tie, and
   among a run of neighbouring cuts of one feature that tie, the one nearest
   the middle of the gap they share), a leaf when no gain is positive.
7. *Leaf*: the most common label of its fitted rows when it has at least
   ``min_rows`` of them (a tie settled by the weighted points), else of its
   weighted points.

A yes/no tree has two labels (``-1``, ``+1``; a tie goes to ``+1``); a
multi-class tree ``K > 2`` (the class index; a tie goes to the lowest) and
:class:`lca.decisions.ClassLeafDecision` leaves.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from lca import derive
from lca.decisions import ClassLeafDecision, LeafDecision, RowsSplit, Split, TreeNode, split_rows
from lca.derive import Path
from lca.export import ReconstructedTree, tree_from_decisions
from lca.models.oracle import ClassLabels, ModelLabels
from lca.models.quality import rows_tree_agreement
from lca.models.sources import FIDELITY_PURPOSE, Trace, cut
from lca.models.thresholds import ThresholdEncoder
from lca.oracle import OracleError
from lca.reconstruct import progress_bar

__all__ = ["MAX_ROWS_PER_NODE", "MAX_SHARED_ROWS", "LeafRows", "RowsTree",
           "best_split", "row_order", "topup_columns"]

ORDER_PURPOSE = "surrogate-rows"
TOPUP_PURPOSE = "surrogate-topup"
MAX_ROWS_PER_NODE = 4096
MAX_SHARED_ROWS = 1 << 20
# Candidates whose gain ratio lies within this relative distance of the largest
# (computed in doubles, relative error about 1e-15) are compared exactly.
_NEAR = 1e-9


def row_order(seed: int, rows: int) -> np.ndarray:
    """Row indices ranked by their derived key (word ``i`` of stream 0 under
    ``node_key(seed, "surrogate-rows", ())``), ties to the lower index."""
    keys = derive.raw_words(derive.node_key(seed, ORDER_PURPOSE, ()), 0, 0, rows)
    return np.argsort(keys, kind="stable")


def best_split(minus: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """The candidates of largest positive Gini gain, exactly equal (increasing; empty if none).

    ``minus[c, v]`` is the weight of class ``c`` on candidate ``v``'s ``-1``
    side, ``totals[c]`` the class's weight in all (integers). With
    ``n_-``, ``n_+`` a candidate's side weights and ``N`` their sum, the gain
    orders as ``A / B``, ``A = (sum_c n_-c^2) n_+ + (sum_c n_+c^2) n_-``,
    ``B = n_- n_+``, and is positive when ``A N > (sum_c N_c^2) B``; both are
    compared exactly (Python integers), after a screen in doubles.
    """
    if minus.shape[1] == 0:
        return np.zeros(0, dtype=np.int64)
    whole = int(totals.sum())
    below = minus.sum(axis=0)
    above = whole - below
    plus = totals[:, None] - minus
    quotient = ((minus.astype(np.float64) ** 2).sum(axis=0) * above
                + (plus.astype(np.float64) ** 2).sum(axis=0) * below) \
        / (below.astype(np.float64) * above)
    near = np.flatnonzero(quotient >= quotient.max() * (1 - _NEAR))

    def exact(v: int) -> tuple[int, int]:
        n_minus, n_plus = int(below[v]), int(above[v])
        a = sum(int(x) ** 2 for x in minus[:, v]) * n_plus \
            + sum(int(x) ** 2 for x in plus[:, v]) * n_minus
        return a, n_minus * n_plus

    ratios = {int(v): exact(int(v)) for v in near}
    a, b = max(ratios.values(), key=lambda ab: Fraction(*ab))
    if a * whole <= sum(int(x) ** 2 for x in totals) * b:
        return np.zeros(0, dtype=np.int64)
    return np.array([v for v, (x, y) in sorted(ratios.items()) if x * b == a * y],
                    dtype=np.int64)


def _draw(encoder: ThresholdEncoder, sorted_columns: Sequence[np.ndarray], seed: int,
          path: Path, count: int, purpose: str) -> tuple[np.ndarray, np.ndarray]:
    """Values drawn from the fitted marginals restricted to the region of ``path``: for each
    of ``count`` rows and each feature, where the value comes from (an ordered feature's
    position among its sorted fitted values, a categorical one's category number), and the
    low bit of the word that drew it (the coin of a shaped row, :func:`_shaped`).

    Row ``k``, feature ``j`` reads word ``k * d + j`` of stream 0 under
    ``node_key(seed, purpose, path)``; ``u`` = its top 32 bits. An ordered feature
    takes the value at slot ``floor(u (b - a + k) / 2**32)`` of its sorted fitted values
    inside the region's interval (positions ``[a, b)``) followed by its ``k`` missing ones
    when the region allows a missing value (all of them when it requires one); a
    categorical one lays its
    allowed categories' fitted rows end to end in category order and takes the
    category at ``floor(u * rows / 2**32)``.
    """
    d = encoder.n_features_in_
    words = derive.raw_words(derive.node_key(seed, purpose, path), 0, 0, count * d)
    words = words.reshape(count, d)
    u = words >> np.uint64(32)
    # An ordered feature's sorted values end with its missing ones (NaN sorts last): a
    # draw takes a position among [a, b), the present values the region allows, and
    # [present, size), the missing ones, when the region allows a missing value. A
    # feature no step of the path tests allows all of it. Only the (at most depth)
    # features the path tests need their region.
    a = np.zeros(d, dtype=np.int64)
    size = np.array([values.size for values in sorted_columns], dtype=np.int64)
    present = np.array([values.size if j in encoder.categories_ else
                        int(np.searchsorted(values, np.inf, side="right"))
                        for j, values in enumerate(sorted_columns)], dtype=np.int64)
    b = present.copy()
    absent = size - present
    allowed: dict[int, frozenset[int]] = {}
    for j in {encoder.feature_index(variable) for variable, _ in path}:
        region = encoder.region(j, path)
        if isinstance(region, frozenset):
            allowed[j] = region
            continue
        a[j] = np.searchsorted(sorted_columns[j], region.low, side="left")
        b[j] = np.searchsorted(sorted_columns[j], region.high, side="left")
        if region.missing:
            b[j] = a[j]
        elif region.missing is False:
            absent[j] = 0
        assert b[j] + absent[j] > a[j], "a split keeps fitted rows on both sides"
    slot = ((u * (b - a + absent).astype(np.uint64)) >> np.uint64(32)).astype(np.int64)
    position = np.where(slot < b - a, a + slot, present + slot - (b - a))
    for j in encoder.categories_:
        rows = sorted_columns[j]  # each category's fitted row count
        if j in allowed:  # a category left out takes no slots (every one has rows)
            rows = rows.copy()
            rows[list(set(range(rows.size)) - allowed[j])] = 0
        ends = np.cumsum(rows)
        taken = (u[:, j] * np.uint64(ends[-1])) >> np.uint64(32)
        position[:, j] = np.searchsorted(ends, taken.astype(np.int64), side="right")
    return position, (words & np.uint64(1)).astype(bool)


def topup_columns(encoder: ThresholdEncoder, sorted_columns: Sequence[np.ndarray],
                  seed: int, path: Path, count: int, purpose: str) -> list[np.ndarray]:
    """``count`` rows drawn from the product of the fitted marginals restricted to the region
    of ``path`` (:func:`_draw`'s values, every feature drawn): what fidelity measures on."""
    return _values_at(encoder, sorted_columns, _draw(encoder, sorted_columns, seed, path,
                                                     count, purpose)[0])


def _values_at(encoder: ThresholdEncoder, sorted_columns: Sequence[np.ndarray],
               position: np.ndarray) -> list[np.ndarray]:
    """The columns of drawn values from where :func:`_draw` says they come from."""
    return [encoder.categories_[j][position[:, j]] if j in encoder.categories_ else
            values[position[:, j]] for j, values in enumerate(sorted_columns)]


def _shaped(seed: int, path: Path, rows: int, count: int) -> np.ndarray:
    """For each of ``count`` shaped rows, which of the node's ``rows`` fitted rows it is
    made from: ``floor(v * rows / 2**32)``, ``v`` the top 32 bits of word ``k`` of stream 1
    under ``node_key(seed, "surrogate-topup", path)``."""
    words = derive.raw_words(derive.node_key(seed, TOPUP_PURPOSE, path), 1, 0, count)
    return ((words >> np.uint64(32)) * np.uint64(rows) >> np.uint64(32)).astype(np.int64)


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


@dataclasses.dataclass(frozen=True)
class _Points:
    """A node's points, asked and ready to decide: its fitted rows (indices, in rank order)
    and drawn rows, their bins and class labels (binary: ``0`` for ``-1``, ``1`` for
    ``+1``), and each drawn row's values where its feature was drawn (``position``, with
    ``swap`` saying which features were)."""

    rows: np.ndarray
    bins: np.ndarray
    labels: np.ndarray
    base: np.ndarray
    position: np.ndarray
    swap: np.ndarray


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
        seed, depth, rows_per_node, min_rows, shared_rows: see
            :class:`lca.models.Surrogate`.

    The number of classes comes from the oracle: a multi-class tree over
    :class:`ClassLabels`' class indices, else a yes/no tree over ``±1``
    labels. ``queries`` counts every model query (fitted rows once each,
    drawn rows each time, and the rows asked again).
    """

    builder = "rows"

    def __init__(self, encoder: ThresholdEncoder, oracle: ModelLabels | ClassLabels,
                 columns: Sequence[np.ndarray], values: Sequence[np.ndarray], seed: int,
                 depth: int, rows_per_node: int, min_rows: int, shared_rows: int) -> None:
        self._lock = threading.RLock()
        self.encoder = encoder
        self.oracle = oracle
        self.columns = [np.array(column, copy=True) for column in columns]
        self.seed = seed
        self.depth = depth
        self.rows_per_node = rows_per_node
        self.min_rows = min_rows
        self.shared_rows = shared_rows
        self.m = len(self.columns[0]) if self.columns else 0
        # Each feature's values as its questions read them: a region is filtered
        # one question at a time, without an (m, n) table of every answer.
        self.values = [np.array(column, copy=True) for column in values]
        # Per feature, what drawn values come from: sorted fitted values (ordered),
        # or each category's number of fitted rows (categorical).
        self.sorted_columns = [np.bincount(values, minlength=encoder.categories_[j].size)
                               if j in encoder.categories_ else np.sort(values)
                               for j, values in enumerate(self.values)]
        self.multiclass = isinstance(oracle, ClassLabels)
        assert oracle.classes is not None or not self.multiclass
        self.classes = int(oracle.classes.size) if self.multiclass else 2  # type: ignore[union-attr]
        self.labels = np.zeros(self.m, dtype=np.int64)
        self.asked = np.zeros(self.m, dtype=bool)
        # A node's points are kept as bins, one per feature: the point's level
        # (ThresholdEncoder.levels) in the feature's own run of bins, so that
        # counting bins counts every variable's answers at once (minus_counts).
        # Feature j's run starts at bin offsets_[j] + j and holds its levels
        # 0 .. width (ordered) or -1 .. width - 1 (categorical, shifted by one).
        d = encoder.n_features_in_
        widths = np.diff(encoder.offsets_)
        categorical = np.isin(np.arange(d), list(encoder.categories_))
        missing = np.isin(np.arange(d), list(encoder.missing_))
        first = encoder.offsets_[:-1] + np.arange(d)
        # A categorical level -1 is an unseen category, an ordered one a missing value.
        self._bin_of_level = first + (categorical | missing)  # bin = level + this
        self._categorical = categorical
        # The level of each sorted fitted value of each ordered feature (column j,
        # row k: of sorted_columns[j][k]): a drawn value's level is looked up by
        # where it was drawn from, not searched for again.
        self._sorted_levels = encoder.levels([
            np.zeros(self.m, dtype=np.int64) if j in encoder.categories_ else values
            for j, values in enumerate(self.sorted_columns)])
        self._bins = int(encoder.offsets_[-1]) + d
        feature = np.repeat(np.arange(d), widths)         # the feature of each variable
        t = np.arange(encoder.n_bits) - encoder.offsets_[feature]
        # An "is missing" question (after a feature's cuts) counts as a category does:
        # -1 unless the level is its own, -1 (the missing values' bin, its run's first).
        asks_missing = missing[feature] & (t == widths[feature] - 1)
        self._feature = feature
        self._ordered_variable = ~categorical[feature] & ~asks_missing
        self._run_start = first[feature]                  # its feature's first bin
        self._variable_bin = np.where(asks_missing, self._run_start,
                                      self._bin_of_level[feature] + t)  # its level t's bin
        # Every fitted row's bins, found once (a node's rows are read, not redone).
        self._row_bins = encoder.levels(self.values) + self._bin_of_level
        order = row_order(seed, self.m)
        self._rank = np.empty(self.m, dtype=np.int64)
        self._rank[order] = np.arange(self.m)
        self.queries = 0
        self.oracle_calls = 0
        self.decisions: dict[Path, TreeNode] = {}
        self._leaf_rows: dict[Path, LeafRows] = {}
        self._whole: ReconstructedTree | None = None
        self._regions: dict[Path, np.ndarray] = {(): order}
        self._pending: dict[Path, _Points] = {}

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

    def node_rows(self, path: Path) -> np.ndarray:
        """The fitted rows node ``path`` decides on, in rank order: those of its region among
        the first ``shared_rows`` of the order, and at least its region's first
        ``rows_per_node`` (all of them when it holds fewer)."""
        region = self.region(path)
        shared = int(np.searchsorted(self._rank[region], self.shared_rows))
        return region[:max(shared, self.rows_per_node)]

    def prepare(self, paths: Sequence[Path]) -> None:
        """Ask the model about the points of every node of ``paths`` in one call.

        The call carries the fitted rows not asked yet, each node's parent's
        first row asked again, then the drawn rows of every node (so the model
        is called once per level of the tree, not per node); the points are
        kept for :meth:`decide`. Labels and queries are the same as node by
        node.
        """
        chosen = {path: self.node_rows(path) for path in paths
                  if path not in self.decisions and path not in self._pending}
        if not chosen:
            return
        every = np.concatenate(list(chosen.values()))
        missing = np.unique(every[~self.asked[every]])
        # A parent was asked in an earlier call: its first row asked again now catches a
        # model whose answers change from call to call, at one query a node.
        again = np.array([self.node_rows(path[:-1])[0] for path in chosen if path],
                         dtype=np.int64)
        drawn = {path: self._drawn(path, rows) for path, rows in chosen.items()
                 if rows.size < self.rows_per_node}
        # One call: the rows not asked yet, the rows asked again, every node's drawn rows.
        columns = [_concatenate([column[missing], column[again], *(
            self._shaped_column(j, rows[base], position[:, j], swap[:, j])
            for rows, base, position, swap in drawn.values())])
            for j, column in enumerate(self.columns)]
        found = self.ask(columns) if len(columns[0]) else np.zeros(0, dtype=np.int64)
        self.queries += int(found.size)
        self.oracle_calls += int(found.size > 0)
        self.labels[missing] = found[:missing.size]
        self.asked[missing] = True
        self._recheck(again, found[missing.size:missing.size + again.size], paths)
        start = missing.size + again.size
        for path, rows in chosen.items():
            bins, labels = self._row_bins[rows], self.labels[rows]
            base = np.zeros(0, dtype=np.int64)
            position = np.zeros((0, self.encoder.n_features_in_), dtype=np.int64)
            swap = np.zeros((0, self.encoder.n_features_in_), dtype=bool)
            if path in drawn:
                _, base, position, swap = drawn[path]
                stop = start + base.size
                ordered = self._sorted_levels[position, np.arange(position.shape[1])]
                drawn_bins = np.where(self._categorical, position, ordered) + self._bin_of_level
                bins = np.concatenate([bins, np.where(swap, drawn_bins,
                                                      self._row_bins[rows[base]])])
                labels = np.concatenate([labels, found[start:stop]])
                start = stop
            self._pending[path] = _Points(rows, bins, labels, base, position, swap)

    def _drawn(self, path: Path, rows: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The node's drawn rows: its ``rows``, which of them each drawn row is made from,
        and where its drawn values come from and which features are drawn (:func:`_draw`)."""
        count = self.rows_per_node - rows.size
        position, swap = _draw(self.encoder, self.sorted_columns, self.seed, path, count,
                               TOPUP_PURPOSE)
        return rows, _shaped(self.seed, path, rows.size, count), position, swap

    def _shaped_column(self, j: int, base: np.ndarray, position: np.ndarray,
                       swap: np.ndarray) -> np.ndarray:
        """Feature ``j`` of shaped rows: the drawn value where ``swap``, else the base row's."""
        drawn = (self.encoder.categories_[j][position] if j in self.encoder.categories_
                 else self.sorted_columns[j][position])
        mine = self.columns[j][base]
        if drawn.dtype != mine.dtype:
            drawn, mine = drawn.astype(object), mine.astype(object)
        return np.where(swap, drawn, mine)

    def _recheck(self, rows: np.ndarray, labels: np.ndarray, paths: Sequence[Path]) -> None:
        """The labels of rows asked again must be the cached ones: the model is a fixed function."""
        changed = np.flatnonzero(labels != self.labels[rows])
        if changed.size:
            row = int(rows[changed[0]])
            raise OracleError(
                f"the model answered the same row with two different values (fitted row "
                f"{row}, asked again with the nodes at depth {len(paths[0])}): lca needs a "
                "fixed function, the same value every time a row is asked")

    def ask(self, columns: list[np.ndarray]) -> np.ndarray:
        """The model's class of each row of ``columns`` (binary: ``0`` for ``-1``, ``1``
        for ``+1``)."""
        oracle = self.oracle
        if isinstance(oracle, ClassLabels):
            return oracle.class_columns(columns)
        return (oracle.label_columns(columns) > 0).astype(np.int64)

    def minus_counts(self, bins: np.ndarray, group: np.ndarray, groups: int) -> np.ndarray:
        """Per group (each point's ``group``, below ``groups``) and variable, how many of the
        points (their bins) answer the variable ``-1``."""
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

    def decide(self, path: Path) -> TreeNode:
        """The decision of node ``path`` (its ancestors decided first), cached."""
        found = self.decisions.get(path)
        if found is not None:
            return found
        if path:
            parent = self.decide(path[:-1])
            assert isinstance(parent, Split) and parent.variable == path[-1][0], \
                f"{path} is not a node of this tree"
        self.prepare([path])
        points = self._pending.pop(path)
        decision = self._split(path, points) or self._leaf(path, points)
        self.decisions[path] = decision
        return decision

    def _weights(self, points: _Points) -> tuple[int, int]:
        """The integer weights of a fitted row and of a drawn row: ``t`` and ``min(r, t)``
        with ``t`` drawn rows (``1`` and ``0`` when none are drawn)."""
        r, t = points.rows.size, points.base.size
        return (t, min(r, t)) if t else (1, 0)

    def _class_weights(self, points: _Points) -> tuple[np.ndarray, np.ndarray]:
        """Each class's count among the fitted rows, and its weight among all the points."""
        k, r = self.classes, points.rows.size
        real = np.bincount(points.labels[:r], minlength=k)
        drawn = np.bincount(points.labels[r:], minlength=k)
        row, draw = self._weights(points)
        return real, row * real + draw * drawn

    def _split(self, path: Path, points: _Points) -> RowsSplit | None:
        """The node's split (:func:`best_split` over the weighted points), or ``None``."""
        r, k = points.rows.size, self.classes
        _, weights = self._class_weights(points)
        if len(path) >= self.depth or self.region(path).size < self.min_rows \
                or int((weights > 0).sum()) <= 1:
            return None
        drawn = np.arange(points.labels.size) >= r
        counts = self.minus_counts(points.bins, k * drawn + points.labels, 2 * k)
        real_minus = counts[:k].sum(axis=0)
        candidates = np.flatnonzero((real_minus > 0) & (real_minus < r))
        row, draw = self._weights(points)
        minus = row * counts[:k, candidates] + draw * counts[k:, candidates]
        best = best_split(minus, weights)
        if best.size == 0:
            return None
        return RowsSplit(self._middle(candidates, best, points), points.labels.size, r)

    def _middle(self, candidates: np.ndarray, best: np.ndarray, points: _Points) -> int:
        """The variable of the split: the lowest of ``best`` (candidate indices), or, when
        it is a cut whose neighbouring cuts tie with it, the cut of that run nearest the
        middle of the gap between the node's points it falls in (the lower on a tie). When
        the points below the lowest's cut are all missing values, its feature's "is
        missing" instead, which splits the points alike."""
        variables = candidates[best]
        first = int(variables[0])
        if not self._ordered_variable[first]:
            return first
        j = int(self._feature[first])
        start = int(self.encoder.offsets_[j])
        cuts = self.encoder.cuts_[j]
        values = np.concatenate([self.values[j][points.rows], np.where(
            points.swap[:, j], self.sorted_columns[j][points.position[:, j]],
            self.values[j][points.rows[points.base]])])
        below = values[values < cuts[first - start]]
        if below.size == 0:  # only missing values below: "is missing" splits the points alike
            return int(self.encoder.offsets_[j + 1]) - 1
        run = [first]
        for variable in variables[1:].tolist():
            if variable != run[-1] + 1 or self._feature[variable] != j \
                    or not self._ordered_variable[variable]:  # "is missing" ends a run
                break
            run.append(variable)
        if len(run) == 1:
            return first
        low = Fraction(float(below.max()))
        high = Fraction(float(values[values >= cuts[run[-1] - start]].min()))
        return min(run, key=lambda v: (abs(2 * Fraction(float(cuts[v - start])) - low - high), v))

    def _leaf(self, path: Path, points: _Points) -> LeafDecision:
        """The node's leaf: the most common label of its fitted rows when it has at least
        ``min_rows`` of them (a tie settled by the weighted points), else of its weighted
        points; a tie left goes to ``+1`` (a yes/no tree) or the lowest class."""
        real, weights = self._class_weights(points)
        r = points.rows.size
        if r >= self.min_rows:
            top = np.flatnonzero(real == real.max())
            chosen = top[weights[top] == weights[top].max()]
        else:
            chosen = np.flatnonzero(weights == weights.max())
        label = int(chosen[-1] if not self.multiclass else chosen[0])
        agree = int((points.labels[:r] == label).sum())
        self._leaf_rows[path] = LeafRows(r, agree)
        counts = np.bincount(points.labels, minlength=self.classes)
        if self.multiclass:
            return ClassLeafDecision(label, int(points.labels.size), int(counts[label]))
        return LeafDecision(1 if label else -1, int(points.labels.size),
                            int(counts[1] - counts[0]))

    # -- the tree source ------------------------------------------------------------

    @property
    def record(self) -> dict[str, Any]:
        """The builder and its parameters, as the tree's JSON records them (``"params"``)."""
        return {"builder": self.builder, "n": self.encoder.n_bits, "depth": self.depth,
                "rows_per_node": self.rows_per_node, "min_rows": self.min_rows,
                "shared_rows": self.shared_rows}

    def product_sample(self, oracle: ModelLabels | ClassLabels,
                       samples: int) -> tuple[np.ndarray, np.ndarray]:
        """The tree's and the model's answers on ``samples`` rows of the product of the
        fitted marginals: every value drawn as a node's are, at the root under purpose
        ``"surrogate-fidelity"`` (what fidelity measures on)."""
        columns = topup_columns(self.encoder, self.sorted_columns, self.seed, (), samples,
                                FIDELITY_PURPOSE)
        answers = self.answers(self.encoder.encode_columns(columns)[0])
        if isinstance(oracle, ClassLabels):
            return answers, oracle.class_columns(columns)
        return answers, oracle.label_columns(columns)

    def yardstick(self, X: Any, labels: np.ndarray) -> float | None:
        """On rows ``X`` (the model's ``labels`` of them), a plain scikit-learn tree of this
        tree's depth fitted on the model's labels of the fitted rows
        (:func:`lca.models.quality.rows_tree_agreement`)."""
        fitted, fitted_labels = self.fitted_rows()
        rows = self.encoder.numbers(self.encoder.columns_of("Surrogate.fidelity", X))
        return rows_tree_agreement(fitted, fitted_labels, rows, labels, self.depth)

    def fitted_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Every fitted row as numbers (:meth:`ThresholdEncoder.numbers`) and the model's
        label of each (``±1``, or a multi-class tree's class index). Rows the tree has not
        asked about yet are asked now, not counted in :attr:`queries` and not kept."""
        with self._lock:
            labels = self.labels.copy()
            missing = np.flatnonzero(~self.asked)
            if missing.size:
                labels[missing] = self.ask([column[missing] for column in self.columns])
            return self.encoder.numbers(self.columns), self._answer(labels)

    def _answer(self, labels: np.ndarray) -> np.ndarray:
        """Class numbers as the tree answers them: ``±1`` (int8) or class indices."""
        return labels if self.multiclass else np.where(labels > 0, 1, -1).astype(np.int8)

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
            while isinstance(decision, Split):
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
            out = np.zeros(points.shape[0], dtype=np.int64 if self.multiclass else np.int8)
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
                        if isinstance(decision, Split) and (depth is None or len(path) < depth):
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
                tree_from_decisions(self.oracle, self.record, self.seed, known),
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
