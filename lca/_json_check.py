"""Reading JSON documents that must be checked whole: one toolkit for every saved format.

:mod:`lca._tree_json` (an exported tree) and :mod:`lca.models._state` (a
saved surrogate) read documents a user may have edited, truncated or
forged. Both build nothing before every field is checked, and both need the
same primitives: parse without losing a repeated key or accepting NaN, a
number too long to read or nesting deep enough to exhaust the stack; then
check each object's keys and each field's type and range with a message that
names the field. A message reads ``"<owner>: <where> ..."``.
"""

from __future__ import annotations

import json
import math
import reprlib
from typing import Any

__all__: list[str] = []

# Ints in a saved document (seeds below 2**64, counts, classes) have at most 20
# digits; longer ones are refused by name rather than parsed (Python refuses
# to read more than 4,300 digits at all, and slowly near that).
MAX_INT_DIGITS = 40

_brief = reprlib.Repr()
_brief.maxlevel, _brief.maxlist, _brief.maxdict = 2, 6, 4
_brief.maxstring, _brief.maxother, _brief.maxlong = 60, 60, 60


def brief(value: Any) -> str:
    """A short ``repr`` of a field's value for a message (long lists and strings cut)."""
    return _brief.repr(value.text if isinstance(value, Unreadable) else value)


class JsonObject(dict):
    """A JSON object as read, with the keys it gave more than once (json keeps the last)."""

    repeated: tuple[str, ...] = ()


class Unreadable:
    """A number JSON can spell but a document must not hold: NaN, an infinity, a huge int."""

    def __init__(self, text: str) -> None:
        self.text = text


def _object(pairs: list[tuple[str, Any]]) -> JsonObject:
    value = JsonObject(pairs)
    if len(value) != len(pairs):
        keys = [key for key, _ in pairs]
        value.repeated = tuple(sorted({key for key in keys if keys.count(key) > 1}))
    return value


def _float(text: str) -> Any:
    value = float(text)
    return value if math.isfinite(value) else Unreadable(text)


def _int(text: str) -> Any:
    return int(text) if len(text.lstrip("-")) <= MAX_INT_DIGITS else Unreadable(text)


def location(where: tuple[Any, ...]) -> str:
    """A field's location as one quoted name: ``'encoder.thresholds.0[2]'``."""
    if not where:
        return "the document"
    text = ""
    for step in where:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return repr(text)


def load(text: Any, owner: str, what: str, max_nesting: int) -> Any:
    """The JSON value of ``text``, refused unless every number is finite and readable,
    no object repeats a key and nothing nests deeper than ``max_nesting`` levels.

    Raises:
        TypeError: ``text`` is not ``str``, ``bytes`` or ``bytearray``.
        ValueError: not JSON, or one of the flaws above, naming where it is.
    """
    if not isinstance(text, (str, bytes, bytearray)):
        raise TypeError(f"The 'text' parameter of {owner} must be a JSON string. "
                        f"Got {type(text).__name__} instead.")
    try:
        document = json.loads(text, object_pairs_hook=_object, parse_float=_float,
                              parse_int=_int, parse_constant=Unreadable)
    except RecursionError:
        raise ValueError(f"{owner}: the JSON is nested too deeply to be {what} "
                         f"(one nests {max_nesting} levels at most).") from None
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        raise ValueError(f"{owner}: not valid JSON: {error}") from None
    where = _first_flaw(document, max_nesting)
    if where is not None:
        value = _at(document, where)
        if isinstance(value, Unreadable):
            raise ValueError(f"{owner}: {location(where)} is {brief(value)}; numbers in "
                             f"{what} are finite, with at most {MAX_INT_DIGITS} digits.")
        if isinstance(value, JsonObject) and value.repeated:
            raise ValueError(f"{owner}: {location(where)} gives the key "
                             f"{brief(value.repeated[0])} more than once.")
        raise ValueError(f"{owner}: {location(where)} is nested {len(where)} levels deep; "
                         f"{what} nests {max_nesting} levels at most.")
    return document


def _first_flaw(document: Any, max_nesting: int) -> tuple[Any, ...] | None:
    """Where the document holds an unreadable number, a repeated key or too deep a nesting.

    One walk without recursion (the document may be nested as deep as the
    parser allowed); locations are built only along the way to a flaw.
    """
    stack: list[tuple[Any, tuple[Any, ...]]] = [(document, ())]
    while stack:
        value, where = stack.pop()
        if type(value) is Unreadable:
            return where
        if isinstance(value, (dict, list)):
            if len(where) >= max_nesting or (isinstance(value, JsonObject) and value.repeated):
                return where
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend((item, (*where, key)) for key, item in items
                         if isinstance(item, (dict, list, Unreadable)))
    return None


def _at(document: Any, where: tuple[Any, ...]) -> Any:
    for step in where:
        document = document[step]
    return document


def bad(owner: str, field: str, expected: str, value: Any) -> ValueError:
    """``"<owner>: '<field>' must be <expected>. Got <value> instead."``"""
    return ValueError(f"{owner}: {field!r} must be {expected}. Got {brief(value)} instead.")


def keys(owner: str, where: str, value: Any, required: tuple[str, ...],
         optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """``value`` if it is an object with every ``required`` key, maybe ``optional`` ones,
    and no other (``where`` names it in the message, quoted by the caller if need be)."""
    if not isinstance(value, dict):
        raise ValueError(f"{owner}: {where} must be an object with keys {list(required)}. "
                         f"Got {brief(value)} instead.")
    missing = [key for key in required if key not in value]
    unknown = [key for key in value if key not in required + optional]
    if missing or unknown:
        wrong = "; ".join(f"{what} {', '.join(map(repr, names))}" for what, names in (
            ("misses", missing), ("has unknown", unknown)) if names)
        raise ValueError(f"{owner}: {where} {wrong} (keys: {list(required)}"
                         + (f", optional {list(optional)}" if optional else "") + ").")
    return value


def is_int(value: Any) -> bool:
    """A JSON integer (not a bool, not a float)."""
    return type(value) is int


def is_real(value: Any) -> bool:
    """A JSON number (finite: :func:`load` refused the rest)."""
    return type(value) in (int, float)


def is_scalar(value: Any) -> bool:
    """A JSON string, number or bool (a class label, a category, a column label)."""
    return type(value) in (str, int, float, bool)


def int_in(owner: str, field: str, value: Any, low: int, high: int) -> int:
    """``value`` if it is an int in ``[low, high]``."""
    if not is_int(value) or not low <= value <= high:
        raise bad(owner, field, f"an int in [{low}, {high}]", value)
    return value
