"""The ``sessions_send`` exchanges of a log, as calibration and comparison read them."""

from __future__ import annotations

from typing import Final

import polars as pl

from a2a_lab._frames import same_kind
from a2a_lab.analysis.conversations import _conversations_of, exchange_events
from a2a_lab.enrich import enrich
from a2a_lab.reference.jsstr import js_trim_expr

__all__ = ["SPAWN_WINDOW_MS", "exchanges"]

#: Most time between an ``a2a.spawn`` and the send of the exchange it starts.
SPAWN_WINDOW_MS: Final = 60_000.0


def _enriched(events: pl.DataFrame) -> pl.DataFrame:
    return (
        events
        if "from_agent" in events.columns and "to_agent" in events.columns
        else enrich(events)
    )


@same_kind(collect=True)
def exchanges(events: pl.DataFrame) -> pl.DataFrame:
    """The exchanges of a log with what calibration needs: spawns flagged, times in seconds.

    Parameters
    ----------
    events
        An event frame: loaded, enriched or simulated.

    Returns
    -------
    pl.DataFrame
        :func:`~a2a_lab.analysis.conversations.conversations` plus ``spawned`` (the exchange starts a
        sub-agent: an ``a2a.spawn`` of its conversation and direction came at most
        :data:`SPAWN_WINDOW_MS` before its send) and ``latency_s`` (send → first reply).

    Examples
    --------
    >>> from a2a_lab.io import from_records
    >>> ev = from_records([
    ...   {"type": "a2a.spawn", "ts": 0, "data": {"conversationId": "c", "fromAgent": "a", "toAgent": "w"}},
    ...   {"type": "a2a.send", "ts": 5, "data": {"conversationId": "c", "fromAgent": "a", "toAgent": "w", "message": "go"}},
    ...   {"type": "a2a.response", "ts": 900000, "data": {"conversationId": "c", "fromAgent": "w", "toAgent": "a", "message": "done"}},
    ...   {"type": "a2a.send", "ts": 1000, "data": {"conversationId": "d", "fromAgent": "a", "toAgent": "b", "message": "hi"}},
    ...   {"type": "a2a.response", "ts": 4000, "data": {"conversationId": "d", "fromAgent": "b", "toAgent": "a", "message": "ok"}},
    ... ])
    >>> exchanges(ev).select("to_agent", "spawned", "latency_s").rows()
    [('w', True, 899.995), ('b', False, 3.0)]
    """
    return _exchanges(events).drop(MS_COLUMNS)


#: The exact float-ms times :func:`_exchanges` adds for the busy-time arithmetic.
MS_COLUMNS: Final = ("_start_ms", "_end_ms", "_first_reply_ms")


def _exchanges(events: pl.DataFrame) -> pl.DataFrame:
    """:func:`exchanges` plus the :data:`MS_COLUMNS` (the log's exact float epoch ms)."""
    ev = _enriched(events)
    conv = _conversations_of(exchange_events(ev.lazy()), with_ms=True).with_row_index("_row")
    spawns = ev.filter(pl.col("type") == "a2a.spawn").select(
        js_trim_expr(pl.col("data").struct.field("conversationId")).alias("conversation_id"),
        "from_agent",
        "to_agent",
        pl.col("event_ms").alias("_spawn_ms"),
    )
    spawned_rows = (
        conv.select("_row", "conversation_id", "from_agent", "to_agent", "_start_ms")
        .join(spawns, on=["conversation_id", "from_agent", "to_agent"], how="inner")
        .filter((pl.col("_start_ms") - pl.col("_spawn_ms")).is_between(0.0, SPAWN_WINDOW_MS))
        .get_column("_row")
    )
    return conv.with_columns(
        pl.col("_row").is_in(spawned_rows.implode()).alias("spawned"),
        pl.col("first_reply_s").alias("latency_s"),
    ).drop("_row")
