"""The rows a group's round asks for: its points, the hybrids of its searches, its flips.

A round's pairs that disagree are binary-searched along their hybrid paths
(:func:`search_steps`: one request per search step for every searching pair
of the group, or per ``lookahead`` steps, asking every hybrid those steps could
query). Three kernels make the same hybrid rows, chosen by ``n``:
ranks in a sorted switching order (short rows), a kept ``h_lo`` and the
segment each step switches (long rows), and a per-step selection with no
sorted order (very long rows);
candidates and probes are measured by flipping one coordinate of each pair's
first point (:func:`flip_steps`). Each function is steps (:mod:`lca.engine`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from lca import derive
from lca.engine import Request, Steps
from lca.oracle import OracleError
from lca.search.rules import FLIP, ORDER, SEARCH_BYTES

_ALL_ONES = (1 << 64) - 1


# Priorities of a node's whole round are derived in one call while they fit in
# this many bytes; beyond, one call per run of consecutive searching pairs.
_ROUND_PRIORITY_BYTES = 1 << 20


def _priorities(key: int, n: int, pairs: np.ndarray, first: int, last: int) -> np.ndarray:
    """Switching priorities ``(len(pairs), n)`` of sorted pair indices in ``[first, last)``:
    words ``k n .. k n + n - 1`` of stream 0 for pair ``k``."""
    if (last - first) * n * 8 <= _ROUND_PRIORITY_BYTES:
        block = derive.raw_words(key, 0, first * n, (last - first) * n)
        return block.reshape(last - first, n)[pairs - first]
    out = np.empty((pairs.size, n), dtype=np.uint64)
    breaks = np.flatnonzero(np.diff(pairs) != 1) + 1
    for run in np.split(np.arange(pairs.size), breaks):
        start = int(pairs[run[0]])
        out[run] = derive.raw_words(key, 0, start * n, run.size * n).reshape(run.size, n)
    return out


def _index_masks(n: int) -> tuple[np.uint64, np.uint64]:
    """The low bits that hold a coordinate's index (or index + 1) below its
    priority's high bits in one sortable word (``2^b > n + 1``), and those high bits."""
    low = (1 << (n + 1).bit_length()) - 1
    return np.uint64(low), np.uint64(_ALL_ONES ^ low)


def switching_orders(priority: np.ndarray, differing: np.ndarray,
                     n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's differing coordinates in switching order, and how many there are.

    The order is ascending ``(priority, index)`` over the differing
    coordinates only. One C-level sort over all pairs of ``(priority's high
    bits | index + 1)`` keys (the index in the low ``b`` bits, ``2^b > n + 1``;
    coordinates where the pair agrees get ``2^64 - 1`` and sort last, past
    every differing one); where two keys of a pair share their high bits the
    sort is redone exactly for that pair. Sorting whole rows is cheaper than
    first gathering the differing coordinates (measured from n = 30 to 10^5:
    0.6-0.9x the time).
    """
    diff = derive.unpack_bits(differing, n).view(bool)
    lengths = diff.sum(axis=1)
    width = max(1, int(lengths.max(initial=0)))
    low, high = _index_masks(n)
    keys = priority & high
    keys |= np.arange(1, n + 1, dtype=np.uint64)
    np.putmask(keys, ~diff, np.uint64(_ALL_ONES))
    keys.sort(axis=1)
    keys = keys[:, :width]
    shared = (keys[:, 1:] & high) == (keys[:, :-1] & high)
    shared &= np.arange(width - 1) < (lengths - 1)[:, None]
    keys &= low
    keys -= np.uint64(1)  # padding becomes low - 1, past every coordinate
    order = keys.astype(np.int32 if n < 1 << 31 else np.int64)
    if not shared.any():  # the usual case: no two keys of a pair share their high bits
        return order, lengths
    for row in np.flatnonzero(shared.any(axis=1)):
        coordinates = np.flatnonzero(diff[row])
        exact = coordinates[np.lexsort((coordinates, priority[row, coordinates]))]
        order[row, :exact.size] = exact
    return order, lengths


# Rows up to this many variables get their hybrids from ranks (one pass per row);
# longer rows negate only the segment a step switches (work in proportion to it).
# Measured with both kernels on the same random pairs: ranks are about 1.5x faster
# at n = 60 and 120, even from n = 200 to 300, slower beyond.
_RANKED_MAX_N = 256

# From this many variables no switching order is sorted: each step selects the
# coordinates it switches (a partition, linear time). Measured against the sort
# and segments on the same pairs: 0.55x the search time at n = 10^6, 0.89x at
# 10^5, even at 10^4 and slower below (a Python loop over the pairs per step).
SELECTED_MIN_N = 100_000

# Working bytes of one lookahead slot of one pair (_lookahead_mids, _lookahead_steps:
# its interval ends, mid, the row's pair, lo and mid as int64s, its value).
_SLOT_BYTES = 64

# Coordinates negated at a time when hybrids are formed: bounds the index arrays.
_SEGMENT_ELEMENTS = 1 << 18


def _ranks(order: np.ndarray, lengths: np.ndarray, n: int) -> np.ndarray:
    """Each coordinate's place in its pair's switching order (``(m, n)`` ``int16``).

    ``rank[i, order[i, t]] = t`` for ``t < lengths[i]``; coordinates where the
    pair agrees rank ``n`` (never switched). Only for ``n <= _RANKED_MAX_N``.
    """
    # The padding past each pair's order (indices >= n) lands in a spare column n.
    rank = np.full((lengths.size, n + 1), n, dtype=np.int16)
    rank[np.arange(lengths.size)[:, None], np.minimum(order, n)] = \
        np.arange(order.shape[1], dtype=np.int16)
    return rank[:, :n]


class _RankedHybrids:
    """Short rows: ``h_mid`` is ``x`` negated where a coordinate ranks below ``mid``
    (``y = -x`` on the differing coordinates), a few numpy calls per step."""

    def __init__(self, x: np.ndarray, order: np.ndarray, lengths: np.ndarray, n: int) -> None:
        self.points = derive.unpack_points(x, n)
        self.rank = _ranks(order, lengths, n)
        self.order = order

    def rows(self, active: np.ndarray, lo: np.ndarray, mid: np.ndarray, first: int,
             last: int) -> np.ndarray:
        chosen = active[first:last]
        # -v = v ^ -2 for v = ±1 in int8: XOR the switched coordinates with -2 and the
        # others with 0 (0.6-0.8x the time of np.where over both signs, measured at
        # n = 90 with 10 and 40 pairs).
        rows = np.less(self.rank[chosen], mid[first:last, None]).view(np.int8)
        rows *= -2
        rows ^= self.points[chosen]
        return rows

    def advance(self, active: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                new_lo: np.ndarray, new_hi: np.ndarray) -> None:
        """Nothing to keep: every hybrid is made from ``x``."""

    def found(self, hi: np.ndarray) -> np.ndarray:
        return self.order[np.arange(hi.size), hi - 1].astype(np.int64)


class _SegmentHybrids:
    """Long rows: each pair keeps ``h_lo``; ``h_mid`` is ``h_lo`` with the segment
    ``order[lo:mid]`` negated, and a step that moves ``lo`` negates it in ``h_lo``."""

    def __init__(self, x: np.ndarray, order: np.ndarray, n: int) -> None:
        self.hybrid = derive.unpack_points(x, n)
        self.order = order

    def rows(self, active: np.ndarray, lo: np.ndarray, mid: np.ndarray, first: int,
             last: int) -> np.ndarray:
        chosen = active[first:last]
        out = self.hybrid[chosen]
        _negate_segments(out, np.arange(last - first), self.order, chosen, lo[first:last],
                         mid[first:last])
        return out

    def advance(self, active: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                new_lo: np.ndarray, new_hi: np.ndarray) -> None:
        """Each pair's interval went from ``[lo, hi)`` to ``[new_lo, new_hi)``: switch
        ``order[lo:new_lo]`` in the kept ``h_lo`` of the pairs whose ``lo`` moved."""
        same = new_lo != lo
        moved = active[same]
        _negate_segments(self.hybrid, moved, self.order, moved, lo[same], new_lo[same])

    def found(self, hi: np.ndarray) -> np.ndarray:
        return self.order[np.arange(hi.size), hi - 1].astype(np.int64)


class _SelectedHybrids:
    """Very long rows: no switching order is sorted. Each pair keeps ``h_lo`` and the
    coordinates of its interval ``[lo, hi)`` of the order, unordered, each as one
    word: its priority's high bits above its index (as :func:`switching_orders`
    sorts). A step selects the ``mid - lo`` first of them by one partition of
    those words (the smallest by ``(priority, index)``), ``h_mid`` is ``h_lo``
    with those negated, and the interval keeps the half the answer points to. At
    the end it holds the found coordinate.

    Where the selection's boundary falls between two words with the same high
    bits, the order there depends on the priorities' low bits: those coordinates'
    exact priorities are asked of ``priorities(pair, coordinates)`` and they are
    ordered exactly. A step over ``L`` coordinates meets this with chance about
    ``L / 2^(64 - b)`` (``b`` low bits; 3e-8 at n = 10^6, where ``L`` is about
    ``n / 2`` and ``b = 20``).
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, n: int,
                 priorities: Callable[[int, np.ndarray], np.ndarray]) -> None:
        self.hybrid = derive.unpack_points(x, n)
        self.low, self.high = _index_masks(n)
        self.priorities = priorities
        # Each pair's differing coordinates, until take_priorities adds their high bits.
        self.keys = [np.flatnonzero(row).view(np.uint64)
                     for row in derive.unpack_bits(x ^ y, n)]
        self.split: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # this step's, by pair

    def take_priorities(self, first: int, priority: np.ndarray) -> None:
        """Keep the priorities of pairs ``first, first + 1, ...`` at their differing
        coordinates (``priority`` holds one full row per pair)."""
        for i, row in enumerate(priority, start=first):
            self.keys[i] |= row[self.keys[i]] & self.high

    def _selected(self, pair: int, count: int) -> tuple[np.ndarray, np.ndarray]:
        """The words of the ``count`` first coordinates of the pair's interval in the
        order, and of the others."""
        if pair not in self.split:
            part = np.partition(self.keys[pair], count - 1)
            lower, upper = part[:count], part[count:]
            boundary = part[count - 1] & self.high
            if upper.size and upper.min() & self.high == boundary:
                lower, upper = self._exact_split(pair, part, count, boundary)
            self.split[pair] = lower, upper
        return self.split[pair]

    def _exact_split(self, pair: int, part: np.ndarray, count: int,
                     boundary: np.uint64) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_selected` where words with the boundary's high bits fall on both
        sides: those coordinates in order of their exact priorities (ties to the
        lower index)."""
        high = part & self.high
        tied = part[high == boundary]
        coords = tied & self.low
        tied = tied[np.lexsort((coords, self.priorities(pair, coords.astype(np.int64))))]
        below = part[high < boundary]
        need = count - below.size
        return (np.concatenate([below, tied[:need]]),
                np.concatenate([tied[need:], part[high > boundary]]))

    def _negate(self, row: np.ndarray, words: np.ndarray) -> None:
        cols = (words & self.low).view(np.int64)  # indices below 2^63: a view, no copy
        row[cols] = -row[cols]

    def rows(self, active: np.ndarray, lo: np.ndarray, mid: np.ndarray, first: int,
             last: int) -> np.ndarray:
        chosen = active[first:last]
        out = self.hybrid[chosen]
        for row, pair, count in zip(out, chosen.tolist(), (mid - lo)[first:last].tolist(),
                                    strict=True):
            self._negate(row, self._selected(pair, count)[0])
        return out

    def advance(self, active: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                new_lo: np.ndarray, new_hi: np.ndarray) -> None:
        """One step: the interval kept one half, ``[mid, hi)`` (``lo`` moved) or
        ``[lo, mid)``; only one step's selection is cached, so no lookahead."""
        same = new_lo != lo
        mid = np.where(same, new_lo, new_hi)
        for pair, count, moved in zip(active.tolist(), (mid - lo).tolist(), same.tolist(),
                                      strict=True):
            lower, upper = self._selected(pair, count)
            if moved:
                self._negate(self.hybrid[pair], lower)
            self.keys[pair] = upper if moved else lower
        self.split.clear()

    def found(self, hi: np.ndarray) -> np.ndarray:
        return np.array([int(keys[0] & self.low) for keys in self.keys], dtype=np.int64)


# From this mean segment length on, segments are negated one row view at a time:
# measured against flat index arrays on random orders, 0.6x the time at a mean
# of 2,500 coordinates (n = 10^4) and 0.85x at 700; 3x slower at 100.
_SEGMENT_LOOP_MIN = 512


def _negate_segments(points: np.ndarray, at: np.ndarray, order: np.ndarray,
                     rows: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> None:
    """Negate ``points[at[i], order[rows[i], starts[i]:stops[i]]]`` for every ``i``, in place."""
    lengths = stops - starts
    if rows.size and lengths.sum() >= _SEGMENT_LOOP_MIN * rows.size:
        for point, row, start, stop in zip(at.tolist(), rows.tolist(), starts.tolist(),
                                           stops.tolist(), strict=True):
            view, cols = points[point], order[row, start:stop]
            view[cols] = -view[cols]
        return
    # Short segments: flat index arrays into the raveled points and orders
    # (about half the time of two-dimensional fancy indexing).
    assert points.flags.c_contiguous, "negated through a flat view"
    flat_points, flat_order = points.reshape(-1), order.reshape(-1)
    ends = np.cumsum(lengths)
    first = 0
    while first < rows.size:
        # As many rows as fit in the element bound (at least one).
        last = max(first + 1, int(np.searchsorted(ends, ends[first] - lengths[first]
                                                  + _SEGMENT_ELEMENTS, side="right")))
        size = lengths[first:last]
        which = np.repeat(np.arange(first, last), size)
        offsets = np.arange(which.size) - np.repeat(np.cumsum(size) - size, size)
        cols = flat_order[rows[which] * order.shape[1] + starts[which] + offsets] \
            + at[which] * points.shape[1]
        flat_points[cols] = -flat_points[cols]
        first = last


def _lookahead_mids(lo: np.ndarray, hi: np.ndarray, lookahead: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Every ``mid`` the next ``lookahead`` steps of each search could query.

    Slots in heap order: slot 0 is the interval ``[lo, hi)``, and slot ``k``'s
    interval ``[a, b)`` has children ``2k + 1``, ``[a, m)``, and ``2k + 2``,
    ``[m, b)``, with ``m = (a + b) // 2``: the intervals the sequential search
    reaches after ``f(h_m) != f(x)`` and ``= f(x)``. Returns each slot's ``mid``
    ``(pairs, 2**lookahead - 1)`` and whether its interval is still searched
    (``b - a > 1``); only those slots are ever reached.
    """
    a = np.empty((lo.size, (1 << lookahead) - 1), dtype=np.int64)
    b = np.empty_like(a)
    a[:, 0], b[:, 0] = lo, hi
    for depth in range(lookahead - 1):
        parents = slice((1 << depth) - 1, (1 << (depth + 1)) - 1)
        lower, upper = a[:, parents], b[:, parents]
        mid = (lower + upper) // 2
        first = (1 << (depth + 1)) - 1
        a[:, first:2 * first + 1:2], b[:, first:2 * first + 1:2] = lower, mid
        a[:, first + 1:2 * first + 2:2], b[:, first + 1:2 * first + 2:2] = mid, upper
    return (a + b) // 2, b - a > 1


def _lookahead_steps(hybrids: _RankedHybrids | _SegmentHybrids, active: np.ndarray,
                     lo: np.ndarray, hi: np.ndarray, fx: np.ndarray, paths: Any,
                     lookahead: int) -> Steps:
    """``lookahead`` steps of every search in one request: each pair's interval after them.

    The request asks each pair's hybrids at every ``mid`` of
    :func:`_lookahead_mids` that is still searched, the pair's rows together
    in heap order; the steps are then replayed with those values as the
    sequential search takes them (``f(h_mid) = f(x)`` keeps ``[mid, hi)``,
    else ``[lo, mid)``), until the interval is one coordinate wide.
    """
    mids, asked = _lookahead_mids(lo, hi, lookahead)
    owner, slot = np.nonzero(asked)
    rows = functools.partial(hybrids.rows, active[owner], lo[owner], mids[owner, slot])
    same = np.zeros(asked.shape, dtype=bool)
    same[owner, slot] = (yield Request(ORDER, owner.size, rows, paths)) == fx[owner]
    pairs, slot = np.arange(lo.size), np.zeros(lo.size, dtype=np.int64)
    for depth in range(lookahead):
        going = hi - lo > 1
        mid, kept_high = mids[pairs, slot], same[pairs, slot]
        lo, hi = np.where(going & kept_high, mid, lo), np.where(going & ~kept_high, mid, hi)
        if depth + 1 < lookahead:
            slot = 2 * slot + 1 + kept_high
    return lo, hi


def _binary_search_steps(hybrids: _RankedHybrids | _SegmentHybrids | _SelectedHybrids,
                         lengths: np.ndarray, fx: np.ndarray,
                         paths: Any, lookahead: int = 1) -> Steps:
    """Binary searches of a group of disagreeing pairs, all in lockstep.

    ``hybrids`` makes each step's rows (:class:`_RankedHybrids`,
    :class:`_SegmentHybrids` or :class:`_SelectedHybrids`, by ``n``: all give
    the same rows). Each request asks, for every searching pair, the hybrids
    of every ``mid`` its next ``lookahead`` steps could query
    (:func:`_lookahead_mids`, at most ``2**lookahead - 1``), then replays
    those steps with their values exactly as one request per step would: the
    found coordinates do not depend on ``lookahead``. Returns the found
    coordinate of each pair.
    """
    final = lengths.astype(np.int64)  # each pair's hi once its search ends
    # The searching pairs and their lo, hi and f(x), compacted: a request costs a
    # few calls on them, and a pair is dropped only in the request its search ends.
    active = np.flatnonzero(final > 1)
    lo, hi, fx = np.zeros(active.size, dtype=np.int64), final[active], fx[active]
    while active.size:
        if lookahead == 1:  # one step: every searching pair asks f(h_mid)
            mid = (lo + hi) >> 1  # lo, hi >= 0: (lo + hi) // 2
            rows = functools.partial(hybrids.rows, active, lo, mid)
            same = (yield Request(ORDER, active.size, rows, paths)) == fx
            new_lo, new_hi = np.where(same, mid, lo), np.where(same, hi, mid)
        else:
            assert not isinstance(hybrids, _SelectedHybrids), "it searches one step a call"
            new_lo, new_hi = yield from _lookahead_steps(hybrids, active, lo, hi, fx, paths,
                                                         lookahead)
        hybrids.advance(active, lo, hi, new_lo, new_hi)
        lo, hi = new_lo, new_hi
        going = hi - lo > 1
        if np.count_nonzero(going) < going.size:
            final[active[~going]] = hi[~going]
            active, lo, hi, fx = active[going], lo[going], hi[going], fx[going]
    return hybrids.found(final)


def steps_per_request(n: int, lookahead: int) -> int:
    """Binary-search steps one request asks (``Params.lookahead``): 1 with selected
    orders (``n >= SELECTED_MIN_N``), which keep one step's selection per pair."""
    return 1 if n >= SELECTED_MIN_N else lookahead


def search_steps(n: int, keys: list[int], node: np.ndarray, pair: np.ndarray,
                 x: np.ndarray, y: np.ndarray, fx: np.ndarray, round_pairs: tuple[int, int],
                 paths: Any, lookahead: int = 1) -> Steps:
    """The sensitive coordinate found for each searching pair.

    Pair ``i`` is pair ``pair[i]`` of node ``node[i]`` (sorted by node, then
    pair), with packed points ``x[i]``, ``y[i]`` and ``fx[i] = f(x[i])``;
    ``keys[b]`` is node ``b``'s :data:`ORDER` key. The hybrid ``h_t`` of a
    pair is ``x`` with the first ``t`` differing coordinates, in order of
    ascending priority (ties to the lower index), switched to ``y``. The
    search keeps ``f(h_lo) = f(x) != f(h_hi)`` from ``lo = 0, hi = L`` and
    queries ``h_mid``, ``mid = (lo + hi) // 2``, until ``hi = lo + 1``; the
    answer is the ``hi``-th coordinate in order. One request asks the
    hybrids of ``lookahead`` steps (:func:`_binary_search_steps`; the same
    answers in fewer requests), except with a selected order (``n >=
    SELECTED_MIN_N``), which searches one step per request: it keeps one
    selection per pair, and at such widths a call's cost is its rows, not
    its count. Pairs are searched in groups (:func:`search_groups`).
    """
    found = np.empty(node.size, dtype=np.int64)
    selected = n >= SELECTED_MIN_N
    lookahead = steps_per_request(n, lookahead)
    for members, differing, lengths, parts in search_groups(n, keys, node, pair, x, y,
                                                            round_pairs, paths, lookahead):
        hybrids: _RankedHybrids | _SegmentHybrids | _SelectedHybrids
        if selected:
            hybrids = _SelectedHybrids(x[members], y[members], n, functools.partial(
                _priority_words, n, keys, node[members], pair[members]))
            for first, priority in parts:
                hybrids.take_priorities(first, priority)
        else:
            order = part_orders(parts, differing, int(lengths.max()), n)
            hybrids = _RankedHybrids(x[members], order, lengths, n) if n <= _RANKED_MAX_N \
                else _SegmentHybrids(x[members], order, n)
        found[members] = yield from _binary_search_steps(hybrids, lengths, fx[members], paths,
                                                         lookahead)
    return found


def search_groups(n: int, keys: list[int], node: np.ndarray, pair: np.ndarray,
                  x: np.ndarray, y: np.ndarray, round_pairs: tuple[int, int], paths: Any,
                  lookahead: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray,
                                                    Iterator[tuple[int, np.ndarray]]]]:
    """The groups :func:`search_steps` searches one after the other: per group its
    members (positions in ``node``), their differing bits, their lengths and their
    switching priorities a part at a time (:func:`_priority_parts`).

    A group's working arrays fit in :data:`SEARCH_BYTES` (3 bytes per variable
    per pair with a sorted order, 7 with a selected one, and
    :data:`_SLOT_BYTES` per lookahead slot past the first); its priorities are
    derived a part at a time. Raises :class:`OracleError` for a pair whose two
    points are equal (the oracle answered one point with two values).
    """
    selected = n >= SELECTED_MIN_N
    slots = (1 << lookahead) - 2  # past the one slot a single step asks
    group = max(1, SEARCH_BYTES // ((7 if selected else 3) * n + _SLOT_BYTES * slots))
    part = max(1, SEARCH_BYTES // (25 * n))
    for lo in range(0, node.size, group):
        members = np.arange(lo, min(lo + group, node.size))
        differing = x[members] ^ y[members]
        lengths = np.bitwise_count(differing).sum(axis=1, dtype=np.int64)
        if not lengths.all():
            # x = y with f(x) != f(y): the oracle answered one point with two values.
            at = members[np.argmin(lengths)]
            raise OracleError(
                f"the oracle answered the same point with two different values (pair "
                f"{int(pair[at])} of the node at path {paths[int(node[at])]}): lca needs "
                "a fixed function, the same value every time a point is asked (derive "
                "random labels from the point, as lca.targets.with_label_noise does)")
        yield members, differing, lengths, _priority_parts(n, keys, node, pair, members,
                                                           part, round_pairs)


def part_orders(parts: Iterator[tuple[int, np.ndarray]], differing: np.ndarray, width: int,
            n: int) -> np.ndarray:
    """The switching orders of pairs whose points differ in ``differing``, from their
    priorities a part at a time (:func:`_priority_parts`), ``width`` wide (the longest
    pair's length) and padded with ``n`` as :func:`switching_orders` pads."""
    order: np.ndarray | None = None
    for first, priority in parts:
        sorted_part, _ = switching_orders(priority,
                                          differing[first:first + priority.shape[0]], n)
        if sorted_part.shape[0] == differing.shape[0]:
            return sorted_part  # one part: already as wide as the longest pair
        if order is None:
            order = np.full((differing.shape[0], width), n, dtype=sorted_part.dtype)
        # A part's orders are only as wide as its own longest pair.
        order[first:first + priority.shape[0], :sorted_part.shape[1]] = sorted_part
    assert order is not None, "every pair is in a part"
    return order


def _priority_words(n: int, keys: list[int], node: np.ndarray, pair: np.ndarray, at: int,
                    coords: np.ndarray) -> np.ndarray:
    """The switching priorities of pair ``at``'s ``coords`` alone: words ``pair n + c`` of
    stream 0 of its node's key, as :func:`_priorities` derives whole rows."""
    key, start = keys[int(node[at])], int(pair[at]) * n
    return np.array([derive.raw_words(key, 0, start + c, 1)[0] for c in coords.tolist()],
                    dtype=np.uint64)


def _priority_parts(n: int, keys: list[int], node: np.ndarray, pair: np.ndarray,
                    members: np.ndarray, part: int, round_pairs: tuple[int, int]
                    ) -> Iterator[tuple[int, np.ndarray]]:
    """The switching priorities of ``members``, ``part`` pairs at a time: each part's
    first position in ``members`` and its ``(pairs, n)`` priority rows."""
    for first in range(0, members.size, part):
        chunk = members[first:first + part]
        if len(keys) == 1:  # a group of one: every pair is its node's
            yield first, _priorities(keys[0], n, pair[chunk], *round_pairs)
            continue
        # Pairs come sorted by node: one run of pairs per node.
        owners, starts = np.unique(node[chunk], return_index=True)
        yield first, np.concatenate([
            _priorities(keys[b], n, pairs, *round_pairs)
            for b, pairs in zip(owners.tolist(), np.split(pair[chunk], starts[1:]),
                                strict=True)])


def flip_steps(n: int, firsts: np.ndarray, node: np.ndarray, pair: np.ndarray,
               column: np.ndarray, paths: Any) -> Steps:
    """``f(x)`` with one coordinate negated, for each flip ``i``: pair ``pair[i]`` of
    node ``node[i]`` (first points ``firsts (B, q, W)``), coordinate ``column[i]``."""

    def rows(lo: int, hi: int) -> np.ndarray:
        points = derive.unpack_points(firsts[node[lo:hi], pair[lo:hi]], n)
        at = np.arange(hi - lo)
        points[at, column[lo:hi]] = -points[at, column[lo:hi]]
        return points

    return (yield Request(FLIP, node.size, rows, paths))
