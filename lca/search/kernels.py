"""A node's round as compiled loops over plain arrays (numba), for :mod:`lca.search.compiled`.

Each kernel computes what the numpy code of :mod:`lca.search.hybrids`,
:mod:`lca.search.sums` and :mod:`lca.search.rules` computes, which stays the
reference: ``tests/test_search_compiled.py`` runs both over random nodes and
every known answer and compares every request and every decision bit for
bit. Only arithmetic lives here: derived words (xxh3 keys, Philox words) are
made by :mod:`lca.derive` and handed in as arrays, and every threshold of a
rule (a ``float`` of :class:`~lca.search.rules.Terms`) is computed in Python
and handed in. Comparisons between an integer and a double are those of
docs/randomness.md §6: exact while the integers stay below ``2**53``, which
:data:`lca.search.compiled.MAX_PAIRS` guarantees with room to spare.

This module imports numba; :mod:`lca.search.compiled` imports it only when
the compiled path runs (``LCA_KERNELS``), so ``import lca`` never pays for it.
Compiled code is cached on disk (``cache=True``); where no cache directory is
writable, each process compiles in memory instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from lca.estimate import lead_is_certified
from lca.search import rules


def _compiled(function: Callable[..., Any]) -> Any:
    # No divisor here is ever 0: numpy's error model leaves out the checks (and their
    # code, which compiles slowly).
    try:
        return numba.njit(cache=True, nogil=True, error_model="numpy")(function)
    except RuntimeError:  # numba found no writable cache directory
        return numba.njit(nogil=True, error_model="numpy")(function)


# -- the binary searches ---------------------------------------------------------------


@_compiled
def switching_orders(priority: np.ndarray, differing: np.ndarray, n: int, order: np.ndarray,
                     first: int) -> None:
    """Rows ``first, first + 1, ...`` of ``order``: each pair's differing coordinates in
    ascending ``(priority, index)``, from its priority row (``priority[i]`` for pair
    ``first + i``).

    As lca.search.hybrids.switching_orders: a sort of words that hold a
    coordinate's priority's high bits above its index; where two of a pair's
    words share their high bits, that pair is ordered again by its exact
    priorities. For the short rows it runs on (lca.search.compiled sorts long
    ones with numpy), a Shell sort: a few lines, quick to compile.
    """
    bits = 1
    while (1 << bits) <= n:
        bits += 1
    low = np.uint64((1 << bits) - 1)
    high = ~low
    keys = np.empty(n, dtype=np.uint64)
    for i in range(priority.shape[0]):
        pair = first + i
        length = 0
        for c in range(n):
            if (differing[pair, c >> 6] >> np.uint64(c & 63)) & np.uint64(1):
                keys[length] = (priority[i, c] & high) | np.uint64(c)
                length += 1
        _shell_sort(keys, length)
        tied = False
        for t in range(length):
            order[pair, t] = keys[t] & low
            tied |= t > 0 and (keys[t] & high) == (keys[t - 1] & high)
        if tied:  # exact priorities, ties to the lower index: the words in index order
            for t in range(length):
                c = order[pair, t]
                keys[t] = priority[i, c]
            _insertion_sort_pairs(keys, order[pair], length)


@_compiled
def _shell_sort(keys: np.ndarray, length: int) -> None:
    """Sort ``keys[:length]`` (distinct words) in place."""
    gap = 1
    while gap < length // 3:
        gap = 3 * gap + 1
    while gap:
        for t in range(gap, length):
            key = keys[t]
            at = t
            while at >= gap and keys[at - gap] > key:
                keys[at] = keys[at - gap]
                at -= gap
            keys[at] = key
        gap //= 3


@_compiled
def _insertion_sort_pairs(keys: np.ndarray, coords: np.ndarray, length: int) -> None:
    """Sort ``coords[:length]`` by ``(keys, coords)`` ascending, ``keys`` alongside."""
    for t in range(1, length):
        key, coord = keys[t], coords[t]
        at = t
        while at and (keys[at - 1] > key or (keys[at - 1] == key and coords[at - 1] > coord)):
            keys[at], coords[at] = keys[at - 1], coords[at - 1]
            at -= 1
        keys[at], coords[at] = key, coord


@_compiled
def search_start(x: np.ndarray, lengths: np.ndarray, fx: np.ndarray, lookahead: int,
                 n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                  np.ndarray, np.ndarray, np.ndarray, int, int]:
    """A group's binary searches before their first request: each pair's kept ``h_lo =
    x`` (unpacked), its final ``hi`` so far (its length: a pair of length 1 is not
    searched), the searching pairs (``active``, with ``lo``, ``hi`` and ``f(x)``), and
    the first request's plan (search_plan): ``(hybrid, final, active, lo, hi, fx,
    owner, mids, count, rows)``."""
    m = lengths.size
    hybrid = np.empty((m, n), dtype=np.int8)
    for pair in range(m):
        _unpack(x[pair], hybrid[pair])
    final = lengths.copy()
    count = 0
    for pair in range(m):
        count += lengths[pair] > 1
    active = np.empty(count, dtype=np.int64)
    lo = np.zeros(count, dtype=np.int64)
    hi = np.empty(count, dtype=np.int64)
    fx_active = np.empty(count, dtype=fx.dtype)
    at = 0
    for pair in range(m):
        if lengths[pair] > 1:
            active[at], hi[at], fx_active[at] = pair, lengths[pair], fx[pair]
            at += 1
    slots = (1 << lookahead) - 1
    owner = np.empty(count * slots, dtype=np.int64)
    mids = np.empty(count * slots, dtype=np.int64)
    rows = search_plan(count, lo, hi, lookahead, owner, mids)
    return hybrid, final, active, lo, hi, fx_active, owner, mids, count, rows


@_compiled
def _unpack(point: np.ndarray, out: np.ndarray) -> None:
    """A packed point's ``±1`` coordinates (a set bit is -1)."""
    n = out.size
    for w in range(point.size):
        word = point[w]
        for j in range(min(64, n - 64 * w)):
            out[64 * w + j] = 1 - 2 * np.int8((word >> np.uint64(j)) & np.uint64(1))


@_compiled
def search_plan(count: int, lo: np.ndarray, hi: np.ndarray, lookahead: int,
                owner: np.ndarray, mids: np.ndarray) -> int:
    """The hybrids one request asks: for each of the first ``count`` searching pairs,
    in order, the ``mid`` of every slot of its next ``lookahead`` steps that is still
    searched, in heap order (lca.search.hybrids._lookahead_mids). Writes each row's
    pair (a position among the searching pairs) and ``mid``; returns the rows."""
    slots = (1 << lookahead) - 1
    a = np.empty(slots, dtype=np.int64)
    b = np.empty(slots, dtype=np.int64)
    rows = 0
    for i in range(count):
        _slot_intervals(lo[i], hi[i], a, b)
        for k in range(slots):
            if b[k] - a[k] > 1:
                owner[rows] = i
                mids[rows] = (a[k] + b[k]) // 2
                rows += 1
    return rows


@_compiled
def _slot_intervals(lo: int, hi: int, a: np.ndarray, b: np.ndarray) -> None:
    """The interval ``[a[k], b[k])`` of every slot of the next steps of a search at
    ``[lo, hi)``, in heap order: slot ``k``'s children ``2k + 1`` and ``2k + 2`` are
    its halves below and above its ``mid`` (lca.search.hybrids._lookahead_mids)."""
    a[0], b[0] = lo, hi
    for k in range((a.size - 1) // 2):
        mid = (a[k] + b[k]) // 2
        a[2 * k + 1], b[2 * k + 1] = a[k], mid
        a[2 * k + 2], b[2 * k + 2] = mid, b[k]


@_compiled
def search_rows(hybrid: np.ndarray, order: np.ndarray, active: np.ndarray, lo: np.ndarray,
                owner: np.ndarray, mids: np.ndarray, first: int, last: int) -> np.ndarray:
    """Rows ``first..last-1`` of a request: pair ``active[owner[r]]``'s kept ``h_lo``
    with ``order[lo:mids[r]]`` switched (negated: ``y = -x`` where they differ)."""
    n = hybrid.shape[1]
    out = np.empty((last - first, n), dtype=np.int8)
    for r in range(first, last):
        i = owner[r]
        pair = active[i]
        row = out[r - first]
        for c in range(n):
            row[c] = hybrid[pair, c]
        for t in range(lo[i], mids[r]):
            c = order[pair, t]
            row[c] = -row[c]
    return out


@_compiled
def search_advance(hybrid: np.ndarray, order: np.ndarray, active: np.ndarray, count: int,
                   lo: np.ndarray, hi: np.ndarray, fx: np.ndarray, values: np.ndarray,
                   lookahead: int, final: np.ndarray, owner: np.ndarray,
                   mids: np.ndarray) -> tuple[int, int]:
    """Replay ``lookahead`` steps of each of the first ``count`` searching pairs with the
    values of its request's rows (as search_plan laid them out): ``f(h_mid) = f(x)``
    keeps ``[mid, hi)``, else ``[lo, mid)``. A pair whose ``lo`` moved has
    ``order[lo:new lo]`` switched in its kept ``h_lo``; a pair whose interval is one
    coordinate wide leaves the searching ones (its ``hi`` goes to ``final``).
    Compacts ``active``, ``lo``, ``hi`` and ``fx`` in order and plans the next
    request; returns the pairs still searching and its rows."""
    slots = (1 << lookahead) - 1
    a = np.empty(slots, dtype=np.int64)
    b = np.empty(slots, dtype=np.int64)
    row = np.full(slots, -1, dtype=np.int64)
    at = 0
    kept = 0
    for i in range(count):
        _slot_intervals(lo[i], hi[i], a, b)
        for k in range(slots):
            row[k] = -1
            if b[k] - a[k] > 1:
                row[k] = at
                at += 1
        new_lo, new_hi, slot = lo[i], hi[i], 0
        for _ in range(lookahead):
            if new_hi - new_lo > 1:
                mid = (new_lo + new_hi) // 2
                if values[row[slot]] == fx[i]:
                    new_lo = mid
                    slot = 2 * slot + 2
                else:
                    new_hi = mid
                    slot = 2 * slot + 1
        pair = active[i]
        for t in range(lo[i], new_lo):
            c = order[pair, t]
            hybrid[pair, c] = -hybrid[pair, c]
        if new_hi - new_lo > 1:
            active[kept], lo[kept], hi[kept], fx[kept] = pair, new_lo, new_hi, fx[i]
            kept += 1
        else:
            final[pair] = new_hi
    return kept, search_plan(kept, lo, hi, lookahead, owner, mids)


@_compiled
def found_coordinates(order: np.ndarray, final: np.ndarray) -> np.ndarray:
    """Each pair's found coordinate: the ``final``-th of its switching order."""
    out = np.empty(final.size, dtype=np.int64)
    for pair in range(final.size):
        out[pair] = order[pair, final[pair] - 1]
    return out


# -- a round's points, votes and sums -------------------------------------------------


@_compiled
def add_votes(active: np.ndarray, node: np.ndarray, found: np.ndarray,
              votes: np.ndarray) -> None:
    """One vote for each search's found coordinate (pair ``i`` of node ``active[node[i]]``)."""
    for i in range(node.size):
        votes[active[node[i]], found[i]] += 1


@_compiled
def add_sums(words: np.ndarray, values: np.ndarray, active: np.ndarray, n: int,
             correlations: np.ndarray, labelled: np.ndarray, own_total: np.ndarray,
             disagreements: np.ndarray) -> None:
    """Add a round's points (``words (A, 2 c, W)`` of the ``active`` nodes, and their
    values) to each node's ``sum f(u) u_i``, its labelled points, its total and its
    disagreeing pairs."""
    signed = np.zeros(n, dtype=np.int64)
    for j in range(active.size):
        b = active[j]
        signed[:] = 0
        total = 0
        for k in range(words.shape[1]):
            total += values[j, k]
            _add_set_bits(words[j, k], values[j, k], signed, n)
        _add_correlations(signed, total, correlations[b])
        labelled[b] += words.shape[1]
        own_total[b] += total
        for k in range(0, words.shape[1], 2):
            disagreements[b] += values[j, k] != values[j, k + 1]


@_compiled
def _add_set_bits(point: np.ndarray, value: int, signed: np.ndarray, n: int) -> None:
    """``signed[i] += value`` for every coordinate ``i`` of a packed point that is -1."""
    for w in range(point.size):
        word = point[w]
        for j in range(min(64, n - 64 * w)):
            signed[64 * w + j] += value * np.int64((word >> np.uint64(j)) & np.uint64(1))


@_compiled
def _add_correlations(signed: np.ndarray, total: int, out: np.ndarray) -> None:
    """``out += sum f(u) u_i`` of points whose values sum to ``total`` and whose
    ``-1`` coordinates' values sum to ``signed``: ``f(u) u_i`` is ``f(u)``, less twice
    it where ``u_i = -1``."""
    for c in range(out.size):
        out[c] += total - 2 * signed[c]


@_compiled
def point_sums(words: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """``sum_k f(u_k) u_k,i`` over packed points (lca.search.sums.grouped_correlations of
    one block)."""
    signed = np.zeros(n, dtype=np.int64)
    total = 0
    for k in range(values.size):
        total += values[k]
        _add_set_bits(words[k], values[k], signed, n)
    out = np.zeros(n, dtype=np.int64)
    _add_correlations(signed, total, out)
    return out


@_compiled
def hand_down(inherited_words: np.ndarray, inherited_values: np.ndarray,
              own_words: np.ndarray, own_values: np.ndarray, variable: int,
              n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A split's pool (its inherited points, then its own) on each branch of
    ``variable``: the ``+1`` branch's points and values, the ``-1`` branch's, and the
    ``+1`` branch's correlation sums (lca.search.lineage.PackedLineage.hand_down)."""
    word, bit = variable >> 6, np.uint64(variable & 63)
    minus = 0
    for k in range(inherited_values.size):
        minus += (inherited_words[k, word] >> bit) & np.uint64(1)
    for k in range(own_values.size):
        minus += (own_words[k, word] >> bit) & np.uint64(1)
    plus = inherited_values.size + own_values.size - minus
    width = own_words.shape[1]
    sides = (np.empty((plus, width), dtype=np.uint64), np.empty(plus, dtype=np.int8),
             np.empty((minus, width), dtype=np.uint64), np.empty(minus, dtype=np.int8))
    at = _split(inherited_words, inherited_values, word, bit, sides, 0, 0)
    _split(own_words, own_values, word, bit, sides, at[0], at[1])
    return sides[0], sides[1], sides[2], sides[3], point_sums(sides[0], sides[1], n)


@_compiled
def _split(words: np.ndarray, values: np.ndarray, word: int, bit: np.uint64,
           sides: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], at_plus: int,
           at_minus: int) -> tuple[int, int]:
    """Copy each point to the ``+1`` or ``-1`` side of ``sides`` by its coordinate
    (bit ``bit`` of word ``word``), from ``at_plus`` and ``at_minus`` on; where they end."""
    plus_words, plus_values, minus_words, minus_values = sides
    for k in range(values.size):
        if (words[k, word] >> bit) & np.uint64(1):
            minus_words[at_minus], minus_values[at_minus] = words[k], values[k]
            at_minus += 1
        else:
            plus_words[at_plus], plus_values[at_plus] = words[k], values[k]
            at_plus += 1
    return at_plus, at_minus


# -- the rules: candidates, flips, leads, probes, the caps ----------------------------


@_compiled
def _free_leader(scores: np.ndarray, free: np.ndarray, absolute: bool) -> int:
    """The free variable of highest score (or |score|), ties to the lowest index."""
    best, leader = -1, -1
    for c in range(scores.size):
        if free[c]:
            score = abs(scores[c]) if absolute else scores[c]
            if leader < 0 or score > best:
                best, leader = score, c
    return leader


@_compiled
def _minority(points: int, total: int) -> int:
    plus = (points + total) // 2
    return min(plus, points - plus)


@_compiled
def plan_flips(active: np.ndarray, done: int, zero_points: int, candidates_k: int,
               free: np.ndarray, votes: np.ndarray, correlations: np.ndarray,
               own_total: np.ndarray, edge_var: np.ndarray, edge_len: np.ndarray,
               members: np.ndarray, status: np.ndarray, node: np.ndarray, pair: np.ndarray,
               column: np.ndarray) -> int:
    """Rules 1 and 2 for the ``active`` nodes, and the flips of the others' candidates.

    ``status[j]``: 1 for a certified constant (rule 1), 2 for unanimous (rule 2:
    waits), 0 for a node that flips. A flipping node's candidates
    (lca.search.rules.candidates, ``candidates_k`` vote leaders) go to
    ``members[b]`` (padded with -1), each given its slot in ``edge_var[b]``
    (a new one from pair 0); each candidate's flips of the pairs it was not
    flipped on are written as ``(node, pair, column)``, node by node, candidate
    by candidate. Returns the flips.
    """
    flips = 0
    points = 2 * done
    for j in range(active.size):
        b = active[j]
        minority = _minority(points, own_total[b])
        if minority == 0:
            status[j] = 1 if points >= zero_points else 2
            continue
        status[j] = 0
        members[b, :] = -1
        chosen = 0
        # Vote leaders: most votes first, ties to the lowest index, with a vote.
        for _ in range(candidates_k):
            best, leader = 0, -1
            for c in range(votes.shape[1]):
                if free[b, c] and votes[b, c] > best:
                    taken = False
                    for m in range(chosen):
                        taken |= members[b, m] == c
                    if not taken:
                        best, leader = votes[b, c], c
            if leader < 0:
                break
            members[b, chosen] = leader
            chosen += 1
        leader = _free_leader(correlations[b], free[b], True)
        present = False
        for m in range(chosen):
            present |= members[b, m] == leader
        if not present:
            members[b, chosen] = leader
            chosen += 1
        for m in range(chosen):
            c = members[b, m]
            slot = 0
            while edge_var[b, slot] >= 0 and edge_var[b, slot] != c:
                slot += 1
            if edge_var[b, slot] < 0:
                edge_var[b, slot], edge_len[b, slot] = c, 0
            for p in range(edge_len[b, slot], done):
                node[flips], pair[flips], column[flips] = b, p, c
                flips += 1
    return flips


@_compiled
def flip_rows(words: np.ndarray, node: np.ndarray, pair: np.ndarray, column: np.ndarray,
              n: int, first: int, last: int) -> np.ndarray:
    """Flips ``first..last-1``: the first point of pair ``pair[i]`` of node ``node[i]``
    (``words (B, 2 Q, W)``) with coordinate ``column[i]`` negated, unpacked to ``±1``."""
    out = np.empty((last - first, n), dtype=np.int8)
    for i in range(first, last):
        row = out[i - first]
        _unpack(words[node[i], 2 * pair[i]], row)
        row[column[i]] = -row[column[i]]
    return out


@_compiled
def record_flips(flipped: np.ndarray, node: np.ndarray, pair: np.ndarray,
                 column: np.ndarray, flips: int, values: np.ndarray, edge_var: np.ndarray,
                 edge_len: np.ndarray, edges: np.ndarray, asked: np.ndarray) -> None:
    """A round's flip edges: flip ``i < flips`` is a candidate's, added to its edges; the
    rest are probes, each held in ``asked[node, pair]`` until read."""
    for i in range(flipped.size):
        b, p = node[i], pair[i]
        edge = flipped[i] != values[b, 2 * p]
        if i >= flips:
            asked[b, p] = edge
            continue
        slot = 0
        while edge_var[b, slot] != column[i]:
            slot += 1
        edges[b, slot, p] = edge
        edge_len[b, slot] = p + 1


@_compiled
def _slot(edge_var: np.ndarray, b: int, c: int) -> int:
    slot = 0
    while edge_var[b, slot] != c:
        slot += 1
    return slot


@_compiled
def _count(edges: np.ndarray, b: int, slot: int, done: int) -> int:
    total = 0
    for p in range(done):
        total += edges[b, slot, p]
    return total


@_compiled
def influence_leads(flipping: np.ndarray, done: int, members: np.ndarray,
                    edge_var: np.ndarray, edges: np.ndarray, lead_terms: np.ndarray,
                    leads: np.ndarray, certified: np.ndarray) -> None:
    """Rule 3 for each ``flipping`` node: its influence leader, runner-up and paired
    contest ``(a, b)`` (lca.search.rules.influence_lead) into ``leads[b]`` (runner -1
    when alone), and whether the lead is certified (lca.estimate.lead_is_certified)."""
    for j in range(flipping.size):
        b = flipping[j]
        leader, runner, most, second = -1, -1, -1, -1
        for m in range(members.shape[1]):
            c = members[b, m]
            if c < 0:
                break
            count = _count(edges, b, _slot(edge_var, b, c), done)
            if count > most or (count == most and c < leader):
                leader, runner, second = c, leader, most
                most = count
            elif count > second or (count == second and c < runner):
                runner, second = c, count
        if runner < 0:
            a, lead_b = most, 0
        else:
            a = lead_b = 0
            first, other = _slot(edge_var, b, leader), _slot(edge_var, b, runner)
            for p in range(done):
                a += edges[b, first, p] and not edges[b, other, p]
                lead_b += edges[b, other, p] and not edges[b, first, p]
        leads[b, 0], leads[b, 1], leads[b, 2], leads[b, 3] = leader, runner, a, lead_b
        certified[j] = _lead_is_certified(a - lead_b, a + lead_b, lead_terms[b])


@_compiled
def read_probes(capped: np.ndarray, done: int, quiet_cap: bool, noisy_rounds: int,
                own_total: np.ndarray, probes: np.ndarray, probe_len: np.ndarray,
                asked: np.ndarray, edge_var: np.ndarray, edges: np.ndarray,
                leads: np.ndarray, last: np.ndarray) -> None:
    """The probes of the ``capped`` nodes with minority points (asked with this round's
    flips) join their probe edges; at the quiet cap rule 7 may raise their ``last``
    round (lca.search.rules.noisy_rounds, ``noisy_rounds`` for NOISY_ROUNDS)."""
    for j in range(capped.size):
        b = capped[j]
        if _minority(2 * done, own_total[b]) == 0:
            continue
        for p in range(probe_len[b], done):
            probes[b, p] = asked[b, p]
        probe_len[b] = done
        if quiet_cap:
            probe_edges = _count_probes(probes, b, done)
            leader_edges = _count(edges, b, _slot(edge_var, b, leads[b, 0]), done)
            last[b] += _rounds_past_cap(probe_edges, leader_edges, done, noisy_rounds)


@_compiled
def cap_rules(capped: np.ndarray, done: int, eps: float, free: np.ndarray,
              free_counts: np.ndarray, votes: np.ndarray, correlations: np.ndarray,
              labelled: np.ndarray, own_total: np.ndarray, disagreements: np.ndarray,
              probes: np.ndarray, probe_len: np.ndarray, edge_var: np.ndarray,
              edges: np.ndarray, leads: np.ndarray, last: np.ndarray, round_number: int,
              vote_terms: np.ndarray, correlation_terms: np.ndarray,
              guess_terms: np.ndarray, outcome: np.ndarray) -> None:
    """Rules 4 to 6 for the ``capped`` nodes whose last round is ``round_number``
    (lca.search.rules.cap_rule and is_guesswork).

    ``outcome[j]``: -1 for a node rule 7 extended, 0 for "no structure" (an early
    leaf), 1 for "correlation" (its variable goes to ``leads[b, 0]``), 2 for
    "influence" and 3 for an influence split that is guesswork.
    """
    points = 2 * done
    for j in range(capped.size):
        b = capped[j]
        if last[b] != round_number:
            outcome[j] = -1
            continue
        minority = _minority(points, own_total[b])
        probe_edges = _count_probes(probes, b, probe_len[b])
        vote_leader = _free_leader(votes[b], free[b], False)
        correlation_leader = _free_leader(correlations[b], free[b], True)
        structure = _has_structure(votes[b, vote_leader], disagreements[b], free_counts[b],
                                   vote_terms[b])
        structure = structure or _correlated(correlations[b, correlation_leader], labelled[b],
                                             correlation_terms[b])
        if not structure and minority <= eps * points and _noise_like(probe_edges, minority):
            outcome[j] = 0
        elif minority == 0:
            outcome[j] = 1
            leads[b, 0] = correlation_leader
        else:
            first = _slot(edge_var, b, leads[b, 0])
            a = lead_b = 0
            for p in range(done):
                a += edges[b, first, p] and not probes[b, p]
                lead_b += probes[b, p] and not edges[b, first, p]
            outcome[j] = 2 if _lead_is_certified(a - lead_b, a + lead_b, guess_terms[b]) else 3


@_compiled
def _count_probes(probes: np.ndarray, b: int, stop: int) -> int:
    total = 0
    for p in range(stop):
        total += probes[b, p]
    return total


# The rules' scalar tests, compiled from their one definition in lca.search.rules and
# lca.estimate (NOISY_ROUNDS, which scripts may change, is passed in).
_rounds_past_cap = _compiled(rules.rounds_past_cap)
_has_structure = _compiled(rules.has_structure)
_correlated = _compiled(rules.correlated)
_noise_like = _compiled(rules.noise_like)
_lead_is_certified = _compiled(lead_is_certified)
