"""Local reconstruction of a decision tree (Figure "BuildStrand").

For a query ``z`` the :class:`Reconstructor` builds only the root-to-leaf path
of ``z`` in the tree ``T_seed``: at each node it estimates the scores of
``f_path`` and fixes the variable of highest estimate; at the leaf it labels by
the sign of the estimated mean. Every decision is a deterministic function of
``(oracle, params, seed, path)`` (Remark "Local reconstruction"), so replicas
that never communicate answer from the same tree, and the node cache only
saves work: it never changes an answer.
"""

from __future__ import annotations

import time
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from lca import estimate, search
from lca._validate import check_flag, check_int, check_real, check_seed
from lca.derive import Path, check_path
from lca.oracle import CountingOracle, Oracle, check_points
from lca.params import Params

if TYPE_CHECKING:  # export builds on this module; imported on use only
    from lca.export import ReconstructedTree

__all__ = [
    "BudgetExceeded",
    "Decision",
    "NodeDecision",
    "LeafDecision",
    "AnswerStats",
    "Explanation",
    "LowMarginWarning",
    "Reconstructor",
    "answer",
]


@dataclass(frozen=True)
class NodeDecision:
    """An internal node: the chosen variable and the counts that chose it.

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
    docs/theory.md §7), so the choice over the runner-up is close to a guess.
    """

    variable: int
    samples: int
    disagreements: int
    agreements: int
    certified: bool | None = None
    runner_up: int | None = None
    margin: int | None = None
    low_margin: bool = False
    votes: int | None = None
    rule: str | None = None


@dataclass(frozen=True)
class LeafDecision:
    """A leaf: its label and the sample sum that set it (``certified`` as for nodes)."""

    label: int
    samples: int
    total: int
    certified: bool | None = None


@dataclass
class AnswerStats:
    """Work done: queries to ``f``, nodes and leaves built, cache hits.

    Adaptive mode also counts decisions that reached their sample cap without
    a certificate (``uncertified``) and nodes that became leaves early;
    ``low_margin`` counts nodes built whose choice failed the sign test.
    """

    queries: int = 0
    nodes_built: int = 0
    leaves_built: int = 0
    cache_hits: int = 0
    uncertified: int = 0
    early_leaves: int = 0
    low_margin: int = 0

    def __iadd__(self, other: AnswerStats) -> AnswerStats:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        return self


@dataclass(frozen=True)
class Explanation:
    """The path of one query through ``T_seed`` and what it cost.

    ``conditions`` holds, for each step of ``path``, the oracle's readable
    condition (:meth:`lca.oracle.Oracle.describe`, e.g. ``x17=-1`` or
    ``petal length >= 2.45``); ``str()`` shows them, each with the margin its
    node won by (``*`` marks a low-margin decision, see :class:`NodeDecision`).
    """

    seed: int
    path: Path
    label: int
    nodes: tuple[NodeDecision, ...]
    leaf: LeafDecision
    stats: AnswerStats = field(compare=False)
    conditions: tuple[str, ...] = field(default=(), compare=False)

    def __str__(self) -> str:
        conditions = self.conditions or tuple(
            f"x{var}={'+' if bit > 0 else '-'}1" for var, bit in self.path)
        steps = " -> ".join(
            condition if node.margin is None
            else f"{condition} (margin {node.margin}{'*' if node.low_margin else ''})"
            for condition, node in zip(conditions, self.nodes))
        return (f"T_{self.seed}: {steps or '(root)'} => {self.label:+d}  "
                f"[{self.stats.queries} queries, {self.stats.nodes_built} nodes built, "
                f"{self.stats.cache_hits} cache hits]")


class BudgetExceeded(RuntimeError):
    """:meth:`Reconstructor.answer_many` stopped at its query budget or time limit.

    Raised *before* building a decision that could break the budget, so
    ``queries <= max_queries`` always. What was finished is kept:

    Attributes:
        answers: ``int8`` array with one entry per row; ``T_seed`` of the row
            where ``finished`` is true, ``0`` (never a valid answer) elsewhere.
        finished: boolean mask of the rows answered.
        stats: the work done by the call (also added to the reconstructor's
            :attr:`Reconstructor.stats`).
        queries: queries to ``f`` spent by the call (``stats.queries``).
        limit: ``"max_queries"`` or ``"time_limit"``, the limit that was hit.

    The decisions built before stopping stay in the cache, so calling again
    (with a larger budget) does not pay for them twice.
    """

    def __init__(self, message: str, *, answers: np.ndarray, finished: np.ndarray,
                 stats: AnswerStats, limit: str) -> None:
        super().__init__(message)
        self.answers = answers
        self.finished = finished
        self.stats = stats
        self.queries = stats.queries
        self.limit = limit

    def __reduce__(self) -> tuple[Any, ...]:
        return (_budget_exceeded, (str(self), self.answers, self.finished, self.stats,
                                   self.limit))


def _budget_exceeded(message: str, answers: np.ndarray, finished: np.ndarray,
                     stats: AnswerStats, limit: str) -> BudgetExceeded:
    return BudgetExceeded(message, answers=answers, finished=finished, stats=stats,
                          limit=limit)


class _NoBar:
    """Stands in for a tqdm bar when progress is off."""

    n = total = 0

    def update(self, count: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _end_early(bar: Any) -> None:
    """Show a bar whose total was an upper bound (early leaves) as complete."""
    if bar.n < bar.total:
        bar.total = bar.n
        bar.refresh()


def progress_bar(enabled: bool, total: int, desc: str, unit: str) -> Any:
    """A tqdm bar on stderr, or a do-nothing stand-in when ``enabled`` is false.

    tqdm is imported only when a bar is drawn: worker processes never pay for it.
    """
    if not enabled:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, dynamic_ncols=True)


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


def _check_query(z: Any, n: int) -> np.ndarray:
    arr = np.asarray(z)
    if arr.ndim != 1:
        raise TypeError(f"z must be a 1-D array of {n} values ±1; got shape {arr.shape}")
    if arr.shape[0] != n:
        raise TypeError(f"z must be a 1-D array of {n} values ±1; got length {arr.shape[0]}")
    return check_points(arr[None, :], n, what="z")[0]


Decision = NodeDecision | LeafDecision

# Warn when more than this share of the nodes an answer used were low-margin.
_LOW_MARGIN_SHARE = 0.5
# Sign-test level of the score estimator's margins: ln(20), a 95% one-sided test.
_SCORE_MARGIN_LOG = estimate.ln_upper(20)
# Labelled points kept for reuse by the search estimator (docs/randomness.md §6, "Efficient mode").
_POOL_BYTES = 1 << 28


class LowMarginWarning(UserWarning):
    """Most decisions behind an answer were low-margin: each chose over its runner-up by a guess."""


def _warn_if_guesswork(nodes: list[NodeDecision]) -> None:
    low = sum(node.low_margin for node in nodes)
    if nodes and low > _LOW_MARGIN_SHARE * len(nodes):
        # One text for every call, so Python's warning filter shows it once per
        # call site instead of once per batch; the counts are in AnswerStats.
        warnings.warn(
            "Most node decisions behind these answers were low-margin: the chosen "
            "variable did not beat the runner-up by a significant margin. That is "
            "harmless where the two are about equally good splits or f is nearly "
            "constant; otherwise the tree there is close to guesswork (more samples per "
            "node or a smaller depth cap may help). Counts: AnswerStats.low_margin, "
            "nodes_built.",
            LowMarginWarning, stacklevel=3)


def _score_node(counts: estimate.ScoreCounts, variable: int, path: Path,
                certified: bool | None) -> NodeDecision:
    """A score-estimator node with its margin over the runner-up."""
    agreements = counts.agreements.copy()
    agreements[variable] = counts.samples + 1
    runner_up = estimate.choose_variable(
        estimate.ScoreCounts(counts.samples, counts.disagreements, agreements), path) \
        if len(path) + 1 < counts.agreements.shape[0] else None
    chosen = int(counts.agreements[variable])
    if runner_up is None:
        return NodeDecision(variable, counts.samples, counts.disagreements, chosen, certified)
    lead = int(counts.agreements[runner_up]) - chosen
    # Samples that separate the two: at most those where either one flipped.
    trials = 2 * counts.disagreements - chosen - int(counts.agreements[runner_up])
    low = not estimate.lead_is_certified(lead, trials, _SCORE_MARGIN_LOG)
    return NodeDecision(variable, counts.samples, counts.disagreements, chosen, certified,
                        runner_up, lead, low)


class Reconstructor:
    """Query access to one fixed tree ``T_seed`` per seed, built lazily.

    Args:
        oracle: query access to ``f``; must be a fixed function of its input.
        params: depth, noise rate and sample counts (:class:`lca.Params`).
        cache_size: most decided nodes and leaves kept (least recently used
            are dropped); ``0`` disables the cache. It never changes answers.
        record: keep every decision seen, keyed by ``(seed, path)``, in
            :attr:`decisions` (unbounded; for consistency checks).

    After each call, :attr:`last_stats` holds its work and :attr:`last_built`
    the paths of the nodes and leaves it built (not cache hits); :attr:`stats`
    accumulates. A reconstructor is fully described by ``(oracle, params)``:
    it pickles without its cache or statistics.
    """

    def __init__(self, oracle: Oracle, params: Params, *, cache_size: int = 1 << 16,
                 record: bool = False) -> None:
        if not isinstance(params, Params):
            raise TypeError("The 'params' parameter of Reconstructor must be an lca.Params. "
                            f"Got {type(params).__name__} instead.")
        counting = CountingOracle(oracle)
        if oracle.n != params.n:
            raise ValueError(f"oracle {oracle.name!r} has n={oracle.n} but params "
                             f"have n={params.n}")
        self.cache_size = check_int("Reconstructor", "cache_size", cache_size, 0)
        check_flag("Reconstructor", "record", record)
        self.oracle = oracle
        self.params = params
        self.record = record
        self._counting = counting
        self._cache: OrderedDict[tuple[int, Path], Decision] = OrderedDict()
        self._pools: OrderedDict[tuple[int, Path], search.Labelled] = OrderedDict()
        self._pool_bytes = 0
        self.decisions: dict[tuple[int, Path], Decision] = {}
        self.stats = AnswerStats()
        self.last_stats = AnswerStats()
        self.last_built: list[Path] = []

    def __getstate__(self) -> dict[str, Any]:
        return {"oracle": self.oracle, "params": self.params,
                "cache_size": self.cache_size, "record": self.record}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["oracle"], state["params"],  # type: ignore[misc]
                      cache_size=state["cache_size"], record=state["record"])

    def __repr__(self) -> str:
        return (f"Reconstructor({self.oracle!r}, depth={self.params.depth}, "
                f"p={self.params.noise_rate:.4g}, cache_size={self.cache_size})")

    # -- decisions -----------------------------------------------------------

    def _decide(self, seed: int, path: Path, stats: AnswerStats,
                batch: dict[Path, Decision] | None = None) -> Decision:
        if batch is not None and path in batch:
            return batch[path]
        key = (seed, path)
        decision = self._cache.get(key)
        if decision is not None:
            self._cache.move_to_end(key)
            stats.cache_hits += 1
        else:
            before = self._counting.queries
            decision = self._build(seed, path)
            self.last_built.append(path)
            stats.queries += self._counting.queries - before
            if isinstance(decision, LeafDecision):
                stats.leaves_built += 1
                stats.early_leaves += len(path) < self.params.path_length
            else:
                stats.nodes_built += 1
            stats.uncertified += decision.certified is False
            stats.low_margin += isinstance(decision, NodeDecision) and decision.low_margin
            if self.cache_size:
                self._cache[key] = decision
                if len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        if batch is not None:
            batch[path] = decision
        if self.record:
            self.decisions[key] = decision
        return decision

    def _build(self, seed: int, path: Path) -> Decision:
        params = self.params
        if params.estimator == "search":
            return self._build_search(seed, path)
        if params.adaptive:
            return self._build_adaptive(seed, path)
        if len(path) == params.path_length:
            samples = params.leaf_samples
            total = estimate.leaf_sum(self._counting, seed, path, samples)
            return LeafDecision(estimate.leaf_label(total), samples, total)
        counts = estimate.score_counts(self._counting, seed, path,
                                       params.score_samples, params.noise_threshold)
        return _score_node(counts, estimate.choose_variable(counts, path), path, None)

    def _build_adaptive(self, seed: int, path: Path) -> Decision:
        if len(path) < self.params.path_length:
            node = estimate.adaptive_node(self._counting, seed, path, self.params)
            if node.variable is not None:
                return _score_node(node.counts, node.variable, path, node.certified)
        leaf = estimate.adaptive_leaf(self._counting, seed, path, self.params)
        return LeafDecision(estimate.leaf_label(leaf.total), leaf.samples, leaf.total,
                            leaf.certified)

    def _build_search(self, seed: int, path: Path) -> Decision:
        """Efficient mode: search at nodes, leaves labelled from reused points first."""
        params = self.params
        labelled = self._inherited(seed, path)
        certified = None
        if len(path) < params.path_length:
            node = search.search_node(self._counting, seed, path, params, labelled)
            if node.variable is not None:
                self._keep_pool(seed, path, labelled.plus(node.own))
                return NodeDecision(node.variable, node.pairs, node.disagreements, 0,
                                    node.certified, node.runner_up, node.margin,
                                    not node.certified, int(node.votes[node.variable]),
                                    node.rule)
            labelled = labelled.plus(node.own)
            certified = node.certified
        fresh = search.leaf_points(self._counting, seed, path,
                                   params.leaf_samples - len(labelled))
        total = labelled.total + fresh.total
        return LeafDecision(estimate.leaf_label(total), len(labelled) + len(fresh), total,
                            certified)

    def _inherited(self, seed: int, path: Path) -> search.Labelled:
        """The ancestors' pair points that lie in ``path``'s subcube, with their values.

        Which points these are depends on the path alone; the pool memo only
        saves re-querying them (docs/randomness.md §6, "Efficient mode").
        """
        if not path:
            return search.Labelled.empty(self.params.n)
        return self._pool(seed, path[:-1]).restrict(*path[-1])

    def _pool(self, seed: int, path: Path) -> search.Labelled:
        """Inherited plus own pair points of the internal node ``path``."""
        key = (seed, path)
        pool = self._pools.get(key)
        if pool is not None:
            self._pools.move_to_end(key)
            return pool
        decision = self._cache.get(key) or self._build(seed, path)
        assert isinstance(decision, NodeDecision), "only internal nodes have pools"
        pool = self._pools.get(key)  # _build keeps it
        if pool is None:
            own = search.pair_points(self._counting, seed, path, 0, decision.samples)
            pool = self._inherited(seed, path).plus(own)
            self._keep_pool(seed, path, pool)
        return pool

    def _keep_pool(self, seed: int, path: Path, pool: search.Labelled) -> None:
        old = self._pools.pop((seed, path), None)  # a node rebuilt after its cache entry went
        self._pool_bytes += pool.nbytes - (0 if old is None else old.nbytes)
        self._pools[(seed, path)] = pool
        while self._pool_bytes > _POOL_BYTES and len(self._pools) > 1:
            _, dropped = self._pools.popitem(last=False)
            self._pool_bytes -= dropped.nbytes

    def _is_known(self, seed: int, path: Path, batch: dict[Path, Decision] | None) -> bool:
        """Whether :meth:`_decide` would answer ``path`` without building it."""
        return (batch is not None and path in batch) or (seed, path) in self._cache

    def _decision_cap(self, seed: int, path: Path) -> int:
        """Most queries building the decision at ``path`` can spend."""
        params = self.params
        if len(path) >= params.path_length:
            cap = params.max_leaf_queries
        elif params.adaptive or params.estimator == "search":
            # The node may become an early leaf after sampling it.
            cap = params.max_node_queries + params.max_leaf_queries
        else:
            cap = params.max_node_queries
        if params.estimator == "search":
            # Ancestors' point pools evicted from memory are re-queried (their
            # pairs, or the whole node if its decision was evicted too).
            for k in range(len(path) - 1, -1, -1):
                if (seed, path[:k]) in self._pools:
                    break
                ancestor = self._cache.get((seed, path[:k]))
                cap += (params.max_node_queries if ancestor is None
                        else 2 * ancestor.samples)
        return cap

    # -- answering -----------------------------------------------------------

    def decide(self, seed: int, path: Path) -> Decision:
        """The decision at node ``path`` of ``T_seed``: from the cache or built now.

        A :class:`NodeDecision` for an internal node, a :class:`LeafDecision`
        for a leaf (in adaptive mode also for an early leaf); the work done is
        in :attr:`last_stats`.

        Checked (``TypeError``/``ValueError``): ``path`` is a tuple or list of
        ``(variable, value)`` int pairs, values ``±1``, variables in
        ``[0, n)``, none repeated, at most ``params.path_length`` steps.
        Not checked: that ``path`` is a node of ``T_seed``, i.e. that every
        step fixes the variable the tree chose at its prefix (that would
        decide every ancestor). Any other valid path gets the deterministic
        decision the reconstructor would make at that subcube, which
        :meth:`answer` may never reach.
        """
        seed = check_seed("Reconstructor.decide", seed)
        path = check_path(path, self.params.n, "Reconstructor.decide",
                          max_length=self.params.path_length)
        stats = AnswerStats()
        self.last_built = []
        decision = self._decide(seed, path, stats)
        self.stats += stats
        self.last_stats = stats
        return decision

    def explain(self, z: Any, seed: int, *, progress: bool = False) -> Explanation:
        """``T_seed(z)`` with its path, node decisions and the work it took.

        ``progress=True`` draws a tqdm bar on stderr over the levels of the
        path; it never changes the result. The explanation's conditions come
        from :meth:`lca.oracle.Oracle.describe`.
        """
        seed = check_seed("Reconstructor.explain", seed)
        z = _check_query(z, self.params.n)
        check_flag("Reconstructor.explain", "progress", progress)
        stats = AnswerStats()
        self.last_built = []
        path: Path = ()
        nodes = []
        conditions = []
        bar = progress_bar(progress, self.params.path_length + 1, "lca explain", "levels")
        try:
            while True:
                decision = self._decide(seed, path, stats)
                bar.update(1)
                if isinstance(decision, LeafDecision):
                    break
                nodes.append(decision)
                bit = int(z[decision.variable])
                conditions.append(self.oracle.describe(decision.variable, bit, path))
                path = path + ((decision.variable, bit),)
            _end_early(bar)
        finally:
            bar.close()
        self.stats += stats
        self.last_stats = stats
        _warn_if_guesswork(nodes)
        return Explanation(seed, path, decision.label, tuple(nodes), decision, stats,
                           tuple(conditions))

    def answer(self, z: Any, seed: int) -> int:
        """``T_seed(z)`` in ``{-1, +1}``; a deterministic function of ``(f, params, seed, z)``."""
        return self.explain(z, seed).label

    def answer_many(self, points: Any, seed: int, *, progress: bool = False,
                    max_queries: int | None = None,
                    time_limit: float | None = None) -> np.ndarray:
        """``T_seed`` on every row of an ``(m, n)`` array, as ``int8``.

        Rows that share a node are routed together, so each node is decided
        once per call; the answers equal those of :meth:`answer` row by row.

        Args:
            points: ``(m, n)`` integer array of ``±1``.
            seed: selects the tree ``T_seed``.
            progress: draw a tqdm bar on stderr counting answered rows.
            max_queries: stop before building any decision that could take
                the queries of this call past this budget (the bound per
                decision is :attr:`Params.max_node_queries` /
                :attr:`Params.max_leaf_queries`; cache hits are free).
            time_limit: stop before building any decision once this many
                seconds have passed since the call began.

        Raises:
            BudgetExceeded: a limit was hit; it carries the rows finished so
                far, a ``finished`` mask, the stats and the queries spent.

        Progress and limits never change an answer: every row answered is
        bit-identical to an unlimited run's.
        """
        owner = "Reconstructor.answer_many"
        seed = check_seed(owner, seed)
        points = check_points(points, self.params.n, what="points")
        check_flag(owner, "progress", progress)
        max_queries = check_int(owner, "max_queries", max_queries, 0, optional=True)
        time_limit = check_real(owner, "time_limit", time_limit, 0.0, float("inf"),
                                optional=True)
        limited = max_queries is not None or time_limit is not None
        start = time.monotonic()
        out = np.zeros(points.shape[0], dtype=np.int8)
        finished = np.zeros(points.shape[0], dtype=bool)
        stats = AnswerStats()
        self.last_stats = stats
        self.last_built = []
        if not out.size:
            return out
        batch: dict[Path, Decision] = {}
        groups: dict[Path, np.ndarray] = {(): np.arange(points.shape[0])}
        bar = progress_bar(progress, points.shape[0], "lca answers", "answers")
        try:
            while groups:
                next_groups: dict[Path, np.ndarray] = {}
                for path, rows in groups.items():
                    if limited and not self._is_known(seed, path, batch):
                        hit = self._budget_hit(seed, path, stats, max_queries,
                                               time_limit, start)
                        if hit is not None:
                            limit, detail = hit
                            self.stats += stats
                            raise BudgetExceeded(
                                f"{owner} stopped at its {detail}: "
                                f"{int(finished.sum())} of {out.size} answers finished, "
                                f"{stats.queries} queries spent in "
                                f"{time.monotonic() - start:.3g} s",
                                answers=out, finished=finished, stats=stats, limit=limit)
                    decision = self._decide(seed, path, stats, batch)
                    if isinstance(decision, LeafDecision):
                        out[rows] = decision.label
                        finished[rows] = True
                        bar.update(rows.size)
                        continue
                    next_groups |= split_rows(points, rows, path, decision.variable)
                groups = next_groups
        finally:
            bar.close()
        self.stats += stats
        _warn_if_guesswork([d for d in batch.values() if isinstance(d, NodeDecision)])
        return out

    def _budget_hit(self, seed: int, path: Path, stats: AnswerStats, max_queries: int | None,
                    time_limit: float | None, start: float) -> tuple[str, str] | None:
        """The limit building the decision at ``path`` now would break, and why; or None."""
        cap = self._decision_cap(seed, path)
        if max_queries is not None and stats.queries + cap > max_queries:
            return "max_queries", (f"max_queries={max_queries} (the next decision may "
                                   f"need up to {cap})")
        if time_limit is not None and time.monotonic() - start >= time_limit:
            return "time_limit", f"time_limit={time_limit:g} s"
        return None

    # -- export -----------------------------------------------------------------

    def export(self, seed: int) -> ReconstructedTree:
        """The part of ``T_seed`` decided so far, as a :class:`lca.export.ReconstructedTree`.

        Decisions come from the node cache and, with ``record=True``, from
        :attr:`decisions`. A node never decided, or evicted from the cache
        (and not recorded), is simply not shown: its subtree is marked
        unexplored. Exporting spends no queries.
        """
        from lca.export import tree_from_decisions

        seed = check_seed("Reconstructor.export", seed)
        known = {path: decision for (s, path), decision in self.decisions.items()
                 if s == seed}
        known.update((path, decision) for (s, path), decision in self._cache.items()
                     if s == seed)
        return tree_from_decisions(self.oracle, self.params, seed, known)

    def materialize(self, seed: int, depth: int | None = None, *, progress: bool = False,
                    max_decisions: int = 1 << 16) -> ReconstructedTree:
        """Decide every node of ``T_seed`` at depth ``<= depth`` (root: depth 0).

        Nodes are decided breadth-first through the same path as
        :meth:`answer` (cache, statistics and ``record`` work as usual; the
        work is in :attr:`last_stats`). ``depth=None`` or any ``depth >=
        params.path_length`` gives the whole tree; then ``tree.query`` equals
        :meth:`answer_many` everywhere.

        Args:
            seed: selects the tree ``T_seed``.
            depth: deepest level to decide, or ``None`` for the whole tree.
            progress: draw a tqdm bar on stderr counting decisions.
            max_decisions: refuse (``ValueError``) when the levels asked for
                may hold more than this many decisions (``2^(k+1) - 1`` for
                ``k`` levels below the root); raise it to allow larger trees.
        """
        from lca.export import tree_from_decisions

        owner = "Reconstructor.materialize"
        seed = check_seed(owner, seed)
        levels = self.params.path_length
        if depth is not None:
            levels = min(check_int(owner, "depth", depth, 0), levels)
        max_decisions = check_int(owner, "max_decisions", max_decisions, 1)
        check_flag(owner, "progress", progress)
        bound = (1 << (levels + 1)) - 1
        if bound > max_decisions:
            raise ValueError(
                f"{owner}: depth {levels} may need up to 2^{levels + 1} - 1 = {bound} "
                f"decisions (up to about {bound * self._decision_cap(seed, ()):.3g} queries), "
                f"more than max_decisions={max_decisions}. Pass a smaller 'depth', or a "
                "larger 'max_decisions' if you mean it.")
        stats = AnswerStats()
        self.last_built = []
        found: dict[Path, Decision] = {}
        level: list[Path] = [()]
        bar = progress_bar(progress, bound, "lca materialize", "decisions")
        try:
            for _ in range(levels + 1):
                next_level: list[Path] = []
                for path in level:
                    decision = self._decide(seed, path, stats)
                    found[path] = decision
                    bar.update(1)
                    if isinstance(decision, NodeDecision):
                        next_level += [path + ((decision.variable, bit),) for bit in (-1, 1)]
                level = next_level
            _end_early(bar)
        finally:
            bar.close()
        self.stats += stats
        self.last_stats = stats
        return tree_from_decisions(self.oracle, self.params, seed, found)


def answer(z: Any, seed: int, *, oracle: Oracle, params: Params) -> int:
    """``T_seed(z)`` as a pure function: no cache and no state survive the call.

    Bit-identical to :meth:`Reconstructor.answer` for the same oracle, params
    and seed, in any process.
    """
    return Reconstructor(oracle, params, cache_size=0).answer(z, seed)
