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

Each name is importable from here; it lives in one of

* :mod:`lca.tester.bounds` — Hoeffding sample counts and widths, the practical depth;
* :mod:`lca.tester.tolerant` — the tester: its parameters, plan, result, ``T_seed`` as an oracle;
* :mod:`lca.tester.distance` — distance estimation, the exact tester, restrictions
  ``f_alpha`` and the distance estimators BuildDT takes;
* :mod:`lca.tester.builddt` — BuildDT and its error bound;
* :mod:`lca.tester.cli` — the ``lca test`` command.
"""

from lca.tester.bounds import hoeffding_halfwidth, hoeffding_samples, practical_depth
from lca.tester.builddt import BuildReport, build_dt, build_dt_report, builddt_error_bound

# importable here, as for lca.cli; not in __all__ (a redundant alias re-exports it)
from lca.tester.cli import add_test_command as add_test_command
from lca.tester.distance import (
    MAX_GRID,
    DistanceEstimate,
    DistanceEstimator,
    DistanceFromTester,
    ExactDistance,
    ExactTester,
    ExactTestResult,
    Restriction,
    Tester,
    epsilon_grid,
    estimate_distance,
)
from lca.tester.tolerant import (
    DEFAULT_MAX_QUERIES,
    PRACTICAL_SCORE_SAMPLES,
    THEORY_THRESHOLD_FACTOR,
    THRESHOLD_FACTOR,
    ReconstructedFunction,
    TestResult,
    TolerantTestPlan,
    plan_tolerant_test,
    tolerant_test,
    tolerant_test_params,
)

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
