"""The engine: decisions are steps that ask for rows; one scheduler queries ``f`` for all.

A decision (a node's variable, a leaf's label) is written as a generator
that *yields* a :class:`Request` (the rows it needs ``f`` on), receives their
values, and finally *returns* its result. The rules and the derived bits
live in the estimators (:mod:`lca.estimate`, :mod:`lca.search`); this module
only decides *when* rows are sent to the oracle and in which batches, which
never changes a value of ``f`` (the oracle is a fixed function), so it never
changes a decision (docs/randomness.md §6).

:func:`drive` runs steps by themselves. :class:`Scheduler` runs many
:class:`Task` s together: every round it gathers the requests of all running
tasks into as few oracle calls as the byte limit allows (:func:`chunk_rows`
rows each), hands each task its slice, and repeats. A task is a *group* of
decisions made together (an estimator may share work among them, e.g. all
the nodes of one level of the tree; :func:`together` runs independent steps
in lockstep). The scheduler admits tasks one by one, in order, while

* their working memory (:attr:`Task.memory`) fits in :data:`WORKING_BYTES`,
  so memory stays bounded whatever the batch, and
* the queries already spent plus the most every running task may still
  spend, plus the new task's cap, fit in ``max_queries``: a task is started
  only if it can finish within the budget, so the budget is never exceeded.

Rows are materialised from a request only when its chunk is sent, as the
``int8`` array the oracle call needs, and dropped after the call.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lca import derive
from lca.oracle import Oracle

__all__ = ["CallCosts", "Request", "Scheduler", "Steps", "Task", "WORKING_BYTES", "chunk_rows",
           "drive", "together"]

# Upper bound on the int8 entries of one oracle batch: bounds memory at large n
# (a 16 MiB batch plus packed words) while keeping batches large enough that
# per-call overhead in the oracle stays small (167 rows at n = 10^5).
_BATCH_ENTRIES = 1 << 24

WORKING_BYTES = 1 << 26
"""Working memory of the tasks a :class:`Scheduler` runs at once (64 MiB).

A task is admitted alone if it needs more, so the peak is at most
``max(WORKING_BYTES, largest task)`` plus one oracle batch."""


def chunk_rows(n: int) -> int:
    """Rows per oracle batch for ``n`` variables."""
    return max(1, _BATCH_ENTRIES // n)


@dataclass(frozen=True, eq=False)
class Request:
    """``count`` rows some decisions need ``f`` on, made on demand.

    ``rows(lo, hi)`` returns rows ``lo .. hi-1`` as a fresh ``(hi - lo, n)``
    ``int8`` array of ``±1`` (the oracle may write into it). ``purpose`` and
    ``paths`` (the node paths the rows are for) name the samples in error
    notes.
    """

    purpose: str
    count: int
    rows: Callable[[int, int], np.ndarray]
    paths: Sequence[Any] = ()


def points_request(purpose: str, words: np.ndarray, n: int, paths: Sequence[Any]) -> Request:
    """A request for the packed points ``words`` (``n`` variables), unpacked on demand."""
    return Request(purpose, words.shape[0],
                   lambda lo, hi: derive.unpack_points(words[lo:hi], n), paths)


Steps = Generator[Request, np.ndarray, Any]
"""Decisions as steps: yield requests, are sent their values, return a result."""

# Most binary-search steps one request may ask (Params.lookahead's bound).
_MOST_STEPS = 8
# How much a call's measurement weighs against the one before it: the fit
# follows an oracle whose cost drifts, over about its last 1 / (1 - 0.95) = 20 calls.
_MEMORY = 0.95


class CallCosts:
    """What a call to the oracle costs, measured as the calls are made.

    The scheduler reports each call's rows and wall seconds (:meth:`observe`) and
    the seconds the steps took between a call and the next (:meth:`between`).
    A least-squares fit of ``seconds = per_call + per_row * rows`` over the calls
    (older ones weighing less) separates the oracle's fixed cost of a call from
    its cost per row. :meth:`lookahead` picks, for a binary search of ``pairs``
    pairs over up to ``steps`` steps, the steps per request that minimise the
    predicted wall time: fewer requests each cost a call (and lca's work
    around it), more steps per request cost rows (``2**s - 1`` per pair for
    ``s`` steps). Only when rows are asked changes: never a decision.
    """

    def __init__(self) -> None:
        self._weights = np.zeros(5)  # sum w, sum w r, sum w r^2, sum w t, sum w r t
        self._between = 0.0
        self.chosen: dict[int, int] = {}
        """How many searches asked each number of steps per request."""

    def observe(self, rows: int, seconds: float) -> None:
        """Add one call of ``rows`` rows that took ``seconds``."""
        self._weights *= _MEMORY
        self._weights += (1.0, rows, rows * rows, seconds, rows * seconds)

    def between(self, seconds: float) -> None:
        """Add the seconds lca's steps took from one call to the next."""
        self._between = _MEMORY * self._between + (1 - _MEMORY) * seconds \
            if self._between else seconds

    def per_call(self) -> tuple[float, float] | None:
        """The fitted ``(seconds per call, seconds per row)``, with lca's own work
        between calls in the first; ``None`` until calls of two sizes were seen."""
        weight, rows, squares, seconds, products = self._weights
        spread = weight * squares - rows * rows
        if weight == 0 or spread <= 1e-9 * weight * squares:
            return None
        per_row = max(0.0, (weight * products - rows * seconds) / spread)
        per_call = max(0.0, (seconds - per_row * rows) / weight)
        return per_call + self._between, per_row

    def lookahead(self, pairs: int, steps: int) -> int:
        """Steps per request for a search of ``pairs`` pairs of at most ``steps`` steps:
        the fewest that minimise ``requests * per_call + rows * per_row`` (1 until the
        costs are known)."""
        costs = self.per_call()
        best = 1
        if costs is not None and steps > 1:
            per_call, per_row = costs

            def wall(s: int) -> float:
                requests, last = -(-steps // s), steps % s or s
                rows = (requests - 1) * ((1 << s) - 1) + (1 << last) - 1
                return requests * per_call + pairs * rows * per_row

            best = min(range(1, min(steps, _MOST_STEPS) + 1), key=wall)
        self.chosen[best] = self.chosen.get(best, 0) + 1
        return best

    def text(self) -> str:
        """What was measured and chosen, for explain() and describe()."""
        costs = self.per_call()
        chosen = ", ".join(f"{steps} ({count}x)" for steps, count in sorted(self.chosen.items()))
        measured = "not measured yet" if costs is None else \
            f"{1e3 * costs[0]:.3g} ms a call, {1e6 * costs[1]:.3g} us a row"
        return f"auto: {chosen or 'none chosen yet'}; oracle {measured}"


def _note(oracle: Oracle, pieces: Sequence[Request], seed: int) -> str:
    paths = [path for request in pieces for path in request.paths]
    where = f" at node path {paths[0]}" if paths else ""
    others = len(set(paths)) - 1
    if others > 0:
        where += f" (and {others} other node{'s' if others > 1 else ''} in the same batch)"
    return (f"lca: raised while querying {oracle.name!r} for {pieces[0].purpose} samples"
            f"{where} (seed {seed})")


def _call(oracle: Oracle, points: np.ndarray, pieces: Sequence[Request],
          seed: int) -> np.ndarray:
    try:
        return oracle(points)
    except Exception as error:
        # Keep the oracle's own exception type and message; add where it happened.
        error.add_note(_note(oracle, pieces, seed))
        raise


def drive(steps: Steps, oracle: Oracle, seed: int) -> Any:
    """Run ``steps`` to the end against ``oracle``, alone; return their result.

    Each request is sent in oracle calls of at most :func:`chunk_rows` rows;
    an oracle error gets a note naming the purpose, the node path and the seed.
    """
    step = chunk_rows(oracle.n)
    try:
        request = next(steps)
        while True:
            values = [_call(oracle, request.rows(lo, min(lo + step, request.count)),
                            [request], seed) for lo in range(0, request.count, step)]
            request = steps.send(values[0] if len(values) == 1 else np.concatenate(
                values or [np.zeros(0, dtype=np.int8)]))
    except StopIteration as stop:
        return stop.value


def _joined(requests: list[Request]) -> Request:
    """One request for the rows of ``requests``, in order."""
    bounds = np.cumsum([0] + [request.count for request in requests])

    def rows(lo: int, hi: int) -> np.ndarray:
        parts = [request.rows(max(lo, first) - first, min(hi, last) - first)
                 for request, first, last in zip(requests, bounds[:-1], bounds[1:], strict=True)
                 if max(lo, first) < min(hi, last)]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    return Request(requests[0].purpose, int(bounds[-1]), rows,
                   [path for request in requests for path in request.paths])


def together(members: Sequence[Steps]) -> Steps:
    """Run independent steps in lockstep; return the list of their results.

    Each round joins the requests of the members still running into one.
    """
    results: list[Any] = [None] * len(members)
    waiting: dict[int, Request] = {}
    for index, steps in enumerate(members):
        try:
            waiting[index] = next(steps)
        except StopIteration as stop:
            results[index] = stop.value
    while waiting:
        order = list(waiting)
        values = yield _joined([waiting[index] for index in order])
        at = 0
        for index in order:
            count = waiting[index].count
            try:
                waiting[index] = members[index].send(values[at:at + count])
            except StopIteration as stop:
                results[index] = stop.value
                del waiting[index]
            at += count
    return results


@dataclass(eq=False)
class Task:
    """A group of decisions the scheduler runs as one.

    Attributes:
        keys: what the decisions are (node paths), for the caller.
        start: makes the group's steps, which return one result per key;
            called when the task is admitted.
        cap: the most queries the steps can spend (the task's reservation).
        memory: bytes of working memory the steps may hold while running.
    """

    keys: Sequence[Any]
    start: Callable[[], Steps]
    cap: int
    memory: int
    spent: int = 0
    results: Any = None
    done: bool = False
    _steps: Steps | None = field(default=None, repr=False)
    _request: Request | None = field(default=None, repr=False)

    @property
    def steps(self) -> Steps:
        """The steps of an admitted task that has not returned."""
        assert self._steps is not None, "the task is not running"
        return self._steps

    @property
    def request(self) -> Request:
        """The request a running task waits on (its steps' last yield)."""
        assert self._request is not None, "the task is not running"
        return self._request


class Scheduler:
    """Runs tasks together, sharing oracle calls (module docstring).

    Args:
        oracle: the (counting) oracle every call goes to.
        seed: named in error notes.
        max_queries: optional budget (module docstring).
        deadline: optional ``time.monotonic()`` value: no task is admitted,
            and no oracle call is made, at or after it; tasks still running
            are abandoned.
        on_done: called with each task as it finishes, in finishing order.
        costs: if given, told every call's rows and wall time, and the time the
            steps took between calls (:class:`CallCosts`).
    """

    def __init__(self, oracle: Oracle, seed: int, *, max_queries: int | None = None,
                 deadline: float | None = None,
                 on_done: Callable[[Task], None] | None = None,
                 costs: CallCosts | None = None) -> None:
        self.oracle = oracle
        self.costs = costs
        self.seed = seed
        self.max_queries = max_queries
        self.deadline = deadline
        self.on_done = on_done
        self._step = chunk_rows(oracle.n)  # rows per oracle call
        self.spent = 0
        self.calls = 0
        self.stopped: str | None = None
        """Why the last :meth:`run` stopped early: ``"max_queries"``, ``"time_limit"`` or None."""
        self.needed = 0
        """With ``stopped == "max_queries"``: the cap of the task that did not fit."""

    def _expired(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def run(self, tasks: Sequence[Task]) -> bool:
        """Run ``tasks`` (admitted in order); True if every one finished.

        A task whose cap does not fit in the budget waits for running tasks
        to finish and give back what they did not spend; if none is running,
        the run stops there (:attr:`stopped`, :attr:`needed`) and later tasks
        are left undone. At the deadline the run stops and running tasks are
        abandoned.
        """
        self.stopped = None
        waiting = deque(tasks)
        active: list[Task] = []
        # Queries the running tasks may still spend, and their working memory.
        outstanding = memory = 0
        while waiting or active:
            while waiting and self.stopped is None:
                task = waiting[0]
                if active and memory + task.memory > WORKING_BYTES:
                    break
                if self.max_queries is not None and \
                        self.spent + outstanding + task.cap > self.max_queries:
                    if not active:  # nothing running can give back a reserve
                        self.stopped, self.needed = "max_queries", task.cap
                    break
                if self._expired():
                    self.stopped = "time_limit"
                    break
                waiting.popleft()
                task._steps = task.start()
                if not self._advance(task, None):
                    active.append(task)
                    outstanding += task.cap
                    memory += task.memory
            if not active:
                break
            if self._expired():
                self.stopped = "time_limit"
                for task in active:
                    task.steps.close()
                return False
            outstanding -= self._gathered_step(active)
            for task in active:
                if task.done:
                    outstanding -= task.cap - task.spent
                    memory -= task.memory
            active = [task for task in active if not task.done]
        return self.stopped is None

    def _advance(self, task: Task, values: np.ndarray | None) -> bool:
        """Send ``values`` (or start); True once the task has returned its results."""
        try:
            task._request = next(task.steps) if values is None else task.steps.send(values)
        except StopIteration as stop:
            task.results, task.done, task._request = stop.value, True, None
            task._steps = None
            assert task.spent <= task.cap, (task.keys, task.spent, task.cap)
            if self.on_done is not None:
                self.on_done(task)
            return True
        return False

    def _gathered_step(self, active: list[Task]) -> int:
        """One round: every running task's request answered in shared oracle calls.

        Returns the queries spent.
        """
        step = self._step
        if len(active) == 1 and 0 < (request := active[0].request).count <= step:
            # One request in one call (a single answer's path): no batch bookkeeping.
            task = active[0]
            got = self._timed_call(request.rows(0, request.count), [request])
            self.spent += got.size
            task.spent += got.size
            if self.costs is None:
                self._advance(task, got)
                return got.size
            start = time.perf_counter()
            self._advance(task, got)
            self.costs.between(time.perf_counter() - start)
            return got.size
        values: dict[int, list[np.ndarray]] = {}
        batch: list[tuple[Task, int, int]] = []
        size = 0
        for task in active:
            request = task.request
            lo = 0
            while lo < request.count:
                take = min(request.count - lo, step - size)
                batch.append((task, lo, lo + take))
                size += take
                lo += take
                if size == step:
                    self._send(batch, values)
                    batch, size = [], 0
        if batch:
            self._send(batch, values)
        spent = 0
        for task in active:
            parts = values.pop(id(task), [np.zeros(0, dtype=np.int8)])
            got = parts[0] if len(parts) == 1 else np.concatenate(parts)
            task.spent += got.size
            spent += got.size
            self._advance(task, got)
        return spent

    def _timed_call(self, points: np.ndarray, pieces: Sequence[Request]) -> np.ndarray:
        """One oracle call, counted (and timed for :attr:`costs`)."""
        self.calls += 1
        if self.costs is None:
            return _call(self.oracle, points, pieces, self.seed)
        start = time.perf_counter()
        values = _call(self.oracle, points, pieces, self.seed)
        self.costs.observe(points.shape[0], time.perf_counter() - start)
        return values

    def _send(self, batch: list[tuple[Task, int, int]],
              values: dict[int, list[np.ndarray]]) -> None:
        parts = [task.request.rows(lo, hi) for task, lo, hi in batch]
        points = parts[0] if len(parts) == 1 else np.concatenate(parts)
        result = self._timed_call(points, [task.request for task, _, _ in batch])
        self.spent += points.shape[0]
        at = 0
        for task, lo, hi in batch:
            values.setdefault(id(task), []).append(result[at:at + hi - lo])
            at += hi - lo
