"""Yes/no questions about a row's features: the vocabulary a surrogate's tree splits on.

:class:`Questions` is what every way of reading rows as ``±1`` variables
shares: the fitted layout of the input (column labels, feature names,
pandas categorical dtypes), selecting a DataFrame's columns by name, and
naming each variable's feature. Two kinds build on it:

* the product encoders (:class:`lca.models.QuantileEncoder`,
  :class:`lca.models.BinaryEncoder`, :mod:`lca.models.encoders`), whose
  variables are the bits of a bin number, so a ``±1`` point *decodes* into
  one row for the model;
* :class:`lca.models.ThresholdEncoder`, whose variables are threshold and
  category questions about the fitted rows; a point of its variables is a
  region of rows, not a row, and decodes into nothing.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable
from typing import Any

import numpy as np

from lca._validate import check_int
from lca.derive import Path
from lca.models._data import MAX_FEATURES, Columns, plain, read_columns

__all__ = ["Questions", "UnseenValueWarning"]


class Questions(abc.ABC):
    """Rows to the ``±1`` answers of ``n_bits`` yes/no questions (variables) about their features.

    Fitted state: ``n_features_in_``, ``feature_names``, ``columns_`` (a
    DataFrame's column labels, or ``None`` when fitted on an array),
    ``categorical_dtypes_`` (the fitted DataFrame's pandas categorical
    dtypes, by column), ``categories_`` (``{j: sorted categories}`` of the
    categorical features) and ``model_dtypes_`` (``{j: dtype}``: columns the
    model takes in a dtype of their own, cast back to it; none by default).
    """

    n_features_in_: int
    categories_: dict[int, np.ndarray]
    model_dtypes_: dict[int, np.dtype] = {}  # read only: no column cast by default
    feature_names: tuple[str, ...]
    categorical_dtypes_: dict[int, Any]
    columns_: tuple[Any, ...] | None

    _fitted_attribute: str
    """An attribute that ``fit`` sets (and nothing else): present once fitted."""

    @abc.abstractmethod
    def fit(self, X: Any) -> Questions:
        """Fit the questions to the rows of ``X`` and return ``self``."""

    @abc.abstractmethod
    def encode(self, X: Any) -> np.ndarray:
        """The ``±1`` answers of every row of ``X``, ``(rows, n_bits)`` int8."""

    @abc.abstractmethod
    def describe(self, variable: int, bit: int, path: Path = ()) -> str:
        """The condition ``bit`` on ``variable`` puts on its feature, given ``path``."""

    @property
    @abc.abstractmethod
    def n_bits(self) -> int:
        """Number of ``±1`` variables."""

    @abc.abstractmethod
    def feature_index(self, variable: int) -> int:
        """The column number of the feature that owns ``variable`` (unchecked)."""

    def _check_fitted(self, owner: str) -> None:
        if not hasattr(self, self._fitted_attribute):
            raise ValueError(f"This {type(self).__name__} is not fitted yet; call "
                             f"fit(X) before {owner}.")

    def feature_of(self, variable: int) -> str:
        """The name of the feature that owns ``variable``."""
        self._check_fitted("feature_of")
        variable = check_int(f"{type(self).__name__}.feature_of", "variable", variable, 0,
                             self.n_bits - 1)
        return self.feature_names[self.feature_index(variable)]

    @staticmethod
    def _names(owner: str, names: Any, data: Columns) -> tuple[str, ...]:
        d = len(data.columns)
        if names is None:
            if data.labels is not None:
                return tuple(str(label) for label in data.labels)
            return tuple(f"x{j}" for j in range(d))
        if isinstance(names, str) or not isinstance(names, Iterable):
            raise TypeError(f"The 'feature_names' parameter of {owner} must be a "
                            f"sequence of {d} strings. Got {names!r} instead.")
        names = tuple(names)
        if len(names) != d or not all(isinstance(name, str) for name in names):
            raise ValueError(f"The 'feature_names' parameter of {owner} must be a "
                             f"sequence of {d} strings (one per column of X). "
                             f"Got {names!r} instead.")
        return names

    def _fit_layout(self, owner: str, data: Columns) -> None:
        """Record the input's layout: column labels and pandas categorical dtypes."""
        if not 1 <= len(data.columns) <= MAX_FEATURES:
            raise ValueError(f"The 'X' parameter of {owner} must have between 1 and "
                             f"{MAX_FEATURES} columns. Got {len(data.columns)}.")
        self.columns_ = data.labels
        self.categorical_dtypes_ = pandas_categorical(data)

    def _select(self, owner: str, X: Any) -> Columns:
        """The columns of ``X`` in the fitted order (by name for a DataFrame)."""
        data = read_columns(owner, X, self.feature_names if self.columns_ is None else None)
        if data.labels is not None and self.columns_ is not None:
            where = {label: j for j, label in enumerate(data.labels)}
            missing = [label for label in self.columns_ if label not in where]
            if missing:
                raise ValueError(f"The 'X' parameter of {owner} lacks the fitted column(s) "
                                 f"{missing!r}.")
            data = Columns(tuple(data.columns[where[label]] for label in self.columns_),
                           data.rows, self.columns_)
        if len(data.columns) != self.n_features_in_:
            raise TypeError(f"The 'X' parameter of {owner} must have {self.n_features_in_} "
                            f"columns. Got {len(data.columns)} instead.")
        return data


class UnseenValueWarning(UserWarning):
    """Rows of data held a value that ``fit`` never saw.

    :meth:`lca.models.QuantileEncoder.encode` sent each value of an ordered
    column to the bin of the nearest fitted value;
    :meth:`lca.models.ThresholdEncoder.encode` answers "no" to every category
    question of a categorical column for a category it never saw. The
    message names the columns and how many rows of each.
    """


def pandas_categorical(data: Columns) -> dict[int, Any]:
    """The pandas categorical dtypes of a DataFrame's columns, by column number."""
    return {j: dtype for j, dtype in enumerate(data.dtypes or ())
            if type(dtype).__name__ == "CategoricalDtype"}


def column_index(owner: str, parameter: str, entry: Any, data: Columns,
                 names: tuple[str, ...]) -> int:
    """The column ``entry`` names (a label, a feature name or an index) of ``data``."""
    d = len(data.columns)
    if isinstance(entry, str):
        labels = [str(label) for label in data.labels] if data.labels is not None else []
        for known in (labels, list(names)):
            if entry in known:
                return known.index(entry)
        raise ValueError(f"The {parameter!r} parameter of {owner} names column "
                         f"{entry!r}, which X does not have; its columns are "
                         f"{list(data.labels) if data.labels is not None else list(names)}.")
    return check_int(owner, parameter, entry, 0, d - 1)


def listed_categorical(owner: str, given: Any, data: Columns,
                       names: tuple[str, ...]) -> tuple[int, ...]:
    """The columns a ``categorical`` parameter lists (other than ``"auto"``): a sequence
    of column indices or names, each column once."""
    if isinstance(given, (str, bytes)) or not isinstance(given, Iterable):
        raise TypeError(f"The 'categorical' parameter of {owner} must be \"auto\" or a "
                        f"sequence of column indices or names. Got {given!r} instead.")
    indices = tuple(column_index(owner, "categorical", entry, data, names) for entry in given)
    if len(set(indices)) != len(indices):
        raise ValueError(f"The 'categorical' parameter of {owner} lists a column "
                         f"twice. Got {tuple(given)!r}.")
    return indices


def category_key(value: Any) -> Any:
    """One dictionary key per category: numbers (and bools) as floats, anything else as is."""
    value = plain(value)
    if isinstance(value, (bool, int, float)):
        return float(value)
    return value


def number_text(value: Any) -> str:
    """A value in a condition: numbers to 4 significant digits, anything else as ``str``."""
    if isinstance(value, (float, np.floating)):
        return f"{value:.4g}"
    return str(value)


def midpoints(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Halfway between neighbouring values, never equal to the lower one (rounding).

    ``low + (high - low) / 2``, or ``low / 2 + high / 2`` where ``high - low``
    overflows (values beyond half the largest double, of opposite signs).
    """
    with np.errstate(over="ignore"):
        width = high - low
    middle = np.where(np.isfinite(width), low + width / 2, low / 2 + high / 2)
    return np.where(middle > low, middle, high)
