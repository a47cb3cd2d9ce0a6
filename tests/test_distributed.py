"""Dask integration: a LocalCluster's workers are replicas; answers equal one process's."""

from __future__ import annotations

import logging
import sys

import numpy as np
import pytest

import lca
from lca import targets
from lca.consistency import ReplicaSpec, check_consistency, uniform_queries
from lca.params import Params

N = 48
PARAMS = Params.practical(n=N, depth=5, noise_rate=0.1, score_samples=150,
                          leaf_samples=80)
TARGET = targets.with_label_noise(targets.random_tree(N, 12, 3), 0.1, 4)
POINTS = uniform_queries(5, N, 250)


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("dask.array")
    pytest.importorskip("dask.bag")
    distributed = pytest.importorskip("dask.distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def expected(seed: int) -> np.ndarray:
    return lca.Reconstructor(TARGET, PARAMS).answer_many(POINTS, seed)


@pytest.mark.parametrize("seed", [0, 9])
def test_dask_array_answers_equal_single_process(client, seed: int) -> None:
    import dask.array as da

    from lca.distributed import answer_array

    lazy = answer_array(da.from_array(POINTS, chunks=(40, 16)), oracle=TARGET,
                        params=PARAMS, seed=seed)
    assert lazy.dtype == np.int8 and lazy.shape == (250,)
    np.testing.assert_array_equal(lazy.compute(), expected(seed))
    from_numpy = answer_array(POINTS, oracle=TARGET, params=PARAMS, seed=seed,
                              rows_per_block=64)
    np.testing.assert_array_equal(from_numpy.compute(), expected(seed))


def test_dask_bag_answers_equal_single_process(client) -> None:
    import dask.bag as db

    from lca.distributed import answer_bag

    bag = db.from_sequence(POINTS.tolist(), npartitions=5)
    answers = answer_bag(bag, oracle=TARGET, params=PARAMS, seed=3).compute()
    assert answers == expected(3).tolist()


def test_dask_replicas_join_the_harness(client) -> None:
    specs = [ReplicaSpec("in-process reference", workers=1),
             ReplicaSpec("dask, blocks of 60", kind="dask", chunk_size=60),
             ReplicaSpec("dask, blocks of 33, shuffled, no cache", kind="dask",
                         chunk_size=33, cache_size=0, shuffle=True)]
    report = check_consistency(TARGET, PARAMS, seed=2, queries=POINTS, replicas=specs,
                               dask_scheduler=client)
    assert report.ok, str(report)
    assert report.compared_answers == 500 and report.compared_decisions > 0


def test_missing_dask_names_the_extra(monkeypatch) -> None:
    from lca import distributed

    monkeypatch.setitem(sys.modules, "dask", None)
    with pytest.raises(ImportError, match=r"pip install 'lca\[dask\]'"):
        distributed.answer_array(POINTS, oracle=TARGET, params=PARAMS, seed=1)


def test_shape_is_validated(client) -> None:
    from lca.distributed import answer_array, answer_bag

    with pytest.raises(TypeError, match=r"shape \(m, 48\)"):
        answer_array(np.ones((4, 3), dtype=np.int8), oracle=TARGET, params=PARAMS, seed=1)
    with pytest.raises(TypeError, match="dask.bag.Bag"):
        answer_bag([[1] * N], oracle=TARGET, params=PARAMS, seed=1)
