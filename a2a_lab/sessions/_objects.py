"""The reference's enriched event objects (rules §6, last paragraph), for the JSON output only."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import polars as pl

from a2a_lab._deep import nested_json
from a2a_lab.reference.jsstr import js_trim
from a2a_lab.schema import LOG_FIELD_NAMES
from a2a_lab.sessions._js import _as_string

#: The enrichment ``enrichCoordinationEvent`` writes at the top level: its JSON key and the
#: enriched frame's column.
_ENRICHMENT_TOP: dict[str, str] = {
    "eventRole": "event_role",
    "fromSessionType": "from_session_type",
    "toSessionType": "to_session_type",
    "collabCategory": "collab_category",
    "collabSubTags": "collab_sub_tags",
    "categoryConfidence": "category_confidence",
    "categorySource": "category_source",
}

# ---------------------------------------------------------------------------------------
# The enriched event objects (rules §6, last paragraph), for the output only
# ---------------------------------------------------------------------------------------
_MAX_SAFE_INTEGER = 2**53


def _js_int(text: str) -> int | float | None:
    """A JSON integer as JavaScript holds it: a double beyond 2**53; too large, Infinity (null)."""
    try:
        value = int(text)
    except ValueError:  # more than 4,300 digits: JSON.parse reads it as a double
        return _js_float(text)
    if abs(value) <= _MAX_SAFE_INTEGER:
        return value
    try:
        return float(value)
    except OverflowError:
        return None


def _js_float(text: str) -> float | None:
    """A JSON fraction as JavaScript holds it; an overflow (Infinity) serialises as null."""
    value = float(text)
    return value if math.isfinite(value) else None


def _json_number(value: float | int | None) -> float | int | None:
    """A number as ``JSON.stringify`` writes it: integral values without a fraction."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= _MAX_SAFE_INTEGER:
        return int(value)
    return value


#: A key made only of digits (some perhaps ``\u003X`` escapes) in a JSON text: where none
#: matches, no object of the text has an array-index key. A string value cannot match (its
#: quotes are escaped), and a false match only costs the walk.
_INDEX_KEY = re.compile(r'"(?:[0-9]|\\u003[0-9])+"\s*:')


def _is_array_index(key: str) -> bool:
    return (
        key.isascii() and key.isdigit() and (key == "0" or key[0] != "0") and int(key) < 2**32 - 1
    )


def _js_key_order(value: Any) -> Any:
    """Order object keys as JavaScript does: array-index keys first, ascending."""
    if isinstance(value, list):
        return [_js_key_order(item) for item in value]
    if isinstance(value, dict):
        if any(_is_array_index(k) for k in value):
            index_keys = sorted((k for k in value if _is_array_index(k)), key=int)
            value = {**{k: value[k] for k in index_keys}, **value}
        return {k: _js_key_order(v) for k, v in value.items()}
    return value


def _record_from_columns(row: Mapping[str, Any]) -> dict[str, Any]:
    """An in-memory event (no ``raw`` JSON) as an object, absent fields omitted."""
    record: dict[str, Any] = {}
    for name in ("type", "agent_id", "ts", "timestamp_ms", "timestamp", "status"):
        if row.get(name) is not None:
            record[LOG_FIELD_NAMES.get(name, name)] = _json_number(row[name])
    data = row.get("data") or {}
    record["data"] = {k: _json_number(v) for k, v in data.items() if v is not None}
    return record


def _enriched_object(row: Mapping[str, Any]) -> dict[str, Any]:
    """``enrichCoordinationEvent``'s object: the original event, enrichment written in.

    The reference spreads the parsed event and assigns the enrichment, so existing keys keep
    their place and new ones are appended; ``collabIntent`` is dropped when it is not a
    usable string (JSON drops undefined).
    """
    raw = row["raw"]
    record: dict[str, Any]
    if raw is None:
        record = _record_from_columns(row)
    else:
        # values nested as deep as the reference's JSON.stringify writes stay as they are
        # (and dump with plain json.dumps); a deeper one is kept as its JSON text
        record = nested_json(js_trim(raw), parse_int=_js_int, parse_float=_js_float)
    data = record.get("data")
    data = dict(data) if isinstance(data, dict) else {}
    enrichment = {key: row[column] for key, column in _ENRICHMENT_TOP.items()}
    enrichment["categoryConfidence"] = _json_number(enrichment["categoryConfidence"])
    for name in (
        "eventRole",
        "fromSessionType",
        "toSessionType",
        "collabCategory",
        "collabSubTags",
    ):
        data[name] = enrichment[name]
    intent = _as_string(data.get("collabIntent"))
    data["collabIntent"] = intent
    data["categoryConfidence"] = enrichment["categoryConfidence"]
    data["categorySource"] = enrichment["categorySource"]
    data["categoryVersion"] = row["category_version"]
    if intent is None:
        del data["collabIntent"]
    record["type"] = js_trim(record["type"]) if isinstance(record.get("type"), str) else row["type"]
    record["data"] = data
    record.update(enrichment)
    if raw is not None and _INDEX_KEY.search(raw) is None:
        # no key of the line is an array index: JavaScript's order is the insertion order,
        # and the walk (most of the time of a large page) would change nothing
        return record
    ordered: dict[str, Any] = _js_key_order(record)
    return ordered


_OBJECT_COLUMNS = (
    "raw",
    "category_version",
    *_ENRICHMENT_TOP.values(),
    "type",
    "agent_id",
    "ts",
    "timestamp_ms",
    "timestamp",
    "status",
    "data",
)


def event_objects(enriched: pl.DataFrame) -> list[dict[str, Any]]:
    """The reference's enriched event objects of these rows, in row order.

    Each object is the original event (from ``raw``; rows made in memory are written from
    their typed columns) with the enrichment written in as ``enrichCoordinationEvent``
    does: ``eventRole, fromSessionType, toSessionType, collabCategory, collabSubTags,
    categoryConfidence, categorySource`` at the top level and inside ``data``, plus
    ``categoryVersion`` and the trimmed ``collabIntent`` inside ``data`` (rules §6). Existing
    keys keep their place, new ones are appended, and keys are ordered as JavaScript orders
    an object's keys (array-index keys first); numbers are JavaScript doubles.

    Parameters
    ----------
    enriched
        Rows of an enriched frame (:func:`a2a_lab.enrich`).

    Returns
    -------
    list of dict
        One JSON-able object per row.

    Examples
    --------
    >>> from a2a_lab.enrich import enrich
    >>> from a2a_lab.io import from_records
    >>> (obj,) = event_objects(enrich(from_records([{"type": "task.started", "ts": 5, "data": {}}])))
    >>> obj["eventRole"], obj["data"]["categoryVersion"], list(obj)[:3]
    ('orchestration.task', 'v1', ['type', 'ts', 'data'])
    """
    if "raw" not in enriched.columns:  # loaded without raw: read the original lines again
        from a2a_lab.io import original_lines

        enriched = enriched.with_columns(original_lines(enriched.select("file", "line")))
    return [_enriched_object(row) for row in enriched.select(_OBJECT_COLUMNS).iter_rows(named=True)]


def _event_objects(enriched: pl.LazyFrame, keys: pl.DataFrame) -> list[dict[str, Any]]:
    """The enriched event objects of the rows ``keys`` (file, line), in that order."""
    if keys.height == 0:
        return []
    return event_objects(_event_rows(enriched, keys))


def _event_rows(enriched: pl.LazyFrame, keys: pl.DataFrame) -> pl.DataFrame:
    """The rows ``keys`` (file, line) of ``enriched``, in that order, with their ``raw`` line.

    One pass over the source and, for rows without ``raw``, one over each log file: a
    caller making the objects a batch at a time does not read the source once per batch.
    """
    # the rows are picked out first (a filter streams; the join would build its table from
    # every event of a lazy source), then joined in ``keys`` order
    wanted = enriched.filter(
        pl.col("line").is_in(keys.get_column("line").unique().implode())
        & pl.col("file").is_in(keys.get_column("file").unique().implode())
    )
    rows = (
        keys.lazy()
        .with_row_index("_order")
        .join(
            wanted.select(
                "file", "line", *(c for c in _OBJECT_COLUMNS if c in enriched.collect_schema())
            ),
            on=["file", "line"],
            how="left",
        )
        .sort("_order")
        .collect()
    )
    if "raw" not in rows.columns:  # loaded without raw: read the original lines again
        from a2a_lab.io import original_lines

        rows = rows.with_columns(original_lines(rows.select("file", "line")))
    return rows.drop("_order")
