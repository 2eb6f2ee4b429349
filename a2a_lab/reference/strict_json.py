"""Strict JSON, as the reference's ``JSON.parse`` reads it: ``NaN``, ``Infinity`` and
``-Infinity`` are not JSON (Python's ``json`` accepts them by default)."""

from __future__ import annotations

import json
from typing import Any, Final, NoReturn

__all__ = ["STRICT_DECODER", "loads", "reject_constant"]


def reject_constant(name: str) -> NoReturn:
    """``parse_constant`` hook of :mod:`json`: refuse ``NaN`` / ``Infinity`` / ``-Infinity``.

    >>> json.loads("[NaN]", parse_constant=reject_constant)
    Traceback (most recent call last):
    ...
    ValueError: NaN is not valid JSON
    """
    raise ValueError(f"{name} is not valid JSON")


#: A decoder that refuses the non-JSON constants (``STRICT_DECODER.decode(text)``).
STRICT_DECODER: Final = json.JSONDecoder(parse_constant=reject_constant)


def loads(text: str | bytes) -> Any:
    """``json.loads`` without the non-JSON constants.

    >>> loads('{"a": [1, 2.5, null]}')
    {'a': [1, 2.5, None]}
    """
    return json.loads(text, parse_constant=reject_constant)
