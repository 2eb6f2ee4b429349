"""The report's search texts and task-title fields, materialised at ingest (issue 23).

The report's search index holds the text of every event that has one (the
:data:`SEARCH_FIELDS` of its ``data``), and its task titles read the few events that can
name one (:func:`names_a_title`). Reading them from the stored events decodes the whole
stored ``data`` struct whatever fields are selected (1.1 CPU s at 860,000 events, per
read). :data:`REPORT_TEXTS` holds them instead, one narrow row per such event, written
with the enriched table, slice by slice (:func:`text_rows`), so appends keep it whole; its
meta is the enriched table's, which is how a reader knows it is current.

The fields live here, below the report (:mod:`a2a_lab.app`), because the store needs them
to write the table; the report and the views import them from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import polars as pl

#: The derived table of the report's texts (``materialized/report_texts/``).
REPORT_TEXTS: Final = "report_texts"

#: The ``data`` fields a message's text comes from, in order (the first present one is the
#: text a message view shows, :mod:`a2a_lab.views.labels`).
TEXT_FIELDS: tuple[str, ...] = (
    "message",
    "replyPreview",
    "summary",
    "reason",
    "description",
    "label",
    "errorMessage",
    "waitError",
)
#: The ``data`` fields the search index matches: the fields a message's text comes from
#: and a task's ``title``. A phrase matches an event where any of them contains it, as a
#: text search of the log line finds it.
SEARCH_FIELDS: tuple[str, ...] = (*TEXT_FIELDS, "title")
#: The ``data`` fields a task's title is read from (:func:`a2a_lab.views.titles.task_titles`).
TITLE_FIELDS: Final = ("taskId", "title", "payloadJson")


def search_text(fields: Sequence[str]) -> pl.Expr:
    """An event's search text: its ``data`` fields ``fields`` (of :data:`SEARCH_FIELDS`),
    each distinct text once, in field order, joined by a newline (null: none)."""
    if not fields:
        return pl.lit(None, pl.String)
    texts = [pl.col("data").struct.field(f).cast(pl.String, strict=False) for f in fields]
    # each distinct text once (a reply's preview repeats its message), in field order: a
    # field equal to an earlier one is left out (a list's unique per row costs 5x more)
    distinct = [
        t
        if i == 0
        else pl.when(pl.any_horizontal(t == u for u in texts[:i])).then(None).otherwise(t)
        for i, t in enumerate(texts)
    ]
    return pl.concat_str(distinct, separator="\n", ignore_nulls=True)


def names_a_title() -> pl.Expr:
    """Whether an event can name a task's title: it has a ``taskId`` and a ``title``, or a
    ``payloadJson`` (:func:`a2a_lab.views.titles.task_titles` reads no other event; most
    events have a ``taskId`` and no ``title``)."""
    d = pl.col("data").struct
    return (d.field("taskId").is_not_null() & d.field("title").is_not_null()) | d.field(
        "payloadJson"
    ).is_not_null()


def has_text() -> pl.Expr:
    """Whether a row's ``text`` is one the search index keeps (present and not empty)."""
    return pl.col("text").is_not_null() & (pl.col("text") != "")


def text_rows(events: pl.DataFrame, enriched: pl.DataFrame) -> pl.DataFrame:
    """The rows of :data:`REPORT_TEXTS` for stored ``events`` (``source``, ``line``,
    ``event_ms`` and the whole ``data``) and their ``enriched`` rows (the same rows in the
    same order: enrichment is row by row): ``source, line, event_ms, sender, receiver,
    text`` (:func:`search_text`, null when empty) and ``title`` (the :data:`TITLE_FIELDS`
    of the events that :func:`names_a_title`, else null), for the events with either."""
    present = set(events.schema["data"].to_schema())  # type: ignore[attr-defined]
    d = pl.col("data").struct
    title = pl.struct([d.field(f) for f in TITLE_FIELDS])
    own = events.select(
        "source",
        "line",
        "event_ms",
        search_text([f for f in SEARCH_FIELDS if f in present]).alias("text"),
        pl.when(names_a_title()).then(title).alias("title"),
    )
    agents = enriched.select(
        pl.col("from_agent").alias("sender"), pl.col("to_agent").alias("receiver")
    )
    rows = pl.concat([own, agents], how="horizontal").with_columns(
        pl.when(has_text()).then(pl.col("text")).alias("text")
    )
    return rows.filter(pl.col("text").is_not_null() | pl.col("title").is_not_null()).select(
        "source", "line", "event_ms", "sender", "receiver", "text", "title"
    )
