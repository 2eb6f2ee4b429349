"""First outcomes of A2A exchanges that first come first served does not decide
(:func:`untangle`, a step of :func:`a2a_lab.exchanges.exchange_events`).

The target's conversation lane runs one message at a time, so the first outcomes of a
direction come in the order of their sends (a rank join pairs them). A flow whose
``agent.wait`` was retried, or whose wait call failed, logs its outcome whenever the wait
gives up or resumes, so it may come out of that order. Its ``a2a.retry`` events carry the
send's ``runId`` (they are placed already); what they say bounds the outcome:

- the retried wait resumes only after the backoff: the outcome comes no earlier than the
  last retry plus its ``backoffMs``;
- a retry of a run-level error (``rate_limit``, ``server_overload``, ``error_unknown``: the
  wait returned ``status: "error"``, runtime §4) means the run ended in error, and a wait
  on it returns that error again: the outcome is a no-reply with ``waitStatus: "error"``.

And the lane still orders the runs: an outcome that ends with the run (a reply, a
run-level no-reply) comes no earlier than that of a plain (never retried) exchange sent
before it, and an exchange has one as soon as a later exchange's run has ended while its
wait was on: a plain exchange always, a retried one once its wait resumed (its bound; a
retried flow without an outcome then would have a run still going behind a finished one).
Only a no-reply that a failed wait call ended (not ``timeout``, not ``error``) is free of
that order.

Where the rank join's pairing touches such an exchange, the overlapping exchanges of the
direction (a component) are solved exactly: every pairing of their outcomes that keeps
those rules is collected, the most likely kept (least squared lags past each bound), and
an exchange is ambiguous only when another consistent pairing gives it another outcome.
"""

from __future__ import annotations

from typing import Any, Final

import polars as pl

from a2a_lab._exchange_tails import DIRECTION as _DIR
from a2a_lab._exchange_tails import SLACK_MS as _SLACK_MS

__all__ = ["untangle"]

#: ``errorCode`` of a retry of a wait that returned ``status: "error"`` (runtime §4).
RUN_ERROR_CODES: Final = ("rate_limit", "server_overload", "error_unknown")
#: How many search steps one component may take before the matcher flags it whole.
_SEARCH_STEPS: Final = 20_000
#: How many consistent pairings one component collects before it flags it whole.
_MAX_PAIRINGS: Final = 500

#: One exchange of a component: (exchange, send ms, lower bound ms, retried, run error).
_X = tuple[int, float, float, bool, bool]
#: One outcome of a component: (seq, ms, kind, reason, waitStatus, the rank join's exchange).
_E = tuple[int, float, str, str | None, str | None, int]


def _bounds(fifo: pl.DataFrame, retries: pl.DataFrame) -> pl.DataFrame:
    """Per exchange of ``fifo``'s directions: ``_bound`` (the last retry plus its backoff),
    ``_retried`` and ``_run_error`` (a retry of a run-level error)."""
    if retries.height == 0:
        return pl.DataFrame(
            schema={
                **dict.fromkeys(_DIR, pl.String),
                "exchange": pl.Int64,
                "_bound": pl.Float64,
                "_run_error": pl.Boolean,
            }
        )
    return retries.group_by(*_DIR, "exchange").agg(
        (pl.col("event_ms") + pl.col("_backoff").fill_null(0.0)).max().alias("_bound"),
        pl.col("_code").is_in(RUN_ERROR_CODES).any().alias("_run_error"),
    )


def _components(
    fifo: pl.DataFrame, x: pl.DataFrame, loose: pl.DataFrame, bounds: pl.DataFrame
) -> pl.DataFrame:
    """The open exchanges of the components that hold a loose exchange: per direction, the
    exchanges whose spans (send .. paired outcome; no outcome yet: the end of the log)
    overlap, chained in send order. Returns the exchanges with ``_send_ms, _comp`` and
    their retry ``_bound`` and ``_run_error``."""
    spans = (
        x.select(*_DIR, "exchange", "_send_ms")
        .join(
            fifo.select(*_DIR, "exchange", pl.col("event_ms").alias("_end")),
            on=[*_DIR, "exchange"],
            how="left",
            nulls_equal=True,
        )
        .join(
            loose.with_columns(pl.lit(True).alias("_loose")),
            on=[*_DIR, "exchange"],
            how="left",
            nulls_equal=True,
        )
        .join(bounds, on=[*_DIR, "exchange"], how="left", nulls_equal=True)
        .sort([*_DIR, "_send_ms", "exchange"], nulls_last=True)
        .with_columns(pl.col("_end").fill_null(float("inf")).cum_max().over(_DIR).alias("_reach"))
    )
    # a new component starts at a send after every earlier span has ended
    spans = spans.with_columns(
        (pl.col("_send_ms") > pl.col("_reach").shift(1).over(_DIR))
        .fill_null(True)
        .cum_sum()
        .over(_DIR)
        .alias("_comp")
    )
    hot = spans.group_by(*_DIR, "_comp").agg(pl.col("_loose").any()).filter("_loose")
    return spans.join(hot.select(*_DIR, "_comp"), on=[*_DIR, "_comp"], nulls_equal=True)


def untangle(
    fifo: pl.DataFrame, retries: pl.DataFrame, x: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Re-pair the first outcomes the retried flows and failed wait calls put in question.

    ``fifo``: the rank join's pairs (``_seq, exchange, _amb`` with the direction,
    ``event_ms, _kind, _reason, _status``); ``retries``: the placed retries (direction,
    ``exchange, event_ms, _backoff, _code``); ``x``: the open sends (direction, ``exchange,
    _send_ms``). Returns ``fifo`` with ``exchange`` and ``_amb`` settled for the components
    that hold such a flow (see the module notes), and the exchanges (direction,
    ``exchange``) another consistent pairing changes.
    """
    amb_schema = {**dict.fromkeys(_DIR, pl.String), "exchange": pl.Int64}
    none = pl.DataFrame(schema=amb_schema)
    bounds = _bounds(fifo, retries)
    call_ended = (
        (pl.col("_kind") == "no_reply")
        & ~pl.col("_reason").is_in(["timeout"]).fill_null(False)
        & (pl.col("_status").fill_null("") != "error")
    )
    loose = pl.concat(
        [
            bounds.select(*_DIR, "exchange"),
            fifo.filter(call_ended).select(*_DIR, "exchange"),
        ]
    ).unique()
    if loose.height == 0:
        return fifo, none
    spans = _components(fifo, x, loose, bounds)
    if spans.height == 0:
        return fifo, none
    events = fifo.join(
        spans.select(*_DIR, "exchange", "_comp"), on=[*_DIR, "exchange"], nulls_equal=True
    ).sort("event_ms", "_seq")
    xs_of: dict[tuple[object, ...], list[_X]] = {}
    for row in spans.iter_rows(named=True):
        key = (*(row[c] for c in _DIR), row["_comp"])
        bound = max(row["_send_ms"], (row["_bound"] or row["_send_ms"]) - _SLACK_MS)
        retried = row["_bound"] is not None
        xs_of.setdefault(key, []).append(
            (row["exchange"], row["_send_ms"], bound, retried, bool(row["_run_error"]))
        )
    evs_of: dict[tuple[object, ...], list[_E]] = {}
    for row in events.iter_rows(named=True):
        key = (*(row[c] for c in _DIR), row["_comp"])
        evs_of.setdefault(key, []).append(
            (
                row["_seq"],
                row["event_ms"],
                row["_kind"],
                row["_reason"],
                row["_status"],
                row["exchange"],
            )
        )
    new: list[tuple[int, int, bool]] = []
    amb: list[tuple[object, ...]] = []
    for key, evs in evs_of.items():
        pairs, flagged = _solve(xs_of[key], evs)
        new += pairs
        amb += [(*key[:3], xn) for xn in flagged]
    fixed = pl.DataFrame(
        new, schema={"_seq": pl.UInt32, "_x": pl.Int64, "_a": pl.Boolean}, orient="row"
    )
    settled = (
        fifo.join(fixed, on="_seq", how="left")
        .with_columns(
            pl.coalesce("_x", "exchange").alias("exchange"),
            pl.when(pl.col("_a").is_not_null()).then("_a").otherwise("_amb").alias("_amb"),
        )
        .drop("_x", "_a")
    )
    return settled, pl.DataFrame(amb, schema=amb_schema, orient="row")


class _Pairs:
    """The state of a pairing search of one component: ``held`` maps an exchange's index
    (in ``xs``, send order) to the index of the outcome it holds and whether that outcome
    ended its run."""

    def __init__(self, xs: list[_X], evs: list[_E]) -> None:
        self.xs, self.evs = xs, evs
        self.plain = [not retried for _xn, _s, _b, retried, _r in xs]
        self.held: dict[int, tuple[int, bool]] = {}

    @staticmethod
    def run_bound(e: _E) -> bool:
        """Whether outcome ``e`` ended with the target's run (not a failed wait call)."""
        kind, reason, status = e[2], e[3], e[4]
        return kind != "no_reply" or reason == "timeout" or status == "error"

    def fits(self, i: int, e: _E) -> bool:
        """Whether exchange ``i`` can take outcome ``e`` now."""
        _xn, _sent, bound, _retried, run_error = self.xs[i]
        if e[1] < bound or (run_error and not (e[2] == "no_reply" and e[4] == "error")):
            return False
        if not self.run_bound(e):
            return True
        # the lane's order: no later-sent exchange holds an outcome that ended its run
        # earlier, unless this one's wait was away then (the outcome comes as the retried
        # wait resumes, at its bound: after it the wait is on again, as a plain one's)
        if not self.plain[i] and e[1] <= bound + 2 * _SLACK_MS:
            return True
        return not any(j > i and rb for j, (_k, rb) in self.held.items())

    def complete(self) -> bool:
        """Whether the pairing is whole: an exchange has an outcome once a later one's run
        has ended while its wait was on. The lane ran its run first, and a waiting flow
        returns as its run ends; a retried one's wait is on again from its bound (the
        retry's backoff over), so it is exempt only up to then."""
        held, xs, evs = self.held, self.xs, self.evs
        ended = [(j, evs[k][1]) for j, (k, rb) in held.items() if rb]
        if not ended:
            return True
        last_rb = max(j for j, _ms in ended)
        for j in range(last_rb):
            if j in held:
                continue
            if self.plain[j]:
                return False
            on_from = xs[j][2] + 2 * _SLACK_MS
            if any(i > j and ms > on_from for i, ms in ended):
                return False
        return True


def _solve(xs: list[_X], evs: list[_E]) -> tuple[list[tuple[int, int, bool]], set[int]]:
    """Every consistent pairing of one component's outcomes ``evs`` (in log order) with its
    exchanges ``xs`` (in send order); ``(seq, exchange, ambiguous)`` per outcome of the
    most likely one, and the exchanges another consistent pairing changes. When none is
    consistent, or the search hits its budget, the rank join's pairing stands, flagged
    whole. Depth first in log order, without recursion (a node per outcome: [its index,
    the cost so far, the next exchange to try])."""
    n = len(evs)
    state = _Pairs(xs, evs)
    held = state.held
    sols: list[tuple[float, tuple[int, ...]]] = []
    pick: list[int] = []

    def search() -> bool:
        """Collect the pairings into ``sols``; whether a budget stopped it."""
        steps = 1
        if n == 0:
            if state.complete():
                sols.append((0.0, ()))
            return False
        stack: list[list[Any]] = [[0, 0.0, 0]]
        while stack:
            node = stack[-1]
            k, cost, start = node
            if len(pick) > k:
                del held[pick.pop()]
            e = evs[k]
            free = (i for i in range(start, len(xs)) if i not in held and state.fits(i, e))
            i = next(free, None)
            if i is None:
                stack.pop()
                continue
            node[2] = i + 1
            held[i] = (k, state.run_bound(e))
            pick.append(i)
            lag = (e[1] - xs[i][2]) / 1000.0
            steps += 1
            if steps > _SEARCH_STEPS:
                return True
            if k + 1 < n:
                stack.append([k + 1, cost + lag * lag, 0])
                continue
            if state.complete():
                sols.append((cost + lag * lag, tuple(pick)))
            if len(sols) > _MAX_PAIRINGS:
                return True
        return False

    return pairing_answer(xs, evs, sols, search())


def pairing_answer(
    xs: list[_X], evs: list[_E], sols: list[tuple[float, tuple[int, ...]]], capped: bool
) -> tuple[list[tuple[int, int, bool]], set[int]]:
    """What :func:`_solve` returns from the pairings ``sols`` (cost, exchange index per
    outcome) a search collected, and whether a budget stopped it."""
    if capped or not sols:
        return [(e[0], e[5], True) for e in evs], {xn for xn, *_r in xs}
    best = min(sols, key=lambda s: (s[0], s[1]))[1]
    out = []
    flagged: set[int] = set()
    for k, e in enumerate(evs):
        taken = {s[1][k] for s in sols}
        out.append((e[0], xs[best[k]][0], len(taken) > 1))
        if len(taken) > 1:
            flagged.update(xs[i][0] for i in taken)
    return out, flagged
