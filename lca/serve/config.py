"""What a replica serves: the oracle's source, the parameters and the limits.

:class:`ServeSettings` is all a worker process needs to build its replica;
it travels to every worker as JSON (:meth:`ServeSettings.to_json`), so the
workers of one ``lca serve``, and every other replica started with the same
options, build the same tree ``T_seed`` for every seed.

Oracle sources are one function each in :data:`ORACLE_SOURCES`, keyed by
the command-line option that names them: ``--oracle MODULE:NAME`` (an
oracle, reconstructed lazily) and ``--model FILE`` (a saved
:class:`lca.models.Surrogate`, answered from its saved tree,
:mod:`lca.serve.saved`).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lca.oracle import Oracle, _oracle_n
from lca.params import Params, check_int, check_real

__all__ = ["MODES", "ORACLE_SOURCES", "ServeSettings", "load_oracle", "oracle_from_import_path"]

MODES = ("efficient", "paper")
"""``efficient``: :meth:`Params.efficient`; ``paper``: the paper's estimator,
:meth:`Params.practical` with ``lca demo --mode paper``'s counts."""

# The paper mode's estimator settings: those of ``lca demo --mode paper``.
PAPER_NOISE_RATE = 0.1
PAPER_SCORE_SAMPLES = 1000
PAPER_LEAF_SAMPLES = 500


def oracle_from_import_path(spec: str) -> Oracle:
    """The oracle named by ``"MODULE:NAME"``: an :class:`lca.Oracle`, or a
    zero-argument callable returning one (``NAME`` may be dotted, ``a.b``).

    Raises ``ValueError`` for a malformed spec, ``ImportError`` or
    ``AttributeError`` when the name does not resolve, ``TypeError`` when it
    is neither an oracle nor a callable that returns one.
    """
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"The 'oracle' parameter of lca serve must be MODULE:NAME, e.g. "
                         f"'mypackage.oracles:make_oracle'. Got {spec!r} instead.")
    target: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    if not isinstance(target, Oracle):
        if not callable(target):
            raise TypeError(f"{spec} must be an lca.Oracle or a zero-argument callable "
                            f"returning one; got {type(target).__name__}")
        made = target()
        if not isinstance(made, Oracle):
            raise TypeError(f"{spec}() must return an lca.Oracle; got {type(made).__name__}")
        target = made
    _oracle_n(target)
    return target


def oracle_from_saved_surrogate(path: str) -> Oracle:
    """The saved Surrogate at ``path`` as an oracle (its tree; :mod:`lca.serve.saved`)."""
    from lca.serve.saved import load_saved

    return load_saved(path)[1]


ORACLE_SOURCES: dict[str, Callable[[str], Oracle]] = {"oracle": oracle_from_import_path,
                                                      "model": oracle_from_saved_surrogate}
"""Where a replica's oracle comes from: option name -> loader of the option's value."""


def load_oracle(source: str, spec: str) -> Oracle:
    """The oracle of ``source`` (a key of :data:`ORACLE_SOURCES`) named by ``spec``."""
    if source not in ORACLE_SOURCES:
        raise ValueError(f"The 'source' parameter of load_oracle must be one of "
                         f"{sorted(ORACLE_SOURCES)}. Got {source!r} instead.")
    return ORACLE_SOURCES[source](spec)


@dataclass(frozen=True)
class ServeSettings:
    """Everything one ``lca serve`` replica is started with (validated here).

    Attributes:
        source, spec: the oracle, ``load_oracle(source, spec)``.
        mode: ``"efficient"`` or ``"paper"`` (:data:`MODES`); a saved model
            (``source="model"``) brings its own parameters and ignores it.
        depth: the tree depth (a cap in efficient mode); ignored likewise.
        cache_size: most decisions each worker keeps (:class:`lca.Reconstructor`).
        max_points: most points per ``/answer`` request; a micro-batch holds at
            most this many points too (one request larger than none).
        max_body_bytes: largest request body read.
        request_timeout: seconds a request may take, from the start of its
            body to its answer; past it the reply is a 503 (408 while the body
            is still arriving).
        batch_wait: seconds the answering thread waits, once free, for more
            requests to join a batch; ``0`` batches only what queued meanwhile.
    """

    source: str
    spec: str
    mode: str = "efficient"
    depth: int = 12
    cache_size: int = 1 << 16
    max_points: int = 4096
    max_body_bytes: int = 16 << 20
    request_timeout: float = 30.0
    batch_wait: float = 0.0

    def __post_init__(self) -> None:
        owner = "ServeSettings"
        if self.source not in ORACLE_SOURCES:
            raise ValueError(f"The 'source' parameter of {owner} must be one of "
                             f"{sorted(ORACLE_SOURCES)}. Got {self.source!r} instead.")
        if not isinstance(self.spec, str):
            raise TypeError(f"The 'spec' parameter of {owner} must be a str. "
                            f"Got {self.spec!r} instead.")
        if self.mode not in MODES:
            raise ValueError(f"The 'mode' parameter of {owner} must be one of {MODES}. "
                             f"Got {self.mode!r} instead.")
        check_int(owner, "depth", self.depth, 0)
        check_int(owner, "cache_size", self.cache_size, 1)
        check_int(owner, "max_points", self.max_points, 1)
        check_int(owner, "max_body_bytes", self.max_body_bytes, 1)
        check_real(owner, "request_timeout", self.request_timeout, 0.0, math.inf)
        check_real(owner, "batch_wait", self.batch_wait, 0.0, 1.0, open_low=False,
                   open_high=False)

    def params(self, n: int) -> Params:
        """The parameters of the served tree for an oracle on ``n`` variables."""
        if self.mode == "efficient":
            return Params.efficient(n, depth=self.depth)
        return Params.practical(n=n, depth=self.depth, noise_rate=PAPER_NOISE_RATE,
                                score_samples=PAPER_SCORE_SAMPLES,
                                leaf_samples=PAPER_LEAF_SAMPLES)

    def load_oracle(self) -> Oracle:
        """The oracle these settings name (imported or built now)."""
        return load_oracle(self.source, self.spec)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ServeSettings:
        return cls(**json.loads(text))
