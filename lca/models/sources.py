"""Where a surrogate's answers come from: one tree source, chosen once.

:class:`lca.models.Surrogate` holds exactly one :class:`TreeSource` in
``tree_``, picked the way scikit-learn's ``fit`` picks a builder: ``fit``
makes a :class:`ProductTree` (the reconstructor under a product encoder) or
a :class:`lca.models.rows.RowsTree` (data mode), and ``from_json`` a
:class:`SavedTree`. Everything after reads the source: it answers points,
traces one point's path, materializes the readable tree, counts the model
queries spent on the tree and names its builder; what fidelity measures
differs by source too, so the source answers it: its sample of the product
distribution, and the yardstick (a plain tree on the fitted rows, which only
a rows tree keeps). The product source's configuration, a surrogate's
``params=`` made into :class:`lca.Params`, is here too (:func:`product_params`).
A source is safe to share between threads: what it builds lazily, it builds
under a lock, so every thread sees the same tree.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from lca import derive
from lca.decisions import LeafDecision, Split
from lca.derive import Path
from lca.export import ReconstructedTree
from lca.models.oracle import ClassLabels, ModelLabels, ModelOracle
from lca.params import Params
from lca.reconstruct import Reconstructor

__all__ = ["FIDELITY_PURPOSE", "ProductTree", "SavedTree", "Trace", "TreeSource", "cut",
           "product_params"]

# What fidelity's sample of the product distribution is derived under.
FIDELITY_PURPOSE = "surrogate-fidelity"


@dataclasses.dataclass(frozen=True)
class Trace:
    """One point's path through the tree: its steps, their conditions on the point's
    side, and the leaf it reaches."""

    path: Path
    conditions: tuple[str, ...]
    leaf: LeafDecision


class TreeSource(Protocol):
    """What a surrogate reads its tree from (see the module docstring)."""

    builder: str
    """What decides the nodes: ``"reconstructor"`` (product mode) or ``"rows"`` (data mode)."""

    def answers(self, points: np.ndarray) -> np.ndarray:
        """The tree's label of each ``±1`` point (a multi-class tree: its class index)."""

    def trace(self, z: np.ndarray) -> Trace:
        """The path of one ``±1`` point, decided as needed."""

    def tree(self, depth: int | None = None, progress: bool = False) -> ReconstructedTree:
        """The tree decided down to ``depth`` (``None``: whole), kept once whole."""

    @property
    def queries(self) -> int | None:
        """Model queries spent deciding the tree so far (``None``: not recorded)."""

    def leaf_rows(self, path: Path) -> Any:
        """A data-mode leaf's fitted rows (:class:`lca.models.rows.LeafRows`), else ``None``."""

    def product_sample(self, oracle: ModelLabels | ClassLabels,
                       samples: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The tree's and the model's answers on ``samples`` points of the product
        distribution (purpose :data:`FIDELITY_PURPOSE`), or ``None`` when there is nothing
        to draw them from (a data-mode tree read from JSON)."""

    def yardstick(self, X: Any, labels: np.ndarray) -> float | None:
        """The agreement on rows ``X`` (the model's ``labels`` of them) of a plain
        scikit-learn tree of the same depth fitted on the model's labels of the fitted
        rows; ``None`` for a source that keeps no rows (product mode, a tree read back)."""


def cut(tree: ReconstructedTree, depth: int) -> ReconstructedTree:
    """The top ``depth`` levels of a tree (nodes below are unexplored), as materialize gives."""
    decisions = {p: d for p, d in tree.decisions.items() if len(p) <= depth}
    conditions = {p: c for p, c in tree.conditions.items() if len(p) <= depth}
    used = {d.variable for d in decisions.values() if isinstance(d, Split)}
    features = {v: name for v, name in tree.features.items() if v in used}
    return dataclasses.replace(tree, decisions=decisions, conditions=conditions,
                               features=features)


class ProductTree:
    """Product mode: ``T_seed`` of :class:`lca.Reconstructor` over the model's oracle."""

    builder = "reconstructor"

    def __init__(self, reconstructor: Reconstructor, seed: int) -> None:
        self.reconstructor = reconstructor
        self.seed = seed
        self._whole: ReconstructedTree | None = None
        self._lock = threading.Lock()

    @property
    def params(self) -> Params:
        return self.reconstructor.params

    def answers(self, points: np.ndarray) -> np.ndarray:
        whole = self._whole
        if whole is not None:
            return whole.query(points)
        return self.reconstructor.answer_many(points, self.seed)

    def trace(self, z: np.ndarray) -> Trace:
        whole = self._whole
        if whole is not None:
            path, _, conditions, leaf = whole.trace(z)
            return Trace(path, conditions, leaf)
        explained = self.reconstructor.explain(z, self.seed)
        return Trace(explained.path, explained.conditions, explained.leaf)

    def tree(self, depth: int | None = None, progress: bool = False) -> ReconstructedTree:
        with self._lock:
            if self._whole is not None:
                return self._whole if depth is None else cut(self._whole, depth)
            longest = self.params.path_length
            levels = longest if depth is None else min(depth, longest)
            tree = self.reconstructor.materialize(
                self.seed, depth, progress=progress,
                max_decisions=max(1 << 16, (1 << (levels + 1)) - 1))
            if depth is None or tree.complete:
                self._whole = tree
            return tree

    @property
    def queries(self) -> int:
        return self.reconstructor.stats.queries

    def leaf_rows(self, path: Path) -> None:
        return None

    def product_sample(self, oracle: ModelLabels | ClassLabels,
                       samples: int) -> tuple[np.ndarray, np.ndarray]:
        return _product_sample(self, self.seed, oracle, samples)

    def yardstick(self, X: Any, labels: np.ndarray) -> None:
        return None

    def __getstate__(self) -> dict[str, Any]:
        return {"reconstructor": self.reconstructor, "seed": self.seed, "whole": self._whole}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["reconstructor"], state["seed"])  # type: ignore[misc]
        self._whole = state["whole"]


def product_params(owner: str, given: Params | Mapping[str, Any] | None, n: int,
                   depth: int) -> Params:
    """The reconstructor's :class:`lca.Params` from a surrogate's ``params=``: ``None`` for
    ``Params.efficient(n, depth=depth)``, a mapping of its arguments, or a full ``Params``
    of the encoder's ``n`` bits (its own depth is used)."""
    if given is None:
        return Params.efficient(n, depth=depth)
    if isinstance(given, Params):
        if given.n != n:
            raise ValueError(f"The 'params' parameter of {owner} has n={given.n}, but "
                             f"the encoder makes {n} bits of these data; pass a mapping "
                             "of Params.efficient arguments (e.g. {'pairs': 128}) to "
                             "have n filled in.")
        return given
    if not isinstance(given, Mapping):
        raise TypeError(f"The 'params' parameter of {owner} must be None, an lca.Params "
                        "or a mapping of Params.efficient arguments. Got "
                        f"{type(given).__name__} instead.")
    try:
        return Params.efficient(n, **{"depth": depth, **given})
    except TypeError as error:
        raise TypeError(f"The 'params' parameter of {owner} must hold arguments of "
                        f"lca.Params.efficient. Got {dict(given)!r} ({error}).") from error


class SavedTree:
    """A whole tree read back from a saved surrogate: nothing left to decide.

    ``builder`` and ``queries`` are what the document recorded of the source
    that built it (``queries`` is ``None`` for documents of format 2 and
    earlier, which did not record it); ``rows`` the data-mode leaves' fitted
    rows by path.
    """

    def __init__(self, tree: ReconstructedTree, builder: str, queries: int | None,
                 rows: dict[Path, Any] | None = None) -> None:
        self.whole = tree
        self.builder = builder
        self._queries = queries
        self._rows = rows

    def answers(self, points: np.ndarray) -> np.ndarray:
        return self.whole.query(points)

    def trace(self, z: np.ndarray) -> Trace:
        path, _, conditions, leaf = self.whole.trace(z)
        return Trace(path, conditions, leaf)

    def tree(self, depth: int | None = None, progress: bool = False) -> ReconstructedTree:
        return self.whole if depth is None else cut(self.whole, depth)

    @property
    def queries(self) -> int | None:
        return self._queries

    def leaf_rows(self, path: Path) -> Any:
        return None if self._rows is None else self._rows[path]

    def product_sample(self, oracle: ModelLabels | ClassLabels,
                       samples: int) -> tuple[np.ndarray, np.ndarray] | None:
        if self.builder != "reconstructor":  # the fitted rows were not saved
            return None
        return _product_sample(self, self.whole.seed, oracle, samples)

    def yardstick(self, X: Any, labels: np.ndarray) -> None:
        return None


def _product_sample(source: TreeSource, seed: int, oracle: ModelLabels | ClassLabels,
                    samples: int) -> tuple[np.ndarray, np.ndarray]:
    """A product tree's and its model's answers on ``samples`` points derived from the seed."""
    assert isinstance(oracle, ModelOracle), "a product tree's model answers points"
    points = derive.sample_points(seed, FIDELITY_PURPOSE, oracle.n, samples)
    return source.answers(points), oracle.query(points)
