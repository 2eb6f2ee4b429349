"""Strict JSON, as the reference's ``JSON.parse`` reads it: ``NaN``, ``Infinity`` and
``-Infinity`` are not JSON (Python's ``json`` accepts them by default), and an integer
literal of any length is a number (Python's ``int`` refuses more than 4,300 digits)."""

from __future__ import annotations

import json
from typing import Any, Final, NoReturn

__all__ = ["STRICT_DECODER", "loads", "parse_int", "reject_constant"]


def reject_constant(name: str) -> NoReturn:
    """``parse_constant`` hook of :mod:`json`: refuse ``NaN`` / ``Infinity`` / ``-Infinity``.

    >>> json.loads("[NaN]", parse_constant=reject_constant)
    Traceback (most recent call last):
    ...
    ValueError: NaN is not valid JSON
    """
    raise ValueError(f"{name} is not valid JSON")


def parse_int(text: str) -> int | float:
    """``parse_int`` hook of :mod:`json`: an integer literal of any length.

    Python's ``int`` refuses literals of more than 4,300 digits (CVE-2020-10735), where
    ``JSON.parse`` reads every literal as a double: such a literal is read as ``float`` reads
    it, which, beyond 1.8e308 as in JavaScript, is infinite. Shorter literals stay exact
    integers, as before (downstream code treats them as JavaScript's doubles).

    >>> parse_int("12"), parse_int("9" * 4400), parse_int("-" + "9" * 4400)
    (12, inf, -inf)
    """
    try:
        return int(text)
    except ValueError:
        return float(text)


#: A decoder that refuses the non-JSON constants (``STRICT_DECODER.decode(text)``) and
#: reads integers of any length.
STRICT_DECODER: Final = json.JSONDecoder(parse_constant=reject_constant, parse_int=parse_int)


def loads(text: str | bytes) -> Any:
    """``json.loads`` without the non-JSON constants.

    >>> loads('{"a": [1, 2.5, null]}')
    {'a': [1, 2.5, None]}
    """
    return json.loads(text, parse_constant=reject_constant, parse_int=parse_int)
