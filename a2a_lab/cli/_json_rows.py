"""A frame's rows as the JSON text ``json.dumps(frame.to_dicts(), ensure_ascii=False)`` gives.

``conversations --json`` wrote 188,188 rows × 33 fields (168 MB) by turning every row into
a Python dict and encoding it with :func:`json.dumps`: 1.9 of its 2.8 CPU seconds. Here
each column becomes its JSON text with Polars expressions (strings escaped as
:func:`json.dumps` escapes them, numbers in Python's ``repr``), and the rows are joined
in Polars. The bytes are the same as before (``tests/cli/test_json_rows.py`` checks them
against :func:`json.dumps` with hypothesis for every column type used here).

orjson was not used: it writes no spaces after ``,`` and ``:``, ``1e16`` for Python's
``1e+16`` and ``null`` for NaN, so its text would need rewriting, which is unsafe inside
strings.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import polars as pl

#: The escapes :func:`json.dumps` writes with ``ensure_ascii=False``: the quote, the
#: backslash and the 32 control characters (five of them by their short name).
_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_ESCAPES = {**{chr(c): f"\\u{c:04x}" for c in range(32)}, **_SHORT}

#: Python's ``repr`` and Polars' text of a float agree but for these (``1e-05`` against
#: ``0.00001``, ``Infinity`` against ``inf``): those few values are written by json.dumps.
_TINY = 1e-4


def _string_text(col: pl.Expr) -> pl.Expr:
    # one pass of Aho-Corasick (the replacements are not searched again); testing first
    # which strings need an escape costs more than it saves
    body = col.cast(pl.String).str.replace_many(list(_ESCAPES), list(_ESCAPES.values()))
    return pl.concat_str(pl.lit('"'), body, pl.lit('"'))


def _float_text(values: pl.Series) -> pl.Series:
    values = values.cast(pl.Float64)  # to_dicts gives a Float32 as its float64 value
    text = values.cast(pl.String)
    odd = (values.is_infinite() | ((values.abs() < _TINY) & (values != 0))).fill_null(False)
    if odd.any():
        where = odd.arg_true()
        fixed = [json.dumps(v) for v in values.gather(where).to_list()]
        text = text.scatter(where, pl.Series(fixed, dtype=pl.String))
    return text


def _column_text(values: pl.Series) -> pl.Series:
    """The JSON text of each value of ``values`` (null for a null)."""
    dtype = values.dtype
    if dtype == pl.String or dtype == pl.Categorical or isinstance(dtype, pl.Enum):
        text = pl.select(_string_text(pl.lit(values))).to_series()
    elif dtype.is_float():
        text = _float_text(values)
    elif dtype.is_integer() or dtype == pl.Boolean:
        text = values.cast(pl.String)  # true / false for a Boolean, as json.dumps
    elif dtype == pl.Null:
        text = pl.Series(values.name, [None] * values.len(), pl.String)
    else:
        # nested or other types: json.dumps of each value (slow, and not used by the CLI)
        text = pl.Series(
            [json.dumps(v, ensure_ascii=False) for v in values.to_list()], dtype=pl.String
        )
    return text.fill_null("null").alias(values.name)


def json_row_texts(frame: pl.DataFrame) -> pl.Series:
    """Each row of ``frame`` as the text :func:`json.dumps` gives its dict (``ensure_ascii=False``).

    Examples
    --------
    >>> import polars as pl
    >>> json_row_texts(pl.DataFrame({"a": [1, None], "b": ["x\\n", "한"]})).to_list()
    ['{"a": 1, "b": "x\\\\n"}', '{"a": null, "b": "한"}']
    """
    parts: list[pl.Series | str] = []
    for i, name in enumerate(frame.columns):
        key = json.dumps(name, ensure_ascii=False)
        parts.append(("{" if i == 0 else ", ") + key + ": ")
        parts.append(_column_text(frame.get_column(name)))
    if not parts:
        return pl.Series("row", ["{}"] * frame.height, pl.String)
    row = pl.concat_str([pl.lit(p) if isinstance(p, str) else p for p in parts])
    return pl.select(pl.concat_str(row, pl.lit("}")).alias("row")).to_series()


def json_rows(frame: pl.DataFrame, rows: int = 5_000) -> Iterator[str]:
    """The text of ``json.dumps(frame.to_dicts(), ensure_ascii=False)``, in pieces of
    ``rows`` rows (joined, the pieces are that text).

    Examples
    --------
    >>> import polars as pl
    >>> "".join(json_rows(pl.DataFrame({"x": [0.5, 1e-05]}), rows=1))
    '[{"x": 0.5}, {"x": 1e-05}]'
    """
    yield "["
    for start in range(0, frame.height, rows):
        texts = json_row_texts(frame.slice(start, rows))
        yield (", " if start else "") + texts.str.join(", ").item()
    yield "]"
