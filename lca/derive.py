"""The one place where randomness is made.

Every random bit in :mod:`lca` is a deterministic function of
``(seed, purpose, node path, sample index)``; ``docs/randomness.md`` is the
normative specification and this module its reference implementation.

* A *node key* is ``xxh3_128`` of an unambiguous byte encoding of
  ``(VERSION_TAG, seed, purpose, path)``.
* Bits are Philox4x64-10 (Random123) blocks under that key. Counter word 0 is
  the block index, counter word 1 the *stream*: stream 0 holds the bits of
  ``x``; stream ``1 + t`` holds plane ``t`` of the flip mask.
* Sample ``k`` of a stream occupies words ``[k*W, (k+1)*W)`` where
  ``W = ceil(n / 64)``, so a sample never depends on how many samples are drawn
  or how they are chunked (the prefix property).

Only ``numpy.random.Philox.random_raw`` is used: raw bit-generator streams
carry NumPy's strongest stability promise, unlike ``Generator`` methods.
Everything here is integer arithmetic; no floats touch a derived bit.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any, TypeGuard

import numpy as np
import xxhash

from lca._validate import SEED_LIMIT, check_int

__all__ = [
    "VERSION_TAG",
    "NOISE_BITS",
    "Path",
    "node_key",
    "raw_words",
    "words_per_point",
    "uniform_points",
    "node_points",
    "sample_points",
    "unpack_bits",
    "flip_masks",
    "noise_threshold",
    "noise_rate_of",
    "unpack_points",
    "pack_points",
    "pack_bits",
    "point_hashes",
    "constructor_key",
    "WordStream",
    "check_path",
]

VERSION_TAG = b"lca/v1"
# p/2 is represented as T / 2**NOISE_BITS; see noise_threshold.
NOISE_BITS = 16

Path = tuple[tuple[int, int], ...]
"""A node: ``((variable, value), ...)`` from the root, values in ``{-1, +1}``."""

_U64 = np.uint64
_ALL_ONES = (1 << 64) - 1


def _check_index(owner: str, name: str, value: Any, low: int, high: int) -> int:
    """An int (not bool, numpy integers accepted) in ``[low, high)``."""
    if type(value) is int and low <= value < high:  # the common case, cheaply
        return value
    text = f"2**{high.bit_length() - 1}" if high > 1 << 32 and high & (high - 1) == 0 \
        else None
    return check_int(owner, name, value, low, high, open_high=True, high_text=text)


def check_path(path: Any, n: int | None, owner: str, *,
               max_length: int | None = None) -> Path:
    """Validate a node path and return it as a tuple of ``(int, int)`` pairs.

    Each step is a pair ``(variable, value)`` of ints (numpy integers
    accepted, ``bool`` not) with ``value`` in ``{-1, +1}`` and ``variable`` in
    ``[0, n)`` (in ``[0, 2**64)`` when ``n`` is ``None``); no variable may
    appear twice; with ``max_length``, at most that many steps.
    """
    if not isinstance(path, (tuple, list)):
        raise TypeError(f"{owner}: path must be a tuple of (variable, value) pairs; "
                        f"got {type(path).__name__}")
    if max_length is not None and len(path) > max_length:
        raise ValueError(f"{owner}: path has {len(path)} steps; a node has at most "
                         f"{max_length} (min(depth, n))")
    high = 1 << 64 if n is None else n
    # The common case (a tuple of (int, int) tuples, as the library builds
    # them), cheaply: this runs for every node the reconstructor derives.
    if _is_plain_path(path, high):
        return path
    seen: set[int] = set()
    return tuple(_checked_step(step, high, seen, owner) for step in path)


def _is_plain_path(path: Any, high: int) -> TypeGuard[Path]:
    """Whether ``path`` is already a valid tuple of ``(int, int)`` tuples (no conversion)."""
    if type(path) is not tuple:
        return False
    for step in path:
        if type(step) is not tuple or len(step) != 2:
            return False
        var, value = step
        if type(var) is not int or type(value) is not int or not 0 <= var < high \
                or (value != 1 and value != -1):
            return False
    return len({var for var, _ in path}) == len(path)  # no variable twice


def _checked_step(step: Any, high: int, seen: set[int], owner: str) -> tuple[int, int]:
    """One step of a path as ``(variable, value)`` ints, new to ``seen`` (which it joins)."""
    if not isinstance(step, (tuple, list)) or len(step) != 2 or not all(
            isinstance(v, Integral) and not isinstance(v, bool) for v in step):
        raise TypeError(f"{owner}: each path step must be a pair of ints "
                        f"(variable, value); got {step!r}")
    var, value = int(step[0]), int(step[1])
    if not 0 <= var < high:
        raise ValueError(f"{owner}: path variable must be in [0, {high}); got {var}")
    if value not in (-1, 1):
        raise ValueError(f"{owner}: path value must be -1 or +1; got {value}")
    if var in seen:
        raise ValueError(f"{owner}: path fixes variable {var} twice")
    seen.add(var)
    return var, value


def _u64le(value: int) -> bytes:
    return struct.pack("<Q", value)


def _frame(data: bytes) -> bytes:
    return _u64le(len(data)) + data


def node_key(seed: int, purpose: str, path: Path) -> int:
    """128-bit Philox key for ``(seed, purpose, path)``; deterministic.

    Encoding (all integers little-endian)::

        frame(VERSION_TAG) || u64(seed) || frame(purpose as ASCII)
        || u64(len(path)) || for each (var, value): u64(var) || u8(bit)

    where ``frame(b) = u64(len(b)) || b`` and ``bit = 0`` for ``+1``, ``1`` for
    ``-1``. The key is the 128-bit ``xxh3_128`` digest read as an integer:
    Philox key word 0 is its low 64 bits, word 1 its high 64 bits.

    Raises ``TypeError``/``ValueError`` unless ``seed`` is an int in
    ``[0, 2**64)``, ``purpose`` an ASCII str and ``path`` a valid path
    (:func:`check_path`, variables in ``[0, 2**64)``).
    """
    owner = "node_key"
    return _node_key(_check_index(owner, "seed", seed, 0, SEED_LIMIT),
                     _check_purpose(owner, purpose), check_path(path, None, owner))


def _node_key(seed: int, purpose: str, path: Path) -> int:
    """:func:`node_key` of arguments already checked."""
    # The path's length and steps in one pack ("<" packs without padding).
    steps = struct.pack(f"<Q{'QB' * len(path)}", len(path),
                        *[field for var, value in path for field in (var, value == -1)])
    return xxhash.xxh3_128_intdigest(b"".join(
        [_frame(VERSION_TAG), _u64le(seed), _frame(purpose.encode("ascii")), steps]))


def raw_words(key: int, stream: int, start: int, count: int) -> np.ndarray:
    """Words ``[start, start + count)`` of one stream under ``key``.

    Word ``j`` of stream ``s`` is output word ``j % 4`` of the Philox4x64-10
    block with the 256-bit counter ``(s * 2**64 + j // 4) mod 2**256``, i.e.
    ``(j // 4, s, 0, 0)`` while ``j // 4 < 2**64``; past that the block index
    carries into the stream word (docs/randomness.md §3). Any index is
    accepted.
    """
    owner = "raw_words"
    key = _check_index(owner, "key", key, 0, 1 << 128)
    stream = _check_index(owner, "stream", stream, 0, 1 << 192)
    start = _check_index(owner, "start", start, 0, 1 << 256)
    count = _check_index(owner, "count", count, 0, 1 << 63)
    first_block = start // 4
    skip = start - 4 * first_block
    blocks = -(-(skip + count) // 4)
    # NumPy increments the 256-bit counter before producing each block.
    counter = ((stream << 64) + first_block - 1) % (1 << 256)
    bitgen = _philox()
    # Lists, not arrays: the state setter converts them to uint64 (exactly) in less
    # time than making arrays first, which a node pays a few times (numpy's type
    # stubs name arrays only).
    state: Any = {
        "bit_generator": "Philox",
        "state": {"counter": [(counter >> (64 * i)) & _ALL_ONES for i in range(4)],
                  "key": [key & _ALL_ONES, key >> 64]},
        "buffer": [0, 0, 0, 0], "buffer_pos": 4, "has_uint32": 0, "uinteger": 0,
    }
    bitgen.state = state
    return bitgen.random_raw(4 * blocks)[skip:skip + count]


def _check_purpose(owner: str, purpose: Any) -> str:
    if not isinstance(purpose, str) or not purpose.isascii():
        raise TypeError(f"The 'purpose' parameter of {owner} must be an ASCII str. "
                        f"Got {purpose!r} instead.")
    return purpose


def _check_range(owner: str, n: Any, start: Any, stop: Any) -> tuple[int, int, int]:
    n = _check_index(owner, "n", n, 1, 1 << 63)
    start = _check_index(owner, "start", start, 0, 1 << 64)
    stop = _check_index(owner, "stop", stop, start, 1 << 64)
    return n, start, stop


_scratch = threading.local()


def _philox() -> np.random.Philox:
    """A per-thread Philox object, its whole state overwritten on every use.

    Setting the state is ~4x cheaper than constructing a generator (which
    also draws OS entropy for a seed it never uses); nothing carries over
    between calls, so this is a cache of an object, not of randomness.
    """
    bitgen = getattr(_scratch, "philox", None)
    if bitgen is None:
        bitgen = _scratch.philox = np.random.Philox(key=0)
    return bitgen


def words_per_point(n: int) -> int:
    """Number of ``uint64`` words holding one packed point of ``n`` bits."""
    return -(-n // 64)


def _tail_mask(n: int) -> int:
    rem = n % 64
    return _ALL_ONES if rem == 0 else (1 << rem) - 1


def _stream_block(key: int, stream: int, n: int, start: int, stop: int) -> np.ndarray:
    width = words_per_point(n)
    words = raw_words(key, stream, start * width, (stop - start) * width)
    return words.reshape(stop - start, width)


def _fixed_masks(path: Path, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the path's coordinates and of those among them set to -1."""
    width = words_per_point(n)
    fixed = [0] * width
    ones = [0] * width
    for var, value in path:
        word, bit = divmod(var, 64)
        fixed[word] |= 1 << bit
        if value == -1:
            ones[word] |= 1 << bit
    return np.array(fixed, dtype=_U64), np.array(ones, dtype=_U64)


def uniform_points(key: int, n: int, start: int, stop: int, path: Path = ()) -> np.ndarray:
    """Packed samples ``start..stop-1`` of uniform ``x`` consistent with ``path``.

    Returns an ``(stop - start, W)`` ``uint64`` array: coordinate ``64*w + j``
    is bit ``j`` of word ``w``; a set bit means ``x_i = -1``. Bits past ``n``
    are zero; coordinates on ``path`` are fixed to their value. ``path`` is
    validated by :func:`check_path` with variables in ``[0, n)``.
    """
    owner = "uniform_points"
    n, start, stop = _check_range(owner, n, start, stop)
    path = check_path(path, n, owner)
    words = _stream_block(key, 0, n, start, stop)
    words[:, -1] &= _U64(_tail_mask(n))
    if path:
        fixed, ones = _fixed_masks(path, n)
        words &= ~fixed
        words |= ones
    return words


def node_points(seed: int, purpose: str, paths: Sequence[Path], n: int, start: int,
                stop: int) -> np.ndarray:
    """Samples ``start..stop-1`` of the uniform points of every node of ``paths``.

    ``out[b]`` equals ``uniform_points(node_key(seed, purpose, paths[b]), n,
    start, stop, paths[b])``; one call for a group of nodes, validated once.
    Returns a ``(len(paths), stop - start, W)`` ``uint64`` array.
    """
    owner = "node_points"
    seed = _check_index(owner, "seed", seed, 0, SEED_LIMIT)
    purpose = _check_purpose(owner, purpose)
    n, start, stop = _check_range(owner, n, start, stop)
    width = words_per_point(n)
    out = np.empty((len(paths), stop - start, width), dtype=_U64)
    tail = _U64(_tail_mask(n))
    for b, path in enumerate(paths):
        path = check_path(path, n, owner)
        words = out[b]
        words[...] = _stream_block(_node_key(seed, purpose, path), 0, n, start, stop)
        words[:, -1] &= tail
        if path:
            fixed, ones = _fixed_masks(path, n)
            words &= ~fixed
            words |= ones
    return out


def sample_points(seed: int, purpose: str, n: int, count: int) -> np.ndarray:
    """``count`` uniform points of ``{-1,1}^n`` for a non-node ``purpose``, as ``int8``.

    Samples ``0..count-1`` of :func:`uniform_points` under
    ``node_key(seed, purpose, ())``: evaluation, test and benchmark points
    are derived like every other sample.
    """
    n = _check_index("sample_points", "n", n, 1, 1 << 63)
    count = _check_index("sample_points", "count", count, 0, 1 << 63)
    return unpack_points(uniform_points(node_key(seed, purpose, ()), n, 0, count), n)


def noise_threshold(noise_rate: float) -> int:
    """Integer ``T`` with ``p/2 = T / 2**NOISE_BITS``: ``T = round(p * 2**15)``.

    ``p * 2**15`` is exact in binary floating point, and Python's ``round``
    rounds half to even, so ``T`` is the same on every platform. Accepts
    exactly the rates :class:`lca.Params` accepts: a real in ``(0, 1]``
    (``bool`` is not) that rounds to ``T >= 1``.
    """
    message = ("noise rate must be a real number in the range (0, 1] (the 'noise_rate' "
               f"parameter of noise_threshold). Got {noise_rate!r} instead.")
    # int and float name the annotated type for the type checker; Real also admits
    # numpy's floats and Fraction.
    if isinstance(noise_rate, bool) or not isinstance(noise_rate, (int, float, Real)):
        raise TypeError(message)
    if not 0 < noise_rate <= 1:  # also rejects NaN
        raise ValueError(message)
    threshold = round(float(noise_rate) * 2 ** (NOISE_BITS - 1))
    if not 1 <= threshold <= 2 ** (NOISE_BITS - 1):
        raise ValueError(
            f"noise rate {noise_rate!r} rounds to {threshold}/2**{NOISE_BITS - 1}; "
            f"it must be in [2**-{NOISE_BITS - 1}, 1]"
        )
    return threshold


def noise_rate_of(threshold: int) -> float:
    """The effective noise rate ``p = T / 2**15`` of a threshold."""
    return threshold / 2 ** (NOISE_BITS - 1)


def flip_masks(key: int, n: int, start: int, stop: int, threshold: int,
               path: Path = ()) -> np.ndarray:
    """Packed flip masks: each free bit is 1 with probability ``T / 2**16``.

    Plane ``t`` (stream ``1 + t``) holds uniform words ``w_t``. Starting from
    ``acc = 0`` and going from the lowest bit of ``T`` up, ``acc |= w_t`` where
    bit ``t`` of ``T`` is 1 and ``acc &= w_t`` where it is 0: a bit of the
    result is 1 exactly when the uniform 16-bit number ``N`` formed by the
    planes (bit ``t`` from plane ``t``) satisfies ``N >= 2**16 - T``. Planes
    below the lowest set bit of ``T`` leave ``acc = 0`` and are not
    generated. Coordinates on ``path`` and past ``n`` never flip.
    """
    owner = "flip_masks"
    n, start, stop = _check_range(owner, n, start, stop)
    threshold = _check_index(owner, "threshold", threshold, 1, 2 ** NOISE_BITS)
    path = check_path(path, n, owner)
    lowest = (threshold & -threshold).bit_length() - 1
    acc = _stream_block(key, 1 + lowest, n, start, stop)
    for plane in range(lowest + 1, NOISE_BITS):
        words = _stream_block(key, 1 + plane, n, start, stop)
        if (threshold >> plane) & 1:
            acc |= words
        else:
            acc &= words
    acc[:, -1] &= _U64(_tail_mask(n))
    if path:
        fixed, _ = _fixed_masks(path, n)
        acc &= ~fixed
    return acc


def _describe_array(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"dtype {value.dtype}, shape {value.shape}"
    return f"{type(value).__name__}"


def unpack_bits(words: np.ndarray, n: int) -> np.ndarray:
    """``(m, W)`` packed words to their ``(m, n)`` ``uint8`` bits (1 for ``-1``), unchecked.

    The inner step of :func:`unpack_points`, for callers that sum bits.
    """
    as_bytes = words.astype("<u8", copy=False).view(np.uint8)
    return np.unpackbits(as_bytes, axis=1, count=n, bitorder="little")


def unpack_points(words: np.ndarray, n: int) -> np.ndarray:
    """``(m, W)`` packed words to an ``(m, n)`` ``int8`` array of ``±1``."""
    n = _check_index("unpack_points", "n", n, 1, 1 << 63)
    if not isinstance(words, np.ndarray) or words.dtype != _U64 \
            or words.ndim != 2 or words.shape[1] != words_per_point(n):
        raise TypeError("The 'words' parameter of unpack_points must be a uint64 array of "
                        f"shape (m, {words_per_point(n)}) for n={n}. Got "
                        f"{_describe_array(words)} instead.")
    points = unpack_bits(words, n).view(np.int8)
    points *= -2  # in place: bit b becomes 1 - 2b without temporaries
    points += 1
    return points


def pack_points(points: np.ndarray) -> np.ndarray:
    """Inverse of :func:`unpack_points` for an ``(m, n)`` array of ``±1``."""
    if not isinstance(points, np.ndarray) or points.ndim != 2 or points.shape[1] < 1 \
            or points.dtype == np.bool_ or not np.issubdtype(points.dtype, np.integer):
        raise TypeError("The 'points' parameter of pack_points must be an integer array "
                        f"of shape (m, n), n >= 1. Got {_describe_array(points)} instead.")
    if points.size and (points.min() < -1 or points.max() > 1
                        or np.count_nonzero(points) != points.size):
        raise ValueError("The 'points' parameter of pack_points must hold only -1 and +1.")
    return pack_bits(points)


def pack_bits(points: np.ndarray) -> np.ndarray:
    """:func:`pack_points` of rows already known to be ``±1``, unchecked.

    Coordinate ``64w + j`` is bit ``j`` of word ``w`` (set for ``-1``), tail
    bits zero.
    """
    m, n = points.shape
    packed = np.zeros((m, 8 * words_per_point(n)), dtype=np.uint8)
    packed[:, : -(-n // 8)] = np.packbits(points < 0, axis=1, bitorder="little")
    return packed.view("<u8").astype(_U64, copy=False)


_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_SHIFT30, _SHIFT27, _SHIFT31 = np.uint64(30), np.uint64(27), np.uint64(31)


def _mix64_in_place(z: np.ndarray, scratch: np.ndarray) -> None:
    """``z = mix(z)`` in place, with ``scratch`` (same shape) for the shifts.

    SplitMix64 finaliser (Stafford's Mix13): a bijection of uint64 with full
    avalanche, in wrapping uint64 arithmetic; in place, so no temporaries
    however many rows.
    """
    xor, right, times = np.bitwise_xor, np.right_shift, np.multiply
    xor(z, right(z, _SHIFT30, out=scratch), out=z)
    times(z, _MIX1, out=z)
    xor(z, right(z, _SHIFT27, out=scratch), out=z)
    times(z, _MIX2, out=z)
    xor(z, right(z, _SHIFT31, out=scratch), out=z)


def point_hashes(key: np.uint64, words: np.ndarray) -> np.ndarray:
    """``h(x) = mix(... mix(mix(K ^ w_0) ^ w_1) ... ^ w_{W-1})`` for each packed row.

    ``words`` is ``(m, W)`` as :func:`pack_bits`, ``K`` a ``uint64`` key and
    ``mix`` the SplitMix64 finaliser (:func:`_mix64_in_place`); the hash of a
    point depends on the point alone, so a label derived from it is a fixed
    function (:class:`lca.targets.LabelNoise`, docs/randomness.md §8).
    """
    # Words as (W, m): each step of the chain reads one contiguous row.
    columns = np.ascontiguousarray(words.T)
    state = np.full(words.shape[0], key, dtype=np.uint64)
    scratch = np.empty_like(state)
    for row in columns:
        np.bitwise_xor(state, row, out=state)  # state = mix(state ^ w)
        _mix64_in_place(state, scratch)
    return state


# Seeded constructors (random trees, hidden variables, label-noise keys) draw
# from their own tag so their streams never collide with node samples.
_CONSTRUCTOR_TAG = b"lca/targets/v1"


def constructor_key(purpose: str, seed: int) -> int:
    """The key of seeded constructors.

    ``xxh3_128(b"lca/targets/v1" || frame(purpose) || u64(seed))``.
    """
    purpose = _check_purpose("constructor_key", purpose)
    seed = _check_index("constructor_key", "seed", seed, 0, SEED_LIMIT)
    return xxhash.xxh3_128_intdigest(
        _CONSTRUCTOR_TAG + _frame(purpose.encode("ascii")) + _u64le(seed))


class WordStream:
    """Raw 64-bit words of Philox4x64-10 keyed by (purpose, seed), buffered.

    Word ``4(b-1) + t`` is output word ``t`` of the block with counter
    ``(b, 0, 0, 0)``, ``b = 1, 2, ...``; ``below``, ``signs`` and ``sample``
    consume words exactly as ``docs/randomness.md`` §8 specifies.
    """

    _BLOCK = 256

    def __init__(self, purpose: str, seed: int) -> None:
        # Sequential Philox words from counter block 1 (NumPy's default start).
        self._bits = np.random.Philox(key=constructor_key(purpose, seed))
        self._buffer: list[int] = []
        self._pos = 0

    def word(self) -> int:
        if self._pos == len(self._buffer):
            self._buffer = self._bits.random_raw(self._BLOCK).tolist()
            self._pos = 0
        self._pos += 1
        return self._buffer[self._pos - 1]

    def below(self, bound: int) -> int:
        """Uniform int in ``[0, bound)``, by rejection; ``bound`` in ``[1, 2**64]``."""
        assert 1 <= bound <= 1 << 64
        mask = (1 << (bound - 1).bit_length()) - 1
        while True:
            value = self.word() & mask
            if value < bound:
                return value

    def signs(self, count: int) -> np.ndarray:
        """``count`` uniform ``±1`` values; bit ``j`` of word ``w`` gives value ``64w+j``."""
        words = np.array([self.word() for _ in range(-(-count // 64))], dtype="<u8")
        bits = np.unpackbits(words.view(np.uint8), bitorder="little")[:count]
        return (1 - 2 * bits.astype(np.int8)).astype(np.int8)

    def sample(self, n: int, k: int) -> np.ndarray:
        """``k`` distinct indices of ``[0, n)`` in random order (partial Fisher-Yates)."""
        swapped: dict[int, int] = {}
        out = []
        for i in range(k):
            j = i + self.below(n - i)
            out.append(swapped.get(j, j))
            swapped[j] = swapped.get(i, i)
        return np.asarray(out, dtype=np.int64)
