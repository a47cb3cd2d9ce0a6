"""scripts/bench_parallel.py's "when a pool pays": the break-even it states follows its table."""

import pathlib
import sys

import pytest

SCRIPTS = pathlib.Path(__file__).parent.parent / "scripts"


@pytest.fixture(scope="module")
def bench_parallel():
    sys.path.insert(0, str(SCRIPTS))  # the script imports its sibling bench_local
    try:
        import bench_parallel
        yield bench_parallel
    finally:
        sys.path.remove(str(SCRIPTS))


def test_the_break_even_is_the_first_size_where_the_pool_is_faster(bench_parallel):
    rows = [(1, 0.01, 1.51, 0.20), (100, 0.50, 1.90, 0.49), (1000, 5.0, 3.2, 2.9),
            (3000, 15.0, 8.0, 7.6)]
    text = "\n".join(bench_parallel.pays_lines(rows, 2))
    assert "Starting the pool costs about 1.50 s" in text
    assert "faster than one process from 1,000 answers" in text
    assert "pool already started (a new seed, so no cached node helps) from 100 answers" in text
    assert "| 1,000 | 5.000 | 3.200 | 2.900 | 0.64 | 0.58 |" in text


def test_a_pool_that_never_pays_says_so(bench_parallel):
    text = "\n".join(bench_parallel.pays_lines([(1, 0.01, 1.5, 0.2), (30, 0.1, 1.8, 0.3)], 2))
    assert text.count("at none of these sizes (up to 30)") == 2
