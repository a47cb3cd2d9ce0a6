"""The suite's plots (PNG, matplotlib's Agg canvas, no pyplot global state)."""

from __future__ import annotations

import math
import os
from typing import Any

from lca import estimate
from lca.suite.report import scaling_summary
from lca.suite.run import SuiteResult
from lca.suite.text import exponent_text, number_text
from lca.suite.trained import BENCH_EXTRA


def _figure() -> Any:
    """matplotlib's Figure class (Agg canvas, no pyplot global state)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError(
            f"lca's benchmark suite needs matplotlib for its plots: {BENCH_EXTRA}"
        ) from error

    def new(**kwargs: Any) -> Any:
        figure = Figure(**kwargs)
        FigureCanvasAgg(figure)
        return figure
    return new


def _plot_cases(result: SuiteResult) -> list[dict[str, Any]]:
    chosen = [case for case in result.cases if case["n"] == result.config.plot_n]
    return (chosen or result.cases)[:16]


def _grid(count: int) -> tuple[int, int]:
    cols = min(4, max(1, count))
    return math.ceil(count / cols), cols


_MODE_COLOURS = {"fixed": "tab:blue", "adaptive": "tab:green", "efficient": "tab:purple"}


def _shared_legend(figure: Any) -> None:
    """One legend below all panels, each label once."""
    seen: dict[str, Any] = {}
    for axes in figure.axes:
        for handle, label in zip(*axes.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    if seen:
        figure.legend(list(seen.values()), list(seen), loc="outside lower center",
                      ncols=min(4, len(seen)), fontsize=8)


def _plot_error_vs_queries(result: SuiteResult, path: str) -> None:
    cases = _plot_cases(result)
    rows, cols = _grid(len(cases))
    figure = _figure()(figsize=(4 * cols, 3.2 * rows), layout="constrained")
    for index, case in enumerate(cases):
        axes = figure.add_subplot(rows, cols, index + 1)
        peer = case["peer"]["rows"]
        axes.errorbar([r["queries"] for r in peer], [r["err_f"]["value"] for r in peer],
                      yerr=[[r["err_f"]["value"] - r["err_f"]["low"] for r in peer],
                            [r["err_f"]["high"] - r["err_f"]["value"] for r in peer]],
                      marker="s", color="tab:orange", label="peer (N queries)")
        for mode, ours in case["ours"].items():
            queries = [c["queries"] for c in ours["cumulative"]]
            err = ours["err_f"]["value"]
            axes.plot(queries, [err] * len(queries), marker="o", linestyle="--",
                      color=_MODE_COLOURS.get(mode, "tab:blue"),
                      label=f"ours, {mode} "
                            f"(K = 1 … {number_text(ours['cumulative'][-1]['answers'])})")
        if (case["opt"]["value"] or 0) > 0:
            axes.axhline(case["opt"]["value"], color="grey", linestyle=":",
                         label="opt" if case["opt"]["kind"] == "exact" else "opt bound η")
        axes.set_xscale("log")
        axes.set_ylim(bottom=0)
        axes.set_title(f"{case['key']}, n={case['n']}, η={case['noise']:g}", fontsize=9)
        axes.set_xlabel("queries to f")
        axes.set_ylabel("error vs f")
    _shared_legend(figure)
    figure.suptitle("Error against f vs queries spent\n(peer: learns the whole tree from "
                    "N queries; ours: answers K points, one fixed tree)", fontsize=10)
    figure.savefig(path, dpi=110)


def _plot_scaling(result: SuiteResult, path: str) -> None:
    figure = _figure()(figsize=(11, 4.2), layout="constrained")
    queries_axes = figure.add_subplot(1, 2, 1)
    time_axes = figure.add_subplot(1, 2, 2)
    rows = sorted(result.scaling, key=lambda r: r["n"])
    sizes = [row["n"] for row in rows]
    config = result.config
    exponents = scaling_summary(result)
    for mode in result.modes if rows else ():
        modes = [row["modes"][mode] for row in rows]
        colour = _MODE_COLOURS.get(mode, "tab:blue")
        queries_axes.plot(sizes, [m["queries"] for m in modes], marker="o", color=colour,
                          label=f"ours, {mode}: cold answer")
        fit = exponents.get(mode, {}).get("time")
        growth = "" if fit is None else f": n^{exponent_text(fit)}"
        time_axes.plot(sizes, [m["seconds"] for m in modes], marker="o", color=colour,
                       label=f"ours, {mode}{growth}")
    if rows:
        _plot_floor_and_prediction(queries_axes, result, rows)
    for mode in result.modes:
        _plot_amortised(queries_axes, result, mode)
    for axes in (queries_axes, time_axes):
        if not any(len(line.get_xdata()) for line in axes.get_lines()):
            axes.text(0.5, 0.5, "no scaling points in this run", ha="center",
                      transform=axes.transAxes)
            continue
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlabel("n (variables)")
        axes.legend(fontsize=7)
    queries_axes.set_ylabel("queries per answer")
    time_axes.set_ylabel("seconds per cold answer")
    figure.suptitle(f"Scaling in n: {config.scaling_spec}, η = {config.scaling_noise:g}")
    figure.savefig(path, dpi=110)


def _plot_floor_and_prediction(axes: Any, result: SuiteResult,
                               rows: list[dict[str, Any]]) -> None:
    """The floor of the first mode's scaling points, and the queries a fixed accuracy needs."""
    config = result.config
    sizes = [row["n"] for row in rows]
    first = rows[0]["modes"][result.modes[0]]
    axes.plot(sizes, [row["modes"][result.modes[0]]["floor"] for row in rows],
              marker="^", color="black", label="floor: log2 n per internal node")
    # Hoeffding + union bound (Theorem "Score estimator"): q grows as ln(2n/delta).
    delta = 0.05
    q0 = config.score_samples
    tau = math.sqrt(2 * math.log(2 * sizes[0] / delta) / q0)
    internal = first["internal_nodes"]
    predicted = [internal * 2 * estimate.samples_for_accuracy(tau, delta, n)
                 + config.leaf_samples for n in sizes]
    axes.plot(sizes, predicted, linestyle="--", color="grey",
              label="predicted: q sized for fixed accuracy (∝ ln n)")


def _plot_amortised(axes: Any, result: SuiteResult, mode: str) -> None:
    """Queries per answer of ``mode``, amortised, on the scaling target's cases with n >= 100."""
    config = result.config
    points = sorted((case["n"], case["ours"][mode]) for case in result.cases
                    if case["key"] == config.scaling_spec
                    and case["noise"] == config.scaling_noise
                    and mode in case["ours"] and case["n"] >= 100)
    if points:
        axes.plot([n for n, _ in points],
                  [o["cumulative"][-1]["queries"] / o["cumulative"][-1]["answers"]
                   for _, o in points],
                  marker="x", linestyle=":",
                  color=_MODE_COLOURS.get(mode, "tab:blue"),
                  label=f"ours, {mode}: amortised over "
                        f"{number_text(points[0][1]['cumulative'][-1]['answers'])}")


def _plot_crossover(result: SuiteResult, path: str) -> None:
    cases = _plot_cases(result)
    rows, cols = _grid(len(cases))
    figure = _figure()(figsize=(4 * cols, 3.2 * rows), layout="constrained")
    for index, case in enumerate(cases):
        axes = figure.add_subplot(rows, cols, index + 1)
        for mode, ours in case["ours"].items():
            colour = _MODE_COLOURS.get(mode, "tab:blue")
            ks = [c["answers"] for c in ours["cumulative"]]
            axes.plot(ks, [c["queries"] for c in ours["cumulative"]], marker="o",
                      color=colour, label=f"ours, {mode}: queries for K answers")
            needed = ours["peer_needed"]
            if needed is not None:
                axes.axhline(needed, color="tab:orange", linestyle="--",
                             label="peer: N to reach our error")
            elif case["peer"]["rows"]:
                axes.axhline(case["peer"]["rows"][-1]["queries"], color="tab:red",
                             linestyle=":", label="peer: largest N, still worse")
            cross = ours["crossover"]
            if cross["relation"] == "~":
                axes.axvline(cross["value"], color=colour, linestyle=":", alpha=0.6)
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_title(f"{case['key']}, n={case['n']}, η={case['noise']:g}", fontsize=9)
        axes.set_xlabel("answers K")
        axes.set_ylabel("queries to f")
    _shared_legend(figure)
    figure.suptitle("Crossover: queries to answer K points locally\nvs queries the peer "
                    "needs to reach the same error", fontsize=10)
    figure.savefig(path, dpi=110)


def make_plots(result: SuiteResult, img_dir: str) -> list[str]:
    """Write the three PNG plots into ``img_dir``; return their paths."""
    os.makedirs(img_dir, exist_ok=True)
    paths = []
    for name, draw in (("suite_error_vs_queries.png", _plot_error_vs_queries),
                       ("suite_scaling.png", _plot_scaling),
                       ("suite_crossover.png", _plot_crossover)):
        path = os.path.join(img_dir, name)
        draw(result, path)
        paths.append(path)
    return paths
