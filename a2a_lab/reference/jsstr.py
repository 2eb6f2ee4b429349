"""JavaScript string semantics (rules §10) for exact parity with the reference dashboard.

The reference runs in JavaScript, so "trim", "lower-case", "length" and "sort" mean what
ECMAScript says, not what Python or Rust say by default:

* **trim** removes exactly the ECMAScript WhiteSpace and LineTerminator code points
  (:data:`JS_WHITESPACE`). Python's ``str.strip()`` also removes U+001C-U+001F and U+0085 and
  keeps U+FEFF; Polars' ``str.strip_chars()`` without arguments uses yet another set.
* **lower-case** is ``String.prototype.toLowerCase``: the Unicode default full mapping with
  the Final_Sigma context rule (``"ΟΔΟΣ"`` → ``"οδος"`` with a final ``ς``, ``"İ"`` →
  ``"i̇"``, two code points). Polars' ``str.to_lowercase`` implements the same algorithm and,
  in the test-suite, agrees with Node for every code point and the final-sigma cases. Python's
  ``str.lower`` implements it too but with older Unicode tables (Python 3.11 has Unicode 14
  and misses the 55 case pairs added since, e.g. U+A7CB, U+10D50-U+10D65, U+16EA0-U+16EB8),
  so :func:`js_lower` goes through Polars.
* **length** counts UTF-16 code units (:func:`utf16_len`), and so does ``slice``
  (:func:`js_slice`).
* **Number(x.toFixed(d))** rounds the exact binary value of ``x`` half away from zero and
  reads the decimal back (:func:`js_to_fixed_number`); Python's ``round`` rounds half to
  even and ``x * 100`` is already inexact.
* **sort** compares UTF-16 code units. That differs from code-point order (Python's ``str``
  comparison and Polars' byte-wise UTF-8 comparison) only when the first difference is a
  character in U+E000-U+FFFF against one at or above U+10000: in UTF-16 the latter is a
  surrogate pair (0xD800-0xDFFF) and sorts first. :func:`utf16_sort_key_expr` rewrites a
  string so that Polars' ordinary comparison gives the UTF-16 order.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal

import polars as pl

#: ECMAScript WhiteSpace + LineTerminator code points, the set ``String.prototype.trim``
#: removes: TAB, LF, VT, FF, CR, SPACE, NBSP, OGHAM SPACE MARK, U+2000-U+200A, LINE
#: SEPARATOR, PARAGRAPH SEPARATOR, NARROW NBSP, MEDIUM MATHEMATICAL SPACE, IDEOGRAPHIC SPACE
#: and ZERO WIDTH NO-BREAK SPACE (BOM).
JS_WHITESPACE: str = (
    "\t\n\v\f\r \u00a0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)

# U+10FFFF is the largest code point; prefixing it moves a character above every other one
# in byte-wise (= code-point) comparison. A literal U+10FFFF is re-coded as U+10FFFF U+0000
# so that the rewriting stays prefix-free (see utf16_sort_key_expr).
_TOP = "\U0010ffff"


def js_trim(s: str) -> str:
    """Trim like JavaScript's ``String.prototype.trim``.

    Parameters
    ----------
    s
        Any string.

    Returns
    -------
    str
        ``s`` without leading and trailing :data:`JS_WHITESPACE` characters.

    Examples
    --------
    >>> js_trim("\\ufeff ok \\u3000")
    'ok'
    >>> js_trim("\\x1c ok \\x85")  # str.strip() would remove these, JavaScript does not
    '\\x1c ok \\x85'
    """
    return s.strip(JS_WHITESPACE)


def js_trim_expr(expr: pl.Expr) -> pl.Expr:
    """Trim a String expression like JavaScript's ``String.prototype.trim``.

    Leading and trailing :data:`JS_WHITESPACE` characters are removed; null stays null.

    Examples
    --------
    >>> pl.select(js_trim_expr(pl.lit("\\u2028 main \\t")).alias("s")).item()
    'main'
    """
    return expr.str.strip_chars(JS_WHITESPACE)


def js_string_expr(expr: pl.Expr) -> pl.Expr:
    """The reference's ``asString``: the JS-trimmed string, or null when blank.

    Parameters
    ----------
    expr
        A String expression (a field that was not a JSON string is already null in the
        event frame).

    Returns
    -------
    pl.Expr
        The trimmed value; null when the value is null or trims to ``""``.

    Examples
    --------
    >>> pl.select(js_string_expr(pl.Series(["  a ", " \\u00a0", None]))).to_series().to_list()
    ['a', None, None]
    """
    trimmed = js_trim_expr(expr)
    return pl.when(trimmed.str.len_bytes() > 0).then(trimmed)


def js_lower(s: str) -> str:
    """Lower-case like JavaScript's ``String.prototype.toLowerCase`` (via Polars).

    Python's ``str.lower`` applies the same rules with older Unicode tables; this goes through
    Polars, whose tables match current JavaScript engines, so that Python-side values (e.g. a
    main-agent set) are normalised exactly like the frame columns they are compared with.

    Examples
    --------
    >>> js_lower("KPİ")  # İ becomes i + U+0307, so "kpi" is a substring of the result
    'kpi̇'
    >>> js_lower("ΟΔΟΣ")  # final sigma
    'οδος'
    """
    out: str = pl.Series([s], dtype=pl.String).str.to_lowercase().item()
    return out


def js_lower_all(values: Iterable[str]) -> list[str]:
    """:func:`js_lower` of many strings at once (one Polars call).

    Examples
    --------
    >>> js_lower_all(["DOCS", "Σ"])
    ['docs', 'σ']
    """
    return pl.Series(list(values), dtype=pl.String).str.to_lowercase().to_list()


def utf16_len(s: str) -> int:
    """Length in UTF-16 code units, as JavaScript's ``String.prototype.length``.

    Examples
    --------
    >>> utf16_len("컴플라이언스"), utf16_len("😀")
    (6, 2)
    """
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def js_slice(s: str, limit: int) -> str:
    """JavaScript's ``s.slice(0, limit)``: the first ``limit`` UTF-16 code units.

    A cut through a surrogate pair keeps its high half, as JavaScript does.

    Examples
    --------
    >>> js_slice("컴플라이언스", 3), [hex(ord(c)) for c in js_slice("a😀b", 2)]
    ('컴플라', ['0x61', '0xd83d'])
    """
    if utf16_len(s) <= limit:
        return s
    return s.encode("utf-16-le", "surrogatepass")[: 2 * limit].decode(
        "utf-16-le", errors="surrogatepass"
    )


def js_to_fixed_number(x: float, digits: int) -> float:
    """JavaScript's ``Number(x.toFixed(digits))``.

    ``toFixed`` picks the integer ``n`` for which ``n / 10**digits - x`` is closest to zero,
    using the exact binary value of ``x``, and the larger ``n`` on a tie (it works on ``|x|``
    and re-applies the sign); ``Number`` reads the decimal text back as the nearest double.
    ``Decimal(x)`` is that exact value, ``ROUND_HALF_UP`` is half away from zero.

    Parameters
    ----------
    x
        A double.
    digits
        Digits after the decimal point (0-100, as in JavaScript).

    Returns
    -------
    float
        The rounded number.

    Examples
    --------
    >>> js_to_fixed_number(0.125, 2)  # exactly representable tie: rounds up
    0.13
    >>> js_to_fixed_number(1.005, 2)  # 1.005 is really 1.00499999999999989...
    1.0
    >>> round(0.125, 2)  # Python rounds the tie to even
    0.12
    """
    if not math.isfinite(x) or abs(x) >= 1e21:
        # toFixed falls back to String(x) there, and Number() reads x back unchanged
        return x
    return float(Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def utf16_key(s: str) -> bytes:
    """A Python sort key that orders strings by UTF-16 code units (JavaScript's default sort).

    Big-endian UTF-16 compares byte-wise exactly as its code units compare.

    Examples
    --------
    >>> sorted(["\\uff01", "\\U0001f600"])  # code-point order
    ['！', '😀']
    >>> sorted(["\\uff01", "\\U0001f600"], key=utf16_key)  # JavaScript order
    ['😀', '！']
    """
    return s.encode("utf-16-be", "surrogatepass")


def utf16_sort_key_expr(expr: pl.Expr) -> pl.Expr:
    """A String expression whose ordinary Polars ordering is the UTF-16 code-unit order.

    Polars compares strings byte-wise in UTF-8, i.e. by code point. UTF-16 order differs only
    in putting the supplementary characters (>= U+10000, surrogate pairs) *below* U+E000-U+FFFF.
    The key recodes every U+E000-U+FFFF character ``c`` as the two characters
    ``U+10FFFF c``, and a literal U+10FFFF as ``U+10FFFF U+0000``. This code is prefix-free
    and maps the characters, in UTF-16 order (``< U+D800``, supplementary up to U+10FFFE,
    U+10FFFF, ``U+E000-U+FFFF``), to code words in increasing code-point order, so comparing
    keys compares the original strings by UTF-16 code units. Strings without characters
    ``>= U+E000`` are unchanged.

    Parameters
    ----------
    expr
        A String expression.

    Returns
    -------
    pl.Expr
        The sort key (a String expression; use it for ``<``, ``sort_by``, ``min_by`` ...).

    Examples
    --------
    >>> df = pl.DataFrame({"a": ["\\uff01", "b"], "b": ["\\U0001f600", "a"]})
    >>> df.select((pl.col("a") < pl.col("b")).alias("codepoint"),
    ...           (utf16_sort_key_expr(pl.col("a")) < utf16_sort_key_expr(pl.col("b"))).alias("utf16"))
    shape: (2, 2)
    ┌───────────┬───────┐
    │ codepoint ┆ utf16 │
    │ ---       ┆ ---   │
    │ bool      ┆ bool  │
    ╞═══════════╪═══════╡
    │ true      ┆ false │
    │ false     ┆ false │
    └───────────┴───────┘
    """
    return expr.str.replace_all(_TOP, _TOP + "\x00", literal=True).str.replace_all(
        "[\\x{E000}-\\x{FFFF}]", _TOP + "$0"
    )


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def js_well_formed_json(text: str) -> str:
    """JSON text with each lone surrogate written as a ``\\uXXXX`` escape, as the
    well-formed ``JSON.stringify`` writes it, so the text encodes to UTF-8.

    Python's ``json.loads`` already joins an escaped surrogate pair into one character, so
    every surrogate left in a decoded string is lone.

    Examples
    --------
    >>> import json
    >>> js_well_formed_json(json.dumps({"m": "a\\ud800b"}, ensure_ascii=False))
    '{"m": "a\\\\ud800b"}'
    """
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
