"""Write tests/data/known_answers.json: the vectors that freeze lca's derived bits.

Run it only to make a deliberate compatibility break (docs/randomness.md,
"Compatibility record"):

    python scripts/make_known_answers.py

``tests/test_known_answers.py`` recomputes :func:`compute` and compares
exactly; ``tests/test_spec_reference.py`` rebuilds the same vectors from the
specification alone. Every field of the file is documented in
``tests/data/README.md``.

Reconstruction vectors are a table (:data:`CASES`): each entry names its
mode (the decision rules of a section of docs/randomness.md), an oracle by
its constructor and arguments, the :class:`lca.Params` (stored with every
field), the query points and the seeds, and says what to record. A new mode
adds its vectors by appending entries (and, if it records something new, a
recorder to :data:`RECORDERS`), and its rules to ``tests/spec_reference.py``
(``DECIDERS``); the existing entries and their bits never change.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from fractions import Fraction
from pathlib import Path

import lca
from lca import derive, estimate, targets

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "known_answers.json"
FORMAT = 3

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

# The oracle of every reconstruction case: a 16-leaf random tree over 64
# variables with 5% fixed label noise (lca.targets constructors, by name).
NOISY_TREE = {"constructor": "with_label_noise",
              "args": {"target": {"constructor": "random_tree",
                                  "args": {"n": 64, "leaves": 16, "seed": 3, "labels": "iid"}},
                       "rate": 0.05, "seed": 4}}
QUERIES = {"purpose": "known-answer-queries", "seed": 0, "count": 32}

CASES = [
    {
        "name": "fixed",
        "mode": "fixed",
        "oracle": NOISY_TREE,
        "params": {"constructor": "practical",
                   "args": {"n": 64, "depth": 6, "noise_rate": 0.1, "score_samples": 400,
                            "leaf_samples": 200}},
        "queries": QUERIES,
        "seeds": [0, 1, 2 ** 64 - 1],
        "record": ["answers", "explain_first", "decisions"],
    },
    {
        "name": "adaptive",
        "mode": "adaptive",
        "oracle": NOISY_TREE,
        "params": {"constructor": "practical",
                   "args": {"n": 64, "depth": 6, "noise_rate": 0.1, "score_samples": 3000,
                            "leaf_samples": 1000, "adaptive": True, "tau": 0.1, "eps": 0.2,
                            "delta": 0.05}},
        "queries": QUERIES,
        "seeds": [0],
        "record": ["answers", "decisions"],
    },
    {
        "name": "efficient",
        "mode": "efficient",
        "oracle": NOISY_TREE,
        "params": {"constructor": "efficient",
                   "args": {"n": 64, "depth": 6, "pairs": 64, "first_round": 16,
                            "leaf_samples": 64, "eps": 0.1, "delta": 0.05}},
        "queries": QUERIES,
        "seeds": [0, 2 ** 64 - 1],
        "record": ["answers", "decisions"],
    },
    {
        # The preset's defaults: one quiet round of 64 pairs, eps = delta = 0.05.
        "name": "efficient-defaults",
        "mode": "efficient",
        "oracle": NOISY_TREE,
        "params": {"constructor": "efficient", "args": {"n": 64, "depth": 6}},
        "queries": QUERIES,
        "seeds": [3],
        "record": ["answers", "decisions"],
    },
    {
        "name": "efficient-noisy",
        "mode": "efficient",
        "oracle": {"constructor": "with_label_noise",
                   "args": {"target": NOISY_TREE["args"]["target"], "rate": 0.2, "seed": 5}},
        "params": {"constructor": "efficient",
                   "args": {"n": 64, "depth": 4, "pairs": 32, "first_round": 8,
                            "leaf_samples": 100, "eps": 0.1, "delta": 0.05}},
        "queries": QUERIES,
        "seeds": [1],
        "record": ["answers", "decisions"],
    },
    {
        "name": "efficient-parity",
        "mode": "efficient",
        "oracle": {"constructor": "parity", "args": {"n": 64, "k": 3, "seed": 6}},
        "params": {"constructor": "efficient",
                   "args": {"n": 64, "depth": 5, "pairs": 256, "first_round": 16,
                            "leaf_samples": 16, "eps": 0.05, "delta": 0.05}},
        "queries": QUERIES,
        "seeds": [2],
        "record": ["answers", "decisions"],
    },
    # The cases below pin rules the ones above leave open: each changed rule of
    # tests/spec_mutants.py makes some case differ. Several use tuned values
    # (a noise rate halfway between two grid points, eps and tau equal to a
    # bound the case reaches); the comment of each says what it pins.
    {
        # depth > n (path_length = n), nodes that see no disagreement (D = 0) below
        # the tree's leaves, the paper modes' reporting fields; T/2^15 is a tie
        # (8192.5/2^15 rounds half to even to 8192).
        "name": "fixed-deep",
        "mode": "fixed",
        "oracle": {"constructor": "with_label_noise",
                   "args": {"target": {"constructor": "random_tree",
                                       "args": {"n": 8, "leaves": 7, "seed": 5,
                                                "labels": "iid"}},
                            "rate": 0.05, "seed": 1}},
        "params": {"constructor": "practical",
                   "args": {"n": 8, "depth": 10, "noise_rate": 8192.5 / 2 ** 15,
                            "score_samples": 80, "leaf_samples": 100}},
        "queries": QUERIES,
        "seeds": [3],
        "record": ["answers", "decisions", "reports"],
    },
    {
        # Three variables, two samples per node at p = 1: a node at depth 1 where
        # every sample disagrees and its other free variable never flipped, so that
        # variable's C ties with a path variable's (the runner-up is the free one).
        "name": "fixed-tiny",
        "mode": "fixed",
        "oracle": {"constructor": "parity", "args": {"n": 3, "k": 2, "seed": 0}},
        "params": {"constructor": "practical",
                   "args": {"n": 3, "depth": 3, "noise_rate": 1.0, "score_samples": 2,
                            "leaf_samples": 2}},
        "queries": QUERIES,
        "seeds": [5],
        "record": ["answers", "decisions", "reports"],
    },
    {
        # Adaptive mode down to one free variable (depth = n = 3), which is chosen,
        # certified, at the first round.
        "name": "adaptive-tiny",
        "mode": "adaptive",
        "oracle": {"constructor": "parity", "args": {"n": 3, "k": 2, "seed": 0}},
        "params": {"constructor": "direct",
                   "args": {"n": 3, "depth": 3, "noise_rate": 0.5, "score_samples": 64,
                            "leaf_samples": 64, "first_round": 16, "adaptive": True,
                            "tau": 0.3, "eps": 0.2, "delta": 0.1}},
        "queries": QUERIES,
        "seeds": [0],
        "record": ["answers", "decisions", "reports"],
    },
    {
        # Adaptive mode where nodes become leaves early: eps puts p * eps exactly at
        # U(0) of a node's 256 samples (the first round at which a constant node
        # may stop), tau just below a gap that a smaller log term would certify,
        # delta so that a constant leaf is certified at 128 samples, not 64; the
        # caps are first_round * 2^5. T/2^15 is a tie (24576.5/2^15 -> 24576).
        "name": "adaptive-constant",
        "mode": "adaptive",
        "oracle": {"constructor": "random_tree",
                   "args": {"n": 6, "leaves": 7, "seed": 1, "labels": "iid"}},
        "params": {"constructor": "direct",
                   "args": {"n": 6, "depth": 3, "noise_rate": 24576.5 / 2 ** 15,
                            "score_samples": 512, "leaf_samples": 512, "first_round": 16,
                            "adaptive": True, "tau": 0.431853902448937,
                            "eps": 0.220359470026006, "delta": 0.025}},
        "queries": QUERIES,
        "seeds": [0],
        "record": ["answers", "decisions", "reports"],
    },
    {
        # Adaptive mode on balanced leaves (a parity of 3 cut at depth 2): tau is
        # exactly the root's gap at 128 samples, and eps = 2 up - 1 for a leaf whose
        # sum is 0 at 1024 samples, so both bounds of the magnitude rule are met
        # with equality there.
        "name": "adaptive-balanced",
        "mode": "adaptive",
        "oracle": {"constructor": "parity", "args": {"n": 6, "k": 3, "seed": 1}},
        "params": {"constructor": "direct",
                   "args": {"n": 6, "depth": 2, "noise_rate": 24576.5 / 2 ** 15,
                            "score_samples": 512, "leaf_samples": 2048, "first_round": 16,
                            "adaptive": True, "tau": 0.7173023527434274,
                            "eps": 0.18366620328332273, "delta": 0.05}},
        "queries": QUERIES,
        "seeds": [9],
        "record": ["answers", "decisions", "reports"],
    },
    {
        # Adaptive mode on a dictator: at the root every disagreement flips the
        # leader, so the gaps to the others fall below tau = 0.16 at 256 samples,
        # while the leader's gap to itself (U(0) / (1 - p/2)) would not.
        "name": "adaptive-dictator",
        "mode": "adaptive",
        "oracle": {"constructor": "parity", "args": {"n": 6, "k": 1, "seed": 0}},
        "params": {"constructor": "direct",
                   "args": {"n": 6, "depth": 2, "noise_rate": 0.25, "score_samples": 256,
                            "leaf_samples": 256, "first_round": 16, "adaptive": True,
                            "tau": 0.16, "eps": 0.2, "delta": 0.05}},
        "queries": QUERIES,
        "seeds": [0],
        "record": ["answers", "decisions", "reports"],
    },
    {
        # The preset's defaults at n = 12 (one quiet round, R = 2): leads whose sign
        # test passes at R = 2 and fails at R = 3 (seed 2) or fails at R = 2 and
        # passes at R = 1 (seed 31), a node at 2 Pi = E_leader. (Z cannot be pinned
        # at these defaults: a unanimous node has 128 own points, above any Z <= 128.)
        "name": "efficient-n12",
        "mode": "efficient",
        "oracle": {"constructor": "random_tree",
                   "args": {"n": 12, "leaves": 16, "seed": 5, "labels": "iid"}},
        "params": {"constructor": "efficient", "args": {"n": 12, "depth": 6}},
        "queries": QUERIES,
        "seeds": [2, 3, 31],
        "record": ["answers", "decisions"],
    },
    {
        # Rounds of 16, 32 and 64 (R = 4): a lead between the tests at R = 4 and
        # R = 5, nodes at the cap near both structure tests.
        "name": "efficient-first-round-16",
        "mode": "efficient",
        "oracle": {"constructor": "with_label_noise",
                   "args": {"target": {"constructor": "random_tree",
                                       "args": {"n": 12, "leaves": 16, "seed": 7,
                                                "labels": "iid"}},
                            "rate": 0.05, "seed": 1}},
        "params": {"constructor": "efficient",
                   "args": {"n": 12, "depth": 6, "first_round": 16}},
        "queries": QUERIES,
        "seeds": [0],
        "record": ["answers", "decisions"],
    },
    {
        # Rule 1 one point short: Z = 53 is odd and the first round has 2 * 26 = 52
        # unanimous own points (R = 3: rounds of 26 and 52, then the noisy one).
        # eps also makes Z differ from the bound rounded to a double first, and
        # from eps and delta read as decimals (52 both).
        "name": "efficient-unanimous-odd",
        "mode": "efficient",
        "oracle": {"constructor": "random_tree",
                   "args": {"n": 16, "leaves": 6, "seed": 1, "labels": "iid"}},
        "params": {"constructor": "efficient",
                   "args": {"n": 16, "depth": 5, "pairs": 52, "first_round": 26,
                            "leaf_samples": 32, "eps": 0.09643243527621845,
                            "delta": 0.04}},
        "queries": QUERIES,
        "seeds": [0],
        "record": ["answers", "decisions"],
    },
    {
        # Rule 1 exactly at Z: Z = 44 and the first round has 2 * 22 = 44 own points
        # (the bound rounded to a double first, or eps and delta read as decimals,
        # give 45). Built with lookahead 3, which changes no decision.
        "name": "efficient-unanimous-even",
        "mode": "efficient",
        "oracle": {"constructor": "random_tree",
                   "args": {"n": 16, "leaves": 6, "seed": 1, "labels": "iid"}},
        "params": {"constructor": "efficient",
                   "args": {"n": 16, "depth": 5, "pairs": 44, "first_round": 22,
                            "leaf_samples": 32, "eps": 0.12479603002268914,
                            "delta": 0.025, "lookahead": 3}},
        "queries": QUERIES,
        "seeds": [0],
        "record": ["answers", "decisions"],
    },
    {
        # Rules 4 and 7 at their boundaries (m = eps * P with eps = 1/16, 2 Pi =
        # E_leader), nodes with one free variable (depth = n).
        "name": "efficient-cap-noisy",
        "mode": "efficient",
        "oracle": {"constructor": "with_label_noise",
                   "args": {"target": {"constructor": "random_tree",
                                       "args": {"n": 8, "leaves": 12, "seed": 5,
                                                "labels": "iid"}},
                            "rate": 0.05, "seed": 1}},
        "params": {"constructor": "efficient",
                   "args": {"n": 8, "depth": 8, "pairs": 32, "leaf_samples": 32,
                            "eps": 0.0625}},
        "queries": QUERIES,
        "seeds": [3],
        "record": ["answers", "decisions"],
    },
    {
        # Rule 5: a node unanimous through its cap (Z = 71 > 64 own points) whose
        # inherited points correlate.
        "name": "efficient-cap-unanimous",
        "mode": "efficient",
        "oracle": {"constructor": "random_tree",
                   "args": {"n": 8, "leaves": 12, "seed": 3, "labels": "iid"}},
        "params": {"constructor": "efficient",
                   "args": {"n": 8, "depth": 8, "pairs": 32, "leaf_samples": 32,
                            "eps": 0.0625}},
        "queries": QUERIES,
        "seeds": [1],
        "record": ["answers", "decisions"],
    },
]

# Constructors an oracle spec may name; arguments that are themselves specs
# (a dict with "constructor") are built first.
ORACLES = {
    "random_tree": targets.random_tree,
    "with_label_noise": targets.with_label_noise,
    "parity": targets.parity,
    "majority": targets.majority,
    "junta": targets.junta,
    "tribes": targets.tribes,
    "multiplexer": targets.multiplexer,
}
# Adaptive mode's log term and Bernstein bounds (docs/randomness.md §6):
# (events E, delta) pairs, and a grid of (count, samples) for every log term.
# Some grid points separate the specified evaluation order from natural
# alternatives by one ulp, so the vectors pin the order.
# The last one separates delta's exact binary value (0.59999999999999997780) from the
# decimal 0.6: E / (delta / 2) is just above 60, so its ceiling is 61.
LOG_TERM_CASES = [((2 * 64 * 64 + 1) * 6 * 2 ** 7, 0.05), (4 * 5 * 2 ** 7, 0.05),
                  ((2 * 1000 ** 2 + 1) * 8 * 2 ** 13, 0.01), (4 * 3 * 2 ** 3, 0.1),
                  ((2 * 2 ** 2 + 1) * 1 * 2 ** 1, 0.6)]
BOUND_SAMPLES = [64, 100, 128, 256, 300, 1000, 3000]

# Seeded constructors on their own: what each one derives from its WordStream.
CONSTRUCTOR_CASES = [
    {"constructor": "random_tree", "args": {"n": 6, "leaves": 9, "seed": 11, "labels": "iid"}},
    {"constructor": "random_tree",
     "args": {"n": 5, "leaves": 12, "seed": 2 ** 64 - 1, "labels": "sibling_differing"}},
    {"constructor": "random_tree", "args": {"n": 2, "leaves": 4, "seed": 0, "labels": "iid"}},
    {"constructor": "parity", "args": {"n": 100, "k": 7, "seed": 5}},
    {"constructor": "majority", "args": {"n": 30, "k": 5, "seed": 6}},
    {"constructor": "multiplexer", "args": {"n": 40, "k": 2, "seed": 7}},
    {"constructor": "tribes", "args": {"n": 50, "width": 3, "count": 4, "seed": 8}},
    {"constructor": "junta", "args": {"n": 20, "k": 5, "seed": 9}},
]

PARAMS = {"practical": lca.Params.practical, "guaranteed": lca.Params.guaranteed,
          "from_theory": lca.Params.from_theory, "efficient": lca.Params.efficient,
          "direct": lca.Params}


def build_oracle(spec: dict) -> lca.Oracle:
    """The oracle an ``{"constructor": name, "args": {...}}`` spec names."""
    args = {name: build_oracle(value) if isinstance(value, dict) and "constructor" in value
            else value for name, value in spec["args"].items()}
    return ORACLES[spec["constructor"]](**args)


def build_params(spec: dict) -> lca.Params:
    return PARAMS[spec["constructor"]](**spec["args"])


def constructed(spec: dict) -> dict:
    """What a seeded constructor derived: the tree, or hidden variables (and table)."""
    oracle = build_oracle(spec)
    if spec["constructor"] == "random_tree":
        return {"tree": oracle.to_nested()}
    if spec["constructor"] == "multiplexer":
        return {"variables": oracle.address.tolist() + oracle.data.tolist()}
    out = {"variables": oracle.variables.tolist()}
    if spec["constructor"] == "junta":
        out["table"] = oracle.table.tolist()
    return out


def adaptive_bounds() -> dict:
    """``L`` for each log-term case, then ``U(c)`` and ``Lo(c)`` on a grid, as float hex."""
    logs = [{"events": events, "delta": delta,
             "L": estimate.ln_upper(Fraction(events) / (Fraction(delta) / 2)).hex()}
            for events, delta in LOG_TERM_CASES]
    rows = []
    for case in logs:
        L = float.fromhex(case["L"])
        for q in BOUND_SAMPLES:
            for c in range(0, q + 1, max(1, q // 23)):
                rows.append([c, q, case["L"], float(estimate.bernoulli_upper(c, q, L)).hex(),
                             float(estimate.bernoulli_lower(c, q, L)).hex()])
    return {"log_terms": logs, "bounds": rows}


def params_fields(params: lca.Params) -> dict:
    """Every field of ``params`` and its ``lookahead``: enough to rebuild it with
    ``lca.Params(**fields)``.

    ``lookahead`` is init-only (it batches a search's questions and fixes nothing
    of the tree, so ``asdict`` leaves it out); the vectors record it so that a
    reader sees what the case was built with.
    """
    return dataclasses.asdict(params) | {"lookahead": params.lookahead}


def _hex(words) -> list[str]:
    return [f"{int(w):016x}" for w in words]


def _path(path) -> tuple:
    return tuple((int(var), int(bit)) for var, bit in path)


def query_points(spec: dict, n: int):
    """The query points: samples ``0..count-1`` of ``sample_points(seed, purpose, n, count)``."""
    return derive.sample_points(spec["seed"], spec["purpose"], n, spec["count"])


def _decision_row(path, decision) -> dict:
    row = {"path": [list(step) for step in path], "kind": type(decision).__name__,
           "samples": decision.samples, "certified": decision.certified}
    if isinstance(decision, lca.reconstruct.NodeDecision):
        row |= {"variable": decision.variable, "disagreements": decision.disagreements,
                "agreements": decision.agreements}
        if decision.rule is not None:  # the search estimator (efficient mode)
            row |= {"rule": decision.rule, "votes": decision.votes,
                    "runner_up": decision.runner_up, "margin": decision.margin,
                    "low_margin": decision.low_margin, "guesswork": decision.guesswork}
    else:
        row |= {"label": decision.label, "total": decision.total}
    return row


def _record_answers(rec, queries, seeds) -> dict:
    return {str(seed): rec.answer_many(queries, seed).tolist() for seed in seeds}


def _record_explain_first(rec, queries, seeds) -> dict:
    first = rec.explain(queries[0], seeds[0])
    return {"seed": seeds[0], "query": 0,
            "path": [list(step) for step in first.path],
            "nodes": [[d.variable, d.disagreements, d.agreements] for d in first.nodes],
            "leaf": [first.leaf.label, first.leaf.total]}


def _record_decisions(rec, queries, seeds) -> dict:
    # Every decision answer_many(queries, seed) made, sorted by path.
    out = {}
    for seed in seeds:
        rec.answer_many(queries, seed)
        rows = [_decision_row(path, d) for (s, path), d in rec.decisions.items() if s == seed]
        out[str(seed)] = sorted(rows, key=lambda row: row["path"])
    return out


def _record_reports(rec, queries, seeds) -> dict:
    # The score estimator's reporting fields of every node answer_many(queries, seed)
    # built, sorted by path (its decision rows leave them out).
    out = {}
    for seed in seeds:
        rec.answer_many(queries, seed)
        rows = [{"path": [list(step) for step in path], "runner_up": d.runner_up,
                 "margin": d.margin, "low_margin": d.low_margin, "guesswork": d.guesswork}
                for (s, path), d in rec.decisions.items()
                if s == seed and isinstance(d, lca.reconstruct.NodeDecision)]
        out[str(seed)] = sorted(rows, key=lambda row: row["path"])
    return out


RECORDERS = {"answers": _record_answers, "explain_first": _record_explain_first,
             "decisions": _record_decisions, "reports": _record_reports}


def compute_case(case: dict) -> dict:
    """One reconstruction vector: its full description and what it records."""
    oracle = build_oracle(case["oracle"])
    params = build_params(case["params"])
    queries = query_points(case["queries"], params.n)
    out = {"name": case["name"], "mode": case["mode"],
           "oracle": case["oracle"], "params_constructor": case["params"],
           "params": params_fields(params),
           "queries": dict(case["queries"], n=params.n,
                           packed=[_hex(row) for row in derive.pack_points(queries)]),
           "seeds": case["seeds"]}
    for what in case["record"]:
        rec = lca.Reconstructor(oracle, params, record=True)
        with warnings.catch_warnings():
            # Small sample counts keep the vectors cheap; their low margins are
            # irrelevant to what the vectors freeze.
            warnings.simplefilter("ignore", lca.LowMarginWarning)
            out[what] = RECORDERS[what](rec, queries, case["seeds"])
    return out


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
    return {
        "format": FORMAT,
        "version": derive.VERSION_TAG.decode(),
        "philox4x64_10_key0_counter0": _hex(derive.raw_words(0, 0, 0, 4)),
        "node_keys": keys,
        "points": points,
        "constructors": [dict(spec, derived=constructed(spec)) for spec in CONSTRUCTOR_CASES],
        "adaptive_bounds": adaptive_bounds(),
        "reconstructions": [compute_case(case) for case in CASES],
    }


if __name__ == "__main__":
    OUT.write_text(json.dumps(compute(), indent=1) + "\n")
    print(f"wrote {OUT}")
