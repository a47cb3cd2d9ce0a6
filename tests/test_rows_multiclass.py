"""The multi-class data-mode tree (docs/randomness.md §10, multi-class trees): known answers
frozen in tests/data/rows_multiclass_answers.json, and tests/rows_reference.py (written from
the text) deciding every node as the library does.

A failure of the known answers is a compatibility break of multi-class nodes: if deliberate,
run ``python scripts/make_rows_answers.py --multiclass`` and say so in docs/surrogates.md.
"""

import json
from pathlib import Path

import pytest
from rows_reference import Reference, decide_classes
from rows_support import check_stored_nodes, reference_path, rows_script

ROOT = Path(__file__).resolve().parent.parent
STORED = json.loads((ROOT / "tests" / "data" / "rows_multiclass_answers.json").read_text())


@pytest.fixture(scope="module")
def script():
    return rows_script()


@pytest.fixture(scope="module")
def computed(script):
    return script.compute_multiclass(STORED["rows"])


@pytest.mark.parametrize("field", [
    "rows_digest", "answers", "queries_for_answers", "queries_whole_tree", "decisions", "text",
    "parameters", "columns", "classes",
])
def test_field_matches(computed, field):
    assert computed[field] == STORED[field]


def test_the_stored_case_is_not_trivial():
    kinds = {entry["kind"] for entry in STORED["decisions"]}
    assert kinds == {"NodeDecision", "ClassLeafDecision"}
    labels = {entry["decision"]["label"] for entry in STORED["decisions"]
              if entry["kind"] == "ClassLeafDecision"}
    assert labels == {0, 1, 2}  # every class answers some leaf
    # Some leaf is impure (its majority is not all of its points) and some is pure.
    leaves = [e["decision"] for e in STORED["decisions"] if e["kind"] == "ClassLeafDecision"]
    assert any(d["total"] < d["samples"] for d in leaves)
    assert any(d["total"] == d["samples"] for d in leaves)


@pytest.fixture(scope="module")
def reference(script):
    p = STORED["parameters"]
    return Reference(STORED["rows"], {2}, script.class_row, p["seed"], p["depth"],
                     p["rows_per_node"], p["min_rows"], p["cuts"])


def test_the_row_model_is_the_model(script):
    frame = script.frame_of(STORED["rows"])
    names = script.ThreeClasses().predict(frame).tolist()
    assert [STORED["classes"].index(name) for name in names] == \
        [script.class_row(row) for row in STORED["rows"]]


def test_every_node_of_the_stored_tree(reference):
    check_stored_nodes(STORED, lambda path: decide_classes(reference, path, 3), "class")


def test_the_reference_answers_the_stored_rows(reference):
    for answer in STORED["answers"]:
        path, decision = reference_path(lambda path: decide_classes(reference, path, 3),
                                        reference.q.value, answer["row"], "class")
        assert path == answer["path"]
        assert STORED["classes"][decision["label"]] == answer["answer"]
