"""The engine's oracle calls, wall and own time, first-answer floor and memory, in one run.

Measures, for the efficient mode and the paper's estimator at the same depth:

1. **Trained models** (the suite's 8, queried through scikit-learn's own
   ``predict`` via ``lca.models.from_estimator``; no compiled copy): 1,000
   uniform answers at depth 10 and 12 in one ``answer_many`` call each, with
   oracle calls, wall time and the time spent inside the oracle (so lca's own
   time is wall minus oracle). Median of ``--repeats`` runs, each on a fresh
   ``Reconstructor``, after one untimed warm-up run per model and mode.
2. **The eta = 0.2 tier** (the suite's 14 targets at n = 100 with 20% label
   noise): the same measurements.
3. **A cold first answer at n = 10^4** (noise-free 64-leaf random tree):
   time of one ``explain`` on a fresh reconstructor against its *floor*, the
   time to derive the same number of points and evaluate the oracle on them
   in one batch, for several seeds in the same run.
4. **Memory of one cold efficient answer** at n = 10^6 and 10^7 (and the paper
   mode at 10^6): peak RSS of a fresh process that answers one query.

Writes a markdown report (``--out``, default: print). Timings are wall-clock
on a shared machine: compare the ratios of one run, not absolute numbers.

Usage::

    python scripts/bench_engine.py --out docs/benchmarks_engine.md
    python scripts/bench_engine.py --quick          # a smoke run, minutes
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np

import lca
from lca import derive, targets
from lca.suite.cases import MODEL_SPECS, SPECS
from lca.suite.trained import model_oracle

ANSWERS = 1000
DEPTHS = (10, 12)


class Timed(lca.Oracle):
    """An oracle that adds up the wall time spent inside its inner oracle."""

    def __init__(self, inner: lca.Oracle) -> None:
        self.inner, self.n, self.name = inner, inner.n, inner.name
        self.seconds = 0.0

    def query(self, points: np.ndarray) -> np.ndarray:
        start = time.perf_counter()
        values = self.inner.query(points)
        self.seconds += time.perf_counter() - start
        return values


def efficient(n: int, depth: int) -> lca.Params:
    return lca.Params.efficient(n, depth=depth)


def paper(n: int, depth: int) -> lca.Params:
    # The suite's fixed practical preset (lca.suite.cases.SuiteConfig).
    return lca.Params.practical(n, depth, 0.1, 1000, 500)


MODES = {"efficient": efficient, "paper": paper}


@dataclass
class Run:
    wall: float
    oracle: float
    calls: int
    queries: int

    @property
    def own(self) -> float:
        return self.wall - self.oracle


def answer_run(f: lca.Oracle, params: lca.Params, points: np.ndarray) -> Run:
    timed = Timed(f)
    rec = lca.Reconstructor(timed, params)
    start = time.perf_counter()
    rec.answer_many(points, 7)
    wall = time.perf_counter() - start
    return Run(wall, timed.seconds, rec.stats.oracle_calls, rec.stats.queries)


def median_run(f: lca.Oracle, params: lca.Params, points: np.ndarray, repeats: int) -> Run:
    answer_run(f, params, points)  # warm-up: imports, caches of the model
    runs = [answer_run(f, params, points) for _ in range(repeats)]
    return Run(*(statistics.median(getattr(r, name) for r in runs)
                 for name in ("wall", "oracle", "calls", "queries")))


def compare(cases: dict[str, lca.Oracle], repeats: int, progress: bool) -> list[dict]:
    rows = []
    for name, f in cases.items():
        points = derive.sample_points(5, "bench/engine", f.n, ANSWERS)
        for depth in DEPTHS:
            row = {"case": name, "n": f.n, "depth": depth}
            for mode, make in MODES.items():
                row[mode] = median_run(f, make(f.n, depth), points, repeats)
            rows.append(row)
            if progress:
                e, p = row["efficient"], row["paper"]
                print(f"  {name} depth {depth}: calls {e.calls}, wall {e.wall / p.wall:.2f}x, "
                      f"own/oracle {e.own / e.oracle:.2f}", file=sys.stderr, flush=True)
    return rows


def model_cases(keys: list[str]) -> dict[str, lca.Oracle]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings of the training
        return {key: model_oracle(MODEL_SPECS[key], 1)[0] for key in keys}


def noisy_cases(keys: list[str]) -> dict[str, lca.Oracle]:
    return {key: targets.with_label_noise(SPECS[key].build(100, 1), 0.2, 2) for key in keys}


def first_answer(seeds: int) -> list[tuple[int, float, float, float]]:
    """``(queries, cold answer s, floor s, search-order s)`` at n = 10^4 for each seed.

    The *search-order* time is what the efficient mode must do beyond the
    floor for the pairs it searched (the sum of its nodes' ``disagreements``):
    derive their switching priorities (``n`` words each, docs/randomness.md §6)
    and sort the differing coordinates of each by them.
    """
    n = 10_000
    f = targets.random_tree(n=n, leaves=64, seed=1)
    params = lca.Params.efficient(n, depth=12)
    z = derive.sample_points(3, "bench/engine-first", n, seeds)
    out = []
    for seed in range(seeds):
        lca.Reconstructor(f, params).explain(z[seed], 1000 + seed)  # warm-up
        rec = lca.Reconstructor(f, params)
        start = time.perf_counter()
        explanation = rec.explain(z[seed], seed)
        cold = time.perf_counter() - start
        queries = rec.stats.queries
        searched = sum(node.disagreements for node in explanation.nodes)
        key = derive.node_key(seed, "bench/engine-floor", ())
        floors, orders = [], []
        for _ in range(3):
            start = time.perf_counter()
            f(derive.unpack_points(derive.uniform_points(key, n, 0, queries), n))
            floors.append(time.perf_counter() - start)
            start = time.perf_counter()
            priorities = derive.raw_words(key, 1, 0, searched * n).reshape(searched, n)
            np.sort(priorities[:, : n // 2], axis=1)  # about half the coordinates differ
            orders.append(time.perf_counter() - start)
        out.append((queries, cold, min(floors), min(orders)))
    return out


# The child reads its own high-water mark (VmHWM, Linux): getrusage's ru_maxrss
# would report the parent's resident size at fork when that is larger.
_MEMORY_CHILD = """
import sys, time, warnings
import lca
warnings.simplefilter("ignore")

def high_water():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))

n, mode = int(sys.argv[1]), sys.argv[2]
f = lca.targets.random_tree(n=n, leaves=64, seed=1)
params = (lca.Params.efficient(n, depth=12) if mode == "efficient"
          else lca.Params.practical(n, 12, 0.1, 1000, 500))
z = lca.derive.sample_points(3, "bench/engine-memory", n, 1)[0]
before = high_water()
start = time.perf_counter()
e = lca.Reconstructor(f, params).explain(z, 7)
seconds = time.perf_counter() - start
peak = high_water()
print(peak / 1024, before / 1024, seconds, e.stats.queries)
"""


def memory(n: int, mode: str) -> tuple[float, float, float, int]:
    """Peak RSS (MiB), RSS before answering (MiB), seconds, queries: one cold answer."""
    run = subprocess.run([sys.executable, "-c", _MEMORY_CHILD, str(n), mode],
                         capture_output=True, text=True, check=True)
    peak, before, seconds, queries = run.stdout.split()
    return float(peak), float(before), float(seconds), int(queries)


PARTS = ("models", "noise", "first", "memory")


def table(rows: list[dict]) -> list[str]:
    lines = ["| case | n | depth | oracle calls, efficient / paper | wall, efficient / paper "
             "| efficient: lca's own time / oracle time | queries, efficient / paper |",
             "|---|---:|---:|---|---:|---:|---|"]
    for row in rows:
        e, p = row["efficient"], row["paper"]
        lines.append(f"| {row['case']} | {row['n']} | {row['depth']} | {e.calls} / {p.calls} "
                     f"| {e.wall / p.wall:.2f}x ({e.wall:.2f} s / {p.wall:.2f} s) "
                     f"| {e.own / e.oracle:.2f} ({e.own:.2f} s / {e.oracle:.2f} s) "
                     f"| {e.queries:,} / {p.queries:,} |")
    return lines


def summary(rows: list[dict]) -> dict[str, float]:
    return {
        "most calls": max(row["efficient"].calls for row in rows),
        "median wall ratio": statistics.median(row["efficient"].wall / row["paper"].wall
                                               for row in rows),
        "worst wall ratio": max(row["efficient"].wall / row["paper"].wall for row in rows),
        "own <= oracle": sum(row["efficient"].own <= row["efficient"].oracle for row in rows),
        "cases": len(rows),
    }


def first_lines(firsts: list[tuple[int, float, float, float]]) -> list[str]:
    ratios = [cold / floor for _, cold, floor, _ in firsts]
    lines = ["### A cold first answer at n = 10^4 against its floor", "",
             "Floor: deriving the answer's number of points and evaluating the oracle on "
             "them in one batch (best of 3), measured right after the answer. Search "
             "order: what the searches need beyond it, deriving the switching priorities "
             "of the pairs the path's nodes searched (n words each) and sorting half of "
             "each (about half the coordinates of a pair differ).", "",
             "| queries | cold answer | floor | ratio | search order alone | ratio |",
             "|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {q:,} | {cold * 1e3:.1f} ms | {floor * 1e3:.1f} ms | {cold / floor:.1f}x "
              f"| {order * 1e3:.1f} ms | {order / floor:.1f}x |"
              for q, cold, floor, order in firsts]
    lines += ["", f"Median ratio {statistics.median(ratios):.1f}x; the search order alone "
              f"is a median {statistics.median(o / f for _, _, f, o in firsts):.1f}x the "
              "floor.", ""]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="write the markdown report here (default: print)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true",
                        help="two models, three noisy targets, one repeat, no 10^7")
    parser.add_argument("--parts", default=",".join(PARTS),
                        help=f"comma-separated parts to run (default {','.join(PARTS)})")
    args = parser.parse_args()
    parts = args.parts.split(",")
    if not set(parts) <= set(PARTS):
        parser.error(f"--parts must name some of {', '.join(PARTS)}; got {args.parts!r}")
    repeats = 1 if args.quick else args.repeats
    model_keys = list(MODEL_SPECS)[:2] if args.quick else list(MODEL_SPECS)
    noisy_keys = list(SPECS)[:3] if args.quick else list(SPECS)
    start = time.perf_counter()
    models = noisy = firsts = []
    if "models" in parts:
        print("trained models", file=sys.stderr)
        models = compare(model_cases(model_keys), repeats, True)
    if "noise" in parts:
        print("eta = 0.2", file=sys.stderr)
        noisy = compare(noisy_cases(noisy_keys), repeats, True)
    if "first" in parts:
        print("first answer at n = 10^4", file=sys.stderr)
        firsts = first_answer(3 if args.quick else 7)
    memories = {}
    if "memory" in parts:
        print("memory", file=sys.stderr)
        plan = [(10 ** 6, "efficient"), (10 ** 6, "paper")]
        if not args.quick:
            plan.append((10 ** 7, "efficient"))
        for n, mode in plan:
            memories[(n, mode)] = memory(n, mode)
            print(f"  n={n} {mode}: {memories[(n, mode)]}", file=sys.stderr)
    flags = " --quick" * args.quick + (f" --parts {args.parts}" if parts != list(PARTS) else "")
    lines = [f"Generated by `python scripts/bench_engine.py{flags}`"
             f" in {time.perf_counter() - start:.0f} s (lca {lca.__version__}, numpy "
             f"{np.__version__})"
             + (f"; {ANSWERS} uniform answers per run, one `answer_many` call, median of "
                f"{repeats} run(s) on fresh reconstructors after a warm-up"
                if models or noisy else "") + ".", ""]
    for title, rows in (("Trained models, queried through `predict`", models),
                        ("The eta = 0.2 tier (n = 100)", noisy)):
        if not rows:
            continue
        s = summary(rows)
        lines += [f"### {title}", "",
                  f"Most oracle calls per {ANSWERS} answers (efficient): {s['most calls']}; "
                  f"wall time efficient / paper: median {s['median wall ratio']:.2f}x, worst "
                  f"{s['worst wall ratio']:.2f}x; lca's own time at most the oracle's in "
                  f"{s['own <= oracle']} of {s['cases']} runs.", "", *table(rows), ""]
    if firsts:
        lines += first_lines(firsts)
    if memories:
        lines += ["### Memory of one cold answer (peak RSS of a fresh process)", "",
                  "| n | mode | peak RSS | RSS before answering | seconds | queries |",
                  "|---:|---|---:|---:|---:|---:|"]
        lines += [f"| {n:,} | {mode} | {peak:.0f} MiB | {before:.0f} MiB | {seconds:.1f} | "
                  f"{queries:,} |" for (n, mode), (peak, before, seconds, queries)
                  in memories.items()]
        lines.append("")
    text = "\n".join(lines)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            handle.write(text)
    print(text)


if __name__ == "__main__":
    main()
