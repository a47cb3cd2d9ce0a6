"""The efficient mode's rules one by one, at their boundaries (docs/randomness.md §6).

The known-answer vectors are the second net; each rule here fails on its own
when its comparison, its level or its counter changes.
"""

import math
from fractions import Fraction

import numpy as np
import pytest

import lca
from lca import derive, search, targets
from lca.estimate import ln_upper, ln_upper_exact
from lca.search import group
from lca.search.rules import Round, Terms, free_leader

from search_support import leaf_points, pair_points, search_node

DELTA = 0.05
EPS = 0.05


# -- has_structure: the vote leader against Bin(V, 1/F) -----------------------------------

@pytest.mark.parametrize("votes, structure", [(0, False), (1, True), (5, True)])
def test_one_free_variable_any_edge_is_structure(votes, structure):
    assert search.has_structure(votes, votes, 1, 100.0) is structure


def test_one_free_variable_decides_a_dictator_at_the_root_only():
    # n = 2, f = x0: the root splits on x0 and both children are constant
    # (with "votes >= 0" for one free variable they would split again).
    f = lca.from_callable(lambda x: int(x[0]), 2)
    tree = lca.Reconstructor(f, lca.Params.efficient(2, depth=2)).materialize(0)
    nodes = [d for d in tree.decisions.values() if isinstance(d, lca.NodeDecision)]
    assert [d.variable for d in nodes] == [0]


def test_vote_structure_is_the_bernstein_bound_at_its_boundary():
    # V = 10 edges on F = 2 variables: mean 5, variance 2.5; 9 votes exceed it
    # by 4, and 4^2 >= 2 (2.5 + 4/3) L holds exactly up to L = 48/23.
    boundary = 48 / 23
    assert search.has_structure(9, 10, 2, boundary * (1 - 1e-12))
    assert not search.has_structure(9, 10, 2, boundary * (1 + 1e-12))
    # No excess is never structure, whatever the level.
    assert not search.has_structure(5, 10, 2, 0.0)
    assert search.has_structure(6, 10, 2, 0.0)


# -- correlated: Hoeffding on |sum f(u) u_i| -----------------------------------------------

@pytest.mark.parametrize("correlation", [4, -4])
def test_correlation_boundary_is_inclusive(correlation):
    # c^2 >= 2 N L: 16 >= 2 * 2 * 4.
    assert search.correlated(correlation, 2, 4.0)
    assert not search.correlated(correlation, 2, 4.0 + 1e-12)
    assert not search.correlated(0, 1, 0.0 + 1e-300)


# -- rule 1: the certified constant -------------------------------------------------------

def test_certifying_points_at_the_defaults_and_the_proofs_inequality():
    rounds, _ = search.schedule(16, 64)
    z = search.certifying_points(len(rounds), EPS, DELTA)
    assert z == math.ceil(ln_upper_exact(Fraction(8) / Fraction(DELTA)) / Fraction(EPS)) == 102
    # docs/theory.md §7: 2 R e^(-eps Z) <= delta, and Z - 1 would not be enough
    # by ln alone rounded up (ln_upper overshoots ln by less than 1/64 ln 2 + ...).
    assert 2 * len(rounds) * math.exp(-EPS * z) <= DELTA
    assert z <= 2 * 64  # reachable at the quiet cap of the defaults


@pytest.mark.parametrize("minority, points, constant, unanimous", [
    (0, 102, True, False), (0, 101, False, True), (1, 102, False, False),
    (0, 500, True, False), (3, 500, False, False)])
def test_round_rule_certifies_unanimity_from_enough_points(minority, points, constant,
                                                           unanimous):
    c, u = search.round_rule(np.array([minority]), points, 102)
    assert (bool(c[0]), bool(u[0])) == (constant, unanimous)


def test_a_certified_leaf_is_labelled_from_its_own_points_alone():
    # f = -1 except on the 1/16 of the cube where x0..x3 are all +1: the root's
    # 128 points happen to be unanimous or not; a depth-1 node on x0 = -1 is
    # constant, so it is certified from its own points and draws no fresh ones.
    f = lca.from_callable(lambda x: 1 if (x[:4] == 1).all() else -1, 12)
    rec = lca.Reconstructor(f, lca.Params.efficient(12, depth=6), record=True)
    rec.answer_many(derive.sample_points(0, "test-rules", 12, 400), 1)
    certified = [(p, d) for p, d in rec.decisions.items()
                 if isinstance(d, lca.LeafDecision) and d.certified]
    assert certified and rec.last_stats.certified_leaves == len(certified)
    for (seed, path), leaf in certified:
        own = pair_points(f, seed, path, 0, leaf.samples // 2)
        assert leaf.samples == len(own) >= 102
        assert leaf.total == own.total == leaf.label * leaf.samples


# -- rule 4 and its probe gate; rule 7 ---------------------------------------------------

def _state(pairs, minority, probes, votes=None):
    n = 4
    plus = 2 * pairs - minority
    return Round(pairs, 0, np.zeros(n, dtype=np.int64) if votes is None else votes,
                 np.zeros(n, dtype=np.int64), 2 * pairs, plus - minority, probes)


def test_no_structure_needs_at_most_eps_of_the_points_in_the_minority():
    free = np.ones(4, dtype=bool)
    terms = Terms.of(5, 4, EPS, DELTA)
    # 80 points: eps * P = 4 exactly.
    assert search.cap_rule(_state(40, 4, 2), free, EPS, terms) == "no structure"
    assert search.cap_rule(_state(40, 5, 3), free, EPS, terms) == "influence"


def test_no_structure_needs_the_probes_to_explain_the_minority():
    free = np.ones(4, dtype=bool)
    terms = Terms.of(5, 4, EPS, DELTA)
    assert search.cap_rule(_state(40, 4, 2), free, EPS, terms) == "no structure"
    assert search.cap_rule(_state(40, 4, 1), free, EPS, terms) == "influence"
    assert search.cap_rule(_state(40, 0, 0), free, EPS, terms) == "no structure"


def test_no_structure_yields_to_vote_structure():
    free = np.ones(4, dtype=bool)
    terms = Terms.of(5, 4, EPS, DELTA)
    votes = np.array([0, 0, 0, 0], dtype=np.int64)
    state = _state(40, 4, 2, votes)
    state.disagreements, votes[2] = 30, 30  # all 30 edges on one of 4 variables
    assert search.cap_rule(state, free, EPS, terms) == "influence"


@pytest.mark.parametrize("probes, minority, like", [
    (0, 0, True), (0, 1, False), (1, 2, True), (1, 3, False), (2, 4, True), (5, 4, True)])
def test_noise_like_is_twice_the_probes_against_the_minority(probes, minority, like):
    assert search.noise_like(probes, minority) is like


@pytest.mark.parametrize("probes, leader, pairs, rounds", [
    (0, 0, 64, 0),     # no probe edge: never noisy
    (20, 41, 64, 0),   # the leader has more than twice the probes' edges
    (20, 40, 64, 1),   # gap 24: 2 * 24 <= 64 (never more than NOISY_ROUNDS = 1)
    (16, 32, 64, 1),   # gap 32: 2 * 32 = 64 <= 64, the boundary is inclusive
    (15, 30, 64, 0),   # gap 34: 68 > 64
    (32, 32, 64, 1),   # r = 1/2: no gap left
    (40, 40, 64, 1)])  # r > 1/2: likewise
def test_noisy_rounds_at_their_boundaries(probes, leader, pairs, rounds):
    assert search.noisy_rounds(probes, leader, pairs) == rounds


@pytest.mark.parametrize("probes, rounds", [
    # pairs = 100, leader edges 0: 2^k (100 - 2 probes) <= 100.
    (24, 0),   # gap 52: 104 > 100
    (25, 1),   # gap 50: 100 <= 100
    (50, 1)])  # gap 0
def test_noisy_rounds_follow_the_noise_estimate(probes, rounds):
    assert search.noisy_rounds(probes, 0, 100) == rounds


def test_schedule_adds_the_noisy_rounds_after_the_quiet_ones():
    assert search.schedule(16, 64) == ([16, 32, 64, 128], 3)
    assert search.schedule(16, 16) == ([16, 32], 1)
    assert search.schedule(16, 48) == ([16, 32, 48, 96], 3)


def test_probe_variables_are_free_and_from_their_own_stream():
    free = np.array([True, False, True, True, False, True])
    path = ((1, 1), (4, -1))
    probes = search.probe_variables(3, path, free, 5, 25)
    words = derive.raw_words(derive.node_key(3, search.PROBE, path), 0, 5, 20)
    assert probes.tolist() == [[0, 2, 3, 5][w % 4] for w in words.tolist()]
    assert set(probes.tolist()) == {0, 2, 3, 5}  # 20 draws reach all 4, derived


def test_a_noise_free_node_with_a_dictator_is_quiet_and_a_noisy_one_is_not():
    # f = x5: a probe is x5 with probability 1/40 only; at 20% label noise the
    # probes change f about 32% of the time, at least half as often as x5 (68%).
    n = 40
    dictator = lca.from_callable(lambda x: int(x[5]), n)
    params = lca.Params.efficient(n, depth=3, pairs=16, first_round=16)
    quiet = search_node(dictator, 0, (), params, search.Labelled.empty(n))
    assert quiet.variable == 5 and quiet.certified and quiet.pairs == 16
    noisy = targets.with_label_noise(lca.from_callable(lambda x: 1, n), 0.5, 1)
    node = search_node(noisy, 0, (), params, search.Labelled.empty(n))
    assert node.pairs == 32 and node.probes > 0  # one noisy round: 16 -> 32


# -- guesswork (reporting only) ------------------------------------------------------------

def test_guesswork_is_the_sign_test_of_the_leader_against_the_probes():
    log_term = ln_upper(Fraction(3) / Fraction(DELTA))  # about 4.09
    leader = np.array([1] * 20 + [0] * 20, dtype=bool)
    probe = np.zeros(40, dtype=bool)
    # a = 20, b = 0: 400 >= 2 * 4.09 * 20 = 164: not guesswork.
    assert not search.is_guesswork(leader, probe, log_term)
    # a = 4, b = 0: 16 < 2 * 4.09 * 4 = 32.7: guesswork.
    few = np.array([1] * 4 + [0] * 36, dtype=bool)
    assert search.is_guesswork(few, probe, log_term)
    # Edges on both at the same pair count for neither side.
    assert search.is_guesswork(leader, leader, log_term)


# -- leaf points -------------------------------------------------------------------------

def test_leaf_points_zero_asks_nothing():
    f = lca.CountingOracle(lca.from_callable(lambda x: int(x[0]), 6))
    points = leaf_points(f, 0, ((1, 1),), 0)
    assert len(points) == 0 and points.words.shape == (0, 1) and f.queries == 0


def test_leaf_points_are_the_first_samples_of_the_leaf_stream():
    f = lca.from_callable(lambda x: int(x[0]), 6)
    path = ((1, 1),)
    points = leaf_points(f, 2, path, 5)
    words = derive.uniform_points(derive.node_key(2, search.LEAF, path), 6, 0, 5, path)
    assert np.array_equal(points.words, words)
    assert np.array_equal(points.values, derive.unpack_points(words, 6)[:, 0])
    assert (derive.unpack_points(words, 6)[:, 1] == 1).all()


# -- the query budget: a proved worst case, and an oracle that drives it -------------------

def test_max_node_queries_formula():
    params = lca.Params.efficient(100, depth=12)  # S = 64, 128; log2 100 -> 7
    assert params.max_node_queries == 128 * (2 + 7 + 1) + 3 * (64 + 128) == 1856
    rounds = lca.Params.efficient(100, depth=12, first_round=16)  # S = 16, 32, 64, 128
    assert rounds.max_node_queries == 128 * (2 + 7 + 1) + 3 * (16 + 32 + 64 + 128) == 2000
    one = lca.Params.efficient(1, depth=1, pairs=16, first_round=16)  # no hybrid at n = 1
    assert one.max_node_queries == 32 * (2 + 0 + 1) + 3 * (16 + 32)


def test_pure_noise_spends_past_the_old_statement_and_within_the_proved_bound(monkeypatch):
    # Pure label noise on n = 64: the node is noisy (probe rate about 1/2: one
    # more round, to twice the pair cap) and its candidates change between
    # rounds, each new one flipped from pair 0. The old statement allowed
    # K * score_samples = 192 flips. Deterministic (fixed seeds).
    n = 64
    f = lca.CountingOracle(targets.with_label_noise(lca.from_callable(lambda x: 1, n),
                                                    0.5, 3))
    params = lca.Params.efficient(n, depth=4, pairs=64, first_round=16)
    flips = []
    original = group.flip_steps

    def counted(n, firsts, node, pair, column, paths):
        flips.append(node.size)
        return (yield from original(n, firsts, node, pair, column, paths))

    monkeypatch.setattr(group, "flip_steps", counted)
    node = search_node(f, 0, (), params, search.Labelled.empty(n))
    rounds, _ = search.schedule(16, 64)
    assert node.pairs == rounds[-1] == 128 and node.probes > 0
    probes = 128  # every pair probed once: 64 at the quiet cap, 64 at the noisy one
    candidate_flips = sum(flips) - probes
    assert 3 * 64 < candidate_flips <= 3 * sum(rounds)
    # One flip request per round: the probes ride with the two caps' flips.
    assert len(flips) == len(rounds)
    assert flips[-2] > 64 and flips[-1] > 128 - 64
    hybrids = f.queries - 2 * 128 - sum(flips)
    assert 0 < hybrids <= node.disagreements * 6  # ceil(log2 64) = 6
    assert f.queries <= params.max_node_queries


def test_probes_asked_with_a_cap_round_count_only_when_rule_3_does_not_decide(monkeypatch):
    # One quiet round (first_round = pairs): round 1 is the cap. A dictator on
    # variable 0 certifies its lead there (rule 3), after its probes were asked in
    # the same request as the candidates' flips: the node spends them, unread.
    n = 12
    f = lca.CountingOracle(lca.from_callable(lambda x: int(x[0]), n))
    params = lca.Params.efficient(n, depth=3, pairs=64, first_round=64)
    requests = []
    original = group.flip_steps

    def counted(n, firsts, node, pair, column, paths):
        requests.append(column.copy())
        return (yield from original(n, firsts, node, pair, column, paths))

    monkeypatch.setattr(group, "flip_steps", counted)
    node = search_node(f, 0, (), params, search.Labelled.empty(n))
    assert (node.variable, node.rule, node.certified, node.pairs) == (0, "influence", True, 64)
    assert node.probes == 0  # asked, not counted
    [columns] = requests  # one request: candidate flips, then one probe per pair
    probes = columns[-64:]
    assert np.array_equal(probes, search.probe_variables(0, (), np.ones(n, bool), 0, 64))
    assert columns.size == 64 * len(set(columns[:-64].tolist())) + 64
    assert f.queries <= params.max_node_queries


def test_a_new_candidate_is_flipped_from_pair_zero():
    # Round with 32 pairs: candidate 5 was measured on 16 pairs, 9 is new.
    edges = [{5: np.zeros(16, dtype=bool)}]
    node, pair, column, blocks = group.flip_plan({0: [5, 9]}, edges, 32)
    assert blocks == [(0, 5, 16), (0, 9, 0)]
    assert pair.tolist() == list(range(16, 32)) + list(range(32))
    assert column.tolist() == [5] * 16 + [9] * 32 and (node == 0).all()


@pytest.mark.parametrize("blocks", [[(0, 7, 3)], [(0, 7, 8)], [(2, 7, 3), (0, 4, 0), (5, 1, 7)]])
def test_runs_give_each_block_its_pairs_first_to_stop_in_block_order(blocks):
    node, pair, column = group._runs(blocks, 8)  # one block takes a path of its own
    want = [(b, p, c) for b, c, first in blocks for p in range(first, 8)]
    assert list(zip(node.tolist(), pair.tolist(), column.tolist(), strict=True)) == want
    assert node.dtype == pair.dtype == column.dtype == np.int64


def test_the_free_leader_has_the_highest_score_ties_to_the_lowest_index():
    free = np.array([False, True, True, True, True])
    # Variable 0 is on the path: never the leader, whatever its score.
    assert free_leader(np.array([9, 2, 5, 5, 1]), free) == 2
    assert free_leader(np.array([9, 0, 0, 0, 0]), free) == 1
    assert free_leader(np.array([9, 1, 1, 1, 3]), free) == 4
    assert free_leader(np.array([0, -1, -3, -1, -2]), free) == 1


def test_the_test_terms_follow_the_number_of_candidates(monkeypatch):
    # Ll = ln_upper(R (K + 1) K / delta): cached, but K is part of the key.
    from fractions import Fraction

    from lca.estimate import ln_upper
    from lca.search import rules
    for k in (2, 1, 3):
        monkeypatch.setattr(rules, "SEARCH_CANDIDATES", k)
        terms = rules.Terms.of(4, 10, 0.05, 0.05)
        assert terms.lead == ln_upper(Fraction(4 * (k + 1) * k) / Fraction(0.05))
        assert terms.guesswork == ln_upper(Fraction(k + 1) / Fraction(0.05))
