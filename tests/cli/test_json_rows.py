"""``conversations --json``'s encoder writes exactly the bytes of ``json.dumps`` (issue 24).

The slow, obvious implementation is ``json.dumps(frame.to_dicts(), ensure_ascii=False)``;
the fast one (:mod:`a2a_lab.cli._json_rows`) is checked against it for every column type
the conversations frame has (strings, 64-bit integers, floats, booleans, nulls) and a few
it might get (32-bit floats, small integers, categoricals, an all-null column).
"""

from __future__ import annotations

import json

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_lab.cli._json_rows import json_row_texts, json_rows

#: Text with what json.dumps escapes (quote, backslash, every control character), Korean,
#: U+2028/9 and DEL (not escaped with ensure_ascii=False), and any other code point
#: Polars can hold (no lone surrogates).
_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(['"', "\\", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f"]),
        st.sampled_from(["한", "국", "\u2028", "\u2029", "é", "😀"]),
        st.characters(exclude_categories=["Cs"]),
    ),
    max_size=12,
)
_FLOAT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e16, 1e15, 9999999999999998.0, -0.0, 0.0, 1e-4, 9.99e-5, 1e-5, 5e-324]),
)
_COLUMNS = {
    "s": (pl.String, _TEXT),
    "i": (pl.Int64, st.integers(-(2**63), 2**63 - 1)),
    "f": (pl.Float64, _FLOAT),
    "f32": (pl.Float32, st.floats(width=32)),
    "b": (pl.Boolean, st.booleans()),
    "u8": (pl.UInt8, st.integers(0, 255)),
    "c": (pl.Categorical, st.sampled_from(["a", "한", 'q"'])),
    "n": (pl.Null, st.none()),
}


def _expected(frame: pl.DataFrame) -> str:
    return json.dumps(frame.to_dicts(), ensure_ascii=False)


@st.composite
def _frames(draw: st.DrawFn) -> pl.DataFrame:
    names = draw(st.lists(st.sampled_from(sorted(_COLUMNS)), min_size=1, max_size=6, unique=True))
    height = draw(st.integers(0, 8))
    columns = {}
    for name in names:
        dtype, values = _COLUMNS[name]
        cells = draw(st.lists(st.one_of(st.none(), values), min_size=height, max_size=height))
        columns[name] = pl.Series(name, cells, dtype=dtype)
    return pl.DataFrame(columns)


@settings(max_examples=400, deadline=None)
@given(_frames(), st.integers(1, 5))
def test_json_rows_are_json_dumps_bytes(frame: pl.DataFrame, rows: int) -> None:
    assert "".join(json_rows(frame, rows=rows)) == _expected(frame)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), _FLOAT), min_size=1, max_size=20))
def test_every_float_is_written_as_python_writes_it(values: list[float | None]) -> None:
    frame = pl.DataFrame({"x": pl.Series(values, dtype=pl.Float64)})
    assert json_row_texts(frame).to_list() == [json.dumps(row) for row in frame.to_dicts()]


@settings(max_examples=300, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=20), _TEXT)
def test_strings_and_keys_are_escaped_as_json_dumps(values: list[str], key: str) -> None:
    frame = pl.DataFrame({key: pl.Series(values, dtype=pl.String)})
    assert "".join(json_rows(frame)) == _expected(frame)


def test_the_frame_of_no_rows_and_of_no_columns() -> None:
    assert "".join(json_rows(pl.DataFrame({"a": pl.Series([], dtype=pl.Int64)}))) == "[]"
    assert "".join(json_rows(pl.DataFrame([{}, {}]))) == json.dumps([{}, {}])


def test_a_nested_column_falls_back_to_json_dumps() -> None:
    frame = pl.DataFrame({"l": [[1.0, None], None], "t": [{"k": "한"}, None]})
    assert "".join(json_rows(frame)) == _expected(frame)
