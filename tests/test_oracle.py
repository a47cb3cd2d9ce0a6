"""Oracle protocol: counting, validation, adapters."""

import pickle

import numpy as np
import pytest

from lca import oracle as lo
from lca import targets


def _points(rows):
    return np.array(rows, dtype=np.int8)


def _first_coordinate(x):
    return int(x[0])


def _and_bits(bits):
    return int(bits[0] & bits[1])


class TestCountingOracle:
    def test_counts_every_row(self):
        counted = lo.CountingOracle(targets.parity(n=5, k=2, seed=0))
        counted(_points([[1] * 5] * 3))
        counted(_points([[-1] * 5] * 4))
        assert counted.queries == 7 and counted.n == 5

    @pytest.mark.parametrize("values, match", [
        (np.array([1, 1]), r"returned shape \(2,\) for 1 points; expected \(1,\)"),
        (np.array([[1]]), r"returned shape \(1, 1\)"),
        (np.array([2]), "returned 2; expected only -1 and \\+1"),
        (np.array([1.0]), "returned dtype float64"),
        (np.array([True]), "returned dtype bool"),
    ])
    def test_rejects_bad_output_naming_the_oracle(self, values, match):
        class Bad(lo.Oracle):
            n, name = 3, "my-oracle"

            def query(self, points):
                return values

        with pytest.raises(lo.OracleError, match=f"oracle 'my-oracle' {match}"):
            lo.CountingOracle(Bad())(_points([[1, 1, 1]]))

    def test_rejects_non_oracles(self):
        with pytest.raises(TypeError, match="must be an lca.oracle.Oracle"):
            lo.CountingOracle(print)


class TestCheckPoints:
    @pytest.mark.parametrize("points, error, match", [
        (np.ones((2, 3)), TypeError, "integer array of ±1 values; got dtype float64"),
        (np.ones((2, 4), dtype=np.int8), TypeError, r"shape \(m, 3\); got shape \(2, 4\)"),
        (np.array([[1, 0, 1]]), ValueError, "only -1 and \\+1; found 0"),
    ])
    def test_errors(self, points, error, match):
        with pytest.raises(error, match=match):
            lo.check_points(points, 3)

    def test_accepts_any_integer_width(self):
        out = lo.check_points(np.array([[1, -1, 1]], dtype=np.int64), 3)
        assert out.dtype == np.int8 and out.tolist() == [[1, -1, 1]]


class TestAdapters:
    def test_from_callable(self):
        f = lo.from_callable(_first_coordinate, 3)
        assert f(_points([[1, -1, -1], [-1, 1, 1]])).tolist() == [1, -1]
        assert f.name == "_first_coordinate"
        assert pickle.loads(pickle.dumps(f))(_points([[-1, 1, 1]])).tolist() == [-1]

    def test_from_boolean_uses_bit_convention(self):
        # bit 1 <-> -1: AND of the bits is 1 only at x = (-1, -1), giving -1.
        f = lo.from_boolean(_and_bits, 2)
        assert f(_points([[-1, -1], [1, -1], [1, 1]])).tolist() == [-1, 1, 1]

    def test_adapter_errors(self):
        with pytest.raises(lo.OracleError, match="'bad' returned 0; expected -1 or \\+1"):
            lo.from_callable(lambda x: 0, 2, name="bad")(_points([[1, 1]]))
        with pytest.raises(lo.OracleError, match="returned 2; expected 0 or 1"):
            lo.from_boolean(lambda b: 2, 2, name="b")(_points([[1, 1]]))
        with pytest.raises(TypeError, match="The 'fn' parameter of from_callable must be "
                                            "callable. Got 3 instead"):
            lo.from_callable(3, 2)
        with pytest.raises(ValueError, match=r"The 'n' parameter of from_callable must be an "
                                             r"int in the range \[1, 2\*\*31 - 1\]. Got 0"):
            lo.from_callable(_first_coordinate, 0)
