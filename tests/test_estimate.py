"""Score and leaf estimators against exact references (lca.exact)."""

import math

import numpy as np
import pytest

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
