"""Trained models: distil them into readable trees, or wrap them as oracles.

* :class:`Surrogate` — a scikit-learn-style estimator: ``fit(X)`` on the
  rows a model works on (an array or a pandas DataFrame, no labels),
  ``predict`` in the model's own labels, ``explain(row)`` the row's rules,
  ``tree()``, ``fidelity()``, ``report()``, JSON with the encoder inside.
* :func:`from_estimator` — a model as an :class:`lca.Oracle`
  (:class:`ModelOracle`), for the reconstructor, the pool or Dask;
  :func:`from_classifier` — a multi-class model whose answer on a row is
  its class (:class:`ClassLabels`); :class:`Not` — the label "any class but
  ``c``" of a one-vs-rest surrogate.
* Encoders (:class:`QuantileEncoder`, :class:`BinaryEncoder`) — uniform
  ``±1`` bits to the model's input rows and data rows back to bits
  (:mod:`lca.models.encoders` says under which distribution the tree is
  accurate); :class:`ThresholdEncoder` — rows to the answers of threshold
  and category questions, the vocabulary of a surrogate grown from the
  rows themselves (``Surrogate(distribution="data")``, the default;
  :mod:`lca.models.rows`).
"""

from lca.models.encoders import BinaryEncoder, QuantileEncoder
from lca.models.oracle import (
    ClassLabels,
    ModelLabels,
    ModelOracle,
    Not,
    from_classifier,
    from_estimator,
)
from lca.models.quality import Agreement, Fidelity, LowFidelityWarning, OnRows, Rules
from lca.models.questions import UnseenValueWarning
from lca.models.surrogate import Surrogate
from lca.models.thresholds import ThresholdEncoder

__all__ = [
    "Agreement",
    "BinaryEncoder",
    "ClassLabels",
    "Fidelity",
    "LowFidelityWarning",
    "ModelLabels",
    "ModelOracle",
    "Not",
    "OnRows",
    "QuantileEncoder",
    "Rules",
    "Surrogate",
    "ThresholdEncoder",
    "UnseenValueWarning",
    "from_classifier",
    "from_estimator",
]
