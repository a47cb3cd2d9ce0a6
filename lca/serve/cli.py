"""The ``lca serve`` command: bind, then run uvicorn with one replica per worker."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import logging.config
import math
import os
import signal
import socket
import sys
from typing import Any

from lca._cli_options import (
    PAPER_LEAF_SAMPLES,
    PAPER_NOISE_RATE,
    PAPER_SCORE_SAMPLES,
    int_in,
    real_in,
)
from lca.serve.config import MODES, ServeSettings, search_current_directory

__all__ = ["add_serve_command"]

SERVE_EXTRA = "pip install 'lca[serve]'"
_log = logging.getLogger("lca.serve")


def add_serve_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``lca serve`` on the ``add_subparsers()`` object of the ``lca`` parser."""
    parser = subparsers.add_parser(
        "serve", help="answer T_seed(z) over HTTP, stateless replicas (needs lca[serve])",
        description="Serve POST /answer, POST /explain, GET /healthz and GET /describe "
                    "(docs/serving.md). Every worker, and every other replica started "
                    "with the same options, answers from the same tree T_seed for each "
                    f"seed. Needs {SERVE_EXTRA}.")
    source = parser.add_mutually_exclusive_group(required=True)
    # Each option of this group is named like its entry in lca.serve.config.SOURCES.
    source.add_argument("--oracle", metavar="MODULE:NAME",
                        help="an lca.Oracle, or a zero-argument callable returning one, "
                             "imported from MODULE (the current directory first, as "
                             "python -m does)")
    source.add_argument("--model", metavar="FILE",
                        help="a saved lca.models.Surrogate (Surrogate.to_json): serves its "
                             "tree, for its own seed only, with no model and no query")
    parser.add_argument("--mode", choices=MODES, default=None,
                        help="efficient: Params.efficient (default); paper: the paper's "
                             f"estimator, Params.practical with noise rate {PAPER_NOISE_RATE}, "
                             f"{PAPER_SCORE_SAMPLES} score and {PAPER_LEAF_SAMPLES} leaf "
                             "samples (not with --model)")
    parser.add_argument("--depth", type=int_in(0), default=None,
                        help="tree depth; a cap in efficient mode (default "
                             f"{ServeSettings.depth}; not with --model)")
    parser.add_argument("--lookahead", type=int_in(1), default=None,
                        help="efficient mode: binary-search steps asked per oracle call, 1 "
                             "to 8 (default 1): the same tree in fewer calls and more "
                             "queries, for an oracle whose calls cost more than its rows "
                             "(not with --model or --mode paper)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int_in(0, 65535), default=8000,
                        help="TCP port (default 8000; 0: any free port, logged, "
                             "with --workers 1)")
    parser.add_argument("--workers", type=int_in(1, 256), default=1,
                        help="worker processes, each a replica with its own cache "
                             "(default 1)")
    parser.add_argument("--cache-size", type=int_in(1), default=1 << 16,
                        help="decisions cached per worker (default 65536)")
    parser.add_argument("--max-points", type=int_in(1), default=4096,
                        help="most points per /answer request (default 4096)")
    parser.add_argument("--max-body-bytes", type=int_in(1), default=16 << 20,
                        help="largest request body (default 16 MiB)")
    parser.add_argument("--request-timeout", type=real_in(0.0, math.inf, open_low=True),
                        default=30.0, help="seconds per request, body to answer "
                                           "(default 30)")
    parser.add_argument("--batch-wait-ms", type=real_in(0.0, 1000.0), default=0.0,
                        help="milliseconds a free worker waits for more same-seed requests "
                             "before answering a batch (default 0: batch what queued)")
    parser.add_argument("--log-level", choices=("debug", "info", "warning", "error"),
                        default="info", help="JSON log lines on stderr (default info)")
    parser.set_defaults(run=_serve)
    return parser


def _settings(args: argparse.Namespace) -> ServeSettings:
    if args.model is not None:
        given = [name for name in ("mode", "depth", "lookahead")
                 if getattr(args, name) is not None]
        if given:
            raise ValueError(f"argument --{given[0]}: a saved model (--model) brings its own "
                             "parameters; leave out " + " and ".join(f"--{g}" for g in given))
        source, spec = "model", args.model
    else:
        source, spec = "oracle", args.oracle
    # Options not given take ServeSettings' defaults.
    options = {name: getattr(args, name) for name in ("mode", "depth", "lookahead")
               if getattr(args, name) is not None}
    return ServeSettings(source=source, spec=spec, **options,
                         cache_size=args.cache_size, max_points=args.max_points,
                         max_body_bytes=args.max_body_bytes,
                         request_timeout=args.request_timeout,
                         batch_wait=args.batch_wait_ms / 1e3)


def _load(settings: ServeSettings) -> Any:
    """The oracle, or a ``ValueError`` naming ``--oracle`` and what went wrong."""
    if settings.source == "model":
        return None  # read by create_app, which also needs the saved tree
    here = search_current_directory()
    try:
        return settings.load_oracle()
    except (ValueError, TypeError):
        raise
    except Exception as error:  # the user's import or factory failed
        message = (f"The 'oracle' parameter of lca serve names {settings.spec!r}, which "
                   f"could not be loaded: {type(error).__name__}: {error}")
        if isinstance(error, ModuleNotFoundError):
            message += _not_found(settings.spec.partition(":")[0], error.name, here)
        raise ValueError(message) from None


def _not_found(module: str, missing: str | None, here: str | None) -> str:
    """Where a module of ``--oracle`` was looked for and what to do, when it is the one
    missing (a module it imports in turn is the user's to install: nothing is added)."""
    if missing is None or not (module == missing or module.startswith(missing + ".")):
        return ""
    parent, _, name = missing.rpartition(".")
    if parent:  # the package imported: its folders were searched
        folders = getattr(sys.modules.get(parent), "__path__", [])
        return (f"; searched the package {parent!r} in {', '.join(folders)}: add "
                f"{name}.py there")
    searched = f"; searched sys.path: {', '.join(sys.path)}"
    install = f"or install it in this Python ({sys.executable})"
    if here is None:
        return (f"{searched} (not the current directory: -P or PYTHONSAFEPATH is set); add "
                f"the directory that holds {name}.py (or the package {name}/) to "
                f"PYTHONPATH, {install}")
    return (f"{searched}; run lca serve from the directory that holds {name}.py (or the "
            f"package {name}/), add that directory to PYTHONPATH, {install}")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket, or a ``ValueError`` naming ``--port``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that say they are TCP;
    # without it each response waits ~40 ms for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise ValueError(f"The 'port' parameter of lca serve: cannot bind {host}:{port}: "
                         f"{error.strerror or error}") from None
    sock.listen(2048)
    return sock


def _serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from lca.serve.app import SETTINGS_VARIABLE, create_app
        from lca.serve.logs import log_config
    except ImportError as error:
        package = (error.name or "a package").split(".")[0]
        print(f"lca serve: error: needs {package}: {SERVE_EXTRA}", file=sys.stderr)
        return 2
    if args.port == 0 and args.workers > 1:
        raise ValueError("--port 0 (any free port) needs --workers 1: give the workers a "
                         "port to share")
    settings = _settings(args)
    app = create_app(settings, _load(settings))  # fails here, before binding, if it must
    sock: socket.socket | None
    sock = _bind(args.host, args.port)
    if args.workers > 1:  # uvicorn binds the port for its workers: checked free above
        sock.close()
        sock = None
    # Logging is configured only once nothing can fail before serving (and uvicorn
    # configures it again, in each worker process).
    options = dict(log_config=log_config(args.log_level), log_level=args.log_level,
                   access_log=False, lifespan="on",
                   timeout_graceful_shutdown=math.ceil(settings.request_timeout) + 1)
    logging.config.dictConfig(options["log_config"])
    logging.captureWarnings(True)
    if not _loopback(args.host):
        _log.warning("binding %s: every machine that reaches it can query the oracle "
                     "(docs/serving.md, 'What is safe to expose')", args.host,
                     extra={"event": "exposed", "host": args.host})
    port = args.port if sock is None else sock.getsockname()[1]
    # At the configured level, so that it shows at any --log-level: it names the port.
    _log.log(logging.getLevelName(args.log_level.upper()), "listening on http://%s:%d",
             args.host, port, extra={"event": "listening", "host": args.host, "port": port,
                                     "workers": args.workers})
    if sock is None:
        os.environ[SETTINGS_VARIABLE] = settings.to_json()
        uvicorn.run("lca.serve.app:app_from_environment", factory=True, host=args.host,
                    port=args.port, workers=args.workers, **options)
        return 0
    server = uvicorn.Server(uvicorn.Config(app, **options))
    # uvicorn re-raises SIGTERM/SIGINT once it has shut down gracefully; ignored here so
    # the command exits 0 after a graceful stop.
    for handled in (signal.SIGTERM, signal.SIGINT):
        signal.signal(handled, lambda *_: None)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    return 0 if server.started else 1
