"""The compiled kernels against the numpy reference, bit for bit (lca.search.compiled).

Every test runs both and compares: every request a node group makes (its
purpose and every row, in order) and every field of every decision, over
thousands of random nodes, and every efficient known-answer vector.
"""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import lca
from lca import derive, search, targets
from lca.search import compiled, hybrids, rules
from lca.search.compiled import CompiledGroup, kernel_path
from lca.search.group import NodeGroup

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="the compiled kernels need numba (lca[fast])")

ROOT = Path(__file__).resolve().parent.parent


def run_group(group, oracle):
    """Drive a group's steps with ``oracle``: every request as (purpose, rows), and the
    results. Each request's rows are also made in two pieces, as the engine's chunks
    may ask them, and must join to the whole."""
    requests = []
    steps = group.steps()
    try:
        request = next(steps)
        while True:
            rows = request.rows(0, request.count)
            cut = request.count // 3
            assert np.array_equal(np.concatenate([request.rows(0, cut),
                                                  request.rows(cut, request.count)]), rows)
            requests.append((request.purpose, rows))
            request = steps.send(oracle(rows) if request.count else np.zeros(0, np.int8))
    except StopIteration as stop:
        return requests, stop.value


def assert_same_nodes(reference, other):
    assert len(reference) == len(other)
    for a, b in zip(reference, other, strict=True):
        assert (a.variable, a.runner_up, a.rule, a.margin, a.pairs, a.disagreements,
                a.certified, a.probes, a.guesswork) == \
               (b.variable, b.runner_up, b.rule, b.margin, b.pairs, b.disagreements,
                b.certified, b.probes, b.guesswork)
        assert np.array_equal(a.votes, b.votes)
        assert np.array_equal(a.correlations, b.correlations)
        assert np.array_equal(a.own.words, b.own.words)
        assert np.array_equal(a.own.values, b.own.values)


def assert_same_runs(oracle, seed, paths, params, counts, sums):
    expected = run_group(NodeGroup(oracle.n, seed, paths, params, counts, sums), oracle)
    got = run_group(CompiledGroup(oracle.n, seed, paths, params, counts, sums), oracle)
    assert [purpose for purpose, _ in expected[0]] == [purpose for purpose, _ in got[0]]
    for (_, rows), (_, other) in zip(expected[0], got[0], strict=True):
        assert np.array_equal(rows, other)
    assert_same_nodes(expected[1], got[1])
    return expected[1]


def random_oracle(rng, n):
    kind = rng.integers(6)
    seed = int(rng.integers(1 << 30))
    if kind == 0:  # constant on most subcubes: certified leaves, unanimous rounds
        f = targets.random_tree(n, int(rng.integers(1, 3)), seed)
    elif kind == 1 and n >= 2:  # every coordinate of a few matters: many ties
        f = targets.parity(n, int(rng.integers(1, min(n, 4) + 1)), seed)
    elif kind == 2:
        f = targets.majority(n, 2 * int(rng.integers(0, (min(n, 7) + 1) // 2)) + 1, seed)
    else:
        f = targets.random_tree(n, int(rng.integers(2, min(64, 2 ** min(n, 6)) + 1)), seed)
    rate = rng.choice([0.0, 0.0, 0.02, 0.2, 0.45])
    return targets.with_label_noise(f, float(rate), seed + 1) if rate else f


def random_case(rng):
    """A group of 1 to 4 nodes at one depth, its params, and inherited counts and sums."""
    n = int(rng.choice([int(rng.integers(1, 9)), int(rng.integers(9, 130)),
                        int(rng.integers(200, 300)), 700]))
    pairs = int(rng.choice([1, 3, 8, 16, 64]))
    params = lca.Params.efficient(
        n, depth=12, pairs=pairs, first_round=int(rng.choice([1, 2, 4, 16, 64])),
        eps=float(rng.choice([0.01, 0.05, 0.3])), delta=float(rng.choice([0.05, 0.5])),
        lookahead=int(rng.integers(1, 5)))
    depth = int(rng.integers(0, min(n, 6)))
    paths = []
    for _ in range(int(rng.integers(1, 5))):
        variables = rng.choice(n, size=depth, replace=False)
        path = tuple((int(v), int(rng.choice([-1, 1]))) for v in variables)
        if path not in paths:
            paths.append(path)
    counts = rng.integers(0, 300, size=len(paths))
    sums = np.zeros((len(paths), n), dtype=np.int64)
    for b, (count, path) in enumerate(zip(counts, paths, strict=True)):
        # Sums of count points of +-1 coordinates: the parity of count, within +-count;
        # a path variable's is its bit times the total.
        sums[b] = count - 2 * rng.integers(0, count + 1, size=n)
        for variable, bit in path:
            sums[b, variable] = bit * (count - 2 * int(rng.integers(0, count + 1)))
    return params, paths, counts, sums


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("batch", range(8))
def test_random_nodes_make_the_same_requests_and_decisions(batch):
    # 8 batches of 100 groups: about 2,000 random nodes in all.
    rng = np.random.default_rng(20261128 + batch)
    rules_seen = set()
    for _ in range(100):
        params, paths, counts, sums = random_case(rng)
        oracle = random_oracle(rng, params.n)
        nodes = assert_same_runs(oracle, int(rng.integers(1 << 62)), paths, params, counts,
                                 sums)
        rules_seen |= {node.rule for node in nodes}
    assert len(rules_seen) >= 3  # the batches reach the rules, not one of them


@pytest.mark.parametrize("candidates,noisy", [(1, 1), (3, 2), (2, 0)])
def test_the_tunables_reach_the_kernels(monkeypatch, candidates, noisy):
    monkeypatch.setattr(rules, "SEARCH_CANDIDATES", candidates)
    monkeypatch.setattr(rules, "NOISY_ROUNDS", noisy)
    rng = np.random.default_rng(7 + candidates)
    for _ in range(40):
        params, paths, counts, sums = random_case(rng)
        assert_same_runs(random_oracle(rng, params.n), 3, paths, params, counts, sums)


def test_searches_split_into_groups_and_parts_make_the_same_requests(monkeypatch):
    # A working-memory bound this small splits a round's searching pairs into groups
    # searched one after another, and their priorities into parts.
    monkeypatch.setattr(hybrids, "SEARCH_BYTES", 3000)
    f = targets.with_label_noise(targets.random_tree(50, 32, seed=5), 0.2, seed=6)
    for lookahead in (1, 3):
        params = lca.Params.efficient(50, depth=6, lookahead=lookahead)
        paths = [((1, 1),), ((1, -1),), ((2, 1),)]
        assert_same_runs(f, 11, paths, params, np.zeros(3, dtype=np.int64),
                         np.zeros((3, 50), dtype=np.int64))


def _make_known_answers():
    spec = importlib.util.spec_from_file_location(
        "make_known_answers", ROOT / "scripts" / "make_known_answers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STORED = json.loads((ROOT / "tests" / "data" / "known_answers.json").read_text())
EFFICIENT = [case for case in _make_known_answers().CASES if case["mode"] == "efficient"]


@pytest.mark.parametrize("path", ["compiled", "numpy"])
@pytest.mark.parametrize("case", EFFICIENT, ids=[case["name"] for case in EFFICIENT])
def test_every_efficient_known_answer_is_made_on_both_paths(monkeypatch, path, case):
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, path)
    module = _make_known_answers()
    assert kernel_path(module.build_params(case["params"])) == path
    stored = next(c for c in STORED["reconstructions"] if c["name"] == case["name"])
    assert module.compute_case(case) == stored


@pytest.mark.filterwarnings("ignore::lca.LowMarginWarning")
def test_both_paths_answer_alike_on_every_route(monkeypatch):
    f = targets.with_label_noise(targets.random_tree(n=40, leaves=16, seed=3), 0.05, 4)
    params = lca.Params.efficient(40, depth=6)
    points = derive.sample_points(0, "test/compiled", 40, 120)
    runs = []
    for path in ("numpy", "compiled"):
        monkeypatch.setenv(compiled.KERNELS_VARIABLE, path)
        rec = lca.Reconstructor(f, params, record=True)
        batch = rec.answer_many(points, 7)
        one = lca.Reconstructor(f, params)
        assert [one.answer(z, 7) for z in points[:30]] == batch[:30].tolist()
        runs.append((batch, rec.decisions, rec.stats.queries, rec.stats.oracle_calls))
    assert np.array_equal(runs[0][0], runs[1][0])
    assert runs[0][1:] == runs[1][1:]


def test_the_environment_picks_the_kernels(monkeypatch):
    params = lca.Params.efficient(40)
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, "numpy")
    assert kernel_path(params) == "numpy"
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, "compiled")
    assert kernel_path(params) == "compiled"
    # Beyond the kernels' widths the numpy code runs, whatever is asked.
    assert kernel_path(lca.Params.efficient(hybrids.SELECTED_MIN_N)) == "numpy"
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, "fast")
    with pytest.raises(ValueError, match="LCA_KERNELS must be 'auto', 'compiled' or"):
        kernel_path(params)
    monkeypatch.delenv(compiled.KERNELS_VARIABLE)
    assert kernel_path(params) == "compiled"
    monkeypatch.setattr(compiled, "kernel_module", lambda: None)
    assert kernel_path(params) == "numpy"
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, "compiled")
    with pytest.raises(RuntimeError, match=r"needs numba: pip install 'lca\[fast\]'"):
        kernel_path(params)


def test_describe_says_which_kernels_run_and_why(monkeypatch):
    params = lca.Params.efficient(40)
    assert "node kernels          compiled (numba 0." in search.SEARCH.describe(params)
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, "numpy")
    assert "node kernels          numpy (LCA_KERNELS=numpy)" in search.SEARCH.describe(params)
    monkeypatch.delenv(compiled.KERNELS_VARIABLE)
    wide = lca.Params.efficient(hybrids.SELECTED_MIN_N)
    assert "numpy (the compiled kernels stop below n = 100,000" in wide.describe()
    monkeypatch.setattr(compiled, "kernel_module", lambda: None)
    assert "numpy (pip install 'lca[fast]'" in params.describe()


@pytest.mark.parametrize("n", [1, 7, 64, 130, 1000])
def test_switching_orders_break_ties_in_the_high_bits_exactly(n):
    # Priorities from a few values, some equal in their high bits and low bits
    # alike: the kernel orders by (priority, index) as the numpy code does.
    from lca.search import kernels
    rng = np.random.default_rng(n)
    m = 40
    base = rng.integers(0, 4, size=(m, n), dtype=np.uint64) << np.uint64(60)
    priority = base | rng.integers(0, 3, size=(m, n), dtype=np.uint64)
    differing = derive.pack_points(np.where(rng.random((m, n)) < 0.5, -1, 1))
    differing[derive.unpack_bits(differing, n).sum(axis=1) == 0, 0] = 1  # none empty
    expected, lengths = hybrids.switching_orders(priority, differing, n)
    order = np.full((m, n), -1, dtype=np.int32)
    kernels.switching_orders(priority[:25], differing, n, order, 0)
    kernels.switching_orders(priority[25:], differing, n, order, 25)
    for row, length in enumerate(lengths):
        assert np.array_equal(order[row, :length], expected[row, :length])


@pytest.mark.filterwarnings("ignore::lca.LowMarginWarning")
def test_replicas_in_spawned_workers_on_the_compiled_kernels_agree_with_the_reference(
        monkeypatch):
    # Spawned pool workers and a pure replica inherit LCA_KERNELS=compiled (they would
    # raise without numba) and load the kernels from the on-disk cache; a replica on the
    # numpy reference (forked with LCA_KERNELS=numpy) is the first one compared.
    from lca.consistency import ReplicaSpec, compare, run_replica, uniform_queries

    f = targets.with_label_noise(targets.random_tree(n=40, leaves=16, seed=3), 0.05, 4)
    params = lca.Params.efficient(40, depth=6)
    queries = uniform_queries(7, 40, 120)
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, "numpy")
    outcomes = [run_replica(ReplicaSpec("numpy, fork", start_method="fork"),
                            f, params, 7, queries)]
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, "compiled")
    for spec in (ReplicaSpec("compiled, spawn, 2 workers", workers=2),
                 ReplicaSpec("compiled, pure", kind="pure", limit=20)):
        outcomes.append(run_replica(spec, f, params, 7, queries))
    report = compare(outcomes)
    assert report.ok, str(report)
    assert report.compared_decisions > 0
