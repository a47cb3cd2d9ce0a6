"""Adaptive (anytime) mode: bounds, caps, determinism and exact recovery."""

import math
from fractions import Fraction

import numpy as np
import pytest

import lca
from lca import derive, estimate, exact, targets

from conftest import all_points


class TestLogBound:
    @pytest.mark.parametrize("value", [1, 2, 3, 10, 1e6 + 0.5, Fraction(10 ** 30, 7)])
    def test_upper_bound_and_tight(self, value):
        bound = estimate.ln_upper(value)
        assert math.log(value) <= bound <= math.log(math.ceil(value)) + math.log(2) / 64 + 1e-12


class TestBernoulliBounds:
    def test_bracket_the_empirical_mean(self):
        counts = np.arange(0, 1001, 50)
        upper = estimate.bernoulli_upper(counts, 1000, 10.0)
        lower = estimate.bernoulli_lower(counts, 1000, 10.0)
        assert np.all(lower <= counts / 1000) and np.all(counts / 1000 <= upper)
        assert np.all((upper <= 1) & (lower >= 0))

    @pytest.mark.parametrize("probability", [0.001, 0.05, 0.5])
    def test_coverage(self, probability):
        # 2000 trials of Binomial(500, pi) built from derived words; each bound
        # fails with probability <= e^-L = 1e-9, so all 4000 hold except with
        # probability <= 4e-6.
        log_term = math.log(1e9)
        words = derive.raw_words(derive.node_key(1, "coverage", ()), 0, 0, 2000 * 500)
        hits = (words < np.uint64(int(probability * 2 ** 64))).reshape(2000, 500).sum(axis=1)
        assert np.all(estimate.bernoulli_upper(hits, 500, log_term) >= probability)
        assert np.all(estimate.bernoulli_lower(hits, 500, log_term) <= probability)


def test_rounds_double_up_to_the_cap():
    assert estimate.anytime_rounds(64, 1000) == [64, 128, 256, 512, 1000]
    assert estimate.anytime_rounds(64, 64) == [64]
    assert estimate.anytime_rounds(64, 10) == [10]


def _noisy_tree(n=60):
    return targets.with_label_noise(targets.random_tree(n=n, leaves=10, seed=8), 0.05, seed=9)


ADAPTIVE = lca.Params.practical(n=60, depth=5, noise_rate=0.2, score_samples=6000,
                                leaf_samples=3000, adaptive=True, tau=0.1, eps=0.2,
                                delta=0.05)


class TestAdaptiveReconstruction:
    def test_never_exceeds_caps_and_saves_queries(self):
        f = _noisy_tree()
        fixed = ADAPTIVE.__class__.practical(60, 5, 0.2, 6000, 3000)
        points = derive.unpack_points(derive.uniform_points(11, 60, 0, 30), 60)
        rec = lca.Reconstructor(f, ADAPTIVE, record=True)
        rec.answer_many(points, 4)
        for decision in rec.decisions.values():
            cap = (ADAPTIVE.leaf_samples if isinstance(decision, lca.LeafDecision)
                   else ADAPTIVE.score_samples)
            assert decision.samples <= cap and decision.certified is not None
        fixed_rec = lca.Reconstructor(f, fixed)
        fixed_rec.answer_many(points, 4)
        assert rec.stats.queries < fixed_rec.stats.queries

    def test_routes_agree(self):
        f = _noisy_tree()
        points = derive.unpack_points(derive.uniform_points(12, 60, 0, 40), 60)
        one_by_one = [lca.Reconstructor(f, ADAPTIVE).answer(z, 3) for z in points[:8]]
        pure = [lca.answer(z, 3, oracle=f, params=ADAPTIVE) for z in points[:8]]
        batch = lca.Reconstructor(f, ADAPTIVE, cache_size=0).answer_many(points, 3)
        assert one_by_one == pure == batch[:8].tolist()
        reversed_batch = lca.Reconstructor(f, ADAPTIVE).answer_many(points[::-1], 3)
        assert np.array_equal(reversed_batch[::-1], batch)

    @pytest.mark.parametrize("seed", [0, 1])
    def test_noise_free_tree_is_reconstructed_exactly(self, seed):
        f = targets.random_tree(n=20, leaves=8, seed=5)
        params = lca.Params.guaranteed(20, 7, 0.3, tau=0.05, eps=0.1, delta=0.01,
                                       adaptive=True)
        rec = lca.Reconstructor(f, params)
        answers = rec.answer_many(all_points(20), seed)
        assert exact.distance(answers, exact.truth_table(f)) == 0
        assert rec.stats.uncertified == 0

    def test_early_leaf_on_a_constant_region(self):
        # f = x0: below x0 the function is constant, NS = 0, so the node under
        # the root becomes a leaf once NS <= p * eps is certified.
        f = targets.Junta(30, [0], [1, -1])
        params = lca.Params.practical(n=30, depth=6, noise_rate=0.5, score_samples=20000,
                                      leaf_samples=2000, adaptive=True, tau=0.1, eps=0.3,
                                      delta=0.1)
        explained = lca.Reconstructor(f, params).explain([1] * 30, 0)
        assert explained.path == ((0, 1),)
        assert explained.stats.early_leaves == 1 and explained.label == 1


def test_adaptive_params_need_targets():
    with pytest.raises(ValueError, match="Adaptive Params need 'tau', 'eps' and 'delta'"):
        lca.Params.practical(10, 3, 0.1, 100, 100, adaptive=True)
    with pytest.raises(TypeError, match="'adaptive' parameter of Params must be a bool"):
        lca.Params(n=10, depth=3, noise_rate=0.1, score_samples=10, leaf_samples=10,
                   adaptive=1)


@pytest.mark.parametrize("eps", [1 / 3, 0.4, 0.5])
def test_adaptive_params_need_eps_below_one_third(eps):
    # docs/theory.md §6: early leaves are only accounted for when eps < 1/3.
    with pytest.raises(ValueError, match=r"'eps' parameter of Params .* \(0, 1/3\) when "
                                         r"adaptive=True"):
        lca.Params.practical(10, 3, 0.1, 100, 100, adaptive=True, tau=0.1, eps=eps,
                             delta=0.1)
    # The same eps is fine in fixed mode, and just below the limit adaptively.
    lca.Params.practical(10, 3, 0.1, 100, 100, tau=0.1, eps=eps, delta=0.1)
    lca.Params.practical(10, 3, 0.1, 100, 100, adaptive=True, tau=0.1,
                         eps=math.nextafter(1 / 3, 0), delta=0.1)
