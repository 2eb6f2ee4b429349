"""A slow, obvious pure-Python transcription of the Task-Monitor work-session rules.

This is the test oracle for :mod:`a2a_lab.sessions`: rules §7-§8 of
``task-monitor-rules.md`` written out event by event, the way the reference's
``buildWorkSessionsFromEvents`` and its ``/api/work-sessions`` and ``/api/events``
handlers do it, over ENRICHED event objects (plain dicts, shaped as the reference's
``enrichCoordinationEvent`` returns them). It shares no code with the Polars
implementation and is deliberately unoptimised.

Events are dicts. The thread events of the results are the very same dict objects that
were passed in, so a caller can map them back to their source line by identity.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from typing import Any

ROLES = ("conversation.main", "delegation.subagent", "orchestration.task", "system.observability")
CATEGORIES = (
    "engineering_build",
    "infra_ops",
    "qa_validation",
    "planning_decision",
    "research_analysis",
    "docs_knowledge",
    "growth_marketing",
    "customer_community",
    "legal_compliance",
    "biz_strategy",
)
STATUSES = ("ACTIVE", "QUIET", "ARCHIVED")
ARCHIVE_WINDOW_MS = 24 * 60 * 60 * 1000
BUCKET_MS = 5 * 60 * 1000
TERMINAL_TASK_STATUSES = ("completed", "cancelled", "abandoned", "failed")
UNASSIGNED_SESSION_ID = "unassigned"
#: The enrichment keys the dashboard also copies to the top level of every event it serves.
TOP_LEVEL_ENRICHMENT = (
    "eventRole",
    "fromSessionType",
    "toSessionType",
    "collabCategory",
    "collabSubTags",
    "categoryConfidence",
    "categorySource",
)

# ECMAScript WhiteSpace + LineTerminator (rules §10)
JS_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)

# Own properties of Object.prototype: the reference looks overrides up with `map[wsId]` on
# a plain object, so these ids find an inherited member (truthy, without collabCategory).
OBJECT_PROTOTYPE_MEMBERS = frozenset(
    {
        "constructor",
        "__defineGetter__",
        "__defineSetter__",
        "hasOwnProperty",
        "__lookupGetter__",
        "__lookupSetter__",
        "isPrototypeOf",
        "propertyIsEnumerable",
        "toString",
        "valueOf",
        "__proto__",
        "toLocaleString",
    }
)


# ---------------------------------------------------------------------------
# JavaScript value helpers
# ---------------------------------------------------------------------------
def js_trim(text: str) -> str:
    start = 0
    end = len(text)
    while start < end and text[start] in JS_WHITESPACE:
        start += 1
    while end > start and text[end - 1] in JS_WHITESPACE:
        end -= 1
    return text[start:end]


def as_string(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    trimmed = js_trim(value)
    return trimmed if trimmed != "" else None


def as_number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def as_record(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_category(value: Any) -> str | None:
    candidate = as_string(value)
    return candidate if candidate in CATEGORIES else None


def role_from_value(value: Any) -> str | None:
    return value if isinstance(value, str) and value in ROLES else None


def utf16_key(text: str) -> list[int]:
    """The UTF-16 code units of a string: JavaScript's default sort order."""
    units: list[int] = []
    for char in text:
        code = ord(char)
        if code >= 0x10000:
            code -= 0x10000
            units.append(0xD800 + (code >> 10))
            units.append(0xDC00 + (code & 0x3FF))
        else:
            units.append(code)
    return units


def js_number_to_string(value: float) -> str:
    """``String(x)`` for an integral double (the bucket number of a thread key)."""
    if value == 0:
        return "0"
    if abs(value) < 1e21:
        return str(int(value))
    return repr(value)


_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def js_number(text: str | None) -> float:
    """JavaScript ``Number(text)`` (``Number(null)`` is 0)."""
    if text is None:
        return 0.0
    body = js_trim(text)
    if body == "":
        return 0.0
    if body in ("Infinity", "+Infinity"):
        return math.inf
    if body == "-Infinity":
        return -math.inf
    for prefix, base, digits in (
        ("0x", 16, "0123456789abcdefABCDEF"),
        ("0o", 8, "01234567"),
        ("0b", 2, "01"),
    ):
        if body[:2].lower() == prefix:
            rest = body[2:]
            if rest and all(c in digits for c in rest):
                return float(int(rest, base))
            return math.nan
    if _DECIMAL.fullmatch(body):
        return float(body)
    return math.nan


def to_integer_or_infinity(value: float) -> float:
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return value
    return math.trunc(value)


def js_slice(items: list[Any], start: float, end: float | None = None) -> list[Any]:
    """``Array.prototype.slice`` with JavaScript's index conversion."""
    length = len(items)

    def clamp(index: float) -> int:
        index = to_integer_or_infinity(index)
        if index < 0:
            return int(max(length + index, 0)) if index != -math.inf else 0
        return int(min(index, length))

    lo = clamp(start)
    hi = length if end is None else clamp(end)
    return items[lo:hi] if lo < hi else []


_ISO = re.compile(
    r"(?P<year>[+-]\d{6}|\d{4})(?:-(?P<month>\d{2})(?:-(?P<day>\d{2}))?)?"
    r"(?:[T ](?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:\.(?P<fraction>\d+))?)?"
    r"(?P<zone>Z|[+-]\d{2}:\d{2})?)?"
)


def parse_iso_ms(text: str) -> float | None:
    """``Date.parse`` of the ECMAScript date-time string format (no offset = UTC)."""
    match = _ISO.fullmatch(text)
    if not match:
        return None
    year = int(match["year"])
    if match["year"] == "-000000":
        return None
    month = int(match["month"] or 1)
    day = int(match["day"] or 1)
    hour = int(match["hour"] or 0)
    minute = int(match["minute"] or 0)
    second = int(match["second"] or 0)
    millis = int((match["fraction"] or "0")[:3].ljust(3, "0"))
    if not (1 <= month <= 12 and 1 <= day <= 31 and minute <= 59 and second <= 59):
        return None
    if hour > 24 or (hour == 24 and (minute or second or millis)):
        return None
    days_in_month = [31, 29 if _leap(year) else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    if day > days_in_month[month - 1]:
        return None
    offset_ms = 0
    zone = match["zone"]
    if zone and zone != "Z":
        zone_hours, zone_minutes = int(zone[1:3]), int(zone[4:6])
        if zone_hours > 23 or zone_minutes > 59:
            return None
        offset_ms = (zone_hours * 60 + zone_minutes) * 60_000 * (1 if zone[0] == "+" else -1)
    days = _days_from_civil(year, month, day)
    ms = (((days * 24 + hour) * 60 + minute) * 60 + second) * 1000 + millis - offset_ms
    if abs(ms) > 8.64e15:
        return None
    return float(ms)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _days_from_civil(year: int, month: int, day: int) -> int:
    # whole 400-year cycles (146097 days each) keep every year inside datetime's range
    cycles, year_in_cycle = divmod(year - 2000, 400)
    inner = datetime(2000 + year_in_cycle, month, day, tzinfo=UTC) - _EPOCH
    return cycles * 146097 + inner.days


def event_timestamp_ms(event: dict[str, Any]) -> float:
    """``coordinationEventTimestampMs`` (rules §2): 0 values fall through."""
    numeric = as_number(event.get("timestampMs")) or as_number(event.get("ts"))
    if numeric:
        return numeric
    iso = as_string(event.get("timestamp"))
    if iso is None:
        return 0.0
    parsed = parse_iso_ms(iso)
    return parsed if parsed else 0.0


# ---------------------------------------------------------------------------
# Reading a log as the reference does (rules §9-§10), for building test inputs
# ---------------------------------------------------------------------------
def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _double_int(text: str) -> int | float | None:
    value = int(text)
    if abs(value) <= 2**53:
        return value
    try:
        return float(value)
    except OverflowError:  # Infinity; JSON.stringify writes null
        return None


def _double_float(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None  # Infinity; JSON.stringify writes null


def js_json_parse(text: str) -> Any:
    """``JSON.parse``: strict JSON, numbers as doubles (an overflow becomes null here)."""
    return json.loads(
        text, parse_constant=_reject_constant, parse_int=_double_int, parse_float=_double_float
    )


def parse_log(text: str) -> list[tuple[int, dict[str, Any]]]:
    """``(line, record)`` for every line the reference turns into an event, in file order."""
    kept = []
    for number, line in enumerate(text.split("\n"), start=1):
        body = js_trim(line)
        if not body:
            continue
        try:
            record = js_json_parse(body)
        except ValueError:
            continue
        if isinstance(record, dict) and as_string(record.get("type")) is not None:
            kept.append((number, record))
    return kept


def ordered(value: Any) -> Any:
    """Objects as lists of (key, value) pairs, so that == also compares key order."""
    if isinstance(value, dict):
        return [(k, ordered(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [ordered(v) for v in value]
    return value


# ---------------------------------------------------------------------------
# The enriched event object (rules §6, last paragraph)
# ---------------------------------------------------------------------------
def _is_array_index(key: str) -> bool:
    return key == "0" or (
        key[:1] in "123456789" and key.isdigit() and key.isascii() and int(key) < 2**32 - 1
    )


def js_ordered(value: Any) -> Any:
    """Re-order every object's keys as a JavaScript object orders them."""
    if isinstance(value, list):
        return [js_ordered(item) for item in value]
    if isinstance(value, dict):
        index_keys = sorted((k for k in value if _is_array_index(k)), key=int)
        other_keys = [k for k in value if not _is_array_index(k)]
        return {k: js_ordered(value[k]) for k in index_keys + other_keys}
    return value


def enriched_event_object(record: dict[str, Any], enrichment: dict[str, Any]) -> dict[str, Any]:
    """What ``enrichCoordinationEvent`` returns for a parsed line and its enrichment.

    ``enrichment`` holds ``eventRole, fromSessionType, toSessionType, collabCategory,
    collabSubTags, categoryConfidence, categorySource``. Keys that JSON would drop
    (``undefined``) are left out.
    """
    data = as_record(record.get("data"))
    enriched_data = dict(data)
    for key in ("eventRole", "fromSessionType", "toSessionType", "collabCategory", "collabSubTags"):
        enriched_data[key] = enrichment[key]
    intent = as_string(data.get("collabIntent"))
    enriched_data["collabIntent"] = intent
    enriched_data["categoryConfidence"] = enrichment["categoryConfidence"]
    enriched_data["categorySource"] = enrichment["categorySource"]
    enriched_data["categoryVersion"] = as_string(data.get("categoryVersion")) or "v1"
    if intent is None:
        del enriched_data["collabIntent"]
    event = dict(record)
    event["type"] = as_string(record.get("type"))
    event["data"] = enriched_data
    for key in TOP_LEVEL_ENRICHMENT:
        event[key] = enrichment[key]
    return js_ordered(event)


# ---------------------------------------------------------------------------
# buildWorkSessionsFromEvents (rules §7)
# ---------------------------------------------------------------------------
def _agents(event: dict[str, Any]) -> tuple[str, str]:
    data = as_record(event.get("data"))
    from_agent = (
        as_string(data.get("fromAgent"))
        or as_string(data.get("senderAgentId"))
        or as_string(event.get("agentId"))
        or "unknown"
    )
    to_agent = as_string(data.get("toAgent")) or as_string(data.get("targetAgentId")) or "unknown"
    return from_agent, to_agent


def thread_key(event: dict[str, Any], event_ts: float) -> str:
    data = as_record(event.get("data"))
    conversation_id = as_string(data.get("conversationId"))
    if conversation_id:
        return f"conv:{conversation_id}"
    pair = "_".join(sorted(_agents(event), key=utf16_key))
    if pair != "unknown_unknown":
        return f"pair:{pair}"
    return f"event:{event['type']}:{js_number_to_string(float(math.floor(event_ts / BUCKET_MS)))}"


def is_terminal(event: dict[str, Any], *, lifecycle_terminal: bool = False) -> bool:
    event_type = event["type"]
    data = as_record(event.get("data"))
    if event_type == "a2a.complete":
        return True
    if event_type == "a2a.spawn_result" and as_string(data.get("status")) == "error":
        return True
    if event_type in ("continuation.complete", "continuation.completed"):
        return True
    if lifecycle_terminal and event_type in ("task.completed", "task.cancelled"):
        return True
    if event_type.startswith("task."):
        status = as_string(data.get("status")) or as_string(event.get("status"))
        if status in TERMINAL_TASK_STATUSES:
            return True
    return False


def _role_filter_set(values: Any) -> set[str] | None:
    if values is None:
        return None
    allowed = {v for v in values if role_from_value(v)}
    return allowed or None


def _type_filter_set(values: Any) -> set[str] | None:
    if values is None:
        return None
    allowed = {as_string(v) for v in values if as_string(v)}
    return allowed or None


def _sub_tags(event: dict[str, Any]) -> list[str]:
    data = as_record(event.get("data"))
    raw = event.get("collabSubTags")
    if not isinstance(raw, list):
        raw = data.get("collabSubTags")
    if not isinstance(raw, list):
        raw = []
    return [t for t in (as_string(v) for v in raw) if t][:5]


def build_work_sessions(
    events: list[dict[str, Any]],
    *,
    now_ms: float,
    role_filters: Any = None,
    type_filters: Any = None,
    category_overrides: dict[str, Any] | None = None,
    lifecycle_terminal: bool = False,
    unassigned: bool = False,
) -> list[dict[str, Any]]:
    """``buildWorkSessionsFromEvents``, plus the two documented non-default modes."""
    allowed_roles = _role_filter_set(role_filters)
    allowed_types = _type_filter_set(type_filters)
    overrides = category_overrides or {}

    # a stable sort by timestamp (Python's sort is stable, like V8's)
    ordered = sorted(events, key=event_timestamp_ms)

    sessions: dict[str | None, dict[str, Any]] = {}
    for event in ordered:
        if allowed_types is not None and event["type"] not in allowed_types:
            continue
        data = as_record(event.get("data"))
        role = role_from_value(event.get("eventRole")) or role_from_value(data.get("eventRole"))
        if allowed_roles is not None and (role is None or role not in allowed_roles):
            continue
        ws_id = as_string(data.get("workSessionId"))
        if ws_id is None and not unassigned:
            continue

        event_ts = event_timestamp_ms(event)
        category = as_category(event.get("collabCategory")) or as_category(
            data.get("collabCategory")
        )
        category = category or "engineering_build"
        sub_tags = _sub_tags(event)

        if ws_id not in sessions:
            sessions[ws_id] = {
                "workSessionId": ws_id,
                "startTime": event_ts,
                "lastTime": event_ts,
                "eventCount": 0,
                "collabCategory": category,
                "collabSubTags": list(sub_tags),
                "latestEvent": event,
                "roleCounts": {r: 0 for r in ROLES},
                "threads": {},
            }
        session = sessions[ws_id]
        session["startTime"] = min(session["startTime"], event_ts)
        session["lastTime"] = max(session["lastTime"], event_ts)
        session["eventCount"] += 1
        if event_timestamp_ms(session["latestEvent"]) <= event_ts:
            session["latestEvent"] = event
        if session["collabCategory"] == "engineering_build" and category != "engineering_build":
            session["collabCategory"] = category
        if not session["collabSubTags"] and sub_tags:
            session["collabSubTags"] = list(sub_tags)
        if role:
            session["roleCounts"][role] += 1

        key = thread_key(event, event_ts)
        if key not in session["threads"]:
            from_agent, to_agent = _agents(event)
            session["threads"][key] = {
                "id": key,
                "conversationId": as_string(data.get("conversationId")),
                "fromAgent": from_agent,
                "toAgent": to_agent,
                "startTime": event_ts,
                "lastTime": event_ts,
                "eventCount": 0,
                "collabCategory": category,
                "collabSubTags": list(sub_tags),
                "events": [],
            }
        thread = session["threads"][key]
        thread["startTime"] = min(thread["startTime"], event_ts)
        thread["lastTime"] = max(thread["lastTime"], event_ts)
        thread["eventCount"] += 1
        if not thread["conversationId"]:
            thread["conversationId"] = as_string(data.get("conversationId"))
        if thread["collabCategory"] == "engineering_build" and category != "engineering_build":
            thread["collabCategory"] = category
        if not thread["collabSubTags"] and sub_tags:
            thread["collabSubTags"] = list(sub_tags)
        thread["events"].append(event)

    summaries = []
    for session in sessions.values():
        ws_id = session["workSessionId"]
        if ws_id is None:
            override = None
        elif ws_id in overrides:
            override = overrides[ws_id]
        elif ws_id in OBJECT_PROTOTYPE_MEMBERS:
            override = {}  # an inherited member: truthy, no collabCategory
        else:
            override = None
        inactive = now_ms - session["lastTime"]
        if inactive > ARCHIVE_WINDOW_MS:
            status = "ARCHIVED"
        elif is_terminal(session["latestEvent"], lifecycle_terminal=lifecycle_terminal):
            status = "QUIET"
        else:
            status = "ACTIVE"
        threads = []
        for thread in session["threads"].values():
            thread = dict(thread)
            thread["events"] = sorted(thread["events"], key=event_timestamp_ms)
            threads.append(thread)
        threads = sorted(threads, key=lambda t: -t["lastTime"])
        summaries.append(
            {
                "id": f"ws:{ws_id}" if ws_id is not None else UNASSIGNED_SESSION_ID,
                "workSessionId": ws_id,
                "status": status,
                "startTime": session["startTime"],
                "lastTime": session["lastTime"],
                "durationMs": max(0, session["lastTime"] - session["startTime"]),
                "threadCount": len(threads),
                "eventCount": session["eventCount"],
                "collabCategory": (override or {}).get("collabCategory")
                or session["collabCategory"],
                "collabSubTags": session["collabSubTags"],
                "categorySource": "manual_override" if override is not None else "event",
                "roleCounts": session["roleCounts"],
                "threads": threads,
            }
        )
    return sorted(summaries, key=lambda s: -s["lastTime"])


def read_overrides(parsed: Any) -> dict[str, dict[str, Any]]:
    """``readWorkSessionCategoryOverrides`` on an already parsed JSON document."""
    result: dict[str, dict[str, Any]] = {}
    for ws_id, value in as_record(parsed).items():
        entry = as_record(value)
        category = as_category(entry.get("collabCategory"))
        if category is None:
            continue
        result[ws_id] = {
            "collabCategory": category,
            "updatedAt": as_string(entry.get("updatedAt")),
            "updatedBy": as_string(entry.get("updatedBy")),
        }
    return result


# ---------------------------------------------------------------------------
# The HTTP handlers (rules §8, §8.0, §8.1)
# ---------------------------------------------------------------------------
Query = dict[str, list[str]]


def _get(query: Query, key: str) -> str | None:
    values = query.get(key) or []
    return values[0] if values else None


def parse_csv(query: Query, key: str) -> list[str]:
    out = []
    for entry in query.get(key) or []:
        for part in entry.split(","):
            part = js_trim(part)
            if part:
                out.append(part)
    return out


def _limit(query: Query) -> float:
    """``Number(limit) || 100``: 0 and NaN are falsy in JavaScript."""
    number = js_number(_get(query, "limit"))
    return 100 if number == 0 or math.isnan(number) else number


def _json_session(session: dict[str, Any]) -> dict[str, Any]:
    """A session as ``JSON.stringify`` writes it (undefined conversationId dropped)."""
    out = dict(session)
    threads = []
    for thread in session["threads"]:
        thread = dict(thread)
        if thread["conversationId"] is None:
            del thread["conversationId"]
        threads.append(thread)
    out["threads"] = threads
    return out


def work_sessions_response(
    events: list[dict[str, Any]],
    *,
    now_ms: float,
    query: Query,
    overrides: dict[str, Any] | None = None,
    lifecycle_terminal: bool = False,
    unassigned: bool = False,
) -> dict[str, Any]:
    """The body of ``GET /api/work-sessions`` (overrides as returned by the reader)."""
    limit = _limit(query)
    view_category = as_string(_get(query, "viewCategory"))
    sub_tag = as_string(_get(query, "subTag"))
    role_filters = [r for r in parse_csv(query, "role") if role_from_value(r)]
    raw_type_filters = parse_csv(query, "type")
    status_filters = [s for s in parse_csv(query, "status") if s in STATUSES]

    sessions = build_work_sessions(
        events,
        now_ms=now_ms,
        role_filters=role_filters or None,
        type_filters=raw_type_filters,
        category_overrides=overrides,
        lifecycle_terminal=lifecycle_terminal,
        unassigned=unassigned,
    )
    filtered = sessions
    if status_filters:
        filtered = [s for s in filtered if s["status"] in status_filters]
    if view_category and view_category != "all":
        filtered = [s for s in filtered if s["collabCategory"] == view_category]
    if sub_tag:
        needle = sub_tag.lower()
        filtered = [s for s in filtered if any(t.lower() == needle for t in s["collabSubTags"])]
    category_counts: dict[str, int] = {}
    for session in filtered:
        key = session["collabCategory"]
        category_counts[key] = category_counts.get(key, 0) + 1
    limited = js_slice(filtered, 0, max(1, limit))
    return {
        "sessions": [_json_session(s) for s in limited],
        "count": len(limited),
        "totalMatched": len(filtered),
        "totalSessions": len(sessions),
        "role": role_filters,
        "type": raw_type_filters,
        "status": status_filters,
        "viewCategory": view_category,
        "subTag": sub_tag,
        "categoryCounts": category_counts,
    }


def events_response(events: list[dict[str, Any]], *, query: Query) -> dict[str, Any]:
    """The body of ``GET /api/events``; ``events`` in file order."""
    limit = _limit(query)
    since = _get(query, "since")
    role = as_string(_get(query, "role"))
    view_category = as_string(_get(query, "viewCategory"))
    type_filters = parse_csv(query, "type")
    requested = _type_filter_set(type_filters)

    matched = list(events)
    if since:
        since_ms = parse_iso_ms(since)
        matched = [e for e in matched if since_ms is not None and event_timestamp_ms(e) >= since_ms]
    if role:
        matched = [e for e in matched if e.get("eventRole") == role]
    if requested is not None:
        matched = [e for e in matched if e["type"] in requested]
    if view_category and view_category != "all":
        matched = [e for e in matched if e.get("collabCategory") == view_category]
    category_counts: dict[str, int] = {}
    for event in matched:
        key = event["collabCategory"]
        category_counts[key] = category_counts.get(key, 0) + 1
    limited = js_slice(matched, -max(1, limit))
    return {
        "events": limited,
        "count": len(limited),
        "total": len(events),
        "totalMatched": len(matched),
        "role": role,
        "type": type_filters,
        "viewCategory": view_category,
        "categoryCounts": category_counts,
    }
