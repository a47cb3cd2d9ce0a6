"""Starting child processes safely: the ``__main__`` guard, and Ctrl-C kept from children.

Two things go wrong when a library starts processes for a script:

* **No main guard.** The ``spawn`` and ``forkserver`` start methods run the
  main script again in every child (as ``__mp_main__``) before the child's
  work starts. Code at the script's top level that starts processes, instead
  of sitting under ``if __name__ == "__main__":``, would then start them again
  from every child; Python stops that with an error in each child, which the
  parent only sees as children dying at start-up (or waits on forever).
  :func:`require_main_guard` detects it in the parent, before any child
  exists, and says what to do.
* **Ctrl-C.** SIGINT goes to the whole process group. A child started with
  the default handler turns it into a ``KeyboardInterrupt`` with a traceback
  of its own if it arrives before the child can ignore it (while it imports).
  :func:`sigint_blocked` starts children with SIGINT blocked, which they
  inherit (through ``fork`` and ``exec``) for their whole life; the parent
  alone decides what an interrupt stops, and loses none: a SIGINT that
  arrives meanwhile is delivered when the block ends.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import os
import signal
import sys
import types
from collections.abc import Iterator

__all__ = ["require_main_guard", "sigint_blocked"]

RERUNS_MAIN = ("spawn", "forkserver")
"""Start methods whose children run the main script again."""


def _is_main_test(test: ast.expr) -> str | None:
    """``"=="`` or ``"!="`` if ``test`` compares ``__name__`` with ``"__main__"``.

    ``__name__ == "__main__" and ...`` counts as ``"=="``: its body too runs
    only in the main script.
    """
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return "==" if any(_is_main_test(value) == "==" for value in test.values) else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], (ast.Eq, ast.NotEq))):
        return None
    sides = (test.left, test.comparators[0])
    name = next((side for side in sides if isinstance(side, ast.Name)), None)
    constant = next((side for side in sides if isinstance(side, ast.Constant)), None)
    if name is None or constant is None or name.id != "__name__" \
            or constant.value != "__main__":
        return None
    return "==" if isinstance(test.ops[0], ast.Eq) else "!="


@functools.lru_cache(maxsize=8)
def _guarded_lines(filename: str, mtime: float) -> tuple[tuple[int, int], ...] | None:
    """Line ranges of ``filename``'s top level that only run when it is ``__main__``.

    ``None`` if the source cannot be read or parsed (nothing is claimed then).
    ``mtime`` keys the cache, so an edited script is parsed again.
    """
    try:
        with open(filename, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), filename)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    spans = []
    # The top level only: statements, and the bodies of top-level if/try/with/for.
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        test = _is_main_test(node.test) if isinstance(node, ast.If) else None
        if isinstance(node, ast.If) and test is not None:
            body = node.body if test == "==" else node.orelse
            if body:
                spans.append((body[0].lineno, body[-1].end_lineno or body[-1].lineno))
        for field in ("body", "orelse", "finalbody", "handlers"):
            pending.extend(getattr(node, field, ()) or ())
    return tuple(spans)


def _unguarded_top_level() -> tuple[str, int] | None:
    """``(file, line)`` if the main script's top level is running outside its guard."""
    main = sys.modules.get("__main__")
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if main is not None and frame.f_globals is vars(main) \
                and frame.f_code.co_name == "<module>":
            break
        frame = frame.f_back
    else:
        return None  # not called while the main script runs its top level
    filename, line = frame.f_code.co_filename, frame.f_lineno
    try:
        mtime = os.stat(filename).st_mtime
    except OSError:
        return None  # no file (interactive, -c): nothing is run again in a child
    spans = _guarded_lines(filename, mtime)
    if spans is None or any(low <= line <= high for low, high in spans):
        return None
    return filename, line


def require_main_guard(owner: str, start_method: str) -> None:
    """Raise ``RuntimeError`` if starting children now would re-run this call in each.

    That is the case when ``start_method`` re-runs the main script
    (:data:`RERUNS_MAIN`) and this call comes from the main script's top
    level outside ``if __name__ == "__main__":``. The message names the
    script, the line and the fix.
    """
    if start_method not in RERUNS_MAIN:
        return
    found = _unguarded_top_level()
    if found is None:
        return
    filename, line = found
    raise RuntimeError(
        f"{owner} would start worker processes from the top level of {filename} (line "
        f"{line}), outside an `if __name__ == \"__main__\":` guard. With the "
        f"{start_method!r} start method every worker first runs that script again, so "
        "each would try to start workers of its own. Put the code that starts processes "
        "under `if __name__ == \"__main__\":` (docs/parallel.md; the README's ReplicaPool "
        "example is a complete script).")


@contextlib.contextmanager
def sigint_blocked() -> Iterator[None]:
    """Block SIGINT in this thread meanwhile, so that children started now inherit the block.

    A no-op where signal masks do not exist (Windows).
    """
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - Windows
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
