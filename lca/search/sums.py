"""Labelled points and the correlation sums ``sum f(u) u_i`` over them.

:class:`Labelled` holds packed points of a subcube and their values;
:func:`grouped_correlations` sums ``f(u) u_i`` over many blocks of them at
once (a group's own points, a lineage's inherited points), exactly, in
bounded memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lca import derive
from lca.search.rules import SEARCH_BYTES

# Rows at least this long have their correlation sums added block by block.
_LONG_ROWS = 4096


@dataclass(frozen=True)
class Labelled:
    """Packed uniform points of a subcube and their values under ``f``."""

    words: np.ndarray   # (k, W) uint64, as lca.derive.uniform_points
    values: np.ndarray  # (k,) int8, +-1

    @classmethod
    def empty(cls, n: int) -> Labelled:
        return cls(np.zeros((0, derive.words_per_point(n)), dtype=np.uint64),
                   np.zeros(0, dtype=np.int8))

    def __len__(self) -> int:
        return self.values.shape[0]

    @property
    def total(self) -> int:
        return int(self.values.sum(dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.words.nbytes + self.values.nbytes

    def rows(self, rows: np.ndarray) -> Labelled:
        """The points ``rows`` (indices or a mask), in that order."""
        return Labelled(self.words[rows], self.values[rows])

    def sides(self, variable: int) -> tuple[np.ndarray, np.ndarray]:
        """The rows whose coordinate ``variable`` is ``+1``, and those where it is ``-1``."""
        minus = is_minus(self.words[:, variable >> 6], variable)
        return np.flatnonzero(~minus), np.flatnonzero(minus)


def is_minus(column: np.ndarray, variable: int) -> np.ndarray:
    """Whether coordinate ``variable`` is ``-1`` in packed points whose word
    ``variable >> 6`` is ``column`` (a set bit is ``-1``)."""
    return (column & np.uint64(1 << (variable & 63))) != 0


def _signed_bit_sums(words: np.ndarray, signs: np.ndarray, n: int) -> np.ndarray:
    """``sum_k signs[k] bit_k`` over packed rows (``bit_k`` their 0/1 unpacked bits),
    ``int64``. Rows are unpacked ``SEARCH_BYTES // n`` at a time; each is added in
    place into a ``uint8`` total per sign, widened every 255 rows before it could
    wrap. Measured at n = 10^6 against summing masked copies in ``int32``: 0.2x."""
    out = np.zeros(n, dtype=np.int64)
    totals = {1: np.zeros(n, dtype=np.uint8), -1: np.zeros(n, dtype=np.uint8)}
    added = {1: 0, -1: 0}
    widen = {1: np.add, -1: np.subtract}  # in place, with no int64 temporaries
    step = max(1, SEARCH_BYTES // n)
    for lo in range(0, words.shape[0], step):
        bits = derive.unpack_bits(words[lo:lo + step], n)
        for row, sign in zip(bits, signs[lo:lo + step].tolist(), strict=True):
            np.add(totals[sign], row, out=totals[sign])
            added[sign] += 1
            if added[sign] == 255:
                widen[sign](out, totals[sign], out=out)
                totals[sign][:] = 0
                added[sign] = 0
    out += totals[1]
    out -= totals[-1]
    return out


def grouped_correlations(words: np.ndarray, values: np.ndarray, counts: np.ndarray,
                         n: int, owners: np.ndarray | None = None,
                         out: np.ndarray | None = None) -> np.ndarray:
    """``sum_k f(x_k) x_k,i`` for every variable ``i``, per block of ``counts[b]`` rows.

    ``words (sum(counts), W)`` and ``values`` hold the blocks one after the
    other; the result is ``(len(counts), n)`` ``int64`` (exact), one row per
    block. With ``owners`` (non-decreasing) block ``b``'s sums are added to
    row ``owners[b]`` of ``out`` instead (several blocks may share a row).
    Rows are unpacked a bounded number at a time (3 bytes per variable per
    row).
    """
    step = max(1, SEARCH_BYTES // (3 * n))
    if counts.size == 1 and words.shape[0] <= step and n < _LONG_ROWS:
        # One block in one slice (a single node's points): the short-row sum
        # below with none of its block bookkeeping.
        signed = derive.unpack_bits(words, n).view(np.int8) * values[:, None]
        sums = np.add.reduce(signed, axis=0, dtype=np.int32).astype(np.int64)
        sums *= -2
        sums += values.sum(dtype=np.int64)
        if owners is None:
            return sums[None]
        assert out is not None, "blocks with owners add into a given out"
        out[owners[0]] += sums
        return out
    if owners is None:
        owners = np.arange(counts.size)
        out = np.zeros((counts.size, n), dtype=np.int64)
    assert out is not None, "blocks with owners add into a given out"
    assert (np.diff(owners) >= 0).all(), "blocks come in owner order"
    node = np.repeat(owners, counts)
    starts = np.cumsum(counts) - counts
    if n >= _LONG_ROWS:
        _add_long_rows(words, values, starts, starts + counts, owners, out, n)
    else:
        _add_short_rows(words, values, counts, starts, owners, out, n, step)
    totals = np.zeros(out.shape[0], dtype=np.int64)
    np.add.at(totals, node, values)
    out += totals[:, None]
    return out


def _add_long_rows(words: np.ndarray, values: np.ndarray, starts: np.ndarray,
                   ends: np.ndarray, owners: np.ndarray, out: np.ndarray, n: int) -> None:
    """Long rows: an owner's blocks are adjacent, so its rows are one run, summed a
    row at a time (:func:`_signed_bit_sums`) with no per-slice ``int64`` arrays."""
    held = ends > starts
    if not held.any():
        return
    owners, starts, ends = owners[held], starts[held], ends[held]
    # Each owner's run of blocks (owners are non-decreasing): its first and last.
    firsts = np.flatnonzero(np.diff(owners, prepend=-1))
    lasts = np.append(firsts[1:], owners.size) - 1
    for owner, first, last in zip(owners[firsts].tolist(), starts[firsts].tolist(),
                                  ends[lasts].tolist(), strict=True):
        sums = _signed_bit_sums(words[first:last], values[first:last], n)
        sums *= -2  # in place: at n = 10^7 a row of sums is 80 MB
        out[owner] += sums


def _add_short_rows(words: np.ndarray, values: np.ndarray, counts: np.ndarray,
                    starts: np.ndarray, owners: np.ndarray, out: np.ndarray, n: int,
                    step: int) -> None:
    """Short rows, many blocks: ``step`` rows at a time, one reduction over every
    block that meets them, summed in ``int32`` (a slice holds fewer than 2**31
    rows) and widened after."""
    for lo in range(0, words.shape[0], step):
        hi = min(lo + step, words.shape[0])
        # Blocks that meet this slice, and where each starts in it.
        present = np.flatnonzero((starts < hi) & (starts + counts > lo) & (counts > 0))
        firsts = np.maximum(starts[present], lo) - lo
        signed = derive.unpack_bits(words[lo:hi], n).view(np.int8) * values[lo:hi, None]
        sums = np.add.reduceat(signed, firsts, axis=0, dtype=np.int32).astype(np.int64)
        sums *= -2
        # Blocks are in owner order: merge the blocks of one owner, then add.
        rows = owners[present]
        first = np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]]))
        if first.size < rows.size:
            sums, rows = np.add.reduceat(sums, first, axis=0), rows[first]
        out[rows] += sums
