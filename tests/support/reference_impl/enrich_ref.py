"""A slow, obvious pure-Python transcription of the Task-Monitor enrichment (rules §1-§6).

Written line by line from ``task-monitor-rules.md`` over plain JSON objects (dicts), without
Polars and without :mod:`a2a_lab`, so that the vectorised :func:`a2a_lab.enrich.enrich` can be
checked against an independent reading of the spec. The constants are re-typed here from the
spec on purpose (a typo in the rule-set object must not be copied into the oracle); §6's
category table and haystack fields are parsed from a copy of the spec (tests/data/spec/).

Known limitation, kept on purpose: lower-casing uses Python's ``str.lower``; Python 3.11's
Unicode tables lack the case pairs added in Unicode 15-16 (e.g. U+A7CB, U+10D50-U+10D65,
U+16EA0-U+16EB8), which JavaScript and Polars know. Test generators avoid those characters.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

# §10: ECMAScript WhiteSpace + LineTerminator
JS_SPACE = set(
    [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0, 0x1680]
    + list(range(0x2000, 0x200A + 1))
    + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF]
)

#: The spec itself (a copy of ``shared/spec/task-monitor-rules.md``): the lists of §5 and §6
#: (roles, orchestration prefixes, categories, haystack fields) are read from its text.
SPEC = (Path(__file__).parents[2] / "data" / "spec" / "task-monitor-rules.md").read_text(
    encoding="utf-8"
)


def _backticked(text: str) -> list[str]:
    """The ``code`` spans of a spec passage, in order."""
    return re.findall(r"`([^`]+)`", text)


_SECTION_5 = SPEC[SPEC.index("## 5. Event role") : SPEC.index("\n## 6.")]
_RULE_1, _RULE_2 = (
    _SECTION_5[_SECTION_5.index(f"\n{n}. ") : _SECTION_5.index(f"\n{n + 1}. ")] for n in (1, 2)
)
ROLES = _backticked(_RULE_1)[1:]
SESSION_TYPES = ["main", "subagent", "unknown"]
ORCHESTRATION_PREFIXES = _backticked(_RULE_2)[:-1]
_SECTION_6 = SPEC[SPEC.index("## 6. Collaboration category") : SPEC.index("\n## 7.")]
CATEGORIES = re.findall(r"^\| \d+ \| ([a-z_]+) \| (.+?) \|$", _SECTION_6, re.MULTILINE)
KEYWORDS = {name: [k.strip() for k in text.split(",")] for name, text in CATEGORIES}
_HAYSTACK = re.search(r"non-empty string fields `([^`]+)`", _SECTION_6)
assert _HAYSTACK is not None and len(CATEGORIES) == 10, "spec §6 not found"
TEXT_FIELDS = [f.strip() for f in _HAYSTACK.group(1).split(",")]


def trim(s: str) -> str:
    """JavaScript String.prototype.trim, one character at a time."""
    start, end = 0, len(s)
    while start < end and ord(s[start]) in JS_SPACE:
        start += 1
    while end > start and ord(s[end - 1]) in JS_SPACE:
        end -= 1
    return s[start:end]


def string_field(value: Any) -> str | None:
    """§1 string field: a string whose trim is non-empty; the trimmed value."""
    if not isinstance(value, str):
        return None
    t = trim(value)
    return t if t != "" else None


def number_field(value: Any) -> float | None:
    """§1 number field: a finite int/float that is not a bool (as a JavaScript double)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        as_double = float(value)
    except OverflowError:  # an integer too large for a double is Infinity in JavaScript
        return None
    return as_double if math.isfinite(as_double) else None


def record(value: Any) -> dict:
    """§1 record: a JSON object, anything else is {}."""
    return value if isinstance(value, dict) else {}


def js_length(s: str) -> int:
    """Length in UTF-16 code units."""
    return sum(2 if ord(ch) > 0xFFFF else 1 for ch in s)


def is_main(agent: str | None, main_agents: set[str]) -> bool:
    """§1: compared trimmed and lower-cased."""
    if agent is None:
        return False
    normalized = trim(agent).lower()
    return normalized != "" and normalized in main_agents


def session_type_from_key(key: str | None) -> str:
    """§4.2."""
    if key is None:
        return "unknown"
    if ":subagent:" in key:
        return "subagent"
    if re.fullmatch(r"agent:[^:]+:main", key, flags=re.IGNORECASE | re.ASCII | re.DOTALL):
        return "main"
    return "unknown"


def to_fixed_2(x: float) -> float:
    """JavaScript Number(x.toFixed(2)) for 0 <= x < 1e21: exact value, ties go up."""
    return float(Decimal(x).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def enrich_event(
    event: Any,
    main_agents: set[str] | frozenset[str] = frozenset({"main", "ruda"}),
    keywords: dict[str, list[str]] | None = None,
    version: str = "v1",
) -> dict | None:
    """The enrichment of one parsed JSON value, or None when the reference drops it.

    Returns the trimmed ``type``, ``fromAgent``/``toAgent`` (§3, trimmed, None when absent)
    and the eight enrichment fields (not the whole enriched event object). ``main_agents``
    holds trimmed, lower-cased ids. ``keywords`` replaces the categories and their keywords (declared order = dict order;
    the fallback categories must be among them); ``version`` is the default categoryVersion.
    """
    keywords = KEYWORDS if keywords is None else keywords
    rec = record(event)
    etype = string_field(rec.get("type"))
    if etype is None:
        return None
    data = record(rec.get("data"))

    # §3 agents
    from_agent = (
        string_field(data.get("fromAgent"))
        or string_field(data.get("senderAgentId"))
        or string_field(rec.get("agentId"))
    )
    to_agent = string_field(data.get("toAgent")) or string_field(data.get("targetAgentId"))

    # §4 session types
    hint = (
        string_field(data.get("parentConversationId")) is not None
        or number_field(data.get("depth")) is not None
        or number_field(data.get("hop")) is not None
    )
    explicit_from = string_field(data.get("fromSessionType"))
    explicit_to = string_field(data.get("toSessionType"))
    if explicit_from in SESSION_TYPES and explicit_to in SESSION_TYPES:
        from_type, to_type = explicit_from, explicit_to
    else:
        from_key = (
            string_field(data.get("sourceSessionKey"))
            or string_field(data.get("requesterSessionKey"))
            or string_field(data.get("sessionKey"))
        )
        from_type = session_type_from_key(from_key)
        to_type = session_type_from_key(string_field(data.get("targetSessionKey")))
        if etype in ("a2a.spawn", "a2a.spawn_result"):
            from_type, to_type = "main", "subagent"
        if from_type == "unknown":
            if is_main(from_agent, main_agents):
                from_type = "main"
            elif hint and is_main(to_agent, main_agents):
                from_type = "subagent"
        if to_type == "unknown":
            if is_main(to_agent, main_agents):
                to_type = "main"
            elif hint and is_main(from_agent, main_agents):
                to_type = "subagent"

    # §5 role
    explicit_role = string_field(data.get("eventRole"))
    if explicit_role in ROLES:
        role = explicit_role
    elif any(etype.startswith(p) for p in ORCHESTRATION_PREFIXES):
        role = "orchestration.task"
    elif etype == "milestone.sync_failed":
        role = "system.observability"
    elif etype.startswith("a2a."):
        if (
            etype in ("a2a.spawn", "a2a.spawn_result")
            or hint
            or from_type == "subagent"
            or to_type == "subagent"
        ):
            role = "delegation.subagent"
        elif from_type == "main" and to_type == "main":
            role = "conversation.main"
        else:
            role = "delegation.subagent"
    else:
        role = "system.observability"

    # §6 category
    manual = string_field(data.get("collabCategory"))
    if manual in keywords:
        tags_raw = data.get("collabSubTags")
        tags = []
        if isinstance(tags_raw, list):
            tags = [t for t in (string_field(v) for v in tags_raw) if t is not None][:5]
        category, sub_tags, confidence, source = manual, tags, 1.0, "manual"
    else:
        parts = [etype] + [
            string_field(data.get(f)) for f in TEXT_FIELDS if string_field(data.get(f)) is not None
        ]
        haystack = "\n".join(parts).lower()
        scored = []
        for name, category_keywords in keywords.items():
            hits = [kw for kw in category_keywords if kw.lower() in haystack]
            score = sum(2 if js_length(kw) > 4 else 1 for kw in hits)
            scored.append((name, score, hits))
        ranked = sorted(scored, key=lambda item: -item[1])  # stable: ties keep declared order
        top_name, top_score, top_hits = ranked[0]
        if top_score > 0:
            gap = max(0, top_score - (ranked[1][1] if len(ranked) > 1 else 0))
            raw = min(0.95, 0.5 + top_score * 0.08 + gap * 0.05)
            category, sub_tags, confidence, source = top_name, top_hits[:3], to_fixed_2(raw), "rule"
        else:
            fallback = {
                "orchestration.task": "planning_decision",
                "system.observability": "infra_ops",
            }
            category, sub_tags, confidence, source = (
                fallback.get(role, "engineering_build"),
                [],
                0.2,
                "fallback",
            )

    return {
        "type": etype,
        "fromAgent": from_agent,
        "toAgent": to_agent,
        "eventRole": role,
        "fromSessionType": from_type,
        "toSessionType": to_type,
        "collabCategory": category,
        "collabSubTags": sub_tags,
        "categoryConfidence": confidence,
        "categorySource": source,
        "categoryVersion": string_field(data.get("categoryVersion")) or version,
    }
