"""The sensitive-coordinate search estimator of the efficient mode (not the paper's).

At a node ``path`` the estimator draws pairs ``(x_k, y_k)`` of *independent*
uniform points of the node's subcube. For every pair with ``f(x_k) != f(y_k)``
it walks the hybrid path from ``x_k`` to ``y_k`` (the coordinates where they
differ, switched one at a time in a derived random order) and binary-searches
it for two adjacent hybrids with different values: the coordinate switched
between them is *sensitive* there, an edge of the cube on which ``f_path``
changes. That costs about ``log2`` of the number of differing coordinates per
pair. Each found coordinate is a vote.

Votes are cheap but are not the best split: a binary search finds one of the
path's edges, not each with its frequency, and on large trees the vote leader
is a worse split than the most influential variable even with 2,000 samples
per node (``scripts/diagnose_split_rules.py``). So votes only nominate: the
:data:`SEARCH_CANDIDATES` vote leaders and the leader of the correlation
``sum f(u) u_i`` over the node's labelled points (its own and those inherited
from its ancestors; label noise only scales it by ``1 - 2 eta``, and it finds
the variables of monotone-like targets) are *candidates*, and the node
measures each candidate's influence directly: ``f(x_k) != f(x_k with x_k,c
negated)`` for the first point of every pair.

Pairs are drawn in rounds (:func:`schedule`: ``first_round`` pairs, doubling,
up to the cap ``score_samples``, then :data:`NOISY_ROUNDS` more doublings for
a noisy node; ``R`` rounds in all, every ``ln`` bounded from above by
:func:`lca.estimate.ln_upper`). After each round, first match
(:func:`round_rule`):

1. **constant**: the node's own points are unanimous and at least
   :func:`certifying_points` (``ceil(ln(2 R / delta) / eps)``) many: an
   early leaf, certified (``f_path`` is ``eps``-close to that value except
   with probability ``delta``, docs/theory.md §7);
2. **influence**: unless the own points are unanimous, the influence
   leader's paired lead over the runner-up (points with an edge on one of
   them only) passes a sign test at level ``ln(R K (K - 1) / delta)``,
   ``K`` the most candidates: split on it, certified.

At the pair cap, a node with minority points flips each pair's first point
once more, on a *probe*: a free variable drawn from the derived bits
(:data:`PROBE`), independent of ``f``. Under label noise ``eta`` a probe
changes ``f`` with probability about ``2 eta (1 - eta)``, the offset every
candidate's flip-edge rate carries; on a noise-free ``f_path`` only as
often as a random free variable matters. A node whose probes find at least
half as many edges as its influence leader is *noisy* and draws up to
:data:`NOISY_ROUNDS` more rounds, as many as the estimated noise needs to
make up for the gaps it shrinks (:func:`noisy_rounds`, rule 7); the others
stop.
At a node's last round, if neither rule matched (:func:`cap_rule`): an
early leaf if no structure shows (the vote leader is not found
significantly more often than exchangeable edges would be, ``Bin(V,
1/F)``, and no correlation is significant), at most ``eps`` of the own
points disagree with their majority, and the probes found at least half
as many edges as there are minority points (:func:`noise_like`: label
noise could explain them); else split on the influence leader,
uncertified (a low-margin decision, and *guesswork* when the leader does
not beat the probes, :func:`is_guesswork`). docs/randomness.md §6 gives
every rule bit for bit.

These rules are heuristics with stated confidence levels under the
assumption that derived bits are independent and uniform; no accuracy
guarantee for the tree follows from them (docs/theory.md §7).

Every sample comes from :mod:`lca.derive` (purposes :data:`PAIRS`,
:data:`ORDER`, :data:`LEAF`, :data:`PROBE`; flips reuse the pairs' points); every decision is
a deterministic function of ``(oracle, params, seed, path)``. A node's
decision is written as steps (:mod:`lca.engine`): one request for a round's
points, one per binary-search step for all its searching pairs, one for the
round's flips of all candidates; the scheduler batches them across nodes.

Each name is importable from here; it lives in one of (imports flow down
this list, never up):

* :mod:`lca.search.rules` — the rules, their tests and constants, the
  rounds and the purposes of the derived bits;
* :mod:`lca.search.sums` — :class:`Labelled` points and the correlation sums
  over them;
* :mod:`lca.search.hybrids` — the rows a round asks for: its points, the
  binary searches over hybrids, the flips;
* :mod:`lca.search.group` — a group of nodes decided together, one method
  per phase of a round, and each node's :class:`SearchNode`;
* :mod:`lca.search.kernels` — a round's arithmetic as compiled loops over
  plain arrays (numba, imported only when they run);
* :mod:`lca.search.compiled` — the group's phases through those kernels
  (the numpy code of the modules above stays the reference), and which of the
  two runs (``LCA_KERNELS``);
* :mod:`lca.search.lineage` — what a node reads of its ancestors' points;
* :mod:`lca.search.search_estimator` — :class:`SearchEstimator`, its
  bounds and its registration (:data:`SEARCH`).
"""

from lca.search.group import SearchNode
from lca.search.rules import (
    FLIP,
    LEAF,
    NOISY_ROUNDS,
    ORDER,
    PAIRS,
    PROBE,
    SEARCH_CANDIDATES,
    candidates,
    cap_rule,
    certifying_points,
    correlated,
    has_structure,
    influence_lead,
    is_guesswork,
    noise_like,
    noisy_rounds,
    probe_variables,
    round_rule,
    schedule,
)
from lca.search.search_estimator import SEARCH, max_samples

# Public names outside __all__: the redundant aliases re-export them. (Tests
# reach internals in their own modules: a test that patches one patches it on
# the module that reads it.)
from lca.search.search_estimator import SearchEstimator as SearchEstimator
from lca.search.search_estimator import certified_text as certified_text
from lca.search.sums import Labelled

__all__ = [
    "FLIP",
    "LEAF",
    "NOISY_ROUNDS",
    "ORDER",
    "PAIRS",
    "PROBE",
    "SEARCH",
    "SEARCH_CANDIDATES",
    "Labelled",
    "SearchNode",
    "candidates",
    "cap_rule",
    "certifying_points",
    "correlated",
    "has_structure",
    "influence_lead",
    "is_guesswork",
    "max_samples",
    "noise_like",
    "noisy_rounds",
    "probe_variables",
    "round_rule",
    "schedule",
]
