"""Many threaded trials of one surrogate: is it one tree in every thread and process?

Each trial fits a fresh data-mode ``Surrogate`` of a gradient-boosting model on a
generated table (numbers, a small integer column and strings) and lets
``--threads`` threads predict interleaved rows at once while the tree is
built lazily under them; their answers and the saved document must equal a
surrogate fitted and asked alone (``lca.consistency.check_surrogate``), and so
must those of ``--processes`` spawned processes.

    python scripts/surrogate_replicas.py --trials 1000
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingClassifier

from lca.consistency import check_surrogate
from lca.models import Surrogate


def table(rows: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": rng.normal(0, 1, rows).round(3),
                         "y": rng.uniform(-2, 2, rows).round(3),
                         "k": rng.integers(0, 6, rows),
                         "colour": rng.choice(["blue", "green", "red"], rows)})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--rows", type=int, default=600)
    args = parser.parse_args(argv)
    X = table(args.rows, 0)
    numbers = X[["x", "y", "k"]]
    labels = ((X["x"] + 0.5 * X["y"] > 0.3) & (X["colour"] != "red")).astype(int)
    model = GradientBoostingClassifier(random_state=0).fit(numbers, labels)
    start = time.perf_counter()
    report = check_surrogate(Surrogate(model, depth=6), numbers, threads=args.threads,
                             processes=args.processes, trials=args.trials)
    print(report)
    print(f"{time.perf_counter() - start:.1f} s")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
