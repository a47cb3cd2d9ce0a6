"""scripts/bench_local.py: what its helpers count is what the reconstructor did (no timings)."""

import dataclasses
import importlib.util
import math
import pathlib
import re
import sys

import numpy as np
import pytest

import lca
from lca import derive, targets

pytest.importorskip("sklearn")  # the script reads the suite's models and peer

_SCRIPT = pathlib.Path(__file__).parent.parent / "scripts" / "bench_local.py"
_spec = importlib.util.spec_from_file_location("bench_local", _SCRIPT)
bench_local = importlib.util.module_from_spec(_spec)
sys.modules["bench_local"] = bench_local  # its dataclasses look their module up by name
_spec.loader.exec_module(bench_local)

SEED = 7


class Named(lca.Oracle):
    """A small random tree whose conditions read differently from the default."""

    def __init__(self) -> None:
        self.inner = targets.random_tree(n=20, leaves=8, seed=5)
        self.n, self.name = 20, "named"

    def query(self, points):
        return self.inner.query(points)

    def describe(self, variable, bit, path=()):
        return f"feature {variable} is {bit}"


def test_timed_sees_every_query_of_the_reconstructor_and_keeps_the_conditions():
    f = Named()
    timed = bench_local.Timed(f)
    rec = lca.Reconstructor(timed, lca.Params.efficient(20, depth=4))
    points = derive.sample_points(0, "test-bench-local", 20, 6)
    explained = [rec.explain(z, SEED) for z in points]
    assert timed.rows == rec.stats.queries > 0
    assert timed.calls == rec.stats.oracle_calls > 0
    assert explained[0].conditions[0].startswith("feature ")


def test_measure_mode_counts_the_answers_it_times():
    f = targets.with_label_noise(targets.random_tree(n=20, leaves=8, seed=5), 0.1, seed=2)
    params = lca.Params.efficient(20, depth=4)
    points = derive.sample_points(0, "test-bench-local", 20, 8)
    run = bench_local.measure_mode(f, params, points, f(points), SEED)

    rec = lca.Reconstructor(f, params)
    per_answer = []
    for z in points:
        rec.answer(z, SEED)
        per_answer.append(rec.last_stats.queries)
    assert run.queries.tolist() == per_answer
    assert run.calls == rec.stats.oracle_calls
    cold = lca.Reconstructor(f, params).explain(points[0], SEED).stats.queries
    assert run.queries[0] == cold
    batch = lca.Reconstructor(f, params)
    answers = batch.answer_many(points, SEED)
    assert np.array_equal(run.answers, answers)
    assert (run.batch_queries, run.batch_calls) == (batch.stats.queries,
                                                    batch.stats.oracle_calls)
    assert run.error == np.mean(answers != f(points))
    assert run.walls.shape == (8,) and run.points == 8


def test_crossover_of_reads_the_cumulative_queries_of_every_answer():
    queries = [10, 10, 10, 10, 10]  # Q(K) = 10 K
    t = (math.log(25) - math.log(20)) / (math.log(30) - math.log(20))
    near = bench_local.crossover_of(queries, 25, 300_000)
    assert near["relation"] == "~"
    assert near["value"] == pytest.approx(math.exp(math.log(2) + t * math.log(1.5)))
    assert bench_local.crossover_of(queries, 10, 300_000) == {"relation": "<=", "value": 1}
    assert bench_local.crossover_of(queries, 51, 300_000)["value"] == 5
    beyond = bench_local.crossover_of(queries, None, 40)
    assert beyond["relation"] == ">" and beyond["lower_bound"] is True


def test_floor_evaluates_as_many_points_in_the_engines_batches():
    n = 1 << 20  # 16 rows per oracle batch
    f = bench_local.Timed(targets.random_tree(n=n, leaves=4, seed=1))
    bench_local.floor_seconds(f, n, 40, SEED)
    assert (f.rows, f.calls) == (40, 3)


def test_large_answer_reports_the_cold_answer_it_made():
    result = bench_local.large_answer(1000, SEED)
    assert result["kernels"] in ("compiled", "numpy")
    f = targets.random_tree(n=1000, leaves=bench_local.LARGE_LEAVES, seed=1)
    z = derive.sample_points(SEED, bench_local.POINTS_PURPOSE, 1000, 1)[0]
    explained = lca.Reconstructor(f, lca.Params.efficient(1000, depth=12)).explain(z, SEED)
    assert result["queries"] == explained.stats.queries
    assert result["calls"] == explained.stats.oracle_calls
    assert result["internal"] == len(explained.path)
    assert result["peak_mib"] >= result["before_mib"] > 0


def test_a_tiny_case_has_every_mode_a_peer_and_a_ratio_row_per_mode():
    sizes = dataclasses.replace(bench_local.quick_sizes(), model_depths=(3,))
    clean = targets.random_tree(n=12, leaves=8, seed=1)
    f = targets.with_label_noise(clean, 0.1, seed=2)
    rows = bench_local.run_case("tiny", f, clean, (3,), sizes, 5)
    assert [row["depth"] for row in rows] == [3]
    modes = rows[0]["modes"]
    assert list(modes) == ["compiled, lookahead=1", "compiled, lookahead=auto",
                           "numpy, lookahead=1", "numpy, lookahead=auto", "paper"]
    assert all(run.cross is not None for run in modes.values())
    # Answered again on the warm reconstructor (measure_mode checks: no query, same answer).
    assert all(run.warm_wall > 0 for run in modes.values())
    # Every efficient mode is the same tree: the same answers; on either kernels the same
    # queries and calls; "auto" says what it chose.
    plain = modes["compiled, lookahead=1"]
    assert all(np.array_equal(run.answers, plain.answers) for run in modes.values()
               if run is not modes["paper"])
    reference = modes["numpy, lookahead=1"]
    assert (reference.calls, reference.queries.tolist()) == (plain.calls, plain.queries.tolist())
    assert plain.chosen is None and modes["compiled, lookahead=auto"].chosen.startswith("auto: ")
    assert rows[0]["peer"]["rows"]
    table = bench_local.case_table(rows)
    assert len(table) == 2 + 5 + 4  # header, five modes, a ratio row per non-paper mode
    assert all(line.count("|") == len(bench_local.COLUMNS) + 1 for line in table)
    assert "| tiny | 3 | **compiled, lookahead=1 / paper** |" in table[-4]
    assert "| tiny | 3 | **numpy, lookahead=auto / paper** |" in table[-1]
    summary = bench_local.summary(rows).split("\n\n")
    assert [line.split(" / paper")[0] for line in summary] == [
        f"Median over the 1 rows of {mode}" for mode in list(modes)[:-1]]
    [peer] = bench_local.peer_lines(rows + rows)  # one line per case
    assert peer.startswith("* Peer on tiny: best error ")


def test_time_text_picks_its_unit():
    assert bench_local._ms(3.2e-5) == "32 us"  # a warm answer
    assert bench_local._ms(1e-3) == "1.00 ms"
    assert bench_local._ms(0.0123) == "12.30 ms"
    assert bench_local._ms(2.5) == "2.50 s"


def test_ratio_text():
    assert bench_local.ratio(1, 4) == "0.25x"
    assert bench_local.ratio(1, 250) == "0.004x"
    assert bench_local.ratio(None, 4) == "—"
    assert bench_local.ratio(1, 0) == "—"


@pytest.mark.parametrize("argv, message", [
    (["--parts", "models,bogus"],
     "--parts must be a comma-separated list of models, noise, large; got 'models,bogus'"),
    (["--models", "rf-breast_cancer,nope"], "--models must name suite models .*got 'nope'"),
    (["--points", "0"], "--points must be at least 1; got 0"),
])
def test_bad_arguments_are_refused_by_name(argv, message, capsys):
    with pytest.raises(SystemExit):
        bench_local.main(argv)
    assert any(re.search(message, line)
               for line in capsys.readouterr().err.splitlines())


def _diagnose_local():
    path = pathlib.Path(__file__).parent.parent / "scripts" / "diagnose_local.py"
    spec = importlib.util.spec_from_file_location("diagnose_local", path)
    diagnose = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(diagnose)
    return diagnose


def _answered(f, points, depth):
    """A reconstructor that answered ``points`` one at a time, as the diagnosis does."""
    rec = lca.Reconstructor(f, lca.Params.efficient(f.n, depth=depth))
    for z in points:
        rec.answer(z, seed=7)
    return rec


def _noisy_tree() -> lca.Oracle:
    """The diagnosis tests' oracle: a 16-leaf tree at n = 40 with 5% label noise."""
    return targets.with_label_noise(targets.random_tree(n=40, leaves=16, seed=1), rate=0.05,
                                    seed=2)


def test_diagnose_local_attributes_every_query_and_call_to_one_purpose():
    diagnose = _diagnose_local()
    f = _noisy_tree()
    points = derive.sample_points(0, "test/diagnose", 40, 20)
    result = diagnose.tally(f, points, 6)
    rec = _answered(f, points, 6)
    assert set(result["queries"]) <= set(diagnose.PURPOSES)
    assert sum(result["queries"].values()) == rec.stats.queries
    assert sum(result["calls"].values()) == rec.stats.oracle_calls
    assert result["nodes"] == rec.stats.nodes_built
    # The values phases() replays, one array per oracle call.
    assert len(result["log"]) == rec.stats.oracle_calls
    assert sum(values.size for values in result["log"]) == rec.stats.queries
    assert lca.engine._call.__name__ == "_call"  # the counting wrapper is taken off again


def test_diagnose_local_prices_an_answer_at_the_oracles_call_and_row_costs():
    diagnose = _diagnose_local()
    f = lca.CountingOracle(targets.random_tree(n=40, leaves=16, seed=1))
    assert diagnose.call_cost(f, 7, repeats=3) > 0
    assert f.queries == 7 * 4  # one warm call, then the timed ones, each on 7 rows
    result = {"answers": 2, "calls": {"search": 6}, "queries": {"search": 100}}
    cells = diagnose.cost_row("tiny", targets.random_tree(n=40, leaves=16, seed=1),
                              result).split("|")[1:-1]
    assert len(cells) == 7 and cells[0].strip() == "tiny" and cells[4].strip() == "3.0"


def test_diagnose_local_splits_lcas_own_cpu_into_phases_that_add_up():
    diagnose = _diagnose_local()
    f = _noisy_tree()
    points = derive.sample_points(0, "test/diagnose", 40, 12)
    recorded = diagnose.tally(f, points, 6)
    result = diagnose.phases(recorded["log"], 40, points, 6)  # raises if a phase never ran
    rec = _answered(f, points, 6)
    assert (result["queries"], result["nodes"]) == (rec.stats.queries, rec.stats.nodes_built)
    spent = result["spent"]
    assert list(spent) == [name for name, _, _ in diagnose.PHASES] + ["engine and reconstructor"]
    # The top-level phases partition the profiled total (the last is the remainder of
    # the others), so the accounting is checked by the parts of the rounds: cProfile
    # counts a callee's time within its caller's.
    top = [name for name in spent if not name.startswith(" ")]
    assert sum(spent[name] for name in top) == pytest.approx(result["profiled"])
    parts = [name for name in spent if name.startswith(" ")]
    assert sum(spent[name] for name in parts) <= spent["a node's rounds"]
    lines = diagnose.phase_table([("tiny", result)])
    assert len(lines) == 2 + len(spent) + 3


def test_diagnose_local_refuses_a_phase_whose_functions_never_ran(monkeypatch):
    diagnose = _diagnose_local()
    monkeypatch.setattr(diagnose, "PHASES", diagnose.PHASES + (
        ("a renamed phase", ("search/group.py",), ("_no_such_method",)),))
    f = targets.random_tree(n=20, leaves=4, seed=1)
    points = derive.sample_points(0, "test/diagnose", 20, 2)
    log = diagnose.tally(f, points, 3)["log"]
    with pytest.raises(LookupError, match="_no_such_method of lca/search/group.py"):
        diagnose.phases(log, 20, points, 3)


def test_a_replay_repeats_the_recorded_run_and_refuses_another():
    f = targets.with_label_noise(targets.random_tree(n=20, leaves=8, seed=5), 0.1, seed=2)
    params = lca.Params.efficient(20, depth=4)
    points = derive.sample_points(0, "test-bench-local", 20, 6)
    _, timed, answers, _, queries, _ = bench_local.one_at_a_time(f, params, points, SEED,
                                                                 "recorded", record=True)
    assert len(timed.log) == timed.calls and sum(v.size for v in timed.log) == timed.rows
    replayed = bench_local.Replayed(timed.log, 20)
    rec, _, again, _, again_queries, _ = bench_local.one_at_a_time(replayed, params, points,
                                                                   SEED, "replayed")
    assert np.array_equal(again, answers) and np.array_equal(again_queries, queries)
    assert replayed.at == len(timed.log)
    with pytest.raises(AssertionError, match="does not replay"):
        replayed.query(points[:1])  # past the log
    other = bench_local.Replayed(timed.log, 20)
    with pytest.raises(AssertionError, match="does not replay"):
        other.query(points[: timed.log[0].size + 1])  # a call of another size
    # measure_mode replays the run it times (checking the answers and queries match).
    run = bench_local.measure_mode(f, params, points, f(points), SEED)
    assert run.replayed_own > 0
