"""Do the tests pin the engine? A fresh, seeded sample of small mutations.

    flock /tmp/lca-bench.lock python scripts/mutation_sample.py --seed 7919
    python scripts/mutation_sample.py --seed 7919 --list      # the sample only, nothing run

For each file (``lca/reconstruct.py``, ``lca/engine.py``, ``lca/estimator.py``
and the modules of the ``lca/parallel/`` package by default) the script lists every site of these
small changes, found with the standard library's :mod:`ast`:

* a comparison swapped at its boundary or negated (``<`` and ``<=``, ``>``
  and ``>=``, ``==`` and ``!=``, ``is`` and ``is not``, ``in`` and ``not in``);
* an integer constant off by one (``k + 1`` or ``k - 1``), ``True`` and ``False``
  swapped;
* ``and`` and ``or`` swapped; a ``not`` removed; the test of an ``if``,
  ``while`` or conditional expression negated;
* ``+`` and ``-`` swapped (also in ``+=`` and ``-=``);
* a statement removed: an augmented assignment (a counter's ``+= 1``), a
  call made for its effect, an assignment into an item or attribute, a ``del``.

Docstrings, annotations, ``__all__`` and ``if TYPE_CHECKING:`` blocks have no
sites. It draws ``--per-file`` of them per file with ``random.Random(seed)``
and applies each *alone* to a fresh temporary copy of the repository's
``lca/`` and ``tests/`` (never to the working tree, so an interrupted run
changes nothing), then runs the tests that exercise the file, stopping at the
first failure, with a timeout: a mutation is *killed* if a test fails, the
tests cannot be collected, or the run times out (a hang); it *survives* if
every test passes. Survivors are then run against the whole suite (skip with
``--no-recheck``), so a reported survivor passes every test there is.

The report (markdown, on stdout and in ``--output``) gives the kill rate per
file and overall, every survivor (file, line, the change) and the command.
Progress goes to stderr. No answer of ``lca`` depends on this script.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import os
import random
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FILES = ("lca/reconstruct.py", "lca/engine.py", "lca/estimator.py", "lca/parallel/pool.py",
         "lca/parallel/worker.py", "lca/parallel/routing.py", "lca/parallel/errors.py")

# The tests that exercise each file, fastest and most pointed first (the run
# stops at the first failure).
_ENGINE_TESTS = ("tests/test_engine.py", "tests/test_reconstruct.py", "tests/test_estimate.py",
                 "tests/test_known_answers.py", "tests/test_adaptive.py",
                 "tests/test_search.py", "tests/test_export.py",
                 "tests/test_spec_reference.py", "tests/test_boundaries.py")
_PARALLEL_TESTS = ("tests/test_parallel.py", "tests/test_processes.py",
                   "tests/test_consistency.py", "tests/test_export.py",
                   "tests/test_boundaries.py")
_MODELS_TESTS = ("tests/test_rows_answers.py", "tests/test_surrogate_data.py",
                 "tests/test_surrogate_missing.py",
                 "tests/test_surrogate_missing_product.py", "tests/test_surrogate_inputs.py",
                 "tests/test_models.py", "tests/test_surrogate.py",
                 "tests/test_surrogate_multiclass.py", "tests/test_saved_surrogate.py",
                 "tests/test_distill.py", "tests/test_estimator_contract.py")
TESTS = {
    "lca/reconstruct.py": _ENGINE_TESTS,
    "lca/engine.py": _ENGINE_TESTS,
    "lca/estimator.py": _ENGINE_TESTS,
    "lca/parallel/pool.py": _PARALLEL_TESTS,
    "lca/parallel/worker.py": _PARALLEL_TESTS,
    "lca/parallel/routing.py": _PARALLEL_TESTS,
    "lca/parallel/errors.py": _PARALLEL_TESTS,
    **{f"lca/models/{name}.py": _MODELS_TESTS
       for name in ("_data", "_state", "cli", "encoders", "oracle", "quality", "questions",
                    "rows", "sources", "surrogate", "thresholds")},
}

_SWAPS: dict[type, type] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.And: ast.Or, ast.Or: ast.And,
    ast.Add: ast.Sub, ast.Sub: ast.Add,
}


@dataclasses.dataclass(frozen=True)
class Mutation:
    """One change at one site: node ``index`` in :func:`_walk` order of ``file``."""

    file: str
    index: int
    kind: str
    detail: int | None  # the operator position of a comparison, or the constant's new value
    line: int

    @property
    def key(self) -> tuple[str, int, str, int | None]:
        return self.file, self.index, self.kind, self.detail


# -- finding sites -----------------------------------------------------------------------

def _excluded(tree: ast.Module) -> set[int]:
    """ids of nodes that hold no site: docstrings, annotations, __all__, TYPE_CHECKING blocks."""
    skip: set[int] = set()

    def drop(node: ast.AST | None) -> None:
        if node is not None:
            skip.update(id(child) for child in ast.walk(node))

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value,
                                                                            str):
            drop(body[0])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            drop(node.returns)
            for arg in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs,
                        node.args.vararg, node.args.kwarg]:
                if arg is not None:
                    drop(arg.annotation)
        if isinstance(node, ast.AnnAssign):
            drop(node.annotation)
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                for t in node.targets):
            drop(node)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) \
                and node.test.id == "TYPE_CHECKING":
            drop(node)
    return skip


def _walk(tree: ast.Module) -> list[ast.AST]:
    """Every node, in one fixed order (the index of a site)."""
    return list(ast.walk(tree))


def _removable(node: ast.AST) -> bool:
    if isinstance(node, (ast.AugAssign, ast.Delete)):
        return True
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Call)
    if isinstance(node, ast.Assign):
        return all(isinstance(t, (ast.Subscript, ast.Attribute)) for t in node.targets)
    return False


def _node_sites(node: ast.AST) -> list[tuple[str, int | None]]:
    """The (kind, detail) of every mutation of ``node`` itself, in a fixed order."""
    found: list[tuple[str, int | None]] = []
    if isinstance(node, ast.Compare):
        found += [("compare", at) for at, op in enumerate(node.ops) if type(op) in _SWAPS]
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        found += [("constant", node.value + 1), ("constant", node.value - 1)]
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        found.append(("boolean", None))
    elif isinstance(node, ast.BoolOp):
        found.append(("and-or", None))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        found.append(("not", None))
    elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in (ast.Add, ast.Sub):
        found.append(("plus-minus", None))
    if isinstance(node, (ast.If, ast.While, ast.IfExp)):
        found.append(("negate", None))
    if isinstance(node, ast.stmt) and _removable(node):
        found.append(("remove", None))
    return found


def sites(file: str, source: str) -> list[Mutation]:
    """Every mutation of ``source`` (the file ``file``), in a fixed order."""
    tree = ast.parse(source)
    skip = _excluded(tree)
    found = []
    for index, node in enumerate(_walk(tree)):
        if id(node) in skip:
            continue
        line = getattr(node, "lineno", 0)
        found += [Mutation(file, index, kind, detail, line) for kind, detail in _node_sites(node)]
    return found


# -- applying one -----------------------------------------------------------------------------

class _Apply(ast.NodeTransformer):
    """Make ``mutation`` at ``target``; :attr:`replacement` is the node put in its place."""

    def __init__(self, mutation: Mutation, target: ast.AST) -> None:
        self.mutation, self.target = mutation, target
        self.replacement: ast.AST | None = None

    def visit(self, node: ast.AST) -> ast.AST:
        if node is not self.target:
            return self.generic_visit(node)
        self.replacement = self._change(node)
        return self.replacement

    def _change(self, node: ast.AST) -> ast.AST:
        kind, detail = self.mutation.kind, self.mutation.detail
        if kind == "compare":
            node.ops[detail] = _SWAPS[type(node.ops[detail])]()
        elif kind == "constant":
            # -1 is written, and parsed, as -(1).
            return ast.Constant(detail) if detail >= 0 else ast.UnaryOp(ast.USub(),
                                                                        ast.Constant(-detail))
        elif kind == "boolean":
            node.value = not node.value
        elif kind in ("and-or", "plus-minus"):
            node.op = _SWAPS[type(node.op)]()
        elif kind == "not":
            return node.operand
        elif kind == "negate":
            node.test = ast.UnaryOp(ast.Not(), node.test)
        elif kind == "remove":
            return ast.Pass()
        return node


def _segment_bounds(source: str, node: ast.AST) -> tuple[int, int]:
    """Character offsets of ``node`` in ``source`` (ast columns count UTF-8 bytes)."""
    lines = source.splitlines(keepends=True)
    starts = [0]
    for text in lines:
        starts.append(starts[-1] + len(text))

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + len(lines[line - 1].encode()[:column].decode())

    return offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset)


def apply(mutation: Mutation, source: str) -> tuple[str, str, str]:
    """The mutated source, and the original and new text of the changed node."""
    tree = ast.parse(source)
    target = _walk(tree)[mutation.index]
    before = ast.get_source_segment(source, target) or ast.unparse(target)
    lo, hi = _segment_bounds(source, target)
    change = _Apply(mutation, target)
    mutated = change.visit(tree)
    ast.fix_missing_locations(mutated)
    after = ast.unparse(change.replacement)
    expected = ast.dump(mutated)
    # Splice the new text in, keeping the rest of the file (comments, layout) as it
    # was; where that does not parse to exactly the mutated tree, unparse it all.
    spliced = source[:lo] + after + source[hi:]
    try:
        if ast.dump(ast.parse(spliced)) == expected:
            return spliced, before, after
    except SyntaxError:
        pass
    whole = ast.unparse(mutated)
    assert ast.dump(ast.parse(whole)) == expected
    return whole, before, after


# -- running ---------------------------------------------------------------------------------

def _copy(destination: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    for name in ("lca", "tests"):
        shutil.copytree(ROOT / name, destination / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, destination / name)
    # The whole suite reads these too (tests/test_readme.py reads .ci/run): without
    # them every survivor's recheck failed, and counted as killed.
    for name in ("docs", "scripts", ".ci"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, destination / name, ignore=ignore)


def _run(copy: Path, tests: tuple[str, ...] | None, timeout: float,
         first_failure: bool) -> tuple[str, float]:
    """Run pytest in ``copy``: ``"passed"``, ``"failed"`` or ``"timeout"``, and seconds."""
    env = dict(os.environ, PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--no-header"]
    if first_failure:
        command.append("-x")
    command += list(tests) if tests else []
    start = time.monotonic()
    process = subprocess.Popen(command, cwd=copy, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        # Whatever is left (pool workers, a hung oracle) goes with the session.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    seconds = time.monotonic() - start
    if code is None:
        return "timeout", seconds
    if code == 5:
        raise RuntimeError(f"no tests collected: {command}")
    return ("passed" if code == 0 else "failed"), seconds


def _check_copy(scratch: Path, tests: tuple[str, ...] | None, recheck: bool) -> None:
    """The tests in a copy import the copy's lca, and pass unmutated (the whole
    suite too when survivors are rechecked against it)."""
    copy = scratch / "baseline"
    _copy(copy)
    found = subprocess.run([sys.executable, "-c", "import lca; print(lca.__file__)"],
                           cwd=copy, env=dict(os.environ, PYTHONPATH=str(copy)),
                           capture_output=True, text=True, check=True).stdout.strip()
    if Path(found).resolve() != (copy / "lca" / "__init__.py").resolve():
        raise RuntimeError(f"the copy imports lca from {found}, not from {copy}")
    subsets = [tests] if tests else sorted(set(TESTS.values()))
    for subset in [*subsets, *([None] if recheck else [])]:
        outcome, seconds = _run(copy, subset, 1800, True)
        print(f"baseline {' '.join(subset or ['(whole suite)'])}: {outcome} "
              f"({seconds:.0f} s)", file=sys.stderr)
        if outcome != "passed":
            raise RuntimeError("the unmutated copy fails its tests: fix that first")
    shutil.rmtree(copy)


@dataclasses.dataclass
class Outcome:
    mutation: Mutation
    before: str
    after: str
    result: str = ""
    seconds: float = 0.0
    full: str | None = None  # the whole suite's result for a survivor

    @property
    def killed(self) -> bool:
        return self.result != "passed" or self.full not in (None, "passed")


def sample(files: tuple[str, ...], per_file: int | None, seed: int) -> Iterator[Outcome]:
    """``per_file`` mutations of each file drawn with ``seed`` (every one if None)."""
    rng = random.Random(seed)
    for file in files:
        source = (ROOT / file).read_text()
        candidates = sites(file, source)
        chosen = candidates if per_file is None else rng.sample(
            candidates, min(per_file, len(candidates)))
        for mutation in sorted(chosen, key=lambda m: (m.line, m.index, m.kind, m.detail or 0)):
            _, before, after = apply(mutation, source)
            yield Outcome(mutation, before, after)


def _short(text: str, width: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."


def run(outcomes: list[Outcome], timeout: float, recheck: bool,
        tests: tuple[str, ...] | None) -> None:
    """Run every mutation's tests (``tests``, or the file's subset) in its own copy."""
    with tempfile.TemporaryDirectory(prefix="lca-mutants-") as scratch_name:
        scratch = Path(scratch_name)
        _check_copy(scratch, tests, recheck)
        for number, outcome in enumerate(outcomes, 1):
            mutation = outcome.mutation
            copy = scratch / f"m{number}"
            _copy(copy)
            source, _, _ = apply(mutation, (ROOT / mutation.file).read_text())
            (copy / mutation.file).write_text(source)
            outcome.result, outcome.seconds = _run(copy, tests or TESTS[mutation.file],
                                                   timeout, True)
            if outcome.result == "passed" and recheck:
                outcome.full, more = _run(copy, None, 4 * timeout, True)
                outcome.seconds += more
            shutil.rmtree(copy)
            print(f"[{number}/{len(outcomes)}] {mutation.file}:{mutation.line} "
                  f"{mutation.kind}: {_short(outcome.before, 40)} -> {_short(outcome.after, 40)}"
                  f"  {'killed' if outcome.killed else 'SURVIVED'} ({outcome.result}"
                  f"{'' if outcome.full is None else ', whole suite ' + outcome.full}, "
                  f"{outcome.seconds:.0f} s)", file=sys.stderr, flush=True)


def report(outcomes: list[Outcome], command: str, seed: int, recheck: bool) -> str:
    lines = [f"Command: `{command}` (seed {seed}).", "",
             "| file | mutations | killed | kill rate |", "|---|---|---|---|"]
    files = list(dict.fromkeys(o.mutation.file for o in outcomes))
    for file in files + ["all"]:
        chosen = [o for o in outcomes if file in ("all", o.mutation.file)]
        killed = sum(o.killed for o in chosen)
        name = f"`{file}`" if file != "all" else "**all**"
        lines.append(f"| {name} | {len(chosen)} | {killed} | {100 * killed / len(chosen):.0f}% |")
    hangs = sum(o.result == "timeout" for o in outcomes)
    lines += ["", f"Killed by a timeout (a hang): {hangs}."]
    survivors = [o for o in outcomes if not o.killed]
    lines += ["", "Survivors" + (" (every test of the whole suite passes):" if recheck else
                                 " (every test of the file's subset passes):")]
    if not survivors:
        lines.append("none.")
    else:
        lines += ["", "| file:line | change |", "|---|---|"]
        for o in survivors:
            change = f"`{_short(o.before)}` → `{_short(o.after)}`".replace("|", "\\|")
            lines.append(f"| `{o.mutation.file}:{o.mutation.line}` | {o.mutation.kind}: "
                         f"{change} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the sample (default: a fresh one, printed)")
    parser.add_argument("--per-file", type=int, default=30, help="mutations per file")
    parser.add_argument("--all", action="store_true",
                        help="every mutation of each file, not a sample (for finding gaps)")
    parser.add_argument("--tests", help="comma-separated test files to run for every "
                                        "mutation instead of each file's subset")
    parser.add_argument("--files", default=",".join(FILES),
                        help=f"comma-separated files to mutate (default {','.join(FILES)})")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds before a mutated test run counts as a hang (killed)")
    parser.add_argument("--no-recheck", action="store_true",
                        help="do not run survivors against the whole suite")
    parser.add_argument("--list", action="store_true", help="print the sample, run nothing")
    parser.add_argument("--output", help="also write the markdown report to this file")
    args = parser.parse_args(argv)
    files = tuple(name.strip() for name in args.files.split(",") if name.strip())
    unknown = [name for name in files if name not in TESTS]
    if unknown and not args.tests:  # --tests names the tests of every file
        parser.error(f"no test subset for {unknown} (pass --tests); known: {sorted(TESTS)}")
    seed = secrets.randbelow(2**31) if args.seed is None else args.seed
    tests = tuple(name.strip() for name in args.tests.split(",")) if args.tests else None
    command = ("python scripts/mutation_sample.py "
               + ("--all" if args.all else f"--seed {seed} --per-file {args.per_file}")
               + ("" if files == FILES else f" --files {','.join(files)}")
               + ("" if tests is None else f" --tests {','.join(tests)}")
               + (" --no-recheck" if args.no_recheck else ""))
    outcomes = list(sample(files, None if args.all else args.per_file, seed))
    if args.list:
        for o in outcomes:
            print(f"{o.mutation.file}:{o.mutation.line} {o.mutation.kind}: "
                  f"{_short(o.before)} -> {_short(o.after)}")
        return 0
    print(f"seed {seed}: {len(outcomes)} mutations", file=sys.stderr)
    run(outcomes, args.timeout, not args.no_recheck, tests)
    text = report(outcomes, command, seed, not args.no_recheck)
    print(text)
    if args.output:
        Path(args.output).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
