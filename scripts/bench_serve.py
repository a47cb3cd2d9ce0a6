"""Served throughput and latency of ``lca serve`` against ``answer_many`` in process.

One ``lca serve`` worker on 127.0.0.1 serves the demo's oracle (``lca demo``:
a 64-leaf random tree over n = 1000 with 5% label noise, efficient preset,
depth 12). Both sides are warmed first with the same points, so every
request below is *warm*: every decision it needs is already in the cache.

For each request shape (points per request) the same list of requests is

* answered in process: sequential ``Reconstructor.answer_many`` calls on the
  warm reconstructor, one per request (the most one thread does; the
  reconstructor is not to be entered by two threads at once);
* sent to the server by 1, 8 and 64 concurrent clients (threads of this
  process, each with its own keep-alive connection), bodies encoded in
  advance, every answer checked against the in-process one; points sent as
  ``signs`` (strings of ``+``/``-``) and as ``points`` (lists of ints).

Reported per cell: requests and points per second, p50/p99 latency, the
mean number of requests per ``answer_many`` call in the server (its
micro-batches), and the CPU used by the server and by this load generator
(two cores in all; when the generator's CPU nears 100% it, not the server,
is the limit). Bounded: ``--requests`` per cell (``--max-seconds`` at most).

    flock /tmp/lca-bench.lock python scripts/bench_serve.py
    flock /tmp/lca-bench.lock python scripts/bench_serve.py --output /tmp/serve.md  # also to a file

Results: docs/benchmarks.md, "What does serving cost?"; earlier runs:
docs/benchmarks_history.md §7.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import subprocess
import sys
import threading
import time
import warnings

import numpy as np

import lca
from lca import derive
from lca.client import Client, _signs
from lca.serve import demo_oracle
from lca.serve.validate import parse_answer

N = 1000
TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def _start_server(log_level: str) -> tuple[subprocess.Popen, int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "lca", "serve", "--oracle", "lca.serve:demo_oracle",
         "--port", "0", "--log-level", log_level],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True)
    port = None
    for line in process.stderr:
        record = json.loads(line)
        if record.get("event") == "listening":
            port = record["port"]
            break
    if port is None:
        raise RuntimeError("lca serve did not start")
    # Keep reading its log, or it blocks on a full pipe.
    threading.Thread(target=lambda: [None for _ in process.stderr], daemon=True).start()
    return process, port


def _in_process(rec, requests, seed):
    latencies = []
    start = time.perf_counter()
    for points in requests:
        begin = time.perf_counter()
        rec.answer_many(points, seed)
        latencies.append(time.perf_counter() - begin)
    return time.perf_counter() - start, np.array(latencies)


def _served(port, bodies, expected, clients, budget, max_seconds):
    latencies = [[] for _ in range(clients)]
    wrong = []
    counter = iter(range(budget))  # next() on a range iterator is atomic under the GIL
    lock = threading.Lock()
    barrier = threading.Barrier(clients + 1)
    stop_at = [0.0]

    def run(slot):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        connection.connect()
        barrier.wait()
        while time.perf_counter() < stop_at[0]:
            with lock:
                index = next(counter, None)
            if index is None:
                break
            body = bodies[index % len(bodies)]
            begin = time.perf_counter()
            connection.request("POST", "/answer", body=body,
                               headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            reply = response.read()
            latencies[slot].append(time.perf_counter() - begin)
            if response.status != 200 or \
                    json.loads(reply)["answers"] != expected[index % len(bodies)]:
                wrong.append(index)
        connection.close()

    threads = [threading.Thread(target=run, args=(slot,)) for slot in range(clients)]
    for thread in threads:
        thread.start()
    stop_at[0] = time.perf_counter() + max_seconds
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    if wrong:
        raise AssertionError(f"{len(wrong)} served answers differ from answer_many's")
    return elapsed, np.concatenate([np.array(each) for each in latencies])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default="1,64", help="points per request (default 1,64)")
    parser.add_argument("--clients", default="1,8,64",
                        help="concurrent clients (default 1,8,64)")
    parser.add_argument("--encodings", default="signs,points",
                        help="how requests carry points (default signs,points)")
    parser.add_argument("--requests", type=int, default=3000,
                        help="requests per cell with 1 point each; shape k sends "
                             "max(200, requests / k**0.5) (default 3000)")
    parser.add_argument("--max-seconds", type=float, default=20.0,
                        help="stop a cell after this long (default 20)")
    parser.add_argument("--warm-points", type=int, default=20_000,
                        help="points answered first on both sides; requests draw from them")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--log-level", default="info",
                        help="the server's --log-level (default info: one line a request)")
    parser.add_argument("--output", default=None, help="also write the table here")
    return parser


def measure(args: argparse.Namespace, progress: bool = True) -> dict:
    """Start a server, warm both sides and measure every cell that ``args`` asks for.

    Returns ``{"params", "warm", "cells", "parsing"}``: the preset and depth,
    the warm-up (points, seconds served and in process, cache entries), one
    dict per cell (shape, encoding, clients, served and in-process rates,
    latencies in ms, requests per batch, CPU shares) and one per shape and
    encoding (ms to read and check one body, a warm ``answer_many`` call's
    median ms). With ``progress``, each cell's table line is printed as it ends.
    """
    warnings.simplefilter("ignore", lca.LowMarginWarning)
    params = lca.Params.efficient(N, depth=12)
    rec = lca.Reconstructor(demo_oracle(), params)
    pool = derive.sample_points(args.seed, "bench-serve", N, args.warm_points)
    process, port = _start_server(args.log_level)
    cells, parsing = [], []
    try:
        client = Client(f"http://127.0.0.1:{port}", chunk=1000)
        start = time.perf_counter()
        served_warm = client.answer(pool, args.seed)
        served_warm_time = time.perf_counter() - start
        start = time.perf_counter()
        local_warm = rec.answer_many(pool, args.seed)
        local_warm_time = time.perf_counter() - start
        assert np.array_equal(served_warm, local_warm), "served answers differ"
        warm = {"points": len(pool), "served_seconds": served_warm_time,
                "local_seconds": local_warm_time,
                "cache_entries": rec.stats.nodes_built + rec.stats.leaves_built}
        for shape in (int(s) for s in args.shapes.split(",")):
            count = min(len(pool) // shape, 2000)
            requests = [pool[i * shape:(i + 1) * shape] for i in range(count)]
            expected = [rec.answer_many(r, args.seed).tolist() for r in requests]
            budget = max(200, int(args.requests / shape ** 0.5))
            order = [requests[i % count] for i in range(budget)]
            local_time, local_lat = _in_process(rec, order, args.seed)
            local_rate = budget / local_time
            for encoding in args.encodings.split(","):
                bodies = [json.dumps({"seed": args.seed, encoding: _signs(r) if encoding ==
                                      "signs" else r.tolist()},
                                     separators=(",", ":")).encode() for r in requests]
                # What the server does per request besides answer_many: parse and check.
                begin = time.perf_counter()
                for body in bodies[:200]:
                    parse_answer(body, N, 4096)
                parse_ms = (time.perf_counter() - begin) / min(200, count) * 1e3
                for clients in (int(c) for c in args.clients.split(",")):
                    health = client.healthz()
                    cpu_server, cpu_client = _cpu_seconds(process.pid), time.process_time()
                    elapsed, lat = _served(port, bodies, expected, clients, budget,
                                           args.max_seconds)
                    cpu_server = _cpu_seconds(process.pid) - cpu_server
                    cpu_client = time.process_time() - cpu_client
                    after = client.healthz()
                    rate = len(lat) / elapsed
                    cells.append({
                        "shape": shape, "encoding": encoding, "clients": clients,
                        "rate": rate, "local_rate": local_rate,
                        "p50_ms": float(np.median(lat) * 1e3),
                        "p99_ms": float(np.percentile(lat, 99) * 1e3),
                        "local_p50_ms": float(np.median(local_lat) * 1e3),
                        "local_p99_ms": float(np.percentile(local_lat, 99) * 1e3),
                        "batch": (after["requests"] - health["requests"]) / max(
                            1, after["batches"] - health["batches"]),
                        "server_cpu": cpu_server / elapsed, "client_cpu": cpu_client / elapsed})
                    if progress:
                        print(_cell_line(cells[-1]), flush=True)
                parsing.append({"shape": shape, "encoding": encoding, "parse_ms": parse_ms,
                                "local_p50_ms": float(np.median(local_lat) * 1e3)})
    finally:
        process.terminate()
        process.wait(30)
    return {"params": {"preset": params.preset, "depth": params.depth}, "warm": warm,
            "cells": cells, "parsing": parsing}


def _cell_line(cell: dict) -> str:
    return (f"| {cell['shape']} | {cell['encoding']} | {cell['clients']} | {cell['rate']:,.0f} | "
            f"{cell['rate'] * cell['shape']:,.0f} | {cell['local_rate']:,.0f} | "
            f"{cell['rate'] / cell['local_rate']:.0%} | {cell['p50_ms']:.2f} | "
            f"{cell['p99_ms']:.2f} | {cell['local_p50_ms']:.3f} / {cell['local_p99_ms']:.3f} | "
            f"{cell['batch']:.1f} | {cell['server_cpu']:.0%} | {cell['client_cpu']:.0%} |")


def report(measured: dict) -> str:
    """The markdown table and notes of :func:`measure`'s results."""
    params, warm = measured["params"], measured["warm"]
    lines = [
        f"lca serve, one worker, on 127.0.0.1; the demo's oracle, {params['preset']} "
        f"preset, depth {params['depth']}; Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs.",
        f"Warm-up: {warm['points']} points answered by the server in "
        f"{warm['served_seconds']:.1f} s (cold, in requests of 1000) and in process in "
        f"{warm['local_seconds']:.1f} s; answers identical. Cache entries in process: "
        f"{warm['cache_entries']} decisions.",
        "",
        "| points/request | encoding | clients | served req/s | served points/s | "
        "in-process req/s | served / in-process | p50 ms | p99 ms | in-process p50 / "
        "p99 ms | requests per batch | server CPU | client CPU |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *map(_cell_line, measured["cells"]),
    ]
    notes = [f"{note['shape']} point(s) per request as {note['encoding']}: reading and "
             f"checking one body (msgspec, numpy) takes {note['parse_ms']:.3f} ms "
             f"in process; one warm answer_many call "
             f"{note['local_p50_ms']:.3f} ms (median)." for note in measured["parsing"]]
    return "\n".join(lines + [""] + notes) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    text = report(measure(args))
    print(text)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
