"""Local reconstruction of a decision tree (Figure "BuildStrand").

For a query ``z`` the :class:`Reconstructor` builds only the root-to-leaf path
of ``z`` in the tree ``T_seed``: at each node it estimates the scores of
``f_path`` and fixes the variable of highest estimate; at the leaf it labels by
the sign of the estimated mean. Every decision is a deterministic function of
``(oracle, params, seed, path)`` (Remark "Local reconstruction"), so replicas
that never communicate answer from the same tree, and the node cache only
saves work: it never changes an answer.

Decisions are made by the estimator ``params`` names (:mod:`lca.estimator`)
and run by :class:`lca.engine.Scheduler`: every call decides the nodes it
needs level by level, all the nodes of one level together, so their samples,
searches and leaf labels share oracle calls (a single answer is the same with
one node per level).

Why one module of this size: the reconstructor's routes (answer, explain,
answer_many, decide, materialize, export) share one cache, one lock and one
way of filing decisions; split apart, each would reach into the others' state.
"""

from __future__ import annotations

import functools
import threading
import time
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from lca._validate import check_flag, check_int, check_real, check_seed
from lca.decisions import (
    AnswerStats,
    Decision,
    LeafDecision,
    NodeDecision,
    Split,
    is_guessed,
    split_rows,
)
from lca.derive import Path, check_path
from lca.engine import WORKING_BYTES, CallCosts, Scheduler, Steps, Task
from lca.estimator import Memo, NodeContext
from lca.oracle import CountingOracle, Oracle, all_plus_minus_one, check_points
from lca.params import Params

if TYPE_CHECKING:  # export builds on this module; imported on use only
    from lca.export import ReconstructedTree

__all__ = [
    "AnswerStats",
    "BudgetExceeded",
    "Decision",
    "Explanation",
    "LeafDecision",
    "LowMarginWarning",
    "NodeDecision",
    "Reconstructor",
    "answer",
]


@dataclass(frozen=True)
class Explanation:
    """The path of one query through ``T_seed`` and what it cost.

    ``conditions`` holds, for each step of ``path``, the oracle's readable
    condition (:meth:`lca.oracle.Oracle.describe`, e.g. ``x17=-1`` or
    ``petal length >= 2.45``); ``str()`` shows them, marking only the
    uncertain choices (see :class:`NodeDecision`): ``(not told apart from
    x9)`` where the lead over the runner-up ``x9`` failed its sign test
    (``low_margin``), ``(no better than a random variable)`` where the
    choice itself did (``guesswork``). The margins are in ``nodes``.
    With ``Params.lookahead = "auto"``, ``lookahead`` says what the
    reconstructor measured of the oracle and chose so far
    (:meth:`lca.engine.CallCosts.text`); ``None`` otherwise.
    """

    seed: int
    path: Path
    label: int
    nodes: tuple[Split, ...]
    leaf: LeafDecision
    stats: AnswerStats = field(compare=False)
    conditions: tuple[str, ...] = field(default=(), compare=False)
    lookahead: str | None = field(default=None, compare=False)

    def __str__(self) -> str:
        conditions = self.conditions or tuple(
            f"x{var}={'+' if bit > 0 else '-'}1" for var, bit in self.path)
        steps = " -> ".join(condition + _doubt(node)
                            for condition, node in zip(conditions, self.nodes, strict=True))
        return (f"T_{self.seed}: {steps or '(root)'} => {self.label:+d}  "
                f"[{self.stats.queries} queries, {self.stats.nodes_built} nodes built, "
                f"{self.stats.cache_hits} cache hits"
                + (f"; search steps per call {self.lookahead}" if self.lookahead else "") + "]")


def _doubt(node: Split) -> str:
    """How uncertain a node's choice is, for :class:`Explanation`'s text ("" when it is not)."""
    if not isinstance(node, NodeDecision):
        return ""
    if node.guesswork:
        return " (no better than a random variable)"
    if node.low_margin:
        return " (not told apart from " + (
            "the runner-up)" if node.runner_up is None else f"x{node.runner_up})")
    return ""


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


def progress_bar(enabled: bool, total: int | None, desc: str, unit: str) -> Any:
    """A tqdm bar on stderr (``total`` ``None``: a count without an end), or a do-nothing
    stand-in when ``enabled`` is false.

    tqdm is imported only when a bar is drawn: worker processes never pay for it.
    """
    if not enabled:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, dynamic_ncols=True)


def _check_query(z: Any, n: int) -> np.ndarray:
    arr = np.asarray(z)
    if arr.ndim != 1:
        raise TypeError(f"z must be a 1-D array of {n} values ±1; got shape {arr.shape}")
    if arr.shape[0] != n:
        raise TypeError(f"z must be a 1-D array of {n} values ±1; got length {arr.shape[0]}")
    return check_points(arr[None, :], n, what="z")[0]


# Re-derivable arrays (the search estimator's packed points) kept for reuse;
# the byte count is exact (lca.estimator.Memo).
_MEMO_BYTES = 1 << 26
# Warn when more than this share of a call's answers rest on guesswork.
_GUESSWORK_SHARE = 0.5


class LowMarginWarning(UserWarning):
    """Most answers of a call have a leaf label close to a coin flip (:func:`is_guessed`)."""


def warn_if_guesswork(guesswork_answers: int, answers: int, stacklevel: int = 2) -> None:
    """Warn once if more than half of ``answers`` rest on guesswork (:class:`AnswerStats`).

    ``stacklevel`` as for :func:`warnings.warn`, counted from the caller of
    this function. Pool workers never call it: their caller does, once per call.
    """
    if answers and guesswork_answers > _GUESSWORK_SHARE * answers:
        # One text for every call, so Python's warning filter shows it once per
        # call site instead of once per call; the counts are in AnswerStats.
        warnings.warn(
            "Most answers rest on guesswork: their leaf's label is close to a coin "
            "flip (its sample sum fails a sign test), so f looks balanced there. "
            "The labels of f may be mostly noise; if not, more samples per leaf or "
            "a different depth cap may help. Counts: AnswerStats.guesswork_answers "
            "(and guesswork: splits no better than a random variable).",
            LowMarginWarning, stacklevel=stacklevel + 1)


@dataclass
class _Call:
    """The decisions one public call uses, pinned until it returns.

    A node's descendants read what it kept (``kept``) while the call runs,
    whatever the cache evicts meanwhile.
    """

    stats: AnswerStats = field(default_factory=AnswerStats)
    decisions: dict[Path, Decision] = field(default_factory=dict)
    kept: dict[Path, Any] = field(default_factory=dict)


def _ancestor_kept(call: _Call, path: Path, k: int) -> Any:
    """What ``call`` kept of the ancestor ``path[:k]`` (a node context's lineage)."""
    return call.kept[path[:k]]


class _Stopped(Exception):
    """A limit stopped :meth:`Reconstructor._build_level` (``limit``, ``detail``)."""

    def __init__(self, limit: str, detail: str) -> None:
        super().__init__(limit, detail)
        self.limit = limit
        self.detail = detail


@dataclass(frozen=True)
class _Limits:
    max_queries: int | None = None
    deadline: float | None = None
    time_limit: float | None = None


class _WarmTable:
    """The cached decisions of one tree ``T_seed`` as flat lists: an answer whose whole
    path is cached is one walk over them (:meth:`walk`), with no lookup by path.

    Slot ``i`` holds one cached decision: its variable (``-1`` for a leaf,
    ``-2`` once evicted) and the slots of its children (``-1`` where unknown).
    It mirrors the reconstructor's cache: every decision filed there is added
    (:meth:`add`) and every eviction removed (:meth:`drop`); evicted slots are
    reclaimed when they outnumber the live ones.
    """

    def __init__(self) -> None:
        self.slots: dict[Path, int] = {}
        self.paths: list[Path] = []
        self.variable: list[int] = []
        self.children: tuple[list[int], list[int]] = ([], [])  # z_v = -1, z_v = +1
        self.decisions: list[Decision] = []
        self.guessed: list[bool] = []

    def add(self, path: Path, decision: Decision) -> None:
        if path in self.slots:
            return
        if len(self.variable) > 2 * len(self.slots) + 64:
            self._compact()
        slot = self.slots[path] = len(self.variable)
        self.paths.append(path)
        leaf = isinstance(decision, LeafDecision)
        self.variable.append(-1 if leaf else decision.variable)  # type: ignore[union-attr]
        self.decisions.append(decision)
        self.guessed.append(leaf and is_guessed(decision))  # type: ignore[arg-type]
        for side in self.children:
            side.append(-1)
        if path:
            self._link(path[:-1], path[-1], slot)
        if not leaf:
            for bit in (-1, 1):
                child = self.slots.get(path + ((self.variable[slot], bit),))
                if child is not None:
                    self.children[bit > 0][slot] = child

    def _link(self, parent: Path, step: tuple[int, int], slot: int) -> None:
        at = self.slots.get(parent)
        if at is not None and self.variable[at] == step[0]:
            self.children[step[1] > 0][at] = slot

    def drop(self, path: Path) -> None:
        slot = self.slots.pop(path, None)
        if slot is None:
            return
        self.variable[slot] = -2
        if path:
            self._link(path[:-1], path[-1], -1)

    def _compact(self) -> None:
        live = sorted(self.slots.items(), key=lambda item: item[1])
        decisions = self.decisions
        self.__init__()  # type: ignore[misc]
        for path, slot in live:
            self.add(path, decisions[slot])

    def walk(self, z: bytes | np.ndarray) -> list[int] | None:
        """The slots of the path of the point ``z`` (its ``int8`` coordinates, or their
        bytes), root to leaf, if every one is cached; else ``None``."""
        slot = self.slots.get(())
        if slot is None:
            return None
        variable, (minus, plus) = self.variable, self.children
        visited = [slot]
        while (v := variable[slot]) >= 0:
            slot = plus[slot] if z[v] == 1 else minus[slot]
            if slot < 0:
                return None
            visited.append(slot)
        return visited


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
    accumulates. With ``params.lookahead = "auto"``, :attr:`costs` measures
    what the oracle's calls cost and chooses each search's steps per call
    (:class:`lca.engine.CallCosts`; ``None`` otherwise). A reconstructor is
    fully described by ``(oracle, params)``: it pickles without its cache or
    statistics.

    Threads: a reconstructor may be shared between threads. Its public
    methods hold a lock, so calls run one at a time and see consistent
    statistics; answers are those of any other route.

    Memory: the cache holds up to ``cache_size`` decisions (and, in the
    efficient mode, the ``2 * samples`` values of each internal node's own
    points: one byte each); packed points reused by the efficient mode are
    kept within 64 MiB and re-derived from their stream when evicted. A call
    holds at most one oracle batch of ``2^24`` ``int8`` entries plus the
    working memory of the decisions it runs at once
    (:data:`lca.engine.WORKING_BYTES`, or one decision if larger).
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
        self._estimator = params.estimation
        self._cache: OrderedDict[tuple[int, Path], Decision] = OrderedDict()
        self._kept: dict[tuple[int, Path], Any] = {}
        self._warm: dict[int, _WarmTable] = {}  # the cache again, per seed, for warm answers
        self._memo = Memo(_MEMO_BYTES)
        # Params.lookahead "auto": the oracle's costs, measured as this reconstructor calls it.
        self.costs = CallCosts() if params.lookahead == "auto" else None
        self._lock = threading.RLock()
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

    def _lookup(self, seed: int, path: Path, call: _Call) -> Decision | None:
        """The decision at ``path`` if this call or the cache has it (then pinned in ``call``)."""
        decision = call.decisions.get(path)
        if decision is not None:
            return decision
        key = (seed, path)
        decision = self._cache.get(key)
        if decision is None:
            return None
        self._cache.move_to_end(key)
        call.stats.cache_hits += 1
        call.decisions[path] = decision
        call.kept[path] = self._kept.get(key)
        if self.record:
            self.decisions[key] = decision
        return decision

    def _keep(self, seed: int, path: Path, decision: Decision, kept: Any,
              call: _Call) -> None:
        """File a decision just built: in the call, the cache, the record and the stats."""
        key = (seed, path)
        call.decisions[path] = decision
        call.kept[path] = kept
        call.stats.count(decision, self.params.path_length, len(path))
        self.last_built.append(path)
        if self.record:
            self.decisions[key] = decision
        if self.cache_size:
            self._cache[key] = decision
            self._warm.setdefault(seed, _WarmTable()).add(path, decision)
            if kept is not None:
                self._kept[key] = kept
            if len(self._cache) > self.cache_size:
                old, _ = self._cache.popitem(last=False)
                self._kept.pop(old, None)
                self._warm[old[0]].drop(old[1])

    def _steps(self, seed: int, paths: list[Path], call: _Call) -> Steps:
        """The estimator's steps for ``paths`` (all leaves or all internal nodes);
        they return ``(decision, kept)`` for each."""
        contexts = [NodeContext(self.params.n, seed, path, self.params,
                                functools.partial(_ancestor_kept, call, path), self._memo,
                                self.costs)
                    for path in paths]
        if len(paths[0]) == self.params.path_length:
            return [(leaf, None) for leaf in (yield from self._estimator.leaves(contexts))]
        return (yield from self._estimator.nodes(contexts))

    def _cap(self, depth: int) -> int:
        """Most queries building the decision at a node of ``depth`` can spend."""
        params, estimator = self.params, self._estimator
        if depth == params.path_length:
            return estimator.max_leaf_queries(params)
        cap = estimator.max_node_queries(params)
        if estimator.early_leaves(params):
            cap += estimator.max_leaf_queries(params)
        return cap

    def _build_level(self, seed: int, paths: list[Path], call: _Call,
                     limits: _Limits = _Limits()) -> None:
        """Decide ``paths`` (none known; their ancestors are) together, sharing oracle calls.

        The paths are decided in groups (the estimator shares work within a
        group): as many as :data:`lca.engine.WORKING_BYTES` allows, or one
        path per group under a query budget, so that the budget is checked
        decision by decision. Raises :class:`_Stopped` if a limit stopped
        it; every group finished before that is filed.
        """
        params = self.params
        memory = self._estimator.node_memory(params)
        per_group = 1 if limits.max_queries is not None \
            else max(1, WORKING_BYTES // max(1, memory))
        tasks = []
        for depth in sorted({len(path) for path in paths}):
            level = [path for path in paths if len(path) == depth]
            for lo in range(0, len(level), per_group):
                group = level[lo:lo + per_group]
                tasks.append(Task(group, functools.partial(self._steps, seed, group, call),
                                  self._cap(depth) * len(group), memory * len(group)))
        budget = None if limits.max_queries is None \
            else limits.max_queries - call.stats.queries
        scheduler = Scheduler(self._counting, seed, max_queries=budget,
                              deadline=limits.deadline, on_done=lambda task: self._file(
                                  seed, task, call), costs=self.costs)
        try:
            done = scheduler.run(tasks)
        finally:
            call.stats.queries += scheduler.spent
            call.stats.oracle_calls += scheduler.calls
        if done:
            return
        if scheduler.stopped == "max_queries":
            raise _Stopped("max_queries", f"max_queries={limits.max_queries} (the next "
                                          f"decision may need up to {scheduler.needed})")
        raise _Stopped("time_limit", f"time_limit={limits.time_limit:g} s")

    def _file(self, seed: int, task: Task, call: _Call) -> None:
        for path, (decision, kept) in zip(task.keys, task.results, strict=True):
            self._keep(seed, path, decision, kept, call)

    def _decided(self, seed: int, path: Path, call: _Call) -> Decision:
        """The decision at ``path`` (ancestors already in ``call`` if the estimator reads them)."""
        decision = self._lookup(seed, path, call)
        if decision is None:
            self._build_level(seed, [path], call)
            decision = call.decisions[path]
        return decision

    def _finish(self, call: _Call) -> None:
        self.stats += call.stats
        self.last_stats = call.stats

    # -- answering -----------------------------------------------------------

    def decide(self, seed: int, path: Path) -> Decision:
        """The decision at node ``path`` of ``T_seed``: from the cache or built now.

        A :class:`NodeDecision` for an internal node, a :class:`LeafDecision`
        for a leaf (in adaptive and efficient mode also for an early leaf);
        the work done is in :attr:`last_stats`. In the efficient mode a node
        reuses its ancestors' points, so the ancestors (every prefix of
        ``path``) are decided first; a prefix that is a leaf raises
        ``ValueError``.

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
        with self._lock:
            call = _Call()
            self.last_built = []
            try:
                if self._estimator.reads_lineage:
                    for k in range(len(path)):
                        if isinstance(self._decided(seed, path[:k], call), LeafDecision):
                            raise ValueError(
                                f"Reconstructor.decide: path {path} passes below the leaf "
                                f"of T_{seed} at {path[:k]}; in this mode a node's "
                                "decision needs its ancestors' points")
                return self._decided(seed, path, call)
            finally:
                self._finish(call)

    def explain(self, z: Any, seed: int, *, progress: bool = False) -> Explanation:
        """``T_seed(z)`` with its path, node decisions and the work it took.

        ``progress=True`` draws a tqdm bar on stderr over the levels of the
        path; it never changes the result. The explanation's conditions come
        from :meth:`lca.oracle.Oracle.describe`.
        """
        explanation = self._explain(z, seed, progress, "Reconstructor.explain")
        warn_if_guesswork(explanation.stats.guesswork_answers, 1, stacklevel=2)
        return explanation

    def _explain(self, z: Any, seed: int, progress: bool, owner: str, *,
                 describe: bool = True) -> Explanation:
        """The path of ``z`` in ``T_seed``; with ``describe``, each step's condition in
        the oracle's words (``answer`` needs only the leaf: no text is made)."""
        seed = check_seed(owner, seed)
        z = _check_query(z, self.params.n)
        check_flag(owner, "progress", progress)
        with self._lock:
            call = _Call()
            self.last_built = []
            path: Path = ()
            nodes = []
            conditions = []
            bar = progress_bar(progress, self.params.path_length + 1, "lca explain", "levels")
            try:
                while True:
                    decision = self._decided(seed, path, call)
                    bar.update(1)
                    if isinstance(decision, LeafDecision):
                        break
                    nodes.append(decision)
                    bit = int(z[decision.variable])
                    if describe:
                        conditions.append(self.oracle.describe(decision.variable, bit, path))
                    path = path + ((decision.variable, bit),)
                _end_early(bar)
                call.stats.guesswork_answers += is_guessed(decision)
            finally:
                bar.close()
                self._finish(call)
        return Explanation(seed, path, decision.label, tuple(nodes), decision, call.stats,
                           tuple(conditions),
                           None if self.costs is None else self.costs.text())

    def answer(self, z: Any, seed: int) -> int:
        """``T_seed(z)`` in ``{-1, +1}``; a deterministic function of ``(f, params, seed, z)``."""
        label = self._warm_answer(z, seed)
        if label is not None:
            return label
        explanation = self._explain(z, seed, False, "Reconstructor.answer", describe=False)
        warn_if_guesswork(explanation.stats.guesswork_answers, 1, stacklevel=2)
        return explanation.label

    def _warm_answer(self, z: Any, seed: Any) -> int | None:
        """:meth:`answer` of a point whose whole path is cached, in one walk over the
        cache's table (:class:`_WarmTable`), with the cache's recency, the record and
        the statistics kept as :meth:`_explain` keeps them; ``None`` (nothing done)
        for anything else, which :meth:`_explain` answers and checks."""
        if type(z) is not np.ndarray or z.dtype != np.int8 or z.shape != (self.params.n,) \
                or type(seed) is not int or not 0 <= seed < 1 << 64:
            return None
        if not all_plus_minus_one(z):  # _explain says so
            return None
        # The walk reads a few coordinates: of bytes, quickest (+1 is the byte 1).
        coordinates = z.tobytes() if z.size <= 1 << 16 else z
        with self._lock:
            table = self._warm.get(seed)
            if table is None or (visited := table.walk(coordinates)) is None:
                return None
            for slot in visited:
                key = (seed, table.paths[slot])
                self._cache.move_to_end(key)
                if self.record:
                    self.decisions[key] = table.decisions[slot]
            leaf = visited[-1]
            stats = AnswerStats(cache_hits=len(visited), guesswork_answers=table.guessed[leaf])
            self.stats.cache_hits += stats.cache_hits
            self.stats.guesswork_answers += stats.guesswork_answers
            self.last_stats, self.last_built = stats, []
            label = table.decisions[leaf].label  # type: ignore[union-attr]
        warn_if_guesswork(stats.guesswork_answers, 1, stacklevel=3)
        return label

    def answer_many(self, points: Any, seed: int, *, progress: bool = False,
                    max_queries: int | None = None,
                    time_limit: float | None = None) -> np.ndarray:
        """``T_seed`` on every row of an ``(m, n)`` array, as ``int8``.

        Rows that share a node are routed together, and all the nodes of one
        level are decided together, sharing oracle calls; each node is
        decided once per call. The answers equal those of :meth:`answer`
        row by row.

        Args:
            points: ``(m, n)`` integer array of ``±1``.
            seed: selects the tree ``T_seed``.
            progress: draw a tqdm bar on stderr counting answered rows.
            max_queries: never start a decision unless the queries of this
                call plus the most that decision and every decision already
                running can spend fit in this budget (the bound per decision
                is :attr:`Params.max_node_queries` /
                :attr:`Params.max_leaf_queries`; cache hits are free).
            time_limit: start no decision, and make no oracle call, once this
                many seconds have passed since the call began (decisions
                still running then are abandoned; their queries count).

        Raises:
            BudgetExceeded: a limit was hit; it carries the rows finished so
                far, a ``finished`` mask, the stats and the queries spent.

        Progress and limits never change an answer: every row answered is
        bit-identical to an unlimited run's.
        """
        out = self._answers(points, seed, progress=progress, max_queries=max_queries,
                            time_limit=time_limit)
        warn_if_guesswork(self.last_stats.guesswork_answers, out.size, stacklevel=2)
        return out

    def _answers(self, points: Any, seed: int, *, progress: bool = False,
                 max_queries: int | None = None, time_limit: float | None = None) -> np.ndarray:
        """:meth:`answer_many` without the warning: pool workers answer for a caller
        that warns once for the whole call (lca.parallel, lca.distributed)."""
        owner = "Reconstructor.answer_many"
        seed = check_seed(owner, seed)
        points = check_points(points, self.params.n, what="points")
        check_flag(owner, "progress", progress)
        max_queries = check_int(owner, "max_queries", max_queries, 0, optional=True)
        time_limit = check_real(owner, "time_limit", time_limit, 0.0, float("inf"),
                                optional=True)
        with self._lock:
            return self._answer_many(owner, points, seed, progress, max_queries, time_limit)

    def _answer_many(self, owner: str, points: np.ndarray, seed: int, progress: bool,
                     max_queries: int | None, time_limit: float | None) -> np.ndarray:
        start = time.monotonic()
        limits = _Limits(max_queries, None if time_limit is None else start + time_limit,
                         time_limit)
        out = np.zeros(points.shape[0], dtype=np.int8)
        finished = np.zeros(points.shape[0], dtype=bool)
        call = _Call()
        self.last_stats = call.stats
        self.last_built = []
        if not out.size:
            return out
        groups: dict[Path, np.ndarray] = {(): np.arange(points.shape[0])}
        bar = progress_bar(progress, points.shape[0], "lca answers", "answers")
        try:
            while groups:
                missing = [path for path in groups if self._lookup(seed, path, call) is None]
                stopped = None
                if missing:
                    try:
                        self._build_level(seed, missing, call, limits)
                    except _Stopped as stop:
                        stopped = stop
                next_groups: dict[Path, np.ndarray] = {}
                for path, rows in groups.items():
                    decision = call.decisions.get(path)
                    if isinstance(decision, LeafDecision):
                        out[rows] = decision.label
                        finished[rows] = True
                        if is_guessed(decision):
                            call.stats.guesswork_answers += rows.size
                        bar.update(rows.size)
                    elif decision is not None:
                        next_groups |= split_rows(points, rows, path, decision.variable)
                if stopped is not None:
                    self._finish(call)
                    raise BudgetExceeded(
                        f"{owner} stopped at its {stopped.detail}: "
                        f"{int(finished.sum())} of {out.size} answers finished, "
                        f"{call.stats.queries} queries spent in "
                        f"{time.monotonic() - start:.3g} s",
                        answers=out, finished=finished, stats=call.stats,
                        limit=stopped.limit)
                groups = next_groups
        finally:
            bar.close()
        self._finish(call)
        return out

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
        with self._lock:
            known = {path: decision for (s, path), decision in self.decisions.items()
                     if s == seed}
            known.update((path, decision) for (s, path), decision in self._cache.items()
                         if s == seed)
        return tree_from_decisions(self.oracle, self.params, seed, known)

    def materialize(self, seed: int, depth: int | None = None, *, progress: bool = False,
                    max_decisions: int = 1 << 16) -> ReconstructedTree:
        """Decide every node of ``T_seed`` at depth ``<= depth`` (root: depth 0).

        Nodes are decided breadth-first, a level at a time sharing oracle
        calls, through the same engine as :meth:`answer_many` (cache,
        statistics and ``record`` work as usual; the work is in
        :attr:`last_stats`). ``depth=None`` or any ``depth >=
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
                f"decisions (up to about {bound * self._cap(0):.3g} queries), "
                f"more than max_decisions={max_decisions}. Pass a smaller 'depth', or a "
                "larger 'max_decisions' if you mean it.")
        with self._lock:
            call = _Call()
            self.last_built = []
            level: list[Path] = [()]
            bar = progress_bar(progress, bound, "lca materialize", "decisions")
            try:
                for _ in range(levels + 1):
                    missing = [path for path in level
                               if self._lookup(seed, path, call) is None]
                    if missing:
                        self._build_level(seed, missing, call)
                    bar.update(len(level))
                    level = [path + ((decision.variable, bit),) for path in level
                             if isinstance(decision := call.decisions[path], NodeDecision)
                             for bit in (-1, 1)]
                _end_early(bar)
            finally:
                bar.close()
                self._finish(call)
        return tree_from_decisions(self.oracle, self.params, seed, dict(call.decisions))


def answer(z: Any, seed: int, *, oracle: Oracle, params: Params) -> int:
    """``T_seed(z)`` as a pure function: no cache and no state survive the call.

    Bit-identical to :meth:`Reconstructor.answer` for the same oracle, params
    and seed, in any process.
    """
    return Reconstructor(oracle, params, cache_size=0).answer(z, seed)
