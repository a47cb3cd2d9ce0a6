"""What every registered estimator promises, checked mode by mode (lca.estimator).

For each name of :func:`lca.estimator.names` and each mode that selects it
(the paper's fixed and adaptive modes select ``"score"``, the efficient mode
``"search"``), on two small noisy trees: every batching route answers alike;
every decision spends within the stated caps (and a whole tree's spending
is the sum of its decisions'); the stated working memory grows with ``n``
and the sample counts, and covers what a search group holds; a reconstructor
pickles to one that answers alike; ``describe()`` names the mode. And the
registry refuses a name twice.
"""

import pickle
import re

import numpy as np
import pytest

import lca
from lca import derive, estimator, targets
from lca.engine import drive
from lca.search.group import NodeGroup

# The battery checks routes, spending and memory, not accuracy: one answer at a
# time on a noisy tree often rests on a leaf whose label is a guess, and the
# reconstructor says so (a LowMarginWarning is expected, not a failure).
pytestmark = pytest.mark.filterwarnings("ignore::lca.LowMarginWarning")

SEED = 5

# name -> mode -> (Params for n, depth and a sample count; a line describe() shows for
# this mode and no other mode's describe() shows).
MODES = {
    "score": {
        "fixed": (lambda n, depth, samples: lca.Params.practical(
            n=n, depth=depth, noise_rate=0.2, score_samples=samples, leaf_samples=samples),
            r"^  queries per answer    \d+  \(cold, no cache\)$"),
        "adaptive": (lambda n, depth, samples: lca.Params.practical(
            n=n, depth=depth, noise_rate=0.2, score_samples=4 * samples,
            leaf_samples=4 * samples, adaptive=True, tau=0.1, eps=0.1, delta=0.1),
            r"^  adaptive              rounds from \d+ samples"),
    },
    "search": {
        "efficient": (lambda n, depth, samples: lca.Params.efficient(
            n, depth=depth, pairs=samples, first_round=16),
            r"^lca parameters \(efficient preset: sensitive-coordinate search, not the "
            r"paper's estimator\)$"),
    },
}

# Two small trees under label noise, with their depth caps.
TARGETS = {
    "tree24": (lambda: targets.with_label_noise(targets.random_tree(n=24, leaves=12, seed=1),
                                                rate=0.1, seed=2), 5),
    "tree36": (lambda: targets.with_label_noise(targets.random_tree(n=36, leaves=8, seed=3),
                                                rate=0.05, seed=4), 4),
}

CASES = [pytest.param(name, mode, id=f"{name}-{mode}")
         for name in estimator.names() for mode in MODES.get(name, {})]
CASES_ON_TARGETS = [pytest.param(name, mode, target, id=f"{name}-{mode}-{target}")
                    for name in estimator.names() for mode in MODES.get(name, {})
                    for target in TARGETS]


def _params(mode, n, depth, samples=64):
    name = next(name for name, modes in MODES.items() if mode in modes)
    params = MODES[name][mode][0](n, depth, samples)
    assert params.estimator == name  # the mode selects the estimator it is listed under
    return params


@pytest.fixture(scope="module")
def oracles():
    return {key: make() for key, (make, _) in TARGETS.items()}


def _setup(oracles, mode, target):
    f, depth = oracles[target], TARGETS[target][1]
    return f, _params(mode, f.n, depth), derive.sample_points(1, "test-contract", f.n, 60)


def test_every_registered_estimator_has_a_mode_here():
    # A new estimator must join the battery: every name runs at least one mode.
    assert set(estimator.names()) == set(MODES)
    assert all(MODES[name] for name in MODES)


# -- (a) every batching route gives the same answers ---------------------------------------

@pytest.mark.parametrize("name, mode, target", CASES_ON_TARGETS)
def test_every_route_gives_the_same_answers(oracles, name, mode, target):
    f, params, points = _setup(oracles, mode, target)
    reference = lca.Reconstructor(f, params).answer_many(points, SEED)
    assert set(np.unique(reference).tolist()) <= {-1, 1}
    one = lca.Reconstructor(f, params)
    assert [one.answer(z, SEED) for z in points] == reference.tolist()
    chunked = lca.Reconstructor(f, params)
    assert np.array_equal(np.concatenate([chunked.answer_many(points[lo:lo + 7], SEED)
                                          for lo in range(0, len(points), 7)]), reference)
    uncached = lca.Reconstructor(f, params, cache_size=0)
    assert np.array_equal(uncached.answer_many(points, SEED), reference)
    assert [uncached.answer(z, SEED) for z in points[:5]] == reference[:5].tolist()
    assert [lca.answer(z, SEED, oracle=f, params=params)
            for z in points[:5]] == reference[:5].tolist()
    tree = lca.Reconstructor(f, params).materialize(SEED)
    assert np.array_equal(tree.query(points), reference)


# -- (b) spending stays within the caps ----------------------------------------------------

@pytest.mark.parametrize("name, mode, target", CASES_ON_TARGETS)
def test_each_decision_spends_within_its_cap(oracles, name, mode, target):
    f, params, _ = _setup(oracles, mode, target)
    whole = lca.Reconstructor(f, params, record=True)
    whole.materialize(SEED)
    decisions = {path: d for (seed, path), d in whole.decisions.items() if seed == SEED}
    # Each decision alone, its ancestors already decided (from the cache).
    alone = lca.Reconstructor(f, params)
    spent = {}
    for path in sorted(decisions, key=len):
        assert alone.decide(SEED, path) == decisions[path]
        assert alone.last_built == [path]
        spent[path] = alone.last_stats.queries
    node_cap, leaf_cap = params.max_node_queries, params.max_leaf_queries
    early = params.estimation.early_leaves(params)
    for path, decision in decisions.items():
        if isinstance(decision, lca.NodeDecision):
            assert 0 < spent[path] <= node_cap, path
        elif len(path) < params.path_length:  # an early leaf: its node's work, then a label
            assert early and spent[path] <= node_cap + leaf_cap, path
        else:
            assert spent[path] <= leaf_cap, path
    # Deciding a level together shares oracle calls, never rows: the tree spent
    # exactly what its decisions spend one by one.
    assert whole.last_stats.queries == sum(spent.values())
    if mode == "fixed":  # the paper's fixed mode spends its caps exactly
        assert {spent[p] for p, d in decisions.items() if isinstance(d, lca.NodeDecision)} \
            == {node_cap}
        assert {spent[p] for p, d in decisions.items() if isinstance(d, lca.LeafDecision)} \
            == {leaf_cap}
    assert whole.last_stats.queries <= len(decisions) * (node_cap + leaf_cap)


# -- (c) working memory ---------------------------------------------------------------------

@pytest.mark.parametrize("name, mode", CASES)
def test_node_memory_grows_with_n_and_the_samples(name, mode):
    # The stated formulas, not a measurement: a node of more variables or more
    # samples never claims less memory, and every estimator here claims some.
    memory = [[params.estimation.node_memory(params)
               for params in (_params(mode, n, 4, samples) for samples in (32, 64, 256))]
              for n in (8, 64, 65, 300)]
    assert all(value > 0 for row in memory for value in row)
    for row in memory:
        assert row == sorted(row)
    for column in zip(*memory, strict=True):
        assert list(column) == sorted(column)
    assert memory[-1][-1] > memory[0][0]


def _held_bytes(group):
    counts = group.counts
    arrays = [counts.free, counts.votes, counts.correlations, counts.labelled,
              counts.own_total, counts.disagreements, counts.words, counts.values,
              *counts.probes, *(edges for node in group.edges for edges in node.values())]
    return sum(array.nbytes for array in arrays)


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("pairs", [16, 64])
def test_a_search_group_holds_no_more_than_its_stated_memory(oracles, target, pairs):
    # The search estimator's one measurable hook: the arrays a group of nodes
    # holds once decided (its points, counts, probe and flip edges). The
    # stated memory's first terms are two of them exactly: the own points and
    # their values, room for 2 Q of each (Q the noisy cap), and two int64
    # vectors (votes, correlations); the rest of what it holds fits in the
    # term for one round's searches.
    f, depth = oracles[target], TARGETS[target][1]
    params = _params("efficient", f.n, depth, pairs)
    paths = [(), ((0, 1),), ((0, -1),), ((3, 1), (5, -1))]
    group = NodeGroup(f.n, SEED, paths, params, np.zeros(len(paths), dtype=np.int64),
                      np.zeros((len(paths), f.n), dtype=np.int64))
    drive(group.steps(), f, SEED)
    cap = 2 * pairs  # the noisy cap: one doubling past the pair cap
    counts = group.counts
    assert counts.words.nbytes + counts.values.nbytes \
        == len(paths) * 2 * cap * (8 * derive.words_per_point(f.n) + 1)
    assert counts.votes.nbytes + counts.correlations.nbytes == len(paths) * 16 * f.n
    assert _held_bytes(group) <= len(paths) * params.estimation.node_memory(params)


# -- (d) pickling ----------------------------------------------------------------------------

@pytest.mark.parametrize("name, mode, target", CASES_ON_TARGETS)
def test_a_pickled_reconstructor_answers_alike(oracles, name, mode, target):
    f, params, points = _setup(oracles, mode, target)
    rec = lca.Reconstructor(f, params, cache_size=100)
    reference = rec.answer_many(points, SEED)
    copy = pickle.loads(pickle.dumps(rec))
    assert copy.params == params and copy.cache_size == 100
    assert copy.params.estimation is params.estimation  # found again by its name
    assert copy.stats.queries == 0  # it pickles without its cache or statistics
    assert np.array_equal(copy.answer_many(points, SEED), reference)
    assert copy.stats.queries == rec.stats.queries
    # The estimator object pickles by its module path too.
    assert type(pickle.loads(pickle.dumps(params.estimation))) is type(params.estimation)


# -- (e) describe() names the mode -----------------------------------------------------------

@pytest.mark.parametrize("name, mode", CASES)
def test_describe_names_the_mode(name, mode):
    text = _params(mode, 30, 4).describe()
    lines = {other: line for modes in MODES.values() for other, (_, line) in modes.items()}
    assert re.search(lines[mode], text, re.MULTILINE)
    assert not [other for other, line in lines.items()
                if other != mode and re.search(line, text, re.MULTILINE)]


# -- the registry ------------------------------------------------------------------------------

def test_register_refuses_a_name_twice():
    before = estimator.names()
    search = estimator.get("search")
    with pytest.raises(ValueError, match=r"^register needs an estimator whose name is not "
                                         r"registered yet: 'search' is "
                                         r"lca\.search\.search_estimator\.SearchEstimator\. "
                                         r"Got lca\.search\.search_estimator\.SearchEstimator "
                                         r"named 'search'\.$"):
        estimator.register(type(search)())
    # The same object again is refused too: a name is registered once.
    with pytest.raises(ValueError, match="'search' is"):
        estimator.register(search)
    assert estimator.names() == before and estimator.get("search") is search


def test_register_accepts_a_new_name_once():
    class Renamed(type(estimator.get("search"))):
        name = "search-renamed-for-test"

    try:
        registered = estimator.register(Renamed())
        assert estimator.get(Renamed.name) is registered
        assert estimator.names()[-1] == Renamed.name
        with pytest.raises(ValueError, match=r"'search-renamed-for-test' is .*Renamed\. Got "):
            estimator.register(Renamed())
    finally:
        estimator._REGISTRY.pop(Renamed.name, None)
    assert Renamed.name not in estimator.names()
