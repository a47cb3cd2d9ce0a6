"""tests/rows_reference.py, written from docs/randomness.md §10 alone, reproduces every known
answer of tests/data/rows_answers.json: the rows' digest, and for each of its four cases (a
yes/no and a multi-class tree, each under two sets of parameters) every node's decision, the
tree's shape, every stored row's path and answer, and the model queries spent.

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


def test_the_rows_digest_follows_the_text():
    assert rows_reference.rows_digest(STORED["rows"], set(STORED["categorical"])) == \
        STORED["rows_digest"]


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
    level, each fitted row once, every drawn row, 4 rows asked again by every later call)
    gives the stored query counts."""
    stored, reference = case
    assert list(tree_mismatches(reference, stored)) == []


def test_the_cases_cover_what_the_text_distinguishes():
    """Each case exercises the rules a vector can only pin if they are used."""
    yes_no = [c for c in CASES if c["kind"] == "yes/no"]
    classes = [c for c in CASES if c["kind"] == "classes"]
    assert len(yes_no) == 2 and len(classes) == 2
    for case in CASES:
        kinds = {entry["kind"] for entry in case["decisions"]}
        assert kinds == {"RowsSplit", "LeafDecision" if case in yes_no else "ClassLeafDecision"}
        assert len({tuple(map(tuple, a["path"])) for a in case["answers"]}) > 3
        # Explaining a few rows builds only their paths.
        assert case["queries_for_answers"] < case["queries_whole_tree"]
        leaves = [e for e in case["decisions"] if e["kind"] != "RowsSplit"]
        # some leaf is impure (not all its points of its label) and some is pure
        pure = [abs(e["decision"]["total"]) == e["decision"]["samples"] for e in leaves]
        assert any(pure) and not all(pure)
        # some node draws rows and (with shared rows) some node takes more than rows_per_node
        splits = [e["decision"] for e in case["decisions"] if e["kind"] == "RowsSplit"]
        assert any(d["points"] > d["rows"] for d in splits)
    for case in yes_no:
        assert {a["answer"] for a in case["answers"]} == {0, 1}
    for case in classes:
        labels = {e["decision"]["label"] for e in case["decisions"]
                  if e["kind"] == "ClassLeafDecision"}
        assert labels == {0, 1, 2}  # every class answers some leaf
        # classes_ is not sorted, so a tie to the lowest index follows classes_, not names
        assert case["classes"] != sorted(case["classes"])
    shared = [c for c in CASES if c["parameters"]["shared_rows"] > c["parameters"]["rows_per_node"]]
    assert shared and all(c["decisions"][0]["decision"]["rows"] ==
                          c["parameters"]["shared_rows"] for c in shared)


def test_the_row_models_are_the_models():
    """The reference asks model_row / class_row, the library asks model / ThreeClasses: the
    same labels on every stored row."""
    script = rows_script()
    frame = script.frame_of(STORED["rows"])
    assert script.model(frame).tolist() == \
        [1 if script.model_row(row) == 1 else 0 for row in STORED["rows"]]
    classes = [case["classes"] for case in CASES if case["kind"] == "classes"][0]
    assert script.ThreeClasses.classes_.tolist() == classes
    names = script.ThreeClasses().predict(frame).tolist()
    assert [classes.index(name) for name in names] == \
        [script.class_row(row) for row in STORED["rows"]]
