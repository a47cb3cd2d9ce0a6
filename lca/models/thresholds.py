"""Threshold splits of the user's rows: :class:`ThresholdEncoder`, the vocabulary of data mode.

:class:`lca.models.Surrogate` with ``distribution="data"`` grows its tree
over these variables (:mod:`lca.models.rows`). Each variable is one yes/no
question about one feature:

* an *ordered* feature (a column of numbers not declared categorical) gets
  one variable per candidate cut ``c``: "``x >= c``". The cuts are the
  midpoints between consecutive distinct fitted values; when a feature has
  more than ``cuts + 1`` distinct values, only ``cuts`` of those midpoints
  are kept: for ``k = 1 .. cuts``, the one just below the value at sorted row
  ``floor(k m / (cuts + 1))`` (dropping duplicates, and the row quantiles
  that fall on the smallest value). ``m`` counts the present values: the
  cuts come from those. A feature with some (not all) values missing (NaN,
  ``None``, ``pd.NA``) gets one more variable after its cuts: "``x`` is
  missing". A missing value answers no to every cut.
* a *categorical* feature gets one variable per fitted category ``c``:
  "``x == c``".

A variable is ``+1`` when its question holds for the row and ``-1`` when it
does not, so a tree lists the ``-1`` branch ("``x < c``", "``x`` is not
``c``") first. Every real value encodes (thresholds compare; nothing is
refused for being unseen); a category ``fit`` never saw encodes as ``-1``
on all its feature's category variables (it equals none of them), and so
does a missing value of an ordered feature fit saw none missing in, reported
by one :class:`lca.models.UnseenValueWarning` per call naming the column.
:meth:`ThresholdEncoder.describe` intersects a feature's steps on a path into
one interval (``"3.5 <= age < 7"``) or one category condition
(``"colour == red"``, ``"colour != red"``, ``"colour not in {red, blue}"``),
with ``" or missing"`` where missing values take the branch.

Fitting also records the SHA-256 digest of the fitted rows
(``rows_digest_``, see :func:`rows_digest`): the rows are part of a data-mode
surrogate's identity.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import struct
import warnings
from collections.abc import Iterable, Sequence
from numbers import Integral
from typing import Any, NamedTuple

import numpy as np

from lca._validate import check_int
from lca.derive import Path
from lca.models._data import (
    Columns,
    category_column,
    category_values,
    is_numeric,
    plain,
    read_columns,
    real_column,
)
from lca.models.questions import (
    Questions,
    UnseenValueWarning,
    category_key,
    listed_categorical,
    midpoints,
    number_text,
    pandas_categorical,
)

__all__ = ["ThresholdEncoder", "rows_digest"]

MAX_CUTS = 4096
_DIGEST_TAG = b"lca/rows/v1"


def _frame(data: bytes) -> bytes:
    return struct.pack("<Q", len(data)) + data


class Interval(NamedTuple):
    """What a path allows of an ordered feature: ``low <= x < high`` (infinite when open),
    and a missing value: ``None`` allowed, ``True`` required, ``False`` excluded."""

    low: float
    high: float
    missing: bool | None


def rows_digest(columns: Sequence[Any], categorical: Iterable[int]) -> str:
    """``"sha256:<hex>"`` of the fitted rows, column by column in the fitted order.

    Bytes hashed: ``frame(b"lca/rows/v1") || u64(rows) || u64(columns)``, then
    per column ``b"f" || float64 little-endian values`` (an ordered column,
    ``-0.0`` written as ``0.0``) or ``b"c" || frame(json(value))`` per row (a
    categorical one, each value as JSON: numbers as floats, strings as
    themselves), where ``frame(b) = u64(len(b)) || b``, integers
    little-endian. Any change to any row changes the digest. A categorical
    column may be given as ``(categories, index of each row's category)``.
    """
    categorical = frozenset(categorical)
    rows = len(columns[0][1] if 0 in categorical and isinstance(columns[0], tuple)
               else columns[0]) if columns else 0
    sha = hashlib.sha256(_frame(_DIGEST_TAG) + struct.pack("<QQ", rows, len(columns)))
    for j, column in enumerate(columns):
        if j in categorical:
            values, inverse = column if isinstance(column, tuple) else \
                (np.asarray(column, dtype=object), np.arange(len(column)))
            framed = [_frame(json.dumps(category_key(v), ensure_ascii=True).encode("ascii"))
                      for v in values.tolist()]
            sha.update(b"c" + b"".join([framed[i] for i in inverse.tolist()]))
        else:
            values = np.asarray(column, dtype=np.float64) + 0.0  # -0.0 written as 0.0
            sha.update(b"f")  # a missing value as the one quiet NaN, 0x7ff8000000000000
            sha.update(np.where(np.isnan(values), np.nan, values).astype("<f8").tobytes())
    return "sha256:" + sha.hexdigest()


class ThresholdEncoder(Questions):
    """Rows to ``±1`` answers of threshold questions ("``x >= c``", "``x == c``").

    See the module docstring for the cuts, the categories and the bit
    convention (``+1``: the question holds). Unlike the product encoders,
    points of this encoder are not decoded into rows: a data-mode surrogate
    asks the model about rows (the fitted ones, and rows drawn from their
    marginals), never about decoded bits.

    Args:
        cuts: the most cuts per ordered feature, in ``[1, 4096]``.
        categorical: ``"auto"`` (columns that do not hold numbers, and
            pandas categorical columns) or a sequence of column indices or
            names; every other column is ordered (integer columns too).
        feature_names: one name per column (default: a DataFrame's column
            names, else ``x0, x1, ...``).

    Fitted attributes: ``cuts_`` (``{j: increasing cuts}`` of each ordered
    feature), ``categories_`` (``{j: sorted categories}``), ``model_dtypes_``
    (``{j: dtype}`` of each column fitted as integers or bools: the model is
    asked about fitted and drawn rows in that dtype), ``offsets_``
    (feature ``j`` owns variables ``offsets_[j] .. offsets_[j+1] - 1``),
    ``rows_digest_``, ``n_rows_``, ``feature_names``, ``n_features_in_``.
    """

    def __init__(self, cuts: int = 64, categorical: Iterable[int | str] | str = "auto",
                 feature_names: Sequence[str] | None = None) -> None:
        self.cuts = cuts
        self.categorical = categorical
        self.feature_names_arg = feature_names

    _fitted_attribute = "offsets_"

    @property
    def n_bits(self) -> int:
        """Number of ``±1`` variables: one per cut and one per category."""
        self._check_fitted("n_bits")
        return int(self.offsets_[-1])

    def fit(self, X: Any) -> ThresholdEncoder:
        """Find every feature's cuts (or categories) in the rows of ``X``; returns self.

        Raises:
            TypeError: ``X`` is not 2-D, an ordered column holds non-numbers,
                bad parameter types.
            ValueError: no rows, non-finite values or missing categories.
        """
        self.fit_rows(X)
        return self

    def fit_rows(self, X: Any) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """:meth:`fit`, returning the fitted rows read once: their columns in the fitted
        order (as :meth:`columns_of` gives them) and each feature's values as its
        questions read them (ordered: those doubles; categorical: category numbers, as
        :meth:`category_codes` gives them). Raises as :meth:`fit`."""
        owner = "ThresholdEncoder.fit"
        limit = check_int(owner, "cuts", self.cuts, 1, MAX_CUTS)
        data = read_columns(owner, X, self.feature_names_arg)
        if not data.columns:
            raise ValueError(f"The 'X' parameter of {owner} must have at least one column.")
        if data.rows < 1:
            raise ValueError(f"The 'X' parameter of {owner} must have at least one row. "
                             "Got 0 rows.")
        names = self._names(owner, self.feature_names_arg, data)
        categorical = self._categorical(owner, data, names)
        cuts: dict[int, np.ndarray] = {}
        categories: dict[int, np.ndarray] = {}
        dtypes: dict[int, np.dtype] = {}
        missing: set[int] = set()
        widths = []
        columns: list[Any] = []
        read: list[np.ndarray] = []
        for j, column in enumerate(data.columns):
            if column.dtype.kind in "iub":  # the model gets these back as they were
                dtypes[j] = column.dtype
            if j in categorical:
                values, inverse = category_values(owner, names[j], j, column)
                categories[j] = values
                columns.append((values, inverse.ravel()))
                read.append(inverse.ravel().astype(np.int64))
                widths.append(values.size)
            else:
                values = real_column(owner, names[j], j, column, missing=True)
                absent = np.isnan(values)
                cuts[j] = self._fit_cuts(values[~absent], limit)
                if 0 < absent.sum() < absent.size:  # "is missing" tells rows apart
                    missing.add(j)
                columns.append(values)
                read.append(values)
                widths.append(cuts[j].size + (j in missing))
        if sum(widths) == 0:
            raise ValueError(f"The 'X' parameter of {owner} has no column with two different "
                             "values, so no question tells its rows apart.")
        self._fit_layout(owner, data)
        self.cuts = limit
        self.cuts_ = cuts
        self.categories_ = categories
        self.model_dtypes_ = dtypes
        self.missing_ = frozenset(missing)
        self.offsets_ = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
        self.feature_names = names
        self.n_features_in_ = len(names)
        self.n_rows_ = data.rows
        self.rows_digest_ = rows_digest(columns, categories)
        # A categorical row as its category (numbers and bools as doubles), as drawn rows
        # take them: the model sees fitted and drawn rows alike.
        return [categories[j][read[j]] if j in categories else read[j]
                for j in range(len(data.columns))], read

    @staticmethod
    def _fit_cuts(values: np.ndarray, limit: int) -> np.ndarray:
        """The cuts of a feature's present (not missing) values."""
        if values.size == 0:
            return values
        distinct = np.unique(values)
        if distinct.size - 1 <= limit:
            return midpoints(distinct[:-1], distinct[1:])
        ordered = np.sort(values)
        m = ordered.size
        at = np.array([ordered[k * m // (limit + 1)] for k in range(1, limit + 1)])
        index = np.unique(np.searchsorted(distinct, at))
        index = index[index > 0]  # a quantile on the smallest value has no cut below it
        return midpoints(distinct[index - 1], distinct[index])

    def _categorical(self, owner: str, data: Columns, names: tuple[str, ...]) -> frozenset[int]:
        given = self.categorical
        declared = pandas_categorical(data)
        if isinstance(given, str) and given == "auto":
            return frozenset(j for j, column in enumerate(data.columns)
                             if not is_numeric(column) or j in declared)
        indices = listed_categorical(owner, given, data, names)
        # Columns of strings cannot be ordered: they are categorical whatever is listed.
        return frozenset(indices) | frozenset(j for j, column in enumerate(data.columns)
                                              if not is_numeric(column))

    # -- variables ------------------------------------------------------------------

    def feature_index(self, variable: int) -> int:
        """The column number of the feature that owns ``variable``."""
        # bisect, not np.searchsorted: one number, asked once per step of every path.
        return bisect.bisect_right(self.offsets_, variable) - 1

    def feature_of(self, variable: int) -> str:
        """The name of the feature that owns ``variable``."""
        self._check_fitted("feature_of")
        variable = check_int("ThresholdEncoder.feature_of", "variable", variable, 0,
                             self.n_bits - 1)
        return self.feature_names[self.feature_index(variable)]

    def encode(self, X: Any) -> np.ndarray:
        """The ``±1`` answer of every variable's question for each row of ``X``, as int8.

        A DataFrame's columns are taken by name. A category ``fit`` did not
        see answers ``-1`` to all its feature's questions, and so does a
        missing value of a column ``fit`` saw none missing in (one
        :class:`UnseenValueWarning` per call names the columns and their
        numbers of rows).
        """
        owner = "ThresholdEncoder.encode"
        self._check_fitted("encode")
        points, unseen = self.encode_columns(self.columns_of(owner, X))
        if unseen:
            warnings.warn(f"{owner}: values not seen in fit answer 'no' to every question "
                          f"of their column in {len(unseen)} column(s): "
                          f"{'; '.join(unseen)}.", UnseenValueWarning, stacklevel=2)
        return points

    def columns_of(self, owner: str, X: Any) -> list[np.ndarray]:
        """The columns of ``X`` in the fitted order: ordered ones as float64, checked."""
        self._check_fitted(owner)
        data = self._select(owner, X)
        return [category_column(owner, self.feature_names[j], j, column)
                if j in self.categories_ else
                real_column(owner, self.feature_names[j], j, column, missing=True)
                for j, column in enumerate(data.columns)]

    def encode_columns(self, columns: Sequence[np.ndarray]) -> tuple[np.ndarray, list[str]]:
        """Points of checked columns in the fitted order, and the columns with unseen categories."""
        values, unseen = self._values(columns)
        return self.encode_values(values), unseen

    def _values(self, columns: Sequence[np.ndarray]) -> tuple[list[np.ndarray], list[str]]:
        """Each feature's values as its questions read them (:meth:`encode_values`), and the
        columns with categories never fitted."""
        values = []
        unseen = []
        for j, column in enumerate(columns):
            if j in self.categories_:
                codes = self.category_codes(j, column)
                missing = int((codes < 0).sum())
                if missing:
                    unseen.append(f"{self.feature_names[j]!r} (column {j}): {missing} row"
                                  + ("s" if missing > 1 else ""))
                values.append(codes)
            else:
                column = np.asarray(column)
                # Fit saw no missing value of a feature with cuts and no "is missing".
                asks = self.cuts_[j].size and j not in self.missing_
                absent = int(np.isnan(column).sum()) if asks else 0
                if absent:
                    unseen.append(f"{self.feature_names[j]!r} (column {j}): {absent} missing "
                                  "value" + ("s" if absent > 1 else "") + " (none in fit: "
                                  "below every cut)")
                values.append(column)
        return values, unseen

    def numbers(self, columns: Sequence[np.ndarray]) -> np.ndarray:
        """Checked columns in the fitted order as one ``(rows, d)`` float64 array, what a
        tree learner on numbers is given: an ordered feature's values, a categorical one's
        category number (``-1`` for a category never fitted)."""
        values = self._values(columns)[0]
        out = np.empty((len(values[0]), len(values)), dtype=np.float64)
        for j, column in enumerate(values):
            out[:, j] = column
        return out

    def encode_values(self, values: Sequence[np.ndarray]) -> np.ndarray:
        """Points of each feature's values as its questions read them: an ordered
        feature's (finite) numbers, a categorical one's category numbers
        (:meth:`category_codes`, ``-1`` for a category never fitted)."""
        levels = self.levels(values)
        holds = np.empty((levels.shape[0], self.n_bits), dtype=bool)
        for j in range(levels.shape[1]):
            start, stop = int(self.offsets_[j]), int(self.offsets_[j + 1])
            holds[:, start:stop] = self.holds(j, levels[:, j, None],
                                              np.arange(stop - start)[None, :])
        # +1 where the question holds, -1 where it does not.
        points = holds.view(np.int8) << 1
        points -= 1
        return points

    def levels(self, values: Sequence[np.ndarray]) -> np.ndarray:
        """Each row's level in each feature: its answers to the feature's questions in one number.

        Ordered feature: how many of its cuts are at or below the (finite)
        value; its variable ``t`` ("``x >= cut_t``") holds exactly when
        ``t < level``, the cuts being increasing. Categorical: the category
        number (``values`` as for :meth:`encode_values`); variable ``t`` holds
        exactly when ``t == level`` (:meth:`holds`). :meth:`encode_values`
        spells the levels out as ``±1`` answers.
        """
        out = np.empty((len(values[0]), len(values)), dtype=np.int64)
        for j, column in enumerate(values):
            out[:, j] = self.feature_levels(j, column)
        return out

    def feature_levels(self, feature: int, column: np.ndarray) -> np.ndarray:
        """:meth:`levels` of one feature's values: a missing value (NaN) is level ``-1`` of a
        feature with an "is missing" question, else level 0 (no to every cut)."""
        if feature in self.categories_:
            return column
        levels = np.searchsorted(self.cuts_[feature], column, side="right")
        absent = np.isnan(column)
        if absent.any():
            levels[absent] = -1 if feature in self.missing_ else 0
        return levels

    def holds(self, feature: int, levels: np.ndarray, t: Any) -> np.ndarray:
        """Whether the feature's question ``t`` (its variable ``offsets_[feature] + t``)
        holds at each of ``levels``: the one home of the questions' rule. A cut ``t`` holds
        above level ``t``; a feature's "is missing" question (after its cuts) at level -1."""
        if feature in self.categories_:
            return levels == t
        if feature in self.missing_:
            return np.where(t == self.cuts_[feature].size, levels == -1, t < levels)
        return t < levels

    def category_codes(self, feature: int, column: Any) -> np.ndarray:
        """Each value's index among the feature's categories, ``-1`` for one never fitted."""
        levels = self.categories_[feature]
        position = {category_key(value): c for c, value in enumerate(levels.tolist())}
        try:  # each distinct value looked up once
            distinct, inverse = np.unique(np.asarray(column), return_inverse=True)
        except TypeError:  # values numpy cannot sort together
            distinct = np.asarray(column, dtype=object)
            inverse = np.arange(distinct.size)
        found = np.array([position.get(category_key(value), -1) for value in distinct.tolist()],
                         dtype=np.int64)
        return found[inverse.ravel()]

    # -- conditions ------------------------------------------------------------------

    def region(self, feature: int, path: Path) -> Interval | frozenset[int]:
        """What ``path`` allows of ``feature``: an :class:`Interval` of an ordered feature,
        or the set of allowed category numbers (which, when no step says ``x == c``, also
        stands for categories ``fit`` never saw)."""
        start, stop = int(self.offsets_[feature]), int(self.offsets_[feature + 1])
        steps = [(var - start, bit) for var, bit in path if start <= var < stop]
        if feature in self.categories_:
            allowed = set(range(self.categories_[feature].size))
            for c, bit in steps:
                allowed &= {c} if bit > 0 else allowed - {c}
            return frozenset(allowed)
        cuts = self.cuts_[feature]
        low, high, missing = -np.inf, np.inf, None
        for k, bit in steps:
            if k == cuts.size:  # "is missing"
                missing = bit > 0
            elif bit > 0:  # x >= cut: a missing value answers no
                low, missing = max(low, float(cuts[k])), False if missing is None else missing
            else:
                high = min(high, float(cuts[k]))
        return Interval(low, high, missing if feature in self.missing_ else False)

    def describe(self, variable: int, bit: int, path: Path = ()) -> str:
        """The condition on the feature of ``variable`` given ``bit`` and its steps on ``path``.

        An ordered feature gives one interval (``"3.5 <= age < 7"``, one-sided
        when open), followed by ``" or missing"`` where a missing value takes
        that branch (``"age is missing"``, ``"age is not missing"`` for its
        "is missing" question); a categorical one ``"colour == red"`` once a
        step says which category it is, else ``"colour != red"`` or
        ``"colour not in {red, blue}"`` (the categories excluded so far;
        unseen categories take that branch too).
        Numbers are shown to 4 significant digits; the exact cuts are in
        ``cuts_``.
        """
        owner = "ThresholdEncoder.describe"
        self._check_fitted("describe")
        variable = check_int(owner, "variable", variable, 0, self.n_bits - 1)
        if isinstance(bit, bool) or not isinstance(bit, Integral) or bit not in (-1, 1):
            raise ValueError(f"The 'bit' parameter of {owner} must be -1 or +1. "
                             f"Got {bit!r} instead.")
        for var, value in tuple(path):
            if var == variable and value != bit:
                raise ValueError(f"{owner}: the path fixes variable {var} to {value:+d}, "
                                 f"which contradicts the bit {bit:+d} being described.")
        feature = self.feature_index(variable)
        name = self.feature_names[feature]
        allowed = self.region(feature, (*path, (variable, int(bit))))
        if isinstance(allowed, frozenset):
            levels = self.categories_[feature].tolist()
            start, stop = int(self.offsets_[feature]), int(self.offsets_[feature + 1])
            if any(start <= v < stop and value > 0 for v, value in (*path, (variable, bit))):
                (category,) = allowed  # a step named it (a contradiction was refused above)
                return f"{name} == {number_text(plain(levels[category]))}"
            excluded = sorted(set(range(len(levels))) - allowed)
            if len(excluded) == 1:
                return f"{name} != {number_text(plain(levels[excluded[0]]))}"
            return f"{name} not in {{{', '.join(number_text(plain(levels[c])) for c in excluded)}}}"
        if allowed.missing:
            return f"{name} is missing"
        low, high = allowed.low, allowed.high
        if low == -np.inf and high == np.inf:
            text = f"{name} is not missing"
        elif low == -np.inf:
            text = f"{name} < {number_text(high)}"
        elif high == np.inf:
            text = f"{name} >= {number_text(low)}"
        else:
            text = f"{number_text(low)} <= {name} < {number_text(high)}"
        return text if allowed.missing is False else f"{text} or missing"

    def __repr__(self) -> str:
        given = self.categorical
        extra = "" if isinstance(given, str) and given == "auto" else \
            f", categorical={tuple(given)!r}"
        return f"ThresholdEncoder(cuts={self.cuts!r}{extra})"
