"""One node of the search estimator run on its own, for the efficient mode's tests.

The library decides nodes in groups (:class:`lca.search.group.NodeGroup`,
driven by the reconstructor's scheduler); these helpers drive one node's
steps, or one part of them, straight against an oracle, and recompute what
the library derives (a node's pair points, a leaf's fresh points, the
correlation sums of labelled points).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lca import derive
from lca.derive import Path
from lca.engine import Steps, drive, points_request
from lca.oracle import Oracle
from lca.search.group import NodeGroup, SearchNode
from lca.search.hybrids import search_steps
from lca.search.rules import LEAF, ORDER, PAIRS
from lca.search.search_estimator import _fresh_words
from lca.search.sums import Labelled, grouped_correlations


def correlations(labelled: Labelled, n: int) -> np.ndarray:
    """``sum_k f(x_k) x_k,i`` for every variable ``i``, as ``int64`` (exact).

    One block of :func:`lca.search.sums.grouped_correlations`.
    """
    counts = np.array([len(labelled)], dtype=np.int64)
    return grouped_correlations(labelled.words, labelled.values, counts, n)[0]


def in_subcube(points: Labelled, path: Path, n: int) -> Labelled:
    """The points that agree with every ``(variable, bit)`` of ``path``, in their order
    (read from the unpacked points)."""
    unpacked = derive.unpack_points(points.words, n)
    keep = np.ones(len(points), dtype=bool)
    for variable, bit in path:
        keep &= unpacked[:, variable] == bit
    return points.rows(keep)


def pair_points(oracle: Oracle, seed: int, path: Path, start: int, stop: int) -> Labelled:
    """Pairs ``start..stop-1`` of the node, as rows ``x_start, y_start, x_start+1, ...``."""
    words = derive.uniform_points(derive.node_key(seed, PAIRS, path), oracle.n, 2 * start,
                                  2 * stop, path)
    return Labelled(words, _ask(oracle, seed, PAIRS, words, path))


def leaf_points(oracle: Oracle, seed: int, path: Path, count: int) -> Labelled:
    """Fresh leaf samples ``0..count-1`` (purpose ``LEAF``), when reuse left too few."""
    words = _fresh_words(oracle.n, seed, path, count)
    return Labelled(words, _ask(oracle, seed, LEAF, words, path))


def _ask(oracle: Oracle, seed: int, purpose: str, words: np.ndarray, path: Path) -> np.ndarray:
    def steps() -> Steps:
        return (yield points_request(purpose, words, oracle.n, (path,)))
    return drive(steps(), oracle, seed).astype(np.int8, copy=False)


def search_edges(oracle: Oracle, seed: int, path: Path, first_pair: int, pairs: Labelled,
                 searching: np.ndarray) -> np.ndarray:
    """The found coordinate of each searching pair of one node (its search run alone)."""
    n = oracle.n
    steps = search_steps(n, [derive.node_key(seed, ORDER, path)],
                         np.zeros(searching.size, dtype=np.int64), first_pair + searching,
                         pairs.words[2 * searching], pairs.words[2 * searching + 1],
                         pairs.values[2 * searching],
                         (first_pair, first_pair + pairs.values.size // 2), (path,))
    return drive(steps, oracle, seed)


def search_node(oracle: Oracle, seed: int, path: Path, params: Any,
                inherited: Labelled) -> SearchNode:
    """Decide the node ``path`` of ``T_seed`` alone, as a group of one.

    ``inherited`` are the ancestors' labelled points in this subcube: they
    count in the correlation test, not in the certified constant test.
    """
    group = NodeGroup(oracle.n, seed, [path], params, np.array([len(inherited)]),
                      correlations(inherited, oracle.n)[None])
    return drive(group.steps(), oracle, seed)[0]
