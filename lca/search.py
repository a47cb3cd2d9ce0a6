"""The sensitive-coordinate search estimator of the efficient mode (not the paper's).

At a node ``path`` the estimator draws pairs ``(x_k, y_k)`` of *independent*
uniform points of the node's subcube. For every pair with ``f(x_k) != f(y_k)``
it walks the hybrid path from ``x_k`` to ``y_k`` (the coordinates where they
differ, switched one at a time in a derived random order) and binary-searches
it for two adjacent hybrids with different values: the coordinate switched
between them is *sensitive* there, an edge of the cube on which ``f_path``
changes. That costs about ``log2`` of the number of differing coordinates per
pair. Each found coordinate is a vote.

Votes are cheap but are not the best split: a binary search finds one of the
path's edges, not each with its frequency, and on large trees the vote leader
is a worse split than the most influential variable even with unlimited
samples (``scripts/diagnose_split_rules.py``). So votes only nominate: the
:data:`~lca.params.SEARCH_CANDIDATES` vote leaders and the leader of the
correlation ``sum f(u) u_i`` over the node's labelled points (its own and
those inherited from its ancestors; label noise only scales it by
``1 - 2 eta``, and it finds the variables of monotone-like targets) are
*candidates*, and the node measures each candidate's influence directly:
``f(x_k) != f(x_k with x_k,c negated)`` for the first point of every pair.
Label noise adds the same expected rate of such edges to every candidate.

Pairs are drawn in rounds (``first_round`` pairs, doubling, up to the cap
``score_samples``; ``R`` rounds, every ``ln`` bounded from above by
:func:`lca.estimate.ln_upper`). After each round, first match:

1. **constant**: the Bernstein upper bound (level ``ln(R / delta)``) on the
   minority share among the node's own points is at most ``eps``: an early
   leaf, certified;
2. **influence**: unless the own points are unanimous, the influence
   leader's paired lead over the runner-up (points with an edge on one of
   them only) passes a sign test at level ``ln(R K (K - 1) / delta)``,
   ``K`` the most candidates: split on it, certified.

At the cap, if neither matched: an early leaf if no structure shows (the vote
leader is not found significantly more often than exchangeable edges would
be, ``Bin(V, 1/F)``, and no correlation is significant) and at most ``eps``
of the own points disagree with their majority; else split on the influence
leader, uncertified (a low-margin decision). docs/randomness.md §6 gives
every rule bit for bit.

These rules are heuristics with stated confidence levels under the
assumption that derived bits are independent and uniform; no accuracy
guarantee for the tree follows from them (docs/theory.md §7).

Every sample comes from :mod:`lca.derive` (purposes :data:`PAIRS`,
:data:`ORDER`, :data:`LEAF`; flips reuse the pairs' points); every decision is
a deterministic function of ``(oracle, params, seed, path)``. Oracle calls are
batched: one call for a round's points, one per binary-search step for all
searching pairs, one for the round's flips of all candidates.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from lca import derive
from lca.derive import Path
from lca.estimate import (anytime_rounds, bernoulli_upper, chunk_rows, lead_is_certified,
                          ln_upper, query)
from lca.oracle import Oracle
from lca.params import SEARCH_CANDIDATES, Params

__all__ = [
    "PAIRS",
    "ORDER",
    "LEAF",
    "FLIP",
    "Labelled",
    "SearchNode",
    "search_node",
    "leaf_points",
    "pair_points",
    "has_structure",
]

PAIRS = "search"
"""Purpose of a node's pair points: ``x_k`` is sample ``2k``, ``y_k`` sample ``2k + 1``."""
ORDER = "search-order"
"""Purpose of the switching priorities: word ``k * n + i`` of stream 0 ranks coordinate
``i`` of pair ``k``."""
LEAF = "search-leaf"
"""Purpose of a leaf's fresh points, drawn only when reused points are too few."""
FLIP = "search-flip"
"""Names the flip queries in oracle error notes; they use no derived bits of their own."""


@dataclass(frozen=True)
class Labelled:
    """Packed uniform points of a subcube and their values under ``f``."""

    words: np.ndarray   # (k, W) uint64, as lca.derive.uniform_points
    values: np.ndarray  # (k,) int8, +-1

    @classmethod
    def empty(cls, n: int) -> Labelled:
        return cls(np.zeros((0, derive.words_per_point(n)), dtype=np.uint64),
                   np.zeros(0, dtype=np.int8))

    def __len__(self) -> int:
        return self.values.shape[0]

    @property
    def total(self) -> int:
        return int(self.values.sum(dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.words.nbytes + self.values.nbytes

    def restrict(self, variable: int, bit: int) -> Labelled:
        """The points with ``x_variable = bit``, in their order."""
        word, offset = divmod(variable, 64)
        is_minus = (self.words[:, word] >> np.uint64(offset)) & np.uint64(1) == 1
        keep = is_minus if bit == -1 else ~is_minus
        return Labelled(self.words[keep], self.values[keep])

    def plus(self, other: Labelled) -> Labelled:
        return Labelled(np.concatenate([self.words, other.words]),
                        np.concatenate([self.values, other.values]))


@dataclass(frozen=True)
class SearchNode:
    """A node's search: the split variable, or ``None`` for an early leaf.

    ``rule`` says which test decided: ``"influence"`` for a split (or
    ``"correlation"`` when the own points were unanimous to the cap), or
    ``"constant"`` or ``"no structure"`` for an early leaf; ``margin`` is the
    paired flip-edge lead ``a - b`` of the chosen variable over the runner-up.
    ``votes[i]`` counts the pairs whose search found variable ``i``;
    ``pairs`` were drawn, ``disagreements`` of them had ``f(x) != f(y)``.
    ``certified`` is true for a certified lead or a certified constant;
    ``own`` holds the node's ``2 * pairs`` labelled points for reuse.
    """

    variable: int | None
    runner_up: int | None
    rule: str
    margin: int
    pairs: int
    disagreements: int
    votes: np.ndarray
    certified: bool
    own: Labelled


def _ranked(scores: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Free variables by descending score, ties to the lowest index."""
    candidates = np.flatnonzero(free)
    # A stable sort on -scores keeps ascending index order among equal scores.
    return candidates[np.argsort(-scores[candidates], kind="stable")]


def has_structure(leader_votes: int, edges: int, free: int, log_term: float) -> bool:
    """Is the leader found significantly more often than exchangeable edges would be?

    If the ``edges`` found edges land on each of ``free`` variables with
    probability ``1/free`` independently, a variable's count is
    ``Bin(edges, 1/free)`` with mean ``mu``; Bernstein's inequality bounds
    ``Pr[count >= mu + t]`` by ``exp(-t^2 / (2 (mu (1 - 1/free) + t/3)))``.
    Structure means that bound, times ``free``, is at most ``e^-L``. With
    one free variable every edge is on it: any edge is structure.
    """
    if free == 1:
        return leader_votes > 0
    mean = edges / free
    excess = leader_votes - mean
    variance = mean * (1 - 1 / free)
    return excess > 0 and excess * excess >= 2 * (variance + excess / 3) * log_term


def _label(oracle: Oracle, seed: int, purpose: str, path: Path,
           words: np.ndarray) -> Labelled:
    n = oracle.n
    step = chunk_rows(n)
    values = [query(oracle, derive.unpack_points(words[lo:lo + step], n), seed, purpose, path)
              for lo in range(0, words.shape[0], step)]
    return Labelled(words, np.concatenate(values).astype(np.int8, copy=False))


def pair_points(oracle: Oracle, seed: int, path: Path, start: int,
                 stop: int) -> Labelled:
    """Pairs ``start..stop-1`` of the node, as rows ``x_start, y_start, x_start+1, ...``."""
    key = derive.node_key(seed, PAIRS, path)
    words = derive.uniform_points(key, oracle.n, 2 * start, 2 * stop, path)
    return _label(oracle, seed, PAIRS, path, words)


def _search_edges(oracle: Oracle, seed: int, path: Path, first_pair: int,
                  pairs: Labelled, searching: np.ndarray) -> np.ndarray:
    """The sensitive coordinate found for each searching pair (indices into the round).

    The hybrid ``h_t`` of pair ``k`` is ``x_k`` with the first ``t`` differing
    coordinates, in order of ascending priority (ties to the lower index),
    switched to ``y_k``. The search keeps ``f(h_lo) = f(x_k) != f(h_hi)``
    from ``lo = 0, hi = L`` and queries ``h_mid``, ``mid = (lo + hi) // 2``,
    until ``hi = lo + 1``; the answer is the ``hi``-th coordinate in order.
    """
    n = oracle.n
    count = searching.size
    points = derive.unpack_points(pairs.words, n)
    x, y = points[0::2][searching], points[1::2][searching]
    fx = pairs.values[0::2][searching]
    pairs_in_round = pairs.values.shape[0] // 2
    priority = derive.raw_words(derive.node_key(seed, ORDER, path), 0, first_pair * n,
                                pairs_in_round * n).reshape(pairs_in_round, n)[searching]
    differing = x != y
    # Differing coordinates first, by ascending priority, ties to the lower index.
    index = np.broadcast_to(np.arange(n), (count, n))
    order = np.lexsort((index, priority, ~differing), axis=-1)
    rank = np.empty((count, n), dtype=np.int32)
    np.put_along_axis(rank, order, np.arange(n, dtype=np.int32)[None, :], axis=-1)
    lo = np.zeros(count, dtype=np.int64)
    hi = differing.sum(axis=1)
    while True:
        active = np.flatnonzero(hi - lo > 1)
        if active.size == 0:
            break
        mid = (lo[active] + hi[active]) // 2
        hybrids = np.where(rank[active] < mid[:, None], y[active], x[active])
        values = query(oracle, hybrids, seed, ORDER, path)
        same = values == fx[active]
        lo[active[same]] = mid[same]
        hi[active[~same]] = mid[~same]
    return order[np.arange(count), hi - 1]


def _correlations(labelled: Labelled, n: int) -> np.ndarray:
    """``sum_k f(x_k) x_k,i`` for every variable ``i``, as ``int64``."""
    if not len(labelled):
        return np.zeros(n, dtype=np.int64)
    points = derive.unpack_points(labelled.words, n)
    return labelled.values.astype(np.int64) @ points.astype(np.int64)


def _correlated(correlation: int, points: int, log_term: float) -> bool:
    # Hoeffding: if f_path is independent of x_i, |sum f x_i| over `points`
    # uniform points exceeds t with probability <= 2 exp(-t^2 / (2 points)).
    # Python ints: the comparison with the double is exact.
    return correlation * correlation >= 2 * points * log_term


def _candidates(votes: np.ndarray, correlations: np.ndarray, free: np.ndarray) -> list[int]:
    """Up to :data:`SEARCH_CANDIDATES` vote leaders with a vote, then the correlation leader.

    Vote leaders in order of most votes, ties to the lowest index; the
    correlation leader (largest ``|sum f x_i|``, ties to the lowest index)
    is added last unless it is already one of them.
    """
    chosen = [int(i) for i in _ranked(votes, free)[:SEARCH_CANDIDATES] if votes[i] > 0]
    leader = int(_ranked(np.abs(correlations), free)[0])
    if leader not in chosen:
        chosen.append(leader)
    return chosen


def _flip_edges(oracle: Oracle, seed: int, path: Path, own: Labelled,
                edges: dict[int, np.ndarray], candidates: list[int]) -> None:
    """Extend ``edges[c]`` to every ``x_k`` of ``own``: ``f(x_k) != f(x_k with x_k,c negated)``.

    Only each pair's first point is flipped (half the queries of flipping
    both). A candidate new to this round starts from pair 0, so all
    current candidates are compared on the same points. One oracle call per
    chunk of rows, for all candidates together, in candidate order.
    """
    n = oracle.n
    firsts = own.values[0::2]
    starts = {c: edges[c].size if c in edges else 0 for c in candidates}
    lowest = min(starts.values())
    # Unpack only the rows some candidate has not been measured on yet.
    points = derive.unpack_points(own.words[0::2][lowest:], n)
    rows = []
    for c, start in starts.items():
        flipped = points[start - lowest:].copy()
        flipped[:, c] = -flipped[:, c]
        rows.append(flipped)
    stacked = np.concatenate(rows)
    step = chunk_rows(n)
    values = np.concatenate([query(oracle, stacked[lo:lo + step], seed, FLIP, path)
                             for lo in range(0, stacked.shape[0], step)])
    at = 0
    for c, start in starts.items():
        count = firsts.size - start
        new = values[at:at + count] != firsts[start:]
        at += count
        edges[c] = np.concatenate([edges.get(c, new[:0]), new])


def _influence_lead(candidates: list[int],
                    edges: dict[int, np.ndarray]) -> tuple[int, int | None, int, int]:
    """Leader, runner-up and the paired contest ``(a, b)`` between them.

    The leader has the most flip edges (ties to the lowest index); ``a``
    counts the points with an edge on the leader but not the runner-up,
    ``b`` the reverse. With one candidate, ``a`` is its edges and ``b = 0``.
    """
    ranked = sorted(candidates, key=lambda c: (-int(edges[c].sum()), c))
    leader = ranked[0]
    if len(ranked) == 1:
        return leader, None, int(edges[leader].sum()), 0
    runner = ranked[1]
    a = int((edges[leader] & ~edges[runner]).sum())
    b = int((edges[runner] & ~edges[leader]).sum())
    return leader, runner, a, b


def search_node(oracle: Oracle, seed: int, path: Path, params: Params,
                inherited: Labelled) -> SearchNode:
    """Decide the node ``path`` of ``T_seed`` with the search estimator (module docstring).

    ``inherited`` are the ancestors' labelled points in this subcube: they
    count in the correlation test, not in the certified constant test.
    """
    n = oracle.n
    free = np.ones(n, dtype=bool)
    free[[var for var, _ in path]] = False
    free_count = int(free.sum())
    rounds = anytime_rounds(params.first_round, params.score_samples)
    delta = Fraction(params.delta)
    # Per node and round: one constant test, and one lead test between two of
    # at most K = SEARCH_CANDIDATES + 1 candidates (K (K - 1) ordered pairs).
    most = SEARCH_CANDIDATES + 1
    constant_term = ln_upper(Fraction(len(rounds)) / delta)
    lead_term = ln_upper(Fraction(len(rounds) * most * (most - 1)) / delta)
    votes = np.zeros(n, dtype=np.int64)
    correlations = _correlations(inherited, n)
    own = Labelled.empty(n)
    edges: dict[int, np.ndarray] = {}
    disagreements = 0
    done = 0
    for size in rounds:
        batch = pair_points(oracle, seed, path, done, size)
        searching = np.flatnonzero(batch.values[0::2] != batch.values[1::2])
        if searching.size:
            found = _search_edges(oracle, seed, path, done, batch, searching)
            np.add.at(votes, found, 1)
        disagreements += int(searching.size)
        correlations += _correlations(batch, n)
        own = own.plus(batch)
        done = size
        points = 2 * size
        plus = (points + own.total) // 2
        minority = min(plus, points - plus)
        if bernoulli_upper(minority, points, constant_term) <= params.eps:
            return _leaf(size, disagreements, votes, own, certified=True)
        if minority == 0:
            # Unanimous own points: no flip can be compared against a
            # disagreement yet, so measure nothing this round.
            continue
        candidates = _candidates(votes, correlations, free)
        _flip_edges(oracle, seed, path, own, edges, candidates)
        leader, runner, a, b = _influence_lead(candidates, edges)
        if lead_is_certified(a - b, a + b, lead_term):
            return SearchNode(leader, runner, "influence", a - b, size, disagreements, votes,
                              True, own)
    vote_leader = _ranked(votes, free)[0]
    correlation_leader = int(_ranked(np.abs(correlations), free)[0])
    structure = (
        has_structure(int(votes[vote_leader]), disagreements, free_count, ln_upper(1 / delta))
        or _correlated(int(correlations[correlation_leader]), len(inherited) + points,
                       ln_upper(Fraction(2 * free_count) / delta)))
    if not structure and minority <= params.eps * points:
        return _leaf(size, disagreements, votes, own, certified=False)
    if minority == 0:
        # Unanimous to the cap, yet the inherited points correlate: nothing was flipped.
        return SearchNode(correlation_leader, None, "correlation", 0, size, disagreements,
                          votes, False, own)
    return SearchNode(leader, runner, "influence", a - b, size, disagreements, votes, False, own)


def _leaf(pairs: int, disagreements: int, votes: np.ndarray, own: Labelled, *,
          certified: bool) -> SearchNode:
    return SearchNode(None, None, "constant" if certified else "no structure", 0, pairs,
                      disagreements, votes, certified, own)


def leaf_points(oracle: Oracle, seed: int, path: Path, count: int) -> Labelled:
    """Fresh leaf samples ``0..count-1`` (purpose :data:`LEAF`), when reuse left too few."""
    if count <= 0:
        return Labelled.empty(oracle.n)
    words = derive.uniform_points(derive.node_key(seed, LEAF, path), oracle.n, 0, count, path)
    return _label(oracle, seed, LEAF, path, words)
