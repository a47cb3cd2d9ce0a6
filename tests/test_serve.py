"""``lca serve``: real servers on 127.0.0.1, their answers, refusals and shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import re
import signal
import socket
import sys
import threading
import time
import types
import warnings

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lca
from lca import derive
from lca.cli import _build_parser, main
from lca.client import Client
from lca.models import Not, Surrogate, UnseenValueWarning
from lca.reconstruct import Reconstructor
from lca.serve import ServeSettings, demo_oracle, validate
from lca.serve.batching import AnsweringError, AnswerQueue, AnswerTimeout
from lca.serve.cli import _settings
from lca.serve.config import oracle_from_import_path
from lca.serve.validate import RequestError, read_body

from serve_support import (
    N,
    Slow,
    close_clients,  # noqa: F401 (an autouse fixture)
    failing,
    running,
    small,
    surrogates,
)

POINTS = derive.sample_points(11, "serve-test", N, 10_000)
EFFICIENT = lca.Params.efficient(N, depth=8)
PAPER = lca.Params.practical(n=N, depth=6, noise_rate=0.1, score_samples=1000,
                             leaf_samples=500)
pytestmark = pytest.mark.filterwarnings("ignore::lca.LowMarginWarning")


def post(url: str, path: str, body: bytes, content_type: str | None = "application/json",
         *, chunked: bool = False) -> tuple[int, dict, str]:
    """Status, decoded JSON and raw text of one request (no client-side checks)."""
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    headers = {} if content_type is None else {"Content-Type": content_type}
    if chunked:
        connection.request("POST", path, body=iter([body[i:i + 65536] for i in
                                                    range(0, len(body), 65536)]),
                           headers=headers, encode_chunked=True)
    else:
        connection.request("POST", path, body=body, headers=headers)
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    return response.status, json.loads(text), text


def get(url: str, path: str, method: str = "GET") -> tuple[int, dict]:
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    connection.request(method, path)
    response = connection.getresponse()
    status, payload = response.status, json.loads(response.read())
    connection.close()
    return status, payload


# -- replicas agree ----------------------------------------------------------------


@pytest.mark.parametrize("mode, params", [("efficient", EFFICIENT), ("paper", PAPER)])
def test_two_replicas_answer_like_each_other_and_lca_answer(mode, params):
    depth = str(params.depth)
    with running("--oracle", "serve_support:small", "--mode", mode, "--depth", depth) as a, \
            running("--oracle", "serve_support:small", "--mode", mode, "--depth", depth,
                    "--max-points", "300") as b:
        first = Client(a.url, chunk=2000, encoding="points")
        second = Client(b.url, chunk=300)  # other batches, in reverse order, as signs
        assert lca.Params(**first.describe()["params"]) == params
        answers = first.answer(POINTS, 7)
        assert np.array_equal(second.answer(POINTS[::-1], 7)[::-1], answers)
        last_seed = 2 ** 64 - 1
        assert np.array_equal(first.answer(POINTS[:500], last_seed),
                              second.answer(POINTS[:500], last_seed))
    assert answers.dtype == np.int8 and answers.shape == (10_000,)
    f = small()
    assert np.array_equal(answers, Reconstructor(f, params).answer_many(POINTS, 7))
    # The pure function costs a whole path per point: 200 of the 10^4.
    assert [lca.answer(z, 7, oracle=f, params=params) for z in POINTS[:200]] \
        == answers[:200].tolist()


def test_killing_a_replica_mid_load_loses_no_answer(monkeypatch):
    points = POINTS[:5000]
    expected = Reconstructor(small(), EFFICIENT).answer_many(points, 7)
    with running("--oracle", "serve_support:small", "--depth", "8") as a, \
            running("--oracle", "serve_support:small", "--depth", "8") as b:
        # Kill replica a with its 10th /answer request sent and its reply not yet read.
        replies, read_reply = [], http.client.HTTPConnection.getresponse

        def kill_a_on_its_10th_answer(connection):
            if connection.port == a.port:
                replies.append(connection)
                if len(replies) == 11:  # /describe, then 10 /answer requests
                    a.process.kill()
                    a.process.wait(10)
            return read_reply(connection)

        monkeypatch.setattr(http.client.HTTPConnection, "getresponse",
                            kill_a_on_its_10th_answer)
        got = Client([a.url, b.url], chunk=20).answer(points, 7)  # 250 requests
        served_a = [r for r in a.events("request") if r["path"] == "/answer"]
        served_b = [r for r in b.events("request") if r["path"] == "/answer"]
    assert a.process.returncode == -signal.SIGKILL
    assert np.array_equal(got, expected)
    assert len(served_a) <= 10 and len(served_b) >= 240  # a's 10th: answered or not


# -- refusals ----------------------------------------------------------------------------

MAX_POINTS, MAX_BODY = 2000, 600_000


def body(seed=7, points=(), **extra) -> bytes:
    """An /answer body; ``points=None`` leaves the field out."""
    payload = {"seed": seed, "points": [[1] * N, [-1] * N] if points == () else points}
    if points is None:
        del payload["points"]
    return json.dumps(payload | extra).encode()


def row(**changes) -> list:
    values = [1] * N
    for index, value in changes.items():
        values[int(index[1:])] = value
    return values


BAD_ANSWERS = [
    # (case, body, content type, status, field, message)
    ("text content type", body(), "text/plain", 415, "content-type",
     r"Content-Type must be application/json; got 'text/plain'"),
    ("no content type", body(), None, 415, "content-type", r"got '\(none\)'"),
    ("malformed JSON", b'{"seed": 7, "points": [[1,', "application/json", 400, "body",
     r"not valid JSON: Input data was truncated"),
    ("empty body", b"", "application/json", 400, "body", r"not valid JSON"),
    ("not UTF-8", b"\xff\xfe", "application/json", 400, "body", r"not valid JSON"),
    ("trailing bytes", body() + b"x", "application/json", 400, "body", r"trailing"),
    ("not an object", b"[1, 2]", "application/json", 422, "body",
     r"must be a JSON object with the fields \['points', 'seed', 'signs'\]"),
    ("missing seed", json.dumps({"points": []}).encode(), "application/json", 422, "seed",
     r"'seed' must be an int in \[0, 2\*\*64\): Object missing required field `seed`"),
    ("no points", json.dumps({"seed": 1}).encode(), "application/json", 422, "points",
     r"must hold exactly one of 'points' \(lists of ints -1 or 1\) and 'signs' \(strings "
     r"of \+ and -\); got neither$"),
    ("points and signs", body(signs=["+" * N]), "application/json", 422, "points",
     r"exactly one of .* got both$"),
    ("signs not strings", body(points=None, signs=[[1] * N]), "application/json", 422,
     "signs", r"'signs' must be a list of points, each a string of characters \+ or -: "
              r"Expected `str`, got `array` at signs\[0\]$"),
    ("short signs", body(points=None, signs=["+" * N, "-" * (N - 1)]), "application/json",
     422, "signs", r"'signs\[1\]' must hold 64 characters \+ or - \(the oracle's n\); "
                   r"got 63 characters$"),
    ("a sign not + or -", body(points=None, signs=["+" * 9 + "1" + "-" * (N - 10)]),
     "application/json", 422, "signs", r"'signs\[0\]\[9\]' must be \+ or -; got '1'$"),
    ("non-ASCII signs", body(points=None, signs=["\u2212" * N]), "application/json", 422,
     "signs", r"'signs\[0\]' must hold .* got non-ASCII characters$"),
    ("too many signs", body(points=None, signs=["+" * N] * (MAX_POINTS + 1)),
     "application/json", 413, "signs", r"'signs' holds 2001 points; this server answers "
                                       r"at most 2000 per request \(--max-points\)$"),
    ("unknown field", body(extra=1), "application/json", 422, "extra",
     r"unknown field `extra`"),
    ("float seed", body(seed=7.5), "application/json", 422, "seed",
     r"Expected `int`, got `float` at seed"),
    ("string seed", body(seed="7"), "application/json", 422, "seed", r"got `str`"),
    ("bool seed", body(seed=True), "application/json", 422, "seed", r"got `bool`"),
    ("null seed", body(seed=None), "application/json", 422, "seed", r"got `null`"),
    ("negative seed", body(seed=-1), "application/json", 422, "seed",
     r"'seed' must be an int in \[0, 2\*\*64\); got -1$"),
    ("seed 2**64", body(seed=2 ** 64), "application/json", 422, "seed",
     r"got 18446744073709551616$"),
    ("points not a list", body(points=5), "application/json", 422, "points",
     r"'points' must be a list of points.*Expected `array`, got `int` at points$"),
    ("a point not a list", body(points=[1, -1]), "application/json", 422, "points",
     r"Expected `array`, got `int` at points\[0\]$"),
    ("short point", body(points=[[1] * N, [1] * (N - 1)]), "application/json", 422,
     "points", r"'points\[1\]' must hold 64 values -1 or 1 \(the oracle's n\); got 63$"),
    ("long point", body(points=[[1] * (N + 1)]), "application/json", 422, "points",
     r"'points\[0\]' must hold 64 .* got 65$"),
    ("value 0", body(points=[row(), row(x5=0)]), "application/json", 422, "points",
     r"'points\[1\]\[5\]' must be -1 or 1; got 0$"),
    ("value 2", body(points=[row(x63=2)]), "application/json", 422, "points",
     r"'points\[0\]\[63\]' must be -1 or 1; got 2$"),
    ("huge int", body(points=[row(x1=10 ** 30)]), "application/json", 422, "points",
     r"'points\[0\]\[1\]' must be -1 or 1; got 1000000000000000000000000000000$"),
    ("float value", body(points=[row(x3=1.0)]), "application/json", 422, "points",
     r"Expected `int`, got `float` at points\[0\]\[3\]$"),
    ("bool value", body(points=[row(x3=True)]), "application/json", 422, "points",
     r"got `bool` at points\[0\]\[3\]$"),
    ("null value", body(points=[row(x0=None)]), "application/json", 422, "points",
     r"got `null` at points\[0\]\[0\]$"),
    ("string value", body(points=[row(x0="1")]), "application/json", 422, "points",
     r"got `str` at points\[0\]\[0\]$"),
    ("too many points", body(points=[row()] * (MAX_POINTS + 1)), "application/json", 413,
     "points", r"'points' holds 2001 points; this server answers at most 2000 per request"),
    ("body too large", body(points=[row()] * 1500 + [[1] * 200_000]), "application/json",
     413, "body", r"the request body must be at most 600000 bytes .*Content-Length is"),
    ("not UTF-8 in a sign", b'{"seed": 7, "signs": ["\xff' + b"+" * (N - 1) + b'"]}',
     "application/json", 400, "body", r"^the request body is not valid JSON: a string is not "
                                      r"UTF-8 \('utf-8' codec can't decode byte 0xff in "
                                      r"position 0: invalid start byte\)$"),
    ("not UTF-8 in a key", b'{"seed": 7, "sig\xc3ns": ["' + b"+" * N + b'"]}',
     "application/json", 400, "body", r"^the request body is not valid JSON: a string is not "
                                      r"UTF-8 .*byte 0xc3 in position 3"),
    ("seed twice", b'{"seed": 1, "seed": 7, "signs": ["' + b"+" * N + b'"]}',
     "application/json", 400, "seed", r"^the request body gives 'seed' 2 times; each field "
                                      r"must be given once$"),
    ("seed twice, spelled apart", b'{"se\\u0065d": 1, "signs": [], "seed": 7}',
     "application/json", 400, "seed", r"^the request body gives 'seed' 2 times"),
    ("seed thrice", b'{"seed": 7, "points": [], "seed": 7, "seed": 7}', "application/json",
     400, "seed", r"^the request body gives 'seed' 3 times"),
    ("points twice", body()[:-1] + b', "points": []}', "application/json", 400, "points",
     r"^the request body gives 'points' 2 times; each field must be given once$"),
    ("signs twice", b'{"seed": 7, "signs": ["' + b"+" * N + b'"], "signs": []}',
     "application/json", 400, "signs", r"^the request body gives 'signs' 2 times"),
    ("a quote in a sign", body(points=None, signs=['+"' + "-" * (N - 2)]), "application/json",
     422, "signs", r"^'signs\[0\]\[1\]' must be \+ or -; got '\"'$"),
]


@pytest.fixture(scope="module")
def server():
    with running("--oracle", "serve_support:small", "--depth", "8",
                 "--max-points", str(MAX_POINTS), "--max-body-bytes", str(MAX_BODY)) as s:
        status, health = get(s.url, "/healthz")
        assert status == 200
        s.pid = health["pid"]
        yield s


def assert_alive(server) -> None:
    status, health = get(server.url, "/healthz")
    assert (status, health["status"], health["pid"]) == (200, "ok", server.pid)
    assert server.process.poll() is None


@pytest.mark.parametrize("case, data, content_type, status, field, message", BAD_ANSWERS,
                         ids=[case[0] for case in BAD_ANSWERS])
def test_a_bad_answer_request_gets_a_4xx_naming_its_field(server, case, data, content_type,
                                                          status, field, message):
    got, reply, text = post(server.url, "/answer", data, content_type)
    assert (got, reply["error"]["field"]) == (status, field)
    assert re.search(message, reply["error"]["message"]), reply
    assert "Traceback" not in text and "File \"" not in text
    assert_alive(server)


def test_a_streamed_body_over_the_limit_is_refused_while_it_arrives(server):
    data = body(points=[row()] * 1500 + [[1] * 200_000])
    assert len(data) > MAX_BODY
    status, reply, _ = post(server.url, "/answer", data, chunked=True)
    assert (status, reply["error"]["field"]) == (413, "body")
    assert re.search(r"at most 600000 bytes .*; got more", reply["error"]["message"])
    assert_alive(server)


def padded(size: int) -> bytes:
    """A valid /answer body of exactly ``size`` bytes (JSON allows trailing spaces)."""
    data = body()
    return data + b" " * (size - len(data))


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "streamed"])
def test_a_body_of_exactly_the_limit_is_read_and_one_byte_more_is_not(server, chunked):
    status, reply, _ = post(server.url, "/answer", padded(MAX_BODY), chunked=chunked)
    assert status == 200 and len(reply["answers"]) == 2
    status, reply, _ = post(server.url, "/answer", padded(MAX_BODY + 1), chunked=chunked)
    assert (status, reply["error"]["field"]) == (413, "body")
    assert reply["error"]["message"].endswith("; got more" if chunked else
                                              f"; Content-Length is {MAX_BODY + 1}")


def read(chunks, max_bytes, content_length=None):
    """:func:`read_body` of ``chunks``, as a server would call it."""
    headers = {"content-type": "application/json"}
    if content_length is not None:
        headers["content-length"] = str(content_length)

    async def stream():
        for chunk in chunks:
            yield chunk

    return asyncio.run(read_body(headers, stream(), max_bytes=max_bytes,
                                 deadline=time.monotonic() + 30))


@pytest.mark.parametrize("chunks", [[b"x" * 10], [b"x" * 9, b"x"], [b"x"] * 10,
                                    [b"", b"x" * 10, b""]])
def test_read_body_takes_exactly_max_bytes_in_any_chunks(chunks):
    assert read(chunks, 10) == b"x" * 10
    assert read(chunks, 10, content_length=10) == b"x" * 10


@pytest.mark.parametrize("chunks", [[b"x" * 11], [b"x" * 10, b"x"], [b"x"] * 11,
                                    [b"x" * 10, b"", b"x"]])
def test_read_body_refuses_max_bytes_plus_one_in_any_chunks(chunks):
    with pytest.raises(RequestError, match=r"^the request body must be at most 10 bytes "
                                           r"\(--max-body-bytes\); got more$") as refused:
        read(chunks, 10)
    assert (refused.value.status, refused.value.field) == (413, "body")


def test_read_body_refuses_a_declared_length_of_max_bytes_plus_one_before_reading():
    def unread():
        raise AssertionError("read a body whose Content-Length is over the limit")
        yield b""

    with pytest.raises(RequestError, match=r"; Content-Length is 11$"):
        read(unread(), 10, content_length=11)
    # A declared length that is not a number is not trusted: the bytes are counted.
    assert read([b"x" * 10], 10, content_length="-5") == b"x" * 10


@pytest.mark.parametrize("seed", [0, 2 ** 64 - 1])
def test_the_first_and_last_seeds_are_answered(server, seed):
    expected = Reconstructor(small(), EFFICIENT).answer_many(POINTS[:2], seed).tolist()
    status, reply, _ = post(server.url, "/answer", body(seed=seed, points=POINTS[:2].tolist()))
    assert (status, reply["answers"]) == (200, expected)
    status, reply, _ = post(server.url, "/explain",
                            json.dumps({"seed": seed, "point": POINTS[0].tolist()}).encode())
    assert (status, reply["seed"], reply["label"]) == (200, seed, expected[0])


@pytest.mark.parametrize("data", [
    body(), body(points=None, signs=["+" * N, "-" * N]), body(points=None, signs=[]),
    b' { "signs" : [ "' + b"+" * N + b'" ] , "se\\u0065d" : 7 } ',
])
def test_a_valid_body_is_parsed_once(monkeypatch, data):
    """json parses a body again only when it has more quotes than keys and signs need."""
    def fail(*args, **kwargs):
        raise AssertionError("parsed twice")

    monkeypatch.setattr(validate, "json", types.SimpleNamespace(loads=fail))
    seed, points = validate.parse_answer(data, N, MAX_POINTS)
    assert seed == 7 and points.shape[1] == N and set(points.ravel()) <= {1, -1}
    with pytest.raises(AssertionError, match="parsed twice"):  # the same with a seed more
        validate.parse_answer(data.replace(b"{", b'{"seed": 1,', 1), N, MAX_POINTS)


def test_exactly_max_points_are_answered(server):
    status, reply, _ = post(server.url, "/answer", body(points=None,
                                                        signs=["+" * N] * MAX_POINTS))
    assert status == 200 and reply["answers"] == [reply["answers"][0]] * MAX_POINTS


BAD_EXPLAINS = [
    ("missing point", json.dumps({"seed": 1}).encode(), 422, "point",
     r"'point' must be a list of ints -1 or 1: Object missing required field `point`"),
    ("short point", json.dumps({"seed": 1, "point": [1] * 10}).encode(), 422, "point",
     r"'point' must hold 64 values -1 or 1 \(the oracle's n\); got 10$"),
    ("value 0", json.dumps({"seed": 1, "point": row(x7=0)}).encode(), 422, "point",
     r"'point\[7\]' must be -1 or 1; got 0$"),
    ("points instead", body(), 422, "points", r"unknown field `points`"),
    ("seed too large", json.dumps({"seed": 2 ** 64, "point": row()}).encode(), 422, "seed",
     r"'seed' must be an int in \[0, 2\*\*64\); got 18446744073709551616$"),
    ("seed twice", b'{"seed": 1, "point": [' + b"1, " * (N - 1) + b'1], "seed": 2}', 400,
     "seed", r"^the request body gives 'seed' 2 times; each field must be given once$"),
    ("point twice", b'{"seed": 1, "point": [], "point": [' + b"1, " * (N - 1) + b'1]}', 400,
     "point", r"^the request body gives 'point' 2 times"),
    ("not UTF-8", b'{"seed": 1, "p\xffoint": []}', 400, "body", r"a string is not UTF-8"),
]


@pytest.mark.parametrize("case, data, status, field, message", BAD_EXPLAINS,
                         ids=[case[0] for case in BAD_EXPLAINS])
def test_a_bad_explain_request_gets_a_4xx_naming_its_field(server, case, data, status,
                                                           field, message):
    got, reply, text = post(server.url, "/explain", data)
    assert (got, reply["error"]["field"]) == (status, field)
    assert re.search(message, reply["error"]["message"]), reply
    assert "Traceback" not in text
    assert_alive(server)


@pytest.mark.parametrize("method, path, status, detail", [
    ("GET", "/answer", 405, "Method Not Allowed"), ("POST", "/healthz", 405,
                                                    "Method Not Allowed"),
    ("GET", "/nowhere", 404, "Not Found")])
def test_unknown_paths_and_methods_get_json_errors(server, method, path, status, detail):
    got, reply = get(server.url, path, method)
    assert got == status
    assert reply["error"]["message"] == (
        f"{method} {path}: {detail}; the endpoints are POST /answer, POST /explain, "
        f"GET /healthz, GET /describe")
    assert_alive(server)


def test_refusals_are_logged_with_their_field(server):
    post(server.url, "/answer", body(seed=12345678901234567890123))
    deadline = time.monotonic() + 10  # the record follows the response, on stderr
    while not (logged := [r for r in server.events("request")
                          if "12345678901234567890123" in r.get("error", "")]):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    record = logged[0]
    assert (record["status"], record["path"], record["method"], record["field"]) == \
        (422, "/answer", "POST", "seed")
    assert record["error"].startswith("'seed' must be")


# -- what a replica says about itself, explanations --------------------------------------


def test_describe_and_healthz(server):
    status, described = get(server.url, "/describe")
    assert status == 200
    assert described["oracle"] == {"name": small().name, "n": N, "source": "oracle",
                                   "spec": "serve_support:small"}
    assert described["mode"] == "efficient"
    assert lca.Params(**described["params"]) == EFFICIENT
    assert described["params_text"] == EFFICIENT.describe()
    assert described["limits"] == {"max_points": MAX_POINTS, "max_body_bytes": MAX_BODY,
                                   "request_timeout": 30.0, "batch_wait": 0.0}
    assert described["cache_size"] == 1 << 16
    status, health = get(server.url, "/healthz")
    assert health["pid"] == server.process.pid and health["queued"] == 0


def test_explain_is_the_reconstructors_path(server):
    client = Client(server.url)
    rec = Reconstructor(small(), EFFICIENT)
    for z, seed in ((POINTS[0], 7), (POINTS[1], 8), (-POINTS[1], 2 ** 64 - 1)):
        served = client.explain(z, seed)
        local = rec.explain(z, seed)
        assert (served.seed, served.label, served.path, served.conditions) == \
            (seed, local.label, local.path, local.conditions)
        assert served.low_margin == tuple(node.low_margin for node in local.nodes)
        assert client.answer(z[None, :], seed)[0] == local.label


def test_concurrent_requests_get_the_answers_of_lca(server):
    client = Client(server.url, chunk=37)
    seeds = [7, 7, 8, 7, 9, 8, 7, 7]
    slices = [POINTS[100 * i:100 * i + 100] for i in range(len(seeds))]
    got = [None] * len(seeds)
    start = threading.Barrier(len(seeds))

    def ask(i):
        start.wait()
        got[i] = client.answer(slices[i], seeds[i])

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(seeds))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    rec = Reconstructor(small(), EFFICIENT)
    for i, seed in enumerate(seeds):
        assert np.array_equal(got[i], rec.answer_many(slices[i], seed))


# -- oracle errors, timeouts, shutdown ------------------------------------------------


def test_an_oracle_error_is_a_500_with_its_message_and_the_worker_lives():
    with running("--oracle", "serve_support:failing") as s:
        for path, data in (("/answer", body()), ("/explain",
                                                  json.dumps({"seed": 3, "point": row()})
                                                  .encode())):
            status, reply, text = post(s.url, path, data)
            assert status == 500
            assert reply["error"]["field"] is None
            assert re.fullmatch(r"answering failed: OracleError: sensor offline \(lca: raised "
                                r"while querying 'failing' for search samples at node path "
                                r"\(\) \(seed [37]\)\)", reply["error"]["message"])
            assert "Traceback" not in text
        status, health = get(s.url, "/healthz")
        assert status == 200 and s.process.poll() is None
        # The traceback goes to the server's log, not to the client.
        errors = s.events("answer-error") + s.events("explain-error")
        assert len(errors) == 2 and all("sensor offline" in e["traceback"] for e in errors)


def test_past_the_request_timeout_a_slow_body_gets_408_and_a_slow_answer_503():
    with running("--oracle", "serve_support:slow", "--depth", "3",
                 "--request-timeout", "0.5") as s:
        with socket.create_connection(("127.0.0.1", s.port), timeout=30) as raw:
            raw.sendall(b"POST /answer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                        b"\r\nContent-Length: 1000\r\n\r\n{\"seed\": 1,")  # and no more
            response = http.client.HTTPResponse(raw)
            response.begin()
            reply = json.loads(response.read())
        assert (response.status, reply["error"]) == (408, {"field": "body", "message": (
            "the request body did not arrive within the request timeout (--request-timeout)")})
        # A cold path at depth 3 costs 24 slow oracle calls, more than 1 s.
        status, reply, _ = post(s.url, "/answer", body(points=[row()]))
        assert (status, reply["error"]) == (503, {"field": None, "message": (
            "not answered within the request timeout (--request-timeout)")})
        assert get(s.url, "/healthz")[0] == 200


def test_sigterm_finishes_the_request_in_flight_then_exits_0():
    with running("--oracle", "serve_support:slow", "--depth", "3") as s:
        client = Client(s.url)
        assert client.n == N  # ask /describe before the slow request
        result = {}
        asking = threading.Thread(
            target=lambda: result.update(got=client.answer(POINTS[:50], 5)))
        asking.start()
        time.sleep(0.5)  # the request is in flight: a cold path takes over 1 s here
        assert s.stop(signal.SIGTERM) == 0
        asking.join(30)
        order = [r.get("event") or r.get("message") for r in s.log]
        # The request was in flight: answered after uvicorn began shutting down.
        assert order.index("Shutting down") < order.index("request", order.index(
            "Shutting down")) < order.index("stopped")
        assert [r for r in s.events("request") if r["path"] == "/answer"][0]["status"] == 200
    params = lca.Params.efficient(N, depth=3)
    assert np.array_equal(result["got"],
                          Reconstructor(small(), params).answer_many(POINTS[:50], 5))


def test_the_listening_record_shows_at_any_log_level():
    with running("--oracle", "serve_support:small", "--log-level", "error") as s:
        assert get(s.url, "/healthz")[0] == 200
        assert s.events("listening")[0]["level"] == "ERROR"


def test_two_workers_each_a_replica():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with running("--oracle", "serve_support:small", "--depth", "8", "--workers", "2",
                 "--port", str(port)) as s:
        s.port = port
        deadline = time.monotonic() + 30
        while len(s.events("ready")) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len({r["pid"] for r in s.events("ready")}) == 2
        got = Client(s.url, chunk=100).answer(POINTS[:1000], 7)
        assert s.stop(signal.SIGTERM) == 0
    assert np.array_equal(got, Reconstructor(small(), EFFICIENT).answer_many(POINTS[:1000], 7))


# -- the answering queue: batching, deadlines, errors -----------------------------------


def run_queue(rec, jobs, *, max_points=20):
    """Submit ``(seed, points[, seconds])`` jobs at once (30 s unless given); their
    results or exceptions, in order."""
    async def main():
        queue = AnswerQueue(rec, max_points=max_points, batch_wait=0.0)
        queue.start()
        now = time.monotonic()
        tasks = [asyncio.create_task(queue.answer(job[1], job[0], now + (job[2:] or [30])[0]))
                 for job in jobs]
        results = await asyncio.gather(*tasks, return_exceptions=True)
        await queue.close()
        return queue, results
    return asyncio.run(main())


class CountingReconstructor(Reconstructor):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls = []

    def answer_many(self, points, seed, **kwargs):
        self.calls.append((seed, len(points)))
        return super().answer_many(points, seed, **kwargs)


def test_queued_requests_for_one_seed_share_one_call_and_keep_their_answers():
    rec = CountingReconstructor(small(), EFFICIENT)
    seeds = [7, 7, 8, 7, 7, 8, 7]
    jobs = [(seed, POINTS[10 * i:10 * i + 10]) for i, seed in enumerate(seeds)]
    queue, results = run_queue(rec, jobs, max_points=20)
    # Oldest first; same-seed requests join it up to max_points = 20 points in all.
    assert rec.calls == [(7, 20), (8, 20), (7, 20), (7, 10)]
    assert [r.batch_requests for r in results] == [2, 2, 2, 2, 2, 2, 1]
    assert (queue.batches, queue.requests) == (4, 7)
    alone, f = Reconstructor(small(), EFFICIENT), small()
    for (seed, points), result in zip(jobs, results, strict=True):
        assert np.array_equal(result.answers, alone.answer_many(points, seed))
        assert result.answers[:2].tolist() == [lca.answer(z, seed, oracle=f, params=EFFICIENT)
                                               for z in points[:2]]


def test_a_request_larger_than_the_batch_limit_runs_alone():
    rec = CountingReconstructor(small(), EFFICIENT)
    jobs = [(7, POINTS[:30]), (7, POINTS[30:35])]
    _, results = run_queue(rec, jobs, max_points=20)
    assert rec.calls == [(7, 30), (7, 5)]
    assert np.array_equal(results[0].answers,
                          Reconstructor(small(), EFFICIENT).answer_many(POINTS[:30], 7))


def test_a_batch_that_raises_is_retried_request_by_request():
    rec = CountingReconstructor(failing, EFFICIENT)
    _, results = run_queue(rec, [(7, POINTS[:3]), (7, POINTS[3:6])])
    assert rec.calls == [(7, 6), (7, 3), (7, 3)]
    for result in results:
        assert isinstance(result, AnsweringError)
        assert str(result).startswith("OracleError: sensor offline (lca: raised while")


def test_past_its_deadline_a_request_times_out_and_the_rest_of_its_batch_is_answered():
    shallow = lca.Params.efficient(N, depth=3)
    rec = CountingReconstructor(Slow(0.02), shallow)
    # Same seed, one batch: the first has 0.2 s, the second 60 s. answer_many stops at
    # the first deadline (a cold path costs 24 oracle calls, about 0.5 s here); the
    # second goes back to the queue and is answered.
    _, results = run_queue(rec, [(7, POINTS[:40], 0.2), (7, POINTS[40:80], 60.0)],
                           max_points=100)
    assert isinstance(results[0], AnswerTimeout)
    assert str(results[0]).startswith("not answered within the request timeout")
    assert np.array_equal(results[1].answers,
                          Reconstructor(small(), shallow).answer_many(POINTS[40:80], 7))
    assert rec.calls[0] == (7, 80) and rec.calls[1:] == [(7, 40)] * (len(rec.calls) - 1)


# -- the command -----------------------------------------------------------------------


@pytest.mark.parametrize("options, message", [
    (["--oracle", "no_colon"], r"argument --oracle: The 'oracle' parameter of lca serve "
                               r"must be MODULE:NAME, .* Got 'no_colon' instead"),
    (["--oracle", "no_such_module_for_lca:f"],
     r"argument --oracle: .* could not be loaded: ModuleNotFoundError"),
    (["--oracle", "serve_support:missing"], r"argument --oracle: .* could not be loaded: "
                                            r"AttributeError"),
    (["--oracle", "serve_support:not_an_oracle"],
     r"serve_support:not_an_oracle must be an lca.Oracle or a zero-argument callable "
     r"returning one; got int"),
    (["--oracle", "serve_support:returns_a_number"],
     r"serve_support:returns_a_number\(\) must return an lca.Oracle; got int"),
    (["--oracle", "serve_support:small", "--port", "0", "--workers", "2"],
     r"--port 0 \(any free port\) needs --workers 1"),
    (["--oracle", "serve_support:small", "--depth", "8", "--cache-size", "8"],
     r"argument --cache-size: The 'cache_size' parameter of lca serve must be at least 9"),
])
def test_the_command_refuses_bad_options_before_serving(capsys, options, message):
    assert main(["serve", *options]) == 2
    assert re.search(r"lca serve: error: " + message, capsys.readouterr().err)


def test_the_command_refuses_a_port_in_use(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--oracle", "serve_support:small", "--port", str(port)]) == 2
    assert re.search(rf"argument --port: The 'port' parameter of lca serve: cannot bind "
                     rf"127.0.0.1:{port}: Address already in use", capsys.readouterr().err)


def test_the_command_binds_loopback_unless_told():
    args = _build_parser().parse_args(["serve", "--oracle", "m:f"])
    settings = _settings(args)
    assert (args.host, args.port, args.workers, settings.mode, settings.depth,
            settings.lookahead) == ("127.0.0.1", 8000, 1, "efficient", 12, 1)
    assert (args.max_points, args.max_body_bytes, args.request_timeout,
            args.batch_wait_ms, args.cache_size) == (4096, 16 << 20, 30.0, 0.0, 1 << 16)


def test_settings_travel_to_workers_unchanged():
    settings = ServeSettings(source="oracle", spec="m:f", mode="paper", depth=5,
                             cache_size=100, max_points=7, max_body_bytes=1000,
                             request_timeout=2.5, batch_wait=0.001)
    assert ServeSettings.from_json(settings.to_json()) == settings
    with pytest.raises(ValueError, match=r"The 'mode' parameter of ServeSettings must be "
                                         r"one of \('efficient', 'paper'\)\. Got 'fast'"):
        ServeSettings(source="oracle", spec="m:f", mode="fast")
    with pytest.raises(ValueError, match=r"The 'batch_wait' parameter of ServeSettings "
                                         r"must be a real number in the range \[0.0, 1.0\]"):
        ServeSettings(source="oracle", spec="m:f", batch_wait=2.0)


def test_lookahead_reaches_the_served_params_and_only_in_efficient_mode_with_an_oracle():
    args = _build_parser().parse_args(["serve", "--oracle", "m:f", "--lookahead", "3"])
    settings = _settings(args)
    assert ServeSettings.from_json(settings.to_json()) == settings
    params = settings.params(N)
    assert (params.lookahead, params) == (3, lca.Params.efficient(N, depth=12))
    assert "search steps per call 3" in params.describe()
    with pytest.raises(ValueError, match=r"The 'lookahead' parameter of ServeSettings must be "
                                         r"an int in the range \[1, 8\]\. Got 9 instead"):
        ServeSettings(source="oracle", spec="m:f", lookahead=9)
    for kwargs in ({"mode": "paper"}, {"source": "model"}):
        with pytest.raises(ValueError, match=r"The 'lookahead' parameter of ServeSettings "
                                             r"batches the efficient mode's binary search"):
            ServeSettings(**{"source": "oracle", "spec": "m:f", **kwargs}, lookahead=2)


def test_the_demo_oracle_is_lca_demos():
    from lca._cli_options import noisy_tree_setup
    _, f, params = noisy_tree_setup(_build_parser().parse_args(["demo"]))
    assert demo_oracle().name == f.name and params == lca.Params.efficient(1000, depth=12)
    points = derive.sample_points(1, "demo-oracle", 1000, 200)
    assert np.array_equal(demo_oracle()(points), f(points))


@pytest.fixture(autouse=True)
def own_sys_path(monkeypatch):
    """``sys.path`` restored after each test: the command, run in this process, puts the
    current directory on it, as ``python -m`` does."""
    monkeypatch.setattr(sys, "path", list(sys.path))


def test_the_lca_script_and_its_workers_import_an_oracle_from_the_current_directory(tmp_path):
    (tmp_path / "oracle_here_for_lca.py").write_text(
        "import serve_support\n\ndef factory():\n    return serve_support.small()\n")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # The script, unlike python -m, does not search its current directory by itself.
    with running("--oracle", "oracle_here_for_lca:factory", "--depth", "8", "--workers", "2",
                 "--port", str(port), cwd=str(tmp_path), script=True) as s:
        s.port = port
        deadline = time.monotonic() + 30
        while len(s.events("ready")) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len({r["pid"] for r in s.events("ready")}) == 2  # both workers imported it
        got = Client(s.url, chunk=100).answer(POINTS[:400], 7)
        assert s.stop(signal.SIGTERM) == 0
    assert np.array_equal(got, Reconstructor(small(), EFFICIENT).answer_many(POINTS[:400], 7))


def test_the_command_imports_from_the_current_directory(tmp_path, monkeypatch, capsys):
    (tmp_path / "number_here_for_lca.py").write_text("value = 42\n")
    monkeypatch.chdir(tmp_path)
    assert main(["serve", "--oracle", "number_here_for_lca:value"]) == 2
    # Imported, then refused for what it holds: the module was found.
    assert "number_here_for_lca:value must be an lca.Oracle" in capsys.readouterr().err


def test_a_module_not_found_says_where_it_was_looked_for_and_what_to_do(tmp_path, monkeypatch,
                                                                       capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["serve", "--oracle", "no_such_module_for_lca:f"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert re.fullmatch(
        r"lca serve: error: argument --oracle: The 'oracle' parameter of lca serve names "
        r"'no_such_module_for_lca:f', which could not be loaded: ModuleNotFoundError: No "
        rf"module named 'no_such_module_for_lca'; searched sys.path: {re.escape(str(tmp_path))}"
        r", .*; run lca serve from the directory that holds no_such_module_for_lca.py \(or "
        r"the package no_such_module_for_lca/\), add that directory to PYTHONPATH, or "
        r"install it in this Python \(.*\)\n", err)
    assert main(["serve", "--oracle", "lca.no_such_module:f"]) == 2
    assert re.search(r"No module named 'lca.no_such_module'; searched the package 'lca' in "
                     r".*: add no_such_module.py there\n$", capsys.readouterr().err)
    # A module the oracle's module imports is the user's to install: no search is told.
    (tmp_path / "imports_a_missing_one_for_lca.py").write_text("import no_such_dep_for_lca\n")
    assert main(["serve", "--oracle", "imports_a_missing_one_for_lca:f"]) == 2
    assert capsys.readouterr().err.endswith(
        "could not be loaded: ModuleNotFoundError: No module named 'no_such_dep_for_lca'\n")


def test_under_pythonsafepath_the_current_directory_is_not_searched_and_the_message_says_so(
        tmp_path):
    import subprocess

    (tmp_path / "oracle_here_for_lca.py").write_text("def factory():\n    return None\n")
    done = subprocess.run([sys.executable, "-m", "lca", "serve", "--oracle",
                           "oracle_here_for_lca:factory"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONSAFEPATH": "1"})
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "(not the current directory: -P or PYTHONSAFEPATH is set); add the directory " \
           "that holds oracle_here_for_lca.py" in done.stderr


def test_an_oracle_factory_is_called_and_a_dotted_name_resolves():
    assert oracle_from_import_path("serve_support:small").name == small().name
    assert oracle_from_import_path("serve_support:failing").name == "failing"
    assert oracle_from_import_path("serve_support:SLOW.inner").name == small().name


@pytest.mark.parametrize("missing", ["uvicorn", "starlette", "msgspec"])
def test_without_the_serve_extra_the_command_says_what_to_install(capsys, monkeypatch,
                                                                 missing):
    for name in list(sys.modules):
        if name == missing or name.startswith(f"{missing}.") or name.startswith("lca.serve.") \
                and name.rsplit(".", 1)[1] in ("app", "validate", "batching", "logs"):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, missing, None)  # import fails
    assert main(["serve", "--oracle", "serve_support:small"]) == 2
    assert capsys.readouterr().err == f"lca serve: error: needs {missing}: " \
                                      f"pip install 'lca[serve]'\n"


# -- a saved Surrogate (--model FILE) --------------------------------------------------

@pytest.fixture(scope="module")
def saved_surrogate(tmp_path_factory):
    """A Surrogate of a small gradient-boosting model, saved as JSON, and its fitted self."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import GradientBoostingClassifier

    from lca.models import Surrogate

    data = load_breast_cancer()
    model = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0)
    model.fit(data.data, data.target)
    surrogate = Surrogate(model, depth=4, seed=5).fit(data.data)
    path = tmp_path_factory.mktemp("model") / "surrogate.json"
    path.write_text(surrogate.to_json())
    return surrogate, str(path)


def test_a_saved_surrogate_is_served_for_its_seed_without_its_model(saved_surrogate):
    surrogate, path = saved_surrogate
    tree = surrogate.tree()
    points = derive.sample_points(3, "serve-model", tree.n, 300)
    # The tree's own answers in the model's labels (+1: classes_[1]), as predict gives them.
    expected = surrogate.classes_[(tree.query(points) > 0).astype(int)]
    with running("--model", path) as server:
        client = Client(server.url)
        # The tree's own answers, no query: the model is not in the file.
        assert client.answer(points, 5).tolist() == expected.tolist()
        status, reply, _ = post(server.url, "/answer",
                                json.dumps({"seed": 5, "points": points[:2].tolist()}).encode())
        assert status == 200 and reply["queries"] == 0
        explained = client.explain(points[0], 5)
        assert explained.label == expected[0] and explained.queries == 0
        assert explained.path in tree.leaves
        assert explained.conditions == tuple(tree.describe_path(explained.path).split(" -> "))
        # Another seed would need the model: a 422 naming the seed; the replica lives.
        status, reply, _ = post(server.url, "/answer",
                                json.dumps({"seed": 6, "points": points[:1].tolist()}).encode())
        assert status == 422 and reply["error"]["field"] == "seed"
        assert "saved tree T_5" in reply["error"]["message"]
        status, described = get(server.url, "/describe")
        assert described["seeds"] == [5] and described["oracle"]["n"] == tree.n
        assert described["oracle"]["source"] == "model"
        assert client.answer(points[:3], 5).tolist() == expected[:3].tolist()


def test_a_saved_multiclass_surrogate_is_served_with_its_class_labels(tmp_path):
    from sklearn.datasets import load_iris
    from sklearn.tree import DecisionTreeClassifier

    from lca.models import Surrogate

    iris = load_iris()
    labels = np.array(["setosa", "versicolor", "virginica"])[iris.target]
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(iris.data, labels)
    surrogate = Surrogate(model, depth=3, seed=2).fit(iris.data)
    path = tmp_path / "multiclass.json"
    path.write_text(surrogate.to_json())
    points = surrogate.encoder_.encode(iris.data[::10])
    expected = surrogate.predict(iris.data[::10]).tolist()
    with running("--model", str(path)) as server:
        status, reply, _ = post(server.url, "/answer",
                                json.dumps({"seed": 2, "points": points.tolist()}).encode())
        assert status == 200 and reply["answers"] == expected and reply["queries"] == 0
        status, reply, _ = post(server.url, "/explain",
                                json.dumps({"seed": 2, "point": points[0].tolist()}).encode())
        assert status == 200 and reply["label"] == expected[0]
        status, described = get(server.url, "/describe")
        assert described["classes"] == ["setosa", "versicolor", "virginica"]
        # lca.Client reads the class labels the server lists and checks each answer.
        with Client(server.url) as client:
            assert client.classes == ["setosa", "versicolor", "virginica"]
            assert client.answer(points, 2).tolist() == expected
            assert client.explain(points[0], 2).label == expected[0]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A replica of each kind of saved surrogate: name -> (surrogate, its rows, server)."""
    made = surrogates(str(tmp_path_factory.mktemp("served")))
    with contextlib.ExitStack() as stack:
        yield {name: (surrogate, rows, stack.enter_context(running("--model", path)))
               for name, (surrogate, rows, path) in made.items()}


def as_served(labels) -> list:
    """``Surrogate.predict``'s labels as a replica sends them: ``Not(c)`` as its text."""
    return [str(label) if isinstance(label, Not) else label for label in labels.tolist()]


def test_a_saved_surrogate_describes_its_builder_classes_and_features(served):
    surrogate, _, server = served["yes/no"]
    status, described = get(server.url, "/describe")
    assert status == 200
    assert (described["mode"], described["builder"], described["classes"]) == \
        ("data", "rows", ["default", "repaid"])
    assert described["params"] == dict(surrogate.tree().params) == {
        "builder": "rows", "n": surrogate.encoder_.n_bits, "depth": 4, "rows_per_node": 128,
        "min_rows": 4, "shared_rows": 768}
    assert described["features"] == [
        {"name": "income", "kind": "ordered"},
        {"name": "size_class", "kind": "categorical",
         "categories": ["large", "medium", "small"]},
        {"name": "region", "kind": "categorical", "categories": ["east", "north", "south"]},
        {"name": "age", "kind": "ordered"}]
    surrogate, _, server = served["product"]
    described = get(server.url, "/describe")[1]
    assert (described["mode"], described["builder"], described["classes"]) == \
        ("product", "reconstructor", ["default", "repaid"])
    assert lca.Params(**described["params"]) == surrogate.params_
    assert [f["kind"] for f in described["features"]] == \
        ["ordered", "categorical", "categorical", "ordered"]
    assert get(served["one-vs-rest"][2].url, "/describe")[1]["classes"] == ["not 2", 2]
    ready = served["yes/no"][2].events("ready")[0]
    assert (ready["mode"], ready["depth"]) == ("data", 4)


@pytest.mark.parametrize("kind", ["yes/no", "multi-class", "one-vs-rest", "product",
                                  "product, missing"])
def test_a_saved_surrogate_answers_its_points_in_the_models_labels(served, kind):
    surrogate, rows, server = served[kind]
    points = surrogate.encoder_.encode(rows)
    expected = as_served(surrogate.predict(rows))
    reply = post(server.url, "/answer", json.dumps({"seed": surrogate.seed_,
                                                    "points": points.tolist()}).encode())[2]
    assert json.dumps(json.loads(reply)["answers"]) == json.dumps(expected)  # 8, not 8.0
    label = post(server.url, "/explain", json.dumps({"seed": surrogate.seed_,
                                                      "point": points[0].tolist()}).encode())
    assert label[1]["label"] == expected[0] == as_served(
        np.array([surrogate.explain(rows[:1]).prediction], dtype=object))[0]
    with Client(server.url) as client:
        assert client.classes == as_served(surrogate.classes_)
        assert client.answer(points, surrogate.seed_).tolist() == expected


def table_rows(X) -> list:
    """Rows of an array or a DataFrame as JSON lists of their values (a missing one null)."""
    rows = (X.astype(object).to_numpy() if hasattr(X, "columns") else X).tolist()
    return [[None if value != value else value for value in row] for row in rows]


def served_answers(server, seed, rows) -> str:
    """The body of the reply to ``/answer`` of ``rows``, as sent."""
    status, _, text = post(server.url, "/answer", json.dumps({"seed": seed, "rows": rows})
                           .encode())
    assert status == 200, text
    return text


def replied(labels) -> str:
    """The body a replica sends with ``labels`` as answers (no query spent)."""
    return msgspec.json.encode({"answers": as_served(labels), "queries": 0}).decode()


@pytest.mark.parametrize("kind", ["yes/no", "multi-class", "one-vs-rest", "product",
                                  "product, missing"])
def test_rows_of_feature_values_get_the_answers_of_predict_byte_for_byte(served, kind):
    surrogate, X, server = served[kind]
    rows = table_rows(X)
    text = served_answers(server, surrogate.seed_, rows)
    assert text == replied(surrogate.predict(X))
    assert text == replied(Surrogate.from_json(surrogate.to_json()).predict(X))
    if kind == "yes/no":
        # Categories never fitted, a missing one, a bool and a large int in ordered
        # columns, missing numbers: answered as predict answers the same values.
        odd = [[47.5, "huge", None, 30], [True, "small", 3, 71], [10 ** 20, "large", "west", 0],
               [None, "small", "north", None]]  # null in an ordered column: missing
        with pytest.warns(UnseenValueWarning):
            expected = surrogate.predict(np.array(odd, dtype=object))
        assert served_answers(server, surrogate.seed_, odd) == replied(expected)
        rows += odd
    if kind == "product, missing":  # null income: the encoder's missing bins, as predict
        odd = [[None, "small", "north", 30], [None, "large", "east", 60]]
        expected = surrogate.predict(np.array(odd, dtype=object))
        assert served_answers(server, surrogate.seed_, odd) == replied(expected)
        assert served_answers(server, surrogate.seed_, rows) == \
            replied(surrogate.predict(np.array(rows, dtype=object)))
        rows += odd
    for row in rows[:3] + rows[-3:]:
        status, reply, _ = post(server.url, "/explain",
                                json.dumps({"seed": surrogate.seed_, "row": row}).encode())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnseenValueWarning)
            rules = surrogate.explain(np.array([row], dtype=object))
        assert status == 200
        assert (reply["label"], reply["conditions"]) == \
            (as_served(np.array([rules.prediction], dtype=object))[0], list(rules.conditions))
        assert [tuple(step) for step in reply["path"]] == list(rules.path)
    assert served_answers(server, surrogate.seed_, []) == replied(np.array([]))


CELLS = st.one_of(
    st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), st.integers(10 ** 307, 10 ** 320),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["small", "large", "north", "west", "42", ""]),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=3))


@pytest.mark.parametrize("kind", ["yes/no", "product", "product, missing"])
@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.lists(CELLS, min_size=4, max_size=4), min_size=1, max_size=3))
def test_any_rows_get_the_answers_of_predict_or_a_422_where_predict_refuses_them(served, kind,
                                                                                rows):
    surrogate, _, server = served[kind]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnseenValueWarning)
            expected = surrogate.predict(np.array(rows, dtype=object))
    except (TypeError, ValueError):
        expected = None
    status, reply, text = post(server.url, "/answer",
                               json.dumps({"seed": surrogate.seed_, "rows": rows}).encode())
    if expected is None:
        assert (status, reply["error"]["field"]) == (422, "rows"), text
        assert re.match(r"'rows\[\d\]\[\d\]' \(feature '\w+', (ordered|categorical)\) must be ",
                        reply["error"]["message"]), text
    else:
        assert text == replied(expected)


def rows_body(rows, field="rows", **extra) -> bytes:
    return json.dumps({"seed": 3, field: rows, **extra}).encode()


GOOD_ROW = [51.9, "small", "north", 42]
BAD_ROWS = [
    # (case, kind of surrogate, path, body, status, field, message)
    ("a short row", "yes/no", "/answer", rows_body([GOOD_ROW, GOOD_ROW[:3]]), 422, "rows",
     r"^'rows\[1\]' must hold 4 values, one per fitted feature in order \(GET /describe lists "
     r"them\); got 3$"),
    ("a long row", "yes/no", "/answer", rows_body([GOOD_ROW + [1]]), 422, "rows",
     r"^'rows\[0\]' must hold 4 values.*; got 5$"),
    ("a string in an ordered column", "yes/no", "/answer",
     rows_body([GOOD_ROW, [51.9, "small", "north", "42"]]), 422, "rows",
     r"^'rows\[1\]\[3\]' \(feature 'age', ordered\) must be a number, finite as a double, or "
     r"null \(missing\); got '42'$"),
    ("null in an ordered column, product mode", "product", "/answer",
     rows_body([[None, "small", "north", 4]], seed=6), 422, "rows",
     r"^'rows\[0\]\[0\]' \(feature 'income', ordered\) must be a number, finite as a double; "
     r"got null$"),
    ("null in an ordered column with missing bins: answered", "product, missing", "/answer",
     rows_body([[None, "small", "north", 4], [51.9, "small", "north", None]], seed=7), 422,
     "rows", r"^'rows\[1\]\[3\]' \(feature 'age', ordered\) must be a number, finite as a "
             r"double; got null$"),
    ("an int beyond a double", "yes/no", "/answer",
     rows_body([[10 ** 400, "small", "north", 4]]), 422, "rows",
     r"^'rows\[0\]\[0\]' .* must be a number, finite as a double, or null \(missing\); got "
     r"1000000000000000000000000000000000000\.\.\.$"),
    ("an int beyond a double in a categorical column", "yes/no", "/answer",
     rows_body([[51.9, 10 ** 400, "north", 4]]), 422, "rows",
     r"^'rows\[0\]\[1\]' \(feature 'size_class', categorical\) must be a category: a string, "
     r"a number finite as a double, true, false or null; got 10000000000000000000000000000000"
     r"00000\.\.\.$"),
    ("a number beyond a double", "yes/no", "/answer",
     b'{"seed": 3, "rows": [[1e400, "small", "north", 4]]}', 422, "rows",
     r"^'rows' must be a list of rows, each a list of feature values: numbers, strings, true, "
     r"false or null: Number out of range at rows\[0\]\[0\]$"),
    ("a list in a cell", "yes/no", "/answer", rows_body([[51.9, ["small"], "north", 4]]), 422,
     "rows", r"^'rows' must be .*: Expected `bool \| int \| float \| str \| null`, got `array` "
             r"at rows\[0\]\[1\]$"),
    ("an object in a cell", "yes/no", "/answer", rows_body([[51.9, "small", {"a": 1}, 4]]), 422,
     "rows", r"got `object` at rows\[0\]\[2\]$"),
    ("a row not a list", "yes/no", "/answer", rows_body([GOOD_ROW, 5]), 422, "rows",
     r"Expected `array`, got `int` at rows\[1\]$"),
    ("rows not a list", "yes/no", "/answer", rows_body({"income": 3}), 422, "rows",
     r"Expected `array`, got `object` at rows$"),
    ("too many rows", "yes/no", "/answer", rows_body([GOOD_ROW] * 4097), 413, "rows",
     r"^'rows' holds 4097 points; this server answers at most 4096 per request "
     r"\(--max-points\)$"),
    ("rows and points", "yes/no", "/answer", rows_body([GOOD_ROW], points=[]), 422, "points",
     r"^the request body must hold exactly one of 'points' \(lists of ints -1 or 1\), 'signs' "
     r"\(strings of \+ and -\) and 'rows' \(lists of feature values\); got both$"),
    ("rows twice", "yes/no", "/answer", rows_body([GOOD_ROW])[:-1] + b', "rows": []}', 400,
     "rows", r"^the request body gives 'rows' 2 times; each field must be given once$"),
    ("a category never fitted, product mode", "product", "/answer",
     rows_body([GOOD_ROW, [51.9, "huge", "north", 42]], seed=6), 422, "rows",
     r"^'rows\[1\]\[1\]' \(feature 'size_class', categorical\) must be one of its categories "
     r"\['large', 'medium', 'small'\] \(a product-mode surrogate has no bits for another\); "
     r"got 'huge'$"),
    ("a missing category, product mode", "product", "/answer",
     rows_body([[51.9, "small", None, 42]], seed=6), 422, "rows",
     r"^'rows\[0\]\[2\]' \(feature 'region', categorical\) must be one of .*; got null$"),
    ("another seed", "yes/no", "/answer", rows_body([GOOD_ROW], seed=4), 422, "seed",
     r"'seed' must be 3: this replica serves the saved tree T_3"),
    ("a short row to explain", "yes/no", "/explain", rows_body(GOOD_ROW[1:], "row"), 422, "row",
     r"^'row' must hold 4 values, one per fitted feature in order .*; got 3$"),
    ("a string to explain", "yes/no", "/explain", rows_body(["x", "small", "north", 3], "row"),
     422, "row", r"^'row\[0\]' \(feature 'income', ordered\) must be a number"),
    ("a row and a point", "yes/no", "/explain", rows_body(GOOD_ROW, "row", point=[1]), 422,
     "point", r"^the request body must hold exactly one of 'point' \(a list of ints -1 or 1\) "
              r"and 'row' \(a list of feature values\); got both$"),
    ("rows to explain", "yes/no", "/explain", rows_body([GOOD_ROW]), 422, "rows",
     r"unknown field `rows`"),
]


@pytest.mark.parametrize("case, kind, path, data, status, field, message", BAD_ROWS,
                         ids=[case[0] for case in BAD_ROWS])
def test_bad_rows_get_a_4xx_naming_the_row_and_column(served, case, kind, path, data, status,
                                                      field, message):
    server = served[kind][2]
    got, reply, text = post(server.url, path, data)
    assert (got, reply["error"]["field"]) == (status, field)
    assert re.search(message, reply["error"]["message"]), reply
    assert "Traceback" not in text
    assert get(server.url, "/healthz")[0] == 200


@pytest.mark.parametrize("path, data, expected", [
    ("/answer", rows_body([[1] * N]), r"'points' \(lists of ints -1 or 1\) or 'signs' "
                                      r"\(strings of \+ and -\)$"),
    ("/explain", rows_body([1] * N, "row"), r"send 'point' \(a list of ints -1 or 1\)$")])
def test_an_oracles_replica_refuses_rows_saying_who_reads_them(server, path, data, expected):
    status, reply, _ = post(server.url, path, data)
    field = "rows" if path == "/answer" else "row"
    assert (status, reply["error"]["field"]) == (422, field)
    assert re.match(rf"'{field}' \(raw feature values\) is read only by a replica of a saved "
                    rf"surrogate \(lca serve --model\), which encodes it; this replica serves "
                    rf"an oracle: send ", reply["error"]["message"])
    assert re.search(expected, reply["error"]["message"])


@pytest.mark.parametrize("options, message", [
    (["--model", "/no/such/surrogate.json"], "cannot read '/no/such/surrogate.json'"),
    (["--model", __file__], "is not a saved lca.models.Surrogate"),
])
def test_a_model_file_that_is_not_a_saved_surrogate_is_refused(capsys, options, message):
    assert main(["serve", *options]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("option", ["--depth", "--lookahead"])
def test_a_saved_model_refuses_the_options_it_brings_itself(capsys, saved_surrogate, option):
    _, path = saved_surrogate
    assert main(["serve", "--model", path, option, "3"]) == 2
    assert f"argument {option}: a saved model (--model) brings its own parameters" \
        in capsys.readouterr().err
