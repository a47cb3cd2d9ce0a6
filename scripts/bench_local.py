"""The one-point path: ``Reconstructor.answer`` one point at a time, efficient against paper mode.

A service or an explainer asks a local computation algorithm about one point
at a time, through one cached ``Reconstructor``. This script measures that
path for the efficient mode (``Params.efficient``) and the paper's estimator
(the suite's fixed preset, ``lca.suite.modes.fixed_params``: p = 0.1, 1,000
score and 500 leaf samples) in the same run:

1. ``models``: the suite's trained models (``lca.suite.trained.model_oracle``,
   queried through the model's own ``predict``) at depth 10 and 12;
2. ``noise``: a 256-leaf random tree at n = 300 with label noise 0.02 and
   0.2, depth 12;
3. ``large``: one cold efficient answer at n = 10^4 and 10^6 (10^7 with
   ``--huge``) on a 64-leaf random tree, in a fresh process, against its
   floor (deriving as many uniform points as the answer queried and
   evaluating the oracle on them, in the engine's batch size), with the
   process's peak memory.

For parts 1 and 2, per case and mode: ``--points`` points answered one at a
time on one reconstructor (wall time per answer, CPU per query of the calling thread, lca's
own CPU per query = CPU minus the CPU spent inside the oracle, the same
again with the model's answers replayed from a log, queries and
oracle calls per answer, the cold first answer), the same points in one
``answer_many`` call on a fresh reconstructor, and the suite's crossover K
against a DecisionTreeClassifier trained on uniform labelled queries
(``lca.suite.measure.measure_peer`` and ``lca.suite.stats.crossover``).

Timings are wall-clock and CPU time on a shared machine: compare the ratios
of one run, not absolute numbers across runs. One model (rf-breast_cancer) and
the noise tiers at ``--points 200`` with the large part took 5 minutes on 2
busy cores; the default run answers 5x the points on 8 models. Run it under
the benchmark lock::

    flock /tmp/lca-bench.lock python scripts/bench_local.py --out docs/benchmarks_local.md
    flock /tmp/lca-bench.lock python scripts/bench_local.py --models gb-wine --points 200
    python scripts/bench_local.py --quick          # tiny sizes, seconds
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

import lca
from lca import derive, targets
from lca.engine import chunk_rows
from lca.search.compiled import KERNELS_VARIABLE, kernel_path, numba_version
from lca.search.compiled import fits as kernel_fits
from lca.suite.cases import MODEL_SPECS, SuiteConfig, full_config, quick_config
from lca.suite.measure import measure_peer, peer_needed
from lca.suite.modes import fixed_params
from lca.suite.stats import crossover
from lca.suite.text import crossover_text
from lca.suite.trained import model_oracle

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("models", "noise", "large")


def efficient_one_step(n: int, *, config: SuiteConfig) -> lca.Params:
    """The efficient preset asking one binary-search step per oracle call."""
    return lca.Params.efficient(n, depth=config.depth_for(n), lookahead=1)


def efficient_auto(n: int, *, config: SuiteConfig) -> lca.Params:
    """The efficient preset choosing its binary-search steps per oracle call from the
    oracle's measured costs (``Params.lookahead="auto"``): the same tree."""
    return lca.Params.efficient(n, depth=config.depth_for(n), lookahead="auto")


@dataclass(frozen=True)
class Mode:
    """A mode: its params, and the node kernels it runs on (``LCA_KERNELS``; ``None``
    for the paper mode, which has none)."""

    params: Callable[..., lca.Params]
    kernels: str | None = None


MODES = {
    "compiled, lookahead=1": Mode(efficient_one_step, "compiled"),
    "compiled, lookahead=auto": Mode(efficient_auto, "compiled"),
    "numpy, lookahead=1": Mode(efficient_one_step, "numpy"),
    "numpy, lookahead=auto": Mode(efficient_auto, "numpy"),
    "paper": Mode(fixed_params),
}
POINTS_PURPOSE = "bench/local"
WARMUP_PURPOSE = "bench/local-warmup"
FLOOR_PURPOSE = "bench/local-floor"
LARGE_LEAVES = 64  # the large-n target, as scripts/bench_engine.py's
HUGE_N = 10 ** 7


@dataclass(frozen=True)
class Sizes:
    """What a run covers: the full grid or ``--quick``'s tiny one."""

    config: SuiteConfig  # seeds, the paper preset, the peer's grid
    models: tuple[str, ...]
    model_depths: tuple[int, ...]
    noise_n: int
    noise_leaves: int
    noise_rates: tuple[float, ...]
    noise_depth: int
    points: int
    large: tuple[int, ...]


def full_sizes() -> Sizes:
    return Sizes(full_config(), tuple(MODEL_SPECS), (10, 12), 300, 256, (0.02, 0.2), 12,
                 1000, (10 ** 4, 10 ** 6))


def quick_sizes() -> Sizes:
    return Sizes(quick_config(), ("gb-wine",), (4,), 30, 16, (0.02, 0.2), 4, 5,
                 (10 ** 3, 10 ** 4))


class Timed(lca.Oracle):
    """An oracle that adds up the wall and CPU time (of the calling thread) spent inside its
    inner oracle.

    The reconstructor wraps every oracle in :class:`lca.oracle.CountingOracle`,
    which calls :meth:`query`: that is the one hook every query passes. The
    counting wrapper's checks stay outside, in lca's own time.
    """

    def __init__(self, inner: lca.Oracle, *, record: bool = False) -> None:
        self.inner = inner
        self.n, self.name = inner.n, inner.name
        self.size, self.depth = inner.size, inner.depth
        self.wall = self.cpu = 0.0
        self.calls = self.rows = 0
        self.log: list[np.ndarray] | None = [] if record else None
        """With ``record``: every call's values, in order (what :class:`Replayed` answers)."""

    def query(self, points: np.ndarray) -> np.ndarray:
        wall, cpu = time.perf_counter(), time.thread_time()
        values = self.inner.query(points)
        self.cpu += time.thread_time() - cpu
        self.wall += time.perf_counter() - wall
        self.calls += 1
        self.rows += points.shape[0]
        if self.log is not None:
            self.log.append(np.array(values, copy=True))
        return values

    def describe(self, variable: int, bit: int, path: Any = ()) -> str:
        # ``answer`` asks for the condition of every step: the inner oracle's, as unwrapped.
        return self.inner.describe(variable, bit, path)


class Replayed(lca.Oracle):
    """Answers call ``k`` with the values a :class:`Timed` ``log`` recorded for call ``k``.

    Asked the same points in the same order, the reconstructor makes the same
    calls (its queries are a function of the seed, the parameters and the
    answers), so a replay repeats a run with none of the model's code between
    lca's steps. A call of another size, or one past the log, raises.
    """

    def __init__(self, log: list[np.ndarray], n: int) -> None:
        self.log, self.n, self.name = log, n, "replayed"
        self.at = 0

    def query(self, points: np.ndarray) -> np.ndarray:
        if self.at == len(self.log) or self.log[self.at].shape != (points.shape[0],):
            raise AssertionError(f"call {self.at} of {points.shape[0]} rows does not replay "
                                 f"the recorded run ({len(self.log)} calls)")
        self.at += 1
        return self.log[self.at - 1]


class RecordedCosts(lca.engine.CallCosts):
    """Measures and chooses as :class:`lca.engine.CallCosts`, and logs every choice."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[int] = []

    def lookahead(self, pairs: int, steps: int) -> int:
        self.log.append(super().lookahead(pairs, steps))
        return self.log[-1]


class ReplayedCosts(lca.engine.CallCosts):
    """Chooses what a :class:`RecordedCosts` log chose, search by search, whatever it
    measures: a replay asks the same calls (its oracle answers at once)."""

    def __init__(self, log: list[int]) -> None:
        super().__init__()
        self.choices = iter(log)

    def lookahead(self, pairs: int, steps: int) -> int:
        return next(self.choices)


@contextmanager
def kernels(name: str | None) -> Iterator[None]:
    """Run the efficient mode's nodes on ``name``'s kernels (``LCA_KERNELS``) inside."""
    before = os.environ.get(KERNELS_VARIABLE)
    if name is not None:
        os.environ[KERNELS_VARIABLE] = name
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(KERNELS_VARIABLE, None)
        else:
            os.environ[KERNELS_VARIABLE] = before


@dataclass
class ModeRun:
    """One mode on one case: the points one at a time, then in one batch."""

    answers: np.ndarray
    walls: np.ndarray    # seconds of each answer
    queries: np.ndarray  # queries of each answer
    calls: int           # oracle calls of all answers
    cpu: float           # CPU seconds (calling thread) of all answers
    oracle_cpu: float    # of which inside the oracle
    oracle_wall: float
    batch_wall: float
    batch_queries: int
    batch_calls: int
    batch_own: float     # CPU seconds (calling thread) of answer_many outside the oracle
    warm_wall: float     # median seconds of an answer again, every node of its path cached
    replayed_own: float  # CPU seconds outside the oracle of the same answers, replayed
    error: float         # against f on the points
    chosen: str | None = None  # with lookahead "auto": what the one-at-a-time run chose
    cross: dict[str, Any] | None = None

    @property
    def points(self) -> int:
        return int(self.walls.size)

    @property
    def total_queries(self) -> int:
        return int(self.queries.sum())

    @property
    def cpu_per_query(self) -> float:
        return self.cpu / max(1, self.total_queries)

    @property
    def own_per_query(self) -> float:
        return (self.cpu - self.oracle_cpu) / max(1, self.total_queries)

    @property
    def replayed_own_per_query(self) -> float:
        return self.replayed_own / max(1, self.total_queries)


def one_at_a_time(f: lca.Oracle, params: lca.Params, points: np.ndarray, seed: int,
                  desc: str, *, record: bool = False,
                  costs: lca.engine.CallCosts | None = None
                  ) -> tuple[lca.Reconstructor, Timed, np.ndarray, np.ndarray, np.ndarray,
                             float]:
    """Answer ``points`` in order with ``Reconstructor.answer`` on one fresh reconstructor.

    Only the ``answer`` calls are timed (the progress bar is not). Returns the
    reconstructor, its timed oracle (with ``record``, its log of values), the
    answers, each answer's wall seconds and queries, and the CPU seconds
    (calling thread) of all answers. ``costs`` replaces the reconstructor's
    (with ``lookahead="auto"``).
    """
    timed = Timed(f, record=record)
    rec = lca.Reconstructor(timed, params)
    if costs is not None:
        rec.costs = costs
    m = points.shape[0]
    answers = np.empty(m, dtype=np.int8)
    walls = np.empty(m)
    queries = np.empty(m, dtype=np.int64)
    cpu = 0.0
    with tqdm(total=m, desc=desc, unit="answer", leave=False, dynamic_ncols=True,
              file=sys.stderr) as bar:
        for i, z in enumerate(points):
            wall0, cpu0 = time.perf_counter(), time.thread_time()
            answers[i] = rec.answer(z, seed)
            cpu += time.thread_time() - cpu0
            walls[i] = time.perf_counter() - wall0
            queries[i] = rec.last_stats.queries
            bar.update(1)
    return rec, timed, answers, walls, queries, cpu


def measure_mode(f: lca.Oracle, params: lca.Params, points: np.ndarray, f_values: np.ndarray,
                 seed: int, desc: str = "answers", kernel: str | None = None) -> ModeRun:
    """One mode on ``points``: one at a time, then one ``answer_many`` call, on the
    node kernels ``kernel`` (``LCA_KERNELS``; the environment's if ``None``).

    An untimed warm-up (one answer of another tree, ``seed + 1``, on its own
    reconstructor) first pays for one-time costs (imports, loading compiled
    kernels, first calls into the model) that would otherwise land on the cold answer.
    """
    with warnings.catch_warnings(), kernels(kernel):
        # Low-margin warnings would repeat once per answer; errors are in the report.
        warnings.simplefilter("ignore", lca.LowMarginWarning)
        warm = derive.sample_points(seed, WARMUP_PURPOSE, f.n, 1)[0]
        lca.Reconstructor(f, params).answer(warm, seed + 1)
        recorded = RecordedCosts() if params.lookahead == "auto" else None
        rec, timed, answers, walls, queries, cpu = one_at_a_time(f, params, points, seed, desc,
                                                                 record=True, costs=recorded)
        assert timed.log is not None
        # The same answers again with the model's answers replayed: lca's own CPU with
        # no model code run between lca's steps (a model's call evicts lca's working set
        # from the caches, so in situ lca's steps run cold). With lookahead "auto" each
        # search asks the steps the first run chose.
        _, replay_timed, replayed, _, replay_queries, replay_cpu = one_at_a_time(
            Replayed(timed.log, f.n), params, points, seed, desc + ", replayed",
            costs=ReplayedCosts(recorded.log) if recorded is not None else None)
        assert np.array_equal(replayed, answers) and np.array_equal(replay_queries, queries)
        assert replay_timed.calls == len(timed.log)
        warm_walls = []
        for z, answer in zip(points, answers, strict=True):
            start = time.perf_counter()
            again = rec.answer(z, seed)
            warm_walls.append(time.perf_counter() - start)
            assert again == answer and rec.last_stats.queries == 0, "a warm answer asks f"
        batch_timed = Timed(f)
        batch_rec = lca.Reconstructor(batch_timed, params)
        start, cpu0 = time.perf_counter(), time.thread_time()
        batch = batch_rec.answer_many(points, seed)
        batch_wall = time.perf_counter() - start
        batch_own = time.thread_time() - cpu0 - batch_timed.cpu
    # The batch path answers as the one-point path, row by row (Reconstructor.answer_many).
    assert np.array_equal(batch, answers), "answer_many disagrees with answer"
    assert rec.stats.queries == int(queries.sum()) == timed.rows  # the warm pass asked none
    return ModeRun(answers=answers, walls=walls,
                   queries=queries, calls=rec.stats.oracle_calls, cpu=cpu,
                   oracle_cpu=timed.cpu, oracle_wall=timed.wall, batch_wall=batch_wall,
                   batch_queries=batch_rec.stats.queries,
                   batch_calls=batch_rec.stats.oracle_calls, batch_own=batch_own,
                   warm_wall=float(np.median(warm_walls)),
                   replayed_own=replay_cpu - replay_timed.cpu,
                   error=float(np.mean(answers != f_values)),
                   chosen=None if rec.costs is None else rec.costs.text())


def crossover_of(queries: Sequence[int], needed: int | None,
                 largest: int | None) -> dict[str, Any]:
    """The suite's crossover K (:func:`lca.suite.stats.crossover`) of answers costing ``queries``.

    Every K from 1 to ``len(queries)`` is a measured point of the cumulative
    queries ``Q(K)``: the answers run in order on one cached reconstructor.
    """
    cumulative = np.cumsum(np.asarray(queries, dtype=np.int64))
    return crossover([(k, int(q)) for k, q in enumerate(cumulative, 1)], needed, largest)


def run_case(name: str, f: lca.Oracle, clean: lca.Oracle, depths: Sequence[int],
             sizes: Sizes, points: int) -> list[dict[str, Any]]:
    """Every mode at every depth on one case; one peer for all of them.

    Returns one row per depth: ``{"case", "n", "depth", "modes": {mode: ModeRun},
    "peer"}``. The peer (as the suite's ``run_case``) runs its grid until one
    step after it reaches the best error of the modes, and each mode's
    crossover uses the peer's first ``N`` that reaches its own error.
    """
    config = sizes.config
    z = derive.sample_points(config.eval_seed, POINTS_PURPOSE, f.n, points)
    f_values, clean_values = f(z), clean(z)
    rows = []
    for depth in depths:
        at_depth = dataclasses.replace(config, depth=depth)
        row = {"case": name, "n": f.n, "depth": at_depth.depth_for(f.n), "modes": {}}
        for mode, spec in MODES.items():
            run = measure_mode(f, spec.params(f.n, config=at_depth), z, f_values, config.seed,
                               f"{name} d={row['depth']} {mode}", spec.kernels)
            row["modes"][mode] = run
            tqdm.write(f"  {name} depth {row['depth']} {mode}: error {run.error:.3f}, "
                       f"{run.walls.sum():.2f} s, {run.total_queries / run.points:,.0f} "
                       f"queries/answer, lca-own {1e6 * run.own_per_query:.2f} us/query",
                       file=sys.stderr)
        rows.append(row)
    goal = min(run.error for row in rows for run in row["modes"].values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the peer's fits on tiny grids
        peer = measure_peer(f, z, f_values, clean_values, goal, config)
    largest = peer["rows"][-1]["queries"] if peer["rows"] else None
    for row in rows:
        row["peer"] = peer
        for run in row["modes"].values():
            run.cross = crossover_of(run.queries, peer_needed(peer, run.error), largest)
    return rows


def model_rows(sizes: Sizes, keys: Sequence[str], points: int) -> list[dict[str, Any]]:
    rows = []
    for key in keys:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence warnings of the training
            f, _ = model_oracle(MODEL_SPECS[key], sizes.config.target_seed)
        rows += run_case(key, f, f, sizes.model_depths, sizes, points)
    return rows


def noise_rows(sizes: Sizes, points: int) -> list[dict[str, Any]]:
    config = sizes.config
    clean = targets.random_tree(n=sizes.noise_n, leaves=sizes.noise_leaves,
                                seed=config.target_seed)
    rows = []
    for rate in sizes.noise_rates:
        f = targets.with_label_noise(clean, rate, config.noise_seed)
        name = f"tree{sizes.noise_leaves} eta={rate:g}"
        rows += run_case(name, f, clean, (sizes.noise_depth,), sizes, points)
    return rows


# -- part 3: one cold answer at large n, in a fresh process -----------------------------


def high_water() -> float:
    """This process's peak resident memory in MiB (VmHWM, Linux).

    getrusage's ru_maxrss would report the parent's resident size at fork when
    that is larger (as scripts/bench_engine.py notes).
    """
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024


def floor_seconds(f: lca.Oracle, n: int, queries: int, seed: int) -> float:
    """Derive ``queries`` uniform points and evaluate ``f`` on them once (scripts/bench_engine.py).

    In batches of the engine's rows per oracle call (:func:`lca.engine.chunk_rows`),
    as the reconstructor sends them: at n = 10^6 one batch of every point
    would take gigabytes.
    """
    key = derive.node_key(seed, FLOOR_PURPOSE, ())
    step = chunk_rows(n)
    start = time.perf_counter()
    for lo in range(0, queries, step):
        f(derive.unpack_points(derive.uniform_points(key, n, lo, min(queries, lo + step)), n))
    return time.perf_counter() - start


def large_answer(n: int, seed: int) -> dict[str, Any]:
    """One cold efficient answer at ``n`` and its floor (best of 3), in this process, on
    the kernels ``LCA_KERNELS`` picks here (``"kernels"`` says which ran)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lca.LowMarginWarning)
        params = lca.Params.efficient(n, depth=12)
        # Warm up the code paths at a small n, which leaves the high-water mark alone, on
        # the kernels the answer runs on: compiled ones at n = 1000 would load numba's
        # runtime (about 120 MiB) into a process whose answer never uses it.
        small = targets.random_tree(n=1000, leaves=LARGE_LEAVES, seed=1)
        with kernels(kernel_path(params)):
            lca.Reconstructor(small, lca.Params.efficient(1000, depth=12)).answer(
                derive.sample_points(seed, WARMUP_PURPOSE, 1000, 1)[0], seed)
        f = targets.random_tree(n=n, leaves=LARGE_LEAVES, seed=1)
        z = derive.sample_points(seed, POINTS_PURPOSE, n, 1)[0]
        timed = Timed(f)
        rec = lca.Reconstructor(timed, params)
        before = high_water()
        wall0, cpu0 = time.perf_counter(), time.thread_time()
        rec.answer(z, seed)
        cpu = time.thread_time() - cpu0
        wall = time.perf_counter() - wall0
        peak = high_water()
    queries = rec.stats.queries
    return {"n": n, "kernels": kernel_path(params), "queries": queries,
            "calls": rec.stats.oracle_calls, "internal": rec.stats.nodes_built, "wall": wall,
            "cpu": cpu,
            "oracle_cpu": timed.cpu, "oracle_wall": timed.wall,
            "floor": min(floor_seconds(f, n, queries, seed) for _ in range(3)),
            "peak_mib": peak, "before_mib": before}


def large_in_child(n: int, seed: int, kernel: str) -> dict[str, Any]:
    """:func:`large_answer` in a fresh interpreter on the node kernels ``kernel``
    (``LCA_KERNELS``), so its peak memory is the answer's own."""
    # The child imports the lca this process runs, wherever that comes from.
    home = str(Path(lca.__file__).resolve().parent.parent)
    path = os.pathsep.join(filter(None, [home, os.environ.get("PYTHONPATH")]))
    run = subprocess.run([sys.executable, __file__, "--large-child", str(n), str(seed)],
                         capture_output=True, text=True, check=False,
                         env={**os.environ, "PYTHONPATH": path, KERNELS_VARIABLE: kernel})
    if run.returncode:
        raise RuntimeError(f"the n = {n} child failed:\n{run.stderr}")
    return json.loads(run.stdout.splitlines()[-1])


# -- the report ----------------------------------------------------------------------------


def ratio(new: float | None, old: float | None) -> str:
    """``new / old`` as text, or a dash when either is unknown or ``old`` is 0."""
    if new is None or old is None or old == 0:
        return "—"
    value = new / old
    # Two significant digits below 0.1, so that a small ratio does not read as 0.00x.
    return f"{value:.2f}x" if value >= 0.1 else f"{value:.2g}x"


def _ms(seconds: float) -> str:
    if seconds < 1e-3:  # a warm answer: tens of microseconds
        return f"{1e6 * seconds:,.0f} us"
    return f"{1e3 * seconds:,.2f} ms" if seconds < 1 else f"{seconds:,.2f} s"


def _cross_value(cross: dict[str, Any] | None) -> float | None:
    # Only an interpolated K ("~") is a value to divide: "<=" is K <= 1, ">" a lower
    # bound and "?" nothing.
    if cross is None or cross["relation"] != "~":
        return None
    return float(cross["value"])


COLUMNS = ("case", "depth", "mode", "error vs f", "wall/answer, median", "wall/answer, mean",
           "wall, total", "oracle wall/answer", "CPU/query", "lca-own CPU/query",
           "lca-own CPU/query, replayed", "queries/answer",
           "oracle calls/answer", "cold: queries", "cold: wall", "warm: wall/answer",
           "answer_many: wall/answer",
           "answer_many: queries/answer", "answer_many: lca-own CPU/query", "crossover K")


def _mode_cells(run: ModeRun) -> list[str]:
    m = run.points
    return [f"{run.error:.3f}", _ms(float(np.median(run.walls))), _ms(run.walls.sum() / m),
            _ms(run.walls.sum()), _ms(run.oracle_wall / m), f"{1e6 * run.cpu_per_query:.2f} us",
            f"{1e6 * run.own_per_query:.2f} us", f"{1e6 * run.replayed_own_per_query:.2f} us",
            f"{run.total_queries / m:,.0f}",
            f"{run.calls / m:,.1f}", f"{int(run.queries[0]):,}", _ms(float(run.walls[0])),
            _ms(run.warm_wall), _ms(run.batch_wall / m), f"{run.batch_queries / m:,.0f}",
            f"{1e6 * run.batch_own / max(1, run.batch_queries):.2f} us",
            crossover_text(run.cross) if run.cross else "—"]


def _ratios(e: ModeRun, p: ModeRun) -> dict[str, tuple[float | None, float | None]]:
    """The efficient / paper pairs of the ratio row, in column order (error excluded)."""
    return {
        "wall/answer, median": (float(np.median(e.walls)), float(np.median(p.walls))),
        "wall/answer, mean": (e.walls.mean(), p.walls.mean()),
        "wall, total": (e.walls.sum(), p.walls.sum()),
        "oracle wall/answer": (e.oracle_wall, p.oracle_wall),
        "CPU/query": (e.cpu_per_query, p.cpu_per_query),
        "lca-own CPU/query": (e.own_per_query, p.own_per_query),
        "lca-own CPU/query, replayed": (e.replayed_own_per_query, p.replayed_own_per_query),
        "queries/answer": (e.total_queries, p.total_queries),
        "oracle calls/answer": (e.calls, p.calls),
        "cold: queries": (int(e.queries[0]), int(p.queries[0])),
        "cold: wall": (float(e.walls[0]), float(p.walls[0])),
        "warm: wall/answer": (e.warm_wall, p.warm_wall),
        "answer_many: wall/answer": (e.batch_wall, p.batch_wall),
        "answer_many: queries/answer": (e.batch_queries, p.batch_queries),
        "answer_many: lca-own CPU/query": (e.batch_own / max(1, e.batch_queries),
                                           p.batch_own / max(1, p.batch_queries)),
        "crossover K": (_cross_value(e.cross), _cross_value(p.cross)),
    }


def case_table(rows: Sequence[dict[str, Any]]) -> list[str]:
    lines = ["| " + " | ".join(COLUMNS) + " |",
             "|---|---:|---|" + "---:|" * (len(COLUMNS) - 3)]
    for row in rows:
        for mode, run in row["modes"].items():
            lines.append(f"| {row['case']} | {row['depth']} | {mode} | "
                         + " | ".join(_mode_cells(run)) + " |")
        for mode in row["modes"]:
            if mode == "paper":
                continue
            pairs = _ratios(row["modes"][mode], row["modes"]["paper"])
            lines.append(f"| {row['case']} | {row['depth']} | **{mode} / paper** | — | "
                         + " | ".join(ratio(*pair) for pair in pairs.values()) + " |")
    return lines


def peer_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """What the crossover compares with: per case, the peer's best error and its grid."""
    lines, seen = [], set()
    for row in rows:
        if row["case"] in seen:
            continue
        seen.add(row["case"])
        peer = row["peer"]
        best = min(peer["rows"], key=lambda r: r["err_f"]["value"])
        lines.append(f"* Peer on {row['case']}: best error {best['err_f']['value']:.3f} at "
                     f"N = {best['queries']:,}; grid up to {peer['rows'][-1]['queries']:,}"
                     + (" (stopped one step after reaching the modes' best error)"
                        if peer["stopped_early"] else "") + ".")
    return lines


def summary(rows: Sequence[dict[str, Any]]) -> str:
    """Medians over the rows of each mode's ratios to the paper mode that matter most."""
    picked = ("wall, total", "wall/answer, median", "oracle wall/answer", "queries/answer",
              "oracle calls/answer",
              "cold: wall", "lca-own CPU/query", "lca-own CPU/query, replayed", "crossover K")
    lines = []
    for mode in (m for m in MODES if m != "paper"):
        parts = []
        for name in picked:
            values = [new / old for row in rows
                      for new, old in [_ratios(row["modes"][mode], row["modes"]["paper"])[name]]
                      if new is not None and old]
            if values:
                parts.append(f"{name} {statistics.median(values):.2f}x")
        lines.append(f"Median over the {len(rows)} rows of {mode} / paper: "
                     + "; ".join(parts) + ".")
    return "\n\n".join(lines)


def large_table(results: Sequence[dict[str, Any]]) -> list[str]:
    lines = ["| n | kernels | queries | oracle calls | internal nodes | cold answer (wall) "
             "| CPU | lca-own CPU | floor | answer / floor | queries / (nodes x log2 n) "
             "| peak RSS | RSS before answering |",
             "|---:|---|" + "---:|" * 11]
    for r in results:
        # A root leaf has no internal node and so no information floor.
        query_floor = r["internal"] * math.log2(r["n"])
        lines.append(
            f"| {r['n']:,} | {r['kernels']} | {r['queries']:,} | {r['calls']:,} "
            f"| {r['internal']} "
            f"| {_ms(r['wall'])} | {_ms(r['cpu'])} | {_ms(r['cpu'] - r['oracle_cpu'])} "
            f"| {_ms(r['floor'])} | {ratio(r['wall'], r['floor'])} "
            f"| {ratio(r['queries'], query_floor)} | {r['peak_mib']:,.0f} MiB "
            f"| {r['before_mib']:,.0f} MiB |")
    return lines


def _git(*args: str) -> str:
    run = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    return run.stdout.strip() if run.returncode == 0 else "unknown"


def code_commit(out: Path | None) -> str:
    """The commit measured, read when the run starts; changes to tracked files other
    than the report itself (a report of an earlier run is not code) are flagged."""
    commit = _git("rev-parse", "--short", "HEAD")
    exclude = [f":(exclude){out.resolve().relative_to(ROOT)}"] \
        if out is not None and out.resolve().is_relative_to(ROOT) else []
    if _git("status", "--porcelain", "--untracked-files=no", "--", ".", *exclude):
        commit += " (with uncommitted changes)"
    return commit


def header(argv: Sequence[str], seconds: float, sizes: Sizes, points: int,
           commit: str) -> list[str]:
    config = sizes.config
    paper = fixed_params(100, config=config)
    import sklearn
    from threadpoolctl import threadpool_info  # scikit-learn's own dependency

    pools = ", ".join(dict.fromkeys(f"{pool['internal_api']} {pool['num_threads']} threads"
                                    for pool in threadpool_info())) or "none loaded"

    return [
        "# The one-point path: `Reconstructor.answer`, one point at a time", "",
        f"Generated by `{shlex.join(['python', 'scripts/bench_local.py', *argv])}`.",
        "",
        f"Commit {commit}; {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}; "
        f"{os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), "
        f"{platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}, "
        f"scikit-learn {sklearn.__version__}, numba {numba_version()}, lca {lca.__version__}; "
        f"{seconds:.0f} s in all.",
        "",
        "Modes: four of the efficient mode, `Params.efficient(n, depth=d, lookahead=s)` "
        "with *lookahead=1* (one binary-search step per oracle call) or *lookahead=auto* "
        "(the steps per call chosen for each search from the oracle's cost per call and "
        "per row, measured as the reconstructor calls it: `lca.engine.CallCosts`), each on "
        f"the *compiled* node kernels (`{KERNELS_VARIABLE}=compiled`, `lca.search.kernels`) "
        f"and on the *numpy* reference (`{KERNELS_VARIABLE}=numpy`): the same tree, every "
        "answer checked equal; *paper* is the suite's fixed "
        f"preset (`lca.suite.modes.fixed_params`): `Params.practical(n, d, "
        f"{config.noise_rate:g}, {paper.score_samples}, {paper.leaf_samples})`. Seed "
        f"{config.seed}; {points:,} points per case (`derive.sample_points("
        f"{config.eval_seed}, {POINTS_PURPOSE!r}, n, {points})`), the same for every mode.",
        "",
        "Per case and mode the points are answered in order with `Reconstructor.answer` on "
        "one fresh reconstructor (node cache on), after an untimed warm-up answer of another "
        "tree on another reconstructor. *wall/answer*: median and mean over the points; "
        "*oracle wall/answer*: the wall time inside the oracle's `query` (the model's own "
        "work and its fixed cost per call), per answer; "
        "*CPU/query*: CPU time of the calling thread (`time.thread_time`) of the answers "
        "over their queries (lca runs in that thread; the model's native thread pools, here "
        f"{pools}, are not counted, so neither their work nor their spinning after a call "
        "is); *lca-own CPU/query*: the same minus the CPU spent inside the oracle's `query`; "
        "*replayed*: lca-own CPU/query of the same answers on another fresh reconstructor "
        "whose oracle answers each call from a log of the first run's values (the same "
        "calls, checked), so no model code runs between lca's steps: the difference is "
        "what a model's call costs lca's next steps (caches it evicted), not lca's work; "
        "*cold*: the first answer; *warm*: the median of the same points answered again "
        "on the same reconstructor, every node of their paths cached (no query), the "
        "steady state of a service. *answer_many*: the same points in one "
        "call on a fresh reconstructor (its lca-own CPU likewise). *Crossover K* "
        "(`lca.suite.stats.crossover`, as the suite): the answers K at which the cumulative "
        "queries of the one-at-a-time run "
        "reach the N uniform labelled queries a scikit-learn DecisionTreeClassifier needs "
        "to reach the mode's error against f (`lca.suite.measure.measure_peer`, grid "
        f"{', '.join(f'{s:,}' for s in config.peer_sizes)}, at most "
        f"{config.peer_entry_cap:,} entries); both errors on these points. "
        "*mode / paper* rows are ratios of the same run (below 1: the mode is lower).",
        "",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write the markdown report here "
                                                 "(default: print it)")
    parser.add_argument("--points", type=int, default=None,
                        help="points answered one at a time per case and mode "
                             "(default 1000; 5 with --quick)")
    parser.add_argument("--parts", default=",".join(PARTS),
                        help=f"comma-separated parts to run (default {','.join(PARTS)})")
    parser.add_argument("--models", default=None,
                        help="comma-separated suite models for the models part "
                             f"(default all: {','.join(MODEL_SPECS)})")
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes (one model, depth 4, n = 30, 5 points, n <= 10^4)")
    parser.add_argument("--huge", action="store_true",
                        help="add n = 10^7 to the large part (minutes, about 1 GiB)")
    parser.add_argument("--large-child", type=int, nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.large_child is not None:  # n, seed: large_in_child's fresh process
        print(json.dumps(large_answer(*args.large_child)))
        return 0
    sizes = quick_sizes() if args.quick else full_sizes()
    parts = args.parts.split(",")
    if not parts or not set(parts) <= set(PARTS):
        parser.error(f"--parts must be a comma-separated list of {', '.join(PARTS)}; "
                     f"got {args.parts!r}")
    models = sizes.models if args.models is None else tuple(args.models.split(","))
    unknown = [key for key in models if key not in MODEL_SPECS]
    if unknown:
        parser.error(f"--models must name suite models ({', '.join(MODEL_SPECS)}); "
                     f"got {', '.join(map(repr, unknown))}")
    points = sizes.points if args.points is None else args.points
    if points < 1:
        parser.error(f"--points must be at least 1; got {points}")

    commit = code_commit(args.out)
    start = time.perf_counter()
    sections: list[str] = []
    if "models" in parts:
        print("trained models", file=sys.stderr)
        rows = model_rows(sizes, models, points)
        sections += ["## Trained models, queried through their own `predict`", "",
                     summary(rows), "", *case_table(rows), "", *peer_lines(rows), ""]
    if "noise" in parts:
        print("noise tiers", file=sys.stderr)
        rows = noise_rows(sizes, points)
        sections += [f"## Noise tiers: a {sizes.noise_leaves}-leaf random tree, n = "
                     f"{sizes.noise_n}, label noise "
                     f"{' and '.join(f'{r:g}' for r in sizes.noise_rates)}", "",
                     summary(rows), "", *case_table(rows), "", *peer_lines(rows), ""]
    if "large" in parts:
        plan = list(sizes.large) + ([HUGE_N] if args.huge else [])
        results = []
        for n in tqdm(plan, desc="large n", unit="n", file=sys.stderr, leave=False):
            # Both kernels where the compiled ones run (below the selected orders' n).
            fit = kernel_fits(lca.Params.efficient(n, depth=12))
            for kernel in ("compiled", "numpy") if fit else ("numpy",):
                results.append(large_in_child(n, sizes.config.seed, kernel))
                tqdm.write(f"  n = {n:,}, {kernel}: {results[-1]['wall']:.2f} s, floor "
                           f"{results[-1]['floor']:.3f} s, peak "
                           f"{results[-1]['peak_mib']:.0f} MiB", file=sys.stderr)
        sections += [
            "## One cold efficient answer at large n, against its floor", "",
            f"A {LARGE_LEAVES}-leaf random tree (`targets.random_tree(n, {LARGE_LEAVES}, "
            "seed=1)`, noise-free), `Params.efficient(n, depth=12)`, one `answer` on a "
            "fresh reconstructor in a fresh process (after a warm-up answer at n = 1,000, "
            "which leaves the high-water mark alone), on the compiled node kernels and on "
            "the numpy reference where the compiled ones run (below n = 10^5; beyond, both "
            "are the numpy code's selected orders). *Floor*: deriving as many uniform "
            "points as the answer queried and evaluating the oracle on them once, in the "
            "engine's batch size (`lca.engine.chunk_rows`), best of 3, measured after the "
            "answer (as scripts/bench_engine.py). *queries / (nodes x log2 n)*: against "
            "the information floor of scripts/bench_floor.py. *Peak RSS*: the process's "
            "high-water mark (VmHWM) right after the answer.", "",
            *large_table(results), ""]
    text = "\n".join(header(argv, time.perf_counter() - start, sizes, points, commit)
                     + sections)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
