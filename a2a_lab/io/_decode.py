"""Decode NDJSON text into the event frame, exactly and fast.

Design (measured in ``benchmarks/bench_load.py``):

1. Lines are split on ``\\n`` only and JS-trimmed (rules §10); blank lines are counted.
2. The FAST path hands every line that looks like a JSON object to Polars' JSON decoder with
   the dtype derived from the pydantic models, in chunks. Polars' decoder is not strict in
   the ways the rules need (it turns numbers and booleans into strings, booleans into
   numbers, keeps the FIRST of duplicate keys), so lines whose decoded values could be such
   a coercion, or whose key count does not match what was decoded, are ROUTED to the exact
   path; so is every line of a chunk Polars refuses, narrowed down by bisection.
3. The EXACT path parses with the standard library (strict JSON: NaN and Infinity are
   rejected, the last duplicate key wins, as ``JSON.parse`` does) and validates each field
   against the pydantic model; a field of the wrong type becomes null and is reported.

Every physical line thus ends up as exactly one event, reject or blank line.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import polars as pl
from pydantic import ValidationError

from a2a_lab._deep import deep_call
from a2a_lab.reference.jsstr import JS_WHITESPACE, js_trim
from a2a_lab.schema import FRAME_COLUMN_NAMES, LOG_FIELD_NAMES, CoordinationEvent, EventData, data_dtype, raw_event_dtype

#: Lines per Polars decode call; a refused chunk is bisected down to ``_MIN_CHUNK`` lines.
_CHUNK = 16_384
_MIN_CHUNK = 16
#: Characters of a rejected line kept in the report.
RAW_PREVIEW = 200

_NUMERIC_TEXT = r"^(?:-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false)$"
# Lines the fast path must not see: NaN/Infinity tokens and trailing commas (not JSON, but
# tolerated by Polars' decoder) and UTF-16 surrogate escapes (Polars mis-decodes a lone one).
_NOT_JSON_HINT = r"(?:NaN|Infinity|,\s*[}\]]|\\u[dD][89a-fA-F])"


@dataclass(frozen=True)
class _Fields:
    """Field names of the derived dtype, grouped by kind (for the coercion checks)."""

    top_strings: tuple[str, ...]
    top_numbers: tuple[str, ...]
    data_strings: tuple[str, ...]
    data_numbers: tuple[str, ...]
    data_lists: tuple[str, ...]
    data_bools: tuple[str, ...]
    all_keys: tuple[str, ...]


def _fields() -> _Fields:
    top = raw_event_dtype()
    data = data_dtype()
    tops = {f.name: f.dtype for f in top.fields if f.name != "data"}
    datas = {f.name: f.dtype for f in data.fields}
    return _Fields(
        top_strings=tuple(k for k, v in tops.items() if v == pl.String),
        top_numbers=tuple(k for k, v in tops.items() if v == pl.Float64),
        data_strings=tuple(k for k, v in datas.items() if v == pl.String),
        data_numbers=tuple(k for k, v in datas.items() if v == pl.Float64),
        data_lists=tuple(k for k, v in datas.items() if isinstance(v, pl.List)),
        data_bools=tuple(k for k, v in datas.items() if v == pl.Boolean),
        all_keys=tuple(sorted(set(tops) | set(datas) | {"data"})),
    )


_F = _fields()
_KEY_PATTERN = '"(?:' + "|".join(re.escape(k) for k in _F.all_keys) + r')"\s*:'


# ---------------------------------------------------------------------------------------
# exact path
# ---------------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_STRICT_JSON = json.JSONDecoder(parse_constant=_reject_constant)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def parse_line(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """Parse one trimmed line exactly as ``JSON.parse`` would; returns (object, reject reason).

    Examples
    --------
    >>> parse_line('{"type": "a2a.send"}')
    ({'type': 'a2a.send'}, None)
    >>> parse_line('[1, 2]')[1]
    'not an object: JSON array'
    >>> parse_line('{"type": NaN}')[1]
    'not JSON: NaN is not valid JSON'
    """
    try:
        obj = deep_call(_STRICT_JSON.decode, text, depth=len(text))
    except ValueError as exc:
        reason = exc.args[0] if exc.args else str(exc)
        if isinstance(exc, json.JSONDecodeError):
            reason = f"{exc.msg} at column {exc.colno}"
        return None, f"not JSON: {reason}"
    except RecursionError:  # deeper than the retry stack of deep_call (about a million levels)
        return None, "not JSON: nesting too deep"
    if not isinstance(obj, dict):
        return None, f"not an object: JSON {_json_type(obj)}"
    typ = obj.get("type", _MISSING)
    if typ is _MISSING:
        return None, "no type field"
    if not isinstance(typ, str):
        return None, f"type is not a string (JSON {_json_type(typ)})"
    if js_trim(typ) == "":
        return None, "type is blank"
    return obj, None


_MISSING = object()


def _clean_str(value: str) -> str:
    """Polars strings are UTF-8: a lone surrogate (legal in JSON escapes) becomes U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", value)


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(float(value))


def typed_row(obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Typed values of the declared fields of one parsed event, plus the wrong-typed fields.

    The pydantic models decide what a wrong type is; a wrong-typed field becomes null
    (rules §1: the field counts as absent), and a list keeps only its string items.
    """
    issues: list[str] = []
    top_values = {k: v for k, v in obj.items() if k in CoordinationEvent.model_fields and k != "data"}
    raw_data = obj.get("data", _MISSING)
    if raw_data is _MISSING:
        data_values: dict[str, Any] = {}
    elif isinstance(raw_data, dict):
        data_values = {k: v for k, v in raw_data.items() if k in EventData.model_fields}
    else:
        data_values = {}
        issues.append("data")
    row = _validated(CoordinationEvent, top_values, "", issues)
    row["data"] = _validated(EventData, data_values, "data.", issues) if isinstance(raw_data, dict) else None
    return row, issues


def _as_double(value: Any) -> Any:
    """An integer literal too large for a double is Infinity in JavaScript (not a number)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _MAX_DOUBLE:
        return math.inf if value > 0 else -math.inf
    return value


_MAX_DOUBLE = 1.7976931348623157e308


def _validated(model: type, values: dict[str, Any], prefix: str, issues: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {k: None for k in model.model_fields if k != "data"}  # type: ignore[attr-defined]
    if not values:
        return out
    values = {k: _as_double(v) for k, v in values.items()}
    bad: set[str] = set()
    try:
        model.model_validate(values)  # type: ignore[attr-defined]
    except ValidationError as exc:
        for err in exc.errors():
            if err["loc"]:
                bad.add(str(err["loc"][0]))
    for key, value in values.items():
        if value is None:
            continue
        if key not in bad:
            out[key] = _clean_str(value) if isinstance(value, str) else (
                float(value) if _finite_number(value) else
                [_clean_str(v) for v in value] if isinstance(value, list) else value
            )
            continue
        if isinstance(value, list) and key in _F.data_lists:
            # a list of mixed items keeps its strings (the rules only read string items)
            out[key] = [_clean_str(v) for v in value if isinstance(v, str)]
        issues.append(prefix + key)
    return out


# ---------------------------------------------------------------------------------------
# fast path
# ---------------------------------------------------------------------------------------


def _decode_chunks(lines: pl.Series) -> tuple[pl.Series, list[int]]:
    """Decode with Polars; returns the decoded struct series and positions Polars refused."""
    dtype = raw_event_dtype()
    parts: list[pl.Series] = []
    refused: list[int] = []

    def go(start: int, stop: int) -> None:
        chunk = lines.slice(start, stop - start)
        try:
            parts.append(chunk.str.json_decode(dtype))
            return
        except pl.exceptions.PolarsError:
            pass
        if stop - start <= _MIN_CHUNK:
            refused.extend(range(start, stop))
            parts.append(pl.Series(lines.name, [None] * (stop - start), dtype=dtype))
            return
        mid = (start + stop) // 2
        go(start, mid)
        go(mid, stop)

    for start in range(0, len(lines), _CHUNK):
        go(start, min(len(lines), start + _CHUNK))
    if not parts:
        return pl.Series(lines.name, [], dtype=dtype), refused
    return pl.concat(parts, rechunk=False), refused


def _suspect_exprs(decoded: str, text: str) -> list[pl.Expr]:
    """Rows whose fast decode may differ from the exact one: coerced values, key-count mismatch.

    Returned as separate boolean columns so that Polars evaluates them in parallel.
    """
    d = pl.col(decoded)
    dd = d.struct.field("data")
    strings = [d.struct.field(k) for k in _F.top_strings] + [dd.struct.field(k) for k in _F.data_strings]
    numeric_text = pl.any_horizontal([s.str.contains(_NUMERIC_TEXT) for s in strings]).fill_null(False)
    lists = [dd.struct.field(k) for k in _F.data_lists]
    list_suspect = pl.any_horizontal(
        [l.is_not_null() & ~l.list.eval(pl.element().str.contains(_NUMERIC_TEXT).not_()).list.all() for l in lists]
    ).fill_null(False) | pl.any_horizontal(
        [
            l.is_not_null() & ~pl.col(text).str.contains(r'"' + k + r'"\s*:\s*\[')
            for k, l in zip(_F.data_lists, lists, strict=True)
        ]
    ).fill_null(False)
    numbers = [d.struct.field(k) for k in _F.top_numbers] + [dd.struct.field(k) for k in _F.data_numbers]
    zero_one = pl.any_horizontal([n.is_in([0.0, 1.0]) for n in numbers]).fill_null(False)
    present = pl.sum_horizontal(
        [s.is_not_null().cast(pl.UInt32) for s in strings + numbers + lists]
        + [dd.struct.field(k).is_not_null().cast(pl.UInt32) for k in _F.data_bools]
        + [dd.is_not_null().cast(pl.UInt32)]
    )
    key_count = pl.col(text).str.count_matches(_KEY_PATTERN)
    bool_as_number = zero_one & pl.col(text).str.contains(
        '"(?:' + "|".join(_F.top_numbers + _F.data_numbers) + r')"\s*:\s*(?:true|false)'
    )
    return [
        numeric_text.alias("_s_text"),
        (list_suspect | bool_as_number).alias("_s_other"),
        (key_count != present).alias("_s_keys"),
    ]


# ---------------------------------------------------------------------------------------
# one text → events, rejects, issues
# ---------------------------------------------------------------------------------------


@dataclass
class DecodedText:
    """What one file's text decoded to."""

    events: pl.DataFrame  # columns: line, type … status, data, raw
    rejects: pl.DataFrame  # line, reason, raw
    issues: pl.DataFrame  # line, kind, field
    lines: int
    blank: int
    exact_lines: int = 0


def split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only; a final ``\\n`` does not start another line (rules §10)."""
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    return parts


def decode_text(text: str, *, exact: bool = False, timezone: str = "UTC", file: str | None = None) -> DecodedText:
    """Decode one file's text (already UTF-8 decoded) into events, rejects and issues.

    ``exact=True`` sends every line through the exact standard-library path (slow; the
    test-suite checks that both paths give the same frame).
    """
    return decode_lines(pl.Series("text", split_lines(text), dtype=pl.String), exact=exact, timezone=timezone, file=file)


def _keep(frame: pl.DataFrame, mask: pl.Series) -> pl.DataFrame:
    """``frame.filter(mask)`` without copying when every row is kept (the common case)."""
    return frame if mask.all() else frame.filter(mask)


def decode_lines(
    lines: pl.Series, *, exact: bool = False, file: str | None = None, timezone: str = "UTC"
) -> DecodedText:
    """Decode physical lines (a String series, line ``i`` at position ``i - 1``).

    Works through the lines in chunks of ``_CHUNK`` so that the temporaries of the fast
    path (decoded structs, coercion checks) never exist for the whole file at once. Each
    chunk also gets its ``event_ms`` / ``event_time`` (rules §2, ISO times read in
    ``timezone``) and, with ``file``, a ``file`` column: a column added to the whole frame
    afterwards would make Polars re-chunk (copy) every column to line the chunks up.
    """
    n = len(lines)
    fast_parts: list[pl.DataFrame] = []
    slow_parts: list[pl.DataFrame] = []
    blank = 0
    for offset in range(0, n, _CHUNK):
        chunk = lines.slice(offset, _CHUNK)
        # a line that starts with '{' and ends with '}' has nothing to trim: skipping the
        # trim then keeps `raw` a view of the lines read, not a copy
        if not (chunk.str.starts_with("{") & chunk.str.ends_with("}")).all():
            chunk = chunk.str.strip_chars(JS_WHITESPACE)
        frame = pl.DataFrame(
            {"line": pl.int_range(offset + 1, offset + len(chunk) + 1, dtype=pl.Int64, eager=True), "text": chunk}
        )
        fast, slow, n_blank = _fast_path(frame, exact)
        blank += n_blank
        fast_parts.append(_provenance(fast, file, timezone))
        slow_parts.extend(slow)
    fast_events = _concat_contiguous(fast_parts) if fast_parts else _decoded_empty()
    slow = (
        pl.concat(slow_parts, how="vertical").sort("line")
        if slow_parts
        else pl.DataFrame(schema={"line": pl.Int64, "text": pl.String})
    )
    slow_events, rejects, issues = _exact(slow)
    slow_events = _provenance(slow_events, file, timezone)
    if not fast_parts:
        fast_events = _provenance(fast_events, file, timezone)
    events = fast_events if slow_events.height == 0 else fast_events.merge_sorted(slow_events, key="line")
    return DecodedText(events=events, rejects=rejects, issues=issues, lines=n, blank=blank, exact_lines=slow.height)


def _concat_contiguous(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """Concatenate chunk frames into one contiguous frame, column by column.

    Polars copies a multi-chunk frame into contiguous buffers on its first eager
    operation, which doubles the memory of a large log at that moment. Building each
    column once (``data`` field by field) and dropping the chunks' copy of it right away
    keeps the peak at the frame's size plus one column.
    """
    if len(frames) == 1:
        return frames[0]
    schema = frames[0].schema
    data_fields = [fld.name for fld in schema["data"].fields]  # type: ignore[union-attr]
    # the data fields as their own columns (zero-copy), prefixed: some share a top-level name
    flat = [
        f.select(pl.exclude("data"), *[pl.col("data").struct.field(n).alias("data." + n) for n in data_fields])
        for f in frames
    ]
    del frames[:]
    built: dict[str, pl.Series] = {}
    for name in flat[0].columns:
        built[name] = pl.concat([f.drop_in_place(name) for f in flat], rechunk=True)
    data = pl.struct([built.pop("data." + n).alias(n) for n in data_fields], eager=True).alias("data")
    return pl.DataFrame([data if n == "data" else built[n] for n in schema.names()])


def _provenance(events: pl.DataFrame, file: str | None, timezone: str) -> pl.DataFrame:
    """Add ``file`` and the event time to one chunk, in the event frame's column order."""
    from a2a_lab.io._timestamps import with_event_time
    from a2a_lab.schema import polars_schema

    events = with_event_time(events.with_columns(pl.lit(file, dtype=pl.String).alias("file")), timezone)
    return events.select(list(polars_schema()))


def _decoded_empty() -> pl.DataFrame:
    return pl.DataFrame(schema=event_columns_schema())


def _fast_path(frame: pl.DataFrame, exact: bool) -> tuple[pl.DataFrame, list[pl.DataFrame], int]:
    """Decode one chunk: (events decoded by Polars, line/text rows for the exact path, blanks)."""
    not_blank = frame["text"].str.len_bytes() > 0
    n_blank = frame.height - int(not_blank.sum())
    frame = _keep(frame, not_blank)
    looks_ok = (
        frame["text"].str.starts_with("{")
        & frame["text"].str.ends_with("}")
        & ~frame["text"].str.contains(_NOT_JSON_HINT)
    )
    if exact:
        looks_ok = pl.repeat(False, frame.height, eager=True)
    fast = _keep(frame, looks_ok)
    slow = [frame.filter(~looks_ok)] if fast is not frame else []
    if fast.height == 0:
        return _decoded_empty(), slow, n_blank
    decoded, refused = _decode_chunks(fast["text"])
    fast = fast.with_columns(decoded.alias("_ev"))
    if refused:
        refused_mask = pl.int_range(0, fast.height, eager=True).is_in(refused)
        slow.append(fast.filter(refused_mask).select("line", "text"))
        fast = fast.filter(~refused_mask)
    typ = pl.col("_ev").struct.field("type")
    ok = fast.select(
        ~pl.any_horizontal(_suspect_exprs("_ev", "text"))
        & typ.is_not_null()
        & (typ.str.strip_chars(JS_WHITESPACE).str.len_bytes() > 0)
    ).to_series()
    if not ok.all():
        slow.append(fast.filter(~ok).select("line", "text"))
        fast = fast.filter(ok)
    events = fast.select(pl.col("line"), pl.col("_ev").struct.unnest(), pl.col("text").alias("raw"))
    return events.rename(FRAME_COLUMN_NAMES), slow, n_blank


def _exact(frame: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The exact (standard-library) path for the lines routed to it."""
    rows: list[dict[str, Any]] = []
    rejects: list[dict[str, Any]] = []
    issues: list[dict[str, Any]] = []
    for line, text in frame.select("line", "text").iter_rows():
        obj, reason = parse_line(text)
        if obj is None:
            rejects.append({"line": line, "reason": reason, "raw": text[:RAW_PREVIEW]})
            continue
        row, bad = typed_row(obj)
        row["line"] = line
        row["raw"] = text
        rows.append(row)
        issues.extend({"line": line, "kind": "wrong_type", "field": f} for f in bad)
    return rows_to_events(rows), _rejects_frame(rejects), issues_frame(issues)


def event_columns_schema() -> pl.Schema:
    """Schema of decoded events before provenance and time columns are added."""
    top = raw_event_dtype()
    cols: dict[str, pl.DataType] = {"line": pl.Int64()}
    cols.update({FRAME_COLUMN_NAMES.get(f.name, f.name): f.dtype for f in top.fields})
    cols["raw"] = pl.String()
    return pl.Schema(cols)


def rows_to_events(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Build decoded-event rows (typed dicts keyed by log field) into a frame of the derived schema."""
    log_names = {LOG_FIELD_NAMES.get(k, k): v for k, v in event_columns_schema().items()}
    return pl.DataFrame(rows, schema=log_names).rename(FRAME_COLUMN_NAMES)


def _rejects_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={"line": pl.Int64, "reason": pl.String, "raw": pl.String})


def issues_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """The load report's issue rows (line, kind, field)."""
    return pl.DataFrame(rows, schema={"line": pl.Int64, "kind": pl.String, "field": pl.String})
