"""The efficient mode: sensitive-coordinate search at nodes, reuse at leaves (lca.search)."""

import ast
import dataclasses
import importlib
import pathlib
import warnings

import numpy as np
import pytest

import lca
from lca import derive, estimate, reconstruct, search, targets
from lca.search import hybrids, sums
from lca.testing import assert_replicas_agree

from search_support import (
    correlations,
    in_subcube,
    pair_points,
    search_edges,
    search_node,
)

N = 40


@pytest.fixture(scope="module")
def noisy_tree():
    tree = targets.random_tree(n=N, leaves=16, seed=3)
    return targets.with_label_noise(tree, rate=0.05, seed=4)


@pytest.fixture(scope="module")
def params():
    return lca.Params.efficient(N, depth=6)


@pytest.fixture(scope="module")
def points():
    return derive.sample_points(0, "test-search", N, 300)


class Flip(lca.Oracle):
    """A fixed function: x_var with every row's label flipped when its hash says so."""

    def __init__(self, inner, rate, seed):
        self.inner = targets.with_label_noise(inner, rate=rate, seed=seed)
        self.n, self.name = inner.n, "flip"

    def query(self, points):
        return self.inner.query(points)


@pytest.mark.filterwarnings("ignore::lca.LowMarginWarning")  # one answer at a time: often a guess
def test_answers_are_identical_on_every_route(noisy_tree, params, points):
    reference = lca.Reconstructor(noisy_tree, params).answer_many(points, 7)
    no_cache = lca.Reconstructor(noisy_tree, params, cache_size=0)
    assert [no_cache.answer(z, 7) for z in points[:40]] == reference[:40].tolist()
    assert [lca.answer(z, 7, oracle=noisy_tree, params=params)
            for z in points[:10]] == reference[:10].tolist()
    order = np.random.default_rng(0).permutation(points.shape[0])
    shuffled = lca.Reconstructor(noisy_tree, params).answer_many(points[order], 7)
    assert np.array_equal(shuffled, reference[order])
    one_by_one = lca.Reconstructor(noisy_tree, params)
    assert [one_by_one.answer(z, 7) for z in points] == reference.tolist()


def test_evicting_reused_points_changes_nothing(noisy_tree, params, points, monkeypatch):
    full = lca.Reconstructor(noisy_tree, params, record=True)
    reference = full.answer_many(points, 7)
    monkeypatch.setattr(reconstruct, "_MEMO_BYTES", 0)
    starved = lca.Reconstructor(noisy_tree, params, record=True)
    assert np.array_equal(starved.answer_many(points, 7), reference)
    assert starved.decisions == full.decisions
    # Evicted points are re-derived from their stream, never re-queried.
    assert len(starved._memo) == 0 and starved.stats.queries == full.stats.queries
    # A memo that keeps a few entries keeps some of a node's handed-down sums and
    # inherited rows and drops others: every mix reads as the full memo does.
    monkeypatch.setattr(reconstruct, "_MEMO_BYTES", 20_000)
    partial = lca.Reconstructor(noisy_tree, params, record=True)
    assert np.array_equal(partial.answer_many(points, 7), reference)
    assert partial.decisions == full.decisions and len(partial._memo) > 0


def test_a_node_decided_alone_equals_the_node_on_a_walk(noisy_tree, params, points):
    walked = lca.Reconstructor(noisy_tree, params).explain(points[0], 7)
    alone = lca.Reconstructor(noisy_tree, params)
    assert alone.decide(7, walked.path) == walked.leaf
    for depth, node in enumerate(walked.nodes):
        assert lca.Reconstructor(noisy_tree, params).decide(7, walked.path[:depth]) == node


def test_seeds_give_different_trees(noisy_tree, params, points):
    rec = lca.Reconstructor(noisy_tree, params, record=True)
    rec.answer_many(points, 1)
    rec.answer_many(points, 2)
    first = {path: d for (seed, path), d in rec.decisions.items() if seed == 1}
    second = {path: d for (seed, path), d in rec.decisions.items() if seed == 2}
    assert first[()] != second[()]  # other pairs: other counts, whatever the variable


def test_every_found_coordinate_is_sensitive_on_its_hybrid_edge():
    f = targets.random_tree(n=N, leaves=16, seed=5)
    pairs = pair_points(f, 3, (), 0, 64)
    searching = np.flatnonzero(pairs.values[0::2] != pairs.values[1::2])
    assert searching.size > 10
    found = search_edges(f, 3, (), 0, pairs, searching)
    relevant = {int(v) for v in f.relevant_variables()} \
        if hasattr(f, "relevant_variables") else None
    points = derive.unpack_points(pairs.words, N)
    for row, pair in enumerate(searching):
        x, y = points[2 * pair], points[2 * pair + 1]
        assert x[found[row]] != y[found[row]]
        if relevant is not None:
            assert int(found[row]) in relevant


def test_parity_variables_are_found_and_split_on():
    f = targets.parity(N, 3, 1)
    params = lca.Params.efficient(N, depth=5)
    rec = lca.Reconstructor(f, params)
    explanation = rec.explain(np.ones(N, dtype=np.int8), 0)
    hidden = sorted(var for var, _ in explanation.path)
    assert len(hidden) == 3  # then f is constant: an early leaf, all its points agree
    assert abs(explanation.leaf.total) == explanation.leaf.samples
    points = derive.sample_points(1, "test-search-parity", N, 200)
    assert np.array_equal(rec.answer_many(points, 0), f(points))


def test_a_constant_function_is_one_early_leaf_without_searching_or_flipping():
    f = lca.from_callable(lambda x: 1, 30)
    params = lca.Params.efficient(30, depth=8)
    rec = lca.Reconstructor(f, params)
    explanation = rec.explain(np.ones(30, dtype=np.int8), 0)
    assert explanation.path == () and explanation.label == 1
    # Only the pairs' points were queried: no disagreement, nothing to search,
    # unanimous points, nothing to flip; and they are more than the leaf needs.
    assert rec.last_stats.queries == explanation.leaf.samples == 2 * 64
    assert rec.last_stats.early_leaves == 1


def test_a_pair_that_differs_in_one_coordinate_is_not_searched():
    # At n = 1 every disagreeing pair differs in its only coordinate, which is then
    # the found one (h_0 = x, h_1 = y): no hybrid to ask. The root spends its 2q
    # points, one flip of its one candidate per pair and, at its cap round, a probe
    # per pair, asked with the flips before rule 3 certifies the lead: 4q, whatever
    # number of pairs disagree.
    rec = lca.Reconstructor(targets.parity(1, 1, 0), lca.Params.efficient(1, depth=1),
                            record=True)
    rec.materialize(0, depth=0)
    root = rec.decisions[(0, ())]
    assert root.rule == "influence" and root.certified and 0 < root.disagreements < 64
    assert rec.last_stats.queries == 4 * 64


def test_a_constant_region_is_certified_once_enough_points_agree():
    f = lca.from_callable(lambda x: -1, 30)
    params = lca.Params.efficient(30, depth=8, pairs=256, eps=0.05)
    explanation = lca.Reconstructor(f, params).explain(np.ones(30, dtype=np.int8), 0)
    assert explanation.path == () and explanation.label == -1
    assert explanation.leaf.certified is True


def test_leaves_reuse_ancestors_points_before_drawing_fresh(noisy_tree, points):
    params = lca.Params.efficient(N, depth=3, leaf_samples=10_000)
    rec = lca.Reconstructor(noisy_tree, params, record=True)
    explanation = rec.explain(points[0], 7)
    # The leaf's reused points: every ancestor's own pair points in its subcube.
    reused = 0
    for k, node in enumerate(explanation.nodes):
        prefix = explanation.path[:k]
        own = pair_points(noisy_tree, 7, prefix, 0, node.samples)
        reused += len(in_subcube(own, explanation.path[k:], N))
    assert reused > 0
    assert explanation.leaf.samples == max(10_000, reused)


def test_low_margin_decisions_are_recorded_and_warned_about():
    noise = Flip(lca.from_callable(lambda x: 1, 20), rate=0.5, seed=9)
    params = lca.Params.efficient(20, depth=4, pairs=16, first_round=16)
    rec = lca.Reconstructor(noise, params)
    points = derive.sample_points(2, "test-search-noise", 20, 100)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rec.answer_many(points, 3)
    stats = rec.last_stats
    # Pure noise: the tree is built to the depth cap (15 nodes for depth 4),
    # every split is a guess, and so are most leaf labels.
    assert stats.nodes_built == 15
    assert stats.low_margin == stats.guesswork == stats.nodes_built
    assert stats.guesswork_answers > 50
    assert [w.category for w in caught] == [lca.LowMarginWarning]


def test_margins_are_the_paired_flip_edge_leads_and_are_shown(noisy_tree, params, points):
    explanation = lca.Reconstructor(noisy_tree, params).explain(points[0], 7)
    assert explanation.nodes
    root = explanation.nodes[0]
    # Recompute the root's contest from its pairs: flip each first point on the
    # leader and on the runner-up, and count the points with an edge on one only.
    pairs = pair_points(noisy_tree, 7, (), 0, root.samples)
    firsts, values = derive.unpack_points(pairs.words[0::2], N), pairs.values[0::2]
    edges = {}
    for v in (root.variable, root.runner_up):
        flipped = firsts.copy()
        flipped[:, v] = -flipped[:, v]
        edges[v] = noisy_tree(flipped) != values
    a = int((edges[root.variable] & ~edges[root.runner_up]).sum())
    b = int((edges[root.runner_up] & ~edges[root.variable]).sum())
    assert root.margin == a - b > 0
    text = str(explanation)
    for node in explanation.nodes:
        assert ("not told apart" in text) >= node.low_margin and "margin" not in text
        assert node.low_margin == (not node.certified)


def test_paper_modes_record_margins_too(noisy_tree, points):
    params = lca.Params.practical(n=N, depth=3, noise_rate=0.1, score_samples=300,
                                  leaf_samples=100)
    node = lca.Reconstructor(noisy_tree, params).decide(7, ())
    counts = estimate.score_counts(noisy_tree, 7, (), 300, params.noise_threshold)
    ranked = np.argsort(counts.agreements, kind="stable")
    assert (node.variable, node.runner_up) == (int(ranked[0]), int(ranked[1]))
    assert node.margin == int(counts.agreements[ranked[1]] - counts.agreements[ranked[0]])
    trials = 2 * counts.disagreements - int(counts.agreements[ranked[0]] +
                                            counts.agreements[ranked[1]])
    assert node.low_margin == (not estimate.lead_is_certified(node.margin, trials,
                                                              estimate._MARGIN_LOG))


def test_replicas_agree_in_efficient_mode(noisy_tree, params):
    # spawn pool, forkserver without cache, fork with chunk routing, pure lca.answer, Dask.
    assert_replicas_agree(noisy_tree, params, seed=1, queries=60, replicas=4, dask=True)


@pytest.mark.parametrize("kwargs, match", [
    ({"pairs": 0}, "pairs"),
    ({"depth": -1}, "depth"),
    ({"eps": 0.0}, "eps"),
    ({"delta": 1.5}, "delta"),
    ({"first_round": 0}, "first_round"),
])
def test_efficient_preset_rejects_bad_values(kwargs, match):
    with pytest.raises(ValueError, match=match):
        lca.Params.efficient(10, **kwargs)


def test_search_estimator_needs_eps_and_delta():
    with pytest.raises(ValueError, match="estimator='search'"):
        lca.Params(n=5, depth=2, noise_rate=0.1, score_samples=8, leaf_samples=8,
                   estimator="search")
    with pytest.raises(ValueError, match="'estimator'"):
        lca.Params(n=5, depth=2, noise_rate=0.1, score_samples=8, leaf_samples=8,
                   estimator="magic")


def test_describe_says_it_is_not_the_paper_estimator():
    text = lca.Params.efficient(100, depth=10).describe()
    assert "not the paper's estimator" in text
    assert f"at most {lca.Params.efficient(100, depth=10).predicted_queries}" in text


def test_a_noisy_dictator_is_split_on_at_the_root():
    # 20% label noise hides most sensitive edges and adds spurious ones; the
    # correlation of f with x_5 nominates it and its flip edges confirm it.
    dictator = lca.from_callable(lambda x: int(x[5]), N)
    f = Flip(dictator, rate=0.2, seed=6)
    node = lca.Reconstructor(f, lca.Params.efficient(N, depth=3)).decide(0, ())
    assert node.variable == 5
    assert node.rule == "influence" and node.margin > 0


def test_search_rules_are_named_on_every_node(noisy_tree, params, points):
    rec = lca.Reconstructor(noisy_tree, params, record=True)
    rec.answer_many(points, 7)
    rules = {d.rule for d in rec.decisions.values() if isinstance(d, lca.NodeDecision)}
    assert "influence" in rules and rules <= {"influence", "correlation"}


@pytest.mark.filterwarnings("ignore::lca.LowMarginWarning")  # one answer at a time: often a guess
def test_memo_byte_count_is_exact(noisy_tree, params, points, monkeypatch):
    # With no decision cache every walk rebuilds its nodes and keeps their
    # points again; the byte count must stay the sum of what is kept, within
    # the limit, also when the limit forces evictions.
    monkeypatch.setattr(reconstruct, "_MEMO_BYTES", 3000)
    rec = lca.Reconstructor(noisy_tree, params, cache_size=0)
    for z in points[:20]:
        rec.answer(z, 7)
    kept = list(rec._memo._items.values())
    assert len(kept) > 0 and rec._memo.nbytes == sum(words.nbytes for words in kept) <= 3000


def test_candidates_are_the_vote_leaders_with_votes_then_the_correlation_leader():
    free = np.array([True, True, True, True, False])
    votes = np.array([0, 5, 5, 3, 9])
    # Variable 4 is on the path: never a candidate, whatever its counts.
    assert search.candidates(votes, np.array([0, 0, 0, 7, 99]), free) == [1, 2, 3]
    assert search.candidates(votes, np.array([0, -8, 0, 7, 0]), free) == [1, 2]
    # No votes at all: only the correlation leader (ties to the lowest index).
    assert search.candidates(np.zeros(5, dtype=np.int64), np.zeros(5, dtype=np.int64),
                              free) == [0]


def test_the_influence_leader_has_most_flip_edges_and_a_paired_lead():
    edges = {3: np.array([1, 1, 0, 1, 0], dtype=bool), 1: np.array([1, 0, 1, 1, 0], dtype=bool),
             7: np.array([0, 0, 0, 0, 1], dtype=bool)}
    # 3 and 1 tie on 3 edges: the lower index leads; a, b count the points
    # with an edge on exactly one of them.
    assert search.influence_lead([3, 1, 7], edges) == (1, 3, 1, 1)
    assert search.influence_lead([7], edges) == (7, None, 1, 0)


@pytest.mark.filterwarnings("ignore::lca.LowMarginWarning")  # one answer at a time: often a guess
def test_a_node_never_spends_more_than_its_stated_maximum(noisy_tree, params, points):
    rec = lca.Reconstructor(noisy_tree, params, record=True)
    for z in points[:30]:
        before = rec.stats.queries
        explanation = rec.explain(z, 7)
        spent = rec.stats.queries - before
        assert spent <= len(explanation.path) * params.max_node_queries + params.leaf_samples


def test_unanimous_own_points_with_correlated_inherited_points_split_on_correlation():
    # Rule 5 of docs/randomness.md §6: nothing was flipped (f is constant on
    # the node's own points), yet the inherited points correlate with x_3.
    n = 20
    f = lca.from_callable(lambda x: 1, n)
    words = derive.uniform_points(derive.node_key(0, "test-rule-5", ()), n, 0, 400)
    values = derive.unpack_points(words, n)[:, 3].astype(np.int8)
    # eps = 0.01: certifying needs ceil(ln_upper(8 / 0.05) / 0.01) = 508 unanimous
    # own points, more than the 128 of the quiet cap (rule 1 cannot fire first).
    params = lca.Params.efficient(n, depth=4, eps=0.01)
    node = search_node(f, 0, (), params, search.Labelled(words, values))
    assert (node.variable, node.rule, node.runner_up, node.margin) == (3, "correlation", None, 0)
    assert not node.certified


# -- kernels against direct computations ----------------------------------------------------

def _direct_sums(words, values, counts, n, owners, rows):
    """Row ``owners[b]`` gets ``sum f(x) x`` over block ``b``: unpacked, one block at a time."""
    out = np.zeros((rows, n), dtype=np.int64)
    points = derive.unpack_points(words, n).astype(np.int64)
    at = 0
    for owner, count in zip(owners, counts, strict=True):
        block = slice(at, at + count)
        out[owner] += (values[block, None].astype(np.int64) * points[block]).sum(axis=0)
        at += count
    return out


def _labelled(n, rows, seed):
    words = derive.uniform_points(derive.node_key(seed, "test-kernels", ()), n, 0, rows)
    values = np.where(derive.unpack_points(words, n)[:, 0] * (-1) ** np.arange(rows) > 0,
                      1, -1).astype(np.int8)
    values[::3] = 1  # not a function of the row alone: sums see every row's sign
    return words, values


@pytest.mark.parametrize("variable", [0, 63, 64, 129])  # both ends of a word, later words
def test_labelled_sides_split_the_rows_by_a_coordinate_in_order(variable):
    points = sums.Labelled(*_labelled(130, 40, seed=2))
    plus, minus = points.sides(variable)
    column = derive.unpack_points(points.words, 130)[:, variable]
    assert np.array_equal(plus, np.flatnonzero(column == 1))
    assert np.array_equal(minus, np.flatnonzero(column == -1))
    assert plus.size and minus.size
    picked = points.rows(plus)
    assert np.array_equal(picked.words, points.words[plus])
    assert np.array_equal(picked.values, points.values[plus])


KERNELS = {"short rows": 1 << 40, "long rows": 1}  # sums._LONG_ROWS: which kernel runs


@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("n", [1, 37, 64, 130])
@pytest.mark.parametrize("counts, owners", [
    ([3, 0, 5, 1, 0, 7], None),
    ([0, 0, 4], None),
    ([6, 0], None),
    ([0], None),
    ([2, 3, 0, 4, 1, 5], [0, 0, 1, 1, 1, 3]),
    ([0, 5, 0, 0, 2], [1, 1, 1, 2, 2]),
    ([9], [2]),
    ([2], None),  # one block within one slice: the single-block sum
    ([3], [1]),
])
def test_grouped_correlations_equal_the_direct_sums(monkeypatch, kernel, n, counts, owners):
    monkeypatch.setattr(sums, "_LONG_ROWS", KERNELS[kernel])
    # Slices of 3 rows: blocks start, end and span slices everywhere.
    monkeypatch.setattr(sums, "SEARCH_BYTES", 3 * 3 * n)
    counts = np.array(counts, dtype=np.int64)
    words, values = _labelled(n, int(counts.sum()), seed=n)
    if owners is None:
        got = sums.grouped_correlations(words, values, counts, n)
        want = _direct_sums(words, values, counts, n, range(counts.size), counts.size)
    else:
        rows = max(owners) + 2  # a row no block adds to stays as it was
        got = np.full((rows, n), 5, dtype=np.int64)
        out = sums.grouped_correlations(words, values, counts, n, np.array(owners), got)
        assert out is got
        want = 5 + _direct_sums(words, values, counts, n, owners, rows)
    assert got.dtype == np.int64 and np.array_equal(got, want)


@pytest.mark.parametrize("limit_rows", [None, 2])
def test_a_lineage_of_one_node_reads_as_in_a_group(monkeypatch, limit_rows):
    # Two nodes (distinct ancestors from depth 1 on) with kept values and rows at
    # every depth, some empty: each read alone (the one-node path) equals its
    # row read in the group, and the sums equal the direct ones.
    from lca.estimator import Memo, NodeContext
    from lca.search import lineage

    if limit_rows is not None:  # too many rows to gather at once: the group path
        monkeypatch.setattr(lineage, "SEARCH_BYTES", 8 * limit_rows)
    n, seed = 70, 9
    rng = np.random.default_rng(5)
    paths = [((3, 1), (10, -1), (66, 1)), ((3, 1), (10, 1), (20, -1))]
    kept = {path[:k]: np.where(rng.random(12) < 0.4, -1, 1).astype(np.int8)
            for path in paths for k in range(3)}
    memo = Memo(1 << 20)
    contexts = [NodeContext(n, seed, path, None, lambda k, path=path: kept[path[:k]], memo)
                for path in paths]
    rows = [tuple(np.flatnonzero(rng.random(12) < 0.5) for _ in range(3)) for _ in paths]
    rows[1] = (rows[1][0], np.zeros(0, dtype=np.int64), rows[1][2])
    group = lineage.Lineage(contexts)
    steps = [(66, -1), (5, 1)]
    branches = group.on_branch(rows, steps)
    totals = group.totals(rows, [0, 1])
    split = group.branches(rows, [variable for variable, _ in steps])
    sums = group.sums(rows, [0, 1])
    for b, path in enumerate(paths):
        alone = lineage.Lineage([contexts[b]])
        branch, = alone.on_branch([rows[b]], [steps[b]])
        assert all(np.array_equal(x, y) for x, y in zip(branch, branches[b], strict=True))
        assert alone.totals([rows[b]], [0])[0] == totals[b]
        alone_split, = alone.branches([rows[b]], [steps[b][0]])
        words = np.concatenate([derive.uniform_points(
            derive.node_key(seed, search.rules.PAIRS, path[:k]), n, 0, 12, path[:k])[r]
            for k, r in enumerate(rows[b])])
        values = np.concatenate([kept[path[:k]][r] for k, r in enumerate(rows[b])])
        direct = _direct_sums(words, values, [values.size], n, [0], 1)
        assert np.array_equal(alone.sums([rows[b]], [0]), direct)
        assert np.array_equal(sums[b], direct[0])
        # Extra points (a node's own) add their sums, alone and in the group.
        extra = lca.search.sums.Labelled(words[::2], values[::2])
        with_extra = direct + _direct_sums(extra.words, extra.values, [len(extra)], n, [0], 1)
        assert np.array_equal(alone.sums([rows[b]], [0], [extra]), with_extra)
        assert np.array_equal(group.sums(rows, [0, 1], [extra] * 2)[b], with_extra[0])
        variable, bit = steps[b]
        for k, r in enumerate(rows[b]):
            own = derive.unpack_points(derive.uniform_points(
                derive.node_key(seed, search.rules.PAIRS, path[:k]), n, 0, 12, path[:k]), n)
            assert np.array_equal(branch[k], r[own[r, variable] == bit])
            for sides in (split[b], alone_split):  # a group's, and one node's
                assert np.array_equal(sides[0][k], r[own[r, variable] == 1])
                assert np.array_equal(sides[1][k], r[own[r, variable] == -1])
    empty = lineage.Lineage([contexts[1]])
    none = (np.zeros(0, dtype=np.int64),) * 3
    assert np.array_equal(empty.sums([none], [0]), np.zeros((1, n), dtype=np.int64))
    assert empty.totals([none], [0])[0] == 0


def test_grouped_correlations_of_long_rows_without_patching():
    n = sums._LONG_ROWS
    counts = np.array([2, 0, 3])
    words, values = _labelled(n, 5, seed=1)
    assert np.array_equal(sums.grouped_correlations(words, values, counts, n),
                          _direct_sums(words, values, counts, n, range(3), 3))
    # One below the switch: the other kernel, the same sums.
    words, values = _labelled(n - 1, 5, seed=1)
    assert np.array_equal(sums.grouped_correlations(words, values, counts, n - 1),
                          _direct_sums(words, values, counts, n - 1, range(3), 3))


@pytest.mark.parametrize("plus, minus", [(255, 0), (256, 3), (3, 511), (600, 600)])
def test_long_row_sums_never_wrap_their_byte_totals(monkeypatch, plus, minus):
    # Rows of all ones but one bit in seven rows: a byte total kept past 255 rows
    # of one sign would wrap to 0. Unpacked 100 rows at a time.
    n = 64
    monkeypatch.setattr(sums, "SEARCH_BYTES", 100 * n)
    words = np.full((plus + minus, 1), (1 << 64) - 1, dtype=np.uint64)
    words[::7, 0] ^= np.uint64(1 << 4)
    signs = np.array([1] * plus + [-1] * minus, dtype=np.int8)
    np.random.default_rng(plus).shuffle(signs)
    bits = derive.unpack_bits(words, n).astype(np.int64)
    assert bits.sum() == bits.size - words[::7].shape[0]
    want = (signs[:, None] * bits).sum(axis=0)
    assert np.array_equal(sums._signed_bit_sums(words, signs, n), want)


def test_correlations_of_labelled_points_equal_the_direct_sums(monkeypatch):
    monkeypatch.setattr(sums, "SEARCH_BYTES", 4 * 37)  # 4 rows per chunk
    words, values = _labelled(37, 23, seed=4)
    want = _direct_sums(words, values, [23], 37, [0], 1)[0]
    assert np.array_equal(correlations(search.Labelled(words, values), 37), want)
    assert not correlations(search.Labelled.empty(37), 37).any()


def _orders_by_lexsort(priority, differing, n):
    bits = derive.unpack_points(differing, n) == -1
    return [coordinates[np.lexsort((coordinates, priority[row, coordinates]))]
            for row, coordinates in enumerate(np.flatnonzero(b) for b in bits)]


@pytest.mark.parametrize("n", [1, 5, 63, 64, 65, 130])
@pytest.mark.parametrize("ties", ["none", "high bits", "exact"])
def test_switching_orders_equal_a_plain_lexsort(n, ties):
    rng = np.random.default_rng(n)
    pairs = 40
    priority = rng.integers(0, 2**64, size=(pairs, n), dtype=np.uint64)
    low_bits = (n + 1).bit_length()
    if ties == "high bits":
        # Three values of the high bits, anything in the low bits that the key
        # replaces by the index: the sort must be redone exactly.
        high = rng.integers(0, 3, size=(pairs, n), dtype=np.uint64) << np.uint64(61)
        priority = high | (priority & np.uint64((1 << low_bits) - 1))
    elif ties == "exact":
        priority = rng.integers(0, 2, size=(pairs, n), dtype=np.uint64) << np.uint64(63)
    differing = derive.uniform_points(derive.node_key(n, "test-orders", ()), n, 0, pairs)
    differing[0] = 0                               # no coordinate differs
    differing[1] = derive.pack_points(-np.ones((1, n), dtype=np.int8))[0]  # all of them
    order, lengths = hybrids.switching_orders(priority, differing, n)
    want = _orders_by_lexsort(priority, differing, n)
    assert lengths.tolist() == [w.size for w in want]
    assert lengths[0] == 0 and lengths[1] == n
    for row, expected in enumerate(want):
        assert order[row, :expected.size].tolist() == expected.tolist(), row
        assert (order[row, expected.size:] >= n).all()  # padding lies past every coordinate


class _Alternating(lca.Oracle):
    """Not a fixed function: row 2j of every call is +1, row 2j + 1 is -1."""

    n = 1
    name = "alternating"

    def query(self, points):
        return np.where(np.arange(points.shape[0]) % 2 == 0, 1, -1).astype(np.int8)


def test_an_oracle_that_is_not_a_fixed_function_is_named_not_crashed_on():
    # With n = 1 a pair is one point twice about half the time, and this oracle
    # gives every pair's two points different values: a point with two values.
    rec = lca.Reconstructor(_Alternating(), lca.Params.efficient(n=1, depth=1))
    with pytest.raises(lca.OracleError, match=r"answered the same point with two different "
                                              r"values \(pair \d+ of the node at path \(\)\)"):
        rec.answer(np.ones(1, dtype=np.int8), seed=0)


@pytest.mark.parametrize("kwargs, line", [
    # Z = ceil(ln_upper(2 R / delta) / eps): R = 2 rounds (one quiet round of 64 and the
    # noisy 128).
    ({}, "certified early leaf  88 or more own points unanimous: f there is 0.05-close to "
         "constant, except with probability 0.05 per node"),
    # R = 4 rounds (16, 32, 64 and the noisy 128).
    ({"first_round": 16}, "certified early leaf  102 or more own points unanimous"),
    # eps = 0.01: Z = 439 > 256, the most own points a node can draw (2 per pair, 128 pairs).
    ({"eps": 0.01}, "certified early leaf  never at these values: certifying needs 439 "
                    "unanimous own points, more than the 256 a node can draw"),
    # pairs = 16 (one quiet round and a noisy one of 32 pairs: R = 2): Z = 88 > 64.
    ({"pairs": 16}, "certified early leaf  never at these values: certifying needs 88 "
                    "unanimous own points, more than the 64 a node can draw"),
])
def test_describe_states_when_a_constant_leaf_can_be_certified(kwargs, line):
    assert line in lca.Params.efficient(n=100, **kwargs).describe()


@pytest.mark.parametrize("n", [1, 5, 64, 130, 300])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("segment_loop_min", [1, 1 << 40])
def test_every_hybrid_kernel_makes_the_same_rows_and_finds_the_same_coordinate(
        monkeypatch, n, ties, segment_loop_min):
    # Ranks (short rows), kept h_lo with segments (long rows) and per-step selection
    # (very long rows) are three ways to form h_mid = x with its first mid differing
    # coordinates (ascending priority, ties to the lower index) switched to y.
    # Segments are negated a row at a time or through flat index arrays.
    monkeypatch.setattr(hybrids, "_SEGMENT_LOOP_MIN", segment_loop_min)
    rng = np.random.default_rng(n)
    x = derive.uniform_points(derive.node_key(1, "test-x", ()), n, 0, 12)
    y = derive.uniform_points(derive.node_key(1, "test-y", ()), n, 0, 12)
    y[0] = x[0] ^ np.uint64(1)  # a pair differing in one coordinate
    keep = np.bitwise_count(x ^ y).sum(axis=1) > 0
    x, y = x[keep], y[keep]
    # With ties, priorities take 3 values: the index decides most of the order.
    high = 3 if ties else 2**63
    priority = rng.integers(0, high, size=(x.shape[0], n), dtype=np.uint64)
    order, lengths = hybrids.switching_orders(priority, x ^ y, n)
    ranked = hybrids._RankedHybrids(x, order, lengths, n)
    segments = hybrids._SegmentHybrids(x, order, n)
    selected = hybrids._SelectedHybrids(x, y, n, lambda pair, coords: priority[pair, coords])
    selected.take_priorities(0, priority)
    kernels = (ranked, segments, selected)
    ys = derive.unpack_points(y, n)
    lo, hi = np.zeros(lengths.size, dtype=np.int64), lengths.astype(np.int64)
    while (hi - lo > 1).any():
        active = np.flatnonzero(hi - lo > 1)
        start, mid = lo[active], (lo[active] + hi[active]) // 2
        a, b, c = (kernel.rows(active, start, mid, 0, active.size) for kernel in kernels)
        assert np.array_equal(a, b) and np.array_equal(a, c)
        # h_mid agrees with y on the first mid coordinates of the order, with x elsewhere.
        for row, pair in enumerate(active):
            switched = order[pair, :mid[row]]
            assert np.array_equal(a[row, switched], ys[pair, switched])
        moved = rng.random(active.size) < 0.5
        new_lo, new_hi = np.where(moved, mid, start), np.where(moved, hi[active], mid)
        for kernel in kernels:
            kernel.advance(active, start, hi[active], new_lo, new_hi)
        lo[active], hi[active] = new_lo, new_hi
    found = ranked.found(hi)
    assert np.array_equal(found, segments.found(hi))
    assert np.array_equal(found, selected.found(hi))



@pytest.mark.parametrize("n", [12, 100, 300])
def test_a_search_split_in_priority_parts_finds_what_each_pair_finds_alone(monkeypatch, n):
    # Priorities are derived a part at a time (SEARCH_BYTES // (25 n) pairs); with
    # one pair per part every part's orders are as wide as its own pair, and the
    # group's order must still pad past each pair's length (never a coordinate).
    # Parity of every variable: each hybrid's value counts its switched coordinates,
    # so one coordinate missing from a hybrid moves the search.
    f = targets.parity(n, n, seed=5)
    path = ((3, 1),)
    pairs = pair_points(f, 7, path, 0, 40)
    searching = np.flatnonzero(pairs.values[0::2] != pairs.values[1::2])
    assert searching.size >= 8
    alone = [int(search_edges(f, 7, path, 0, pairs, searching[i:i + 1])[0])
             for i in range(searching.size)]
    monkeypatch.setattr(hybrids, "SEARCH_BYTES", 25 * n)  # one pair per part
    found = search_edges(f, 7, path, 0, pairs, searching)
    assert found.tolist() == alone


# -- the package: import paths, one-way imports, tunables --------------------------------------

# Every public name lca.search exported before it became a package (its __all__
# less the one-node helpers only tests used, now tests/search_support.py; its
# other public names), with the module that now defines it. Tests reach the
# internals in those modules.
SEARCH_HOMES = {
    **dict.fromkeys(["FLIP", "LEAF", "NOISY_ROUNDS", "ORDER", "PAIRS", "PROBE",
                     "SEARCH_CANDIDATES", "candidates", "cap_rule", "certifying_points",
                     "correlated", "has_structure", "influence_lead", "is_guesswork",
                     "noise_like", "noisy_rounds", "probe_variables", "round_rule",
                     "schedule"], "lca.search.rules"),
    "Labelled": "lca.search.sums",
    "SearchNode": "lca.search.group",
    **dict.fromkeys(["SEARCH", "SearchEstimator", "certified_text", "max_samples"],
                    "lca.search.search_estimator"),
}
# The package's modules in import order: each imports only those before it.
SEARCH_MODULES = ["rules", "sums", "hybrids", "group", "kernels", "compiled", "lineage",
                  "search_estimator"]


@pytest.mark.parametrize("name", sorted(SEARCH_HOMES))
def test_every_name_keeps_its_import_path(name):
    home = importlib.import_module(SEARCH_HOMES[name])
    assert getattr(search, name) is getattr(home, name)
    assert name in search.__all__ or name in ("SearchEstimator", "certified_text")


def test_all_lists_only_names_the_package_has():
    assert set(search.__all__) <= set(SEARCH_HOMES)
    assert not {"pair_points", "leaf_points", "search_edges", "search_node"} & set(dir(search))


@pytest.mark.parametrize("module", SEARCH_MODULES)
def test_imports_within_the_package_flow_one_way(module):
    path = pathlib.Path(search.__file__).with_name(f"{module}.py")
    imported = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "lca.search":
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lca.search."):
            imported.add(node.module.split(".")[2])
    earlier = set(SEARCH_MODULES[:SEARCH_MODULES.index(module)])
    assert imported <= earlier, imported - earlier


def test_the_tunables_set_on_rules_reach_every_reader(monkeypatch):
    # Scripts sweep NOISY_ROUNDS and SEARCH_CANDIDATES on lca.search.rules, where
    # every reader reads them.
    from lca._validate import MAX_ARRAY_BYTES
    from lca.search import rules

    # Rounds of 16 (not the preset's one round): S = 16, 32, 64, 128; log2 100 -> 7.
    params = lca.Params.efficient(100, depth=12, first_round=16)
    monkeypatch.setattr(rules, "NOISY_ROUNDS", 0)
    assert search.schedule(16, 64) == ([16, 32, 64], 3)
    assert search.max_samples(3) == MAX_ARRAY_BYTES // (16 * 3)  # // (16 * 3 * 2) at 1
    assert params.max_node_queries == 64 * (3 + 7) + 3 * (16 + 32 + 64)
    monkeypatch.setattr(rules, "SEARCH_CANDIDATES", 1)
    assert search.candidates(np.array([0, 5, 5]), np.array([9, 0, 0]), np.ones(3, bool)) \
        == [1, 0]
    assert params.max_node_queries == 64 * (3 + 7) + 2 * (16 + 32 + 64)
    monkeypatch.undo()
    assert rules.NOISY_ROUNDS == 1 and rules.SEARCH_CANDIDATES == 2
    assert search.max_samples(3) == MAX_ARRAY_BYTES // (16 * 3 * 2)
    assert params.max_node_queries == 2000


@pytest.mark.filterwarnings("ignore::lca.LowMarginWarning")  # the noisy fixture
def test_the_selection_kernel_decides_every_node_as_the_sorted_orders_do(monkeypatch):
    # Forced on at n = 300 (it runs from n = 10^5): the same decisions, queries, answers.
    # Then again with words that keep only 3 high bits of each priority: nearly
    # every boundary falls inside a run of equal high bits, so both kernels order
    # those coordinates by their exact priorities (the selection kernel derives
    # them one word at a time), and nothing changes either. (The numpy kernels: the
    # compiled ones never select.)
    from lca.search import hybrids
    monkeypatch.setenv("LCA_KERNELS", "numpy")
    f = targets.with_label_noise(targets.random_tree(n=300, leaves=32, seed=3), 0.05, 4)
    params = lca.Params.efficient(300, depth=8)
    points = derive.sample_points(0, "test/selection", 300, 40)
    three_high_bits = (np.uint64((1 << 61) - 1), np.uint64(7 << 61))
    asked = []
    priority_words = hybrids._priority_words
    monkeypatch.setattr(hybrids, "_priority_words",
                        lambda *args: asked.append(args) or priority_words(*args))
    runs = []
    for masks in (hybrids._index_masks, lambda n: three_high_bits):
        monkeypatch.setattr(hybrids, "_index_masks", masks)
        for threshold in (hybrids.SELECTED_MIN_N, 1):
            monkeypatch.setattr(hybrids, "SELECTED_MIN_N", threshold)
            rec = lca.Reconstructor(f, params, record=True)
            runs.append((rec.answer_many(points, 7), rec.decisions, rec.stats.queries))
    assert len(asked) > 100  # the exact order ran, from derived words
    for answers, decisions, queries in runs[1:]:
        assert np.array_equal(runs[0][0], answers)
        assert runs[0][1] == decisions and runs[0][2] == queries


def test_a_pairs_priority_words_are_its_priority_row_at_those_coordinates():
    n, keys = 37, [11, 12, 13]
    node, pair = np.array([0, 2, 2]), np.array([5, 0, 9])
    coords = np.array([36, 0, 17, 17, 3])
    for at in range(3):
        row = hybrids._priorities(keys[node[at]], n, pair[at:at + 1], int(pair[at]),
                                  int(pair[at]) + 1)[0]
        assert np.array_equal(hybrids._priority_words(n, keys, node, pair, at, coords),
                              row[coords])


@pytest.mark.parametrize("kwargs, text", [
    ({}, "pairs per node        64 in one round, up to 128 at a noisy node"),
    ({"pairs": 16}, "pairs per node        16 in one round, up to 32 at a noisy node"),
    ({"first_round": 16}, "pairs per node        16, doubling up to 64, up to 128 at a noisy"),
    ({"first_round": 8, "pairs": 100},
     "pairs per node        8, doubling up to 100, up to 200 at a noisy"),
])
def test_describe_states_the_rounds_of_pairs(kwargs, text):
    assert text in lca.Params.efficient(n=100, **kwargs).describe()


# -- lookahead: several binary-search steps per oracle call, the same search -----------------

def _lookahead_runs(f, n, points, lookaheads):
    """Per lookahead: batched answers and decisions, one-at-a-time answers, and both
    routes' queries and oracle calls."""
    runs = {}
    for s in lookaheads:
        params = lca.Params.efficient(n, depth=6, lookahead=s)
        batched = lca.Reconstructor(f, params, record=True)
        answers = batched.answer_many(points, 7).tolist()
        single = lca.Reconstructor(f, params, record=True)
        alone = [single.answer(z, 7) for z in points]
        runs[s] = (answers, batched.decisions, alone, single.decisions,
                   (batched.stats.queries, single.stats.queries),
                   (batched.stats.oracle_calls, single.stats.oracle_calls))
    return runs


@pytest.mark.filterwarnings("ignore::lca.LowMarginWarning")  # noisy targets: guesses happen
@pytest.mark.parametrize("n", [12, 100, 300])  # ranked orders to 256, segments beyond
@pytest.mark.parametrize("target", ["noisy-tree", "parity"])
def test_every_lookahead_makes_the_same_decisions_in_fewer_calls(n, target):
    if target == "parity":  # every hybrid's value counts its switched coordinates
        f = targets.parity(n, min(n, 6), seed=5)
    else:
        f = targets.with_label_noise(targets.random_tree(n=n, leaves=16, seed=3), 0.1, 4)
    points = derive.sample_points(0, "test/lookahead", n, 30)
    runs = _lookahead_runs(f, n, points, (1, 2, 3, 4))
    answers, decisions, alone, alone_decisions, queries, calls = runs[1]
    assert alone == answers
    for s in (2, 3, 4):
        assert runs[s][:4] == (answers, decisions, alone, alone_decisions), s
        assert all(a >= b for a, b in zip(runs[s][4], queries, strict=True)), s
        assert all(a <= b for a, b in zip(runs[s][5], calls, strict=True)), s
    # The searches ran, so batching them saved calls and cost queries.
    assert runs[4][4][1] > queries[1] and runs[4][5][1] < calls[1]


@pytest.mark.filterwarnings("ignore::lca.LowMarginWarning")
def test_the_selection_kernel_searches_a_step_per_call_whatever_the_lookahead(monkeypatch):
    # Forced on at n = 300 (it runs from n = 10^5): it keeps one selection per pair,
    # so it asks one step per call; answers, decisions and costs are lookahead 1's.
    monkeypatch.setattr(hybrids, "SELECTED_MIN_N", 1)
    f = targets.with_label_noise(targets.random_tree(n=300, leaves=16, seed=3), 0.1, 4)
    points = derive.sample_points(0, "test/lookahead", 300, 20)
    runs = _lookahead_runs(f, 300, points, (1, 3))
    assert runs[3] == runs[1]
    assert lca.Params.efficient(300, lookahead=3).max_node_queries \
        == lca.Params.efficient(300).max_node_queries
    assert "lookahead 3 is not used at this n" in lca.Params.efficient(
        300, lookahead=3).describe()


def _one_search(n, lookahead, target):
    """One pair, x and y = -x: the requests' sizes and the found coordinate when
    ``f(h) = f(x)`` exactly while ``h`` differs from ``x`` in at most ``target``
    coordinates (so the search ends at ``hi = target + 1``)."""
    key = derive.node_key(1, "test-lookahead", ())
    x = derive.uniform_points(key, n, 0, 1)
    xs = derive.unpack_points(x, n)
    y = derive.pack_points(-xs)
    steps = hybrids.search_steps(n, [key], np.zeros(1, dtype=np.int64),
                                 np.zeros(1, dtype=np.int64), x, y, np.ones(1, dtype=np.int8),
                                 (0, 1), [()], lookahead)
    sizes = []
    try:
        request = next(steps)
        while True:
            sizes.append(request.count)
            rows = request.rows(0, request.count)
            request = steps.send(np.where((rows != xs).sum(axis=1) <= target, 1, -1)
                                 .astype(np.int8))
    except StopIteration as stop:
        found = int(stop.value[0])
    priority = hybrids._priorities(key, n, np.zeros(1, dtype=np.int64), 0, 1)
    order, _ = hybrids.switching_orders(priority, x ^ y, n)
    return sizes, found, int(order[0, target])


@pytest.mark.parametrize("lookahead, sizes", [
    (1, [1] * 6), (2, [3, 3, 3]), (3, [7, 7]), (4, [15, 3]), (8, [63])])
def test_a_lookahead_request_asks_every_midpoint_of_its_steps(lookahead, sizes):
    # L = 64 differing coordinates: 6 steps, each request a full tree of 2^s - 1
    # midpoints while the interval allows (the last of s = 4 has 2 steps left: 3;
    # s = 8 stops at intervals of one coordinate: 63 midpoints).
    for target in (0, 17, 63):
        asked, found, expected = _one_search(64, lookahead, target)
        assert asked == sizes and found == expected


@pytest.mark.parametrize("n", [5, 45, 300])
def test_a_lookahead_search_finds_the_sequential_searchs_coordinate(n):
    # Every place the value changes, every lookahead, both sorted-order kernels (300).
    for target in range(0, n, max(1, n // 15)):
        single, found, expected = _one_search(n, 1, target)
        assert found == expected
        for lookahead in (2, 3, 4):
            asked, again, _ = _one_search(n, lookahead, target)
            assert again == found
            assert len(asked) == -(-len(single) // lookahead)
            assert max(asked) <= (1 << lookahead) - 1


@pytest.mark.parametrize("lookahead", [1, 2, 3, 4, 8])
def test_pure_noise_spends_within_the_lookahead_bound(lookahead):
    # Pure label noise (the worst case: a noisy node, every candidate new in every
    # round, half its pairs searching), n = 64: ceil(log2 64) = 6 steps per search.
    from lca.search import rules
    n = 64
    f = lca.CountingOracle(targets.with_label_noise(lca.from_callable(lambda x: 1, n),
                                                    0.5, 3))
    params = lca.Params.efficient(n, depth=4, pairs=64, first_round=16, lookahead=lookahead)
    rounds, _ = search.schedule(16, 64)
    hybrids_bound = ((1 << lookahead) - 1) * -(-6 // lookahead)
    assert params.max_node_queries == 128 * (3 + hybrids_bound) + \
        (rules.SEARCH_CANDIDATES + 1) * sum(rounds)
    node = search_node(f, 0, (), params, search.Labelled.empty(n))
    assert node.pairs == 128 and f.queries <= params.max_node_queries


def test_max_node_queries_counts_each_lookahead_requests_midpoints():
    # n = 100: ceil(log2 100) = 7 steps; the hybrid term per pair is (2^s - 1) ceil(7 / s).
    assert [lca.Params.efficient(100, depth=12, lookahead=s).max_node_queries
            for s in (1, 2, 3, 7)] == [128 * (3 + h) + 3 * (64 + 128) for h in (7, 12, 21, 127)]


class _Costly(lca.Oracle):
    """A fixed function whose calls cost a fixed delay: "auto" then batches searches."""

    def __init__(self, inner, delay):
        self.inner, self.delay = inner, delay
        self.n, self.name = inner.n, "costly"

    def query(self, points):
        import time
        time.sleep(self.delay)
        return self.inner.query(points)


@pytest.mark.filterwarnings("ignore::lca.LowMarginWarning")
@pytest.mark.parametrize("n", [30, 300])
def test_lookahead_auto_makes_the_same_decisions(n):
    # Whatever the costs measured (and so the steps chosen), the answers and decisions
    # are lookahead 1's, one at a time and in batches; the queries stay within the bound
    # the budget reserves.
    f = _Costly(targets.with_label_noise(targets.random_tree(n=n, leaves=16, seed=3), 0.1, 4),
                2e-4)
    points = derive.sample_points(0, "test/lookahead-auto", n, 20)
    runs = _lookahead_runs(f, n, points, (1, "auto"))
    assert runs["auto"][:4] == runs[1][:4]
    params = lca.Params.efficient(n, depth=6, lookahead="auto")
    single = lca.Reconstructor(f, params)
    explained = single.explain(points[0], 7)
    assert explained.lookahead.startswith("auto: ") and "; oracle " in explained.lookahead
    assert "search steps per call auto: " in str(explained)
    assert single.last_stats.queries <= params.predicted_queries
    assert lca.Reconstructor(f, lca.Params.efficient(n, depth=6)).explain(
        points[0], 7).lookahead is None


def test_lookahead_auto_is_bounded_described_and_left_out_of_records():
    auto = lca.Params.efficient(100, depth=6, lookahead="auto")
    # The bound covers every choice: 1 to ceil(log2 100) = 7 steps a request.
    assert auto.max_node_queries == max(
        lca.Params.efficient(100, depth=6, lookahead=s).max_node_queries for s in range(1, 8))
    assert "auto  (1 to 7, chosen for each search" in auto.describe()
    assert auto == lca.Params.efficient(100, depth=6)  # not part of the tree
    assert "lookahead" not in dataclasses.asdict(auto)
    assert "chooses 1 at this n" in lca.Params.efficient(2, depth=1, lookahead="auto").describe()
    with pytest.raises(ValueError, match=r"must be an int in the range \[1, 8\] or 'auto'\. "
                                         r"Got 'fast' instead\."):
        lca.Params.efficient(100, lookahead="fast")
