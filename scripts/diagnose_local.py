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
(docs/benchmarks_history.md §9); time the second table on a quiet machine::

    flock /tmp/lca-bench.lock python scripts/diagnose_local.py --points 300

Diagnostic only: it wraps ``lca.engine._call`` to read each request's purpose
(the purposes are part of every ``Request``; nothing else records them).

The third table splits lca's own CPU by phase: the same answers are asked
again on a fresh reconstructor whose oracle replays the first run's values
(``bench_local.Replayed``: no model code runs, the calls are checked to be
the same), under ``cProfile``; each phase is the cumulative time of the
functions that make it. cProfile charges every Python-level call, so it
inflates phases made of many small calls against those made of a few numpy
calls: read the shares as a map, the unprofiled replay's CPU per query as
the total.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import pstats
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_local import Replayed, Timed  # noqa: E402

import lca  # noqa: E402
import lca.engine  # noqa: E402
from lca import derive, targets  # noqa: E402
from lca.decisions import NodeDecision  # noqa: E402
from lca.search.compiled import kernel_path  # noqa: E402
from lca.suite.cases import MODEL_SPECS  # noqa: E402
from lca.suite.trained import model_oracle  # noqa: E402

PURPOSES = ("search", "search-order", "search-flip", "search-leaf")
# About the rows a paper-mode node asks in its one call (the fixed preset at
# depth 10: 20,500 cold queries for about 10 nodes).
PAPER_NODE_ROWS = 2000


def tally(f: lca.Oracle, points: np.ndarray, depth: int) -> dict[str, Any]:
    """Answer ``points`` one at a time; queries and calls by purpose, the nodes built,
    and the oracle's values call by call (``"log"``, what :func:`phases` replays)."""
    queries: collections.Counter[str] = collections.Counter()
    calls: collections.Counter[str] = collections.Counter()
    inner = lca.engine._call

    def counted(oracle: lca.Oracle, rows: np.ndarray, pieces: Sequence[Any],
                seed: int) -> np.ndarray:
        queries[pieces[0].purpose] += rows.shape[0]
        calls[pieces[0].purpose] += 1
        return inner(oracle, rows, pieces, seed)

    recorded = Timed(f, record=True)
    rec = lca.Reconstructor(recorded, lca.Params.efficient(f.n, depth=depth), record=True)
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
            "pairs": collections.Counter(d.samples for d in nodes), "log": recorded.log}


_LCA = Path(lca.__file__).parent

# The phases of lca's own CPU: (name, files under lca/, functions whose cumulative
# time makes it). An indented phase is part of the one above it. A group's phases are
# NodeGroup's methods (search/group.py), or CompiledGroup's where it overrides them
# (search/compiled.py, the compiled kernels' path).
_GROUP = ("search/group.py", "search/compiled.py")
PHASES = (
    ("a node's rounds", _GROUP, ("steps",)),
    ("  its pairs' points", _GROUP, ("_draw",)),
    ("  binary searches (orders, steps)", _GROUP, ("_search",)),
    ("  correlation sums", _GROUP, ("_add_sums",)),
    ("  rules, flips and probes", _GROUP, ("_rules_after_round", "_probe", "_rules_at_cap")),
    ("handing rows and sums down to the children", ("search/lineage.py",), ("hand_down",)),
    ("the rest of a node (ancestors' points, setup, leaf labels)",
     ("search/search_estimator.py",), ("nodes", "leaves")),
    ("rows of the requests (points, hybrids, flips)", ("search/hybrids.py",), ("rows",)),
    ("checks of the oracle's answers", ("oracle.py",), ("query",)),
)


def _cumulative(stats: pstats.Stats, files: Sequence[str], names: Sequence[str],
                needed: bool = True) -> float:
    """Seconds of the named functions of ``lca/<file>`` for each of ``files``, calls within
    calls counted once.

    Raises ``LookupError`` if none of them ran (unless not ``needed``): a renamed
    function would otherwise read as a phase that costs nothing.
    """
    homes = {str(_LCA / file) for file in files}
    found = [entry[3] for (path, _, name), entry in stats.stats.items()  # type: ignore[attr-defined]
             if path in homes and name in names]
    if not found and needed:
        raise LookupError(f"no function {', '.join(names)} of lca/{' or lca/'.join(files)} "
                          "ran: the phases of diagnose_local.py no longer match the code")
    return sum(found)


def phases(log: list[np.ndarray], n: int, points: np.ndarray, depth: int) -> dict[str, Any]:
    """lca's own CPU of ``points`` answered one at a time, by phase (the module docstring),
    the oracle's values replayed from the ``log`` of :func:`tally` on the same points.

    Returns the unprofiled CPU seconds of the replay outside its oracle, its queries and nodes,
    the profiled seconds of each phase of :data:`PHASES` (the rest named
    ``"engine and reconstructor"``) and Python-level calls.
    """
    params = lca.Params.efficient(n, depth=depth)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lca.LowMarginWarning)

        def replay(profile: cProfile.Profile | None) -> tuple[lca.Reconstructor, float]:
            replayed = Timed(Replayed(log, n))
            rec = lca.Reconstructor(replayed, params)
            start = time.thread_time()
            if profile is not None:
                profile.enable()
            for z in points:
                rec.answer(z, seed=7)
            if profile is not None:
                profile.disable()
            assert replayed.calls == len(log), "the replay asked fewer calls than the log"
            return rec, time.thread_time() - start - replayed.cpu

        rec, cpu = replay(None)
        profile = cProfile.Profile()
        replay(profile)
    stats = pstats.Stats(profile)
    # The replayed answers (Timed.query, which wraps them) are the oracle's time, not lca's.
    code = Timed.query.__code__
    oracle = stats.stats[(code.co_filename, code.co_firstlineno, "query")][3]  # type: ignore[attr-defined]
    total = stats.total_tt - oracle  # type: ignore[attr-defined]
    # The compiled kernels make their rows without Python-level calls of their own.
    compiled = kernel_path(params) == "compiled"
    spent = {name: _cumulative(stats, files, names, not (compiled and files[0] ==
                                                         "search/hybrids.py"))
             for name, files, names in PHASES}
    spent["rows of the requests (points, hybrids, flips)"] += _cumulative(
        stats, ("engine.py",), ("<lambda>",))
    spent["checks of the oracle's answers"] -= oracle  # CountingOracle.query calls it
    # Every top-level phase is outside the others: the estimator's rest is its total
    # less its rounds and hand-down.
    rest = "the rest of a node (ancestors' points, setup, leaf labels)"
    spent[rest] -= spent["a node's rounds"] + spent["handing rows and sums down to the children"]
    top = [name for name, _, _ in PHASES if not name.startswith(" ")]
    spent["engine and reconstructor"] = total - sum(spent[name] for name in top)
    return {"cpu": cpu, "queries": rec.stats.queries, "nodes": rec.stats.nodes_built,
            "profiled": total, "spent": spent,
            "calls": stats.total_calls}  # type: ignore[attr-defined]


def phase_table(results: Sequence[tuple[str, dict[str, Any]]]) -> list[str]:
    """One column per case: each phase's profiled µs per node and share of the total."""
    names = [name for name, _, _ in PHASES] + ["engine and reconstructor"]
    lines = ["| phase | " + " | ".join(case for case, _ in results) + " |",
             "|---|" + "---:|" * len(results)]
    for name in names:
        cells = [f"{1e6 * r['spent'][name] / r['nodes']:,.0f} us, "
                 f"{r['spent'][name] / r['profiled']:.0%}" for _, r in results]
        lines.append(f"| {name.strip() if not name.startswith(' ') else '- ' + name.strip()} | "
                     + " | ".join(cells) + " |")
    lines.append("| Python-level calls per node (profiled) | " + " | ".join(
        f"{r['calls'] / r['nodes']:,.0f}" for _, r in results) + " |")
    lines.append("| lca-own CPU per query, replayed, unprofiled | " + " | ".join(
        f"{1e6 * r['cpu'] / r['queries']:.2f} us" for _, r in results) + " |")
    lines.append("| lca-own CPU per node, replayed, unprofiled | " + " | ".join(
        f"{1e6 * r['cpu'] / r['nodes']:,.0f} us" for _, r in results) + " |")
    return lines


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
    costs, by_phase = [], []
    for name, f, points in cases(args.points):
        result = tally(f, points, args.depth)
        print(row(name, result), flush=True)
        costs.append(cost_row(name, f, result))
        by_phase.append((name, phases(result["log"], f.n, points, args.depth)))
    print(f"\nWhat a call costs (median of 30 `query` calls on 1 and on {PAPER_NODE_ROWS:,} "
          "uniform points; the second is about what a paper-mode node asks in its one call), "
          "and one efficient answer's calls and queries at those prices:\n")
    print(f"| case | 1 row | {PAPER_NODE_ROWS:,} rows | per further row | calls/answer | "
          "calls x fixed cost | queries x row cost |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(costs))
    print("\nlca's own CPU by phase: the same answers replayed on a fresh reconstructor "
          "under cProfile (profiled µs per node built, share of the profiled total; "
          "indented phases are part of the one above), then the replay unprofiled:\n")
    print("\n".join(phase_table(by_phase)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
