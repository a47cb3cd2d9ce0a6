"""Formatting helpers shared by the report, the mode comparison and the plots."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def number_text(value: float) -> str:
    return f"{value:,.0f}"


def error_text(entry: Mapping[str, Any]) -> str:
    return f"{entry['value']:.4f} [{entry['low']:.4f}, {entry['high']:.4f}]"


def crossover_text(cross: Mapping[str, Any]) -> str:
    value = cross["value"]
    if cross["relation"] == "?":
        return "unknown (the peer's largest N is below our first answer)"
    if cross["relation"] == "<=":
        return "≤ 1 (peer cheaper from the first answer)"
    if cross["relation"] == ">":
        return f"> {value:,.0f}" + (" (peer never matched us)" if cross.get("lower_bound")
                                     else "")
    return f"≈ {value:,.0f}" if value >= 10 else f"≈ {value:.1f}"


def table_lines(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def exponent_text(value: float) -> str:
    return f"{value + 0.0:.2f}".replace("-0.00", "0.00")
