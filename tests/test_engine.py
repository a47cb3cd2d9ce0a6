"""The engine alone (lca.engine, lca.estimator.Memo): fake steps, fake tasks, a fake clock.

Every rule of the scheduler is pinned at its boundary: how requests are
gathered into oracle calls of ``chunk_rows`` rows, when a task is admitted
under the query budget (the wait-for-reserve rule) and the memory bound,
what the deadline stops, and how zero-row requests are answered.
"""

from __future__ import annotations

import dataclasses
import types

import numpy as np
import pytest

import lca
from lca import derive, engine, estimator
from lca.decisions import LeafDecision, NodeDecision
from lca.engine import Request, Scheduler, Task, chunk_rows, drive, together
from lca.estimator import Memo

N = 6
CHUNK = 5  # rows per oracle call in these tests (engine._BATCH_ENTRIES patched)


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(engine, "_BATCH_ENTRIES", N * CHUNK)


class Recorder(lca.Oracle):
    """f(x) = x_0 (or ``inner``), recording the rows of every call; each call may tick a clock."""

    n, name = N, "recorder"

    def __init__(self, clock: list[float] | None = None, fail: bool = False) -> None:
        self.sizes: list[int] = []
        self.clock = clock
        self.fail = fail
        self.inner: lca.Oracle | None = None

    @classmethod
    def wrap(cls, inner: lca.Oracle) -> Recorder:
        recorder = cls()
        recorder.inner, recorder.n = inner, inner.n
        return recorder

    def query(self, points: np.ndarray) -> np.ndarray:
        if self.fail:
            raise KeyError("backend down")
        self.sizes.append(points.shape[0])
        if self.clock is not None:
            self.clock[0] += 1.0
        return points[:, 0].copy() if self.inner is None else self.inner.query(points)


def pattern(tag: int, count: int) -> np.ndarray:
    """``count`` values ±1 that differ from task to task (the rows' first coordinate)."""
    return np.where((np.arange(count) * 7 + tag * 3) % 5 < 2, -1, 1).astype(np.int8)


def request(tag: int, count: int, path=None) -> Request:
    """A request whose row ``k`` has ``x_0 = pattern(tag, count)[k]``, so ``f`` reads it back."""
    wanted = pattern(tag, count)

    def rows(lo: int, hi: int) -> np.ndarray:
        out = np.ones((hi - lo, N), dtype=np.int8)
        out[:, 0] = wanted[lo:hi]
        return out

    return Request("test", count, rows, () if path is None else (path,))


def steps(tag: int, counts: list[int], log: list | None = None):
    """Steps asking for ``counts[i]`` rows in round ``i``; they check what they get back
    and return the list of counts. ``log`` records ("closed", tag) if abandoned."""
    try:
        for round_, count in enumerate(counts):
            values = yield request(10 * tag + round_, count)
            assert values.dtype == np.int8
            assert np.array_equal(values, pattern(10 * tag + round_, count)), (tag, round_)
        return list(counts)
    except GeneratorExit:
        if log is not None:
            log.append(("closed", tag))
        raise


def task(tag: int, counts: list[int], log: list, cap: int | None = None,
         memory: int = 0) -> Task:
    """A task whose start is logged as ("start", tag)."""

    def start():
        log.append(("start", tag))
        return steps(tag, counts, log)

    return Task([tag], start, sum(counts) if cap is None else cap, memory)


def scheduler(oracle, log, **kwargs) -> Scheduler:
    return Scheduler(oracle, 3, on_done=lambda t: log.append(("done", t.keys[0])), **kwargs)


# -- chunk_rows, drive, together -------------------------------------------------------

def test_chunk_rows_is_the_batch_entries_over_n_and_at_least_one(monkeypatch):
    monkeypatch.setattr(engine, "_BATCH_ENTRIES", 100)
    assert [chunk_rows(n) for n in (1, 33, 34, 50, 51, 100, 101, 10**6)] == \
        [100, 3, 2, 2, 1, 1, 1, 1]


@pytest.mark.parametrize("count, sizes", [(0, []), (1, [1]), (5, [5]), (6, [5, 1]),
                                          (12, [5, 5, 2])])
def test_drive_sends_each_request_in_calls_of_chunk_rows(count, sizes):
    oracle = Recorder()

    def one():
        values = yield request(1, count)
        assert values.dtype == np.int8 and values.shape == (count,)
        assert np.array_equal(values, pattern(1, count))
        second = yield request(2, 3)
        return values.size + second.size

    assert drive(one(), oracle, 0) == count + 3
    assert oracle.sizes == sizes + [3]


def test_drive_of_steps_that_ask_nothing_returns_at_once():
    def nothing():
        return "done"
        yield  # a generator

    oracle = Recorder()
    assert drive(nothing(), oracle, 0) == "done" and oracle.sizes == []


def test_an_oracle_error_keeps_its_type_and_names_purpose_paths_and_seed():
    def two_nodes():
        yield Request("leaf", 2, request(1, 2).rows, [((1, -1),), ((2, 1),)])

    with pytest.raises(KeyError, match="backend down") as info:
        drive(two_nodes(), Recorder(fail=True), 11)
    assert info.value.__notes__ == [
        "lca: raised while querying 'recorder' for leaf samples at node path ((1, -1),) "
        "(and 1 other node in the same batch) (seed 11)"]
    paths = [((k, 1),) for k in range(4)]
    assert engine._note(Recorder(), [Request("score", 1, None, paths)], 2).endswith(
        "at node path ((0, 1),) (and 3 other nodes in the same batch) (seed 2)")
    assert engine._note(Recorder(), [Request("score", 1, None, [(), ()])], 2) == (
        "lca: raised while querying 'recorder' for score samples at node path () (seed 2)")
    assert engine._note(Recorder(), [Request("score", 1, None, [])], 2) == (
        "lca: raised while querying 'recorder' for score samples (seed 2)")


def test_together_joins_the_rounds_of_members_still_running():
    oracle = Recorder()
    members = [steps(1, [2, 4]), steps(2, []), steps(3, [3]), steps(4, [0, 0, 1])]
    joined = together(members)
    first = next(joined)
    assert first.count == 2 + 3 + 0 and first.purpose == "test"
    # Rows lo..hi across member boundaries are the members' rows, in order.
    whole = np.concatenate([request(10, 2).rows(0, 2), request(30, 3).rows(0, 3)])
    for lo, hi in [(0, 5), (1, 4), (2, 3), (0, 2), (4, 5)]:
        assert np.array_equal(first.rows(lo, hi), whole[lo:hi])
    assert drive(together([steps(1, [2, 4]), steps(2, []), steps(3, [3]),
                           steps(4, [0, 0, 1])]), oracle, 0) == [[2, 4], [], [3], [0, 0, 1]]
    # Rounds: 2 + 3 + 0 rows, then 4 + 0, then 1 (each in calls of 5 rows at most).
    assert oracle.sizes == [5, 4, 1]


def test_together_of_no_members_returns_an_empty_list():
    assert drive(together([]), Recorder(), 0) == []


def test_joined_requests_name_every_path():
    def one(path):
        yield request(0, 1, path)

    joined = next(together([one(((1, 1),)), one(((2, -1),))]))
    assert list(joined.paths) == [((1, 1),), ((2, -1),)]


# -- the scheduler: gathering -----------------------------------------------------------

def test_requests_of_all_running_tasks_share_calls_of_chunk_rows():
    log: list = []
    oracle = Recorder()
    tasks = [task(tag, counts, log) for tag, counts in
             [(1, [3, 4]), (2, [4, 0, 2]), (3, [0]), (4, [6])]]
    run = scheduler(oracle, log)
    assert run.run(tasks)
    # Round 1: 3 + 4 + 0 + 6 = 13 rows; round 2: 4 + 0 = 4; round 3: 2.
    assert oracle.sizes == [5, 5, 3, 4, 2]
    assert run.calls == 5 and run.spent == 19 and run.stopped is None
    assert [t.spent for t in tasks] == [7, 6, 0, 6]
    assert [t.results for t in tasks] == [[3, 4], [4, 0, 2], [0], [6]]
    assert all(t.done for t in tasks)
    # Finishing order: 3 and 4 after round 1, 1 after round 2, 2 after round 3.
    assert log == [("start", 1), ("start", 2), ("start", 3), ("start", 4),
                   ("done", 3), ("done", 4), ("done", 1), ("done", 2)]


def test_a_round_of_zero_rows_makes_no_call_and_answers_empty():
    log: list = []
    oracle = Recorder()
    tasks = [task(1, [0, 0], log), task(2, [0], log)]
    run = scheduler(oracle, log)
    assert run.run(tasks)
    assert oracle.sizes == [] and run.calls == 0 and run.spent == 0
    assert [t.results for t in tasks] == [[0, 0], [0]]


def test_a_task_that_asks_nothing_finishes_on_admission():
    log: list = []
    oracle = Recorder()
    tasks = [task(1, [], log), task(2, [1], log)]
    run = scheduler(oracle, log, max_queries=1)
    assert run.run(tasks)
    assert log == [("start", 1), ("done", 1), ("start", 2), ("done", 2)]
    assert tasks[0].results == [] and oracle.sizes == [1]


def test_a_task_may_not_spend_more_than_its_cap():
    log: list = []
    with pytest.raises(AssertionError):
        scheduler(Recorder(), log).run([task(1, [3, 2], log, cap=4)])


def test_the_scheduler_counts_over_runs_and_resets_why_it_stopped():
    log: list = []
    run = scheduler(Recorder(), log, max_queries=8)
    assert not run.run([task(1, [9], log)])
    assert run.stopped == "max_queries" and run.needed == 9
    assert run.run([task(2, [3], log)]) and run.stopped is None
    assert run.run([task(3, [5], log)]) and run.spent == 8 and run.calls == 2
    assert not run.run([task(4, [1], log)]) and run.needed == 1


# -- the scheduler: the query budget ---------------------------------------------------

def budget_run(max_queries):
    """Task 1 reserves 10 and spends 2 + 2; task 2 reserves 8 and spends 3."""
    log: list = []
    oracle = Recorder()
    tasks = [task(1, [2, 2], log, cap=10), task(2, [3], log, cap=8)]
    run = scheduler(oracle, log, max_queries=max_queries)
    return run.run(tasks), run, tasks, log, oracle


def test_tasks_that_fit_together_run_together():
    done, run, _, log, oracle = budget_run(18)
    assert done and log[:2] == [("start", 1), ("start", 2)]
    assert oracle.sizes == [5, 2] and run.spent == 7  # round 1: 2 + 3 rows together


def test_a_task_waits_for_the_reserve_of_running_tasks():
    # 0 spent + 10 reserved + 8 > 17: task 2 waits until task 1 gives back
    # the 6 it did not spend, then 4 spent + 8 <= 17.
    done, run, _, log, oracle = budget_run(17)
    assert done and log == [("start", 1), ("done", 1), ("start", 2), ("done", 2)]
    assert oracle.sizes == [2, 2, 3] and run.spent == 7


@pytest.mark.parametrize("budget", [12, 13])
def test_what_a_finished_task_spent_counts_against_the_budget(budget):
    done, run, tasks, log, _ = budget_run(budget)
    assert done and run.spent == 7 and run.stopped is None
    assert log == [("start", 1), ("done", 1), ("start", 2), ("done", 2)]


def test_a_task_that_cannot_fit_stops_the_run_when_nothing_runs():
    # 4 spent + 8 > 11, and nothing running could give anything back.
    done, run, tasks, log, oracle = budget_run(11)
    assert not done and run.stopped == "max_queries" and run.needed == 8
    assert log == [("start", 1), ("done", 1)]
    assert tasks[0].results == [2, 2] and not tasks[1].done and tasks[1].results is None
    assert run.spent == 4 and oracle.sizes == [2, 2]


@pytest.mark.parametrize("budget, started", [(10, True), (9, False), (0, False)])
def test_the_first_task_is_admitted_only_if_its_cap_fits(budget, started):
    done, run, tasks, log, oracle = budget_run(budget)
    assert not done and run.stopped == "max_queries"
    assert (("start", 1) in log) == started
    assert run.needed == (8 if started else 10)
    assert run.spent == (4 if started else 0) and oracle.sizes == ([2, 2] if started else [])


def test_later_tasks_wait_behind_one_that_does_not_fit():
    # Admission is in order: task 2 does not fit yet, so task 3 (which would) waits too.
    log: list = []
    tasks = [task(1, [1, 1], log, cap=5), task(2, [1], log, cap=6), task(3, [1], log, cap=1)]
    assert scheduler(Recorder(), log, max_queries=9).run(tasks)
    assert log == [("start", 1), ("done", 1), ("start", 2), ("start", 3),
                   ("done", 2), ("done", 3)]


def test_no_budget_admits_everything():
    log: list = []
    tasks = [task(k, [1], log, cap=10**9) for k in range(3)]
    assert scheduler(Recorder(), log).run(tasks)
    assert [entry for entry in log if entry[0] == "start"] == [("start", k) for k in range(3)]
    assert log[3:] == [("done", 0), ("done", 1), ("done", 2)]


# -- the scheduler: memory ----------------------------------------------------------------

@pytest.mark.parametrize("second, together_", [(40, True), (41, False)])
def test_tasks_share_working_memory_up_to_its_bound(monkeypatch, second, together_):
    monkeypatch.setattr(engine, "WORKING_BYTES", 100)
    log: list = []
    tasks = [task(1, [1, 1], log, memory=60), task(2, [1], log, memory=second)]
    assert scheduler(Recorder(), log).run(tasks)
    if together_:
        assert log[:2] == [("start", 1), ("start", 2)]
    else:
        assert log == [("start", 1), ("done", 1), ("start", 2), ("done", 2)]


def test_a_task_larger_than_the_bound_runs_alone(monkeypatch):
    monkeypatch.setattr(engine, "WORKING_BYTES", 100)
    log: list = []
    tasks = [task(1, [1], log, memory=10), task(2, [1, 1], log, memory=500),
             task(3, [1], log, memory=10), task(4, [1], log, memory=80)]
    assert scheduler(Recorder(), log).run(tasks)
    assert log == [("start", 1), ("done", 1), ("start", 2), ("done", 2),
                   ("start", 3), ("start", 4), ("done", 3), ("done", 4)]


def test_finished_tasks_give_their_memory_back(monkeypatch):
    # 3 waits (60 + 30 + 50 > 100) until 1 finishes, then runs beside 2 (30 + 50).
    monkeypatch.setattr(engine, "WORKING_BYTES", 100)
    log: list = []
    tasks = [task(1, [1], log, memory=60), task(2, [1, 1, 1], log, memory=30),
             task(3, [1], log, memory=50)]
    assert scheduler(Recorder(), log).run(tasks)
    assert log == [("start", 1), ("start", 2), ("done", 1), ("start", 3),
                   ("done", 3), ("done", 2)]


# -- the scheduler: the deadline -------------------------------------------------------------

@pytest.fixture
def clock(monkeypatch):
    """A clock that only the Recorder's calls advance (one second per call)."""
    now = [0.0]
    monkeypatch.setattr(engine, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    return now


@pytest.mark.parametrize("deadline, calls", [(0.0, 0), (0.5, 1), (1.0, 1), (2.5, 3),
                                             (3.0, 3), (3.5, 4), (10.0, 5)])
def test_no_call_is_made_at_or_after_the_deadline(clock, deadline, calls):
    log: list = []
    oracle = Recorder(clock)
    run = scheduler(oracle, log, deadline=deadline)
    finished = run.run([task(1, [1, 1, 1, 1, 1], log)])
    assert len(oracle.sizes) == calls == run.calls
    assert finished == (calls == 5)
    assert run.stopped == (None if finished else "time_limit")
    if deadline == 0.0:
        assert log == []  # not even admitted
    elif not finished:
        assert log == [("start", 1), ("closed", 1)]  # abandoned, its steps closed


def test_at_the_deadline_running_tasks_are_abandoned_and_waiting_ones_never_start(clock):
    log: list = []
    oracle = Recorder(clock)
    tasks = [task(1, [1], log, cap=1), task(2, [1, 1, 1], log, cap=3),
             task(3, [1], log, cap=2)]
    run = scheduler(oracle, log, deadline=2.0, max_queries=4)
    assert not run.run(tasks)
    # t=0: 1 and 2 admitted (1 + 3 <= 4), 3 waits (4 + 2 > 4); one call.
    # t=1: 1 is done, 3 still waits (2 spent + 2 reserved + 2 > 4); one call.
    # t=2: the deadline.
    assert log == [("start", 1), ("start", 2), ("done", 1), ("closed", 2)]
    assert run.stopped == "time_limit" and run.calls == 2 and run.spent == 3
    assert tasks[1].spent == 2 and not tasks[1].done and not tasks[2].done


def test_the_deadline_stops_admission_between_tasks(clock):
    log: list = []
    oracle = Recorder(clock)
    # Task 2 waits for task 1's reserve (0 + 2 + 1 > 2), then fits (1 + 1 <= 2)
    # at t=1, the deadline.
    tasks = [task(1, [1], log, cap=2), task(2, [1], log, cap=1)]
    run = scheduler(oracle, log, deadline=1.0, max_queries=2)
    assert not run.run(tasks) and run.stopped == "time_limit"
    assert log == [("start", 1), ("done", 1)] and oracle.sizes == [1]


# -- Memo -------------------------------------------------------------------------------------

def blob(size: int) -> np.ndarray:
    return np.zeros(size, dtype=np.uint8)


def test_memo_counts_bytes_exactly_and_drops_least_recently_used_first():
    memo = Memo(100)
    memo.put("a", blob(40))
    memo.put("b", blob(30))
    memo.put("c", blob(30))
    assert memo.nbytes == 100 and len(memo) == 3  # exactly at the limit: all kept
    memo.put("d", blob(1))
    assert memo.get("a") is None and memo.nbytes == 61 and len(memo) == 3
    assert memo.get("b") is not None  # touched: now the most recent
    memo.put("e", blob(45))  # 106 bytes: c (oldest now) goes, b stays
    assert memo.nbytes == 30 + 1 + 45 and list(memo._items) == ["d", "b", "e"]
    assert memo.get("c") is None


def test_memo_replaces_a_key_and_its_bytes():
    memo = Memo(100)
    memo.put("a", blob(40))
    memo.put("b", blob(10))
    memo.put("a", blob(70))  # 40 replaced, not added: 80 bytes, nothing dropped
    assert memo.nbytes == 80 and len(memo) == 2 and memo.get("a").nbytes == 70
    assert list(memo._items) == ["b", "a"]


def test_memo_keeps_a_value_of_exactly_its_limit_and_not_one_byte_more():
    memo = Memo(100)
    memo.put("small", blob(5))
    memo.put("big", blob(101))
    assert memo.get("big") is None and memo.nbytes == 5 and len(memo) == 1
    memo.put("small", blob(101))  # too large: the old value is dropped too
    assert memo.get("small") is None and memo.nbytes == 0 and len(memo) == 0
    memo.put("limit", blob(100))
    assert memo.get("limit") is not None and memo.nbytes == 100


def test_memo_evicts_as_many_as_it_takes():
    memo = Memo(100)
    for key in range(10):
        memo.put(key, blob(10))
    memo.put("half", blob(55))
    assert memo.nbytes == 95 and list(memo._items) == [6, 7, 8, 9, "half"]


def test_a_zero_byte_memo_keeps_only_empty_values():
    memo = Memo(0)
    memo.put("a", blob(1))
    memo.put("b", blob(0))
    assert len(memo) == 1 and memo.nbytes == 0 and memo.get("a") is None


def test_a_fresh_scheduler_has_done_nothing():
    run = Scheduler(Recorder(), 0)
    assert (run.spent, run.calls, run.stopped, run.needed) == (0, 0, None, 0)
    assert run.run([]) and run.calls == 0


def test_a_joined_request_is_named_after_its_first_member():
    def asking(purpose):
        yield Request(purpose, 1, request(0, 1).rows, ())

    assert next(together([asking("leaf"), asking("score")])).purpose == "leaf"


# -- the estimator interface: an estimator that only uses the defaults ----------------------

class FirstFree(estimator.Estimator):
    """Splits on the lowest free variable; labels a leaf by the sign of ``f`` on
    ``leaf_samples`` derived points of its subcube (a node asks for nothing)."""

    name = "test-first-free"

    def validate(self, params):
        pass

    def node(self, context):
        taken = {var for var, _ in context.path}
        variable = min(set(range(context.n)) - taken)
        return NodeDecision(variable, 0, 0, 0), None
        yield  # steps that ask nothing

    def leaf(self, context):
        params = context.params
        key = derive.node_key(context.seed, "test-leaf", context.path)
        words = derive.uniform_points(key, context.n, 0, params.leaf_samples, context.path)
        values = yield Request("test-leaf", words.shape[0], lambda lo, hi: derive.unpack_points(
            words[lo:hi], context.n), (context.path,))
        total = int(values.sum(dtype=np.int64))
        return LeafDecision(1 if total >= 0 else -1, params.leaf_samples, total)

    def max_node_queries(self, params):
        return 0

    def max_leaf_queries(self, params):
        return params.leaf_samples

    def early_leaves(self, params):
        return False

    def describe(self, params):
        return "test"


@pytest.fixture
def first_free():
    registered = estimator.register(FirstFree())
    yield registered
    del estimator._REGISTRY[registered.name]


def test_an_estimator_of_defaults_runs_every_level_in_one_call(first_free, monkeypatch):
    monkeypatch.setattr(engine, "_BATCH_ENTRIES", 1 << 24)
    n, depth = 8, 3
    params = lca.Params(n=n, depth=depth, noise_rate=0.1, score_samples=1, leaf_samples=40,
                        estimator=first_free.name)
    assert params.estimation is first_free and not first_free.reads_lineage
    assert first_free.node_memory(params) == 0  # no working memory claimed by default
    f = lca.from_callable(lambda x: int(x[0] * x[2]), n)
    points = derive.sample_points(0, "test-first-free", n, 64)
    rec = lca.Reconstructor(Recorder.wrap(f), params)
    answers = rec.answer_many(points, 5)
    # Every leaf is the subcube of x_0, x_1, x_2, where f = x_0 x_2 is constant.
    assert np.array_equal(answers, f(points))
    # Internal levels ask nothing; the 8 leaves share one call (all in one group).
    assert rec.oracle.sizes == [8 * 40]
    assert rec.last_stats.oracle_calls == 1 and rec.last_stats.queries == 320
    assert (rec.last_stats.nodes_built, rec.last_stats.leaves_built) == (7, 8)
    # The default sample check: an int of at least 1.
    with pytest.raises(ValueError, match=r"'leaf_samples' parameter of Params must be an "
                                         r"int in the range \[1, inf\)\. Got 0"):
        lca.Params(n=n, depth=depth, noise_rate=0.1, score_samples=1, leaf_samples=0,
                   estimator=first_free.name)


def test_a_node_context_is_frozen():
    context = estimator.NodeContext(3, 0, (), None, lambda k: None, Memo(0))
    with pytest.raises(dataclasses.FrozenInstanceError):
        context.path = ((0, 1),)


# -- CallCosts: what a call costs, and the steps per request that minimise the wall time ---


def test_call_costs_separate_a_calls_fixed_cost_from_its_rows():
    costs = engine.CallCosts()
    assert costs.per_call() is None  # nothing measured
    costs.observe(10, 1e-3 + 10e-6)
    costs.observe(10, 1e-3 + 10e-6)
    assert costs.per_call() is None  # one size: no fit
    for rows in (100, 30, 500, 7):
        costs.observe(rows, 1e-3 + rows * 1e-6)
    per_call, per_row = costs.per_call()
    assert per_call == pytest.approx(1e-3) and per_row == pytest.approx(1e-6)
    costs.between(2e-4)
    assert costs.per_call()[0] == pytest.approx(1.2e-3)  # lca's work per request counts


@pytest.mark.parametrize("per_call, per_row, pairs, steps, chosen", [
    (1e-3, 1e-7, 30, 6, 6),   # a call costs as much as 10,000 rows: one call a search
    (1e-3, 1e-7, 30, 12, 6),  # two requests either way: 6 + 6 steps ask fewer rows than 8 + 4
    (1e-2, 1e-9, 30, 16, 8),  # calls dearer still: the bound of 8 steps a request
    (1e-5, 1e-6, 30, 6, 1),   # rows are dear: one step a call
    (3e-4, 3e-7, 30, 6, 3),   # in between: a few steps a call
    (3e-4, 3e-6, 30, 6, 2),
    (1e-3, 1e-7, 30, 1, 1),   # a one-step search has nothing to batch
])
def test_call_costs_choose_the_steps_per_request_that_minimise_the_wall(
        per_call, per_row, pairs, steps, chosen):
    costs = engine.CallCosts()
    for rows in (1, 50, 200):
        costs.observe(rows, per_call + rows * per_row)
    assert costs.lookahead(pairs, steps) == chosen
    assert costs.chosen == {chosen: 1}
    assert f"auto: {chosen} (1x); oracle" in costs.text()


def test_call_costs_choose_one_step_until_they_are_measured():
    costs = engine.CallCosts()
    assert costs.lookahead(30, 6) == 1
    assert "oracle not measured yet" in costs.text()


def test_the_scheduler_reports_every_call_to_its_costs():
    seen = []

    class Costs(engine.CallCosts):
        def observe(self, rows, seconds):
            seen.append(rows)

    oracle = Recorder()

    def steps():
        yield Request("a", 3, lambda lo, hi: np.ones((hi - lo, N), dtype=np.int8))
        yield Request("b", 7, lambda lo, hi: np.ones((hi - lo, N), dtype=np.int8))
        return [None]

    Scheduler(lca.oracle.CountingOracle(oracle), 0, costs=Costs()).run(
        [Task([()], steps, 100, 0)])
    assert seen == oracle.sizes == [3, 5, 2]  # each call as sent, in chunks
