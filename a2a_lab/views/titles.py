"""Readable titles: a task's title and a work session's task, instead of raw ids."""

from __future__ import annotations

import polars as pl

from a2a_lab.reference.jsstr import js_string_expr

__all__ = ["session_titles", "task_titles"]

_D = pl.col("data").struct


def task_titles(enriched: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """The title of every task the log names.

    A task's title is the ``title`` of its earliest event that has both ``taskId`` and
    ``title`` (task and plan events carry it), else the ``taskTitle`` of its earliest
    ``task_delegation`` payload (runtime §8; the payload's own ``taskId``). Strings are
    JS-trimmed; blank counts as absent; payloads that are not JSON are skipped.

    Parameters
    ----------
    enriched
        An event frame (loaded or enriched).

    Returns
    -------
    pl.DataFrame
        ``taskId, title, titleSource`` (``"event"`` or ``"payload"``), sorted by taskId.

    Examples
    --------
    >>> from a2a_lab.io import from_records
    >>> ev = from_records([
    ...     {"type": "a2a.send", "ts": 1, "data": {"payloadType": "task_delegation",
    ...      "payloadJson": '{"type":"task_delegation","taskId":"t2","taskTitle":"Fix CI"}'}},
    ...     {"type": "plan.submitted", "ts": 2, "data": {"taskId": "t1", "title": " Rollout "}},
    ... ])
    >>> task_titles(ev).rows()
    [('t1', 'Rollout', 'event'), ('t2', 'Fix CI', 'payload')]
    """
    lf = enriched.lazy().with_row_index("_row")
    from_events = lf.select(
        js_string_expr(_D.field("taskId")).alias("task_id"),
        js_string_expr(_D.field("title")).alias("title"),
        pl.lit("event").alias("title_source"),
        pl.lit(0).alias("_rank"),
        "event_ms",
        "_row",
    )
    payload = _D.field("payloadJson")
    delegations = lf.filter(payload.is_not_null()).select(
        payload.str.json_path_match("$.type").alias("_kind"),
        js_string_expr(payload.str.json_path_match("$.taskId")).alias("task_id"),
        js_string_expr(payload.str.json_path_match("$.taskTitle")).alias("title"),
        pl.lit("payload").alias("title_source"),
        pl.lit(1).alias("_rank"),
        "event_ms",
        "_row",
    )
    from_payloads = delegations.filter(pl.col("_kind") == "task_delegation").drop("_kind")
    return (
        pl.concat([from_events, from_payloads])
        .filter(pl.col("task_id").is_not_null() & pl.col("title").is_not_null())
        .sort("_rank", "event_ms", "_row")
        .group_by("task_id", maintain_order=True)
        .first()
        .select("task_id", "title", "title_source")
        .sort("task_id")
        .collect()
    )


def session_titles(
    enriched: pl.DataFrame | pl.LazyFrame, titles: pl.DataFrame | None = None
) -> pl.DataFrame:
    """Per work session, the task it works on, that task's title and its first message.

    The session's task is the ``taskId`` of its earliest event whose task has a title
    (:func:`task_titles`), else of its earliest event with a ``taskId``. Many tasks have no
    title in a log (only plans and delegations carry one), so the session's first
    ``message`` (JS-trimmed, in time order) is returned too: it says what the work is about.

    Parameters
    ----------
    enriched
        An event frame.
    titles
        :func:`task_titles` of it, if already computed.

    Returns
    -------
    pl.DataFrame
        ``work_session_id, task_id, title, first_message`` (null where absent), one row per
        workSessionId of the events, sorted by it.

    Examples
    --------
    >>> from a2a_lab.io import from_records
    >>> ev = from_records([
    ...     {"type": "task.started", "ts": 1, "data": {"taskId": "t1", "workSessionId": "ws_1"}},
    ...     {"type": "plan.submitted", "ts": 2, "data": {"taskId": "t1", "title": "Rollout"}},
    ...     {"type": "a2a.spawn", "ts": 3, "data": {"workSessionId": "ws_2", "message": "Check logs"}},
    ... ])
    >>> session_titles(ev).rows()
    [('ws_1', 't1', 'Rollout', None), ('ws_2', None, None, 'Check logs')]
    """
    titles = task_titles(enriched) if titles is None else titles
    titled = pl.col("title").is_not_null()
    return (
        enriched.lazy()
        .with_row_index("_row")
        .select(
            js_string_expr(_D.field("workSessionId")).alias("work_session_id"),
            js_string_expr(_D.field("taskId")).alias("task_id"),
            js_string_expr(_D.field("message")).alias("message"),
            "event_ms",
            "_row",
        )
        .filter(pl.col("work_session_id").is_not_null())
        .join(titles.lazy().select("task_id", "title"), on="task_id", how="left")
        .sort("event_ms", "_row")
        .group_by("work_session_id")
        .agg(
            pl.coalesce(
                pl.col("task_id").filter(titled).first(), pl.col("task_id").drop_nulls().first()
            ).alias("task_id"),
            pl.col("title").drop_nulls().first(),
            pl.col("message").drop_nulls().first().alias("first_message"),
        )
        .sort("work_session_id")
        .collect()
    )


# ---------------------------------------------------------------------------------------
