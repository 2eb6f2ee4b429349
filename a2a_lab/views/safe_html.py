"""Untrusted text in HTML: escaping, embedded JSON and invisible characters.

Everything a log holds (messages, agent ids, task titles, reasons) is untrusted: a message
may contain ``<script>``, an event-handler attribute, a ``</script>`` that would end a
script block early, or bidi-override characters (U+202E) that make it read differently
from what it is. Every HTML the package writes goes through these helpers:

* :func:`escape_html` / :func:`escape_html_expr`: :func:`html.escape` (quotes included)
  after :func:`neutralize`;
* :func:`neutralize` / :func:`neutralize_expr`: C0 and C1 control characters (tab, line
  feed and carriage return excepted), the bidi embeddings, overrides and isolates
  (U+202A–U+202E, U+2066–U+2069) and the invisible direction marks (U+200E, U+200F,
  U+061C) are shown as a visible ``⟨U+202E⟩`` instead of acting on the text around them;
* :func:`script_json`: JSON that is safe inside ``<script>`` (``<``, ``>``, ``&``,
  U+2028 and U+2029 as ``\\uXXXX`` escapes, which JSON and JavaScript read back as the same
  characters).
"""

from __future__ import annotations

import html
import json
from typing import Any

import polars as pl

__all__ = [
    "NEUTRALIZED",
    "escape_html",
    "escape_html_expr",
    "neutralize",
    "neutralize_expr",
    "script_json",
]

#: The characters :func:`neutralize` replaces, in code point order.
NEUTRALIZED: tuple[str, ...] = tuple(
    chr(c)
    for c in (
        *range(0x00, 0x09),
        0x0B,
        0x0C,
        *range(0x0E, 0x20),
        *range(0x7F, 0xA0),
        0x061C,
        0x200E,
        0x200F,
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
    )
)
_SHOWN = tuple(f"⟨U+{ord(c):04X}⟩" for c in NEUTRALIZED)
_TABLE = str.maketrans(dict(zip(NEUTRALIZED, _SHOWN, strict=True)))
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}
# JSON escapes that keep the text the same for JSON.parse and JavaScript alike
_SCRIPT_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def neutralize(text: str) -> str:
    """Show control and bidi characters as ``⟨U+XXXX⟩`` (see the module docstring).

    Examples
    --------
    >>> neutralize("abc\\u202edcba\\x07")
    'abc⟨U+202E⟩dcba⟨U+0007⟩'
    >>> neutralize("tab\\tand\\nnewline stay")
    'tab\\tand\\nnewline stay'
    """
    return text.translate(_TABLE)


def neutralize_expr(text: pl.Expr) -> pl.Expr:
    """:func:`neutralize`, vectorised (null stays null)."""
    return text.str.replace_many(list(NEUTRALIZED), list(_SHOWN))


def escape_html(value: Any) -> str:
    """Any value as HTML text: ``str()`` of it, neutralised and escaped (None → ``""``).

    Examples
    --------
    >>> escape_html('<b onclick="x">\\u202e')
    '&lt;b onclick=&quot;x&quot;&gt;⟨U+202E⟩'
    """
    return html.escape(neutralize("" if value is None else str(value)), quote=True)


def escape_html_expr(text: pl.Expr) -> pl.Expr:
    """:func:`escape_html` of a String expression, vectorised (null stays null)."""
    return neutralize_expr(text).str.replace_many(list(_ESCAPES), list(_ESCAPES.values()))


def script_json(obj: Any) -> str:
    """``obj`` as JSON that cannot end or confuse the ``<script>`` element it sits in.

    Strings keep every character (``JSON.parse`` gives the same value back); only the
    spelling changes. Non-finite floats are refused (they are not JSON).

    Examples
    --------
    >>> script_json({"text": "</script><script>alert(1)</script>"})
    '{"text": "\\\\u003c/script\\\\u003e\\\\u003cscript\\\\u003ealert(1)\\\\u003c/script\\\\u003e"}'
    >>> json.loads(script_json(["a&b\\u2028"])) == ["a&b\\u2028"]
    True
    """
    return json.dumps(obj, ensure_ascii=False, allow_nan=False).translate(_SCRIPT_ESCAPES)
