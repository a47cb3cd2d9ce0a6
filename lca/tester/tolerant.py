"""The tolerant tester (Corollary "Tolerant testing") and what it plans, returns and tests.

:func:`tolerant_test` compares ``f`` with ``T_seed`` on ``m`` uniform points
and rejects when they disagree on more than ``kappa * eps`` of them (proved in
section "Proof of Corollary"); :func:`plan_tolerant_test` says what it will
do without querying ``f``. The points are samples ``0 .. m-1`` of purpose
``"tester"`` at the empty path, so a test is a deterministic function of
``(oracle, s, eps, delta, seed, parameters)``. :class:`ReconstructedFunction`
is ``T_seed`` as an oracle, for exact tools.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from lca import derive
from lca._validate import check_int, check_real, check_seed
from lca.oracle import CountingOracle, Oracle, oracle_n
from lca.params import Params, TheoryConstants, check_theory_overrides
from lca.reconstruct import Reconstructor
from lca.tester.bounds import hoeffding_halfwidth, hoeffding_samples, practical_depth

__all__ = [
    "THRESHOLD_FACTOR",
    "THEORY_THRESHOLD_FACTOR",
    "PRACTICAL_SCORE_SAMPLES",
    "DEFAULT_MAX_QUERIES",
    "tolerant_test_params",
    "TolerantTestPlan",
    "plan_tolerant_test",
    "TestResult",
    "tolerant_test",
    "ReconstructedFunction",
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
    oracle_n(oracle)
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
