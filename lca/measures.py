"""Depth version and other complexity measures (Theorem "reconstruct-depth", Table 1).

If ``f`` is ``opt_d``-close to some ``h`` whose complexity measure ``M(h)`` is
at most ``d`` (Fourier degree, approximate degree, R, Q, C, bs, s, or depth
itself), the reconstructor with the parameters below gives query access to a
tree ``T`` with ``dist(T, f) <= O(opt_d + eps)`` and ``M(T) <= D(T) <=
O(d^e / eps^2)``, ``e`` the row's exponent (the paper's Table 1, or sharper
where a cited relation allows: the quantum row uses 9 where Table 1 says 10).
With the default constants the proof gives ``dist(T, f) <= 22 opt_d + 11 eps``
when every decision meets Lemma "Robust version"'s conditions (docs/theory.md
§2).

How a row becomes parameters (the paper's "similar calculations", section
"Proof of Corollary reconstruct-degree"): the proof of Lemma "Structural
lemma" with ``log s`` replaced by the depth ``D(h)`` bounds the tree depth by
``O(D(h)^2 Inf(h) / eps^2)``, with noise rate ``p = eps / Inf(h)`` and score
accuracy ``tau = eps^3 / (D(h)^2 Inf(h))``. A row supplies
``D(h) <= c M(h)^k`` (the depth relation) and ``Inf(h) <= c M(h)^b`` (the
influence relation), so the tree depth is ``c_d d^(2k+b) / eps^2``. For
every row but one, ``2k + b`` is Table 1's exponent ``e``; for quantum query
complexity the cited ``Inf = O(Q)`` gives ``2k + b = 9 < e = 10``.
:data:`MEASURES` is the one table; ``docs/theory.md`` shows the same rows
(:func:`markdown_table` renders them) and says how each relation was checked.

Every measure in the table is at most the decision-tree depth of the
function, so ``M(T) <= params.path_length`` for the reconstructed tree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lca._validate import check_int, check_real
from lca.params import (
    Params,
    TheoryConstants,
    check_theory_overrides,
    finite,
    grid_rate,
    hoeffding_counts,
)

__all__ = [
    "STATUSES",
    "Measure",
    "MEASURES",
    "measure",
    "MeasurePlan",
    "plan_for_measure",
    "params_for_measure",
    "params_for_depth",
    "markdown_table",
]


STATUSES = ("paper", "cited", "literature", "unverified")
"""Values of :attr:`Measure.status`, from best to least checked."""


@dataclass(frozen=True)
class Measure:
    """One row of Table 1, with the relations that turn it into parameters.

    Attributes:
        name: key used by :func:`params_for_measure` (``"fourier_degree"``).
        symbol: the paper's notation (``"deg"``).
        title: the paper's row name.
        depth_exponent: ``k`` in ``D(h) <= c M(h)^k``.
        depth_relation: that relation in words, with its source.
        influence_exponent: ``b`` in ``Inf(h) <= c M(h)^b``; ``2k + b`` is
            the tree-depth exponent used (:attr:`exponent`).
        influence_relation: that relation in words, with its source.
        guarantee_exponent: ``e`` of Table 1, verbatim: ``M(g) <= O(d^e / eps^2)``
            (:attr:`exponent` is at most this).
        source: where the guarantee is stated in the paper.
        status: how far the two relations were checked (:data:`STATUSES`):
            ``"paper"`` — stated in the paper (or immediate from it);
            ``"cited"`` — both relations given with their precise bound and
            reference (theorem-level citation);
            ``"literature"`` — standard relations from the literature the
            paper cites (ABDKRT20 Table 1 and the works it summarises),
            recalled, not checked against the sources here;
            ``"unverified"`` — a relation needed to reproduce the paper's
            exponent that could not be confirmed as a known result.
        note: caveats, in one sentence or two.
    """

    name: str
    symbol: str
    title: str
    depth_exponent: int
    depth_relation: str
    influence_exponent: int
    influence_relation: str
    guarantee_exponent: int
    source: str
    status: str
    note: str = ""

    def __post_init__(self) -> None:
        assert self.status in STATUSES, self.status

    @property
    def naive_exponent(self) -> int:
        """``3k``: plugging ``D(h) <= d^k`` into Theorem "reconstruct-depth" directly."""
        return 3 * self.depth_exponent

    @property
    def exponent(self) -> int:
        """``2k + b``: the tree-depth exponent the theory preset uses."""
        return 2 * self.depth_exponent + self.influence_exponent

    @property
    def consistent(self) -> bool:
        """The exponent used is at most the paper's (equal except for the quantum row)."""
        return self.exponent <= self.guarantee_exponent


MEASURES: tuple[Measure, ...] = (
    Measure(
        "depth", "D", "Decision tree depth", 1,
        "D(h) <= d (the measure itself)", 1,
        "Inf(h) <= D(h) (total influence is at most the expected leaf depth)",
        3, 'Theorem "reconstruct-depth"', "paper",
        "Also the p = eps/d, tau = eps^3/d^3 analogue of Lemma \"Robust version\"."),
    Measure(
        "fourier_degree", "deg", "Fourier degree", 3,
        "D <= deg^3 (Fact \"depth vs degree\" [Mid04, Tal13])", 1,
        "Inf <= deg ([ODbook, Thm 37], stated in the paper)",
        7, 'Corollary "reconstruct-degree", Table 1', "paper",
        "Derived in the paper (D^2 Inf / eps^2 <= deg^7 / eps^2); the direct route gives d^9."),
    Measure(
        "approximate_degree", "adeg", "Approximate degree", 4,
        "D = O(adeg^4) (D <= bs deg [Mid04], bs <= 6 adeg^2 [Nisan-Szegedy 1994], "
        "deg = O(adeg^2) [ABDKRT20])", 1,
        "Inf = O(adeg): adeg_eps(f) >= (1/4)(1 - 3eps/(1+eps))^2 Inf(f) "
        "(Shi, IPL 75, 2000; arXiv quant-ph/9904107)",
        9, "Table 1", "cited",
        "Shi's bound at eps = 1/3 gives Inf <= 64 adeg."),
    Measure(
        "randomized_query", "R", "Randomized query complexity", 3,
        "D = O(R^3) (Nisan 1991; ABDKRT20 Table 1)", 1,
        "Inf <= s <= bs = O(R)",
        7, "Table 1", "literature", ""),
    Measure(
        "quantum_query", "Q", "Quantum query complexity", 4,
        "D = O(Q^4) (ABDKRT20, stated in its abstract)", 1,
        "Inf = O(Q): Q_eps(f) >= ((1 - 2 sqrt(eps))/2) Inf(f) (Shi, IPL 75, 2000), "
        "with eps reduced to a constant below 1/4",
        10, "Table 1", "cited",
        "Exponent 2k + b = 9, sharper than Table 1's 10 (valid but loose); the theory "
        "depth is c_d d^9 / eps^2."),
    Measure(
        "certificate", "C", "Certificate complexity", 2,
        "D <= C^2 (D <= C0 C1; ABDKRT20 Table 1)", 1,
        "Inf <= s <= C",
        5, "Table 1", "literature", ""),
    Measure(
        "block_sensitivity", "bs", "Block sensitivity", 3,
        "D <= bs^3 (D <= C bs and C <= s bs <= bs^2, Nisan 1991)", 2,
        "Inf <= deg <= s^2 <= bs^2 (Huang 2019)",
        8, "Table 1", "literature",
        "Inf <= s <= bs would give 7; the paper's 8 is valid but not the sharpest."),
    Measure(
        "sensitivity", "s", "Sensitivity", 6,
        "D <= deg^3 <= s^6 (Fact \"depth vs degree\" and Huang 2019: deg <= s^2)", 1,
        "Inf <= s",
        13, "Table 1", "literature", ""),
)
"""The measure table; ``docs/theory.md`` shows the same rows."""

_BY_NAME = {row.name: row for row in MEASURES}
_ALIASES = {row.symbol.lower(): row.name for row in MEASURES} | {
    "degree": "fourier_degree", "approx_degree": "approximate_degree",
    "randomized": "randomized_query", "quantum": "quantum_query",
    "certificate_complexity": "certificate",
}


def measure(name: str) -> Measure:
    """The :class:`Measure` row called ``name`` (or its symbol, e.g. ``"deg"``)."""
    if not isinstance(name, str):
        raise TypeError(f"measure name must be a str; got {type(name).__name__}")
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in _BY_NAME:
        raise ValueError(f"unknown measure {name!r}; expected one of "
                         f"{', '.join(row.name for row in MEASURES)}")
    return _BY_NAME[key]


@dataclass(frozen=True)
class MeasurePlan:
    """A measure row resolved to numbers for one ``(d, eps, delta, n)``.

    Attributes:
        measure: the table row.
        d: the bound on the measure of ``h``.
        eps, delta: accuracy and failure probability.
        depth_bound: ``c d^k``, the bound on ``D(h)``.
        influence_bound: ``c d^b``, the bound on ``Inf(h)``.
        tree_depth_bound: ``c_d D(h)^2 Inf(h) / eps^2 = c_d c^3 d^(2k+b) / eps^2``
            (real; the theory preset's depth is its ceiling).
        params: the reconstructor parameters.
    """

    measure: Measure
    d: int
    eps: float
    delta: float
    depth_bound: float
    influence_bound: float
    tree_depth_bound: float
    params: Params

    def describe(self) -> str:
        """Human-readable summary: relations used, bounds and the parameters."""
        row = self.measure
        lines = [
            f"{row.title} {row.symbol}(h) <= {self.d} ({self.params.preset} preset)",
            f"  depth relation        {row.depth_relation}",
            f"  influence relation    {row.influence_relation}",
            f"  D(h) <= {self.depth_bound:g}, Inf(h) <= {self.influence_bound:g}",
            f"  guarantee             {row.symbol}(T) <= D(T) <= {self.params.path_length} "
            f"(Table 1: O(d^{row.guarantee_exponent}/eps^2), used O(d^{row.exponent}/eps^2); "
            f"c_d D^2 Inf / eps^2 = {self.tree_depth_bound:.4g})",
        ]
        if row.status != "paper":
            note = row.note or "see docs/theory.md"
            lines.append(f"  relations checked     {row.status}: {note}")
        return "\n".join(lines) + "\n" + self.params.describe()


def plan_for_measure(name: str, d: int, eps: float, delta: float, n: int, *,
                     preset: str = "theory",
                     constants: TheoryConstants = TheoryConstants(),
                     relation_constant: float = 1.0,
                     depth: int | None = None, noise_rate: float | None = None,
                     score_samples: int | None = None,
                     leaf_samples: int | None = None) -> MeasurePlan:
    """Resolve a Table 1 row to reconstructor parameters; deterministic.

    With ``D = relation_constant * d^k`` and ``I = relation_constant * d^b``
    (the row's depth and influence relations):

    ``"theory"`` (the analogue of :meth:`lca.Params.from_theory`):

    * depth ``ceil(c_d D^2 I / eps^2)`` (``= c_d d^(2k+b) / eps^2`` for relation
      constant 1);
    * noise rate ``p = min(1, c_p eps / I)``;
    * score accuracy ``tau = c_tau eps^3 / (D^2 I)``;
    * ``score_samples = ceil(8 / tau^2 ln(n 2^(depth+2) / delta))`` and
      ``leaf_samples = ceil(32 / eps^2 ln(2^(depth+2) / delta))``, the union
      bounds of :meth:`lca.Params.from_theory`.

    ``"practical"`` (each value may be overridden): depth ``ceil(D)`` (a tree
    that deep can compute ``h``, though the greedy score-based tree may need
    more levels to find it — the theory depth is far larger), the theory
    noise rate,
    ``score_samples = 1000`` (no accuracy claim) and
    ``leaf_samples = ceil(2 / eps^2 ln(2 L / delta))``, ``L = 2^min(depth, n)``,
    so every leaf with ``|E[f_leaf]| > eps`` is labelled by its sign w.p.
    ``>= 1 - delta``. It keeps determinism, consistency and the bound
    ``M(T) <= depth``; not the accuracy guarantee.

    The theory preset's guarantee (docs/theory.md §2, with the default
    :class:`~lca.params.TheoryConstants` ``c_d = 2, c_p = 1, c_tau = 1/2``):
    if ``f`` is ``opt_d``-close to such an ``h`` and every decision meets
    Lemma "Robust version"'s conditions, ``dist(T, f) <= 22 opt_d + 11 eps``.
    The ``eps^2`` holds for every ``opt_d``: the proof's Case-1 threshold
    ``eps_1 = sqrt(eps (eps + 2 opt_d))`` makes the level count
    ``2 D^2 Inf / eps^2``. Other constants keep the guarantee when
    ``c_d (c_p - c_tau) >= max(c_p, 1)``
    (:attr:`~lca.params.TheoryConstants.depth_proof_holds`, stricter than the
    size version's ``1/2``); ``describe()`` states it only then.
    """
    owner = "params_for_measure"
    row = measure(name)
    d = check_int(owner, "d", d, 1)
    eps = check_real(owner, "eps", eps, 0.0, 0.5)
    delta = check_real(owner, "delta", delta, 0.0, 1.0)
    n = check_int(owner, "n", n, 1)
    c = check_real(owner, "relation_constant", relation_constant, 0.0, math.inf)
    if not isinstance(constants, TheoryConstants):
        raise TypeError(f"The 'constants' parameter of {owner} must be a TheoryConstants. "
                        f"Got {constants!r} instead.")
    for attr in ("depth", "noise", "tau"):
        check_real(owner, f"constants.{attr}", getattr(constants, attr), 0.0, math.inf)
    depth_bound = finite(owner, f"the depth bound c d^{row.depth_exponent}",
                         lambda: c * d ** row.depth_exponent, d=d, relation_constant=c)
    influence_bound = finite(owner, f"the influence bound c d^{row.influence_exponent}",
                             lambda: c * d ** row.influence_exponent, d=d,
                             relation_constant=c)
    tree_depth = finite(owner, "the tree depth c_d D^2 I / eps^2",
                        lambda: constants.depth * depth_bound ** 2 * influence_bound
                        / eps ** 2, d=d, eps=eps, relation_constant=c,
                        constants=constants)
    noise = min(1.0, constants.noise * eps / influence_bound)
    if preset == "theory" or noise_rate is None:
        grid_rate(owner, "p = min(1, c_p eps / I)", noise, d=d, eps=eps,
                  relation_constant=c, constants=constants)
    if preset == "theory":
        check_theory_overrides(owner, depth=depth, noise_rate=noise_rate,
                               score_samples=score_samples, leaf_samples=leaf_samples)
        tree = math.ceil(tree_depth)
        tau = finite(owner, "tau = c_tau eps^3 / (D^2 I)",
                     lambda: constants.tau * eps ** 3 / (depth_bound ** 2 * influence_bound),
                     d=d, eps=eps, relation_constant=c, constants=constants)
        if tau == 0:
            raise ValueError(f"{owner}: tau = c_tau eps^3 / (D^2 I) underflows to 0 for "
                             f"d={d!r}, eps={eps!r}, relation_constant={c!r}, "
                             f"constants={constants!r}; change 'd', 'eps' or 'constants'")
        score_samples, leaf_samples = hoeffding_counts(n, tree, tau, eps, delta,
                                                       owner=owner)
        params = Params(n=n, depth=tree, noise_rate=noise,
                        score_samples=score_samples, leaf_samples=leaf_samples,
                        preset="theory", eps=eps, delta=delta, tau=tau,
                        constants=constants)
    elif preset == "practical":
        tree = math.ceil(depth_bound) if depth is None else check_int(owner, "depth", depth, 0)
        if leaf_samples is None:
            leaves = 2 ** min(tree, n)
            leaf_samples = math.ceil(finite(
                owner, "leaf_samples = 2 / eps^2 ln(2 L / delta)",
                lambda: 2 / eps ** 2 * math.log(2 * leaves / delta), eps=eps, d=d,
                depth=tree, delta=delta))
        params = Params.practical(
            n=n, depth=tree, noise_rate=noise if noise_rate is None else noise_rate,
            score_samples=1000 if score_samples is None else score_samples,
            leaf_samples=leaf_samples)
    else:
        raise ValueError(f"The 'preset' parameter of {owner} must be 'theory' or "
                         f"'practical'. Got {preset!r} instead.")
    return MeasurePlan(measure=row, d=d, eps=eps, delta=delta, depth_bound=depth_bound,
                       influence_bound=influence_bound, tree_depth_bound=tree_depth,
                       params=params)


def params_for_measure(name: str, d: int, eps: float, delta: float, n: int, *,
                       preset: str = "theory",
                       constants: TheoryConstants = TheoryConstants(),
                       relation_constant: float = 1.0, depth: int | None = None,
                       noise_rate: float | None = None, score_samples: int | None = None,
                       leaf_samples: int | None = None) -> Params:
    """Reconstructor :class:`~lca.Params` for ``M(h) <= d``; see :func:`plan_for_measure`.

    >>> params_for_measure("fourier_degree", 2, 0.1, 0.05, 20).depth   # 2 * 2^7 / 0.1^2
    25600
    >>> params_for_measure("deg", 2, 0.1, 0.05, 20, preset="practical").depth  # 2^3
    8
    """
    return plan_for_measure(name, d, eps, delta, n, preset=preset, constants=constants,
                            relation_constant=relation_constant, depth=depth,
                            noise_rate=noise_rate, score_samples=score_samples,
                            leaf_samples=leaf_samples).params


def params_for_depth(d: int, eps: float, delta: float, n: int, *, preset: str = "theory",
                     constants: TheoryConstants = TheoryConstants(),
                     depth: int | None = None, noise_rate: float | None = None,
                     score_samples: int | None = None,
                     leaf_samples: int | None = None) -> Params:
    """Theorem "reconstruct-depth": tree depth ``ceil(c_d d^3 / eps^2)``, ``p = c_p eps / d``.

    Same as ``params_for_measure("depth", d, ...)``; score accuracy
    ``tau = c_tau eps^3 / d^3``. The practical preset uses depth ``d``.

    >>> params_for_depth(3, 0.1, 0.05, 50).depth   # 2 * 3^3 / 0.1^2
    5400
    """
    return params_for_measure("depth", d, eps, delta, n, preset=preset, constants=constants,
                              depth=depth, noise_rate=noise_rate,
                              score_samples=score_samples, leaf_samples=leaf_samples)


def markdown_table() -> str:
    """The measure table as the Markdown that ``docs/theory.md`` contains verbatim."""
    lines = [
        "| measure | `name` | depth relation `D(h) <= c M(h)^k` | k "
        "| influence relation `Inf(h) <= c M(h)^b` | b | Table 1 guarantee "
        "| 2k + b (used) | 3k | source | status |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in MEASURES:
        lines.append(
            f"| {row.title} ({row.symbol}) | `{row.name}` | {row.depth_relation} "
            f"| {row.depth_exponent} | {row.influence_relation} | {row.influence_exponent} "
            f"| `O(d^{row.guarantee_exponent}/eps^2)` | {row.exponent} "
            f"| {row.naive_exponent} "
            f"| {row.source} | {row.status} |")
    return "\n".join(lines)
