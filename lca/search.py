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
is a worse split than the most influential variable even with 2,000 samples
per node (``scripts/diagnose_split_rules.py``). So votes only nominate: the
:data:`SEARCH_CANDIDATES` vote leaders and the leader of the correlation
``sum f(u) u_i`` over the node's labelled points (its own and those inherited
from its ancestors; label noise only scales it by ``1 - 2 eta``, and it finds
the variables of monotone-like targets) are *candidates*, and the node
measures each candidate's influence directly: ``f(x_k) != f(x_k with x_k,c
negated)`` for the first point of every pair.

Pairs are drawn in rounds (``first_round`` pairs, doubling, up to the cap
``score_samples``; ``R`` rounds, every ``ln`` bounded from above by
:func:`lca.estimate.ln_upper`). After each round, first match
(:func:`round_rule`):

1. **constant**: the Bernstein upper bound (level ``ln(R / delta)``) on the
   minority share among the node's own points is at most ``eps``: an early
   leaf, certified;
2. **influence**: unless the own points are unanimous, the influence
   leader's paired lead over the runner-up (points with an edge on one of
   them only) passes a sign test at level ``ln(R K (K - 1) / delta)``,
   ``K`` the most candidates: split on it, certified.

At the cap, if neither matched (:func:`cap_rule`): an early leaf if no
structure shows (the vote leader is not found significantly more often than
exchangeable edges would be, ``Bin(V, 1/F)``, and no correlation is
significant) and at most ``eps`` of the own points disagree with their
majority; else split on the influence leader, uncertified (a low-margin
decision). docs/randomness.md §6 gives every rule bit for bit.

These rules are heuristics with stated confidence levels under the
assumption that derived bits are independent and uniform; no accuracy
guarantee for the tree follows from them (docs/theory.md §7).

Every sample comes from :mod:`lca.derive` (purposes :data:`PAIRS`,
:data:`ORDER`, :data:`LEAF`; flips reuse the pairs' points); every decision is
a deterministic function of ``(oracle, params, seed, path)``. A node's
decision is written as steps (:mod:`lca.engine`): one request for a round's
points, one per binary-search step for all its searching pairs, one for the
round's flips of all candidates; the scheduler batches them across nodes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from lca import derive, estimator
from lca.decisions import LeafDecision, NodeDecision
from lca.derive import Path
from lca.engine import Request, Steps, drive
from lca.estimate import anytime_rounds, bernoulli_upper, lead_is_certified, leaf_label, ln_upper
from lca.estimator import Estimator, NodeContext
from lca.oracle import Oracle

__all__ = [
    "FLIP",
    "LEAF",
    "ORDER",
    "PAIRS",
    "SEARCH",
    "SEARCH_CANDIDATES",
    "Inherited",
    "Labelled",
    "SearchNode",
    "candidates",
    "cap_rule",
    "constant_certified",
    "correlated",
    "has_structure",
    "influence_lead",
    "leaf_points",
    "pair_points",
    "round_rule",
    "search_edges",
    "search_node",
]

SEARCH_CANDIDATES = 2
"""How many vote leaders a node measures the influence of, besides its correlation
leader (chosen by ``scripts/diagnose_split_rules.py``)."""

PAIRS = "search"
"""Purpose of a node's pair points: ``x_k`` is sample ``2k``, ``y_k`` sample ``2k + 1``."""
ORDER = "search-order"
"""Purpose of the switching priorities: word ``k * n + i`` of stream 0 ranks coordinate
``i`` of pair ``k``."""
LEAF = "search-leaf"
"""Purpose of a leaf's fresh points, drawn only when reused points are too few."""
FLIP = "search-flip"
"""Names the flip queries in oracle error notes; they use no derived bits of their own."""

# Working memory of one node's binary searches: pairs are searched in groups
# small enough that their switching orders and hybrids fit (about 25 bytes
# per variable per pair while the orders are sorted, 3 after).
_SEARCH_BYTES = 1 << 25
_ALL_ONES = (1 << 64) - 1


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
        return self.where(((variable, bit),))

    def where(self, path: Path) -> Labelled:
        """The points that agree with every ``(variable, bit)`` of ``path``, in their order."""
        keep = np.ones(len(self), dtype=bool)
        for variable, bit in path:
            word, offset = divmod(variable, 64)
            is_minus = (self.words[:, word] >> np.uint64(offset)) & np.uint64(1) == 1
            keep &= is_minus if bit == -1 else ~is_minus
        return Labelled(self.words[keep], self.values[keep])

    def plus(self, other: Labelled) -> Labelled:
        return Labelled(np.concatenate([self.words, other.words]),
                        np.concatenate([self.values, other.values]))


@dataclass
class Inherited:
    """Sums over a node's inherited points: how many, ``sum f(u)``, ``sum f(u) u_i``."""

    count: int
    total: int
    correlations: np.ndarray  # (n,) int64

    @classmethod
    def of(cls, labelled: Labelled, n: int) -> Inherited:
        return cls(len(labelled), labelled.total, correlations(labelled, n))


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


# -- rules: pure functions of a node's counts (docs/randomness.md §6) -----------------

def _ranked(scores: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Free variables by descending score, ties to the lowest index."""
    indices = np.flatnonzero(free)
    # A stable sort on -scores keeps ascending index order among equal scores.
    return indices[np.argsort(-scores[indices], kind="stable")]


def constant_certified(minority: int, points: int, eps: float, log_term: float) -> bool:
    """Rule 1: the Bernstein bound ``U(minority)`` on ``points`` own points is ``<= eps``."""
    return bool(bernoulli_upper(minority, points, log_term) <= eps)


def has_structure(leader_votes: int, edges: int, free: int, log_term: float) -> bool:
    """Is the leader found significantly more often than exchangeable edges would be?

    If the ``edges`` found edges land on each of ``free`` variables with
    probability ``1/free`` independently, a variable's count is
    ``Bin(edges, 1/free)`` with mean ``mu``; Bernstein's inequality bounds
    ``Pr[count >= mu + t]`` by ``exp(-t^2 / (2 (mu (1 - 1/free) + t/3)))``
    for one variable. The test is that bound at level ``e^-L`` (no union
    bound over the ``free`` variables is applied: the leader is the maximum
    of ``free`` counts, so under the null it passes with probability up to
    ``free * e^-L``). With one free variable every edge is on it: any edge
    is structure.
    """
    if free == 1:
        return leader_votes > 0
    mean = edges / free
    excess = leader_votes - mean
    variance = mean * (1 - 1 / free)
    return excess > 0 and excess * excess >= 2 * (variance + excess / 3) * log_term


def correlated(correlation: int, points: int, log_term: float) -> bool:
    """Is ``|sum f(u) u_i|`` over ``points`` labelled points significant at level ``e^-L``?

    Hoeffding: if ``f_path`` is independent of ``x_i``, ``|sum f x_i|`` over
    ``points`` uniform points exceeds ``t`` with probability at most
    ``2 exp(-t^2 / (2 points))``; the test is ``c^2 >= 2 points L``.
    Python ints: the comparison with the double is exact.
    """
    return correlation * correlation >= 2 * points * log_term


def candidates(votes: np.ndarray, correlations: np.ndarray, free: np.ndarray) -> list[int]:
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


def influence_lead(members: list[int],
                   edges: dict[int, np.ndarray]) -> tuple[int, int | None, int, int]:
    """Leader, runner-up and the paired contest ``(a, b)`` between them.

    The leader has the most flip edges (ties to the lowest index); ``a``
    counts the points with an edge on the leader but not the runner-up,
    ``b`` the reverse. With one candidate, ``a`` is its edges and ``b = 0``.
    """
    ranked = sorted(members, key=lambda c: (-int(edges[c].sum()), c))
    leader = ranked[0]
    if len(ranked) == 1:
        return leader, None, int(edges[leader].sum()), 0
    runner = ranked[1]
    a = int((edges[leader] & ~edges[runner]).sum())
    b = int((edges[runner] & ~edges[leader]).sum())
    return leader, runner, a, b


@dataclass(frozen=True)
class _Terms:
    """The log terms of a node's tests (docs/randomness.md §6)."""

    constant: float     # Lc = ln_upper(R / delta)
    lead: float         # Ll = ln_upper(R (K + 1) K / delta)
    votes: float        # L1 = ln_upper(1 / delta)
    correlation: float  # Ls = ln_upper(2 F / delta)

    @classmethod
    def of(cls, rounds: int, free: int, delta: float) -> _Terms:
        exact = Fraction(delta)
        most = SEARCH_CANDIDATES + 1
        return cls(ln_upper(Fraction(rounds) / exact),
                   ln_upper(Fraction(rounds * most * (most - 1)) / exact),
                   ln_upper(1 / exact), ln_upper(Fraction(2 * free) / exact))


@dataclass
class _Round:
    """A node's counts after a round (cumulative over its rounds)."""

    pairs: int
    disagreements: int
    votes: np.ndarray          # (n,) int64
    correlations: np.ndarray   # (n,) int64, inherited and own points
    labelled: int              # inherited and own points
    own_total: int             # sum of the own points' values

    @property
    def points(self) -> int:
        return 2 * self.pairs

    @property
    def minority(self) -> int:
        plus = (self.points + self.own_total) // 2
        return min(plus, self.points - plus)


def round_rule(state: _Round, eps: float, terms: _Terms) -> str | None:
    """Rules 1 and 2 before any flip: ``"constant"``, ``"unanimous"`` or None (go on)."""
    if constant_certified(state.minority, state.points, eps, terms.constant):
        return "constant"
    if state.minority == 0:
        return "unanimous"
    return None


def cap_rule(state: _Round, free: np.ndarray, eps: float, terms: _Terms) -> str:
    """At the pair cap: ``"no structure"`` (rule 4), ``"correlation"`` (5) or ``"influence"`` (6)."""
    vote_leader = _ranked(state.votes, free)[0]
    correlation_leader = _ranked(np.abs(state.correlations), free)[0]
    structure = (
        has_structure(int(state.votes[vote_leader]), state.disagreements, int(free.sum()),
                      terms.votes)
        or correlated(int(state.correlations[correlation_leader]), state.labelled,
                      terms.correlation))
    if not structure and state.minority <= eps * state.points:
        return "no structure"
    if state.minority == 0:
        return "correlation"
    return "influence"


# -- sums over labelled points ------------------------------------------------------

def _bits(words: np.ndarray, n: int) -> np.ndarray:
    return np.unpackbits(words.astype("<u8", copy=False).view(np.uint8), axis=1, count=n,
                         bitorder="little")


def correlations(labelled: Labelled, n: int) -> np.ndarray:
    """``sum_k f(x_k) x_k,i`` for every variable ``i``, as ``int64`` (exact).

    With ``x = 1 - 2b`` for the bits ``b``: ``sum f - 2 (sum over f = +1 of b
    - sum over f = -1 of b)``; the bits are unpacked in chunks of rows.
    """
    out = np.zeros(n, dtype=np.int64)
    step = max(1, _SEARCH_BYTES // n)
    for lo in range(0, len(labelled), step):
        words, values = labelled.words[lo:lo + step], labelled.values[lo:lo + step]
        bits = _bits(words, n)
        out -= 2 * (bits[values > 0].sum(axis=0, dtype=np.int64)
                    - bits[values < 0].sum(axis=0, dtype=np.int64))
        out += int(values.sum(dtype=np.int64))
    return out


# -- steps: the rows a node asks for ----------------------------------------------------

def _points_request(purpose: str, words: np.ndarray, n: int) -> Request:
    return Request(purpose, words.shape[0],
                   lambda lo, hi: derive.unpack_points(words[lo:hi], n))


def _labelled_steps(purpose: str, words: np.ndarray, n: int) -> Steps:
    values = yield _points_request(purpose, words, n)
    return Labelled(words, values.astype(np.int8, copy=False))


def _pairs_steps(n: int, seed: int, path: Path, start: int, stop: int) -> Steps:
    words = derive.uniform_points(derive.node_key(seed, PAIRS, path), n, 2 * start,
                                  2 * stop, path)
    return (yield from _labelled_steps(PAIRS, words, n))


def pair_points(oracle: Oracle, seed: int, path: Path, start: int, stop: int) -> Labelled:
    """Pairs ``start..stop-1`` of the node, as rows ``x_start, y_start, x_start+1, ...``."""
    return drive(_pairs_steps(oracle.n, seed, path, start, stop), oracle, seed, path)


def _fresh_leaf_steps(n: int, seed: int, path: Path, count: int) -> Steps:
    if count <= 0:
        return Labelled.empty(n)
    words = derive.uniform_points(derive.node_key(seed, LEAF, path), n, 0, count, path)
    return (yield from _labelled_steps(LEAF, words, n))


def leaf_points(oracle: Oracle, seed: int, path: Path, count: int) -> Labelled:
    """Fresh leaf samples ``0..count-1`` (purpose :data:`LEAF`), when reuse left too few."""
    return drive(_fresh_leaf_steps(oracle.n, seed, path, count), oracle, seed, path)


def _priorities(key: int, n: int, pairs: np.ndarray) -> np.ndarray:
    """Switching priorities ``(len(pairs), n)``: words ``k n .. k n + n - 1`` of stream 0."""
    out = np.empty((pairs.size, n), dtype=np.uint64)
    # One derivation per run of consecutive pairs.
    breaks = np.flatnonzero(np.diff(pairs) != 1) + 1
    for run in np.split(np.arange(pairs.size), breaks):
        first = int(pairs[run[0]])
        out[run] = derive.raw_words(key, 0, first * n, run.size * n).reshape(run.size, n)
    return out


def _switching_orders(key: int, n: int, pairs: np.ndarray,
                      differing: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's differing coordinates in switching order, and how many there are.

    The order is ascending ``(priority, index)`` over the differing
    coordinates only. One C-level sort over all pairs of ``(priority's high
    bits | index + 1)`` keys (the index in the low ``b`` bits, ``2^b > n + 1``,
    padding rows with ``2^64 - 1``); where two keys of a pair share their high
    bits the sort is redone exactly for that pair.
    """
    diff = _bits(differing, n).view(bool)
    lengths = diff.sum(axis=1)
    rows, cols = np.nonzero(diff)
    width = max(1, int(lengths.max()))
    low_bits = (n + 1).bit_length()
    low = np.uint64((1 << low_bits) - 1)
    high = np.uint64(_ALL_ONES ^ int(low))
    priority = _priorities(key, n, pairs)
    keys = np.full((pairs.size, width), _ALL_ONES, dtype=np.uint64)
    starts = np.cumsum(lengths) - lengths
    position = np.arange(rows.size) - np.repeat(starts, lengths)
    keys[rows, position] = (priority[rows, cols] & high) | (cols.astype(np.uint64) + 1)
    keys.sort(axis=1)
    order = ((keys & low).astype(np.int64) - 1).astype(np.int32)
    shared = (keys[:, 1:] & high) == (keys[:, :-1] & high)
    shared &= np.arange(width - 1) < (lengths - 1)[:, None]
    for row in np.flatnonzero(shared.any(axis=1)):
        coordinates = np.flatnonzero(diff[row])
        exact = coordinates[np.lexsort((coordinates, priority[row, coordinates]))]
        order[row, :exact.size] = exact
    return order, lengths


def _segments(order: np.ndarray, rows: np.ndarray, starts: np.ndarray,
              stops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(row index into rows, coordinate)`` for ``order[rows[i], starts[i]:stops[i]]``."""
    lengths = stops - starts
    which = np.repeat(np.arange(rows.size), lengths)
    offsets = np.arange(which.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return which, order[rows[which], starts[which] + offsets]


def _search_group_steps(key: int, n: int, pairs: np.ndarray, x: np.ndarray, y: np.ndarray,
                        fx: np.ndarray) -> Steps:
    """Binary searches of one group of disagreeing pairs; returns the found coordinates."""
    order, lengths = _switching_orders(key, n, pairs, x ^ y)
    # hybrid h_lo of every pair, as the oracle reads it: x with the first lo
    # coordinates of its order switched (negated: they differ from x there).
    hybrid = derive.unpack_points(x, n)
    lo = np.zeros(pairs.size, dtype=np.int64)
    hi = lengths.astype(np.int64)
    while True:
        active = np.flatnonzero(hi - lo > 1)
        if not active.size:
            break
        start, mid = lo[active], (lo[active] + hi[active]) // 2

        def rows(first: int, last: int, active: np.ndarray = active, start: np.ndarray = start,
                 mid: np.ndarray = mid) -> np.ndarray:
            out = hybrid[active[first:last]]
            which, cols = _segments(order, active[first:last], start[first:last],
                                    mid[first:last])
            out[which, cols] = -out[which, cols]
            return out

        values = yield Request(ORDER, active.size, rows)
        same = values == fx[active]
        moved = active[same]
        which, cols = _segments(order, moved, start[same], mid[same])
        hybrid[moved[which], cols] = -hybrid[moved[which], cols]
        lo[moved] = mid[same]
        hi[active[~same]] = mid[~same]
    return order[np.arange(pairs.size), hi - 1].astype(np.int64)


def _search_steps(n: int, seed: int, path: Path, first_pair: int, batch: Labelled,
                  searching: np.ndarray) -> Steps:
    """The sensitive coordinate found for each searching pair (indices into the round).

    The hybrid ``h_t`` of pair ``k`` is ``x_k`` with the first ``t`` differing
    coordinates, in order of ascending priority (ties to the lower index),
    switched to ``y_k``. The search keeps ``f(h_lo) = f(x_k) != f(h_hi)``
    from ``lo = 0, hi = L`` and queries ``h_mid``, ``mid = (lo + hi) // 2``,
    until ``hi = lo + 1``; the answer is the ``hi``-th coordinate in order.
    Pairs are searched in groups bounded by :data:`_SEARCH_BYTES`.
    """
    key = derive.node_key(seed, ORDER, path)
    found = np.empty(searching.size, dtype=np.int64)
    group = max(1, _SEARCH_BYTES // (25 * n))
    for lo in range(0, searching.size, group):
        members = searching[lo:lo + group]
        found[lo:lo + members.size] = yield from _search_group_steps(
            key, n, first_pair + members, batch.words[2 * members],
            batch.words[2 * members + 1], batch.values[2 * members])
    return found


def search_edges(oracle: Oracle, seed: int, path: Path, first_pair: int, pairs: Labelled,
                 searching: np.ndarray) -> np.ndarray:
    """:func:`_search_steps` run alone: the found coordinate of each searching pair."""
    return drive(_search_steps(oracle.n, seed, path, first_pair, pairs, searching), oracle,
                 seed, path)


def _flip_steps(n: int, own: Labelled, edges: dict[int, np.ndarray],
                members: list[int]) -> Steps:
    """Extend ``edges[c]`` to every ``x_k`` of ``own``: ``f(x_k) != f(x_k with x_k,c negated)``.

    Only each pair's first point is flipped (half the queries of flipping
    both). A candidate new to this round starts from pair 0, so all
    current candidates are compared on the same points. One request for all
    candidates together, in candidate order.
    """
    firsts = own.words[0::2]
    values = own.values[0::2]
    starts = [edges[c].size if c in edges else 0 for c in members]
    counts = [firsts.shape[0] - start for start in starts]
    bounds = np.cumsum([0, *counts])

    def rows(lo: int, hi: int) -> np.ndarray:
        parts = []
        for c, start, first, last in zip(members, starts, bounds[:-1], bounds[1:]):
            a, b = max(lo, first), min(hi, last)
            if a < b:
                points = derive.unpack_points(firsts[start + a - first:start + b - first], n)
                points[:, c] = -points[:, c]
                parts.append(points)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    flipped = yield Request(FLIP, int(bounds[-1]), rows)
    for c, start, first, last in zip(members, starts, bounds[:-1], bounds[1:]):
        new = flipped[first:last] != values[start:]
        edges[c] = np.concatenate([edges[c], new]) if c in edges else new


def _node_steps(n: int, seed: int, path: Path, params: Any, inherited: Inherited) -> Steps:
    """Decide the node ``path`` of ``T_seed`` (module docstring); returns a :class:`SearchNode`.

    ``inherited`` sums the ancestors' labelled points in this subcube: they
    count in the correlation test, not in the certified constant test.
    """
    free = np.ones(n, dtype=bool)
    free[[var for var, _ in path]] = False
    rounds = anytime_rounds(params.first_round, params.score_samples)
    terms = _Terms.of(len(rounds), int(free.sum()), params.delta)
    state = _Round(0, 0, np.zeros(n, dtype=np.int64), inherited.correlations.copy(),
                   inherited.count, 0)
    batches: list[Labelled] = []
    edges: dict[int, np.ndarray] = {}
    leader = runner = None
    a = b = 0
    for size in rounds:
        batch = yield from _pairs_steps(n, seed, path, state.pairs, size)
        searching = np.flatnonzero(batch.values[0::2] != batch.values[1::2])
        if searching.size:
            found = yield from _search_steps(n, seed, path, state.pairs, batch, searching)
            np.add.at(state.votes, found, 1)
        state.disagreements += int(searching.size)
        state.correlations += correlations(batch, n)
        state.labelled += len(batch)
        state.own_total += batch.total
        state.pairs = size
        batches.append(batch)
        rule = round_rule(state, params.eps, terms)
        if rule == "constant":
            return _node(state, batches, None, None, rule, 0, True)
        if rule == "unanimous":
            # No flip can be compared against a disagreement yet: measure nothing.
            continue
        own = _joined(batches)
        members = candidates(state.votes, state.correlations, free)
        yield from _flip_steps(n, own, edges, members)
        leader, runner, a, b = influence_lead(members, edges)
        if lead_is_certified(a - b, a + b, terms.lead):
            return _node(state, batches, leader, runner, "influence", a - b, True)
    rule = cap_rule(state, free, params.eps, terms)
    if rule == "no structure":
        return _node(state, batches, None, None, rule, 0, False)
    if rule == "correlation":
        # Unanimous to the cap, yet the inherited points correlate: nothing was flipped.
        chosen = int(_ranked(np.abs(state.correlations), free)[0])
        return _node(state, batches, chosen, None, rule, 0, False)
    return _node(state, batches, leader, runner, rule, a - b, False)


def _joined(batches: list[Labelled]) -> Labelled:
    if len(batches) == 1:
        return batches[0]
    return Labelled(np.concatenate([b.words for b in batches]),
                    np.concatenate([b.values for b in batches]))


def _node(state: _Round, batches: list[Labelled], variable: int | None, runner: int | None,
          rule: str, margin: int, certified: bool) -> SearchNode:
    return SearchNode(variable, runner, rule, margin, state.pairs, state.disagreements,
                      state.votes, certified, _joined(batches))


def search_node(oracle: Oracle, seed: int, path: Path, params: Any,
                inherited: Labelled) -> SearchNode:
    """Decide the node ``path`` of ``T_seed`` with the search estimator (module docstring).

    ``inherited`` are the ancestors' labelled points in this subcube: they
    count in the correlation test, not in the certified constant test.
    """
    return drive(_node_steps(oracle.n, seed, path, params, Inherited.of(inherited, oracle.n)),
                 oracle, seed, path)


# -- the estimator ----------------------------------------------------------------------

class SearchEstimator(Estimator):
    """``Params.estimator = "search"``: the efficient mode (module docstring).

    A node keeps its own points' values for its descendants; their packed
    points are re-derived from their stream when the reconstructor's memo
    does not hold them (it only saves work: docs/randomness.md §6).
    """

    name = "search"
    reads_lineage = True

    def validate(self, params: Any) -> None:
        if params.adaptive or None in (params.eps, params.delta):
            raise ValueError("Params with estimator='search' need 'eps' and 'delta' (the "
                             "constant-leaf threshold and per-node confidence) and "
                             f"adaptive=False. Got eps={params.eps!r}, "
                             f"delta={params.delta!r}, adaptive={params.adaptive!r}.")

    # -- what the reconstructor runs --

    def _lineage(self, context: NodeContext) -> Iterator[Labelled]:
        """Each ancestor's own points that lie in the node's subcube."""
        n, seed, path = context.n, context.seed, context.path
        for k in range(len(path)):
            values = context.lineage(k)
            prefix = path[:k]
            words = context.memo.get((seed, prefix))
            if words is None:
                words = derive.uniform_points(derive.node_key(seed, PAIRS, prefix), n, 0,
                                              values.size, prefix)
                context.memo.put((seed, prefix), words)
            yield Labelled(words, values).where(path[k:])

    def _inherited(self, context: NodeContext, with_correlations: bool) -> Inherited:
        n = context.n
        inherited = Inherited(0, 0, np.zeros(n if with_correlations else 0, dtype=np.int64))
        for points in self._lineage(context):
            inherited.count += len(points)
            inherited.total += points.total
            if with_correlations:
                inherited.correlations += correlations(points, n)
        return inherited

    def node(self, context: NodeContext) -> Steps:
        n, seed, path, params = context.n, context.seed, context.path, context.params
        inherited = self._inherited(context, with_correlations=True)
        node = yield from _node_steps(n, seed, path, params, inherited)
        if node.variable is not None:
            context.memo.put((seed, path), node.own.words)
            return NodeDecision(node.variable, node.pairs, node.disagreements, 0,
                                node.certified, node.runner_up, node.margin,
                                not node.certified, int(node.votes[node.variable]),
                                node.rule), node.own.values
        leaf = yield from self._label(context, inherited.count + len(node.own),
                                      inherited.total + node.own.total, node.certified)
        return leaf, None

    def leaf(self, context: NodeContext) -> Steps:
        inherited = self._inherited(context, with_correlations=False)
        return (yield from self._label(context, inherited.count, inherited.total, None))

    def _label(self, context: NodeContext, count: int, total: int,
               certified: bool | None) -> Steps:
        """Leaf label from ``count`` reused points summing to ``total``, topped up fresh."""
        fresh = yield from _fresh_leaf_steps(context.n, context.seed, context.path,
                                             context.params.leaf_samples - count)
        total += fresh.total
        return LeafDecision(leaf_label(total), count + len(fresh), total, certified)

    # -- bounds and memory --

    def max_node_queries(self, params: Any) -> int:
        """``score_samples * (2 + ceil(log2 n) + K)`` (docs/randomness.md §6).

        2 points per pair, at most ``ceil(log2 n)`` hybrids per disagreeing
        pair, and one flip of each pair's first point for each of at most
        ``K = SEARCH_CANDIDATES + 1`` candidates.
        """
        flips = SEARCH_CANDIDATES + 1
        return params.score_samples * (2 + max(1, (params.n - 1).bit_length()) + flips)

    def max_leaf_queries(self, params: Any) -> int:
        return params.leaf_samples

    def early_leaves(self, params: Any) -> bool:
        return True

    def node_memory(self, params: Any) -> int:
        words = derive.words_per_point(params.n)
        # Own points and their values, two correlation vectors, the searches.
        return 2 * params.score_samples * (8 * words + 1) + 16 * params.n + min(
            _SEARCH_BYTES, 25 * params.n * params.score_samples)

    def describe(self, params: Any) -> str:
        return "\n".join([
            f"lca parameters ({params.preset} preset: sensitive-coordinate search, "
            "not the paper's estimator)",
            f"  variables n           {params.n}",
            f"  depth cap             {params.depth}"
            + (f"  (paths stop at n = {params.n})" if params.depth > params.n else ""),
            f"  pairs per node        {params.first_round}, doubling up to "
            f"{params.score_samples}  (2 queries each, plus about log2 n per disagreeing "
            f"pair, plus one flip per pair for each of at most {SEARCH_CANDIDATES + 1} "
            "candidates)",
            f"  early leaf            minority share <= {params.eps:.3g} certified "
            f"(confidence {1 - params.delta:.3g} per node), or at the cap: no variable "
            f"stands out and at most {params.eps:.3g} of the node's points disagree",
            f"  points per leaf       {params.leaf_samples}  (ancestors' points reused first)",
            f"  queries per answer    at most {params.predicted_queries}  (cold, no cache)",
            "  guarantee             determinism and consistency; accuracy measured, "
            "not proved (docs/theory.md)",
        ])


SEARCH = estimator.register(SearchEstimator())
"""The registered search estimator."""
