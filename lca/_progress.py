"""A dependency-free progress bar on stderr for long work."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """``with Progress(total, "answers") as bar: bar.update(k)``; redraws at most 10x/s."""

    def __init__(self, total: int, label: str, *, stream: TextIO | None = None,
                 enabled: bool = True) -> None:
        self.total = max(int(total), 1)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.done = 0
        self._start = time.perf_counter()
        self._last_draw = 0.0

    def __enter__(self) -> Progress:
        self._draw(force=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self._draw(force=True)
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()

    def update(self, count: int = 1) -> None:
        self.done += count
        self._draw()

    def _draw(self, force: bool = False) -> None:
        now = time.perf_counter()
        if not self.enabled or (not force and now - self._last_draw < 0.1):
            return
        self._last_draw = now
        frac = min(self.done / self.total, 1.0)
        filled = int(30 * frac)
        elapsed = now - self._start
        eta = elapsed / frac - elapsed if frac > 0 else float("nan")
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (30 - filled)}] "
                          f"{self.done}/{self.total} {elapsed:5.1f}s eta {eta:5.1f}s")
        self.stream.flush()
