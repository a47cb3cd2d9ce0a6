"""Reading and checking request bodies: every refusal names its field.

A :class:`RequestError` carries the HTTP status and the field at fault;
:mod:`lca.serve.app` turns it into ``{"error": {"field": ..., "message":
...}}``. Statuses: 400 a body that is not JSON (a string that is not UTF-8
included) or gives a field twice, 408 a body still arriving at the request
timeout, 413 a body or a point count over the limits, 415 a content type
other than JSON, 422 a field of the wrong type or value. Parsing is strict
(:mod:`msgspec`): ``true``, ``1.0`` or ``"1"`` is not an int, and unknown
fields are refused rather than ignored.

A replica of a saved surrogate also reads rows of raw feature values
(``"rows"`` in ``/answer``, ``"row"`` in ``/explain``): each cell a number,
a string, ``true``/``false`` or ``null`` (a list or an object in a cell is
refused here), encoded into points by a :class:`RowReader`, which refuses
with a ``ValueError`` naming the row and column.
"""

from __future__ import annotations

import asyncio
import collections
import json
import re
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any, Protocol

import msgspec
import numpy as np

from lca._validate import SEED_LIMIT
from lca.oracle import all_plus_minus_one

__all__ = ["RequestError", "RowReader", "parse_answer", "parse_explain", "read_body"]

SEED_RANGE = "an int in [0, 2**64)"


class RequestError(Exception):
    """A request refused before answering: HTTP ``status``, the ``field`` at fault."""

    def __init__(self, status: int, field: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.field = field
        self.message = message


class RowReader(Protocol):
    """What turns rows of raw feature values into points (a served surrogate's encoder)."""

    def encode_rows(self, rows: list[list[Any]], field: str) -> np.ndarray:
        """The ``(len(rows), n)`` points, or a ``ValueError`` naming ``field`` and the place
        at fault (``field`` is ``"rows"``, whose rows are named ``rows[i]``, or ``"row"``)."""


# A feature value: what Surrogate.predict takes in a cell (None: a missing value).
_Cell = int | float | str | bool | None


class _Answer(msgspec.Struct, forbid_unknown_fields=True):
    seed: int
    points: list[list[int]] | msgspec.UnsetType = msgspec.UNSET
    signs: list[str] | msgspec.UnsetType = msgspec.UNSET


class _AnswerRows(_Answer, forbid_unknown_fields=True):
    rows: list[list[_Cell]] | msgspec.UnsetType = msgspec.UNSET


class _Explain(msgspec.Struct, forbid_unknown_fields=True):
    seed: int
    point: list[int]


class _ExplainRow(msgspec.Struct, forbid_unknown_fields=True):
    seed: int
    point: list[int] | msgspec.UnsetType = msgspec.UNSET
    row: list[_Cell] | msgspec.UnsetType = msgspec.UNSET


_DECODERS: dict[type[msgspec.Struct], msgspec.json.Decoder[Any]] = {
    shape: msgspec.json.Decoder(shape) for shape in (_Answer, _AnswerRows, _Explain,
                                                     _ExplainRow)}
# The field of raw feature values a saved surrogate's replica reads where an oracle's
# replica reads only points: sent to the latter, it is refused saying so.
_ROWS_INSTEAD: dict[type[msgspec.Struct], str] = {_Answer: "rows", _Explain: "row"}
_VALUES = "feature values: numbers, strings, true, false or null"
_EXPECTED = {"seed": SEED_RANGE, "points": "a list of points, each a list of ints -1 or 1",
             "signs": "a list of points, each a string of characters + or -",
             "point": "a list of ints -1 or 1",
             "rows": f"a list of rows, each a list of {_VALUES}",
             "row": f"a list of {_VALUES}"}
_KINDS = {"points": "lists of ints -1 or 1", "signs": "strings of + and -",
          "rows": "lists of feature values", "point": "a list of ints -1 or 1",
          "row": "a list of feature values"}
# msgspec names the place of a type error as "- at `$.points[0][3]`" and a missing or
# unknown field as "field `seed`".
_AT = re.compile(r" - at `\$\.?([^`]*)`$")
_FIELD = re.compile(r"field `([^`]*)`")


async def read_body(headers: Mapping[str, str], chunks: AsyncIterator[bytes], *,
                    max_bytes: int, deadline: float) -> bytes:
    """The whole body, if it is JSON, at most ``max_bytes`` and in by ``deadline``.

    ``deadline`` is on the :func:`time.monotonic` clock. A declared
    ``Content-Length`` over the limit is refused before any byte is read.
    """
    media_type = headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != "application/json":
        raise RequestError(415, "content-type",
                           f"Content-Type must be application/json; got "
                           f"{headers.get('content-type', '(none)')!r}")
    declared = headers.get("content-length")
    too_large = f"the request body must be at most {max_bytes} bytes (--max-body-bytes)"
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise RequestError(413, "body", f"{too_large}; Content-Length is {declared}")
    parts: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout_at(_loop_time(deadline)):
            async for chunk in chunks:
                size += len(chunk)
                if size > max_bytes:
                    raise RequestError(413, "body", f"{too_large}; got more")
                parts.append(chunk)
    except TimeoutError:
        raise RequestError(408, "body", "the request body did not arrive within the "
                           "request timeout (--request-timeout)") from None
    return b"".join(parts)


def _loop_time(deadline: float) -> float:
    """A :func:`time.monotonic` deadline on the running loop's clock."""
    return asyncio.get_running_loop().time() + deadline - time.monotonic()


def _decode(body: bytes, shape: type[msgspec.Struct]) -> Any:
    try:
        return _DECODERS[shape].decode(body)
    except msgspec.ValidationError as error:
        text = str(error)
        at, named = _AT.search(text), _FIELD.search(text)
        if at:
            field = re.split(r"[.\[]", at.group(1))[0]
            detail = f"{_AT.sub('', text)} at {at.group(1)}"
        else:
            field, detail = (named.group(1) if named else "body"), text
        if field == _ROWS_INSTEAD.get(shape):
            message = (f"{field!r} (raw feature values) is read only by a replica of a saved "
                       f"surrogate (lca serve --model), which encodes it; this replica serves "
                       f"an oracle: send {_one_of(shape, 'or')}")
        elif field in _EXPECTED:
            message = f"{field!r} must be {_EXPECTED[field]}: {detail}"
        else:
            message = (f"the request body must be a JSON object with the fields "
                       f"{sorted(shape.__struct_fields__)}: {detail}")
        raise RequestError(422, field, message) from None
    except msgspec.DecodeError as error:  # after ValidationError, its subclass
        raise RequestError(400, "body", f"the request body is not valid JSON: {error}") \
            from None
    except UnicodeDecodeError as error:  # msgspec checks a string's bytes as it builds it
        raise RequestError(400, "body", f"the request body is not valid JSON: a string is "
                           f"not UTF-8 ({error})") from None


def _one_of(shape: type[msgspec.Struct], conjunction: str = "and") -> str:
    """The point fields of ``shape`` and their kinds, as "'a' (...) and 'b' (...)"."""
    names = [f"{name!r} ({_KINDS[name]})" for name in shape.__struct_fields__
             if name in _KINDS]
    return f" {conjunction} ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1
                                   else names)


def _once(body: bytes, request: Any) -> None:
    """Refuse a body that gives a field twice (msgspec, like json, keeps the last).

    Checked cheaply on every request: once the body has decoded, its only
    strings are its keys, its ``signs`` and the string cells of its rows,
    each written with two ``"`` (an escaped ``\\"`` adds one: :func:`_signs`
    refuses it in a sign; in a cell it only costs the check below), so a
    body with more ``"`` than that repeats a key or escapes a quote. Only
    such a body is parsed again, by :mod:`json`, to name the key.
    """
    fields = sum(getattr(request, name) is not msgspec.UNSET
                 for name in request.__struct_fields__)
    signs = getattr(request, "signs", msgspec.UNSET)
    strings = fields + (0 if signs is msgspec.UNSET else len(signs)) + sum(
        _strings(getattr(request, name, msgspec.UNSET)) for name in ("rows", "row"))
    # numpy counts about ten times faster than bytes.count (0.07 ms a MiB)
    quotes = np.count_nonzero(np.frombuffer(body, dtype=np.uint8) == ord('"'))
    if quotes == 2 * strings:
        return
    given: collections.Counter[str] = collections.Counter()
    try:  # the top-level object is the only one: a nested object failed the field types
        json.loads(body, object_pairs_hook=lambda pairs: given.update(key for key, _ in pairs))
    except ValueError:  # json refuses what msgspec read (an int of 4300 digits): so do
        return          # the checks after this one
    twice = next((key for key, times in given.items() if times > 1), None)
    if twice is not None:
        raise RequestError(400, twice, f"the request body gives {twice!r} {given[twice]} "
                                       f"times; each field must be given once")


def _strings(cells: Any) -> int:
    """The string cells of a decoded ``row`` (a list) or ``rows`` (a list of lists)."""
    if cells is msgspec.UNSET:
        return 0
    return sum(type(cell) is str if not isinstance(cell, list) else
               sum(type(item) is str for item in cell) for cell in cells)


def _seed(seed: int) -> int:
    if not 0 <= seed < SEED_LIMIT:
        raise RequestError(422, "seed", f"'seed' must be {SEED_RANGE}; got {seed}")
    return seed


def _rows(rows: list[list[int]], n: int, field: str) -> np.ndarray:
    """An ``(m, n)`` ``int8`` array of the rows, or the first bad row or value named.

    ``field`` is ``"points"`` (rows named ``points[i]``) or ``"point"`` (one row).
    """
    def name(i: int) -> str:
        return f"points[{i}]" if field == "points" else "point"

    for i, row in enumerate(rows):
        if len(row) != n:
            raise RequestError(422, field, f"'{name(i)}' must hold {n} values -1 or 1 "
                               f"(the oracle's n); got {len(row)}")
    try:
        array = np.array(rows, dtype=np.int8).reshape(len(rows), n)
    except OverflowError:  # an int beyond int8: found below like any other bad value
        array = None
    if array is None or not all_plus_minus_one(array):
        i, j, value = next((i, j, value) for i, row in enumerate(rows)
                           for j, value in enumerate(row) if value not in (1, -1))
        raise RequestError(422, field, f"'{name(i)}[{j}]' must be -1 or 1; got {value}")
    return array


def _signs(rows: list[str], n: int) -> np.ndarray:
    """An ``(m, n)`` ``int8`` array from strings of ``+`` and ``-``, or the first bad one named."""
    for i, row in enumerate(rows):
        if len(row) != n or not row.isascii():
            got = f"{len(row)} characters" if len(row) != n else "non-ASCII characters"
            raise RequestError(422, "signs", f"'signs[{i}]' must hold {n} characters + or - "
                               f"(the oracle's n); got {got}")
    codes = np.frombuffer("".join(rows).encode("ascii"), dtype=np.uint8).reshape(len(rows), n)
    # "+" is 43 and "-" is 45: 44 - code is 1 or 255, i.e. int8 1 or -1, for them alone.
    values = (np.uint8(44) - codes).view(np.int8)
    if not all_plus_minus_one(values):
        i, j = np.argwhere((values != 1) & (values != -1))[0]
        raise RequestError(422, "signs", f"'signs[{i}][{j}]' must be + or -; got "
                           f"{rows[i][j]!r}")
    return values


def parse_answer(body: bytes, n: int, max_points: int,
                 reader: RowReader | None = None) -> tuple[int, np.ndarray]:
    """``(seed, points)`` of a ``POST /answer`` body: ``points`` (lists of ints ±1) or
    ``signs`` (strings of ``+``/``-``, the compact form), exactly one of them; with a
    ``reader`` (a served surrogate's), ``rows`` of feature values too, encoded by it."""
    shape = _Answer if reader is None else _AnswerRows
    request = _decode(body, shape)
    _once(body, request)
    seed = _seed(request.seed)
    given = [name for name in ("points", "signs", "rows")
             if getattr(request, name, msgspec.UNSET) is not msgspec.UNSET]
    if len(given) != 1:
        raise RequestError(422, "points", f"the request body must hold exactly one of "
                           f"{_one_of(shape)}; got {_got(given)}")
    field = given[0]
    rows = getattr(request, field)
    if len(rows) > max_points:
        raise RequestError(413, field, f"'{field}' holds {len(rows)} points; this server "
                           f"answers at most {max_points} per request (--max-points)")
    if field == "rows":
        assert reader is not None, "only _AnswerRows has rows"
        return seed, _encoded(reader, rows, field)
    return seed, _rows(rows, n, "points") if field == "points" else _signs(rows, n)


def parse_explain(body: bytes, n: int,
                  reader: RowReader | None = None) -> tuple[int, np.ndarray]:
    """``(seed, point)`` of a ``POST /explain`` body: ``point`` (ints ±1); with a
    ``reader``, or ``row``, one row of feature values it encodes."""
    request = _decode(body, _Explain if reader is None else _ExplainRow)
    _once(body, request)
    seed = _seed(request.seed)
    if reader is None:
        return seed, _rows([request.point], n, "point")[0]
    given = [name for name in ("point", "row") if getattr(request, name) is not msgspec.UNSET]
    if len(given) != 1:
        raise RequestError(422, "point", f"the request body must hold exactly one of "
                           f"{_one_of(_ExplainRow)}; got {_got(given)}")
    if given[0] == "row":
        return seed, _encoded(reader, [request.row], "row")[0]
    return seed, _rows([request.point], n, "point")[0]


def _got(given: list[str]) -> str:
    return ("neither", "", "both", "all three")[len(given)]


def _encoded(reader: RowReader, rows: list[list[Any]], field: str) -> np.ndarray:
    try:
        return reader.encode_rows(rows, field)
    except ValueError as error:
        raise RequestError(422, field, str(error)) from None
