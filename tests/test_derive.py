"""The derivation of random bits: spec conformance, prefix property, noise."""

import math

import numpy as np
import pytest

from lca import derive


class TestPhilox:
    def test_random123_known_answer(self):
        # Random123 kat_vectors: philox4x64-10, counter 0, key 0.
        expected = [0x16554D9ECA36314C, 0xDB20FE9D672D0FDC,
                    0xD7E772CEE186176B, 0x7E68B68AEC7BA23B]
        assert derive.raw_words(0, 0, 0, 4).tolist() == expected

    def test_word_offsets_are_a_window_of_one_stream(self):
        whole = derive.raw_words(12345, 3, 0, 64)
        for start, count in [(0, 1), (1, 7), (3, 5), (4, 4), (13, 40)]:
            assert derive.raw_words(12345, 3, start, count).tolist() == \
                whole[start:start + count].tolist()

    def test_stream_is_counter_word_one(self):
        # Word j of stream s is block (j // 4, s, 0, 0): stream 1, block 0 is
        # what NumPy yields for counter (2**64 - 1) + 1 = (0, 1, 0, 0).
        bitgen = np.random.Philox(key=99, counter=(1 << 64) - 1)
        assert derive.raw_words(99, 1, 0, 4).tolist() == bitgen.random_raw(4).tolist()

    def test_block_index_carries_into_the_stream_word(self):
        # docs/randomness.md §3: the counter of block b of stream s is the
        # 256-bit number s * 2**64 + b, so any index is accepted and block
        # 2**64 of stream s is block 0 of stream s + 1.
        assert derive.raw_words(7, 2, 4 << 64, 5).tolist() == \
            derive.raw_words(7, 3, 0, 5).tolist()
        # The last block of the last stream wraps to counter 0 (mod 2**256).
        last = derive.raw_words(7, (1 << 192) - 1, ((1 << 64) - 1) * 4, 8).tolist()
        assert last[4:] == derive.raw_words(7, 0, 0, 4).tolist()

    def test_streams_and_keys_differ(self):
        a = derive.raw_words(1, 0, 0, 8)
        assert a.tolist() != derive.raw_words(1, 1, 0, 8).tolist()
        assert a.tolist() != derive.raw_words(2, 0, 0, 8).tolist()


class TestNodeKey:
    def test_every_component_matters(self):
        base = derive.node_key(7, "score", ((3, 1),))
        others = [
            derive.node_key(8, "score", ((3, 1),)),
            derive.node_key(7, "leaf", ((3, 1),)),
            derive.node_key(7, "score", ((3, -1),)),
            derive.node_key(7, "score", ((4, 1),)),
            derive.node_key(7, "score", ()),
            derive.node_key(7, "score", ((3, 1), (0, 1))),
        ]
        assert len({base, *others}) == 7

    def test_key_is_128_bit_and_stable(self):
        key = derive.node_key(0, "score", ())
        assert 0 <= key < 1 << 128
        assert key == derive.node_key(0, "score", ())


@pytest.mark.parametrize("n", [1, 63, 64, 65, 200])
class TestPoints:
    def test_prefix_and_chunking(self, n):
        key = derive.node_key(3, "score", ())
        whole = derive.uniform_points(key, n, 0, 50)
        pieces = [derive.uniform_points(key, n, lo, min(lo + 7, 50)) for lo in range(0, 50, 7)]
        assert np.array_equal(np.concatenate(pieces), whole)
        assert np.array_equal(derive.uniform_points(key, n, 0, 10), whole[:10])
        threshold = derive.noise_threshold(0.3)
        flips = derive.flip_masks(key, n, 0, 50, threshold)
        assert np.array_equal(derive.flip_masks(key, n, 20, 30, threshold), flips[20:30])

    def test_tail_bits_are_zero_and_round_trip(self, n):
        key = derive.node_key(5, "leaf", ())
        words = derive.uniform_points(key, n, 0, 20)
        flips = derive.flip_masks(key, n, 0, 20, derive.noise_threshold(1.0))
        assert words.shape == (20, derive.words_per_point(n))
        if n % 64:
            assert not np.any(words[:, -1] >> np.uint64(n % 64))
            assert not np.any(flips[:, -1] >> np.uint64(n % 64))
        points = derive.unpack_points(words, n)
        assert points.dtype == np.int8 and points.shape == (20, n)
        assert set(np.unique(points)) <= {-1, 1}
        assert np.array_equal(derive.pack_points(points), words)


def test_path_coordinates_fixed_in_x_and_y():
    n = 130
    path = ((0, -1), (64, 1), (129, -1), (7, 1))
    key = derive.node_key(11, "score", path)
    x = derive.uniform_points(key, n, 0, 300, path)
    y = x ^ derive.flip_masks(key, n, 0, 300, derive.noise_threshold(1.0), path)
    for points in (derive.unpack_points(x, n), derive.unpack_points(y, n)):
        for var, value in path:
            assert np.all(points[:, var] == value)


class TestNoise:
    @pytest.mark.parametrize("rate, threshold", [
        (0.1, 3277), (2 ** -15, 1), (1.0, 32768), (0.5, 16384), (3 / 2 ** 16, 2),
    ])
    def test_grid(self, rate, threshold):
        assert derive.noise_threshold(rate) == threshold
        assert derive.noise_rate_of(threshold) == threshold / 2 ** 15

    @pytest.mark.parametrize("rate", [0.0, 2 ** -17, 1.01])
    def test_off_grid_rates_are_rejected(self, rate):
        with pytest.raises(ValueError, match="noise rate"):
            derive.noise_threshold(rate)

    @pytest.mark.parametrize("threshold", [1 << 12, 3277, 20000, 32768])
    def test_flip_frequency(self, threshold):
        # 10**6 flip bits; each is Bernoulli(T / 2**16) if the planes are
        # independent uniform bits. Hoeffding: P(|mean - T/2**16| >= t) <=
        # 2 exp(-2 N t^2) = 1e-9 at the t below.
        n, m = 1000, 1000
        key = derive.node_key(1, "score", ())
        flips = derive.flip_masks(key, n, 0, m, threshold)
        bits = np.unpackbits(flips.view(np.uint8), axis=1, count=n, bitorder="little")
        t = math.sqrt(math.log(2e9) / (2 * n * m))
        assert abs(bits.mean() - threshold / 2 ** 16) < t

    def test_spec_comparison_rule(self):
        # A flip bit is 1 exactly when the 16-bit number N read from the
        # planes satisfies N >= 2**16 - T (docs/randomness.md §5).
        n, m, threshold = 64, 40, 3277
        key = derive.node_key(2, "score", ())
        planes = [derive.raw_words(key, 1 + t, 0, m) for t in range(16)]
        flips = derive.flip_masks(key, n, 0, m, threshold)[:, 0]
        for j in range(64):
            number = sum(((planes[t] >> np.uint64(j)) & np.uint64(1)).astype(np.int64) << t
                         for t in range(16))
            assert np.array_equal((flips >> np.uint64(j)) & np.uint64(1),
                                  (number >= 2 ** 16 - threshold).astype(np.uint64))


def test_sample_points_are_node_samples_with_the_empty_path():
    key = derive.node_key(4, "demo-queries", ())
    want = derive.unpack_points(derive.uniform_points(key, 70, 0, 9), 70)
    assert np.array_equal(derive.sample_points(4, "demo-queries", 70, 9), want)


def test_point_hashes_chain_the_splitmix_finaliser_over_the_packed_words():
    # h = mix(mix(K ^ w0) ^ w1), mix the SplitMix64 finaliser, in Python integers.
    def mix(z):
        mask = (1 << 64) - 1
        z ^= z >> 30
        z = (z * 0xBF58476D1CE4E5B9) & mask
        z ^= z >> 27
        z = (z * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    points = np.ones((3, 70), dtype=np.int8)
    points[1, [0, 65]] = -1
    points[2, :] = -1
    words = derive.pack_bits(points)
    assert np.array_equal(words, derive.pack_points(points))
    key = 0x0123456789ABCDEF
    expected = []
    for row in words.tolist():
        state = key
        for word in row:
            state = mix(state ^ word)
        expected.append(state)
    assert derive.point_hashes(np.uint64(key), words).tolist() == expected


def test_node_points_are_each_nodes_uniform_points_validated_once():
    paths = [(), ((3, 1),), ((3, -1), (69, 1), (0, -1))]
    out = derive.node_points(11, "pairs", paths, 70, 4, 9)
    assert out.shape == (3, 5, derive.words_per_point(70))
    for words, path in zip(out, paths, strict=True):
        key = derive.node_key(11, "pairs", path)
        assert np.array_equal(words, derive.uniform_points(key, 70, 4, 9, path))
    # The seed, the purpose and every path are checked, and the errors name node_points.
    for seed, purpose, bad_paths in [(-1, "pairs", paths), (2**64, "pairs", paths),
                                     (11, "é", paths), (11, 3, paths),
                                     (11, "pairs", [((70, 1),)]), (11, "pairs", [((3, 0),)])]:
        with pytest.raises((TypeError, ValueError), match="node_points"):
            derive.node_points(seed, purpose, bad_paths, 70, 4, 9)
