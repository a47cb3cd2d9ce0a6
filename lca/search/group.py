"""A group of nodes decided together: their counts, and the phases of each round.

:class:`NodeGroup` runs the rounds of :func:`~lca.search.rules.schedule`
for every node of a group at once; each node follows the rules on its own
counts, the group shares derivation, searches and oracle calls. A round is
a sequence of phases, one method each, run in this order: draw the round's
points, search the disagreeing pairs, add the correlation sums, rules 1 to 3
with the candidates' flips, the probes and rule 7 at a node's cap, rules 4
to 6 at its last round. At a node's cap its probes are asked in the same
call as that round's flips, before rule 3 is known: they count only if rule
3 does not decide it (a decided node spends them unread), one oracle call
fewer per capped node. Each node's decision is a :class:`SearchNode`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lca import derive
from lca.derive import Path
from lca.engine import CallCosts, Steps, points_request
from lca.estimate import lead_is_certified
from lca.params import Params
from lca.search.hybrids import flip_steps, search_steps
from lca.search.rules import (
    ORDER,
    PAIRS,
    Round,
    Terms,
    candidates,
    cap_rule,
    free_leader,
    influence_lead,
    is_guesswork,
    minority_count,
    noisy_rounds,
    probe_variables,
    round_rule,
    schedule,
)
from lca.search.sums import Labelled, grouped_correlations


@dataclass(frozen=True)
class SearchNode:
    """A node's search: the split variable, or ``None`` for an early leaf.

    ``rule`` says which test decided: ``"influence"`` for a split (or
    ``"correlation"`` when the own points were unanimous to the cap), or
    ``"constant"`` or ``"no structure"`` for an early leaf; ``margin`` is the
    paired flip-edge lead ``a - b`` of the chosen variable over the runner-up.
    ``votes[i]`` counts the pairs whose search found variable ``i``;
    ``pairs`` were drawn, ``disagreements`` of them had ``f(x) != f(y)``.
    ``certified`` is true for a certified lead or a certified constant;
    ``own`` holds the node's ``2 * pairs`` labelled points for reuse,
    ``correlations`` the sums ``sum f(u) u_i`` over its inherited and own
    points and ``probes`` the probe edges (0 unless it reached a cap with
    minority points). ``guesswork`` is true for an uncertified influence
    split whose leader does not beat the probes (:func:`is_guesswork`).
    """

    variable: int | None
    runner_up: int | None
    rule: str
    margin: int
    pairs: int
    disagreements: int
    votes: np.ndarray
    certified: bool
    own: Labelled
    correlations: np.ndarray
    probes: int = 0
    guesswork: bool = False



@dataclass
class _Counts:
    """Counts of a group of nodes decided together, one row per node."""

    free: np.ndarray           # (B, n) bool
    votes: np.ndarray          # (B, n) int64
    correlations: np.ndarray   # (B, n) int64, inherited and own points
    labelled: np.ndarray       # (B,) inherited and own points
    own_total: np.ndarray      # (B,) sum of the own points' values
    disagreements: np.ndarray  # (B,)
    probes: list[np.ndarray]   # per node: the probe edges of its pairs, in order
    words: np.ndarray          # (B, 2 Q, W) own points
    values: np.ndarray         # (B, 2 Q) their values

    def state(self, b: int, pairs: int) -> Round:
        return Round(pairs, int(self.disagreements[b]), self.votes[b], self.correlations[b],
                     int(self.labelled[b]), int(self.own_total[b]), int(self.probes[b].sum()))

    def minority(self, rows: np.ndarray, pairs: int) -> np.ndarray:
        return minority_count(2 * pairs, self.own_total[rows])


def flip_plan(members: dict[int, list[int]], edges: list[dict[int, np.ndarray]],
              pairs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[int, int, int]]]:
    """The flips a round asks for: each node's candidates on the pairs not yet measured.

    Returns ``(node, pair, column)`` per flip, and ``(node, candidate, first
    pair)`` per block of them, in that order.
    """
    blocks = [(b, c, edges[b][c].size if c in edges[b] else 0)
              for b, chosen in members.items() for c in chosen]
    node, pair, column = _runs(blocks, pairs)
    return node, pair, column, blocks


def _runs(blocks: list[tuple[int, int, int]], stop: int
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(node, pair, column)`` per flip of ``(node, column, first pair)`` blocks, each
    running over pairs ``first..stop-1``, in block order."""
    if len(blocks) == 1:  # one block (a group of one's probes): nothing to cumulate
        (node, column, first), = blocks
        pair = np.arange(first, stop)
        return np.full(pair.size, node), pair, np.full(pair.size, column)
    table = np.array(blocks, dtype=np.int64).reshape(-1, 3)
    lengths = stop - table[:, 2]
    # One repeat for all three columns: a block's pairs are its flips' positions in the
    # output, shifted by (first pair - where the block starts).
    table[:, 2] -= np.cumsum(lengths) - lengths
    flips = np.repeat(table, lengths, axis=0)
    flips[:, 2] += np.arange(flips.shape[0])
    return flips[:, 0], flips[:, 2], flips[:, 1]



class NodeGroup:
    """The nodes ``paths`` of ``T_seed``, decided together (the package docstring).

    Every node follows the rules of :func:`round_rule`, :func:`noisy_rounds` and
    :func:`cap_rule` on its own counts; the group shares derivation,
    searches and oracle calls; with ``params.lookahead = "auto"``, ``costs``
    chooses each search's steps per request. Node ``b``'s ancestors' labelled points in
    its subcube (its inherited points) number ``inherited_counts[b]`` and
    have the correlation sums ``inherited_correlations[b]``: they count in
    the correlation test, not in the certified constant test.
    :meth:`steps` returns one :class:`SearchNode` per path.
    """

    def __init__(self, n: int, seed: int, paths: list[Path], params: Params,
                 inherited_counts: np.ndarray, inherited_correlations: np.ndarray,
                 costs: CallCosts | None = None) -> None:
        size_b = len(paths)
        self.n, self.seed, self.paths, self.params, self.costs = n, seed, paths, params, costs
        self.width = derive.words_per_point(n)
        free = np.ones((size_b, n), dtype=bool)
        for b, path in enumerate(paths):
            free[b, [var for var, _ in path]] = False
        self.free = free
        self.rounds, self.quiet = schedule(params.first_round, params.score_samples)
        self.free_counts = [n - len(path) for path in paths]  # a path fixes distinct variables
        eps, delta = params.eps, params.delta
        assert eps is not None and delta is not None, "validate() checks"
        self.terms = {count: Terms.of(len(self.rounds), count, eps, delta)
                      for count in set(self.free_counts)}
        # R, eps, delta set it: the same for all.
        self.zero_points = self.terms[self.free_counts[0]].zero_points
        self.counts = _Counts(
            free, np.zeros((size_b, n), dtype=np.int64), inherited_correlations.astype(np.int64),
            inherited_counts.astype(np.int64), np.zeros(size_b, dtype=np.int64),
            np.zeros(size_b, dtype=np.int64), [np.zeros(0, dtype=bool)] * size_b,
            # Room for every round's points; a node reads only what it drew
            # (pages past a quiet node's points are never touched).
            np.empty((size_b, 2 * self.rounds[-1], self.width), dtype=np.uint64),
            np.empty((size_b, 2 * self.rounds[-1]), dtype=np.int8))
        self.order_keys = [derive.node_key(seed, ORDER, path) for path in paths]
        # Per node: each measured candidate's flip edges, pair by pair.
        self.edges: list[dict[int, np.ndarray]] = [{} for _ in paths]
        self.leads: list[tuple[int, int | None, int, int]] = [(0, None, 0, 0)] * size_b
        # Probe edges asked with a cap round's flips, held until _probe records them for
        # the nodes rule 3 left undecided.
        self.asked_probes: dict[int, np.ndarray] = {}
        self.results: list[SearchNode | None] = [None] * size_b
        self.active = np.arange(size_b)
        self.last = np.full(size_b, self.quiet)  # each node's last round (rule 7 may raise it)
        self.done = 0  # pairs drawn by every active node

    def steps(self) -> Steps:
        """Every round's phases, in order, until each node is decided."""
        for index, size in enumerate(self.rounds):
            words, values = yield from self._draw(size)
            yield from self._search(words, values, size)
            self._add_sums(words, values, size)
            self.done = size
            yield from self._rules_after_round(index)
            if not self._retire():
                break
            capped = self._probe(index)
            self._rules_at_cap(capped, index)
            if not self._retire():
                break
        return self.results

    def _names(self, rows: np.ndarray) -> list[Path]:
        return [self.paths[b] for b in rows]

    def _draw(self, size: int) -> Steps:
        """The active nodes' pairs ``done..size-1``: their points, asked in one request.

        Returns them packed ``(B, 2 count, W)`` and their values ``(B, 2 count)``.
        """
        active, done, counts = self.active, self.done, self.counts
        names = self._names(active)
        words = derive.node_points(self.seed, PAIRS, names, self.n, 2 * done, 2 * size)
        values = (yield points_request(PAIRS, words.reshape(-1, self.width), self.n,
                                       names)).reshape(active.size, 2 * (size - done))
        counts.words[active, 2 * done:2 * size] = words
        counts.values[active, 2 * done:2 * size] = values
        return words, values

    def _search(self, words: np.ndarray, values: np.ndarray, size: int) -> Steps:
        """Binary-search the round's disagreeing pairs: each found coordinate is a vote."""
        active, done, counts = self.active, self.done, self.counts
        firsts, seconds = values[:, 0::2], values[:, 1::2]
        disagree = firsts != seconds
        node, pair = np.nonzero(disagree)
        if node.size:
            found = yield from search_steps(
                self.n, [self.order_keys[b] for b in active], node, done + pair,
                words[node, 2 * pair], words[node, 2 * pair + 1], firsts[node, pair],
                (done, size), self._names(active), self._steps_per_request(node.size))
            np.add.at(counts.votes, (active[node], found), 1)
        counts.disagreements[active] += disagree.sum(axis=1)

    def _steps_per_request(self, pairs: int) -> int:
        """Binary-search steps one request of a search of ``pairs`` pairs asks:
        ``params.lookahead``, or with ``"auto"`` what :attr:`costs` chooses for
        searches of up to ``ceil(log2 F)`` steps (``F`` free variables)."""
        lookahead = self.params.lookahead
        if isinstance(lookahead, int):
            return lookahead
        if self.costs is None:
            return 1
        return self.costs.lookahead(pairs, (max(self.free_counts) - 1).bit_length())

    def _add_sums(self, words: np.ndarray, values: np.ndarray, size: int) -> None:
        """Add the round's points to each active node's correlation sums and totals."""
        active, counts = self.active, self.counts
        count = size - self.done
        counts.correlations[active] += grouped_correlations(
            words.reshape(-1, self.width), values.reshape(-1), np.full(active.size, 2 * count),
            self.n)
        counts.labelled[active] += 2 * count
        counts.own_total[active] += values.sum(axis=1, dtype=np.int64)

    def _rules_after_round(self, index: int) -> Steps:
        """Rule 1 (certified constant), rule 2 (unanimous: wait), rule 3 (influence).

        The nodes with minority points flip their candidates on the pairs each
        has not been flipped on, all in one request, and split on a certified
        influence lead. Those at their cap (round ``index`` is their last) ask
        their probes in the same request; :meth:`_probe` reads them.
        """
        active, done, counts, edges = self.active, self.done, self.counts, self.edges
        constant, unanimous = round_rule(counts.minority(active, done), 2 * done,
                                         self.zero_points)
        for b in active[constant]:
            self._finish(b, None, None, "constant", 0, True)
        # Unanimous nodes have no disagreement to compare a flip with: they wait.
        flipping = active[~constant & ~unanimous]
        if not flipping.size:
            return
        chosen = candidates(counts.votes[flipping], counts.correlations[flipping],
                            self.free[flipping])
        members = dict(zip(flipping.tolist(), chosen, strict=True))
        node, pair, column, blocks = flip_plan(members, edges, done)
        capped = flipping[self.last[flipping] == index + 1]
        probe_node, probe_pair, probe_column = self._probe_plan(capped)
        flipped = yield from flip_steps(
            self.n, counts.words[:, 0:2 * done:2], np.concatenate([node, probe_node]),
            np.concatenate([pair, probe_pair]), np.concatenate([column, probe_column]),
            self._names(flipping))
        self.asked_probes.update(self._probe_edges(capped, probe_node, probe_pair,
                                                   flipped[node.size:]))
        at = 0
        for b, c, start in blocks:
            new = flipped[at:at + done - start] != counts.values[b, 2 * start:2 * done:2]
            at += new.size
            edges[b][c] = np.concatenate([edges[b][c], new]) if c in edges[b] else new
        for b in flipping.tolist():
            leader, runner, a, lead_b = self.leads[b] = influence_lead(members[b], edges[b])
            if lead_is_certified(a - lead_b, a + lead_b, self.terms[self.free_counts[b]].lead):
                self._finish(b, leader, runner, "influence", a - lead_b, True)

    def _retire(self) -> bool:
        """Drop the decided nodes from the active ones; whether any remain."""
        self.active = np.array([b for b in self.active.tolist() if self.results[b] is None],
                               dtype=np.int64)
        return bool(self.active.size)

    def _probe(self, index: int) -> np.ndarray:
        """At a node's last round (its cap), its probes of the pairs not yet probed; rule 7.

        Only nodes with minority points probe (rules 4 and 7 read the probes).
        At the quiet cap a probing node may go on for :func:`noisy_rounds`
        more rounds. Returns the nodes at their last round before rule 7.
        """
        active, done, counts = self.active, self.done, self.counts
        capped = active[self.last[active] == index + 1]
        probing = capped[counts.minority(capped, done) > 0]
        # Every probing node flipped this round (it has minority points), and its
        # probes came with those flips.
        for b in probing.tolist():
            counts.probes[b] = np.concatenate([counts.probes[b], self.asked_probes.pop(b)])
        self.asked_probes.clear()
        if index + 1 == self.quiet:
            for b in probing.tolist():
                self.last[b] += noisy_rounds(int(counts.probes[b].sum()),
                                             int(self.edges[b][self.leads[b][0]].sum()), done)
        return capped

    def _probe_plan(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(node, pair, column)`` of the probe flips of ``nodes`` on their pairs not
        yet probed (purpose ``"search-probe"``)."""
        done, probes = self.done, self.counts.probes
        starts = [(b, probes[b].size) for b in nodes.tolist()]
        node, pair, _ = _runs([(b, 0, start) for b, start in starts], done)
        if not node.size:
            return node, node, node
        column = np.concatenate([
            probe_variables(self.seed, self.paths[b], self.free[b], start, done)
            for b, start in starts])
        return node, pair, column.astype(np.int64)

    def _probe_edges(self, nodes: np.ndarray, node: np.ndarray, pair: np.ndarray,
                     flipped: np.ndarray) -> dict[int, np.ndarray]:
        """Each node's new probe edges from the values of its :meth:`_probe_plan` flips."""
        if not nodes.size:
            return {}
        new = flipped != self.counts.values[node, 2 * pair]
        edges: dict[int, np.ndarray] = {}
        at = 0
        for b in nodes.tolist():
            length = self.done - self.counts.probes[b].size
            edges[b], at = new[at:at + length], at + length
        return edges

    def _rules_at_cap(self, capped: np.ndarray, index: int) -> None:
        """Rules 4 to 6 for the nodes of ``capped`` whose last round this still is."""
        eps = self.params.eps
        assert eps is not None, "validate() checks"
        for b in capped.tolist():
            if self.last[b] != index + 1:
                continue
            counts, free, terms = self.counts, self.free[b], self.terms[self.free_counts[b]]
            rule = cap_rule(counts.state(b, self.done), free, eps, terms)
            if rule == "no structure":
                self._finish(b, None, None, rule, 0, False)
            elif rule == "correlation":
                # Unanimous to the cap, yet the inherited points correlate: nothing was
                # flipped.
                self._finish(b, free_leader(np.abs(counts.correlations[b]), free), None,
                             rule, 0, False)
            else:
                leader, runner, a, lead_b = self.leads[b]
                self._finish(b, leader, runner, rule, a - lead_b, False, is_guesswork(
                    self.edges[b][leader], counts.probes[b], terms.guesswork))

    def _finish(self, b: int, variable: int | None, runner: int | None, rule: str,
                margin: int, certified: bool, guesswork: bool = False) -> None:
        """Node ``b`` is decided: its :class:`SearchNode`, over the pairs drawn so far."""
        counts, done = self.counts, self.done
        self.results[b] = SearchNode(
            variable, runner, rule, margin, done, int(counts.disagreements[b]), counts.votes[b],
            certified, Labelled(counts.words[b, :2 * done], counts.values[b, :2 * done]),
            counts.correlations[b], self._probe_count(b), guesswork)

    def _probe_count(self, b: int) -> int:
        """Node ``b``'s probe edges so far."""
        return int(self.counts.probes[b].sum())
