"""Score and leaf estimators against exact references (lca.exact)."""

import math

import numpy as np
import pytest

import lca
from lca import derive, engine, estimate, exact, targets
from lca.estimate import ScoreCounts

# Hoeffding for a mean of q runs in [-1, 1]: P(|mean - mu| >= t) <= 2 exp(-q t^2 / 2).
# Union over every (case, variable) checked below keeps the total failure
# probability of this module's statistical assertions below 1e-7.
_FAILURE = 1e-7
_CHECKS = 64


def _hoeffding_radius(q: int) -> float:
    return math.sqrt(2 * math.log(2 * _CHECKS / _FAILURE) / q)


CASES = {
    "tree": (targets.random_tree(n=6, leaves=5, seed=2), ()),
    "parity3": (targets.parity(n=6, k=3, seed=1), ()),
    "majority5": (targets.majority(n=6, k=5, seed=3), ()),
    "restricted-majority": (targets.majority(n=6, k=5, seed=3), ((0, 1), (4, -1))),
    "restricted-tree": (targets.random_tree(n=6, leaves=6, seed=9), ((2, -1),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_unbiased_estimator_matches_exact_scores(name):
    oracle, path = CASES[name]
    threshold = derive.noise_threshold(0.4)
    p = derive.noise_rate_of(threshold)
    q = 100_000
    runs = estimate.unbiased_estimates(oracle, 17, path, q, threshold)
    assert runs.shape == (q, oracle.n)
    assert runs.min() >= -1 and runs.max() <= 1
    want = exact.scores(oracle, p, path)
    # The estimator speaks for free variables only: a variable on the path
    # never re-randomises, and it is never chosen (choose_variable).
    free = [i for i in range(oracle.n) if i not in dict(path)]
    assert np.all(np.abs(runs.mean(axis=0) - want)[free] < _hoeffding_radius(q))


@pytest.mark.parametrize("name", sorted(CASES))
def test_counts_are_the_averaged_estimator(name):
    oracle, path = CASES[name]
    threshold = derive.noise_threshold(0.25)
    counts = estimate.score_counts(oracle, 3, path, 5000, threshold)
    runs = estimate.unbiased_estimates(oracle, 3, path, 5000, threshold)
    assert np.allclose(estimate.score_estimates(counts, derive.noise_rate_of(threshold)),
                       runs.mean(axis=0), rtol=0, atol=1e-12)


def test_counts_do_not_depend_on_chunking(monkeypatch):
    oracle = targets.random_tree(n=300, leaves=12, seed=4)
    threshold = derive.noise_threshold(0.2)
    whole = estimate.score_counts(oracle, 8, ((1, 1),), 700, threshold)
    # Blocks of 5 derived samples, oracle calls of 7 rows: neither lines up.
    monkeypatch.setattr(estimate, "_BLOCK_ENTRIES", 300 * 5)
    monkeypatch.setattr(engine, "_BATCH_ENTRIES", 300 * 7)
    assert engine.chunk_rows(300) == 7
    chunked = estimate.score_counts(oracle, 8, ((1, 1),), 700, threshold)
    assert whole.disagreements == chunked.disagreements
    assert np.array_equal(whole.agreements, chunked.agreements)
    # Samples [0, 300) + [300, 700) add up to [0, 700): the prefix property.
    head = estimate.score_counts(oracle, 8, ((1, 1),), 300, threshold)
    tail = estimate.score_counts(oracle, 8, ((1, 1),), 400, threshold, start=300)
    assert head.disagreements + tail.disagreements == whole.disagreements
    assert np.array_equal(head.agreements + tail.agreements, whole.agreements)


class TestChooseVariable:
    def test_lowest_count_wins_ties_to_lowest_index(self):
        counts = ScoreCounts(10, 6, np.array([6, 3, 5, 3, 6], dtype=np.int64))
        assert estimate.choose_variable(counts, ()) == 1

    def test_path_variables_are_never_chosen(self):
        counts = ScoreCounts(10, 6, np.array([6, 3, 5, 3, 6], dtype=np.int64))
        assert estimate.choose_variable(counts, ((1, 1), (3, -1))) == 2

    def test_no_disagreement_picks_lowest_free_variable(self):
        counts = ScoreCounts(10, 0, np.zeros(4, dtype=np.int64))
        assert estimate.choose_variable(counts, ((0, -1),)) == 1


def test_estimate_scores_from_accuracy_targets():
    # Theorem "Score estimator" with tau = 0.05, delta = 1e-7: every estimate
    # is within tau of the exact score except with probability 1e-7.
    oracle, path = CASES["majority5"]
    p = derive.noise_rate_of(derive.noise_threshold(0.3))
    got = estimate.estimate_scores(oracle, 4, path, 0.3, tau=0.05, delta=1e-7)
    assert np.all(np.abs(got - exact.scores(oracle, p, path)) < 0.05)
    direct = estimate.estimate_scores(oracle, 4, path, 0.3,
                                      samples=estimate.samples_for_accuracy(0.05, 1e-7, 6))
    assert np.array_equal(got, direct)
    with pytest.raises(ValueError, match="needs either 'samples' or both 'tau' and 'delta'"):
        estimate.estimate_scores(oracle, 4, path, 0.3, tau=0.05)


def test_samples_for_accuracy_is_hoeffding_union_bound():
    q = estimate.samples_for_accuracy(0.1, 1e-3, 1000)
    assert q == math.ceil(200 * math.log(2e6))
    # Doubling n adds exactly 200 ln 2 runs (up to rounding).
    assert abs(estimate.samples_for_accuracy(0.1, 1e-3, 2000) - q - 200 * math.log(2)) <= 1


@pytest.mark.parametrize("name", sorted(CASES))
def test_leaf_mean_matches_exact_mean(name):
    oracle, path = CASES[name]
    q = 100_000
    total = estimate.leaf_sum(oracle, 21, path, q)
    assert abs(total / q - exact.mean(oracle, path)) < _hoeffding_radius(q)


@pytest.mark.parametrize("total, label", [(5, 1), (0, 1), (-1, -1)])
def test_leaf_label_sign_with_zero_to_plus(total, label):
    assert estimate.leaf_label(total) == label


def test_oracle_exception_keeps_type_and_gains_node_path():
    class Broken(targets.Parity):
        def query(self, points):
            raise KeyError("backend down")

    with pytest.raises(KeyError, match="backend down") as info:
        estimate.score_counts(Broken(8, [1, 2]), 5, ((3, -1),), 10, 100)
    assert any("node path ((3, -1),)" in note for note in info.value.__notes__)


class TestScoreNodeMargin:
    """The paper estimator's margin over its runner-up and the sign test behind
    ``low_margin`` (``ln_upper(20)``, about 3.00003: a 95% one-sided test)."""

    @staticmethod
    def node(agreements, disagreements, path=(), certified=None, samples=50):
        counts = ScoreCounts(samples, disagreements, np.array(agreements, dtype=np.int64))
        return estimate._score_node(counts, estimate.choose_variable(counts, path), path,
                                    certified, derive.noise_threshold(0.1))

    def test_fields(self):
        node = self.node([4, 1, 7, 3], 9, certified=True)
        # Chosen: x1 (C = 1); runner-up x3 (C = 3); lead 2 in 2*9 - 1 - 3 = 14 trials.
        assert node == lca.NodeDecision(1, 50, 9, 1, True, 3, 2, True)

    @pytest.mark.parametrize("agreements, disagreements, lead, trials, low", [
        # lead^2 >= 2 L trials with L = 3.0000276...: 36 < 36.0003 fails by a hair.
        ([0, 6, 9], 6, 6, 6, True),
        ([1, 7, 9], 6, 6, 4, False),
        ([0, 7, 7], 7, 7, 7, False),   # 49 >= 42.0004
        ([0, 7, 8], 8, 7, 9, True),    # 49 < 54.0005
        ([2, 14, 18], 20, 12, 24, True),   # 144 < 144.0013
        ([2, 14, 18], 19, 12, 22, False),  # 144 >= 132.0012
        ([3, 3, 9], 9, 0, 12, True),   # a tie: no lead at all
        ([0, 0, 0], 0, 0, 0, True),    # nothing disagreed: a lead of 0 in 0 trials
    ])
    def test_low_margin_is_the_sign_test_on_the_lead(self, agreements, disagreements, lead,
                                                     trials, low):
        node = self.node(agreements, disagreements)
        chosen = int(np.argmin(agreements))
        assert node.margin == lead and node.low_margin == low
        assert node.runner_up == sorted(range(3), key=lambda i: (agreements[i], i))[1]
        assert 2 * disagreements - agreements[chosen] - agreements[node.runner_up] == trials
        assert estimate.lead_is_certified(lead, trials, estimate._MARGIN_LOG) == (not low)

    def test_the_runner_up_is_never_on_the_path(self):
        node = self.node([5, 1, 2, 9], 9, path=((1, 1),))
        assert (node.variable, node.runner_up, node.margin) == (2, 0, 3)
        node = self.node([5, 1, 2, 9, 0], 9, path=((1, 1), (4, -1), (0, 1)))
        assert (node.variable, node.runner_up, node.margin) == (2, 3, 7)

    def test_one_free_variable_has_no_runner_up(self):
        node = self.node([5, 1, 2], 9, path=((1, 1), (2, -1)))
        assert node == lca.NodeDecision(0, 50, 9, 5, None)
        assert node.runner_up is None and node.margin is None and not node.low_margin
        two_free = self.node([5, 1, 2], 9, path=((1, 1),))
        assert (two_free.variable, two_free.runner_up, two_free.margin) == (2, 0, 3)

    def test_the_margin_log_term_is_ln_20_from_above(self):
        assert math.log(20) < estimate._MARGIN_LOG == estimate.ln_upper(20) < math.log(20) + 0.02

    @pytest.mark.parametrize("lead, trials, certified", [
        (0, 0, False), (-3, 1, False), (1, 0, True), (1, 1, False), (6, 6, False),
        (6, 5, True)])
    def test_lead_is_certified(self, lead, trials, certified):
        assert estimate.lead_is_certified(lead, trials, estimate._MARGIN_LOG) == certified


@pytest.mark.parametrize("name", ["score_samples", "leaf_samples"])
def test_the_score_estimator_runs_one_sample_and_refuses_none(name):
    counts = {"score_samples": 1, "leaf_samples": 1}
    assert lca.Params.practical(n=5, depth=2, noise_rate=0.1, **counts).max_leaf_queries == 1
    with pytest.raises(ValueError, match=rf"The '{name}' parameter of Params must be an int "
                                         rf"in the range \[1, inf\)\. Got 0 instead\."):
        lca.Params.practical(n=5, depth=2, noise_rate=0.1, **(counts | {name: 0}))


def test_an_adaptive_node_also_holds_its_disagreeing_rows():
    # The certificate reads the flip masks of every disagreeing sample: up to
    # score_samples packed rows beyond the fixed mode's working block.
    fixed = lca.Params.practical(100, 4, 0.1, 5000, 10)
    adaptive = lca.Params.practical(100, 4, 0.1, 5000, 10, adaptive=True, tau=0.1, eps=0.1,
                                    delta=0.1)
    extra = adaptive.estimation.node_memory(adaptive) - fixed.estimation.node_memory(fixed)
    assert extra == 8 * derive.words_per_point(100) * 5000
