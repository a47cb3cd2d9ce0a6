"""Known answers of the data-mode surrogate (docs/randomness.md §10) are frozen.

A failure here is a compatibility break of data-mode nodes: if deliberate, run
scripts/make_rows_answers.py and record it in docs/randomness.md §7.
"""

import json
from pathlib import Path

import pytest
from rows_support import rows_script

ROOT = Path(__file__).resolve().parent.parent
STORED = json.loads((ROOT / "tests" / "data" / "rows_answers.json").read_text())


@pytest.fixture(scope="module")
def computed():
    return rows_script().compute()


@pytest.mark.parametrize("field", ["datasets", "description"])
def test_field_matches(computed, field):
    assert computed[field] == STORED[field]


@pytest.mark.parametrize("case", range(len(STORED["cases"])),
                         ids=[case["name"] for case in STORED["cases"]])
def test_case_matches(computed, case):
    assert computed["cases"][case] == STORED["cases"][case]


def test_the_stored_cases_are_not_trivial():
    main = [case for case in STORED["cases"] if case["dataset"] == "stored"]
    kinds = {(case["kind"], entry["kind"]) for case in main for entry in case["decisions"]}
    assert kinds == {("yes/no", "RowsSplit"), ("yes/no", "LeafDecision"),
                     ("classes", "RowsSplit"), ("classes", "ClassLeafDecision")}
    big = [case for case in main if len(case["decisions"]) > 20]
    assert len(big) >= 4
    for case in big:
        assert len({tuple(map(tuple, a["path"])) for a in case["answers"]}) >= 3
        # Explaining a few rows builds only their paths.
        assert case["queries_for_answers"] < case["queries_whole_tree"]
        leaves = [e for e in case["decisions"] if "Leaf" in e["kind"]]
        # Leaves of fewer than min_rows fitted rows (labelled by every point), and of more.
        assert {e["rows"]["rows"] < case["parameters"]["min_rows"] for e in leaves} == \
            {True, False}
    labels = {e["decision"]["label"] for case in main if case["kind"] == "classes"
              for e in case["decisions"] if e["kind"] == "ClassLeafDecision"}
    assert labels == {0, 1, 2}  # every class answers some leaf
