"""scripts/diagnose_surrogate_gap.py records exactly the rows data mode asks its model about."""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

pytest.importorskip("sklearn")
pd = pytest.importorskip("pandas")

from sklearn.datasets import load_iris  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

from lca.models.oracle import ModelOracle  # noqa: E402

SCRIPTS = pathlib.Path(__file__).resolve().parent.parent / "scripts"


def _script():
    spec = importlib.util.spec_from_file_location("diagnose_surrogate_gap",
                                                  SCRIPTS / "diagnose_surrogate_gap.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up while defined
    spec.loader.exec_module(module)
    return module


def test_every_asked_row_is_recorded_with_the_models_label():
    gap = _script()
    data = load_iris(as_frame=True)
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(data.data, data.target)
    pair = gap.bench.Pair("iris", model, data.data.iloc[:120], data.data.iloc[120:],
                          positive=2)
    surrogate, asked, labels = gap.recorded_surrogate(pair)
    # As many rows as the surrogate reports queries (the script refuses otherwise),
    # in the training rows' columns, each labelled as the model labels it.
    assert len(asked) == labels.size == surrogate.queries_
    assert list(asked.columns) == list(data.data.columns)
    assert np.array_equal(labels, model.predict(asked) == 2)
    # The fitted rows are among them (data mode asks each at most once).
    fitted = set(map(tuple, pair.X.to_numpy().tolist()))
    assert fitted & set(map(tuple, asked.to_numpy().tolist()))
    assert ModelOracle.label_columns.__name__ == "label_columns"  # the recorder is off again


def test_the_rows_per_node_sweep_reports_each_settings_own_tree_and_peer():
    gap = _script()
    data = load_iris(as_frame=True)
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(data.data, data.target)
    X, held_out = data.data.iloc[::3], data.data.drop(data.data.index[::3])
    pair = gap.bench.Pair("iris", model, X, held_out, positive=2)
    settings = (16, 128)
    swept = gap.sweep(pair, settings)
    assert list(swept["settings"]) == list(settings)
    for rows_per_node, cell in swept["settings"].items():
        # The queries reported are those of data mode at this setting...
        fresh = gap.Surrogate(model, positive=2, depth=gap.DEPTH, distribution="data",
                              rows_per_node=rows_per_node).fit(X)
        assert cell["leaves"] == len(fresh.tree().leaves)
        assert cell["queries"] == fresh.queries_
        # ... and its peer spends exactly as many (the rows alone when fewer).
        assert cell["peer_queries"] == max(cell["queries"], len(X))
        # The one tree over all classes is grown at the same setting.
        every = gap.Surrogate(model, depth=gap.DEPTH, distribution="data",
                              rows_per_node=rows_per_node).fit(X)
        every.tree()
        assert cell["all"]["queries"] == every.queries_
    counts = [cell["queries"] for cell in swept["settings"].values()]
    assert counts[0] != counts[1]  # the setting reached the surrogate
    assert max(counts) > len(X)  # so some peer got product points on top of the rows
    # At the default the sweep's lca data is the first part's.
    assert swept["settings"][128]["lca"] == gap.measure(pair)["lca"]
    report = gap.rows_report([swept])
    assert "| 16 | 1 of 1 |" in report or "| 16 | 0 of 1 |" in report
    assert report.count("| iris (50) |") == 1  # the pair named once, on its first setting
