"""Missing values in data mode: a numeric column with NaN (or None, pd.NA) gets an "is missing"
question, missing values answer no to every cut, and everything a user does with the rows
(predict, explain, text, save and load) keeps them; product mode refuses them by name."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

from lca.models import Surrogate, ThresholdEncoder, UnseenValueWarning


def frame(rows: int = 400, seed: int = 0) -> pd.DataFrame:
    """``income`` missing on about a third of the rows; ``age`` never missing."""
    rng = np.random.default_rng(seed)
    income = rng.normal(50, 15, rows).round(1)
    income[rng.random(rows) < 0.3] = np.nan
    return pd.DataFrame({"income": income, "age": rng.integers(18, 80, rows).astype(float)})


def missing_rule(data: pd.DataFrame) -> np.ndarray:
    """1 where income is missing and age is 40 or more, or income is over 60."""
    income, age = data["income"].to_numpy(float), data["age"].to_numpy(float)
    return np.where(np.isnan(income), age >= 40, income > 60).astype(int)


def fitted(**kwargs) -> Surrogate:
    return Surrogate(missing_rule, positive=1, distribution="data", depth=4,
                     seed=1, **kwargs).fit(frame())


def test_a_column_with_missing_values_gets_an_is_missing_question_after_its_cuts():
    encoder = ThresholdEncoder().fit(frame())
    assert encoder.missing_ == frozenset({0})
    last = int(encoder.offsets_[1]) - 1  # income's last variable
    assert last == encoder.cuts_[0].size
    assert encoder.describe(last, +1) == "income is missing"
    assert encoder.describe(last, -1) == "income is not missing"
    # The -1 side of a cut holds the missing values; the +1 side none.
    assert re.fullmatch(r"income < [\d.]+ or missing", encoder.describe(0, -1))
    assert re.fullmatch(r"income >= [\d.]+", encoder.describe(0, +1))
    assert re.fullmatch(r"[\d.]+ <= income < [\d.]+",
                        encoder.describe(1, -1, ((0, +1),)))
    assert encoder.describe(0, -1, ((last, -1),)).endswith("income < " + encoder.describe(
        0, -1).split("< ")[1].removesuffix(" or missing"))


def test_cuts_come_from_the_present_values_only():
    data = frame()
    encoder = ThresholdEncoder(cuts=4).fit(data)
    present = ThresholdEncoder(cuts=4).fit(data.dropna())
    np.testing.assert_array_equal(encoder.cuts_[0], present.cuts_[0])


def test_a_missing_value_answers_no_to_every_cut_and_yes_to_is_missing():
    encoder = ThresholdEncoder().fit(frame())
    row = pd.DataFrame({"income": [np.nan], "age": [30.0]})
    bits = encoder.encode(row)[0]
    income = bits[:int(encoder.offsets_[1])]
    assert income[:-1].tolist() == [-1] * (income.size - 1)
    assert income[-1] == 1


def test_the_surrogate_splits_on_missingness_and_answers_missing_rows_as_the_model():
    surrogate = fitted()
    assert "income is missing" in surrogate.tree().to_text()
    test = frame(300, seed=5)
    agree = np.mean(surrogate.predict(test) == missing_rule(test))
    # The rule is a depth-3 tree over these questions; 300 fresh rows are all scored.
    assert agree >= 0.95, agree
    missing = test[test["income"].isna()]
    assert np.mean(surrogate.predict(missing) == missing_rule(missing)) >= 0.95


def test_none_and_pd_na_read_as_missing_like_nan():
    data = frame()
    as_objects = data.astype(object)
    as_objects.loc[data["income"].isna(), "income"] = None
    nullable = data.astype({"income": "Float64"})  # pd.NA where missing
    reference = ThresholdEncoder().fit(data)
    for other in (as_objects, nullable):
        encoder = ThresholdEncoder().fit(other)
        assert encoder.rows_digest_ == reference.rows_digest_
        np.testing.assert_array_equal(encoder.encode(other), reference.encode(data))


def test_the_digest_writes_every_nan_alike():
    data = frame()
    other = data.copy()
    values = other["income"].to_numpy().copy()
    weird = np.frombuffer(np.array([0x7FF8000000000ABC], dtype="<u8").tobytes(), "<f8")[0]
    values[np.isnan(values)] = -weird  # a NaN of another sign and payload
    other["income"] = values
    assert ThresholdEncoder().fit(other).rows_digest_ == ThresholdEncoder().fit(data).rows_digest_


def test_a_column_all_missing_asks_nothing_and_warns_nothing():
    data = frame().assign(empty=np.nan)
    encoder = ThresholdEncoder().fit(data)
    assert encoder.offsets_[3] == encoder.offsets_[2]  # no variable
    assert 2 not in encoder.missing_
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        encoder.encode(data.head(5))


def test_a_missing_value_where_fit_saw_none_answers_no_and_warns():
    encoder = ThresholdEncoder().fit(frame())
    row = pd.DataFrame({"income": [55.0], "age": [np.nan]})
    with pytest.warns(UnseenValueWarning, match=r"'age' \(column 1\): 1 missing value"):
        bits = encoder.encode(row)[0]
    assert set(bits[int(encoder.offsets_[1]):].tolist()) == {-1}


def test_explain_and_text_name_the_missing_branch():
    surrogate = fitted()
    row = pd.DataFrame({"income": [np.nan], "age": [60.0]})
    rules = surrogate.explain(row)
    assert rules.prediction == 1
    assert any("income is missing" in str(condition) for condition in rules.conditions)


def test_a_saved_surrogate_with_missing_values_loads_and_answers_alike():
    surrogate = fitted()
    loaded = Surrogate.from_json(surrogate.to_json(), missing_rule)
    test = frame(200, seed=9)
    np.testing.assert_array_equal(loaded.predict(test), surrogate.predict(test))
    assert loaded.encoder_.missing_ == surrogate.encoder_.missing_
    assert loaded.tree().to_text() == surrogate.tree().to_text()


def test_a_model_that_takes_missing_values_is_explained_on_them():
    data = frame(600)
    model = HistGradientBoostingClassifier(max_iter=30, random_state=0)
    model.fit(data, missing_rule(data))
    surrogate = Surrogate(model, positive=1, distribution="data", depth=4, seed=2).fit(data)
    test = frame(300, seed=3)
    assert np.mean(surrogate.predict(test) == model.predict(test)) >= 0.9


def test_product_mode_takes_missing_values_where_fit_saw_some_and_refuses_others():
    surrogate = Surrogate(missing_rule, positive=1, distribution="product", depth=4,
                          seed=1).fit(frame())
    assert set(surrogate.encoder_.missing_bin_) == {0}  # income; age is never missing
    test = frame(300, seed=3)
    # 3 bits give income and age no cut at the rule's 60 and 40: rows near them disagree.
    assert np.mean(surrogate.predict(test) == missing_rule(test)) >= 0.85
    assert "income is missing" in surrogate.tree().to_text()
    # A missing age has no bin: refused, naming the column, the row and data mode.
    with pytest.raises(ValueError, match=r"column 'age' \(column 1, numbers\) holds a "
                                         r"missing value \(nan\) at row 2 .*data-mode"):
        surrogate.predict(test.assign(age=[40.0, 50.0, np.nan] + [30.0] * 297))


def test_a_missing_category_is_refused_naming_the_column():
    data = frame().assign(colour=["red", None] * 200)
    with pytest.raises(ValueError, match="colour"):
        Surrogate(missing_rule, positive=1, distribution="data").fit(data)
