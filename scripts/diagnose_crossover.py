"""Where the crossover K went after the noise-adaptive cap (docs/benchmarks_history.md §6).

For every case of the suite, at the defaults and the suite's depth caps,
seeds and evaluation points (as ``scripts/diagnose_noise.py``):

1. the crossover K against the peer (``lca.suite.compare``'s rule) before
   (the efficient run stored in ``docs/benchmarks_suite_efficient.json``)
   and now, with the total queries of answering the evaluation points and the
   peer's queries needed to reach the mode's error, so a fall in K reads as
   more queries or as a better error;
2. for the noise-free and eta = 0.05 cases, the total queries again with
   the noisy round switched off (``lca.search.rules.NOISY_ROUNDS = 0``), which
   separates the noisy round's cost from that of the probes and the other
   rule changes.

    flock /tmp/lca-bench.lock python scripts/diagnose_crossover.py   # about 15 minutes
"""

from __future__ import annotations

import json
import statistics
import warnings
from pathlib import Path

import lca
from lca import derive
from lca.search import rules
from lca.suite.cases import full_config
from lca.suite.compare import _crossover_value
from lca.suite.measure import EXACT_MAX_N, all_points, case_oracles, measure_ours, peer_needed
from lca.suite.stats import crossover

JSON = Path(__file__).resolve().parent.parent / "docs" / "benchmarks_suite_efficient.json"


def total_queries(f: lca.Oracle, params: lca.Params, points, seed: int) -> int:
    rec = lca.Reconstructor(f, params)
    rec.answer_many(points, seed)
    return rec.stats.queries


def main() -> None:
    warnings.simplefilter("ignore", lca.LowMarginWarning)
    suite = {c["case"]: c for c in json.loads(JSON.read_text())["cases"]}
    config = full_config()
    rows = []
    for case in config.cases:
        clean, f, _ = case_oracles(case, config)
        points = derive.sample_points(config.eval_seed, "bench/eval", case.n,
                                      config.eval_points)
        params = lca.Params.efficient(case.n, depth=config.depth_for(case.n))
        ours = measure_ours(f, clean, params, points, f(points), clean(points), config,
                            all_points(case.n) if case.n <= EXACT_MAX_N else None)
        stored = suite[case.name]
        peer, before = stored["peer"], stored["ours"]["efficient"]
        ours["crossover"] = crossover(
            [(c["answers"], c["queries"]) for c in ours["cumulative"]],
            peer_needed(peer, ours["err_f"]["value"]),
            peer["rows"][-1]["queries"] if peer["rows"] else None)
        row = {"case": case.name, "noise": case.noise,
               "k": (_crossover_value(before), _crossover_value(ours)),
               "queries": (before["cumulative"][-1]["queries"],
                           ours["cumulative"][-1]["queries"]),
               "needed": (peer_needed(peer, before["err_f"]["value"]),
                          peer_needed(peer, ours["err_f"]["value"]))}
        if case.noise in (0.0, 0.05):
            rules.NOISY_ROUNDS, kept = 0, rules.NOISY_ROUNDS
            try:
                row["without round"] = total_queries(f, params, points, config.seed)
            finally:
                rules.NOISY_ROUNDS = kept
        rows.append(row)
        print(f"  {case.name}: K {row['k'][0]} -> {row['k'][1]}, queries "
              f"{row['queries'][0]:,} -> {row['queries'][1]:,}", flush=True)

    def ratio(row: dict) -> float:
        return row["queries"][1] / row["queries"][0]

    print("\n| noise | cases | median K before | median K now | K fell in | of those, the "
          "peer's queries needed unchanged | median queries now / before |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for noise in sorted({row["noise"] for row in rows}) + [None]:
        group = [row for row in rows if noise is None or row["noise"] == noise]
        known = [row for row in group if None not in row["k"]]
        fell = [row for row in known if row["k"][1] < row["k"][0]]
        print(f"| {'all' if noise is None else noise} | {len(group)} | "
              f"{statistics.median(r['k'][0] for r in known):.1f} | "
              f"{statistics.median(r['k'][1] for r in known):.1f} | {len(fell)} | "
              f"{sum(r['needed'][0] == r['needed'][1] for r in fell)} | "
              f"{statistics.median(ratio(r) for r in group):.2f} |")
    split = [row for row in rows if "without round" in row]
    print(f"\nNoise-free and eta = 0.05 cases ({len(split)}): total queries now / before, "
          f"median {statistics.median(ratio(r) for r in split):.2f}; with the noisy round "
          f"off, {statistics.median(r['without round'] / r['queries'][0] for r in split):.2f}.")


if __name__ == "__main__":
    main()
