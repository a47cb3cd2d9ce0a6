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
