"""scripts/bench_surrogates.py: what one pair's measurement holds, and how it is counted."""

import pathlib
import sys

import numpy as np
import pytest

pytest.importorskip("sklearn")
pd = pytest.importorskip("pandas")

from sklearn.datasets import load_iris  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

# The script is imported as scripts/diagnose_surrogate_gap.py imports it.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "scripts"))
import bench_surrogates  # noqa: E402


@pytest.fixture(scope="module")
def bench():
    return bench_surrogates


@pytest.fixture(scope="module")
def iris_pairs(bench):
    """A tiny model on iris: one class against the rest, and all three classes."""
    data = load_iris(as_frame=True)
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(data.data, data.target)
    X, held_out = data.data.iloc[::2], data.data.iloc[1::2]
    return (bench.Pair("iris, virginica", model, X, held_out, positive=2),
            bench.Pair("iris, all classes", model, X, held_out))


def test_a_gap_of_exactly_the_tie_threshold_is_a_tie(bench):
    assert bench.TIE == 0.005
    assert bench.outcome(0.900, 0.905) == "tie"  # 0.905 - 0.900 is not exactly 0.005 in binary
    assert bench.outcome(0.905, 0.900) == "tie"
    assert bench.outcome(0.900, 0.906) == "loss"
    assert bench.outcome(0.906, 0.900) == "win"
    assert bench.outcome(0.5, 0.5) == "tie"


def test_wins_ties_and_losses_add_up_to_the_pairs_with_that_peer(bench):
    results = [{"fidelity": {"lca": 0.9, "rows": 0.9, "figs": 0.8}},
               {"fidelity": {"lca": 0.9, "rows": 0.895}},
               {"fidelity": {"lca": 0.9, "rows": 0.894, "figs": 0.95}},
               {"fidelity": {"lca": 0.9, "rows": 0.906}}]
    assert bench.tally(results, "rows") == (1, 2, 1)
    assert bench.tally(results, "figs") == (1, 0, 1)  # two pairs have no FIGS figure
    assert bench.tally(results, "trustee") == (0, 0, 0)


def test_one_pair_at_one_depth(bench, iris_pairs):
    one, every = (bench.measure(pair, depth=3, explain_rows=2) for pair in iris_pairs)
    for result, pair in ((one, iris_pairs[0]), (every, iris_pairs[1])):
        assert result["multiclass"] is pair.multiclass
        assert result["rows"] == 75 and result["held"] == 75
        expected = {"lca", "rows", "equal"} | ({"figs"} if bench.FIGSClassifier else set()) \
            | ({"trustee"} if bench.ClassificationTrustee else set())
        assert set(result["fidelity"]) == expected
        assert all(0 <= f <= 1 for f in result["fidelity"].values())
        assert result["baseline"] <= 1
        # lca data's queries are those of the default surrogate; the equal-query tree,
        # spending as many, saw more than the training rows.
        fresh = bench.lca_surrogate(pair, 3).fit(pair.X)
        fresh.tree()
        assert result["queries"] == fresh.queries_ > len(pair.X)
        assert 0 < result["explain"] <= result["queries"]
        assert result["time_ratio"] > 0
    # The majority baseline is the share of the model's most common answer.
    virginica = np.mean(iris_pairs[0].model.predict(iris_pairs[0].held_out) == 2)
    assert one["baseline"] == max(virginica, 1 - virginica)
    # The quick path's text: one table row per pair and a summary whose counts add up.
    text = bench.report({3: [one, every]}, ["--quick"], None)
    assert text.count("| iris, ") == 2
    assert "one-question pairs (1): " in text and "multi-class pairs (1): " in text
    for kind in (one, every):
        counts = [bench.tally([kind], key) for key, _ in bench.PEERS
                  if not bench.missing(key)]
        assert all(sum(c) == 1 for c in counts)


def test_the_output_block_and_chart_are_written(bench, iris_pairs, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    document = tmp_path / "surrogates.md"
    document.write_text(f"before\n{bench.START}\nold\n{bench.END}\nafter\n", encoding="utf-8")
    monkeypatch.setattr(bench, "pairs", lambda indices: list(iris_pairs[:1]))
    assert bench.main(["--quick", "--output", str(document)]) == 0
    text = document.read_text(encoding="utf-8")
    assert text.startswith("before\n") and text.endswith("after\n") and "old" not in text
    assert f"]({bench.CHART.as_posix()})" in text and "#### Depth 3" in text
    assert (tmp_path / bench.CHART).stat().st_size > 0
