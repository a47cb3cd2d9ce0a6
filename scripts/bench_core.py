"""Core benchmark: derivation throughput, node time, cold/warm answers, memory.

    python scripts/bench_core.py            # n in {1e2, 1e3, 1e4, 1e5}; a few minutes
    python scripts/bench_core.py --quick    # n in {1e2, 1e3}; seconds

Each n runs in a fresh subprocess so its peak resident memory is its own.
Target: a random 64-leaf tree with 5% label noise; depth 12, p = 0.1, 1,000
score samples per node, 500 leaf samples. Prints a markdown table (medians).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

import lca
from lca import derive, estimate, targets

DEPTH, NOISE, SCORE, LEAF = 12, 0.1, 1000, 500


def _queries(n: int, count: int, seed: int) -> np.ndarray:
    return derive.sample_points(seed, "bench-queries", n, count)


def measure(n: int, repeats: int, warm_queries: int) -> dict:
    f = targets.with_label_noise(targets.random_tree(n=n, leaves=64, seed=1), 0.05, seed=2)
    params = lca.Params.practical(n=n, depth=DEPTH, noise_rate=NOISE,
                                  score_samples=SCORE, leaf_samples=LEAF)
    threshold = params.noise_threshold

    # Derivation alone: x and flip masks for one node's samples.
    times = []
    for rep in range(repeats):
        key = derive.node_key(rep, "score", ())
        start = time.perf_counter()
        for lo in range(0, SCORE, estimate.chunk_rows(n)):
            hi = min(lo + estimate.chunk_rows(n), SCORE)
            derive.uniform_points(key, n, lo, hi)
            derive.flip_masks(key, n, lo, hi, threshold)
        times.append(time.perf_counter() - start)
    coords_per_s = 2 * SCORE * n / statistics.median(times)

    # One internal node, end to end (derivation, unpacking, 2,000 queries, counts).
    node_times = []
    for rep in range(repeats):
        start = time.perf_counter()
        estimate.score_counts(f, rep, ((0, 1),), SCORE, threshold)
        node_times.append(time.perf_counter() - start)

    # Cold answers: a fresh reconstructor per seed.
    points = _queries(n, warm_queries + 20, seed=0)
    cold, cold_queries = [], []
    for rep in range(repeats):
        rec = lca.Reconstructor(f, params)
        start = time.perf_counter()
        explained = rec.explain(points[0], rep)
        cold.append(time.perf_counter() - start)
        cold_queries.append(explained.stats.queries)

    # Warm answers: after warm_queries answers fill the cache near the root.
    warm = repeat = float("nan")
    amortised = float("nan")
    if warm_queries:
        rec = lca.Reconstructor(f, params)
        rec.answer_many(points[:warm_queries], 0)
        warm_times = []
        before = rec.stats.queries
        for z in points[warm_queries:]:
            start = time.perf_counter()
            rec.answer(z, 0)
            warm_times.append(time.perf_counter() - start)
        warm = statistics.median(warm_times)
        amortised = (rec.stats.queries - before) / len(warm_times)
        start = time.perf_counter()
        rec.answer(points[0], 0)
        repeat = time.perf_counter() - start

    return {
        "n": n,
        "coords_per_s": coords_per_s,
        "node_ms": 1e3 * statistics.median(node_times),
        "cold_s": statistics.median(cold),
        "cold_queries": statistics.median(cold_queries),
        "warm_ms": 1e3 * warm,
        "warm_queries": amortised,
        "cached_ms": 1e3 * repeat,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        # Warm runs need ~10 new nodes per answer; skip them where a node costs seconds.
        warm = 100 if args.one <= 10_000 else 0
        print(json.dumps(measure(args.one, repeats=3 if args.one > 10_000 else 5,
                                 warm_queries=warm)))
        return
    sizes = [100, 1000] if args.quick else [100, 1000, 10_000, 100_000]
    rows = []
    for n in sizes:
        out = subprocess.run([sys.executable, __file__, "--one", str(n)], check=True,
                             capture_output=True, text=True).stdout
        rows.append(json.loads(out))
        print(f"n={n} done", file=sys.stderr)
    print(f"depth {DEPTH}, p = {NOISE}, {SCORE} score samples/node, {LEAF} leaf samples; "
          "medians\n")
    print("| n | derived coords/s | time per node | cold answer | queries, cold | "
          "warm answer | queries per warm answer | cached answer | peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['n']:,} | {r['coords_per_s']:.3g} | {r['node_ms']:.1f} ms | "
              f"{r['cold_s']:.3f} s | {r['cold_queries']:,.0f} | {r['warm_ms']:.1f} ms | "
              f"{r['warm_queries']:,.0f} | {r['cached_ms']:.2f} ms | "
              f"{r['peak_rss_mib']:.0f} MiB |")


if __name__ == "__main__":
    main()
