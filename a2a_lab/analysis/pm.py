"""The bridge to process mining: directly-follows graphs, variants and OCEL 2.0 export.

A *case notion* says which events form one process instance: a work session
(``data.workSessionId``), a conversation (``data.conversationId``) or a task
(``data.taskId``). The activity is the event type. The directly-follows graph and the variants
are computed in Polars; :func:`to_ocel2` writes the log as an OCEL 2.0 object-centric event
log (objects: work sessions, conversations, tasks, agents and log files) that PM4Py's
``read_ocel2_json`` reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import polars as pl

from a2a_lab._frames import data_text, same_kind, text_format
from a2a_lab.reference.jsstr import js_trim_expr

__all__ = ["CASE_NOTIONS", "directly_follows", "to_ocel2", "variants", "write_ocel2"]

CaseNotion = Literal["work_session", "conversation", "task"]
#: Case notion → the ``data`` field that identifies a case.
CASE_NOTIONS: dict[str, str] = {
    "work_session": "workSessionId",
    "conversation": "conversationId",
    "task": "taskId",
}

START, END = "▶ start", "■ end"
_D = pl.col("data")


def _cases(events: pl.DataFrame | pl.LazyFrame, case: CaseNotion, activity: str) -> pl.LazyFrame:
    if case not in CASE_NOTIONS:
        raise ValueError(f"case must be one of {', '.join(CASE_NOTIONS)}, not {case!r}")
    return (
        events.lazy()
        .with_row_index("_seq")
        .with_columns(
            data_text(CASE_NOTIONS[case]).alias("case"), pl.col(activity).alias("activity")
        )
        .filter(pl.col("case").is_not_null())
        .sort("case", "event_ms", "_seq")
    )


@same_kind()
def directly_follows(
    events: pl.DataFrame | pl.LazyFrame,
    *,
    case: CaseNotion = "work_session",
    activity: str = "type",
) -> pl.DataFrame:
    """The directly-follows graph: how often activity ``b`` directly follows ``a`` in a case.

    Each case also contributes a ``▶ start → first`` and a ``last → ■ end`` edge.

    Returns
    -------
    pl.DataFrame
        ``source, target, count, cases`` (distinct cases with that step),
        ``median_s`` / ``mean_s`` (seconds between the two events), sorted by count.

    Examples
    --------
    >>> from a2a_lab.io import from_records
    >>> ev = from_records([{"type": t, "ts": i, "data": {"workSessionId": "w"}}
    ...                    for i, t in enumerate(["task.started", "a2a.send", "task.completed"], 1)])
    >>> directly_follows(ev).select("source", "target", "count").sort("source").rows()
    [('a2a.send', 'task.completed', 1), ('task.completed', '■ end', 1), ('task.started', 'a2a.send', 1), ('▶ start', 'task.started', 1)]
    """
    lf = _cases(events, case, activity).select("case", "activity", "event_ms")
    steps = lf.with_columns(
        pl.col("activity").shift(-1).over("case").alias("target"),
        (pl.col("event_ms").shift(-1).over("case") - pl.col("event_ms")).alias("gap"),
    )
    inner = steps.filter(pl.col("target").is_not_null()).select(
        pl.col("activity").alias("source"), "target", "case", "gap"
    )
    firsts = (
        lf.group_by("case")
        .agg(pl.col("activity").first().alias("target"))
        .select(
            pl.lit(START).alias("source"), "target", "case", pl.lit(None, pl.Float64).alias("gap")
        )
    )
    lasts = (
        lf.group_by("case")
        .agg(pl.col("activity").last().alias("source"))
        .select(
            "source", pl.lit(END).alias("target"), "case", pl.lit(None, pl.Float64).alias("gap")
        )
    )
    return (
        pl.concat([inner, firsts, lasts])
        .group_by("source", "target")
        .agg(
            pl.len().cast(pl.Int64).alias("count"),
            pl.col("case").n_unique().cast(pl.Int64).alias("cases"),
            (pl.col("gap").median() / 1000.0).alias("median_s"),
            (pl.col("gap").mean() / 1000.0).alias("mean_s"),
        )
        .sort(["count", "source", "target"], descending=[True, False, False])
        .collect()
    )


@same_kind()
def variants(
    events: pl.DataFrame | pl.LazyFrame,
    *,
    case: CaseNotion = "work_session",
    activity: str = "type",
) -> pl.DataFrame:
    """Process variants: the distinct activity sequences of cases, most frequent first.

    Returns ``variant`` (activities joined by `` → ``), ``length``, ``cases``, ``share``
    and an example ``case``.
    """
    per_case = (
        _cases(events, case, activity).group_by("case").agg(pl.col("activity").alias("trace"))
    )
    return (
        per_case.group_by("trace")
        .agg(pl.len().cast(pl.Int64).alias("cases"), pl.col("case").min().alias("example_case"))
        .with_columns(
            pl.col("trace").list.join(" → ").alias("variant"),
            pl.col("trace").list.len().cast(pl.Int64).alias("length"),
            (pl.col("cases") / pl.col("cases").sum()).alias("share"),
        )
        .sort(["cases", "variant"], descending=[True, False])
        .select("variant", "length", "cases", "share", "example_case")
        .collect()
    )


# ---------------------------------------------------------------------------------------
# OCEL 2.0
# ---------------------------------------------------------------------------------------

_OBJECT_TYPES = ("work_session", "conversation", "task", "agent", "log_file")


# Polars panics formatting a Datetime past the year 262142 (about 8.2e15 ms); a loaded
# event_ms may lie beyond (an out_of_range time, up to 1.8e308), which has no ISO text.
_FORMATTABLE_MS = 8_200_000_000_000_000


def _iso(ms: pl.Expr) -> pl.Expr:
    return (
        pl.when(ms.abs() < _FORMATTABLE_MS)
        .then(ms)
        .cast(pl.Int64)
        .cast(pl.Datetime("ms"))
        .dt.strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
    )


def _ocel_frames(events: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(events, relationships, objects) frames of the OCEL export."""
    files = events["file"].unique(maintain_order=True).to_list()
    agent = js_trim_expr(pl.col("agent_id"))
    frm = pl.coalesce(data_text("fromAgent"), data_text("senderAgentId"))
    to = pl.coalesce(data_text("toAgent"), data_text("targetAgentId"))
    ev = events.lazy().select(
        text_format(
            "e{}:{}",
            pl.col("file").replace_strict(files, list(range(len(files))), return_dtype=pl.String),
            pl.col("line"),
        ).alias("id"),
        pl.col("type"),
        _iso(pl.col("event_ms")).alias("time"),
        pl.col("file"),
        pl.col("line"),
        pl.when(agent.str.len_bytes() > 0).then(agent).alias("_writer"),
        frm.alias("_from"),
        to.alias("_to"),
        data_text("workSessionId").alias("_ws"),
        data_text("conversationId").alias("_conv"),
        data_text("taskId").alias("_task"),
    )
    rel_specs = [
        ("_ws", "work_session", "work session", "ws:"),
        ("_conv", "conversation", "conversation", "conv:"),
        ("_task", "task", "task", "task:"),
        ("_from", "agent", "sender", "agent:"),
        ("_to", "agent", "receiver", "agent:"),
        ("_writer", "agent", "writer", "agent:"),
        ("file", "log_file", "source", "file:"),
    ]
    rels = []
    for col, otype, qualifier, prefix in rel_specs:
        cond = pl.col(col).is_not_null()
        if col == "_writer":  # the writer is named only when it is not already the sender
            cond = cond & (pl.col("_from").is_null() | (pl.col("_from") != pl.col("_writer")))
        rels.append(
            ev.filter(cond).select(
                "id",
                (pl.lit(prefix) + pl.col(col)).alias("objectId"),
                pl.lit(otype).alias("objectType"),
                pl.lit(qualifier).alias("qualifier"),
            )
        )
    # one relationship per (event, object): an agent that sends to itself is its sender only
    rel = pl.concat(rels).unique(["id", "objectId"], keep="first", maintain_order=True).collect()
    objects = rel.select("objectId", "objectType").unique().sort("objectType", "objectId")
    return ev.select("id", "type", "time", "file", "line").collect(), rel, objects


def _ocel_parts(events: pl.DataFrame) -> tuple[dict[str, Any], pl.DataFrame, pl.DataFrame]:
    """Header (object and event types), objects frame and events frame of the OCEL 2.0 document."""
    ev, rel, objects = _ocel_frames(events)
    rel_lists = rel.group_by("id", maintain_order=True).agg(
        pl.struct(pl.col("objectId"), pl.col("qualifier")).alias("relationships")
    )
    ev_rows = ev.join(rel_lists, on="id", how="left", maintain_order="left").select(
        "id",
        "type",
        "time",
        pl.concat_list(
            pl.struct(pl.lit("file").alias("name"), pl.col("file").alias("value")),
            pl.struct(pl.lit("line").alias("name"), pl.col("line").cast(pl.String).alias("value")),
        ).alias("attributes"),
        "relationships",
    )
    o2o = (
        rel.filter(pl.col("objectType").is_in(["conversation", "task"]))
        .join(
            rel.filter(pl.col("objectType") == "work_session").select(
                "id", pl.col("objectId").alias("ws")
            ),
            on="id",
        )
        .select("objectId", "objectType", "ws")
        .unique()
        .group_by("objectId", "objectType")
        .agg(pl.col("ws").sort().alias("targets"))
    )
    obj_rows = (
        objects.join(o2o, on=["objectId", "objectType"], how="left", maintain_order="left")
        .select(
            pl.col("objectId").alias("id"),
            pl.col("objectType").alias("type"),
            pl.lit(
                [],
                dtype=pl.List(
                    pl.Struct({"name": pl.String, "time": pl.String, "value": pl.String})
                ),
            ).alias("attributes"),
            pl.col("targets")
            .fill_null([])
            .list.eval(
                pl.struct(
                    pl.element().alias("objectId"),
                    pl.lit("part of").alias("qualifier"),
                )
            )
            .alias("relationships"),
        )
        .with_columns(
            pl.when(pl.col("type") == "task")
            .then(
                pl.col("relationships").list.eval(
                    pl.struct(
                        pl.element().struct.field("objectId"),
                        pl.lit("belongs to").alias("qualifier"),
                    )
                )
            )
            .otherwise(pl.col("relationships"))
            .alias("relationships")
        )
    )
    used_types = sorted(set(objects["objectType"]))
    header = {
        "objectTypes": [{"name": t, "attributes": []} for t in _OBJECT_TYPES if t in used_types],
        "eventTypes": [
            {
                "name": t,
                "attributes": [
                    {"name": "file", "type": "string"},
                    {"name": "line", "type": "integer"},
                ],
            }
            for t in sorted(ev["type"].unique())
        ],
    }
    return header, obj_rows, ev_rows.with_columns(pl.col("relationships").fill_null([]))


def to_ocel2(events: pl.DataFrame) -> dict[str, Any]:
    """The event frame as an OCEL 2.0 JSON document (a dict).

    Objects: ``work_session`` (``ws:<id>``), ``conversation`` (``conv:<id>``), ``task``
    (``task:<id>``), ``agent`` (``agent:<id>``) and ``log_file`` (``file:<path>``). Every event
    is related to its log file (qualifier ``source``) and, where the event names them, to its
    work session, conversation and task, its ``sender`` and ``receiver`` agents and its
    ``writer`` (the ``agentId``, when not the sender); an object is related to an event once
    (the first of those qualifiers), as PM4Py keeps one relation per pair. Objects relate to each other:
    a conversation is ``part of`` its work session, a task ``belongs to`` its work session.
    Event attributes: ``file``, ``line``.

    For a large log prefer :func:`write_ocel2`, which writes the JSON without building
    Python objects for every event.
    """
    header, objects, evs = _ocel_parts(events)
    return {
        **header,
        "objects": json.loads(objects.write_json()),
        "events": json.loads(evs.write_json()),
    }


def write_ocel2(events: pl.DataFrame, path: str | Path) -> Path:
    """Write the OCEL 2.0 document of :func:`to_ocel2` as JSON (``.jsonocel`` / ``.json``).

    The object and event arrays are serialised by Polars straight to text.
    """
    header, objects, evs = _ocel_parts(events)
    out = Path(path)
    with out.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(header, ensure_ascii=False)[:-1])
        fh.write(',"objects":')
        fh.write(objects.write_json())
        fh.write(',"events":')
        fh.write(evs.write_json())
        fh.write("}")
    return out
