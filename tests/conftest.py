"""Shared fixtures: small exact-checkable functions and helpers."""

import itertools

import numpy as np
import pytest

from lca import targets


def all_points(n: int) -> np.ndarray:
    """Every point of {-1,1}^n, in lca.exact's index order (bit i of t <-> x_i = -1)."""
    index = np.arange(2 ** n)[:, None]
    bits = (index >> np.arange(n)) & 1
    return (1 - 2 * bits).astype(np.int8)


@pytest.fixture
def small_tree():
    """A noise-free random tree of 8 leaves over 20 variables."""
    return targets.random_tree(n=20, leaves=8, seed=5)


def product_points(n: int):
    return np.array(list(itertools.product((-1, 1), repeat=n)), dtype=np.int8)


def interrupt_group(script, wait_for: str, delay: float = 0.0) -> tuple[int, str, str]:
    """Run ``script`` in its own process group, Ctrl-C the group as a terminal does.

    SIGINT goes to every process of the group once a stdout line contains
    ``wait_for`` (within 60 s), plus ``delay`` seconds. Returns the exit code,
    the rest of stdout and stderr; the group is killed if anything hangs.
    """
    import os
    import select
    import signal
    import subprocess
    import sys
    import time

    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=script.parent,
                               start_new_session=True)
    try:
        deadline, line = time.monotonic() + 60, ""
        while wait_for not in line and time.monotonic() < deadline:
            if select.select([process.stdout], [], [], 1.0)[0]:
                line = process.stdout.readline()
                if not line:
                    break
        assert wait_for in line, process.stderr.read() if process.poll() is not None else ""
        time.sleep(delay)
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return process.returncode, out, err
