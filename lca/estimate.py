"""Score and leaf estimators (Section "Query-efficient simultaneous score estimation").

All samples come from :mod:`lca.derive` keyed by ``(seed, purpose, path)``:
purpose ``"score"`` for the UnbiasedEstimator pairs ``(x, y)`` of a node and
``"leaf"`` for the uniform points of a leaf. Results are deterministic
functions of ``(oracle, seed, path, sample counts, noise threshold)``, and
independent of how samples are chunked, because every statistic is an
integer sum over samples.

The decision at a node needs no floats (docs/randomness.md §6): every score shares the
``NS_p`` term, so ``argmax_i Score_i = argmin_i C_i`` where
``C_i = #{k : f(x_k) != f(y_k) and x_{k,i} = y_{k,i}}``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from lca import derive, estimator
from lca._validate import check_int, check_real
from lca.decisions import LeafDecision, NodeDecision
from lca.derive import Path
from lca.engine import Steps, drive, points_request
from lca.estimator import Estimator, NodeContext
from lca.oracle import Oracle
from lca.params import Params, finite

__all__ = [
    "SCORE",
    "AdaptiveLeaf",
    "AdaptiveNode",
    "ScoreCounts",
    "adaptive_leaf",
    "adaptive_node",
    "anytime_rounds",
    "bernoulli_lower",
    "bernoulli_upper",
    "choose_variable",
    "estimate_scores",
    "exceeds_binomial",
    "is_guesswork",
    "lead_is_certified",
    "leaf_label",
    "leaf_sum",
    "ln_upper",
    "ln_upper_exact",
    "samples_for_accuracy",
    "score_counts",
    "score_estimates",
    "unbiased_estimates",
]

# Samples per derived block: each block is one request of 2 * block rows
# (x then y) and holds its packed points and flip masks, so memory stays
# bounded at large n; counts are integer sums, so blocks change nothing.
_BLOCK_ENTRIES = 1 << 23


def _block(n: int) -> int:
    return max(1, _BLOCK_ENTRIES // n)


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


def _score_steps(n: int, seed: int, path: Path, start: int, stop: int,
                 threshold: int) -> Steps:
    """Samples ``start..stop-1``: disagreements, per-variable flip counts among
    them, and the disagreeing pairs' flip rows (packed)."""
    key = derive.node_key(seed, "score", path)
    disagreements = 0
    flipped = np.zeros(n, dtype=np.int64)
    rows = []
    step = _block(n)
    for lo in range(start, stop, step):
        hi = min(lo + step, stop)
        x = derive.uniform_points(key, n, lo, hi, path)
        flips = derive.flip_masks(key, n, lo, hi, threshold, path)
        both = np.concatenate([x, x ^ flips])
        values = yield points_request("score", both, n, (path,))
        differ = values[:hi - lo] != values[hi - lo:]
        disagreeing = flips[differ]
        disagreements += int(differ.sum())
        flipped += derive.unpack_bits(disagreeing, n).sum(axis=0, dtype=np.int64)
        rows.append(disagreeing)
    return disagreements, flipped, rows


def score_counts(oracle: Oracle, seed: int, path: Path, samples: int,
                 threshold: int, *, start: int = 0) -> ScoreCounts:
    """Run the UnbiasedEstimator on samples ``start .. start+samples-1`` of ``f_path``.

    Vectorised over samples and variables; memory is bounded by deriving
    samples in blocks, which changes no count.
    """
    disagreements, flipped_sum, _ = drive(
        _score_steps(oracle.n, seed, path, start, start + samples, threshold), oracle, seed)
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
    if samples is None and tau is not None and delta is not None:  # the check above
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
    differ = oracle(x_points) != oracle(y_points)
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


def _leaf_steps(n: int, seed: int, path: Path, start: int, stop: int) -> Steps:
    """``sum f(x_k)`` over leaf samples ``start..stop-1``."""
    key = derive.node_key(seed, "leaf", path)
    total = 0
    step = 2 * _block(n)
    for lo in range(start, stop, step):
        x = derive.uniform_points(key, n, lo, min(lo + step, stop), path)
        values = yield points_request("leaf", x, n, (path,))
        total += int(values.sum(dtype=np.int64))
    return total


def leaf_sum(oracle: Oracle, seed: int, path: Path, samples: int) -> int:
    """``sum_k f(x_k)`` over ``samples`` uniform points consistent with ``path``."""
    return drive(_leaf_steps(oracle.n, seed, path, 0, samples), oracle, seed)


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


def ln_upper_exact(value: Fraction | int) -> Fraction:
    """An upper bound on ``ln(value)`` for ``value >= 1``, as an exact rational.

    ``ln v <= ceil(log2(ceil(v)^64)) / 64 * ln 2``, from integer bit lengths,
    so the bound is the same on every platform; it overshoots by less than
    ``ln(ceil(v)/v) + ln(2)/64``.
    """
    power = math.ceil(Fraction(value)) ** 64
    return Fraction((power - 1).bit_length(), 64) * _LN2_UPPER


def ln_upper(value: Fraction | int) -> float:
    """:func:`ln_upper_exact` rounded once to the nearest double."""
    return float(ln_upper_exact(value))


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


def exceeds_binomial(count: int, trials: int, p: Fraction, log_term: float) -> bool:
    """Is ``count`` significantly above a ``Bin(trials, p)`` draw, at level ``e^-L``?

    Bernstein: ``Pr[count >= trials p + t] <= exp(-t^2 / (2 (trials p (1 -
    p) + t/3)))``; the test is ``t > 0`` and ``t^2 >= 2 (variance + t/3) L``
    with ``t = count - trials p``, in exact rationals but ``L``.
    """
    excess = count - trials * p
    variance = trials * p * (1 - p)
    return excess > 0 and excess * excess >= 2 * (variance + excess / 3) * Fraction(log_term)


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
    both = derive.unpack_bits(leader_rows, n).sum(axis=0, dtype=np.int64)
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


def _adaptive_node_steps(n: int, seed: int, path: Path, params: Params) -> Steps:
    eps, delta, tau = params.eps, params.delta, params.tau
    assert eps is not None and delta is not None and tau is not None, "validate() checks"
    rounds = anytime_rounds(params.first_round, params.score_samples)
    # One-sided events per round: gain and loss bounds for every ordered pair,
    # plus the noise-sensitivity bound.
    events = (2 * n * n + 1) * len(rounds) * _decisions_in_tree(params)
    log_term = ln_upper(Fraction(events) / (Fraction(delta) / 2))
    free = np.ones(n, dtype=bool)
    free[[var for var, _ in path]] = False
    disagreements, flipped_sum, rows = 0, np.zeros(n, dtype=np.int64), []
    done = 0
    for size in rounds:
        more, flipped, new_rows = yield from _score_steps(n, seed, path, done, size,
                                                          params.noise_threshold)
        disagreements += more
        flipped_sum += flipped
        rows += new_rows
        done = size
        counts = ScoreCounts(size, disagreements, disagreements - flipped_sum)
        if bernoulli_upper(disagreements, size, log_term) <= params.noise_rate * eps:
            return AdaptiveNode(counts, None, True)
        leader = choose_variable(counts, path)
        if _leader_is_certified(leader, free, counts, np.concatenate(rows), params.noise_rate,
                                tau, log_term):
            return AdaptiveNode(counts, leader, True)
    return AdaptiveNode(counts, leader, False)


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
    return drive(_adaptive_node_steps(oracle.n, seed, path, params), oracle, seed)


def _adaptive_leaf_steps(n: int, seed: int, path: Path, params: Params) -> Steps:
    eps, delta = params.eps, params.delta
    assert eps is not None and delta is not None, "validate() checks"
    rounds = anytime_rounds(params.first_round, params.leaf_samples)
    events = 4 * len(rounds) * _decisions_in_tree(params)
    log_term = ln_upper(Fraction(events) / (Fraction(delta) / 2))
    total = 0
    done = 0
    for size in rounds:
        total += yield from _leaf_steps(n, seed, path, done, size)
        done = size
        plus = (size + total) // 2
        upper = min(float(bernoulli_upper(plus, size, log_term)),
                    1 - float(bernoulli_lower(size - plus, size, log_term)))
        lower = max(float(bernoulli_lower(plus, size, log_term)),
                    1 - float(bernoulli_upper(size - plus, size, log_term)))
        sign_known = lower > 0.5 or upper < 0.5
        small = upper <= (1 + eps) / 2 and lower >= (1 - eps) / 2
        if sign_known or small:
            return AdaptiveLeaf(total, size, True)
    return AdaptiveLeaf(total, done, False)


def adaptive_leaf(oracle: Oracle, seed: int, path: Path, params: Params) -> AdaptiveLeaf:
    """Figure BuildStrand step (c) with anytime stopping (at most ``leaf_samples``).

    Stops once the sign of ``E[f_path]`` is certified, or ``|E[f_path]| <= eps``
    is (then either label meets Lemma "Robust version"; at an early leaf this
    second rule cannot fire when ``eps < 1/3``, docs/theory.md §6).
    ``Pr[f = +1]`` is bounded from both sides by Bernstein bounds on the
    ``+1`` and ``-1`` counts; exact rules in ``docs/randomness.md`` §6.
    """
    return drive(_adaptive_leaf_steps(oracle.n, seed, path, params), oracle, seed)


# -- the estimator: docs/randomness.md §6 ------------------------------------------------

ADAPTIVE_EPS_LIMIT = 1 / 3
"""Adaptive ``Params`` need ``eps`` below this (docs/theory.md §6, early leaves)."""

# Sign-test level of the score estimator's margins: ln(20), a 95% one-sided test.
_MARGIN_LOG = ln_upper(20)


def is_guesswork(counts: ScoreCounts, variable: int, free: int, threshold: int) -> bool:
    """Is the chosen variable no more tied to disagreement than an irrelevant one? (reporting)

    A coordinate ``f`` ignores flips in a disagreeing pair with probability
    ``r = threshold / 2**16``, independently of the disagreement, so its flip
    count is ``Bin(D, r)``. The choice is guesswork unless its flip count
    ``D - C`` exceeds that significantly (:func:`exceeds_binomial`) at level
    ``ln_upper(20 F)``: 1/20 for the most flipped of ``F`` free variables.
    """
    flipped = counts.disagreements - int(counts.agreements[variable])
    return not exceeds_binomial(flipped, counts.disagreements, Fraction(threshold, 1 << 16),
                                ln_upper(20 * free))


def _score_node(counts: ScoreCounts, variable: int, path: Path,
                certified: bool | None, threshold: int) -> NodeDecision:
    """A score-estimator node with its margin over the runner-up and whether it is
    guesswork (reporting only)."""
    agreements = counts.agreements.copy()
    agreements[variable] = counts.samples + 1
    runner_up = choose_variable(ScoreCounts(counts.samples, counts.disagreements, agreements),
                                path) if len(path) + 1 < counts.agreements.shape[0] else None
    chosen = int(counts.agreements[variable])
    guess = is_guesswork(counts, variable, counts.agreements.shape[0] - len(path), threshold)
    if runner_up is None:
        return NodeDecision(variable, counts.samples, counts.disagreements, chosen, certified,
                            guesswork=guess)
    lead = int(counts.agreements[runner_up]) - chosen
    # Samples that separate the two: at most those where either one flipped.
    trials = 2 * counts.disagreements - chosen - int(counts.agreements[runner_up])
    low = not lead_is_certified(lead, trials, _MARGIN_LOG)
    return NodeDecision(variable, counts.samples, counts.disagreements, chosen, certified,
                        runner_up, lead, low, guesswork=guess)


class ScoreEstimator(Estimator):
    """``Params.estimator = "score"``: the paper's UnbiasedEstimator, fixed or adaptive.

    Figure BuildStrand: a node is ``argmin C_i`` over ``score_samples``
    pairs (adaptive: over the rounds until certified, or an early leaf), a
    leaf the sign of ``sum f`` over ``leaf_samples`` points (adaptive: until
    certified). Nothing is kept for descendants.
    """

    name = "score"

    def validate(self, params: Params) -> None:
        if params.adaptive and None in (params.tau, params.eps, params.delta):
            raise ValueError("Adaptive Params need 'tau', 'eps' and 'delta' (the accuracy "
                             "and failure probability to certify). Got "
                             f"tau={params.tau!r}, eps={params.eps!r}, "
                             f"delta={params.delta!r}.")
        if params.adaptive and params.eps is not None and not params.eps < ADAPTIVE_EPS_LIMIT:
            # An early leaf has Var(f_path) <= 2 eps, so |E f_path| >= sqrt(1 - 2 eps)
            # > eps for eps < sqrt(2) - 1: the "magnitude small" stop cannot fire there
            # and its label is the certified sign (docs/theory.md §6).
            raise ValueError("The 'eps' parameter of Params must be a real number in the "
                             "range (0, 1/3) when adaptive=True (early leaves need it; "
                             f"docs/theory.md §6). Got {params.eps!r} instead.")

    def node(self, context: NodeContext) -> Steps:
        n, seed, path, params = context.n, context.seed, context.path, context.params
        if not params.adaptive:
            disagreements, flipped, _ = yield from _score_steps(
                n, seed, path, 0, params.score_samples, params.noise_threshold)
            counts = ScoreCounts(params.score_samples, disagreements, disagreements - flipped)
            return _score_node(counts, choose_variable(counts, path), path, None,
                               params.noise_threshold), None
        node = yield from _adaptive_node_steps(n, seed, path, params)
        if node.variable is not None:
            return _score_node(node.counts, node.variable, path, node.certified,
                               params.noise_threshold), None
        return (yield from self.leaf(context)), None

    def leaf(self, context: NodeContext) -> Steps:
        n, seed, path, params = context.n, context.seed, context.path, context.params
        if not params.adaptive:
            total = yield from _leaf_steps(n, seed, path, 0, params.leaf_samples)
            return LeafDecision(leaf_label(total), params.leaf_samples, total)
        leaf = yield from _adaptive_leaf_steps(n, seed, path, params)
        return LeafDecision(leaf_label(leaf.total), leaf.samples, leaf.total, leaf.certified)

    def max_node_queries(self, params: Params) -> int:
        """``2 * score_samples``: each run queries ``f(x)`` and ``f(y)`` (adaptive
        mode stops at or before the cap)."""
        return 2 * params.score_samples

    def max_leaf_queries(self, params: Params) -> int:
        """``leaf_samples``: one query each (adaptive mode stops at or before it)."""
        return params.leaf_samples

    def early_leaves(self, params: Params) -> bool:
        return params.adaptive

    def node_memory(self, params: Params) -> int:
        # One block of packed points, flip masks and copies; the disagreeing
        # rows kept for the adaptive certificate.
        words = derive.words_per_point(params.n)
        block = min(params.score_samples, _block(params.n))
        return 8 * words * (4 * block + (params.score_samples if params.adaptive else 0))

    def describe(self, params: Params) -> str:
        lines = [f"lca parameters ({params.preset} preset)"]
        if params.size is not None:
            lines.append(f"  target size s         {params.size}")
        if None not in (params.tau, params.eps, params.delta):
            lines.append(f"  score accuracy tau    {params.tau:.3g}  (leaf eps="
                         f"{params.eps:.3g}, failure delta={params.delta:.3g})")
        elif (params.tau, params.eps, params.delta) != (None, None, None):
            # Params built directly may set only some of them.
            given = [f"{label}={value:.3g}" for label, value in
                     (("tau", params.tau), ("eps", params.eps), ("delta", params.delta))
                     if value is not None]
            lines.append(f"  accuracy              {', '.join(given)}")
        if params.adaptive:
            lines.append(f"  adaptive              rounds from {params.first_round} samples, "
                         "doubling up to the caps below")
        lines += [
            f"  variables n           {params.n}",
            f"  depth d               {params.depth}"
            + (f"  (paths stop at n = {params.n})" if params.depth > params.n else ""),
            f"  noise rate p          {params.noise_rate:.6g}  "
            f"(requested {params.requested_noise_rate:.6g}, grid 2^-15; estimator's "
            "re-randomisation rate, not label noise)",
            f"  samples per node      {params.score_samples}  "
            f"({2 * params.score_samples} queries)",
            f"  samples per leaf      {params.leaf_samples}",
            f"  queries per answer    {params.predicted_queries}  (cold, no cache"
            + (", at most)" if params.adaptive else ")"),
        ]
        if params.preset == "practical":
            lines.append("  guarantee             determinism and consistency only; "
                         "an accuracy bound needs the theory preset")
        elif params.preset == "guaranteed":
            lines.append("  guarantee             every decision right at this depth, rate "
                         "and tau w.p. >= 1-delta; no error bound by itself")
        else:
            lines.append(_theory_guarantee(params))
        return "\n".join(lines)


def _theory_guarantee(params: Params) -> str:
    """The guarantee line of a theory preset: the size version (``from_theory`` sets
    ``size``) or the depth and measure version, each with its own condition on the
    constants (docs/theory.md §1, §2); adaptive early leaves add eps (§6)."""
    constants, rate = params.constants, params.requested_noise_rate
    size = params.size is not None
    opt, condition = (("20 opt_s", "c_d (c_p - c_tau) >= 1/2") if size else
                      ("22 opt_d", "c_d (c_p - c_tau) >= max(c_p, 1)"))
    # A rate clipped at 1 is not c_p eps / L, and the proof's drop needs it.
    if (constants is None or rate is None or rate >= 1.0
            or not (constants.proof_holds if size else constants.depth_proof_holds)):
        return (f"  guarantee             none: the constants miss the proof's conditions "
                f"(c_tau < c_p, {condition}, p unclipped)")
    # The proof's 8 c_p eps is 8 p L: with p rounded to its grid, the rate used is
    # p_eff = p * (noise_rate / requested) (docs/theory.md §1).
    requested = 8 * constants.noise + 3 + params.adaptive
    used = 8 * constants.noise * params.noise_rate / rate + 3 + params.adaptive
    return (f"  guarantee             dist(T, f) <= {opt} + {used:.6g} eps w.p. >= 1-delta "
            f"({requested:g} eps at the requested p; docs/theory.md)")


SCORE = estimator.register(ScoreEstimator())
"""The registered score estimator."""
