"""Fitted encoders to JSON-ready dictionaries and back, exactly.

Floats go through Python's ``repr`` (what :mod:`json` writes), so every cut,
representative and mass reads back bit for bit; categories are JSON numbers
or strings.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lca.models._data import plain
from lca.models.encoders import BinaryEncoder, QuantileEncoder, _Encoder

__all__: list[str] = []


def encoder_state(encoder: _Encoder) -> dict[str, Any]:
    """Everything a fitted encoder needs to decode, encode and describe."""
    state: dict[str, Any] = {
        "kind": type(encoder).__name__,
        "bits": encoder.bits,
        "feature_names": list(encoder.feature_names),
        "columns": None if encoder.columns_ is None else [plain(c) for c in encoder.columns_],
        "categorical_dtypes": {str(j): {"categories": [plain(c) for c in dtype.categories],
                                        "ordered": bool(dtype.ordered)}
                               for j, dtype in encoder.categorical_dtypes_.items()},
    }
    if isinstance(encoder, QuantileEncoder):
        state.update(
            table=encoder.table_.tolist(),
            bin_mass=encoder.bin_mass_.tolist(),
            thresholds={str(j): cuts.tolist() for j, cuts in encoder.thresholds_.items()},
            categories={str(j): [plain(v) for v in values]
                        for j, values in encoder.categories_.items()},
            home_bin={str(j): homes.tolist() for j, homes in encoder.home_bin_.items()},
            category_labels={str(j): [[code, label] for code, label in labels.items()]
                             for j, labels in encoder.category_labels_.items()},
        )
    return state


def encoder_from_state(state: dict[str, Any]) -> _Encoder:
    """The encoder :func:`encoder_state` described."""
    kind = state.get("kind")
    names = state["feature_names"]
    if kind == "BinaryEncoder":
        encoder: _Encoder = BinaryEncoder.of_width("encoder_from_state", len(names), names)
    elif kind == "QuantileEncoder":
        encoder = QuantileEncoder(bits=state["bits"], feature_names=names)
        encoder.table_ = np.array(state["table"], dtype=np.float64)
        encoder.bin_mass_ = np.array(state["bin_mass"], dtype=np.float64)
        encoder.thresholds_ = {int(j): np.array(c, dtype=np.float64)
                               for j, c in state["thresholds"].items()}
        encoder.categories_ = {int(j): _category_array(values)
                               for j, values in state["categories"].items()}
        encoder.home_bin_ = {int(j): np.array(h, dtype=np.intp)
                             for j, h in state["home_bin"].items()}
        encoder.category_labels_ = {int(j): {code: label for code, label in pairs}
                                    for j, pairs in state["category_labels"].items()}
        encoder.categorical_ = frozenset(encoder.categories_)
        encoder.categorical = sorted(encoder.categorical_)
        encoder.feature_names = tuple(names)
        encoder.n_features_in_ = len(names)
    else:
        raise ValueError(f"unknown encoder kind {kind!r}; expected 'BinaryEncoder' or "
                         "'QuantileEncoder'.")
    columns = state.get("columns")
    encoder.columns_ = None if columns is None else tuple(columns)
    encoder.categorical_dtypes_ = {}
    if state.get("categorical_dtypes"):
        from lca.models._data import pandas

        pd = pandas("restoring a pandas categorical column")
        encoder.categorical_dtypes_ = {
            int(j): pd.CategoricalDtype(spec["categories"], ordered=spec["ordered"])
            for j, spec in state["categorical_dtypes"].items()}
    return encoder



def _category_array(values: list[Any]) -> np.ndarray:
    # Numbers were fitted as float64 codes; anything else (strings) as objects.
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.float64)
    return np.array(values, dtype=object)
