"""Tolerant tester (Corollary "Tolerant testing") and distance estimation.

Distance estimation is Lemma "Tolerant testing => distance estimation".

Seeds are fixed, so every test here is deterministic. The failure
probabilities quoted in docstrings say how often a *fresh* seed would fail
the same check; they are what the seeds were not chosen against.
"""

from __future__ import annotations

import argparse
import functools
import math

import numpy as np
import pytest

from lca import derive, exact, targets
from lca.oracle import Oracle
from lca.params import Params, TheoryConstants
from lca.reconstruct import Reconstructor
from lca.tester import (
    DEFAULT_MAX_QUERIES,
    PRACTICAL_SCORE_SAMPLES,
    THEORY_THRESHOLD_FACTOR,
    THRESHOLD_FACTOR,
    DistanceEstimate,
    ExactTester,
    ReconstructedFunction,
    TestResult,
    add_test_command,
    epsilon_grid,
    estimate_distance,
    hoeffding_halfwidth,
    hoeffding_samples,
    plan_tolerant_test,
    practical_depth,
    tolerant_test,
    tolerant_test_params,
)

from conftest import all_points

# These tests pin other behaviour on small, partly noisy functions whose answers
# may rest on guesswork; the warning itself is tested in tests/test_search.py.
pytestmark = pytest.mark.filterwarnings("ignore::lca.LowMarginWarning")


EPS, DELTA = 0.1, 0.05
M = 150  # ceil(ln(20) / (2 * 0.01))


def random_function(n, seed):
    """A fixed uniformly random function: a constant with label noise 1/2."""
    return targets.with_label_noise(targets.random_tree(n, 1, seed), 0.5, seed)


class Recording(Oracle):
    """Pass-through oracle that keeps every batch it was asked."""

    def __init__(self, inner):
        self.inner, self.n, self.name, self.batches = inner, inner.n, "recording", []

    def query(self, points):
        self.batches.append(points.copy())
        return self.inner.query(points)


class TestFormulas:
    def test_hoeffding_samples_is_the_proofs_m(self):
        assert hoeffding_samples(EPS, DELTA) == M == math.ceil(math.log(1 / DELTA) / 0.02)
        assert hoeffding_samples(0.05, 0.01) == math.ceil(math.log(100) / (2 * 0.05 ** 2))
        assert hoeffding_samples(1.0, 0.9) == 1
        # exp(-2 m eps^2) <= delta, and m is the least such integer
        m = hoeffding_samples(0.07, 0.003)
        assert math.exp(-2 * m * 0.07 ** 2) <= 0.003 < math.exp(-2 * (m - 1) * 0.07 ** 2)

    def test_halfwidth(self):
        assert hoeffding_halfwidth(M, DELTA) == pytest.approx(math.sqrt(math.log(40) / 300))

    @pytest.mark.parametrize("s, eps, depth", [
        (1, 0.1, 0), (2, 0.1, 1), (3, 0.1, 2), (4, 0.1, 3), (8, 0.1, 7), (16, 0.1, 8),
        (4, 1.0, 2), (4, 0.5, 3), (64, 0.25, 8), (1, 1.0, 0),
    ])
    def test_practical_depth(self, s, eps, depth):
        assert practical_depth(s, eps) == depth
        if depth < s - 1:  # the truncation bound s / 2^(D+2) <= eps / 4
            assert s / 2 ** (depth + 2) <= eps / 4

    def test_practical_params(self):
        params = tolerant_test_params(20, 4, EPS, DELTA)
        assert (params.depth, params.score_samples, params.preset) == (
            3, PRACTICAL_SCORE_SAMPLES, "practical")
        assert params.requested_noise_rate == pytest.approx(EPS / 2)
        assert params.leaf_samples == math.ceil(2 / EPS ** 2 * math.log(2 * 8 / DELTA))
        custom = tolerant_test_params(20, 4, EPS, DELTA, depth=5, noise_rate=0.2,
                                      score_samples=7, leaf_samples=9)
        assert (custom.depth, custom.requested_noise_rate, custom.score_samples,
                custom.leaf_samples) == (5, 0.2, 7, 9)

    def test_theory_params_are_from_theory(self):
        constants = TheoryConstants(depth=0.5)
        theory = tolerant_test_params(30, 8, EPS, DELTA, preset="theory", constants=constants)
        assert theory == Params.from_theory(8, EPS, DELTA, 30, constants)
        # s = 1 uses the s = 2 formulas (log2 1 = 0 leaves them undefined)
        assert tolerant_test_params(30, 1, EPS, DELTA, preset="theory") == \
            Params.from_theory(2, EPS, DELTA, 30)

    def test_plan(self):
        plan = plan_tolerant_test(20, 4, EPS, DELTA)
        assert (plan.samples, plan.threshold, plan.threshold_factor) == (M, 0.2, 2.0)
        assert THRESHOLD_FACTOR == 2.0
        # m points, 7 internal nodes of 2000 queries, 8 leaves
        assert plan.worst_case_queries == M + 7 * 2000 + 8 * plan.params.leaf_samples
        text = plan.describe()
        for needle in ("points m              150", "threshold             0.2",
                       "0.3-far from every depth-3 tree", "dist(T_seed, f) <= 0.1"):
            assert needle in text


class TestDecisions:
    @pytest.mark.parametrize("s", [2, 4, 8])
    @pytest.mark.parametrize("seed", [0, 1, 2])
    def test_accepts_noise_free_trees_of_size_s(self, s, seed):
        """A fresh seed fails only if the reconstructed tree has dist(T, f) > 0.1
        (here it is exact: disagreement 0) or by Hoeffding, w.p. <= delta = 0.05."""
        f = targets.random_tree(20, s, seed)
        result = tolerant_test(f, s, EPS, DELTA, seed + 10)
        assert result.accepted and result.decision == "accept"
        assert result.disagreements == 0

    @pytest.mark.parametrize("seed", [0, 1, 2])
    def test_accepts_a_tree_with_label_noise_below_eps(self, seed):
        """opt_4 <= ~0.05: accept unless the empirical disagreement exceeds 0.2;
        Hoeffding bounds that by exp(-2 m 0.15^2) ~ 1e-3 per fresh seed."""
        f = targets.with_label_noise(targets.random_tree(20, 4, seed), 0.05, seed)
        assert tolerant_test(f, 4, EPS, DELTA, seed).accepted

    @pytest.mark.parametrize("seed", [0, 1, 2, 3])
    def test_rejects_parity_of_many_variables(self, seed):
        """dist(T, parity_12) = 1/2 exactly for any tree of depth 3 < 12, so a fresh
        seed accepts w.p. <= exp(-2 m (0.5 - 0.2)^2) = exp(-27)."""
        f = targets.parity(20, 12, seed)
        result = tolerant_test(f, 4, EPS, DELTA, seed)
        assert not result.accepted and result.decision == "reject"
        assert result.confidence_interval[0] > result.threshold - EPS

    @pytest.mark.parametrize("seed", [0, 1, 2, 3])
    def test_rejects_a_random_function(self, seed):
        """A random function is ~1/2-far from every fixed tree; a fresh seed
        accepts w.p. <= exp(-2 m 0.25^2) ~ 7e-9 (given dist(T, f) >= 0.45)."""
        result = tolerant_test(random_function(20, seed), 4, EPS, DELTA, seed)
        assert not result.accepted

    def test_rejects_majority_of_all_variables(self):
        result = tolerant_test(targets.majority(21, 21, 0), 4, EPS, DELTA, 0)
        assert not result.accepted


@pytest.fixture(scope="module")
def result():
    f = targets.with_label_noise(targets.random_tree(12, 4, 3), 0.1, 4)
    return tolerant_test(f, 4, EPS, DELTA, 9)


class TestResultObject:
    def test_fields(self, result):
        assert isinstance(result, TestResult)
        assert result.samples == result.oracle_queries == M
        assert result.queries == result.reconstructor_queries + M
        assert result.reconstructor_queries > 0
        assert result.disagreement == result.disagreements / M
        low, high = result.confidence_interval
        half = hoeffding_halfwidth(M, DELTA)
        assert low == pytest.approx(max(0.0, result.disagreement - half))
        assert high == pytest.approx(min(1.0, result.disagreement + half))
        assert result.confidence == 1 - DELTA
        assert result.threshold == THRESHOLD_FACTOR * EPS
        assert result.params == tolerant_test_params(12, 4, EPS, DELTA)
        assert (result.s, result.eps, result.delta, result.seed, result.preset) == (
            4, EPS, DELTA, 9, "practical")
        with pytest.raises(AttributeError):
            result.accepted = False  # frozen

    def test_verdict_text(self, result):
        text = str(result)
        assert text.startswith("ACCEPT" if result.accepted else "REJECT")
        assert f"m={M} points" in text and "confidence 0.95" in text
        assert "queries to f" in text

    def test_rejection_claims_size_s_only_when_the_theory_supports_it(self, result):
        import dataclasses

        rejected = dataclasses.replace(result, accepted=False)
        assert not rejected.theory_complete
        assert "no claim about all size-4 trees" in rejected.verdict()
        theory = Params.from_theory(4, EPS, DELTA, 12)
        smaller = Params.from_theory(2, EPS, DELTA, 12)  # built for the wrong size
        for params, kappa, complete in ((theory, 2.0, False),
                                        (theory, THEORY_THRESHOLD_FACTOR, True),
                                        (smaller, THEORY_THRESHOLD_FACTOR, False)):
            claimed = dataclasses.replace(rejected, params=params, preset="theory",
                                          threshold_factor=kappa)
            assert claimed.theory_complete is complete
            assert ("REJECT: f is not 0.1-close to a size-4 decision tree" in
                    claimed.verdict()) is complete

    def test_deterministic_in_the_seed(self, result):
        f = targets.with_label_noise(targets.random_tree(12, 4, 3), 0.1, 4)
        assert tolerant_test(f, 4, EPS, DELTA, 9) == result

    def test_test_points_are_derived_from_the_seed(self):
        f = Recording(targets.random_tree(10, 4, 0))
        tolerant_test(f, 4, EPS, DELTA, 5)
        key = derive.node_key(5, "tester", ())
        want = derive.unpack_points(derive.uniform_points(key, 10, 0, M), 10)
        assert any(np.array_equal(batch, want) for batch in f.batches)

    def test_disagreement_counts_the_reconstructed_tree(self):
        f = targets.with_label_noise(targets.random_tree(10, 4, 1), 0.2, 2)
        result = tolerant_test(f, 4, EPS, DELTA, 3)
        key = derive.node_key(3, "tester", ())
        points = derive.unpack_points(derive.uniform_points(key, 10, 0, M), 10)
        tree = Reconstructor(f, result.params).answer_many(points, 3)
        assert result.disagreements == int(np.count_nonzero(tree != f(points)))

    def test_explicit_params_and_samples(self):
        f = targets.random_tree(10, 4, 0)
        params = Params.practical(10, 2, 0.2, 50, 40)
        result = tolerant_test(f, 4, EPS, DELTA, 1, params=params, samples=17,
                               threshold_factor=3.0)
        assert result.params is params and result.samples == 17
        assert result.threshold == pytest.approx(0.3)

    def test_theory_preset_is_planned_and_refused_by_default(self):
        plan = plan_tolerant_test(10, 4, EPS, DELTA, preset="theory")
        assert plan.params.preset == "theory" and plan.params.depth == 16000  # 2 * 2^3 / 0.1^3
        assert plan.worst_case_queries > DEFAULT_MAX_QUERIES
        assert "theory preset" in plan.describe()
        assert "size-s tree: not proved" in plan.describe()  # kappa = 2
        strict = plan_tolerant_test(10, 4, EPS, DELTA, preset="theory",
                                    threshold_factor=THEORY_THRESHOLD_FACTOR)
        assert "size-s tree: proved, w.p. >= 1-2delta" in strict.describe()
        with pytest.raises(ValueError, match=r"tolerant_test: the theory plan may need up to "
                                             r"4\.65e\+16 queries to f .* pass max_queries=None"):
            tolerant_test(targets.random_tree(10, 4, 0), 4, EPS, DELTA, 1, preset="theory")

    def test_theory_preset_runs_with_small_constants(self):
        tiny = TheoryConstants(depth=1e-4, tau=40.0)
        f = targets.random_tree(8, 2, 1)
        result = tolerant_test(f, 2, 0.2, 0.1, 0, preset="theory", constants=tiny)
        assert result.preset == "theory" and result.params.constants == tiny
        assert result.accepted


class TestReconstructedFunction:
    def test_truth_table_is_answer_many_on_all_points(self):
        f = targets.with_label_noise(targets.random_tree(8, 5, 2), 0.1, 3)
        rec = Reconstructor(f, Params.practical(8, 3, 0.2, 200, 100))
        table = exact.truth_table(ReconstructedFunction(rec, 4))
        assert np.array_equal(table, rec.answer_many(all_points(8), 4))
        assert ReconstructedFunction(rec, 4).depth == 3

    def test_bad_reconstructor(self):
        with pytest.raises(TypeError, match=r"'reconstructor' parameter of "
                                            r"ReconstructedFunction must be an lca"):
            ReconstructedFunction(object(), 0)


@pytest.mark.parametrize("call, error, match", [
    (lambda f: tolerant_test(f, 0, EPS, DELTA, 0), ValueError,
     r"The 's' parameter of tolerant_test must be an int in the range \[1, inf\). Got 0"),
    (lambda f: tolerant_test(f, 4, 0.0, DELTA, 0), ValueError,
     r"The 'eps' parameter of tolerant_test must be a real number in the range "
     r"\(0.0, 1.0\]. Got 0.0"),
    (lambda f: tolerant_test(f, 4, 1.5, DELTA, 0), ValueError, r"'eps' .* Got 1.5"),
    (lambda f: tolerant_test(f, 4, EPS, 1.0, 0), ValueError,
     r"'delta' parameter of tolerant_test .* \(0.0, 1.0\). Got 1.0"),
    (lambda f: tolerant_test(f, 4, EPS, DELTA, -1), ValueError,
     r"The 'seed' parameter of tolerant_test must be an int in the range \[0, 2\*\*64\). "
     r"Got -1 instead"),
    (lambda f: tolerant_test(f, 4, EPS, DELTA, 0, threshold_factor=0), ValueError,
     r"'threshold_factor' parameter of tolerant_test .* Got 0"),
    (lambda f: tolerant_test(f, 4, EPS, DELTA, 0, samples=0), ValueError,
     r"'samples' parameter of tolerant_test must be an int in the range \[1, inf\)"),
    (lambda f: tolerant_test(f, 4, EPS, DELTA, 0, preset="fast"), ValueError,
     r"The 'preset' parameter of tolerant_test_params must be 'practical' or 'theory'. "
     r"Got 'fast' instead."),
    (lambda f: tolerant_test(f, 4, EPS, DELTA, 0, preset="theory", depth=3), ValueError,
     r"tolerant_test_params: 'depth' only apply to the 'practical' preset"),
    (lambda f: tolerant_test(f, 4, EPS, DELTA, 0, params=Params.practical(10, 2, .1, 9, 9),
                             depth=3), ValueError,
     r"tolerant_test: pass either 'params' or 'depth', not both"),
    (lambda f: tolerant_test(f, 4, EPS, DELTA, 0, params=Params.practical(11, 2, .1, 9, 9)),
     ValueError, r"tolerant_test: params have n=11 but the oracle has n=10"),
    (lambda f: tolerant_test(f, 4, EPS, DELTA, 0, params="practical"), TypeError,
     r"The 'params' parameter of tolerant_test must be an lca.Params. Got str instead."),
    (lambda f: tolerant_test(lambda x: 1, 4, EPS, DELTA, 0), TypeError,
     r"The 'oracle' parameter of tolerant_test must be an lca.oracle.Oracle. "
     r"Got function instead."),
    (lambda f: tolerant_test(f, 4, EPS, DELTA, 0, max_queries=10), ValueError,
     r"the practical plan may need up to .* more than max_queries=10"),
    (lambda f: hoeffding_samples(0.1, 0.0), ValueError,
     r"'delta' parameter of hoeffding_samples"),
    (lambda f: practical_depth(0, 0.1), ValueError, r"'s' parameter of practical_depth"),
])
def test_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call(targets.random_tree(10, 4, 0))


class TestCommandLine:
    def run(self, capsys, *argv):
        parser = argparse.ArgumentParser(prog="lca")
        sub = parser.add_subparsers(dest="command", required=True)
        assert add_test_command(sub).prog == "lca test"
        args = parser.parse_args(["test", *argv])
        assert args.run(args) == 0
        return capsys.readouterr().out

    def test_tree_is_accepted(self, capsys):
        out = self.run(capsys, "--target", "tree", "--n", "20", "--s", "4", "--seed", "1")
        assert "target: random tree, 4 leaves" in out
        assert "\nACCEPT: f is consistent with being 0.1-close to a size-4" in out

    def test_parity_and_random_are_rejected(self, capsys):
        out = self.run(capsys, "--target", "parity", "--n", "16", "--k", "10", "--s", "4")
        # The practical preset's rejection is about T_seed, never about all size-s trees.
        assert "parity of 10 variables" in out and "\nREJECT: dist(T_seed, f) > " in out
        assert "no claim about all size-4 trees" in out and "f is not 0.1-close" not in out
        out = self.run(capsys, "--target", "random", "--n", "12", "--s", "4",
                       "--noise", "0.1")
        assert "random function" in out and "label noise 0.1" in out and "\nREJECT" in out

    def test_theory_is_refused_with_the_plan_printed(self, capsys):
        with pytest.raises(ValueError, match=r"--max-queries 0"):
            self.run(capsys, "--preset", "theory", "--n", "10", "--s", "4")
        assert "theory preset" in capsys.readouterr().out


# --------------------------------------------------------------------------
# distance estimation


def noisy_tree(n, leaves, rate, seed):
    return targets.with_label_noise(targets.random_tree(n, leaves, seed), rate, seed + 100)


class TestEpsilonGrid:
    def test_values(self):
        assert epsilon_grid(0.1, 1.0) == tuple(j / 10 for j in range(1, 11))
        grid = epsilon_grid(0.1, 3.0)
        assert len(grid) == 30 and grid[2] == 0.1 and grid[-1] == 1.0
        assert epsilon_grid(0.3, 1.0) == (0.3, 0.6, 0.9, 1.0)
        assert epsilon_grid(0.25, 2.0) == tuple(j / 8 for j in range(1, 9))

    @pytest.mark.parametrize("gamma, c, match", [
        (0.0, 1.0, r"The 'gamma' parameter of epsilon_grid must be a real number in the "
                   r"range \(0.0, 1.0\). Got 0.0"),
        (0.1, 0.5, r"The 'c' parameter of epsilon_grid must be a real number in the range "
                   r"\[1.0, inf\). Got 0.5"),
    ])
    def test_bad(self, gamma, c, match):
        with pytest.raises(ValueError, match=match):
            epsilon_grid(gamma, c)


class TestExactTester:
    def test_accepts_iff_opt_within_slack_eps(self):
        f = noisy_tree(6, 3, 0.1, 1)
        opt = exact.opt_size(f, 3).distance
        tester = ExactTester()
        assert tester(f, 3, opt).accepted and not tester(f, 3, opt * 0.99).accepted
        assert ExactTester(slack=2.0)(f, 3, opt / 2).accepted
        result = tester(f, 3, 0.5)
        assert (result.opt, result.eps, result.s, result.threshold) == (opt, 0.5, 3, 0.5)
        assert tester.calls == 3

    def test_bad(self):
        with pytest.raises(ValueError, match=r"'slack' parameter of ExactTester .* "
                                             r"\[1.0, inf\). Got 0.5"):
            ExactTester(0.5)
        with pytest.raises(TypeError, match=r"'oracle' parameter of ExactTester must be"):
            ExactTester()(np.ones(4), 1, 0.1)


class TestEstimateDistance:
    @pytest.mark.parametrize("seed", range(4))
    @pytest.mark.parametrize("c", [1.0, 2.0, 3.0])
    def test_exact_tester_brackets_opt(self, seed, c):
        """Lemma "distance-estimator" with an exact tester: eta <= opt_s <= c eta + gamma,
        with no failure probability, for both extreme testers slack = 1 and slack = c."""
        f = noisy_tree(6, 4, 0.15, seed)
        for s in (1, 2, 4):
            opt = exact.opt_size(f, s).distance
            for slack in {1.0, c}:
                for gamma in (0.05, 0.1, 0.3):
                    est = estimate_distance(ExactTester(slack), f, s, gamma, c)
                    assert est.lower == est.eta <= opt <= c * est.eta + gamma == est.upper
                    if est.eta > 0:
                        assert est.eta < opt  # the lemma's strict inequality

    def test_eta_is_the_largest_rejected_eps_with_top_down_scan(self):
        f = noisy_tree(6, 4, 0.15, 0)
        tester = ExactTester()
        est = estimate_distance(tester, f, 2, 0.1, 1.0)
        opt = exact.opt_size(f, 2).distance
        everything = [(eps, tester(f, 2, eps).accepted) for eps in est.grid]
        assert est.eta == max([eps for eps, ok in everything if not ok], default=0.0)
        assert est.outcomes == tuple(reversed(everything))[:est.calls]
        assert est.calls == len(est.grid) - est.grid.index(est.eta)
        assert isinstance(est, DistanceEstimate) and est.eta < opt

    def test_zero_when_nothing_rejects(self):
        est = estimate_distance(ExactTester(), targets.random_tree(5, 3, 0), 3, 0.2, 1.0)
        assert est.eta == 0.0 and est.upper == 0.2 and est.calls == 5

    @pytest.mark.parametrize("seed", range(3))
    @pytest.mark.parametrize("s", [1, 2])
    def test_tolerant_tester_brackets_opt_for_small_s(self, seed, s):
        """For s <= 2 the practical tester tests against exactly the size-s trees,
        so the lemma applies with c = kappa + 1 = 3, up to the reconstructor's
        accuracy and ~30 Hoeffding events of probability <= 0.05 each."""
        f = noisy_tree(6, 3, 0.1, seed)
        tester = functools.partial(tolerant_test, delta=DELTA, seed=seed)
        est = estimate_distance(tester, f, s, 0.1, THRESHOLD_FACTOR + 1)
        assert est.eta <= exact.opt_size(f, s).distance <= est.upper

    @pytest.mark.parametrize("call, error, match", [
        (lambda f: estimate_distance("tester", f, 2, 0.1, 1.0), TypeError,
         r"The 'tester' parameter of estimate_distance must be callable as "
         r"tester\(oracle, s, eps\). Got str instead."),
        (lambda f: estimate_distance(ExactTester(), "f", 2, 0.1, 1.0), TypeError,
         r"The 'oracle' parameter of estimate_distance must be an lca.oracle.Oracle"),
        (lambda f: estimate_distance(ExactTester(), f, 2, 1.0, 1.0), ValueError,
         r"The 'gamma' parameter of estimate_distance .* \(0.0, 1.0\). Got 1.0"),
        (lambda f: estimate_distance(ExactTester(), f, 2, 0.1, 0.9), ValueError,
         r"The 'c' parameter of estimate_distance .* \[1.0, inf\). Got 0.9"),
        (lambda f: estimate_distance(lambda *a: True, f, 2, 0.1, 1.0), TypeError,
         r"estimate_distance: the tester must return an object with a bool 'accepted' "
         r"attribute; got True"),
    ])
    def test_bad(self, call, error, match):
        with pytest.raises(error, match=match):
            call(targets.random_tree(5, 3, 0))
