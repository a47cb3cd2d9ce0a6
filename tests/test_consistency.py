"""Replica harness: honest replicas agree; broken ones are caught at the right node."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

import lca
from lca import derive, targets
from lca._cli_parallel import add_consistency_command
from lca.consistency import (
    ConsistencyReport,
    ReplicaOutcome,
    ReplicaSpec,
    check_consistency,
    compare,
    default_replicas,
    query_order,
    run_replica,
    uniform_queries,
)
from lca.models import Surrogate
from lca.oracle import Oracle
from lca.params import Params
from lca.reconstruct import LeafDecision, NodeDecision
from lca.testing import assert_replicas_agree

N = 64
SEED = 7
PARAMS = Params.practical(n=N, depth=5, noise_rate=0.1, score_samples=200,
                          leaf_samples=100)
TARGET = targets.with_label_noise(targets.random_tree(N, 16, 1), 0.1, 2)
QUERIES = uniform_queries(SEED, N, 300)


class FlipAt(Oracle):
    """``inner`` with its value negated on one point."""

    def __init__(self, inner: Oracle, point: np.ndarray) -> None:
        self.inner, self.n, self.name = inner, inner.n, f"{inner.name} flipped at one point"
        self.point = np.asarray(point, dtype=np.int8)

    def query(self, points: np.ndarray) -> np.ndarray:
        values = np.array(self.inner.query(points), dtype=np.int8)
        hit = np.all(points == self.point, axis=1)
        values[hit] = -values[hit]
        return values


@pytest.fixture(scope="module")
def reference() -> ReplicaOutcome:
    """The honest reference replica, run once for the broken-replica tests."""
    return run_replica(ReplicaSpec("reference: spawn, 2 workers", workers=2), TARGET,
                       PARAMS, SEED, QUERIES)


def test_honest_replicas_agree() -> None:
    report = check_consistency(TARGET, PARAMS, seed=SEED, queries=QUERIES, replicas=4,
                               pure_queries=40, dask=False)
    assert report.ok, str(report)
    assert report.agreement_rate == 1.0
    assert report.compared_answers == 2 * 300 + 40
    assert report.compared_decisions > 0 and report.first_divergence is None
    kinds = {(o.spec.kind, o.spec.start_method) for o in report.replicas}
    assert ("pure", "spawn") in kinds and len(kinds) >= 3
    assert "AGREE" in str(report)


def test_harness_fails_on_a_different_seed(reference: ReplicaOutcome) -> None:
    broken = run_replica(ReplicaSpec("seed 8", seed=8), TARGET, PARAMS, SEED, QUERIES)
    report = compare([reference, broken])
    assert not report.ok
    first = report.first_divergence
    assert first.path == () and (first.seed_a, first.seed_b) == (SEED, 8)
    assert "path () (depth 0)" in str(report) and "(seed 8)" in str(report)


def test_harness_fails_on_a_different_noise_rate(reference: ReplicaOutcome) -> None:
    noisier = Params.practical(n=N, depth=5, noise_rate=0.2, score_samples=200,
                               leaf_samples=100)
    broken = run_replica(ReplicaSpec("p = 0.2", params=noisier, cache_size=0, shuffle=True),
                         TARGET, PARAMS, SEED, QUERIES, index=1)
    report = compare([reference, broken])
    first = report.first_divergence
    assert not report.ok and first.path == ()
    assert isinstance(first.decision_b, NodeDecision) and first.decision_b.samples == 200
    assert "disagreements" in first.fields


def test_harness_names_the_node_whose_samples_hit_a_changed_point() -> None:
    # The point: the first leaf sample of the leaf the first query reaches.
    leaf_path = lca.Reconstructor(TARGET, PARAMS).explain(QUERIES[0], SEED).path
    key = derive.node_key(SEED, "leaf", leaf_path)
    point = derive.unpack_points(derive.uniform_points(key, N, 0, 1, leaf_path), N)[0]
    broken = FlipAt(TARGET, point)
    specs = [ReplicaSpec("honest", workers=2),
             ReplicaSpec("one point flipped", oracle=broken, shuffle=True)]
    with pytest.raises(AssertionError) as info:
        assert_replicas_agree(TARGET, PARAMS, seed=SEED, queries=QUERIES, replicas=specs)
    message = str(info.value)
    assert "DIVERGE" in message and f"leaf at path {leaf_path}" in message
    assert "differs in total" in message and "seed 7" in message
    # The flip changes one leaf sum by 2; every ancestor decision still agrees.
    report = compare([run_replica(s, TARGET, PARAMS, SEED, QUERIES) for s in specs])
    assert [d.path for d in report.divergences] == [leaf_path]
    first = report.first_divergence
    assert abs(first.decision_a.total - first.decision_b.total) == 2


# -- pure parts: no processes --------------------------------------------------------

def outcome(name: str, answers: list[int], decisions: dict, conflicts=(), seed=SEED):
    return ReplicaOutcome(ReplicaSpec(name), seed, np.array(answers, dtype=np.int8),
                          decisions, tuple(conflicts), 0.0)


def test_compare_orders_divergences_shallowest_first_and_counts() -> None:
    node, other_node = NodeDecision(3, 10, 4, 1), NodeDecision(5, 10, 4, 0)
    leaf, other_leaf = LeafDecision(1, 8, 2), LeafDecision(1, 8, 4)
    deep = ((3, 1), (5, -1))
    a = outcome("a", [1, -1, 1], {(): node, ((3, 1),): node, deep: leaf})
    b = outcome("b", [1, 1, 1], {(): node, ((3, 1),): other_node, deep: other_leaf},
                conflicts=[((), node, other_node)])
    report = compare([a, b])
    assert (report.compared_answers, report.agreeing_answers) == (3, 2)
    assert (report.compared_decisions, report.agreeing_decisions) == (3, 1)
    assert [d.path for d in report.divergences] == [(), ((3, 1),), deep]
    assert "another worker" in report.first_divergence.replica_b
    assert report.divergences[2].fields == ("total",)
    assert report.answer_mismatches == ((1, "b", -1, 1),)
    assert report.agreement_rate == pytest.approx(3 / 6)
    assert isinstance(report, ConsistencyReport) and not report.ok


def test_query_order_is_a_derived_permutation() -> None:
    order = query_order(SEED, 1000)
    assert sorted(order.tolist()) == list(range(1000))
    np.testing.assert_array_equal(order, query_order(SEED, 1000))
    assert not np.array_equal(order, query_order(SEED, 1000, salt=1))
    assert not np.array_equal(order, np.arange(1000))
    np.testing.assert_array_equal(order[:10], query_order(SEED, 1000)[:10])


def test_default_replicas_vary_what_must_not_matter() -> None:
    specs = default_replicas(6, dask=True)
    assert len(specs) == 7 and specs[-1].kind == "dask"
    assert {s.cache_size for s in specs} >= {0, 64, 1 << 16}
    assert {s.routing for s in specs} == {"prefix", "chunk"}
    assert any(s.shuffle for s in specs) and any(s.kind == "pure" for s in specs)
    assert len({s.name for s in default_replicas(9)}) == 9


@pytest.mark.parametrize("kwargs, error, match", [
    ({"replicas": 1}, ValueError, "'replicas' parameter of check_consistency"),
    ({"replicas": ["x"]}, TypeError, "'replicas' parameter"),
    ({"queries": 0}, ValueError, "'queries' parameter"),
    ({"queries": np.zeros((2, N), dtype=np.int8)}, ValueError, "only -1 and \\+1"),
])
def test_check_consistency_validates(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        check_consistency(TARGET, PARAMS, seed=SEED, **kwargs)


def test_cli_command_reports_and_exits_zero(capsys) -> None:
    parser = argparse.ArgumentParser(prog="lca")
    add_consistency_command(parser.add_subparsers(dest="command", required=True))
    for mode in (["--mode", "paper", "--score-samples", "100"], ["--mode", "efficient"]):
        args = parser.parse_args(["consistency", "--replicas", "2", "--queries", "200",
                                  "--n", "32", "--depth", "4", *mode,
                                  "--leaf-samples", "50", "--no-dask", "--quiet"])
        assert args.run(args) == 0
        out = capsys.readouterr().out
        assert "2 replicas, AGREE" in out and "answers    200/200 agree" in out


# -- surrogates: one tree in every thread and process ---------------------------------------

class Shifting(Surrogate):
    """A broken surrogate for the harness: every clone takes the next seed."""

    clones = 0

    def __sklearn_clone__(self):
        Shifting.clones += 1
        return Surrogate(self.model, positive=self.positive, depth=self.depth,
                         seed=Shifting.clones)


@pytest.mark.parametrize("kind", ["yes/no", "classes", "product"])
def test_a_surrogate_is_one_tree_in_every_thread_and_process(kind):
    from rows_support import rule, table
    from sklearn.tree import DecisionTreeClassifier

    from lca.consistency import check_surrogate

    rows = table(400, seed=6)
    if kind == "classes":
        labels = np.where(rows["x"] > 0.5, "x", np.where(rows["y"] > 0, "y", "z"))
        model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(
            rows[["x", "y", "k"]], labels)
        estimator, rows = Surrogate(model, depth=5), rows[["x", "y", "k"]]
    else:
        estimator = Surrogate(rule, positive=1, depth=5,
                              distribution="product" if kind == "product" else "data")
    report = check_surrogate(estimator, rows, threads=8, processes=2, trials=6)
    assert report.ok, str(report)
    assert (report.trials, report.threads, report.processes, report.rows) == (6, 8, 2, 400)
    assert str(report).endswith("400 rows each: AGREE")


def test_the_surrogate_harness_names_a_replica_that_differs():
    from rows_support import rule, table

    from lca.consistency import check_surrogate

    report = check_surrogate(Shifting(rule, positive=1, depth=4), table(200), threads=4,
                             processes=0, trials=2)
    assert not report.ok and [name for name, _ in report.differences] == ["trial 0", "trial 1"]
    assert "DIVERGE" in str(report) and "answers differ from row" in str(report)
