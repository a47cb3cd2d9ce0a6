"""BuildDT (Figure "BuildDT", Lemma "Error of BuildDT") and restrictions.

With the exact estimator everything is deterministic and checked by
enumeration; the tester-based run uses fixed seeds.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from lca import exact, targets
from lca.targets import DecisionTree
from lca.tester import (
    THRESHOLD_FACTOR,
    BuildReport,
    DistanceFromTester,
    ExactDistance,
    Restriction,
    build_dt,
    build_dt_report,
    builddt_error_bound,
    tolerant_test,
)

from conftest import all_points

# These tests pin other behaviour on small, partly noisy functions whose answers
# may rest on guesswork; the warning itself is tested in tests/test_search.py.
pytestmark = pytest.mark.filterwarnings("ignore::lca.LowMarginWarning")



def noisy(n, leaves, rate, seed):
    return targets.with_label_noise(targets.random_tree(n, leaves, seed), rate, seed + 50)


class TestRestriction:
    def test_fixes_coordinates(self):
        f = targets.parity(5, 5, 0)
        g = Restriction(f, ((1, -1), (3, 1)))
        points = all_points(5)
        fixed = points.copy()
        fixed[:, 1], fixed[:, 3] = -1, 1
        assert np.array_equal(g(points), f(fixed))
        assert g.free_variables == (0, 2, 4) and g.n == 5

    def test_restrict_flattens_and_matches_exact_restrict(self):
        f = noisy(6, 5, 0.2, 1)
        g = Restriction(Restriction(f, ((2, 1),)), ((0, -1),))
        assert g.base is f and g.path == ((2, 1), (0, -1))
        assert g.restrict(5, 1).path == ((2, 1), (0, -1), (5, 1))
        table, free = exact.restrict(f, g.path)
        assert np.array_equal(exact.restrict(g, g.path)[0], table)
        # f_alpha as a function on all n coordinates has the subcube's optimum
        for s in (1, 2, 3):
            assert exact.opt_size(g, s).distance == exact.opt_size(table, s).distance

    @pytest.mark.parametrize("path, error, match", [
        ("x", TypeError, r"Restriction: path must be a tuple of \(variable, value\) pairs"),
        (((1,),), TypeError, r"Restriction: each path step must be a pair of ints"),
        (((7, 1),), ValueError, r"Restriction: path variable must be in \[0, 6\); got 7"),
        (((1, 0),), ValueError, r"Restriction: path value must be -1 or \+1; got 0"),
        (((1, 1), (1, -1)), ValueError, r"Restriction: path fixes variable 1 twice"),
    ])
    def test_bad_path(self, path, error, match):
        with pytest.raises(error, match=match):
            Restriction(noisy(6, 3, 0.0, 0), path)

    def test_bad_base(self):
        with pytest.raises(TypeError, match=r"The 'base' parameter of Restriction must be"):
            Restriction("f")


class TestExactEstimator:
    @pytest.mark.parametrize("n", [4, 5, 6])
    @pytest.mark.parametrize("s", [1, 2, 3, 4, 5])
    @pytest.mark.parametrize("seed", range(3))
    def test_recovers_random_trees_exactly(self, n, s, seed):
        """opt_s(f) = 0 and d = s - 1: the exact estimator reproduces f (as a function)."""
        f = targets.random_tree(n, s, seed, labels="sibling_differing" if seed == 2 else "iid")
        report = build_dt_report(f, s, s - 1, 0.0, distance_estimator=ExactDistance())
        assert isinstance(report.tree, DecisionTree)
        assert np.array_equal(exact.truth_table(report.tree), exact.truth_table(f))
        assert report.tree.size <= s and report.tree.depth <= max(s - 1, 0)
        assert report.splits <= s - 1
        assert report.estimator_calls <= 2 * n * (s - 1) ** 2

    @pytest.mark.parametrize("seed", range(4))
    @pytest.mark.parametrize("s, d", [(2, 1), (3, 1), (3, 2), (5, 2), (5, 3), (6, 4)])
    def test_lemma_bound_with_exact_estimates(self, seed, s, d):
        """Lemma "Error of BuildDT" with c = 1, gamma = 0: dist <= opt_s + s / 2^(d+2)."""
        f = noisy(6, 6, 0.15, seed)
        tree = build_dt(f, s, d, 0.0, distance_estimator=ExactDistance())
        opt = exact.opt_size(f, s).distance
        assert exact.distance(tree, f) <= builddt_error_bound(opt, s, d, 0.0, 1.0)
        assert tree.size <= s and tree.depth <= d

    @pytest.mark.parametrize("c, gamma", [(2.0, 0.05), (3.0, 0.1)])
    def test_lemma_bound_with_worst_case_underestimates(self, c, gamma):
        """An adversarial estimator at the bottom of the allowed range,
        eta = max(0, (opt - gamma) / c), still meets the lemma's bound."""
        exact_opt = ExactDistance()

        def pessimist(function, budget, g):
            return max(0.0, (exact_opt(function, budget) - g) / c)

        for seed in range(3):
            f = noisy(5, 5, 0.1, seed)
            for s, d in ((3, 2), (4, 2), (4, 3)):
                tree = build_dt(f, s, d, gamma, distance_estimator=pessimist)
                opt = exact.opt_size(f, s).distance
                assert exact.distance(tree, f) <= builddt_error_bound(opt, s, d, gamma, c)

    def test_estimator_sees_restrictions_and_budgets(self):
        calls = []

        def spy(function, budget, gamma):
            calls.append((function.path, budget, gamma))
            return 0.0

        build_dt(targets.random_tree(3, 2, 0), 3, 1, 0.25, distance_estimator=spy)
        # one split at the root: 3 variables x 2 branches x 2 budgets, gamma passed on
        assert len(calls) == 12 and {g for _, _, g in calls} == {0.25}
        assert {(path, budget) for path, budget, _ in calls} == {
            (((i, b),), k) for i in range(3) for b in (-1, 1) for k in (1, 2)}

    def test_sampled_means_are_deterministic(self):
        f = noisy(6, 4, 0.1, 3)
        one = build_dt(f, 4, 3, 0.0, distance_estimator=ExactDistance(), mean_samples=200,
                       seed=5)
        two = build_dt(f, 4, 3, 0.0, distance_estimator=ExactDistance(), mean_samples=200,
                       seed=5)
        assert one.to_nested() == two.to_nested()

    def test_sampled_means_change_only_close_leaves(self):
        """Sampled leaf means label like exact ones wherever the mean is not close to 0.

        The structure comes from the (exact) distance estimator only, so it is the
        same; a leaf of mean mu gets the other label only if the sum of its 200
        sampled values has the other sign: probability <= exp(-200 mu^2 / 2)
        (Hoeffding; derived bits treated as independent uniform bits). Summed over
        the leaves with |mu| >= 1/2 that is asserted < 1e-9; the leaves below 1/2
        may differ, and they bound the distance, exactly.
        """
        f = noisy(6, 4, 0.1, 3)
        samples = 200
        one = build_dt(f, 4, 3, 0.0, distance_estimator=ExactDistance(),
                       mean_samples=samples, seed=5)
        exact_tree = build_dt(f, 4, 3, 0.0, distance_estimator=ExactDistance())

        def shape(nested):
            if not isinstance(nested, dict):
                return None
            return nested["var"], shape(nested["minus"]), shape(nested["plus"])

        assert shape(one.to_nested()) == shape(exact_tree.to_nested())

        def leaves(nested, path=()):
            if not isinstance(nested, dict):
                yield path
                return
            for bit, side in ((-1, "minus"), (1, "plus")):
                yield from leaves(nested[side], path + ((nested["var"], bit),))

        close, failure = 0.0, 0.0
        for path in leaves(exact_tree.to_nested()):
            mean = exact.mean(f, path)
            if abs(mean) < 0.5:
                close += 2.0 ** -len(path)
            else:
                failure += math.exp(-samples * mean ** 2 / 2)
        assert failure < 1e-9
        assert exact.distance(one, exact_tree) <= close <= 0.25

    def test_start_path(self):
        f = targets.random_tree(5, 4, 1)
        tree = build_dt(f, 4, 3, 0.0, distance_estimator=ExactDistance(), path=((0, 1),))
        points = all_points(5)
        plus = points[points[:, 0] == 1]
        assert np.array_equal(tree(plus), f(plus))
        assert 0 not in set(tree.var[tree.var >= 0].tolist())


class TestErrorBound:
    def test_values(self):
        assert builddt_error_bound(0.1, 4, 2, 0.0, 1.0) == pytest.approx(0.1 + 4 / 16)
        assert builddt_error_bound(0.0, 4, 2, 0.1, 1.0) == pytest.approx(0.2 + 0.25)
        assert builddt_error_bound(0.1, 8, 3, 0.01, 2.0) == pytest.approx(
            8 * 0.1 + 0.01 * 7 + 8 / 32)

    def test_theorem_parameters_give_eps(self):
        """Proof of Theorem "lower-bound": d = log(s'/eps') - 1 and
        gamma = eps' / (2 max(2, c)^d) give dist <= eps' when opt = 0."""
        for s_prime, eps_prime, c in ((8, 0.25, 2.0), (16, 0.125, 3.0), (4, 0.5, 1.5)):
            d = round(math.log2(s_prime / eps_prime)) - 1
            gamma = eps_prime / (2 * max(2.0, c) ** d)
            assert builddt_error_bound(0.0, s_prime, d, gamma, c) <= eps_prime + 1e-12


class TestWithTolerantTester:
    @pytest.mark.parametrize("seed", range(3))
    def test_runs_end_to_end(self, seed):
        """n = 6, s = 3 through tester -> distance estimator -> BuildDT. With these
        fixed seeds the learned tree computes the target exactly."""
        f = targets.random_tree(6, 3, seed)
        tester = functools.partial(tolerant_test, delta=0.05, seed=3)
        estimator = DistanceFromTester(tester, THRESHOLD_FACTOR + 1)
        report = build_dt_report(f, 3, 2, 0.2, distance_estimator=estimator)
        assert isinstance(report, BuildReport)
        assert report.tree.size <= 3 and report.tree.depth <= 2
        assert report.estimator_calls == estimator.calls == 6 * 4 + 5 * 2
        assert estimator.tester_calls <= report.estimator_calls * 15
        assert exact.distance(report.tree, f) == 0

    def test_noisy_target(self):
        f = noisy(6, 3, 0.1, 0)
        tester = functools.partial(tolerant_test, delta=0.05, seed=1)
        tree = build_dt(f, 3, 2, 0.2, distance_estimator=DistanceFromTester(tester, 3.0))
        opt = exact.opt_size(f, 3).distance
        assert tree.size <= 3
        assert exact.distance(tree, f) <= opt + 0.1


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(oracle="f"), TypeError,
     r"The 'oracle' parameter of build_dt must be an lca.oracle.Oracle. Got str instead."),
    (dict(s=0), ValueError, r"The 's' parameter of build_dt must be an int in the range "
                            r"\[1, inf\). Got 0 instead."),
    (dict(d=-1), ValueError, r"The 'd' parameter of build_dt .* Got -1 instead."),
    (dict(gamma=1.0), ValueError,
     r"The 'gamma' parameter of build_dt must be a real number in the range \[0.0, 1.0\)"),
    (dict(distance_estimator=None), TypeError,
     r"The 'distance_estimator' parameter of build_dt must be callable as "
     r"estimator\(f_alpha, s, gamma\). Got NoneType instead."),
    (dict(distance_estimator=lambda f, s, g: float("nan")), TypeError,
     r"build_dt: the distance estimator must return a finite real number; got nan at "
     r"x0=-1 with s=1"),
    (dict(mean_samples=0), ValueError, r"The 'mean_samples' parameter of build_dt"),
    (dict(path=((9, 1),)), ValueError, r"build_dt: path variable must be in \[0, 4\); got 9"),
])
def test_bad_arguments(kwargs, error, match):
    call = dict(oracle=targets.random_tree(4, 3, 0), s=3, d=2, gamma=0.0,
                distance_estimator=ExactDistance())
    call.update(kwargs)
    with pytest.raises(error, match=match):
        build_dt(call.pop("oracle"), call.pop("s"), call.pop("d"), call.pop("gamma"), **call)
