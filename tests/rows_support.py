"""Rows and a model for the data-mode surrogate tests (a module, so spawned processes import it),
the known answers' generating script, and the checks of a reference implementation of
docs/randomness.md §10 (tests/rows_reference.py, or a changed copy of it) against the known
answers of tests/data/rows_answers.json."""

import functools
import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def rows_script() -> ModuleType:
    """scripts/make_rows_answers.py as a module: the known answers' model, rows and compute."""
    spec = importlib.util.spec_from_file_location(
        "make_rows_answers", ROOT / "scripts" / "make_rows_answers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def table(rows: int = 600, seed: int = 0) -> pd.DataFrame:
    """Two real columns, a small integer column and a string column."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "x": rng.normal(0, 1, rows).round(3),
        "y": rng.uniform(-2, 2, rows).round(3),
        "k": rng.integers(0, 6, rows),
        "colour": rng.choice(["blue", "green", "red"], rows, p=[0.5, 0.3, 0.2]),
    })


def rule(frame: pd.DataFrame) -> np.ndarray:
    """0/1 labels: a fixed rule that uses every column."""
    x, y, k = (frame[c].to_numpy(float) for c in ("x", "y", "k"))
    red = (frame["colour"] == "red").to_numpy()
    return (((x + 0.5 * y > 0.3) & ~red) | (red & (k >= 3))).astype(int)


def fitted_json(rows: int, seed: int) -> str:
    """The saved data-mode surrogate of :func:`table` (run in a spawned process too)."""
    from lca.models import Surrogate

    surrogate = Surrogate(rule, positive=1, distribution="data", depth=6, seed=seed)
    return surrogate.fit(table(rows)).to_json()


@functools.cache
def rows_answers() -> dict:
    """tests/data/rows_answers.json: the data-mode known answers (data sets and cases)."""
    return json.loads((ROOT / "tests" / "data" / "rows_answers.json").read_text())


def case_reference(reference: ModuleType, case: dict) -> Any:
    """``reference.Reference`` (tests/rows_reference.py, or a changed copy of it) of one stored
    case: its data set, its row model (class indices: a yes/no case's ``+1`` is class 1) and
    its parameters."""
    dataset = rows_answers()["datasets"][case["dataset"]]
    model = getattr(rows_script(), case["model"])
    classes = 2 if case["kind"] == "yes/no" else len(case["classes"])
    return reference.Reference(dataset["rows"], set(dataset["categorical"]), model, classes,
                               yes_no=case["kind"] == "yes/no", **case["parameters"])


def stored_answer(case: dict, leaf: dict) -> Any:
    """A reference leaf's answer as the case stores it: 1 / 0 for a yes/no case's +1 / -1,
    the class's name for a multi-class case."""
    label = leaf["decision"]["label"]
    if case["kind"] == "yes/no":
        return 1 if label == 1 else 0
    return case["classes"][label]


def decision_mismatches(reference: Any, case: dict) -> Iterator[str]:
    """Every stored node whose decision ``reference`` (a ``Reference``) gives otherwise."""
    for entry in case["decisions"]:
        mine = reference.decide(entry["path"])
        stored = {key: entry[key] for key in ("kind", "decision", "rows")}
        if mine != stored:
            yield f"{case['name']}: node {entry['path']}: {mine} != stored {stored}"


def answer_mismatches(reference: Any, case: dict) -> Iterator[str]:
    """Every stored row whose path or answer ``reference`` gives otherwise."""
    for entry in case["answers"]:
        path, leaf = reference.explain(entry["row"])
        mine = {"path": [list(step) for step in path], "answer": stored_answer(case, leaf)}
        if mine != {"path": entry["path"], "answer": entry["answer"]}:
            yield f"{case['name']}: row {entry['row']}: {mine} != stored {entry}"


def tree_mismatches(reference: Any, case: dict) -> Iterator[str]:
    """The tree's shape (its nodes, in walk order) and the queries the case stores."""
    paths = [[list(step) for step in path] for path, _ in reference.walk()]
    if paths != [entry["path"] for entry in case["decisions"]]:
        yield f"{case['name']}: the tree's nodes differ from the stored ones"
        return  # the query counts follow the tree: no use comparing them
    whole = reference.queries(reference.tree_calls())
    if whole != case["queries_whole_tree"]:
        yield f"{case['name']}: {whole} queries for the whole tree, stored " \
              f"{case['queries_whole_tree']}"
    explained = reference.queries(reference.explain_calls([a["row"] for a in case["answers"]]))
    if explained != case["queries_for_answers"]:
        yield f"{case['name']}: {explained} queries for the answers, stored " \
              f"{case['queries_for_answers']}"


def first_mismatch(reference: ModuleType) -> str | None:
    """The first way a reference module disagrees with the stored known answers (the rows'
    digest, every case's decisions, answers, tree and queries), None if it reproduces them."""
    stored = rows_answers()
    for name, dataset in stored["datasets"].items():
        if reference.rows_digest(dataset["rows"], set(dataset["categorical"])) != \
                dataset["rows_digest"]:
            return f"rows digest of {name}"
    for case in stored["cases"]:
        built = case_reference(reference, case)
        for check in (decision_mismatches, answer_mismatches, tree_mismatches):
            found = next(check(built, case), None)
            if found is not None:
                return found
    return None
