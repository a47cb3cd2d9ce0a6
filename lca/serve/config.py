"""What a replica serves: the oracle's source, the parameters and the limits.

:class:`ServeSettings` is all a worker process needs to build its replica;
it travels to every worker as JSON (:meth:`ServeSettings.to_json`), so the
workers of one ``lca serve``, and every other replica started with the same
options, build the same tree ``T_seed`` for every seed.

The oracle comes from one of :data:`SOURCES`, named like the command-line
option that gives it: ``--oracle MODULE:NAME`` (an oracle, reconstructed
lazily, :func:`oracle_from_import_path`) or ``--model FILE`` (a saved
:class:`lca.models.Surrogate`, answered from its saved tree by
:mod:`lca.serve.saved`). The command and its worker processes import
``MODULE`` with the current directory on the import path, as ``python -m``
does (:func:`search_current_directory`).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import os
import sys
from dataclasses import dataclass
from typing import Any

from lca._cli_options import MODES, PAPER_LEAF_SAMPLES, PAPER_NOISE_RATE, PAPER_SCORE_SAMPLES
from lca._validate import check_int, check_real
from lca.oracle import Oracle, oracle_n
from lca.params import Params, checked

__all__ = ["MODES", "SOURCES", "ServeSettings", "oracle_from_import_path",
           "search_current_directory"]

SOURCES = ("oracle", "model")
"""Where a replica's oracle comes from, named like the option that gives it."""


def search_current_directory() -> str | None:
    """Put the current directory first on ``sys.path``, as ``python -m`` does; return it.

    The ``lca`` script's own directory, not the current one, starts its
    ``sys.path``, so without this ``--oracle mymodule:factory`` would not find
    ``./mymodule.py`` where ``python -m lca serve`` does. Nothing changes
    when the directory is searched already, and, as with ``python -m``, it is
    not added under ``-P`` or ``PYTHONSAFEPATH`` (``None`` is returned then,
    and when the directory no longer exists).
    """
    try:
        here = os.getcwd()
    except OSError:
        return None
    real = os.path.realpath(here)
    if any(os.path.realpath(entry or os.curdir) == real for entry in sys.path):
        return here
    if sys.flags.safe_path:
        return None
    sys.path.insert(0, here)
    return here


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
    oracle_n(target)
    return target


@dataclass(frozen=True)
class ServeSettings:
    """Everything one ``lca serve`` replica is started with (validated here).

    Attributes:
        source, spec: the oracle: ``spec`` is ``MODULE:NAME`` for ``"oracle"``,
            a saved Surrogate's file for ``"model"`` (:data:`SOURCES`).
        mode: ``"efficient"`` or ``"paper"`` (:data:`MODES`); a saved model
            (``source="model"``) brings its own parameters and ignores it.
        depth: the tree depth (a cap in efficient mode); ignored likewise.
        lookahead: binary-search steps asked per oracle call in efficient
            mode (:attr:`lca.Params.lookahead`: the same tree in fewer calls
            and more queries); more than 1 only with ``mode="efficient"``
            and an oracle.
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
    lookahead: int = 1
    cache_size: int = 1 << 16
    max_points: int = 4096
    max_body_bytes: int = 16 << 20
    request_timeout: float = 30.0
    batch_wait: float = 0.0

    def __post_init__(self) -> None:
        owner = "ServeSettings"
        if self.source not in SOURCES:
            raise ValueError(f"The 'source' parameter of {owner} must be one of "
                             f"{SOURCES}. Got {self.source!r} instead.")
        if not isinstance(self.spec, str):
            raise TypeError(f"The 'spec' parameter of {owner} must be a str. "
                            f"Got {self.spec!r} instead.")
        if self.mode not in MODES:
            raise ValueError(f"The 'mode' parameter of {owner} must be one of {MODES}. "
                             f"Got {self.mode!r} instead.")
        check_int(owner, "depth", self.depth, 0)
        checked(owner, "lookahead", self.lookahead)
        if self.lookahead != 1 and (self.mode != "efficient" or self.source != "oracle"):
            raise ValueError(f"The 'lookahead' parameter of {owner} batches the efficient "
                             "mode's binary search: it needs mode 'efficient' and an oracle. "
                             f"Got lookahead={self.lookahead} with mode {self.mode!r} and "
                             f"source {self.source!r}.")
        check_int(owner, "cache_size", self.cache_size, 1)
        check_int(owner, "max_points", self.max_points, 1)
        check_int(owner, "max_body_bytes", self.max_body_bytes, 1)
        check_real(owner, "request_timeout", self.request_timeout, 0.0, math.inf)
        check_real(owner, "batch_wait", self.batch_wait, 0.0, 1.0, open_low=False,
                   open_high=False)

    def params(self, n: int) -> Params:
        """The parameters of the served tree for an oracle on ``n`` variables."""
        if self.mode == "efficient":
            return Params.efficient(n, depth=self.depth, lookahead=self.lookahead)
        return Params.practical(n=n, depth=self.depth, noise_rate=PAPER_NOISE_RATE,
                                score_samples=PAPER_SCORE_SAMPLES,
                                leaf_samples=PAPER_LEAF_SAMPLES)

    def load_oracle(self) -> Oracle:
        """The oracle ``--oracle`` names, imported or built now (a saved model's
        oracle comes with its tree, :func:`lca.serve.saved.load_saved`)."""
        if self.source != "oracle":
            raise ValueError(f"ServeSettings.load_oracle: source {self.source!r} brings its "
                             "own tree; load it with lca.serve.saved.load_saved")
        return oracle_from_import_path(self.spec)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ServeSettings:
        return cls(**json.loads(text))
