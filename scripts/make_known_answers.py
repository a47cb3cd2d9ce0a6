"""Write tests/data/known_answers.json: the vectors that freeze lca's derived bits.

Run it only to make a deliberate compatibility break (see docs/randomness.md §7):

    python scripts/make_known_answers.py

tests/test_known_answers.py recomputes :func:`compute` and compares exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import lca
from lca import derive, targets

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "known_answers.json"

KEY_CASES = [
    (0, "score", []),
    (1, "leaf", []),
    (2 ** 64 - 1, "score", [[3, 1], [70, -1]]),
    (42, "score", [[0, -1], [1, 1], [2, -1]]),
]
POINT_CASES = [  # seed, purpose, path, n, start, stop, noise threshold
    (0, "score", [], 1, 0, 3, 3277),
    (5, "score", [[2, -1], [63, 1], [64, -1]], 130, 2, 6, 1),
    (2 ** 63, "leaf", [[9, 1]], 64, 0, 4, 32768),
    (9, "score", [], 200, 7, 9, 20000),
]
ANSWER_SEEDS = [0, 1, 2 ** 64 - 1]
ADAPTIVE_PARAMS = lca.Params.practical(n=64, depth=6, noise_rate=0.1, score_samples=3000,
                                       leaf_samples=1000, adaptive=True, tau=0.1, eps=0.2,
                                       delta=0.05)


def _hex(words) -> list[str]:
    return [f"{int(w):016x}" for w in words]


def _path(path) -> tuple:
    return tuple((int(var), int(bit)) for var, bit in path)


def reconstruction_setup():
    """The oracle, parameters and queries whose answers are frozen."""
    tree = targets.random_tree(n=64, leaves=16, seed=3)
    f = targets.with_label_noise(tree, rate=0.05, seed=4)
    params = lca.Params.practical(n=64, depth=6, noise_rate=0.1, score_samples=400,
                                  leaf_samples=200)
    points = derive.sample_points(0, "known-answer-queries", 64, 32)
    return f, params, points


def compute() -> dict:
    """Every known-answer vector, as JSON-ready data."""
    keys = [{"seed": seed, "purpose": purpose, "path": path,
             "key": f"{derive.node_key(seed, purpose, _path(path)):032x}"}
            for seed, purpose, path in KEY_CASES]
    points = []
    for seed, purpose, path, n, start, stop, threshold in POINT_CASES:
        key = derive.node_key(seed, purpose, _path(path))
        points.append({
            "seed": seed, "purpose": purpose, "path": path, "n": n, "start": start,
            "stop": stop, "threshold": threshold,
            "x": [_hex(row) for row in derive.uniform_points(key, n, start, stop, _path(path))],
            "flips": [_hex(row) for row in
                      derive.flip_masks(key, n, start, stop, threshold, _path(path))],
        })
    f, params, queries = reconstruction_setup()
    rec = lca.Reconstructor(f, params)
    answers = {str(seed): rec.answer_many(queries, seed).tolist() for seed in ANSWER_SEEDS}
    adaptive = lca.Reconstructor(f, ADAPTIVE_PARAMS, record=True)
    adaptive_answers = adaptive.answer_many(queries, 0).tolist()
    adaptive_decisions = sorted(
        [[list(step) for step in path], type(d).__name__, d.samples, bool(d.certified),
         getattr(d, "variable", getattr(d, "label", None))]
        for (_, path), d in adaptive.decisions.items())
    first = rec.explain(queries[0], 0)
    explained = {
        "path": [list(step) for step in first.path],
        "nodes": [[d.variable, d.disagreements, d.agreements] for d in first.nodes],
        "leaf": [first.leaf.label, first.leaf.total],
    }
    return {
        "version": derive.VERSION_TAG.decode(),
        "philox4x64_10_key0_counter0": _hex(derive.raw_words(0, 0, 0, 4)),
        "node_keys": keys,
        "points": points,
        "answers": answers,
        "explained_first_query_seed_0": explained,
        "adaptive_answers_seed_0": adaptive_answers,
        "adaptive_decisions_seed_0": adaptive_decisions,
    }


if __name__ == "__main__":
    OUT.write_text(json.dumps(compute(), indent=1) + "\n")
    print(f"wrote {OUT}")
