"""Tolerant tester, distance estimation and BuildDT (the paper's consequences).

Three results of Blanc, Lange, Tan built on the reconstructor:

* :func:`tolerant_test` — Corollary "Tolerant testing" (restated and proved in
  section "Proof of Corollary"): compare ``f`` with ``T_seed`` on ``m`` uniform
  points and reject when they disagree on more than ``kappa * eps`` of them.
* :func:`estimate_distance` — Lemma "Tolerant testing => distance estimation"
  [PRR06]: any tolerant tester, run on the grid ``eps = gamma/c, 2 gamma/c,
  ..., 1``, gives ``eta <= opt_s <= c * eta + gamma``. :class:`ExactTester` is
  an exact (deterministic) tester for small ``n``.
* :func:`build_dt` — Figure "BuildDT", Lemma "Error of BuildDT": a distance
  estimator gives a proper learner of size-``s`` trees.

``docs/theory.md`` states every formula used here. All randomness comes from
:mod:`lca.derive`: the tester's points are samples ``0 .. m-1`` of purpose
``"tester"`` at the empty path, so a test is a deterministic function of
``(oracle, s, eps, delta, seed, parameters)``.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

from lca import derive, exact
from lca._cli_options import N_HIGH, SEED_HIGH, int_in, real_in
from lca._validate import check_int, check_real, check_seed, show
from lca.derive import Path
from lca.oracle import CountingOracle, Oracle, _oracle_n
from lca.params import Params, TheoryConstants, check_theory_overrides, finite
from lca.reconstruct import Reconstructor
from lca.targets import DecisionTree

__all__ = [
    "THRESHOLD_FACTOR",
    "THEORY_THRESHOLD_FACTOR",
    "PRACTICAL_SCORE_SAMPLES",
    "DEFAULT_MAX_QUERIES",
    "MAX_GRID",
    "hoeffding_samples",
    "hoeffding_halfwidth",
    "practical_depth",
    "tolerant_test_params",
    "TolerantTestPlan",
    "plan_tolerant_test",
    "TestResult",
    "tolerant_test",
    "ReconstructedFunction",
    "Tester",
    "DistanceEstimate",
    "epsilon_grid",
    "estimate_distance",
    "ExactTestResult",
    "ExactTester",
    "Restriction",
    "DistanceEstimator",
    "ExactDistance",
    "DistanceFromTester",
    "BuildReport",
    "build_dt",
    "build_dt_report",
    "builddt_error_bound",
]

THRESHOLD_FACTOR = 2.0
"""``kappa``: the tester rejects when the disagreement exceeds ``kappa * eps``.

The paper's threshold is ``Omega(eps)`` with an unnamed constant. With
``kappa`` the tester accepts w.p. ``>= 1 - delta`` whenever
``dist(T_seed, f) <= (kappa - 1) eps`` and rejects w.p. ``>= 1 - delta``
whenever ``f`` is ``(kappa + 1) eps``-far from every tree of ``T_seed``'s depth.
``kappa = 2`` accepts as soon as the reconstructed tree is within ``eps`` of
``f``. The theory preset's completeness (accept every ``f`` that is
``eps``-close to a size-``s`` tree) needs ``kappa >= THEORY_THRESHOLD_FACTOR``:
with the default constants the proof gives ``dist(T_seed, f) <= 20 opt_s +
11 eps <= 31 eps`` (docs/theory.md §1, §3).
"""

THEORY_THRESHOLD_FACTOR = 32.0
"""Smallest ``kappa`` for which the theory preset (default constants) is complete."""

PRACTICAL_SCORE_SAMPLES = 1000
"""Default UnbiasedEstimator runs per node of the practical preset (no accuracy claim)."""

DEFAULT_MAX_QUERIES = 10 ** 9
""":func:`tolerant_test` refuses plans whose worst-case query count exceeds this."""

_TESTER_PURPOSE = "tester"
_MEAN_PURPOSE = "builddt-mean"


# --------------------------------------------------------------------------
# formulas


def hoeffding_samples(eps: float, delta: float) -> int:
    """``m = ceil(ln(1/delta) / (2 eps^2))``: the proof's ``exp(-2 m eps^2) <= delta``.

    With ``m`` uniform points the empirical disagreement exceeds the true
    ``dist(T, f)`` by ``eps`` or more (or falls short of it by ``eps``) with
    probability at most ``delta`` each (one-sided Hoeffding on ``{0, 1}``).
    """
    eps = check_real("hoeffding_samples", "eps", eps, 0.0, 1.0, open_high=False)
    delta = check_real("hoeffding_samples", "delta", delta, 0.0, 1.0)
    return max(1, math.ceil(finite("hoeffding_samples", "m = ln(1/delta) / (2 eps^2)",
                                   lambda: math.log(1 / delta) / (2 * eps ** 2),
                                   eps=eps, delta=delta)))


def hoeffding_halfwidth(m: int, delta: float) -> float:
    """Half-width ``sqrt(ln(2/delta) / (2m))`` of a two-sided level ``1 - delta`` interval."""
    m = check_int("hoeffding_halfwidth", "m", m, 1)
    delta = check_real("hoeffding_halfwidth", "delta", delta, 0.0, 1.0)
    return math.sqrt(math.log(2 / delta) / (2 * m))


def practical_depth(s: int, eps: float) -> int:
    """``D = min(s - 1, ceil(log2(s / eps)))``, the practical tester's tree depth.

    A size-``s`` tree has depth at most ``s - 1``, and truncating it at depth
    ``D`` (majority label at each cut node) changes at most ``s / 2^(D+2)``
    of the cube, which is ``<= eps / 4`` once ``2^D >= s / eps``. So trees of
    depth ``D`` are within ``eps / 4`` of ``opt_s``, and for ``s <= 2`` they
    are exactly the size-``s`` trees. Computed without logarithms.
    """
    s = check_int("practical_depth", "s", s, 1)
    eps = check_real("practical_depth", "eps", eps, 0.0, 1.0, open_high=False)
    depth = 0
    # Exact: equal to the float product 2.0**depth * eps wherever that does
    # not overflow (scaling by a power of two is exact), and defined past it.
    exact_eps = Fraction(eps)
    while depth < s - 1 and exact_eps * (1 << depth) < s:
        depth += 1
    return depth


def _log2_size(s: int) -> float:
    return max(1.0, math.log2(s))


def tolerant_test_params(n: int, s: int, eps: float, delta: float, *,
                         preset: str = "practical",
                         constants: TheoryConstants = TheoryConstants(),
                         depth: int | None = None, noise_rate: float | None = None,
                         score_samples: int | None = None,
                         leaf_samples: int | None = None) -> Params:
    """Reconstructor parameters used by :func:`tolerant_test`; deterministic.

    ``"theory"``: ``Params.from_theory(max(s, 2), eps, delta, n, constants)``
    (Lemma "Robust version"; ``s = 1`` uses ``s = 2``, whose formulas are
    defined, and every size-1 tree is a size-2 tree). Astronomically large.

    ``"practical"`` (each value may be overridden):

    * depth ``D = practical_depth(s, eps)``;
    * noise rate ``p = min(1, eps / max(1, log2 s))`` (the theory ``p``);
    * ``score_samples = PRACTICAL_SCORE_SAMPLES`` per node (no accuracy claim);
    * ``leaf_samples = ceil(2 / eps^2 * ln(2 L / delta))`` with
      ``L = 2^min(D, n)`` leaves: every leaf with ``|E[f_leaf]| > eps`` gets
      the label ``sign(E[f_leaf])`` w.p. ``>= 1 - delta`` (Hoeffding on
      ``[-1, 1]`` and a union bound), the leaf condition of Lemma "Robust
      version".
    """
    owner = "tolerant_test_params"
    n = check_int(owner, "n", n, 1)
    s = check_int(owner, "s", s, 1)
    eps = check_real(owner, "eps", eps, 0.0, 1.0, open_high=False)
    delta = check_real(owner, "delta", delta, 0.0, 1.0)
    if preset == "theory":
        check_theory_overrides(owner, depth=depth, noise_rate=noise_rate,
                               score_samples=score_samples, leaf_samples=leaf_samples)
        return Params.from_theory(max(s, 2), eps, delta, n, constants)
    if preset != "practical":
        raise ValueError(f"The 'preset' parameter of {owner} must be 'practical' or "
                         f"'theory'. Got {preset!r} instead.")
    if depth is None:
        depth = practical_depth(s, eps)
    depth = check_int(owner, "depth", depth, 0)
    if noise_rate is None:
        noise_rate = min(1.0, eps / _log2_size(s))
    if score_samples is None:
        score_samples = PRACTICAL_SCORE_SAMPLES
    if leaf_samples is None:
        leaves = 2 ** min(depth, n)
        leaf_samples = math.ceil(2 / eps ** 2 * math.log(2 * leaves / delta))
    return Params.practical(n=n, depth=depth, noise_rate=noise_rate,
                            score_samples=score_samples, leaf_samples=leaf_samples)


def _worst_case_queries(params: Params, m: int) -> int:
    """Queries to ``f`` of a test with ``m`` points, cold cache, in the worst case."""
    length = params.path_length
    reachable = (1 << length) if length < 62 else None
    internal = m * length if reachable is None else min(m * length, reachable - 1)
    leaves = m if reachable is None else min(m, reachable)
    return m + internal * 2 * params.score_samples + leaves * params.leaf_samples


# --------------------------------------------------------------------------
# tolerant tester


def _theory_complete(params: Params, kappa: float, s: int, eps: float,
                     delta: float) -> bool:
    # docs/theory.md §3: 20 opt_s + 11 eps <= 31 eps <= (kappa - 1) eps, for
    # theory parameters built for a size >= s, an eps <= eps and a delta <= delta.
    return (params.preset == "theory" and params.constants == TheoryConstants()
            and params.size is not None and params.size >= s
            and params.eps is not None and params.eps <= eps
            and params.delta is not None and params.delta <= delta
            and kappa >= THEORY_THRESHOLD_FACTOR)


@dataclass(frozen=True)
class TolerantTestPlan:
    """What :func:`tolerant_test` will do, computed without querying ``f``.

    Attributes:
        n, s, eps, delta, preset: the inputs.
        params: the reconstructor's parameters.
        samples: ``m``, the uniform points compared.
        threshold_factor: ``kappa``.
        threshold: ``kappa * eps``; reject iff the disagreement exceeds it.
        worst_case_queries: ``m`` plus the reconstructor's queries if every
            point reached a different, uncached node (an upper bound).
    """

    n: int
    s: int
    eps: float
    delta: float
    preset: str
    params: Params
    samples: int
    threshold_factor: float
    threshold: float
    worst_case_queries: int

    def describe(self) -> str:
        """Human-readable plan: parameters, ``m``, threshold and the guarantees."""
        kappa, eps = self.threshold_factor, self.eps
        lines = [
            f"tolerant test (Corollary 'Tolerant testing'), {self.preset} preset",
            f"  target size s         {self.s}",
            f"  eps, delta            {eps:g}, {self.delta:g}",
            f"  points m              {self.samples}  (ceil(ln(1/delta) / (2 eps^2)))",
            f"  threshold             {self.threshold:g}  (kappa = {kappa:g} times eps)",
            f"  worst-case queries    {self.worst_case_queries}",
            "  rejects w.p. >= 1-delta if f is "
            f"{(kappa + 1) * eps:g}-far from every depth-{self.params.path_length} tree",
            "  accepts w.p. >= 1-delta if dist(T_seed, f) <= "
            f"{max(kappa - 1, 0) * eps:g}",
            "  accepts every f eps-close to a size-s tree: "
            + ("proved, w.p. >= 1-2delta (theory preset, kappa >= "
               f"{THEORY_THRESHOLD_FACTOR:g})"
               if _theory_complete(self.params, kappa, self.s, eps, self.delta)
               else f"not proved (needs the theory preset and kappa >= "
                    f"{THEORY_THRESHOLD_FACTOR:g})"),
        ]
        return "\n".join(lines) + "\n" + self.params.describe()


def plan_tolerant_test(n: int, s: int, eps: float, delta: float, *,
                       preset: str = "practical", params: Params | None = None,
                       threshold_factor: float = THRESHOLD_FACTOR,
                       samples: int | None = None,
                       constants: TheoryConstants = TheoryConstants(),
                       depth: int | None = None, noise_rate: float | None = None,
                       score_samples: int | None = None,
                       leaf_samples: int | None = None) -> TolerantTestPlan:
    """The :class:`TolerantTestPlan` of :func:`tolerant_test`; see its arguments."""
    owner = "tolerant_test"
    n = check_int(owner, "n", n, 1)
    s = check_int(owner, "s", s, 1)
    eps = check_real(owner, "eps", eps, 0.0, 1.0, open_high=False)
    delta = check_real(owner, "delta", delta, 0.0, 1.0)
    kappa = check_real(owner, "threshold_factor", threshold_factor, 0.0, math.inf)
    m = hoeffding_samples(eps, delta) if samples is None else check_int(
        owner, "samples", samples, 1)
    if params is not None:
        if not isinstance(params, Params):
            raise TypeError(f"The 'params' parameter of {owner} must be an lca.Params. "
                            f"Got {type(params).__name__} instead.")
        extra = [name for name, value in (("depth", depth), ("noise_rate", noise_rate),
                                          ("score_samples", score_samples),
                                          ("leaf_samples", leaf_samples))
                 if value is not None]
        if extra:
            raise ValueError(f"{owner}: pass either 'params' or "
                             f"{', '.join(repr(e) for e in extra)}, not both")
        if params.n != n:
            raise ValueError(f"{owner}: params have n={params.n} but the oracle has n={n}")
        preset = params.preset
    else:
        params = tolerant_test_params(n, s, eps, delta, preset=preset, constants=constants,
                                      depth=depth, noise_rate=noise_rate,
                                      score_samples=score_samples,
                                      leaf_samples=leaf_samples)
    return TolerantTestPlan(n=n, s=s, eps=eps, delta=delta, preset=preset, params=params,
                            samples=m, threshold_factor=kappa, threshold=kappa * eps,
                            worst_case_queries=_worst_case_queries(params, m))


@dataclass(frozen=True)
class TestResult:
    """Outcome of :func:`tolerant_test`.

    Attributes:
        accepted: the decision (``decision`` is ``"accept"`` or ``"reject"``).
        disagreement: ``#{k : f(x_k) != T_seed(x_k)} / m``.
        disagreements: the count ``#{k : f(x_k) != T_seed(x_k)}``.
        confidence_interval: two-sided Hoeffding interval for
            ``dist(T_seed, f)`` at level ``confidence = 1 - delta``:
            ``disagreement -/+ sqrt(ln(2/delta) / (2m))``, clipped to ``[0, 1]``.
        samples: ``m``.
        queries: all queries to ``f``: ``reconstructor_queries + oracle_queries``.
        reconstructor_queries: queries the reconstructor spent on ``T_seed``.
        oracle_queries: the ``m`` evaluations of ``f`` at the test points.
        threshold, threshold_factor: ``kappa * eps`` and ``kappa``.
        s, eps, delta, seed, preset, params: the inputs and the parameters used.
    """

    __test__ = False  # not a pytest test class

    accepted: bool
    disagreement: float
    disagreements: int
    confidence_interval: tuple[float, float]
    confidence: float
    samples: int
    queries: int
    reconstructor_queries: int
    oracle_queries: int
    threshold: float
    threshold_factor: float
    s: int
    eps: float
    delta: float
    seed: int
    preset: str
    params: Params = field(repr=False)

    @property
    def decision(self) -> str:
        """``"accept"`` or ``"reject"``."""
        return "accept" if self.accepted else "reject"

    def verdict(self) -> str:
        """One line: the decision and what it means at confidence ``1 - delta``."""
        low, high = self.confidence_interval
        depth = self.params.path_length
        measured = (f"disagreement {self.disagreement:.4f} "
                    f"{'<=' if self.accepted else '>'} threshold {self.threshold:.4f} "
                    f"on m={self.samples} points; dist(T_seed, f) in [{low:.4f}, {high:.4f}] "
                    f"at confidence {self.confidence:g}")
        if self.accepted:
            return (f"ACCEPT: f is consistent with being {self.eps:g}-close to a size-{self.s} "
                    f"decision tree; f is {self.threshold + self.eps:g}-close to the "
                    f"depth-{depth} tree T_seed at confidence {self.confidence:g} ({measured})")
        far = (f"dist(T_seed, f) > {max(self.threshold - self.eps, 0.0):g} at confidence "
               f"{self.confidence:g}")
        if self.theory_complete:
            return (f"REJECT: f is not {self.eps:g}-close to a size-{self.s} decision tree, "
                    f"unless an event of probability <= {2 * self.delta:g} occurred "
                    f"(theory preset, kappa >= {THEORY_THRESHOLD_FACTOR:g}); {far} "
                    f"({measured})")
        return (f"REJECT: {far}: f is far from the depth-{depth} tree T_seed this "
                f"reconstructor built ({self.preset} preset, kappa = "
                f"{self.threshold_factor:g}: no claim about all size-{self.s} trees) "
                f"({measured})")

    @property
    def theory_complete(self) -> bool:
        """Does the proof make a rejection mean "not ``eps``-close to a size-``s`` tree"?

        True for theory parameters with the default constants, built for a
        size ``>= s``, an ``eps`` and ``delta`` no larger than the test's, and
        ``threshold_factor >= THEORY_THRESHOLD_FACTOR`` (docs/theory.md §3).
        """
        return _theory_complete(self.params, self.threshold_factor, self.s, self.eps,
                                self.delta)

    def __str__(self) -> str:
        return (f"{self.verdict()}\n  queries to f: {self.queries} "
                f"({self.reconstructor_queries} by the reconstructor, "
                f"{self.oracle_queries} at the test points); {self.preset} preset, "
                f"seed {self.seed}")


def _test_points(seed: int, n: int, m: int) -> np.ndarray:
    return derive.sample_points(seed, _TESTER_PURPOSE, n, m)


def tolerant_test(oracle: Oracle, s: int, eps: float, delta: float, seed: int, *,
                  preset: str = "practical", params: Params | None = None,
                  threshold_factor: float = THRESHOLD_FACTOR,
                  samples: int | None = None,
                  constants: TheoryConstants = TheoryConstants(),
                  depth: int | None = None, noise_rate: float | None = None,
                  score_samples: int | None = None, leaf_samples: int | None = None,
                  max_queries: int | None = DEFAULT_MAX_QUERIES) -> TestResult:
    """Tolerant tester for size-``s`` decision trees (Corollary "Tolerant testing").

    Draws ``m = ceil(ln(1/delta) / (2 eps^2))`` uniform points (samples
    ``0 .. m-1`` of purpose ``"tester"``, empty path, under ``seed``),
    evaluates ``f`` and ``T_seed = Reconstructor(oracle, params)`` on them,
    and rejects iff the fraction of disagreements exceeds
    ``kappa * eps`` (``kappa = threshold_factor``).

    Guarantees (``m`` as above; one-sided Hoeffding, ``exp(-2 m eps^2) <= delta``):

    * *any preset*: if ``f`` is ``(kappa + 1) eps``-far from every decision
      tree of depth ``params.path_length`` (for instance because it is that
      far from every tree of size ``2^path_length``, a class containing them),
      it rejects w.p. ``>= 1 - delta``; if ``dist(T_seed, f) <= (kappa - 1)
      eps`` it accepts w.p. ``>= 1 - delta``.
    * *theory preset* (default constants): if ``opt_s <= eps`` then w.p.
      ``>= 1 - delta`` ``dist(T_seed, f) <= 20 opt_s + 11 eps <= 31 eps``
      (Lemma "Correctness of Reconstructor" with the constants of
      docs/theory.md §1), so it accepts w.p. ``>= 1 - 2 delta`` when
      ``kappa >= THEORY_THRESHOLD_FACTOR = 32``. With the default
      ``kappa = 2`` this completeness is not proved.
    * *practical preset*: nothing beyond the first bullet; the reconstructor
      is heuristic (see :func:`tolerant_test_params` for what it keeps).

    Args:
        oracle: query access to ``f``.
        s: target size (leaves), ``>= 1``.
        eps: distance parameter in ``(0, 1]`` (theory preset: ``(0, 0.5)``).
        delta: failure probability in ``(0, 1)``.
        seed: fixes the tree ``T_seed`` and the test points.
        preset: ``"practical"`` (default) or ``"theory"``; ignored when
            ``params`` is given.
        params: explicit reconstructor parameters (overrides ``preset``).
        threshold_factor: ``kappa`` (default :data:`THRESHOLD_FACTOR`).
        samples: override ``m``.
        constants: the theory preset's constants.
        depth, noise_rate, score_samples, leaf_samples: practical overrides.
        max_queries: refuse (``ValueError``) when the plan's worst-case query
            count exceeds this; ``None`` never refuses.

    Returns:
        :class:`TestResult`; a deterministic function of the arguments.
    """
    if not isinstance(oracle, Oracle):
        raise TypeError("The 'oracle' parameter of tolerant_test must be an "
                        f"lca.oracle.Oracle. Got {type(oracle).__name__} instead.")
    _oracle_n(oracle)
    seed = check_seed("tolerant_test", seed)
    plan = plan_tolerant_test(oracle.n, s, eps, delta, preset=preset, params=params,
                              threshold_factor=threshold_factor, samples=samples,
                              constants=constants, depth=depth, noise_rate=noise_rate,
                              score_samples=score_samples, leaf_samples=leaf_samples)
    if max_queries is not None:
        max_queries = check_int("tolerant_test", "max_queries", max_queries, 1)
        if plan.worst_case_queries > max_queries:
            raise ValueError(
                f"tolerant_test: the {plan.preset} plan may need up to "
                f"{plan.worst_case_queries:.3g} queries to f (depth {plan.params.depth}, "
                f"{plan.params.score_samples} samples per node, "
                f"{plan.params.leaf_samples} per leaf, m={plan.samples}), more than "
                f"max_queries={max_queries}; pass max_queries=None "
                "(lca test: --max-queries 0) to run it anyway"
            )
    points = _test_points(seed, oracle.n, plan.samples)
    counting = CountingOracle(oracle)
    # A copy: the points are used again below, and an oracle may write into
    # its input.
    values = counting.query(points.copy())
    rec = Reconstructor(oracle, plan.params)
    answers = rec.answer_many(points, seed)
    disagreements = int(np.count_nonzero(values != answers))
    m = plan.samples
    estimate = disagreements / m
    half = hoeffding_halfwidth(m, plan.delta)
    return TestResult(
        accepted=estimate <= plan.threshold,
        disagreement=estimate,
        disagreements=disagreements,
        confidence_interval=(max(0.0, estimate - half), min(1.0, estimate + half)),
        confidence=1 - plan.delta,
        samples=m,
        queries=rec.stats.queries + counting.queries,
        reconstructor_queries=rec.stats.queries,
        oracle_queries=counting.queries,
        threshold=plan.threshold,
        threshold_factor=plan.threshold_factor,
        s=plan.s,
        eps=plan.eps,
        delta=plan.delta,
        seed=seed,
        preset=plan.preset,
        params=plan.params,
    )


class ReconstructedFunction(Oracle):
    """The tree ``T_seed`` a :class:`~lca.Reconstructor` answers from, as an oracle.

    Lets exact tools (``lca.exact.truth_table``, ``fourier_degree``, ...)
    inspect the reconstructed tree: ``truth_table(ReconstructedFunction(rec,
    seed))`` evaluates ``T_seed`` on all ``2^n`` points.
    """

    def __init__(self, reconstructor: Reconstructor, seed: int) -> None:
        if not isinstance(reconstructor, Reconstructor):
            raise TypeError("The 'reconstructor' parameter of ReconstructedFunction must "
                            "be an lca.Reconstructor. Got "
                            f"{type(reconstructor).__name__} instead.")
        self.reconstructor = reconstructor
        self.seed = check_seed("ReconstructedFunction", seed)
        self.n = reconstructor.params.n
        self.depth = reconstructor.params.path_length
        self.name = f"T_{self.seed}({reconstructor.oracle.name})"

    def query(self, points: np.ndarray) -> np.ndarray:
        return self.reconstructor.answer_many(points, self.seed)


# --------------------------------------------------------------------------
# distance estimation


class Tester(Protocol):
    """Anything called as ``tester(oracle, s, eps)`` returning an object with ``.accepted``.

    ``functools.partial(tolerant_test, delta=0.05, seed=1)`` is one;
    :class:`ExactTester` is another.
    """

    def __call__(self, oracle: Oracle, s: int, eps: float) -> Any: ...


@dataclass(frozen=True)
class DistanceEstimate:
    """Result of :func:`estimate_distance`.

    Attributes:
        eta: the largest grid ``eps`` the tester rejected, ``0`` if none.
        lower, upper: the lemma's bracket ``eta <= opt_s <= c * eta + gamma``
            (``upper`` is ``c * eta + gamma``, not clipped).
        gamma, c, s: the inputs.
        grid: the ``eps`` values ``gamma/c, 2 gamma/c, ..., 1``.
        outcomes: ``(eps, accepted)`` for every tester call made, in call order
            (from the top of the grid down).
    """

    eta: float
    lower: float
    upper: float
    gamma: float
    c: float
    s: int
    grid: tuple[float, ...]
    outcomes: tuple[tuple[float, bool], ...]

    @property
    def calls(self) -> int:
        """Tester calls made (at most ``len(grid)``)."""
        return len(self.outcomes)


MAX_GRID = 10 ** 6
""":func:`epsilon_grid` refuses more points than this (each costs a tester call)."""


def epsilon_grid(gamma: float, c: float) -> tuple[float, ...]:
    """``eps_j = j * gamma / c`` for ``j = 1 .. J``, ``J = ceil(c / gamma)``, last clipped to 1.

    ``J`` may be at most :data:`MAX_GRID` (``ValueError`` otherwise).

    ``c / gamma`` within ``1e-9`` of an integer counts as that integer, so
    ``gamma = 0.1, c = 1`` gives exactly ten values, ``0.1, 0.2, ..., 1.0``.
    """
    gamma = check_real("epsilon_grid", "gamma", gamma, 0.0, 1.0)
    c = check_real("epsilon_grid", "c", c, 1.0, math.inf, open_low=False)
    ratio = c / gamma
    if not ratio <= MAX_GRID:  # also inf
        raise ValueError(f"epsilon_grid: J = ceil(c / gamma) must be at most {MAX_GRID} "
                         f"(one tester call each); got c / gamma = {ratio:.3g} for "
                         f"gamma={gamma!r}, c={c!r}; raise 'gamma' or lower 'c'")
    count = round(ratio) if abs(ratio - round(ratio)) < 1e-9 else math.ceil(ratio)
    # j * gamma / c computed exactly from the shortest decimals of gamma and c
    # (their repr) and rounded once, so gamma = 0.1 gives 0.3, not 0.30000000000000004.
    step = Fraction(repr(gamma)) / Fraction(repr(c))
    return tuple(min(1.0, float(j * step)) for j in range(1, count + 1))


def estimate_distance(tester: Tester, oracle: Oracle, s: int, gamma: float,
                      c: float) -> DistanceEstimate:
    """Distance of ``f`` to size-``s`` trees from a tolerant tester (Lemma "distance-estimator").

    The lemma runs ``tester(oracle, s, eps)`` for ``eps = gamma/c, 2 gamma/c,
    ..., 1`` and returns ``eta``, the largest ``eps`` that rejected (``0`` if
    none). If the tester accepts every ``f`` that is ``eps``-close to size-``s``
    trees and rejects every ``f`` that is ``c eps``-far, then
    ``eta <= opt_s(f) <= c * eta + gamma`` (w.h.p. for a randomized tester:
    failure at most the sum of the calls' failure probabilities).

    The grid is scanned from the top down and stops at the first rejection,
    which *is* the largest rejected ``eps``: the same ``eta`` with at most
    ``ceil(c / gamma)`` calls.
    """
    owner = "estimate_distance"
    if not callable(tester):
        raise TypeError(f"The 'tester' parameter of {owner} must be callable as "
                        f"tester(oracle, s, eps). Got {type(tester).__name__} instead.")
    if not isinstance(oracle, Oracle):
        raise TypeError(f"The 'oracle' parameter of {owner} must be an lca.oracle.Oracle. "
                        f"Got {type(oracle).__name__} instead.")
    _oracle_n(oracle)
    s = check_int(owner, "s", s, 1)
    gamma = check_real(owner, "gamma", gamma, 0.0, 1.0)
    c = check_real(owner, "c", c, 1.0, math.inf, open_low=False)
    grid = epsilon_grid(gamma, c)
    outcomes = []
    eta = 0.0
    for eps in reversed(grid):
        result = tester(oracle, s, eps)
        accepted = getattr(result, "accepted", None)
        if not isinstance(accepted, (bool, np.bool_)):
            raise TypeError(f"{owner}: the tester must return an object with a bool "
                            f"'accepted' attribute; got {result!r}")
        outcomes.append((eps, bool(accepted)))
        if not accepted:
            eta = eps
            break
    return DistanceEstimate(eta=eta, lower=eta, upper=c * eta + gamma, gamma=gamma, c=c,
                            s=s, grid=grid, outcomes=tuple(outcomes))


@dataclass(frozen=True)
class ExactTestResult:
    """Outcome of :class:`ExactTester`: ``accepted`` iff ``opt <= threshold``."""

    accepted: bool
    opt: float
    eps: float
    s: int
    threshold: float


class _OptCache:
    """``opt_s`` of oracles and restrictions, keyed by identity of the base oracle.

    Keeps a reference to every base oracle it has seen, so an ``id`` is never
    reused while its entry lives; a restriction is keyed by its *set* of fixed
    coordinates (the order a path fixed them does not change ``f_alpha``).
    """

    def __init__(self) -> None:
        self._values: dict[tuple[int, frozenset, int], float] = {}
        self._bases: dict[int, Oracle] = {}

    def opt(self, oracle: Oracle, s: int) -> float:
        base, path = (oracle.base, oracle.path) if isinstance(oracle, Restriction) \
            else (oracle, ())
        key = (id(base), frozenset(path), s)
        if key not in self._values:
            self._bases[id(base)] = base
            table, _ = exact.restrict(base, path)
            self._values[key] = exact.opt_size(table, s).distance
        return self._values[key]


class ExactTester:
    """A deterministic tolerant tester for ``n <= 12`` built on :func:`lca.exact.opt_size`.

    ``tester(oracle, s, eps)`` accepts iff ``opt_s(f) <= slack * eps``, with
    ``opt_s`` the exact distance to the closest tree of at most ``s`` leaves.
    For every ``c >= slack >= 1`` it is an exact ``(eps, c eps)`` tester:
    it accepts every ``eps``-close ``f`` and rejects every ``f`` with
    ``opt_s > c eps`` — with no failure probability, so
    :func:`estimate_distance` with it satisfies the lemma's bracket always.

    ``opt_s`` is computed once per ``(oracle, s)`` and cached (the cache
    holds a reference to the oracle).
    """

    def __init__(self, slack: float = 1.0) -> None:
        self.slack = check_real("ExactTester", "slack", slack, 1.0, math.inf,
                                open_low=False)
        self._cache = _OptCache()
        self.calls = 0

    def opt(self, oracle: Oracle, s: int) -> float:
        """``opt_s(f)``, exactly (cached)."""
        return self._cache.opt(oracle, s)

    def __call__(self, oracle: Oracle, s: int, eps: float) -> ExactTestResult:
        if not isinstance(oracle, Oracle):
            raise TypeError("The 'oracle' parameter of ExactTester must be an "
                            f"lca.oracle.Oracle. Got {type(oracle).__name__} instead.")
        s = check_int("ExactTester", "s", s, 1)
        eps = check_real("ExactTester", "eps", eps, 0.0, 1.0, open_high=False)
        self.calls += 1
        opt = self.opt(oracle, s)
        threshold = self.slack * eps
        return ExactTestResult(accepted=opt <= threshold, opt=opt, eps=eps, s=s,
                               threshold=threshold)

    def __repr__(self) -> str:
        return f"ExactTester(slack={self.slack:g})"


# --------------------------------------------------------------------------
# BuildDT


def _check_path(path: Any, n: int, owner: str) -> Path:
    return derive.check_path(path, n, owner)


class Restriction(Oracle):
    """``f_alpha``: ``f`` with the coordinates of ``path`` fixed (an oracle on all ``n``).

    ``query`` overwrites the fixed coordinates of each row with the path's
    values before asking ``f``, so ``f_alpha`` ignores them; its distance to
    size-``s`` trees over ``{-1,1}^n`` equals that of ``f`` restricted to the
    subcube. A restriction of a restriction is flattened.
    """

    def __init__(self, base: Oracle, path: Path = ()) -> None:
        if not isinstance(base, Oracle):
            raise TypeError("The 'base' parameter of Restriction must be an "
                            f"lca.oracle.Oracle. Got {type(base).__name__} instead.")
        _oracle_n(base)
        if isinstance(base, Restriction):
            path = tuple(base.path) + tuple(path)
            base = base.base
        self.base = base
        self.n = base.n
        self.path = _check_path(path, base.n, "Restriction")
        self.name = f"{base.name}|{_format_path(self.path)}"
        self._vars = np.array([v for v, _ in self.path], dtype=np.int64)
        self._values = np.array([b for _, b in self.path], dtype=np.int8)

    @property
    def free_variables(self) -> tuple[int, ...]:
        """Variables not on the path, increasing."""
        fixed = {v for v, _ in self.path}
        return tuple(i for i in range(self.n) if i not in fixed)

    def restrict(self, variable: int, value: int) -> Restriction:
        """``f_{alpha, x_variable = value}``."""
        return Restriction(self.base, self.path + ((variable, value),))

    def query(self, points: np.ndarray) -> np.ndarray:
        if self.path:
            points = points.copy()
            points[:, self._vars] = self._values
        return self.base.query(points)

    def describe(self, variable: int, bit: int, path: Path = ()) -> str:
        """The base oracle's description, with this restriction's path as ancestors."""
        return self.base.describe(variable, bit, self.path + tuple(path))


def _format_path(path: Path) -> str:
    return ",".join(f"x{v}={'+' if b > 0 else '-'}1" for v, b in path) or "root"


class DistanceEstimator(Protocol):
    """``estimator(f_alpha, s, gamma) -> eta`` with ``eta <= opt_s(f_alpha) <= c eta + gamma``.

    ``f_alpha`` is a :class:`Restriction`. :class:`ExactDistance` (``c = 1``,
    exact) and :class:`DistanceFromTester` (Lemma "distance-estimator") are two.
    """

    def __call__(self, function: Restriction, s: int, gamma: float) -> float: ...


class ExactDistance:
    """``eta = opt_s(f_alpha)`` exactly, by :func:`lca.exact.opt_size` (``n <= 12``).

    Satisfies the estimator condition with ``c = 1`` and any ``gamma >= 0``.
    Results are cached by ``(set of fixed coordinates, s)``: the order in which
    a path fixed its coordinates does not change ``f_alpha``.
    """

    def __init__(self) -> None:
        self._cache = _OptCache()
        self.calls = 0

    def __call__(self, function: Restriction, s: int, gamma: float = 0.0) -> float:
        self.calls += 1
        return self._cache.opt(function, s)


class DistanceFromTester:
    """Lemma "distance-estimator" as a :class:`DistanceEstimator`: ``estimate_distance(...).eta``.

    Args:
        tester: a :class:`Tester`, e.g. ``functools.partial(tolerant_test,
            delta=0.05, seed=1)``.
        c: the tester's gap constant (accepts ``eps``-close, rejects
            ``c eps``-far). For :func:`tolerant_test` the nominal value is
            ``kappa + 1`` (see :data:`THRESHOLD_FACTOR`).
    """

    def __init__(self, tester: Tester, c: float) -> None:
        if not callable(tester):
            raise TypeError("The 'tester' parameter of DistanceFromTester must be callable. "
                            f"Got {type(tester).__name__} instead.")
        self.tester = tester
        self.c = check_real("DistanceFromTester", "c", c, 1.0, math.inf, open_low=False)
        self.calls = 0
        self.tester_calls = 0

    def __call__(self, function: Restriction, s: int, gamma: float) -> float:
        result = estimate_distance(self.tester, function, s, gamma, self.c)
        self.calls += 1
        self.tester_calls += result.calls
        return result.eta


@dataclass(frozen=True)
class BuildReport:
    """Result of :func:`build_dt_report`.

    Attributes:
        tree: the learned tree (at most ``s`` leaves, depth at most ``d``).
        estimator_calls: calls to the distance estimator.
        splits: recursive calls that split (at most ``s - 1``).
        leaves: recursive calls that returned a leaf.
    """

    tree: Any
    estimator_calls: int
    splits: int
    leaves: int


def builddt_error_bound(opt: float, s: int, d: int, gamma: float, c: float) -> float:
    """Lemma "Error of BuildDT": ``c^d opt + gamma (c^d - 1)/(c - 1) + s / 2^(d+2)``.

    For ``c = 1`` the middle term is its limit ``gamma * d``.
    """
    geometric = gamma * d if c == 1 else gamma * (c ** d - 1) / (c - 1)
    return c ** d * opt + geometric + s / 2 ** (d + 2)


def _finite_estimate(value: Any, where: str) -> float:
    try:
        return check_real("build_dt", "distance estimate", value, -math.inf, math.inf)
    except (TypeError, ValueError):
        raise TypeError(f"build_dt: the distance estimator must return a finite real "
                        f"number; got {show(value)} at {where}") from None


def build_dt_report(oracle: Oracle, s: int, d: int, gamma: float, *,
                    distance_estimator: DistanceEstimator | Callable[..., float],
                    mean_samples: int | None = None, seed: int = 0,
                    path: Path = ()) -> BuildReport:
    """Figure "BuildDT" with its work counters; see :func:`build_dt`."""
    owner = "build_dt"
    if not isinstance(oracle, Oracle):
        raise TypeError(f"The 'oracle' parameter of {owner} must be an lca.oracle.Oracle. "
                        f"Got {type(oracle).__name__} instead.")
    _oracle_n(oracle)
    s = check_int(owner, "s", s, 1)
    d = check_int(owner, "d", d, 0)
    gamma = check_real(owner, "gamma", gamma, 0.0, 1.0, open_low=False)
    if not callable(distance_estimator):
        raise TypeError(f"The 'distance_estimator' parameter of {owner} must be callable "
                        "as estimator(f_alpha, s, gamma). Got "
                        f"{type(distance_estimator).__name__} instead.")
    if mean_samples is not None:
        mean_samples = check_int(owner, "mean_samples", mean_samples, 1)
    seed = check_seed(owner, seed)
    root = Restriction(oracle, _check_path(path, oracle.n, owner))
    counters = {"estimator": 0, "splits": 0, "leaves": 0}

    def leaf(function: Restriction) -> int:
        counters["leaves"] += 1
        if mean_samples is None:
            total = exact.mean(function.base, function.path)
        else:
            key = derive.node_key(seed, _MEAN_PURPOSE, function.path)
            words = derive.uniform_points(key, function.n, 0, mean_samples, function.path)
            total = int(function.base.query(derive.unpack_points(words, function.n))
                        .sum(dtype=np.int64))
        # sign(E[f]) with sign(0) = +1, as the reconstructor's leaves and lca.exact.
        return 1 if total >= 0 else -1

    def estimate(function: Restriction, budget: int) -> float:
        counters["estimator"] += 1
        where = f"{_format_path(function.path)} with s={budget}"
        return _finite_estimate(distance_estimator(function, budget, gamma), where)

    def build(function: Restriction, budget: int, depth: int) -> Any:
        free = function.free_variables
        if budget == 1 or depth == 0 or not free:  # step 1 (and nothing left to query)
            return leaf(function)
        best: tuple[float, int, int] | None = None
        for var in free:  # step 2; ties keep the lowest variable, then the smallest s0
            minus, plus = function.restrict(var, -1), function.restrict(var, 1)
            eta_minus = [estimate(minus, s0) for s0 in range(1, budget)]
            eta_plus = [estimate(plus, budget - s0) for s0 in range(1, budget)]
            for s0 in range(1, budget):
                error = (eta_minus[s0 - 1] + eta_plus[s0 - 1]) / 2
                if best is None or error < best[0]:
                    best = (error, var, s0)
        assert best is not None
        _, var, s0 = best  # step 3
        counters["splits"] += 1
        return {"var": var,
                "minus": build(function.restrict(var, -1), s0, depth - 1),
                "plus": build(function.restrict(var, 1), budget - s0, depth - 1)}

    tree = DecisionTree.from_nested(build(root, s, d), oracle.n)
    return BuildReport(tree=tree, estimator_calls=counters["estimator"],
                       splits=counters["splits"], leaves=counters["leaves"])


def build_dt(oracle: Oracle, s: int, d: int, gamma: float, *,
             distance_estimator: DistanceEstimator | Callable[..., float],
             mean_samples: int | None = None, seed: int = 0, path: Path = ()) -> Any:
    """Properly learn a size-``s``, depth-``d`` tree (Figure "BuildDT").

    ``BuildDT(f, s, d, gamma)``: if ``s = 1`` or ``d = 0`` return the leaf
    ``sign(E[f])``; otherwise, for every free variable ``i`` and split
    ``s0 + s1 = s`` (``s0, s1 >= 1``) get ``eta(x_i=-1, s0)`` and
    ``eta(x_i=+1, s1)`` from the distance estimator, and recurse on the
    ``(i, s0, s1)`` minimising ``(eta(x_i=-1, s0) + eta(x_i=+1, s1)) / 2``.
    (The paper's ``x_i = 0 / 1`` are ``x_i = +1 / -1`` here; the ``"minus"``
    branch is ``x_i = -1``.) Variables already fixed are skipped, and a node
    with no free variable is a leaf.

    Lemma "Error of BuildDT": if every estimate satisfies
    ``eta <= opt <= c eta + gamma`` and the leaf means are exact,
    ``dist(T, f) <= builddt_error_bound(opt_s(f), s, d, gamma, c)``. With
    :class:`ExactDistance` (``c = 1``, exact) and exact means, a size-``s``
    tree is recovered exactly (as a function) whenever ``d >= s - 1``.

    Cost: at most ``s - 1`` splitting calls, each making
    ``2 (s - 1)`` estimator calls per free variable: at most
    ``2 n (s - 1)^2`` estimator calls in all (:class:`DistanceFromTester` makes up
    to ``ceil(c / gamma)`` tester calls per estimate).

    Args:
        oracle: query access to ``f``.
        s, d, gamma: the paper's size, depth and accuracy parameters.
        distance_estimator: ``estimator(f_alpha, s, gamma) -> eta``
            (:class:`DistanceEstimator`).
        mean_samples: ``None`` — leaf labels from the exact mean (enumerates the
            free subcube, at most 20 free variables); an int — from that many
            uniform samples of purpose ``"builddt-mean"`` at the leaf's path
            under ``seed`` (adds the estimate's error to each leaf, see the
            remark after the lemma).
        seed: used only by sampled means.
        path: start from ``f_path`` instead of ``f``.

    Returns:
        :class:`lca.targets.DecisionTree` over ``n`` variables; deterministic
        given a deterministic estimator.
    """
    return build_dt_report(oracle, s, d, gamma, distance_estimator=distance_estimator,
                           mean_samples=mean_samples, seed=seed, path=path).tree


# --------------------------------------------------------------------------
# command line


_TARGETS = ("tree", "parity", "majority", "random")


def _make_target(args: argparse.Namespace) -> Oracle:
    from lca import targets

    # Cross-option checks; lca.cli.main prints them as one "error:" line.
    if args.k is not None and args.target not in ("parity", "majority"):
        raise ValueError("argument --k: applies only to --target parity or majority")
    if args.leaves is not None and args.target != "tree":
        raise ValueError("argument --leaves: applies only to --target tree")
    if args.target == "tree":
        leaves = args.leaves if args.leaves is not None else args.s
        if leaves > 2 ** args.n:
            option = "--leaves" if args.leaves is not None else "--s (the default --leaves)"
            raise ValueError(f"argument {option}: a tree on --n {args.n} variables has at "
                             f"most 2**n leaves; got {leaves}")
        f = targets.random_tree(args.n, leaves, args.target_seed)
        description = f"random tree, {f.size} leaves, depth {f.depth}"
    elif args.target == "parity":
        k = args.k if args.k is not None else args.n
        if k > args.n:
            raise ValueError(f"argument --k: must be at most --n {args.n}; got {k}")
        f = targets.parity(args.n, k, args.target_seed)
        description = f"parity of {k} variables"
    elif args.target == "majority":
        k = args.k if args.k is not None else args.n - (1 - args.n % 2)
        f = targets.majority(args.n, k, args.target_seed)
        description = f"majority of {k} variables"
    else:
        # A constant with label noise 1/2: a fixed, uniformly random function.
        f = targets.with_label_noise(targets.random_tree(args.n, 1, args.target_seed),
                                     0.5, args.target_seed)
        description = "random function (label noise 1/2)"
    if args.noise:
        f = targets.with_label_noise(f, args.noise, args.target_seed + 1)
        description += f", label noise {args.noise:g}"
    print(f"target: {description}, n={args.n}")
    return f


def _run_test(args: argparse.Namespace) -> int:
    f = _make_target(args)
    plan = plan_tolerant_test(f.n, args.s, args.eps, args.delta, preset=args.preset,
                              threshold_factor=args.threshold_factor)
    print(plan.describe())
    max_queries = None if args.max_queries == 0 else args.max_queries
    result = tolerant_test(f, args.s, args.eps, args.delta, args.seed, preset=args.preset,
                           threshold_factor=args.threshold_factor, max_queries=max_queries)
    print(result)
    return 0


def add_test_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``lca test`` on an ``argparse`` subparsers object; returns the parser.

    ``lca test --target tree --n 20 --s 4 --eps 0.1 --seed 1`` prints the plan
    and a one-line verdict. Exit status 0 whether it accepts or rejects.
    """
    test = subparsers.add_parser(
        "test", help="tolerant test: is f close to a size-s decision tree?",
        description="Tolerant tester of Corollary 'Tolerant testing': compare f with "
                    "the reconstructed tree on m uniform points.")
    test.add_argument("--target", choices=_TARGETS, default="tree",
                      help="the function f (default: tree)")
    test.add_argument("--n", type=int_in(1, N_HIGH), default=20,
                      help="variables (default 20)")
    test.add_argument("--s", type=int_in(1), default=8,
                      help="size s to test for (default 8)")
    test.add_argument("--eps", type=real_in(0.0, 1.0, open_low=True), default=0.1,
                      help="distance eps (default 0.1)")
    test.add_argument("--delta", type=real_in(0.0, 1.0, open_low=True, open_high=True),
                      default=0.05, help="failure probability (default 0.05)")
    test.add_argument("--seed", type=int_in(0, SEED_HIGH), default=1,
                      help="tester seed (default 1)")
    # The label noise is seeded with target-seed + 1.
    test.add_argument("--target-seed", type=int_in(0, SEED_HIGH - 1), default=1,
                      help="seed of the target")
    test.add_argument("--leaves", type=int_in(1), default=None,
                      help="leaves of the tree target (default: s)")
    test.add_argument("--k", type=int_in(0), default=None,
                      help="variables of parity/majority (default: all n, odd for majority)")
    test.add_argument("--noise", type=real_in(0.0, 0.5), default=0.0,
                      help="label noise rate of f")
    test.add_argument("--preset", choices=("practical", "theory"), default="practical")
    test.add_argument("--threshold-factor", type=real_in(0.0, math.inf, open_low=True,
                                                         open_high=True),
                      default=THRESHOLD_FACTOR,
                      help=f"kappa: reject above kappa*eps (default {THRESHOLD_FACTOR:g})")
    test.add_argument("--max-queries", type=int_in(0), default=DEFAULT_MAX_QUERIES,
                      help="refuse plans needing more queries (0: no limit)")
    test.set_defaults(run=_run_test)
    return test
