"""Work-session category overrides, read as the reference reads its overrides file."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from a2a_lab.reference.rules import TASK_MONITOR_V1, RuleSet
from a2a_lab.reference.strict_json import reject_constant as _reject_constant
from a2a_lab.sessions._js import _as_string

#: Own properties of JavaScript's ``Object.prototype``. The reference looks overrides up as
#: ``overrides[workSessionId]`` on a plain object, so a session with one of these ids finds
#: an inherited member: truthy, without a category. Its category stays, but its
#: ``categorySource`` becomes ``manual_override`` (**quirk**, reproduced).
_OBJECT_PROTOTYPE_MEMBERS: frozenset[str] = frozenset(
    {
        "__defineGetter__",
        "__defineSetter__",
        "__lookupGetter__",
        "__lookupSetter__",
        "__proto__",
        "constructor",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
        "toLocaleString",
        "toString",
        "valueOf",
    }
)


def load_overrides(
    overrides: Mapping[str, Any] | str | os.PathLike[str], *, rules: RuleSet = TASK_MONITOR_V1
) -> dict[str, dict[str, Any]]:
    """Read work-session category overrides as the reference's reader does.

    The reference file (``work-session-category-overrides.json``) maps a bare
    workSessionId to ``{collabCategory, updatedAt, updatedBy?}``. An entry whose
    ``collabCategory``, JS-trimmed, is not a known category (case matters) is ignored.

    Parameters
    ----------
    overrides
        The parsed mapping, or the path of such a JSON file.
    rules
        The rule set whose categories are known.

    Returns
    -------
    dict
        ``{workSessionId: {"collabCategory", "updatedAt", "updatedBy"}}`` (the two
        timestamps JS-trimmed, None when absent), valid entries only.

    Raises
    ------
    OSError
        If the file cannot be read.
    ValueError
        If the file is not JSON, or the document is not a JSON object.

    Examples
    --------
    >>> load_overrides({"ws_1": {"collabCategory": " qa_validation ", "updatedAt": "x"},
    ...                 "ws_2": {"collabCategory": "QA_VALIDATION"}})
    {'ws_1': {'collabCategory': 'qa_validation', 'updatedAt': 'x', 'updatedBy': None}}
    """
    if isinstance(overrides, (str, os.PathLike)):
        parsed = json.loads(
            Path(overrides).read_text(encoding="utf-8"), parse_constant=_reject_constant
        )
    else:
        parsed = overrides
    if not isinstance(parsed, Mapping):
        raise ValueError("category overrides must be a JSON object {workSessionId: {...}}")
    known = set(rules.category_names)
    result: dict[str, dict[str, Any]] = {}
    for ws_id, entry in parsed.items():
        record = entry if isinstance(entry, Mapping) else {}
        category = _as_string(record.get("collabCategory"))
        if category not in known:
            continue
        result[str(ws_id)] = {
            "collabCategory": category,
            "updatedAt": _as_string(record.get("updatedAt")),
            "updatedBy": _as_string(record.get("updatedBy")),
        }
    return result


def with_overrides(
    sessions: pl.DataFrame, overrides: Mapping[str, Any]
) -> tuple[pl.DataFrame, pl.Expr]:
    """``sessions`` joined with the valid ``overrides``' categories (``_overrideCategory``),
    and whether the reference finds an override for each (``overrides[id]`` truthy: an own
    entry or an inherited ``Object.prototype`` member, see :data:`_OBJECT_PROTOTYPE_MEMBERS`)."""
    frame = pl.DataFrame(
        {
            "work_session_id": list(overrides),
            "_overrideCategory": [o["collabCategory"] for o in overrides.values()],
        },
        schema={"work_session_id": pl.String, "_overrideCategory": pl.String},
    )
    overridden = pl.col("_overrideCategory").is_not_null() | pl.col("work_session_id").is_in(
        sorted(_OBJECT_PROTOTYPE_MEMBERS - set(overrides))
    )
    return sessions.join(frame, on="work_session_id", how="left"), overridden


def session_columns(overridden: pl.Expr, event_category: str) -> list[pl.Expr]:
    """A session's duration, its category with the overrides (``overridden``: whether the
    session's override applies) over ``event_category``, and where the category came from."""
    return [
        (pl.col("_last_ms") - pl.col("_start_ms")).clip(lower_bound=0.0).alias("_duration_ms"),
        pl.coalesce("_overrideCategory", event_category).alias("collab_category"),
        pl.when(overridden.fill_null(False))
        .then(pl.lit("manual_override"))
        .otherwise(pl.lit("event"))
        .alias("category_source"),
    ]
