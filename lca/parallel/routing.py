"""Routing: the two ways a batch is cut into tasks, and the parent's :class:`Router`.

``"prefix"`` groups the queries by the top nodes of ``T_seed``, which the
:class:`Router` decides in the parent; ``"chunk"`` needs no router. Either is
a hint for the work, never an input to an answer.
"""

from __future__ import annotations

import heapq

import numpy as np

from lca.derive import Path
from lca.oracle import Oracle
from lca.params import Params
from lca.reconstruct import AnswerStats, Decision, LeafDecision, Reconstructor

__all__ = ["DecisionKey", "GROUPS_PER_WORKER", "MAX_EXPANSIONS", "ROUTER_CACHE", "ROUTINGS",
           "Router"]

DecisionKey = tuple[int, Path]

ROUTINGS = ("prefix", "chunk")
# Prefix routing aims for this many groups per worker: enough for dynamic
# scheduling to balance uneven groups, few enough that the parent's share of
# the work (one node per expansion) stays negligible.
GROUPS_PER_WORKER = 8
MAX_EXPANSIONS = 1024
ROUTER_CACHE = 4096


class Router:
    """The parent's view of the top of ``T_seed``: decides nodes, never answers.

    Decisions come from a :class:`Reconstructor`, but only to group queries;
    workers decide every node again themselves, so a router that disagreed
    would cost duplicated work, never a wrong answer.
    """

    def __init__(self, oracle: Oracle, params: Params) -> None:
        self.params = params
        self._reconstructor = Reconstructor(oracle, params, cache_size=ROUTER_CACHE)

    def decide(self, seed: int, path: Path, stats: AnswerStats,
               built: list[Path], seen: dict[DecisionKey, Decision]) -> Decision:
        decision = self._reconstructor.decide(seed, path)
        stats += self._reconstructor.last_stats
        built += self._reconstructor.last_built
        seen[(seed, path)] = decision
        return decision

    def groups(self, points: np.ndarray, seed: int, target: int, max_rows: int | None,
               stats: AnswerStats, built: list[Path],
               seen: dict[DecisionKey, Decision]) -> list[tuple[Path, np.ndarray]]:
        """Split the largest group at its node until there are ``target`` groups
        and none larger than ``max_rows`` (groups at leaves are never split)."""
        rows = np.arange(points.shape[0])
        heap: list[tuple[int, Path, np.ndarray]] = [(-rows.size, (), rows)]
        final: list[tuple[Path, np.ndarray]] = []
        expansions = 0
        while heap:
            largest = -heap[0][0]
            if (len(heap) + len(final) >= target
                    and (max_rows is None or largest <= max_rows)):
                break
            _, path, rows = heapq.heappop(heap)
            if len(path) >= self.params.path_length or expansions >= MAX_EXPANSIONS:
                final.append((path, rows))
                continue
            decision = self.decide(seed, path, stats, built, seen)
            expansions += 1
            if isinstance(decision, LeafDecision):  # an adaptive early leaf
                final.append((path, rows))
                continue
            values = points[rows, decision.variable]
            for bit in (-1, 1):
                chosen = rows[values == bit]
                if chosen.size:
                    heapq.heappush(heap, (-chosen.size, path + ((decision.variable, bit),),
                                          chosen))
        final.extend((path, rows) for _, path, rows in heap)
        final.sort(key=lambda group: (-group[1].size, group[0]))
        return final
