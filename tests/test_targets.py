"""Tests for lca.targets: every target against a pointwise reference."""

from __future__ import annotations

import itertools
import json
import math
import pickle
from fractions import Fraction

import numpy as np
import pytest
import xxhash

from lca.oracle import CountingOracle, Oracle
from lca.targets import (
    DecisionTree,
    Junta,
    LabelNoise,
    Majority,
    Multiplexer,
    Parity,
    Tribes,
    junta,
    majority,
    multiplexer,
    parity,
    random_tree,
    tribes,
    with_label_noise,
)


def all_points(n: int) -> np.ndarray:
    return np.array(list(itertools.product([1, -1], repeat=n)), dtype=np.int8)


def reference_tree(tree, x) -> int:
    while isinstance(tree, dict):
        tree = tree["minus"] if x[tree["var"]] == -1 else tree["plus"]
    return tree


def nested_shape(tree) -> tuple[int, int]:
    """(leaves, depth) of a nested tree, recursively."""
    if not isinstance(tree, dict):
        return 1, 0
    (lm, dm), (lp, dp) = nested_shape(tree["minus"]), nested_shape(tree["plus"])
    return lm + lp, 1 + max(dm, dp)


def paths(tree, prefix=()):
    """Yield (variables on the path, leaf value) for every leaf."""
    if not isinstance(tree, dict):
        yield prefix, tree
        return
    yield from paths(tree["minus"], prefix + (tree["var"],))
    yield from paths(tree["plus"], prefix + (tree["var"],))


def check_against(oracle: Oracle, reference, n: int) -> None:
    points = all_points(n)
    got = oracle.query(points)
    assert got.dtype == np.int8 and got.shape == (len(points),)
    expected = np.array([reference(x) for x in points], dtype=np.int8)
    np.testing.assert_array_equal(got, expected)


# ---------------------------------------------------------------- DecisionTree

HANDMADE = [
    pytest.param(1, 3, 1, 0, id="leaf+1"),
    pytest.param(-1, 3, 1, 0, id="leaf-1"),
    pytest.param({"var": 2, "minus": -1, "plus": 1}, 4, 2, 1, id="dictator"),
    pytest.param({"var": 0, "minus": {"var": 1, "minus": 1, "plus": -1},
                  "plus": {"var": 2, "minus": -1,
                           "plus": {"var": 3, "minus": 1, "plus": -1}}},
                 6, 5, 3, id="unbalanced"),
    pytest.param({"var": 1, "minus": {"var": 1, "minus": 1, "plus": -1},
                  "plus": {"var": 1, "minus": -1, "plus": 1}}, 6, 4, 2,
                 id="repeated-variable"),
]


class TestDecisionTree:
    @pytest.mark.parametrize("nested, n, leaves, depth", HANDMADE)
    def test_values_size_depth(self, nested, n, leaves, depth):
        tree = DecisionTree.from_nested(nested, n)
        check_against(tree, lambda x: reference_tree(nested, x), n)
        assert (tree.size, tree.leaves, tree.depth) == (leaves, leaves, depth)

    @pytest.mark.parametrize("nested, n, leaves, depth", HANDMADE)
    def test_nested_and_json_round_trip(self, nested, n, leaves, depth, tmp_path):
        tree = DecisionTree.from_nested(nested, n)
        assert tree.to_nested() == nested
        assert DecisionTree.from_json(tree.to_json()).to_nested() == nested
        path = tmp_path / "tree.json"
        path.write_text(tree.to_json())
        assert DecisionTree.from_json(path).to_nested() == nested
        assert DecisionTree.from_json(str(path), n=n).to_nested() == nested
        text = json.dumps({"tree": nested})
        assert DecisionTree.from_json(text, n=n).to_nested() == nested

    def test_arrays_in_any_order_are_renumbered_to_preorder(self):
        # Root 0 queries x1; its minus child is node 2 (a leaf), plus child node 1.
        tree = DecisionTree(3, var=[1, 0, -1, -1, -1], minus=[2, 3, -1, -1, -1],
                            plus=[1, 4, -1, -1, -1], value=[0, 0, 1, -1, 1])
        nested = {"var": 1, "minus": 1, "plus": {"var": 0, "minus": -1, "plus": 1}}
        assert tree.to_nested() == nested
        np.testing.assert_array_equal(tree.var, [1, -1, 0, -1, -1])
        np.testing.assert_array_equal(tree.minus, [1, -1, 3, -1, -1])
        np.testing.assert_array_equal(tree.plus, [2, -1, 4, -1, -1])

    def test_any_layout_and_integer_dtype(self):
        tree = random_tree(7, 20, 0)
        points = all_points(7)
        expected = tree.query(points)
        np.testing.assert_array_equal(tree.query(np.asfortranarray(points)), expected)
        np.testing.assert_array_equal(tree.query(points.astype(np.int64)), expected)
        wide = np.repeat(points, 2, axis=1)
        np.testing.assert_array_equal(tree.query(wide[:, ::2]), expected)

    def test_empty_batch(self):
        tree = DecisionTree.from_nested(HANDMADE[3].values[0], 6)
        assert tree.query(np.empty((0, 6), dtype=np.int8)).shape == (0,)

    @pytest.mark.parametrize("nested, n, error, match", [
        ({"var": 3, "minus": 1, "plus": -1}, 3, ValueError,
         r"from_nested: 'var' at tree must be an int in \[0, 3\)\. Got 3 instead"),
        ({"var": 0, "minus": 1, "plus": {"var": -1, "minus": 1, "plus": 1}}, 3,
         ValueError, r"'var' at tree\['plus'\] must be an int in \[0, 3\)\. Got -1"),
        ({"var": True, "minus": 1, "plus": -1}, 3, TypeError,
         r"'var' at tree must be an int in \[0, 3\)\. Got True of type bool"),
        ({"var": 0, "minus": 1}, 3, ValueError,
         r"internal node at tree must have exactly the keys 'var', 'minus', 'plus'\. "
         r"Got keys \['minus', 'var'\]"),
        ({"var": 0, "minus": 0, "plus": 1}, 3, ValueError,
         r"leaf at tree\['minus'\] must be -1 or \+1\. Got 0 instead"),
        ({"var": 0, "minus": True, "plus": 1}, 3, TypeError,
         r"node at tree\['minus'\] must be a leaf .* Got True of type bool"),
        ({"var": 0, "minus": 1.0, "plus": 1}, 3, TypeError,
         r"node at tree\['minus'\] must be a leaf .* Got 1\.0 of type float"),
        ([0, 1, -1], 3, TypeError, r"node at tree must be a leaf"),
        (1, 0, ValueError,
         r"The 'n' parameter of DecisionTree\.from_nested must be an int in the range "
         r"\[1, 2\*\*31 - 1\]\. Got 0 instead"),
    ])
    def test_from_nested_errors(self, nested, n, error, match):
        with pytest.raises(error, match=match):
            DecisionTree.from_nested(nested, n)

    @pytest.mark.parametrize("arrays, error, match", [
        (([0, -1], [1, -1], [1, -1], [0, 1]), ValueError, r"node 1 is reached twice"),
        (([0, -1, -1], [1, -1, -1], [5, -1, -1], [0, 1, 1]), ValueError,
         r"child index 5 is not a node in \[0, 3\)"),
        (([-1, -1], [-1, -1], [-1, -1], [1, 1]), ValueError,
         r"node 1 is not reachable from the root"),
        (([7, -1, -1], [1, -1, -1], [2, -1, -1], [0, 1, 1]), ValueError,
         r"node 0 queries variable 7, outside \[0, n\) = \[0, 2\)"),
        (([0, -1, -1], [1, -1, -1], [2, -1, -1], [0, 1, 2]), ValueError,
         r"leaf 2 has value 2; leaf values must be -1 or \+1"),
        (([0, -1, -1], [1, -1], [2, -1, -1], [0, 1, 1]), ValueError,
         r"must have the same length >= 1\. Got lengths 3, 2, 3, 3"),
        (([0.0, -1, -1], [1, -1, -1], [2, -1, -1], [0, 1, 1]), TypeError,
         r"The 'var' parameter of DecisionTree must be a 1-d integer array"),
    ])
    def test_array_errors(self, arrays, error, match):
        with pytest.raises(error, match=match):
            DecisionTree(2, *arrays)

    @pytest.mark.parametrize("source, n, error, match", [
        ('{"tree": 1}', None, ValueError, r"the JSON has no 'n'; pass n"),
        ('{"n": 3, "tree": 1}', 4, ValueError, r"n=4 given but the JSON says n=3"),
        ('{"n": 3, "tree": 1, "x": 0}', None, ValueError,
         r"expected a JSON object with key 'tree' and optional key 'n'\. "
         r"Got \['n', 'tree', 'x'\]"),
        ('{"n": 0, "tree": 1}', None, ValueError,
         r"The 'n' parameter of DecisionTree\.from_json \(JSON\) must be an int"),
        (3, None, TypeError,
         r"The 'source' parameter of DecisionTree\.from_json must be JSON text or a "
         r"path\. Got int instead"),
    ])
    def test_from_json_errors(self, source, n, error, match):
        with pytest.raises(error, match=match):
            DecisionTree.from_json(source, n=n)

    @pytest.mark.parametrize("points, error, match", [
        (np.ones((2, 3), dtype=np.float64), TypeError, r"integer array of ±1"),
        (np.ones((2, 4), dtype=np.int8), TypeError, r"shape \(m, 3\)"),
        (np.zeros((2, 3), dtype=np.int8), ValueError, r"only -1 and \+1; found 0"),
    ])
    def test_query_validates_points(self, points, error, match):
        with pytest.raises(error, match=match):
            DecisionTree.from_nested(1, 3).query(points)


# ---------------------------------------------------------------- random_tree

RANDOM_TREES = [(n, leaves, seed, labels)
                for n, leaves in [(6, 1), (6, 2), (6, 17), (8, 40), (4, 16), (10, 64)]
                for seed in (0, 1, 2**64 - 1)
                for labels in ("iid", "sibling_differing")]


class TestRandomTree:
    @pytest.mark.parametrize("n, leaves, seed, labels", RANDOM_TREES)
    def test_shape_and_values(self, n, leaves, seed, labels):
        tree = random_tree(n, leaves, seed, labels)
        nested = tree.to_nested()
        assert nested_shape(nested) == (leaves, tree.depth)
        assert tree.size == tree.leaves == leaves
        for variables, _ in paths(nested):
            assert len(set(variables)) == len(variables)  # no variable repeats
        check_against(tree, lambda x: reference_tree(nested, x), n)

    @pytest.mark.parametrize("n, leaves, seed", [(6, 17, 0), (8, 40, 5), (10, 64, 2**64 - 1)])
    def test_sibling_differing(self, n, leaves, seed):
        nested = random_tree(n, leaves, seed, "sibling_differing").to_nested()
        stack, bottom_splits = [nested], 0
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                if not isinstance(node["minus"], dict) and not isinstance(node["plus"], dict):
                    assert node["minus"] == -node["plus"]
                    bottom_splits += 1
                stack += [node["minus"], node["plus"]]
        assert bottom_splits >= 1

    def test_shape_independent_of_labels(self):
        iid = random_tree(8, 30, 7, "iid")
        differing = random_tree(8, 30, 7, "sibling_differing")
        np.testing.assert_array_equal(iid.var, differing.var)
        np.testing.assert_array_equal(iid.plus, differing.plus)

    def test_deterministic_and_seed_dependent(self):
        first = random_tree(12, 50, 123).to_nested()
        assert random_tree(12, 50, 123).to_nested() == first
        assert random_tree(12, 50, np.uint64(123)).to_nested() == first
        others = {json.dumps(random_tree(12, 50, seed).to_nested()) for seed in range(10)}
        assert len(others) == 10

    @pytest.mark.parametrize("args, digest", [
        ((8, 20, 0, "iid"), "92786dd4445638b2"),
        ((8, 20, 0, "sibling_differing"), "bf53a495d086b801"),
        ((40, 50, 2**64 - 1, "iid"), "0a74d024078f56c8"),
    ])
    def test_known_answers(self, args, digest):
        # Pins the stream: changing it is a compatibility break (docs/randomness.md §7).
        assert xxhash.xxh3_64_hexdigest(random_tree(*args).to_json().encode()) == digest

    def test_full_tree(self):
        tree = random_tree(3, 8, 0)
        assert (tree.size, tree.depth) == (8, 3)

    @pytest.mark.parametrize("args, error, match", [
        ((4, 0, 0), ValueError,
         r"The 'leaves' parameter of random_tree must be an int in the range \[1, 2\*\*n\]\. "
         r"Got 0 instead\."),
        ((4, 17, 0), ValueError, r"'leaves' .* \[1, 2\*\*n\]\. Got 17 instead"),
        ((4, 2.0, 0), TypeError, r"'leaves' .* Got 2\.0 instead"),
        ((0, 1, 0), ValueError,
         r"The 'n' parameter of random_tree must be an int in the range \[1, 2\*\*31 - 1\]\. "
         r"Got 0"),
        ((4, 2, -1), ValueError,
         r"The 'seed' parameter of random_tree must be an int in the range \[0, 2\*\*64\)\. "
         r"Got -1 instead"),
        ((4, 2, 2**64), ValueError, r"'seed' .* Got 18446744073709551616 instead"),
        ((4, 2, True), TypeError, r"'seed' .* Got True instead"),
        ((4, 2, 0, "gini"), ValueError,
         r"The 'labels' parameter of random_tree must be one of \('iid', "
         r"'sibling_differing'\)\. Got 'gini' instead"),
        ((4, 2, 0, None), TypeError, r"'labels' .* Got None of type NoneType"),
    ])
    def test_errors(self, args, error, match):
        with pytest.raises(error, match=match):
            random_tree(*args)


# ---------------------------------------------------------------- label noise

MASK = 2**64 - 1


def reference_mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def reference_flip(x, seed: int, rate) -> bool:
    purpose = b"label_noise"
    key = xxhash.xxh3_128_intdigest(
        b"lca/targets/v1" + len(purpose).to_bytes(8, "little") + purpose
        + seed.to_bytes(8, "little")) & MASK
    bits = [int(v == -1) for v in x]
    state = key
    for start in range(0, max(len(bits), 1), 64):
        word = sum(bit << j for j, bit in enumerate(bits[start:start + 64]))
        state = reference_mix(state ^ word)
    return Fraction(state) < Fraction(rate) * 2**64


class TestLabelNoise:
    @pytest.mark.parametrize("n, rate, seed", [(8, 0.25, 0), (10, 0.1, 2**64 - 1),
                                               (7, Fraction(1, 3), 9)])
    def test_matches_reference_on_all_points(self, n, rate, seed):
        target = parity(n, 3, seed)
        noisy = with_label_noise(target, rate, seed)
        check_against(noisy, lambda x: (-1 if reference_flip(x, seed, rate) else 1)
                      * int(np.prod(x[target.variables])), n)

    @pytest.mark.parametrize("n", [64, 65, 130])
    def test_matches_reference_multiword(self, n):
        points = np.where(np.random.default_rng(n).random((300, n)) < 0.5, 1, -1)
        noisy = with_label_noise(Parity(n, []), 0.3, 42)
        expected = [reference_flip(x, 42, 0.3) for x in points]
        np.testing.assert_array_equal(noisy.flips(points.astype(np.int8)), expected)

    def test_known_answer(self):
        noisy = with_label_noise(Parity(8, []), 0.25, 0)
        flips = np.packbits(noisy.flips(all_points(8)), bitorder="little")
        assert flips.tobytes().hex() == (
            "302800321b1889401800385c0c58800a2408c50b48800c026a5ac0a441480000")

    def test_fixed_function_of_x(self):
        noisy = with_label_noise(random_tree(12, 30, 3), 0.2, 11)
        points = all_points(12)
        whole = noisy.query(points)
        np.testing.assert_array_equal(noisy.query(points), whole)
        order = np.random.default_rng(0).permutation(len(points))
        np.testing.assert_array_equal(noisy.query(points[order]), whole[order])
        pieces = [noisy.query(points[i:i + 97]) for i in range(0, len(points), 97)]
        np.testing.assert_array_equal(np.concatenate(pieces), whole)
        np.testing.assert_array_equal(
            [noisy.query(points[i:i + 1])[0] for i in range(0, len(points), 301)],
            whole[::301])

    # Per case Pr[|rate_hat - rate| >= t] <= 2 exp(-2 N t^2) = 2.5e-10 for N = 2**16
    # points, treating h as a random function; 4 cases, so failure < 1e-9.
    @pytest.mark.parametrize("rate, seed", [(0.05, 0), (0.1, 1), (0.25, 2), (0.5, 3)])
    def test_flip_rate_hoeffding(self, rate, seed):
        points = all_points(16)
        count = len(points)
        tolerance = math.sqrt(math.log(2 / 2.5e-10) / (2 * count))
        noisy = with_label_noise(tribes(16, 2, 4, seed), rate, seed)
        observed = np.mean(noisy.query(points) != noisy.target.query(points))
        assert abs(observed - rate) < tolerance

    def test_rate_zero_and_threshold(self):
        target = junta(10, 4, 0)
        exact = with_label_noise(target, 0, 5)
        np.testing.assert_array_equal(exact.query(all_points(10)),
                                      target.query(all_points(10)))
        assert with_label_noise(target, 0.5, 5).threshold == 2**63
        assert with_label_noise(target, 0.1, 5).threshold == math.floor(
            Fraction(0.1) * 2**64)

    def test_attributes(self):
        target = parity(10, 3, 0)
        noisy = with_label_noise(target, 0.1, 5)
        assert isinstance(noisy, LabelNoise)
        assert (noisy.size, noisy.depth, noisy.n) == (None, None, 10)
        assert noisy.target is target and noisy.rate == 0.1
        assert CountingOracle(noisy).query(all_points(10)).shape == (1024,)

    @pytest.mark.parametrize("args, error, match", [
        ((Parity(3, [0]), 0.6, 0), ValueError,
         r"The 'rate' parameter of with_label_noise must be a real number in "
         r"\[0, 0\.5\]\. Got 0\.6 instead"),
        ((Parity(3, [0]), -0.0001, 0), ValueError, r"'rate' .* Got -0\.0001 instead"),
        ((Parity(3, [0]), float("nan"), 0), ValueError, r"'rate' .* Got nan instead"),
        ((Parity(3, [0]), "0.1", 0), TypeError, r"'rate' .* Got '0\.1' of type str"),
        ((Parity(3, [0]), False, 0), TypeError, r"'rate' .* Got False of type bool"),
        ((Parity(3, [0]), 0.1, -2), ValueError,
         r"The 'seed' parameter of with_label_noise must be an int in the range \[0, 2\*\*64\)"),
        ((len, 0.1, 0), TypeError,
         r"The 'target' parameter of with_label_noise must be an lca\.oracle\.Oracle\. "
         r"Got builtin_function_or_method instead"),
    ])
    def test_errors(self, args, error, match):
        with pytest.raises(error, match=match):
            with_label_noise(*args)


# ---------------------------------------------------------------- structured targets


def reference_parity(variables):
    return lambda x: int(np.prod([int(x[v]) for v in variables]))


def reference_multiplexer(address, data):
    def f(x):
        index = sum((1 << j) for j, v in enumerate(address) if x[v] == -1)
        return int(x[data[index]])
    return f


def reference_tribes(variables, width):
    groups = [variables[i:i + width] for i in range(0, len(variables), width)]
    return lambda x: -1 if any(all(x[v] == -1 for v in g) for g in groups) else 1


def reference_majority(variables):
    return lambda x: 1 if sum(int(x[v]) for v in variables) > 0 else -1


def reference_junta(variables, table):
    def f(x):
        index = sum((1 << j) for j, v in enumerate(variables) if x[v] == -1)
        return int(table[index])
    return f


STRUCTURED = [
    pytest.param(lambda: Parity(7, [6, 0, 3]), reference_parity([0, 3, 6]), 7, 8, 3,
                 id="Parity"),
    pytest.param(lambda: Parity(6, []), lambda x: 1, 6, 1, 0, id="Parity-k0"),
    pytest.param(lambda: parity(10, 4, 0), reference_parity([0, 3, 4, 7]), 10, 16, 4,
                 id="parity-seeded"),
    pytest.param(lambda: Multiplexer(7, 2, [6, 1, 0, 2, 3, 5]),
                 reference_multiplexer([6, 1], [0, 2, 3, 5]), 7, 8, 3, id="Multiplexer"),
    pytest.param(lambda: Multiplexer(6, 0, [4]), lambda x: int(x[4]), 6, 2, 1,
                 id="Multiplexer-k0"),
    pytest.param(lambda: Multiplexer(11, 3), reference_multiplexer(
        [0, 1, 2], list(range(3, 11))), 11, 16, 4, id="Multiplexer-default"),
    pytest.param(lambda: multiplexer(10, 2, 0),
                 reference_multiplexer([0, 8], [9, 7, 6, 5]), 10, 8, 3,
                 id="multiplexer-seeded"),
    pytest.param(lambda: Tribes(8, 3, 2, [7, 0, 1, 2, 5, 4]),
                 reference_tribes([7, 0, 1, 2, 5, 4], 3), 8, 13, 6, id="Tribes"),
    pytest.param(lambda: Tribes(6, 1, 4), reference_tribes([0, 1, 2, 3], 1), 6, 5, 4,
                 id="Tribes-or"),
    pytest.param(lambda: Tribes(6, 5, 1), reference_tribes([0, 1, 2, 3, 4], 5), 6, 6, 5,
                 id="Tribes-and"),
    pytest.param(lambda: tribes(10, 2, 3, 0), reference_tribes([7, 4, 2, 0, 8, 6], 2),
                 10, 15, 6, id="tribes-seeded"),
    pytest.param(lambda: Majority(7, [5, 1, 2]), reference_majority([1, 2, 5]), 7, 6, 3,
                 id="Majority"),
    pytest.param(lambda: Majority(6, [3]), lambda x: int(x[3]), 6, 2, 1,
                 id="Majority-k1"),
    pytest.param(lambda: majority(10, 5, 0), reference_majority([4, 6, 7, 8, 9]), 10,
                 20, 5, id="majority-seeded"),
    pytest.param(lambda: Junta(6, [4, 1], [1, -1, -1, -1]),
                 reference_junta([4, 1], [1, -1, -1, -1]), 6, 3, 2, id="Junta-and"),
    # The natural tree queries in the given order, so an irrelevant first
    # variable doubles its size; irrelevant later variables are pruned.
    pytest.param(lambda: Junta(6, [4, 1, 2], [1, 1, -1, -1, 1, 1, -1, -1]),
                 reference_junta([4, 1, 2], [1, 1, -1, -1, 1, 1, -1, -1]), 6, 4, 2,
                 id="Junta-irrelevant-first-variable"),
    pytest.param(lambda: Junta(6, [4, 1, 2], [1, -1, 1, -1, 1, -1, 1, -1]),
                 lambda x: int(x[4]), 6, 2, 1, id="Junta-irrelevant-last-variables"),
    pytest.param(lambda: Junta(6, [], [-1]), lambda x: -1, 6, 1, 0, id="Junta-k0"),
    pytest.param(lambda: junta(10, 3, 0),
                 reference_junta([4, 1, 3], [-1, 1, -1, -1, -1, 1, -1, 1]), 10, 4, 3,
                 id="junta-seeded"),
]


class TestStructured:
    @pytest.mark.parametrize("make, reference, n, size, depth", STRUCTURED)
    def test_values_size_depth(self, make, reference, n, size, depth):
        target = make()
        check_against(target, reference, target.n)
        assert (target.size, target.depth) == (size, depth)

    @pytest.mark.parametrize("make, reference, n, size, depth", STRUCTURED)
    def test_decision_tree_matches(self, make, reference, n, size, depth):
        target = make()
        tree = target.decision_tree()
        assert (tree.size, tree.depth) == (target.size, target.depth)
        points = all_points(target.n)
        np.testing.assert_array_equal(tree.query(points), target.query(points))

    @pytest.mark.parametrize("make_seeded", [
        lambda seed: parity(12, 5, seed), lambda seed: multiplexer(12, 3, seed),
        lambda seed: tribes(12, 3, 3, seed), lambda seed: majority(12, 7, seed),
        lambda seed: junta(12, 6, seed)])
    def test_seeded_deterministic_and_seed_dependent(self, make_seeded):
        points = all_points(12)
        first = make_seeded(0).query(points)
        np.testing.assert_array_equal(make_seeded(0).query(points), first)
        assert any(not np.array_equal(make_seeded(s).query(points), first)
                   for s in (1, 2, 3))

    def test_junta_random_table_sizes(self):
        for seed in range(20):
            target = junta(9, 5, seed)
            nested = target.decision_tree().to_nested()
            assert nested_shape(nested) == (target.size, target.depth)
            assert target.size <= 32 and target.depth <= 5

    @pytest.mark.parametrize("make, error, match", [
        (lambda: Parity(5, [0, 5]), ValueError,
         r"The 'variables' parameter of Parity must be a sequence of distinct ints in "
         r"\[0, 5\)\. Got 5 instead"),
        (lambda: Parity(5, [1, 2, 1]), ValueError, r"Got 1 more than once"),
        (lambda: Parity(5, [1, True]), TypeError,
         r"Got element True of type bool instead"),
        (lambda: Parity(5, {1, 2}), TypeError,
         r"\(list, tuple, range or 1-d integer array\)\. Got set instead"),
        (lambda: Parity(5, np.array([1.0])), TypeError,
         r"Got an array of dtype float64 and shape \(1,\) instead"),
        (lambda: Parity(True, [0]), TypeError,
         r"The 'n' parameter of Parity must be an int in the range \[1, 2\*\*31 - 1\]\. Got True"),
        (lambda: parity(5, 6, 0), ValueError,
         r"The 'k' parameter of parity must be an int in the range \[0, n\]\. Got 6 instead"),
        (lambda: Multiplexer(5, 2), ValueError,
         r"The 'address_bits' parameter of Multiplexer must be an int k >= 0 with "
         r"k \+ 2\*\*k <= n = 5\. Got 2 instead"),
        (lambda: Multiplexer(8, 2, [0, 1, 2]), ValueError,
         r"The 'variables' parameter of Multiplexer must have k \+ 2\*\*k = 6 entries "
         r"for address_bits=2\. Got 3 instead"),
        (lambda: multiplexer(5, 2, 0), ValueError,
         r"The 'k' parameter of multiplexer must be an int k >= 0 with k \+ 2\*\*k <= "
         r"n = 5\. Got 2 instead"),
        (lambda: Tribes(6, 0, 2), ValueError,
         r"The 'width' parameter of Tribes must be an int in the range \[1, n\]\. Got 0 instead"),
        (lambda: Tribes(6, 4, 2), ValueError,
         r"The 'count' parameter of Tribes must be an int in the range \[1, n // width\]\. "
         r"Got 2 instead"),
        (lambda: Tribes(6, 2, 2, [0, 1, 2]), ValueError,
         r"must have width\*count = 4 entries\. Got 3 instead"),
        (lambda: tribes(6, 2, 4, 0), ValueError,
         r"The 'count' parameter of tribes must be an int in the range \[1, n // width\]"),
        (lambda: Majority(6, [0, 1]), ValueError,
         r"The 'variables' parameter of Majority must have an odd number of entries\. "
         r"Got 2 instead"),
        (lambda: majority(6, 4, 0), ValueError,
         r"The 'k' parameter of majority must be an odd int in \[1, n\]\. Got 4"),
        (lambda: majority(6, 3, 1.5), TypeError,
         r"The 'seed' parameter of majority must be an int in the range \[0, 2\*\*64\)\. "
         r"Got 1\.5 instead"),
        (lambda: Junta(6, [0, 1], [1, -1, 1]), ValueError,
         r"The 'table' parameter of Junta must have shape \(4,\)\. Got shape \(3,\)"),
        (lambda: Junta(6, [0], [1, 0]), ValueError,
         r"The 'table' parameter of Junta must contain only -1 and \+1\. Got 0 instead"),
        (lambda: Junta(6, [0], [True, False]), TypeError,
         r"The 'table' parameter of Junta must be an integer array of ±1 values\. "
         r"Got dtype bool instead"),
        (lambda: junta(30, 25, 0), ValueError,
         r"The 'k' parameter of junta must be an int in the range \[0, min\(n, 24\)\]\. Got 25"),
    ])
    def test_errors(self, make, error, match):
        with pytest.raises(error, match=match):
            make()


# ---------------------------------------------------------------- pickling

PICKLABLE = [
    pytest.param(lambda: random_tree(9, 25, 4, "sibling_differing"), id="DecisionTree"),
    pytest.param(lambda: with_label_noise(majority(9, 5, 1), 0.2, 3), id="LabelNoise"),
    pytest.param(lambda: parity(9, 4, 1), id="Parity"),
    pytest.param(lambda: multiplexer(9, 2, 1), id="Multiplexer"),
    pytest.param(lambda: tribes(9, 2, 4, 1), id="Tribes"),
    pytest.param(lambda: majority(9, 5, 1), id="Majority"),
    pytest.param(lambda: junta(9, 5, 1), id="Junta"),
]


@pytest.mark.parametrize("make", PICKLABLE)
def test_pickle_round_trip(make):
    target = make()
    clone = pickle.loads(pickle.dumps(target))
    assert type(clone) is type(target)
    assert (clone.n, clone.name, clone.size, clone.depth) == (
        target.n, target.name, target.size, target.depth)
    points = all_points(9)
    np.testing.assert_array_equal(clone.query(points), target.query(points))
