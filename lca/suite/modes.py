"""Reconstruction modes the suite can measure: one registry of named factories.

A mode is a factory ``(n, *, config) -> Params`` registered in :data:`MODES`
with the preset it uses and a check that this lca has it. Adding a mode is one
entry in :data:`MODES`; ``lca bench --mode a,b,...`` runs any of them side by
side on the same cases, evaluation points and peer.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lca.params import Params
from lca.suite.cases import SuiteConfig

ParamsFactory = Callable[[int], Params]
"""Builds the reconstruction :class:`~lca.params.Params` for ``n`` variables."""


def fixed_params(n: int, *, config: SuiteConfig) -> Params:
    """The fixed-q practical preset of ``config`` at ``n`` variables (the paper's estimator)."""
    return Params.practical(n=n, depth=config.depth_for(n), noise_rate=config.noise_rate,
                            score_samples=config.score_samples,
                            leaf_samples=config.leaf_samples)


def adaptive_available() -> bool:
    """Does this lca have adaptive mode (a ``Params`` field named ``adaptive``)?"""
    return "adaptive" in getattr(Params, "__dataclass_fields__", {})


def adaptive_params(n: int, *, config: SuiteConfig) -> Params:
    """Adaptive mode with the fixed preset's counts as caps."""
    return dataclasses.replace(fixed_params(n, config=config), adaptive=True,
                               tau=config.adaptive_tau, eps=config.adaptive_eps,
                               delta=config.adaptive_delta)


def efficient_available() -> bool:
    """Does this lca have the efficient preset (``Params.efficient``)?"""
    return callable(getattr(Params, "efficient", None))


def efficient_params(n: int, *, config: SuiteConfig) -> Params:
    """The recommended efficient preset at the suite's depth cap."""
    return Params.efficient(n, depth=config.depth_for(n))


def _always() -> bool:
    return True


@dataclass(frozen=True)
class Mode:
    """A registered mode.

    Attributes:
        factory: ``(n, *, config) -> Params``; deterministic in its arguments.
        preset: the constructor it uses, named in the report's settings.
        available: whether this lca has the mode (checked before running it).
        missing: why it is unavailable, for messages.
    """

    factory: Callable[..., Params]
    preset: str
    available: Callable[[], bool] = _always
    missing: str = ""


MODES: dict[str, Mode] = {
    "fixed": Mode(fixed_params, "lca.Params.practical"),
    "adaptive": Mode(adaptive_params, "lca.Params.practical",
                     adaptive_available, "no 'adaptive' field on lca.Params"),
    "efficient": Mode(efficient_params, "lca.Params.efficient",
                      efficient_available, "no lca.Params.efficient"),
}
"""Every mode ``lca bench --mode`` accepts, in report order."""

DEFAULT_MODE = "efficient"
"""What ``lca bench`` measures without ``--mode``: the recommended preset."""

ALIASES: dict[str, tuple[str, ...]] = {"both": ("fixed", "adaptive")}
"""Shorthands for lists of modes (``both`` predates comma-separated lists)."""


def parse_modes(mode: str | Sequence[str], name: str = "mode") -> tuple[str, ...]:
    """Mode names of ``mode`` (a name, an alias or a comma-separated list), duplicates dropped.

    ``name`` is the option the error message blames (``"compare"`` for ``--compare``).
    """
    parts = [part.strip() for part in mode.split(",")] if isinstance(mode, str) else list(mode)
    names: list[str] = []
    for part in parts:
        for member in ALIASES.get(part, (part,)):
            if member not in MODES:
                known = ", ".join(repr(key) for key in (*MODES, *ALIASES))
                raise ValueError(f"The {name!r} parameter of lca bench must be a "
                                 f"comma-separated list of {known}. Got {mode!r} instead.")
            if member not in names:
                names.append(member)
    return tuple(names)


def mode_text(names: Sequence[str]) -> str:
    """The ``--mode`` value that selects ``names`` (aliases where one fits exactly)."""
    for alias, members in ALIASES.items():
        if tuple(names) == members:
            return alias
    return ",".join(names)


def resolve_modes(mode: str | Sequence[str],
                  config: SuiteConfig) -> tuple[dict[str, ParamsFactory], str]:
    """Factories bound to ``config`` for the modes of ``mode``, and a note.

    Requested modes this lca lacks are dropped and the note says so; if none
    is left, ValueError.
    """
    names = parse_modes(mode)
    missing = [name for name in names if not MODES[name].available()]
    kept = [name for name in names if name not in missing]
    label = mode if isinstance(mode, str) else mode_text(names)
    if not kept:
        reasons = "; ".join(f"no {name} mode ({MODES[name].missing})" for name in missing)
        raise ValueError(f"lca bench --mode {label}: this lca has {reasons}")
    note = ""
    if missing:
        lacks = ", ".join(f"no {name} mode ({MODES[name].missing})" for name in missing)
        ran = " and ".join(kept)
        note = (f"--mode {label}: this lca has {lacks}, so only {ran} "
                f"mode{'s' if len(kept) > 1 else ''} ran.")
    factories: dict[str, ParamsFactory] = {
        name: functools.partial(MODES[name].factory, config=config) for name in kept}
    return factories, note
