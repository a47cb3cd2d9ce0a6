"""The `lca` command: demo output and clear errors."""

import subprocess
import sys

import pytest

from lca.cli import main

SMALL = ["--n", "60", "--leaves", "8", "--queries", "30", "--depth", "4", "--mode", "paper",
         "--score-samples", "100", "--leaf-samples", "50", "--quiet"]
EFFICIENT = ["--n", "60", "--leaves", "8", "--queries", "30", "--depth", "4", "--quiet"]


def test_demo_reports_every_figure(capsys):
    assert main(["demo", *SMALL]) == 0
    out = capsys.readouterr().out
    for needle in ("error vs f", "error vs clean tree", "queries per answer",
                   "time per answer", "first query           T_7: "):
        assert needle in out
    # First answer: 4 nodes x 2 x 100 score queries + 50 leaf queries.
    assert "; 850 for the first answer" in out


def test_demo_leads_with_results_then_explains_diagnostics_then_parameters(capsys):
    assert main(["demo", *EFFICIENT]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("lca demo: f is a random tree of 8 leaves")
    heads = [line for line in lines if line and not line.startswith(" ")][1:]
    assert [head.split(" (")[0] for head in heads] == [
        "results", "how the tree was built", "parameters"]
    assert lines.index("results") == 2 and "efficient preset" in out.split("parameters")[-1]
    # Every diagnostic count says what it counts and out of how many.
    for needle in ("nodes: the lead over the runner-up failed its sign test",
                   "nodes: their variable splits f no better than a random one",
                   "of 30 answers end at a leaf whose label is close to a coin flip"):
        assert needle in out


def test_paper_only_options_are_refused_in_efficient_mode(capsys):
    assert main(["demo", *EFFICIENT, "--score-samples", "100"]) == 2
    assert "error: argument --score-samples: sets the paper's estimator: use it with " \
        "--mode paper" in capsys.readouterr().err


def test_efficient_only_options_are_refused_in_paper_mode(capsys):
    assert main(["demo", *SMALL, "--pairs", "5"]) == 2
    assert "lca demo: error: argument --pairs: sets the efficient mode's pairs per node: " \
        "use it with --mode efficient" in capsys.readouterr().err


def test_lookahead_answers_as_the_default_and_only_in_efficient_mode(capsys):
    assert main(["demo", *EFFICIENT]) == 0
    plain = capsys.readouterr().out
    assert main(["demo", *EFFICIENT, "--lookahead", "3"]) == 0
    ahead = capsys.readouterr().out
    # The same tree: the same errors and explained path; more queries per answer.
    for needle in ("  error vs f", "  error vs clean tree", "  first query"):
        [line] = [line for line in plain.splitlines() if line.startswith(needle)]
        assert line.split("[")[0] in ahead
    assert main(["demo", *SMALL, "--lookahead", "3"]) == 2
    assert "lca demo: error: argument --lookahead: sets the efficient mode's binary search: " \
        "use it with --mode efficient" in capsys.readouterr().err
    assert main(["demo", *EFFICIENT, "--lookahead", "9"]) == 2
    assert "error: argument --lookahead: The 'lookahead' parameter of Params.efficient must " \
        "be an int in the range [1, 8]. Got 9 instead." in capsys.readouterr().err


def test_pairs_past_what_the_machine_can_hold_are_refused(capsys):
    assert main(["demo", *EFFICIENT, "--pairs", str(2 ** 64)]) == 2
    err = capsys.readouterr().err
    assert "error: argument --pairs: The 'pairs' parameter of Params.efficient must be an " \
        "int in the range [1, " in err and "largest array" in err


def test_demo_progress_bar_goes_to_stderr(capsys):
    assert main(["demo", *SMALL[:-1]]) == 0
    assert "answering: 100%" in capsys.readouterr().err


def test_bad_parameters_exit_2_with_a_message(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", *SMALL, "--noise-rate", "0"])
    assert exit_info.value.code == 2
    assert "argument --noise-rate: must be a real number in the range (2**-16, 1]" in \
        capsys.readouterr().err
    # Errors only the library can see (here: too many leaves for n) are one line too.
    assert main(["demo", *SMALL, "--n", "3", "--leaves", "9"]) == 2
    assert "error: argument --leaves: The 'leaves' parameter of random_tree" in \
        capsys.readouterr().err


def test_entry_point_runs_as_a_module():
    run = subprocess.run([sys.executable, "-m", "lca", "demo", *SMALL], capture_output=True,
                         text=True, check=True)
    assert "error vs f" in run.stdout


def test_the_module_entry_point_can_start_worker_processes():
    # Workers re-import the main module under spawn: python -m lca must be guarded.
    run = subprocess.run([sys.executable, "-m", "lca", "consistency", "--queries", "10",
                          "--replicas", "2", "--no-dask", "--n", "20", "--leaves", "4"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "agree" in run.stdout


@pytest.mark.parametrize("command", ["demo", "consistency", "test", "bench"])
def test_every_subcommand_has_help(command, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    assert "usage: lca" in capsys.readouterr().out


def test_a_size_too_large_to_hold_is_one_line(capsys):
    # 10**15 queries need petabytes, past any address space: refused at once,
    # with one line, not a MemoryError traceback.
    assert main(["consistency", "--n", "8", "--leaves", "4", "--queries", str(10 ** 15),
                 "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("lca consistency: error: not enough memory for what the options "
                          "ask (") and err.endswith("); ask for less") and "\n" not in err
