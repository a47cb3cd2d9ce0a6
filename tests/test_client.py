"""``lca.client.Client``: checks, errors carrying the server's message, failover."""

from __future__ import annotations

import http.client
import http.server
import json
import re
import socket
import threading

import numpy as np
import pytest

import lca
from lca import client as client_module
from lca import derive
from lca.client import Client, RequestRejected, ServerError, ServerUnavailable
from lca.models import UnseenValueWarning
from lca.reconstruct import Reconstructor

from serve_support import (
    N,
    close_clients,  # noqa: F401 (an autouse fixture)
    running,
    small,
    surrogates,
)

POINTS = derive.sample_points(12, "client-test", N, 400)
PARAMS = lca.Params.efficient(N, depth=6)
pytestmark = pytest.mark.filterwarnings("ignore::lca.LowMarginWarning")


@pytest.fixture(scope="module")
def server():
    with running("--oracle", "serve_support:small", "--depth", "6",
                 "--max-points", "100") as s:
        yield s


@pytest.fixture
def dead_url():
    """A loopback URL nothing listens on (connections are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def answered(client) -> int:
    """``/answer`` requests the server has answered (its own count, exact)."""
    return client.healthz()["requests"]


def recording(client) -> list[int]:
    """Record the URL index of every exchange ``client`` makes from now on."""
    tried = []
    exchange = client._exchange

    def record(index, *args):
        tried.append(index)
        return exchange(index, *args)

    client._exchange = record
    return tried


class TestConstruction:
    @pytest.mark.parametrize("url", ["127.0.0.1:8000", "ftp://h:1", "http://", "http://h:1/x",
                                     [], ["http://h:1", 5]])
    def test_bad_urls(self, url):
        with pytest.raises(ValueError, match=r"The 'url' parameter of Client must"):
            Client(url)

    def test_url_type(self):
        with pytest.raises(TypeError, match=r"The 'url' parameter of Client must be an "
                                            r"http\(s\)://HOST:PORT URL or a list of them. "
                                            r"Got 5 instead."):
            Client(5)

    @pytest.mark.parametrize("option, value, message", [
        ("timeout", 0, r"The 'timeout' parameter of Client must be a number of seconds > 0. "
                       r"Got 0 instead."),
        ("timeout", True, r"'timeout'"),
        ("attempts", 0, r"The 'attempts' parameter of Client must be an int >= 1. Got 0"),
        ("chunk", 1.5, r"The 'chunk' parameter of Client must be an int >= 1. Got 1.5"),
        ("encoding", "json", r"The 'encoding' parameter of Client must be one of \('signs', "
                             r"'points'\). Got 'json' instead."),
    ])
    def test_bad_options(self, option, value, message):
        with pytest.raises(ValueError, match=message):
            Client("http://127.0.0.1:1", **{option: value})

    def test_defaults(self):
        client = Client(["http://127.0.0.1:1", "http://127.0.0.1:2"])
        assert (client.timeout, client.attempts, client.chunk, client.encoding) == \
            (30.0, 4, 1024, "signs")


class TestAnswers:
    def test_answers_in_chunks_equal_the_reconstructors(self, server):
        client = Client(server.url, chunk=7)
        before = answered(client)
        got = client.answer(POINTS[:50], 9)
        assert answered(client) - before == 8  # ceil(50 / 7)
        assert got.dtype == np.int8
        assert np.array_equal(got, Reconstructor(small(), PARAMS).answer_many(POINTS[:50], 9))
        assert client.answer(np.zeros((0, N), dtype=np.int8), 9).shape == (0,)

    @pytest.mark.parametrize("encoding", ["signs", "points"])
    def test_both_encodings_give_the_same_answers(self, server, encoding):
        got = Client(server.url, encoding=encoding).answer(POINTS[:100], 4)
        assert np.array_equal(got, Reconstructor(small(), PARAMS).answer_many(POINTS[:100], 4))

    def test_signs_spell_the_points(self):
        rows = np.array([[1, -1, -1], [-1, 1, 1]], dtype=np.int8)
        assert client_module._signs(rows) == ["+--", "-++"]

    def test_explain(self, server):
        served = Client(server.url).explain(POINTS[3], 4)
        local = Reconstructor(small(), PARAMS).explain(POINTS[3], 4)
        assert (served.label, served.path, served.conditions) == \
            (local.label, local.path, local.conditions)

    def test_one_client_shared_by_threads(self, server):
        client = Client(server.url, chunk=10)
        got = [None] * 4

        def ask(i):
            got[i] = client.answer(POINTS[100 * i:100 * i + 100], 3)

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        expected = Reconstructor(small(), PARAMS).answer_many(POINTS, 3)
        assert np.array_equal(np.concatenate(got), expected)
        client.close()
        assert client._all == []


class TestChecksAndRefusals:
    @pytest.mark.parametrize("points, error, message", [
        (np.ones((2, N), dtype=float), TypeError, r"points must be an integer array"),
        (np.ones((2, N - 1), dtype=int), TypeError, r"points must have shape \(m, 64\)"),
        (np.ones(N, dtype=int), TypeError, r"points must have shape \(m, 64\)"),
        (np.zeros((1, N), dtype=int), ValueError, r"points must contain only -1 and \+1"),
    ])
    def test_points_are_checked_before_sending(self, server, points, error, message):
        client = Client(server.url)
        assert client.n == N  # /describe, once
        tried = recording(client)
        with pytest.raises(error, match=message):
            client.answer(points, 1)
        assert tried == []

    @pytest.mark.parametrize("seed, error", [(True, TypeError), (1.0, TypeError),
                                             ("1", TypeError), (-1, ValueError),
                                             (2 ** 64, ValueError)])
    @pytest.mark.parametrize("method", ["answer", "explain"])
    def test_seed_is_checked_before_sending(self, seed, error, method):
        client = Client("http://127.0.0.1:1")
        point = np.ones(N, dtype=int)
        with pytest.raises(error, match=rf"The 'seed' parameter of Client.{method} must be "
                                        r"an int in the range \[0, 2\*\*64\)"):
            if method == "answer":
                client.answer(point[None, :], seed)
            else:
                client.explain(point, seed)

    def test_explain_needs_one_point(self, server):
        with pytest.raises(TypeError, match=r"The 'point' parameter of Client.explain must "
                                            r"be a 1-D array of 64 values"):
            Client(server.url).explain(np.ones((1, N), dtype=int), 1)

    def test_a_refusal_carries_the_servers_message_and_is_not_retried(self, server):
        client = Client([server.url, server.url], attempts=5)
        assert client.n == N
        tried = recording(client)
        # The client refuses a bad seed itself: a request sent past it reaches the server.
        with pytest.raises(RequestRejected, match=r"/answer refused the request \(422\): "
                                                  r"'seed' must be an int in \[0, 2\*\*64\); "
                                                  r"got -1$") as refused:
            client._request("POST", "/answer", {"seed": -1, "signs": ["+" * N]})
        assert (refused.value.status, refused.value.field, refused.value.url) == \
            (422, "seed", server.url)
        assert isinstance(refused.value, ValueError)
        assert tried == [0]


@pytest.fixture(scope="module")
def surrogate_server(tmp_path_factory):
    """A replica of a saved data-mode yes/no surrogate of a table with string columns."""
    surrogate, X, path = surrogates(str(tmp_path_factory.mktemp("client")))["yes/no"]
    with running("--model", path) as s:
        yield surrogate, X, s


class TestRows:
    def test_answer_rows_gets_the_labels_of_predict(self, surrogate_server):
        surrogate, X, s = surrogate_server
        seed, expected = surrogate.seed_, surrogate.predict(X).tolist()
        client = Client(s.url, chunk=64)
        assert client.classes == ["default", "repaid"]
        assert [feature["name"] for feature in client.features] == list(X.columns)
        before = answered(client)
        got = client.answer_rows(X, seed)
        assert got.tolist() == expected and got.dtype.kind == "U"
        assert answered(client) - before == 7 and client.last_queries == 0  # 400 rows by 64
        # A DataFrame's columns are taken by name; lists of values in the fitted order.
        assert client.answer_rows(X[X.columns[::-1]], seed).tolist() == expected
        rows = X.astype(object).to_numpy()
        assert client.answer_rows(rows[:5].tolist(), seed).tolist() == expected[:5]
        assert client.answer_rows(rows[:5], seed).tolist() == expected[:5]
        assert client.answer_rows([], seed).tolist() == []
        # NaN goes as null, a missing value: predict answers both as a category never fitted.
        missing = X.head(3).assign(region=np.nan)
        with pytest.warns(UnseenValueWarning):
            local = surrogate.predict(missing)
        assert client.answer_rows(missing, seed).tolist() == local.tolist()

    def test_explain_row_is_the_path_of_explain(self, surrogate_server):
        surrogate, X, s = surrogate_server
        rules = surrogate.explain(X.iloc[[7]])
        served = Client(s.url).explain_row(X.iloc[7].tolist(), surrogate.seed_)
        assert (served.label, served.path, served.conditions, served.queries) == \
            (rules.prediction, rules.path, rules.conditions, 0)

    @pytest.mark.parametrize("rows, error, message", [
        ([[51.9, "small", "north", 42], [51.9, "small", "north"]], ValueError,
         r"^The 'rows' parameter of Client.answer_rows: 'rows\[1\]' must hold 4 values, one "
         r"per feature of the served surrogate \(Client.features\). Got 3 instead.$"),
        ([[float("inf"), "small", "north", 42]], ValueError,
         r"'rows\[0\]\[0\]' is inf, which JSON cannot carry.$"),
        ([[51.9, {"a": 1}, "north", 42]], TypeError,
         r"'rows\[0\]\[1\]' must be a number, a string, a bool or None. Got dict.$"),
        ([5], TypeError, r"'rows\[0\]' must be a sequence of 4 feature values. Got int instead"),
        ("rows", TypeError, r"must be a sequence of rows, a 2-D array or a DataFrame. Got str"),
    ])
    def test_rows_are_checked_before_sending(self, surrogate_server, rows, error, message):
        client = Client(surrogate_server[2].url)
        before = answered(client)
        with pytest.raises(error, match=message):
            client.answer_rows(rows, 3)
        assert answered(client) == before

    def test_a_refused_row_carries_the_servers_message(self, surrogate_server):
        client = Client(surrogate_server[2].url)
        with pytest.raises(RequestRejected) as refused:
            client.answer_rows([[51.9, "small", "north", 42], ["x", "small", "north", 4]], 3)
        assert (refused.value.status, refused.value.field) == (422, "rows")
        assert str(refused.value).endswith("'rows[1][0]' (feature 'income', ordered) must be a "
                                           "number, finite as a double, or null (missing); "
                                           "got 'x'")

    def test_rows_need_a_served_surrogate(self, server):
        client = Client(server.url)
        assert client.features is None and client.classes is None
        for ask in (lambda: client.answer_rows([[1.0]], 7),
                    lambda: client.explain_row([1.0], 7)):
            with pytest.raises(ValueError, match=r"needs a replica of a saved surrogate \(lca "
                                                 r"serve --model\), whose /describe lists its "
                                                 r"features; .* serve\(s\) an oracle"):
                ask()


class TestFailover:
    def test_every_replica_down(self, dead_url):
        client = Client([dead_url, dead_url.replace("127.0.0.1", "127.0.0.2")], attempts=3,
                        timeout=2)
        with pytest.raises(ServerUnavailable, match=r"no lca serve replica answered GET "
                                                    r"/describe in 3 attempts: ") as down:
            client.describe()
        assert str(down.value).count("ConnectionRefusedError") == 3

    def test_a_silent_replica_times_out_and_the_next_answers(self, server):
        with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts, never replies
            silent_url = f"http://127.0.0.1:{silent.getsockname()[1]}"
            with pytest.raises(ServerUnavailable, match=r"TimeoutError: no whole reply within "
                                                        r"0\.2 s$"):
                Client(silent_url, attempts=1, timeout=0.2).describe()
            client = Client([silent_url, server.url], timeout=0.5)
            got = client.answer(POINTS[:5], 2)
        assert np.array_equal(got, Reconstructor(small(), PARAMS).answer_many(POINTS[:5], 2))

    def test_a_kept_alive_connection_closed_meanwhile_is_reopened(self, server):
        client = Client(server.url, attempts=1)
        client.answer(POINTS[:3], 5)
        # The server closing an idle connection (its keep-alive timeout) looks like this:
        client._connections()[0].sock.shutdown(socket.SHUT_RDWR)
        got = client.answer(POINTS[:3], 5)  # one attempt: not counted as a failure
        assert np.array_equal(got, Reconstructor(small(), PARAMS).answer_many(POINTS[:3], 5))

    def test_the_next_url_is_tried_and_then_preferred(self, server, dead_url):
        client = Client([dead_url, server.url])
        tried = recording(client)
        client.answer(POINTS[:3], 1)
        client.answer(POINTS[:3], 1)
        assert tried == [0, 1, 1, 1]  # /describe (refused, then ok), two /answer


class TestRetryRules:
    """The rules of Client._request, on a stub transport: which replies move on."""

    def run(self, monkeypatch, replies, attempts=5):
        client = Client(["http://127.0.0.1:1", "http://127.0.0.1:2"], attempts=attempts)
        tried, pauses = [], []

        def exchange(index, method, path, body):
            tried.append(index)
            reply = replies[len(tried) - 1]
            if isinstance(reply, Exception):
                raise reply
            return reply

        monkeypatch.setattr(client, "_exchange", exchange)
        monkeypatch.setattr(client_module.time, "sleep", pauses.append)
        try:
            return client._request("GET", "/healthz", None), tried, pauses
        except Exception as error:
            return error, tried, pauses

    def test_503_moves_on(self, monkeypatch):
        reply, tried, _ = self.run(monkeypatch, [
            (503, b'{"error": {"field": null, "message": "timed out"}}'),
            (200, b'{"status": "ok"}')])
        assert (reply["status"], tried) == ("ok", [0, 1])

    def test_500_is_not_retried(self, monkeypatch):
        error, tried, _ = self.run(monkeypatch, [
            (500, b'{"error": {"field": null, "message": "answering failed: E: x"}}')])
        assert isinstance(error, ServerError) and tried == [0]
        assert str(error) == "http://127.0.0.1:1/healthz failed (500): answering failed: E: x"

    def test_4xx_is_not_retried(self, monkeypatch):
        error, tried, _ = self.run(monkeypatch, [
            (413, b'{"error": {"field": "points", "message": "too many"}}')])
        assert isinstance(error, RequestRejected) and tried == [0]
        assert (error.status, error.field) == (413, "points")

    def test_a_reply_that_is_not_json(self, monkeypatch):
        error, _, _ = self.run(monkeypatch, [(400, b"Invalid HTTP request received.")])
        assert isinstance(error, RequestRejected)
        assert str(error).endswith("(400): Invalid HTTP request received.")

    def test_rounds_pause_doubling(self, monkeypatch):
        error, tried, pauses = self.run(monkeypatch, [ConnectionResetError("reset")] * 5)
        assert isinstance(error, ServerUnavailable)
        assert tried == [0, 1, 0, 1, 0] and pauses == [0.05, 0.1]
        assert str(error).count("ConnectionResetError: reset") == 5

    def test_http_protocol_errors_move_on(self, monkeypatch):
        reply, tried, _ = self.run(monkeypatch, [http.client.BadStatusLine("x"),
                                                 (200, b'{"status": "ok"}')])
        assert reply["status"] == "ok" and tried == [0, 1]


class TestRepliesAreChecked:
    """A reply is never trusted: each bad kind is a ServerError naming the replica and field.

    The replies come from a stub transport (a server that answers what it likes)."""

    URL = "http://127.0.0.1:1"
    N = 4

    def client(self, monkeypatch, path, reply, *, status=200, describe=None):
        client = Client(self.URL, attempts=3)
        replies = {"/describe": {"oracle": {"n": self.N}} if describe is None else describe,
                   path: reply}
        tried = []

        def exchange(index, method, asked, body):
            tried.append(asked)
            return (200 if asked == "/describe" else status), json.dumps(replies[asked]).encode()

        monkeypatch.setattr(client, "_exchange", exchange)
        client.tried = tried
        return client

    def answer(self, monkeypatch, reply, rows=3):
        client = self.client(monkeypatch, "/answer", reply)
        with pytest.raises(ServerError) as raised:
            client.answer(np.ones((rows, self.N), dtype=np.int8), 7)
        assert (raised.value.status, raised.value.url) == (200, self.URL)
        assert client.tried == ["/describe", "/answer"]  # not retried
        return str(raised.value)

    @pytest.mark.parametrize("answers, message", [
        ([5, 1, -1], r"'answers\[0\]' must be the int -1 or 1; got 5$"),
        ([1, 0, -1], r"'answers\[1\]' must be the int -1 or 1; got 0$"),
        ([1, -1, 0.5], r"'answers\[2\]' must be the int -1 or 1; got 0.5$"),
        ([1, -1, 1.0], r"'answers\[2\]' must be the int -1 or 1; got 1.0$"),
        ([1, -1, -1.0], r"'answers\[2\]' must be the int -1 or 1; got -1.0$"),
        ([True, 1, 1], r"'answers\[0\]' must be the int -1 or 1; got True$"),
        (["1", 1, 1], r"'answers\[0\]' must be the int -1 or 1; got '1'$"),
        ([[1], [1], [1]], r"'answers\[0\]' must be the int -1 or 1; got \[1\]$"),
        ([1, None, 1], r"'answers\[1\]' must be the int -1 or 1; got None$"),
        ([300, 1, 1], r"'answers\[0\]' must be the int -1 or 1; got 300$"),
        ([-129, 1, 1], r"'answers\[0\]' must be the int -1 or 1; got -129$"),
        ([2 ** 70, 1, 1], r"'answers\[0\]' must be the int -1 or 1; got 1180591620717411303424$"),
        ([1, -1], r"'answers' must be a list of 3 answers, one per point sent; got \[1, -1\]$"),
        ([1, -1, 1, 1], r"'answers' must be a list of 3 answers, one per point sent; "
                        r"got \[1, -1, 1, 1\]$"),
        ([], r"'answers' must be a list of 3 answers, one per point sent; got \[\]$"),
        ({"0": 1}, r"'answers' must be a list of 3 answers, one per point sent; got \{'0': 1\}$"),
        ("+-+", r"'answers' must be a list of 3 .* got '\+-\+'$"),
    ])
    def test_bad_answers(self, monkeypatch, answers, message):
        text = self.answer(monkeypatch, {"answers": answers, "queries": 0})
        assert re.fullmatch(rf"http://127\.0\.0\.1:1/answer sent a malformed reply: {message}",
                            text), text

    @pytest.mark.parametrize("reply, message", [
        ({"answers": [1, 1, 1]}, r"'queries' must be an int >= 0; got no 'queries'$"),
        ({"answers": [1, 1, 1], "queries": -1}, r"'queries' must be an int >= 0; got -1$"),
        ({"answers": [1, 1, 1], "queries": 1.0}, r"'queries' must be an int >= 0; got 1.0$"),
        ({"answers": [1, 1, 1], "queries": True}, r"'queries' must be an int >= 0; got True$"),
        ({"answers": [1, 1, 1], "queries": "3"}, r"'queries' must be an int >= 0; got '3'$"),
        ({"answers": [1, 1, 1], "queries": None}, r"'queries' must be an int >= 0; got None$"),
        ({"queries": 0}, r"'answers' must be a list of 3 answers, one per point sent; "
                         r"got no 'answers'$"),
    ])
    def test_bad_queries_or_no_answers(self, monkeypatch, reply, message):
        text = self.answer(monkeypatch, reply)
        assert re.fullmatch(rf"http://127\.0\.0\.1:1/answer sent a malformed reply: {message}",
                            text), text

    CLASSES = ["setosa", "versicolor", 3]
    CLASS_DESCRIPTION = {"oracle": {"n": 4}, "classes": CLASSES}

    def test_a_multiclass_server_answers_its_class_labels(self, monkeypatch):
        client = self.client(monkeypatch, "/answer", {"answers": ["versicolor", 3, "setosa"],
                                                      "queries": 0},
                             describe=self.CLASS_DESCRIPTION)
        assert client.classes == self.CLASSES
        answers = client.answer(np.ones((3, self.N), dtype=np.int8), 7)
        # The classes mix a number with strings: kept as they are, not turned into '3'.
        assert answers.tolist() == ["versicolor", 3, "setosa"] and answers.dtype == object
        assert client.answer(np.ones((0, self.N), dtype=np.int8), 7).dtype == object

    @pytest.mark.parametrize("answers, message", [
        (["versicolor", 1, "setosa"], r"'answers\[1\]' must be one of the classes "
                                      r"\['setosa', 'versicolor', 3\]; got 1$"),
        (["versicolor", 3.0, "setosa"], r"'answers\[1\]' must be one of the classes .*; got 3\.0$"),
        ([1, 3, 3], r"'answers\[0\]' must be one of the classes .*; got 1$"),
        (["Setosa", 3, 3], r"'answers\[0\]' must be one of the classes .*; got 'Setosa'$"),
    ])
    def test_a_multiclass_answer_must_be_one_of_its_classes(self, monkeypatch, answers, message):
        client = self.client(monkeypatch, "/answer", {"answers": answers, "queries": 0},
                             describe=self.CLASS_DESCRIPTION)
        with pytest.raises(ServerError) as raised:
            client.answer(np.ones((3, self.N), dtype=np.int8), 7)
        assert re.fullmatch(rf"http://127\.0\.0\.1:1/answer sent a malformed reply: {message}",
                            str(raised.value)), str(raised.value)

    @pytest.mark.parametrize("classes", [["a"], ["a", "a", "b"], ["a", None, "b"],
                                         "abc", [1, True, 2], [True, 1], [True, True]])
    def test_a_description_with_bad_classes_is_refused(self, monkeypatch, classes):
        client = self.client(monkeypatch, "/answer", {"answers": [], "queries": 0},
                             describe={"oracle": {"n": 4}, "classes": classes})
        with pytest.raises(ServerError, match=r"/describe sent a malformed reply: 'classes' "
                                              r"must be a list of at least 2 distinct"):
            _ = client.classes

    @pytest.mark.parametrize("classes, answers, dtype", [
        (["benign", "malignant"], ["malignant", "benign", "malignant"], np.str_),
        (["not 8", 8], [8, "not 8", 8], np.object_),  # a one-vs-rest surrogate's labels
        ([False, True], [True, True, False], np.bool_),  # a regressor's, with threshold=
        ([0, 1], [1, 0, 0], np.int64)])
    def test_a_yes_no_surrogate_answers_its_two_labels(self, monkeypatch, classes, answers,
                                                        dtype):
        client = self.client(monkeypatch, "/answer", {"answers": answers, "queries": 0},
                             describe={"oracle": {"n": 4}, "classes": classes})
        got = client.answer(np.ones((3, self.N), dtype=np.int8), 7)
        assert got.tolist() == answers and got.dtype.type is dtype
        bad = [answers[0], answers[1], 1 if classes[0] is False else True]
        client = self.client(monkeypatch, "/answer", {"answers": bad, "queries": 0},
                             describe={"oracle": {"n": 4}, "classes": classes})
        with pytest.raises(ServerError, match=r"'answers\[2\]' must be one of the classes"):
            client.answer(np.ones((3, self.N), dtype=np.int8), 7)

    @pytest.mark.parametrize("features", [[], "abc", [5], [{"name": 1, "kind": "ordered"}],
                                          [{"name": "a", "kind": "nominal"}], [{"kind": "binary"}]])
    def test_a_description_with_bad_features_is_refused(self, monkeypatch, features):
        client = self.client(monkeypatch, "/answer", {"answers": [], "queries": 0},
                             describe={"oracle": {"n": 4}, "classes": ["a", "b"],
                                       "features": features})
        with pytest.raises(ServerError, match=r"/describe sent a malformed reply: 'features' "
                                              r"must be a list of objects, each with a string "
                                              r"'name' and a 'kind' 'ordered', 'categorical' "
                                              r"or 'binary'; got"):
            client.answer_rows([[1]], 7)

    def test_a_long_bad_list_is_shown_short(self, monkeypatch):
        text = self.answer(monkeypatch, {"answers": [1] * 999 + [7], "queries": 0}, rows=1000)
        assert text.endswith("'answers[999]' must be the int -1 or 1; got 7")
        text = self.answer(monkeypatch, {"answers": [1] * 1000, "queries": 0}, rows=3)
        assert text.endswith("got [1, 1, 1, 1, ...]")

    def test_the_edges_of_a_good_reply_are_accepted(self, monkeypatch):
        client = self.client(monkeypatch, "/answer", {"answers": [1, -1, 1], "queries": 0,
                                                      "extra": "ignored"})
        got = client.answer(np.ones((3, self.N), dtype=np.int8), 7)
        assert got.dtype == np.int8 and got.tolist() == [1, -1, 1]
        assert client.last_queries == 0

    @pytest.mark.parametrize("status", [201, 204, 302])
    def test_a_status_other_than_200_is_not_an_answer(self, monkeypatch, status):
        client = self.client(monkeypatch, "/answer", {"answers": [1, 1, 1], "queries": 0},
                             status=status)
        with pytest.raises(ServerError, match=rf"/answer failed \({status}\)"):
            client.answer(np.ones((3, self.N), dtype=np.int8), 7)

    @pytest.mark.parametrize("describe, got", [
        ({}, r"no 'oracle'"),
        ({"oracle": {}}, r"\{\}"),
        ({"oracle": {"n": 0}}, r"\{'n': 0\}"),
        ({"oracle": {"n": 2 ** 31}}, r"\{'n': 2147483648\}"),
        ({"oracle": {"n": 4.0}}, r"\{'n': 4.0\}"),
        ({"oracle": {"n": True}}, r"\{'n': True\}"),
        ({"oracle": {"n": "4"}}, r"\{'n': '4'\}"),
        ({"oracle": 4}, r"4"),
    ])
    def test_a_bad_n_in_describe(self, monkeypatch, describe, got):
        client = self.client(monkeypatch, "/answer", {}, describe=describe)
        with pytest.raises(ServerError, match=rf"^http://127\.0\.0\.1:1/describe sent a "
                                              rf"malformed reply: 'oracle' must be an object "
                                              rf"whose 'n' is an int in \[1, 2\*\*31 - 1\]; "
                                              rf"got {got}$"):
            _ = client.n

    def test_the_largest_n_is_accepted(self, monkeypatch):
        client = self.client(monkeypatch, "/answer", {},
                             describe={"oracle": {"n": 2 ** 31 - 1}})
        assert client.n == 2 ** 31 - 1
        client = self.client(monkeypatch, "/answer", {}, describe={"oracle": {"n": 1}})
        assert client.n == 1

    GOOD_EXPLAIN = {"seed": 7, "label": -1, "path": [[2, 1], [0, -1]],
                    "conditions": ["x2 = +1", "x0 = -1"], "low_margin": [False, True],
                    "queries": 5}

    def test_a_good_explanation_is_read(self, monkeypatch):
        client = self.client(monkeypatch, "/explain", self.GOOD_EXPLAIN)
        got = client.explain(np.ones(self.N, dtype=np.int8), 7)
        assert got == client_module.ServedExplanation(
            7, -1, ((2, 1), (0, -1)), ("x2 = +1", "x0 = -1"), (False, True), 5)
        assert client.last_queries == 5
        leaf = dict(self.GOOD_EXPLAIN, path=[], conditions=[], low_margin=[], queries=0)
        assert self.client(monkeypatch, "/explain", leaf).explain(
            np.ones(self.N, dtype=np.int8), 7).path == ()

    @pytest.mark.parametrize("change, message", [
        ({"seed": 8}, r"'seed' must be the seed asked, 7; got 8"),
        ({"seed": 7.0}, r"'seed' must be the seed asked, 7; got 7.0"),
        ({"label": 0}, r"'label' must be the int -1 or 1; got 0"),
        ({"label": True}, r"'label' must be the int -1 or 1; got True"),
        ({"label": -1.0}, r"'label' must be the int -1 or 1; got -1.0"),
        ({"path": None}, r"'path' must be a list of \[variable, value\] pairs; got None"),
        ({"path": [[2, 1], [4, -1]]}, r"'path': path variable must be in \[0, 4\); got 4"),
        ({"path": [[2, 1], [-1, -1]]}, r"'path': path variable must be in \[0, 4\); got -1"),
        ({"path": [[2, 1], [2, -1]]}, r"'path': path fixes variable 2 twice"),
        ({"path": [[2, 1], [0, 0]]}, r"'path': path value must be -1 or \+1"),
        ({"path": [[2, 1], [0.0, -1]]}, r"'path': each path step must be a pair of ints"),
        ({"path": [[2, 1], [0, -1, 1]]}, r"'path': each path step must be a pair of ints"),
        ({"conditions": ["x2 = +1"]}, r"'conditions' must be a list of 2 strings, one per "
                                      r"step of the path; got \['x2 = \+1'\]"),
        ({"conditions": ["x2 = +1", 3]}, r"'conditions' must be a list of 2 strings"),
        ({"low_margin": [False, True, False]}, r"'low_margin' must be a list of 2 booleans, "
                                               r"one per step of the path"),
        ({"low_margin": [0, 1]}, r"'low_margin' must be a list of 2 booleans"),
        ({"queries": -1}, r"'queries' must be an int >= 0; got -1"),
        ({"queries": None}, r"'queries' must be an int >= 0; got None"),
    ])
    def test_bad_explanations(self, monkeypatch, change, message):
        client = self.client(monkeypatch, "/explain", dict(self.GOOD_EXPLAIN, **change))
        with pytest.raises(ServerError, match=r"^http://127\.0\.0\.1:1/explain sent a "
                                              r"malformed reply: " + message) as raised:
            client.explain(np.ones(self.N, dtype=np.int8), 7)
        assert (raised.value.status, raised.value.url) == (200, self.URL)

    @pytest.mark.parametrize("key", sorted(GOOD_EXPLAIN))
    def test_an_explanation_missing_a_field(self, monkeypatch, key):
        reply = {k: v for k, v in self.GOOD_EXPLAIN.items() if k != key}
        client = self.client(monkeypatch, "/explain", reply)
        with pytest.raises(ServerError, match=rf"'{key}' must be .*; got no '{key}'$"):
            client.explain(np.ones(self.N, dtype=np.int8), 7)


@pytest.fixture
def fake_server():
    """An HTTP server on 127.0.0.1 that answers every request with ``fake_server.reply``."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send(b'{"oracle": {"n": 4}}')

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send(server.reply)

        def send(self, body):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield server
    server.shutdown()
    server.server_close()
    thread.join(10)


def test_a_reply_nested_too_deeply_is_a_server_error(fake_server):
    fake_server.reply = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(ServerError, match=re.escape(fake_server.url) + r"/answer failed "
                                                                      r"\(200\): \[\[\["):
        Client(fake_server.url).answer(np.ones((2, 4), dtype=np.int8), 3)


def test_a_reply_dripped_a_byte_at_a_time_ends_at_the_timeout():
    """The timeout bounds the whole exchange, not each read of the socket."""
    import socket
    import time

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    stop = threading.Event()

    def drip():
        while not stop.is_set():
            try:
                listener.settimeout(0.2)
                connection, _ = listener.accept()
            except OSError:
                continue
            with connection:
                connection.recv(65536)
                reply = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b" " * 100_000
                for byte in reply:
                    if stop.is_set():
                        break
                    try:
                        connection.send(bytes([byte]))
                    except OSError:
                        break
                    time.sleep(0.05)

    thread = threading.Thread(target=drip, daemon=True)
    thread.start()
    client = Client(f"http://127.0.0.1:{listener.getsockname()[1]}", timeout=1, attempts=1)
    started = time.monotonic()
    try:
        with pytest.raises(ServerUnavailable, match=r"TimeoutError: no whole reply within 1 s"):
            client.describe()
        assert time.monotonic() - started < 5  # a second and the time to say so
    finally:
        stop.set()
        thread.join(10)
        listener.close()


@pytest.mark.parametrize("reply, message", [
    (b'{"answers": [5, 1], "queries": 0}', r"'answers\[0\]' must be the int -1 or 1; got 5"),
    (b'{"answers": [1, 300], "queries": 0}', r"'answers\[1\]' must be the int -1 or 1; got 300"),
    (b'{"answers": [[1, -1]], "queries": 0}', r"'answers' must be a list of 2 answers"),
    (b'{"answers": [1, 1]}', r"'queries' must be an int >= 0; got no 'queries'"),
])
def test_a_real_server_that_sends_a_bad_reply(fake_server, reply, message):
    fake_server.reply = reply
    with pytest.raises(ServerError, match=re.escape(fake_server.url)
                       + r"/answer sent a malformed reply: " + message):
        Client(fake_server.url).answer(np.ones((2, 4), dtype=np.int8), 3)
