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

Pairs are drawn in rounds (:func:`schedule`: ``first_round`` pairs, doubling,
up to the cap ``score_samples``, then :data:`NOISY_ROUNDS` more doublings for
a noisy node; ``R`` rounds in all, every ``ln`` bounded from above by
:func:`lca.estimate.ln_upper`). After each round, first match
(:func:`round_rule`):

1. **constant**: the node's own points are unanimous and at least
   :func:`certifying_points` (``ceil(ln(2 R / delta) / eps)``) many: an
   early leaf, certified (``f_path`` is ``eps``-close to that value except
   with probability ``delta``, docs/theory.md §7);
2. **influence**: unless the own points are unanimous, the influence
   leader's paired lead over the runner-up (points with an edge on one of
   them only) passes a sign test at level ``ln(R K (K - 1) / delta)``,
   ``K`` the most candidates: split on it, certified.

At the pair cap, a node with minority points flips each pair's first point
once more, on a *probe*: a free variable drawn from the derived bits
(:data:`PROBE`), independent of ``f``. Under label noise ``eta`` a probe
changes ``f`` with probability about ``2 eta (1 - eta)``, the offset every
candidate's flip-edge rate carries; on a noise-free ``f_path`` only as
often as a random free variable matters. A node whose probes find at least
half as many edges as its influence leader is *noisy* and draws up to
:data:`NOISY_ROUNDS` more rounds, as many as the estimated noise needs to
make up for the gaps it shrinks (:func:`noisy_rounds`, rule 7); the others
stop.
At a node's last round, if neither rule matched (:func:`cap_rule`): an
early leaf if no structure shows (the vote leader is not found
significantly more often than exchangeable edges would be, ``Bin(V,
1/F)``, and no correlation is significant), at most ``eps`` of the own
points disagree with their majority, and the probes found at least half
as many edges as there are minority points (:func:`noise_like`: label
noise could explain them); else split on the influence leader,
uncertified (a low-margin decision, and *guesswork* when the leader does
not beat the probes, :func:`is_guesswork`). docs/randomness.md §6 gives
every rule bit for bit.

These rules are heuristics with stated confidence levels under the
assumption that derived bits are independent and uniform; no accuracy
guarantee for the tree follows from them (docs/theory.md §7).

Every sample comes from :mod:`lca.derive` (purposes :data:`PAIRS`,
:data:`ORDER`, :data:`LEAF`, :data:`PROBE`; flips reuse the pairs' points); every decision is
a deterministic function of ``(oracle, params, seed, path)``. A node's
decision is written as steps (:mod:`lca.engine`): one request for a round's
points, one per binary-search step for all its searching pairs, one for the
round's flips of all candidates; the scheduler batches them across nodes.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from lca import derive, estimator
from lca._validate import MAX_ARRAY_BYTES, check_int
from lca.decisions import LeafDecision, NodeDecision
from lca.derive import Path
from lca.engine import Request, Steps, drive
from lca.estimate import anytime_rounds, lead_is_certified, leaf_label, ln_upper, ln_upper_exact
from lca.estimator import Estimator, NodeContext
from lca.oracle import Oracle, OracleError

__all__ = [
    "FLIP",
    "LEAF",
    "NOISY_ROUNDS",
    "ORDER",
    "PAIRS",
    "PROBE",
    "SEARCH",
    "SEARCH_CANDIDATES",
    "Labelled",
    "SearchNode",
    "candidates",
    "cap_rule",
    "certifying_points",
    "correlated",
    "has_structure",
    "influence_lead",
    "is_guesswork",
    "leaf_points",
    "max_samples",
    "noise_like",
    "noisy_rounds",
    "pair_points",
    "probe_variables",
    "round_rule",
    "schedule",
    "search_edges",
    "search_node",
]

SEARCH_CANDIDATES = 2
"""How many vote leaders a node measures the influence of, besides its correlation
leader (chosen by ``scripts/diagnose_split_rules.py``)."""

NOISY_ROUNDS = 1
"""Most rounds a noisy node draws past the pair cap, each doubling its pairs: a noisy
node may draw ``2**NOISY_ROUNDS * score_samples`` pairs (:func:`noisy_rounds`). One:
at label noise 0.2 twice the pairs bring the suite's trees within 0.03 of the peer,
four times cost twice as much again (docs/benchmarks.md §6)."""

PAIRS = "search"
"""Purpose of a node's pair points: ``x_k`` is sample ``2k``, ``y_k`` sample ``2k + 1``."""
ORDER = "search-order"
"""Purpose of the switching priorities: word ``k * n + i`` of stream 0 ranks coordinate
``i`` of pair ``k``."""
LEAF = "search-leaf"
"""Purpose of a leaf's fresh points, drawn only when reused points are too few."""
FLIP = "search-flip"
"""Names the flip queries in oracle error notes; they use no derived bits of their own."""
PROBE = "search-probe"
"""Purpose of the probe variables: word ``j`` of stream 0 picks pair ``j``'s probe
(:func:`probe_variables`)."""

# Working memory of one node's binary searches: pairs are searched in groups
# small enough that their switching orders and hybrids fit (about 25 bytes
# per variable per pair while the orders are sorted, 3 after).
_SEARCH_BYTES = 1 << 24
_ALL_ONES = (1 << 64) - 1
# Rows at least this long have their correlation sums added block by block.
_LONG_ROWS = 4096


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

    def where(self, path: Path) -> Labelled:
        """The points that agree with every ``(variable, bit)`` of ``path``, in their order."""
        keep = np.ones(len(self), dtype=bool)
        for variable, bit in path:
            word, offset = divmod(variable, 64)
            is_minus = (self.words[:, word] >> np.uint64(offset)) & np.uint64(1) == 1
            keep &= is_minus if bit == -1 else ~is_minus
        return Labelled(self.words[keep], self.values[keep])


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
    ``own`` holds the node's ``2 * pairs`` labelled points for reuse,
    ``correlations`` the sums ``sum f(u) u_i`` over its inherited and own
    points and ``probes`` the probe edges (0 unless it reached a cap with
    minority points). ``guesswork`` is true for an uncertified influence
    split whose leader does not beat the probes (:func:`is_guesswork`).
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
    correlations: np.ndarray
    probes: int = 0
    guesswork: bool = False


# -- rules: pure functions of a node's counts (docs/randomness.md §6) -----------------

def _ranked(scores: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Free variables by descending score, ties to the lowest index."""
    indices = np.flatnonzero(free)
    # A stable sort on -scores keeps ascending index order among equal scores.
    return indices[np.argsort(-scores[indices], kind="stable")]


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


def candidates(votes: np.ndarray, correlations: np.ndarray,
               free: np.ndarray) -> list[int] | list[list[int]]:
    """Up to :data:`SEARCH_CANDIDATES` vote leaders with a vote, then the correlation leader.

    Vote leaders in order of most votes, ties to the lowest index; the
    correlation leader (largest ``|sum f x_i|``, ties to the lowest index)
    is added last unless it is already one of them. Only free variables
    count. Given 2-D arrays (one row per node), one list per row.
    """
    if votes.ndim == 1:
        return candidates(votes[None], correlations[None], free[None])[0]
    # Variables on the path rank below every free one and never have a vote.
    masked = np.where(free, votes, -1)
    leaders = np.argsort(-masked, axis=1, kind="stable")[:, :SEARCH_CANDIDATES]
    counts = np.take_along_axis(masked, leaders, axis=1)
    correlation_leaders = np.where(free, np.abs(correlations), -1).argmax(axis=1)
    chosen = []
    for row, leader, count in zip(correlation_leaders.tolist(), leaders.tolist(),
                                  counts.tolist()):
        members = [v for v, c in zip(leader, count) if c > 0]
        chosen.append(members if row in members else members + [row])
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


def schedule(first_round: int, cap: int) -> tuple[list[int], int]:
    """The cumulative pair counts a node may reach, and how many of them are quiet.

    The quiet rounds are :func:`lca.estimate.anytime_rounds` ``(first_round,
    cap)``; a noisy node goes on for :data:`NOISY_ROUNDS` more, each doubling
    its pairs (``[16, 32, 64, 128]`` and 3 for ``first_round = 16, cap =
    64``).
    """
    quiet = anytime_rounds(first_round, cap)
    return quiet + [cap << r for r in range(1, NOISY_ROUNDS + 1)], len(quiet)


def certifying_points(rounds: int, eps: float, delta: float) -> int:
    """The fewest own points whose unanimity certifies a node ``eps``-close to constant.

    ``ceil(ln_upper(2 R / delta) / eps)``, in exact rationals (``eps`` and
    ``delta`` at their binary values). ``P`` independent uniform points of
    the subcube are all equal to a value of share below ``1 - eps`` with
    probability below ``(1 - eps)^P <= e^(-eps P)``; for either value (2)
    and any of ``R`` rounds that is at most ``delta`` once ``P`` reaches
    this count (docs/theory.md §7).
    """
    bound = ln_upper_exact(Fraction(2 * rounds) / Fraction(delta)) / Fraction(eps)
    return math.ceil(bound)


@dataclass(frozen=True)
class _Terms:
    """The thresholds of a node's tests (docs/randomness.md §6)."""

    zero_points: int    # certifying_points(R, eps, delta)
    lead: float         # Ll = ln_upper(R (K + 1) K / delta)
    votes: float        # L1 = ln_upper(1 / delta)
    correlation: float  # Ls = ln_upper(2 F / delta)
    guesswork: float    # Lg = ln_upper((K + 1) / delta), reporting only

    @classmethod
    @functools.lru_cache(maxsize=1024)
    def of(cls, rounds: int, free: int, eps: float, delta: float) -> _Terms:
        """The terms for ``R`` rounds and ``F`` free variables (cached: exact rational
        logarithms cost about 0.3 ms, and every node at one depth shares them)."""
        exact = Fraction(delta)
        most = SEARCH_CANDIDATES + 1
        return cls(certifying_points(rounds, eps, delta),
                   ln_upper(Fraction(rounds * most * (most - 1)) / exact),
                   ln_upper(1 / exact), ln_upper(Fraction(2 * free) / exact),
                   ln_upper(Fraction(most) / exact))


@dataclass
class _Round:
    """A node's counts after a round (cumulative over its rounds)."""

    pairs: int
    disagreements: int
    votes: np.ndarray          # (n,) int64
    correlations: np.ndarray   # (n,) int64, inherited and own points
    labelled: int              # inherited and own points
    own_total: int             # sum of the own points' values
    probes: int = 0            # probe edges over the node's pairs

    @property
    def points(self) -> int:
        return 2 * self.pairs

    @property
    def minority(self) -> int:
        return int(_minority(self.points, self.own_total))


def _minority(points: Any, total: Any) -> Any:
    """How many of ``points`` values ``±1`` summing to ``total`` are in the minority
    (ints or arrays)."""
    plus = (points + total) // 2
    return np.minimum(plus, points - plus)


def round_rule(minority: np.ndarray, points: int,
               zero_points: int) -> tuple[np.ndarray, np.ndarray]:
    """Rules 1 and 2 after a round, for nodes with ``points`` own points each.

    Returns two masks over ``minority`` (each node's minority count):
    *constant* (rule 1: the own points are unanimous and at least
    ``zero_points``, :func:`certifying_points`: a certified early leaf) and
    *unanimous* (rule 2: ``minority == 0`` and not constant; nothing to flip
    this round). The other nodes measure their candidates.
    """
    unanimous = np.asarray(minority) == 0
    constant = unanimous & (points >= zero_points)
    return constant, unanimous & ~constant


def is_guesswork(leader: np.ndarray, probe: np.ndarray, log_term: float) -> bool:
    """Is a split no better than a variable drawn at random? (reporting only)

    ``leader`` and ``probe`` are the flip edges of the influence leader and
    of the probes on the same pairs. ``a`` counts the pairs with an edge on
    the leader only, ``b`` on the probe only: if the leader's flips change
    ``f`` no more often than a random free variable's, each of those pairs
    is a fair coin, and :func:`lca.estimate.lead_is_certified` (``a - b`` in
    ``a + b`` trials, level ``log_term``) fails. The split is then close to
    guesswork: it separates the points no better than a random variable
    would (docs/theory.md §7).
    """
    a = int((leader & ~probe).sum())
    b = int((probe & ~leader).sum())
    return not lead_is_certified(a - b, a + b, log_term)


def noisy_rounds(probe_edges: int, leader_edges: int, pairs: int) -> int:
    """Rule 7: how many rounds past the pair cap a node draws (a heuristic, docs/theory.md §7).

    A probe flips a free variable drawn independently of ``f``. Under
    independent label noise ``eta`` (and nothing else) its edge rate is
    ``r = 2 eta (1 - eta)``, the offset every candidate's flip-edge rate
    carries, and noise shrinks the gaps between candidates' rates by ``(1 -
    2 eta)^2 = 1 - 2 r``: the expected lead between two candidates over
    ``q`` pairs is ``1 - 2 r`` times its noise-free value, and ``1 / (1 - 2
    r)`` times the pairs restore it. On a noise-free ``f_path`` the probe
    rate is the mean influence of a free variable, nearly 0 when few
    variables matter. With ``r`` estimated as ``probe_edges / pairs``: 0
    rounds unless the probes found at least half as many edges as the
    influence leader (noise, not the candidates, makes most of its edges);
    else the most ``k <=`` :data:`NOISY_ROUNDS` with ``2**k <= 1 / (1 - 2
    r)``, each doubling the pairs (exact integers: ``2**k (pairs - 2
    probe_edges) <= pairs``).
    """
    if probe_edges == 0 or 2 * probe_edges < leader_edges:
        return 0
    gap = max(pairs - 2 * probe_edges, 0)
    rounds = 0
    while rounds < NOISY_ROUNDS and (gap << (rounds + 1)) <= pairs:
        rounds += 1
    return rounds


def noise_like(probe_edges: int, minority: int) -> bool:
    """Could label noise explain the node's minority points? (a heuristic, rule 4)

    If ``f_path`` is a constant ``g`` under label noise ``eta``, the
    minority count of ``2q`` own points is about ``2 q eta`` and the probe
    edges of ``q`` first points about ``2 q eta (1 - eta)``; if the minority
    points are a region of ``f_path`` fixed by ``k`` of ``F`` free
    variables, the probes find about ``k / F`` of that. The test asks for
    at least half of the noise value: ``2 * probe_edges >= minority``.
    """
    return 2 * probe_edges >= minority


def cap_rule(state: _Round, free: np.ndarray, eps: float, terms: _Terms) -> str:
    """At the node's last round: ``"no structure"`` (rule 4), ``"correlation"`` (5) or
    ``"influence"`` (6)."""
    vote_leader = _ranked(state.votes, free)[0]
    correlation_leader = _ranked(np.abs(state.correlations), free)[0]
    structure = (
        has_structure(int(state.votes[vote_leader]), state.disagreements, int(free.sum()),
                      terms.votes)
        or correlated(int(state.correlations[correlation_leader]), state.labelled,
                      terms.correlation))
    if (not structure and state.minority <= eps * state.points
            and noise_like(state.probes, state.minority)):
        return "no structure"
    if state.minority == 0:
        return "correlation"
    return "influence"


def probe_variables(seed: int, path: Path, free: np.ndarray, start: int,
                    stop: int) -> np.ndarray:
    """The probe variables of pairs ``start..stop-1`` of the node ``path``.

    Pair ``j``'s probe is free variable number ``w_j mod F`` in increasing
    order, ``w_j`` word ``j`` of stream 0 of purpose :data:`PROBE` and ``F``
    the number of free variables (``free`` is the node's mask).
    """
    words = derive.raw_words(derive.node_key(seed, PROBE, path), 0, start, stop - start)
    indices = np.flatnonzero(free)
    return indices[(words % np.uint64(indices.size)).astype(np.int64)]


# -- sums over labelled points ------------------------------------------------------

def correlations(labelled: Labelled, n: int) -> np.ndarray:
    """``sum_k f(x_k) x_k,i`` for every variable ``i``, as ``int64`` (exact).

    One block of :func:`_grouped_correlations`.
    """
    counts = np.array([len(labelled)], dtype=np.int64)
    return _grouped_correlations(labelled.words, labelled.values, counts, n)[0]


def _grouped_correlations(words: np.ndarray, values: np.ndarray, counts: np.ndarray,
                          n: int, owners: np.ndarray | None = None,
                          out: np.ndarray | None = None) -> np.ndarray:
    """:func:`correlations` of consecutive blocks of ``counts[b]`` rows, one row per block.

    ``words (sum(counts), W)`` and ``values`` hold the blocks one after the
    other; the result is ``(len(counts), n)`` ``int64`` (exact). With
    ``owners`` (non-decreasing) block ``b``'s sums are added to row
    ``owners[b]`` of ``out`` instead (several blocks may share a row). Rows are unpacked a bounded
    number at a time (3 bytes per variable per row).
    """
    if owners is None:
        owners = np.arange(counts.size)
        out = np.zeros((counts.size, n), dtype=np.int64)
    assert (np.diff(owners) >= 0).all(), "blocks come in owner order"
    node = np.repeat(owners, counts)
    starts = np.cumsum(counts) - counts
    step = max(1, _SEARCH_BYTES // (3 * n))
    for lo in range(0, words.shape[0], step):
        hi = min(lo + step, words.shape[0])
        # Blocks that meet this slice, and where each starts and ends in it.
        present = np.flatnonzero((starts < hi) & (starts + counts > lo) & (counts > 0))
        firsts = np.maximum(starts[present], lo) - lo
        lasts = np.minimum(starts[present] + counts[present], hi) - lo
        bits = derive.unpack_bits(words[lo:hi], n)
        if n >= _LONG_ROWS:
            # Long rows: add row vectors, the +1 rows of a block minus its -1 rows.
            sums = np.empty((present.size, n), dtype=np.int64)
            for at, (first, last) in enumerate(zip(firsts, lasts)):
                block, signs = bits[first:last], values[lo + first:lo + last]
                sums[at] = block[signs > 0].sum(axis=0, dtype=np.int32)
                sums[at] -= block[signs < 0].sum(axis=0, dtype=np.int32)
        else:
            # Short rows, many blocks: one reduction over all of them, summed in
            # int32 (a slice holds fewer than 2**31 rows), widened after.
            signed = bits.view(np.int8) * values[lo:hi, None]
            sums = np.add.reduceat(signed, firsts, axis=0, dtype=np.int32).astype(np.int64)
        sums *= -2
        # Blocks are in owner order: merge the blocks of one owner, then add.
        rows = owners[present]
        first = np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]]))
        if first.size < rows.size:
            sums, rows = np.add.reduceat(sums, first, axis=0), rows[first]
        out[rows] += sums
    totals = np.zeros(out.shape[0], dtype=np.int64)
    np.add.at(totals, node, values)
    out += totals[:, None]
    return out


# -- steps: the rows a group of nodes asks for ------------------------------------------

def _points_request(purpose: str, words: np.ndarray, n: int, paths: Any) -> Request:
    return Request(purpose, words.shape[0],
                   lambda lo, hi: derive.unpack_points(words[lo:hi], n), paths)


def _fresh_words(n: int, seed: int, path: Path, count: int) -> np.ndarray:
    """Packed fresh leaf samples ``0..count-1`` (purpose :data:`LEAF`)."""
    return derive.uniform_points(derive.node_key(seed, LEAF, path), n, 0, max(0, count), path)


def pair_points(oracle: Oracle, seed: int, path: Path, start: int, stop: int) -> Labelled:
    """Pairs ``start..stop-1`` of the node, as rows ``x_start, y_start, x_start+1, ...``."""
    words = derive.uniform_points(derive.node_key(seed, PAIRS, path), oracle.n, 2 * start,
                                  2 * stop, path)
    return Labelled(words, _ask(oracle, seed, PAIRS, words, path))


def leaf_points(oracle: Oracle, seed: int, path: Path, count: int) -> Labelled:
    """Fresh leaf samples ``0..count-1`` (purpose :data:`LEAF`), when reuse left too few."""
    words = _fresh_words(oracle.n, seed, path, count)
    return Labelled(words, _ask(oracle, seed, LEAF, words, path))


def _ask(oracle: Oracle, seed: int, purpose: str, words: np.ndarray, path: Path) -> np.ndarray:
    def steps() -> Steps:
        return (yield _points_request(purpose, words, oracle.n, (path,)))
    return drive(steps(), oracle, seed).astype(np.int8, copy=False)


# Priorities of a node's whole round are derived in one call while they fit in
# this many bytes; beyond, one call per run of consecutive searching pairs.
_ROUND_PRIORITY_BYTES = 1 << 20


def _priorities(key: int, n: int, pairs: np.ndarray, first: int, last: int) -> np.ndarray:
    """Switching priorities ``(len(pairs), n)`` of sorted pair indices in ``[first, last)``:
    words ``k n .. k n + n - 1`` of stream 0 for pair ``k``."""
    if (last - first) * n * 8 <= _ROUND_PRIORITY_BYTES:
        block = derive.raw_words(key, 0, first * n, (last - first) * n)
        return block.reshape(last - first, n)[pairs - first]
    out = np.empty((pairs.size, n), dtype=np.uint64)
    breaks = np.flatnonzero(np.diff(pairs) != 1) + 1
    for run in np.split(np.arange(pairs.size), breaks):
        start = int(pairs[run[0]])
        out[run] = derive.raw_words(key, 0, start * n, run.size * n).reshape(run.size, n)
    return out


def _switching_orders(priority: np.ndarray, differing: np.ndarray,
                      n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's differing coordinates in switching order, and how many there are.

    The order is ascending ``(priority, index)`` over the differing
    coordinates only. One C-level sort over all pairs of ``(priority's high
    bits | index + 1)`` keys (the index in the low ``b`` bits, ``2^b > n + 1``,
    padding rows with ``2^64 - 1``); where two keys of a pair share their high
    bits the sort is redone exactly for that pair.
    """
    diff = derive.unpack_bits(differing, n).view(bool)
    lengths = diff.sum(axis=1)
    rows, cols = np.nonzero(diff)
    width = max(1, int(lengths.max(initial=0)))
    low_bits = (n + 1).bit_length()
    low = np.uint64((1 << low_bits) - 1)
    high = np.uint64(_ALL_ONES ^ int(low))
    keys = np.full((diff.shape[0], width), _ALL_ONES, dtype=np.uint64)
    starts = np.cumsum(lengths) - lengths
    position = np.arange(rows.size) - np.repeat(starts, lengths)
    keys[rows, position] = (priority[rows, cols] & high) | (cols.astype(np.uint64) + 1)
    keys.sort(axis=1)
    shared = (keys[:, 1:] & high) == (keys[:, :-1] & high)
    shared &= np.arange(width - 1) < (lengths - 1)[:, None]
    keys &= low
    keys -= np.uint64(1)  # padding becomes low - 1, past every coordinate
    order = keys.astype(np.int32 if n < 1 << 31 else np.int64)
    for row in np.flatnonzero(shared.any(axis=1)):
        coordinates = np.flatnonzero(diff[row])
        exact = coordinates[np.lexsort((coordinates, priority[row, coordinates]))]
        order[row, :exact.size] = exact
    return order, lengths


def _ranks(order: np.ndarray, lengths: np.ndarray, n: int) -> np.ndarray:
    """Each coordinate's place in its pair's switching order (``(m, n)``).

    ``rank[i, order[i, t]] = t`` for ``t < lengths[i]``; coordinates where the
    pair agrees rank ``n`` (never switched). ``int16`` while ``n < 2**15``.
    """
    rank = np.full((lengths.size, n), n, dtype=_rank_dtype(n))
    valid = np.arange(order.shape[1]) < lengths[:, None]
    rows = np.repeat(np.arange(lengths.size), lengths)
    rank[rows, order[valid]] = np.arange(order.shape[1])[np.nonzero(valid)[1]]
    return rank


def _rank_dtype(n: int) -> type:
    return np.int16 if n < 1 << 15 else np.int32 if n < 1 << 31 else np.int64


def _binary_search_steps(order: np.ndarray, lengths: np.ndarray, x: np.ndarray,
                         fx: np.ndarray, n: int, paths: Any) -> Steps:
    """Binary searches of a group of disagreeing pairs, all in lockstep.

    Returns the found coordinate of each pair. The hybrid ``h_mid`` is
    ``x`` negated where a coordinate's rank in the order is below ``mid``
    (``y = -x`` on the differing coordinates): one pass over each row, with
    no per-segment index arrays.
    """
    points = derive.unpack_points(x, n)
    rank = _ranks(order, lengths, n)
    count = lengths.size
    lo = np.zeros(count, dtype=np.int64)
    hi = lengths.astype(np.int64)
    while True:
        active = np.flatnonzero(hi - lo > 1)
        if not active.size:
            break
        mid = (lo[active] + hi[active]) // 2

        def rows(first: int, last: int, active: np.ndarray = active,
                 mid: np.ndarray = mid) -> np.ndarray:
            chosen = active[first:last]
            out = points[chosen]
            np.negative(out, out=out, where=rank[chosen] < mid[first:last, None])
            return out

        same = (yield Request(ORDER, active.size, rows, paths)) == fx[active]
        lo[active[same]] = mid[same]
        hi[active[~same]] = mid[~same]
    return order[np.arange(count), hi - 1].astype(np.int64)


def _search_steps(n: int, keys: list[int], node: np.ndarray, pair: np.ndarray,
                  x: np.ndarray, y: np.ndarray, fx: np.ndarray, round_pairs: tuple[int, int],
                  paths: Any) -> Steps:
    """The sensitive coordinate found for each searching pair.

    Pair ``i`` is pair ``pair[i]`` of node ``node[i]`` (sorted by node, then
    pair), with packed points ``x[i]``, ``y[i]`` and ``fx[i] = f(x[i])``;
    ``keys[b]`` is node ``b``'s :data:`ORDER` key. The hybrid ``h_t`` of a
    pair is ``x`` with the first ``t`` differing coordinates, in order of
    ascending priority (ties to the lower index), switched to ``y``. The
    search keeps ``f(h_lo) = f(x) != f(h_hi)`` from ``lo = 0, hi = L`` and
    queries ``h_mid``, ``mid = (lo + hi) // 2``, until ``hi = lo + 1``; the
    answer is the ``hi``-th coordinate in order. Pairs are searched in
    groups whose points and ranks (``1 + rank bytes`` per variable per pair)
    fit in :data:`_SEARCH_BYTES`, their orders sorted a part at a time.
    """
    found = np.empty(node.size, dtype=np.int64)
    group = max(1, _SEARCH_BYTES // ((1 + np.dtype(_rank_dtype(n)).itemsize) * n))
    part = max(1, _SEARCH_BYTES // (25 * n))
    for lo in range(0, node.size, group):
        members = np.arange(lo, min(lo + group, node.size))
        lengths = np.bitwise_count(x[members] ^ y[members]).sum(axis=1, dtype=np.int64)
        if not lengths.all():
            # x = y with f(x) != f(y): the oracle answered one point with two values.
            at = members[np.argmin(lengths)]
            raise OracleError(
                f"the oracle answered the same point with two different values (pair "
                f"{int(pair[at])} of the node at path {paths[int(node[at])]}): lca needs "
                "a fixed function, the same value every time a point is asked (derive "
                "random labels from the point, as lca.targets.with_label_noise does)")
        order = np.empty((members.size, int(lengths.max())),
                         dtype=np.int32 if n < 1 << 31 else np.int64)
        for first in range(0, members.size, part):
            chunk = members[first:first + part]
            # Pairs come sorted by node: one run of pairs per node.
            owners, starts = np.unique(node[chunk], return_index=True)
            priority = np.concatenate([
                _priorities(keys[b], n, pairs, *round_pairs)
                for b, pairs in zip(owners.tolist(), np.split(pair[chunk], starts[1:]))])
            sorted_part, _ = _switching_orders(priority, x[chunk] ^ y[chunk], n)
            order[first:first + chunk.size, :sorted_part.shape[1]] = sorted_part
        found[members] = yield from _binary_search_steps(order, lengths, x[members],
                                                         fx[members], n, paths)
    return found


def _flip_steps(n: int, firsts: np.ndarray, node: np.ndarray, pair: np.ndarray,
                column: np.ndarray, paths: Any) -> Steps:
    """``f(x)`` with one coordinate negated, for each flip ``i``: pair ``pair[i]`` of
    node ``node[i]`` (first points ``firsts (B, q, W)``), coordinate ``column[i]``."""

    def rows(lo: int, hi: int) -> np.ndarray:
        points = derive.unpack_points(firsts[node[lo:hi], pair[lo:hi]], n)
        at = np.arange(hi - lo)
        points[at, column[lo:hi]] = -points[at, column[lo:hi]]
        return points

    return (yield Request(FLIP, node.size, rows, paths))


@dataclass
class _Group:
    """Counts of a group of nodes decided together, one row per node."""

    free: np.ndarray           # (B, n) bool
    votes: np.ndarray          # (B, n) int64
    correlations: np.ndarray   # (B, n) int64, inherited and own points
    labelled: np.ndarray       # (B,) inherited and own points
    own_total: np.ndarray      # (B,) sum of the own points' values
    disagreements: np.ndarray  # (B,)
    probes: list[np.ndarray]   # per node: the probe edges of its pairs, in order
    words: np.ndarray          # (B, 2 Q, W) own points
    values: np.ndarray         # (B, 2 Q) their values

    def state(self, b: int, pairs: int) -> _Round:
        return _Round(pairs, int(self.disagreements[b]), self.votes[b], self.correlations[b],
                      int(self.labelled[b]), int(self.own_total[b]), int(self.probes[b].sum()))

    def minority(self, rows: np.ndarray, pairs: int) -> np.ndarray:
        return _minority(2 * pairs, self.own_total[rows])


def _flip_plan(members: dict[int, list[int]], edges: list[dict[int, np.ndarray]],
               pairs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[int, int, int]]]:
    """The flips a round asks for: each node's candidates on the pairs not yet measured.

    Returns ``(node, pair, column)`` per flip, and ``(node, candidate, first
    pair)`` per block of them, in that order.
    """
    blocks = [(b, c, edges[b][c].size if c in edges[b] else 0)
              for b, chosen in members.items() for c in chosen]
    lengths = np.array([pairs - start for _, _, start in blocks])
    node = np.repeat([b for b, _, _ in blocks], lengths)
    column = np.repeat([c for _, c, _ in blocks], lengths)
    firsts = np.repeat([start for _, _, start in blocks], lengths)
    pair = firsts + np.arange(node.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return node, pair, column, blocks


def _nodes_steps(n: int, seed: int, paths: list[Path], params: Any,
                 inherited_counts: np.ndarray, inherited_correlations: np.ndarray) -> Steps:
    """Decide the nodes ``paths`` of ``T_seed`` together (module docstring).

    Every node follows the rules of :func:`round_rule`, :func:`noisy_rounds` and
    :func:`cap_rule` on its own counts; the group shares derivation,
    searches and oracle calls. Node ``b``'s ancestors' labelled points in
    its subcube (its inherited points) number ``inherited_counts[b]`` and
    have the :func:`correlations` ``inherited_correlations[b]``: they count
    in the correlation test, not in the certified constant test. Returns one
    :class:`SearchNode` per path.
    """
    size_b = len(paths)
    width = derive.words_per_point(n)
    free = np.ones((size_b, n), dtype=bool)
    for b, path in enumerate(paths):
        free[b, [var for var, _ in path]] = False
    rounds, quiet = schedule(params.first_round, params.score_samples)
    free_counts = free.sum(axis=1).tolist()
    terms = {count: _Terms.of(len(rounds), count, params.eps, params.delta)
             for count in set(free_counts)}
    zero_points = terms[free_counts[0]].zero_points  # R, eps, delta set it: the same for all
    group = _Group(free, np.zeros((size_b, n), dtype=np.int64),
                   inherited_correlations.astype(np.int64),
                   inherited_counts.astype(np.int64), np.zeros(size_b, dtype=np.int64),
                   np.zeros(size_b, dtype=np.int64), [np.zeros(0, dtype=bool)] * size_b,
                   # Room for every round's points; a node reads only what it drew
                   # (pages past a quiet node's points are never touched).
                   np.empty((size_b, 2 * rounds[-1], width), dtype=np.uint64),
                   np.empty((size_b, 2 * rounds[-1]), dtype=np.int8))
    order_keys = [derive.node_key(seed, ORDER, path) for path in paths]
    edges: list[dict[int, np.ndarray]] = [{} for _ in paths]
    leads: list[tuple[int, int | None, int, int]] = [(0, None, 0, 0)] * size_b
    results: list[SearchNode | None] = [None] * size_b
    active = np.arange(size_b)
    last = np.full(size_b, quiet)  # each node's last round (rule 7 may raise it)
    done = 0

    def finish(b: int, variable: int | None, runner: int | None, rule: str, margin: int,
               certified: bool, guesswork: bool = False) -> None:
        results[b] = SearchNode(variable, runner, rule, margin, done,
                                int(group.disagreements[b]), group.votes[b], certified,
                                Labelled(group.words[b, :2 * done], group.values[b, :2 * done]),
                                group.correlations[b], int(group.probes[b].sum()), guesswork)

    def finish_at_cap(b: int) -> None:
        rule = cap_rule(group.state(b, done), free[b], params.eps, terms[free_counts[b]])
        if rule == "no structure":
            finish(b, None, None, rule, 0, False)
        elif rule == "correlation":
            # Unanimous to the cap, yet the inherited points correlate: nothing was flipped.
            finish(b, int(_ranked(np.abs(group.correlations[b]), free[b])[0]), None, rule, 0,
                   False)
        else:
            leader, runner, a, lead_b = leads[b]
            finish(b, leader, runner, rule, a - lead_b, False, is_guesswork(
                edges[b][leader], group.probes[b], terms[free_counts[b]].guesswork))

    for index, size in enumerate(rounds):
        count = size - done
        names = [paths[b] for b in active]
        words = derive.node_points(seed, PAIRS, names, n, 2 * done, 2 * size)
        values = (yield _points_request(PAIRS, words.reshape(-1, width), n, names)).reshape(
            active.size, 2 * count)
        group.words[active, 2 * done:2 * size] = words
        group.values[active, 2 * done:2 * size] = values
        firsts, seconds = values[:, 0::2], values[:, 1::2]
        disagree = firsts != seconds
        node, pair = np.nonzero(disagree)
        if node.size:
            found = yield from _search_steps(
                n, [order_keys[b] for b in active], node, done + pair, words[node, 2 * pair],
                words[node, 2 * pair + 1], firsts[node, pair], (done, size), names)
            np.add.at(group.votes, (active[node], found), 1)
        group.disagreements[active] += disagree.sum(axis=1)
        group.correlations[active] += _grouped_correlations(
            words.reshape(-1, width), values.reshape(-1), np.full(active.size, 2 * count), n)
        group.labelled[active] += 2 * count
        group.own_total[active] += values.sum(axis=1, dtype=np.int64)
        done = size
        constant, unanimous = round_rule(group.minority(active, done), 2 * done, zero_points)
        for b in active[constant]:
            finish(b, None, None, "constant", 0, True)
        # Unanimous nodes have no disagreement to compare a flip with: they wait.
        flipping = active[~constant & ~unanimous]
        if flipping.size:
            chosen = candidates(group.votes[flipping], group.correlations[flipping],
                                free[flipping])
            members = dict(zip(flipping.tolist(), chosen))
            node, pair, column, blocks = _flip_plan(members, edges, done)
            flipped = yield from _flip_steps(n, group.words[:, 0:2 * done:2], node, pair, column,
                                             [paths[b] for b in flipping])
            at = 0
            for b, c, start in blocks:
                new = flipped[at:at + done - start] != group.values[b, 2 * start:2 * done:2]
                at += new.size
                edges[b][c] = np.concatenate([edges[b][c], new]) if c in edges[b] else new
            for b in flipping.tolist():
                leader, runner, a, lead_b = leads[b] = influence_lead(members[b], edges[b])
                if lead_is_certified(a - lead_b, a + lead_b, terms[free_counts[b]].lead):
                    finish(b, leader, runner, "influence", a - lead_b, True)
        active = np.array([b for b in active.tolist() if results[b] is None], dtype=np.int64)
        if not active.size:
            break
        # At a node's last round (its cap): probe the pairs not yet probed of every
        # node with minority points (rules 4 and 7 read them).
        capped = active[last[active] == index + 1]
        probing = capped[group.minority(capped, done) > 0]
        if probing.size:
            starts = np.array([group.probes[b].size for b in probing.tolist()])
            node = np.repeat(probing, done - starts)
            pair = np.concatenate([np.arange(start, done) for start in starts.tolist()])
            column = np.concatenate([probe_variables(seed, paths[b], free[b], start, done)
                                     for b, start in zip(probing.tolist(), starts.tolist())])
            flipped = yield from _flip_steps(n, group.words[:, 0:2 * done:2], node, pair,
                                             column, [paths[b] for b in probing])
            new = flipped != group.values[node, 2 * pair]
            for b, row in zip(probing.tolist(), np.split(new, np.cumsum(done - starts)[:-1])):
                group.probes[b] = np.concatenate([group.probes[b], row])
        if index + 1 == quiet:
            for b in probing.tolist():
                last[b] += noisy_rounds(int(group.probes[b].sum()),
                                        int(edges[b][leads[b][0]].sum()), done)
        for b in capped.tolist():
            if last[b] == index + 1:
                finish_at_cap(b)
        active = np.array([b for b in active.tolist() if results[b] is None], dtype=np.int64)
        if not active.size:
            break
    return results


def search_edges(oracle: Oracle, seed: int, path: Path, first_pair: int, pairs: Labelled,
                 searching: np.ndarray) -> np.ndarray:
    """The found coordinate of each searching pair of one node (its search run alone)."""
    n = oracle.n
    steps = _search_steps(n, [derive.node_key(seed, ORDER, path)],
                          np.zeros(searching.size, dtype=np.int64), first_pair + searching,
                          pairs.words[2 * searching], pairs.words[2 * searching + 1],
                          pairs.values[2 * searching],
                          (first_pair, first_pair + pairs.values.size // 2), (path,))
    return drive(steps, oracle, seed)


def search_node(oracle: Oracle, seed: int, path: Path, params: Any,
                inherited: Labelled) -> SearchNode:
    """Decide the node ``path`` of ``T_seed`` with the search estimator (module docstring).

    ``inherited`` are the ancestors' labelled points in this subcube: they
    count in the correlation test, not in the certified constant test.
    """
    steps = _nodes_steps(oracle.n, seed, [path], params, np.array([len(inherited)]),
                         correlations(inherited, oracle.n)[None])
    return drive(steps, oracle, seed)[0]


# -- the estimator ----------------------------------------------------------------------

# A node holds its points (two per pair) in one array, each coordinate as up
# to 8 bytes while its correlations are summed.
_BYTES_PER_COORDINATE = 16


def max_samples(n: int) -> int:
    """Most pairs (and leaf points) per node for ``n`` variables.

    A node holds its points, two per pair and up to ``2**NOISY_ROUNDS`` times
    the pair cap when it is noisy, so they must fit one numpy array on this
    machine (:data:`lca._validate.MAX_ARRAY_BYTES`, ``2**63 - 1`` bytes on 64 bits).
    """
    return MAX_ARRAY_BYTES // (_BYTES_PER_COORDINATE * n << NOISY_ROUNDS)


@dataclass(frozen=True)
class _Pool:
    """A node's labelled points as row indices: ``rows[k]`` selects own points of
    its ancestor (or itself) at depth ``k``. Holds no points, only where they are."""

    rows: tuple[np.ndarray, ...]

    @property
    def nbytes(self) -> int:
        return sum(rows.nbytes for rows in self.rows)


_NO_ROWS = np.zeros(0, dtype=np.int64)
"""An ancestor's rows in a pool when none of its own points lie in the subcube."""


class _Lineage:
    """The ancestors' own points of a group of nodes, one depth at a time.

    At depth ``j`` each distinct ancestor of the nodes (siblings share all of
    theirs) is fetched once (:meth:`SearchEstimator._own`), so an operation on
    every node's rows of every ancestor costs a few numpy calls per depth,
    whatever the number of nodes. Rows are given per node as a tuple with one
    index array per depth.
    """

    def __init__(self, estimator: SearchEstimator, contexts: list[NodeContext]) -> None:
        self.estimator = estimator
        self.contexts = contexts

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
                distinct.append(self.estimator._own(self.contexts[b], j))
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

    def on_branch(self, rows: list[tuple[np.ndarray, ...]], steps: list[tuple[int, int]],
                  nodes: list[int] | None = None) -> list[tuple[np.ndarray, ...]]:
        """The rows of each ``rows[i]`` whose coordinate ``steps[i][0]`` is ``steps[i][1]``."""
        nodes = list(range(len(rows))) if nodes is None else nodes
        out = [[_NO_ROWS] * len(r) for r in rows]
        variables = np.array([variable for variable, _ in steps], dtype=np.int64)
        minus = np.array([bit == -1 for _, bit in steps])
        for j, at, owner, flat, start, words, _ in self._depths(rows, nodes):
            variable = variables[owner]
            is_minus = (words[flat, variable >> 6] >> (variable & 63).astype(np.uint64)) \
                & np.uint64(1) == 1
            keep = is_minus == minus[owner]
            if len(at) == 1:
                out[at[0]][j] = (flat - start)[keep]
                continue
            kept = np.bincount(owner[keep], minlength=len(rows))[at]
            for i, piece in zip(at, np.split((flat - start)[keep], np.cumsum(kept)[:-1])):
                out[i][j] = piece
        return [tuple(pieces) for pieces in out]

    def totals(self, rows: list[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, np.ndarray]:
        """How many points each ``rows[i]`` selects, and the sum of their values."""
        counts = np.array([sum(r.size for r in node) for node in rows], dtype=np.int64)
        totals = np.zeros(len(rows), dtype=np.int64)
        for _, _, owner, flat, _, _, values in self._depths(rows, list(range(len(rows))),
                                                             with_words=False):
            np.add.at(totals, owner, values[flat])
        return counts, totals

    def sums(self, rows: list[tuple[np.ndarray, ...]], nodes: list[int]) -> np.ndarray:
        """:func:`correlations` of the points each ``rows[i]`` selects: ``(len(rows), n)``.

        The selected points of every depth are gathered and summed together, a
        bounded number of rows at a time (one sum for a node's whole lineage).
        """
        n = self.contexts[0].n
        out = np.zeros((len(rows), n), dtype=np.int64)
        limit = max(1, _SEARCH_BYTES // (8 * derive.words_per_point(n)))
        pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        held = 0

        def flush() -> None:
            owners = np.concatenate([owner for owner, _, _ in pending])
            order = np.argsort(owners, kind="stable")
            present, counts = np.unique(owners, return_counts=True)
            _grouped_correlations(np.concatenate([words for _, words, _ in pending])[order],
                                  np.concatenate([values for _, _, values in pending])[order],
                                  counts, n, present, out)
            pending.clear()

        for _, _, owner, flat, _, words, values in self._depths(rows, nodes):
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


class SearchEstimator(Estimator):
    """``Params.estimator = "search"``: the efficient mode (module docstring).

    A node keeps its own points' values for its descendants (the kept
    values). Everything else a descendant needs is re-derivable and lives in
    the reconstructor's memo, so evicting it costs work, never a query or an
    answer: a node's own points (re-derived from their stream), its *pool*
    (its inherited points and its own, as row indices into its ancestors'
    own points; a child's inherited points are its parent's pool on its
    branch) and the correlation sums over a child's inherited points, handed
    down when its parent splits.
    """

    name = "search"
    reads_lineage = True

    def check_samples(self, owner: str, name: str, value: Any, n: int) -> int:
        """An int in ``[1, max_samples(n)]``: a node's points must fit one array."""
        try:
            return check_int(owner, name, value, 1, max_samples(n))
        except ValueError as error:
            raise ValueError(
                f"{error} For n={n} the search estimator holds a node's points (two per "
                f"pair, up to {1 << NOISY_ROUNDS} times the pair cap at a noisy node, n "
                "coordinates of up to 8 bytes each) in one array, and this "
                f"machine's largest array is {MAX_ARRAY_BYTES:,} bytes.") from None

    def validate(self, params: Any) -> None:
        if params.adaptive or None in (params.eps, params.delta):
            raise ValueError("Params with estimator='search' need 'eps' and 'delta' (the "
                             "constant-leaf threshold and per-node confidence) and "
                             f"adaptive=False. Got eps={params.eps!r}, "
                             f"delta={params.delta!r}, adaptive={params.adaptive!r}.")

    # -- what descendants read: the lineage and the memo --

    @staticmethod
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

    def _pool(self, context: NodeContext, k: int) -> _Pool:
        """Pool of the decided ancestor ``path[:k]``: inherited rows, then all its own."""
        key = ("pool", context.seed, context.path[:k])
        pool = context.memo.get(key)
        if pool is None:
            inherited = () if k == 0 else self._branch(
                context, self._pool(context, k - 1), context.path[k - 1])
            pool = _Pool(inherited + (np.arange(context.lineage(k).size),))
            context.memo.put(key, pool)
        return pool

    def _branch(self, context: NodeContext, pool: _Pool,
                step: tuple[int, int]) -> tuple[np.ndarray, ...]:
        """The rows of an ancestor's ``pool`` on the branch ``step`` of its split."""
        return _Lineage(self, [context]).on_branch([pool.rows], [step])[0]

    def _inherited(self, lineage: _Lineage) -> list[tuple[np.ndarray, ...]]:
        """Each node's inherited points: rows of each ancestor's own points."""
        contexts = lineage.contexts
        pools = [self._pool(c, len(c.path) - 1).rows if c.path else () for c in contexts]
        return lineage.on_branch(pools, [c.path[-1] if c.path else (0, 1) for c in contexts])

    # -- what the reconstructor runs --

    def nodes(self, contexts: list[NodeContext]) -> Steps:
        first = contexts[0]
        n, seed, params, memo = first.n, first.seed, first.params, first.memo
        lineage = _Lineage(self, contexts)
        inherited = self._inherited(lineage)
        counts, totals = lineage.totals(inherited)
        handed = [memo.get(("correlations", seed, c.path)) for c in contexts]
        missing = [b for b, sums in enumerate(handed) if sums is None]
        sums = np.empty((len(contexts), n), dtype=np.int64)
        sums[missing] = lineage.sums([inherited[b] for b in missing], missing)
        for b, handed_sums in enumerate(handed):
            if handed_sums is not None:
                sums[b] = handed_sums
        nodes = yield from _nodes_steps(n, seed, [c.path for c in contexts], params, counts,
                                        sums)
        del sums
        results: list[Any] = [None] * len(contexts)
        early, split = [], []
        for b, (context, node) in enumerate(zip(contexts, nodes)):
            if node.variable is None:
                early.append(b)
                continue
            split.append(b)
            memo.put(("own", seed, context.path), node.own.words.copy())
            memo.put(("pool", seed, context.path),
                     _Pool(inherited[b] + (np.arange(len(node.own)),)))
            results[b] = (NodeDecision(node.variable, node.pairs, node.disagreements, 0,
                                       node.certified, node.runner_up, node.margin,
                                       not node.certified, int(node.votes[node.variable]),
                                       node.rule, node.guesswork), node.own.values.copy())
        self._hand_down(lineage, inherited, nodes, split)
        # A certified constant leaf is labelled from its own points alone: they are
        # unanimous, and the certificate is about them (docs/theory.md §7).
        labels = yield from self._labels(
            [contexts[b] for b in early],
            [(len(nodes[b].own), nodes[b].own.total) if nodes[b].certified else
             (int(counts[b]) + len(nodes[b].own), int(totals[b]) + nodes[b].own.total)
             for b in early], [nodes[b].certified for b in early])
        for b, leaf in zip(early, labels):
            results[b] = (leaf, None)
        return results

    @staticmethod
    def _hand_down(lineage: _Lineage, inherited: list[tuple[np.ndarray, ...]],
                   nodes: list[SearchNode], split: list[int]) -> None:
        """Give the children of every split node their inherited points' correlations.

        A child's inherited points are its parent's pool on its branch: the
        ``+1`` branch's sums are computed (ancestors' points and the parent's
        own), the ``-1`` branch's are the pool's (already known) minus them.
        """
        if not split:
            return
        contexts = lineage.contexts
        n, seed, memo = contexts[0].n, contexts[0].seed, contexts[0].memo
        steps = [(nodes[b].variable, 1) for b in split]
        plus = lineage.sums(lineage.on_branch([inherited[b] for b in split], steps, split),
                            split)
        own = [nodes[b].own.where((step,)) for b, step in zip(split, steps)]
        plus += _grouped_correlations(np.concatenate([points.words for points in own]),
                                      np.concatenate([points.values for points in own]),
                                      np.array([len(points) for points in own]), n)
        for b, plus_sums in zip(split, plus):
            path, variable = contexts[b].path, nodes[b].variable
            memo.put(("correlations", seed, path + ((variable, 1),)), plus_sums)
            memo.put(("correlations", seed, path + ((variable, -1),)),
                     nodes[b].correlations - plus_sums)

    def leaves(self, contexts: list[NodeContext]) -> Steps:
        lineage = _Lineage(self, contexts)
        counts, totals = lineage.totals(self._inherited(lineage))
        return (yield from self._labels(contexts, list(zip(counts.tolist(), totals.tolist())),
                                        [None] * len(contexts)))

    def _labels(self, contexts: list[NodeContext], reused: list[tuple[int, int]],
                certified: list[bool | None]) -> Steps:
        """Leaf labels from ``(count, total)`` of reused points, each topped up with fresh
        ones to ``leaf_samples`` (certified leaves are not)."""
        if not contexts:
            return []
        n, seed, params = contexts[0].n, contexts[0].seed, contexts[0].params
        fresh = [_fresh_words(n, seed, c.path, 0 if sure else params.leaf_samples - count)
                 for c, (count, _), sure in zip(contexts, reused, certified)]
        words = np.concatenate(fresh)
        values = (yield _points_request(LEAF, words, n, [c.path for c in contexts])) \
            if words.shape[0] else np.zeros(0, dtype=np.int8)
        bounds = np.cumsum([0] + [block.shape[0] for block in fresh])
        labels = []
        for (count, total), first, last, sure in zip(reused, bounds[:-1], bounds[1:],
                                                      certified):
            total += int(values[first:last].sum(dtype=np.int64))
            labels.append(LeafDecision(leaf_label(total), count + int(last - first), total,
                                       sure))
        return labels

    # -- bounds and memory --

    def max_node_queries(self, params: Any) -> int:
        """The most queries one node can spend, a proved worst case (docs/theory.md §7).

        With ``S`` the rounds of :func:`schedule`, ``Q = S[-1]`` the noisy
        cap and ``K = SEARCH_CANDIDATES + 1`` the most candidates: ``2 Q``
        pair points; at most ``ceil(log2 n)`` hybrids for each of the ``Q``
        pairs (a binary search over ``L <= n`` differing coordinates asks
        ``ceil(log2 L)``); one probe flip per pair (``Q``); and in round ``r``
        at most ``K`` candidates, each flipped on at most ``S[r]`` pairs (a
        candidate new to the round from pair 0): ``Q (3 + ceil(log2 n)) + K
        sum(S)``. The point and probe terms are reached by every noisy
        node; the flip term by a noisy node whose candidates are all new in
        every round, and the hybrid term by pairs that all disagree and
        differ in more than ``2**(ceil(log2 n) - 1)`` coordinates, which
        uniform pairs do only by chance. Under pure label noise a node
        spends more than the old statement (``K`` flips per pair of the cap)
        and stays within this one (tests/test_search_rules.py).
        """
        rounds, _ = schedule(params.first_round, params.score_samples)
        searches = (params.n - 1).bit_length()  # ceil(log2 n): at most n differing coordinates
        return rounds[-1] * (3 + searches) + (SEARCH_CANDIDATES + 1) * sum(rounds)

    def max_leaf_queries(self, params: Any) -> int:
        return params.leaf_samples

    def early_leaves(self, params: Any) -> bool:
        return True

    def node_memory(self, params: Any) -> int:
        words = derive.words_per_point(params.n)
        pairs = schedule(params.first_round, params.score_samples)[0][-1]
        # Own points and their values (pages a quiet node leaves untouched are
        # never committed), two correlation vectors, one round's searches.
        return 2 * pairs * (8 * words + 1) + 16 * params.n + min(
            _SEARCH_BYTES, 25 * params.n * pairs // 2)

    def describe(self, params: Any) -> str:
        return "\n".join([
            f"lca parameters ({params.preset} preset: sensitive-coordinate search, "
            "not the paper's estimator)",
            f"  variables n           {params.n}",
            f"  depth cap             {params.depth}"
            + (f"  (paths stop at n = {params.n})" if params.depth > params.n else ""),
            f"  pairs per node        {params.first_round}, doubling up to "
            f"{params.score_samples}, up to {schedule(params.first_round, params.score_samples)[0][-1]} "
            "at a noisy node  (2 queries each, plus about log2 n per disagreeing "
            f"pair; each round flips at most {SEARCH_CANDIDATES + 1} candidates on the "
            "pairs each has not been flipped on, a new candidate from pair 0; one probe "
            "flip per pair at the cap)",
            f"  certified early leaf  {certified_text(params)}",
            f"  uncertified leaf      at the cap: no variable stands out, at most "
            f"{params.eps:.3g} of the node's points disagree, and the probes say noise "
            "could explain them (a heuristic)",
            f"  points per leaf       {params.leaf_samples}  (ancestors' points reused first)",
            f"  queries per answer    at most {params.predicted_queries}  (cold, no cache)",
            "  guarantee             determinism and consistency; accuracy measured, "
            "not proved (docs/theory.md)",
        ])


def certified_text(params: Any) -> str:
    """What the certified constant leaf of :func:`round_rule` certifies, for describe()."""
    rounds, _ = schedule(params.first_round, params.score_samples)
    points = certifying_points(len(rounds), params.eps, params.delta)
    if points > 2 * rounds[-1]:
        return (f"never at these values: certifying needs {points} unanimous own points, "
                f"more than the {2 * rounds[-1]} a node can draw")
    return (f"{points} or more own points unanimous: f there is {params.eps:.3g}-close to "
            f"constant, except with probability {params.delta:.3g} per node")


SEARCH = estimator.register(SearchEstimator())
"""The registered search estimator."""
