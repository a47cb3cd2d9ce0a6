"""A group's round through compiled kernels (:mod:`lca.search.kernels`), the numpy code's twin.

:class:`CompiledGroup` runs the phases of :class:`~lca.search.group.NodeGroup`
in the same order (its :meth:`~lca.search.group.NodeGroup.steps`), with the
same requests and the same :class:`~lca.search.group.SearchNode` results;
each phase's arithmetic is one or two compiled calls over plain arrays
instead of dozens of numpy calls. The numpy code stays the reference
(``tests/test_search_compiled.py`` compares the two bit for bit).

Which code runs is :func:`kernel_path`'s choice: the compiled kernels when
numba is installed (``pip install 'lca[fast]'``) and the node fits them
(``n`` below the selected-order kernel's :data:`~lca.search.hybrids.SELECTED_MIN_N`,
at most :data:`MAX_PAIRS` pairs), else numpy. The
environment variable ``LCA_KERNELS`` overrides it: ``numpy`` always runs the
reference, ``compiled`` refuses to run without numba.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from typing import Any

import numpy as np

from lca.derive import Path
from lca.engine import CallCosts, Request, Steps
from lca.params import Params
from lca.search import rules
from lca.search.group import NodeGroup
from lca.search.hybrids import SELECTED_MIN_N, part_orders, search_groups, steps_per_request
from lca.search.rules import FLIP, ORDER, probe_variables

MAX_PAIRS = 1 << 24
"""Most pairs a node may draw on the compiled path: every count, lead and square
of a rule then fits a double exactly (``(2 * MAX_PAIRS)**2 < 2**53``)."""

KERNELS_VARIABLE = "LCA_KERNELS"
"""The environment variable that picks the kernels: ``auto`` (the default),
``compiled`` or ``numpy``."""


def numba_version() -> str | None:
    """numba's version if it is installed (without importing it), else ``None``."""
    if importlib.util.find_spec("numba") is None:
        return None
    from importlib.metadata import version

    return version("numba")


def kernel_path(params: Params) -> str:
    """``"compiled"`` or ``"numpy"``: the kernels a node of ``params`` runs on here.

    Raises ``RuntimeError`` when ``LCA_KERNELS=compiled`` asks for kernels that
    cannot run (numba missing), and ``ValueError`` for an unknown value.
    """
    wanted = os.environ.get(KERNELS_VARIABLE, "auto")
    if wanted == "numpy":
        return "numpy"
    if wanted not in ("auto", "compiled"):
        raise ValueError(f"The environment variable {KERNELS_VARIABLE} must be 'auto', "
                         f"'compiled' or 'numpy'. Got {wanted!r} instead.")
    if not fits(params):  # numba is not even imported
        return "numpy"
    if kernel_module() is None:
        if wanted == "compiled":
            raise RuntimeError(f"{KERNELS_VARIABLE}=compiled needs numba: pip install "
                               "'lca[fast]'")
        return "numpy"
    return "compiled"


def fits(params: Params) -> bool:
    """Whether a node of ``params`` fits the compiled kernels (below the selected
    orders' widths, and few enough pairs for exact rules in doubles)."""
    pairs = rules.schedule(params.first_round, params.score_samples)[0][-1]
    return params.n < SELECTED_MIN_N and pairs <= MAX_PAIRS


def kernels_text(params: Params) -> str:
    """Which kernels a node of ``params`` runs on here, and why, for describe()."""
    if kernel_path(params) == "compiled":
        return (f"compiled (numba {numba_version()}; {KERNELS_VARIABLE}=numpy runs the "
                "numpy reference)")
    if os.environ.get(KERNELS_VARIABLE) == "numpy":
        return f"numpy ({KERNELS_VARIABLE}=numpy)"
    if not fits(params):
        return (f"numpy (the compiled kernels stop below n = {SELECTED_MIN_N:,} and at "
                "2**24 pairs)")
    return "numpy (pip install 'lca[fast]' for the compiled kernels)"


@functools.cache
def kernel_module() -> Any:
    """:mod:`lca.search.kernels`, imported (and numba with it) on first use; ``None``
    without numba."""
    if importlib.util.find_spec("numba") is None:
        return None
    from lca.search import kernels

    return kernels


# Up to this many variables the kernel sorts each pair's switching order, beyond numpy
# does (lca.search.hybrids.switching_orders, the same orders): on 35 random pairs the
# kernel took 0.45x numpy's time at n = 61 and 1.1x at n = 120, 2.4x at n = 1,000.
_KERNEL_SORT_MAX_N = 100


def search_steps(n: int, keys: list[int], node: np.ndarray, pair: np.ndarray,
                 x: np.ndarray, y: np.ndarray, fx: np.ndarray, round_pairs: tuple[int, int],
                 paths: Any, lookahead: int = 1) -> Steps:
    """:func:`lca.search.hybrids.search_steps` through the kernels: the same groups,
    requests and found coordinates (``n`` below the selected orders' widths).

    Each pair keeps ``h_lo`` and its switching order (3 bytes per variable, as
    the numpy code's segments); a request's rows are ``h_lo`` with the segment
    up to each asked ``mid`` switched.
    """
    kernels = kernel_module()
    assert kernels is not None and n < SELECTED_MIN_N, "kernel_path checks"
    found = np.empty(node.size, dtype=np.int64)
    lookahead = steps_per_request(n, lookahead)
    for members, differing, lengths, parts in search_groups(n, keys, node, pair, x, y,
                                                            round_pairs, paths, lookahead):
        if n <= _KERNEL_SORT_MAX_N:
            order = np.empty((members.size, int(lengths.max())), dtype=np.int32)
            for first, priority in parts:
                kernels.switching_orders(priority, differing, n, order, first)
        else:  # numpy's sorts are faster on long rows
            order = part_orders(parts, differing, int(lengths.max()), n)
        hybrid, final, active, lo, hi, fx_active, owner, mids, count, rows = \
            kernels.search_start(x[members], lengths, fx[members], lookahead, n)
        while count:
            values = yield Request(ORDER, rows, functools.partial(
                kernels.search_rows, hybrid, order, active, lo, owner, mids), paths)
            count, rows = kernels.search_advance(hybrid, order, active, count, lo, hi,
                                                 fx_active, values, lookahead, final, owner,
                                                 mids)
        found[members] = kernels.found_coordinates(order, final)
    return found


class CompiledGroup(NodeGroup):
    """:class:`~lca.search.group.NodeGroup` with each phase's arithmetic compiled.

    The same phases in the same order (the steps are the parent's), the same
    requests and results. A node's flip edges live in arrays: ``edge_var[b]``
    lists the candidates it measured (in the order it first measured them),
    ``edges[b, slot, j]`` their edge on pair ``j``; its probe edges are
    ``probes[b, :probe_len[b]]``.
    """

    def __init__(self, n: int, seed: int, paths: list[Path], params: Params,
                 inherited_counts: np.ndarray, inherited_correlations: np.ndarray,
                 costs: CallCosts | None = None) -> None:
        super().__init__(n, seed, paths, params, inherited_counts, inherited_correlations,
                         costs)
        kernels = kernel_module()
        assert kernels is not None, "kernel_path checks"
        self.kernels = kernels
        size_b, most = len(paths), self.rounds[-1]
        # Each round measures at most K + 1 candidates, some of them new.
        slots = (rules.SEARCH_CANDIDATES + 1) * len(self.rounds)
        self.edge_var = np.full((size_b, slots + 1), -1, dtype=np.int64)
        self.edge_len = np.zeros((size_b, slots + 1), dtype=np.int64)
        self.edge_bits = np.zeros((size_b, slots, most), dtype=np.bool_)
        self.members = np.full((size_b, rules.SEARCH_CANDIDATES + 1), -1, dtype=np.int64)
        self.probe_bits = np.zeros((size_b, most), dtype=np.bool_)
        self.asked = np.zeros((size_b, most), dtype=np.bool_)
        self.probe_len = np.zeros(size_b, dtype=np.int64)
        self.lead_table = np.zeros((size_b, 4), dtype=np.int64)
        terms = [self.terms[count] for count in self.free_counts]
        self.lead_terms = np.array([t.lead for t in terms])
        self.vote_terms = np.array([t.votes for t in terms])
        self.correlation_terms = np.array([t.correlation for t in terms])
        self.guess_terms = np.array([t.guesswork for t in terms])
        self.free_count_array = np.array(self.free_counts, dtype=np.int64)

    def _search(self, words: np.ndarray, values: np.ndarray, size: int) -> Steps:
        active, done, counts = self.active, self.done, self.counts
        disagree = values[:, 0::2] != values[:, 1::2]
        node, pair = np.nonzero(disagree)
        if node.size:
            found = yield from search_steps(
                self.n, [self.order_keys[b] for b in active], node, done + pair,
                words[node, 2 * pair], words[node, 2 * pair + 1], values[node, 2 * pair],
                (done, size), self._names(active), self._steps_per_request(node.size))
            self.kernels.add_votes(active, node, found, counts.votes)

    def _add_sums(self, words: np.ndarray, values: np.ndarray, size: int) -> None:
        counts = self.counts
        self.kernels.add_sums(words, values, self.active, self.n, counts.correlations,
                              counts.labelled, counts.own_total, counts.disagreements)

    def _rules_after_round(self, index: int) -> Steps:
        active, done, counts = self.active, self.done, self.counts
        most = active.size * done * (rules.SEARCH_CANDIDATES + 1)
        node = np.empty(most, dtype=np.int64)
        pair, column = np.empty_like(node), np.empty_like(node)
        status = np.empty(active.size, dtype=np.int64)
        flips = self.kernels.plan_flips(
            active, done, self.zero_points, rules.SEARCH_CANDIDATES, self.free, counts.votes,
            counts.correlations, counts.own_total, self.edge_var, self.edge_len, self.members,
            status, node, pair, column)
        for b in active[status == 1].tolist():
            self._finish(b, None, None, "constant", 0, True)
        flipping = active[status == 0]
        if not flipping.size:
            return
        capped = flipping[self.last[flipping] == index + 1]
        probe_node, probe_pair, probe_column = self._probe_plan(capped)
        node = np.concatenate([node[:flips], probe_node])
        pair = np.concatenate([pair[:flips], probe_pair])
        column = np.concatenate([column[:flips], probe_column])
        flipped = yield Request(FLIP, node.size, functools.partial(
            self.kernels.flip_rows, counts.words, node, pair, column, self.n),
            self._names(flipping))
        self.kernels.record_flips(flipped, node, pair, column, flips, counts.values,
                                  self.edge_var, self.edge_len, self.edge_bits, self.asked)
        certified = np.empty(flipping.size, dtype=np.bool_)
        self.kernels.influence_leads(flipping, done, self.members, self.edge_var,
                                     self.edge_bits, self.lead_terms, self.lead_table,
                                     certified)
        for b in flipping[certified].tolist():
            leader, runner, a, lead_b = self.lead_table[b].tolist()
            self._finish(b, leader, None if runner < 0 else runner, "influence", a - lead_b,
                         True)

    def _probe_plan(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        done = self.done
        starts = self.probe_len[nodes].tolist()
        pieces = [(np.full(done - start, b), np.arange(start, done),
                   probe_variables(self.seed, self.paths[b], self.free[b], start, done))
                  for b, start in zip(nodes.tolist(), starts, strict=True) if start < done]
        if not pieces:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        return tuple(np.concatenate(parts).astype(np.int64)  # type: ignore[return-value]
                     for parts in zip(*pieces, strict=True))

    def _probe(self, index: int) -> np.ndarray:
        active, done, counts = self.active, self.done, self.counts
        capped = active[self.last[active] == index + 1]
        self.kernels.read_probes(capped, done, index + 1 == self.quiet, rules.NOISY_ROUNDS,
                                 counts.own_total, self.probe_bits, self.probe_len, self.asked,
                                 self.edge_var, self.edge_bits, self.lead_table, self.last)
        return capped

    def _rules_at_cap(self, capped: np.ndarray, index: int) -> None:
        eps = self.params.eps
        assert eps is not None, "validate() checks"
        counts = self.counts
        outcome = np.empty(capped.size, dtype=np.int64)
        self.kernels.cap_rules(capped, self.done, eps, self.free, self.free_count_array,
                               counts.votes, counts.correlations, counts.labelled,
                               counts.own_total, counts.disagreements, self.probe_bits,
                               self.probe_len, self.edge_var, self.edge_bits, self.lead_table,
                               self.last, index + 1, self.vote_terms, self.correlation_terms,
                               self.guess_terms, outcome)
        for b, rule in zip(capped.tolist(), outcome.tolist(), strict=True):
            leader, runner, a, lead_b = self.lead_table[b].tolist()
            if rule == 0:
                self._finish(b, None, None, "no structure", 0, False)
            elif rule == 1:
                self._finish(b, leader, None, "correlation", 0, False)
            elif rule > 1:
                self._finish(b, leader, None if runner < 0 else runner, "influence",
                             a - lead_b, False, rule == 3)

    def _probe_count(self, b: int) -> int:
        return int(np.count_nonzero(self.probe_bits[b, :self.probe_len[b]]))
