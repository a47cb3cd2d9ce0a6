"""Every figure the docs quote, measured by one command, recorded and rendered into the docs.

The README and ``docs/serving.md`` show measured figures only between markers::

    <!-- figures: demo -->
    ... written by this script from docs/figures.json ...
    <!-- /figures -->

This script measures each *group* of figures and records it in
``docs/figures.json``: the values, the command, the git commit
(``+dirty`` when a file the group measures differs from it), the UTC date,
the machine (Python, numpy, CPU count) and a ``measures`` fingerprint, the
SHA-256 over the sorted (path, content) of the source files whose change
can move the group's figures (declared per group in :data:`GROUPS`). It
then rewrites every block from the record. ``tests/test_docs.py`` fails
when a block differs from what the record renders (a hand edit), and when a
group's fingerprint differs from today's files (a figure older than the
code it measures), naming the command to rerun::

    python scripts/figures.py                    # every group, about 4 minutes on 2 cores
    python scripts/figures.py --group local      # one group (repeatable); the others kept
    python scripts/figures.py --render-only      # rewrite the blocks from docs/figures.json

Absolute times move 1.5-3x with the load of a shared machine; ratios of one
run reproduce. So the blocks lead with ratios measured in one process and
give absolute values beside them, labelled as this machine's. Timings are
medians: of ``--repeats`` runs, or over the answers and models of one run
(the group's block says which). The measuring code is the benchmark
scripts' (``bench_local.measure_mode``, ``bench_engine.answer_run``,
``bench_serve.measure``) and ``lca demo`` itself; this script chooses sizes
small enough for the whole run.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import hashlib
import io
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "docs" / "figures.json"
DOCS = ("README.md", "docs/*.md")
"""The files whose figures blocks this script rewrites (globs from the repository root)."""
BLOCK = re.compile(r"(<!-- figures: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /figures -->)",
                   re.S)
WALKTHROUGH = "Distilling a trained model into a readable tree"
"""The README section whose code block the ``walkthrough`` group runs."""


# -- what each group measures: the files whose change can move its figures ------------------


@dataclass(frozen=True)
class Measures:
    """Globs (from the repository root) of the files a group's figures depend on, minus
    ``excluding``, plus the first Python block of each README section in ``readme_code``."""

    files: tuple[str, ...]
    excluding: tuple[str, ...] = ()
    readme_code: tuple[str, ...] = ()

    def paths(self) -> list[str]:
        """The measured files, as sorted paths relative to the root."""
        chosen = {path for pattern in self.files for path in ROOT.glob(pattern)
                  if path.is_file()}
        chosen -= {path for pattern in self.excluding for path in ROOT.glob(pattern)}
        return sorted(path.relative_to(ROOT).as_posix() for path in chosen)

    def fingerprint(self) -> str:
        """SHA-256 over the sorted (path, content) of the measured files and code blocks.

        A function of the files alone (no git): a clean checkout gives the same.
        """
        digest = hashlib.sha256()
        parts = [(path, (ROOT / path).read_bytes()) for path in self.paths()]
        parts += [(f"README.md#{section}", readme_code(section).encode())
                  for section in self.readme_code]
        for name, content in sorted(parts):
            digest.update(f"{name}\0{len(content)}\0".encode())
            digest.update(content)
        return digest.hexdigest()

    def as_record(self) -> dict[str, Any]:
        return {"files": list(self.files), "excluding": list(self.excluding),
                "readme_code": list(self.readme_code), "sha256": self.fingerprint()}


def readme_code(section: str, text: str | None = None) -> str:
    """The first Python code block under the heading ``## {section}`` of the README (or of
    ``text``)."""
    if text is None:
        text = (ROOT / "README.md").read_text(encoding="utf-8")
    after = text.split(f"\n## {section}\n", 1)
    if len(after) != 2:
        raise ValueError(f"README.md has no section '## {section}'")
    match = re.search(r"```python\n(.*?)```", after[1], re.S)
    if match is None:
        raise ValueError(f"README.md's section '{section}' has no Python block")
    return match.group(1)


# Every group's figures move with this script's measuring code.
_SELF = "scripts/figures.py"
# What `lca demo` runs: the package's top-level modules, the search estimator, and the
# four commands' cli.py modules, which add their options to the demo's parser.
_DEMO = Measures(("lca/*.py", "lca/search/**/*.py", "lca/models/cli.py", "lca/serve/cli.py",
                  "lca/suite/cli.py", "lca/tester/cli.py", _SELF))
# The trained models are lca.models oracles built by lca.suite; not served.
_MODELS = Measures(("lca/**/*.py", _SELF, "scripts/bench_local.py"),
                   excluding=("lca/serve/**/*.py",))
_ENGINE = Measures(("lca/**/*.py", _SELF, "scripts/bench_engine.py", "scripts/bench_local.py"),
                   excluding=("lca/serve/**/*.py",))
_SERVE = Measures(("lca/**/*.py", _SELF, "scripts/bench_serve.py"))
# The README's walk-through: a scikit-learn forest, lca.models, lca.tester; no suite, no
# serving, no worker processes.
_WALKTHROUGH = Measures(("lca/**/*.py", _SELF),
                        excluding=("lca/serve/**/*.py", "lca/suite/**/*.py",
                                   "lca/parallel/**/*.py"),
                        readme_code=(WALKTHROUGH,))


# docs/surrogates.md's example: a data-mode surrogate of a scikit-learn model; no suite, no
# serving, no worker processes, no search.
_SURROGATE = Measures(("lca/**/*.py", _SELF),
                      excluding=("lca/serve/**/*.py", "lca/suite/**/*.py",
                                 "lca/parallel/**/*.py", "lca/search/**/*.py"))


# -- measuring ------------------------------------------------------------------------------


@contextlib.contextmanager
def _quietly() -> Iterator[None]:
    """Low-margin warnings off: they would repeat once per call; the blocks give errors."""
    import lca

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lca.LowMarginWarning)
        yield


# The demo's settings for the error-against-queries plot: the efficient preset's pairs
# per node and the paper's score samples per node (leaf samples half as many, as the
# demo's 1,000 and 500). The first of each is lca demo's default.
DEMO_PAIRS = (64, 16, 32, 128, 256)
DEMO_SCORE_SAMPLES = (1000, 125, 250, 500)
_DEMO_LINES = {
    "error_f": r"error vs f\s+([\d.]+)",
    "error_clean": r"error vs clean tree\s+([\d.]+)",
    "queries_per_answer": r"queries per answer\s+([\d.]+) amortised",
    "first_queries": r"amortised; (\d+) for the first answer",
    "wall_ms": r"time per answer\s+([\d.]+) ms amortised",
    "queries": r"lca answers (\d+) uniform queries",
    "noise": r"its labels flipped at rate ([\d.]+)",
    "leaves": r"a random tree of (\d+) leaves",
    "n": r"over n=(\d+) variables",
}
_TARGET = ("queries", "noise", "leaves", "n")  # the same whatever the setting


def _demo_settings() -> list[dict[str, Any]]:
    """Each setting's mode, value (pairs or score samples per node) and ``lca demo`` options."""
    settings = [{"mode": "efficient", "value": pairs,
                 "argv": [] if pairs == DEMO_PAIRS[0] else ["--pairs", str(pairs)]}
                for pairs in DEMO_PAIRS]
    settings += [{"mode": "paper", "value": samples,
                  "argv": ["--mode", "paper"] + ([] if samples == DEMO_SCORE_SAMPLES[0] else [
                      "--score-samples", str(samples), "--leaf-samples", str(samples // 2)])}
                 for samples in DEMO_SCORE_SAMPLES]
    for setting in settings:
        setting["default"] = setting["value"] in (DEMO_PAIRS[0], DEMO_SCORE_SAMPLES[0])
        setting["command"] = " ".join(["lca demo", *setting["argv"]])
    return settings


def _run_demo(argv: list[str]) -> dict[str, Any]:
    """``lca demo --quiet ARGV`` in this process: what it prints, and its CPU time."""
    from lca.cli import main as lca_main

    out = io.StringIO()
    cpu = time.process_time()
    with contextlib.redirect_stdout(out):
        code = lca_main(["demo", "--quiet", *argv])
    cpu = time.process_time() - cpu
    text = out.getvalue()
    if code != 0:
        raise RuntimeError(f"lca demo {' '.join(argv)} exited with {code}:\n{text}")
    values: dict[str, Any] = {}
    for name, pattern in _DEMO_LINES.items():
        match = re.search(pattern, text)
        if match is None:
            raise RuntimeError(f"lca demo's output has no line matching {pattern!r}:\n{text}")
        values[name] = float(match.group(1))
    for name in ("queries", "first_queries", "leaves", "n"):
        values[name] = int(values[name])
    values["cpu_ms"] = 1e3 * cpu / values["queries"]
    return values


_SAME_EVERY_RUN = ("error_f", "error_clean", "queries_per_answer", "first_queries")


def measure_demo(repeats: int) -> dict[str, Any]:
    """``lca demo`` at each setting in this process; its defaults ``repeats`` times each,
    alternating, timings the median (errors and queries are the same every run)."""
    settings = _demo_settings()
    runs: list[list[dict[str, Any]]] = [[] for _ in settings]
    for _ in range(repeats):
        for setting, done in zip(settings, runs, strict=True):
            if setting["default"] or not done:
                done.append(_run_demo(setting["argv"]))
                _progress(f"  {setting['command']}: {done[-1]['cpu_ms']:.2f} ms CPU per answer")
    for name in _TARGET:
        if len({run[name] for done in runs for run in done}) != 1:
            raise AssertionError(f"lca demo's {name} differs between settings")
    for setting, done in zip(settings, runs, strict=True):
        del setting["argv"]
        for name in _SAME_EVERY_RUN:
            if len({run[name] for run in done}) != 1:
                raise AssertionError(f"{setting['command']}: {name} differs between runs")
            setting[name] = done[0][name]
        setting["runs"] = len(done)
        setting["cpu_ms"] = statistics.median(run["cpu_ms"] for run in done)
        setting["wall_ms"] = statistics.median(run["wall_ms"] for run in done)
    plot = ROOT / "docs" / "img" / "demo_error_vs_queries.png"
    values = {name: runs[0][0][name] for name in _TARGET}
    values.update(settings=settings, plot=plot.relative_to(ROOT).as_posix())
    _plot_demo(values, plot)
    return values


def _plot_demo(values: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    figure, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    # Mode: colour, marker, legend, where its labels go (the efficient mode's points
    # crowd near its default, under the paper mode's).
    styles = {"efficient": ("tab:blue", "o", "efficient (pairs per node)", -12),
              "paper": ("tab:orange", "s", "paper's estimator (score samples per node)", 5)}
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    for ax, key, label in ((axes[0], "queries_per_answer", "queries per answer, amortised"),
                           (axes[1], "first_queries", "queries for the first answer")):
        for mode, (colour, marker, name, offset) in styles.items():
            points = sorted((s[key], s["error_f"], s["value"], s["default"])
                            for s in values["settings"] if s["mode"] == mode)
            ax.plot([p[0] for p in points], [p[1] for p in points], marker=marker,
                    color=colour, label=name)
            for x, y, value, default in points:
                ax.annotate(f"{value}{'*' if default else ''}", (x, y),
                            textcoords="offset points", xytext=(3, offset), fontsize=8)
        ax.axhline(values["noise"], color="0.5", linestyle=":", linewidth=1,
                   label=f"f's label noise rate, {values['noise']:g}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(plain)
            axis.set_minor_formatter(NullFormatter())
        ax.set_yticks([0.04, 0.05, 0.07, 0.1, 0.2, 0.3])
        ax.set_xlabel(label)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("error against f on the demo's queries")
    axes[1].legend(fontsize=8, loc="upper right")
    figure.suptitle(f"lca demo's target: error against queries ({values['queries']:,} "
                    "uniform queries; * = the demo's default)", fontsize=10)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)


# The suite's trained models for the one-point path, minus the two random forests, whose
# predict makes a run of this size take half a minute each (docs/benchmarks_local.md
# has all eight).
LOCAL_MODELS = ("logreg-breast_cancer", "mlp-breast_cancer", "gb-wine", "mlp-wine",
                "logreg-digits", "gb-digits")
LOCAL_POINTS, LOCAL_DEPTH, LOOKAHEAD = 100, 12, "auto"


def measure_local(repeats: int) -> dict[str, Any]:
    """``bench_local.measure_mode`` on each model, efficient (default and
    ``lookahead="auto"``) and paper mode, one run each (timings are per-answer medians)."""
    import dataclasses

    import bench_local  # scripts/ is this script's directory, first on sys.path

    import lca
    from lca import derive
    from lca.suite.cases import MODEL_SPECS, full_config
    from lca.suite.modes import fixed_params
    from lca.suite.trained import model_oracle

    config = dataclasses.replace(full_config(), depth=LOCAL_DEPTH)
    modes: dict[str, Callable[[int], lca.Params]] = {
        "efficient": lambda n: lca.Params.efficient(n, depth=LOCAL_DEPTH),
        "lookahead": lambda n: lca.Params.efficient(n, depth=LOCAL_DEPTH, lookahead=LOOKAHEAD),
        "paper": lambda n: fixed_params(n, config=config)}
    models: dict[str, Any] = {}
    for key in LOCAL_MODELS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the training's convergence warnings
            f, _ = model_oracle(MODEL_SPECS[key], config.target_seed)
        points = derive.sample_points(config.eval_seed, bench_local.POINTS_PURPOSE, f.n,
                                      LOCAL_POINTS)
        f_values = f(points)
        models[key] = {}
        for mode, params in modes.items():
            run = bench_local.measure_mode(f, params(f.n), points, f_values, config.seed,
                                           f"{key} {mode}")
            models[key][mode] = {
                "error": run.error,
                "wall_ms": 1e3 * statistics.median(run.walls.tolist()),
                "queries_per_answer": run.total_queries / run.points,
                "calls_per_answer": run.calls / run.points,
                "own_us": 1e6 * run.own_per_query,
                "replayed_own_us": 1e6 * run.replayed_own_per_query,
                "warm_us": 1e6 * run.warm_wall,
                "batch_own_us": 1e6 * run.batch_own / max(1, run.batch_queries)}
            _progress(f"  {key} {mode}: {models[key][mode]['wall_ms']:.2f} ms per answer, "
                      f"{models[key][mode]['own_us']:.2f} us own CPU a query")
    return {"models": models, "points": LOCAL_POINTS, "depth": LOCAL_DEPTH,
            "lookahead": LOOKAHEAD,
            "paper": {"score_samples": fixed_params(100, config=config).score_samples,
                      "leaf_samples": fixed_params(100, config=config).leaf_samples}}


ENGINE_DEPTH, LARGE_N = 12, 10 ** 6


def measure_engine(repeats: int) -> dict[str, Any]:
    """Oracle calls of 1,000 efficient answers on each trained model
    (``bench_engine.answer_run``), and one cold answer's peak memory at n = 10^6 in a
    fresh process (``bench_local.large_in_child``)."""
    import bench_engine
    import bench_local

    from lca import derive
    from lca.engine import chunk_rows
    from lca.suite.cases import MODEL_SPECS

    calls = {}
    for key, f in bench_engine.model_cases(list(MODEL_SPECS)).items():
        points = derive.sample_points(5, "bench/engine", f.n, bench_engine.ANSWERS)
        run = bench_engine.answer_run(f, bench_engine.efficient(f.n, ENGINE_DEPTH), points)
        calls[key] = {"n": f.n, "calls": run.calls, "queries": run.queries,
                      "rows_per_call": chunk_rows(f.n)}
        _progress(f"  {key}: {run.calls} calls")
    # Peak memory is not a timing: one fresh process.
    # The kernels a user gets by default (compiled where numba is installed).
    large = bench_local.large_in_child(LARGE_N, 7, "auto")
    _progress(f"  n = {LARGE_N:,}: peak {large['peak_mib']:.0f} MiB ({large['kernels']})")
    return {"answers": bench_engine.ANSWERS, "depth": ENGINE_DEPTH, "models": calls,
            "large": {"n": LARGE_N, "peak_mib": large["peak_mib"],
                      "queries": large["queries"], "wall_s": large["wall"],
                      "floor_s": large["floor"], "kernels": large["kernels"]}}


SERVE_ARGS = ["--shapes", "1,64", "--clients", "1,8", "--requests", "1000",
              "--max-seconds", "5", "--warm-points", "4000"]


def measure_serve(repeats: int) -> dict[str, Any]:
    """``bench_serve.measure`` on a smaller grid (1 and 64 points per request, 1 and 8
    clients, both encodings), ``repeats`` times, each on a fresh server: every figure of
    a cell is the median over the runs of its value in each (a latency's value in a run
    being its median or 99th percentile over that run's requests)."""
    import bench_serve

    runs = []
    for _ in range(repeats):
        runs.append(bench_serve.measure(bench_serve.build_parser().parse_args(SERVE_ARGS),
                                        progress=False))
        single = runs[-1]["cells"][0]
        _progress(f"  1 point, 1 client: p50 {single['p50_ms']:.2f} ms")
    measured = runs[0]
    for part in ("cells", "parsing"):
        for index, entry in enumerate(measured[part]):
            for name, value in entry.items():
                if isinstance(value, float):
                    entry[name] = statistics.median(run[part][index][name] for run in runs)
    measured.update(runs=repeats, args=SERVE_ARGS, n=bench_serve.N)
    return measured


def measure_walkthrough(repeats: int) -> dict[str, Any]:
    """The README walk-through's block run as written (in a scratch directory): its two
    agreement lines and its drawing, copied to docs/img."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import sklearn

    code = readme_code(WALKTHROUGH)
    out = io.StringIO()
    with tempfile.TemporaryDirectory() as scratch, contextlib.chdir(scratch), \
            contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
        image = ROOT / "docs" / "img" / "breast_cancer_tree.png"
        shutil.copyfile(Path(scratch) / "tree.png", image)
    plt.close("all")
    lines = [" ".join(line.split()) for line in out.getvalue().splitlines()
             if line.startswith("tree = model on")]
    if len(lines) != 2:
        raise RuntimeError(f"the walk-through printed {lines!r}, not two agreement lines")
    drawn = re.search(r"\.draw\(max_levels=(\d+)\)", code)
    return {"agreement": lines, "sklearn": sklearn.__version__,
            "max_levels": int(drawn[1]) if drawn else None,
            "image": image.relative_to(ROOT).as_posix()}


def measure_surrogate(repeats: int) -> dict[str, Any]:
    """docs/surrogates.md's example as written there: a data-mode ``Surrogate`` at its
    defaults of gradient boosting on breast cancer, its held-out agreement beside a
    scikit-learn tree of the same depth on the model's labels of the same rows, and its
    drawing (docs/img/surrogate_tree.png)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    import sklearn
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.model_selection import train_test_split
    from sklearn.tree import DecisionTreeClassifier

    from lca.models import Surrogate

    data = load_breast_cancer(as_frame=True)
    X, y = data.data, data.target.map({0: "malignant", 1: "benign"})
    X_train, X_test, y_train, _ = train_test_split(X, y, random_state=0)
    model = GradientBoostingClassifier(random_state=0).fit(X_train, y_train)
    surrogate = Surrogate(model, positive="malignant").fit(X_train)
    tree = surrogate.tree()
    on_test = model.predict(X_test)
    rows_tree = DecisionTreeClassifier(max_depth=surrogate.depth, random_state=0).fit(
        X_train, model.predict(X_train))
    image = ROOT / "docs" / "img" / "surrogate_tree.png"
    ax = tree.draw(max_levels=surrogate.depth)
    ax.figure.savefig(image, dpi=120, bbox_inches="tight")
    plt.close("all")
    return {"depth": surrogate.depth, "train": len(X_train), "held_out": len(X_test),
            "agreement": float(np.mean(surrogate.predict(X_test) == on_test)),
            "rows_tree": float(np.mean(rows_tree.predict(X_test) == on_test)),
            "leaves": len(tree.leaves), "queries": int(surrogate.queries_),
            "sklearn": sklearn.__version__, "image": image.relative_to(ROOT).as_posix()}


# -- rendering ------------------------------------------------------------------------------


def _ratio(value: float) -> str:
    return f"{value:.1f}×" if value >= 10 else f"{value:.2f}×"


def _us(value: float) -> str:
    return f"{value:.2f} µs" if value < 10 else f"{value:.0f} µs"


def _ms(value: float) -> str:
    return f"{value:.2f} ms" if value < 100 else f"{value:.0f} ms"


def _span(values: Iterable[float], unit: Callable[[float], str]) -> str:
    values = list(values)
    low_text, high_text = unit(min(values)), unit(max(values))
    if low_text == high_text:
        return low_text
    suffix = " " + high_text.split(" ")[-1]
    return f"{low_text.removesuffix(suffix)}–{high_text}"


def provenance(record: dict[str, Any]) -> str:
    """``python scripts/figures.py --group g`` at commit, date; the machine."""
    machine = record["machine"]
    parts = [f"Python {machine['python']}", f"numpy {machine['numpy']}"]
    if "scikit-learn" in machine:
        parts.append(f"scikit-learn {machine['scikit-learn']}")
    return (f"`{record['command']}` at commit `{record['commit']}` on "
            f"{record['date'][:10]} (UTC); {', '.join(parts)}, {machine['cpus']} CPUs "
            f"({machine['platform']}), load average {machine['load']:g} at the start")


def _than(ours: dict[str, Any], theirs: dict[str, Any], name: str, fewer: str) -> str:
    """``7.53× fewer`` (or ``1.20× more``): ``ours[name]`` against ``theirs[name]``."""
    if ours[name] <= theirs[name]:
        return f"{_ratio(theirs[name] / ours[name])} {fewer}"
    return f"{_ratio(ours[name] / theirs[name])} more"


def _defaults(values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    picked = {s["mode"]: s for s in values["settings"] if s["default"]}
    return picked["efficient"], picked["paper"]


def render_headline(record: dict[str, Any], doc: Path) -> str:
    values = record["values"]
    efficient, paper = _defaults(values)
    image = os.path.relpath(ROOT / values["plot"], doc.parent)
    return (
        f"On `lca demo`'s target (a {values['leaves']}-leaf random tree over n = "
        f"{values['n']} with {values['noise']:.0%} label noise; {values['queries']:,} uniform "
        "queries) the "
        f"efficient defaults needed {_than(efficient, paper, 'first_queries', 'fewer')} "
        f"queries for the first answer and "
        f"{_than(efficient, paper, 'queries_per_answer', 'fewer')} per answer than the "
        f"paper's estimator at the demo's settings ({paper['value']:,} score samples a "
        f"node), with an error against f of "
        f"{efficient['error_f']:.3f} against {paper['error_f']:.3f}, and "
        f"{_than(efficient, paper, 'cpu_ms', 'less')} CPU per answer "
        f"({_ms(efficient['cpu_ms'])} against {_ms(paper['cpu_ms'])} on this machine, "
        f"median of {efficient['runs']} runs each in one process). Other settings of "
        "each mode trade queries for error:\n\n"
        f"![Error against f and queries per answer of the efficient mode and the paper's "
        f"estimator on lca demo's target]({image})\n\n"
        f"*Each point is `lca demo` with one setting (`--pairs P`; `--mode paper "
        f"--score-samples S --leaf-samples S/2`). {provenance(record)}.*\n")


def render_demo(record: dict[str, Any], doc: Path) -> str:
    values = record["values"]
    efficient, paper = _defaults(values)
    queries = values["queries"]

    def row(name: str, cell: Callable[[dict[str, Any]], str]) -> str:
        return f"| {name} | {cell(efficient)} | {cell(paper)} |"

    return "\n".join([
        f"| `lca demo`, {queries:,} queries | efficient (`lca demo`) | paper "
        "(`lca demo --mode paper`) |",
        "|---|---:|---:|",
        row("error against f / the clean tree",
            lambda s: f"{s['error_f']:.3f} / {s['error_clean']:.3f}"),
        row("queries for the first answer", lambda s: f"{s['first_queries']:,}"),
        row("queries per answer, amortised", lambda s: f"{s['queries_per_answer']:,.1f}"),
        row("time per answer, amortised, this machine: wall / CPU",
            lambda s: f"{_ms(s['wall_ms'])} / {_ms(s['cpu_ms'])}"),
        row(f"answering all {queries:,}, this machine (wall)",
            lambda s: f"{s['wall_ms'] * queries / 1e3:.1f} s"),
        "",
        f"*Wall times are what the demo prints (start-up excluded), CPU the process's over "
        f"the whole command; medians of {efficient['runs']} runs in one process. "
        f"{provenance(record)}.*", ""])


def _lookahead(value: Any) -> str:
    """``Params.lookahead`` as the README writes it: `lookahead="auto"`, `lookahead=3`."""
    return f'`lookahead="{value}"`' if isinstance(value, str) else f"`lookahead={value}`"


_LOCAL_MODES = ("efficient", "lookahead", "paper")


def render_local(record: dict[str, Any], doc: Path) -> str:
    values = record["values"]
    models = values["models"]
    # The column of the lookahead the record measured (not today's constant).
    titles = ("efficient", f"efficient, {_lookahead(values['lookahead'])}", "paper")

    def median_ratio(mode: str, name: str, over: str = "paper") -> float:
        return statistics.median(m[mode][name] / m[over][name] for m in models.values())

    def median(mode: str, name: str) -> float:
        return statistics.median(m[mode][name] for m in models.values())

    def span(mode: str, name: str, unit: Callable[[float], str]) -> str:
        return _span((m[mode][name] for m in models.values()), unit)

    def row(name: str, cell: Callable[[str], str]) -> str:
        return f"| {name} | " + " | ".join(cell(mode) for mode in _LOCAL_MODES) + " |"

    def times_paper(name: str) -> Callable[[str], str]:
        return lambda mode: "1" if mode == "paper" else _ratio(median_ratio(mode, name))

    return "\n".join([
        f"| one point at a time, median over {len(models)} trained models | "
        + " | ".join(titles) + " |",
        "|---|---:|---:|---:|",
        row("wall time per answer, × the paper mode's", times_paper("wall_ms")),
        row("queries per answer, × the paper mode's", times_paper("queries_per_answer")),
        row("oracle calls per answer, × the paper mode's", times_paper("calls_per_answer")),
        row("lca's own CPU a query, × the paper mode's", times_paper("own_us")),
        row("lca's own CPU a query, this machine", lambda mode: _us(median(mode, "own_us"))),
        row("the same, the model's answers replayed, this machine",
            lambda mode: _us(median(mode, "replayed_own_us"))),
        row("a warm answer (its path cached), this machine, range over the models",
            lambda mode: span(mode, "warm_us", _us)),
        row("`answer_many`: lca's own CPU a query, this machine, range",
            lambda mode: span(mode, "batch_own_us", _us)),
        "",
        f"*{_lookahead(values['lookahead'])} against the default: "
        f"{_ratio(median_ratio('lookahead', 'calls_per_answer', 'efficient'))} the calls, "
        f"{_ratio(median_ratio('lookahead', 'queries_per_answer', 'efficient'))} the queries, "
        f"{_ratio(median_ratio('lookahead', 'own_us', 'efficient'))} the own CPU a query. "
        f"Models: {', '.join(models)} (the suite's, through their own `predict`), "
        f"depth {values['depth']}, {values['points']} points each, one run of "
        "`bench_local.measure_mode` per model and mode (the paper mode: "
        f"{values['paper']['score_samples']:,} score and {values['paper']['leaf_samples']} "
        f"leaf samples a node); wall times are medians over the answers. "
        f"{provenance(record)}.*", ""])


def render_engine(record: dict[str, Any], doc: Path) -> str:
    values = record["values"]
    calls = [m["calls"] for m in values["models"].values()]
    large = values["large"]
    return (f"{values['answers']:,} efficient-mode answers at depth {values['depth']} on the "
            f"suite's {len(calls)} trained models took {min(calls)} to {max(calls)} oracle "
            f"calls; one cold efficient answer at n = {large['n']:,} peaked at "
            f"{large['peak_mib']:.0f} MiB (a fresh process, {large['kernels']} kernels; "
            f"{provenance(record)}).\n")


def render_serve(record: dict[str, Any], doc: Path) -> str:
    values = record["values"]
    cells = {(c["shape"], c["encoding"], c["clients"]): c for c in values["cells"]}
    parsing = {(p["shape"], p["encoding"]): p for p in values["parsing"]}
    one, eight = cells[1, "signs", 1], cells[1, "signs", 8]
    signs, ints = cells[64, "signs", 8], cells[64, "points", 8]
    read_ints, read_signs = parsing[64, "points"], parsing[64, "signs"]
    than = "more" if read_ints["parse_ms"] > read_ints["local_p50_ms"] else "less"
    return (
        f"* a single-point request (as `signs`) takes {one['p50_ms']:.2f} ms (p50) and "
        f"{one['p99_ms']:.2f} ms (p99) from one client, {eight['p99_ms']:.2f} ms p99 at 8 "
        f"concurrent clients; a warm `answer_many` call costs "
        f"{one['local_p50_ms']:.3f} ms of that, the rest is HTTP, the framework and the log "
        f"line: one worker served {one['rate']:,.0f} single-point requests a second from "
        f"one client and {eight['rate']:,.0f} from 8;\n"
        f"* requests of 64 points sent as `signs` at 8 clients got "
        f"{signs['rate'] / signs['local_rate']:.0%} of the rate of the same `answer_many` "
        f"calls made in process; sent as lists of ints, "
        f"{ints['rate'] / ints['local_rate']:.0%}: reading and checking 64 points as ints "
        f"costs the server {read_ints['parse_ms']:.2f} ms ({read_signs['parse_ms']:.3f} ms as "
        f"`signs`), {than} than answering them ({read_ints['local_p50_ms']:.3f} ms); one "
        f"point, {parsing[1, 'points']['parse_ms']:.3f} ms as ints and "
        f"{parsing[1, 'signs']['parse_ms']:.3f} ms as `signs`.\n\n"
        f"*`bench_serve.measure` with `{' '.join(values['args'])}` (n = {values['n']}), "
        "each figure "
        f"the median of {values['runs']} runs on fresh servers; the load generator shares "
        f"the machine with the server. {provenance(record)}.*\n")


def render_walkthrough(record: dict[str, Any], doc: Path) -> str:
    values = record["values"]
    uniform, data = values["agreement"]
    depth = values["max_levels"]
    image = os.path.relpath(ROOT / values["image"], doc.parent)
    return (f"prints the top of the tree in the features' own terms, then (scikit-learn "
            f"{values['sklearn']})\n`{uniform}` and\n`{data}`, and draws:\n\n"
            f"![T_0{f' to depth {depth}' if depth is not None else ''} for a random forest "
            f"on the breast cancer data]({image})\n\n"
            f"*The block's output and drawing, run as written: {provenance(record)}.*\n")


def render_surrogate(record: dict[str, Any], doc: Path) -> str:
    values = record["values"]
    image = os.path.relpath(ROOT / values["image"], doc.parent)
    return (f"![The data-mode surrogate of the example, depth {values['depth']}]({image})\n\n"
            f"*The example's tree (depth {values['depth']}, {values['leaves']} leaves, "
            f"{values['queries']:,} model queries on {values['train']} training rows) agrees "
            f"with the model on {values['agreement']:.3f} of the {values['held_out']} "
            f"held-out rows; a scikit-learn tree of the same depth fitted on the model's "
            f"labels of the same rows, on {values['rows_tree']:.3f} (scikit-learn "
            f"{values['sklearn']}). {provenance(record)}.*\n")


# -- groups, the record, the blocks ---------------------------------------------------------


@dataclass(frozen=True)
class Group:
    """A group of figures: how to measure them and what their measurement depends on."""

    name: str
    what: str
    measures: Measures
    measure: Callable[[int], dict[str, Any]]
    libraries: tuple[str, ...] = ()  # besides numpy, recorded with the machine

    @property
    def command(self) -> str:
        return f"python scripts/figures.py --group {self.name}"


GROUPS = {group.name: group for group in (
    Group("demo", "lca demo at its defaults (--repeats runs each) and other settings, "
          "with the plot",
          _DEMO, measure_demo),
    Group("local", "one answer at a time on the trained models (bench_local.measure_mode)",
          _MODELS, measure_local, ("scikit-learn",)),
    Group("engine", "oracle calls of 1,000 answers on the trained models; memory at 10^6",
          _ENGINE, measure_engine, ("scikit-learn",)),
    Group("serve", "lca serve's latency and throughput (bench_serve.measure)",
          _SERVE, measure_serve),
    Group("walkthrough", "the README walk-through's output and drawing",
          _WALKTHROUGH, measure_walkthrough, ("scikit-learn",)),
    Group("surrogate", "docs/surrogates.md's example: held-out agreement and drawing",
          _SURROGATE, measure_surrogate, ("scikit-learn",)),
)}

BLOCKS: dict[str, tuple[str, Callable[[dict[str, Any], Path], str]]] = {
    "headline": ("demo", render_headline),
    "demo": ("demo", render_demo),
    "local": ("local", render_local),
    "engine": ("engine", render_engine),
    "serve": ("serve", render_serve),
    "walkthrough": ("walkthrough", render_walkthrough),
    "surrogate": ("surrogate", render_surrogate),
}
"""Block name -> (the group it shows, its renderer)."""


def doc_files() -> list[Path]:
    return sorted({path for pattern in DOCS for path in ROOT.glob(pattern)})


def render_text(text: str, record: dict[str, Any], doc: Path) -> str:
    """``text`` with every figures block rewritten from ``record``."""

    def block(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in BLOCKS:
            raise ValueError(f"{doc.relative_to(ROOT)}: unknown figures block {name!r} "
                             f"(known: {', '.join(BLOCKS)})")
        group, render = BLOCKS[name]
        if group not in record["groups"]:
            raise ValueError(f"{doc.relative_to(ROOT)}: block {name!r} shows group "
                             f"{group!r}, which docs/figures.json does not hold: run "
                             f"{GROUPS[group].command}")
        body = "\n".join(map(_wrapped, render(record["groups"][group], doc).split("\n")))
        return match[1] + body + ("" if body.endswith("\n") else "\n") + match[4]

    return BLOCK.sub(block, text)


# A line starting so would not continue a paragraph: a list item, a heading, a quote,
# a rule or a table row.
_BLOCK_START = re.compile(r"\s*([-+*] |\d+[.)] |#|>|[-=_*]{3}|\|)")


def _wrapped(line: str, width: int = 80) -> str:
    """A prose line wrapped at ``width`` (a list item's lines indented under its text);
    table rows, images and a line whose wrapping would start a new block as they are."""
    if len(line) <= width or line.startswith(("|", "![")):
        return line
    indent = "  " if line.startswith("* ") else ""
    lines = textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=False,
                          break_on_hyphens=False)
    if any(_BLOCK_START.match(rest) for rest in lines[1:]):
        return line
    return "\n".join(lines)


def render_docs(record: dict[str, Any]) -> list[Path]:
    """Rewrite every doc's blocks from ``record``; returns the files that changed."""
    changed = []
    for doc in doc_files():
        text = doc.read_text(encoding="utf-8")
        new = render_text(text, record, doc)
        if new != text:
            doc.write_text(new, encoding="utf-8")
            changed.append(doc)
    return changed


def load_record() -> dict[str, Any]:
    if not RECORD.exists():
        return {"groups": {}}
    return json.loads(RECORD.read_text(encoding="utf-8"))


def _git(*args: str) -> str | None:
    try:
        run = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                             check=False)
    except OSError:
        return None
    return run.stdout.strip() if run.returncode == 0 else None


def commit_of(measures: Measures) -> str:
    """``git rev-parse --short HEAD``, ``+dirty`` when a measured file or README code block
    differs from it or is not in it (the README's figures blocks are not measured)."""
    commit = _git("rev-parse", "--short", "HEAD")
    if commit is None:
        return "unknown"
    dirty = bool(_git("status", "--porcelain", "--", *measures.paths()))
    if measures.readme_code:
        committed = _git("show", "HEAD:README.md")
        dirty |= committed is None or any(
            readme_code(section, committed) != readme_code(section)
            for section in measures.readme_code)
    return commit + ("+dirty" if dirty else "")


def machine(libraries: Iterable[str]) -> dict[str, Any]:
    import numpy as np

    facts: dict[str, Any] = {"python": platform.python_version(), "numpy": np.__version__,
                             "cpus": os.cpu_count(), "platform": platform.machine(),
                             "load": round(os.getloadavg()[0], 2)}
    if "scikit-learn" in libraries:
        import sklearn

        facts["scikit-learn"] = sklearn.__version__
    return facts


def _rounded(value: Any) -> Any:
    """Floats to 5 significant digits, so the record reads (and diffs) as figures."""
    if isinstance(value, float):
        return float(f"{value:.5g}")
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(item) for item in value]
    return value


def run_group(group: Group, repeats: int) -> dict[str, Any]:
    """Measure ``group``: its record, provenance first."""
    commit = commit_of(group.measures)
    date = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    facts = machine(group.libraries)  # the load average before the group starts
    start = time.perf_counter()
    with _quietly():
        values = group.measure(repeats)
    return {"command": group.command, "what": group.what, "commit": commit, "date": date,
            "seconds": round(time.perf_counter() - start, 1), "machine": facts,
            "measures": group.measures.as_record(), "values": _rounded(values)}


def _measure_this_checkout() -> None:
    """Import lca from this checkout, here and in the processes the groups start: the
    fingerprints describe its files, so they must be what runs."""
    sys.path.insert(0, str(ROOT))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    import lca

    if Path(lca.__file__).resolve().parent != ROOT / "lca":
        raise RuntimeError(f"lca was imported from {lca.__file__}, not from {ROOT}")


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--group", action="append", choices=list(GROUPS),
                        help="measure only this group (repeatable; default: all)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs of each timed command whose median is recorded (default 3)")
    parser.add_argument("--render-only", action="store_true",
                        help="rewrite the docs' blocks from docs/figures.json, measure nothing")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1; got {args.repeats}")
    record = load_record()
    if not args.render_only:
        _measure_this_checkout()
        names = args.group or list(GROUPS)
        start = time.perf_counter()
        for index, name in enumerate(names, 1):
            group = GROUPS[name]
            _progress(f"figures [{index}/{len(names)}] {name}: {group.what}")
            record["groups"][name] = run_group(group, args.repeats)
            record["groups"] = {key: record["groups"][key] for key in GROUPS
                                if key in record["groups"]}
            RECORD.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n",
                              encoding="utf-8")
            _progress(f"figures [{index}/{len(names)}] {name}: "
                      f"{record['groups'][name]['seconds']:.0f} s, commit "
                      f"{record['groups'][name]['commit']}")
        _progress(f"figures: {len(names)} group(s) in {time.perf_counter() - start:.0f} s; "
                  f"wrote {RECORD.relative_to(ROOT)}")
    for doc in render_docs(record):
        _progress(f"figures: rewrote the blocks of {doc.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
