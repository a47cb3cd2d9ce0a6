"""Where the one-point path's queries and oracle calls go, by what they are for.

Answers points one at a time with one cached ``Reconstructor`` (as a service
or an explainer does) in the efficient mode, and tallies every oracle call
by the purpose of the rows it carries: a node's pair points (``"search"``),
binary-search hybrids (``"search-order"``), candidate and probe flips
(``"search-flip"``) and fresh leaf points (``"search-leaf"``). One answer's
requests go to the oracle one at a time, so each call has one purpose. Also
reports the built nodes' pair counts and rules. Prints a markdown table
(docs/benchmarks.md §9)::

    python scripts/diagnose_local.py --points 300

Diagnostic only: it wraps ``lca.engine._call`` to read each request's purpose
(the purposes are part of every ``Request``; nothing else records them).
"""

from __future__ import annotations

import argparse
import collections
import sys
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

import lca
import lca.engine
from lca import derive, targets
from lca.decisions import NodeDecision
from lca.suite.cases import MODEL_SPECS
from lca.suite.trained import model_oracle

PURPOSES = ("search", "search-order", "search-flip", "search-leaf")


def tally(f: lca.Oracle, points: np.ndarray, depth: int) -> dict[str, Any]:
    """Answer ``points`` one at a time; queries and calls by purpose, and the nodes built."""
    queries: collections.Counter[str] = collections.Counter()
    calls: collections.Counter[str] = collections.Counter()
    inner = lca.engine._call

    def counted(oracle: lca.Oracle, rows: np.ndarray, pieces: Sequence[Any],
                seed: int) -> np.ndarray:
        queries[pieces[0].purpose] += rows.shape[0]
        calls[pieces[0].purpose] += 1
        return inner(oracle, rows, pieces, seed)

    rec = lca.Reconstructor(f, lca.Params.efficient(f.n, depth=depth), record=True)
    lca.engine._call = counted
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", lca.LowMarginWarning)
            for z in points:
                rec.answer(z, seed=7)
    finally:
        lca.engine._call = inner
    nodes = [d for d in rec.decisions.values() if isinstance(d, NodeDecision)]
    return {"queries": queries, "calls": calls, "answers": points.shape[0],
            "nodes": len(nodes), "leaves": len(rec.decisions) - len(nodes),
            "pairs": collections.Counter(d.samples for d in nodes)}


def cases(points: int) -> list[tuple[str, lca.Oracle, np.ndarray]]:
    out = []
    for key, spec in MODEL_SPECS.items():
        f, _ = model_oracle(spec, 0)
        out.append((key, f, derive.sample_points(0, "bench/local/points", f.n, points)))
    for eta in (0.02, 0.2):
        f = targets.with_label_noise(targets.random_tree(n=300, leaves=256, seed=1),
                                     rate=eta, seed=2)
        out.append((f"tree256 eta={eta}", f,
                    derive.sample_points(0, "bench/local/points", 300, points)))
    return out


def row(name: str, result: dict[str, Any]) -> str:
    q, c, m = result["queries"], result["calls"], result["answers"]
    total_q, total_c = sum(q.values()), sum(c.values())
    share = " | ".join(f"{q[p] / max(1, total_q):.0%} / {c[p] / max(1, total_c):.0%}"
                       for p in PURPOSES)
    per_node = total_c / max(1, result["nodes"])
    pairs = ", ".join(f"{k}: {v}" for k, v in sorted(result["pairs"].items()))
    return (f"| {name} | {total_q / m:,.0f} | {total_c / m:.1f} | {result['nodes']} | "
            f"{per_node:.1f} | {share} | {pairs} |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=300)
    parser.add_argument("--depth", type=int, default=12)
    args = parser.parse_args(argv)
    print(f"Efficient mode, depth {args.depth}, {args.points} points answered one at a time "
          "(seed 7). Per purpose: share of queries / share of oracle calls.\n")
    print("| case | queries/answer | calls/answer | nodes built | calls/node | pair points "
          "| search steps | flips and probes | leaf points | nodes by pairs drawn |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, f, points in cases(args.points):
        print(row(name, tally(f, points, args.depth)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
