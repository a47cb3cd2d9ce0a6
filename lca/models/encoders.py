"""Encoders: uniform ``±1`` bits to a model's input rows, and data rows back to bits.

An *encoder* turns the oracle's ``±1`` points into the model's feature
vectors, one vectorised call per batch, and turns rows of data into points
(:meth:`QuantileEncoder.encode`), so that a reconstructed tree can be asked
about real rows.

Why one module of this size: the two encoders share the bit layout, the
row and frame handling and the decoding of conditions; the statement of what
a reconstructed tree is accurate under (below) covers both.

What the reconstructed tree is accurate under
---------------------------------------------
The reconstructor samples the oracle's ``±1`` points *uniformly*. Through an
encoder, uniform bits become feature vectors whose features are

* **independent** of each other, and
* each distributed as its **discretised data marginal**: under
  :class:`QuantileEncoder` a real-valued feature takes the representative of
  each of its ``2**bits`` bins with probability exactly ``2**-bits`` (each
  bin holds ``1/2**bits`` of the fitted rows up to rounding and ties, see
  ``bin_mass_``), and a feature of levels (a categorical one, say) takes
  each level with probability (number of bins given to it) ``/ 2**bits``,
  within ``2**-bits`` of its data frequency (within twice that for the one
  level of a near-constant column with rare levels on both sides of it).
  A column with missing values gives them bins of their own, about their
  share of the ``2**bits``, decoded as NaN (see :class:`QuantileEncoder`).

This product distribution is **not** the data distribution: correlations
between features are gone, and combinations the model never saw in training
are sampled as often as common ones. Whatever accuracy the reconstructor
achieves (see ``docs/theory.md``) is agreement with the model under this
product distribution; agreement on the data itself must be measured
separately (:meth:`lca.models.Surrogate.fidelity` does both).

Bit layout and conventions
--------------------------
Feature ``j`` owns the ``bits`` consecutive variables starting at
``j * bits``, most significant first. A variable's value ``b`` is the binary
digit ``(1 - b) / 2`` (the convention of :mod:`lca.oracle`: ``+1 <-> 0``,
``-1 <-> 1``), and the digits of a feature, read as a binary number ``k``,
pick its ``k``-th bin in increasing order. So the most significant variable of
a real-valued feature is ``-1`` exactly when the feature is at or above its
median threshold, and :meth:`QuantileEncoder.describe` merges the bits of one
feature on a path into an interval such as ``2.45 <= petal length < 4.75``.

DataFrames: fitted on a pandas DataFrame, an encoder takes its column names
as feature names, accepts categorical columns by name and with string (or
any sortable) categories, and decodes points to a DataFrame with the same
columns (categorical dtypes restored), so a model fitted on that DataFrame
is called as it was trained.

Everything here is deterministic: fitting is a function of the data alone
(no sampling), and decoding is a table look-up.

    >>> import numpy as np
    >>> X = np.arange(16.0).reshape(8, 2)      # two features, 8 rows
    >>> enc = QuantileEncoder(bits=2, feature_names=["a", "b"]).fit(X)
    >>> enc.n_bits
    4
    >>> enc.describe(0, -1)                    # top bit of "a": upper half
    'a >= 7'
    >>> enc.describe(1, +1, path=((0, -1),))   # then the lower half of that
    '7 <= a < 11'
    >>> enc.decode(np.array([[-1, 1, 1, 1]], dtype=np.int8))
    array([[9., 2.]])
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from numbers import Integral
from typing import Any

import numpy as np

from lca._validate import check_int
from lca.derive import Path
from lca.models._data import (
    MAX_FEATURES,
    Columns,
    category_column,
    category_values,
    is_numeric,
    make_frame,
    plain,
    read_columns,
    real_column,
    stack,
)
from lca.models.questions import (
    Questions,
    UnseenValueWarning,
    category_key,
    column_index,
    listed_categorical,
    midpoints,
    number_text,
    pandas_categorical,
)
from lca.oracle import check_points

__all__ = [
    "BinaryEncoder",
    "QuantileEncoder",
    "UnseenValueWarning",
]

MAX_BITS = 16


# -- shared machinery -------------------------------------------------------------

class Encoder(Questions):
    """The product encoders' machinery: every feature has ``bits`` bits and a table of
    ``2**bits`` entries, so a ``±1`` point decodes into one row.

    Fitted state, beside :class:`lca.models.questions.Questions`'s: ``table_``
    (``(d, 2**bits)`` float64: the decoded value of each bin of a real
    feature, the index into ``categories_[j]`` of each bin of a categorical
    one; NaN in a missing bin) and ``categories_`` (``{j: values}``);
    ``missing_bin_`` (``{j: first missing bin}``) is empty unless ``fit`` saw
    missing values (see :class:`QuantileEncoder`).
    """

    bits: int
    table_: np.ndarray
    # {j: the first of feature j's missing bins}: none unless fit saw missing values.
    missing_bin_: dict[int, int] = {}  # read only: no missing bins by default

    _fitted_attribute = "table_"

    @property
    def n_bits(self) -> int:
        """Number of ``±1`` variables: ``bits`` per feature."""
        self._check_fitted("n_bits")
        return self.n_features_in_ * self.bits

    def decode(self, points: Any) -> Any:
        """The model inputs of an ``(m, n_bits)`` array of ``±1``.

        Each feature's bits, most significant first, are the binary digits
        ``(1 - b) / 2`` of its bin index; the value is that bin's
        representative (a real feature) or category (a categorical one). A
        deterministic table look-up. Returns a DataFrame with the fitted
        columns when the encoder was fitted on one, otherwise an ``(m, d)``
        array: float64, or objects when some categories are strings.
        """
        self._check_fitted("decode")
        points = check_points(points, self.n_bits, what=f"points of {type(self).__name__}.decode")
        return self._decode(points, self.columns_)

    def _bin_index(self, points: np.ndarray) -> np.ndarray:
        # Oracle queries arrive validated (int8 ±1, n_bits columns): no checks here.
        # Digit (1 - b) / 2 is 1 exactly where b = -1; bin index most significant
        # digit first (the cheapest numpy path measured).
        m, d, bits = points.shape[0], self.n_features_in_, self.bits
        digits = (points < 0).view(np.uint8).reshape(m, d, bits)
        index = digits[:, :, 0].astype(np.intp)
        for i in range(1, bits):
            index <<= 1
            index |= digits[:, :, i]
        return index

    def _decode(self, points: np.ndarray, labels: tuple[Any, ...] | None) -> Any:
        """Decoded rows: a DataFrame under ``labels``, or an array when ``labels`` is None."""
        values = self._decode_values(points)
        if not self.categories_ and labels is None:
            return values
        columns = self._columns_of(values)
        if labels is not None:
            return make_frame(columns, labels, self.categorical_dtypes_)
        return stack(columns)

    def _decode_values(self, points: np.ndarray) -> np.ndarray:
        """The ``table_`` entry of every feature of every point, ``(m, d)`` float64."""
        index = self._bin_index(points)
        index += np.arange(self.n_features_in_, dtype=np.intp) << self.bits
        return np.take(self.table_.ravel(), index)

    def _columns_of(self, values: np.ndarray) -> list[np.ndarray]:
        """Columns of :meth:`_decode_values` output, category indices replaced by categories
        (a missing bin of ordered levels, NaN in ``table_``, stays NaN)."""
        columns = []
        for j in range(self.n_features_in_):
            column = values[:, j]
            if j in self.categories_:
                absent = np.isnan(column) if j in self.missing_bin_ else None
                if absent is not None:
                    column = np.where(absent, 0.0, column)
                column = self.categories_[j][column.astype(np.intp)]
                if absent is not None:
                    column[absent] = np.nan  # ordered levels are numbers: float64
            columns.append(column)
        return columns

    def _points(self, index: np.ndarray) -> np.ndarray:
        """``±1`` points of an ``(m, d)`` array of bin indices."""
        shifts = np.arange(self.bits - 1, -1, -1)
        digits = (index[:, :, None] >> shifts) & 1
        # The width is spelled out: reshape cannot infer it for zero rows.
        return (1 - 2 * digits).reshape(index.shape[0], self.n_bits).astype(np.int8)

    def _locate(self, variable: Any, bit: Any, path: Any) -> tuple[int, np.ndarray]:
        """Feature of ``variable`` and a mask of its bins allowed by ``path`` and ``bit``."""
        owner = f"{type(self).__name__}.describe"
        self._check_fitted("describe")
        variable = check_int(owner, "variable", variable, 0, self.n_bits - 1)
        if isinstance(bit, bool) or not isinstance(bit, Integral) or bit not in (-1, 1):
            raise ValueError(f"The 'bit' parameter of {owner} must be -1 or +1. "
                             f"Got {bit!r} instead.")
        feature = variable // self.bits
        bins = np.arange(1 << self.bits)
        allowed = np.ones(bins.size, dtype=bool)
        fixed = {variable: int(bit)}
        for var, value in tuple(path):
            if var // self.bits != feature:
                continue
            if fixed.get(var, value) != value:
                raise ValueError(f"{owner}: the path fixes variable {var} to {value:+d}, "
                                 f"which contradicts the bit {bit:+d} being described.")
            fixed[var] = int(value)
        for var, value in fixed.items():
            shift = self.bits - 1 - (var - feature * self.bits)
            allowed &= ((bins >> shift) & 1) == (1 - value) // 2
        return feature, allowed

    def feature_index(self, variable: int) -> int:
        """The column number of the feature that owns ``variable`` (unchecked)."""
        return variable // self.bits


# -- encoders -------------------------------------------------------------------

class BinaryEncoder(Encoder):
    """Identity encoding for 0/1 features: variable ``b`` is the feature value ``(1 - b) / 2``.

    One bit per feature (``+1 -> 0``, ``-1 -> 1``, as in :mod:`lca.oracle`),
    so uniform bits make every feature an independent fair coin.

    Args:
        feature_names: one name per column of ``X`` (default: a DataFrame's
            column names, else ``x0, x1, ...``).
    """

    bits = 1

    def __init__(self, feature_names: Sequence[str] | None = None) -> None:
        self.feature_names_arg = feature_names

    def fit(self, X: Any) -> BinaryEncoder:
        """Check that ``X`` holds only 0 and 1 and record the number of features."""
        owner = "BinaryEncoder.fit"
        data = read_columns(owner, X, self.feature_names_arg)
        if not data.columns:
            raise ValueError(f"The 'X' parameter of {owner} must have at least one column.")
        for j, column in enumerate(data.columns):
            values = real_column(owner, f"x{j}" if data.labels is None else str(data.labels[j]),
                                 j, column)
            bad = (values != 0) & (values != 1)
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise ValueError(f"The 'X' parameter of {owner} must hold only 0 and 1 (use "
                                 f"QuantileEncoder for other values); column {j} has "
                                 f"{values[row].item()!r} at row {row}.")
        self._fit_layout(owner, data)
        return self._fit_width(owner, data)

    def _fit_width(self, owner: str, data: Columns) -> BinaryEncoder:
        d = len(data.columns)
        self.feature_names = self._names(owner, self.feature_names_arg, data)
        self.n_features_in_ = d
        self.categories_ = {}
        self.table_ = np.tile(np.array([0.0, 1.0]), (d, 1))
        return self

    @classmethod
    def of_width(cls, owner: str, d: int, feature_names: Sequence[str] | None) -> BinaryEncoder:
        """An encoder of ``d`` 0/1 features fitted without data (the caller vouches for them)."""
        d = check_int(owner, "n", d, 1, MAX_FEATURES)
        encoder = cls(feature_names)
        encoder.columns_, encoder.categorical_dtypes_ = None, {}
        return encoder._fit_width(owner, Columns((np.empty(0),) * d, 0))

    def encode(self, X: Any) -> np.ndarray:
        """The ``±1`` points of rows of 0/1 features (``0 -> +1``, ``1 -> -1``)."""
        owner = "BinaryEncoder.encode"
        self._check_fitted("encode")
        data = self._select(owner, X)
        index = np.empty((data.rows, self.n_features_in_), dtype=np.intp)
        for j, column in enumerate(data.columns):
            values = real_column(owner, self.feature_names[j], j, column)
            bad = (values != 0) & (values != 1)
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise ValueError(f"The 'X' parameter of {owner} must hold only 0 and 1; "
                                 f"column {j} has {values[row].item()!r} at row {row}.")
            index[:, j] = values.astype(np.intp)
        return self._points(index)

    def describe(self, variable: int, bit: int, path: Path = ()) -> str:
        """``"name = 0"`` for ``bit = +1``, ``"name = 1"`` for ``bit = -1``."""
        feature, allowed = self._locate(variable, bit, path)
        return f"{self.feature_names[feature]} = {int(np.flatnonzero(allowed)[0])}"

    def __repr__(self) -> str:
        return "BinaryEncoder()"


class QuantileEncoder(Encoder):
    """Equal-mass bins of each feature's data, selected by ``bits`` uniform bits.

    Real-valued feature ``j``: the fitted rows are sorted and cut into
    ``2**bits`` bins of (as nearly as ties allow) equal size, at thresholds
    ``thresholds_[j]`` halfway between neighbouring distinct values, so bin
    ``k`` is ``thresholds_[j][k-1] <= x < thresholds_[j][k]`` (open at the
    ends). The most significant bit's cut splits the rows in half (at the
    median) and each further bit's cut splits its parent bin's rows in half,
    so without ties every bin holds the floor or the ceiling of
    ``m / 2**bits`` of the ``m`` rows. With ties a cut cannot split a run of
    equal values: it goes to the nearest place where the value changes that
    leaves each side at least as many distinct values as it has bins (so any
    feature with ``2**bits`` distinct values can be fitted); ``bin_mass_[j][k]``
    is the fraction of rows in bin ``k`` (for a feature of levels: the rows
    the bin stands for, see below). The decoded value of bin ``k`` is the
    **median of the data in that bin**, so it satisfies the bin's condition.

    Feature of levels ``j``: a categorical column (listed in ``categorical``,
    or found by ``"auto"``), or a column of numbers with fewer than
    ``2**bits`` distinct values, which cannot fill ``2**bits`` bins of its
    own. Its levels (``categories_[j]``: numbers, or strings and other
    sortable values) are taken in sorted order, laid end to end with lengths
    equal to their data frequencies, and bin ``k`` gets the level covering
    the point ``(k + 1/2) / 2**bits``. A level then has probability ``(its
    bins) / 2**bits``, within ``2**-bits`` of its frequency. When one level
    covers every bin's point (the others hold fewer than half a bin's rows
    on each side of it, e.g. a 0/1 column with 1.6% ones), each side of it
    that has rows gets an end bin instead (bin 0 below, the last bin above),
    holding the level at the middle of that side's rows; with ``bits=1``,
    when both sides have rows, the side with more rows gets the other bin
    (the upper side on a tie). So each side with an end bin is sampled with
    probability ``2**-bits``, however rare it is in the data, and the
    dominant level's probability is within ``2 * 2**-bits`` of its
    frequency. A constant column gets its one value in every bin (its bits change
    nothing). :meth:`encode` sends every row of a level to one bin, its
    *home* (``home_bin_[j]``): its first bin, or, for a level that got no
    bin, the bin covering its middle; ``bin_mass_`` counts the rows of such a
    level in its home bin. Conditions (:meth:`describe`) list the levels
    whose rows take a branch, so sibling conditions partition the levels.

    *Ordered* levels (``ordered_``): the levels of a column of numbers that
    is neither listed in ``categorical`` nor a pandas categorical column
    (with ``"auto"``: every such column it takes). They keep their order, so
    a value :meth:`encode` did not see in ``fit`` (an integer between two
    levels, or one beyond the fitted range) goes to the home bin of the
    nearest level (the upper one when exactly halfway), with one
    :class:`UnseenValueWarning` per call naming the columns and their
    numbers of rows. A value not seen in ``fit`` in an *unordered* column
    (strings, or a column listed in ``categorical``) has no nearest level
    and is refused (``ValueError``). Real values outside the fitted range go
    to the end bins, as every real value goes to the bin whose interval
    holds it.

    *Missing values* (NaN, ``None``, ``pd.NA``) in a column of numbers (real
    or ordered levels) that ``fit`` sees some of get bins of their own, as a
    level does: the top ``k`` bins of the feature (``missing_bin_[j]`` is the
    first of them), ``k`` the missing rows' share of the ``2**bits`` bins
    rounded to the nearest (half up), at least 1 and at most ``2**bits - 1``.
    The present values are fitted into the bins below, as above (quantile
    bins, as many as are left, so ``thresholds_[j]`` holds one cut fewer
    than they; or levels). A missing bin decodes to NaN (``table_`` holds
    NaN), so the model is asked about a missing value as the user's data
    gives it, with probability ``k / 2**bits``; ``bin_mass_`` gives each
    missing bin an equal share of the missing rows. :meth:`encode` sends a
    missing value to the first missing bin, its home; a missing value in a
    column ``fit`` saw none missing in has no bin and is refused
    (``ValueError`` naming the column and the row). :meth:`describe` adds
    ``" or missing"`` to a condition whose bins hold that home, and says
    ``"x is missing"`` of a branch of missing bins only. A column missing in
    every row, and a missing value in an unordered (categorical) column, are
    refused: drop or fill them. A column without missing values is fitted,
    encoded, decoded and described exactly as it would be alone.

    See the module docstring for the distribution the reconstructed tree is
    accurate under (features independent, each with its discretised marginal).

    Args:
        bits: bits per feature, in ``[1, 16]``; ``2**bits`` bins.
        categorical: the categorical (unordered) columns, by index or by
            name (a DataFrame's column or a feature name); ``"auto"`` takes
            every column that does not hold numbers (strings, pandas
            categories) as unordered, and every other column with fewer than
            ``2**bits`` distinct values as ordered levels.
        feature_names: one name per column (default: a DataFrame's column
            names, else ``x0, x1, ...``).
        category_names: optional ``{column: {category: label}}`` (column by
            index or name) for describing categorical columns.
    """

    def __init__(self, bits: int = 3, categorical: Iterable[int | str] | str = (),
                 feature_names: Sequence[str] | None = None,
                 category_names: Mapping[Any, Mapping[Any, str]] | None = None) -> None:
        self.bits = bits
        self.categorical = categorical
        self.feature_names_arg = feature_names
        self.category_names = category_names

    def fit(self, X: Any) -> QuantileEncoder:
        """Compute every feature's bins and representatives from the rows of ``X``.

        ``X`` is a 2-D array or a pandas DataFrame.

        Every column the rest of this docstring does not refuse is fitted:
        rare levels and near-constant or constant columns included (see the
        class docstring).

        Raises:
            TypeError: ``X`` is not 2-D; a non-categorical column holds
                non-numbers; bad parameter types.
            ValueError: infinite values, a column missing in every row,
                missing categories, or fewer than ``2**bits`` rows.
        """
        owner = "QuantileEncoder.fit"
        bits = check_int(owner, "bits", self.bits, 1, MAX_BITS)
        data = read_columns(owner, X, self.feature_names_arg)
        m, d = data.rows, len(data.columns)
        if d < 1:
            raise ValueError(f"The 'X' parameter of {owner} must have at least one column.")
        n_bins = 1 << bits
        if m < n_bins:
            raise ValueError(f"The 'X' parameter of {owner} has {m} rows; bits={bits} "
                             f"needs at least 2**bits = {n_bins} rows (one per bin). "
                             "Lower bits or give more data.")
        names = self._names(owner, self.feature_names_arg, data)
        categorical = self._categorical(owner, data, names, n_bins)
        labels = self._category_labels(owner, categorical, data, names)
        auto = isinstance(self.categorical, str)  # "auto": the only string _categorical takes
        declared = pandas_categorical(data)  # categorical by dtype: unordered
        table, masses = np.empty((d, n_bins)), np.empty((d, n_bins))
        thresholds: dict[int, np.ndarray] = {}
        categories: dict[int, np.ndarray] = {}
        homes: dict[int, np.ndarray] = {}
        missing_bins: dict[int, int] = {}
        ordered: set[int] = set()
        for j, column in enumerate(data.columns):
            if j in categorical and not (auto and is_numeric(column) and j not in declared):
                values, inverse = category_values(owner, names[j], j, column)
                table[j], masses[j], homes[j] = self._fit_levels(inverse, values.size, n_bins)
                categories[j] = values
                continue
            # Numbers, real or ordered levels: the missing values (if some) take the top
            # bins, and the present values are fitted into the bins below them.
            column = real_column(owner, names[j], j, column, missing=True)
            absent = np.isnan(column)
            spare = self._missing_share(owner, names[j], j, int(absent.sum()), m, n_bins)
            present = column[~absent] if spare else column
            p = n_bins - spare
            if np.unique(present).size >= n_bins:
                thresholds[j], table[j, :p], masses[j, :p] = self._fit_real(present, p, m)
            else:  # too few values for bins of their own: ordered levels
                ordered.add(j)
                values, inverse = category_values(owner, names[j], j, present)
                table[j, :p], masses[j, :p], homes[j] = self._fit_levels(
                    inverse, values.size, p, m)
                categories[j] = values
            if spare:
                missing_bins[j] = p
                table[j, p:] = np.nan  # decoded as NaN: the model is asked as the user asks it
                masses[j, p:] = (m - present.size) / m / spare
        self._fit_layout(owner, data)
        # Fitted state is assigned only once everything succeeded.
        self.bits = bits
        self.thresholds_ = thresholds
        self.categories_ = categories
        self.home_bin_ = homes
        self.missing_bin_ = missing_bins
        self.bin_mass_ = masses
        self.categorical_ = frozenset(categories)
        self.ordered_ = frozenset(ordered)
        self.category_labels_ = labels
        self.feature_names = names
        self.n_features_in_ = d
        self.table_ = table
        return self

    def _categorical(self, owner: str, data: Columns, names: tuple[str, ...],
                     n_bins: int) -> frozenset[int]:
        given = self.categorical
        if isinstance(given, str) and given == "auto":
            return frozenset(j for j, column in enumerate(data.columns)
                             if not is_numeric(column)
                             or np.unique(column).size < n_bins)
        return frozenset(listed_categorical(owner, given, data, names))

    def _category_labels(self, owner: str, categorical: frozenset[int], data: Columns,
                         names: tuple[str, ...]) -> dict[int, dict]:
        given = self.category_names or {}
        if not isinstance(given, Mapping):
            raise TypeError(f"The 'category_names' parameter of {owner} must be a mapping "
                            f"{{column: {{category: label}}}}. Got {given!r} instead.")
        out: dict[int, dict] = {}
        for column, mapping in given.items():
            j = column_index(owner, "category_names", column, data, names)
            if not isinstance(mapping, Mapping):
                raise TypeError(f"The 'category_names' parameter of {owner} must map each "
                                f"column to a {{category: label}} mapping. Got {column!r}: "
                                f"{mapping!r}.")
            if j not in categorical:
                raise ValueError(f"The 'category_names' parameter of {owner} names column "
                                 f"{column!r} ({names[j]!r}, column {j}), which is not "
                                 f"categorical (the categorical columns are "
                                 f"{sorted(categorical)}); list it in categorical= or drop "
                                 "its names.")
            codes = [plain(code) for code in mapping]
            bad = [code for code in codes if not isinstance(code, (str, int, float))
                   or (isinstance(code, float) and not math.isfinite(code))]
            if bad:  # saved as JSON with the encoder: strings, numbers and bools only
                raise TypeError(f"The 'category_names' parameter of {owner}: the categories "
                                f"of column {column!r} must be strings or finite numbers. Got "
                                f"{bad[0]!r}.")
            out[j] = {category_key(code): str(label)
                      for code, label in zip(codes, mapping.values(), strict=True)}
        return out

    @staticmethod
    def _missing_share(owner: str, name: str, j: int, absent: int, m: int,
                       n_bins: int) -> int:
        """How many top bins the ``absent`` missing values of a column of ``m`` rows take:
        their share of the ``n_bins`` bins to the nearest (half up), at least 1 (however
        rare, a missing value is sampled) and at most ``n_bins - 1`` (the present values
        keep one); 0 when none is missing. A column missing in every row is refused."""
        if not absent:
            return 0
        if absent == m:
            raise ValueError(f"The 'X' parameter of {owner}: column {name!r} (column {j}) "
                             f"is missing in all {m} rows, so it has no values to bin; drop "
                             "it (a model cannot depend on it on these rows).")
        return min(max((2 * absent * n_bins + m) // (2 * m), 1), n_bins - 1)

    @staticmethod
    def _fit_real(column: np.ndarray, n_bins: int,
                  total: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The cuts, each bin's median and its share of ``total`` rows, of ``n_bins``
        equal-mass bins of the values of ``column``."""
        ordered = np.sort(column)
        m = ordered.size
        # A cut at position p puts ordered[:p] below it and ordered[p:] above.
        # The most significant bit cuts all rows in half (at the median), and
        # each further bit cuts its parent bin's rows in half, so without ties
        # every bin holds the floor or ceiling of m / n_bins rows. Bins are
        # intervals, so cuts sit where the value changes ("changes"); with ties
        # the cut is the change nearest the ideal row that leaves each side
        # at least as many distinct values as it has bins below it, which
        # always exists once the feature has n_bins distinct values. The bins
        # below missing ones need not be a power of two: a span of bins is cut
        # at its middle bin, at the row in proportion (the halfway row when
        # the span is even, so 2**bits bins are cut exactly as halves).
        changes = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
        assert changes.size + 1 >= n_bins  # fewer distinct values are fitted as levels
        positions = [0] * (n_bins + 1)
        positions[n_bins] = m
        spans = [(0, n_bins)]
        while spans:
            lo, hi = spans.pop()
            if hi - lo < 2:
                continue
            k = (lo + hi) // 2
            low, high = positions[lo], positions[hi]
            ideal = low + (high - low) * (k - lo) // (hi - lo)
            # changes[first:last + 1] leave >= k - lo and >= hi - k distinct values.
            first = int(np.searchsorted(changes, low, side="right")) + (k - lo) - 1
            last = int(np.searchsorted(changes, high, side="left")) - (hi - k)
            assert first <= last
            at = int(np.clip(np.searchsorted(changes, ideal), first, last))
            if at > first and ideal - changes[at - 1] <= changes[at] - ideal:
                at -= 1  # the nearer change; the lower one on a tie
            positions[k] = int(changes[at])
            spans += [(lo, k), (k, hi)]
        inner = np.array(positions[1:-1], dtype=np.intp)
        below, above = ordered[inner - 1], ordered[inner]
        cuts = below + (above - below) / 2
        cuts = np.where(cuts > below, cuts, above)  # halfway may round down onto below
        edges = positions
        medians = np.array([np.median(ordered[a:b]) for a, b in pairwise(edges)])
        mass = np.diff(edges) / total
        return cuts, medians, mass

    @staticmethod
    def _fit_levels(inverse: np.ndarray, levels: int, n_bins: int,
                    total: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each bin's level, each bin's share of the ``total`` rows (default: the rows of
        ``inverse``; more when missing rows have bins of their own), each level's home bin."""
        m = inverse.size
        total = m if total is None else total
        counts = np.bincount(inverse, minlength=levels)
        cum = np.cumsum(counts)
        # Integer arithmetic: bin k's centre (2k+1)/(2 n_bins) falls in level
        # c when cum[c-1] <= (2k+1) m / (2 n_bins) < cum[c].
        ends = cum * 2 * n_bins
        centres = (2 * np.arange(n_bins) + 1) * m
        chosen = np.searchsorted(ends, centres, side="right")
        top = chosen[0]
        below, above = int(cum[top] - counts[top]), int(m - cum[top])
        if chosen[-1] == top and below + above and n_bins > 1:  # one bin: nothing to spare
            # One level covers every centre: the rows on each side of it would get no
            # bin. A side with rows gets an end bin, holding the level at the middle of
            # that side's rows (cum[c-1] <= middle < cum[c], doubled to stay integer).
            if n_bins == 2 and below and above:  # one bin to spare: the larger side's
                below, above = (0, above) if above >= below else (below, 0)
            if below:
                chosen[0] = np.searchsorted(2 * cum, below, side="right")
            if above:
                chosen[-1] = np.searchsorted(2 * cum, 2 * (m - above) + above, side="right")
        # Home bin: a level's first bin, else the bin covering its middle,
        # floor((cum[c-1] + cum[c]) n_bins / (2 m)).
        starts = ends - counts * 2 * n_bins
        homes = np.minimum((starts + ends) // (4 * m), n_bins - 1)
        for k in range(n_bins - 1, -1, -1):
            homes[chosen[k]] = k
        # Each bin stands for an equal share of its level's rows, and for the rows
        # of the levels without a bin that it is home to.
        bins_of = np.bincount(chosen, minlength=levels)
        mass = counts[chosen] / total / bins_of[chosen]
        binless = np.flatnonzero(bins_of == 0)
        np.add.at(mass, homes[binless], counts[binless] / total)
        return chosen.astype(np.float64), mass, homes.astype(np.intp)

    def encode(self, X: Any) -> np.ndarray:
        """The ``±1`` bits of the bin of each feature of each row of ``X``.

        Rows of data become points of the oracle, e.g. to ask a reconstructed
        tree about them. Real values go to the bin whose interval holds them
        (values beyond the fitted range to the end bins); every row of a
        level to its home bin (``home_bin_``). A value ``fit`` did not see in
        a column of ordered levels (``ordered_``) goes to the home bin of the
        nearest level (the upper one when exactly halfway), reported by one
        :class:`UnseenValueWarning` per call that names each such column
        and its number of rows; in an unordered column it raises
        ``ValueError``. A missing value (NaN, ``None``, ``pd.NA``) of a column
        with missing bins goes to the first of them (``missing_bin_``); in
        any other column it raises ``ValueError`` naming the column and the
        row. A DataFrame's columns are taken by name.
        ``decode(encode(X))`` replaces each real value by its bin's
        representative and keeps levels seen in ``fit`` and missing values.
        """
        owner = "QuantileEncoder.encode"
        self._check_fitted("encode")
        data = self._select(owner, X)
        index = np.empty((data.rows, self.n_features_in_), dtype=np.intp)
        unseen: list[str] = []
        for j, column in enumerate(data.columns):
            name = self.feature_names[j]
            home = self.missing_bin_.get(j)
            if j in self.thresholds_:
                values = real_column(owner, name, j, column, missing=home is not None)
                index[:, j] = np.searchsorted(self.thresholds_[j], values, side="right")
                if home is not None:
                    index[np.isnan(values), j] = home
                continue
            levels = self.categories_[j]
            position = {category_key(value): c for c, value in enumerate(levels.tolist())}
            column = category_column(owner, name, j, column)
            # Ordered levels are numbers, read once: a missing one (NaN) is refused here,
            # naming its row, unless fit gave missing values bins.
            numbers = (real_column(owner, name, j, column, missing=home is not None)
                       if j in self.ordered_ else None)
            absent = np.zeros(data.rows, dtype=bool) if numbers is None else np.isnan(numbers)
            found = np.zeros(data.rows, dtype=np.intp)
            missing = []
            for row, value in enumerate(column.tolist()):
                if absent[row]:
                    continue
                try:
                    c = position.get(category_key(value))
                except TypeError:  # unhashable: a list, a dict, an array in a cell
                    raise TypeError(f"The 'X' parameter of {owner}: categorical feature "
                                    f"{name!r} (column {j}) holds a {type(value).__name__} at "
                                    f"row {row}; categories are strings or numbers.") from None
                if c is None:
                    if j not in self.ordered_:
                        raise ValueError(
                            f"{owner}: categorical feature {name!r} has no category "
                            f"{value!r} (row {row}); fit saw {[plain(v) for v in levels]}, "
                            "and an unordered column has no nearest category.")
                    missing.append(row)
                    continue
                found[row] = c
            if missing:  # only ordered columns get here: numbers is theirs
                assert numbers is not None
                found[missing] = _nearest(levels, numbers[missing])
                unseen.append(f"{name!r} (column {j}): {len(missing)} row"
                              + ("s" if len(missing) > 1 else ""))
            index[:, j] = self.home_bin_[j][found]
            if home is not None:
                index[absent, j] = home
        if unseen:
            warnings.warn(f"{owner}: values not seen in fit went to the bin of the nearest "
                          f"fitted value in {len(unseen)} column(s): {'; '.join(unseen)}.",
                          UnseenValueWarning, stacklevel=2)
        return self._points(index)

    def describe(self, variable: int, bit: int, path: Path = ()) -> str:
        """The condition on the feature of ``variable`` given ``bit`` and its bits on ``path``.

        Real feature: an interval such as ``"2.45 <= petal length < 4.75"``
        (one-sided at the ends), or, when the allowed bins are not contiguous,
        the intervals joined by ``" or "``. Categorical feature: ``"color in
        {red, blue}"``, the categories whose rows (through their home bins)
        take this branch; ``"color in {} (no data row)"`` when none does.
        A feature with missing bins: ``" or missing"`` follows the condition
        when missing values (through their home, the first missing bin) take
        the branch; ``"x is missing"`` when only they do (``"x is missing (no
        data row)"`` for missing bins other than the home: no row takes it),
        ``"x is not missing"`` when every present value does and no missing
        one. Numbers are shown to 4 significant digits; the exact cuts are
        in ``thresholds_``.
        """
        feature, allowed = self._locate(variable, bit, path)
        name = self.feature_names[feature]
        # A missing value's rows take the branch that holds its home, the first missing bin.
        home = self.missing_bin_.get(feature, allowed.size)
        missing = home < allowed.size and bool(allowed[home])
        present = allowed[:home]
        if not present.any():  # the branch holds missing bins only
            return f"{name} is missing" if missing else f"{name} is missing (no data row)"
        if feature in self.categories_:
            labels = self.category_labels_.get(feature, {})
            shown = [labels.get(category_key(value), number_text(value))
                     for value, home in zip(self.categories_[feature].tolist(),
                                            self.home_bin_[feature], strict=True)
                     if allowed[home]]
            if not shown:  # no level's rows take the branch
                return f"{name} is missing" if missing else f"{name} in {{}} (no data row)"
            text = f"{name} in {{{', '.join(shown)}}}"
            return f"{text} or missing" if missing else text
        cuts = self.thresholds_[feature]
        runs, k = [], 0
        while k < present.size:
            if not present[k]:
                k += 1
                continue
            start = k
            while k < present.size and present[k]:
                k += 1
            runs.append((start, k))
        parts = []
        for start, stop in runs:
            low = number_text(cuts[start - 1]) if start > 0 else None
            high = number_text(cuts[stop - 1]) if stop < present.size else None
            if low is None and high is None:  # every present value: missing ones decide
                return f"{name} is missing or not" if missing else f"{name} is not missing"
            if low is None:
                parts.append(f"{name} < {high}")
            elif high is None:
                parts.append(f"{name} >= {low}")
            else:
                parts.append(f"{low} <= {name} < {high}")
        text = " or ".join(parts)
        return f"{text} or missing" if missing else text

    def __repr__(self) -> str:
        given = self.categorical
        if isinstance(given, str):
            extra = f", categorical={given!r}"
        else:
            extra = f", categorical={tuple(given)!r}" if tuple(given) else ""
        return f"QuantileEncoder(bits={self.bits!r}{extra})"


def _nearest(levels: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The index of the level nearest each value (the upper one when exactly halfway)."""
    return np.searchsorted(midpoints(levels[:-1], levels[1:]), values, side="right")
