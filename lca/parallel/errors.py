"""Errors of the worker pool, and how a worker's exception reaches the caller.

A worker sends :func:`portable` of an exception (pickled, or a
:class:`WorkerError` copy if it will not round-trip, plus its traceback); the
parent raises :func:`revive` of it: the same type, message and notes, a note
naming the worker, the worker's traceback as its cause.
"""

from __future__ import annotations

import pickle
import traceback

__all__ = ["TaskTimeoutError", "WorkerError", "portable", "revive"]


class WorkerError(RuntimeError):
    """A worker failed in a way that has no exception of its own to re-raise.

    Raised when a task killed its worker more often than ``max_retries`` allows,
    when no worker can be started, or in place of an exception that cannot be
    pickled (its type, message and notes are copied into this one).
    """


class TaskTimeoutError(WorkerError, TimeoutError):
    """A worker exceeded :class:`ReplicaPool`'s ``task_timeout`` on one task.

    The worker was killed; the task is not retried (an oracle that hangs
    would hang again). The message names the worker, the task and the timeout.
    """


class _RemoteTraceback(Exception):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return self.text


def portable(error: BaseException) -> tuple[bytes, str]:
    """``error`` pickled (a :class:`WorkerError` copy if it won't round-trip) and its traceback."""
    text = "".join(traceback.format_exception(error))
    try:
        data = pickle.dumps(error)
        pickle.loads(data)
    except Exception:
        copy = WorkerError(f"{type(error).__module__}.{type(error).__qualname__}: {error} "
                           "(the original exception could not be pickled)")
        for note in getattr(error, "__notes__", ()):
            copy.add_note(note)
        data = pickle.dumps(copy)
    return data, text


def revive(data: bytes, text: str, note: str) -> BaseException:
    """The exception :func:`portable` sent, with ``note`` and the worker's traceback as cause."""
    error = pickle.loads(data)
    error.add_note(note)
    error.__cause__ = _RemoteTraceback(text)
    return error
