"""The search estimator's rules: pure functions of a node's counts, and their constants.

Rules 1 and 2 after every round (:func:`round_rule`), the candidates and
their influence contest (:func:`candidates`, :func:`influence_lead`), rule 7
past the pair cap (:func:`noisy_rounds`), rules 4 to 6 at a node's last
round (:func:`cap_rule`) and the tests they read, the rounds
(:func:`schedule`), the purposes of the derived bits and the probe variables
drawn from them (docs/randomness.md §6). Nothing here asks the oracle.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, cast

import numpy as np

from lca import derive
from lca.derive import Path
from lca.estimate import anytime_rounds, lead_is_certified, ln_upper, ln_upper_exact

SEARCH_CANDIDATES = 2
"""How many vote leaders a node measures the influence of, besides its correlation
leader (chosen by ``scripts/diagnose_split_rules.py``)."""

NOISY_ROUNDS = 1
"""Most rounds a noisy node draws past the pair cap, each doubling its pairs: a noisy
node may draw ``2**NOISY_ROUNDS * score_samples`` pairs (:func:`noisy_rounds`). One:
at label noise 0.2 twice the pairs bring the suite's trees within 0.03 of the peer,
four times cost twice as much again (docs/benchmarks_history.md §6)."""

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
# per variable per pair while the orders are sorted, 3 after). Correlation
# sums unpack and stack rows within the same bound.
SEARCH_BYTES = 1 << 24


def free_leader(scores: np.ndarray, free: np.ndarray) -> int:
    """The free variable of highest score, ties to the lowest index."""
    indices = np.flatnonzero(free)
    return int(indices[np.argmax(scores[indices])])  # argmax: the first of equal maxima


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
    if votes.ndim == 1:  # one row: its list
        return cast(list[int], candidates(votes[None], correlations[None], free[None])[0])
    # Variables on the path rank below every free one and never have a vote.
    masked = np.where(free, votes, -1)
    leaders = np.argsort(-masked, axis=1, kind="stable")[:, :SEARCH_CANDIDATES]
    counts = masked[np.arange(masked.shape[0])[:, None], leaders]
    correlation_leaders = np.where(free, np.abs(correlations), -1).argmax(axis=1)
    chosen = []
    for row, leader, count in zip(correlation_leaders.tolist(), leaders.tolist(),
                                  counts.tolist(), strict=True):
        members = [v for v, c in zip(leader, count, strict=True) if c > 0]
        chosen.append(members if row in members else members + [row])
    return chosen


def influence_lead(members: list[int],
                   edges: dict[int, np.ndarray]) -> tuple[int, int | None, int, int]:
    """Leader, runner-up and the paired contest ``(a, b)`` between them.

    The leader has the most flip edges (ties to the lowest index); ``a``
    counts the points with an edge on the leader but not the runner-up,
    ``b`` the reverse. With one candidate, ``a`` is its edges and ``b = 0``.
    """
    # Edges are bool arrays: count_nonzero counts them with no reduction machinery.
    ranked = sorted(members, key=lambda c: (-np.count_nonzero(edges[c]), c))
    leader = ranked[0]
    if len(ranked) == 1:
        return leader, None, int(np.count_nonzero(edges[leader])), 0
    runner = ranked[1]
    a = int(np.count_nonzero(edges[leader] & ~edges[runner]))
    b = int(np.count_nonzero(edges[runner] & ~edges[leader]))
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
class Terms:
    """The thresholds of a node's tests (docs/randomness.md §6)."""

    zero_points: int    # certifying_points(R, eps, delta)
    lead: float         # Ll = ln_upper(R (K + 1) K / delta)
    votes: float        # L1 = ln_upper(1 / delta)
    correlation: float  # Ls = ln_upper(2 F / delta)
    guesswork: float    # Lg = ln_upper((K + 1) / delta), reporting only

    @classmethod
    def of(cls, rounds: int, free: int, eps: float, delta: float) -> Terms:
        """The terms for ``R`` rounds, ``F`` free variables and the current
        :data:`SEARCH_CANDIDATES`."""
        return _terms(rounds, free, eps, delta, SEARCH_CANDIDATES)


@functools.lru_cache(maxsize=1024)
def _terms(rounds: int, free: int, eps: float, delta: float, candidates: int) -> Terms:
    # Cached: exact rational logarithms cost about 0.3 ms, and every node at one
    # depth shares them. Every input is in the key (a script may change K).
    exact = Fraction(delta)
    most = candidates + 1
    return Terms(certifying_points(rounds, eps, delta),
                 ln_upper(Fraction(rounds * most * (most - 1)) / exact),
                 ln_upper(1 / exact), ln_upper(Fraction(2 * free) / exact),
                 ln_upper(Fraction(most) / exact))


@dataclass
class Round:
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
        return int(minority_count(self.points, self.own_total))


def minority_count(points: Any, total: Any) -> Any:
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
    return rounds_past_cap(probe_edges, leader_edges, pairs, NOISY_ROUNDS)


def rounds_past_cap(probe_edges: int, leader_edges: int, pairs: int, most: int) -> int:
    """:func:`noisy_rounds` with ``most`` for :data:`NOISY_ROUNDS` (plain integers: the
    compiled kernels compile this very function)."""
    if probe_edges == 0 or 2 * probe_edges < leader_edges:
        return 0
    gap = max(pairs - 2 * probe_edges, 0)
    rounds = 0
    while rounds < most and (gap << (rounds + 1)) <= pairs:
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


def cap_rule(state: Round, free: np.ndarray, eps: float, terms: Terms) -> str:
    """At the node's last round: ``"no structure"`` (rule 4), ``"correlation"`` (5) or
    ``"influence"`` (6)."""
    vote_leader = free_leader(state.votes, free)
    correlation_leader = free_leader(np.abs(state.correlations), free)
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

