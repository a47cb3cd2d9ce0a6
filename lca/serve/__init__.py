"""``lca serve``: stateless replicas answering ``T_seed(z)`` over HTTP.

Every worker of every ``lca serve`` started with the same oracle, mode and
depth answers from the same tree ``T_seed`` for each seed, bit for bit, with
no shared state: put any number of them behind a load balancer
(docs/serving.md). Needs ``pip install 'lca[serve]'`` (Starlette, uvicorn,
msgspec); importing this package does not.

Modules: :mod:`~lca.serve.config` (settings, oracle sources),
:mod:`~lca.serve.validate` (request bodies), :mod:`~lca.serve.batching`
(the answering thread and micro-batches), :mod:`~lca.serve.app` (the
Starlette app), :mod:`~lca.serve.logs` (JSON log lines),
:mod:`~lca.serve.cli` (the command). The client is :mod:`lca.client`.
"""

from lca import targets
from lca.oracle import Oracle
from lca.serve.config import ServeSettings

__all__ = ["ServeSettings", "demo_oracle"]


def demo_oracle() -> Oracle:
    """The oracle of ``lca demo``: a 64-leaf random tree over ``n = 1000``, 5% label noise.

    ``lca serve --oracle lca.serve:demo_oracle`` serves it.
    """
    target = targets.random_tree(n=1000, leaves=64, seed=1)
    return targets.with_label_noise(target, rate=0.05, seed=2)
