"""Rows of data in, rows for a model out: arrays and pandas DataFrames, column by column.

pandas is optional: it is imported only when a DataFrame comes in or a
model fitted with feature names has to be called with one.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from numbers import Real
from typing import Any

import numpy as np

__all__: list[str] = []

# Most features a model may take without an encoder, and most 0/1 features an
# encoder may produce: one decoded row of n features is 8 n bytes, and the
# reconstructor asks for batches of dozens of rows per node, so beyond 2**20
# features (8 MiB per row) a single node's batch no longer fits comfortably in
# memory. A bound here turns a hang or an out-of-memory into a clear error.
MAX_FEATURES = 1 << 20


def is_frame(X: Any) -> bool:
    """Whether ``X`` is a pandas DataFrame (without importing pandas)."""
    return _is_pandas(X, "DataFrame")


def is_series(X: Any) -> bool:
    """Whether ``X`` is a pandas Series (without importing pandas)."""
    return _is_pandas(X, "Series")


def _is_pandas(X: Any, kind: str) -> bool:
    return type(X).__module__.split(".")[0] == "pandas" and type(X).__name__ == kind


def one_row(owner: str, row: Any) -> Any:
    """A single row as a one-row 2-D input (a DataFrame stays a DataFrame)."""
    if is_frame(row):
        if row.shape[0] != 1:
            raise ValueError(f"The 'row' parameter of {owner} must be one row. "
                             f"Got a DataFrame of {row.shape[0]} rows.")
        return row
    if is_series(row):
        return row.to_frame().T.infer_objects()
    array = np.asarray(row, dtype=None if not isinstance(row, (list, tuple)) else object)
    if array.ndim == 2 and array.shape[0] == 1:
        return array
    if array.ndim != 1:
        raise ValueError(f"The 'row' parameter of {owner} must be one row (1-D, "
                         f"or 2-D with one row). Got shape {array.shape}.")
    if array.dtype == object and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                     for v in array):
        array = array.astype(np.float64)
    return array[None, :]


def plain(value: Any) -> Any:
    """A NumPy scalar as the Python value it holds (for messages and JSON)."""
    return value.item() if isinstance(value, np.generic) else value


def pandas(why: str) -> Any:
    """The pandas module, or an ImportError that says why it is needed."""
    try:
        import pandas as pd
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError(f"{why} needs pandas (pip install 'lca[pandas]').") from error
    return pd


@dataclass(frozen=True)
class Columns:
    """The columns of a 2-D input, each a 1-D array as given (numbers or objects).

    ``labels`` are a DataFrame's column labels (``None`` for arrays) and
    ``dtypes`` its column dtypes.
    """

    columns: tuple[np.ndarray, ...]
    rows: int
    labels: tuple[Any, ...] | None = None
    dtypes: tuple[Any, ...] | None = None


def read_columns(owner: str, X: Any, names: Any = None) -> Columns:
    """``X`` (a 2-D array-like or a DataFrame) as columns, or a ``TypeError`` naming ``owner``
    (and the column, by ``names`` when given, else by its label or ``x0, x1, ...``)."""
    if is_frame(X):
        labels = tuple(X.columns)
        if len(set(labels)) != len(labels):
            raise ValueError(f"The 'X' parameter of {owner} must have distinct column "
                             f"names. Got {list(labels)!r}.")
        columns = tuple(_normalized(owner, _name(names, j, str(labels[j])), j,
                                    X.iloc[:, j].to_numpy()) for j in range(X.shape[1]))
        return Columns(columns, X.shape[0], labels, tuple(X.dtypes))
    try:
        array = np.asarray(X)
    except Exception as error:  # ragged lists and the like
        raise TypeError(f"The 'X' parameter of {owner} must be a 2-D array or a DataFrame. "
                        f"Got {type(X).__name__} ({error}).") from error
    if array.ndim != 2:
        raise TypeError(f"The 'X' parameter of {owner} must be a 2-D array (rows x "
                        f"features) or a DataFrame. Got shape {array.shape} instead.")
    return Columns(tuple(_normalized(owner, _name(names, j, f"x{j}"), j, array[:, j])
                         for j in range(array.shape[1])), array.shape[0])


def _name(names: Any, j: int, default: str) -> str:
    """Column ``j``'s name in a message: from ``names`` when it has one for it."""
    if isinstance(names, (list, tuple)) and j < len(names) and isinstance(names[j], str):
        return names[j]
    return default


# Cell types a surrogate cannot take as numbers or categories, with what to do instead.
_UNSUPPORTED = {"datetime": "a number (e.g. days since a date)", "date": "a number",
                "time": "a number", "timedelta": "a number (e.g. seconds)",
                "Timestamp": "a number (e.g. days since a date)",
                "Timedelta": "a number (e.g. seconds)", "Period": "a number or a string",
                "Interval": "two number columns (its ends) or a string",
                "bytes": "a string", "bytearray": "a string", "complex": "two real columns",
                "datetime64": "a number (e.g. days since a date)",
                "timedelta64": "a number (e.g. seconds)",
                "list": "one column per item", "tuple": "one column per item",
                "dict": "one column per key", "set": "one column per item",
                "frozenset": "one column per item", "ndarray": "one column per item"}


def _normalized(owner: str, name: str, j: int, column: np.ndarray) -> np.ndarray:
    """A column as the encoders read it: numbers (and bools) held as objects (a pandas
    ``object`` column, a numpy object array, a list of lists) become float64, a missing cell
    among them (``None``, NaN, ``pd.NA``; or every cell) NaN; a column of
    dates, durations, bytes, intervals, complex numbers or containers (lists, tuples, dicts
    in a cell) is refused, naming the column."""
    kind = column.dtype.kind
    if kind in "MmcS":
        what = {"M": "datetime64", "m": "timedelta64", "c": "complex", "S": "bytes"}[kind]
        raise TypeError(f"The 'X' parameter of {owner}: column {name!r} (column {j}) holds "
                        f"{column.dtype} values, which a surrogate cannot split on; convert "
                        f"it to {_UNSUPPORTED[what]}.")
    if kind != "O":
        return column
    numbers = True
    for row, value in enumerate(column.tolist()):
        if is_missing(value):  # a missing cell among numbers keeps them numbers
            continue
        kind_name = type(value).__name__
        if kind_name in _UNSUPPORTED:
            raise TypeError(f"The 'X' parameter of {owner}: column {name!r} (column {j}) "
                            f"holds a {kind_name} at row {row} ({value!r}), which a surrogate "
                            f"cannot split on; convert the column to {_UNSUPPORTED[kind_name]}.")
        # Bools are numbers here (0 and 1), as in a column of dtype bool.
        numbers = numbers and isinstance(value, (Real, Decimal, bool, np.bool_))
    if not numbers:
        return column
    try:
        return np.array([np.nan if is_missing(value) else float(value)
                         for value in column.tolist()], dtype=np.float64)
    except OverflowError:
        raise ValueError(f"The 'X' parameter of {owner}: column {name!r} (column {j}) holds a "
                         "number beyond the range of a double (about 1.8e308).") from None


def is_numeric(column: np.ndarray) -> bool:
    """Whether a column's dtype holds real numbers or bools (not complex, not objects)."""
    return column.dtype.kind in "biuf"


def real_column(owner: str, name: str, j: int, column: np.ndarray,
                missing: bool = False) -> np.ndarray:
    """A column of real values as float64, or a clear error naming it: finite, or NaN for a
    missing value when ``missing`` (``None`` and ``pd.NA`` read as NaN)."""
    if column.dtype.kind in "biuf":
        values = column.astype(np.float64)
    else:
        values = np.empty(column.shape, dtype=np.float64)
        for row, value in enumerate(column):
            if missing and is_missing(value):
                values[row] = np.nan
                continue
            if isinstance(value, (bool, np.bool_, str, bytes)) or not _is_real(value):
                raise TypeError(f"The 'X' parameter of {owner} must hold numbers in column "
                                f"{name!r} (column {j}), or that column must be listed in "
                                f"categorical=. Got {value!r} at row {row} (dtype "
                                f"{column.dtype}).")
            try:
                values[row] = float(value)
            except OverflowError:
                raise ValueError(f"The 'X' parameter of {owner}: column {name!r} (column {j}) "
                                 "holds a number beyond the range of a double (about 1.8e308) "
                                 f"at row {row}.") from None
    bad = ~np.isfinite(values) & (~np.isnan(values) if missing else True)
    if bad.any():
        row, count = int(np.flatnonzero(bad)[0]), int(bad.sum())
        if np.isnan(values[row]):
            raise ValueError(f"The 'X' parameter of {owner}: column {name!r} (column {j}, "
                             f"numbers) holds a missing value (nan) at row {row} ({count} in "
                             "that column), and this encoder has no bin for one there: a "
                             "QuantileEncoder has missing bins only in a column fit saw "
                             "missing values in, a BinaryEncoder none (a data-mode Surrogate, "
                             "the default, splits on 'is missing'); fit on rows with missing "
                             "values in this column, or fill them.")
        raise ValueError(f"The 'X' parameter of {owner} must be finite; column {j} "
                         f"({name!r}) has {values[row]} at row {row} ({count} "
                         "non-finite values in that column).")
    return values


def category_column(owner: str, name: str, j: int, column: np.ndarray) -> np.ndarray:
    """A categorical column to look its cells up in, or a clear error naming it: an int
    beyond the range of a double cannot be compared with the fitted categories (doubles)."""
    if column.dtype.kind == "O":
        for row, value in enumerate(column.tolist()):
            if type(value) is int and not -_LARGEST < value < _LARGEST:
                raise ValueError(f"The 'X' parameter of {owner}: column {name!r} (column {j}) "
                                 f"holds a number beyond the range of a double (about "
                                 f"1.8e308) at row {row}.")
    return column


_LARGEST = 2 ** 1024  # an int at or beyond it has no double (float() overflows)


def is_missing(value: Any) -> bool:
    """A missing cell: ``None``, NaN, pandas' ``NA``."""
    return value is None or type(value).__name__ == "NAType" or (
        isinstance(value, (float, np.floating)) and value != value)


def _first_non_finite(values: np.ndarray) -> tuple[int, int]:
    """The first row holding NaN or an infinity, and how many do (0 when none)."""
    bad = ~np.isfinite(values)
    count = int(bad.sum())
    return (int(np.flatnonzero(bad)[0]) if count else -1), count


def _is_real(value: Any) -> bool:
    try:
        float(value)
    except OverflowError:  # an int beyond a double is a real number all the same
        return True
    except (TypeError, ValueError):
        return False
    return not isinstance(value, complex)


def category_values(owner: str, name: str, j: int,
                    column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct categories of a column and each row's index among them.

    Numbers (and bools) become float64 codes; anything else (strings) is kept
    as objects. Missing values (``None``, NaN) are refused.
    """
    if is_numeric(column):
        values = column.astype(np.float64)
        row, count = _first_non_finite(values)
        if count:
            raise ValueError(f"The 'X' parameter of {owner}: column {name!r} (column {j}, "
                             f"numbers read as categories or levels) has {values[row]} at row "
                             f"{row}; categories must be finite numbers or strings (fill "
                             "missing values first).")
        return np.unique(values, return_inverse=True)
    column = column.astype(object)
    for row, value in enumerate(column):
        if value is None or (isinstance(value, float) and value != value) or \
                type(value).__name__ in ("NAType", "NaTType"):
            raise ValueError(f"The 'X' parameter of {owner}: categorical column {name!r} "
                             f"(column {j}) has a missing value ({value!r}) at row {row}; "
                             "fill missing values first.")
        try:
            hash(value)
        except TypeError:  # a list, a dict, an array in a cell: not a category
            raise TypeError(f"The 'X' parameter of {owner}: categorical column {name!r} "
                            f"(column {j}) holds a {type(value).__name__} at row {row}; "
                            "categories are strings or numbers.") from None
    try:
        categories, inverse = np.unique(column, return_inverse=True)
    except TypeError as error:
        kinds = sorted({type(value).__name__ for value in column})
        raise TypeError(f"The 'X' parameter of {owner}: the categories of column {name!r} "
                        f"(column {j}) must be all strings or all numbers, which sort. Got "
                        f"values of types {kinds}.") from error
    return categories, inverse


def make_frame(columns: list[np.ndarray], labels: tuple[Any, ...],
               categorical_dtypes: dict[int, Any]) -> Any:
    """A DataFrame of the columns under ``labels``; pandas categorical dtypes restored."""
    pd = pandas("calling a model fitted with feature names")
    data = {}
    # Not strict: the labels may be a model's feature_names_in_, whose count is
    # checked against the columns only when the model also has n_features_in_.
    for j, (label, column) in enumerate(zip(labels, columns, strict=False)):
        dtype = categorical_dtypes.get(j)
        data[label] = column if dtype is None else pd.Categorical(column, dtype=dtype)
    return pd.DataFrame(data, copy=False)


def stack(columns: list[np.ndarray]) -> np.ndarray:
    """Columns side by side: float64 when all hold numbers, else objects."""
    if all(is_numeric(column) for column in columns):
        return np.column_stack(columns).astype(np.float64)
    out = np.empty((columns[0].shape[0], len(columns)), dtype=object)
    for j, column in enumerate(columns):
        out[:, j] = column
    return out
