"""One interface for every estimator: its node step, its leaf step, its own bounds.

An estimator decides one node of ``T_seed`` at a time. It is registered under
the name :attr:`lca.Params.estimator` holds (``"score"``: the paper's
UnbiasedEstimator, :mod:`lca.estimate`; ``"search"``: the efficient mode,
:mod:`lca.search`), and supplies, next to the code that spends the queries:

* :meth:`Estimator.nodes` and :meth:`Estimator.leaves`: the decisions at a
  group of nodes as steps (:mod:`lca.engine`) returning one
  :class:`~lca.decisions.Decision` per node (an estimator may share work
  between them; by default each node runs its own :meth:`Estimator.node`
  or :meth:`Estimator.leaf` steps, in lockstep);
* :meth:`Estimator.max_node_queries` and :meth:`Estimator.max_leaf_queries`:
  proved worst cases of what those steps spend, which budgets rely on;
* :meth:`Estimator.validate` and :meth:`Estimator.describe` for
  :class:`lca.Params`.

The reconstructor knows no estimator by name; :class:`lca.Params` finds its
estimator with :func:`get`.
"""

from __future__ import annotations

import abc
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lca._validate import check_int
from lca.derive import Path
from lca.engine import CallCosts, Steps, together

if TYPE_CHECKING:  # lca.params imports this module to find its estimator
    from lca.params import Params

__all__ = ["Estimator", "Memo", "NodeContext", "get", "names", "register"]


class Memo:
    """Values an estimator can re-derive at will, kept least recently used first.

    Each value has an ``nbytes`` attribute (an array, or an object that
    reports its size); their sum never exceeds ``limit`` (a value larger
    than ``limit`` is not kept). Evicting an entry only costs the work of
    deriving it again: nothing that decides anything may live only here.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.nbytes = 0
        self._items: OrderedDict[Hashable, Any] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable) -> Any:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: Hashable, value: Any) -> None:
        old = self._items.pop(key, None)
        if old is not None:
            self.nbytes -= old.nbytes
        if value.nbytes > self.limit:
            return
        self._items[key] = value
        self.nbytes += value.nbytes
        while self.nbytes > self.limit:
            _, dropped = self._items.popitem(last=False)
            self.nbytes -= dropped.nbytes


@dataclass(frozen=True)
class NodeContext:
    """What a decision at node ``path`` of ``T_seed`` may use.

    ``lineage(k)`` returns what the reconstructor kept of the already decided
    ancestor ``path[:k]`` (``0 <= k < len(path)``) for this estimator: the
    value its :meth:`Estimator.node` returned as ``kept`` (see there).
    Ancestors are always decided before their descendants. ``memo`` holds
    re-derivable arrays shared by every decision of the reconstructor;
    ``costs`` what its oracle calls cost, where ``params.lookahead`` is
    ``"auto"`` (:class:`lca.engine.CallCosts`).
    """

    n: int
    seed: int
    path: Path
    params: Params
    lineage: Callable[[int], Any]
    memo: Memo
    costs: CallCosts | None = None


class Estimator(abc.ABC):
    """An estimator of node decisions (module docstring)."""

    name: str
    reads_lineage = False
    """Whether :meth:`node` and :meth:`leaf` read their ancestors through
    :attr:`NodeContext.lineage` (then ancestors must be decided first)."""

    @abc.abstractmethod
    def validate(self, params: Params) -> None:
        """Raise ``ValueError`` if ``params`` cannot drive this estimator."""

    def check_samples(self, owner: str, name: str, value: Any, n: int) -> int:
        """A sample count (``score_samples``, ``leaf_samples``) this estimator can run:
        an int ``>= 1`` by default."""
        return check_int(owner, name, value, 1)

    def node(self, context: NodeContext) -> Steps:
        """Steps deciding one internal node; they return ``(decision, kept)``.

        ``decision`` is a :class:`~lca.decisions.NodeDecision`, or a
        :class:`~lca.decisions.LeafDecision` where the node stops early;
        ``kept`` is what descendants will read through
        :attr:`NodeContext.lineage` (``None`` if nothing).
        """
        raise NotImplementedError

    def leaf(self, context: NodeContext) -> Steps:
        """Steps labelling one leaf at ``len(path) == params.path_length``; they
        return a :class:`~lca.decisions.LeafDecision`."""
        raise NotImplementedError

    def nodes(self, contexts: list[NodeContext]) -> Steps:
        """Steps deciding internal nodes together: a list of :meth:`node` results."""
        return (yield from together([self.node(context) for context in contexts]))

    def leaves(self, contexts: list[NodeContext]) -> Steps:
        """Steps labelling leaves together: a list of :meth:`leaf` results."""
        return (yield from together([self.leaf(context) for context in contexts]))

    @abc.abstractmethod
    def max_node_queries(self, params: Params) -> int:
        """Most queries :meth:`node` can spend, early leaf included (a proved bound)."""

    @abc.abstractmethod
    def max_leaf_queries(self, params: Params) -> int:
        """Most queries :meth:`leaf` can spend (a proved bound)."""

    @abc.abstractmethod
    def early_leaves(self, params: Params) -> bool:
        """Whether :meth:`node` may end as a leaf (then it may also spend
        :meth:`max_leaf_queries` more)."""

    def node_memory(self, params: Params) -> int:
        """Bytes of working memory one :meth:`node` may hold while it runs."""
        return 0

    @abc.abstractmethod
    def describe(self, params: Params) -> str:
        """A human-readable summary of ``params`` for this estimator."""


_REGISTRY: dict[str, Estimator] = {}


def register(estimator: Estimator) -> Estimator:
    """Make ``estimator`` available to :class:`lca.Params` under its name.

    A name is registered once (``ValueError`` if taken): ``Params.estimator``
    selects an estimator by its name alone, so a second one under the same
    name would silently change what every such ``Params`` runs.
    """
    existing = _REGISTRY.get(estimator.name)
    if existing is not None:
        raise ValueError(
            f"register needs an estimator whose name is not registered yet: "
            f"{estimator.name!r} is {type(existing).__module__}.{type(existing).__qualname__}."
            f" Got {type(estimator).__module__}.{type(estimator).__qualname__} named "
            f"{estimator.name!r}.")
    _REGISTRY[estimator.name] = estimator
    return estimator


def names() -> tuple[str, ...]:
    """Names of the registered estimators."""
    return tuple(_REGISTRY)


def get(name: str) -> Estimator:
    """The estimator registered as ``name`` (KeyError if none)."""
    return _REGISTRY[name]
