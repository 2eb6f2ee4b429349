"""JavaScript value and regex semantics the runtime rules need beyond :mod:`a2a_lab.reference.jsstr`.

The reference rules are JavaScript; porting them to Python changes a few meanings
(runtime/README.md, "Notes for porting to Python"):

* a JSON number is a double and ``typeof true`` is ``"boolean"``, while in Python ``bool`` is
  an ``int`` (:func:`is_js_number`);
* ``Math.round`` rounds halves up, Python's ``round`` to even (:func:`js_round`);
* template strings print numbers with ``Number.prototype.toString`` and other values with
  ``String(value)`` (:func:`js_number_str`, :func:`js_string`);
* in a regex, ``.`` excludes all four line terminators (Python's only ``\\n``), ``\\s`` is the
  ECMAScript white-space set, ``$`` without the ``m`` flag matches only at the very end
  (Python's ``$`` also before a final ``\\n``) and the ``i`` flag without ``u`` never folds a
  non-ASCII character onto an ASCII one (Python folds ``K`` KELVIN SIGN onto ``k``)
  (:data:`JS_DOT`, :data:`JS_SPACE`, :data:`JS_FLAGS_I`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Final, Generic, TypeGuard, TypeVar

from a2a_lab.reference.jsstr import JS_WHITESPACE


class _Undefined:
    """JavaScript's ``undefined``: a key that is absent, as opposed to JSON ``null`` (None)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "undefined"


#: The value of an absent key (``None`` is JSON ``null``, which JavaScript tells apart).
UNDEFINED: Final = _Undefined()

#: Regex for JavaScript's ``.`` (no ``s`` flag): anything but LF, CR, U+2028, U+2029.
JS_DOT: str = "[^\\n\\r\\u2028\\u2029]"

#: Regex for JavaScript's ``\s``: the ECMAScript WhiteSpace and LineTerminator code points.
JS_SPACE: str = "[" + re.escape(JS_WHITESPACE) + "]"

#: Python flags for a JavaScript ``/…/i`` regex whose cased letters are all ASCII: ASCII-only
#: case folding is what the non-Unicode ``i`` flag does (its Canonicalize step never maps a
#: character >= U+0080 to one below it).
JS_FLAGS_I: re.RegexFlag = re.IGNORECASE | re.ASCII


def is_js_number(value: object) -> bool:
    """``typeof value === "number"`` for a value decoded from JSON (bool is not a number).

    Examples
    --------
    >>> is_js_number(1), is_js_number(0.5), is_js_number(True), is_js_number("1")
    (True, True, False, False)
    """
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_finite_js_number(value: object) -> TypeGuard[int | float]:
    """``typeof value === "number" && Number.isFinite(value)`` for a value decoded from JSON.

    An integer literal too large for a double is ``Infinity`` in JavaScript, hence not finite.

    Examples
    --------
    >>> is_finite_js_number(3), is_finite_js_number(float("inf")), is_finite_js_number(10**400)
    (True, False, False)
    """
    if not is_js_number(value):
        return False
    try:
        return math.isfinite(value)  # type: ignore[arg-type]
    except OverflowError:
        return False


def js_round(x: float) -> int:
    """JavaScript ``Math.round`` of a finite number: the nearest integer, halves rounded up.

    Examples
    --------
    >>> js_round(0.5), js_round(2.5), js_round(-2.5), round(2.5)
    (1, 3, -2, 2)
    >>> js_round(0.49999999999999994)  # floor(x + 0.5) would give 1
    0
    """
    floor = math.floor(x)
    # x - floor(x) is exact in binary floating point, so the tie test is exact too
    return floor + 1 if x - floor >= 0.5 else floor


def js_number_str(x: float) -> str:
    """``Number.prototype.toString()`` of a number (as a template string prints it).

    Examples
    --------
    >>> js_number_str(75), js_number_str(75.0), js_number_str(0.5), js_number_str(1e-7)
    ('75', '75', '0.5', '1e-7')
    >>> js_number_str(1e21), js_number_str(123456789012345680000.0), js_number_str(-0.0)
    ('1e+21', '123456789012345680000', '0')
    """
    try:
        value = float(x)
    except OverflowError:  # an integer literal beyond the double range parses to ±Infinity
        value = math.inf if x > 0 else -math.inf
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    # repr gives the shortest round-tripping digits, the same digit string JavaScript picks
    _, digits_tuple, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    assert isinstance(exponent, int)  # a finite value: not the 'n'/'N'/'F' of NaN and Infinity
    digits = "".join(map(str, digits_tuple))
    k = len(digits)
    n = exponent + k  # value = 0.digits × 10^n
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
        body = f"{mantissa}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"
    return sign + body


def js_string(value: object) -> str:
    """``String(value)`` for a value decoded from JSON, or :data:`UNDEFINED`.

    Examples
    --------
    >>> js_string(UNDEFINED), js_string(None), js_string(True), js_string(42.0)
    ('undefined', 'null', 'true', '42')
    >>> js_string([1, None, "a"]), js_string({"a": 1})
    ('1,,a', '[object Object]')
    """
    if value is UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return js_number_str(value)
    if isinstance(value, list | tuple):
        # Array.prototype.join writes null and undefined items as ""
        return ",".join(
            "" if item is None or item is UNDEFINED else js_string(item) for item in value
        )
    return "[object Object]"


_R = TypeVar("_R")


@dataclass(frozen=True, slots=True)
class PatternRule(Generic[_R]):
    """One rule of an ordered rule list: a text in which ``pattern`` is found gets ``result``.

    The reference's classifiers (message intent, wait errors, gateway exceptions) are all
    such lists, first match wins (:func:`first_match`).
    """

    pattern: re.Pattern[str]
    result: _R


def first_match(rules: Iterable[PatternRule[_R]], text: str) -> _R | None:
    """The result of the first rule whose pattern is found in ``text``; None if none is.

    >>> rules = [PatternRule(re.compile("b"), 1), PatternRule(re.compile("a"), 2)]
    >>> first_match(rules, "ab"), first_match(rules, "c")
    (1, None)
    """
    return next((rule.result for rule in rules if rule.pattern.search(text)), None)
