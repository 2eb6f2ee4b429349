"""The reference server's response bytes: ``JSON.stringify(body, null, 2)``.

The dashboard writes every body with two-space indentation. Python's ``json`` module indents
the same way but writes numbers differently from ECMAScript's ``Number::toString``
(``1e+16`` for ``10000000000000000``, ``1e-05`` for ``0.00001``, ``NaN`` for ``null``), and no
maintained library writes ECMAScript numbers, so the number rule is written out here; the
strings go through the standard library's encoder, whose escapes are JavaScript's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from a2a_lab.reference.jsstr import js_well_formed_json

#: ``json``'s string encoder without ASCII escaping: the escapes JSON.stringify writes
#: (``\\" \\\\ \\b \\f \\n \\r \\t``, other controls as ``\\u00XX``), other text as is.
_encode_string = json.encoder.encode_basestring

_MAX_SAFE = 2**53


def js_number(value: float | int) -> str:
    """``String(value)`` of a JavaScript number, as ``JSON.stringify`` writes it.

    Non-finite numbers are ``null``; ``-0`` is ``0``; the digits are the shortest that
    round-trip (Python's ``repr`` finds the same ones), placed by ECMA-262's
    ``Number::toString``: plain notation for exponents from -7 to 20, else ``d.ddde±n``.

    Examples
    --------
    >>> [js_number(x) for x in (1.0, -0.0, 1e16, 1e21, 1.5e-7, 0.000001, 123456.789)]
    ['1', '0', '10000000000000000', '1e+21', '1.5e-7', '0.000001', '123456.789']
    """
    if isinstance(value, int) and abs(value) <= _MAX_SAFE:
        return str(value)
    number = float(value)
    if not math.isfinite(number):
        return "null"
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    text = repr(abs(number))
    mantissa, _, exp_text = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    # n: the position of the decimal point relative to the first digit (ECMA-262's n)
    point = len(whole) + (int(exp_text) if exp_text else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + digits
    exponent = point - 1
    exp_sign = "+" if exponent >= 0 else "-"
    head = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{head}e{exp_sign}{abs(exponent)}"


class Fragment:
    """A value's JSON bytes made earlier, written as they are where they stand.

    Parameters
    ----------
    data
        The value's UTF-8 JSON text (lone surrogates escaped) as :func:`js_json_bytes`
        writes it with every line after the first indented by ``indent``.
    indent
        The indentation the text was made for; at another place it is re-indented.
    """

    __slots__ = ("data", "indent")

    def __init__(self, data: bytes, indent: str = "") -> None:
        self.data = data
        self.indent = indent

    @classmethod
    def of(cls, value: Any, indent: str) -> Fragment:
        """The fragment of ``value`` to stand at ``indent``."""
        return fragment_at(value, indent)


def _write(value: Any, indent: str, out: list[str | Fragment]) -> None:
    """Append ``value``'s JSON text at nesting ``indent`` to ``out``."""
    if isinstance(value, str):
        out.append(_encode_string(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int | float):
        out.append(js_number(value))
    elif isinstance(value, dict):
        items = ((_encode_string(str(key)) + ": ", item) for key, item in value.items())
        _write_members(items, "{", "}", indent, out)
    elif isinstance(value, list | tuple):
        _write_members((("", item) for item in value), "[", "]", indent, out)
    elif isinstance(value, Fragment):
        out.append(
            value
            if value.indent == indent
            else Fragment(_reindent(value.data, value.indent, indent), indent)
        )
    else:
        raise TypeError(f"not JSON-able: {type(value).__name__}")


def _write_members(
    items: Iterator[tuple[str, Any]], start: str, end: str, indent: str, out: list[str | Fragment]
) -> None:
    """An object's or array's members (``prefix`` then value) one per line, or ``{}``/``[]``."""
    inner = indent + "  "
    opening = len(out)
    out.append(start)
    for prefix, item in items:
        out.append(("\n" if len(out) == opening + 1 else ",\n") + inner + prefix)
        _write(item, inner, out)
    if len(out) == opening + 1:
        out[opening] = start + end
    else:
        out.append("\n" + indent + end)


def _reindent(data: bytes, old: str, new: str) -> bytes:
    """JSON text made at indentation ``old`` moved to ``new`` (a string's newlines are
    escaped in JSON text: every raw newline starts an indented line)."""
    if old == new:
        return data
    text = data.decode("utf-8")
    if old:
        text = text.replace("\n" + old, "\n")
    return text.replace("\n", "\n" + new).encode("utf-8")


def _encode(text: str) -> bytes:
    """UTF-8 of JSON text; a lone surrogate (rare) is written as its escape first."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return js_well_formed_json(text).encode("utf-8")


def js_json_parts(value: Any, indent: str = "") -> list[bytes | Fragment]:
    """``value``'s JSON text at nesting ``indent`` in pieces: the fragments in it, kept as
    they are (the same objects where they stood at ``indent`` already), and the UTF-8 text
    between them; ``b"".join`` of the pieces' bytes is the whole text."""
    out: list[str | Fragment] = []
    _write(value, indent, out)
    parts: list[bytes | Fragment] = []
    run: list[str] = []
    for piece in out:
        if isinstance(piece, Fragment):
            parts.append(_encode("".join(run)))
            run.clear()
            parts.append(piece)
        else:
            run.append(piece)
    parts.append(_encode("".join(run)))
    return parts


def fragment_at(value: Any, indent: str) -> Fragment:
    """``value`` written as JSON text to stand at nesting ``indent`` (its first line not
    indented: it continues the line it is placed on)."""
    return Fragment(_join(js_json_parts(value, indent)), indent)


def _join(parts: list[bytes | Fragment]) -> bytes:
    return b"".join(p.data if isinstance(p, Fragment) else p for p in parts)


def js_json_bytes(value: Any) -> bytes:
    """``JSON.stringify(value, null, 2)`` as UTF-8 bytes (lone surrogates escaped).

    Parameters
    ----------
    value
        Dicts (keys in the order to write), lists, strings, numbers, booleans and None.

    Returns
    -------
    bytes
        The body the reference's handlers send.

    Examples
    --------
    >>> js_json_bytes({"a": [1, 2.5e-7], "b": {}, "c": None})
    b'{\\n  "a": [\\n    1,\\n    2.5e-7\\n  ],\\n  "b": {},\\n  "c": null\\n}'
    """
    return _join(js_json_parts(value))
