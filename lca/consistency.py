"""Cross-replica consistency harness: many replicas, one tree.

The promise of Remark "Local reconstruction" is that replicas which never talk
build the same tree ``T_seed``. :func:`check_consistency` tests it: it runs
``R`` replicas as separate processes that differ in everything that must not
matter — start method (``spawn``, ``forkserver``, ``fork`` where available),
node cache on or off, task and batch sizes, routing, query order, a pure
:func:`lca.answer` replica and, if Dask is installed, a Dask replica — and
compares

* every answer with the first replica's, and
* every decision two replicas share: node path -> chosen variable and the
  counts that chose it, leaf path -> label and its sample sum.

The :class:`ConsistencyReport` gives the agreement rate and, on divergence,
the first differing node (shallowest first: that is where replicas part ways;
deeper differences follow from it) with its full context.

Replicas run one after another; each may itself use several worker processes.
"""

from __future__ import annotations

import multiprocessing
import pickle
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, fields, replace
from numbers import Integral
from typing import Any

import numpy as np

from lca import derive
from lca._processes import RERUNS_MAIN, require_main_guard, sigint_blocked
from lca._validate import check_flag, check_int, check_seed, problem
from lca.derive import Path
from lca.oracle import Oracle, check_points
from lca.parallel import ReplicaPool
from lca.parallel.worker import describe_replica
from lca.params import Params
from lca.reconstruct import LeafDecision, NodeDecision, Reconstructor, answer

__all__ = [
    "ReplicaSpec",
    "ReplicaOutcome",
    "Divergence",
    "ConsistencyReport",
    "default_replicas",
    "uniform_queries",
    "query_order",
    "run_replica",
    "compare",
    "check_consistency",
    "SurrogateReport",
    "check_surrogate",
]

Decision = NodeDecision | LeafDecision
KINDS = ("pool", "pure", "dask")


@dataclass(frozen=True)
class ReplicaSpec:
    """How one replica runs. None of these fields may change an answer.

    Attributes:
        name: label used in reports.
        kind: ``"pool"`` (a :class:`lca.parallel.ReplicaPool`), ``"pure"``
            (one :func:`lca.answer` call per query, in a spawned process) or
            ``"dask"`` (:mod:`lca.distributed`).
        start_method, workers, cache_size, batch_size, routing, chunk_size:
            how a pool replica runs (see :class:`lca.parallel.ReplicaPool`);
            for ``"dask"``, ``chunk_size`` is the rows per block.
        shuffle: answer the queries in a seed-derived order (answers are
            compared in input order).
        limit: answer only the first ``limit`` queries (pure replicas are
            slow: every answer is cold).
        oracle, params, seed: override the harness's, to break a replica on
            purpose when testing the harness itself.
    """

    name: str
    kind: str = "pool"
    start_method: str = "spawn"
    workers: int = 1
    cache_size: int = 1 << 16
    batch_size: int | None = None
    routing: str = "prefix"
    chunk_size: int | None = None
    shuffle: bool = False
    limit: int | None = None
    oracle: Oracle | None = None
    params: Params | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"The 'kind' parameter of ReplicaSpec must be one of {KINDS}. "
                             f"Got {self.kind!r} instead.")


@dataclass(frozen=True, eq=False)
class ReplicaOutcome:
    """What one replica answered and decided."""

    spec: ReplicaSpec
    seed: int
    answers: np.ndarray
    decisions: dict[Path, Decision]
    conflicts: tuple[tuple[Path, Decision, Decision], ...]
    seconds: float


@dataclass(frozen=True)
class Divergence:
    """Two replicas (or two workers of one) decided one node differently."""

    path: Path
    replica_a: str
    seed_a: int
    decision_a: Decision
    replica_b: str
    seed_b: int
    decision_b: Decision

    @property
    def fields(self) -> tuple[str, ...]:
        """Names of the decision fields that differ."""
        if type(self.decision_a) is not type(self.decision_b):
            return ("kind",)
        return tuple(f.name for f in fields(self.decision_a)
                     if getattr(self.decision_a, f.name) != getattr(self.decision_b, f.name))

    def __str__(self) -> str:
        kind = "leaf" if isinstance(self.decision_a, LeafDecision) else "node"
        return (f"{kind} at path {self.path} (depth {len(self.path)}) differs in "
                f"{', '.join(self.fields)}:\n"
                f"    {self.replica_a} (seed {self.seed_a}): {self.decision_a}\n"
                f"    {self.replica_b} (seed {self.seed_b}): {self.decision_b}")


@dataclass(frozen=True, eq=False)
class ConsistencyReport:
    """Agreement of replicas on answers and decisions.

    Attributes:
        replicas: every replica's outcome, the reference first.
        compared_answers, agreeing_answers: answer pairs (replica vs the
            reference) compared and equal.
        compared_decisions, agreeing_decisions: decision pairs (replica vs the
            first replica that decided the same path) compared and equal.
        divergences: every differing decision pair, shallowest path first.
        answer_mismatches: ``(query index, replica, reference answer, its
            answer)`` for the first differing answers (at most 10).
    """

    replicas: tuple[ReplicaOutcome, ...]
    compared_answers: int
    agreeing_answers: int
    compared_decisions: int
    agreeing_decisions: int
    divergences: tuple[Divergence, ...]
    answer_mismatches: tuple[tuple[int, str, int, int], ...]

    @property
    def ok(self) -> bool:
        """``True`` when every compared answer and decision agrees."""
        return not self.divergences and not self.answer_mismatches \
            and self.agreeing_answers == self.compared_answers

    @property
    def agreement_rate(self) -> float:
        """Agreeing over compared answer and decision pairs (``1.0`` if none)."""
        compared = self.compared_answers + self.compared_decisions
        agreeing = self.agreeing_answers + self.agreeing_decisions
        return agreeing / compared if compared else 1.0

    @property
    def first_divergence(self) -> Divergence | None:
        """The shallowest differing decision, where the replicas part ways."""
        return self.divergences[0] if self.divergences else None

    def __str__(self) -> str:
        lines = [f"lca consistency: {len(self.replicas)} replicas, "
                 f"{'AGREE' if self.ok else 'DIVERGE'}"]
        for outcome in self.replicas:
            lines.append(f"  {outcome.spec.name:<48} seed {outcome.seed:<6} "
                         f"{outcome.answers.size:>7} answers {len(outcome.decisions):>7} "
                         f"decisions {outcome.seconds:7.2f} s")
        lines.append(f"answers    {self.agreeing_answers}/{self.compared_answers} agree")
        lines.append(f"decisions  {self.agreeing_decisions}/{self.compared_decisions} agree")
        lines.append(f"agreement  {self.agreement_rate:.6f}")
        if self.divergences:
            lines.append(f"first divergent node ({len(self.divergences)} differing "
                         f"decision pairs):")
            lines.append("  " + str(self.divergences[0]))
        for index, name, reference, other in self.answer_mismatches[:3]:
            lines.append(f"query {index}: {self.replicas[0].spec.name} answered "
                         f"{reference:+d}, {name} answered {other:+d}")
        return "\n".join(lines)


# -- queries and order -------------------------------------------------------

def uniform_queries(seed: int, n: int, count: int) -> np.ndarray:
    """``count`` uniform points derived from ``seed`` (purpose ``"consistency-queries"``)."""
    owner = "uniform_queries"
    seed, n, count = check_seed(owner, seed), check_int(owner, "n", n, 1), \
        check_int(owner, "count", count, 0)
    return derive.sample_points(seed, "consistency-queries", n, count)


def query_order(seed: int, count: int, salt: int = 0) -> np.ndarray:
    """A permutation of ``range(count)``: a deterministic function of ``(seed, count, salt)``.

    Sorts indices by derived 64-bit words (purpose ``"consistency-order"``,
    stream ``salt``); the stable sort breaks the (unlikely) ties by index.
    """
    owner = "query_order"
    seed, count = check_seed(owner, seed), check_int(owner, "count", count, 0)
    salt = check_int(owner, "salt", salt, 0, 2 ** 64 - 1)
    key = derive.node_key(seed, "consistency-order", ())
    return np.argsort(derive.raw_words(key, salt, 0, count), kind="stable")


def default_replicas(count: int = 4, *, workers: int = 2, pure_queries: int = 200,
                     dask: bool = False) -> list[ReplicaSpec]:
    """``count`` replicas differing in everything that must not matter (plus Dask).

    The first is the reference: ``spawn``, ``workers`` processes, prefix
    routing, cache on, input order. Later ones vary start method (falling
    back to ``spawn`` where one is missing), cache, batch and chunk sizes,
    routing and order; the fourth is a pure :func:`lca.answer` replica on the
    first ``pure_queries`` queries. ``dask=True`` appends a Dask replica.
    """
    owner = "default_replicas"
    count = check_int(owner, "count", count, 1)
    workers = check_int(owner, "workers", workers, 1)
    pure_queries = check_int(owner, "pure_queries", pure_queries, 1)
    methods = multiprocessing.get_all_start_methods()

    def method(name: str) -> str:
        return name if name in methods else "spawn"

    variants = [
        ReplicaSpec(f"spawn, {workers} workers, prefix routing", workers=workers),
        ReplicaSpec(f"{method('forkserver')}, no cache, batches of 509, shuffled",
                    start_method=method("forkserver"), cache_size=0, batch_size=509,
                    shuffle=True),
        ReplicaSpec(f"{method('fork')}, {workers} workers, chunks of 997, shuffled",
                    start_method=method("fork"), workers=workers, routing="chunk",
                    chunk_size=997, shuffle=True),
        ReplicaSpec(f"pure lca.answer, first {pure_queries} queries", kind="pure",
                    limit=pure_queries),
        ReplicaSpec("spawn, cache of 64 nodes, batches of 101, shuffled",
                    cache_size=64, batch_size=101, shuffle=True),
        ReplicaSpec(f"spawn, {workers} workers, prefix tasks <= 256 rows",
                    workers=workers, chunk_size=256, shuffle=True),
    ]
    specs = [replace(variants[i % len(variants)],
                     name=variants[i % len(variants)].name
                     + (f" #{i // len(variants) + 1}" if i >= len(variants) else ""))
             for i in range(count)]
    if dask:
        specs.append(ReplicaSpec("dask, blocks of 1000 rows", kind="dask", chunk_size=1000,
                                 shuffle=True))
    return specs


# -- running replicas ---------------------------------------------------------

def _merge(found: dict[tuple[int, Path], Decision],
           into: dict[Path, Decision], conflicts: list[tuple[Path, Decision, Decision]]
           ) -> None:
    for (_, path), decision in found.items():
        first = into.setdefault(path, decision)
        if first != decision:
            conflicts.append((path, first, decision))


def _pure_replica(description: bytes, seed: int, packed: np.ndarray, n: int
                  ) -> tuple[np.ndarray, dict, list]:
    """Runs in its own process: :func:`lca.answer` per query, no state between queries."""
    oracle, params = pickle.loads(description)
    points = derive.unpack_points(packed, n)
    answers = np.array([answer(z, seed, oracle=oracle, params=params) for z in points],
                       dtype=np.int8)
    decisions: dict[Path, Decision] = {}
    conflicts: list[tuple[Path, Decision, Decision]] = []
    for z in points:
        # A fresh recorder per query is the same computation as answer(); it
        # exposes the decisions answer() keeps to itself.
        recorder = Reconstructor(oracle, params, cache_size=0, record=True)
        recorder.answer(z, seed)
        _merge(recorder.decisions, decisions, conflicts)
    return answers, decisions, conflicts


def run_replica(spec: ReplicaSpec, oracle: Oracle, params: Params, seed: int,
                points: np.ndarray, *, index: int = 0, dask_scheduler: Any = None
                ) -> ReplicaOutcome:
    """Run one replica on ``points``; answers come back in input order.

    ``index`` salts the shuffled order so that shuffled replicas differ.
    """
    oracle = spec.oracle if spec.oracle is not None else oracle
    params = spec.params if spec.params is not None else params
    seed = spec.seed if spec.seed is not None else seed
    points = points[:spec.limit] if spec.limit is not None else points
    m = points.shape[0]
    order = query_order(seed, m, salt=index) if spec.shuffle else np.arange(m)
    shuffled = points[order]
    decisions: dict[Path, Decision] = {}
    conflicts: list[tuple[Path, Decision, Decision]] = []
    answers = np.empty(m, dtype=np.int8)
    start = time.perf_counter()
    if spec.kind == "pool":
        with ReplicaPool(oracle, params, workers=spec.workers,
                         start_method=spec.start_method, cache_size=spec.cache_size,
                         batch_size=spec.batch_size, record=True) as pool:
            result = pool.answer(shuffled, seed, routing=spec.routing,
                                 chunk_size=spec.chunk_size)
        answers[order] = result.answers
        _merge(result.decisions or {}, decisions, conflicts)
        conflicts += [(key[1], a, b) for key, a, b in result.conflicts]
    elif spec.kind == "pure":
        description = describe_replica(oracle, params, "run_replica")
        context = multiprocessing.get_context(spec.start_method)
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as executor:
            with sigint_blocked():  # the process starts here; Ctrl-C is the parent's
                future = executor.submit(_pure_replica, description, seed,
                                         derive.pack_points(shuffled), params.n)
            got, found, clashes = future.result()
        answers[order] = got
        decisions.update(found)
        conflicts += clashes
    else:
        from lca.distributed import replica_results

        step = spec.chunk_size or max(1, -(-m // 4))
        blocks = replica_results(shuffled, oracle=oracle, params=params, seed=seed,
                                 partitions=-(-m // step) if m else 1,
                                 cache_size=spec.cache_size, scheduler=dask_scheduler)
        got = np.concatenate([b for b, _ in blocks]) if blocks else np.empty(0, np.int8)
        answers[order] = got
        for _, found in blocks:
            _merge(found, decisions, conflicts)
    return ReplicaOutcome(spec, seed, answers, decisions, tuple(conflicts),
                          time.perf_counter() - start)


# -- comparing ------------------------------------------------------------------

def _depth_first_key(path: Path) -> tuple[int, Path]:
    return len(path), path


def compare(outcomes: Sequence[ReplicaOutcome]) -> ConsistencyReport:
    """Compare replicas' answers with the first's and every shared decision.

    Pure function of the outcomes; divergences are sorted shallowest first.
    """
    if not outcomes:
        raise ValueError("compare needs at least one replica outcome")
    reference = outcomes[0]
    compared = agreeing = 0
    mismatches: list[tuple[int, str, int, int]] = []
    for outcome in outcomes[1:]:
        k = min(outcome.answers.size, reference.answers.size)
        same = outcome.answers[:k] == reference.answers[:k]
        compared += k
        agreeing += int(same.sum())
        for index in np.flatnonzero(~same)[:10 - len(mismatches)]:
            mismatches.append((int(index), outcome.spec.name,
                               int(reference.answers[index]), int(outcome.answers[index])))
    divergences: list[Divergence] = []
    for outcome in outcomes:
        for path, first, other in outcome.conflicts:
            divergences.append(Divergence(path, outcome.spec.name + " (one worker)",
                                          outcome.seed, first,
                                          outcome.spec.name + " (another worker)",
                                          outcome.seed, other))
    decided_first: dict[Path, tuple[ReplicaOutcome, Decision]] = {}
    compared_decisions = agreeing_decisions = 0
    for outcome in outcomes:
        for path, decision in outcome.decisions.items():
            seen = decided_first.setdefault(path, (outcome, decision))
            if seen[0] is outcome:
                continue
            compared_decisions += 1
            if seen[1] == decision:
                agreeing_decisions += 1
            else:
                divergences.append(Divergence(path, seen[0].spec.name, seen[0].seed,
                                              seen[1], outcome.spec.name, outcome.seed,
                                              decision))
    divergences.sort(key=lambda d: _depth_first_key(d.path))
    return ConsistencyReport(tuple(outcomes), compared, agreeing, compared_decisions,
                             agreeing_decisions, tuple(divergences), tuple(mismatches))


def _dask_available() -> bool:
    try:
        import dask  # noqa: F401
        import dask.array  # noqa: F401
        import dask.bag  # noqa: F401
    except ImportError:
        return False
    return True


def check_consistency(oracle: Oracle, params: Params, *, seed: int,
                      queries: int | Any = 2000,
                      replicas: int | Sequence[ReplicaSpec] = 4, workers: int = 2,
                      pure_queries: int = 200, dask: bool | None = None,
                      dask_scheduler: Any = None, progress: bool = False
                      ) -> ConsistencyReport:
    """Run replicas of ``T_seed`` that differ in everything that must not matter; compare.

    Args:
        oracle, params, seed: the tree under test.
        queries: a number of uniform queries derived from ``seed``, or an
            ``(m, n)`` array of ``±1``.
        replicas: a count for :func:`default_replicas`, or explicit specs.
        workers: worker processes of the multi-worker replicas.
        pure_queries: queries answered by the pure :func:`lca.answer` replica.
        dask: add a Dask replica; ``None`` adds one if Dask is installed.
        dask_scheduler: passed to ``dask.compute`` (default: the active
            client, else a temporary ``LocalCluster`` with one worker process).
        progress: print one line per replica to stderr.

    Returns:
        A :class:`ConsistencyReport`; ``report.ok`` is ``True`` when replicas
        agree. Every replica is itself deterministic, so a report is a
        deterministic function of the arguments (timings aside).
    """
    owner = "check_consistency"
    describe_replica(oracle, params, owner)
    seed = check_seed(owner, seed)
    workers = check_int(owner, "workers", workers, 1)
    pure_queries = check_int(owner, "pure_queries", pure_queries, 1)
    if dask is not None and not isinstance(dask, bool):
        raise TypeError(problem(owner, "dask", "a bool or None", dask))
    check_flag(owner, "progress", progress)
    points = _query_points(owner, queries, seed, params.n)
    specs = _replica_specs(owner, replicas, workers, pure_queries, dask)
    # Before any replica runs: a script without a main guard must not get halfway.
    # (Dask's local cluster starts its workers with spawn.)
    methods = {"spawn" if spec.kind == "dask" else spec.start_method for spec in specs}
    method = next((method for method in RERUNS_MAIN if method in methods), None)
    if method is not None:
        require_main_guard(owner, method)
    return compare(_run_replicas(specs, oracle, params, seed, points, dask_scheduler,
                                 progress))


def _query_points(owner: str, queries: int | Any, seed: int, n: int) -> np.ndarray:
    """The points of ``queries``: that many uniform ones derived from ``seed``, or checked."""
    if isinstance(queries, Integral) and not isinstance(queries, bool):
        if queries < 1:
            raise ValueError(f"The 'queries' parameter of {owner} must be an int >= 1 or "
                             f"an array of points. Got {queries!r} instead.")
        return uniform_queries(seed, n, int(queries))
    return check_points(queries, n, what="queries")


def _replica_specs(owner: str, replicas: int | Sequence[ReplicaSpec], workers: int,
                   pure_queries: int, dask: bool | None) -> list[ReplicaSpec]:
    """The replicas to run: :func:`default_replicas` of a count, or the checked specs."""
    if isinstance(replicas, Integral) and not isinstance(replicas, bool):
        if replicas < 2:
            raise ValueError(f"The 'replicas' parameter of {owner} must be at least 2. "
                             f"Got {replicas!r} instead.")
        use_dask = _dask_available() if dask is None else dask
        return default_replicas(int(replicas), workers=workers, pure_queries=pure_queries,
                                dask=use_dask)
    if isinstance(replicas, (bool, str, bytes)) or not isinstance(replicas, Sequence):
        raise TypeError(f"The 'replicas' parameter of {owner} must be an int >= 2 or a "
                        f"non-empty sequence of ReplicaSpec. Got {replicas!r} instead.")
    specs = list(replicas)
    if not specs or not all(isinstance(s, ReplicaSpec) for s in specs):
        raise TypeError(f"The 'replicas' parameter of {owner} must be an int or a "
                        f"non-empty sequence of ReplicaSpec. Got {replicas!r} instead.")
    return specs


def _run_replicas(specs: Sequence[ReplicaSpec], oracle: Oracle, params: Params, seed: int,
                  points: np.ndarray, dask_scheduler: Any,
                  progress: bool) -> list[ReplicaOutcome]:
    """Each replica's outcome, in order; a Dask replica without a scheduler gets a local one."""
    local = None
    if any(s.kind == "dask" for s in specs) and dask_scheduler is None:
        dask_scheduler = _active_client()
        if dask_scheduler is None:
            local = _local_cluster()
            dask_scheduler = local[1]
    try:
        outcomes = []
        for index, spec in enumerate(specs):
            outcome = run_replica(spec, oracle, params, seed, points, index=index,
                                  dask_scheduler=dask_scheduler)
            outcomes.append(outcome)
            if progress:
                print(f"replica {index + 1}/{len(specs)} {spec.name}: "
                      f"{outcome.seconds:.2f} s", file=sys.stderr)
    finally:
        if local is not None:
            cluster, client = local
            client.close()
            cluster.close()
    return outcomes


def _active_client() -> Any:
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:  # no client in this process
        return None


def _local_cluster() -> tuple[Any, Any]:
    """A one-process Dask cluster, quiet, for the Dask replica."""
    import logging

    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.ERROR)
    return cluster, Client(cluster)


# -- surrogates ------------------------------------------------------------------

@dataclass(frozen=True)
class SurrogateReport:
    """Agreement of replicas of one surrogate: threads sharing one fitted surrogate whose
    tree is built lazily, processes fitting their own, against one fitted alone.

    Attributes:
        trials: threaded trials (each on a freshly fitted surrogate).
        threads: threads per trial, each predicting every ``threads``-th row.
        processes: spawned processes, each fitting and predicting on its own.
        rows: rows predicted by each replica.
        differences: ``(replica, what)`` for each replica whose answers or saved
            document differ from the reference, or that raised (at most 10).
    """

    trials: int
    threads: int
    processes: int
    rows: int
    differences: tuple[tuple[str, str], ...]

    @property
    def ok(self) -> bool:
        """``True`` when every replica answered and saved exactly as the reference."""
        return not self.differences

    def __str__(self) -> str:
        lines = [f"lca consistency (surrogate): {self.trials} threaded trials of "
                 f"{self.threads} threads, {self.processes} processes, {self.rows} rows each: "
                 f"{'AGREE' if self.ok else 'DIVERGE'}"]
        lines += [f"  {replica}: {what}" for replica, what in self.differences]
        return "\n".join(lines)


def _surrogate_replica(payload: bytes) -> tuple[np.ndarray, str]:
    """A spawned replica: fit the pickled surrogate on the pickled rows; answer and save."""
    estimator, X = pickle.loads(payload)
    fitted = estimator.__sklearn_clone__().fit(X)
    return fitted.predict(X), fitted.to_json()


def _threaded(fitted: Any, take: Any, threads: int, like: np.ndarray) -> Any:
    """The answers of ``threads`` threads started together on one fitted surrogate, thread
    ``k`` predicting rows ``k, k + threads, ...``, assembled; or the first error raised."""
    import threading

    answers: list[Any] = [None] * threads
    start = threading.Barrier(threads)

    def run(k: int) -> None:
        start.wait()
        try:
            answers[k] = fitted.predict(take[k::threads])
        except Exception as error:  # noqa: BLE001 - reported, not raised in a thread
            answers[k] = error

    workers = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    failed = [answer for answer in answers if isinstance(answer, Exception)]
    if failed:
        return failed[0]
    assembled = np.empty_like(like)
    for k in range(threads):
        assembled[k::threads] = answers[k]
    return assembled


def check_surrogate(estimator: Any, X: Any, *, threads: int = 8, processes: int = 2,
                    trials: int = 1) -> SurrogateReport:
    """Check that a surrogate is one tree in every thread and process.

    ``estimator`` is a :class:`lca.models.Surrogate` (fitted or not: each
    replica fits a clone of it on ``X``, a DataFrame or an array). The
    reference fits alone and predicts every row, then saves (``to_json``).
    Each of ``trials`` trials fits a fresh clone and starts ``threads``
    threads together, thread ``k`` predicting rows ``k, k + threads, ...``
    while the tree is built lazily under them; the assembled answers and
    the saved document must equal the reference's. Each of ``processes``
    spawned processes fits its own clone and must answer and save alike
    (the model and rows must pickle).
    """
    owner = "check_surrogate"
    threads = check_int(owner, "threads", threads, 1)
    processes = check_int(owner, "processes", processes, 0)
    trials = check_int(owner, "trials", trials, 0)
    reference = estimator.__sklearn_clone__().fit(X)
    expected, saved = reference.predict(X), reference.to_json()
    rows = len(expected)
    differences: list[tuple[str, str]] = []

    def compare(name: str, answers: np.ndarray, text: str) -> None:
        if len(differences) >= 10:
            return
        if answers.shape != expected.shape or not bool(np.all(answers == expected)):
            differing = np.flatnonzero(answers != expected) if answers.shape == \
                expected.shape else [0]
            differences.append((name, f"answers differ from row {int(differing[0])}"))
        elif text != saved:
            differences.append((name, "the saved document differs"))

    take = getattr(X, "iloc", X)  # rows of a DataFrame by position, of an array as they are
    for trial in range(trials):
        fitted = estimator.__sklearn_clone__().fit(X)
        found = _threaded(fitted, take, threads, expected)
        if isinstance(found, Exception):
            differences.append((f"trial {trial}", f"a thread raised {found!r}"))
        else:
            compare(f"trial {trial}", found, fitted.to_json())
    if processes:
        context = multiprocessing.get_context("spawn")
        payload = pickle.dumps((estimator, X))
        with ProcessPoolExecutor(processes, mp_context=context) as pool:
            for index, (answers_k, text) in enumerate(
                    pool.map(_surrogate_replica, [payload] * processes)):
                compare(f"process {index}", answers_k, text)
    return SurrogateReport(trials, threads, processes, rows, tuple(differences))
