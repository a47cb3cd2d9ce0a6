"""The ``lca consistency`` command: run replicas, print the report, fail on divergence."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from lca._cli_options import add_noisy_tree_options, int_in, noisy_tree_setup
from lca.consistency import check_consistency

__all__ = ["add_consistency_command"]


def _consistency(args: argparse.Namespace) -> int:
    _, f, params = noisy_tree_setup(args)
    print(f"target: {f.name}")
    print(params.describe())
    start = time.perf_counter()
    report = check_consistency(f, params, seed=args.seed, queries=args.queries,
                               replicas=args.replicas, workers=args.workers,
                               pure_queries=args.pure_queries, dask=args.dask,
                               progress=not args.quiet)
    print(report)
    print(f"time                  {time.perf_counter() - start:.1f} s")
    return 0 if report.ok else 1


def add_consistency_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``lca consistency`` on the ``add_subparsers()`` object of the ``lca`` parser.

    The command exits 0 when every replica agrees, 1 on any divergence; it
    sets ``run`` to its handler, like the other subcommands.
    """
    parser = subparsers.add_parser(
        "consistency",
        help="run replicas that differ in everything that must not matter; compare",
        description="Run replicas of T_seed as separate processes (spawn, forkserver, "
                    "fork; cache on/off; batch, chunk sizes; shuffled order; a pure "
                    "lca.answer replica; Dask if installed), compare every answer and "
                    "every shared decision, and exit 1 on any divergence.")
    parser.add_argument("--replicas", type=int_in(2), default=4,
                        help="process replicas besides Dask (default 4)")
    parser.add_argument("--queries", type=int_in(1), default=10000,
                        help="uniform queries derived from the seed (default 10000)")
    parser.add_argument("--workers", type=int_in(1), default=2,
                        help="worker processes of multi-worker replicas (default 2)")
    parser.add_argument("--pure-queries", type=int_in(1), default=200,
                        help="queries answered by the pure lca.answer replica")
    parser.add_argument("--dask", action=argparse.BooleanOptionalAction, default=None,
                        help="add a Dask replica (default: if dask is installed)")
    add_noisy_tree_options(parser, n=64, leaves=16, depth=6, score_samples=300,
                           leaf_samples=200)
    parser.add_argument("--quiet", action="store_true", help="no per-replica progress")
    parser.set_defaults(run=_consistency)
    return parser


if __name__ == "__main__":
    _parser = argparse.ArgumentParser(prog="lca")
    add_consistency_command(_parser.add_subparsers(dest="command", required=True))
    _args = _parser.parse_args()
    sys.exit(_args.run(_args))
