"""One answering thread per worker, micro-batching requests for the same seed.

Each worker process keeps exactly one :class:`lca.Reconstructor` and only
its one answering thread calls it: a reconstructor runs one call at a time
(it holds a lock), so more threads would only wait, and one thread is what
lets requests queue up into batches. Requests queue on the event loop;
whenever the thread is free it takes the oldest request and every other
queued ``/answer`` request for the same seed, up to ``max_points`` points
in all, and answers them with one
:meth:`~lca.Reconstructor.answer_many` call. Rows of ``answer_many`` are
answered independently (each row's answer is ``T_seed`` at that row, whatever
else is in the call), so batching never changes an answer; it only shares
the walk down the cached top of the tree.

Waiting is bounded: a request waits for the batches ahead of it (oldest
first, so none is overtaken indefinitely) plus ``batch_wait`` seconds, and
never past its deadline. ``answer_many`` runs with ``time_limit`` set to the
earliest deadline in the batch, so it stops before building a decision once
that passes; requests whose rows all finished are answered, those past their
deadline get :class:`AnswerTimeout`, the rest go back to the front of the
queue. A decision already being built is not interrupted: a slow oracle can
overrun a deadline by one decision's queries.

An exception in a batch of several requests is retried request by request,
so that, like answers, errors never depend on what was batched together.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from lca.decisions import AnswerStats
from lca.reconstruct import BudgetExceeded, Explanation

__all__ = ["AnswerQueue", "AnswerTimeout", "Answered", "AnsweringError", "Explained"]

_log = logging.getLogger(__name__)


class Answerer(Protocol):
    """What the answering thread calls: a :class:`lca.Reconstructor`, or a saved
    tree (:class:`lca.serve.saved.SavedTree`)."""

    last_stats: AnswerStats

    def answer_many(self, points: np.ndarray, seed: int, *,
                    time_limit: float | None = None) -> np.ndarray: ...

    def explain(self, z: np.ndarray, seed: int) -> Explanation: ...


class AnswerTimeout(Exception):
    """The request's deadline passed before it was answered."""


class AnsweringError(Exception):
    """``answer_many`` or ``explain`` raised (the oracle, or a bug): its type, message, notes."""

    @classmethod
    def of(cls, error: BaseException) -> AnsweringError:
        notes = "; ".join(getattr(error, "__notes__", ()))
        return cls(f"{type(error).__name__}: {error}" + (f" ({notes})" if notes else ""))


@dataclass(frozen=True)
class Answered:
    """Answers of one request, and the ``answer_many`` call that made them."""

    answers: np.ndarray
    queries: int
    batch_requests: int
    batch_points: int


@dataclass(frozen=True)
class Explained:
    """One explanation; ``queries`` counts the oracle queries spent making it."""

    explanation: Explanation
    queries: int


@dataclass
class _Job:
    seed: int
    points: np.ndarray  # (m, n) for /answer, (n,) for /explain
    explain: bool
    deadline: float
    future: asyncio.Future[Any] = field(repr=False)


_Outcome = Answered | Explained | Exception | None  # None: not finished, queue it again


class AnswerQueue:
    """The answering thread of one worker and the queue in front of it."""

    def __init__(self, reconstructor: Answerer, *, max_points: int,
                 batch_wait: float) -> None:
        self.reconstructor = reconstructor
        self.max_points = max_points
        self.batch_wait = batch_wait
        self.batches = 0
        """Batches taken for ``/answer`` requests: one ``answer_many`` call each (one per
        request when the batch raised)."""
        self.requests = 0
        """``/answer`` requests answered."""
        self._pending: deque[_Job] = deque()
        self._arrived = asyncio.Event()
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lca-answer")
        self._task: asyncio.Task[None] | None = None

    @property
    def queued(self) -> int:
        """Requests waiting for the answering thread."""
        return len(self._pending)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._serve())

    async def close(self) -> None:
        """Stop taking work; wait for the batch in the thread, if any, to finish."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for job in self._pending:
            if not job.future.done():
                job.future.set_exception(AnswerTimeout("the server is shutting down"))
        self._thread.shutdown(wait=True)

    async def answer(self, points: np.ndarray, seed: int, deadline: float) -> Answered:
        """``T_seed`` on the rows of a checked ``(m, n)`` ``int8`` array."""
        return await self._submit(_Job(seed, points, False, deadline,
                                       asyncio.get_running_loop().create_future()))

    async def explain(self, point: np.ndarray, seed: int, deadline: float) -> Explained:
        """The path of one checked point through ``T_seed``."""
        return await self._submit(_Job(seed, point, True, deadline,
                                       asyncio.get_running_loop().create_future()))

    async def _submit(self, job: _Job) -> Any:
        self._pending.append(job)
        self._arrived.set()
        try:
            async with asyncio.timeout(job.deadline - time.monotonic()):
                return await job.future  # cancelled at the deadline
        except TimeoutError:
            raise AnswerTimeout("not answered within the request timeout "
                                "(--request-timeout)") from None

    # -- the loop side: take batches, hand them to the thread, settle futures --

    async def _serve(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            while not self._pending:
                self._arrived.clear()
                await self._arrived.wait()
            if self.batch_wait:
                await asyncio.sleep(self.batch_wait)
            jobs = self._take()
            if not jobs:
                continue
            try:
                outcomes = await loop.run_in_executor(self._thread, self._run, jobs)
            except Exception as error:  # a bug in this module: fail the batch, keep serving
                _log.error("answering thread failed", exc_info=error, extra={"event": "bug"})
                outcomes = [AnsweringError.of(error)] * len(jobs)
            if not jobs[0].explain:
                self.batches += 1
                self.requests += sum(isinstance(outcome, Answered) for outcome in outcomes)
            again = []
            for job, outcome in zip(jobs, outcomes, strict=True):
                if outcome is None:
                    again.append(job)
                elif not job.future.done():
                    if isinstance(outcome, Exception):
                        job.future.set_exception(outcome)
                    else:
                        job.future.set_result(outcome)
            self._pending.extendleft(reversed(again))

    def _take(self) -> list[_Job]:
        """The oldest live job and, for ``/answer``, the queued ones it can batch with."""
        while self._pending and self._pending[0].future.done():
            self._pending.popleft()  # its requester stopped waiting
        if not self._pending:
            return []
        first = self._pending.popleft()
        if first.explain:
            return [first]
        batch, total = [first], len(first.points)
        rest: deque[_Job] = deque()
        for job in self._pending:
            if job.future.done():
                continue
            if (not job.explain and job.seed == first.seed
                    and total + len(job.points) <= self.max_points):
                batch.append(job)
                total += len(job.points)
            else:
                rest.append(job)
        self._pending = rest
        return batch

    # -- the answering thread: the only caller of the reconstructor ----------

    def _run(self, jobs: list[_Job]) -> list[_Outcome]:
        if jobs[0].explain:
            return [self._explain(jobs[0])]
        return self._answer(jobs)

    def _answer(self, jobs: list[_Job]) -> list[_Outcome]:
        rec = self.reconstructor
        points = jobs[0].points if len(jobs) == 1 else np.concatenate([j.points for j in jobs])
        finished = None
        try:
            answers = rec.answer_many(points, jobs[0].seed,
                                      time_limit=_time_left(min(j.deadline for j in jobs)))
        except BudgetExceeded as stop:
            answers, finished = stop.answers, stop.finished
        except Exception as error:
            if len(jobs) > 1:
                return [outcome for job in jobs for outcome in self._answer([job])]
            _log.error("answering failed", exc_info=error,
                       extra={"event": "answer-error", "seed": jobs[0].seed})
            return [AnsweringError.of(error)]
        queries = rec.last_stats.queries
        outcomes: list[_Outcome] = []
        now, lo = time.monotonic(), 0
        for job in jobs:
            hi = lo + len(job.points)
            if finished is None or finished[lo:hi].all():
                outcomes.append(Answered(answers[lo:hi].copy(), queries, len(jobs),
                                         len(points)))
            elif job.deadline <= now:
                outcomes.append(AnswerTimeout("not answered within the request timeout "
                                              "(--request-timeout)"))
            else:
                outcomes.append(None)
            lo = hi
        return outcomes

    def _explain(self, job: _Job) -> _Outcome:
        rec = self.reconstructor
        try:
            # Decide the path under the deadline first; explain then reads it from the
            # cache (it holds at least one path, ServeSettings.cache_size is checked).
            rec.answer_many(job.points[None, :], job.seed, time_limit=_time_left(job.deadline))
            queries = rec.last_stats.queries
            explanation = rec.explain(job.points, job.seed)
        except BudgetExceeded:
            return AnswerTimeout("not explained within the request timeout "
                                 "(--request-timeout)")
        except Exception as error:
            _log.error("explaining failed", exc_info=error,
                       extra={"event": "explain-error", "seed": job.seed})
            return AnsweringError.of(error)
        return Explained(explanation, queries + explanation.stats.queries)


def _time_left(deadline: float) -> float:
    return max(deadline - time.monotonic(), 0.0)
