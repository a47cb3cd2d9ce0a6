"""Score and leaf estimators (Section "Query-efficient simultaneous score estimation").

All samples come from :mod:`lca.derive` keyed by ``(seed, purpose, path)``:
purpose ``"score"`` for the UnbiasedEstimator pairs ``(x, y)`` of a node and
``"leaf"`` for the uniform points of a leaf. Results are deterministic
functions of ``(oracle, seed, path, sample counts, noise threshold)``, and
independent of how samples are chunked, because every statistic is an
integer sum over samples.

The decision at a node needs no floats (DESIGN.md §2): every score shares the
``NS_p`` term, so ``argmax_i Score_i = argmin_i C_i`` where
``C_i = #{k : f(x_k) != f(y_k) and x_{k,i} = y_{k,i}}``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from lca import derive
from lca._validate import check_int, check_real
from lca.derive import Path
from lca.oracle import Oracle
from lca.params import Params, finite

__all__ = [
    "ScoreCounts",
    "score_counts",
    "choose_variable",
    "score_estimates",
    "estimate_scores",
    "unbiased_estimates",
    "samples_for_accuracy",
    "leaf_sum",
    "leaf_label",
    "ln_upper",
    "bernoulli_upper",
    "bernoulli_lower",
    "lead_is_certified",
    "anytime_rounds",
    "AdaptiveNode",
    "AdaptiveLeaf",
    "adaptive_node",
    "adaptive_leaf",
]

# Upper bound on the int8 entries of one oracle batch: bounds memory at large n
# (two 16 MiB batches plus packed words) while keeping batches large enough
# that per-call overhead in the oracle stays small (167 rows at n = 10^5).
_BATCH_ENTRIES = 1 << 24


def chunk_rows(n: int) -> int:
    """Rows per oracle batch for ``n`` variables."""
    return max(1, _BATCH_ENTRIES // n)


def query(oracle: Oracle, points: np.ndarray, seed: int, purpose: str,
          path: Path) -> np.ndarray:
    """``f`` on ``points``; an oracle error gets a note naming the purpose, path and seed."""
    try:
        return oracle(points)
    except Exception as error:
        # Keep the oracle's own exception type and message; add where it happened.
        error.add_note(f"lca: raised while querying {oracle.name!r} for {purpose} "
                       f"samples at node path {path} (seed {seed})")
        raise


@dataclass(frozen=True)
class ScoreCounts:
    """Integer sufficient statistics of ``samples`` UnbiasedEstimator runs.

    Attributes:
        samples: number of ``(x, y)`` pairs (``2 * samples`` queries).
        disagreements: ``D = #{k : f(x_k) != f(y_k)}``.
        agreements: ``C_i = #{k : f(x_k) != f(y_k) and x_{k,i} = y_{k,i}}``
            for every variable, ``int64``.
    """

    samples: int
    disagreements: int
    agreements: np.ndarray


def _score_block(oracle: Oracle, seed: int, key: int, path: Path, start: int, stop: int,
                 threshold: int) -> tuple[int, np.ndarray, np.ndarray]:
    """Disagreements, per-variable flip counts among them, and their flip rows."""
    n = oracle.n
    x = derive.uniform_points(key, n, start, stop, path)
    flips = derive.flip_masks(key, n, start, stop, threshold, path)
    fx = query(oracle, derive.unpack_points(x, n), seed, "score", path)
    fy = query(oracle, derive.unpack_points(x ^ flips, n), seed, "score", path)
    differ = fx != fy
    rows = flips[differ]
    flipped = _unpack_bits(rows, n).sum(axis=0, dtype=np.int64)
    return int(differ.sum()), flipped, rows


def _unpack_bits(rows: np.ndarray, n: int) -> np.ndarray:
    as_bytes = rows.astype("<u8", copy=False).view(np.uint8)
    return np.unpackbits(as_bytes, axis=1, count=n, bitorder="little")


def _score_range(oracle: Oracle, seed: int, path: Path, start: int, stop: int,
                 threshold: int) -> tuple[int, np.ndarray, list[np.ndarray]]:
    n = oracle.n
    key = derive.node_key(seed, "score", path)
    disagreements = 0
    flipped_sum = np.zeros(n, dtype=np.int64)
    rows = []
    step = chunk_rows(n)
    for lo in range(start, stop, step):
        count, flipped, block_rows = _score_block(oracle, seed, key, path, lo,
                                                  min(lo + step, stop), threshold)
        disagreements += count
        flipped_sum += flipped
        rows.append(block_rows)
    return disagreements, flipped_sum, rows


def score_counts(oracle: Oracle, seed: int, path: Path, samples: int,
                 threshold: int, *, start: int = 0) -> ScoreCounts:
    """Run the UnbiasedEstimator on samples ``start .. start+samples-1`` of ``f_path``.

    Vectorised over samples and variables; memory is bounded by chunking
    rows, which changes no count.
    """
    disagreements, flipped_sum, _ = _score_range(oracle, seed, path, start,
                                                 start + samples, threshold)
    # Among disagreeing pairs, x_i = y_i exactly when coordinate i did not flip.
    return ScoreCounts(samples, disagreements, disagreements - flipped_sum)


def choose_variable(counts: ScoreCounts, path: Path) -> int:
    """Figure BuildStrand step (a): the variable of highest estimated score.

    Integer argmin of ``C_i`` over variables not on ``path``; ties go to the
    lowest index.
    """
    agreements = counts.agreements.copy()
    on_path = [var for var, _ in path]
    # Past any real count: variables on the path are never chosen.
    agreements[on_path] = counts.samples + 1
    choice = int(np.argmin(agreements))
    assert choice not in on_path
    return choice


def score_estimates(counts: ScoreCounts, noise_rate: float) -> np.ndarray:
    """Mean of the UnbiasedEstimator: ``D/q - C_i / (q (1 - p/2))``."""
    q = counts.samples
    return counts.disagreements / q - counts.agreements / (q * (1 - noise_rate / 2))


def estimate_scores(oracle: Oracle, seed: int, path: Path, noise_rate: float, *,
                    samples: int | None = None, tau: float | None = None,
                    delta: float | None = None) -> np.ndarray:
    """Theorem "Score estimator": the mean of ``q`` UnbiasedEstimator runs, all ``n`` scores.

    Give ``samples`` (``q``) directly, or ``tau`` and ``delta`` to use
    :func:`samples_for_accuracy` (every estimate within ``±tau`` w.p.
    ``>= 1 - delta``). ``noise_rate`` is rounded to the ``2^-15`` grid first,
    and the estimates are for that effective rate. Entries of variables on
    ``path`` are not estimates. Deterministic in ``(oracle, seed, path, q, p)``.
    """
    if (samples is None) == (tau is None or delta is None):
        raise ValueError("estimate_scores needs either 'samples' or both 'tau' and 'delta'; "
                         f"got samples={samples!r}, tau={tau!r}, delta={delta!r}")
    if samples is None:
        samples = samples_for_accuracy(tau, delta, oracle.n)
    samples = check_int("estimate_scores", "samples", samples, 1)
    threshold = derive.noise_threshold(noise_rate)
    counts = score_counts(oracle, seed, path, samples, threshold)
    return score_estimates(counts, derive.noise_rate_of(threshold))


def unbiased_estimates(oracle: Oracle, seed: int, path: Path, samples: int,
                       threshold: int) -> np.ndarray:
    """Per-run outputs of Figure UnbiasedEstimator, shape ``(samples, n)``.

    ``eta_i = 1[f(x) != f(y)] * (1 - 1[x_i = y_i] / (1 - p/2))`` on the same
    derived samples as :func:`score_counts`; a reference for tests, memory
    ``O(samples * n)``. Columns of variables on ``path`` are not score
    estimates (those coordinates never re-randomise and are never chosen).
    """
    n = oracle.n
    key = derive.node_key(seed, "score", path)
    x = derive.uniform_points(key, n, 0, samples, path)
    flips = derive.flip_masks(key, n, 0, samples, threshold, path)
    x_points = derive.unpack_points(x, n)
    y_points = derive.unpack_points(x ^ flips, n)
    # Before querying: an oracle may write into its input.
    same = x_points == y_points
    differ = query(oracle, x_points, seed, "score", path) != query(
        oracle, y_points, seed, "score", path)
    p = derive.noise_rate_of(threshold)
    return differ[:, None] * (1.0 - same / (1.0 - p / 2))


def samples_for_accuracy(tau: float, delta: float, n: int) -> int:
    """Theorem "Score estimator": runs so all ``n`` estimates are ``±tau`` w.p. ``1-delta``.

    Each run lies in ``[-1, 1]``; Hoeffding gives failure ``2 exp(-q tau^2 / 2)``
    per variable and a union bound over ``n`` variables gives
    ``q = ceil(2 / tau^2 * ln(2 n / delta))``.
    """
    owner = "samples_for_accuracy"
    tau = check_real(owner, "tau", tau, 0.0, math.inf)
    delta = check_real(owner, "delta", delta, 0.0, 1.0)
    n = check_int(owner, "n", n, 1)
    return math.ceil(finite(owner, "q = 2 / tau^2 * ln(2 n / delta)",
                            lambda: 2 / tau ** 2 * math.log(2 * n / delta),
                            tau=tau, n=n, delta=delta))


def _leaf_range(oracle: Oracle, seed: int, path: Path, start: int, stop: int) -> int:
    n = oracle.n
    key = derive.node_key(seed, "leaf", path)
    total = 0
    step = chunk_rows(n)
    for lo in range(start, stop, step):
        x = derive.uniform_points(key, n, lo, min(lo + step, stop), path)
        values = query(oracle, derive.unpack_points(x, n), seed, "leaf", path)
        total += int(values.sum(dtype=np.int64))
    return total


def leaf_sum(oracle: Oracle, seed: int, path: Path, samples: int) -> int:
    """``sum_k f(x_k)`` over ``samples`` uniform points consistent with ``path``."""
    return _leaf_range(oracle, seed, path, 0, samples)


def leaf_label(total: int) -> int:
    """Figure BuildStrand step (c): the sign of the leaf sum; a sum of 0 gives ``+1``."""
    return 1 if total >= 0 else -1


# -- adaptive (anytime) estimation: docs/theory.md, "Adaptive estimation" ------
#
# Stopping rules are deterministic functions of the derived samples: the
# confidence radii use only +, -, *, / and sqrt (correctly rounded in IEEE 754,
# hence identical on every platform) and a log term computed from integers.

# A rational strictly above ln 2 = 0.693147180559945309...
_LN2_UPPER = Fraction(693147180559946, 10 ** 15)


def ln_upper(value: Fraction | int) -> float:
    """An upper bound on ``ln(value)`` for ``value >= 1`` without ``libm``.

    ``ln v <= ceil(log2(ceil(v)^64)) / 64 * ln 2``, from integer bit lengths,
    so the bound is the same on every platform; it overshoots by less than
    ``ln(ceil(v)/v) + ln(2)/64``.
    """
    power = math.ceil(Fraction(value)) ** 64
    return float(Fraction((power - 1).bit_length(), 64) * _LN2_UPPER)


def _radius_terms(samples: int, log_term: float) -> tuple[float, float]:
    return math.sqrt(2 * log_term / samples), 2 * log_term / (3 * samples)


def bernoulli_upper(count: np.ndarray | int, samples: int, log_term: float) -> np.ndarray:
    """Bernstein upper confidence bound on a Bernoulli mean from ``count`` successes.

    With variance ``<= pi``, ``P(mean_hat <= pi - sqrt(2 pi L / q) - 2L / (3q)) <= e^-L``;
    solving for ``pi`` gives ``sqrt(pi) <= (a + sqrt(a^2 + 4 (mean_hat + b))) / 2``.
    Evaluated in IEEE doubles in the order ``docs/randomness.md`` §6 specifies
    (``U(c)``); ``U(0) = ((sqrt 2 + sqrt(14/3))/2)^2 L/q ~ 3.19 L/q``.
    """
    a, b = _radius_terms(samples, log_term)
    mean = np.asarray(count, dtype=np.float64) / samples
    root = (a + np.sqrt(a * a + 4 * (mean + b))) / 2
    return np.minimum(root * root, 1.0)


def bernoulli_lower(count: np.ndarray | int, samples: int, log_term: float) -> np.ndarray:
    """Bernstein lower confidence bound, the mirror of :func:`bernoulli_upper`."""
    a, b = _radius_terms(samples, log_term)
    slack = np.asarray(count, dtype=np.float64) / samples - b
    root = (-a + np.sqrt(a * a + 4 * np.maximum(slack, 0.0))) / 2
    return np.where(slack > 0, root * root, 0.0)


def lead_is_certified(lead: int, trials: int, log_term: float) -> bool:
    """Sign test: is a lead of ``lead`` in ``trials`` two-way contests certified at ``e^-L``?

    If each contest is won by either side with probability 1/2, the lead
    exceeds ``t`` with probability at most ``exp(-t^2 / (2 trials))``
    (Hoeffding); certified means ``lead > 0`` and ``lead^2 >= 2 L trials``.
    """
    return lead > 0 and lead * lead >= 2 * log_term * trials


def anytime_rounds(first: int, cap: int) -> list[int]:
    """Cumulative sample counts at which bounds are checked: ``first``, doubling, ``cap``."""
    rounds = []
    size = first
    while size < cap:
        rounds.append(size)
        size *= 2
    rounds.append(cap)
    return rounds


@dataclass(frozen=True)
class AdaptiveNode:
    """An anytime node decision: a variable, or ``None`` for an early leaf."""

    counts: ScoreCounts
    variable: int | None
    certified: bool


@dataclass(frozen=True)
class AdaptiveLeaf:
    """An anytime leaf estimate: ``sum f`` over the samples drawn."""

    total: int
    samples: int
    certified: bool


def _decisions_in_tree(params: Params) -> int:
    # Every node and leaf of a complete depth-d tree: at most 2^(d+1) decisions.
    return 2 ** (params.path_length + 1)


def _leader_is_certified(leader: int, free: np.ndarray, counts: ScoreCounts,
                         rows: np.ndarray, noise_rate: float, tau: float,
                         log_term: float) -> bool:
    """Is ``Score_j - Score_leader <= tau`` certified for every free ``j``?

    Per sample, ``eta_j - eta_leader = u (1[differ, j flipped, leader not]
    - 1[differ, leader flipped, j not])`` with ``u = 1 / (1 - p/2)``; bound
    the two Bernoulli means separately.
    """
    n = counts.agreements.shape[0]
    flipped = counts.disagreements - counts.agreements
    leader_rows = rows[(rows[:, leader // 64] >> np.uint64(leader % 64)) & np.uint64(1) == 1]
    both = _unpack_bits(leader_rows, n).sum(axis=0, dtype=np.int64)
    gain = flipped - both            # differ, j flipped, leader not
    loss = flipped[leader] - both    # differ, leader flipped, j not
    others = free.copy()
    others[leader] = False
    if not others.any():
        return True
    q = counts.samples
    gap = (bernoulli_upper(gain[others], q, log_term)
           - bernoulli_lower(loss[others], q, log_term)) / (1 - noise_rate / 2)
    return bool(np.max(gap) <= tau)


def adaptive_node(oracle: Oracle, seed: int, path: Path, params: Params) -> AdaptiveNode:
    """Figure BuildStrand step (a) with anytime stopping (at most ``score_samples``).

    After each round of :func:`anytime_rounds`: if ``NS_p(f_path) <= p eps`` is
    certified the node becomes an early leaf; else if the leading variable is
    certified within ``tau`` of every other, it is chosen. A node that reaches
    the cap uncertified chooses the leader as fixed mode does. Bounds hold
    together with probability ``>= 1 - delta/2`` over the whole tree,
    treating the derived streams as independent uniform bits. The exact
    rules (rounds, the log term with ``delta`` as its binary value
    ``Fraction(delta)``, and the floating-point order of every bound) are
    ``docs/randomness.md`` §6; a deterministic function of
    ``(oracle, seed, path, params)``.
    """
    n = oracle.n
    rounds = anytime_rounds(params.first_round, params.score_samples)
    # One-sided events per round: gain and loss bounds for every ordered pair,
    # plus the noise-sensitivity bound.
    events = (2 * n * n + 1) * len(rounds) * _decisions_in_tree(params)
    log_term = ln_upper(Fraction(events) / (Fraction(params.delta) / 2))
    free = np.ones(n, dtype=bool)
    free[[var for var, _ in path]] = False
    disagreements, flipped_sum, rows = 0, np.zeros(n, dtype=np.int64), []
    done = 0
    for size in rounds:
        more, flipped, new_rows = _score_range(oracle, seed, path, done, size,
                                               params.noise_threshold)
        disagreements += more
        flipped_sum += flipped
        rows += new_rows
        done = size
        counts = ScoreCounts(size, disagreements, disagreements - flipped_sum)
        if bernoulli_upper(disagreements, size, log_term) <= params.noise_rate * params.eps:
            return AdaptiveNode(counts, None, True)
        leader = choose_variable(counts, path)
        if _leader_is_certified(leader, free, counts, np.concatenate(rows), params.noise_rate,
                                params.tau, log_term):
            return AdaptiveNode(counts, leader, True)
    return AdaptiveNode(counts, leader, False)


def adaptive_leaf(oracle: Oracle, seed: int, path: Path, params: Params) -> AdaptiveLeaf:
    """Figure BuildStrand step (c) with anytime stopping (at most ``leaf_samples``).

    Stops once the sign of ``E[f_path]`` is certified, or ``|E[f_path]| <= eps``
    is (then either label meets Lemma "Robust version"; at an early leaf this
    second rule cannot fire when ``eps < 1/3``, docs/theory.md §6).
    ``Pr[f = +1]`` is bounded from both sides by Bernstein bounds on the
    ``+1`` and ``-1`` counts; exact rules in ``docs/randomness.md`` §6.
    """
    rounds = anytime_rounds(params.first_round, params.leaf_samples)
    events = 4 * len(rounds) * _decisions_in_tree(params)
    log_term = ln_upper(Fraction(events) / (Fraction(params.delta) / 2))
    total = 0
    done = 0
    for size in rounds:
        total += _leaf_range(oracle, seed, path, done, size)
        done = size
        plus = (size + total) // 2
        upper = min(float(bernoulli_upper(plus, size, log_term)),
                    1 - float(bernoulli_lower(size - plus, size, log_term)))
        lower = max(float(bernoulli_lower(plus, size, log_term)),
                    1 - float(bernoulli_upper(size - plus, size, log_term)))
        sign_known = lower > 0.5 or upper < 0.5
        small = upper <= (1 + params.eps) / 2 and lower >= (1 - params.eps) / 2
        if sign_known or small:
            return AdaptiveLeaf(total, size, True)
    return AdaptiveLeaf(total, done, False)
