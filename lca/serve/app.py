"""The ASGI application of one ``lca serve`` worker (Starlette).

Endpoints (JSON in and out; a refusal is ``{"error": {"field", "message"}}``):

* ``POST /answer`` ``{"seed": 7, "points": [[1, -1, ...], ...]}`` ->
  ``{"answers": [...], "queries": Q}``: ``T_seed`` at every point, in order
  (``±1``; a saved surrogate's model labels, as ``Surrogate.predict`` gives
  them, as ``"label"`` of ``/explain`` is).
  ``{"seed": 7, "signs": ["+-...", ...]}`` is the same request, each point a
  string of ``n`` characters ``+`` (1) or ``-`` (-1): about ten times
  cheaper to read than lists of ints at ``n = 1000`` (docs/benchmarks.md,
  "What does serving cost?").
  A saved surrogate also takes ``{"seed": 7, "rows": [[52.3, "small", ...],
  ...]}``: rows of raw feature values, encoded by its saved encoder
  (:meth:`lca.serve.saved.SavedTree.encode_rows`), answered as
  ``Surrogate.predict`` answers them.
  ``Q`` is the oracle queries spent by the ``answer_many`` call that answered
  the request (shared with the requests batched with it; 0 when every
  decision was in the cache). Answers never depend on the cache, batching
  or worker; ``Q`` does.
* ``POST /explain`` ``{"seed": 7, "point": [...]}`` -> ``{"seed", "label",
  "path": [[variable, value], ...], "conditions": [...], "low_margin":
  [...], "queries"}``: the root-to-leaf path of the point in ``T_seed``
  (of a saved surrogate's encoded ``"row": [...]`` too).
* ``GET /healthz`` -> ``{"status": "ok", "pid", "requests", "batches",
  "queued"}``.
* ``GET /describe`` -> the oracle's name, ``n`` and source, the mode, the
  parameters (``lca.Params(**describe["params"])`` rebuilds them, so
  ``lca.answer`` gives the same bits in process), the limits and versions.
  For a saved surrogate: its mode (``"data"`` or ``"product"``), the
  ``"builder"`` of its tree (``"rows"`` or ``"reconstructor"``) with the
  parameters the tree recorded, its ``"classes"`` and its ``"features"``
  (:meth:`lca.serve.saved.SavedTree.description`).

Statuses: 200; 4xx for a bad request (:mod:`lca.serve.validate`), 404/405
for an unknown path or method; 500 when answering raised (the oracle's
exception type and message, never a traceback), 503 when the request
timeout passed first or the worker is shutting down.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec
import numpy as np
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import lca
from lca.decisions import NodeDecision
from lca.oracle import Oracle
from lca.reconstruct import Reconstructor
from lca.serve.batching import Answerer, AnsweringError, AnswerQueue, AnswerTimeout
from lca.serve.config import ServeSettings, search_current_directory
from lca.serve.saved import SavedTree, load_saved
from lca.serve.validate import RequestError, parse_answer, parse_explain, read_body

__all__ = ["SETTINGS_VARIABLE", "app_from_environment", "create_app"]

SETTINGS_VARIABLE = "LCA_SERVE_SETTINGS"
"""Environment variable carrying :meth:`ServeSettings.to_json` to worker processes."""

_log = logging.getLogger("lca.serve")
_encode = msgspec.json.Encoder().encode


def _json(content: Any, status: int = 200) -> Response:
    return Response(_encode(content), status_code=status, media_type="application/json")


def _error(status: int, field: str | None, message: str) -> Response:
    return _json({"error": {"field": field, "message": message}}, status)


Handler = Callable[[Request], Awaitable[Response]]


def _refusals(handler: Handler) -> Handler:
    """Turn every exception of ``handler`` into a JSON error; log unexpected ones."""
    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except RequestError as error:
            request.state.log = {"field": error.field, "error": error.message}
            return _error(error.status, error.field, error.message)
        except ClientDisconnect:
            return _error(400, "body", "the client disconnected before sending the body")
        except AnswerTimeout as error:
            return _error(503, None, str(error))
        except AnsweringError as error:
            request.state.log = {"error": str(error)}
            return _error(500, None, f"answering failed: {error}")
        except Exception as error:  # a bug here: logged with its traceback, not sent
            _log.error("unexpected error", exc_info=error, extra={"event": "bug"})
            return _error(500, None, "internal server error (logged by the server)")
    return run


class _AccessLog:
    """Log every HTTP request as one record: method, path, status, ms, and fields the
    endpoint left in ``request.state.log``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            state = scope.get("state", {})
            _log.info("%s %s %d", scope["method"], scope["path"], status, extra={
                "event": "request", "method": scope["method"], "path": scope["path"],
                "status": status, "ms": round((time.perf_counter() - start) * 1e3, 3),
                **state.get("log", {})})


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    return _error(error.status_code, None, f"{request.method} {request.url.path}: "
                  f"{error.detail}; the endpoints are POST /answer, POST /explain, "
                  f"GET /healthz, GET /describe")


async def _unexpected(request: Request, error: Exception) -> Response:
    _log.error("unexpected error", exc_info=error, extra={"event": "bug"})
    return _error(500, None, "internal server error (logged by the server)")


def _check_seed(seed: int, only: int | None) -> None:
    if only is not None and seed != only:
        raise RequestError(422, "seed", f"'seed' must be {only}: this replica serves the "
                                        f"saved tree T_{only} of --model (another seed "
                                        f"needs the model); got {seed}")


def create_app(settings: ServeSettings, oracle: Oracle | None = None) -> Starlette:
    """The application of one worker: its own oracle, reconstructor and answering thread.

    ``oracle`` skips loading it again when the caller already has
    ``settings.load_oracle()``.
    """
    only_seed = None
    saved: SavedTree | None = None  # a saved surrogate: answers in its model's labels
    answerer: Answerer
    if settings.source == "model":
        # A saved Surrogate: its tree answers, for its own seed only (lca.serve.saved).
        saved, oracle = load_saved(settings.spec)
        answerer, only_seed = saved, saved.seed
        about = saved.description()
    else:
        if oracle is None:
            oracle = settings.load_oracle()
        params = settings.params(oracle.n)
        if settings.cache_size < params.path_length + 1:
            raise ValueError(
                f"The 'cache_size' parameter of lca serve must be at least "
                f"{params.path_length + 1} (one root-to-leaf path, so /explain reads its "
                f"path from the cache). Got {settings.cache_size} instead.")
        answerer = Reconstructor(oracle, params, cache_size=settings.cache_size)
        about = {"mode": settings.mode, "params": dataclasses.asdict(params),
                 "params_text": params.describe()}
    queue = AnswerQueue(answerer, max_points=settings.max_points,
                        batch_wait=settings.batch_wait)
    n = oracle.n
    description = {
        "oracle": {"name": oracle.name, "n": n, "source": settings.source,
                   "spec": None if settings.source == "model" else settings.spec},
        "seeds": "any" if only_seed is None else [only_seed],
        **about,
        "cache_size": settings.cache_size,
        "limits": {"max_points": settings.max_points,
                   "max_body_bytes": settings.max_body_bytes,
                   "request_timeout": settings.request_timeout,
                   "batch_wait": settings.batch_wait},
        "versions": {"lca": lca.__version__},
    }

    def labelled(answers: np.ndarray) -> list[Any]:
        """Answers as served: ``±1`` from an oracle, a saved surrogate's model labels."""
        return answers.tolist() if saved is None else saved.labels(answers)

    async def body(request: Request, deadline: float) -> bytes:
        return await read_body(request.headers, request.stream(),
                               max_bytes=settings.max_body_bytes, deadline=deadline)

    @_refusals
    async def answer(request: Request) -> Response:
        deadline = time.monotonic() + settings.request_timeout
        data = await body(request, deadline)
        if saved is None:
            seed, points = parse_answer(data, n, settings.max_points)
        else:  # off the event loop: encoding 4096 rows of 30 values takes about 0.1 s
            seed, points = await asyncio.to_thread(parse_answer, data, n, settings.max_points,
                                                   saved)
        _check_seed(seed, only_seed)
        request.state.log = {"seed": seed, "points": len(points)}
        done = await queue.answer(points, seed, deadline)
        request.state.log |= {"queries": done.queries, "batch_requests": done.batch_requests,
                              "batch_points": done.batch_points}
        return _json({"answers": labelled(done.answers), "queries": done.queries})

    @_refusals
    async def explain(request: Request) -> Response:
        deadline = time.monotonic() + settings.request_timeout
        seed, point = parse_explain(await body(request, deadline), n, saved)
        _check_seed(seed, only_seed)
        request.state.log = {"seed": seed, "points": 1}
        done = await queue.explain(point, seed, deadline)
        found = done.explanation
        request.state.log |= {"queries": done.queries}
        return _json({"seed": seed, "label": labelled(np.array([found.label]))[0],
                      "path": [[variable, value] for variable, value in found.path],
                      "conditions": list(found.conditions),
                      "low_margin": [isinstance(node, NodeDecision) and node.low_margin
                                     for node in found.nodes],
                      "queries": done.queries})

    async def healthz(request: Request) -> Response:
        return _json({"status": "ok", "pid": os.getpid(), "requests": queue.requests,
                      "batches": queue.batches, "queued": queue.queued})

    async def describe(request: Request) -> Response:
        return _json(description)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        queue.start()
        _log.info("ready", extra={"event": "ready", "oracle": oracle.name, "n": n,
                                  "mode": about["mode"], "depth": about["params"]["depth"]})
        yield
        await queue.close()
        _log.info("stopped", extra={"event": "stopped", "requests": queue.requests})

    routes = [Route("/answer", answer, methods=["POST"]),
              Route("/explain", explain, methods=["POST"]),
              Route("/healthz", healthz, methods=["GET"]),
              Route("/describe", describe, methods=["GET"])]
    return Starlette(routes=routes, middleware=[Middleware(_AccessLog)], lifespan=lifespan,
                     exception_handlers={HTTPException: _http_error, Exception: _unexpected})


def app_from_environment() -> Starlette:
    """The app of a worker process started by ``lca serve`` (settings in the environment)."""
    logging.captureWarnings(True)  # LowMarginWarning and others become log records
    settings = ServeSettings.from_json(os.environ[SETTINGS_VARIABLE])
    if settings.source == "oracle":
        # As the command did before starting this worker: its oracle's module may be
        # in the current directory (a spawned worker also inherits the command's sys.path).
        search_current_directory()
    return create_app(settings)
