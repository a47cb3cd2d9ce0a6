"""What a node reads of its ancestors: their own points and its inherited points.

A decided node keeps only its own points' values (the lineage the
reconstructor holds); everything else is re-derivable and lives in the
reconstructor's memo, so evicting it costs work, never a query or an answer:
an ancestor's own points (:func:`_own`, re-derived from their stream) and a
node's inherited points (:class:`Pool`: row indices into its ancestors' own
points; a child's inherited points are its parent's *pool*, the parent's
inherited and own points, on its branch: :func:`_inherited`).
:class:`Lineage` works on a group of nodes' rows one depth at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from lca import derive
from lca.derive import Path
from lca.estimator import NodeContext
from lca.search.compiled import kernel_module
from lca.search.group import SearchNode
from lca.search.rules import PAIRS, SEARCH_BYTES
from lca.search.sums import Labelled, grouped_correlations, is_minus


@dataclass(frozen=True)
class Pool:
    """A node's inherited points as row indices: ``rows[k]`` selects own points of its
    ancestor at depth ``k``. Holds no points, only where they are."""

    rows: tuple[np.ndarray, ...]

    @property
    def nbytes(self) -> int:
        return sum(rows.nbytes for rows in self.rows)


def _handed_sums(contexts: list[NodeContext]) -> list[np.ndarray | None]:
    """The correlation sums of each node's inherited points its parent handed down
    (:meth:`Lineage.hand_down`), or ``None`` where the memo dropped them."""
    return [c.memo.get(("correlations", c.seed, c.path)) for c in contexts]


def _variables(nodes: list[SearchNode], split: list[int]) -> list[int]:
    """The variables the nodes ``split`` split on."""
    variables = []
    for b in split:
        variable = nodes[b].variable
        assert variable is not None, "a split node has its variable"
        variables.append(variable)
    return variables


_NO_ROWS = np.zeros(0, dtype=np.int64)
"""An ancestor's rows in a pool when none of its own points lie in the subcube."""


def _own(context: NodeContext, k: int) -> Labelled:
    """Own points of the decided ancestor ``path[:k]``, words re-derived if evicted."""
    n, seed, prefix = context.n, context.seed, context.path[:k]
    values = context.lineage(k)
    words = context.memo.get(("own", seed, prefix))
    if words is None:
        words = derive.uniform_points(derive.node_key(seed, PAIRS, prefix), n, 0,
                                      values.size, prefix)
        context.memo.put(("own", seed, prefix), words)
    return Labelled(words, values)


def _inherited(context: NodeContext, k: int) -> tuple[np.ndarray, ...]:
    """Inherited rows of ``path[:k]`` (``k < len(path)``, decided): its parent's pool
    on its branch, from the memo (a split puts its children's there) or re-derived."""
    if k == 0:
        return ()
    key = ("inherited", context.seed, context.path[:k])
    held = context.memo.get(key)
    if held is None:
        held = Pool(Lineage([context]).on_branch([_parent_pool(context, k)],
                                                 [context.path[k - 1]])[0])
        context.memo.put(key, held)
    return held.rows


def _parent_pool(context: NodeContext, k: int) -> tuple[np.ndarray, ...]:
    """The pool of the parent ``path[:k - 1]`` of ``path[:k]``: its inherited rows, then
    all its own."""
    return _inherited(context, k - 1) + (np.arange(context.lineage(k - 1).size),)


class Lineage:
    """The ancestors' own points of a group of nodes, one depth at a time.

    At depth ``j`` each distinct ancestor of the nodes (siblings share all of
    theirs) is fetched once (:func:`_own`), so an operation on
    every node's rows of every ancestor costs a few numpy calls per depth,
    whatever the number of nodes. Rows are given per node as a tuple with one
    index array per depth.
    """

    def __init__(self, contexts: list[NodeContext]) -> None:
        self.contexts = contexts
        self._rows: list[tuple[np.ndarray, ...]] | None = None

    def start(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each node's inherited points: how many, the sum of their values, and their
        correlation sums ``(B, n)`` (handed down by its parent, or summed here)."""
        inherited = self._inherited()
        handed = _handed_sums(self.contexts)
        missing = [b for b, sums in enumerate(handed) if sums is None]
        sums = np.empty((len(self.contexts), self.contexts[0].n), dtype=np.int64)
        if missing:
            sums[missing] = self.sums([inherited[b] for b in missing], missing)
        for b, handed_sums in enumerate(handed):
            if handed_sums is not None:
                sums[b] = handed_sums
        return *self._counts_and_totals(inherited, handed), sums

    def counts_and_totals(self) -> tuple[np.ndarray, np.ndarray]:
        """Each node's inherited count and the sum of their values."""
        return self._counts_and_totals(self._inherited(), _handed_sums(self.contexts))

    def _inherited(self) -> list[tuple[np.ndarray, ...]]:
        if self._rows is None:
            self._rows = self.inherited()
        return self._rows

    def _counts_and_totals(self, inherited: list[tuple[np.ndarray, ...]],
                           handed: list[np.ndarray | None]) -> tuple[np.ndarray, np.ndarray]:
        """How many inherited points each node has, and the sum of their values.

        Every inherited point ``u`` of node ``path`` has ``u_v = bit`` for its last
        step ``(v, bit)``, so the handed-down sum ``sum f(u) u_v`` is ``bit`` times
        their total: only the nodes without one read the values.
        """
        counts = np.array([sum(rows.size for rows in node) for node in inherited],
                          dtype=np.int64)
        totals = np.empty(len(inherited), dtype=np.int64)
        missing = [b for b, sums in enumerate(handed) if sums is None]
        if missing:
            totals[missing] = self.totals([inherited[b] for b in missing], missing)
        for b, (context, sums) in enumerate(zip(self.contexts, handed, strict=True)):
            if sums is not None:
                variable, bit = context.path[-1]
                totals[b] = bit * int(sums[variable])
        return counts, totals

    def hand_down(self, nodes: list[SearchNode], split: list[int]) -> None:
        """Give the children of every split node (positions ``split``) their inherited
        points and their correlations.

        A child's inherited points are its parent's pool on its branch (the
        parent's inherited points and its own): their rows on both branches
        come from one test of each row's bit. The ``+1`` branch's sums are
        computed, the ``-1`` branch's are the pool's (already known) minus them.
        """
        if not split:
            return
        inherited = self._inherited()
        seed, memo = self.contexts[0].seed, self.contexts[0].memo
        variables = _variables(nodes, split)
        branches = self.branches([inherited[b] for b in split], variables, split)
        own = [nodes[b].own.sides(variable) for b, variable in zip(split, variables, strict=True)]
        plus = self.sums([ancestors for ancestors, _ in branches], split, [
            nodes[b].own.rows(plus_rows) for b, (plus_rows, _) in zip(split, own, strict=True)])
        for b, variable, plus_sums, sides, own_sides in zip(split, variables, plus, branches,
                                                           own, strict=True):
            path = self.contexts[b].path
            for bit, rows, own_rows in zip((1, -1), sides, own_sides, strict=True):
                memo.put(("inherited", seed, path + ((variable, bit),)),
                         Pool(rows + (own_rows,)))
            memo.put(("correlations", seed, path + ((variable, 1),)), plus_sums)
            memo.put(("correlations", seed, path + ((variable, -1),)),
                     nodes[b].correlations - plus_sums)

    def inherited(self) -> list[tuple[np.ndarray, ...]]:
        """Each node's inherited points: rows of each ancestor's own points."""
        out: list[tuple[np.ndarray, ...]] = []
        missing = []
        for b, context in enumerate(self.contexts):
            held = context.memo.get(("inherited", context.seed, context.path)) \
                if context.path else Pool(())
            out.append(() if held is None else held.rows)
            if held is None:
                missing.append(b)
        if missing:
            pools = [_parent_pool(self.contexts[b], len(self.contexts[b].path))
                     for b in missing]
            for b, rows in zip(missing, self.on_branch(
                    pools, [self.contexts[b].path[-1] for b in missing], missing), strict=True):
                out[b] = rows
        return out

    def level(self, nodes: list[int], j: int, with_words: bool = True
              ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
        """Words and values of the depth-``j`` ancestors of ``nodes``, stacked, and where
        each node's ancestor starts (no words, ``None``, unless ``with_words``: the
        stacked words are the one large copy, rebuilt per depth so that at most
        one depth's is held)."""
        first: dict[Path, int] = {}
        distinct: list[Labelled] = []
        which = []
        for b in nodes:
            prefix = self.contexts[b].path[:j]
            if prefix not in first:
                first[prefix] = len(distinct)
                distinct.append(_own(self.contexts[b], j))
            which.append(first[prefix])
        if len(distinct) == 1:
            return distinct[0].words, distinct[0].values, np.zeros(len(nodes), dtype=np.int64)
        sizes = np.array([len(points) for points in distinct])
        starts = np.cumsum(sizes) - sizes
        return (np.concatenate([points.words for points in distinct]) if with_words else None,
                np.concatenate([points.values for points in distinct]), starts[which])

    def _depths(self, rows: list[tuple[np.ndarray, ...]], nodes: list[int],
                with_words: bool = True
                ) -> Iterator[tuple[int, list[int], np.ndarray, np.ndarray, np.ndarray,
                                    np.ndarray | None, np.ndarray]]:
        """Per depth ``j`` where some rows are present: their owners (positions in
        ``rows``), the rows as global indices into the level, where each owner's
        ancestor starts in it, and the level's words (if ``with_words``) and
        values. Depths with no rows are skipped (deep nodes inherit nothing from
        their far ancestors)."""
        for j in range(max((len(r) for r in rows), default=0)):
            at = [i for i, r in enumerate(rows) if len(r) > j and r[j].size]
            if not at:
                continue
            words, values, starts = self.level([nodes[i] for i in at], j, with_words)
            if len(at) == 1:  # one node's rows: nothing to stack
                flat = rows[at[0]][j]
                yield j, at, np.full(flat.size, at[0]), flat, np.zeros(1, dtype=np.int64), \
                    words, values
                continue
            sizes = np.array([rows[i][j].size for i in at])
            owner = np.repeat(np.array(at, dtype=np.int64), sizes)
            start = np.repeat(starts, sizes)
            yield j, at, owner, np.concatenate([rows[i][j] for i in at]) + start, start, \
                words, values

    def _one(self, rows: tuple[np.ndarray, ...], node: int
             ) -> Iterator[tuple[int, np.ndarray, Labelled]]:
        """:meth:`_depths` for a group of one (one answer's path): per depth ``j``
        where the node has rows, those rows and its ancestor's own points, with no
        stacking and no owner arrays."""
        context = self.contexts[node]
        for j, flat in enumerate(rows):
            if flat.size:
                yield j, flat, _own(context, j)

    def on_branch(self, rows: list[tuple[np.ndarray, ...]], steps: list[tuple[int, int]],
                  nodes: list[int] | None = None) -> list[tuple[np.ndarray, ...]]:
        """The rows of each ``rows[i]`` whose coordinate ``steps[i][0]`` is ``steps[i][1]``."""
        both = self.branches(rows, [variable for variable, _ in steps], nodes)
        return [plus if bit == 1 else minus
                for (plus, minus), (_, bit) in zip(both, steps, strict=True)]

    def branches(self, rows: list[tuple[np.ndarray, ...]], variables: list[int],
                 nodes: list[int] | None = None
                 ) -> list[tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]]:
        """Each ``rows[i]`` split by coordinate ``variables[i]``: the rows where it is
        ``+1``, and those where it is ``-1``."""
        nodes = list(range(len(rows))) if nodes is None else nodes
        if len(rows) == 1:
            variable, = variables
            plus, minus = [_NO_ROWS] * len(rows[0]), [_NO_ROWS] * len(rows[0])
            for j, flat, own in self._one(rows[0], nodes[0]):
                at_minus = is_minus(own.words[flat, variable >> 6], variable)
                plus[j], minus[j] = flat[~at_minus], flat[at_minus]
            return [(tuple(plus), tuple(minus))]
        out = [([_NO_ROWS] * len(r), [_NO_ROWS] * len(r)) for r in rows]
        columns = np.array(variables, dtype=np.int64)
        for j, at, owner, flat, start, words, _ in self._depths(rows, nodes):
            assert words is not None, "levels come with their words"
            variable = columns[owner]
            # One variable per row here (is_minus takes one for all).
            at_minus = (words[flat, variable >> 6] >> (variable & 63).astype(np.uint64)) \
                & np.uint64(1) == 1
            for side, keep in enumerate((~at_minus, at_minus)):
                if len(at) == 1:
                    out[at[0]][side][j] = (flat - start)[keep]
                    continue
                kept = np.bincount(owner[keep], minlength=len(rows))[at]
                pieces = np.split((flat - start)[keep], np.cumsum(kept)[:-1])
                for i, piece in zip(at, pieces, strict=True):
                    out[i][side][j] = piece
        return [(tuple(plus), tuple(minus)) for plus, minus in out]

    def totals(self, rows: list[tuple[np.ndarray, ...]], nodes: list[int]) -> np.ndarray:
        """The sum of the values of the points each ``rows[i]`` (of node ``nodes[i]``)
        selects."""
        if len(rows) == 1:  # the kept values alone: no words, no stacking
            context = self.contexts[nodes[0]]
            return np.array([sum(int(context.lineage(j)[flat].sum(dtype=np.int64))
                                 for j, flat in enumerate(rows[0]) if flat.size)],
                            dtype=np.int64)
        totals = np.zeros(len(rows), dtype=np.int64)
        for _, _, owner, flat, _, _, values in self._depths(rows, nodes, with_words=False):
            np.add.at(totals, owner, values[flat])
        return totals

    def sums(self, rows: list[tuple[np.ndarray, ...]], nodes: list[int],
             extra: list[Labelled] | None = None) -> np.ndarray:
        """Correlation sums of the points each ``rows[i]`` selects, and of the points
        ``extra[i]`` if given: ``(len(rows), n)``.

        The selected points of every depth are gathered and summed together, a
        bounded number of rows at a time (one sum for a node's whole lineage).
        """
        n = self.contexts[0].n
        limit = max(1, SEARCH_BYTES // (8 * derive.words_per_point(n)))
        if len(rows) == 1 and sum(flat.size for flat in rows[0]) \
                + (len(extra[0]) if extra else 0) <= limit:
            # One node's points, gathered at once (within the bound below).
            gathered = [(own.words[flat], own.values[flat])
                        for _, flat, own in self._one(rows[0], nodes[0])]
            if extra:
                gathered.append((extra[0].words, extra[0].values))
            if not gathered:
                return np.zeros((1, n), dtype=np.int64)
            signs = np.concatenate([v for _, v in gathered])
            return grouped_correlations(np.concatenate([w for w, _ in gathered]), signs,
                                        np.array([signs.size]), n)
        out = np.zeros((len(rows), n), dtype=np.int64)
        if extra:
            out += grouped_correlations(np.concatenate([points.words for points in extra]),
                                        np.concatenate([points.values for points in extra]),
                                        np.array([len(points) for points in extra]), n)
        pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        held = 0

        def flush() -> None:
            owners = np.concatenate([owner for owner, _, _ in pending])
            order = np.argsort(owners, kind="stable")
            present, counts = np.unique(owners, return_counts=True)
            grouped_correlations(np.concatenate([words for _, words, _ in pending])[order],
                                 np.concatenate([values for _, _, values in pending])[order],
                                 counts, n, present, out)
            pending.clear()

        for _, _, owner, flat, _, words, values in self._depths(rows, nodes):
            assert words is not None, "levels come with their words"
            for lo in range(0, flat.size, limit):
                picked = flat[lo:lo + limit]
                pending.append((owner[lo:lo + limit], words[picked], values[picked]))
                held += picked.size
                if held >= limit:
                    flush()
                    held = 0
        if pending:
            flush()
        return out


class PackedLineage:
    """:class:`Lineage`'s twin for the compiled kernels: a node's inherited points held
    as one packed array.

    The memo holds a node's inherited points themselves (``("inherited points",
    seed, path)``, a :class:`~lca.search.sums.Labelled`) instead of rows of its
    ancestors' own points, so a split hands its children their points and sums
    in one compiled call (:func:`lca.search.kernels.hand_down`), with no walk
    over the depths. Points are held in no particular order: only their count,
    total and sums are read. Like every memo entry they are re-derivable: an
    evicted node's points are its parent's pool (inherited and own points) on
    its branch (:func:`_inherited_points`).
    """

    def __init__(self, contexts: list[NodeContext]) -> None:
        self.contexts = contexts
        self._points: list[Labelled] | None = None

    def _inherited(self) -> list[Labelled]:
        if self._points is None:
            self._points = [_inherited_points(c, len(c.path)) for c in self.contexts]
        return self._points

    def start(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As :meth:`Lineage.start`."""
        kernels = kernel_module()
        inherited = self._inherited()
        counts, totals = self.counts_and_totals()
        sums = np.empty((len(self.contexts), self.contexts[0].n), dtype=np.int64)
        for b, handed in enumerate(_handed_sums(self.contexts)):
            sums[b] = kernels.point_sums(inherited[b].words, inherited[b].values,
                                         self.contexts[0].n) if handed is None else handed
        return counts, totals, sums

    def counts_and_totals(self) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`Lineage.counts_and_totals`."""
        inherited = self._inherited()
        return (np.array([len(points) for points in inherited], dtype=np.int64),
                np.array([points.total for points in inherited], dtype=np.int64))

    def hand_down(self, nodes: list[SearchNode], split: list[int]) -> None:
        """As :meth:`Lineage.hand_down`: each child's points, and both sums."""
        kernels = kernel_module()
        inherited = self._inherited()
        n, seed, memo = self.contexts[0].n, self.contexts[0].seed, self.contexts[0].memo
        for b, variable in zip(split, _variables(nodes, split), strict=True):
            node, path = nodes[b], self.contexts[b].path
            plus_words, plus_values, minus_words, minus_values, plus_sums = kernels.hand_down(
                inherited[b].words, inherited[b].values, node.own.words, node.own.values,
                variable, n)
            memo.put(("inherited points", seed, path + ((variable, 1),)),
                     Labelled(plus_words, plus_values))
            memo.put(("inherited points", seed, path + ((variable, -1),)),
                     Labelled(minus_words, minus_values))
            memo.put(("correlations", seed, path + ((variable, 1),)), plus_sums)
            memo.put(("correlations", seed, path + ((variable, -1),)),
                     node.correlations - plus_sums)


def _inherited_points(context: NodeContext, k: int) -> Labelled:
    """The inherited points of ``path[:k]`` (decided, as are its ancestors): from the
    memo (a split puts its children's there), or its parent's pool on its branch."""
    if k == 0:
        return Labelled.empty(context.n)
    key = ("inherited points", context.seed, context.path[:k])
    held = context.memo.get(key)
    if held is None:
        parent, own = _inherited_points(context, k - 1), _own(context, k - 1)
        pool = Labelled(np.concatenate([parent.words, own.words]),
                        np.concatenate([parent.values, own.values]))
        variable, bit = context.path[k - 1]
        plus, minus = pool.sides(variable)
        held = pool.rows(plus if bit == 1 else minus)
        context.memo.put(key, held)
    return held
