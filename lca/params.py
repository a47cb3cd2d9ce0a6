"""Parameters of the reconstructor: theory and practical presets.

:class:`Params` is a frozen dataclass validated once, at construction. The
noise rate ``noise_rate`` is the score estimator's re-randomisation rate ``p``,
not label noise of ``f``. It is rounded to the grid of :mod:`lca.derive`
(``p = T / 2**15``) and the *effective* rate is what is stored, reported and
used by the estimator.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import InitVar, dataclass, field
from typing import TYPE_CHECKING, Any

from lca import derive
from lca import estimator as estimators
from lca._validate import MAX_N, check_flag, check_int, check_real, show

__all__ = ["Params", "TheoryConstants"]


def check_theory_overrides(owner: str, **overrides: object) -> None:
    """Reject values that only a practical preset takes, given with the theory preset."""
    given = [name for name, value in overrides.items() if value is not None]
    if given:
        raise ValueError(
            f"{owner}: {', '.join(repr(g) for g in given)} only apply to the "
            "'practical' preset; the theory preset takes its values from the paper's "
            "formulas (change them through 'constants')")


# Why noise_rate is what it is, and why 0 is refused; appended to every error
# about it so that nobody mistakes it for the label noise of f.
NOISE_RATE_MEANING = (
    "noise_rate is the score estimator's re-randomisation rate p (each coordinate "
    "of the copy y of x is re-randomised with probability p, i.e. flipped with "
    "probability p/2), not the label noise of f. It cannot be 0: at p = 0, y = x, "
    "every pair agrees, the estimator sees no disagreements and cannot tell "
    "variables apart.")


def check_noise_rate(owner: str, value: object) -> float:
    """Validate the estimator's re-randomisation rate ``p`` in ``(0, 1]``."""
    try:
        return check_real(owner, "noise_rate", value, 0.0, 1.0, open_high=False)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{error} {NOISE_RATE_MEANING}") from None


# The values each Params field and preset argument may take, declared once: every
# constructor checks its arguments here, under its own name, and Params checks its
# fields here again (a preset's own tighter bound, like the theory preset's eps,
# is stated where it applies).
PARAMETER_CONSTRAINTS: dict[str, Callable[[str, str, Any], Any]] = {
    "n": functools.partial(check_int, low=1, high=MAX_N, high_text="2**31 - 1"),
    "depth": functools.partial(check_int, low=0),
    "first_round": functools.partial(check_int, low=1),
    "lookahead": lambda owner, name, value: check_lookahead(owner, value),
    "size": functools.partial(check_int, low=1),
    "s": functools.partial(check_int, low=2),
    "requested_noise_rate": functools.partial(check_real, low=0.0, high=1.0,
                                              open_high=False),
    "tau": functools.partial(check_real, low=0.0, high=1.0),
    "eps": functools.partial(check_real, low=0.0, high=1.0),
    "delta": functools.partial(check_real, low=0.0, high=1.0),
}


def check_lookahead(owner: str, value: Any) -> int | str:
    """A lookahead: an int in ``[1, 8]`` or ``"auto"`` (:attr:`Params.lookahead`)."""
    if isinstance(value, str):
        if value == "auto":
            return value
        raise ValueError(f"The 'lookahead' parameter of {owner} must be an int in the range "
                         f"[1, 8] or 'auto'. Got {value!r} instead.")
    return check_int(owner, "lookahead", value, 1, 8)


def checked(owner: str, name: str, value: Any) -> Any:
    """``value`` if it is allowed for parameter ``name`` (:data:`PARAMETER_CONSTRAINTS`),
    else the ``TypeError``/``ValueError`` naming ``owner``."""
    return PARAMETER_CONSTRAINTS[name](owner, name, value)


def finite(owner: str, formula: str, compute: Callable[[], float],
           **inputs: object) -> float:
    """``compute()``, or a ``ValueError`` naming ``inputs`` if it is not a finite float.

    Preset formulas divide by powers of small parameters; past double
    precision (about ``1.8e308``) they overflow or divide by an underflowed
    zero. The message states the formula, the limit and the inputs to change.
    """
    try:
        value = compute()
    except (OverflowError, ZeroDivisionError):
        value = math.inf
    if not math.isfinite(value):
        raise ValueError(
            f"{owner}: {formula} exceeds double precision (must be finite, below "
            f"{float.fromhex('0x1.fffffffffffffp+1023'):.4g}) for {_inputs(inputs)}")
    return value


def grid_rate(owner: str, formula: str, rate: float, **inputs: object) -> float:
    """``rate``, or a ``ValueError`` naming ``inputs`` if it rounds to 0 on the noise grid."""
    if round(rate * 2 ** (derive.NOISE_BITS - 1)) < 1:
        raise ValueError(
            f"{owner}: the noise rate {formula} = {rate:.3g} rounds to 0 on the grid "
            f"T / 2**{derive.NOISE_BITS - 1} (it must be above 2**-{derive.NOISE_BITS}) "
            f"for {_inputs(inputs)}")
    return rate


def _inputs(inputs: dict[str, object]) -> str:
    given = ", ".join(f"{name}={show(value)}" for name, value in inputs.items())
    return f"{given}; change {', '.join(repr(name) for name in inputs)}"


def adaptive_delta(owner: str, delta: float, adaptive: bool) -> float:
    """The ``delta'`` the sample counts are sized for: ``delta/2`` in adaptive mode."""
    if adaptive and delta / 2 == 0:
        raise ValueError(
            f"The 'delta' parameter of {owner} must be at least 1e-323 with "
            f"adaptive=True (delta/2 must be a positive float). Got {delta!r} instead.")
    return delta / 2 if adaptive else delta


def hoeffding_counts(n: int, depth: int, tau: float, eps: float,
                      delta: float, *, owner: str = "hoeffding_counts") -> tuple[int, int]:
    """Score and leaf sample counts for a depth-``depth`` tree (:meth:`Params.guaranteed`).

    Raises ``ValueError`` naming the inputs when a count is not a finite float.
    """
    log_nodes = finite(owner, "ln(2^(depth+2) / delta)",
                       lambda: (depth + 2) * math.log(2) - math.log(delta),
                       depth=depth, delta=delta)
    score_samples = math.ceil(finite(
        owner, "score_samples = 8 / tau^2 * ln(n 2^(depth+2) / delta)",
        lambda: 8 / tau ** 2 * (math.log(n) + log_nodes), tau=tau, n=n, depth=depth,
        delta=delta))
    leaf_samples = math.ceil(finite(
        owner, "leaf_samples = 32 / eps^2 * ln(2^(depth+2) / delta)",
        lambda: 32 / eps ** 2 * log_nodes, eps=eps, depth=depth, delta=delta))
    return score_samples, leaf_samples


@dataclass(frozen=True)
class TheoryConstants:
    """The constants hidden by the O(.) of Lemma "Robust version".

    With ``L = log2 s``: ``depth = ceil(c_d L^3 / eps^3)``, ``p = c_p eps / L``,
    ``tau = c_tau eps^3 / L^3`` (and the analogues of :mod:`lca.measures`).

    The paper's proof of the size version goes through when (docs/theory.md
    §1): a level of Case 1 lowers the potential ``NS_p(f, T_j)`` by at least
    ``(c_p - c_tau) eps^3 / L^3``, so the constants need ``c_tau < c_p``, and
    the potential starts in ``[0, 1/2]``, so ``c_d (c_p - c_tau) >= 1/2``
    (:attr:`proof_holds`). The depth and measure version (:mod:`lca.measures`,
    docs/theory.md §2) needs ``c_d (c_p - c_tau) >= max(c_p, 1)``
    (:attr:`depth_proof_holds`). The defaults ``c_d = 2, c_p = 1, c_tau =
    1/2`` meet the first with a factor 2 to spare and the second with
    equality. With these, the proof gives ``dist(T, f) <= 20 opt_s + 11
    eps`` (size) and ``22 opt_d + 11 eps`` (depth) for a tree meeting Lemma
    "Robust version"'s conditions. (Before this was recorded as a
    compatibility change, the defaults were all 1, for which the drop is 0.)
    """

    depth: float = 2.0
    noise: float = 1.0
    tau: float = 0.5

    @property
    def proof_holds(self) -> bool:
        """The size version's conditions (:meth:`Params.from_theory`): ``c_tau < c_p``
        and ``c_d (c_p - c_tau) >= 1/2``."""
        return self.tau < self.noise and 2 * self.depth * (self.noise - self.tau) >= 1

    @property
    def depth_proof_holds(self) -> bool:
        """The depth and measure version's conditions (:mod:`lca.measures`):
        ``c_tau < c_p`` and ``c_d (c_p - c_tau) >= max(c_p, 1)``."""
        return (self.tau < self.noise
                and self.depth * (self.noise - self.tau) >= max(self.noise, 1.0))


@dataclass(frozen=True)
class Params:
    """Everything that fixes the tree ``T_seed`` besides the oracle and seed.

    Two replicas with equal ``Params`` (and the same oracle and seed) build the
    same tree bit for bit.

    Attributes:
        n: number of variables of ``f``.
        depth: tree depth ``d``; paths stop early only when all ``n`` variables
            are fixed (a path cannot query more than ``n`` distinct variables).
        noise_rate: the score estimator's re-randomisation rate ``p`` in
            ``(0, 1]`` (effective value on the ``T / 2**15`` grid): the
            UnbiasedEstimator compares ``f(x)`` with ``f(y)``, where ``y``
            re-randomises each coordinate of ``x`` with probability ``p``, i.e.
            flips it with probability ``p/2``. It is *not* the label noise of
            ``f`` (that is :func:`lca.targets.with_label_noise`'s ``rate``).
            ``p = 0`` is refused: then ``y = x``, no pair ever disagrees and
            every variable scores the same.
        score_samples: UnbiasedEstimator runs per internal node (``2`` queries
            each); in adaptive mode the cap on them.
        leaf_samples: uniform samples per leaf (``1`` query each); in adaptive
            mode the cap on them.
        preset: ``"theory"``, ``"guaranteed"`` or ``"practical"``.
        requested_noise_rate: the noise rate asked for, before rounding.
        size: the target size ``s`` when built by :meth:`from_theory`.
        tau, eps, delta: score accuracy, leaf accuracy and total failure
            probability the sample counts are sized for (:meth:`guaranteed`,
            :meth:`from_theory`), or that adaptive mode certifies.
        adaptive: stop sampling a node or leaf as soon as anytime confidence
            bounds certify its decision (docs/theory.md, "Adaptive
            estimation"); needs ``tau``, ``eps < 1/3`` and ``delta``.
        first_round: samples in the first adaptive round; rounds double.
            The search estimator draws its pairs in the same rounds.
        estimator: ``"score"``, the paper's UnbiasedEstimator (fixed or
            adaptive), or ``"search"``, the sensitive-coordinate search of the
            efficient mode (:mod:`lca.search`; a heuristic, docs/theory.md §7).
            With ``"search"``, ``score_samples`` caps the *pairs* per node,
            ``leaf_samples`` is the fewest labelled points a leaf is labelled
            from (reused ancestor points count), ``eps`` is the minority
            share under which a node is certified constant and ``delta`` the
            per-node confidence of its tests; ``noise_rate`` is not used.
        lookahead: binary-search steps asked per oracle call by the search
            estimator, an int in ``[1, 8]`` (default 1): each request asks,
            for every searching pair, the hybrids of every midpoint its next
            ``lookahead`` steps could query (up to ``2**lookahead - 1``) and
            replays those steps locally. The found coordinates, decisions and
            answers are the same for every value; only the queries (more) and
            the oracle calls (fewer) change, so it pays when a call costs
            much more than a row (a trained model's ``predict``). ``"auto"``
            measures the oracle's cost per call and per row as the reconstructor
            asks it, and picks each search's steps per call to minimise the
            wall time (:class:`lca.engine.CallCosts`): the same tree, but how
            many queries and calls an answer takes then depends on those
            timings. The bound
            8 keeps a request at most 255 hybrids per pair for 8 steps (32
            times the queries of one step per call); a search at ``n <= 256``
            is done in one request. At ``n >= 10**5`` the search selects its
            coordinates step by step and uses 1 whatever is set (a call's cost
            is its rows there). The score estimator ignores it. It fixes no
            part of the tree, so it is an init-only value (a
            :class:`dataclasses.InitVar`, kept as an attribute): equality,
            ``repr``, :func:`dataclasses.asdict` and every record made from
            it (known answers, saved trees, ``/describe``) leave it out and
            read it back as 1; pickling, :func:`copy.copy` and
            :func:`dataclasses.replace` keep it.

    ``n`` is at most ``2**31 - 1``. Each estimator bounds ``score_samples``
    and ``leaf_samples`` (:meth:`lca.estimator.Estimator.check_samples`): the
    search estimator holds a node's points, so its counts are at most
    :func:`lca.search.max_samples` ``(n)``; the score estimator streams its
    samples, and its counts have no upper bound.
    """

    n: int
    depth: int
    noise_rate: float
    score_samples: int
    leaf_samples: int
    preset: str = "practical"
    requested_noise_rate: float | None = None
    size: int | None = None
    eps: float | None = None
    delta: float | None = None
    tau: float | None = None
    constants: TheoryConstants | None = field(default=None, compare=True)
    adaptive: bool = False
    first_round: int = 64
    estimator: str = "score"
    # Init-only: it batches a search's questions and fixes nothing of the tree, so
    # equality and every record of the fields leave it out (a type checker is shown
    # the int attribute that __post_init__ keeps).
    if TYPE_CHECKING:
        lookahead: int | str = 1
    else:
        lookahead: InitVar[int | str] = 1

    def __post_init__(self, lookahead: int | str = 1) -> None:
        owner = "Params"
        object.__setattr__(self, "lookahead", checked(owner, "lookahead", lookahead))
        object.__setattr__(self, "n", checked(owner, "n", self.n))
        object.__setattr__(self, "depth", checked(owner, "depth", self.depth))
        if self.estimator not in estimators.names():
            known = " or ".join(repr(name) for name in estimators.names())
            raise ValueError(f"The 'estimator' parameter of Params must be {known}. "
                             f"Got {self.estimator!r} instead.")
        for name in ("score_samples", "leaf_samples"):
            object.__setattr__(self, name, self.estimation.check_samples(
                owner, name, getattr(self, name), self.n))
        # first_round needs no bound: rounds never exceed score_samples.
        object.__setattr__(self, "first_round",
                           checked(owner, "first_round", self.first_round))
        rate = check_noise_rate(owner, self.noise_rate)
        if self.preset not in ("theory", "guaranteed", "practical", "efficient"):
            raise ValueError(
                "The 'preset' parameter of Params must be 'theory', 'guaranteed', "
                f"'practical' or 'efficient'. Got {self.preset!r} instead."
            )
        check_flag(owner, "adaptive", self.adaptive)
        if self.size is not None:
            object.__setattr__(self, "size", checked(owner, "size", self.size))
        if self.constants is not None and not isinstance(self.constants, TheoryConstants):
            raise TypeError("The 'constants' parameter of Params must be a TheoryConstants "
                            f"or None. Got {self.constants!r} instead.")
        if self.requested_noise_rate is not None:
            object.__setattr__(self, "requested_noise_rate", checked(
                owner, "requested_noise_rate", self.requested_noise_rate))
        for name in ("tau", "eps", "delta"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, checked(owner, name, getattr(self, name)))
        self.estimation.validate(self)
        try:
            threshold = derive.noise_threshold(rate)
        except ValueError as error:
            raise ValueError(f"The 'noise_rate' parameter of Params: {error}. "
                             f"{NOISE_RATE_MEANING}") from None
        if self.requested_noise_rate is None:
            object.__setattr__(self, "requested_noise_rate", rate)
        object.__setattr__(self, "noise_rate", derive.noise_rate_of(threshold))

    @property
    def noise_threshold(self) -> int:
        """``T`` with flip probability ``p/2 = T / 2**16``."""
        return derive.noise_threshold(self.noise_rate)

    @property
    def path_length(self) -> int:
        """Internal nodes on every root-to-leaf path: ``min(depth, n)``."""
        return min(self.depth, self.n)

    @property
    def estimation(self) -> estimators.Estimator:
        """The estimator :attr:`estimator` names (:mod:`lca.estimator`)."""
        return estimators.get(self.estimator)

    @property
    def max_node_queries(self) -> int:
        """Most queries to ``f`` one internal-node decision can spend (a proved bound).

        Score estimator: ``2 * score_samples`` (each UnbiasedEstimator run
        queries ``f(x)`` and ``f(y)``; adaptive mode stops at or before the
        cap). Search estimator: :meth:`lca.search.SearchEstimator.max_node_queries`.
        A node that becomes an early leaf (adaptive or search) spends up to
        this plus :attr:`max_leaf_queries`.
        """
        return self.estimation.max_node_queries(self)

    @property
    def max_leaf_queries(self) -> int:
        """Most queries to ``f`` one leaf decision can spend: ``leaf_samples``.

        (The search estimator tops up reused points with at most this many.)
        """
        return self.estimation.max_leaf_queries(self)

    @property
    def predicted_queries(self) -> int:
        """Queries to ``f`` for one cold answer (no cache); an upper bound if adaptive or search."""
        return self.path_length * self.max_node_queries + self.leaf_samples

    @classmethod
    def practical(cls, n: int, depth: int, noise_rate: float, score_samples: int,
                  leaf_samples: int, *, adaptive: bool = False, tau: float | None = None,
                  eps: float | None = None, delta: float | None = None) -> Params:
        """Depth, noise rate and sample counts given directly.

        Keeps determinism and consistency (answers come from one fixed tree per
        seed) and nothing more: no decision is claimed right and no accuracy
        bound is claimed (the theory preset, :meth:`from_theory`, is the one
        with an accuracy guarantee; docs/theory.md §1). With
        ``adaptive=True`` the counts are caps and ``tau``, ``eps``, ``delta``
        say what to certify; decisions that reach a cap uncertified are
        counted in :class:`lca.AnswerStats`.
        """
        return cls(n=n, depth=depth, noise_rate=noise_rate,
                   score_samples=score_samples, leaf_samples=leaf_samples,
                   preset="practical", adaptive=adaptive, tau=tau, eps=eps, delta=delta)

    @classmethod
    def efficient(cls, n: int, depth: int = 12, *, pairs: int = 64, first_round: int = 64,
                  leaf_samples: int = 64, eps: float = 0.05,
                  delta: float = 0.05, lookahead: int | str = 1) -> Params:
        """The recommended preset: the sensitive-coordinate search estimator.

        Not the paper's algorithm (that is :meth:`practical`, :meth:`guaranteed`
        and :meth:`from_theory`): each node draws up to ``pairs`` pairs of
        independent uniform points in rounds from ``first_round`` (by default
        all of them in one round; a smaller ``first_round`` doubles rounds up
        to ``pairs`` and can stop early on a certified lead, at the cost of an
        oracle call per round and per binary-search step of each round) and
        binary-searches each disagreeing pair for a sensitive coordinate
        (:mod:`lca.search`); the most found variables and the one most
        correlated with ``f`` are candidates, and it splits on the candidate
        with the most flip edges (measured influence), early once its lead
        over the runner-up is significant.
        ``depth`` is a cap: a node becomes a leaf early when enough of its own
        points are unanimous to certify ``f_path`` ``eps``-close to constant
        (confidence ``1 - delta`` per node; labelled from those points), or,
        at the cap, when no variable stands out, at most ``eps`` of its
        points disagree with their majority and label noise could explain
        them (a heuristic). Other leaves are labelled from the ancestors'
        points in their subcube, topped up with fresh ones to ``leaf_samples``.
        ``pairs`` and ``leaf_samples`` are at most :func:`lca.search.max_samples`
        ``(n)`` (a node's points fit one array).

        Determinism and consistency hold as for every preset; the accuracy
        of the tree is measured (docs/benchmarks.md), not proved
        (docs/theory.md §7). The defaults were chosen by
        ``scripts/bench_efficient.py``, a sweep run before the noisy round
        existed (docs/benchmarks_efficient.md), except ``first_round``: one
        round of 64 pairs instead of rounds of 16, 32 and 64 makes about 0.4x
        the oracle calls per node, 0.90x the queries on trained models (1.19x
        on noise-free synthetic targets) and no case of the suite worse beyond
        its 95% interval (``scripts/diagnose_query_levers.py``,
        docs/benchmarks_history.md §9). A node whose probe flips show label
        noise draws up to twice ``pairs`` (:func:`lca.search.noisy_rounds`):
        at 20% label noise that costs about twice the queries and brings the
        suite's cases within 0.03 of the best learner's error where the
        depth cap allows it (``scripts/diagnose_noise.py``; docs/benchmarks.md,
        "How many queries, how accurate?").
        ``lookahead`` is :attr:`lookahead`: binary-search steps per oracle
        call (or ``"auto"``, chosen from the oracle's measured costs), the
        same tree in fewer calls and more queries.
        """
        owner = "Params.efficient"
        n = checked(owner, "n", n)
        return cls(n=n, depth=checked(owner, "depth", depth), noise_rate=0.1,
                   score_samples=estimators.get("search").check_samples(owner, "pairs", pairs,
                                                                        n),
                   leaf_samples=estimators.get("search").check_samples(
                       owner, "leaf_samples", leaf_samples, n),
                   preset="efficient",
                   first_round=checked(owner, "first_round", first_round),
                   eps=checked(owner, "eps", eps), delta=checked(owner, "delta", delta),
                   estimator="search", lookahead=checked(owner, "lookahead", lookahead))

    @classmethod
    def guaranteed(cls, n: int, depth: int, noise_rate: float, tau: float, eps: float,
                   delta: float, *, adaptive: bool = False) -> Params:
        """Sample counts sized so every decision of a depth-``d`` tree is right.

        "Right" means: every chosen variable has a score within ``tau`` of the
        best at the given noise rate, and every leaf with ``|E[f_leaf]| > eps``
        gets the sign of ``E[f_leaf]`` — Lemma "Robust version"'s conditions,
        but at *this* depth, noise rate and ``tau``. That bounds ``dist(T, f)``
        only when those values are the lemma's for ``f`` (as in
        :meth:`from_theory`); on its own this preset guarantees correct
        decisions, not an ``O(opt + eps)`` error.

        Every one of the at most ``2^(d+1)`` estimates fails with probability at
        most ``delta' / 2^(d+1)``, so all succeed with probability
        ``>= 1 - delta'``:

        * score (Theorem "Score estimator", Hoeffding on ``[-1, 1]`` and a
          union bound over ``n`` variables, accuracy ``tau/2``):
          ``q = ceil(8 / tau^2 * ln(n 2^(d+2) / delta'))``;
        * leaf (accuracy ``eps/4``): ``ceil(32 / eps^2 * ln(2^(d+2) / delta'))``.

        ``delta' = delta`` in fixed mode. Adaptive mode spends ``delta/2`` on
        its anytime bounds and sizes these counts, its caps, with
        ``delta' = delta/2``; the total failure probability stays ``<= delta``.
        Adaptive nodes may also stop early as leaves, which adds at most
        ``eps`` to the error (docs/theory.md §6).
        """
        owner = "Params.guaranteed"
        n, depth = checked(owner, "n", n), checked(owner, "depth", depth)
        tau, eps = checked(owner, "tau", tau), checked(owner, "eps", eps)
        delta = checked(owner, "delta", delta)
        score_samples, leaf_samples = hoeffding_counts(
            n, min(depth, n), tau, eps, adaptive_delta(owner, delta, adaptive), owner=owner)
        return cls(n=n, depth=depth, noise_rate=noise_rate, score_samples=score_samples,
                   leaf_samples=leaf_samples, preset="guaranteed", tau=tau, eps=eps,
                   delta=delta, adaptive=adaptive)

    @classmethod
    def from_theory(cls, s: int, eps: float, delta: float, n: int,
                    constants: TheoryConstants = TheoryConstants(), *,
                    adaptive: bool = False) -> Params:
        """Parameters of Lemma "Robust version" and Lemma "Efficiency".

        With ``L = log2 s``: ``d = ceil(c_d L^3 / eps^3)``,
        ``p = min(1, c_p eps / L)``, ``tau = c_tau eps^3 / L^3``; sample counts
        as in :meth:`guaranteed` with the uncapped depth ``d`` in the union bound.

        Guarantee (docs/theory.md §1): if ``f`` is ``opt_s``-close to a size-``s``
        tree then, with probability ``>= 1 - delta`` (treating the derived
        streams as independent uniform bits), ``dist(T_seed, f) <= 20 opt_s +
        11 eps`` with the default constants (at the requested rate ``p``;
        :meth:`describe` gives the constant for ``p`` rounded to its grid);
        adaptive mode adds at most ``eps`` more from early leaves. For an
        additive error ``alpha`` on top of ``20 opt_s`` pass ``eps = alpha /
        11`` (adaptive: ``alpha / 12``).

        These are enormous (``s = 16, eps = 0.1`` gives ``d = 128000`` with the
        default constants ``c_d = 2, c_p = 1, c_tau = 1/2``); that is the
        paper's bound, reported honestly.
        """
        owner = "Params.from_theory"
        s = checked(owner, "s", s)
        # Tighter than the table: the proof needs eps < 1/2 (docs/theory.md §1).
        eps = check_real(owner, "eps", eps, 0.0, 0.5)
        delta, n = checked(owner, "delta", delta), checked(owner, "n", n)
        if not isinstance(constants, TheoryConstants):
            raise TypeError(
                "The 'constants' parameter of Params.from_theory must be a "
                f"TheoryConstants. Got {constants!r} instead."
            )
        for name in ("depth", "noise", "tau"):
            check_real(owner, f"constants.{name}", getattr(constants, name),
                       0.0, math.inf)
        log_s = math.log2(s)
        depth = math.ceil(finite(owner, "depth = c_d (log2 s)^3 / eps^3",
                                 lambda: constants.depth * log_s ** 3 / eps ** 3,
                                 eps=eps, s=s, constants=constants))
        noise_rate = grid_rate(owner, "p = min(1, c_p eps / log2 s)",
                               min(1.0, constants.noise * eps / log_s), eps=eps, s=s,
                               constants=constants)
        tau = constants.tau * eps ** 3 / log_s ** 3
        if tau == 0:
            raise ValueError(f"{owner}: tau = c_tau eps^3 / (log2 s)^3 underflows to 0 for "
                             f"eps={eps!r}, s={s!r}, constants={constants!r}; change 'eps' "
                             "or 'constants'")
        score_samples, leaf_samples = hoeffding_counts(
            n, depth, tau, eps, adaptive_delta(owner, delta, adaptive), owner=owner)
        return cls(n=n, depth=depth, noise_rate=noise_rate,
                   score_samples=score_samples, leaf_samples=leaf_samples,
                   preset="theory", size=s, eps=eps, delta=delta, tau=tau,
                   constants=constants, adaptive=adaptive)

    def describe(self) -> str:
        """A human-readable summary, including the predicted cost per answer."""
        return self.estimation.describe(self)
