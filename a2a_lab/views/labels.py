"""What each thread message is, in words: kinds and labels (runtime §3b outcomes included)."""

from __future__ import annotations

import math

import polars as pl

from a2a_lab._frames import data_text
from a2a_lab.app.fields import TEXT_FIELDS  # first present wins; the search index's too
from a2a_lab.exchanges import outcome_text_expr, wait_reason_expr
from a2a_lab.reference.jsstr import js_string_expr

__all__ = ["TEXT_FIELDS", "add_labels", "words_expr"]

_D = pl.col("data").struct


def words_expr(expr: pl.Expr) -> pl.Expr:
    """``task.backlog_added`` → ``task backlog added``."""
    return expr.str.replace_all(r"[._]", " ")


def _int_text(expr: pl.Expr) -> pl.Expr:
    """A logged number as an integer string (null when absent or not finite).

    A number beyond the 64-bit integers (fuzzed input: ``1e19``) is shown as that number.
    """
    whole = expr.floor()
    return pl.when(expr.is_finite()).then(
        pl.coalesce(whole.cast(pl.Int64, strict=False).cast(pl.String), whole.cast(pl.String))
    )


_TIMEOUT_SECONDS = r"대기 시간 (\d+)초 초과"


def add_labels(frame: pl.LazyFrame, *, max_wait_ms: float) -> pl.LazyFrame:
    """Add ``kind`` and ``label`` to thread rows in thread order (``thread_id`` set).

    A ``blocked`` response is a concurrency refusal when the next ``a2a.complete`` of the
    same thread and agent pair says ``concurrencyBlocked`` (runtime §3b: that always wins);
    otherwise it is a no-reply in the older wording.
    """
    kind_of = pl.col("type")
    is_resp = kind_of == "a2a.response"
    is_complete = kind_of == "a2a.complete"
    blocked = (pl.col("_outcome") == "blocked") | (pl.col("_textKind") == "blocked")
    refused = (is_resp & blocked & pl.col("_refusedNext")) | (
        is_complete & _D.field("concurrencyBlocked").fill_null(False)
    )
    no_reply = is_resp & (
        (pl.col("_outcome") == "no_reply") | (pl.col("_textKind") == "no_reply") | blocked
    )
    other_outcome = is_resp & (pl.col("_outcome").is_not_null() | pl.col("_textKind").is_not_null())
    turn = _D.field("turn")
    kind = (
        pl.when(refused)
        .then(pl.lit("refused"))
        .when(no_reply)
        .then(pl.lit("no_reply"))
        .when(other_outcome)
        .then(pl.lit("outcome"))
        .when(is_resp & turn.is_not_null())
        .then(pl.lit("turn"))
        .when(is_resp)
        .then(pl.lit("reply"))
        .when(kind_of == "a2a.send")
        .then(pl.lit("message"))
        .when(is_complete)
        .then(pl.lit("complete"))
        .when(kind_of.str.starts_with("a2a."))
        .then(kind_of.str.slice(4))
        .otherwise(kind_of.str.split(".").list.first())
    )
    label = (
        pl.when(refused)
        .then(pl.lit("refused: concurrency limit"))
        .when(no_reply)
        .then(_no_reply_label(max_wait_ms))
        .when(other_outcome)
        .then(
            pl.concat_str(
                pl.lit("outcome: "),
                pl.coalesce(pl.col("_outcome"), pl.col("_textKind")),
                pl.lit(": ") + pl.col("_textReason"),
                ignore_nulls=True,
            )
        )
        .when(is_resp & turn.is_not_null())
        .then(
            pl.concat_str(
                pl.lit("turn "),
                _int_text(turn),
                pl.lit("/") + _int_text(_D.field("maxTurns")),
                pl.lit(" · ended: ") + data_text("terminationReason"),
                ignore_nulls=True,
            )
        )
        .when(is_resp)
        .then(pl.lit("reply"))
        .when(kind_of == "a2a.send")
        .then(_message_label())
        .otherwise(_event_label(kind_of))
    )
    return (
        _with_outcomes(frame)
        .with_columns(kind.alias("kind"), label.alias("label"))
        .drop("_refusedNext", "_outcome", "_textKind", "_reason", "_textReason", "_waitSeconds")
    )


def _with_outcomes(frame: pl.LazyFrame) -> pl.LazyFrame:
    """What a response's outcome says, from its fields or its (Korean) text (runtime §3b).

    ``_refusedNext``: the next ``a2a.complete`` of the thread and agent pair was blocked by
    concurrency; ``_outcome`` / ``_textKind``: the outcome field and the outcome the text
    states; ``_reason`` / ``_textReason``: why no reply came; ``_waitSeconds``: the wait the
    text names.
    """
    is_complete = pl.col("type") == "a2a.complete"
    parsed = outcome_text_expr(pl.coalesce(_D.field("message"), _D.field("replyPreview")))
    text_kind, text_reason = parsed.struct.field("kind"), parsed.struct.field("reason")
    pair_low = pl.min_horizontal(pl.col("sender").fill_null(""), pl.col("receiver").fill_null(""))
    pair_high = pl.max_horizontal(pl.col("sender").fill_null(""), pl.col("receiver").fill_null(""))
    blocked_complete = pl.when(is_complete).then(_D.field("concurrencyBlocked").fill_null(False))
    return frame.with_columns(
        blocked_complete.backward_fill()
        .over("thread_id", pair_low, pair_high)
        .fill_null(False)
        .alias("_refusedNext"),
        data_text("outcome").alias("_outcome"),
        text_kind.alias("_textKind"),
        pl.coalesce(wait_reason_expr(), pl.when(text_kind == "no_reply").then(text_reason)).alias(
            "_reason"
        ),
        text_reason.alias("_textReason"),
        pl.coalesce(_D.field("message"), _D.field("replyPreview"))
        .str.extract(_TIMEOUT_SECONDS, 1)
        .alias("_waitSeconds"),
    )


def _no_reply_label(max_wait_ms: float) -> pl.Expr:
    """``no reply: waited more than 300 s``, ``… run not found``, ``… run error``, …"""
    seconds = pl.coalesce(pl.col("_waitSeconds"), pl.lit(str(math.floor(max_wait_ms / 1000))))
    reason = pl.col("_reason")
    return (
        pl.when(reason == "timeout")
        .then(pl.concat_str(pl.lit("no reply: waited more than "), seconds, pl.lit(" s")))
        .when(reason == "not_found")
        .then(pl.lit("no reply: run not found"))
        .when(reason == "error")
        .then(pl.lit("no reply: run error"))
        .when(reason.is_not_null())
        .then(pl.lit("no reply: ") + reason)
        .otherwise(pl.lit("no reply"))
    )


def _message_label() -> pl.Expr:
    """An ``a2a.send``'s label: its payload type and what it is about, else ``message``."""
    payload_type = data_text("payloadType")
    payload = _D.field("payloadJson")
    payload_status = js_string_expr(payload.str.json_path_match("$.status"))
    # what a payload is about: a delegation's task title, a status report's status and progress
    payload_detail = pl.coalesce(
        js_string_expr(payload.str.json_path_match("$.taskTitle")),
        pl.when(payload_status.is_not_null()).then(
            pl.concat_str(
                payload_status,
                pl.lit(", ") + payload.str.json_path_match("$.progressPercent") + pl.lit(" %"),
                ignore_nulls=True,
            )
        ),
    )
    return (
        pl.when(payload_type.is_not_null())
        .then(
            pl.concat_str(
                words_expr(payload_type), pl.lit(": ") + payload_detail, ignore_nulls=True
            )
        )
        .otherwise(pl.lit("message"))
    )


def _event_label(kind_of: pl.Expr) -> pl.Expr:
    """The label of an event that is neither a response nor a send (complete, retry, …)."""
    return (
        pl.when(kind_of == "a2a.complete")
        .then(
            pl.concat_str(
                pl.lit("exchange complete"),
                pl.lit(" · ")
                + _int_text(_D.field("actualTurns"))
                + pl.when(_D.field("actualTurns") == 1)
                .then(pl.lit(" turn"))
                .otherwise(pl.lit(" turns")),
                pl.lit(" · ended: ") + data_text("terminationReason"),
                ignore_nulls=True,
            )
        )
        .when(kind_of == "a2a.retry")
        .then(
            pl.concat_str(
                pl.lit("retry "),
                _int_text(_D.field("attempt")),
                pl.lit("/") + _int_text(_D.field("maxAttempts")),
                pl.lit(": ") + data_text("errorCode"),
                ignore_nulls=True,
            )
        )
        .when(kind_of == "a2a.spawn")
        .then(pl.lit("spawned a sub-agent"))
        .when(kind_of == "a2a.spawn_result")
        .then(
            pl.concat_str(
                pl.lit("sub-agent run"), pl.lit(": ") + data_text("status"), ignore_nulls=True
            )
        )
        .when(kind_of == "a2a.auto_route")
        .then(pl.lit("auto-routed mention"))
        .otherwise(
            pl.concat_str(
                words_expr(kind_of), pl.lit(": ") + data_text("status"), ignore_nulls=True
            )
        )
    )


# ---------------------------------------------------------------------------------------
