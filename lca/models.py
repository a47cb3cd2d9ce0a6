"""Trained models as oracles: encoders from uniform bits to inputs, and adapters.

:func:`from_estimator` wraps a batched model (a scikit-learn-style estimator
or a plain function of a 2-D array) as an :class:`lca.Oracle`. An *encoder*
turns the oracle's ``±1`` points into the model's feature vectors, one
vectorised call per batch, and maps the model's outputs to ``±1`` by an
explicit rule (``positive=`` class, or ``threshold=`` on a score).

What the reconstructed tree is accurate under
---------------------------------------------
The reconstructor samples the oracle's ``±1`` points *uniformly*. Through an
encoder, uniform bits become feature vectors whose features are

* **independent** of each other, and
* each distributed as its **discretised data marginal**: under
  :class:`QuantileEncoder` a real-valued feature takes the representative of
  each of its ``2**bits`` bins with probability exactly ``2**-bits`` (each
  bin holds ``1/2**bits`` of the fitted rows up to rounding and ties, see
  ``bin_mass_``), and a categorical feature takes each category with
  probability (number of bins given to it) ``/ 2**bits``, within
  ``2**-bits`` of its data frequency.

This product distribution is **not** the data distribution: correlations
between features are gone, and combinations the model never saw in training
are sampled as often as common ones. Whatever accuracy the reconstructor
achieves (see ``docs/theory.md``) is agreement with the model under this
product distribution; agreement on the data itself must be measured
separately (e.g. by encoding data rows with :meth:`QuantileEncoder.encode`).

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
from collections.abc import Iterable, Mapping, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np

from lca.derive import Path
from lca.oracle import Oracle, OracleError, check_points
from lca._validate import check_int, check_real

__all__ = [
    "BinaryEncoder",
    "ModelOracle",
    "QuantileEncoder",
    "from_estimator",
]

METHODS = ("predict", "predict_proba", "decision_function")
MAX_BITS = 16


# -- encoders -------------------------------------------------------------------

class _Encoder:
    """Shared machinery: every feature has ``bits`` bits and a table of ``2**bits`` values.

    Fitted state: ``table_`` (``(d, 2**bits)`` float64, the decoded value of
    each bin of each feature), ``n_features_in_`` and ``feature_names``.
    """

    bits: int

    def _check_fitted(self, owner: str) -> None:
        if not hasattr(self, "table_"):
            raise ValueError(f"This {type(self).__name__} is not fitted yet; call "
                             f"fit(X) before {owner}.")

    @property
    def n_bits(self) -> int:
        """Number of ``±1`` variables: ``bits`` per feature."""
        self._check_fitted("n_bits")
        return self.n_features_in_ * self.bits

    def _names(self, owner: str, names: Any, d: int) -> tuple[str, ...]:
        if names is None:
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

    def decode(self, points: Any) -> np.ndarray:
        """Feature vectors of an ``(m, n_bits)`` array of ``±1``, as ``(m, d)`` float64.

        Each feature's bits, most significant first, are the binary digits
        ``(1 - b) / 2`` of its bin index; the value is that bin's entry of
        ``table_``. A deterministic table look-up.
        """
        self._check_fitted("decode")
        points = check_points(points, self.n_bits, what=f"points of {type(self).__name__}.decode")
        return self._decode(points)

    def _decode(self, points: np.ndarray) -> np.ndarray:
        # Oracle queries arrive validated (int8 ±1, n_bits columns): no checks here.
        # Digit (1 - b) / 2 is 1 exactly where b = -1; bin index most significant
        # digit first, then one flat look-up (the cheapest numpy path measured).
        m, d, bits = points.shape[0], self.n_features_in_, self.bits
        digits = (points < 0).view(np.uint8).reshape(m, d, bits)
        index = digits[:, :, 0].astype(np.intp)
        for i in range(1, bits):
            index <<= 1
            index |= digits[:, :, i]
        index += np.arange(d, dtype=np.intp) << bits
        return np.take(self.table_.ravel(), index)

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


def _as_matrix(owner: str, X: Any) -> np.ndarray:
    """``X`` as a 2-D float64 array of finite values, or a clear error."""
    try:
        array = np.asarray(X)
    except Exception as error:  # ragged lists and the like
        raise TypeError(f"The 'X' parameter of {owner} must be a 2-D array of numbers. "
                        f"Got {type(X).__name__} ({error}).") from error
    if array.ndim != 2:
        raise TypeError(f"The 'X' parameter of {owner} must be a 2-D array (rows x "
                        f"features). Got shape {array.shape} instead.")
    if array.dtype == np.bool_:
        array = array.astype(np.float64)
    if not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise TypeError(f"The 'X' parameter of {owner} must hold numbers (encode "
                        f"categories as integer codes first). Got dtype {array.dtype}.")
    array = array.astype(np.float64)
    bad = ~np.isfinite(array)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(f"The 'X' parameter of {owner} must be finite; column {col} "
                         f"has {array[row, col]} at row {row} "
                         f"({int(bad[:, col].sum())} non-finite values in that column).")
    return array


def _fmt(value: float) -> str:
    return f"{value:.4g}"


class BinaryEncoder(_Encoder):
    """Identity encoding for 0/1 features: variable ``b`` is the feature value ``(1 - b) / 2``.

    One bit per feature (``+1 -> 0``, ``-1 -> 1``, as in :mod:`lca.oracle`),
    so uniform bits make every feature an independent fair coin.

    Args:
        feature_names: one name per column of ``X`` (default ``x0, x1, ...``).
    """

    bits = 1

    def __init__(self, feature_names: Sequence[str] | None = None) -> None:
        self.feature_names_arg = feature_names

    def fit(self, X: Any) -> BinaryEncoder:
        """Check that ``X`` holds only 0 and 1 and record the number of features."""
        owner = "BinaryEncoder.fit"
        array = _as_matrix(owner, X)
        if array.shape[1] < 1:
            raise ValueError(f"The 'X' parameter of {owner} must have at least one column.")
        bad = (array != 0) & (array != 1)
        if bad.any():
            row, col = np.argwhere(bad)[0]
            raise ValueError(f"The 'X' parameter of {owner} must hold only 0 and 1 (use "
                             f"QuantileEncoder for other values); column {col} has "
                             f"{array[row, col].item()!r} at row {row}.")
        return self._fit_width(array.shape[1], owner)

    def _fit_width(self, d: int, owner: str) -> BinaryEncoder:
        self.feature_names = self._names(owner, self.feature_names_arg, d)
        self.n_features_in_ = d
        self.table_ = np.tile(np.array([0.0, 1.0]), (d, 1))
        return self

    def describe(self, variable: int, bit: int, path: Path = ()) -> str:
        """``"name = 0"`` for ``bit = +1``, ``"name = 1"`` for ``bit = -1``."""
        feature, allowed = self._locate(variable, bit, path)
        return f"{self.feature_names[feature]} = {int(np.flatnonzero(allowed)[0])}"

    def __repr__(self) -> str:
        return "BinaryEncoder()"


class QuantileEncoder(_Encoder):
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
    feature with ``2**bits`` distinct values can be fitted); ``bin_mass_[j][k]`` is the fraction of rows in bin ``k`` (for a
    categorical feature: its category's frequency over its number of bins). The decoded value of bin ``k`` is the **median of the
    data in that bin**, so it satisfies the bin's condition.

    Categorical feature ``j`` (listed in ``categorical``): its categories are
    taken in increasing order of their codes, laid end to end with lengths
    equal to their data frequencies, and bin ``k`` gets the category covering
    the point ``(k + 1/2) / 2**bits``. A category then has probability
    ``(its bins) / 2**bits``, within ``2**-bits`` of its frequency; one rarer
    than ``2**-bits`` may get no bin and is never produced. Categories are
    numbers (codes), as a model takes them; ``category_names`` gives them
    labels for :meth:`describe`.

    See the module docstring for the distribution the reconstructed tree is
    accurate under (features independent, each with its discretised marginal).

    Args:
        bits: bits per feature, in ``[1, 16]``; ``2**bits`` bins.
        categorical: indices of categorical columns.
        feature_names: one name per column (default ``x0, x1, ...``).
        category_names: optional ``{column: {code: label}}`` for describing
            categorical columns.
    """

    def __init__(self, bits: int = 3, categorical: Iterable[int] = (),
                 feature_names: Sequence[str] | None = None,
                 category_names: Mapping[int, Mapping[Any, str]] | None = None) -> None:
        self.bits = bits
        self.categorical = categorical
        self.feature_names_arg = feature_names
        self.category_names = category_names

    def fit(self, X: Any) -> QuantileEncoder:
        """Compute every feature's bins and representatives from the rows of ``X``.

        Raises:
            TypeError: ``X`` is not a 2-D numeric array; bad parameter types.
            ValueError: non-finite values, fewer than ``2**bits`` rows, a
                constant feature, a real feature with fewer than ``2**bits``
                distinct values, or a categorical feature whose bins all go
                to one category.
        """
        owner = "QuantileEncoder.fit"
        bits = check_int(owner, "bits", self.bits, 1, MAX_BITS)
        array = _as_matrix(owner, X)
        m, d = array.shape
        if d < 1:
            raise ValueError(f"The 'X' parameter of {owner} must have at least one column.")
        n_bins = 1 << bits
        if m < n_bins:
            raise ValueError(f"The 'X' parameter of {owner} has {m} rows; bits={bits} "
                             f"needs at least 2**bits = {n_bins} rows (one per bin). "
                             "Lower bits or give more data.")
        categorical = self._categorical(owner, d)
        names = self._names(owner, self.feature_names_arg, d)
        labels = self._category_labels(owner, categorical)
        table, masses = np.empty((d, n_bins)), np.empty((d, n_bins))
        thresholds: dict[int, np.ndarray] = {}
        categories: dict[int, np.ndarray] = {}
        for j in range(d):
            column = array[:, j]
            values = np.unique(column)
            if values.size < 2:
                raise ValueError(f"{owner}: feature {names[j]!r} (column {j}) is constant "
                                 f"({values[0].item()!r}); drop it, its bits would be dead.")
            if j in categorical:
                table[j], masses[j] = self._fit_categorical(owner, names[j], column, values,
                                                            n_bins)
                categories[j] = values
            else:
                thresholds[j], table[j], masses[j] = self._fit_real(owner, names[j], column,
                                                                    bits)
        # Fitted state is assigned only once everything succeeded.
        self.bits = bits
        self.thresholds_ = thresholds
        self.categories_ = categories
        self.bin_mass_ = masses
        self.categorical_ = categorical
        self.category_labels_ = labels
        self.feature_names = names
        self.n_features_in_ = d
        self.table_ = table
        return self

    def _categorical(self, owner: str, d: int) -> frozenset[int]:
        if isinstance(self.categorical, (str, bytes)) or not isinstance(self.categorical,
                                                                        Iterable):
            raise TypeError(f"The 'categorical' parameter of {owner} must be a sequence "
                            f"of column indices. Got {self.categorical!r} instead.")
        indices = tuple(self.categorical)
        for index in indices:
            check_int(owner, "categorical", index, 0, d - 1)
        if len(set(indices)) != len(indices):
            raise ValueError(f"The 'categorical' parameter of {owner} lists a column "
                             f"twice. Got {indices!r}.")
        return frozenset(int(index) for index in indices)

    def _category_labels(self, owner: str, categorical: frozenset[int]) -> dict[int, dict]:
        given = self.category_names or {}
        if not isinstance(given, Mapping):
            raise TypeError(f"The 'category_names' parameter of {owner} must be a mapping "
                            f"{{column: {{code: label}}}}. Got {given!r} instead.")
        for column, mapping in given.items():
            if column not in categorical or not isinstance(mapping, Mapping):
                raise ValueError(f"The 'category_names' parameter of {owner} must map "
                                 f"categorical columns {sorted(categorical)} to "
                                 f"{{code: label}} mappings. Got {column!r}: {mapping!r}.")
        return {int(column): {float(code): str(label) for code, label in mapping.items()}
                for column, mapping in given.items()}

    @staticmethod
    def _fit_real(owner: str, name: str, column: np.ndarray,
                  bits: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ordered = np.sort(column)
        m, n_bins = ordered.size, 1 << bits
        # A cut at position p puts ordered[:p] below it and ordered[p:] above.
        # The most significant bit cuts all rows in half (at the median), and
        # each further bit cuts its parent bin's rows in half, so without ties
        # every bin holds the floor or ceiling of m / n_bins rows. Bins are
        # intervals, so cuts sit where the value changes ("changes"); with ties
        # the cut is the change nearest the halfway row that leaves each side
        # at least as many distinct values as it has bins below it, which
        # always exists once the feature has n_bins distinct values.
        changes = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
        if changes.size + 1 < n_bins:
            raise ValueError(
                f"{owner}: feature {name!r} has {changes.size + 1} distinct values; "
                f"bits={bits} needs at least 2**bits = {n_bins} (one per bin). Lower "
                "bits, or list the column in categorical=.")
        positions = [0] * (n_bins + 1)
        positions[n_bins] = m
        step = n_bins // 2
        while step:
            for k in range(step, n_bins, 2 * step):
                low, high = positions[k - step], positions[k + step]
                ideal = low + (high - low) // 2
                # changes[first:last + 1] leave >= step distinct values each side.
                first = int(np.searchsorted(changes, low, side="right")) + step - 1
                last = int(np.searchsorted(changes, high, side="left")) - step
                assert first <= last
                at = int(np.clip(np.searchsorted(changes, ideal), first, last))
                if at > first and ideal - changes[at - 1] <= changes[at] - ideal:
                    at -= 1  # the nearer change; the lower one on a tie
                positions[k] = int(changes[at])
            step //= 2
        positions = positions[1:-1]
        low, high = ordered[np.array(positions) - 1], ordered[positions]
        cuts = low + (high - low) / 2
        cuts = np.where(cuts > low, cuts, high)  # halfway may round down onto low
        edges = [0, *positions, m]
        medians = np.array([np.median(ordered[a:b]) for a, b in zip(edges, edges[1:])])
        mass = np.diff(edges) / m
        return cuts, medians, mass

    @staticmethod
    def _fit_categorical(owner: str, name: str, column: np.ndarray, values: np.ndarray,
                         n_bins: int) -> tuple[np.ndarray, np.ndarray]:
        counts = np.array([np.count_nonzero(column == value) for value in values])
        # Integer arithmetic: bin k's centre (2k+1)/(2 n_bins) falls in category
        # c when cum[c-1] <= (2k+1) m / (2 n_bins) < cum[c].
        ends = np.cumsum(counts) * 2 * n_bins
        centres = (2 * np.arange(n_bins) + 1) * column.size
        chosen = np.searchsorted(ends, centres, side="right")
        if np.unique(chosen).size < 2:
            raise ValueError(f"{owner}: categorical feature {name!r} gets one category "
                             f"({values[chosen[0]].item()!r}) in all {n_bins} bins; raise bits "
                             "or drop the feature.")
        # Each bin stands for an equal share of its category's rows.
        mass = counts[chosen] / column.size / np.bincount(chosen)[chosen]
        return values[chosen].astype(np.float64), mass

    def encode(self, X: Any) -> np.ndarray:
        """The ``±1`` bits of the bin of each feature of each row of ``X``.

        Rows of data become points of the oracle, e.g. to measure agreement
        between a reconstructed tree and the model on data. Real values go to
        the bin whose interval holds them; categorical codes to the first bin
        of their category (a code with no bin raises ``ValueError``).
        ``decode(encode(X))`` replaces each value by its bin's representative.
        """
        owner = "QuantileEncoder.encode"
        self._check_fitted("encode")
        array = _as_matrix(owner, X)
        if array.shape[1] != self.n_features_in_:
            raise TypeError(f"The 'X' parameter of {owner} must have {self.n_features_in_} "
                            f"columns. Got shape {array.shape} instead.")
        index = np.empty(array.shape, dtype=np.intp)
        for j in range(self.n_features_in_):
            if j in self.thresholds_:
                index[:, j] = np.searchsorted(self.thresholds_[j], array[:, j], side="right")
                continue
            table = self.table_[j]
            first = {}
            for k in range(table.size - 1, -1, -1):
                first[table[k]] = k
            for row, value in enumerate(array[:, j]):
                if value not in first:
                    raise ValueError(f"{owner}: categorical feature "
                                     f"{self.feature_names[j]!r} has no bin for {value!r} "
                                     f"(row {row}); its bins hold {sorted(first)}.")
                index[row, j] = first[value]
        shifts = np.arange(self.bits - 1, -1, -1)
        digits = (index[:, :, None] >> shifts) & 1
        return (1 - 2 * digits).reshape(array.shape[0], -1).astype(np.int8)

    def describe(self, variable: int, bit: int, path: Path = ()) -> str:
        """The condition on the feature of ``variable`` given ``bit`` and its bits on ``path``.

        Real feature: an interval such as ``"2.45 <= petal length < 4.75"``
        (one-sided at the ends), or, when the allowed bins are not contiguous,
        the intervals joined by ``" or "``. Categorical feature: ``"color in
        {red, blue}"``. Numbers are shown to 4 significant digits; the exact
        cuts are in ``thresholds_``.
        """
        feature, allowed = self._locate(variable, bit, path)
        name = self.feature_names[feature]
        if feature in self.categories_:
            labels = self.category_labels_.get(feature, {})
            codes = np.unique(self.table_[feature][allowed])
            shown = ", ".join(labels.get(float(code), _fmt(code)) for code in codes)
            return f"{name} in {{{shown}}}"
        cuts = self.thresholds_[feature]
        runs, k = [], 0
        while k < allowed.size:
            if not allowed[k]:
                k += 1
                continue
            start = k
            while k < allowed.size and allowed[k]:
                k += 1
            runs.append((start, k))
        parts = []
        for start, stop in runs:
            low = _fmt(cuts[start - 1]) if start > 0 else None
            high = _fmt(cuts[stop - 1]) if stop < allowed.size else None
            assert low is not None or high is not None  # the described bit halves the bins
            if low is None:
                parts.append(f"{name} < {high}")
            elif high is None:
                parts.append(f"{name} >= {low}")
            else:
                parts.append(f"{low} <= {name} < {high}")
        return " or ".join(parts)

    def __repr__(self) -> str:
        extra = f", categorical={tuple(self.categorical)!r}" if tuple(self.categorical) else ""
        return f"QuantileEncoder(bits={self.bits!r}{extra})"


# -- the model oracle -----------------------------------------------------------

class ModelOracle(Oracle):
    """A batched model as an oracle; build it with :func:`from_estimator`.

    ``query(points)`` decodes the points with the encoder, calls the model's
    ``method`` once on the whole batch, and maps its outputs to ``±1``:
    ``predict`` outputs equal to ``positive`` give ``+1``, every other known
    class ``-1``; scores (``decision_function``, or the ``positive`` column
    of ``predict_proba``) give ``+1`` when ``>= threshold``. Anything else a
    model returns (an unknown class, NaN, a wrong length or shape) raises
    :class:`lca.OracleError` naming the model. The oracle is deterministic
    when the model is, and pickles whenever the model does.
    """

    def __init__(self, model: Any, encoder: _Encoder, method: str, auto: bool,
                 positive: Any, threshold: float | None, classes: np.ndarray | None,
                 column: int | None, name: str) -> None:
        self.model = model
        self.encoder = encoder
        self.method = method
        self.auto = auto
        self.positive = positive
        self.threshold = threshold
        self.classes = classes
        self.column = column
        self.name = name
        self.n = encoder.n_bits

    def _call(self, features: np.ndarray) -> Any:
        function = getattr(self.model, self.method, None)
        return (function if function is not None else self.model)(features)

    def query(self, points: np.ndarray) -> np.ndarray:
        if not (isinstance(points, np.ndarray) and points.dtype == np.int8
                and points.ndim == 2 and points.shape[1] == self.n):
            # The library always sends int8 (m, n); validate anything else a user sends.
            points = check_points(points, self.n, what=f"points of {self.name!r}")
        features = self.encoder._decode(points)
        try:
            raw = self._call(features)
        except Exception as error:
            error.add_note(f"while calling {self.method} of model {self.name!r} on "
                           f"{features.shape[0]} rows")
            raise
        outputs = np.asarray(raw)
        m = points.shape[0]
        if self.threshold is None:
            return self._labels(outputs, m)
        return self._scores(outputs, m)

    def _fail(self, message: str) -> OracleError:
        return OracleError(f"model {self.name!r} ({self.method}) {message}")

    def _labels(self, outputs: np.ndarray, m: int) -> np.ndarray:
        if outputs.ndim == 2 and outputs.shape[1:] == (1,):
            outputs = outputs[:, 0]
        if outputs.shape != (m,):
            raise self._fail(f"returned shape {outputs.shape} for {m} rows; expected "
                             f"({m},) or ({m}, 1) class labels")
        if self.classes is not None:
            known = np.zeros(m, dtype=bool)
            if _numeric(outputs) == _numeric(self.classes):
                if self.classes.size <= 8:  # a few comparisons beat np.isin's set-up
                    for label in self.classes:
                        known |= outputs == label
                else:
                    known = np.isin(outputs, self.classes)
        elif np.issubdtype(outputs.dtype, np.number) or outputs.dtype == np.bool_:
            known = (outputs == 0) | (outputs == 1) | (outputs == -1)
        else:
            known = np.zeros(m, dtype=bool)
        if not known.all():
            bad = outputs[~known][0]
            bad = bad.item() if isinstance(bad, np.generic) else bad
            expected = (f"one of its classes {self.classes.tolist()}" if self.classes is not
                        None else "a binary label in {0, 1} or {-1, +1}")
            raise self._fail(f"returned {bad!r}, which the mapping does not know; expected "
                             f"{expected}")
        return np.where(outputs == self.positive, 1, -1).astype(np.int8)

    def _scores(self, outputs: np.ndarray, m: int) -> np.ndarray:
        if outputs.ndim == 2 and self.column is not None and outputs.shape[1] > 1:
            outputs = outputs[:, self.column]
        elif outputs.ndim == 2 and outputs.shape[1] == 1:
            outputs = outputs[:, 0]
        if outputs.shape != (m,):
            raise self._fail(f"returned shape {outputs.shape} for {m} rows; expected "
                             f"({m},) scores" + ("" if self.column is None else
                                                 f" or ({m}, k) with k > {self.column}"))
        if outputs.dtype == np.bool_ or not np.issubdtype(outputs.dtype, np.number):
            raise self._fail(f"returned dtype {outputs.dtype}; expected numeric scores")
        scores = outputs.astype(np.float64)
        finite = np.isfinite(scores)
        if not finite.all():
            raise self._fail(f"returned {scores[~finite][0]} at row "
                             f"{int(np.flatnonzero(~finite)[0])}; scores must be finite")
        if self.method == "predict_proba" and (scores.min() < 0 or scores.max() > 1):
            bad = scores[(scores < 0) | (scores > 1)][0]
            raise self._fail(f"returned probability {bad}; expected values in [0, 1]")
        return np.where(scores >= self.threshold, 1, -1).astype(np.int8)

    def describe(self, variable: int, bit: int, path: Path = ()) -> str:
        """The condition ``variable = bit`` as the encoder reads it, e.g. ``"age >= 40.5"``."""
        return self.encoder.describe(variable, bit, path)

    def __repr__(self) -> str:
        rule = (f"positive={self.positive!r}" if self.threshold is None else
                f"score >= {self.threshold!r}" + (f" (column of {self.positive!r})"
                                                   if self.column is not None else ""))
        how = " (auto)" if self.auto else ""
        return (f"<ModelOracle {self.name!r} n={self.n} method={self.method!r}{how} "
                f"{rule} encoder={self.encoder!r}>")


def _classes(model: Any) -> np.ndarray | None:
    classes = getattr(model, "classes_", None)
    if classes is None:
        return None
    if isinstance(classes, list) and classes and isinstance(classes[0], np.ndarray):
        raise TypeError("lca.models.from_estimator: multi-output models (a list of "
                        "classes_ arrays) are not supported; wrap one output at a time.")
    classes = np.asarray(classes)
    if classes.ndim != 1:
        raise TypeError("lca.models.from_estimator: the model's classes_ must be 1-D. "
                        f"Got shape {classes.shape}.")
    return classes


def _pick_method(model: Any, method: Any, threshold: Any, owner: str) -> tuple[str, bool]:
    has = [name for name in METHODS if callable(getattr(model, name, None))]
    if method is not None:
        if method not in METHODS:
            raise ValueError(f"The 'method' parameter of {owner} must be one of "
                             f"{METHODS} or None. Got {method!r} instead.")
        if has and method not in has:
            raise ValueError(f"{owner}: model {type(model).__name__} has no method "
                             f"{method!r} (it has {has}).")
        if not has and not callable(model):
            raise TypeError(f"The 'model' parameter of {owner} must be callable or have "
                            f"one of the methods {METHODS}. Got {type(model).__name__}.")
        return method, False
    if not has and not callable(model):
        raise TypeError(f"The 'model' parameter of {owner} must be callable or have one "
                        f"of the methods {METHODS}. Got {type(model).__name__}.")
    if threshold is None:
        if has and "predict" not in has:
            raise ValueError(f"{owner}: model {type(model).__name__} has no predict; "
                             f"pass threshold= to threshold its {has[0]} scores.")
        return "predict", True
    if not has:
        return "decision_function", True
    scorers = [name for name in ("decision_function", "predict_proba") if name in has]
    if len(scorers) == 2:
        raise ValueError(f"{owner}: threshold={threshold!r} is ambiguous for "
                         f"{type(model).__name__}, which has both decision_function and "
                         "predict_proba; pass method='decision_function' or "
                         "method='predict_proba'.")
    if not scorers:
        raise ValueError(f"{owner}: threshold= needs scores, but model "
                         f"{type(model).__name__} has neither decision_function nor "
                         "predict_proba; use positive= with predict instead.")
    return scorers[0], True


def from_estimator(model: Any, encoder: _Encoder | None = None, *, positive: Any = None,
                   method: str | None = None, threshold: float | None = None,
                   n: int | None = None) -> ModelOracle:
    """Wrap a batched model as an :class:`lca.Oracle` (a picklable :class:`ModelOracle`).

    The model is any object with ``predict``, ``predict_proba`` or
    ``decision_function`` (scikit-learn style), or a plain function of a 2-D
    array; it is called once per batch of points, on the encoder's decoded
    feature vectors.

    Output mapping to ``±1`` (always explicit):

    * labels (``method='predict'``): ``positive`` is the class mapped to
      ``+1``; every other class maps to ``-1``. Labels may be ints, bools,
      floats, strings, ``(m,)`` or ``(m, 1)``. A model with ``classes_`` may
      only return those classes; one without must return ``0/1`` or ``±1``
      labels. Wrapping a 0/1 classifier is ``from_estimator(model, positive=1)``.
    * scores (``method='decision_function'`` or ``'predict_proba'``): ``+1``
      when the score is ``>= threshold``. A 1-D (or ``(m, 1)``) output is the
      score; with several columns the column of class ``positive`` (by
      ``classes_``; an int column index for models without it) is used.

    ``method=None`` picks ``'predict'`` when no ``threshold`` is given, else
    the model's one scoring method (both present is ambiguous and raises);
    ``repr`` says which and that it was picked automatically. For a plain
    function, ``method`` only says what its output means.

    Args:
        model: the fitted model (or batched function).
        encoder: a *fitted* encoder (:class:`QuantileEncoder`,
            :class:`BinaryEncoder`); ``None`` means the model takes the bits
            as 0/1 features directly (``+1 -> 0``, ``-1 -> 1``), with
            ``n`` from ``model.n_features_in_`` or the ``n`` argument and
            names from ``model.feature_names_in_`` when present.
        positive: the class mapped to ``+1`` (labels), or whose score column
            is thresholded.
        method: ``'predict'``, ``'predict_proba'``, ``'decision_function'``
            or ``None`` (automatic).
        threshold: the score cut for scoring methods.
        n: number of 0/1 features when ``encoder`` is ``None`` and the model
            has no ``n_features_in_``; otherwise optional and checked.

    Raises:
        TypeError: wrong argument types, an unfitted encoder, a model that
            is neither callable nor has a known method.
        ValueError: an ambiguous or inconsistent mapping (e.g. ``positive``
            not among ``classes_``, a multi-class model without ``positive``,
            ``threshold`` with ``predict``), or sizes that disagree.
    """
    owner = "lca.models.from_estimator"
    method, auto = _pick_method(model, method, threshold, owner)
    classes = _classes(model)
    name = getattr(model, "__name__", None) or type(model).__name__
    if threshold is not None:
        threshold = check_real(owner, "threshold", threshold, -math.inf, math.inf)
    elif method != "predict":
        raise ValueError(f"{owner}: method={method!r} gives scores; pass threshold= "
                         "(score >= threshold maps to +1).")
    if method == "predict" and threshold is not None:
        raise ValueError(f"{owner}: threshold= applies to scores, not to predict's "
                         "labels; pass method='decision_function' or 'predict_proba', "
                         "or drop threshold.")
    column = None
    if method == "predict":
        if positive is None:
            detail = (f" (its classes are {classes.tolist()})" if classes is not None else "")
            raise ValueError(f"{owner}: pass positive=, the class of {name}{detail} that "
                             "maps to +1 (every other class maps to -1).")
        if classes is not None and not _among(positive, classes):
            raise ValueError(f"{owner}: positive={positive!r} is not one of the model's "
                             f"classes {classes.tolist()}.")
        if classes is None and not (isinstance(positive, (Real, np.number, bool))
                                    and positive in (0, 1, -1)):
            raise ValueError(f"{owner}: model {name} has no classes_, so its labels must "
                             "be 0/1 or ±1 and positive= one of them. "
                             f"Got positive={positive!r}.")
    elif positive is not None:
        column = _column(owner, name, positive, classes)
    elif classes is not None and classes.size > 2:
        raise ValueError(f"{owner}: {name} has {classes.size} classes "
                         f"{classes.tolist()}; pass positive= to choose the score column.")
    elif method == "predict_proba" and classes is not None:
        raise ValueError(f"{owner}: pass positive= (one of {classes.tolist()}) to choose "
                         "which class's probability is thresholded.")
    if method == "decision_function" and classes is not None and classes.size == 2 and \
            column == 0:
        raise ValueError(f"{owner}: the decision_function of a binary model scores its "
                         f"second class {classes.tolist()[1]!r}; use "
                         f"positive={classes.tolist()[1]!r} (or "
                         "None) and a threshold on that score.")
    if method == "decision_function" and classes is not None and classes.size == 2:
        column = None  # a binary model's decision_function has one column
    encoder = _encoder_for(owner, model, encoder, n)
    width = getattr(model, "n_features_in_", None)
    if width is not None and int(width) != encoder.n_features_in_:
        raise ValueError(f"{owner}: model {name} takes {int(width)} features but the "
                         f"encoder produces {encoder.n_features_in_}.")
    return ModelOracle(model, encoder, method, auto, positive, threshold, classes, column,
                       name)


def _numeric(array: np.ndarray) -> bool:
    return array.dtype == np.bool_ or np.issubdtype(array.dtype, np.number)


def _among(value: Any, classes: np.ndarray) -> bool:
    # Python equality, so that 1 == 1.0 == True and a string never equals a number.
    return any(value == known for known in classes.tolist())


def _column(owner: str, name: str, positive: Any, classes: np.ndarray | None) -> int:
    if classes is not None:
        where = [i for i, known in enumerate(classes.tolist()) if known == positive]
        if len(where) != 1:
            raise ValueError(f"{owner}: positive={positive!r} is not one of the model's "
                             f"classes {classes.tolist()}.")
        return where[0]
    if isinstance(positive, bool) or not isinstance(positive, Integral) or positive < 0:
        raise ValueError(f"{owner}: model {name} has no classes_, so positive= must be "
                         f"the int column index of the score to use. Got {positive!r}.")
    return int(positive)


def _encoder_for(owner: str, model: Any, encoder: Any, n: Any) -> _Encoder:
    if encoder is None:
        width = getattr(model, "n_features_in_", None)
        if n is None and width is None:
            raise ValueError(f"{owner}: the model has no n_features_in_; pass n=, the "
                             "number of 0/1 features it takes.")
        n = check_int(owner, "n", n if n is not None else int(width), 1)
        names = getattr(model, "feature_names_in_", None)
        names = None if names is None else [str(name) for name in names]
        return BinaryEncoder(names)._fit_width(n, owner)
    if not isinstance(encoder, _Encoder):
        raise TypeError(f"The 'encoder' parameter of {owner} must be a fitted "
                        "lca.models encoder (QuantileEncoder or BinaryEncoder) or None. "
                        f"Got {type(encoder).__name__} instead.")
    if not hasattr(encoder, "table_"):
        raise TypeError(f"The 'encoder' parameter of {owner} must be fitted: call "
                        f"{type(encoder).__name__}(...).fit(X) first.")
    if n is not None and check_int(owner, "n", n, 1) != encoder.n_bits:
        raise ValueError(f"{owner}: n={n} disagrees with the encoder's n_bits="
                         f"{encoder.n_bits}.")
    return encoder
