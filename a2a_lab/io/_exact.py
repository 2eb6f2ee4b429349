"""The exact path of the decoder: strict JSON parsing and typing, one line at a time.

Lines the fast path (:mod:`a2a_lab.io._decode`) must not decide come here. They are parsed
with the standard library exactly as ``JSON.parse`` would (NaN and Infinity rejected, the
last duplicate key wins, nesting of any depth) and each declared field is validated
against the pydantic model: a field of the wrong JSON type becomes null and is reported.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

import polars as pl
from polars.datatypes import DataTypeClass
from pydantic import ValidationError

from a2a_lab._deep import deep_call
from a2a_lab.reference.jsstr import js_trim
from a2a_lab.reference.strict_json import STRICT_DECODER
from a2a_lab.schema import (
    FRAME_COLUMN_NAMES,
    LOG_FIELD_NAMES,
    CoordinationEvent,
    EventData,
    data_dtype,
    raw_event_dtype,
)

#: Characters of a rejected line kept in the report.
RAW_PREVIEW = 200


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


# ---------------------------------------------------------------------------------------
# exact path
# ---------------------------------------------------------------------------------------


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
        # deeper than the standard library's recursion limit: JSON.parse has no such limit,
        # so the same C parser runs again with room for the line's depth (fast), and only
        # beyond that the explicit-stack parser (slow, no depth limit)
        obj = deep_call(STRICT_DECODER.decode, text, depth=len(text))
    except ValueError as exc:
        reason = exc.args[0] if exc.args else str(exc)
        if isinstance(exc, json.JSONDecodeError):
            reason = f"{exc.msg} at column {exc.colno}"
        return None, f"not JSON: {reason}"
    except RecursionError:
        return _parse_deep(text)
    return _check_object(obj)


_MISSING = object()

# JSON tokens, for lines nested too deeply for the recursive standard-library parser
_TOKEN = re.compile(
    r'[ \t\n\r]*(?:(?P<s>"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*")'
    r"|(?P<n>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<l>true|false|null)|(?P<p>[\[\]{},:]))"
)
_LITERALS = {"true": True, "false": False, "null": None}


def _parse_deep(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """:func:`parse_line` for any nesting depth: an explicit stack instead of recursion.

    Scalars are decoded by the standard library (same strings and numbers as the fast
    path); the last of duplicate keys wins, as ``JSON.parse`` has it.
    """
    stack: list[list[Any] | dict[str, Any]] = []
    keys: list[str | None] = []
    pos, n = 0, len(text)
    root: Any = _MISSING
    value: Any
    expect = "value"  # value | key | colon | comma
    while True:
        m = _TOKEN.match(text, pos)
        if m is None or (m.end() == pos and pos < n):
            if root is not _MISSING and not stack and text[pos:].strip(" \t\n\r") == "":
                break
            return None, f"not JSON: unexpected character at column {_next_col(text, pos)}"
        pos = m.end()
        p = m.group("p")
        if expect == "key":
            if m.group("s") is not None:
                keys[-1] = json.loads(m.group("s"))
                expect = "colon"
                continue
            if p == "}" and not stack[-1]:
                value = stack.pop()
                keys.pop()
            else:
                return (
                    None,
                    f"not JSON: expecting property name at column {_next_col(text, m.start())}",
                )
        elif expect == "colon":
            if p != ":":
                return None, f"not JSON: expecting ':' at column {_next_col(text, m.start())}"
            expect = "value"
            continue
        elif expect == "comma":
            if p == "," and stack:
                expect = "key" if isinstance(stack[-1], dict) else "value"
                continue
            if stack and p == ("}" if isinstance(stack[-1], dict) else "]"):
                value = stack.pop()
                keys.pop()
            else:
                return None, f"not JSON: expecting ',' at column {_next_col(text, m.start())}"
        elif p in ("{", "["):
            stack.append({} if p == "{" else [])
            keys.append(None)
            expect = "key" if p == "{" else "value"
            continue
        elif p == "]" and stack and isinstance(stack[-1], list) and not stack[-1]:
            value = stack.pop()
            keys.pop()
        elif m.group("s") is not None or m.group("n") is not None:
            value = STRICT_DECODER.decode(m.group("s") or m.group("n"))
        elif m.group("l") is not None:
            value = _LITERALS[m.group("l")]
        else:
            return None, f"not JSON: expecting value at column {_next_col(text, m.start())}"
        if not stack:
            if root is not _MISSING:
                return None, f"not JSON: extra data at column {_next_col(text, m.start())}"
            root = value
        elif isinstance(stack[-1], dict):
            stack[-1][keys[-1]] = value  # type: ignore[index]
        else:
            stack[-1].append(value)
        expect = "comma"
        if not stack and text[pos:].strip(" \t\n\r") == "":
            break
    return _check_object(root)


def _next_col(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos + 1


def _check_object(obj: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The reject reason of a parsed JSON value that is not a usable event, or None."""
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


def _clean_str(value: str) -> str:
    """Polars strings are UTF-8: a lone surrogate (legal in JSON escapes) becomes U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", value)


def _finite_number(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


def typed_row(obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Typed values of the declared fields of one parsed event, plus the wrong-typed fields.

    The pydantic models decide what a wrong type is; a wrong-typed field becomes null
    (rules §1: the field counts as absent), and a list keeps only its string items.
    """
    issues: list[str] = []
    top_values = {
        k: v for k, v in obj.items() if k in CoordinationEvent.model_fields and k != "data"
    }
    raw_data = obj.get("data", _MISSING)
    if raw_data is _MISSING:
        data_values: dict[str, Any] = {}
    elif isinstance(raw_data, dict):
        data_values = {k: v for k, v in raw_data.items() if k in EventData.model_fields}
    else:
        data_values = {}
        issues.append("data")
    row = _validated(CoordinationEvent, top_values, "", issues)
    row["data"] = (
        _validated(EventData, data_values, "data.", issues) if isinstance(raw_data, dict) else None
    )
    return row, issues


def _as_double(value: Any) -> Any:
    """An integer literal too large for a double is Infinity in JavaScript (not a number)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _MAX_DOUBLE:
        return math.inf if value > 0 else -math.inf
    return value


_MAX_DOUBLE = 1.7976931348623157e308


def _validated(
    model: type, values: dict[str, Any], prefix: str, issues: list[str]
) -> dict[str, Any]:
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
            out[key] = (
                _clean_str(value)
                if isinstance(value, str)
                else (
                    float(value)
                    if _finite_number(value)
                    else [_clean_str(v) for v in value]
                    if isinstance(value, list)
                    else value
                )
            )
            continue
        if isinstance(value, list) and key in _F.data_lists:
            # a list of mixed items keeps its strings (the rules only read string items)
            out[key] = [_clean_str(v) for v in value if isinstance(v, str)]
        issues.append(prefix + key)
    return out


def _exact(frame: pl.DataFrame, raw: bool) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The exact (standard-library) path for the lines routed to it."""
    if frame.height == 0:  # the common case: nothing routed (spares building empty frames)
        return _no_events(raw), _rejects_frame([]), issues_frame([])
    rows: list[dict[str, Any]] = []
    rejects: list[dict[str, Any]] = []
    issues: list[dict[str, Any]] = []
    cols = ["line", "text", "raw"] if raw else ["line", "text"]
    for line, text, *original in frame.select(cols).iter_rows():
        obj, reason = parse_line(text)
        if obj is None:
            rejects.append({"line": line, "reason": reason, "raw": text[:RAW_PREVIEW]})
            continue
        row, bad = typed_row(obj)
        row["line"] = line
        if raw:
            row["raw"] = original[0]
        rows.append(row)
        issues.extend({"line": line, "kind": "wrong_type", "field": f} for f in bad)
    events = rows_to_events(rows)
    return (events if raw else events.drop("raw")), _rejects_frame(rejects), issues_frame(issues)


@cache
def _no_events(raw: bool) -> pl.DataFrame:
    events = rows_to_events([])
    return events if raw else events.drop("raw")


def event_columns_schema() -> pl.Schema:
    """Schema of decoded events before provenance and time columns are added."""
    top = raw_event_dtype()
    cols: dict[str, pl.DataType | DataTypeClass] = {"line": pl.Int64()}
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
