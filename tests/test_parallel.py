"""Worker pool of stateless replicas: equal answers, faults, errors, logging, shutdown."""

from __future__ import annotations

import inspect
import logging
import math
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
import types
from collections import deque
from pathlib import Path

import numpy as np
import pytest

import lca
from lca import derive, targets
from lca.oracle import Oracle
from lca.parallel import ReplicaPool, TaskTimeoutError, WorkerError, answer_parallel
from lca.params import Params

from conftest import interrupt_group

N = 64
PARAMS = Params.practical(n=N, depth=5, noise_rate=0.1, score_samples=200,
                          leaf_samples=100)


def queries(count: int, seed: int = 1, n: int = N) -> np.ndarray:
    key = derive.node_key(seed, "test-parallel-queries", ())
    return derive.unpack_points(derive.uniform_points(key, n, 0, count), n)


def single_process(oracle: Oracle, points: np.ndarray, seed: int,
                   params: Params = PARAMS) -> np.ndarray:
    return lca.Reconstructor(oracle, params).answer_many(points, seed)


def in_worker() -> bool:
    return multiprocessing.parent_process() is not None


def spawned_children() -> set[int]:
    """Pids of this process's children started by spawn (psutil-free /proc scan)."""
    me, found = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == me and b"spawn_main" in command:
            found.add(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# -- oracles that misbehave in workers only (the parent's router must survive) --

class KillOnce(Oracle):
    """SIGKILLs its own worker process on its ``at``-th call; once per marker file."""

    def __init__(self, inner: Oracle, marker: str, at: int = 3) -> None:
        self.inner, self.n, self.name = inner, inner.n, "kill-once"
        self.marker, self.at, self.calls = marker, at, 0

    def query(self, points: np.ndarray) -> np.ndarray:
        if in_worker():
            self.calls += 1
            if self.calls == self.at:
                try:
                    fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                except FileExistsError:
                    pass
                else:
                    os.write(fd, str(os.getpid()).encode())
                    os.close(fd)
                    os.kill(os.getpid(), signal.SIGKILL)
        return self.inner.query(points)


class AlwaysKill(Oracle):
    """Kills every worker that queries it: a task that can never finish."""

    def __init__(self, inner: Oracle) -> None:
        self.inner, self.n, self.name = inner, inner.n, "always-kill"

    def query(self, points: np.ndarray) -> np.ndarray:
        if in_worker():
            os.kill(os.getpid(), signal.SIGKILL)
        return self.inner.query(points)


class TwoArgError(Exception):
    """Pickles but does not unpickle: its __init__ takes two arguments."""

    def __init__(self, a: str, b: str) -> None:
        super().__init__(f"{a}/{b}")


class RaiseInWorker(Oracle):
    def __init__(self, inner: Oracle, picklable: bool) -> None:
        self.inner, self.n, self.name = inner, inner.n, "raise-in-worker"
        self.picklable = picklable

    def query(self, points: np.ndarray) -> np.ndarray:
        if in_worker():
            if self.picklable:
                raise LookupError("no such row in the feature store")
            raise TwoArgError("feature store", "offline")
        return self.inner.query(points)


class BrokenUnpickle(Oracle):
    """Pickles in the parent, fails to rebuild in a worker."""

    def __init__(self, inner: Oracle) -> None:
        self.inner, self.n, self.name = inner, inner.n, "broken-unpickle"

    def __setstate__(self, state: dict) -> None:
        if in_worker():
            raise OSError("model file /nonexistent/model.bin not found")
        self.__dict__.update(state)

    def query(self, points: np.ndarray) -> np.ndarray:
        return self.inner.query(points)


class HangInWorker(Oracle):
    """Sleeps far past any test's timeout, but only inside a worker."""

    def __init__(self, inner: Oracle) -> None:
        self.inner, self.n, self.name = inner, inner.n, "hang-in-worker"

    def query(self, points: np.ndarray) -> np.ndarray:
        if in_worker():
            time.sleep(600)
        return self.inner.query(points)


class SplitBrain(Oracle):
    """f = x_0 in the parent process, x_1 in a worker: the router and the replicas disagree.

    ``worker`` forces one side, to compute in this process what either side decides.
    """

    def __init__(self, worker: bool | None = None) -> None:
        self.n, self.name, self.worker = N, "split-brain", worker

    def query(self, points: np.ndarray) -> np.ndarray:
        worker = in_worker() if self.worker is None else self.worker
        return points[:, 1 if worker else 0].copy()


class FailFirst(Oracle):
    """In a worker, raises ``error`` on a call while ``log`` has fewer than ``times`` lines,
    adding one line per raise: the log counts the attempts that failed."""

    def __init__(self, inner: Oracle, log: str, error: str, times: int) -> None:
        self.inner, self.n, self.name = inner, inner.n, "fail-first"
        self.log, self.error, self.times = log, error, times

    def query(self, points: np.ndarray) -> np.ndarray:
        if in_worker():
            try:
                with open(self.log) as lines:
                    failed = len(lines.readlines())
            except FileNotFoundError:
                failed = 0
            if failed < self.times:
                with open(self.log, "a") as lines:
                    lines.write(f"{os.getpid()}\n")
                raise MemoryError("no room for the batch") if self.error == "memory" \
                    else LookupError("no such row in the feature store")
        return self.inner.query(points)


class DieOnStart(Oracle):
    """Counts the workers that rebuild it (a line in ``log`` each) and kills those whose
    number is in ``die_on`` (exit code 3, before they report ready)."""

    def __init__(self, inner: Oracle, log: str, die_on: range | frozenset) -> None:
        self.inner, self.n, self.name = inner, inner.n, "die-on-start"
        self.log, self.die_on = log, die_on

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if in_worker():
            with open(self.log, "a") as lines:
                lines.write(f"{os.getpid()}\n")
            if attempts(Path(self.log)) in self.die_on:
                os._exit(3)

    def query(self, points: np.ndarray) -> np.ndarray:
        return self.inner.query(points)


def stopped_exit_codes(monkeypatch) -> list:
    """Exit codes of the worker processes the pool stops from now on, in order."""
    exits: list = []
    stop = lca.parallel.pool._stop

    def recording(processes, grace):
        processes = list(processes)
        stop(processes, grace)
        exits.extend(process.exitcode for process in processes)

    monkeypatch.setattr(lca.parallel.pool, "_stop", recording)
    return exits


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def attempts(log) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


class Connection:
    """Cannot be pickled (it holds a lock), as a log record's arguments often cannot."""

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def __str__(self) -> str:
        return "the feature store"


class Chatty(Oracle):
    """Logs from inside the oracle, as user code would: below the root's level too,
    with an argument that cannot be pickled, and with an exception."""

    def __init__(self, inner: Oracle) -> None:
        self.inner, self.n, self.name = inner, inner.n, "chatty"

    def query(self, points: np.ndarray) -> np.ndarray:
        log = logging.getLogger("userland.oracle")
        log.warning("queried %d rows", len(points))
        log.info("details nobody asked for")
        log.warning("connected to %s", Connection())
        try:
            raise KeyError("cache miss")
        except KeyError:
            log.exception("recovered from a miss")
        return self.inner.query(points)


# -- equal answers ------------------------------------------------------------------

TARGETS = {
    "noisy tree": lambda: targets.with_label_noise(targets.random_tree(N, 16, 1), 0.1, 2),
    "parity": lambda: targets.parity(N, 3, 4),
    "majority": lambda: targets.majority(N, 5, 5),
}


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_pool_answers_equal_single_process(name: str) -> None:
    f = TARGETS[name]()
    points = queries(300)
    with ReplicaPool(f, PARAMS, workers=2) as pool:
        for seed in (0, 7, 2**64 - 1):
            expected = single_process(f, points, seed)
            for routing in ("prefix", "chunk"):
                result = pool.answer(points, seed, routing=routing)
                assert result.answers.dtype == np.int8
                workers_used = set(result.busy_seconds)  # keyed by worker name
                assert workers_used <= {"lca-worker-0", "lca-worker-1"}
                np.testing.assert_array_equal(result.answers, expected)
        # Warm: the same batch again is answered from the replicas' caches.
        again = pool.answer(points, 7)
        np.testing.assert_array_equal(again.answers, single_process(f, points, 7))
        assert again.stats.cache_hits > 0
        assert pool.answer(points[:0], 7).answers.shape == (0,)


def test_adaptive_mode_with_early_leaves_in_the_router() -> None:
    # f = x0: below the root the function is constant, so adaptive mode turns
    # both children into early leaves; the router must treat them as leaves.
    f = targets.Junta(N, [0], [1, -1])
    params = Params.practical(n=N, depth=4, noise_rate=0.5, score_samples=20000,
                              leaf_samples=2000, adaptive=True, tau=0.1, eps=0.3, delta=0.1)
    points = queries(100)
    expected = lca.Reconstructor(f, params).answer_many(points, 5)
    before = spawned_children()
    result = answer_parallel(f, params, points, 5, workers=2, routing="prefix")
    assert spawned_children() <= before  # its pool is closed on return
    np.testing.assert_array_equal(result.answers, expected)
    np.testing.assert_array_equal(expected, f(points))


def test_prefix_routing_duplicates_less_than_chunks() -> None:
    f = TARGETS["noisy tree"]()
    points = queries(600, seed=3)
    # Without a node cache both batches start cold in the workers.
    with ReplicaPool(f, PARAMS, workers=2, cache_size=0) as pool:
        prefix = pool.answer(points, 11, routing="prefix")
        chunk = pool.answer(points, 11, routing="chunk", chunk_size=100)
    np.testing.assert_array_equal(prefix.answers, chunk.answers)
    assert prefix.distinct_nodes == chunk.distinct_nodes
    assert prefix.duplicated_fraction < chunk.duplicated_fraction
    assert prefix.routing_stats.nodes_built > 0 and chunk.routing_stats.nodes_built == 0
    assert prefix.tasks > 1 and chunk.tasks == 6


def test_batch_size_and_no_cache_change_nothing() -> None:
    f = TARGETS["noisy tree"]()
    points = queries(200, seed=5)
    result = answer_parallel(f, PARAMS, points, 3, workers=1, cache_size=0,
                             record=True, routing="chunk", chunk_size=37)
    np.testing.assert_array_equal(result.answers, single_process(f, points, 3))
    recorder = lca.Reconstructor(f, PARAMS, record=True)
    recorder.answer_many(points, 3)
    assert result.decisions == recorder.decisions
    assert result.conflicts == ()


# -- faults ---------------------------------------------------------------------------

@pytest.mark.parametrize("routing", ["prefix", "chunk"])
def test_killed_worker_is_replaced_and_answers_are_exact(tmp_path, routing: str,
                                                         caplog) -> None:
    f = TARGETS["noisy tree"]()
    marker = tmp_path / "killed"
    points = queries(400, seed=2)
    before = spawned_children()
    with ReplicaPool(KillOnce(f, str(marker)), PARAMS, workers=2) as pool:
        started = set(pool.pids)
        result = pool.answer(points, 7, routing=routing)
        victim = int(marker.read_text())
        assert victim in started and victim not in pool.pids and not alive(victim)
        workers = set(pool.pids)
        assert len(workers) == 2  # a replacement took the dead worker's slot
    np.testing.assert_array_equal(result.answers, single_process(f, points, 7))
    assert result.recomputed_tasks == 1
    died = [r.getMessage() for r in caplog.records if "died with exit code" in r.getMessage()]
    assert len(died) == 1 and re.fullmatch(
        rf"lca-worker-[01] \(pid {victim}\) died with exit code -9 during task \d+; "
        r"recomputing its \d+ queries", died[0])
    assert not any(alive(pid) for pid in started | workers)
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("lca-")]
    assert spawned_children() <= before


def test_task_that_always_kills_gives_up_cleanly() -> None:
    before = spawned_children()
    pool = ReplicaPool(AlwaysKill(TARGETS["parity"]()), PARAMS, workers=1, max_retries=1)
    with pool, pytest.raises(WorkerError, match="killed its worker 2 times"):
        pool.answer(queries(20), 1)
    assert spawned_children() <= before


# -- errors -------------------------------------------------------------------------

@pytest.mark.parametrize("picklable", [True, False])
def test_oracle_exception_surfaces_with_node_path(picklable: bool) -> None:
    before = spawned_children()
    f = RaiseInWorker(TARGETS["parity"](), picklable)
    expected = LookupError if picklable else WorkerError
    with pytest.raises(expected, match="feature store") as info:
        answer_parallel(f, PARAMS, queries(50), 9, workers=2)
    notes = "\n".join(info.value.__notes__)
    assert "at node path (" in notes and "(seed 9)" in notes
    assert "raised in lca-worker-" in notes
    assert "Traceback" in str(info.value.__cause__)
    if not picklable:
        assert "TwoArgError" in str(info.value)
    assert spawned_children() <= before


def test_unpicklable_oracle_is_a_type_error() -> None:
    f = lca.from_callable(lambda x: 1, n=N, name="lambda")
    with pytest.raises(TypeError, match="cannot be pickled.*module-level"):
        ReplicaPool(f, PARAMS)


def test_oracle_that_cannot_be_rebuilt_in_a_worker() -> None:
    before = spawned_children()
    with pytest.raises(TypeError, match="could not rebuild.*model.bin.*module-level"):
        answer_parallel(BrokenUnpickle(TARGETS["parity"]()), PARAMS, queries(10), 1)
    assert spawned_children() <= before


@pytest.mark.parametrize("kwargs, error, match", [
    ({"workers": 0}, ValueError,
     r"'workers' parameter of ReplicaPool must be an int in the range \[1, inf\)"),
    ({"workers": 1.5}, TypeError, "'workers' parameter"),
    ({"start_method": "thread"}, ValueError, "'start_method' parameter"),
    ({"cache_size": -1}, ValueError, "'cache_size' parameter"),
    ({"batch_size": 0}, ValueError, "'batch_size' parameter"),
])
def test_pool_validates_its_arguments(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        ReplicaPool(TARGETS["parity"](), PARAMS, **kwargs)


def test_task_timeout_kills_a_hung_worker_and_names_it() -> None:
    pool = ReplicaPool(HangInWorker(TARGETS["parity"]()), PARAMS, workers=1,
                       task_timeout=1.0)
    start = time.monotonic()
    try:
        pool.start()
        pids = pool.pids
        with pytest.raises(TaskTimeoutError, match=r"lca-worker-0 \(pid \d+\) exceeded "
                           r"task_timeout=1 s on task \d+ .*killed it"):
            pool.answer(queries(4), 1)
        # One task, one timeout: no retry (startup and polling take the rest).
        assert time.monotonic() - start < 30
        assert pool.pids == () and not any(alive(pid) for pid in pids)
    finally:
        pool.close()


@pytest.mark.parametrize("timeout, error", [(0, ValueError), (-1.0, ValueError),
                                            ("1", TypeError), (float("nan"), ValueError)])
def test_task_timeout_is_validated(timeout, error) -> None:
    with pytest.raises(error, match="'task_timeout' parameter of ReplicaPool"):
        ReplicaPool(TARGETS["parity"](), PARAMS, task_timeout=timeout)


def test_answer_validates_before_starting_workers() -> None:
    pool = ReplicaPool(TARGETS["parity"](), PARAMS)
    with pytest.raises(ValueError, match="'routing' parameter"):
        pool.answer(queries(3), 1, routing="random")
    with pytest.raises(ValueError, match="'chunk_size' parameter"):
        pool.answer(queries(3), 1, chunk_size=0)
    with pytest.raises(TypeError, match=r"shape \(m, 64\)"):
        pool.answer(np.ones((3, 5), dtype=np.int8), 1)
    assert pool.pids == ()
    pool.close()


# -- logging and shutdown ------------------------------------------------------------------

def test_worker_records_reach_the_parents_handlers(caplog) -> None:
    # Worker loggers follow the parent's levels: lca.parallel at DEBUG, the
    # user's oracle logger at the root's default WARNING.
    caplog.set_level(logging.DEBUG, logger="lca.parallel")
    with ReplicaPool(Chatty(TARGETS["parity"]()), PARAMS, workers=2) as pool:
        pool.answer(queries(40), 1)
    from_workers = [r for r in caplog.records if getattr(r, "lca_worker", None)]
    assert {r.name for r in from_workers} >= {"lca.parallel.worker", "userland.oracle"}
    assert {r.processName for r in from_workers} <= {"lca-worker-0", "lca-worker-1"}
    assert all(r.lca_worker == r.processName for r in from_workers)
    assert any(r.getMessage().startswith("queried ") for r in from_workers)
    messages = [r.getMessage() for r in from_workers]
    # Records are flattened before they cross: unpicklable arguments become text,
    # an exception its formatted traceback.
    assert "connected to the feature store" in messages
    raised = [r for r in from_workers if r.getMessage() == "recovered from a miss"]
    assert raised and all("KeyError: 'cache miss'" in r.exc_text for r in raised)
    assert "details nobody asked for" not in messages
    ready = [m for m in messages if " ready (pid " in m]
    assert sorted(m.split(" ")[0] for m in ready) == ["lca-worker-0", "lca-worker-1"]
    # Each task is announced once, with its number of queries: 40 in all.
    tasks = [re.fullmatch(r"lca-worker-[01]: task \d+, (\d+) queries under \(.*\)",
                          r.getMessage()) for r in from_workers if ": task " in r.getMessage()]
    assert tasks and all(tasks) and sum(int(match[1]) for match in tasks) == 40


KEYBOARD_INTERRUPT_SCRIPT = """
import multiprocessing, os, signal, sys, threading, time
import numpy as np
from lca import derive, targets
from lca.oracle import Oracle
from lca.params import Params
from lca.parallel import ReplicaPool

class Slow(Oracle):
    def __init__(self, inner, busy):
        self.inner, self.n, self.name, self.busy = inner, inner.n, "slow", busy
    def query(self, points):
        if multiprocessing.parent_process() is not None:
            open(self.busy, "a").close()
            time.sleep(0.05)
        return self.inner.query(points)

if __name__ == "__main__":
    # A shell's background jobs start with SIGINT ignored; a terminal's Ctrl-C does not.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    busy = sys.argv[1]
    params = Params.practical(n=32, depth=5, noise_rate=0.1, score_samples=50, leaf_samples=20)
    key = derive.node_key(1, "ki", ())
    points = derive.unpack_points(derive.uniform_points(key, 32, 0, 2000), 32)
    pool = ReplicaPool(Slow(targets.parity(32, 2, 1), busy), params, workers=2)
    seen = []
    def interrupt():
        while not os.path.exists(busy):
            time.sleep(0.01)
        seen.extend(pool.pids)
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=interrupt, daemon=True).start()
    try:
        pool.answer(points, 7)
        print("finished")
    except KeyboardInterrupt:
        print("interrupted")
    print("workers", len(seen))
    print("children", len([p for p in multiprocessing.active_children()
                           if p.name.startswith("lca-")]))
    print("alive", [pid for pid in seen if os.path.exists(f"/proc/{pid}")])
    pool.close()
"""


def test_keyboard_interrupt_leaves_no_process(tmp_path) -> None:
    script = tmp_path / "interrupt.py"
    script.write_text(textwrap.dedent(KEYBOARD_INTERRUPT_SCRIPT))
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "busy")],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines[:4] == ["interrupted", "workers 2", "children 0", "alive []"], done.stdout


WORKER_START_INTERRUPT_SCRIPT = """
import multiprocessing, signal, sys, time
import lca
from lca import derive
from lca.parallel import ReplicaPool

if __name__ == "__mp_main__":
    # In a starting worker, which runs this script again before lca's worker code:
    # say so, and stay in that window so that the interrupt lands in it.
    print("worker starting", flush=True)
    time.sleep(2)

if __name__ == "__main__":
    # A shell's background jobs start with SIGINT ignored; a terminal's Ctrl-C does not.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    f = lca.targets.parity(16, 2, 1)
    params = lca.Params.practical(n=16, depth=3, noise_rate=0.1, score_samples=20,
                                  leaf_samples=20)
    points = derive.sample_points(1, "interrupt", 16, 100)
    pool = ReplicaPool(f, params, workers=2)
    try:
        pool.answer(points, 7)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    print("children", len(multiprocessing.active_children()), flush=True)
"""


def test_ctrl_c_while_workers_start_prints_no_worker_traceback(tmp_path) -> None:
    """Ctrl-C reaches the whole process group, starting workers too.

    A worker that is still importing when SIGINT arrives used to print a
    KeyboardInterrupt traceback of its own. The script widens that window (2 s)
    so the real signal, sent to the real group as a terminal does, lands in it
    every time, not 1 run in 2.
    """
    script = tmp_path / "interrupt_start.py"
    script.write_text(textwrap.dedent(WORKER_START_INTERRUPT_SCRIPT))
    code, out, err = interrupt_group(script, "worker starting")
    assert code == 0, err
    assert "interrupted" in out and "children 0" in out, out
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err


# -- conflicts, retries and routing, pinned ------------------------------------------------------

def test_replicas_that_disagree_are_recorded_as_conflicts() -> None:
    points = queries(100)
    with ReplicaPool(SplitBrain(), PARAMS, workers=1, record=True) as pool:
        # Groups of at most 30 rows: the parent's router decides the root and more.
        result = pool.answer(points, 3, routing="prefix", chunk_size=30)
    router = lca.Reconstructor(SplitBrain(worker=False), PARAMS).decide(3, ())
    replica = lca.Reconstructor(SplitBrain(worker=True), PARAMS).decide(3, ())
    assert (router.variable, replica.variable) == (0, 1)
    # Every task walked from the root, which the router had decided otherwise;
    # no other node was decided on both sides (their paths differ from the root down).
    assert result.tasks > 1 and result.routing_stats.nodes_built > 1
    assert list(result.conflicts) == [((3, ()), router, replica)] * result.tasks
    assert result.decisions[(3, ())] == router  # the first decision recorded stays
    np.testing.assert_array_equal(result.answers, points[:, 1])


def test_a_memory_error_is_retried_and_counted(tmp_path, caplog) -> None:
    log = tmp_path / "attempts"
    f = FailFirst(TARGETS["parity"](), str(log), "memory", times=1)
    points = queries(20)
    with ReplicaPool(f, PARAMS, workers=1) as pool:
        result = pool.answer(points, 1, routing="chunk", chunk_size=20)
    assert attempts(log) == 1 and result.tasks == 1 and result.recomputed_tasks == 1
    np.testing.assert_array_equal(result.answers, single_process(TARGETS["parity"](), points, 1))
    assert any("ran out of memory on task" in r.getMessage() for r in caplog.records
               if r.name == "lca.parallel")


@pytest.mark.parametrize("max_retries", [0, 2])
def test_memory_errors_are_retried_at_most_max_retries_times(tmp_path, max_retries) -> None:
    log = tmp_path / "attempts"
    f = FailFirst(TARGETS["parity"](), str(log), "memory", times=10)
    with (ReplicaPool(f, PARAMS, workers=1, max_retries=max_retries) as pool,
          pytest.raises(MemoryError, match="no room for the batch") as info):
        pool.answer(queries(20), 1, routing="chunk", chunk_size=20)
    assert attempts(log) == max_retries + 1
    assert [note for note in info.value.__notes__ if note.startswith("lca.parallel")] == [
        note for note in info.value.__notes__ if re.fullmatch(
            r"lca.parallel: raised in lca-worker-0 \(pid \d+\) while answering 20 queries, "
            r"seed 1", note)] != []


def test_other_exceptions_are_never_retried(tmp_path, monkeypatch) -> None:
    log = tmp_path / "attempts"
    exits = stopped_exit_codes(monkeypatch)
    f = FailFirst(TARGETS["parity"](), str(log), "lookup", times=1)
    with ReplicaPool(f, PARAMS, workers=1, max_retries=2) as pool:
        with pytest.raises(LookupError, match="feature store"):
            pool.answer(queries(20), 1, routing="chunk", chunk_size=20)
        # Terminated (SIGTERM) before the exception reached us.
        assert pool.pids == () and exits == [-signal.SIGTERM]
        # The pool recovers: the next batch is answered (the oracle now succeeds).
        result = pool.answer(queries(20), 1, routing="chunk", chunk_size=20)
    assert attempts(log) == 1 and result.recomputed_tasks == 0


def test_a_task_killing_its_worker_with_no_retries_allowed_fails_at_once() -> None:
    pool = ReplicaPool(AlwaysKill(TARGETS["parity"]()), PARAMS, workers=1, max_retries=0)
    with pool, pytest.raises(WorkerError, match=r"killed its worker 1 times, last "
                             r"lca-worker-0 with exit code -9; giving up \(max_retries=0\)"):
        pool.answer(queries(20), 1)


@pytest.mark.parametrize("m, chunk_size, workers, sizes", [
    (10, 3, 2, [3, 3, 3, 1]),
    (9, 3, 2, [3, 3, 3]),
    (10, 10, 2, [10]),
    (10, 11, 2, [10]),
    (1, 5, 2, [1]),
    # Default: m / (4 workers), rounded up.
    (10, None, 2, [2, 2, 2, 2, 2]),
    (17, None, 2, [3, 3, 3, 3, 3, 2]),
    (17, None, 1, [5, 5, 5, 2]),
    (3, None, 2, [1, 1, 1]),
])
def test_chunk_routing_cuts_contiguous_slices(m, chunk_size, workers, sizes) -> None:
    pool = ReplicaPool(TARGETS["parity"](), PARAMS, workers=workers)
    try:
        tasks = pool._tasks(queries(m), 1, "chunk", chunk_size, lca.AnswerStats(), [], {})
        more = pool._tasks(queries(m), 1, "chunk", chunk_size, lca.AnswerStats(), [], {})
    finally:
        pool.close()
    assert [task.rows.size for task in tasks] == sizes
    assert np.array_equal(np.concatenate([task.rows for task in tasks]), np.arange(m))
    assert all(task.prefix == () and task.attempts == 0 for task in tasks)
    ids = [task.id for task in tasks + more]  # ids never repeat within a pool
    assert ids == list(range(len(ids)))


def test_prefix_groups_are_split_down_to_the_size_asked() -> None:
    f = TARGETS["noisy tree"]()
    points = queries(300)
    router = lca.parallel.routing.Router(f, PARAMS)
    stats, built, seen = lca.AnswerStats(), [], {}
    groups = router.groups(points, 7, 6, 40, stats, built, seen)
    assert len(groups) >= 6 and all(rows.size <= 40 for _, rows in groups)
    assert np.array_equal(np.sort(np.concatenate([rows for _, rows in groups])),
                          np.arange(300))
    assert [(-rows.size, path) for path, rows in groups] == sorted(
        (-rows.size, path) for path, rows in groups)
    rec = lca.Reconstructor(f, PARAMS)
    for path, rows in groups:  # every row of a group reaches its prefix
        for var, bit in path:
            assert (points[rows, var] == bit).all()
        assert isinstance(rec.decide(7, path), lca.NodeDecision)
    assert stats.nodes_built == len(built) == len(seen) > 0
    # Without a size limit, the largest group is split until there are 6.
    few = router.groups(points, 7, 6, None, lca.AnswerStats(), [], {})
    assert len(few) == 6
    whole = router.groups(points, 7, 1, None, lca.AnswerStats(), [], {})
    assert len(whole) == 1 and whole[0][0] == () and np.array_equal(whole[0][1],
                                                                    np.arange(300))


def test_workers_dying_at_start_up_are_replaced_a_bounded_number_of_times(tmp_path,
                                                                           caplog) -> None:
    # workers + max_retries deaths are survived, one more is not.
    log = tmp_path / "deaths"
    pool = ReplicaPool(DieOnStart(TARGETS["parity"](), str(log), range(1, 100)), PARAMS,
                       workers=1, max_retries=1)
    with pool, pytest.raises(WorkerError, match=r"workers keep dying during start-up "
                             r"\(last: lca-worker-0, exit code 3\) before reporting ready"):
        pool.answer(queries(5), 1)
    assert attempts(log) == 3
    warned = [r.getMessage() for r in caplog.records if r.name == "lca.parallel"]
    assert warned == ["lca-worker-0 died during start-up with exit code 3"] * 2


def test_no_record_and_no_bar_unless_asked(capsys) -> None:
    f = TARGETS["parity"]()
    points = queries(40)
    with ReplicaPool(f, PARAMS, workers=1) as pool:
        quiet = pool.answer(points, 1)
        assert quiet.decisions is None and quiet.conflicts == ()
        assert capsys.readouterr().err == ""
        shown = pool.answer(points, 2, progress=True, routing="chunk", chunk_size=15)
    err = capsys.readouterr().err
    assert err.startswith("\rlca answers:   0%") and "| 0/40 [" in err
    assert err.rsplit("\r", 1)[1].startswith("lca answers: 100%") and "| 40/40 [" in err
    np.testing.assert_array_equal(shown.answers, single_process(f, points, 2))


def test_answer_parallel_has_the_pools_defaults() -> None:
    pool = inspect.signature(ReplicaPool).parameters
    answer = inspect.signature(ReplicaPool.answer).parameters
    shortcut = inspect.signature(answer_parallel).parameters
    shared = [name for name in shortcut if name in pool or name in answer]
    assert {"workers", "start_method", "cache_size", "record", "task_timeout", "routing",
            "chunk_size", "progress"} <= set(shared)
    for name in shared:
        assert shortcut[name].default == (pool.get(name) or answer[name]).default, name


def test_one_worker_gets_one_prefix_task_and_the_router_decides_nothing() -> None:
    pool = ReplicaPool(TARGETS["noisy tree"](), PARAMS, workers=1)
    try:
        stats = lca.AnswerStats()
        tasks = pool._tasks(queries(100), 1, "prefix", None, stats, [], {})
        assert [(task.prefix, task.rows.size) for task in tasks] == [((), 100)]
        assert stats == lca.AnswerStats()
        two = ReplicaPool(TARGETS["noisy tree"](), PARAMS, workers=2)
        # Two workers: 8 groups each.
        assert len(two._tasks(queries(100), 1, "prefix", None, stats, [], {})) == 16
        two.close()
    finally:
        pool.close()


@pytest.mark.parametrize("max_rows, split", [(300, False), (299, True)])
def test_a_group_of_exactly_max_rows_is_not_split(max_rows, split) -> None:
    router = lca.parallel.routing.Router(TARGETS["noisy tree"](), PARAMS)
    stats = lca.AnswerStats()
    groups = router.groups(queries(300), 7, 1, max_rows, stats, [], {})
    assert (len(groups) > 1) == split and (stats.nodes_built > 0) == split


def test_workers_that_start_again_start_with_a_clean_record(tmp_path) -> None:
    # Start-up deaths are counted until a worker reports ready: with one worker
    # and no retries, one death is survived each time the pool starts.
    log = tmp_path / "starts"
    f = DieOnStart(TARGETS["parity"](), str(log), frozenset({1, 3}))
    pool = ReplicaPool(f, PARAMS, workers=1, max_retries=0)
    try:
        pool.answer(queries(5), 1)
        pool.close()
        result = pool.answer(queries(5), 1)
    finally:
        pool.close()
    assert attempts(log) == 4
    np.testing.assert_array_equal(result.answers, single_process(TARGETS["parity"](),
                                                                 queries(5), 1))


def test_a_pool_closes_politely_and_releases_everything(monkeypatch, caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="lca.parallel")
    exits = stopped_exit_codes(monkeypatch)
    f = TARGETS["parity"]()
    pool = ReplicaPool(f, PARAMS, workers=2)
    pool.answer(queries(10), 1)
    pool.close()
    assert exits == [0, 0]  # they left on being asked, none was terminated
    fds = open_fds()
    caplog.clear()
    # Used again after close: new workers, their records still reach us.
    np.testing.assert_array_equal(pool.answer(queries(10), 2).answers,
                                  single_process(f, queries(10), 2))
    pool.close()
    pool.close()  # idempotent
    assert sum(" ready (pid " in r.getMessage() for r in caplog.records) == 2
    assert exits == [0, 0, 0, 0] and pool.pids == ()
    assert open_fds() == fds  # no pipe left open
    assert "lca-worker-logs" not in [thread.name for thread in threading.enumerate()]
    pool._finalizer()  # it holds no process handle any more


def test_a_pool_dropped_without_close_stops_its_workers() -> None:
    pool = ReplicaPool(TARGETS["parity"](), PARAMS, workers=1)
    pool.answer(queries(5), 1)
    pids = pool.pids
    del pool
    import gc
    gc.collect()
    assert pids and not any(alive(pid) for pid in pids)


class Unstartable:
    """A start method whose processes cannot start (out of processes)."""

    def __init__(self, real) -> None:
        self.real = real

    def __getattr__(self, name):
        return getattr(self.real, name)

    def Process(self, **kwargs):
        return types.SimpleNamespace(start=lambda: (_ for _ in ()).throw(
            OSError(11, "Resource temporarily unavailable")))


def test_a_worker_that_cannot_start_is_skipped_and_none_is_an_error(caplog) -> None:
    pool = ReplicaPool(TARGETS["parity"](), PARAMS, workers=2)
    pool.start()
    pool.close()  # the log receiver's pipes exist once
    fds = open_fds()
    pool._context = Unstartable(pool._context)
    with pytest.raises(WorkerError, match="could not start any worker process"):
        pool.start()
    pool.close()
    warned = [r.getMessage() for r in caplog.records if r.name == "lca.parallel"]
    assert warned == [f"could not start lca-worker-{slot}: [Errno 11] Resource temporarily "
                      "unavailable" for slot in (0, 1)]
    assert open_fds() == fds


def test_stats_and_accounting_of_a_batch(monkeypatch) -> None:
    f = TARGETS["noisy tree"]()
    points = queries(100)
    with ReplicaPool(f, PARAMS, workers=1, record=True) as pool:
        one = pool.answer(points, 3, routing="chunk", chunk_size=100)
        pid, = pool.pids
        # Idle longer than the workers' poll: they stay, and stay warm.
        time.sleep(1.5)
        again = pool.answer(points, 3, routing="chunk", chunk_size=100)
        assert pool.pids == (pid,)
        other = pool.answer(points, 4, routing="prefix", chunk_size=30)
    alone = lca.Reconstructor(f, PARAMS, record=True)
    alone.answer_many(points, 3)
    # One task in one fresh replica: exactly the work of one answer_many.
    assert one.stats == alone.last_stats and one.decisions == alone.decisions
    assert one.node_computations == one.distinct_nodes == len(alone.decisions)
    assert one.duplicated_fraction == 0.0 and one.routing_stats == lca.AnswerStats()
    assert list(one.busy_seconds) == ["lca-worker-0"]
    # A duration, reported per worker; how it compares with the worker's CPU time
    # is measured in scripts/bench_parallel.py, not asserted here.
    busy = one.busy_seconds["lca-worker-0"]
    assert type(busy) is float and math.isfinite(busy) and busy >= 0
    assert again.stats.queries == 0 and again.stats.cache_hits == len(alone.decisions)
    # Routed under prefixes: the router's decisions count too; a replica reports
    # the decisions of its task only, never an earlier batch's.
    built = (other.routing_stats.nodes_built + other.routing_stats.leaves_built
             + other.stats.nodes_built + other.stats.leaves_built)
    assert other.node_computations == built and other.distinct_nodes < built
    assert {seed for seed, _ in other.decisions} == {4}
    fresh = lca.Reconstructor(f, PARAMS, record=True)
    fresh.answer_many(points, 4)
    assert other.decisions == fresh.decisions


@pytest.mark.parametrize("computations, distinct, fraction", [(0, 0, 0.0), (10, 10, 0.0),
                                                              (10, 4, 0.6), (8, 2, 0.75)])
def test_duplicated_fraction(computations, distinct, fraction) -> None:
    result = lca.parallel.ParallelResult(np.zeros(0, dtype=np.int8), lca.AnswerStats(),
                                         lca.AnswerStats(), computations, distinct, 0, 0, 1,
                                         "chunk")
    assert result.duplicated_fraction == fraction


def test_pool_defaults() -> None:
    pool = ReplicaPool(TARGETS["parity"](), PARAMS)
    try:
        # docs/parallel.md: max_retries defaults to 2; the replicas' cache is a
        # Reconstructor's.
        assert (pool.workers, pool.max_retries, pool.start_method) == (2, 2, "spawn")
        default = inspect.signature(lca.Reconstructor).parameters["cache_size"].default
        assert pool.cache_size == default and pool.batch_size is None
        assert pool.record is False and pool.task_timeout is None
        assert ReplicaPool(TARGETS["parity"](), PARAMS, batch_size=1).batch_size == 1
        assert pool._router._reconstructor.cache_size == lca.parallel.routing.ROUTER_CACHE == 4096
    finally:
        pool.close()


def test_the_router_never_decides_a_leaf_and_stops_at_its_expansion_limit() -> None:
    f = TARGETS["noisy tree"]()
    router = lca.parallel.routing.Router(f, PARAMS)
    stats, built, seen = lca.AnswerStats(), [], {}
    groups = router.groups(queries(400), 7, 10**6, 1, stats, built, seen)
    assert stats.leaves_built == 0 and stats.nodes_built == len(built) > 0
    assert max(len(path) for path, _ in groups) == PARAMS.path_length
    # A deep tree and many rows: the parent decides at most 1,024 nodes.
    deep = Params.practical(n=N, depth=14, noise_rate=0.1, score_samples=2, leaf_samples=1)
    stats = lca.AnswerStats()
    groups = lca.parallel.routing.Router(f, deep).groups(queries(3000), 7, 10**6, 1, stats, [], {})
    assert stats.nodes_built == lca.parallel.routing.MAX_EXPANSIONS == 1024
    assert sum(rows.size for _, rows in groups) == 3000


# -- dispatch, with fake workers ----------------------------------------------------------------

class FakeConn:
    def __init__(self, fail: bool = False) -> None:
        self.sent: list = []
        self.fail = fail

    def send(self, message) -> None:
        if self.fail:
            raise OSError("broken pipe")
        self.sent.append(message)


def dispatching(slots, affinity=None, fail=()):
    """A pool never started, its workers fakes: only dispatch runs (nothing to close)."""
    pool = ReplicaPool(TARGETS["parity"](), PARAMS, workers=len(slots))
    pool._workers = {slot: lca.parallel.pool._Worker(slot, None, FakeConn(slot in fail),
                                                     pid=100 + slot) for slot in slots}
    pool._affinity = dict(affinity or {})
    batch = lca.parallel.pool._Batch(30, 7, derive.pack_points(queries(30)))
    return pool, batch


def task(number, prefix, size):
    return lca.parallel.pool._Task(number, prefix, np.arange(size))


def test_a_worker_takes_a_group_under_its_own_prefix_else_a_new_one_else_the_largest():
    mine, new, other = task(0, ((2, -1),), 12), task(1, ((1, 1), (3, 1)), 10), \
        task(2, ((1, -1),), 8)
    pool, batch = dispatching([0, 1], {(7, ((1, 1),)): 1, (7, ((1, -1),)): 1,
                                       (5, ((2, -1),)): 0})
    batch.pending = deque([mine, new, other])
    pool._dispatch(batch)
    # Worker 0 owns nothing of seed 7: the first group nobody owns. Worker 1
    # owns ((1, 1),), an ancestor of the second group.
    workers = pool._workers
    assert (workers[0].task, workers[1].task) == (mine, new)
    assert list(batch.pending) == [other]
    assert mine.attempts == new.attempts == 1 and other.attempts == 0
    assert workers[0].sent_at > 0 and workers[1].sent_at > 0
    sent = workers[1].conn.sent
    assert len(sent) == 1 and sent[0][:2] == (1, 7) and sent[0][3] == new.prefix
    assert np.array_equal(sent[0][2], batch.packed[new.rows])
    assert pool._affinity[(7, mine.prefix)] == 0 and pool._affinity[(7, new.prefix)] == 1
    # Worker 0 again: only a group worker 1 owns is left: the largest one.
    workers[0].task = None
    batch.pending = deque([other, task(3, ((1, -1), (4, 1)), 5)])
    pool._dispatch(batch)
    assert workers[0].task is other and pool._affinity[(7, other.prefix)] == 0


def test_busy_unready_and_broken_workers_get_nothing():
    pool, batch = dispatching([0, 1, 2, 3], fail={3})
    pool._workers[0].pid = None  # not ready yet
    pool._workers[1].task = task(9, (), 1)  # busy
    pool._workers[2].broken = True
    first = task(0, ((1, 1),), 4)
    batch.pending = deque([first, task(1, (), 3)])
    pool._dispatch(batch)
    # Only worker 3 could take a task; its pipe is broken: it is marked, and the
    # task stays its own until the worker is buried and the task requeued.
    assert pool._workers[3].broken and pool._workers[3].task is first
    assert first.attempts == 1 and len(batch.pending) == 1 and pool._affinity == {}
    assert pool._workers[0].task is None and pool._workers[2].task is None


@pytest.mark.parametrize("entries, cleared", [(4096, False), (4097, True)])
def test_the_affinity_table_is_cleared_past_its_bound(entries, cleared):
    pool, batch = dispatching([0], {(1, ((k, 1),)): 0 for k in range(entries)})
    batch.pending = deque([task(0, ((5, 1),), 3)])
    pool._dispatch(batch)
    assert len(pool._affinity) == (1 if cleared else entries + 1)
    assert pool._affinity[(7, ((5, 1),))] == 0
    pool._workers[0].task = None
    batch.pending = deque([task(1, (), 3)])
    pool._dispatch(batch)  # the root's group: no affinity to record
    assert len(pool._affinity) == (1 if cleared else entries + 1)


def test_the_owner_of_a_prefix_is_its_closest_answered_ancestor():
    pool, _ = dispatching([0, 1], {(7, ((1, 1),)): 0, (7, ((1, 1), (2, -1))): 1,
                                   (8, ((1, 1), (2, -1), (3, 1))): 0})
    assert pool._owner(7, ((1, 1), (2, -1), (3, 1))) == 1
    assert pool._owner(7, ((1, 1), (2, 1))) == 0
    assert pool._owner(7, ((1, 1),)) == 0
    assert pool._owner(7, ((1, -1),)) is None and pool._owner(7, ()) is None
    assert pool._owner(9, ((1, 1),)) is None


class PureNoise(Oracle):
    """A constant under label noise 0.5: every leaf label is a coin flip (picklable)."""

    def __init__(self, n: int) -> None:
        self.n, self.name = n, "pure-noise"
        self.inner = targets.with_label_noise(targets.parity(n, 1, 0), rate=0.5, seed=9)

    def query(self, points: np.ndarray) -> np.ndarray:
        return self.inner.query(points)


def test_the_warning_comes_once_per_call_from_the_caller_never_from_workers(capfd) -> None:
    import warnings

    f = PureNoise(N)
    points = queries(200)
    single = lca.Reconstructor(f, PARAMS)
    with pytest.warns(lca.LowMarginWarning):
        single.answer_many(points, 3)
    guessed = single.last_stats.guesswork_answers
    assert guessed > 100
    with ReplicaPool(f, PARAMS, workers=2, batch_size=20) as pool:
        for routing in ("prefix", "chunk"):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = pool.answer(points, 3, routing=routing)
            assert [w.category for w in caught] == [lca.LowMarginWarning]
            assert caught[0].filename == __file__
            assert result.stats.guesswork_answers == guessed
    assert "LowMarginWarning" not in capfd.readouterr().err
