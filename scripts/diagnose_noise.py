"""The noise-adaptive cap's targets at the efficient defaults, against the suite's last run.

Reruns the efficient mode (``Params.efficient`` defaults, the suite's depth
caps, target seed, noise seed, reconstruction seed and evaluation points)
on every case of the suite and reads the paper mode's and the peer's
results from ``docs/benchmarks_suite_efficient.json`` (their rules did not
change). Prints, as markdown:

1. the η = 0.2 cases: error against f beside the peer's best, and the
   first-answer queries beside the paper mode's;
2. the median first-answer saving over the whole suite (paper mode's
   first-answer queries / the efficient mode's, each case's first
   evaluation point answered cold), before (the JSON's efficient run) and
   now, and the cases whose error is above the paper mode's 95% interval;
3. the trained-model cases: error with its 95% Wilson interval beside the
   paper mode's;
4. the warning: on which cases ``LowMarginWarning`` fires (the noise-free
   ones, and pure-noise targets added here: a constant function under label
   noise 0.5, in both modes), with ``AnswerStats.guesswork_answers``;
5. certified early leaves (``AnswerStats.certified_leaves``) on functions
   that are constant on most of the cube.

    python scripts/diagnose_noise.py        # about 10 minutes on 2 cores
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

import lca
from lca import derive, targets
from lca.suite.cases import full_config
from lca.suite.compare import _crossover_value
from lca.suite.measure import EXACT_MAX_N, all_points, case_oracles, measure_ours, peer_needed
from lca.suite.stats import crossover, wilson_interval

JSON = Path(__file__).resolve().parent.parent / "docs" / "benchmarks_suite_efficient.json"


def answered(f: lca.Oracle, params: lca.Params, points: np.ndarray,
             seed: int) -> tuple[np.ndarray, lca.AnswerStats, bool, int]:
    """Answers, the stats of the call, whether it warned, and the first answer's queries."""
    first = lca.Reconstructor(f, params).explain(points[0], seed).stats.queries
    rec = lca.Reconstructor(f, params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        answers = rec.answer_many(points, seed)
    warned = any(issubclass(w.category, lca.LowMarginWarning) for w in caught)
    return answers, rec.last_stats, warned, first


def main() -> None:
    suite = {c["case"]: c for c in json.loads(JSON.read_text())["cases"]}
    config = full_config()
    noisy_rows, model_rows, warning_rows = [], [], []
    savings_before, savings_now = [], []
    no_worse = []  # (case, efficient error, paper mode's upper 95% end)
    crossovers_before, crossovers_now = [], []
    for case in config.cases:
        clean, f, info = case_oracles(case, config)
        points = derive.sample_points(config.eval_seed, "bench/eval", case.n,
                                      config.eval_points)
        f_values, clean_values = f(points), clean(points)
        params = lca.Params.efficient(case.n, depth=config.depth_for(case.n))
        # Measured as the suite measures a mode (answers in the suite's chunks).
        ours = measure_ours(f, clean, params, points, f_values, clean_values, config,
                            all_points(case.n) if case.n <= EXACT_MAX_N else None)
        stored = suite[case.name]
        rows = stored["peer"]["rows"]
        ours["crossover"] = crossover(
            [(c["answers"], c["queries"]) for c in ours["cumulative"]],
            peer_needed(stored["peer"], ours["err_f"]["value"]),
            rows[-1]["queries"] if rows else None)
        crossovers_before.append(_crossover_value(stored["ours"]["efficient"]))
        crossovers_now.append(_crossover_value(ours))
        error, first = ours["err_f"]["value"], ours["first_queries"]
        wrong = round(error * len(points))
        warned = "LowMarginWarning" in ours["warnings"]
        paper = stored["ours"]["fixed"]
        savings_before.append(paper["first_queries"] / stored["ours"]["efficient"]["first_queries"])
        savings_now.append(paper["first_queries"] / first)
        no_worse.append((case.name, error, paper["err_f"]["high"]))
        total = ours["cumulative"][-1]["queries"]
        if case.noise == 0.2:
            peer = min(row["err_f"]["value"] for row in rows)
            noisy_rows.append(
                f"| {case.name} | {error:.4f} | {peer:.4f} | {error - peer:+.4f} | "
                f"{first:,} | {paper['first_queries'] / first:.2f}× | {total:,} |")
        if info is not None:
            low, high = wilson_interval(wrong, len(points))
            worse = low > paper["err_f"]["high"]
            model_rows.append(
                f"| {case.name} | {error:.4f} [{low:.4f}, {high:.4f}] | "
                f"{paper['err_f']['value']:.4f} [{paper['err_f']['low']:.4f}, "
                f"{paper['err_f']['high']:.4f}] | {'yes' if worse else 'no'} | "
                f"{ours['early_leaves']} / {ours['certified_leaves']} |")
        if case.noise == 0:
            warning_rows.append((case.name, warned, ours["guesswork_answers"], len(points)))
        print(f"  {case.name}: error {error:.4f}, first {first}, warned {warned}",
              flush=True)

    print("\n### η = 0.2 at the defaults\n")
    print("| case | error vs f | peer's best | − peer's best | queries, first answer | "
          "× fewer than the paper mode | queries, all answers |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(noisy_rows))
    print(f"\nMedian first-answer saving over the suite's {len(savings_now)} cases: "
          f"{np.median(savings_before):.2f}× before (JSON), {np.median(savings_now):.2f}× now.")
    before = [v for v in crossovers_before if v is not None]
    now = [v for v in crossovers_now if v is not None]
    print(f"Median crossover K against the peer (lca.suite.compare's rule): "
          f"{np.median(before):.1f} before (JSON, {len(before)} cases), "
          f"{np.median(now):.1f} now ({len(now)} cases).")
    worse = [f"{name} ({error:.4f} > {high:.4f})" for name, error, high in no_worse
             if error > high]
    print(f"\nError no worse than the upper end of the paper mode's 95% interval on "
          f"{len(no_worse) - len(worse)} of {len(no_worse)} cases; above it: "
          f"{', '.join(worse) or 'none'}.")
    print("\n### Trained models: efficient against paper mode (95% Wilson intervals)\n")
    print("| case | efficient error | paper-mode error | worse beyond the interval | "
          "early / certified leaves |")
    print("|---|---:|---:|---|---:|")
    print("\n".join(model_rows))
    fired = [row for row in warning_rows if row[1]]
    print(f"\n### LowMarginWarning\n\nNoise-free suite cases: fired on {len(fired)} of "
          f"{len(warning_rows)}; most guessed answers on one case: "
          f"{max(row[2] for row in warning_rows)} of {warning_rows[0][3]}.\n")
    print("| pure-noise target | mode | warned | guessed answers |\n|---|---|---|---:|")
    for n in (11, 100, 1000):
        f = targets.with_label_noise(lca.from_callable(lambda x: 1, n), 0.5, 2)
        points = derive.sample_points(config.eval_seed, "bench/eval", n, 2000)
        depth = config.depth_for(n)
        for mode, params in (
                ("efficient", lca.Params.efficient(n, depth=depth)),
                ("paper", lca.Params.practical(n, min(depth, 8), 0.1, 400, 200))):
            _, stats, warned, _ = answered(f, params, points, config.seed)
            print(f"| constant + noise 0.5, n={n} | {mode} | {'yes' if warned else 'no'} | "
                  f"{stats.guesswork_answers} of {len(points)} |")
    print("\n### Certified early leaves at the defaults\n")
    print("| target | early leaves | certified | error vs f |\n|---|---:|---:|---:|")
    for name, n, make in (
            ("AND of 3 (7/8 constant)", 100, lambda n: lca.from_callable(
                lambda x: 1 if (x[:3] == 1).all() else -1, n)),
            ("tribes3x3", 100, lambda n: targets.tribes(n, 3, 3, seed=1)),
            ("tree16-iid", 100, lambda n: targets.random_tree(n, 16, seed=1))):
        f = make(n)
        points = derive.sample_points(config.eval_seed, "bench/eval", n, 2000)
        answers, stats, _, _ = answered(f, lca.Params.efficient(n), points, config.seed)
        print(f"| {name}, n={n} | {stats.early_leaves} | {stats.certified_leaves} | "
              f"{np.mean(answers != f(points)):.4f} |")


if __name__ == "__main__":
    main()
