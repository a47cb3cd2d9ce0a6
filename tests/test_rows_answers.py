"""Known answers of the data-mode surrogate (docs/randomness.md §10) are frozen.

A failure here is a compatibility break of data-mode nodes: if deliberate, run
scripts/make_rows_answers.py and say so in docs/surrogates.md.
"""

import json
from pathlib import Path

import pytest
from rows_support import rows_script

ROOT = Path(__file__).resolve().parent.parent
STORED = json.loads((ROOT / "tests" / "data" / "rows_answers.json").read_text())


def script():
    return rows_script()


@pytest.fixture(scope="module")
def computed():
    return script().compute(STORED["rows"])


@pytest.mark.parametrize("field", [
    "rows_digest", "answers", "queries_for_answers", "queries_whole_tree", "decisions", "text",
    "parameters", "columns",
])
def test_field_matches(computed, field):
    assert computed[field] == STORED[field]


def test_the_stored_case_is_not_trivial():
    kinds = {entry["kind"] for entry in STORED["decisions"]}
    assert kinds == {"NodeDecision", "LeafDecision"}
    assert len({tuple(map(tuple, a["path"])) for a in STORED["answers"]}) > 3
    assert {a["answer"] for a in STORED["answers"]} == {0, 1}
    # Explaining a few rows builds only their paths.
    assert STORED["queries_for_answers"] < STORED["queries_whole_tree"]
