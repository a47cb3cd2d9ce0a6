"""Every value a model takes, or a clear error naming it; a fitted surrogate keeps its rows;
every save loads, or is refused when written."""

from __future__ import annotations

import datetime
import decimal
import fractions
import json
import re

import numpy as np
import pandas as pd
import pytest
from rows_support import rule, table
from sklearn.linear_model import LogisticRegression  # noqa: E402

from lca.models import Not, Surrogate, ThresholdEncoder
from lca.oracle import OracleError

# -- numbers whatever their container ---------------------------------------------------------

def _numbers(container: str) -> object:
    """table()'s x, y and k columns held as objects in ``container``."""
    frame = table(300)[["x", "y", "k"]]
    if container == "object column":
        return frame.astype(object)
    if container == "object array":
        return frame.to_numpy(dtype=object)
    return frame.to_numpy().tolist()  # a list of lists


@pytest.mark.parametrize("container", ["object column", "object array", "list of lists"])
def test_numbers_held_as_objects_are_numbers(container):
    X = _numbers(container)
    encoder = ThresholdEncoder().fit(X)
    assert encoder.categories_ == {} and sorted(encoder.cuts_) == [0, 1, 2]
    floats = table(300)[["x", "y", "k"]].to_numpy(dtype=float)

    def model(rows):
        rows = np.asarray(rows, dtype=float)
        return (rows[:, 0] + rows[:, 1] > 0.3).astype(int)

    held = Surrogate(model, positive=1, depth=4).fit(X)
    plain = Surrogate(model, positive=1, depth=4).fit(floats)
    assert held.tree().decisions == plain.tree().decisions
    assert held.fidelity(floats).data.rate == plain.fidelity(floats).data.rate > 0.95
    assert held.rows_digest_ == plain.rows_digest_  # the same doubles


def test_decimals_fractions_and_bools_held_as_objects_are_numbers():
    X = pd.DataFrame({"d": [decimal.Decimal("0.5"), decimal.Decimal("1.5")] * 5,
                      "f": [fractions.Fraction(1, 3), fractions.Fraction(2, 3)] * 5,
                      "b": pd.Series([True, False] * 5, dtype=object)})
    encoder = ThresholdEncoder().fit(X)
    assert encoder.categories_ == {}
    assert [cuts.tolist() for cuts in encoder.cuts_.values()] == [[1.0], [0.5], [0.5]]


@pytest.mark.parametrize("cell, kind", [
    (datetime.datetime(2024, 1, 1), "datetime"), (datetime.date(2024, 1, 1), "date"),
    (datetime.timedelta(days=1), "timedelta"), (pd.Period("2024-01"), "Period"),
    (pd.Interval(0, 1), "Interval"), (b"raw", "bytes"), (1 + 2j, "complex"),
    ([1, 2], "list"), ((1, 2), "tuple"), ({"a": 1}, "dict"),
])
def test_cells_a_surrogate_cannot_split_on_are_refused_naming_the_column(cell, kind):
    X = pd.DataFrame({"v": np.arange(4.0), "odd": pd.Series([cell] * 4, dtype=object)})
    with pytest.raises(TypeError, match=rf"column 'odd' \(column 1\) holds an? {kind} at row 0 "
                                        r".*which a surrogate cannot split on; convert the "
                                        r"column to"):
        Surrogate(rule, positive=1).fit(X)
    fitted = Surrogate(lambda frame: (frame["v"] > 1).astype(int), positive=1, depth=1).fit(
        pd.DataFrame({"v": np.arange(4.0), "odd": ["a", "b", "a", "b"]}))
    with pytest.raises(TypeError, match=rf"column 'odd' \(column 1\) holds an? {kind} at row 0"):
        fitted.predict(X)


@pytest.mark.parametrize("dtype", ["datetime64[ns]", "timedelta64[ns]"])
def test_date_and_duration_columns_are_refused_naming_the_column(dtype):
    X = pd.DataFrame({"v": np.arange(4.0), "when": np.arange(4).astype(dtype)})
    with pytest.raises(TypeError, match=rf"column 'when' \(column 1\) holds {re.escape(dtype)} "
                                        r"values, which a surrogate cannot split on"):
        Surrogate(rule, positive=1).fit(X)


@pytest.mark.parametrize("distribution", ["data", "product"])
def test_an_int_beyond_a_double_among_categories_is_refused_naming_the_column(distribution):
    frame = table(300)
    surrogate = Surrogate(rule, positive=1, distribution=distribution, depth=2).fit(frame)
    rows = frame.head(2).astype(object)
    rows.iloc[1, 3] = 10 ** 400  # among strings: a categorical column
    with pytest.raises(ValueError, match=r"column 'colour' \(column 3\) holds a number beyond "
                                         r"the range of a double \(about 1.8e308\) at row 1"):
        surrogate.predict(rows)


def test_values_near_the_float_limits_cut_where_they_part():
    big = np.finfo(np.float64).max
    X = pd.DataFrame({"v": [-big, -big, big, big, -big, big]})
    encoder = ThresholdEncoder().fit(X)
    assert encoder.cuts_[0].tolist() == [0.0]  # -big / 2 + big / 2, not inf
    surrogate = Surrogate(lambda frame: (frame["v"] > 0).astype(int), positive=1,
                          depth=2).fit(X)
    assert surrogate.fidelity(X).data.rate == 1.0
    # Neighbours within the range cut as before: halfway, never on the lower one.
    near = ThresholdEncoder().fit(pd.DataFrame({"v": [big / 2, big]}))
    assert np.isfinite(near.cuts_[0]).all() and big / 2 < near.cuts_[0][0] <= big


# -- the model's values ---------------------------------------------------------------------

def test_integer_and_bool_columns_go_to_the_model_in_their_own_dtype():
    X = pd.DataFrame({"a": np.arange(40), "b": np.arange(40) % 3 == 0,
                      "c": np.linspace(0, 1, 40)})
    seen = []

    def strict(frame):
        seen.append(tuple(str(dtype) for dtype in frame.dtypes))
        if frame["a"].dtype != np.int64 or frame["b"].dtype != np.bool_:
            raise TypeError("this model wants int64 and bool")
        return (frame["a"] > 19).astype(int)

    surrogate = Surrogate(strict, positive=1, depth=3, rows_per_node=64).fit(X)
    surrogate.tree()  # fitted rows and drawn ones
    assert set(seen) == {("int64", "bool", "float64")} and len(seen) >= 2
    back = Surrogate.from_json(surrogate.to_json(), model=strict)
    assert back.fidelity(X).data.rate == 1.0
    assert json.loads(surrogate.to_json())["encoder"]["dtypes"] == {"0": "int64", "1": "bool"}


def test_classes_at_the_ends_of_int64_are_taken():
    classes = [-(2 ** 63), 2 ** 63 - 1]

    class Ends:
        classes_ = np.array(classes, dtype=object)

        def predict(self, frame):
            return np.where(frame["x"].to_numpy() > 0, classes[1], classes[0]).astype(object)

    surrogate = Surrogate(Ends(), positive=2 ** 63 - 1, depth=2).fit(table(60))
    assert set(surrogate.predict(table(60)).tolist()) == set(classes)


@pytest.mark.parametrize("classes, match", [
    (["only"], r"Got \['only'\]: a model of one class has nothing to distil"),
    ([], r"at least two different labels of one kind"),
    ([1, "a"], r"of one kind \(strings, numbers or bools\). Got \[1, 'a'\]"),
    ([None, 1], r"Got \[None, 1\]"),
    (["a", "a"], r"at least two different labels"),
    ([2 ** 70, 1], r"must be finite numbers within int64"),
    ([2 ** 63, 1], r"must be finite numbers within int64"),  # one past each end
    ([-(2 ** 63) - 1, 1], r"must be finite numbers within int64"),
    ([float("inf"), 1.0], r"must be finite numbers within int64"),
    (["a\x00", "b"], r"ends in a NUL character, which numpy's string arrays drop"),
])
def test_classes_a_surrogate_cannot_answer_in_are_refused_at_fit(classes, match):
    class Odd:
        classes_ = np.array(classes, dtype=object)

        def predict(self, frame):
            return np.full(len(frame), classes[0] if classes else "x", dtype=object)

    with pytest.raises(ValueError, match=match):
        Surrogate(Odd()).fit(table(30))


def test_tuple_classes_are_refused_at_fit():
    class Pairs:
        classes_ = [(0, 1), (1, 0)]

        def predict(self, frame):
            return np.zeros(len(frame))

    with pytest.raises(TypeError, match=r"the classes_ of model Pairs must be 1-D labels"):
        Surrogate(Pairs()).fit(table(30))


def test_one_row_as_a_list_or_tuple_of_mixed_cells_is_the_frame_s_row():
    """A row given as Python values (numbers and a category) reads as the frame's row."""
    X = table(300)
    surrogate = Surrogate(rule, positive=1, depth=4).fit(X)
    for index in range(5):
        row = X.iloc[index]
        expected = str(surrogate.explain(row))
        assert str(surrogate.explain(list(row))) == expected
        assert str(surrogate.explain(tuple(row))) == expected


# -- a fitted surrogate keeps its rows -----------------------------------------------------------

def test_editing_the_fitted_frame_afterwards_changes_nothing():
    X = table(300)
    surrogate = Surrogate(rule, positive=1, depth=5).fit(X)
    expected = Surrogate(rule, positive=1, depth=5).fit(table(300))
    X.loc[:, "colour"] = "z"
    X.loc[:, "x"] = 0.0
    rows = table(300)
    assert (surrogate.predict(rows) == expected.predict(rows)).all()
    assert surrogate.to_json() == expected.to_json()


# -- every save loads, or is refused when written --------------------------------------------------

def test_a_model_with_bool_classes_saves_and_loads():
    X = table(200)[["x", "y", "k"]]
    model = LogisticRegression().fit(X, X["x"] > 0)
    surrogate = Surrogate(model, positive=True, depth=3).fit(X)
    assert surrogate.classes_.tolist() == [False, True]
    back = Surrogate.from_json(surrogate.to_json(), model=model)
    assert back.to_json() == surrogate.to_json()
    assert (back.predict(X) == surrogate.predict(X)).all()
    assert back.fidelity(X).data == surrogate.fidelity(X).data


def test_a_one_vs_rest_surrogate_saves_its_not_class_and_loads_it():
    X = table(200)[["x", "y", "k"]]
    model = LogisticRegression().fit(X, np.digitize(X["x"], [-0.5, 0.5]))
    surrogate = Surrogate(model, positive=2, depth=3).fit(X)
    text = surrogate.to_json()
    assert json.loads(text)["classes"] == [{"not": 2}, 2]
    back = Surrogate.from_json(text)
    assert back.classes_.tolist() == [Not(2), 2] and back.to_json() == text
    assert (back.predict(X) == surrogate.predict(X)).all()
    document = json.loads(text)
    document["classes"] = [{"not": 1}, 2]
    with pytest.raises(ValueError, match=r"'classes' must be \[\{\"not\": c\}, c\] with c the "
                                         r"'positive' class"):
        Surrogate.from_json(json.dumps(document))


@pytest.mark.parametrize("columns", [[("a", 1), ("b", 2)],
                                     pd.MultiIndex.from_tuples([("a", 1), ("b", 2)])])
def test_column_labels_json_cannot_hold_are_refused_when_saved(columns):
    X = pd.DataFrame(np.arange(20.0).reshape(10, 2), columns=columns)
    surrogate = Surrogate(lambda frame: (frame.iloc[:, 0] > 9).to_numpy().astype(int),
                          positive=1, depth=2).fit(X)
    assert surrogate.predict(X).shape == (10,)  # usable, just not saved
    with pytest.raises(ValueError, match=r"^Surrogate.to_json: this surrogate would not read "
                                         r"back: 'encoder.columns' must be null or 2 different "
                                         r"column labels"):
        surrogate.to_json()


def test_a_model_that_answers_a_row_two_ways_is_refused_as_in_product_mode():
    flips = []

    def model(frame):
        flips.append(1)
        return rule(frame) ^ (len(flips) > 1)

    with pytest.raises(OracleError, match=r"the model answered the same row with two "
                                          r"different values"):
        Surrogate(model, positive=1, depth=3).fit(table(200)).tree()


def test_labels_turn_the_tree_s_answers_into_predict_s_labels():
    frame = table(300)
    for surrogate in (Surrogate(rule, positive=1, depth=3).fit(frame),
                      Surrogate(LogisticRegression(max_iter=500).fit(
                          frame[["x", "y"]], frame["k"]), depth=3).fit(frame[["x", "y"]])):
        rows = frame[list(surrogate.encoder_.feature_names)].head(50)
        answers = surrogate.tree_.answers(surrogate.encoder_.encode(rows))
        np.testing.assert_array_equal(surrogate.labels(answers), surrogate.predict(rows))
    with pytest.raises(ValueError, match="not fitted"):
        Surrogate(rule, positive=1).labels([1])
