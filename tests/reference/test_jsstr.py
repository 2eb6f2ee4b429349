"""JavaScript string and number semantics (rules §10), checked against the spec and Node."""

from __future__ import annotations

from fractions import Fraction

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_lab.reference.jsstr import (
    JS_WHITESPACE,
    js_lower,
    js_lower_all,
    js_string_expr,
    js_to_fixed_number,
    js_trim,
    js_trim_expr,
    utf16_key,
    utf16_len,
    utf16_sort_key_expr,
)
from tests.support.node_js import needs_node, node_json

# rules §10, typed from the spec
SPEC_WHITESPACE = {
    0x09,
    0x0A,
    0x0B,
    0x0C,
    0x0D,
    0x20,
    0xA0,
    0x1680,
    *range(0x2000, 0x200B),
    0x2028,
    0x2029,
    0x202F,
    0x205F,
    0x3000,
    0xFEFF,
}
# characters around every boundary that matters: JS whitespace, Python-only whitespace, the
# surrogate gap, U+E000-U+FFFF vs supplementary, the largest code point
EDGE_CHARS = st.sampled_from(
    [
        *map(chr, sorted(SPEC_WHITESPACE)),
        "\x1c",
        "\x1f",
        "\x85",
        "\u180e",
        "\u200b",
        "\x00",
        "a",
        "B",
        "\ud7ff",
        "\ue000",
        "\uf8ff",
        "\uffff",
        "\U00010000",
        "\U0001f600",
        "\U0010fffe",
        "\U0010ffff",
        "İ",
        "Σ",
    ]
)
TEXT = st.text(st.one_of(EDGE_CHARS, st.characters(exclude_categories=("Cs",))), max_size=8)


def _units(s: str) -> list[int]:
    """UTF-16 code units, computed arithmetically."""
    units = []
    for ch in s:
        cp = ord(ch)
        if cp < 0x10000:
            units.append(cp)
        else:
            cp -= 0x10000
            units += [0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF)]
    return units


# ---- trim ------------------------------------------------------------------------------


def test_js_whitespace_is_the_spec_set() -> None:
    assert {ord(c) for c in JS_WHITESPACE} == SPEC_WHITESPACE
    assert len(JS_WHITESPACE) == len(SPEC_WHITESPACE)


@needs_node
def test_js_whitespace_is_what_node_trims() -> None:
    trimmed = node_json(
        "const out=[];for(let c=0;c<0x110000;c++){if(c>=0xD800&&c<=0xDFFF)continue;"
        "if(String.fromCodePoint(c).trim()==='')out.push(c)}console.log(JSON.stringify(out))"
    )
    assert set(trimmed) == SPEC_WHITESPACE


def test_js_trim_is_not_python_strip() -> None:
    assert js_trim("\ufeff\u3000 x \u2028") == "x"
    assert js_trim("\x1c\x85x\x1f") == "\x1c\x85x\x1f"
    assert "\ufeffx".strip() == "\ufeffx" and "\x85x".strip() == "x"  # why js_trim exists


@settings(max_examples=100)
@given(values=st.lists(st.one_of(st.none(), TEXT), max_size=10))
def test_js_trim_expr_equals_js_trim(values: list[str | None]) -> None:
    got = pl.select(js_trim_expr(pl.Series(values, dtype=pl.String))).to_series().to_list()
    assert got == [None if v is None else js_trim(v) for v in values]
    as_string = pl.select(js_string_expr(pl.Series(values, dtype=pl.String))).to_series().to_list()
    assert as_string == [None if v is None or js_trim(v) == "" else js_trim(v) for v in values]


# ---- UTF-16 length and order -------------------------------------------------------------


@given(TEXT)
def test_utf16_len(s: str) -> None:
    assert utf16_len(s) == len(_units(s))


@given(st.lists(TEXT, max_size=12))
def test_utf16_key_sorts_by_code_units(values: list[str]) -> None:
    assert sorted(values, key=utf16_key) == sorted(values, key=_units)


@settings(max_examples=150)
@given(pairs=st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=20))
def test_utf16_sort_key_expr_compares_like_javascript(pairs: list[tuple[str, str]]) -> None:
    a, b = zip(*pairs, strict=True)
    frame = pl.DataFrame({"a": list(a), "b": list(b)}, schema={"a": pl.String, "b": pl.String})
    got = frame.select(
        lt=utf16_sort_key_expr(pl.col("a")) < utf16_sort_key_expr(pl.col("b")),
        eq=utf16_sort_key_expr(pl.col("a")) == utf16_sort_key_expr(pl.col("b")),
    )
    assert got["lt"].to_list() == [_units(x) < _units(y) for x, y in pairs]
    assert got["eq"].to_list() == [x == y for x, y in pairs]
    column = frame.select(pl.concat([pl.col("a"), pl.col("b")]).alias("s"))
    by_key = column.sort(utf16_sort_key_expr(pl.col("s")), maintain_order=True)["s"].to_list()
    assert by_key == sorted(column["s"].to_list(), key=_units)


def test_utf16_order_differs_from_code_point_order_only_above_u_e000() -> None:
    pair = ["\uff01", "\U0001f600"]
    assert sorted(pair) == pair and sorted(pair, key=utf16_key) == pair[::-1]
    assert sorted(["b", "a\U0001f600", "a\ue000"], key=utf16_key) == ["a\U0001f600", "a\ue000", "b"]


@needs_node
def test_utf16_sort_key_expr_matches_node_sort() -> None:
    values = [
        "Zed",
        "adam",
        "\uff01x",
        "\U0001f600",
        "\ue000",
        "\U0010ffff",
        "\U0010ffff\x00",
        "\uffff",
        "a\U0001f600",
        "a\ue000",
        "a",
        "",
        "\U00010000",
        "\ud7ff",
        "unknown",
        "Unknown",
    ]
    expected = node_json("console.log(JSON.stringify(input.slice().sort()))", values)
    got = pl.DataFrame({"s": values}).sort(utf16_sort_key_expr(pl.col("s")))["s"].to_list()
    assert got == expected


# ---- lower-case ------------------------------------------------------------------------


def test_js_lower_special_cases() -> None:
    assert js_lower("İ") == "i\u0307"  # two code points, so "KPİ" contains "kpi"
    assert js_lower("\u212a8S") == "k8s"  # Kelvin sign
    assert js_lower("ΟΔΟΣ") == "οδος" and js_lower("ΟΔΟΣ Α") == "οδος α"  # final sigma
    assert js_lower("ΣΑ") == "σα" and js_lower("Σ") == "σ"  # not final
    assert js_lower_all(["İ", "ΟΔΟΣ", ""]) == [js_lower("İ"), js_lower("ΟΔΟΣ"), ""]
    # Python 3.11's tables predate Unicode 16: str.lower leaves U+A7CB alone, JavaScript does not
    assert js_lower("\ua7cb") == "\u0264"


@needs_node
def test_polars_lower_case_equals_node_for_every_code_point() -> None:
    changed = node_json(
        "const out={};for(let c=0;c<0x110000;c++){if(c>=0xD800&&c<=0xDFFF)continue;"
        "const s=String.fromCodePoint(c),l=s.toLowerCase();if(l!==s)out[c]=l}console.log(JSON.stringify(out))"
    )
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    mine = {ord(c): low for c, low in zip(chars, js_lower_all(chars), strict=True) if low != c}
    assert mine == {int(k): v for k, v in changed.items()}
    contexts = ["ΟΔΟΣ", "ΑΣ Β", "A.Σ", "ΑΣ\u0301", "Σ", "ΑΣΑ", "ΑΣ😀"]
    assert js_lower_all(contexts) == node_json(
        "console.log(JSON.stringify(input.map(s=>s.toLowerCase())))", contexts
    )


# ---- Number(x.toFixed(d)) ----------------------------------------------------------------


def _to_fixed_from_spec(x: float, digits: int) -> float:
    """ECMA-262 toFixed: n with n / 10**d - x closest to zero, the larger n on a tie (|x|)."""
    exact = abs(Fraction(x)) * 10**digits
    n = (exact + Fraction(1, 2)).__floor__()
    text = str(n).rjust(digits + 1, "0")
    text = text[: len(text) - digits] + ("." + text[len(text) - digits :] if digits else "")
    return float(("-" if x < 0 or (x == 0 and str(x).startswith("-")) else "") + text)


@settings(max_examples=500)
@given(
    x=st.one_of(
        st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
        st.integers(-(10**6), 10**6).map(lambda n: n / 1000 + 0.0005),  # near-ties
        st.integers(-64, 64).map(lambda n: n / 8),  # exact binary ties
    ),
    digits=st.integers(0, 6),
)
def test_js_to_fixed_number_follows_the_spec(x: float, digits: int) -> None:
    assert js_to_fixed_number(x, digits) == _to_fixed_from_spec(x, digits)


@needs_node
def test_js_to_fixed_number_equalsnode_json() -> None:
    values = [
        0.125,
        0.375,
        1.005,
        2.5,
        -2.5,
        0.5 + 0.08 * 3 + 0.05,
        0.945,
        0.955,
        1e-7,
        123.456,
        -0.001,
        0.0,
    ]
    cases = [[x, d] for x in values for d in (0, 1, 2, 3)]
    expected = node_json(
        "console.log(JSON.stringify(input.map(([x,d])=>Number(x.toFixed(d)))))", cases
    )
    assert [js_to_fixed_number(x, d) for x, d in cases] == expected
