"""Starting processes from a script: the main guard is detected, never a hang.

Every script runs as a real subprocess, bounded in time; a refusal must come
before any worker starts, name the script and the line, and leave no child.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from lca._processes import _guarded_lines

SETUP = """
import multiprocessing
import lca
from lca import derive
from lca.parallel import ReplicaPool, answer_parallel
from lca.testing import assert_replicas_agree

f = lca.targets.parity(16, 2, 1)
params = lca.Params.efficient(16, depth=3)
points = derive.sample_points(1, "guard", 16, 50)
"""

# Each starts processes from the script's top level, without a guard; the
# marked line is where the top level is when the refusal comes.
UNGUARDED = {
    "pool": """
try:
    with ReplicaPool(f, params, workers=2) as pool:  # HERE
        pool.answer(points, 7)
except RuntimeError as error:
    print("refused:", error)
""",
    "forkserver": """
try:
    ReplicaPool(f, params, workers=1, start_method="forkserver").answer(points, 7)  # HERE
except RuntimeError as error:
    print("refused:", error)
""",
    "function": """
def main():
    return answer_parallel(f, params, points, 7, workers=2)

try:
    main()  # HERE
except RuntimeError as error:
    print("refused:", error)
""",
    "assert_replicas_agree": """
try:
    assert_replicas_agree(f, params, seed=1, queries=30)  # HERE
except RuntimeError as error:
    print("refused:", error)
""",
}


def _run(tmp_path, body: str, name: str = "script.py", args: tuple[str, ...] = ()):
    script = tmp_path / name
    # Unguarded, the last line would run in every worker too: only where none starts.
    tail = '\nprint("children", len(multiprocessing.active_children()))\n' \
        if "refused" in body else ""
    script.write_text(textwrap.dedent(SETUP) + textwrap.dedent(body) + tail)
    done = subprocess.run([sys.executable, *args, str(script)] if not args else
                          [sys.executable, *args], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)
    line = 1 + next(i for i, text in enumerate(script.read_text().splitlines())
                    if "# HERE" in text) if "# HERE" in body else None
    return done, script, line


@pytest.mark.parametrize("case", sorted(UNGUARDED))
def test_no_main_guard_is_refused_before_any_process_starts(case, tmp_path):
    done, script, line = _run(tmp_path, UNGUARDED[case])
    assert done.returncode == 0, done.stderr
    method = "forkserver" if case == "forkserver" else "spawn"
    owner = "check_consistency" if case == "assert_replicas_agree" else "ReplicaPool"
    assert done.stdout.startswith(
        f"refused: {owner} would start worker processes from the top level of {script} "
        f"(line {line}), outside an `if __name__ == \"__main__\":` guard. With the "
        f"'{method}' start method every worker first runs that script again"), done.stdout
    assert "Put the code that starts processes under `if __name__ == \"__main__\":`" \
        in done.stdout
    # Nothing started, so nothing hangs, dies at start-up or is left behind.
    assert done.stdout.rstrip().endswith("children 0")
    assert "WorkerError" not in done.stderr and "spawn_main" not in done.stderr, done.stderr


def test_run_as_a_module_is_checked_too(tmp_path):
    done, _, _ = _run(tmp_path, UNGUARDED["pool"], name="guardless.py",
                      args=("-m", "guardless"))
    assert done.stdout.startswith("refused: ReplicaPool would start worker processes from "
                                  "the top level of "), done.stdout + done.stderr


@pytest.mark.parametrize("guard", [
    'if __name__ == "__main__":',
    "if '__main__' == __name__:",
    'if __name__ != "__main__":\n    pass\nelse:',
])
def test_guarded_scripts_run(guard, tmp_path):
    body = guard + textwrap.indent(textwrap.dedent("""
        result = answer_parallel(f, params, points, 7, workers=2)
        print("answers", (result.answers == lca.Reconstructor(f, params)
                          .answer_many(points, 7)).all())
        """), "    ")
    done, _, _ = _run(tmp_path, body)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "answers True", done.stdout + done.stderr


def test_fork_needs_no_guard(tmp_path):
    # fork copies the parent instead of running the script again.
    done, _, _ = _run(tmp_path, """
result = answer_parallel(f, params, points, 7, workers=2, start_method="fork")
print("answers", len(result.answers))
""")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "answers 50"


class TestGuardedLines:
    """Which top-level lines run only when the file is the main script."""

    def lines(self, tmp_path, source: str):
        path = tmp_path / "module.py"
        path.write_text(textwrap.dedent(source))
        return _guarded_lines(str(path), path.stat().st_mtime)

    def test_the_usual_guard(self, tmp_path):
        assert self.lines(tmp_path, """\
            import os
            if __name__ == "__main__":
                run()
                more()
            after()
            """) == ((3, 4),)

    def test_reversed_and_negated_guards_and_nesting(self, tmp_path):
        assert sorted(self.lines(tmp_path, """\
            if "__main__" == __name__:
                one()
            if __name__ != "__main__":
                pass
            else:
                two()
            try:
                if __name__ == "__main__":
                    three()
            finally:
                pass
            """)) == [(2, 2), (6, 6), (9, 9)]

    def test_a_guard_and_more_conditions_is_a_guard(self, tmp_path):
        assert sorted(self.lines(tmp_path, """\
            import sys
            if __name__ == "__main__" and len(sys.argv) > 1:
                run()
            if len(sys.argv) > 1 and "__main__" == __name__:
                run()
            """)) == [(3, 3), (5, 5)]

    def test_guards_inside_functions_and_other_conditions_do_not_count(self, tmp_path):
        assert self.lines(tmp_path, """\
            def main():
                if __name__ == "__main__":
                    run()
            if __name__ == "lca":
                run()
            if __name__ == "__main__" or True:
                run()
            """) == ()

    def test_unreadable_source_claims_nothing(self, tmp_path):
        assert self.lines(tmp_path, "def broken(:\n") is None
        assert _guarded_lines(str(tmp_path / "missing.py"), 0.0) is None
