"""tests/rows_reference.py, written from docs/randomness.md §10 alone, reproduces every known
answer of tests/data/rows_answers.json: each data set's digest, and for each case (a yes/no
and a multi-class tree of a model on a data set under a set of parameters) every node's
decision, the tree's shape, every stored row's path and answer, and the model queries spent.

A failure here, with tests/test_rows_answers.py passing, means the library and the text of §10
disagree: the text is the thing to fix or the code is, not this reference (say which).
"""

import ast
from pathlib import Path

import pytest
import rows_reference
from rows_support import (
    answer_mismatches,
    case_reference,
    decision_mismatches,
    rows_answers,
    rows_script,
    tree_mismatches,
)

ROOT = Path(__file__).resolve().parent.parent
STORED = rows_answers()
CASES = STORED["cases"]
NAMES = [case["name"] for case in CASES]


def test_the_reference_imports_nothing_of_lca_or_numpy():
    """Independence: the reference may use the standard library, xxhash's keys through
    spec_reference, and nothing of what it checks."""
    tree = ast.parse((ROOT / "tests" / "rows_reference.py").read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {(node.module or "").split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom)}
    assert imported <= {"__future__", "dataclasses", "fractions", "hashlib", "json", "math",
                        "spec_reference", "struct"}, imported


@pytest.mark.parametrize("name", list(STORED["datasets"]))
def test_the_rows_digest_follows_the_text(name):
    dataset = STORED["datasets"][name]
    assert rows_reference.rows_digest(dataset["rows"], set(dataset["categorical"])) == \
        dataset["rows_digest"]


@pytest.fixture(scope="module", params=CASES, ids=NAMES)
def case(request):
    return request.param, case_reference(rows_reference, request.param)


def test_every_stored_decision(case):
    stored, reference = case
    assert list(decision_mismatches(reference, stored)) == []


def test_every_stored_row_s_path_and_answer(case):
    stored, reference = case
    assert list(answer_mismatches(reference, stored)) == []


def test_the_tree_s_nodes_and_the_queries_spent(case):
    """The whole tree has exactly the stored nodes, and §10's "Asking the model" (a call per
    level, each fitted row once, every drawn row, each node's parent's first row again)
    gives the stored query counts."""
    stored, reference = case
    assert list(tree_mismatches(reference, stored)) == []


def test_the_cases_cover_what_the_text_distinguishes():
    """The cases on the main data set exercise the rules a vector can only pin if they are
    used (the small data sets each reach one rule, named in the generator)."""
    main = [c for c in CASES if c["dataset"] == "stored"]
    assert {c["kind"] for c in main} == {"yes/no", "classes"}
    for case in main:
        kinds = {entry["kind"] for entry in case["decisions"]}
        if len(case["decisions"]) > 1:
            leaf = "LeafDecision" if case["kind"] == "yes/no" else "ClassLeafDecision"
            assert kinds == {"RowsSplit", leaf}, case["name"]
    big = [c for c in main if len(c["decisions"]) > 20]
    assert len(big) >= 4
    for case in big:
        assert len({tuple(map(tuple, a["path"])) for a in case["answers"]}) >= 3
        # Explaining a few rows builds only their paths.
        assert case["queries_for_answers"] < case["queries_whole_tree"]
        leaves = [e for e in case["decisions"] if e["kind"] != "RowsSplit"]
        # some leaf is impure (not all its points of its label) and some is pure
        pure = [abs(e["decision"]["total"]) == e["decision"]["samples"] for e in leaves]
        assert any(pure) and not all(pure)
        splits = [e["decision"] for e in case["decisions"] if e["kind"] == "RowsSplit"]
        assert any(d["points"] > d["rows"] for d in splits)  # some node draws rows
    for case in main:
        if case["kind"] == "yes/no":
            assert {a["answer"] for a in case["answers"]} <= {0, 1}
        else:  # classes_ is not sorted: a tie to the lowest index follows classes_
            assert case["classes"] != sorted(case["classes"])
    shared = [c for c in main if c["parameters"]["shared_rows"] > c["parameters"]["rows_per_node"]]
    assert shared and all(c["decisions"][0]["decision"]["rows"] ==
                          c["parameters"]["shared_rows"] for c in shared)


def test_the_row_models_are_the_models():
    """The reference asks a case's row model, the library the model made of it: the same
    labels on every row of the case's data set."""
    script = rows_script()
    for case in CASES:
        rows = STORED["datasets"][case["dataset"]]["rows"]
        row = getattr(script, case["model"])
        classes = [0, 1] if case["kind"] == "yes/no" else case["classes"]
        model = script.RowModel(row, classes)
        assert model.predict(script.frame_of(case["dataset"])).tolist() == \
            [classes[row(list(values))] for values in rows], case["name"]
