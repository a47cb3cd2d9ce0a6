"""The ``lca`` command line."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np

from lca import derive, targets
from lca._cli_parallel import add_consistency_command
from lca._progress import Progress
from lca.params import Params
from lca.reconstruct import Reconstructor
from lca.suite import add_bench_command
from lca.tester import add_test_command

__all__ = ["main"]


def _uniform_queries(seed: int, n: int, count: int, purpose: str) -> np.ndarray:
    """Evaluation points derived like every other sample (never global RNG)."""
    key = derive.node_key(seed, purpose, ())
    return derive.unpack_points(derive.uniform_points(key, n, 0, count), n)


def _demo(args: argparse.Namespace) -> int:
    target = targets.random_tree(n=args.n, leaves=args.leaves, seed=args.tree_seed)
    f = targets.with_label_noise(target, rate=args.noise, seed=args.tree_seed + 1)
    params = Params.practical(n=args.n, depth=args.depth, noise_rate=args.noise_rate,
                              score_samples=args.score_samples,
                              leaf_samples=args.leaf_samples)
    print(f"target: random tree, {target.size} leaves, depth {target.depth}, "
          f"n={args.n}, label noise {args.noise}")
    print(params.describe())
    rec = Reconstructor(f, params)
    queries = _uniform_queries(args.seed, args.n, args.queries, "demo-queries")

    start = time.perf_counter()
    first = rec.explain(queries[0], args.seed)
    first_time = time.perf_counter() - start
    answers = np.empty(args.queries, dtype=np.int8)
    answers[0] = first.label
    chunk = 50
    with Progress(args.queries, "answering", enabled=not args.quiet) as bar:
        bar.update(1)
        for lo in range(1, args.queries, chunk):
            hi = min(lo + chunk, args.queries)
            answers[lo:hi] = rec.answer_many(queries[lo:hi], args.seed)
            bar.update(hi - lo)
    total_time = time.perf_counter() - start

    err_f = float(np.mean(answers != f(queries)))
    err_clean = float(np.mean(answers != target(queries)))
    stats = rec.stats
    print(f"error vs f            {err_f:.4f}  ({args.queries} uniform queries)")
    print(f"error vs clean tree   {err_clean:.4f}")
    print(f"queries, first answer {first.stats.queries}")
    print(f"queries per answer    {stats.queries / args.queries:.1f}  (amortised, "
          f"{stats.nodes_built} nodes and {stats.leaves_built} leaves built, "
          f"{stats.cache_hits} cache hits)")
    print(f"time, first answer    {first_time * 1e3:.1f} ms")
    print(f"time per answer       {total_time / args.queries * 1e3:.2f} ms (amortised)")
    print(f"explained first query {first}")
    return 0


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lca", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="reconstruct a noisy random tree and answer queries")
    demo.add_argument("--n", type=int, default=1000, help="variables (default 1000)")
    demo.add_argument("--leaves", type=int, default=64, help="leaves of the target tree")
    demo.add_argument("--noise", type=float, default=0.05, help="label noise rate of f")
    demo.add_argument("--seed", type=int, default=7, help="reconstruction seed")
    demo.add_argument("--tree-seed", type=int, default=1, help="seed of the target")
    demo.add_argument("--queries", type=int, default=1000, help="uniform queries to answer")
    demo.add_argument("--depth", type=int, default=12)
    demo.add_argument("--noise-rate", type=float, default=0.1, help="p of the estimator")
    demo.add_argument("--score-samples", type=int, default=1000)
    demo.add_argument("--leaf-samples", type=int, default=500)
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    demo.set_defaults(run=_demo)
    add_consistency_command(sub)
    add_test_command(sub)
    add_bench_command(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lca`` command."""
    args = _build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (TypeError, ValueError) as error:
        print(f"lca {args.command}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
