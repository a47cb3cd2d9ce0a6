"""tests/rows_reference.py, written from docs/randomness.md §10 alone, decides as lca does."""

import json
from pathlib import Path

import pytest
from rows_reference import Reference
from rows_support import check_stored_nodes, reference_path, rows_script

ROOT = Path(__file__).resolve().parent.parent
STORED = json.loads((ROOT / "tests" / "data" / "rows_answers.json").read_text())


def test_the_reference_imports_nothing_of_lca_or_numpy():
    source = (ROOT / "tests" / "rows_reference.py").read_text()
    assert "import lca" not in source and "from lca" not in source
    assert "import numpy" not in source and "from numpy" not in source


@pytest.fixture(scope="module")
def reference():
    module = rows_script()
    p = STORED["parameters"]
    return Reference(STORED["rows"], {2}, module.model_row, p["seed"], p["depth"],
                     p["rows_per_node"], p["min_rows"], p["cuts"])


def test_every_node_of_the_stored_tree(reference):
    check_stored_nodes(STORED, reference.decide, "leaf")


def test_the_reference_answers_the_stored_rows(reference):
    for answer in STORED["answers"]:
        path, decision = reference_path(reference.decide, reference.q.value, answer["row"],
                                        "leaf")
        assert path == answer["path"]
        assert (decision["label"] > 0) == (answer["answer"] == 1)


def test_the_rows_digest_follows_the_text():
    from rows_reference import rows_digest

    assert rows_digest(STORED["rows"], {2}) == STORED["rows_digest"]


@pytest.mark.parametrize("product_rows", [1, 12, 31])
def test_a_stated_mix_decides_every_node_as_the_text_says(product_rows):
    """product_rows = D: every node takes at most R - D fitted rows and draws the rest."""
    from lca.models import Surrogate, ThresholdEncoder

    module = rows_script()
    p = dict(STORED["parameters"])
    cuts = p.pop("cuts")
    surrogate = Surrogate(module.model, positive=1, distribution="data",
                          encoder=ThresholdEncoder(cuts=cuts), product_rows=product_rows,
                          **p).fit(module.frame_of(STORED["rows"]))
    tree = surrogate.tree()
    reference = Reference(STORED["rows"], {2}, module.model_row, p["seed"], p["depth"],
                          p["rows_per_node"], p["min_rows"], cuts, product_rows)
    for path, decision in tree.walk():
        mine = reference.decide(path)
        if path in tree.leaves:
            assert (mine["label"], mine["samples"], mine["total"]) == (
                decision.label, decision.samples, decision.total), path
            assert mine["rows"] <= p["rows_per_node"] - product_rows
        else:
            assert mine == {"kind": "node", "variable": decision.variable,
                            "samples": decision.samples}, path
    # The mix changes the tree: the stored one (D = 0) is not this one.
    assert [list(map(list, path)) for path in tree.leaves] != [
        entry["path"] for entry in STORED["decisions"] if entry["kind"] == "LeafDecision"]
