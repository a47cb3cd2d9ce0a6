"""Known-answer vectors: every derived bit, decision and answer is frozen.

A failure here is a compatibility break. If it is deliberate, bump
derive.VERSION_TAG, run scripts/make_known_answers.py and record the change in
docs/randomness.md §7.
"""

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STORED = json.loads((ROOT / "tests" / "data" / "known_answers.json").read_text())


@pytest.fixture(scope="module")
def computed():
    spec = importlib.util.spec_from_file_location(
        "make_known_answers", ROOT / "scripts" / "make_known_answers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.compute()


def test_random123_vector_is_stored():
    assert STORED["philox4x64_10_key0_counter0"] == [
        "16554d9eca36314c", "db20fe9d672d0fdc", "d7e772cee186176b", "7e68b68aec7ba23b"]


@pytest.mark.parametrize("section", [
    "version", "philox4x64_10_key0_counter0", "node_keys", "points", "answers",
    "explained_first_query_seed_0", "adaptive_answers_seed_0", "adaptive_decisions_seed_0",
])
def test_section_matches(computed, section):
    assert computed[section] == STORED[section]
