"""The README's example runs as written."""

import re
from pathlib import Path

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def test_first_example_runs(capsys):
    example = re.findall(r"```python\n(.*?)```", README, re.S)[0]
    exec(compile(example, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "T_7:" in out and "lca parameters (practical preset)" in out


def test_two_commands_and_ci_agree():
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    test_command = next(line for line in README.splitlines() if "pytest" in line)
    assert test_command.strip() in ci
    assert "lca demo" in README
