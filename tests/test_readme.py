"""The README's example runs as written."""

import re
from pathlib import Path

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
