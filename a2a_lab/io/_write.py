"""Write events as NDJSON: the original line where there is one, else canonical JSON.

Rows with their original line (``raw``) are written as that line. The others are written as
canonical JSON in the reference's field order, absent fields omitted, with two encoders
that give the same bytes:

- the fast one (:func:`_canonical_lines`): rows are grouped by their *shape* (which fields
  are present, and whether each number is written as an integer or as a float); within a
  group every row has the same members, so Polars' own ``struct.json_encode`` writes the
  whole group at once;
- the exact one (:func:`_canonical_line_expr`, the expression-per-field encoder), for the
  rows the fast one cannot write the same: non-finite numbers (left out and counted),
  integral numbers beyond int64, lists holding nulls, an empty ``data`` object, a row with
  no field at all, and the rows of rare shapes (a group costs a fixed overhead).

``tests/io/test_io_write.py`` property-tests the first against the second.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, NamedTuple, cast, overload

import polars as pl
from polars.datatypes import DataTypeClass

__all__ = ["WriteReport", "write_events"]

#: Rows rendered at a time: bounds the writer's temporaries (a file is written chunk by chunk).
WRITE_CHUNK_ROWS = 100_000
#: Rows of a shape below this count go to the exact encoder (a group costs a fixed overhead).
MIN_GROUP_ROWS = 16
#: Integral floats below this magnitude are written through Int64 (exactly their digits).
_INT64_BOUND = 2.0**63
#: Shape states of a field: absent, an integer (or any non-float value), a float, or one the
#: fast encoder cannot write (the row goes to the exact encoder).
_ABSENT, _PLAIN, _FLOAT, _ODD = 0, 1, 2, 3
_STATE_BITS = 2
_PER_WORD = 64 // _STATE_BITS
_STATE_MASK = (1 << _STATE_BITS) - 1


@dataclass
class WriteReport:
    """What :func:`write_events` wrote.

    Attributes
    ----------
    lines
        Lines written (one per event).
    original
        Lines written from the event's original line (``raw``): byte for byte as read,
        except that a line read with invalid UTF-8 is written as decoded (U+FFFD).
    canonical
        Lines written as canonical JSON from the typed columns (no ``raw``): reference field
        order, absent fields omitted, and only the declared fields (unknown ones are not in
        the frame).
    dropped_numbers
        Non-finite numbers left out of canonical lines (JSON has no Infinity or NaN).
    path
        The file written, or None when the text was returned.
    """

    lines: int
    original: int
    canonical: int
    dropped_numbers: int = 0
    path: str | None = None

    @property
    def exact(self) -> bool:
        """Every line came from its original line."""
        return self.canonical == 0


@overload
def write_events(events: pl.DataFrame | Iterable[pl.DataFrame], path: None = None) -> str: ...
@overload
def write_events(
    events: pl.DataFrame | Iterable[pl.DataFrame], path: str | Path
) -> WriteReport: ...
def write_events(
    events: pl.DataFrame | Iterable[pl.DataFrame], path: str | Path | None = None
) -> str | WriteReport:
    """Write events as NDJSON, one line per row, in the frame's order.

    ``events`` is an event frame, or an iterable of them written one after the other (e.g.
    :meth:`a2a_lab.sim.SimResult.event_chunks`, which renders a simulated log a chunk at a
    time: the whole log is never in memory). A file is written in chunks of
    :data:`WRITE_CHUNK_ROWS` rows.

    A row with its original line (``raw``: loaded with ``raw=True``, or read from a store)
    is written as that line, byte for byte (a CR before the newline included). Other rows
    (made in memory, e.g. by the simulator, or loaded without ``raw``) are written as
    canonical JSON in the reference field order ``type, agentId, ts, …, data``, absent
    fields omitted; the report says how many. Every line is valid JSON. All of it is
    Polars expressions: no per-row Python.

    Returns
    -------
    str or WriteReport
        The text when ``path`` is None, else the report of what was written.

    Examples
    --------
    >>> from a2a_lab.io import from_records
    >>> ev = from_records([{"type": "a2a.send", "ts": 5, "data": {"fromAgent": "ruda"}}]).drop("raw")
    >>> write_events(ev)
    '{"type":"a2a.send","ts":5,"data":{"fromAgent":"ruda"}}\\n'
    """
    frames = [events] if isinstance(events, pl.DataFrame) else events
    if path is None:
        return "".join(_csv(_lines(chunk)[0]) for frame in frames for chunk in _chunks(frame))
    target = Path(path)
    n_lines = n_original = n_dropped = 0
    with target.open("wb") as out:
        for frame in frames:
            for chunk in _chunks(frame):
                lines, dropped = _lines(chunk)
                n_dropped += dropped
                _csv(lines, out)
            n_lines += frame.height
            n_original += frame.height - frame["raw"].null_count() if "raw" in frame.columns else 0
    return WriteReport(n_lines, n_original, n_lines - n_original, n_dropped, str(target))


def _chunks(events: pl.DataFrame) -> list[pl.DataFrame]:
    """The frame in slices of :data:`WRITE_CHUNK_ROWS` rows (zero-copy)."""
    return [events.slice(k, WRITE_CHUNK_ROWS) for k in range(0, events.height, WRITE_CHUNK_ROWS)]


@overload
def _csv(lines: pl.Series, out: None = None) -> str: ...
@overload
def _csv(lines: pl.Series, out: IO[bytes]) -> None: ...
def _csv(lines: pl.Series, out: IO[bytes] | None = None) -> str | None:
    """The lines as text, each LF-terminated (quote_style "never": written as they are)."""
    return pl.DataFrame([lines]).write_csv(
        out, include_header=False, quote_style="never", line_terminator="\n"
    )


def _lines(events: pl.DataFrame) -> tuple[pl.Series, int]:
    """The line of every row (original, else canonical), and the non-finite numbers dropped."""
    has_raw = "raw" in events.columns
    if has_raw and events["raw"].null_count() == 0:
        return events.get_column("raw"), 0
    todo = events.drop("raw", strict=False)
    if not has_raw:
        return _canonical_lines(todo)
    idx = events.select(pl.arg_where(pl.col("raw").is_null())).to_series()
    canonical, dropped = _canonical_lines(todo[idx])
    return events.get_column("raw").scatter(idx, canonical), dropped


def _json_value(expr: pl.Expr, dtype: pl.DataType | DataTypeClass) -> pl.Expr:
    """JSON text of one column's values (null where the value is absent or not finite)."""
    if dtype.is_float():
        integral = (expr == expr.floor()) & (expr.abs() < 1e21)
        return (
            pl.when(~expr.is_finite())
            .then(None)
            .when(integral)
            # Int128: an integral float beyond int64 (up to 1e21) keeps every digit
            .then(expr.cast(pl.Int128, strict=False).cast(pl.String))
            .otherwise(expr.cast(pl.String))
        )
    if dtype.is_integer():
        return expr.cast(pl.String)
    if dtype == pl.Boolean:
        return pl.when(expr).then(pl.lit("true")).when(~expr).then(pl.lit("false"))
    if isinstance(dtype, pl.List):
        items = expr.list.eval(_json_string(pl.element())).list.join(",")
        return pl.lit("[") + items + pl.lit("]")
    return _json_string(expr)


#: JSON string escapes (RFC 8259 §7): quote, backslash and the control characters.
_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}
_ESCAPES.update({chr(c): f"\\u{c:04x}" for c in range(0x20) if chr(c) not in _ESCAPES})


def _json_string(expr: pl.Expr) -> pl.Expr:
    """A JSON string literal of each value (Polars strings are UTF-8: no lone surrogates)."""
    return (
        pl.lit('"') + expr.str.replace_many(list(_ESCAPES), list(_ESCAPES.values())) + pl.lit('"')
    )


def _members(exprs: list[tuple[str, pl.Expr]]) -> pl.Expr:
    """``{"k":v,…}`` of the non-null members, in the given order."""
    parts = [pl.lit(json.dumps(k) + ":") + v for k, v in exprs]
    if not parts:
        return pl.lit("{}")
    return pl.lit("{") + pl.concat_str(parts, separator=",", ignore_nulls=True) + pl.lit("}")


class _Top(NamedTuple):
    """A top-level member of a canonical line: JSON key, frame column, dtype, and for
    ``data`` its fields that hold a value in some row (the others would write nothing)."""

    key: str
    column: str
    dtype: pl.DataType
    fields: list[pl.Field]


def _layout(frame: pl.DataFrame) -> list[_Top]:
    """The members a canonical line may have, in the reference's order."""
    from a2a_lab.schema import FRAME_COLUMN_NAMES, REFERENCE_FIELD_ORDER, raw_event_dtype

    schema = frame.schema
    present_data = (
        {
            k
            for k, v in frame.select(pl.col("data").struct.unnest())
            .select(pl.all().is_not_null().any())
            .row(0, named=True)
            .items()
            if v
        }
        if "data" in schema
        else set()
    )
    # JSON keys are the log's field names; the frame holds them under snake_case columns
    top = [
        f.name for f in raw_event_dtype().fields if FRAME_COLUMN_NAMES.get(f.name, f.name) in schema
    ]
    order = [
        *(n for n in REFERENCE_FIELD_ORDER if n in top),
        *(n for n in top if n not in REFERENCE_FIELD_ORDER),
    ]
    out = []
    for name in order:
        col = FRAME_COLUMN_NAMES.get(name, name)
        dtype = schema[col]
        fields = (
            [f for f in cast(pl.Struct, dtype).fields if f.name in present_data]
            if name == "data"
            else []
        )
        out.append(_Top(name, col, dtype, fields))
    return out


def _canonical_line_expr(frame: pl.DataFrame) -> tuple[pl.Expr, pl.Expr | None]:
    """The canonical JSON line of a row from its typed columns, and a count of dropped numbers.

    The exact encoder: one expression per field, whatever the values. Fields that are null
    in every row are left out of the expression (they would write nothing), which spares
    most of the 63 ``data`` fields on a typical log.
    """
    members: list[tuple[str, pl.Expr]] = []
    dropped: list[pl.Expr] = []
    for top in _layout(frame):
        if top.key == "data":
            fields = [
                (f.name, _json_value(pl.col("data").struct.field(f.name), f.dtype))
                for f in top.fields
            ]
            members.append((top.key, pl.when(pl.col("data").is_not_null()).then(_members(fields))))
            dropped += [
                (~pl.col("data").struct.field(f.name).is_finite()).fill_null(False).sum()
                for f in top.fields
                if f.dtype.is_float()
            ]
        else:
            members.append((top.key, _json_value(pl.col(top.column), top.dtype)))
            if top.dtype.is_float():
                dropped.append((~pl.col(top.column).is_finite()).fill_null(False).sum())
    return _members(members), (pl.sum_horizontal(dropped) if dropped else None)


def _exact_lines(frame: pl.DataFrame) -> tuple[pl.Series, int]:
    """The canonical lines of ``frame`` by the exact encoder, and the numbers it dropped."""
    line, dropped = _canonical_line_expr(frame)
    written = frame.select(
        line.alias("line"), *([dropped.alias("_dropped")] if dropped is not None else [])
    )
    n_dropped = int(written["_dropped"][0]) if dropped is not None and written.height else 0
    return written.get_column("line"), n_dropped


class _Leaf(NamedTuple):
    """One value of a canonical line: its JSON key, the column of the flat frame, its dtype."""

    key: str
    flat: str
    dtype: pl.DataType | DataTypeClass


def _state(value: pl.Expr, dtype: pl.DataType | DataTypeClass) -> pl.Expr:
    """The shape state of a value (:data:`_ABSENT` … :data:`_ODD`), as UInt64."""
    if dtype.is_float():
        integral = (value == value.floor()) & (value.abs() < _INT64_BOUND)
        state = (
            pl.when(value.is_null())
            .then(_ABSENT)
            .when(~value.is_finite())
            .then(_ODD)
            .when(integral)
            .then(_PLAIN)
            .when(value.abs() < _INT64_BOUND)
            .then(_FLOAT)
            .otherwise(_ODD)  # integral beyond int64: its digits come from the exact encoder
        )
    elif dtype.is_integer() or dtype in (pl.String, pl.Boolean):
        state = pl.when(value.is_null()).then(_ABSENT).otherwise(_PLAIN)
    elif dtype == pl.List(pl.String):
        # a null item: the exact encoder leaves it out, JSON encoding would write null
        has_null = value.list.eval(pl.element().is_null().any()).list.first()
        state = pl.when(value.is_null()).then(_ABSENT).when(has_null).then(_ODD).otherwise(_PLAIN)
    else:
        state = pl.when(value.is_null()).then(_ABSENT).otherwise(_ODD)
    return state.cast(pl.UInt64)


def _canonical_lines(frame: pl.DataFrame) -> tuple[pl.Series, int]:
    """The canonical lines of ``frame``, written group by group of one shape.

    Same bytes as :func:`_exact_lines` (which writes the rows this cannot), much faster:
    within a shape every row has the same members, so one ``struct.json_encode`` writes
    the group (Polars' JSON strings, integers, booleans, lists and non-integral floats are
    written exactly as the exact encoder writes them; integral floats go through Int64).
    """
    if frame.height == 0:
        return pl.Series("line", [], dtype=pl.String), 0
    layout = _layout(frame)
    leaves: list[_Leaf] = []
    flat: list[pl.Expr] = []
    data_is_null = pl.lit(False)
    for top in layout:
        if top.key == "data":
            data_is_null = pl.col("data").is_null()
            for f in top.fields:
                leaves.append(_Leaf(f.name, f"d:{f.name}", f.dtype))
                flat.append(pl.col("data").struct.field(f.name).alias(f"d:{f.name}"))
        else:
            leaves.append(_Leaf(top.key, top.key, top.dtype))
            flat.append(pl.col(top.column).alias(top.key))
    data_leaves = [k for k, leaf in enumerate(leaves) if leaf.flat.startswith("d:")]
    # one chunk: the groups are gathered from it, and a gather across chunks (a frame read
    # from Parquet has a chunk per row group) costs several times more than within one
    values = frame.select(*flat, data_is_null.alias("_data_null")).rechunk()
    states = []
    for k, leaf in enumerate(leaves):
        state = _state(pl.col(leaf.flat), leaf.dtype)
        if k in data_leaves:
            state = pl.when(pl.col("_data_null")).then(pl.lit(_ABSENT, pl.UInt64)).otherwise(state)
        states.append(state)
    has_data = any(top.key == "data" for top in layout)
    states.append(
        pl.when(pl.col("_data_null") | (not has_data))
        .then(pl.lit(_ABSENT, pl.UInt64))
        .otherwise(pl.lit(_PLAIN, pl.UInt64))
    )
    state_cols = [*(f"_s{k}" for k in range(len(leaves))), "_sdata"]
    # the shape of a row: its states packed into words of 64 bits (2 bits a field)
    words = [
        pl.sum_horizontal(
            state * pl.lit(1 << (_STATE_BITS * j), pl.UInt64)
            for j, state in enumerate(states[w : w + _PER_WORD])
        ).alias(f"_w{w}")
        for w in range(0, len(states), _PER_WORD)
    ]
    word_cols = [f"_w{w}" for w in range(0, len(states), _PER_WORD)]
    groups = (
        values.select(*words)
        .with_row_index("_i")
        .group_by(word_cols)
        .agg(pl.col("_i"), pl.len().alias("_n"))
    )
    done_idx: list[pl.Series] = []
    done_lines: list[pl.Series] = []
    odd: list[pl.Series] = []
    for g, (n, *packed) in enumerate(groups.select("_n", *word_cols).iter_rows()):
        shape = {
            c: (packed[k // _PER_WORD] >> (_STATE_BITS * (k % _PER_WORD))) & _STATE_MASK
            for k, c in enumerate(state_cols)
        }
        idx = groups.get_column("_i")[g]
        encode = _shape_encoder(leaves, data_leaves, shape, layout)
        if encode is None or n < MIN_GROUP_ROWS:
            odd.append(idx)
            continue
        done_idx.append(idx)
        # gather only the columns this shape writes
        needed = values.select(list(dict.fromkeys(encode.meta.root_names())))
        done_lines.append(needed[idx].select(encode.struct.json_encode()).to_series())
    n_dropped = 0
    if odd:
        odd_idx = pl.concat(odd)
        lines, n_dropped = _exact_lines(frame[odd_idx])
        done_idx.append(odd_idx)
        done_lines.append(lines)
    out = pl.DataFrame({"_i": pl.concat(done_idx), "line": pl.concat(done_lines)}).sort("_i")
    return out.get_column("line"), n_dropped


def _shape_encoder(
    leaves: list[_Leaf], data_leaves: list[int], shape: dict[str, int], layout: list[_Top]
) -> pl.Expr | None:
    """The struct whose JSON is the canonical line of a row of this shape (None: the exact
    encoder must write it)."""
    if _ODD in shape.values():
        return None

    def value(k: int) -> pl.Expr:
        leaf = leaves[k]
        v = pl.col(leaf.flat)
        if leaf.dtype.is_float() and shape[f"_s{k}"] == _PLAIN:
            v = v.cast(pl.Int64)
        return v.alias(leaf.key)

    members: list[pl.Expr] = []
    position = {leaf.flat: k for k, leaf in enumerate(leaves)}
    for top in layout:
        if top.key == "data":
            inner = [value(k) for k in data_leaves if shape[f"_s{k}"] != _ABSENT]
            if shape["_sdata"] == _ABSENT:
                continue
            if not inner:
                return None  # "data":{} (Polars has no empty struct)
            members.append(pl.struct(inner).alias("data"))
        elif shape[f"_s{position[top.key]}"] != _ABSENT:
            members.append(value(position[top.key]))
    return pl.struct(members) if members else None
