"""Where the one-point path's queries and oracle calls go, by what they are for.

Answers points one at a time with one cached ``Reconstructor`` (as a service
or an explainer does) in the efficient mode, and tallies every oracle call
by the purpose of the rows it carries: a node's pair points (``"search"``),
binary-search hybrids (``"search-order"``), candidate and probe flips
(``"search-flip"``) and fresh leaf points (``"search-leaf"``). One answer's
requests go to the oracle one at a time, so each call has one purpose. Also
reports the built nodes' pair counts and rules, and what one call of each
oracle costs on 1 and on 2,000 rows (a paper-mode node's one call), so an
answer's calls and queries can be priced. Prints markdown tables
(docs/benchmarks.md §9); time the second table on a quiet machine::

    flock /tmp/lca-bench.lock python scripts/diagnose_local.py --points 300

Diagnostic only: it wraps ``lca.engine._call`` to read each request's purpose
(the purposes are part of every ``Request``; nothing else records them).
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
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
# About the rows a paper-mode node asks in its one call (the fixed preset at
# depth 10: 20,500 cold queries for about 10 nodes).
PAPER_NODE_ROWS = 2000


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


def call_cost(f: lca.Oracle, rows: int, repeats: int = 30) -> float:
    """Median wall seconds of one ``f.query`` on ``rows`` uniform points."""
    points = derive.sample_points(0, "bench/local/call-cost", f.n, rows)
    f.query(points)  # warm
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f.query(points)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def cost_row(name: str, f: lca.Oracle, result: dict[str, Any]) -> str:
    """A call's fixed cost beside the cost of a paper-mode node's rows, and what one
    answer's calls and rows cost at those prices."""
    one, many = call_cost(f, 1), call_cost(f, PAPER_NODE_ROWS)
    per_row = max(0.0, (many - one) / (PAPER_NODE_ROWS - 1))
    m = result["answers"]
    calls, queries = sum(result["calls"].values()) / m, sum(result["queries"].values()) / m
    return (f"| {name} | {1e3 * one:.2f} ms | {1e3 * many:.2f} ms | {1e6 * per_row:.2f} us | "
            f"{calls:.1f} | {1e3 * calls * one:.1f} ms | {1e3 * queries * per_row:.1f} ms |")


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
    costs = []
    for name, f, points in cases(args.points):
        result = tally(f, points, args.depth)
        print(row(name, result), flush=True)
        costs.append(cost_row(name, f, result))
    print(f"\nWhat a call costs (median of 30 `query` calls on 1 and on {PAPER_NODE_ROWS:,} "
          "uniform points; the second is about what a paper-mode node asks in its one call), "
          "and one efficient answer's calls and queries at those prices:\n")
    print(f"| case | 1 row | {PAPER_NODE_ROWS:,} rows | per further row | calls/answer | "
          "calls x fixed cost | queries x row cost |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(costs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
