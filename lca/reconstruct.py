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

from collections import OrderedDict
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any

import numpy as np

from lca import estimate
from lca.derive import Path, check_path
from lca.oracle import CountingOracle, Oracle, check_points
from lca.params import Params

__all__ = [
    "Decision",
    "NodeDecision",
    "LeafDecision",
    "AnswerStats",
    "Explanation",
    "Reconstructor",
    "answer",
    "check_seed",
]


@dataclass(frozen=True)
class NodeDecision:
    """An internal node: the chosen variable and the counts that chose it.

    ``certified`` is ``None`` in fixed mode; in adaptive mode it says whether
    the anytime bounds certified the choice before the sample cap.
    """

    variable: int
    samples: int
    disagreements: int
    agreements: int
    certified: bool | None = None


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
    a certificate (``uncertified``) and nodes that became leaves early.
    """

    queries: int = 0
    nodes_built: int = 0
    leaves_built: int = 0
    cache_hits: int = 0
    uncertified: int = 0
    early_leaves: int = 0

    def __iadd__(self, other: AnswerStats) -> AnswerStats:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        return self


@dataclass(frozen=True)
class Explanation:
    """The path of one query through ``T_seed`` and what it cost."""

    seed: int
    path: Path
    label: int
    nodes: tuple[NodeDecision, ...]
    leaf: LeafDecision
    stats: AnswerStats = field(compare=False)

    def __str__(self) -> str:
        steps = " -> ".join(f"x{var}={'+' if bit > 0 else '-'}1" for var, bit in self.path)
        return (f"T_{self.seed}: {steps or '(root)'} => {self.label:+d}  "
                f"[{self.stats.queries} queries, {self.stats.nodes_built} nodes built, "
                f"{self.stats.cache_hits} cache hits]")


def check_seed(seed: Any) -> int:
    """Validate a seed: an int (not bool) in ``[0, 2**64)``."""
    if isinstance(seed, bool) or not isinstance(seed, Integral):
        raise TypeError(f"seed must be an int in [0, 2**64); got {type(seed).__name__}")
    if not 0 <= seed < 1 << 64:
        raise ValueError(f"seed must be an int in [0, 2**64); got {seed}")
    return int(seed)


def _check_query(z: Any, n: int) -> np.ndarray:
    arr = np.asarray(z)
    if arr.ndim != 1:
        raise TypeError(f"z must be a 1-D array of {n} values ±1; got shape {arr.shape}")
    if arr.shape[0] != n:
        raise TypeError(f"z must be a 1-D array of {n} values ±1; got length {arr.shape[0]}")
    return check_points(arr[None, :], n, what="z")[0]


Decision = NodeDecision | LeafDecision


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
            raise TypeError(f"params must be an lca.Params; got {type(params).__name__}")
        counting = CountingOracle(oracle)
        if oracle.n != params.n:
            raise ValueError(f"oracle {oracle.name!r} has n={oracle.n} but params "
                             f"have n={params.n}")
        if isinstance(cache_size, bool) or not isinstance(cache_size, Integral):
            raise TypeError(f"cache_size must be an int >= 0; got {cache_size!r}")
        if cache_size < 0:
            raise ValueError(f"cache_size must be an int >= 0; got {cache_size!r}")
        if not isinstance(record, bool):
            raise TypeError(f"record must be a bool; got {record!r}")
        self.oracle = oracle
        self.params = params
        self.cache_size = int(cache_size)
        self.record = record
        self._counting = counting
        self._cache: OrderedDict[tuple[int, Path], Decision] = OrderedDict()
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
        if params.adaptive:
            return self._build_adaptive(seed, path)
        if len(path) == params.path_length:
            samples = params.leaf_samples
            total = estimate.leaf_sum(self._counting, seed, path, samples)
            return LeafDecision(estimate.leaf_label(total), samples, total)
        counts = estimate.score_counts(self._counting, seed, path,
                                       params.score_samples, params.noise_threshold)
        variable = estimate.choose_variable(counts, path)
        return NodeDecision(variable, counts.samples, counts.disagreements,
                            int(counts.agreements[variable]))

    def _build_adaptive(self, seed: int, path: Path) -> Decision:
        if len(path) < self.params.path_length:
            node = estimate.adaptive_node(self._counting, seed, path, self.params)
            if node.variable is not None:
                counts = node.counts
                return NodeDecision(node.variable, counts.samples, counts.disagreements,
                                    int(counts.agreements[node.variable]), node.certified)
        leaf = estimate.adaptive_leaf(self._counting, seed, path, self.params)
        return LeafDecision(estimate.leaf_label(leaf.total), leaf.samples, leaf.total,
                            leaf.certified)

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
        seed = check_seed(seed)
        path = check_path(path, self.params.n, "Reconstructor.decide",
                          max_length=self.params.path_length)
        stats = AnswerStats()
        self.last_built = []
        decision = self._decide(seed, path, stats)
        self.stats += stats
        self.last_stats = stats
        return decision

    def explain(self, z: Any, seed: int) -> Explanation:
        """``T_seed(z)`` with its path, node decisions and the work it took."""
        seed = check_seed(seed)
        z = _check_query(z, self.params.n)
        stats = AnswerStats()
        self.last_built = []
        path: Path = ()
        nodes = []
        while True:
            decision = self._decide(seed, path, stats)
            if isinstance(decision, LeafDecision):
                break
            nodes.append(decision)
            path = path + ((decision.variable, int(z[decision.variable])),)
        self.stats += stats
        self.last_stats = stats
        return Explanation(seed, path, decision.label, tuple(nodes), decision, stats)

    def answer(self, z: Any, seed: int) -> int:
        """``T_seed(z)`` in ``{-1, +1}``; a deterministic function of ``(f, params, seed, z)``."""
        return self.explain(z, seed).label

    def answer_many(self, points: Any, seed: int) -> np.ndarray:
        """``T_seed`` on every row of an ``(m, n)`` array, as ``int8``.

        Rows that share a node are routed together, so each node is decided
        once per call; the answers equal those of :meth:`answer` row by row.
        """
        seed = check_seed(seed)
        points = check_points(points, self.params.n, what="points")
        out = np.empty(points.shape[0], dtype=np.int8)
        stats = AnswerStats()
        self.last_stats = stats
        self.last_built = []
        if not out.size:
            return out
        batch: dict[Path, Decision] = {}
        groups: dict[Path, np.ndarray] = {(): np.arange(points.shape[0])}
        while groups:
            next_groups: dict[Path, np.ndarray] = {}
            for path, rows in groups.items():
                decision = self._decide(seed, path, stats, batch)
                if isinstance(decision, LeafDecision):
                    out[rows] = decision.label
                    continue
                values = points[rows, decision.variable]
                for bit in (-1, 1):
                    chosen = rows[values == bit]
                    if chosen.size:
                        next_groups[path + ((decision.variable, bit),)] = chosen
            groups = next_groups
        self.stats += stats
        return out


def answer(z: Any, seed: int, *, oracle: Oracle, params: Params) -> int:
    """``T_seed(z)`` as a pure function: no cache and no state survive the call.

    Bit-identical to :meth:`Reconstructor.answer` for the same oracle, params
    and seed, in any process.
    """
    return Reconstructor(oracle, params, cache_size=0).answer(z, seed)
