"""The engine: decisions are steps that ask for rows; one scheduler queries ``f`` for all.

A decision (a node's variable, a leaf's label) is written as a generator
that *yields* a :class:`Request` (the rows it needs ``f`` on), receives their
values, and finally *returns* its result. The rules and the derived bits
live in the estimators (:mod:`lca.estimate`, :mod:`lca.search`); this module
only decides *when* rows are sent to the oracle and in which batches, which
never changes a value of ``f`` (the oracle is a fixed function), so it never
changes a decision (docs/randomness.md §6).

:func:`drive` runs one decision by itself. :class:`Scheduler` runs many
together, level-synchronously: every round it gathers the requests of all
active decisions into as few oracle calls as the byte limit allows
(:func:`chunk_rows` rows each), hands each decision its slice, and repeats.
It admits decisions one by one, in order, while

* their working memory (each decision's :attr:`Task.memory`) fits in
  :data:`WORKING_BYTES`, so memory stays bounded whatever the batch, and
* the queries already spent plus the worst case of every admitted decision
  fits in ``max_queries``, so a budget is never exceeded: a decision is
  started only if it can finish.

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

from lca.oracle import Oracle

__all__ = ["Request", "Steps", "Task", "Scheduler", "chunk_rows", "drive", "WORKING_BYTES"]

# Upper bound on the int8 entries of one oracle batch: bounds memory at large n
# (a 16 MiB batch plus packed words) while keeping batches large enough that
# per-call overhead in the oracle stays small (167 rows at n = 10^5).
_BATCH_ENTRIES = 1 << 24

WORKING_BYTES = 1 << 26
"""Working memory of the decisions a :class:`Scheduler` runs at once (64 MiB).

Every decision is admitted alone if it needs more, so this bounds the peak
at ``max(WORKING_BYTES, largest decision)`` plus one oracle batch."""


def chunk_rows(n: int) -> int:
    """Rows per oracle batch for ``n`` variables."""
    return max(1, _BATCH_ENTRIES // n)


@dataclass(frozen=True, eq=False)
class Request:
    """``count`` rows a decision needs ``f`` on, made on demand.

    ``rows(lo, hi)`` returns rows ``lo .. hi-1`` as a fresh ``(hi - lo, n)``
    ``int8`` array of ``±1`` (the oracle may write into it). ``purpose`` names
    the samples in error notes.
    """

    purpose: str
    count: int
    rows: Callable[[int, int], np.ndarray]


Steps = Generator[Request, np.ndarray, Any]
"""A decision as steps: yields requests, is sent their values, returns its result."""


def _call(oracle: Oracle, points: np.ndarray, notes: Callable[[], str]) -> np.ndarray:
    try:
        return oracle(points)
    except Exception as error:
        # Keep the oracle's own exception type and message; add where it happened.
        error.add_note(notes())
        raise


def _values(oracle: Oracle, request: Request, note: Callable[[], str]) -> np.ndarray:
    """``f`` on every row of ``request``, in oracle calls of at most :func:`chunk_rows` rows."""
    step = chunk_rows(oracle.n)
    if request.count <= step:
        return _call(oracle, request.rows(0, request.count), note)
    return np.concatenate([_call(oracle, request.rows(lo, min(lo + step, request.count)), note)
                           for lo in range(0, request.count, step)])


def drive(steps: Steps, oracle: Oracle, seed: int, path: Any) -> Any:
    """Run one decision's steps to the end against ``oracle``; return its result.

    An oracle error gets a note naming the purpose, the node path and the seed.
    """
    try:
        request = next(steps)
        while True:
            request = steps.send(_values(oracle, request, lambda: _note(
                oracle, [(request.purpose, path)], seed)))
    except StopIteration as stop:
        return stop.value


def _note(oracle: Oracle, where: Sequence[tuple[str, Any]], seed: int) -> str:
    purpose, path = where[0]
    others = len({p for _, p in where} - {path})
    more = f" (and {others} other node{'s' if others > 1 else ''} in the same batch)" \
        if others else ""
    return (f"lca: raised while querying {oracle.name!r} for {purpose} samples at node "
            f"path {path}{more} (seed {seed})")


@dataclass(eq=False)
class Task:
    """One decision the scheduler runs.

    Attributes:
        key: the node path (names it in error notes and results).
        start: makes the decision's steps; called when the task is admitted.
        cap: the most queries the decision can spend (its reservation).
        memory: bytes of working memory it may hold while running.
    """

    key: Any
    start: Callable[[], Steps]
    cap: int
    memory: int
    spent: int = 0
    result: Any = None
    done: bool = False
    _steps: Steps | None = field(default=None, repr=False)
    _request: Request | None = field(default=None, repr=False)


class Scheduler:
    """Runs decisions together, sharing oracle calls (module docstring).

    Args:
        oracle: the (counting) oracle every call goes to.
        seed: named in error notes.
        max_queries: optional budget: a task is admitted only if the queries
            spent plus every admitted task's cap fit in it.
        deadline: optional ``time.monotonic()`` value: no task is admitted,
            and no oracle call is made, after it; tasks still running are
            abandoned.
        on_done: called with each task as it finishes, in finishing order.
    """

    def __init__(self, oracle: Oracle, seed: int, *, max_queries: int | None = None,
                 deadline: float | None = None,
                 on_done: Callable[[Task], None] | None = None) -> None:
        self.oracle = oracle
        self.seed = seed
        self.max_queries = max_queries
        self.deadline = deadline
        self.on_done = on_done
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
                    task._steps.close()
                return False
            outstanding -= self._gathered_step(active)
            for task in active:
                if task.done:
                    outstanding -= task.cap - task.spent
                    memory -= task.memory
            active = [task for task in active if not task.done]
        return self.stopped is None

    def _advance(self, task: Task, values: np.ndarray | None) -> bool:
        """Send ``values`` (or start); True once the task has returned its result."""
        try:
            task._request = next(task._steps) if values is None else task._steps.send(values)
        except StopIteration as stop:
            task.result, task.done, task._request = stop.value, True, None
            task._steps = None
            assert task.spent <= task.cap, (task.key, task.spent, task.cap)
            if self.on_done is not None:
                self.on_done(task)
            return True
        return False

    def _gathered_step(self, active: list[Task]) -> int:
        """One round: every active task's request answered in shared oracle calls.

        Returns the queries spent.
        """
        step = chunk_rows(self.oracle.n)
        values: dict[int, list[np.ndarray]] = {}
        batch: list[tuple[Task, int, int]] = []
        size = 0
        for task in active:
            request = task._request
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

    def _send(self, batch: list[tuple[Task, int, int]],
              values: dict[int, list[np.ndarray]]) -> None:
        parts = [task._request.rows(lo, hi) for task, lo, hi in batch]
        points = parts[0] if len(parts) == 1 else np.concatenate(parts)
        result = _call(self.oracle, points, lambda: _note(
            self.oracle, [(task._request.purpose, task.key) for task, _, _ in batch],
            self.seed))
        self.calls += 1
        self.spent += points.shape[0]
        at = 0
        for task, lo, hi in batch:
            values.setdefault(id(task), []).append(result[at:at + hi - lo])
            at += hi - lo
