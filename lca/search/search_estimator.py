"""The search estimator: a group's decisions and leaf labels, its bounds, its registration.

:class:`SearchEstimator` runs a group of nodes (:class:`~lca.search.group.NodeGroup`)
on the points its lineage hands down (:mod:`lca.search.lineage`), hands the
correlation sums of their inherited points down to the children of every
split, and labels leaves from reused points topped up with fresh ones. It is
registered as ``"search"`` (:data:`SEARCH`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lca import derive, estimator
from lca._validate import MAX_ARRAY_BYTES, check_int
from lca.decisions import LeafDecision, NodeDecision
from lca.derive import Path
from lca.engine import Steps, points_request
from lca.estimate import leaf_label
from lca.estimator import Estimator, NodeContext
from lca.params import Params
from lca.search import rules  # the tunables, read as rules.NAME (lca.search sets them there)
from lca.search.compiled import CompiledGroup, kernel_path, kernels_text
from lca.search.group import NodeGroup
from lca.search.hybrids import steps_per_request
from lca.search.lineage import Lineage, PackedLineage
from lca.search.rules import LEAF, SEARCH_BYTES, certifying_points, schedule

# A node holds its points (two per pair) in one array, each coordinate as up
# to 8 bytes while its correlations are summed.
_BYTES_PER_COORDINATE = 16


def max_samples(n: int) -> int:
    """Most pairs (and leaf points) per node for ``n`` variables.

    A node holds its points, two per pair and up to ``2**NOISY_ROUNDS`` times
    the pair cap when it is noisy, so they must fit one numpy array on this
    machine (:data:`lca._validate.MAX_ARRAY_BYTES`, ``2**63 - 1`` bytes on 64 bits).
    """
    return MAX_ARRAY_BYTES // (_BYTES_PER_COORDINATE * n << rules.NOISY_ROUNDS)


def _fresh_words(n: int, seed: int, path: Path, count: int) -> np.ndarray:
    """Packed fresh leaf samples ``0..count-1`` (purpose :data:`LEAF`)."""
    return derive.uniform_points(derive.node_key(seed, LEAF, path), n, 0, max(0, count), path)


class SearchEstimator(Estimator):
    """``Params.estimator = "search"``: the efficient mode (:mod:`lca.search`).

    A node keeps its own points' values for its descendants (the kept
    values). Everything else a descendant needs is re-derivable and lives in
    the reconstructor's memo, so evicting it costs work, never a query or an
    answer: a node's own points (:mod:`lca.search.lineage`), and a child's
    inherited points (as rows) and their correlation sums, handed down when
    its parent splits.
    """

    name = "search"
    reads_lineage = True

    def check_samples(self, owner: str, name: str, value: Any, n: int) -> int:
        """An int in ``[1, max_samples(n)]``: a node's points must fit one array."""
        try:
            return check_int(owner, name, value, 1, max_samples(n))
        except ValueError as error:
            raise ValueError(
                f"{error} For n={n} the search estimator holds a node's points (two per "
                f"pair, up to {1 << rules.NOISY_ROUNDS} times the pair cap at a noisy node, n "
                "coordinates of up to 8 bytes each) in one array, and this "
                f"machine's largest array is {MAX_ARRAY_BYTES:,} bytes.") from None

    def validate(self, params: Params) -> None:
        if params.adaptive or None in (params.eps, params.delta):
            raise ValueError("Params with estimator='search' need 'eps' and 'delta' (the "
                             "constant-leaf threshold and per-node confidence) and "
                             f"adaptive=False. Got eps={params.eps!r}, "
                             f"delta={params.delta!r}, adaptive={params.adaptive!r}.")

    # -- what the reconstructor runs --

    def nodes(self, contexts: list[NodeContext]) -> Steps:
        first = contexts[0]
        n, seed, params, memo = first.n, first.seed, first.params, first.memo
        compiled = kernel_path(params) == "compiled"
        lineage = PackedLineage(contexts) if compiled else Lineage(contexts)
        counts, totals, sums = lineage.start()
        group = CompiledGroup if compiled else NodeGroup
        nodes = yield from group(n, seed, [c.path for c in contexts], params, counts,
                                 sums, first.costs).steps()
        del sums
        results: list[Any] = [None] * len(contexts)
        early, split = [], []
        for b, (context, node) in enumerate(zip(contexts, nodes, strict=True)):
            if node.variable is None:
                early.append(b)
                continue
            split.append(b)
            memo.put(("own", seed, context.path), node.own.words.copy())
            results[b] = (NodeDecision(node.variable, node.pairs, node.disagreements, 0,
                                       node.certified, node.runner_up, node.margin,
                                       not node.certified, int(node.votes[node.variable]),
                                       node.rule, node.guesswork), node.own.values.copy())
        lineage.hand_down(nodes, split)
        # A certified constant leaf is labelled from its own points alone: they are
        # unanimous, and the certificate is about them (docs/theory.md §7).
        labels = yield from self._labels(
            [contexts[b] for b in early],
            [(len(nodes[b].own), nodes[b].own.total) if nodes[b].certified else
             (int(counts[b]) + len(nodes[b].own), int(totals[b]) + nodes[b].own.total)
             for b in early], [nodes[b].certified for b in early])
        for b, leaf in zip(early, labels, strict=True):
            results[b] = (leaf, None)
        return results

    def leaves(self, contexts: list[NodeContext]) -> Steps:
        compiled = kernel_path(contexts[0].params) == "compiled"
        counts, totals = (PackedLineage if compiled else Lineage)(contexts).counts_and_totals()
        reused = list(zip(counts.tolist(), totals.tolist(), strict=True))
        return (yield from self._labels(contexts, reused, [None] * len(contexts)))

    def _labels(self, contexts: list[NodeContext], reused: list[tuple[int, int]],
                certified: list[bool | None]) -> Steps:
        """Leaf labels from ``(count, total)`` of reused points, each topped up with fresh
        ones to ``leaf_samples`` (certified leaves are not)."""
        if not contexts:
            return []
        n, seed, params = contexts[0].n, contexts[0].seed, contexts[0].params
        fresh = [_fresh_words(n, seed, c.path, 0 if sure else params.leaf_samples - count)
                 for c, (count, _), sure in zip(contexts, reused, certified, strict=True)]
        words = np.concatenate(fresh)
        values = (yield points_request(LEAF, words, n, [c.path for c in contexts])) \
            if words.shape[0] else np.zeros(0, dtype=np.int8)
        bounds = np.cumsum([0] + [block.shape[0] for block in fresh])
        labels = []
        for (count, total), first, last, sure in zip(reused, bounds[:-1], bounds[1:],
                                                     certified, strict=True):
            total += int(values[first:last].sum(dtype=np.int64))
            labels.append(LeafDecision(leaf_label(total), count + int(last - first), total,
                                       sure))
        return labels

    # -- bounds and memory --

    def max_node_queries(self, params: Params) -> int:
        """The most queries one node can spend, a proved worst case (docs/theory.md §7).

        With ``S`` the rounds of :func:`schedule`, ``Q = S[-1]`` the noisy
        cap, ``K = SEARCH_CANDIDATES + 1`` the most candidates, ``c =
        ceil(log2 n)`` and ``s`` the lookahead (with ``"auto"``, the worst ``s``
        it may choose, ``1 <= s <= min(8, c)``): ``2 Q`` pair points; at most
        ``H = (2**s - 1) ceil(c / s)`` hybrids for each of the ``Q`` pairs (a
        binary search over ``L <= n`` differing coordinates takes at most
        ``ceil(log2 L) <= c`` steps, asked ``s`` at a time in requests of at
        most ``2**s - 1`` hybrids; ``H = c`` at ``s = 1``); one probe flip per
        pair (``Q``); and in round ``r`` at most ``K`` candidates, each
        flipped on at most ``S[r]`` pairs (a candidate new to the round from
        pair 0): ``Q (3 + H) + K sum(S)``. The point and probe terms are
        reached by every noisy node; the flip term by a noisy node whose
        candidates are all new in every round, and the hybrid term by pairs
        that all disagree and differ in more than ``2**(c - 1)`` coordinates,
        which uniform pairs do only by chance (and, for ``s > 1``, only when
        ``s`` divides ``c`` and every request's tree of midpoints is full).
        Under pure label noise a node spends more than the old statement
        (``K`` flips per pair of the cap) and stays within this one
        (tests/test_search_rules.py).
        """
        rounds, _ = schedule(params.first_round, params.score_samples)
        steps = (params.n - 1).bit_length()  # ceil(log2 n): at most n differing coordinates
        hybrids = max(((1 << s) - 1) * -(-steps // s) for s in _lookaheads(params))
        return rounds[-1] * (3 + hybrids) + (rules.SEARCH_CANDIDATES + 1) * sum(rounds)

    def max_leaf_queries(self, params: Params) -> int:
        return params.leaf_samples

    def early_leaves(self, params: Params) -> bool:
        return True

    def node_memory(self, params: Params) -> int:
        words = derive.words_per_point(params.n)
        pairs = schedule(params.first_round, params.score_samples)[0][-1]
        # Own points and their values (pages a quiet node leaves untouched are
        # never committed), two correlation vectors, one round's searches.
        return 2 * pairs * (8 * words + 1) + 16 * params.n + min(
            SEARCH_BYTES, 25 * params.n * pairs // 2)

    def describe(self, params: Params) -> str:
        return "\n".join([
            f"lca parameters ({params.preset} preset: sensitive-coordinate search, "
            "not the paper's estimator)",
            f"  variables n           {params.n}",
            f"  depth cap             {params.depth}"
            + (f"  (paths stop at n = {params.n})" if params.depth > params.n else ""),
            f"  pairs per node        {_rounds_text(params)}, up to "
            f"{schedule(params.first_round, params.score_samples)[0][-1]} "
            "at a noisy node  (2 queries each, plus about log2 n per disagreeing "
            f"pair; each round flips at most {rules.SEARCH_CANDIDATES + 1} candidates on the "
            "pairs each has not been flipped on, a new candidate from pair 0; one probe "
            "flip per pair at the cap)",
            f"  certified early leaf  {certified_text(params)}",
            f"  uncertified leaf      at the cap: no variable stands out, at most "
            f"{params.eps:.3g} of the node's points disagree, and the probes say noise "
            "could explain them (a heuristic)",
            f"  points per leaf       {params.leaf_samples}  (ancestors' points reused first)",
            f"  search steps per call {lookahead_text(params)}",
            f"  node kernels          {kernels_text(params)}",
            f"  queries per answer    at most {params.predicted_queries}  (cold, no cache)",
            "  guarantee             determinism and consistency; accuracy measured, "
            "not proved (docs/theory.md)",
        ])


def _rounds_text(params: Params) -> str:
    """The quiet rounds of :func:`schedule` in words: ``"64 in one round"`` or
    ``"16, doubling up to 64"``."""
    rounds, quiet = schedule(params.first_round, params.score_samples)
    if quiet == 1:
        return f"{rounds[0]} in one round"
    return f"{rounds[0]}, doubling up to {rounds[quiet - 1]}"


def _lookaheads(params: Params) -> list[int]:
    """The binary-search steps per request a node of ``params`` may ask: its lookahead, or
    every value ``"auto"`` may choose (at most ``ceil(log2 n)``, the longest search)."""
    lookahead = params.lookahead
    choices = [lookahead] if isinstance(lookahead, int) else \
        range(1, max(1, min(8, (params.n - 1).bit_length())) + 1)
    return sorted({steps_per_request(params.n, s) for s in choices})


def lookahead_text(params: Params) -> str:
    """What ``params.lookahead`` does to a node's binary searches, for describe()."""
    if params.lookahead == "auto":
        most = _lookaheads(params)[-1]
        if most == 1:
            return ("1  (lookahead 'auto' chooses 1 at this n: one step per call, "
                    "Params.lookahead)")
        return (f"auto  (1 to {most}, chosen for each search from the oracle's cost per "
                "call and per row, measured as it is called: fewer calls where a call "
                "costs more than its rows; the same tree)")
    assert isinstance(params.lookahead, int)
    steps = steps_per_request(params.n, params.lookahead)
    if steps < params.lookahead:
        return (f"1  (lookahead {params.lookahead} is not used at this n: the search "
                "selects each step's coordinates without a sorted order, a step per call)")
    if steps == 1:
        return "1  (one oracle call per binary-search step; Params.lookahead)"
    most = (1 << steps) - 1
    return (f"{steps}  (at most {most} hybrids per searching pair in a call: up to "
            f"{most / steps:.3g} times the search's queries in about 1/{steps} of its calls, "
            "the same tree)")


def certified_text(params: Params) -> str:
    """What the certified constant leaf of :func:`round_rule` certifies, for describe()."""
    eps, delta = params.eps, params.delta
    assert eps is not None and delta is not None, "validate() checks"
    rounds, _ = schedule(params.first_round, params.score_samples)
    points = certifying_points(len(rounds), eps, delta)
    if points > 2 * rounds[-1]:
        return (f"never at these values: certifying needs {points} unanimous own points, "
                f"more than the {2 * rounds[-1]} a node can draw")
    return (f"{points} or more own points unanimous: f there is {params.eps:.3g}-close to "
            f"constant, except with probability {params.delta:.3g} per node")


SEARCH = estimator.register(SearchEstimator())
"""The registered search estimator."""
