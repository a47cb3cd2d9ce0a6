"""docs/randomness.md stands alone: an independent implementation reproduces every vector.

``tests/spec_reference.py`` is written from the specification only (pure
Python Philox4x64-10, no numpy, no :mod:`lca` randomness code). It must
reproduce ``tests/data/known_answers.json`` bit for bit: node keys, packed
points and flip masks, query points, and every decision and answer of every
reconstruction case. A failure means the spec and the library disagree.
"""

import json
import math
from pathlib import Path

import pytest

import spec_reference as ref

STORED = json.loads((Path(__file__).resolve().parent / "data" /
                     "known_answers.json").read_text())
CASES = STORED["reconstructions"]


def test_no_library_randomness_is_imported():
    # The reference must not lean on the code it checks.
    source = Path(ref.__file__).read_text()
    assert "import lca" not in source and "from lca" not in source
    assert "import numpy" not in source and "from numpy" not in source


def test_random123_known_answer():
    # Salmon et al., Random123 kat_vectors: philox4x64_10, key 0, counter 0.
    assert ref.philox_block(0, 0) == (0x16554D9ECA36314C, 0xDB20FE9D672D0FDC,
                                      0xD7E772CEE186176B, 0x7E68B68AEC7BA23B)
    stored = [int(w, 16) for w in STORED["philox4x64_10_key0_counter0"]]
    assert list(ref.philox_block(0, 0)) == stored


def test_random123_known_answer_all_ones():
    # Random123 kat_vectors: counter and key all 0xff..ff.
    ones = (1 << 256) - 1
    assert ref.philox_block(ones, (1 << 128) - 1) == (
        0x87B092C3013FE90B, 0x438C3C67BE8D0224, 0x9CC7D7C69CD777B6, 0xA09CAEBF594F0BA0)


@pytest.mark.parametrize("case", STORED["node_keys"], ids=lambda c: c["key"][:8])
def test_node_keys(case):
    path = [tuple(step) for step in case["path"]]
    assert f"{ref.node_key(case['seed'], case['purpose'], path):032x}" == case["key"]


def _words(value: int, n: int) -> list[str]:
    return [f"{(value >> (64 * w)) & ref.MASK64:016x}" for w in range(ref.sample_word_count(n))]


@pytest.mark.parametrize("case", STORED["points"], ids=lambda c: f"n{c['n']}")
def test_points_and_flip_masks(case):
    path = [tuple(step) for step in case["path"]]
    n = case["n"]
    samples = ref.NodeSamples(case["seed"], case["purpose"], path, n, case["threshold"])
    ks = range(case["start"], case["stop"])
    assert [_words(samples.point(k), n) for k in ks] == case["x"]
    assert [_words(samples.flips(k), n) for k in ks] == case["flips"]


def test_counter_carries_into_the_stream_word():
    # docs/randomness.md §3: block b of stream s has the 256-bit counter
    # s * 2^64 + b, so block 2^64 of stream 0 is block 0 of stream 1.
    key = ref.node_key(0, "score", ())
    assert ref.Stream(key, 0).word(4 << 64) == ref.Stream(key, 1).word(0)


@pytest.mark.parametrize("case", STORED["constructors"], ids=lambda c: c["constructor"])
def test_seeded_constructors(case):
    if case["constructor"] == "random_tree":
        tree = ref.build_oracle(case)
        assert {"tree": ref.tree_nested(tree)} == case["derived"]
    else:
        assert ref.hidden(case["constructor"], case["args"]) == case["derived"]


def test_adaptive_log_terms():
    # delta enters as its exact binary value; ln_upper is exact, rounded once.
    for case in STORED["adaptive_bounds"]["log_terms"]:
        assert ref.log_term(case["events"], case["delta"]).hex() == case["L"]


def test_adaptive_bounds_follow_the_specified_float_order():
    rows = STORED["adaptive_bounds"]["bounds"]
    assert len(rows) > 500
    for c, q, L, upper, lower in rows:
        L = float.fromhex(L)
        assert (ref.upper(c, q, L).hex(), ref.lower(c, q, L).hex()) == (upper, lower), (c, q)


def test_bound_vectors_pin_the_evaluation_order():
    # A natural rereading of the same formula, a = sqrt(2 (L/q)), b = 2 (L/q) / 3,
    # differs by an ulp on some stored rows: the vectors catch a wrong order.
    def reread_upper(c, q, L):
        a = math.sqrt(2 * (L / q))
        b = 2 * (L / q) / 3
        root = (a + math.sqrt(a * a + 4 * (c / q + b))) / 2
        return min(root * root, 1.0)

    rows = STORED["adaptive_bounds"]["bounds"]
    assert any(reread_upper(c, q, float.fromhex(L)).hex() != upper
               for c, q, L, upper, _ in rows)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_query_points(case):
    queries = case["queries"]
    n = queries["n"]
    points = ref.query_points(queries["seed"], queries["purpose"], n, queries["count"])
    assert [_words(z, n) for z in points] == queries["packed"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_reconstruction(case):
    assert case["mode"] in ref.DECIDERS, (
        f"mode {case['mode']!r} has known answers but no reference rules: add them to "
        "tests/spec_reference.py (DECIDERS), written from its docs/randomness.md section")
    params = case["params"]
    f = ref.build_oracle(case["oracle"])
    n = case["queries"]["n"]
    queries = ref.query_points(case["queries"]["seed"], case["queries"]["purpose"], n,
                               case["queries"]["count"])
    for seed in case["seeds"]:
        answers, decisions = ref.answers(f, seed, queries, params, case["mode"])
        decisions, reports = ref.reports(decisions)
        if "answers" in case:
            assert answers == case["answers"][str(seed)], seed
        if "decisions" in case:
            assert decisions == case["decisions"][str(seed)], seed
        if "reports" in case:
            assert reports == case["reports"][str(seed)], seed
    if "explain_first" in case:
        explained = case["explain_first"]
        _, decisions = ref.answers(f, explained["seed"], queries[:1], params, case["mode"])
        nodes = [[d["variable"], d["disagreements"], d["agreements"]]
                 for d in decisions if d["kind"] == "NodeDecision"]
        leaf = decisions[-1] if decisions[-1]["kind"] == "LeafDecision" else None
        assert nodes == explained["nodes"]
        assert [leaf["label"], leaf["total"]] == explained["leaf"]
        assert leaf["path"] == explained["path"]

