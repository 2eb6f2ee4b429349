"""The health rules' catalogue and the findings frame every rule of :mod:`checks` returns."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from a2a_lab._frames import text_format
from a2a_lab.time import format_time

__all__ = ["FINDING_SCHEMA", "RULES", "SEVERITIES", "Rule"]

SEVERITIES: tuple[str, ...] = ("info", "warning", "error")

#: Columns of a findings frame.
FINDING_SCHEMA = pl.Schema(
    {
        "rule": pl.String(),
        "severity": pl.String(),
        "conversation_id": pl.String(),
        "task_id": pl.String(),
        "work_session_id": pl.String(),
        "file": pl.String(),
        "lines": pl.List(pl.Int64()),
        "message": pl.String(),
    }
)


@dataclass(frozen=True)
class Rule:
    """A documented health rule."""

    id: str
    severity: str
    description: str


RULES: dict[str, Rule] = {
    r.id: r
    for r in [
        Rule(
            "a2a.orphan_response",
            "warning",
            "An a2a.response with no a2a.send before it in its conversation and direction.",
        ),
        Rule(
            "a2a.complete_without_send",
            "warning",
            "An a2a.complete with no a2a.send before it in its conversation and direction.",
        ),
        Rule(
            "a2a.missing_complete",
            "warning",
            "An exchange (a2a.send) that never got its a2a.complete.",
        ),
        Rule(
            "a2a.turns_out_of_order",
            "warning",
            "Ping-pong turn numbers of an exchange that do not run 1, 2, 3 … in time order.",
        ),
        Rule(
            "a2a.event_after_complete",
            "warning",
            "An event of an exchange logged after its a2a.complete.",
        ),
        Rule(
            "a2a.ambiguous_exchanges",
            "info",
            "Exchanges under one conversation id that the log cannot tell apart (their outcome "
            "or turns may belong to another exchange): how many, and examples.",
        ),
        Rule(
            "task.after_terminal",
            "error",
            "A task.* event for a task after it completed, was cancelled, failed or was abandoned.",
        ),
        Rule(
            "task.invalid_transition",
            "warning",
            "A task lifecycle step that cannot follow the previous one (e.g. resumed while not blocked, started twice).",
        ),
        Rule(
            "task.protocol_state",
            "warning",
            "An A2A protocol task state change that runtime §9 forbids (e.g. completed → working).",
        ),
        Rule(
            "guard.loop",
            "warning",
            "Messages of an agent pair that the loop guard (N per sliding window per unordered pair) would have blocked.",
        ),
        Rule(
            "guard.collaborate",
            "warning",
            "Sends of an agent pair beyond the collaborate limit (10 per 5 min per pair).",
        ),
        Rule(
            "guard.relay_depth",
            "warning",
            "A relay deeper than the maximum depth (depth > 5), which the guard blocks.",
        ),
        Rule("clock.zero_ts", "error", "An event without any usable timestamp (time 0)."),
        Rule(
            "clock.future_ts",
            "warning",
            "An event time later than the check's `now` (plus tolerance).",
        ),
        Rule(
            "identity.duplicate_event",
            "warning",
            "Events with the same type, agent, time and data.",
        ),
        Rule(
            "load.empty",
            "error",
            "The source holds no event at all (an empty file, or every line rejected or blank).",
        ),
        Rule(
            "load.rejects",
            "error",
            "Lines of the source that could not be read as events (one finding per file and reason).",
        ),
        Rule(
            "identity.conversation_reused",
            "warning",
            "A conversation id used by more than one agent pair (outside relay hops that carry it as parentConversationId).",
        ),
    ]
}

_D = pl.col("data")

#: The columns that name an event in a finding's message (:func:`_cause`).
_CAUSE_COLUMNS = ("type", "file", "line", "event_time")


def _cause(prefix: str) -> pl.Expr:
    """``type at TIME (file:line)`` of the event in the columns ``{prefix}type`` etc.:
    the event that caused a finding, named so that a reader can open it."""
    return text_format(
        "{} at {} ({}:{})",
        pl.col(f"{prefix}type"),
        format_time(pl.col(f"{prefix}event_time"), "%Y-%m-%dT%H:%M:%S%.3fZ").fill_null("?"),
        pl.col(f"{prefix}file"),
        pl.col(f"{prefix}line"),
    )


def _findings(frame: pl.DataFrame | pl.LazyFrame, rule: str, message: pl.Expr) -> pl.LazyFrame:
    """Shape rows with ``file``, ``lines`` and optional ids into findings of ``rule``."""
    lf = frame.lazy()
    names = lf.collect_schema().names()

    def col(name: str) -> pl.Expr:
        return pl.col(name) if name in names else pl.lit(None, pl.String)

    return lf.select(
        pl.lit(rule).alias("rule"),
        pl.lit(RULES[rule].severity).alias("severity"),
        col("conversation_id").alias("conversation_id"),
        col("task_id").alias("task_id"),
        col("work_session_id").alias("work_session_id"),
        pl.col("file"),
        pl.col("lines").cast(pl.List(pl.Int64)),
        message.alias("message"),
    )
