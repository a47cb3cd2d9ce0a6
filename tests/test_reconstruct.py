"""Reconstructor: exact recovery, route equivalence, statistics, bad input."""

import json
import pickle
import subprocess
import sys

import numpy as np
import pytest

import lca
from lca import derive, engine, estimate, exact, targets
from lca.reconstruct import LeafDecision, NodeDecision

from conftest import all_points

PARAMS = lca.Params.practical(n=40, depth=6, noise_rate=0.2, score_samples=300,
                              leaf_samples=150)


def _target():
    return targets.with_label_noise(targets.random_tree(n=40, leaves=12, seed=3),
                                    rate=0.05, seed=4)


def _queries(count, n=40, seed=0):
    key = derive.node_key(seed, "test-queries", ())
    return derive.unpack_points(derive.uniform_points(key, n, 0, count), n)


@pytest.mark.parametrize("seed", [0, 1, 2, 2 ** 64 - 1])
def test_noise_free_tree_is_reconstructed_exactly(seed):
    f = targets.random_tree(n=20, leaves=8, seed=5)
    params = lca.Params.practical(n=20, depth=7, noise_rate=0.3, score_samples=2000,
                                  leaf_samples=200)
    answers = lca.Reconstructor(f, params).answer_many(all_points(20), seed)
    assert exact.distance(answers, exact.truth_table(f)) == 0


@pytest.fixture(scope="module")
def reference():
    """Answers one by one through Reconstructor.answer: the reference route."""
    f = _target()
    points = _queries(120)
    rec = lca.Reconstructor(f, PARAMS)
    return f, points, {s: np.array([rec.answer(z, s) for z in points])
                       for s in TestRouteEquivalence.seeds}


class TestRouteEquivalence:
    seeds = [7, 12345]

    @pytest.mark.parametrize("seed", seeds)
    def test_answer_many_matches_answer(self, reference, seed):
        f, points, want = reference
        assert np.array_equal(lca.Reconstructor(f, PARAMS).answer_many(points, seed), want[seed])

    @pytest.mark.parametrize("seed", seeds)
    def test_cache_off_and_tiny_cache(self, reference, seed):
        f, points, want = reference
        for cache_size in (0, 1, 5):
            rec = lca.Reconstructor(f, PARAMS, cache_size=cache_size)
            assert np.array_equal(rec.answer_many(points, seed), want[seed])
            assert len(rec._cache) <= cache_size

    @pytest.mark.parametrize("seed", seeds)
    def test_pure_function(self, reference, seed):
        f, points, want = reference
        got = [lca.answer(z, seed, oracle=f, params=PARAMS) for z in points[:10]]
        assert got == want[seed][:10].tolist()

    @pytest.mark.parametrize("seed", seeds)
    def test_shuffled_order_and_batches(self, reference, seed):
        f, points, want = reference
        order = np.argsort(derive.raw_words(seed, 0, 0, len(points)))
        rec = lca.Reconstructor(f, PARAMS)
        shuffled = np.concatenate([rec.answer_many(points[order][lo:lo + 17], seed)
                                   for lo in range(0, len(points), 17)])
        assert np.array_equal(shuffled, want[seed][order])

    def test_chunked_oracle_batches(self, reference, monkeypatch):
        f, points, want = reference
        monkeypatch.setattr(engine, "_BATCH_ENTRIES", 40 * 13)
        monkeypatch.setattr(estimate, "_BLOCK_ENTRIES", 40 * 11)
        assert np.array_equal(lca.Reconstructor(f, PARAMS).answer_many(points, 7), want[7])

    def test_pickled_replica(self, reference):
        f, points, want = reference
        rec = lca.Reconstructor(f, PARAMS)
        rec.answer_many(points, 7)
        clone = pickle.loads(pickle.dumps(rec))
        assert len(clone._cache) == 0 and clone.stats.queries == 0
        assert np.array_equal(clone.answer_many(points, 7), want[7])

    def test_two_fresh_processes(self, reference):
        f, points, want = reference
        script = (
            "import json, sys, lca\n"
            "from lca import derive, targets\n"
            "f = targets.with_label_noise(targets.random_tree(n=40, leaves=12, seed=3),"
            " rate=0.05, seed=4)\n"
            "p = lca.Params.practical(n=40, depth=6, noise_rate=0.2, score_samples=300,"
            " leaf_samples=150)\n"
            "key = derive.node_key(0, 'test-queries', ())\n"
            "pts = derive.unpack_points(derive.uniform_points(key, 40, 0, 120), 40)\n"
            "print(json.dumps(lca.Reconstructor(f, p).answer_many(pts, 7).tolist()))\n"
        )
        runs = [subprocess.run([sys.executable, "-c", script], capture_output=True,
                               text=True, check=True) for _ in range(2)]
        for run in runs:
            assert json.loads(run.stdout) == want[7].tolist()


class TestExplainAndStats:
    def test_explain_follows_z(self):
        f = _target()
        rec = lca.Reconstructor(f, PARAMS)
        z = _queries(1)[0]
        e = rec.explain(z, 3)
        assert len(e.path) == PARAMS.depth == len(e.nodes)
        assert all(z[var] == bit for var, bit in e.path)
        assert [node.variable for node in e.nodes] == [var for var, _ in e.path]
        assert len({var for var, _ in e.path}) == PARAMS.depth
        assert e.label == rec.answer(z, 3) == lca.answer(z, 3, oracle=f, params=PARAMS)
        assert e.stats.queries == PARAMS.predicted_queries
        assert (e.stats.nodes_built, e.stats.leaves_built, e.stats.cache_hits) == (6, 1, 0)
        again = rec.explain(z, 3)
        assert again.stats.queries == 0 and again.stats.cache_hits == 7
        assert "=>" in str(e)

    def test_decide_is_the_node_decision_on_the_path(self):
        f = _target()
        rec = lca.Reconstructor(f, PARAMS)
        e = rec.explain(_queries(1)[0], 3)
        fresh = lca.Reconstructor(f, PARAMS)
        assert fresh.decide(3, ()) == e.nodes[0]
        assert fresh.last_stats.nodes_built == 1 and fresh.last_built == [()]
        assert fresh.decide(3, e.path) == e.leaf and fresh.last_stats.leaves_built == 1
        assert fresh.decide(3, ()) == e.nodes[0] and fresh.last_stats.cache_hits == 1
        assert fresh.last_built == []
        rec.answer_many(_queries(5), 3)
        assert len(rec.last_built) == rec.last_stats.nodes_built + rec.last_stats.leaves_built

    def test_answer_many_decides_each_node_once(self):
        f = _target()
        rec = lca.Reconstructor(f, PARAMS, cache_size=0, record=True)
        points = _queries(200)
        rec.answer_many(points, 9)
        stats = rec.last_stats
        nodes = [d for d in rec.decisions.values() if isinstance(d, NodeDecision)]
        leaves = [d for d in rec.decisions.values() if isinstance(d, LeafDecision)]
        assert stats.nodes_built == len(nodes) and stats.leaves_built == len(leaves)
        assert stats.queries == (2 * PARAMS.score_samples * len(nodes)
                                 + PARAMS.leaf_samples * len(leaves))

    def test_depth_beyond_n_stops_when_all_variables_fixed(self):
        f = targets.parity(n=4, k=2, seed=0)
        params = lca.Params.practical(n=4, depth=9, noise_rate=0.5, score_samples=50,
                                      leaf_samples=20)
        e = lca.Reconstructor(f, params).explain([1, -1, 1, -1], 0)
        assert len(e.path) == 4 and params.path_length == 4
        assert e.label == f(np.array([[1, -1, 1, -1]], dtype=np.int8))[0]

    def test_empty_batch(self):
        rec = lca.Reconstructor(_target(), PARAMS)
        out = rec.answer_many(np.empty((0, 40), dtype=np.int8), 1)
        assert out.shape == (0,) and rec.stats.queries == 0


class TestBadInput:
    rec = lca.Reconstructor(_target(), PARAMS)
    z = np.ones(40, dtype=np.int8)

    @pytest.mark.parametrize("z, error, match", [
        (np.ones(39, dtype=np.int8), TypeError, "z must be a 1-D array of 40 values ±1; got length 39"),
        (np.ones((2, 40), dtype=np.int8), TypeError, "z must be a 1-D array"),
        (np.ones(40), TypeError, "z must be an integer array of ±1 values; got dtype float64"),
        (np.ones(40, dtype=bool), TypeError, "got dtype bool"),
        (np.zeros(40, dtype=np.int8), ValueError, "z must contain only -1 and \\+1; found 0"),
        ("abc", TypeError, "z must be a 1-D array"),
    ])
    def test_bad_z(self, z, error, match):
        with pytest.raises(error, match=match):
            self.rec.answer(z, 1)

    @pytest.mark.parametrize("seed, error, match", [
        (-1, ValueError, r"The 'seed' parameter of Reconstructor.explain must be an int in "
                         r"the range \[0, 2\*\*64\). Got -1 instead"),
        (2 ** 64, ValueError, "Got 18446744073709551616 instead"),
        (1.0, TypeError, "Got 1.0 instead"),
        (True, TypeError, "Got True instead"),
        ("7", TypeError, "Got '7' instead"),
    ])
    def test_bad_seed(self, seed, error, match):
        with pytest.raises(error, match=match):
            self.rec.answer(self.z, seed)
        with pytest.raises(error, match=match):
            lca.answer(self.z, seed, oracle=_target(), params=PARAMS)

    def test_numpy_integer_seed_is_an_int(self):
        assert self.rec.answer(self.z, np.uint64(5)) == self.rec.answer(self.z, 5)

    def test_bad_points(self):
        with pytest.raises(TypeError, match=r"points must have shape \(m, 40\)"):
            self.rec.answer_many(np.ones((3, 41), dtype=np.int8), 1)

    def test_mismatched_n(self):
        with pytest.raises(ValueError, match="has n=40 but params have n=41"):
            lca.Reconstructor(_target(), lca.Params.practical(41, 3, 0.1, 10, 10))

    def test_not_an_oracle(self):
        with pytest.raises(TypeError, match="wrap plain functions with lca.oracle.from_callable"):
            lca.Reconstructor(lambda x: x, PARAMS)
        with pytest.raises(TypeError, match="The 'params' parameter of Reconstructor must be "
                                            "an lca.Params. Got dict instead"):
            lca.Reconstructor(_target(), {"depth": 3})
        with pytest.raises(ValueError, match=r"The 'cache_size' parameter of Reconstructor "
                                             r"must be an int in the range \[0, inf\). Got -1"):
            lca.Reconstructor(_target(), PARAMS, cache_size=-1)

    @pytest.mark.parametrize("output, match", [
        (lambda m: np.ones(m + 1, dtype=np.int8), r"returned shape \(\d+,\) for \d+ points"),
        (lambda m: np.zeros(m, dtype=np.int8), "returned 0; expected only -1 and \\+1"),
        (lambda m: np.ones(m), "returned dtype float64"),
    ])
    def test_bad_oracle_output(self, output, match):
        class Bad(lca.Oracle):
            n, name = 40, "bad-oracle"

            def query(self, points):
                return output(len(points))

        with pytest.raises(lca.OracleError, match=f"oracle 'bad-oracle' {match}") as info:
            lca.Reconstructor(Bad(), PARAMS).answer(self.z, 1)
        assert any("node path ()" in note for note in info.value.__notes__)

    def test_oracle_exception_propagates_with_path(self):
        class Flaky(lca.Oracle):
            n, name = 40, "flaky"

            def __init__(self):
                self.calls = 0

            def query(self, points):
                self.calls += 1
                if self.calls > 1:  # the root's call succeeds, its child's fails
                    raise RuntimeError("service unavailable")
                return np.where(points[:, 0] > 0, 1, -1).astype(np.int8)

        with pytest.raises(RuntimeError, match=r"service unavailable") as info:
            lca.Reconstructor(Flaky(), PARAMS).answer(self.z, 1)
        note = " ".join(info.value.__notes__)
        assert "'flaky'" in note and "node path ((0, 1),)" in note
