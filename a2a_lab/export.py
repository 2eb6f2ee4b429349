"""Frames out to files: :func:`flatten` for flat formats, :func:`write_frame` by suffix.

CSV cannot hold a struct or a list, and JSON has no datetime: ``flatten`` turns a nested
frame into flat, readable columns, so an export keeps every column.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import polars.selectors as cs

from a2a_lab._timefmt import format_time

__all__ = ["FORMATS", "flatten", "write_frame"]

#: The suffixes :func:`write_frame` writes.
FORMATS = (".csv", ".parquet", ".json", ".ndjson")

#: How instants are written as text: ISO 8601 with milliseconds and the offset.
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S%.3f%:z"


def flatten(
    frame: pl.DataFrame | pl.LazyFrame, *, separator: str = "."
) -> pl.DataFrame | pl.LazyFrame:
    """Nested columns made flat: structs become prefixed columns, lists JSON strings.

    Parameters
    ----------
    frame
        Any frame (lazy or eager; the same kind is returned).
    separator
        Between a struct column's name and its field's (``data.fromAgent``).

    Returns
    -------
    pl.DataFrame or pl.LazyFrame
        The same rows; a struct column ``s`` with fields ``a, b`` becomes ``s.a, s.b``
        (recursively), a list or array column becomes its JSON text, every other column is
        unchanged (times stay ``Datetime``; :func:`write_frame` formats them for text).

    Examples
    --------
    >>> import polars as pl
    >>> flatten(pl.DataFrame({"s": [{"a": 1, "b": [2, 3]}]})).row(0)
    (1, '[2,3]')
    """
    while True:
        schema = frame.collect_schema()
        structs = [name for name, dtype in schema.items() if isinstance(dtype, pl.Struct)]
        if not structs:
            break
        frame = frame.with_columns(
            pl.col(name).name.prefix_fields(f"{name}{separator}") for name in structs
        ).unnest(*structs)
    lists = [
        name
        for name, dtype in frame.collect_schema().items()
        if isinstance(dtype, pl.List | pl.Array)
    ]
    return frame.with_columns(
        pl.col(name).map_batches(_json_texts, return_dtype=pl.String) for name in lists
    )


def _json_texts(series: pl.Series) -> pl.Series:
    """Each value of a list column as its JSON text (null stays null)."""
    wrapped = series.to_frame("v").select(pl.struct("v").struct.json_encode().alias("v"))["v"]
    # {"v":[…]} → […]: the struct wrapper is there only because json_encode needs a struct
    return wrapped.str.slice(5, wrapped.str.len_chars() - 6).alias(series.name)


def write_frame(frame: pl.DataFrame | pl.LazyFrame, path: str | Path) -> Path:
    """Write a frame by its file's suffix, keeping every column.

    ``.parquet`` keeps the types as they are. ``.csv`` is :func:`flatten`-ed, with instants
    as ISO 8601 text with their offset. ``.json`` is one array of objects and ``.ndjson``
    one object per line, nested values kept, instants as ISO 8601 text.

    Raises
    ------
    ValueError
        An unknown suffix.
    OSError
        The file cannot be written.
    """
    out = Path(path)
    if out.suffix not in FORMATS:
        raise ValueError(
            f"unknown output format {out.suffix or out.name!r}: use {', '.join(FORMATS)}"
        )
    data = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
    # written through a file object: Polars refuses a path that is not UTF-8 (a name with
    # other bytes, which Python holds as lone surrogates)
    with open(out, "wb") as fh:
        _write(data, out.suffix, fh)
    return out


def _write(data: pl.DataFrame, suffix: str, fh: Any) -> None:
    if suffix == ".parquet":
        data.write_parquet(fh)
        return
    # format_time: dt.strftime panics on instants beyond the years ±262142 (Date holds more)
    text_times = data.with_columns(
        format_time(pl.col(c), _TIME_FORMAT) for c in data.select(cs.datetime()).columns
    )
    if suffix == ".csv":
        flat = flatten(text_times)
        assert isinstance(flat, pl.DataFrame)
        flat.with_columns(cs.duration().dt.total_microseconds() / 1e6).write_csv(fh)
    elif suffix == ".json":
        text_times.write_json(fh)
    else:
        text_times.write_ndjson(fh)
