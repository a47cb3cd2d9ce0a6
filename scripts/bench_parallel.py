"""Answers per second with 1 and 2 worker processes against one process, and when a pool pays.

Cold: fresh replicas (a new pool, start-up included; a new Reconstructor for
the single process). Warm: the same replicas answer a second batch of new
queries. The speed-up is the single process's cold time over the pool's, both
measured in this run. Also reports the fraction of node computations that
rebuilt a node some other replica (or the router) built in the same batch.

When a pool pays: for batches of growing size, one process (a fresh
Reconstructor) against a fresh pool (start-up included) and against a pool
already started (a new seed each batch, so its caches hold nothing of it);
the pool's start-up is the fresh pool's time for one answer less one
process's. Medians of ``--repeats`` runs, all in this run.

    python scripts/bench_parallel.py                      # efficient mode, n=1000
    python scripts/bench_parallel.py --output docs/benchmarks_parallel.md

Every configuration's answers are checked against the single process's, and
each pool's ``busy_seconds`` against its workers' CPU time read from ``/proc``
(Linux): they add up to at most that time.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from bench_local import code_commit

from lca import derive, targets
from lca.parallel import ReplicaPool
from lca.params import Params
from lca.reconstruct import Reconstructor


def _queries(seed: int, n: int, count: int, purpose: str) -> np.ndarray:
    return derive.sample_points(seed, purpose, n, count)


def _single(f, params, cold, warm, seed):
    start, cpu = time.perf_counter(), time.process_time()
    rec = Reconstructor(f, params)
    cold_answers = rec.answer_many(cold, seed)
    cold_time = time.perf_counter() - start
    cold_cpu = time.process_time() - cpu
    built = rec.stats.nodes_built + rec.stats.leaves_built
    start = time.perf_counter()
    warm_answers = rec.answer_many(warm, seed)
    warm_time = time.perf_counter() - start
    return cold_answers, warm_answers, cold_time, warm_time, built, 0.0, cold_cpu


def _process_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` so far, from ``/proc`` (Linux)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pool(f, params, cold, warm, seed, workers, routing):
    start = time.perf_counter()
    with ReplicaPool(f, params, workers=workers) as pool:
        first = pool.answer(cold, seed, routing=routing)
        cold_time = time.perf_counter() - start
        # busy_seconds is the workers' CPU time answering, so together at most
        # their processes' whole CPU time (start-up included), to a clock tick each.
        if os.path.exists("/proc/self/stat"):
            busy = sum(first.busy_seconds.values())
            cpu = sum(_process_cpu(pid) for pid in pool.pids)
            if busy > cpu + len(pool.pids) / os.sysconf("SC_CLK_TCK"):
                raise AssertionError(f"busy_seconds add up to {busy:.3f} s, more than the "
                                     f"workers' CPU time {cpu:.3f} s")
        start = time.perf_counter()
        second = pool.answer(warm, seed, routing=routing)
        warm_time = time.perf_counter() - start
    return (first.answers, second.answers, cold_time, warm_time, first.node_computations,
            first.duplicated_fraction, max(first.busy_seconds.values()))


PAYS_SIZES = (1, 10, 30, 100, 300, 1000, 3000)


def _median_time(run, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def when_a_pool_pays(f, params, n: int, workers: int, repeats: int,
                     sizes: tuple[int, ...] = PAYS_SIZES) -> list[tuple[int, float, float, float]]:
    """``(batch, one process s, fresh pool s, started pool s)`` per batch size: medians
    of ``repeats``, each batch on its own seed (so no cache helps), answers checked."""
    with ReplicaPool(f, params, workers=workers) as started:
        return [_pays_row(f, params, n, workers, repeats, size, started) for size in sizes]


def _pays_row(f, params, n: int, workers: int, repeats: int, size: int,
              started: ReplicaPool) -> tuple[int, float, float, float]:
    print(f"when a pool pays: {size} answers ...", file=sys.stderr, flush=True)
    points = _queries(size, n, size, "bench-parallel-pays")
    seeds = iter(range(1000 * size, 1000 * size + 3 * repeats))
    expected = Reconstructor(f, params).answer_many(points, 0)
    assert np.array_equal(started.answer(points, 0).answers, expected)

    def single() -> None:
        Reconstructor(f, params).answer_many(points, next(seeds))

    def fresh() -> None:
        with ReplicaPool(f, params, workers=workers) as pool:
            pool.answer(points, next(seeds))

    def warm() -> None:
        started.answer(points, next(seeds))

    return (size, _median_time(single, repeats), _median_time(fresh, repeats),
            _median_time(warm, repeats))


def pays_lines(rows: list[tuple[int, float, float, float]], workers: int) -> list[str]:
    """The markdown of :func:`when_a_pool_pays`: a table and the break-even sizes."""
    startup = rows[0][2] - rows[0][1]
    fresh_even = next((size for size, one, fresh, _ in rows if fresh < one), None)
    warm_even = next((size for size, one, _, warm in rows if warm < one), None)

    def even(size: int | None) -> str:
        return f"from {size:,} answers" if size is not None else \
            f"at none of these sizes (up to {rows[-1][0]:,})"

    lines = ["", f"#### When a pool of {workers} workers pays", "",
             f"Starting the pool costs about {startup:.2f} s (a fresh pool's time for one "
             "answer less one process's). A fresh pool (start-up included) is faster than "
             f"one process {even(fresh_even)}; a pool already started (a new seed, so no "
             f"cached node helps) {even(warm_even)}. Medians; each batch on its own seed.",
             "", "| answers | one process s | fresh pool s | started pool s "
             "| fresh / one | started / one |", "|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {size:,} | {one:.3f} | {fresh:.3f} | {warm:.3f} | {fresh / one:.2f} "
              f"| {warm / one:.2f} |" for size, one, fresh, warm in rows]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", choices=("efficient", "paper"), default="efficient",
                        help="Params.efficient (the default preset) or the paper's estimator")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--leaves", type=int, default=64)
    parser.add_argument("--depth", type=int, default=12)
    parser.add_argument("--noise-rate", type=float, default=0.1, help="paper mode")
    parser.add_argument("--score-samples", type=int, default=1000, help="paper mode")
    parser.add_argument("--leaf-samples", type=int, default=500, help="paper mode")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--max-workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3, help="runs per size (when a pool "
                                                                "pays), the median reported")
    parser.add_argument("--output", help="also write the markdown to this file")
    args = parser.parse_args(argv)
    commit = code_commit(None if args.output is None else Path(args.output))
    date = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")

    f = targets.with_label_noise(targets.random_tree(args.n, args.leaves, 1), 0.05, 2)
    params = Params.efficient(args.n, depth=args.depth) if args.mode == "efficient" else \
        Params.practical(n=args.n, depth=args.depth, noise_rate=args.noise_rate,
                         score_samples=args.score_samples, leaf_samples=args.leaf_samples)
    cold = _queries(args.seed, args.n, args.queries, "bench-parallel-cold")
    warm = _queries(args.seed, args.n, args.queries, "bench-parallel-warm")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")

    configs = [("one process", 0, "-")]
    for workers in range(1, args.max_workers + 1):
        configs.append((f"pool, {workers} worker{'s' * (workers > 1)}", workers, "prefix"))
    configs.append((f"pool, {args.max_workers} workers", args.max_workers, "chunk"))

    rows = []
    reference = None
    for label, workers, routing in configs:
        print(f"running: {label}, routing {routing} ...", file=sys.stderr, flush=True)
        if workers == 0:
            result = _single(f, params, cold, warm, args.seed)
        else:
            result = _pool(f, params, cold, warm, args.seed, workers, routing)
        (cold_answers, warm_answers, cold_time, warm_time, computations, duplicated,
         busiest) = result
        if reference is None:
            reference = (cold_answers, warm_answers)
        assert np.array_equal(cold_answers, reference[0]), label
        assert np.array_equal(warm_answers, reference[1]), label
        rows.append((label, routing, cold_time, warm_time, computations, duplicated,
                     busiest))

    base_cold, base_warm = rows[0][2], rows[0][3]
    q = args.queries
    settings = (f"the efficient preset, depth {args.depth}" if args.mode == "efficient" else
                f"the paper's estimator, depth {args.depth}, p = {params.noise_rate:.4g}, "
                f"{args.score_samples} score samples, {args.leaf_samples} leaf samples")
    lines = [
        f"### Parallel answering: n = {args.n}, {q} uniform queries "
        f"(`scripts/bench_parallel.py{'' if args.mode == 'efficient' else ' --mode paper'}`)",
        "",
        f"Run on {date} at commit `{commit}`. "
        f"Target: noisy random tree ({args.leaves} leaves, label noise 0.05); "
        f"{settings}. Python {platform.python_version()}, "
        f"numpy {np.__version__}, {os.cpu_count()} CPUs, load average {load:.2f} at start. "
        "Cold = fresh replicas, pool start-up (spawn) included; warm = the same "
        f"replicas, a second batch of {q} new queries. Speed-up is against one "
        "process in the same run. Duplicated = share of node computations in the "
        "cold batch that rebuilt a node another replica or the router built. "
        "Busiest CPU s = CPU time of the busiest process on the cold batch (the "
        "one process's own; the pool's busiest worker, start-up excluded): the "
        "critical path without contention from other processes on the machine.",
        "",
        "| configuration | routing | cold s | cold answers/s | cold speed-up "
        "| warm s | warm answers/s | warm speed-up | node computations | duplicated "
        "| busiest CPU s |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, routing, cold_time, warm_time, computations, duplicated, busiest in rows:
        lines.append(
            f"| {label} | {routing} | {cold_time:.2f} | {q / cold_time:.0f} "
            f"| {base_cold / cold_time:.2f}x | {warm_time:.2f} | {q / warm_time:.0f} "
            f"| {base_warm / warm_time:.2f}x | {computations} | {duplicated:.1%} "
            f"| {busiest:.2f} |")
    lines += pays_lines(when_a_pool_pays(f, params, args.n, args.max_workers, args.repeats),
                        args.max_workers)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        with open(args.output, "w") as out:
            out.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
