"""JavaScript semantics of the dashboard handlers' query values (rules §8.0).

``Number(limit) || 100``, ``Date.parse``, the comma-split lists and ``asString``: the
parameters that mirror the dashboard's HTTP query keep the reference's behaviour.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import polars as pl

from a2a_lab.reference.jsstr import js_trim
from a2a_lab.time import iso_to_ms_expr, to_epoch_ms

Now = int | float | datetime | str
Filter = str | Iterable[str] | None
Limit = int | float | str | None

# ---------------------------------------------------------------------------------------
# JavaScript semantics of the handlers' query values
# ---------------------------------------------------------------------------------------
_JS_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_JS_RADIX = {"0x": 16, "0X": 16, "0o": 8, "0O": 8, "0b": 2, "0B": 2}


def js_number(text: str) -> float:
    """JavaScript ``Number(text)`` for a string: ``""`` is 0, junk is NaN."""
    body = js_trim(text)
    if body == "":
        return 0.0
    if body in ("Infinity", "+Infinity", "-Infinity"):
        return -math.inf if body[0] == "-" else math.inf
    base = _JS_RADIX.get(body[:2])
    if base is not None:
        try:
            return (
                float(int(body[2:], base))
                if body[2:].isascii() and body[2:].isalnum()
                else math.nan
            )
        except ValueError:
            return math.nan
        except OverflowError:  # beyond a double: JavaScript's Number() gives Infinity
            return math.inf
    return float(body) if _JS_DECIMAL.fullmatch(body) else math.nan


#: An ISO date whose day-of-month may not exist in its month (``2026-02-30``).
_ISO_DAY = re.compile(r"^([+-]\d{6}|\d{4})-(\d{2})-(\d{2})(.*)$", re.DOTALL)


def _date_parse_ms(text: str, tz: str) -> float | None:
    """``Date.parse(text)`` in ms; None where JavaScript returns NaN.

    Polars refuses a day the month does not have, where ``Date.parse`` rolls it over
    (``2026-02-30`` is 2026-03-02, rules §2; a month above 12 stays NaN): such a date is
    parsed as the first of its month plus the extra days.
    """
    try:
        value = pl.select(iso_to_ms_expr(pl.lit(text, dtype=pl.String), tz)).item()
    except pl.exceptions.PolarsError:
        match = _ISO_DAY.match(text)
        if match is None or not 1 <= int(match[2]) <= 12 or not 1 <= int(match[3]) <= 31:
            return None
        first = _date_parse_ms(f"{match[1]}-{match[2]}-01{match[4]}", tz)
        return None if first is None else first + (int(match[3]) - 1) * 86_400_000.0
    return None if value is None else float(value)


def limit_count(limit: Limit) -> int | None:
    """How many items ``Number(limit) || 100`` keeps; None = all (an infinite limit).

    Both handlers take ``max(1, limit)`` items (the first sessions, the last events), and
    ``Array.prototype.slice`` truncates a fractional bound toward zero.
    """
    if limit is None:
        number = 0.0
    elif isinstance(limit, str):
        number = js_number(limit)
    elif isinstance(limit, bool) or not isinstance(limit, (int, float)):
        raise TypeError(f"limit must be a number, a string or None, not {type(limit).__name__}")
    else:
        number = float(limit)
    if number == 0 or math.isnan(number):
        number = 100.0
    number = max(1.0, number)
    # a limit beyond any frame's length keeps everything, as an infinite one does
    return None if number >= 2.0**62 else int(number)


def _csv_values(values: Filter) -> list[str]:
    """A query list as the reference parses it: split on commas, JS-trimmed, no empties."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    out: list[str] = []
    for value in values:
        for part in str(value).split(","):
            part = js_trim(part)
            if part:
                out.append(part)
    return out


def _as_string(value: Any) -> str | None:
    """The reference's ``asString``: a JS-trimmed non-empty string, else None."""
    if not isinstance(value, str):
        return None
    trimmed = js_trim(value)
    return trimmed or None


def _now_ms(now: Now, name: str = "now") -> float:
    """``now`` in epoch ms: a number, a datetime (naive = UTC) or an ISO 8601 string.

    The one parser of the package (:func:`a2a_lab.to_epoch_ms`); a value of another type
    (a bool, None) is a ``TypeError``.
    """
    if isinstance(now, bool) or not isinstance(now, (int, float, str, datetime)):
        raise TypeError(
            f"{name} must be epoch milliseconds, an ISO 8601 string or a datetime, "
            f"not {type(now).__name__}"
        )
    return to_epoch_ms(now, name=name)
