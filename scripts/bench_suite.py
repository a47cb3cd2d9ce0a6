"""Regenerate the benchmark suite: docs/benchmarks_suite.md and docs/img/suite_*.png.

    python scripts/bench_suite.py                 # full grid, efficient mode (the default)
    python scripts/bench_suite.py --mode fixed    # the paper's estimator (~30 min, 2 workers)
    python scripts/bench_suite.py --mode both     # fixed and adaptive side by side
    python scripts/bench_suite.py --quick         # seconds; prints the report, writes nothing
    python scripts/bench_suite.py --mode efficient,fixed   # efficient against the paper's

    # the comparison on the n = 100, eta = 0.2 and trained-model tiers only:
    python scripts/bench_suite.py --mode efficient,fixed --tiers n=100,eta=0.2,models

Same as ``lca bench`` (needs ``pip install 'lca[bench]'``), with the default
output paths resolved against this checkout instead of the working directory.
Without ``--mode`` it measures the recommended efficient preset; docs/benchmarks_suite.md
holds the paper's fixed-q estimator (``--mode fixed``).
The suite itself lives in ``lca/suite/`` (the ``lca.suite`` package).
"""

from __future__ import annotations

import argparse
import os
import sys

from lca.suite import configure_parser, run_bench_command

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> int:
    parser = configure_parser(argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter))
    return run_bench_command(parser.parse_args(), root=ROOT)


if __name__ == "__main__":
    sys.exit(main())
