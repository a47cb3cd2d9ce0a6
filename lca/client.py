"""A thin client for ``lca serve`` replicas (standard library only).

    >>> from lca.client import Client
    >>> client = Client(["http://127.0.0.1:8000", "http://127.0.0.1:8001"])  # doctest: +SKIP
    >>> client.answer(points, seed=7)          # int8 array, one answer per row  # doctest: +SKIP
    >>> surrogate = Client("http://127.0.0.1:8002")   # lca serve --model FILE  # doctest: +SKIP
    >>> surrogate.answer_rows([[51.9, "small", "north", 42]], seed=3)  # doctest: +SKIP
    array(['repaid'], dtype='<U6')

Every replica started with the same oracle, mode and depth answers from the
same tree, so a request can go to any of them: the client sends each request
to the URL that answered last and, when a connection fails (refused, reset,
timed out) or a replica answers 503 (timed out or shutting down), retries it
on the next URL, up to ``attempts`` tries in all. Answering is a pure
function of ``(oracle, params, seed, point)``, so a retried request gets the
same answer wherever it lands. A request the server refuses (4xx) raises
:class:`RequestRejected`, a ``ValueError`` carrying the server's message;
an oracle error (500) raises :class:`ServerError`; neither is retried.

No reply is taken on trust: every field the client reads is checked (an
answer is an int ``-1`` or ``1``, or one of a served surrogate's classes,
one per point sent; ``queries`` an int ``>= 0``; ...), and a reply that
breaks the protocol raises :class:`ServerError` with status 200, naming the
replica and the field.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import math
import reprlib
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from lca._validate import MAX_N, check_seed
from lca.derive import Path, check_path
from lca.oracle import check_points

__all__ = ["ENCODINGS", "Client", "RequestRejected", "ServedExplanation", "ServerError",
           "ServerUnavailable"]

ENCODINGS = ("signs", "points")
"""How :meth:`Client.answer` sends points (``POST /answer`` accepts both)."""


class RequestRejected(ValueError):
    """The server refused the request (4xx): ``status``, ``field``, ``url``; the message is
    the server's."""

    def __init__(self, message: str, *, status: int, field: str | None, url: str) -> None:
        super().__init__(message)
        self.status, self.field, self.url = status, field, url


class ServerError(RuntimeError):
    """The server failed to answer (5xx other than 503), e.g. the oracle raised, or it
    answered 200 with a reply that breaks the protocol (``status`` 200: a field missing,
    of the wrong type or out of range); not retried either way."""

    def __init__(self, message: str, *, status: int, url: str) -> None:
        super().__init__(message)
        self.status, self.url = status, url


class ServerUnavailable(ConnectionError):
    """No attempt reached a server that answered; the message lists every failure."""


@dataclass(frozen=True)
class ServedExplanation:
    """``POST /explain``: the point's path through ``T_seed``, its label and the queries
    the server spent (0 when the path was cached). The label is ``±1``, or one of
    :attr:`Client.classes` from a saved surrogate."""

    seed: int
    label: Any
    path: Path
    conditions: tuple[str, ...]
    low_margin: tuple[bool, ...]
    queries: int


def _check_url(url: Any) -> tuple[str, str, int]:
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname \
            or parts.path not in ("", "/"):
        raise ValueError(f"The 'url' parameter of Client must be an http(s)://HOST:PORT "
                         f"URL or a list of them. Got {url!r} instead.")
    return parts.scheme, parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)


class Client:
    """Answers from ``lca serve`` replicas at one URL or a list of them.

    Args:
        url: ``"http://HOST:PORT"`` or a list of such URLs (replicas of one tree).
        timeout: seconds to connect, and seconds for each whole exchange (the
            request sent and the whole reply read, however slowly the server
            sends it); a timeout counts as a failed connection and moves to the
            next URL.
        attempts: tries per request across the URLs (default: each URL twice);
            a short pause (0.05 s, doubling, at most 1 s) separates rounds.
        chunk: most points per ``/answer`` request; :meth:`answer` splits larger
            arrays (the server refuses more than its ``--max-points``).
        encoding: how :meth:`answer` sends points: ``"signs"`` (default), each
            point a string of ``+`` and ``-``, about 10 times cheaper for the
            server to read than ``"points"``, lists of ints ``±1``. Answers are
            the same either way.

    A server of a saved surrogate (``lca serve --model``) answers its model's
    labels, listed by its ``/describe`` (:attr:`classes`); the client returns
    those labels, each checked to be one of them.

    A client may be shared by threads: each thread keeps its own connections.
    """

    def __init__(self, url: str | Sequence[str], *, timeout: float = 30.0,
                 attempts: int | None = None, chunk: int = 1024,
                 encoding: str = "signs") -> None:
        if not isinstance(url, (str, Sequence)):
            raise TypeError(f"The 'url' parameter of Client must be an http(s)://HOST:PORT "
                            f"URL or a list of them. Got {url!r} instead.")
        urls = [url] if isinstance(url, str) else list(url)
        if not urls:
            raise ValueError("The 'url' parameter of Client must name at least one URL. "
                             "Got an empty list instead.")
        self._targets = [_check_url(each) for each in urls]
        self.urls = tuple(urls)
        # int and float name the annotated type for the type checker; Real also admits
        # numpy's floats and Fraction.
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float, Real)) \
                or not timeout > 0:
            raise ValueError(f"The 'timeout' parameter of Client must be a number of seconds "
                             f"> 0. Got {timeout!r} instead.")
        self.timeout = float(timeout)
        self.attempts = 2 * len(urls) if attempts is None else _positive("attempts", attempts)
        self.chunk = _positive("chunk", chunk)
        if encoding not in ENCODINGS:
            raise ValueError(f"The 'encoding' parameter of Client must be one of {ENCODINGS}. "
                             f"Got {encoding!r} instead.")
        self.encoding = encoding
        self.last_queries = 0
        """Oracle queries the server(s) spent on the last :meth:`answer` or :meth:`explain`."""
        self._preferred = 0
        self._n: int | None = None
        self._classes: list[Any] | None = None
        self._features: list[dict[str, Any]] | None = None
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: list[http.client.HTTPConnection] = []

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every connection this client opened (in any thread)."""
        with self._lock:
            for connection in self._all:
                connection.close()
            self._all.clear()

    # -- the API ---------------------------------------------------------------

    def answer(self, points: Any, seed: int) -> np.ndarray:
        """``T_seed`` at every row of an ``(m, n)`` array of ``±1``, as ``int8`` (class
        labels, as an array of them, from a served surrogate: :attr:`classes`).

        Checked here like :meth:`lca.Reconstructor.answer_many` (``TypeError``
        for a wrong type or shape, ``ValueError`` for values; ``n`` comes from
        the server's ``/describe``); sent in requests of at most ``chunk`` rows.
        """
        seed = _seed(seed, "Client.answer")
        points = check_points(points, self.n, what="points")

        def sent(rows: np.ndarray) -> list[Any]:
            return _signs(rows) if self.encoding == "signs" else rows.tolist()

        return self._answer(seed, self.encoding, points, sent)

    def answer_rows(self, rows: Any, seed: int) -> np.ndarray:
        """A served surrogate's answers to rows of raw feature values, in its model's
        labels (:attr:`classes`, each checked to be one of them): what
        ``Surrogate.predict`` answers on the same rows.

        ``rows``: a sequence of rows, each a sequence of the fitted features'
        values in order (:attr:`features`: numbers, strings, bools, ``None``
        for a missing value), a 2-D NumPy array, or a pandas DataFrame (its
        columns taken by the features' names when it has them all). A float
        NaN is sent as ``null`` (a missing value: ``predict`` answers both
        alike); an infinity, which JSON cannot carry, raises ``ValueError``.
        The server encodes the rows with the saved encoder and refuses (4xx,
        :class:`RequestRejected`) a value the encoder refuses, naming it.
        Sent in requests of at most ``chunk`` rows. Raises ``ValueError``
        from a replica of an oracle, which has no features.
        """
        seed = _seed(seed, "Client.answer_rows")
        values = self._feature_rows("Client.answer_rows", "rows", rows)
        return self._answer(seed, "rows", values, lambda chunk: chunk)

    def _answer(self, seed: int, field: str, rows: Any,
                sent: Callable[[Any], list[Any]]) -> np.ndarray:
        """The answers to ``rows``, sent as ``field`` in requests of at most ``chunk``."""
        answers, queries = [], 0
        for lo in range(0, len(rows), self.chunk):
            chunk = rows[lo:lo + self.chunk]
            reply = self._request("POST", "/answer", {"seed": seed, field: sent(chunk)})
            answers.append(_answers(reply, len(chunk), self.classes))
            queries += _field(reply, "/answer", "queries", _is_count, "an int >= 0")
        self.last_queries = queries
        if not answers:
            return np.zeros(0, dtype=np.int8) if self.classes is None else \
                _labels([], self.classes)
        return np.concatenate(answers)

    def explain(self, point: Any, seed: int) -> ServedExplanation:
        """The path of one point (``n`` values ``±1``) through ``T_seed``, and its label."""
        seed = _seed(seed, "Client.explain")
        point = np.asarray(point)
        if point.ndim != 1:
            raise TypeError(f"The 'point' parameter of Client.explain must be a 1-D array of "
                            f"{self.n} values ±1. Got shape {point.shape} instead.")
        point = check_points(point[None, :], self.n, what="point")[0]
        return self._explain(seed, "point", point.tolist())

    def explain_row(self, row: Any, seed: int) -> ServedExplanation:
        """The path through a served surrogate's tree of one row of raw feature values
        (as :meth:`answer_rows` takes them), and its label."""
        seed = _seed(seed, "Client.explain_row")
        if not isinstance(row, (Sequence, np.ndarray)) or isinstance(row, (str, bytes)):
            raise TypeError(f"The 'row' parameter of Client.explain_row must be a sequence "
                            f"of feature values. Got {type(row).__name__} instead.")
        return self._explain(seed, "row",
                             self._feature_rows("Client.explain_row", "row", [row])[0])

    def _explain(self, seed: int, field: str, value: list[Any]) -> ServedExplanation:
        reply = self._request("POST", "/explain", {"seed": seed, field: value})
        explained = _explanation(reply, seed, self.n, self.classes)
        self.last_queries = explained.queries
        return explained

    def _feature_rows(self, owner: str, name: str, rows: Any) -> list[list[Any]]:
        """``rows`` as lists of JSON values, one per feature, or the first bad one named."""
        features = self.features
        if features is None:
            raise ValueError(f"{owner} needs a replica of a saved surrogate (lca serve "
                             f"--model), whose /describe lists its features; "
                             f"{', '.join(self.urls)} serve(s) an oracle: send points of "
                             "±1 with Client.answer")
        names = [feature["name"] for feature in features]
        if hasattr(rows, "columns") and hasattr(rows, "to_numpy"):  # a DataFrame
            if set(names) <= {str(column) for column in rows.columns}:
                rows = rows.rename(columns=str)[names]
            rows = rows.to_numpy(dtype=object)
        if isinstance(rows, np.ndarray):
            rows = rows.tolist()
        if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence):
            raise TypeError(f"The '{name}' parameter of {owner} must be a sequence of rows, "
                            f"a 2-D array or a DataFrame. Got {type(rows).__name__} instead.")
        return [_feature_row(owner, name, i, row, len(names)) for i, row in enumerate(rows)]

    def describe(self) -> dict[str, Any]:
        """``GET /describe``: the oracle, mode, parameters and limits of the replicas."""
        reply = self._request("GET", "/describe", None)
        reply.pop("url")
        return reply

    def healthz(self) -> dict[str, Any]:
        """``GET /healthz`` of whichever replica answers."""
        reply = self._request("GET", "/healthz", None)
        reply.pop("url")
        return reply

    @property
    def n(self) -> int:
        """The oracle's ``n``, asked of the server once."""
        if self._n is None:
            self._read_description()
        assert self._n is not None, "set by _read_description"
        return self._n

    @property
    def classes(self) -> list[Any] | None:
        """The labels a saved surrogate answers (``/describe``'s ``"classes"``: its
        model's, a one-vs-rest surrogate's ``"not c"`` and ``c``), or ``None`` when
        answers are ``±1``; asked of the server once."""
        if self._n is None:
            self._read_description()
        return self._classes

    @property
    def features(self) -> list[dict[str, Any]] | None:
        """The fitted features a saved surrogate lists (``/describe``'s ``"features"``:
        each a ``"name"`` and a ``"kind"``, ``"ordered"``, ``"categorical"`` with its
        ``"categories"``, or ``"binary"``), what :meth:`answer_rows` sends a value of, in
        order; ``None`` from an oracle's replica. Asked of the server once."""
        if self._n is None:
            self._read_description()
        return self._features

    def _read_description(self) -> None:
        reply = self._request("GET", "/describe", None)
        oracle = _field(reply, "/describe", "oracle", lambda value: isinstance(
            value, dict) and type(value.get("n")) is int and 1 <= value["n"] <= MAX_N,
            "an object whose 'n' is an int in [1, 2**31 - 1]")
        if "classes" in reply:
            self._classes = _field(reply, "/describe", "classes", _are_classes,
                                   "a list of at least 2 distinct strings, numbers or "
                                   "bools (bools only with bools)")
        if "features" in reply:
            self._features = _field(reply, "/describe", "features", _are_features,
                                    "a list of objects, each with a string 'name' and a "
                                    "'kind' 'ordered', 'categorical' or 'binary'")
        self._n = oracle["n"]

    # -- transport ---------------------------------------------------------------

    def _request(self, method: str, path: str, payload: Any) -> dict[str, Any]:
        """The JSON reply of the first replica that answers, plus its ``"url"``."""
        body = None if payload is None else json.dumps(payload).encode()
        failures = []
        start = self._preferred
        for attempt in range(self.attempts):
            if attempt and attempt % len(self.urls) == 0:
                time.sleep(min(0.05 * 2 ** (attempt // len(self.urls) - 1), 1.0))
            index = (start + attempt) % len(self.urls)
            url = self.urls[index]
            try:
                status, text = self._exchange(index, method, path, body)
            except (OSError, http.client.HTTPException) as error:
                self._drop(index)
                failures.append(f"{url}: {type(error).__name__}: {error}")
                continue
            try:
                reply = json.loads(text)
                refusal = reply.get("error") if status >= 400 else None
                message = refusal["message"] if refusal else None
            except (ValueError, AttributeError, TypeError, KeyError, RecursionError):
                reply, refusal, message = None, None, text.decode("utf-8", "replace")[:500]
            if status == 503:
                failures.append(f"{url}: 503: {message}")
                continue
            self._preferred = index
            if 400 <= status < 500:
                raise RequestRejected(f"{url}{path} refused the request ({status}): {message}",
                                      status=status, field=refusal and refusal.get("field"),
                                      url=url)
            if status != 200 or not isinstance(reply, dict):
                raise ServerError(f"{url}{path} failed ({status}): {message}",
                                  status=status, url=url)
            reply["url"] = url
            return reply
        raise ServerUnavailable(f"no lca serve replica answered {method} {path} in "
                                f"{self.attempts} attempts: " + "; ".join(failures))

    def _exchange(self, index: int, method: str, path: str,
                  body: bytes | None) -> tuple[int, bytes]:
        connection = self._connections().get(index)
        if connection is not None:
            try:
                return _send(connection, method, path, body, self.timeout)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self._drop(index)  # kept alive, closed by the server meanwhile: reconnect
        return _send(self._connect(index), method, path, body, self.timeout)

    def _connections(self) -> dict[int, http.client.HTTPConnection]:
        if not hasattr(self._local, "connections"):
            self._local.connections = {}
        return self._local.connections

    def _connect(self, index: int) -> http.client.HTTPConnection:
        scheme, host, port = self._targets[index]
        kind = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
        connection = kind(host, port, timeout=self.timeout)
        connection.connect()  # http.client sets TCP_NODELAY on it
        self._connections()[index] = connection
        with self._lock:
            self._all.append(connection)
        return connection

    def _drop(self, index: int) -> None:
        connection = self._connections().pop(index, None)
        if connection is not None:
            connection.close()
            with self._lock:
                if connection in self._all:
                    self._all.remove(connection)


# -- checking replies -------------------------------------------------------------

_MISSING = object()
_SHORT = reprlib.Repr()  # a bad list is shown by its first items, not sent back whole
_SHORT.maxlist, _SHORT.maxstring, _SHORT.maxother = 4, 40, 40
_shown = _SHORT.repr


def _malformed(reply: dict[str, Any], path: str, what: str) -> ServerError:
    url = reply["url"]
    return ServerError(f"{url}{path} sent a malformed reply: {what}", status=200, url=url)


def _field(reply: dict[str, Any], path: str, key: str, valid: Any, expected: str) -> Any:
    """``reply[key]`` if ``valid(reply[key])``, else a :class:`ServerError` naming it."""
    value = reply.get(key, _MISSING)
    if value is _MISSING or not valid(value):
        got = f"no {key!r}" if value is _MISSING else _shown(value)
        raise _malformed(reply, path, f"{key!r} must be {expected}; got {got}")
    return value


def _is_sign(value: Any) -> bool:
    # json gives int, float or bool for a number or true/false: only the int 1 or -1 is
    # an answer (1.0 or true would pass ``value in (1, -1)``).
    return type(value) is int and (value == 1 or value == -1)


def _is_count(value: Any) -> bool:
    return type(value) is int and value >= 0


def _list_of(check: Any, length: int) -> Any:
    return lambda value: isinstance(value, list) and len(value) == length and all(
        check(item) for item in value)


def _answers(reply: dict[str, Any], count: int, classes: list[Any] | None) -> np.ndarray:
    """The ``answers`` of an ``/answer`` reply to ``count`` points: ``int8`` ``±1``, or
    labels among ``classes``."""
    got = _field(reply, "/answer", "answers", lambda value: isinstance(value, list)
                 and len(value) == count, f"a list of {count} answers, one per point sent")
    valid, expected = _label_check(classes)
    if not all(valid(value) for value in got):
        i = next(i for i, value in enumerate(got) if not valid(value))
        raise _malformed(reply, "/answer", f"'answers[{i}]' must be {expected}; got "
                                           f"{_shown(got[i])}")
    return np.array(got, dtype=np.int8) if classes is None else _labels(got, classes)


def _labels(values: list[Any], classes: list[Any]) -> np.ndarray:
    """Class labels as one array: of their type, or of objects when the classes mix
    types (numpy would turn the number 3 among strings into the string '3')."""
    if len({type(c) for c in classes}) > 1:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    return np.array(values, dtype=np.array(classes).dtype)


def _label_check(classes: list[Any] | None) -> tuple[Any, str]:
    """What an answer must be: ``±1``, or one of ``classes`` (of the same JSON type: 1
    is not ``true``, nor ``1.0``)."""
    if classes is None:
        return _is_sign, "the int -1 or 1"
    return (lambda value: any(type(value) is type(c) and value == c for c in classes),
            f"one of the classes {classes}")


def _are_classes(value: Any) -> bool:
    # Bools only among bools (a regressor's [false, true]): a label true beside the
    # number 1 would be one class to numpy.
    if not isinstance(value, list) or len(value) < 2:
        return False
    kinds = {type(item) for item in value}
    return (kinds <= {str, int, float} or kinds == {bool}) and len(
        {(type(item), item) for item in value}) == len(value)


def _are_features(value: Any) -> bool:
    return isinstance(value, list) and len(value) >= 1 and all(
        isinstance(item, dict) and isinstance(item.get("name"), str)
        and item.get("kind") in ("ordered", "categorical", "binary") for item in value)


def _feature_row(owner: str, name: str, i: int, row: Any, width: int) -> list[Any]:
    """One row as JSON values: NumPy scalars as Python ones, a float NaN as ``None``."""
    where = f"{name}[{i}]" if name == "rows" else name
    if isinstance(row, (str, bytes)) or not isinstance(row, (Sequence, np.ndarray)):
        raise TypeError(f"The '{name}' parameter of {owner}: '{where}' must be a sequence "
                        f"of {width} feature values. Got {type(row).__name__} instead.")
    if len(row) != width:
        raise ValueError(f"The '{name}' parameter of {owner}: '{where}' must hold {width} "
                         f"values, one per feature of the served surrogate "
                         f"(Client.features). Got {len(row)} instead.")
    out = []
    for j, value in enumerate(row):
        value = value.item() if isinstance(value, np.generic) else value
        if isinstance(value, float) and not math.isfinite(value):
            if value == value:  # an infinity: JSON has no number for it
                raise ValueError(f"The '{name}' parameter of {owner}: '{where}[{j}]' is "
                                 f"{value}, which JSON cannot carry.")
            value = None  # NaN: a missing value, as null
        if value is not None and type(value) not in (str, int, float, bool):
            raise TypeError(f"The '{name}' parameter of {owner}: '{where}[{j}]' must be a "
                            f"number, a string, a bool or None. Got {type(value).__name__}.")
        out.append(value)
    return out


def _explanation(reply: dict[str, Any], seed: int, n: int,
                 classes: list[Any] | None = None) -> ServedExplanation:
    """The :class:`ServedExplanation` of an ``/explain`` reply for ``seed``, every field
    checked: a path of distinct variables in ``[0, n)``, one condition and one margin
    flag per step."""
    _field(reply, "/explain", "seed", lambda value: type(value) is int and value == seed,
           f"the seed asked, {seed}")
    label = _field(reply, "/explain", "label", *_label_check(classes))
    raw = _field(reply, "/explain", "path", lambda value: isinstance(value, list),
                 "a list of [variable, value] pairs")
    try:
        path = check_path(raw, n, f"{reply['url']}/explain sent a malformed reply: 'path'")
    except (TypeError, ValueError) as error:
        raise ServerError(str(error), status=200, url=reply["url"]) from None
    steps = len(path)
    conditions = _field(reply, "/explain", "conditions",
                        _list_of(lambda item: isinstance(item, str), steps),
                        f"a list of {steps} strings, one per step of the path")
    low_margin = _field(reply, "/explain", "low_margin",
                        _list_of(lambda item: isinstance(item, bool), steps),
                        f"a list of {steps} booleans, one per step of the path")
    queries = _field(reply, "/explain", "queries", _is_count, "an int >= 0")
    return ServedExplanation(seed, label, path, tuple(conditions), tuple(low_margin),
                             queries)


def _signs(rows: np.ndarray) -> list[str]:
    """Each row of ``±1`` as a string of ``+`` and ``-``.

    ``44 - 1`` is ``+``, ``44 + 1`` is ``-``.
    """
    n = rows.shape[1]
    text = (44 - rows.astype(np.int16)).astype(np.uint8).tobytes().decode("ascii")
    return [text[i:i + n] for i in range(0, len(text), n)]


def _send(connection: http.client.HTTPConnection, method: str, path: str,
          body: bytes | None, timeout: float) -> tuple[int, bytes]:
    """The status and body of one exchange, within ``timeout`` seconds in all.

    The socket's own timeout bounds each read, not their sum: a server dripping
    its reply a byte at a time would hold the call for as long as it likes. A
    timer shuts the socket down at the deadline instead, which ends any read.
    """
    headers = {"Content-Type": "application/json"} if body is not None else {}
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        if connection.sock is not None:
            with contextlib.suppress(OSError):  # already closed
                connection.sock.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        status, data = response.status, response.read()
        if expired.is_set():  # cut short: headers or body may end early without an error
            raise TimeoutError
        return status, data
    except (OSError, http.client.HTTPException) as error:
        # The socket's own timeout (one silent read) or the deadline: the same failure.
        if expired.is_set() or isinstance(error, TimeoutError):
            raise TimeoutError(f"no whole reply within {timeout:g} s") from None
        raise
    finally:
        timer.cancel()


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"The {name!r} parameter of Client must be an int >= 1. "
                         f"Got {value!r} instead.")
    return int(value)


def _seed(seed: Any, owner: str) -> int:
    return check_seed(owner, seed)
