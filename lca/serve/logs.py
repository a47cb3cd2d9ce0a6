"""Structured logs for ``lca serve``: one JSON object per line on stderr.

The library logs through :mod:`logging` under the ``lca`` logger (as
:mod:`lca.parallel` does); ``lca serve`` gives the ``lca``, ``uvicorn`` and
``py.warnings`` loggers one handler that writes each record as a JSON line:
``time``, ``level``, ``logger``, ``message`` and the fields passed in
``extra`` (``event``, ``status``, ``ms``, ``seed``, ...). Tracebacks are
logged here, server-side, and never sent to clients.
"""

from __future__ import annotations

import json
import logging
from typing import Any

__all__ = ["JsonFormatter", "log_config"]

# Attributes every LogRecord has; anything else on a record came from ``extra``.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message", "asctime", "color_message", "taskName"}


class JsonFormatter(logging.Formatter):
    """A record as one JSON line: time, level, logger, message, the ``extra`` fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "pid": record.process,
        }
        entry.update((key, value) for key, value in vars(record).items()
                     if key not in _STANDARD)
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def log_config(level: str) -> dict[str, Any]:
    """A :func:`logging.config.dictConfig` dict: JSON lines on stderr at ``level``."""
    handler = {"class": "logging.StreamHandler", "formatter": "json",
               "stream": "ext://sys.stderr"}
    logger = {"handlers": ["stderr"], "level": level.upper(), "propagate": False}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "lca.serve.logs.JsonFormatter"}},
        "handlers": {"stderr": handler},
        "loggers": {name: dict(logger) for name in ("lca", "uvicorn", "py.warnings")},
    }
