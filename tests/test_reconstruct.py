"""Reconstructor: exact recovery, route equivalence, statistics, bad input."""

import json
import pickle
import subprocess
import sys
import types
import warnings

import numpy as np
import pytest

import lca
from lca import derive, engine, estimate, exact, reconstruct, targets
from lca.decisions import is_guessed
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
    @pytest.mark.filterwarnings("ignore::lca.LowMarginWarning")  # the noisy fixture
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

    def test_only_explain_puts_the_path_into_words(self):
        # answer needs the leaf alone: the oracle's describe (text, and a cost per
        # step on a model's encoder) runs once per step in explain, never in answer.
        described = []

        class Describing(lca.Oracle):
            def __init__(self, inner):
                self.inner, self.n, self.name = inner, inner.n, "describing"

            def query(self, points):
                return self.inner.query(points)

            def describe(self, variable, bit, path=()):
                described.append((variable, bit, path))
                return self.inner.describe(variable, bit, path)

        f = Describing(_target())
        rec = lca.Reconstructor(f, PARAMS)
        z = _queries(1)[0]
        label = rec.answer(z, 3)
        assert described == []
        e = rec.explain(z, 3)
        assert e.label == label and len(described) == len(e.path) == len(e.conditions)
        assert described == [(var, bit, e.path[:i]) for i, (var, bit) in enumerate(e.path)]

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
        (np.ones(39, dtype=np.int8), TypeError,
         "z must be a 1-D array of 40 values ±1; got length 39"),
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
        (-1, ValueError, r"The 'seed' parameter of Reconstructor.answer must be an int in "
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


# -- the engine pinned: cache, budgets, limits, statistics, warnings -------------------------

class Counted(lca.Oracle):
    """Wraps an oracle and keeps its own count of calls and rows (and may tick a clock)."""

    def __init__(self, inner, clock=None):
        self.inner, self.n, self.name = inner, inner.n, "counted"
        self.calls = self.rows = 0
        self.clock = clock

    def query(self, points):
        self.calls += 1
        self.rows += points.shape[0]
        if self.clock is not None:
            self.clock[0] += 1.0
        return self.inner.query(points)


def _dictator(n=20, variable=3):
    return lca.from_callable(lambda x: int(x[variable]), n)


# f = x_3 in the efficient mode: the root splits on x_3 and both children are
# constant, so they become early leaves ("no structure" at the pair cap: 32
# unanimous points cannot certify eps = 0.05) that reuse about 80 points and
# top up about 1,920 fresh ones each: far more than a node's own cap of 320.
EARLY = lca.Params.efficient(20, depth=4, pairs=32, first_round=16, leaf_samples=2000)


class TestCache:
    def test_cache_size_one_keeps_exactly_the_last_decision(self):
        f = _target()
        rec = lca.Reconstructor(f, PARAMS, cache_size=1)
        e = rec.explain(_queries(1)[0], 3)
        assert list(rec._cache) == [(3, e.path)]
        assert rec.decide(3, e.path) == e.leaf
        assert (rec.last_stats.cache_hits, rec.last_stats.queries) == (1, 0)
        assert rec.decide(3, ()) == e.nodes[0]
        assert rec.last_stats.queries == 2 * PARAMS.score_samples
        assert list(rec._cache) == [(3, ())]

    def test_a_hit_makes_a_decision_the_most_recently_used(self):
        rec = lca.Reconstructor(_target(), PARAMS, cache_size=2)
        a, b, c = (), ((0, 1),), ((1, -1),)
        for path in (a, b, a, c):  # the hit on a touches it: b is the oldest when c comes
            rec.decide(5, path)
        assert list(rec._cache) == [(5, a), (5, c)]
        rec.decide(5, a)
        assert (rec.last_stats.cache_hits, rec.last_stats.queries) == (1, 0)
        rec.decide(5, b)
        assert (rec.last_stats.cache_hits, rec.last_stats.nodes_built) == (0, 1)
        assert list(rec._cache) == [(5, a), (5, b)]

    @pytest.mark.parametrize("cache_size", [0, 1, 2, 6, 7, 8])
    def test_the_cache_holds_the_most_recent_decisions_up_to_its_size(self, cache_size):
        f = _target()
        rec = lca.Reconstructor(f, PARAMS, cache_size=cache_size, record=True)
        e = rec.explain(_queries(1)[0], 3)
        walk = [e.path[:k] for k in range(len(e.path) + 1)]
        assert list(rec._cache) == [(3, path) for path in walk[max(0, len(walk) - cache_size):]]
        again = rec.explain(_queries(1)[0], 3)
        # The walk is read from the cache if it all fits; else the root's
        # build evicts the shallowest cached decision, and so on down.
        assert again.stats.cache_hits == (len(walk) if cache_size >= len(walk) else 0)
        assert again == e

    def test_kept_values_leave_the_cache_with_their_decision(self):
        f = _target()
        params = lca.Params.efficient(40, depth=6)
        points = _queries(40)
        for cache_size in (1, 3, 10**6):
            rec = lca.Reconstructor(f, params, cache_size=cache_size)
            rec.answer_many(points, 2)
            nodes = {key for key, d in rec._cache.items() if isinstance(d, NodeDecision)}
            assert set(rec._kept) == nodes and len(rec._cache) <= cache_size
            for key in nodes:  # each node keeps the values of its own 2 * pairs points
                assert rec._kept[key].shape == (2 * rec._cache[key].samples,)
        assert len(rec._cache) == rec.last_stats.nodes_built + rec.last_stats.leaves_built

    @pytest.mark.filterwarnings("ignore::lca.LowMarginWarning")
    @pytest.mark.parametrize("cache_size", [1, 5, 20, 1 << 16])
    def test_a_warm_answer_keeps_the_cache_as_the_full_path_does(self, cache_size, monkeypatch):
        # The warm walk (Reconstructor._warm_answer) against the same answers with it
        # off: after every answer the same label, cache order, kept values, record,
        # statistics and table contents, whatever the evictions in between.
        f = _target()
        params = lca.Params.efficient(40, depth=6)
        points = np.concatenate([_queries(30), _queries(30)[::-1], _queries(10)])
        warm = lca.Reconstructor(f, params, cache_size=cache_size, record=True)
        cold = lca.Reconstructor(f, params, cache_size=cache_size, record=True)
        monkeypatch.setattr(cold, "_warm_answer", lambda z, seed: None)
        hits = 0
        for z in points:
            assert warm.answer(z, 4) == cold.answer(z, 4)
            assert list(warm._cache) == list(cold._cache)
            assert warm._kept.keys() == cold._kept.keys()
            assert warm.decisions == cold.decisions
            assert warm.last_stats == cold.last_stats and warm.stats == cold.stats
            assert warm.last_built == cold.last_built
            hits += warm.last_stats.queries == 0
            table = warm._warm[4]
            assert set(table.slots) == {path for _, path in warm._cache}
        assert hits > 0 if cache_size > 5 else True
        # A point of another tree, or one that is not +-1, is answered (or refused) by
        # the full path.
        assert warm.answer(points[0], 5) == cold.answer(points[0], 5)
        bad = points[0].copy()
        bad[0] = 0
        with pytest.raises(ValueError, match="must contain only -1 and \\+1"):
            warm.answer(bad, 4)

    def test_no_cache_keeps_nothing_and_pays_again(self):
        rec = lca.Reconstructor(_target(), PARAMS, cache_size=0)
        z = _queries(1)[0]
        first = rec.explain(z, 3)
        second = rec.explain(z, 3)
        assert not rec._cache and not rec._kept
        assert second.stats.queries == first.stats.queries == PARAMS.predicted_queries
        assert second.stats.cache_hits == 0

    def test_every_decision_a_call_reads_from_the_cache_is_one_hit_and_recorded(self):
        f = _target()
        points = _queries(60)
        rec = lca.Reconstructor(f, PARAMS, record=True)
        want = rec.answer_many(points, 4)
        built = rec.last_stats.nodes_built + rec.last_stats.leaves_built
        recorded = dict(rec.decisions)
        rec.decisions.clear()
        assert np.array_equal(rec.answer_many(points, 4), want)
        stats = rec.last_stats
        assert (stats.cache_hits, stats.queries, stats.oracle_calls) == (built, 0, 0)
        assert (stats.nodes_built, stats.leaves_built) == (0, 0) and rec.last_built == []
        assert rec.decisions == recorded  # hits are recorded too
        assert rec.stats.cache_hits == built


class TestBudgets:
    def test_a_run_costing_exactly_its_budget_finishes_and_one_query_less_stops(self):
        f = _target()
        points = _queries(30)
        unlimited = lca.Reconstructor(f, PARAMS)
        want = unlimited.answer_many(points, 6)
        cost = unlimited.last_stats.queries
        exact_ = lca.Reconstructor(f, PARAMS)
        assert np.array_equal(exact_.answer_many(points, 6, max_queries=cost), want)
        assert exact_.last_stats.queries == cost
        short = lca.Reconstructor(f, PARAMS)
        with pytest.raises(lca.BudgetExceeded, match=(
                rf"Reconstructor.answer_many stopped at its max_queries={cost - 1} \(the next "
                rf"decision may need up to {PARAMS.leaf_samples}\): \d+ of 30 answers "
                rf"finished, {cost - PARAMS.leaf_samples} queries spent in")) as info:
            short.answer_many(points, 6, max_queries=cost - 1)
        stop = info.value
        # Only the last leaf was missing: every other row is answered, as unlimited.
        assert stop.limit == "max_queries" and stop.queries == cost - PARAMS.leaf_samples
        assert stop.stats.queries == stop.queries == short.last_stats.queries
        assert 0 < (~stop.finished).sum() < 30 and (stop.answers[~stop.finished] == 0).all()
        assert np.array_equal(stop.answers[stop.finished], want[stop.finished])
        # What was built stays cached: the rest costs the rest.
        assert np.array_equal(short.answer_many(points, 6, max_queries=PARAMS.leaf_samples),
                              want)
        assert short.last_stats.queries == PARAMS.leaf_samples
        assert short.stats.queries == cost

    def test_cached_answers_are_free_under_any_budget(self):
        f = _target()
        points = _queries(30)
        rec = lca.Reconstructor(f, PARAMS)
        want = rec.answer_many(points, 6)
        assert np.array_equal(rec.answer_many(points, 6, max_queries=0), want)
        assert np.array_equal(rec.answer_many(points, 6, time_limit=1e-9), want)
        with pytest.raises(lca.BudgetExceeded) as info:
            rec.answer_many(_queries(30, seed=1), 6, max_queries=0)
        assert info.value.queries == 0 and info.value.limit == "max_queries"

    def test_the_early_leaf_top_up_is_reserved_before_a_node_starts(self):
        # Root, then its -1 child, then its +1 child, one at a time under a
        # budget; each node's reservation is its own cap plus a leaf's top-up.
        f = _dictator()
        points = derive.sample_points(0, "test-budget", 20, 50)
        cap = EARLY.max_node_queries + EARLY.max_leaf_queries
        probe = lca.Reconstructor(f, EARLY)
        probe.decide(1, ())
        root = probe.last_stats.queries
        minus = probe.decide(1, ((3, -1),))
        first = probe.last_stats.queries
        assert isinstance(minus, LeafDecision) and first > EARLY.max_node_queries
        need = root + first + cap
        rec = lca.Reconstructor(f, EARLY)
        want = lca.Reconstructor(f, EARLY).answer_many(points, 1)
        assert np.array_equal(rec.answer_many(points, 1, max_queries=need), want)
        short = lca.Reconstructor(f, EARLY)
        with pytest.raises(lca.BudgetExceeded, match=f"may need up to {cap}") as info:
            short.answer_many(points, 1, max_queries=need - 1)
        assert info.value.queries == root + first
        assert np.array_equal(info.value.finished, points[:, 3] == -1)

    def test_no_budget_is_ever_overspent(self):
        # A fine scan of budgets over the whole run: each run finishes within
        # its budget or stops within it, and finishes exactly from the
        # smallest budget that fits the reservations.
        f = _dictator()
        points = derive.sample_points(0, "test-budget", 20, 50)
        want = lca.Reconstructor(f, EARLY).answer_many(points, 1)
        finished_from = None
        for budget in range(0, 5400, 61):
            rec = lca.Reconstructor(f, EARLY)
            try:
                got = rec.answer_many(points, 1, max_queries=budget)
            except lca.BudgetExceeded as stop:
                assert stop.queries <= budget and finished_from is None, budget
                assert np.array_equal(stop.answers[stop.finished], want[stop.finished])
            else:
                assert np.array_equal(got, want)
                finished_from = budget if finished_from is None else finished_from
            assert rec.last_stats.queries <= budget
        assert 4941 <= finished_from < 4941 + 61

    @pytest.fixture
    def clock(self, monkeypatch):
        now = [0.0]
        fake = types.SimpleNamespace(monotonic=lambda: now[0])
        monkeypatch.setattr(engine, "time", fake)
        monkeypatch.setattr(reconstruct, "time", fake)
        return now

    @pytest.mark.parametrize("limit, calls", [(0.5, 1), (1.0, 1), (2.5, 3), (3.0, 3),
                                              (3.5, 4)])
    @pytest.mark.filterwarnings("ignore::lca.LowMarginWarning")  # the noisy fixture
    def test_no_decision_starts_and_no_call_is_made_after_the_time_limit(self, clock, limit,
                                                                        calls):
        # One oracle call per decision, one second each: root, two nodes, the leaf.
        params = lca.Params.practical(n=20, depth=3, noise_rate=0.2, score_samples=20,
                                      leaf_samples=10)
        f = Counted(targets.random_tree(n=20, leaves=8, seed=5), clock)
        rec = lca.Reconstructor(f, params)
        points = _queries(1, n=20)
        if calls == 4:
            rec.answer_many(points, 0, time_limit=limit)
        else:
            with pytest.raises(lca.BudgetExceeded,
                               match=rf"stopped at its time_limit={limit:g} s: 0 of 1") as info:
                rec.answer_many(points, 0, time_limit=limit)
            assert info.value.limit == "time_limit" and not info.value.finished.any()
            assert info.value.stats.nodes_built == calls
        assert f.calls == rec.last_stats.oracle_calls == calls
        assert f.rows == rec.last_stats.queries

    def test_a_decision_running_at_the_time_limit_is_abandoned_but_its_queries_count(
            self, clock, monkeypatch):
        monkeypatch.setattr(estimate, "_BLOCK_ENTRIES", 20 * 5)  # a node: 4 steps of 10 rows
        params = lca.Params.practical(n=20, depth=3, noise_rate=0.2, score_samples=20,
                                      leaf_samples=10)
        f = Counted(targets.random_tree(n=20, leaves=8, seed=5), clock)
        rec = lca.Reconstructor(f, params)
        with pytest.raises(lca.BudgetExceeded) as info:
            rec.answer_many(_queries(1, n=20), 0, time_limit=2.5)
        stats = info.value.stats
        assert (stats.nodes_built, stats.oracle_calls, stats.queries) == (0, 3, 30)
        assert f.rows == 30 and not rec._cache


class TestStatsFields:
    @pytest.mark.parametrize("params", [
        PARAMS,
        lca.Params.practical(n=40, depth=5, noise_rate=0.2, score_samples=2000,
                             leaf_samples=500, adaptive=True, tau=0.3, eps=0.2, delta=0.1),
        lca.Params.efficient(40, depth=6),
    ], ids=["fixed", "adaptive", "efficient"])
    def test_queries_and_calls_are_the_oracles_own_counts(self, params, monkeypatch):
        monkeypatch.setattr(engine, "_BATCH_ENTRIES", 40 * 97)  # several calls per step
        f = Counted(_target())
        rec = lca.Reconstructor(f, params)
        total = lca.AnswerStats()
        for run in (lambda: rec.answer_many(_queries(50), 2),
                    lambda: rec.explain(_queries(1, seed=3)[0], 2),
                    lambda: rec.decide(2, ((5, 1),)) if not params.estimation.reads_lineage
                    else rec.decide(2, ()),
                    lambda: rec.materialize(2, depth=2)):
            calls, rows = f.calls, f.rows
            run()
            assert rec.last_stats.queries == f.rows - rows
            assert rec.last_stats.oracle_calls == f.calls - calls
            total += rec.last_stats
        assert rec.stats == total and f.calls > 4
        assert rec.stats.queries == f.rows and rec.stats.oracle_calls == f.calls

    def test_early_leaves_are_leaves_above_the_depth_cap_only(self):
        f = _dictator()
        rec = lca.Reconstructor(f, EARLY, record=True)
        rec.answer_many(derive.sample_points(0, "test-stats", 20, 50), 1)
        stats = rec.last_stats
        assert (stats.nodes_built, stats.leaves_built, stats.early_leaves) == (1, 2, 2)
        # Both early leaves ended at the cap without a certificate; the root's
        # lead was certified.
        assert stats.uncertified == 2 and stats.low_margin == 0
        # At depth 1 = path_length the same children are ordinary leaves.
        shallow = lca.Params.efficient(20, depth=1, pairs=32, first_round=16, leaf_samples=2000)
        rec = lca.Reconstructor(f, shallow)
        rec.answer_many(derive.sample_points(0, "test-stats", 20, 50), 1)
        stats = rec.last_stats
        assert (stats.nodes_built, stats.leaves_built, stats.early_leaves) == (1, 2, 0)
        assert stats.uncertified == 0

    @pytest.mark.parametrize("decision, depth, counted", [
        (LeafDecision(1, 10, 4), 3, {"leaves_built": 1}),
        (LeafDecision(1, 10, 4), 2, {"leaves_built": 1, "early_leaves": 1}),
        (LeafDecision(1, 10, 4), 0, {"leaves_built": 1, "early_leaves": 1}),
        (LeafDecision(-1, 10, -4, certified=False), 3, {"leaves_built": 1, "uncertified": 1}),
        (LeafDecision(-1, 10, -4, certified=True), 1,
         {"leaves_built": 1, "early_leaves": 1, "certified_leaves": 1}),
        (LeafDecision(-1, 10, -4, certified=True), 3, {"leaves_built": 1}),
        (NodeDecision(2, 10, 5, 1, certified=False, guesswork=True), 2,
         {"nodes_built": 1, "uncertified": 1, "guesswork": 1}),
        (NodeDecision(2, 10, 5, 1), 0, {"nodes_built": 1}),
        (NodeDecision(2, 10, 5, 1, certified=False, low_margin=True), 2,
         {"nodes_built": 1, "uncertified": 1, "low_margin": 1}),
        (NodeDecision(2, 10, 5, 1, certified=True, low_margin=True), 2,
         {"nodes_built": 1, "low_margin": 1}),
    ])
    def test_count(self, decision, depth, counted):
        stats = lca.AnswerStats()
        stats.count(decision, 3, depth)
        assert stats == lca.AnswerStats(**counted)

    def test_stats_add_field_by_field(self):
        fields = list(lca.AnswerStats.__dataclass_fields__)
        a = lca.AnswerStats(*range(1, len(fields) + 1))
        a += lca.AnswerStats(*[10 * k for k in range(1, len(fields) + 1)])
        assert a == lca.AnswerStats(*[11 * k for k in range(1, len(fields) + 1)])

    def test_low_margin_nodes_are_counted(self):
        # Pure label noise: every split is a guess (test_search's case).
        rec = lca.Reconstructor(_pure_noise(), lca.Params.efficient(20, depth=4, pairs=16,
                                                                    first_round=16))
        with pytest.warns(lca.LowMarginWarning):
            rec.answer_many(derive.sample_points(2, "test-search-noise", 20, 100), 3)
        stats = rec.last_stats
        assert stats.nodes_built > 0 and stats.low_margin == stats.nodes_built
        assert stats.uncertified == stats.nodes_built


def _pure_noise():
    return targets.with_label_noise(lca.from_callable(lambda x: 1, 20), rate=0.5, seed=9)


class TestLowMarginWarning:
    @pytest.mark.parametrize("guesses, answers, warned", [
        (0, 0, False), (1, 1, True), (0, 1, False), (1, 2, False), (2, 3, True),
        (50, 100, False), (51, 100, True), (0, 3, False)])
    def test_more_than_half_of_the_answers_warns_and_half_does_not(self, guesses, answers,
                                                                    warned):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            reconstruct.warn_if_guesswork(guesses, answers)
        assert len(caught) == warned
        if warned:
            assert caught[0].category is lca.LowMarginWarning
            assert "Most answers rest on guesswork" in str(caught[0].message)

    @pytest.mark.parametrize("total, guessed", [
        (0, True), (27, True), (-27, True), (28, False), (-28, False), (100, False)])
    def test_a_label_is_a_guess_when_its_sum_fails_the_sign_test(self, total, guessed):
        # 100 samples: 2 * 100 * ln 40 = 737.8, between 27^2 and 28^2.
        assert is_guessed(LeafDecision(1 if total >= 0 else -1, 100, total)) is guessed

    @pytest.mark.parametrize("f", [_dictator(), targets.random_tree(20, 16, seed=3)],
                             ids=["dictator", "tree16"])
    def test_silent_where_f_has_no_noise(self, f):
        rec = lca.Reconstructor(f, lca.Params.efficient(20, depth=6))
        with warnings.catch_warnings():
            warnings.simplefilter("error", lca.LowMarginWarning)
            rec.answer_many(derive.sample_points(2, "test-search-noise", 20, 200), 3)
        assert rec.last_stats.guesswork_answers == 0

    @pytest.mark.parametrize("params", [lca.Params.efficient(20, depth=4),
                                        lca.Params.practical(20, 4, 0.1, 200, 64)],
                             ids=["efficient", "paper"])
    def test_pure_noise_answers_rest_on_guesswork(self, params):
        # A balanced leaf's label passes the sign test with probability <= 1/20,
        # and depth 4 has at most 16 leaves: 8 of them pass with probability at
        # most C(16, 8) / 20^8 < 1e-6 (and the seeds are fixed).
        rec = lca.Reconstructor(_pure_noise(), params)
        with pytest.warns(lca.LowMarginWarning, match="Most answers rest on guesswork"):
            rec.answer_many(derive.sample_points(2, "test-search-noise", 20, 100), 3)
        assert rec.last_stats.guesswork_answers > 80
        if params.estimator == "search":
            assert rec.last_stats.guesswork == rec.last_stats.nodes_built > 0

    def test_explain_warns_at_the_callers_line(self):
        rec = lca.Reconstructor(_pure_noise(), lca.Params.efficient(20, depth=4, pairs=16,
                                                                    first_round=16))
        with pytest.warns(lca.LowMarginWarning) as caught:
            rec.explain(np.ones(20, dtype=np.int8), 3)
        assert [w.filename for w in caught] == [__file__]

    @pytest.mark.parametrize("route", ["answer", "answer_many"])
    def test_answer_and_answer_many_warn_at_the_callers_line(self, route):
        rec = lca.Reconstructor(_pure_noise(), lca.Params.efficient(20, depth=4, pairs=16,
                                                                    first_round=16))
        with pytest.warns(lca.LowMarginWarning) as caught:
            if route == "answer":
                rec.answer(np.ones(20, dtype=np.int8), 3)
            else:
                rec.answer_many(np.ones((1, 20), dtype=np.int8), 3)
        assert [w.filename for w in caught] == [__file__]

    def test_answer_many_judges_the_nodes_of_the_whole_call(self):
        # Nodes read from the cache count as much as nodes built.
        rec = lca.Reconstructor(_pure_noise(), lca.Params.efficient(20, depth=4, pairs=16,
                                                                    first_round=16))
        points = derive.sample_points(2, "test-search-noise", 20, 20)
        with pytest.warns(lca.LowMarginWarning):
            rec.answer_many(points, 3)
        with pytest.warns(lca.LowMarginWarning):
            rec.answer_many(points, 3)
        assert rec.last_stats.nodes_built == 0


class TestProgressAndLastCall:
    """Bars only when asked, each ending complete; last_stats and last_built describe the
    last call alone, whatever it was."""

    def test_no_bar_unless_asked(self, capsys):
        rec = lca.Reconstructor(_dictator(), EARLY)
        points = derive.sample_points(0, "test-progress", 20, 10)
        rec.answer_many(points, 1)
        rec.explain(points[0], 2)
        rec.answer(points[0], 3)
        rec.materialize(4)
        assert capsys.readouterr().err == ""

    @pytest.mark.parametrize("route, start, end", [
        ("explain", "0/5", "2/2"),        # levels: root and an early leaf, of up to 5
        ("answer_many", "0/50", "50/50"),  # answers
        ("materialize", "0/31", "3/3"),    # decisions: root and two early leaves, of 31
    ])
    def test_a_bar_counts_to_what_was_done(self, capsys, route, start, end):
        rec = lca.Reconstructor(_dictator(), EARLY)
        points = derive.sample_points(0, "test-progress", 20, 50)
        if route == "explain":
            rec.explain(points[0], 1, progress=True)
        elif route == "answer_many":
            rec.answer_many(points, 1, progress=True)
        else:
            rec.materialize(1, progress=True)
        err = capsys.readouterr().err
        label = {"answer_many": "lca answers"}.get(route, f"lca {route}")
        assert err.startswith(f"\r{label}:   0%") and f"| {start} [" in err
        final = err.rsplit("\r", 1)[1]
        assert final.startswith(f"{label}: 100%") and f"| {end} [" in final
        assert err.endswith("\n") and err.count("\n") == 1  # closed once

    def test_last_stats_and_last_built_are_the_last_calls(self):
        # Each call below follows one that built something; what it reports is its own.
        rec = lca.Reconstructor(_target(), PARAMS)
        z = _queries(1)[0]
        rec.explain(z, 3)
        assert len(rec.last_built) == 7
        rec.answer_many(_queries(8)[:0], 3)  # an empty batch does nothing
        assert rec.last_stats == lca.AnswerStats() and rec.last_built == []
        for seed, call in enumerate((lambda: rec.explain(z, 3),
                                     lambda: rec.materialize(3, depth=0),
                                     lambda: rec.decide(3, ()),
                                     lambda: rec.answer_many(z[None], 3)), 5):
            rec.answer_many(_queries(8, seed=seed), 3)
            assert rec.last_built
            call()
            assert rec.last_built == [] and rec.last_stats.queries == 0
            assert rec.last_stats.nodes_built == rec.last_stats.leaves_built == 0
            assert rec.last_stats.cache_hits > 0


class TestMaterializeLimits:
    def test_depth_zero_decides_the_root_only(self):
        rec = lca.Reconstructor(_target(), PARAMS)
        tree = rec.materialize(3, depth=0, max_decisions=1)
        assert rec.last_built == [()] and rec.last_stats.nodes_built == 1
        assert rec.last_stats.queries == 2 * PARAMS.score_samples
        assert tree is not None

    @pytest.mark.parametrize("depth, max_decisions, allowed", [
        (0, 1, True), (1, 3, True), (1, 2, False), (2, 7, True), (2, 6, False)])
    def test_max_decisions_is_the_whole_tree_of_the_levels_asked(self, depth, max_decisions,
                                                                allowed):
        f = _dictator()
        rec = lca.Reconstructor(f, lca.Params.practical(n=20, depth=3, noise_rate=0.2,
                                                        score_samples=20, leaf_samples=10))
        if allowed:
            rec.materialize(1, depth=depth, max_decisions=max_decisions)
            assert rec.last_stats.nodes_built + rec.last_stats.leaves_built == 2 ** (depth + 1) - 1
        else:
            bound = 2 ** (depth + 1) - 1
            with pytest.raises(ValueError, match=(
                    rf"depth {depth} may need up to 2\^{depth + 1} - 1 = {bound} decisions "
                    rf".*more than max_decisions={max_decisions}\.")):
                rec.materialize(1, depth=depth, max_decisions=max_decisions)
            assert rec.last_stats.queries == 0

    def test_the_default_refuses_more_than_65536_decisions(self):
        params = lca.Params.practical(n=40, depth=20, noise_rate=0.2, score_samples=20,
                                      leaf_samples=10)
        with pytest.raises(ValueError, match=r"2\^17 - 1 = 131071 decisions .*more than "
                                             r"max_decisions=65536"):
            lca.Reconstructor(_target(), params).materialize(1, depth=16)


def test_explanations_are_equal_whatever_their_conditions_say():
    class Named(lca.Oracle):
        n, name = 40, "named"

        def __init__(self):
            self.inner = _target()

        def query(self, points):
            return self.inner.query(points)

        def describe(self, variable, bit, path=()):
            return f"feature {variable} is {'high' if bit > 0 else 'low'}"

    z = _queries(1)[0]
    plain = lca.Reconstructor(_target(), PARAMS).explain(z, 3)
    named = lca.Reconstructor(Named(), PARAMS).explain(z, 3)
    assert plain.conditions != named.conditions and str(plain) != str(named)
    assert plain == named


def test_documented_memory_bounds():
    # Reconstructor's docstring: one oracle batch of at most 2^24 int8 entries,
    # WORKING_BYTES (64 MiB) of decisions running at once, a 64 MiB memo.
    assert engine.chunk_rows(1) == 1 << 24 and engine.chunk_rows(1 << 10) == 1 << 14
    assert engine.WORKING_BYTES == 64 * 2**20
    assert lca.Reconstructor(_target(), PARAMS)._memo.limit == 64 * 2**20


def test_decisions_larger_than_the_working_memory_run_one_at_a_time(monkeypatch):
    f = _target()
    params = lca.Params.efficient(40, depth=6)
    points = _queries(60)
    want = lca.Reconstructor(f, params, record=True)
    expected = want.answer_many(points, 2)
    monkeypatch.setattr(reconstruct, "WORKING_BYTES", 1)
    monkeypatch.setattr(engine, "WORKING_BYTES", 1)
    rec = lca.Reconstructor(f, params, record=True)
    assert np.array_equal(rec.answer_many(points, 2), expected)
    assert rec.decisions == want.decisions
    assert rec.last_stats.queries == want.last_stats.queries


class TestExplanationAndExport:
    def test_str_shows_each_condition_and_no_margin_on_a_clear_choice(self):
        f = _dictator()
        rec = lca.Reconstructor(f, EARLY)
        e = rec.explain(np.ones(20, dtype=np.int8), 1)
        node = e.nodes[0]
        assert (e.path, node.low_margin, node.guesswork) == (((3, 1),), False, False)
        assert str(e) == (f"T_1: x3=+1 => +1  [{e.stats.queries} "
                          "queries, 1 nodes built, 0 cache hits]")
        again = rec.explain(-np.ones(20, dtype=np.int8), 1)
        assert str(again).startswith("T_1: x3=-1 => -1  [") and \
            str(again).endswith(" queries, 0 nodes built, 1 cache hits]")

    def test_str_marks_low_margins_and_shows_a_root_leaf(self):
        rec = lca.Reconstructor(_pure_noise(), lca.Params.efficient(20, depth=2, pairs=16,
                                                                    first_round=16))
        with pytest.warns(lca.LowMarginWarning):
            e = rec.explain(np.ones(20, dtype=np.int8), 3)
        steps = [f"x{var}=+1 (no better than a random variable)" if node.guesswork else
                 f"x{var}=+1 (not told apart from x{node.runner_up})"
                 for (var, _), node in zip(e.path, e.nodes, strict=True)]
        assert all(node.low_margin for node in e.nodes) and len(steps) == 2
        assert str(e).startswith(f"T_3: {' -> '.join(steps)} => {e.label:+d}  [")
        constant = lca.Reconstructor(lca.from_callable(lambda x: -1, 20), EARLY)
        assert str(constant.explain(np.ones(20, dtype=np.int8), 0)).startswith(
            "T_0: (root) => -1  [")
        paper = lca.Reconstructor(_dictator(n=2, variable=1), lca.Params.practical(
            n=2, depth=2, noise_rate=0.5, score_samples=400, leaf_samples=10))
        last = paper.explain(np.ones(2, dtype=np.int8), 0)
        assert last.nodes[-1].margin is None  # one free variable: no runner-up
        assert not last.nodes[0].low_margin
        # Below the dictator f is constant: the last split is marked as the guess it is.
        assert last.nodes[-1].guesswork and not last.nodes[0].guesswork
        assert str(last).startswith("T_0: x1=+1 -> x0=+1 (no better than a random variable) => ")

    def test_decide_refuses_a_path_below_a_leaf_in_the_efficient_mode(self):
        rec = lca.Reconstructor(_dictator(), EARLY)
        with pytest.raises(ValueError, match=r"Reconstructor.decide: path \(\(3, 1\), \(0, 1\)\) "
                           r"passes below the leaf of T_1 at \(\(3, 1\),\); in this mode a "
                           r"node's decision needs its ancestors' points"):
            rec.decide(1, ((3, 1), (0, 1)))
        assert isinstance(rec.decide(1, ((3, 1),)), LeafDecision)
        assert rec.last_stats.cache_hits == 2  # both built by the refused call

    def test_export_shows_one_seeds_decisions(self):
        f = _target()
        for cache_size, record in ((1 << 16, False), (0, True)):
            rec = lca.Reconstructor(f, PARAMS, cache_size=cache_size, record=record)
            rec.explain(_queries(1)[0], 1)
            rec.explain(_queries(1)[0], 2)
            first = lca.Reconstructor(f, PARAMS, record=True)
            first.explain(_queries(1)[0], 1)
            assert rec.export(1).decisions == {path: d for (_, path), d in
                                               first.decisions.items()}


@pytest.mark.parametrize("params", [PARAMS, lca.Params.efficient(40, depth=6, pairs=32)],
                         ids=["paper", "efficient"])
def test_a_reconstructor_shared_between_threads_answers_and_counts_as_one_thread(params):
    """Four threads share one reconstructor (docstring "Threads"): every answer and
    explanation is the single-threaded one, every decision is built once, and the
    statistics add up to the oracle's own count."""
    import concurrent.futures

    points = _queries(48)
    chunks = [points[i::4] for i in range(4)]
    alone = lca.Reconstructor(_target(), params)
    want = [alone.answer_many(chunk, 5) for chunk in chunks]
    want_paths = [alone.explain(chunk[0], 5).path for chunk in chunks]

    counted = lca.oracle.CountingOracle(_target())
    shared = lca.Reconstructor(counted, params)

    def work(i):
        return shared.answer_many(chunks[i], 5), shared.explain(chunks[i][0], 5).path

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        got = list(pool.map(work, range(4)))
    for (answers, path), expected, expected_path in zip(got, want, want_paths, strict=True):
        assert np.array_equal(answers, expected) and path == expected_path
    # Each decision is built exactly once, whatever the interleaving.
    assert shared.stats.nodes_built == alone.stats.nodes_built
    assert shared.stats.leaves_built == alone.stats.leaves_built
    assert shared.stats.queries == alone.stats.queries == counted.queries
