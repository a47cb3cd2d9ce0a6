"""Oracles and a process runner for the ``lca serve`` tests.

The servers import this module by name (``--oracle serve_support:small``),
so it must stay importable on its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from lca import targets
from lca.client import Client
from lca.oracle import Oracle, OracleError

TESTS = os.path.dirname(os.path.abspath(__file__))
N = 64


def small() -> Oracle:
    """A 16-leaf random tree over 64 variables with 5% label noise."""
    return targets.with_label_noise(targets.random_tree(n=N, leaves=16, seed=3),
                                    rate=0.05, seed=4)


class Failing(Oracle):
    """Raises on every query, as a broken model or a lost connection would."""

    n = N
    name = "failing"

    def query(self, points: np.ndarray) -> np.ndarray:
        raise OracleError("sensor offline")


failing = Failing()


class Slow(Oracle):
    """``small()`` with a pause before every oracle call."""

    def __init__(self, pause: float) -> None:
        self.inner = small()
        self.n = N
        self.pause = pause
        self.name = f"slow({pause})"

    def query(self, points: np.ndarray) -> np.ndarray:
        time.sleep(self.pause)
        return self.inner.query(points)


def slow() -> Oracle:
    return Slow(0.05)


not_an_oracle = 42


def returns_a_number() -> int:
    return 7


def surrogates(folder: str) -> dict[str, tuple[Any, Any, str]]:
    """Saved surrogates of each kind a replica serves, each ``(surrogate, rows it was
    fitted on, its file in folder)``: a data-mode yes/no tree of a pipeline over a table
    with string columns (labels "default" and "repaid"), a multi-class one (iris, string
    labels), a one-vs-rest one (iris, classes [Not(2), 2]), a product-mode one and a
    product-mode one of rows whose "income" is missing in about a fifth of them (its
    encoder has missing bins for it, and for no other column)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.datasets import load_iris
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder
    from sklearn.tree import DecisionTreeClassifier

    from lca.models import Surrogate

    from models_support import loans

    X, y = loans(400)
    model = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"),
                            ["size_class", "region"])], remainder="passthrough"),
        DecisionTreeClassifier(max_depth=4, random_state=0)).fit(X, y)
    missing = X.assign(income=X.income.mask(np.random.default_rng(1).random(len(X)) < 0.2))
    takes_missing = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"),
                            ["size_class", "region"])], remainder="passthrough"),
        DecisionTreeClassifier(max_depth=4, random_state=0)).fit(missing, y)
    iris = load_iris()
    names = np.array(["setosa", "versicolor", "virginica"])[iris.target]
    flowers = DecisionTreeClassifier(max_depth=3, random_state=0).fit(iris.data, names)
    numbered = DecisionTreeClassifier(max_depth=3, random_state=0).fit(iris.data, iris.target)
    made = {"yes/no": (Surrogate(model, depth=4, seed=3), X),
            "multi-class": (Surrogate(flowers, depth=3, seed=2), iris.data),
            "one-vs-rest": (Surrogate(numbered, positive=2, depth=3, seed=4), iris.data),
            "product": (Surrogate(model, distribution="product", depth=4, seed=6), X),
            "product, missing": (Surrogate(takes_missing, distribution="product", depth=4,
                                           seed=7), missing)}
    out = {}
    for i, (name, (surrogate, rows)) in enumerate(made.items()):
        path = os.path.join(folder, f"surrogate{i}.json")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(surrogate.fit(rows).to_json())
        out[name] = (surrogate, rows, path)
    return out


@pytest.fixture(autouse=True)
def close_clients(monkeypatch):
    """Close every :class:`Client` a test made (their keep-alive sockets) when it ends."""
    made = []
    init = Client.__init__

    def tracked(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(Client, "__init__", tracked)
    yield
    for client in made:
        client.close()


@dataclass
class Server:
    """A running ``lca serve`` process and its JSON log lines (collected as they come)."""

    process: subprocess.Popen[str]
    port: int
    log: list[dict[str, Any]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def events(self, name: str) -> list[dict[str, Any]]:
        return [record for record in list(self.log) if record.get("event") == name]

    def stop(self, how: int = signal.SIGTERM, timeout: float = 20.0) -> int:
        """Send ``how`` and wait for the exit code."""
        self.process.send_signal(how)
        return self.process.wait(timeout)


def lca_script() -> str:
    """The ``lca`` console script of this Python (skips the test when it is not installed)."""
    script = os.path.join(sysconfig.get_path("scripts"), "lca")
    if not os.path.isfile(script):
        pytest.skip(f"no lca script at {script} (pip install -e . makes it)")
    return script


@contextlib.contextmanager
def running(*options: str, start_timeout: float = 30.0, cwd: str | None = None,
            script: bool = False) -> Iterator[Server]:
    """``lca serve --port 0 OPTIONS`` on 127.0.0.1; killed on exit if still running.

    Started as ``python -m lca`` in ``cwd`` (default: this one), or with
    ``script`` as the ``lca`` console script, which does not put ``cwd`` on
    ``sys.path`` by itself.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [TESTS, env.get("PYTHONPATH")]))
    command = [lca_script()] if script else [sys.executable, "-m", "lca"]
    process = subprocess.Popen([*command, "serve", "--port", "0", *options],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    log: list[dict[str, Any]] = []
    listening = threading.Event()

    def drain() -> None:
        assert process.stderr is not None
        for line in process.stderr:  # drained to the end, or the server blocks on a full pipe
            try:
                record = json.loads(line)
            except ValueError:
                record = {"raw": line.rstrip()}
            log.append(record)
            if record.get("event") == "listening":
                listening.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + start_timeout
        while not listening.wait(0.05):
            if process.poll() is not None or time.monotonic() > deadline:
                reader.join(5)
                raise RuntimeError(f"lca serve {' '.join(options)} did not start: {log}")
        port = next(record["port"] for record in log if record.get("event") == "listening")
        yield Server(process, port, log)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)
        reader.join(10)
        process.stderr.close()
SLOW = Slow(0.0)  # a dotted name, serve_support:SLOW.inner, reaches its wrapped oracle
