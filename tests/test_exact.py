"""Tests for lca.exact: enumeration references and the exact tree optimum.

The references are checked against deliberately naive Python: NS_p by
enumerating (x, re-randomized set, new values), Fourier coefficients by their
definition, scores by their definition, and opt_size / opt_depth by
enumerating every decision tree on n <= 3 (n = 4 for small budgets).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from lca import exact
from lca.oracle import Oracle, OracleError

# --------------------------------------------------------------------------
# Test functions (independent of lca.targets)
# --------------------------------------------------------------------------

class FnOracle(Oracle):
    """Oracle from a vectorised function of an (m, n) array of ±1."""

    def __init__(self, n, fn, name="fn"):
        self.n = n
        self.fn = fn
        self.name = name

    def query(self, points):
        return np.asarray(self.fn(points), dtype=np.int8)


def parity(n, variables):
    return FnOracle(n, lambda x: np.prod(x[:, list(variables)], axis=1), f"parity{variables}")


def majority(n, variables):
    return FnOracle(n, lambda x: np.sign(x[:, list(variables)].sum(axis=1)), f"maj{variables}")


def dictator(n, i):
    return FnOracle(n, lambda x: x[:, i], f"x{i}")


def constant(n, value):
    return FnOracle(n, lambda x: np.full(x.shape[0], value), f"const{value}")


def evaluate_tree(tree, points):
    """Evaluate a nested tree on the rows of ``points`` (independent of lca)."""
    if isinstance(tree, int):
        assert tree in (-1, 1)
        return np.full(points.shape[0], tree, dtype=np.int8)
    out = np.empty(points.shape[0], dtype=np.int8)
    minus = points[:, tree["var"]] == -1
    out[minus] = evaluate_tree(tree["minus"], points[minus])
    out[~minus] = evaluate_tree(tree["plus"], points[~minus])
    return out


def tree_oracle(n, tree):
    return FnOracle(n, lambda x: evaluate_tree(tree, x), "tree")


def tree_leaves(tree):
    return 1 if isinstance(tree, int) else tree_leaves(tree["minus"]) + tree_leaves(tree["plus"])


def tree_depth(tree):
    if isinstance(tree, int):
        return 0
    return 1 + max(tree_depth(tree["minus"]), tree_depth(tree["plus"]))


def tree_paths_repeat_a_variable(tree, seen=()):
    if isinstance(tree, int):
        return False
    if tree["var"] in seen:
        return True
    seen = seen + (tree["var"],)
    return (tree_paths_repeat_a_variable(tree["minus"], seen)
            or tree_paths_repeat_a_variable(tree["plus"], seen))


def all_points(n):
    """Row t is the point with x_i = (-1)**(bit i of t), built the slow way."""
    rows = [[(-1) ** ((t >> i) & 1) for i in range(n)] for t in range(2 ** n)]
    return np.array(rows, dtype=np.int8).reshape(2 ** n, n)


def random_table(n, seed):
    rng = np.random.default_rng(seed)
    return rng.choice(np.array([-1, 1], dtype=np.int8), size=2 ** n)


def index_of(point):
    return sum(((1 - v) // 2) << i for i, v in enumerate(point))


def naive_restrict(table, n, path):
    """Restricted table by looping over all points (free variables in order)."""
    fixed = dict(path)
    free = [i for i in range(n) if i not in fixed]
    out = []
    for t in range(2 ** len(free)):
        point = [0] * n
        for i, v in fixed.items():
            point[i] = v
        for j, i in enumerate(free):
            point[i] = (-1) ** ((t >> j) & 1)
        out.append(table[index_of(point)])
    return np.array(out, dtype=np.int8)


def naive_noise_sensitivity(table, p):
    """Pr[f(x) != f(y)] by enumerating x, the re-randomized set R and y on R."""
    n = len(table).bit_length() - 1
    total = 0.0
    for x in itertools.product((1, -1), repeat=n):
        for rerandomized in itertools.product((False, True), repeat=n):
            weight = math.prod(p if r else 1 - p for r in rerandomized)
            chosen = [i for i in range(n) if rerandomized[i]]
            for values in itertools.product((1, -1), repeat=len(chosen)):
                y = list(x)
                for i, v in zip(chosen, values, strict=True):
                    y[i] = v
                if table[index_of(x)] != table[index_of(y)]:
                    total += weight * 0.5 ** len(chosen)
    return total / 2 ** n


def naive_fourier(table):
    n = len(table).bit_length() - 1
    points = all_points(n)
    out = []
    for mask in range(2 ** n):
        chi = np.prod(points[:, [i for i in range(n) if mask >> i & 1]], axis=1)
        out.append(int(np.dot(table.astype(np.int64), chi)) / 2 ** n)
    return np.array(out)


# Tiny functions used across the Part A tests: (name, table).
TINY_TABLES = [
    ("const+", constant(3, 1)),
    ("dictator", dictator(3, 1)),
    ("parity2", parity(3, (0, 2))),
    ("parity3", parity(3, (0, 1, 2))),
    ("maj3", majority(3, (0, 1, 2))),
    ("random3", random_table(3, 1)),
    ("random4a", random_table(4, 2)),
    ("random4b", random_table(4, 3)),
]
TINY_TABLES = [(name, f if isinstance(f, np.ndarray) else exact.truth_table(f))
               for name, f in TINY_TABLES]


# --------------------------------------------------------------------------
# Part A
# --------------------------------------------------------------------------

class TestTruthTable:
    @pytest.mark.parametrize("n, i, expected", [
        (3, 0, [1, -1, 1, -1, 1, -1, 1, -1]),
        (3, 2, [1, 1, 1, 1, -1, -1, -1, -1]),
        (1, 0, [1, -1]),
    ])
    def test_index_convention(self, n, i, expected):
        np.testing.assert_array_equal(exact.truth_table(dictator(n, i)), expected)

    def test_matches_slow_enumeration(self):
        f = majority(5, (0, 3, 4))
        table = exact.truth_table(f)
        assert table.dtype == np.int8 and table.shape == (32,)
        np.testing.assert_array_equal(table, f.query(all_points(5)))

    def test_chunking_does_not_change_the_table(self, monkeypatch):
        f = parity(17, (0, 5, 16))
        whole = exact.truth_table(f)  # 2**17 rows: two chunks
        monkeypatch.setattr(exact, "_CHUNK_ROWS", 1000)
        np.testing.assert_array_equal(exact.truth_table(f), whole)
        t = np.arange(2 ** 17)
        expected = (-1) ** (((t >> 0) ^ (t >> 5) ^ (t >> 16)) & 1)
        np.testing.assert_array_equal(whole, expected)

    @pytest.mark.parametrize("path", [
        (), ((1, -1),), ((3, 1), (0, -1)), ((0, 1), (1, 1), (2, -1), (3, -1))])
    def test_path_equals_restriction_of_full_table(self, path):
        f = majority(4, (0, 1, 3))
        full = exact.truth_table(f)
        np.testing.assert_array_equal(exact.truth_table(f, path), naive_restrict(full, 4, path))

    def test_path_makes_large_n_enumerable(self):
        f = parity(21, (0, 20))
        table = exact.truth_table(f, ((20, -1),))
        assert table.shape == (2 ** 20,)
        np.testing.assert_array_equal(table[:4], [-1, 1, -1, 1])

    def test_rejects_too_many_free_variables(self):
        with pytest.raises(ValueError, match="at most 20 free variables; got k=21"):
            exact.truth_table(constant(21, 1))

    def test_rejects_non_oracle(self):
        with pytest.raises(TypeError, match="lca.oracle.Oracle"):
            exact.truth_table(lambda x: 1)

    def test_rejects_bad_answers(self):
        with pytest.raises(OracleError, match="expected only -1 and \\+1"):
            exact.truth_table(FnOracle(2, lambda x: np.zeros(x.shape[0], dtype=np.int8)))


class TestRestrict:
    @pytest.mark.parametrize("path", [
        (), ((0, 1),), ((2, -1), (0, 1)), ((1, -1), (2, 1), (3, 1), (0, -1))])
    def test_table_and_oracle_routes(self, path):
        table = random_table(4, 7)
        restricted, free = exact.restrict(table, path)
        assert free == tuple(i for i in range(4) if i not in dict(path))
        np.testing.assert_array_equal(restricted, naive_restrict(table, 4, path))
        oracle = FnOracle(4, lambda x: table[[index_of(row) for row in x]])
        via_oracle, free_oracle = exact.restrict(oracle, path)
        np.testing.assert_array_equal(via_oracle, restricted)
        assert free_oracle == free

    @pytest.mark.parametrize("path, error, match", [
        ([(0, 1), (0, 1)], ValueError, "fixes variable 0 twice"),
        (((3, 1),), ValueError, "variable must be in \\[0, 3\\); got 3"),
        (((0, 0),), ValueError, "value must be -1 or \\+1; got 0"),
        (((0, True),), TypeError, "pair of ints"),
        (((0.0, 1),), TypeError, "pair of ints"),
        (((0, 1, 2),), TypeError, "pair"),
        ("ab", TypeError, "path must be a tuple"),
    ])
    def test_validation(self, path, error, match):
        with pytest.raises(error, match=match):
            exact.restrict(random_table(3, 0), path)

    @pytest.mark.parametrize("bad, error, match", [
        (np.array([1, -1, 1], dtype=np.int8), TypeError, "shape \\(2\\*\\*n,\\)"),
        (np.array([1.0, -1.0]), TypeError, "dtype float64"),
        (np.array([1, 0], dtype=np.int8), ValueError, "found 0"),
        ([1, -1], TypeError, "got list"),
    ])
    def test_rejects_bad_tables(self, bad, error, match):
        with pytest.raises(error, match=match):
            exact.mean(bad)


class TestMeanAndDistance:
    @pytest.mark.parametrize("f, path, expected", [
        (constant(3, -1), (), -1.0),
        (dictator(3, 0), (), 0.0),
        (dictator(3, 0), ((0, -1),), -1.0),
        (majority(3, (0, 1, 2)), ((0, 1),), 0.5),
        (majority(3, (0, 1, 2)), ((0, 1), (1, 1)), 1.0),
    ])
    def test_mean(self, f, path, expected):
        assert exact.mean(f, path) == expected
        assert exact.mean(exact.truth_table(f), path) == expected

    @pytest.mark.parametrize("f, g, expected", [
        (dictator(3, 0), dictator(3, 0), 0.0),
        (dictator(3, 0), dictator(3, 1), 0.5),
        (majority(3, (0, 1, 2)), dictator(3, 2), 0.25),
        (constant(2, 1), parity(2, (0, 1)), 0.5),
    ])
    def test_distance(self, f, g, expected):
        assert exact.distance(f, g) == expected
        assert exact.distance(exact.truth_table(f), g) == expected

    def test_distance_rejects_mismatched_n(self):
        with pytest.raises(ValueError, match="same n; got 2 and 3"):
            exact.distance(constant(2, 1), constant(3, 1))


class TestFourier:
    @pytest.mark.parametrize("name, table", TINY_TABLES)
    def test_matches_definition_exactly(self, name, table):
        coefficients = exact.fourier(table)
        assert coefficients.dtype == np.float64
        np.testing.assert_array_equal(coefficients, naive_fourier(table))
        assert np.sum(coefficients ** 2) == pytest.approx(1.0)  # Parseval

    def test_parity_is_one_character(self):
        coefficients = exact.fourier(parity(5, (1, 3)))
        expected = np.zeros(32)
        expected[0b01010] = 1.0
        np.testing.assert_array_equal(coefficients, expected)

    @pytest.mark.parametrize("f, degree", [
        (constant(3, 1), 0),
        (dictator(4, 2), 1),
        (parity(6, (0, 2, 3, 5)), 4),
        (majority(3, (0, 1, 2)), 3),
        (majority(5, (0, 1, 2, 3, 4)), 5),
        (FnOracle(3, lambda x: np.where((x[:, 0] == -1) & (x[:, 2] == -1), -1, 1)), 2),
    ])
    def test_degree(self, f, degree):
        assert exact.fourier_degree(f) == degree


NOISE_RATES = [0.0, 0.1, 0.5, 0.93, 1.0]


class TestNoiseSensitivity:
    @pytest.mark.parametrize("name, table", TINY_TABLES)
    @pytest.mark.parametrize("p", NOISE_RATES)
    def test_matches_enumeration(self, name, table, p):
        assert exact.noise_sensitivity(table, p) == pytest.approx(
            naive_noise_sensitivity(table, p), abs=1e-12)

    @pytest.mark.parametrize("path", [
        ((0, 1),), ((3, -1), (1, 1)), ((0, -1), (1, -1), (2, 1), (3, 1))])
    @pytest.mark.parametrize("p", [0.2, 0.7])
    def test_restricted_matches_enumeration(self, path, p):
        table = random_table(4, 11)
        expected = naive_noise_sensitivity(naive_restrict(table, 4, path), p)
        assert exact.noise_sensitivity(table, p, path) == pytest.approx(expected, abs=1e-12)

    @pytest.mark.parametrize("p", NOISE_RATES)
    @pytest.mark.parametrize("f, formula", [
        (dictator(6, 4), lambda p: p / 2),
        (parity(6, (0, 1, 5)), lambda p: (1 - (1 - p) ** 3) / 2),
        (constant(6, -1), lambda p: 0.0),
    ])
    def test_known_values(self, f, formula, p):
        assert exact.noise_sensitivity(f, p) == pytest.approx(formula(p), abs=1e-15)

    def test_full_noise_is_variance_over_two(self):
        table = random_table(8, 5)
        assert exact.noise_sensitivity(table, 1.0) == pytest.approx(
            (1 - exact.mean(table) ** 2) / 2, abs=1e-15)

    @pytest.mark.parametrize("p, error, match", [
        (1.5, ValueError, r"\[0.0, 1.0\]. Got 1.5 instead"),
        (-0.1, ValueError, r"\[0.0, 1.0\]. Got -0.1 instead"),
        (float("nan"), ValueError, r"\[0.0, 1.0\]. Got nan instead"),
        (True, TypeError, r"\[0.0, 1.0\]. Got True instead"),
        ("0.1", TypeError, r"\[0.0, 1.0\]. Got '0.1' instead"),
    ])
    def test_validation(self, p, error, match):
        with pytest.raises(error, match="The 'p' parameter of noise_sensitivity must be a "
                                        "real number in the range " + match):
            exact.noise_sensitivity(constant(2, 1), p)


def scores_by_definition(f, p, path, n, ns):
    """Score_i(f_α) = NS(f_α) - E_b NS(f_{α, x_i=b}) with ns(path) the NS of f_path."""
    out = np.zeros(n)
    fixed = dict(path)
    for i in range(n):
        if i in fixed:
            continue
        out[i] = ns(path) - (ns(path + ((i, 1),)) + ns(path + ((i, -1),))) / 2
    return out


class TestScores:
    @pytest.mark.parametrize("name, table", TINY_TABLES)
    @pytest.mark.parametrize("path", [(), ((0, -1),), ((2, 1), (1, -1))])
    @pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
    def test_matches_definition_with_enumerated_ns(self, name, table, path, p):
        n = len(table).bit_length() - 1
        expected = scores_by_definition(
            table, p, path, n,
            lambda q: naive_noise_sensitivity(naive_restrict(table, n, q), p))
        np.testing.assert_allclose(exact.scores(table, p, path), expected, atol=1e-12)

    @pytest.mark.parametrize("seed", [0, 1])
    @pytest.mark.parametrize("path", [(), ((5, 1),), ((0, -1), (7, 1), (3, 1))])
    def test_matches_definition_with_exact_ns(self, seed, path):
        table = random_table(8, seed)
        expected = scores_by_definition(
            table, 0.15, path, 8, lambda q: exact.noise_sensitivity(table, 0.15, q))
        got = exact.scores(table, 0.15, path)
        assert got.shape == (8,) and got.dtype == np.float64
        np.testing.assert_allclose(got, expected, atol=1e-12)
        assert all(got[i] == 0.0 for i, _ in path)

    def test_oracle_and_table_agree(self):
        f = majority(7, (1, 2, 4, 5, 6))
        path = ((2, 1), (0, -1))
        np.testing.assert_array_equal(exact.scores(f, 0.25, path),
                                      exact.scores(exact.truth_table(f), 0.25, path))

    @pytest.mark.parametrize("p", [0.1, 0.5])
    def test_known_values(self, p):
        np.testing.assert_allclose(exact.scores(dictator(4, 2), p), [0, 0, p / 2, 0], atol=1e-15)
        expected = [p * (1 - p) ** 2 / 2 if i in (0, 1, 3) else 0.0 for i in range(5)]
        np.testing.assert_allclose(exact.scores(parity(5, (0, 1, 3)), p), expected, atol=1e-15)

    def test_validation(self):
        with pytest.raises(ValueError, match="The 'p' parameter of scores must be"):
            exact.scores(constant(2, 1), 2)
        with pytest.raises(ValueError, match="scores: path fixes variable 1 twice"):
            exact.scores(constant(2, 1), 0.1, ((1, 1), (1, -1)))


# --------------------------------------------------------------------------
# Part B: brute force over all trees
# --------------------------------------------------------------------------
#
# A function is an int bitmask over the 2**n points (bit t set iff f = -1 at
# point t). Trees never repeat a variable on a path; that loses nothing, since
# a repeated query can be pruned without changing the function or adding
# leaves.

def _variable_masks(n):
    return [sum(1 << t for t in range(2 ** n) if t >> i & 1) for i in range(n)]


def _table_mask(table):
    return sum(1 << t for t, v in enumerate(table) if v == -1)


def brute_by_depth(n, depth):
    masks, full = _variable_masks(n), (1 << 2 ** n) - 1
    memo = {}

    def functions(free, d):
        key = (free, d)
        if key not in memo:
            found = {0, full}
            if d > 0:
                for i in free:
                    rest = functions(free - {i}, d - 1)
                    found |= {(a & masks[i]) | (b & ~masks[i] & full) for a in rest for b in rest}
            memo[key] = frozenset(found)
        return memo[key]

    return functions(frozenset(range(n)), depth)


def brute_by_size(n, size):
    masks, full = _variable_masks(n), (1 << 2 ** n) - 1
    memo = {}

    def functions(free, k):  # at most k leaves
        key = (free, k)
        if key not in memo:
            found = {0, full}
            if k > 1:
                found |= functions(free, k - 1)
                for i in free:
                    for k_minus in range(1, k):
                        minus = functions(free - {i}, k_minus)
                        plus = functions(free - {i}, k - k_minus)
                        found |= {(a & masks[i]) | (b & ~masks[i] & full)
                                  for a in minus for b in plus}
            memo[key] = frozenset(found)
        return memo[key]

    return functions(frozenset(range(n)), size)


def brute_errors(table, functions):
    target = _table_mask(table)
    return min(bin(target ^ g).count("1") for g in functions)


BRUTE_CASES = [(n, seed) for n in (1, 2, 3) for seed in range(4)] + [(4, 0), (4, 1)]


def _check_optimum(table, result, errors):
    n = len(table).bit_length() - 1
    assert result.errors == errors
    assert result.distance == errors / 2 ** n
    values = evaluate_tree(result.tree, all_points(n))
    assert int(np.count_nonzero(values != table)) == errors
    assert not tree_paths_repeat_a_variable(result.tree)


class TestOptDepth:
    @pytest.mark.parametrize("n, seed", BRUTE_CASES)
    def test_equals_brute_force(self, n, seed):
        table = random_table(n, 100 + seed)
        for d in range(0, min(n, 3) + 2):
            result = exact.opt_depth(table, d, return_tree=True)
            _check_optimum(table, result, brute_errors(table, brute_by_depth(n, min(d, n))))
            assert tree_depth(result.tree) <= d

    @pytest.mark.parametrize("k", [1, 2, 3, 4])
    def test_parity(self, k):
        f = parity(6, tuple(range(6 - k, 6)))
        assert exact.opt_depth(f, k).distance == 0.0
        assert exact.opt_depth(f, k - 1).distance == 0.5

    @pytest.mark.parametrize("d, expected", [(0, 0.5), (1, 0.25), (2, 0.25), (3, 0.0), (7, 0.0)])
    def test_majority_of_three(self, d, expected):
        assert exact.opt_depth(majority(4, (0, 1, 3)), d).distance == expected

    @pytest.mark.parametrize("f, d, tree", [
        (constant(3, -1), 2, -1),
        (dictator(3, 1), 2, {"var": 1, "minus": -1, "plus": 1}),
        (parity(2, (0, 1)), 1, 1),  # nothing beats a leaf: leaf, tie label +1
        (parity(2, (0, 1)), 2, {"var": 0, "minus": {"var": 1, "minus": 1, "plus": -1},
                                "plus": {"var": 1, "minus": -1, "plus": 1}}),
    ])
    def test_tie_breaking(self, f, d, tree):
        assert exact.opt_depth(f, d, return_tree=True).tree == tree

    def test_returned_tree_has_minimal_depth(self):
        table = random_table(6, 9)
        result = exact.opt_depth(table, 6, return_tree=True)
        depth = tree_depth(result.tree)
        assert exact.opt_depth(table, depth).errors == result.errors
        assert depth == 0 or exact.opt_depth(table, depth - 1).errors > result.errors

    def test_oracle_and_table_agree_and_repeat(self):
        f = majority(7, (0, 2, 3, 5, 6))
        a = exact.opt_depth(f, 3, return_tree=True)
        b = exact.opt_depth(exact.truth_table(f), 3, return_tree=True)
        assert a == b and a.tree is not None
        assert exact.opt_depth(f, 3).tree is None


class TestOptSize:
    @pytest.mark.parametrize("n, seed", BRUTE_CASES)
    def test_equals_brute_force(self, n, seed):
        table = random_table(n, 200 + seed)
        for s in range(1, min(2 ** n, 5 if n == 4 else 8) + 2):
            result = exact.opt_size(table, s, return_tree=True)
            _check_optimum(table, result, brute_errors(table, brute_by_size(n, s)))
            assert tree_leaves(result.tree) <= s

    @pytest.mark.parametrize("s, expected", [(1, 0.5), (2, 0.25), (5, 0.125), (6, 0.0), (9, 0.0)])
    def test_majority_of_three(self, s, expected):
        assert exact.opt_size(majority(5, (1, 2, 4)), s).distance == expected

    def test_non_increasing_and_returned_tree_is_smallest(self):
        table = random_table(6, 4)
        errors = [exact.opt_size(table, s).errors for s in range(1, 17)]
        assert all(a >= b for a, b in itertools.pairwise(errors))
        for s in (3, 8, 16):
            result = exact.opt_size(table, s, return_tree=True)
            leaves = tree_leaves(result.tree)
            assert errors[leaves - 1] == result.errors
            assert leaves == 1 or errors[leaves - 2] > result.errors

    HAND_TREE = {"var": 3,
                 "minus": {"var": 0, "minus": 1, "plus": -1},
                 "plus": {"var": 1,
                          "minus": {"var": 4, "minus": -1, "plus": 1},
                          "plus": 1}}

    def test_a_tree_of_s_leaves_has_distance_zero(self):
        f = tree_oracle(6, self.HAND_TREE)
        result = exact.opt_size(f, 5, return_tree=True)
        assert result.errors == 0 and result.distance == 0.0
        assert exact.opt_size(f, 4).errors > 0
        np.testing.assert_array_equal(evaluate_tree(result.tree, all_points(6)),
                                      exact.truth_table(f))
        assert exact.opt_depth(f, 3).distance == 0.0
        assert exact.opt_depth(f, 2).distance > 0.0

    @pytest.mark.parametrize("f, s, tree", [
        (constant(3, -1), 4, -1),
        (dictator(3, 1), 3, {"var": 1, "minus": -1, "plus": 1}),
        (parity(2, (0, 1)), 2, 1),
        # minus branch gets the smaller budget: one leaf (tie label +1), then x_1
        (parity(2, (0, 1)), 3, {"var": 0, "minus": 1, "plus": {"var": 1, "minus": -1, "plus": 1}}),
    ])
    def test_tie_breaking(self, f, s, tree):
        assert exact.opt_size(f, s, return_tree=True).tree == tree

    def test_oracle_and_table_agree(self):
        f = majority(7, (0, 2, 3, 5, 6))
        assert (exact.opt_size(f, 6, return_tree=True)
                == exact.opt_size(exact.truth_table(f), 6, return_tree=True))

    def test_twelve_variables(self):
        f = majority(12, (0, 5, 11))
        assert exact.opt_size(f, 6).distance == 0.0
        assert exact.opt_size(f, 5).distance == 0.125


@pytest.mark.parametrize("function, name", [(exact.opt_size, "s"), (exact.opt_depth, "d")])
class TestOptimumValidation:
    def test_rejects_too_many_variables(self, function, name):
        with pytest.raises(ValueError, match=f"{function.__name__} .* supports n <= 12; got n=13"):
            function(constant(13, 1), 2)

    @pytest.mark.parametrize("budget", [True, 2.0, "2", None])
    def test_rejects_non_int_budget(self, function, name, budget):
        with pytest.raises(TypeError, match=f"The '{name}' parameter of {function.__name__} "
                                            "must be an int"):
            function(constant(2, 1), budget)

    def test_rejects_out_of_range_budget(self, function, name):
        minimum = 1 if name == "s" else 0
        message = (f"The '{name}' parameter of {function.__name__} must be an int in the "
                   fr"range \[{minimum}, inf\). Got {minimum - 1} instead")
        with pytest.raises(ValueError, match=message):
            function(constant(2, 1), minimum - 1)

    def test_rejects_non_bool_return_tree(self, function, name):
        with pytest.raises(TypeError, match=f"The 'return_tree' parameter of "
                                            f"{function.__name__} must be a bool. Got 1"):
            function(constant(2, 1), 1, return_tree=1)

    def test_accepts_numpy_ints(self, function, name):
        assert function(constant(2, 1), np.int64(2)).errors == 0
