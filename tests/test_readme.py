"""The README's example runs as written."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def test_first_example_runs(capsys):
    example = re.findall(r"```python\n(.*?)```", README, re.S)[0]
    exec(compile(example, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "T_7:" in out and "lca parameters (efficient preset" in out


def test_two_commands_and_ci_agree():
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    test_command = next(line for line in README.splitlines() if "pytest" in line)
    assert test_command.strip() in ci
    assert "lca demo" in README


def test_model_walk_through_runs(capsys, tmp_path, monkeypatch):
    # The section's block: a small forest, Params.efficient, export and drawing.
    block = README.split("## Distilling a trained model into a readable tree", 1)[1]
    code = re.findall(r"```python\n(.*?)```", block, re.S)[0]
    monkeypatch.chdir(tmp_path)  # it saves tree.png in the working directory
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "worst" in out and "(unexplored)" in out  # feature names, top levels only
    assert (tmp_path / "tree.png").stat().st_size > 0
    assert re.search(r"tree = model on the data: +0\.\d{3} ± 0\.057", out)


# Names whose use starts worker processes (so their blocks need a main guard).
PROCESS_STARTERS = ("ReplicaPool", "answer_parallel", "assert_replicas_agree",
                    "check_consistency")


def _process_blocks():
    return [block for block in re.findall(r"```python\n(.*?)```", README, re.S)
            if any(name in block for name in PROCESS_STARTERS)]


def test_every_block_that_starts_processes_is_found():
    # The ReplicaPool example and the assert_replicas_agree test module.
    assert len(_process_blocks()) == 2


@pytest.mark.parametrize("index", range(2))
def test_blocks_that_start_processes_run_as_scripts(index, tmp_path):
    """Each is a complete script with a main guard, run as one (spawn re-runs it)."""
    block = _process_blocks()[index]
    assert 'if __name__ == "__main__":' in block
    script = tmp_path / f"readme_{index}.py"
    script.write_text(block)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.startswith(("True AnswerStats(", "replicas agree")), done.stdout
