"""Log health: is the log trustworthy, and what would the safety limits have done?

:func:`check` runs every rule of :data:`RULES` and returns one findings frame; each rule is
also a function of its own. A finding names its rule, severity (``info``, ``warning``,
``error``), the conversation / task / work session it concerns, the file and the physical
line numbers of the events involved, and a message.

The safety-limit replays (:func:`replay_guard`) reproduce the reference's sliding-window
loop guard (runtime §5; :class:`a2a_lab.reference.runtime.loop_guard.LoopGuard`): a message is blocked
when the window already holds the maximum and a blocked message is not recorded. Pairs whose
traffic never exceeds the limit in any window are cleared in one vectorised pass; only the
pairs that do are replayed message by message.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Never

import numpy as np
import polars as pl

from a2a_lab._frames import data_text as _text
from a2a_lab._frames import narrow, same_kind, text_format
from a2a_lab._options import reject_removed_keywords
from a2a_lab.analysis._check_a2a import (
    _a2a_sequence,
    _ambiguous,
    ambiguity,
    sequence_frame,
    sequence_rules,
)
from a2a_lab.analysis._check_rules import (
    _CAUSE_COLUMNS,
    _D,
    FINDING_SCHEMA,
    RULES,
    SEVERITIES,
    Rule,
    _cause,
    _findings,
)
from a2a_lab.exchanges import from_agent_expr, to_agent_expr
from a2a_lab.reference.jsstr import js_trim_expr
from a2a_lab.time import Instant, format_time, window_ms
from a2a_lab.time import now_ms as clock_ms

if TYPE_CHECKING:
    from a2a_lab.io import LoadReport

__all__ = [
    "DATA_HASH_COLUMN",
    "FINDING_SCHEMA",
    "LEAN_COLUMNS",
    "LEAN_FIELDS",
    "RULES",
    "SEVERITIES",
    "CheckLimits",
    "CheckOptions",
    "Rule",
    "ambiguity_finding",
    "blocked_findings",
    "check",
    "data_hash",
    "exchange_findings",
    "findings_of",
    "finish_findings",
    "load_findings",
    "replay_guard",
    "rule_parts",
    "run_checks",
    "select_rules",
]

#: Severities, mildest first.
# ---------------------------------------------------------------------------------------
# Task lifecycle
# ---------------------------------------------------------------------------------------

_TERMINAL_TYPES = ("task.completed", "task.cancelled", "task.failed", "task.abandoned")
_TERMINAL_STATUS = ("completed", "cancelled", "canceled", "failed", "abandoned")
# previous lifecycle step -> steps that may follow it (None: the first event of the task)
_STEPS = ("task.started", "task.blocked", "task.resumed")

# runtime §9, both spellings normalised to v0.3 kebab-case
_PROTOCOL_STATES = ("submitted", "working", "input-required", "completed", "failed", "canceled")
_PROTOCOL_INVALID = {
    ("completed", "working"),
    ("completed", "submitted"),
    ("failed", "submitted"),
    ("failed", "working"),
    ("canceled", "working"),
    ("canceled", "submitted"),
}


def _protocol_state(expr: pl.Expr) -> pl.Expr:
    v = js_trim_expr(expr).str.to_lowercase()
    v = (
        pl.when(v.str.starts_with("task_state_"))
        .then(v.str.slice(11).str.replace_all("_", "-"))
        .otherwise(v)
    )
    v = v.replace({"cancelled": "canceled"})
    return pl.when(v.is_in(_PROTOCOL_STATES)).then(v)


def _ended_by(col: str) -> pl.Expr:
    """``col`` of the task's last terminal event before this one (the event that ended it)."""
    return (
        pl.when(pl.col("_terminal"))
        .then(pl.col(col))
        .forward_fill()
        .shift(1)
        .over("task_id")
        .alias(f"_ended_{col}")
    )


def _tasks(events: pl.DataFrame) -> list[pl.LazyFrame]:
    task = _text("taskId")
    status = js_trim_expr(
        pl.coalesce(_D.struct.field("status"), pl.col("top_status"))
    ).str.to_lowercase()
    lf = (
        narrow(
            events.with_columns(pl.col("status").alias("top_status")),
            pl.col("type").str.starts_with("task."),
            ("taskId", "workSessionId", "status", "state"),
            ("file", "line", "type", "event_ms", "event_time", "top_status"),
        )
        .lazy()
        .filter(task.is_not_null())
        .with_columns(task.alias("task_id"), _text("workSessionId").alias("work_session_id"))
        .with_columns(
            (pl.col("type").is_in(_TERMINAL_TYPES) | status.is_in(_TERMINAL_STATUS)).alias(
                "_terminal"
            ),
            _protocol_state(
                pl.coalesce(
                    _D.struct.field("state"), _D.struct.field("status"), pl.col("top_status")
                )
            ).alias("_pstate"),
        )
        .sort("task_id", "event_ms", "_seq")
    )
    lf = lf.with_columns(_ended_by(c) for c in _CAUSE_COLUMNS)
    terminal_before = (
        pl.col("_terminal").cast(pl.Int32).cum_sum().shift(1).over("task_id").fill_null(0) > 0
    )

    after = (
        lf.filter(terminal_before)
        .group_by("task_id", "file", maintain_order=True)
        .agg(
            pl.col("line").alias("lines"),
            pl.col("work_session_id").drop_nulls().first(),
            pl.col("type").first().alias("first_type"),
            *[pl.col(f"_ended_{c}").first() for c in _CAUSE_COLUMNS],
        )
    )
    out = [
        _findings(
            after,
            "task.after_terminal",
            text_format(
                "{} event(s) after the task ended (first: {}); ended by {}",
                pl.col("lines").list.len(),
                pl.col("first_type"),
                _cause("_ended_"),
            ),
        )
    ]
    steps = lf.filter(pl.col("type").is_in(_STEPS)).with_columns(
        pl.col("type").shift(1).over("task_id").alias("_prev"),
        *[pl.col(c).shift(1).over("task_id").alias(f"_prev_{c}") for c in _CAUSE_COLUMNS],
    )
    t, prev = pl.col("type"), pl.col("_prev")
    invalid = (
        ((t == "task.started") & prev.is_not_null())
        | ((t == "task.resumed") & (prev != "task.blocked") & prev.is_not_null())
        | ((t == "task.blocked") & (prev == "task.blocked"))
    )
    bad = steps.filter(invalid).with_columns(pl.concat_list("line").alias("lines"))
    out.append(
        _findings(bad, "task.invalid_transition", text_format("{} after {}", t, _cause("_prev_")))
    )
    ps = lf.filter(pl.col("_pstate").is_not_null()).with_columns(
        pl.col("_pstate").shift(1).over("task_id").alias("_pprev"),
        *[pl.col(c).shift(1).over("task_id").alias(f"_prev_{c}") for c in _CAUSE_COLUMNS],
    )
    pairs = pl.concat_str(pl.col("_pprev"), pl.lit("|"), pl.col("_pstate"))
    bad_p = ps.filter(pairs.is_in([f"{a}|{b}" for a, b in sorted(_PROTOCOL_INVALID)])).with_columns(
        pl.concat_list("line").alias("lines")
    )
    out.append(
        _findings(
            bad_p,
            "task.protocol_state",
            text_format(
                "protocol state {} → {}; {} set by {}",
                pl.col("_pprev"),
                pl.col("_pstate"),
                pl.col("_pprev"),
                _cause("_prev_"),
            ),
        )
    )
    return out


# ---------------------------------------------------------------------------------------
# Safety-limit replays
# ---------------------------------------------------------------------------------------


def _greedy_blocked(ts: np.ndarray, limit: int, window_ms: float) -> np.ndarray:
    """Exact loop-guard semantics on one pair's time-sorted messages: which are blocked."""
    kept: deque[float] = deque()
    blocked = np.zeros(len(ts), dtype=bool)
    for i, now in enumerate(ts):
        while kept and kept[0] < now - window_ms:
            kept.popleft()
        if len(kept) >= limit:
            blocked[i] = True
        else:
            kept.append(now)
    return blocked


def replay_guard(
    events: pl.DataFrame,
    *,
    limit: int = 6,
    window_s: float = 60.0,
    types: tuple[str, ...] = ("a2a.send", "a2a.response"),
    ping_pong_only: bool = True,
) -> pl.DataFrame:
    """Which messages a sliding-window pair guard WOULD have blocked on this log.

    Parameters
    ----------
    events
        An event frame.
    limit, window_s
        At most ``limit`` messages per unordered agent pair in any window of ``window_s``
        (today's loop guard: 6 / 60 s; the library default 10 / 60 s; the collaborate limit
        10 / 300 s). An entry exactly one window old still counts, as in the reference.
    types
        The message events counted.
    ping_pong_only
        Count only the ``a2a.response`` events that are ping-pong turns (carry ``turn``), as
        runtime §5 says for a replay; sends always count.

    Returns
    -------
    pl.DataFrame
        One row per counted message: ``pair`` (``a::b``), ``file``, ``line``, ``event_ms``,
        ``blocked``, in time order per pair.
    """
    counted = pl.col("type").is_in(types)
    if ping_pong_only:
        counted = counted & (
            (pl.col("type") != "a2a.response") | _D.struct.field("turn").is_not_null()
        )
    msgs = (
        narrow(
            events,
            counted,
            ("fromAgent", "toAgent", "senderAgentId", "targetAgentId", "turn"),
            ("file", "line", "type", "event_ms", "agent_id"),
        )
        .lazy()
        .with_columns(from_agent_expr().alias("_f"), to_agent_expr().alias("_t"))
        .filter(pl.col("_f").is_not_null() & pl.col("_t").is_not_null())
        .with_columns(
            pl.concat_str(
                pl.min_horizontal("_f", "_t"), pl.lit("::"), pl.max_horizontal("_f", "_t")
            ).alias("pair")
        )
        .sort("pair", "event_ms", "_seq")
        .select("pair", "file", "line", "event_ms")
        .collect()
    )
    window_ms = window_s * 1000.0
    ms = msgs["event_ms"].to_numpy()
    # the rows are sorted by pair: run ids number the pairs in that order (a Categorical's
    # codes would follow the order Polars' global categories first saw them in)
    pair_codes = msgs["pair"].rle_id().to_numpy()
    # events in [t - window, t] of the same pair, by binary search over (pair, time)
    key = pair_codes.astype(np.float64) * 1e15 + ms
    lo = np.searchsorted(key, key - window_ms, side="left")
    in_window = np.arange(len(ms)) - lo + 1
    heavy_pairs = np.unique(pair_codes[in_window > limit])
    blocked = np.zeros(len(ms), dtype=bool)
    for code in heavy_pairs:
        idx = np.flatnonzero(pair_codes == code)
        blocked[idx] = _greedy_blocked(ms[idx], limit, window_ms)
    return msgs.with_columns(pl.Series("blocked", blocked))


def _guard_findings(
    events: pl.DataFrame, rule: str, limit: int, window_s: float, **kw: object
) -> pl.LazyFrame:
    rep = replay_guard(events, limit=limit, window_s=window_s, **kw)  # type: ignore[arg-type]
    return blocked_findings(rep, rule, limit, window_s)


def blocked_findings(rep: pl.DataFrame, rule: str, limit: int, window_s: float) -> pl.LazyFrame:
    """The findings of guard ``rule`` from :func:`replay_guard`'s rows (a history store
    replays only the messages new lines can change, ``a2a_lab.materialize``): per pair
    and file, the blocked messages in the rows' order."""
    agg = (
        rep.filter(pl.col("blocked"))
        .group_by("pair", "file", maintain_order=True)
        .agg(pl.col("line").alias("lines"), pl.col("event_ms").min().alias("first_ms"))
    )
    return _findings(
        agg,
        rule,
        text_format(
            "{} message(s) of {} would be blocked ({} per {} s); first at {}",
            pl.col("lines").list.len(),
            pl.col("pair"),
            pl.lit(limit),
            pl.lit(window_s),
            # a time beyond the 64-bit integers (fuzzed ts 1e19) has no date: the ms as logged
            pl.coalesce(
                format_time(
                    pl.col("first_ms").cast(pl.Int64, strict=False).cast(pl.Datetime("ms")),
                    "%Y-%m-%dT%H:%M:%S%.3fZ",
                ),
                text_format("{} ms", pl.col("first_ms")),
            ),
        ),
    )


def _relay_depth(events: pl.DataFrame, max_depth: int) -> pl.LazyFrame:
    depth = _D.struct.field("depth")
    rows = (
        narrow(
            events,
            pl.col("type").str.starts_with("a2a.") & (depth > max_depth),
            ("depth", "conversationId", "workSessionId"),
        )
        .lazy()
        .with_columns(
            _text("conversationId").alias("conversation_id"),
            _text("workSessionId").alias("work_session_id"),
            pl.concat_list("line").alias("lines"),
            depth.alias("_depth"),
        )
    )
    return _findings(
        rows,
        "guard.relay_depth",
        text_format(
            "relay depth {} > {}",
            # a depth beyond the 64-bit integers (fuzzed: 1e19) is shown as that number
            pl.coalesce(
                pl.col("_depth").cast(pl.Int64, strict=False).cast(pl.String),
                pl.col("_depth").cast(pl.String),
            ),
            pl.lit(max_depth),
        ),
    )


# ---------------------------------------------------------------------------------------
# Clock and identity
# ---------------------------------------------------------------------------------------


def _clock(events: pl.DataFrame, now_ms: float, tolerance_ms: float) -> list[pl.LazyFrame]:
    lf = events.lazy()
    zero = lf.filter(pl.col("event_ms") == 0).with_columns(pl.concat_list("line").alias("lines"))
    future = lf.filter(pl.col("event_ms") > now_ms + tolerance_ms).with_columns(
        pl.concat_list("line").alias("lines")
    )
    return [
        _findings(zero, "clock.zero_ts", text_format("{} has no usable timestamp", pl.col("type"))),
        _findings(
            future,
            "clock.future_ts",
            text_format(
                "{} at {} is in the future",
                pl.col("type"),
                # beyond Date's range (±8.64e15 ms) there is no instant: the ms as logged
                pl.coalesce(
                    format_time(pl.col("event_time"), "%Y-%m-%dT%H:%M:%SZ"),
                    text_format("{} ms", pl.col("event_ms")),
                ),
            ),
        ),
    ]


#: The column of a lean event frame holding :func:`data_hash` of the event's full ``data``.
_DATA_HASH = "_data_hash"
DATA_HASH_COLUMN = _DATA_HASH
#: The ``data`` fields the rules other than the A2A sequence read (a lean event frame:
#: ``a2a_lab.analysis._check_log``, and a history store's, ``a2a_lab.materialize``).
LEAN_FIELDS = (
    "taskId",
    "workSessionId",
    "status",
    "state",
    "fromAgent",
    "toAgent",
    "senderAgentId",
    "targetAgentId",
    "turn",
    "depth",
    "conversationId",
    "parentConversationId",
)
#: The top-level columns they read.
LEAN_COLUMNS = ("file", "line", "type", "agent_id", "event_ms", "event_time", "status")


def data_hash() -> pl.Expr:
    """What makes two events copies of one: the hash of their type, agent, time and data."""
    return pl.struct("type", "agent_id", "event_ms", "data").hash()


def _identity(events: pl.DataFrame) -> list[pl.LazyFrame]:
    # candidates share type, agent and time (cheap); only they are compared on their data
    cheap = pl.struct("type", "agent_id", "event_ms").hash()
    candidates = events.filter(cheap.is_duplicated())
    dups = (
        candidates.lazy()
        # a lean frame (``a2a_lab.analysis._check_log``) carries the hash of its full ``data``
        .with_columns(
            pl.col(_DATA_HASH).alias("_k")
            if _DATA_HASH in events.columns
            else data_hash().alias("_k")
        )
        .filter(pl.col("_k").is_duplicated())
        .group_by("_k", maintain_order=True)
        .agg(
            pl.col("file").first(),
            pl.col("line").alias("lines"),
            pl.col("type").first(),
            _text("conversationId").first().alias("conversation_id"),
        )
    )
    out = [
        _findings(
            dups,
            "identity.duplicate_event",
            text_format("{} copies of one {} event", pl.col("lines").list.len(), pl.col("type")),
        )
    ]
    conv, parent = _text("conversationId"), _text("parentConversationId")
    a, b = from_agent_expr(), to_agent_expr()
    a2a = narrow(
        events,
        pl.col("type").str.starts_with("a2a."),
        (
            "conversationId",
            "parentConversationId",
            "fromAgent",
            "toAgent",
            "senderAgentId",
            "targetAgentId",
        ),
        ("file", "line", "type", "agent_id"),
    ).lazy()
    pairs = (
        a2a.filter(
            conv.is_not_null()
            & a.is_not_null()
            & b.is_not_null()
            & (parent.is_null() | (parent != conv))
        )
        .with_columns(
            conv.alias("conversation_id"),
            pl.concat_str(pl.min_horizontal(a, b), pl.lit("::"), pl.max_horizontal(a, b)).alias(
                "_pair"
            ),
        )
        .group_by("conversation_id")
        .agg(
            pl.col("_pair").unique().sort().alias("_pairs"),
            pl.col("file").first(),
            pl.col("line").sort().alias("lines"),
        )
        .filter(pl.col("_pairs").list.len() > 1)
    )
    out.append(
        _findings(
            pairs,
            "identity.conversation_reused",
            text_format(
                "used by {} agent pairs: {}",
                pl.col("_pairs").list.len(),
                pl.col("_pairs").list.join(", "),
            ),
        )
    )
    return out


# ---------------------------------------------------------------------------------------
# all rules
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CheckLimits:
    """The limits :func:`check` replays and the clock skew it tolerates.

    The defaults are today's gateway (runtime §5): the loop guard's 6 messages per 60 s
    per agent pair, the collaborate limit's 10 calls per 5 min, relay depth 5.
    :func:`dataclasses.replace` makes a variant.

    Attributes
    ----------
    future_tolerance_s
        How far past ``now`` an event may lie before ``clock.future_ts`` flags it.
    loop_limit, loop_window_s
        The loop guard replayed (``guard.loop``).
    collaborate_limit, collaborate_window_s
        The collaborate limit replayed (``guard.collaborate``).
    max_depth
        The relay depth above which the guard blocks (``guard.relay_depth``).

    Examples
    --------
    >>> CheckLimits(loop_limit=3)
    CheckLimits(future_tolerance_s=300.0, loop_limit=3, loop_window_s=60.0, \
collaborate_limit=10, collaborate_window_s=300.0, max_depth=5)
    """

    future_tolerance_s: float = 300.0
    loop_limit: int = 6
    loop_window_s: float = 60.0
    collaborate_limit: int = 10
    collaborate_window_s: float = 300.0
    max_depth: int = 5


@same_kind(collect=True)
def check(
    events: pl.DataFrame,
    limits: CheckLimits | None = None,
    *,
    now: Instant | None = None,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    since: Instant | None = None,
    until: Instant | None = None,
    report: LoadReport | None = None,
    **removed: Never,
) -> pl.DataFrame:
    """Run the health rules on an event frame and return the findings.

    Parameters
    ----------
    events
        An event frame (loaded or enriched).
    limits
        The safety limits replayed and the clock skew tolerated (:class:`CheckLimits`);
        default: today's gateway.
    now
        The clock for ``clock.future_ts``: ISO string, datetime or epoch ms, naive = UTC
        (:func:`a2a_lab.time.to_epoch_ms`); default: the wall clock, the package's one
        clock (:func:`a2a_lab.time.now_ms`), as the report and every CLI command.
    select, ignore
        Run only the rule ids of ``select`` (default: all of :data:`RULES`), minus those of
        ``ignore``. An id ending in ``.`` or ``*`` selects a family (``"guard."``).
    since, until
        Check only the events whose ``event_ms`` lies in ``[since, until]`` (ISO string,
        datetime or epoch ms; naive = UTC).
    report
        The :class:`a2a_lab.io.LoadReport` of the load; when given, the ``load.*`` rules
        (:func:`load_findings`) turn an empty source and rejected lines into errors.
    **removed
        None accepted: a limit passed as a keyword (``loop_limit=…``, the form before
        :class:`CheckLimits`) raises a ``TypeError`` naming it.

    Returns
    -------
    pl.DataFrame
        :data:`FINDING_SCHEMA`, sorted by severity (errors first), rule, file and line.
    """
    reject_removed_keywords("check", removed, CheckLimits, parameter="limits")
    if limits is None:
        limits = CheckLimits()
    elif not isinstance(limits, CheckLimits):
        raise TypeError(f"limits must be a CheckLimits, not {type(limits).__name__}")
    opts = CheckOptions(
        limits=limits, now=now, select=select, ignore=ignore, since=since, until=until
    )
    return run_checks(events, opts, report)


@dataclass(frozen=True)
class CheckOptions:
    """Everything :func:`check` takes but the events and the load report: one run's settings.

    :func:`a2a_lab.analysis._check_log.log_check` (a log read a bucket of conversations at a
    time) and :func:`run_checks` take it whole.
    """

    limits: CheckLimits = CheckLimits()
    now: Instant | None = None
    select: list[str] | None = None
    ignore: list[str] | None = None
    since: Instant | None = None
    until: Instant | None = None


def run_checks(
    events: pl.DataFrame,
    opts: CheckOptions,
    report: LoadReport | None = None,
    a2a: list[pl.LazyFrame] | None = None,
) -> pl.DataFrame:
    """:func:`check` with its settings in ``opts``; ``a2a``: the A2A sequence findings when
    already computed (``a2a_lab.analysis._check_log``, a bucket of conversations at a time),
    else they are computed from ``events``."""
    events = _in_check_window(events, opts)
    parts = _a2a_sequence(events) if a2a is None else a2a
    return findings_of(parts + rule_parts(events, opts, report, windowed=True), opts)


def _in_check_window(events: pl.DataFrame, opts: CheckOptions) -> pl.DataFrame:
    lo, hi = window_ms(opts.since, opts.until)
    if lo is not None:
        events = events.filter(pl.col("event_ms") >= lo)
    if hi is not None:
        events = events.filter(pl.col("event_ms") <= hi)
    return events


def rule_parts(
    events: pl.DataFrame,
    opts: CheckOptions,
    report: LoadReport | None = None,
    *,
    windowed: bool = False,
) -> list[pl.LazyFrame]:
    """The findings of every rule but the A2A sequence (tasks, guards, relay depth, clock,
    identity, and the load's when ``report`` is given), unsorted; :func:`findings_of`
    merges them with the A2A sequence's. ``windowed``: ``events`` are already cut to
    ``opts``'s window."""
    if not windowed:
        events = _in_check_window(events, opts)
    limits = opts.limits
    now_ms = clock_ms(opts.now)
    parts: list[pl.LazyFrame] = []
    parts += _tasks(events)
    parts.append(_guard_findings(events, "guard.loop", limits.loop_limit, limits.loop_window_s))
    parts.append(
        _guard_findings(
            events,
            "guard.collaborate",
            limits.collaborate_limit,
            limits.collaborate_window_s,
            types=("a2a.send",),
            ping_pong_only=False,
        )
    )
    parts.append(_relay_depth(events, limits.max_depth))
    parts += _clock(events, now_ms, limits.future_tolerance_s * 1000.0)
    parts += _identity(events)
    if report is not None:
        parts.append(load_findings(report).lazy())
    return parts


def findings_of(parts: list[pl.LazyFrame], opts: CheckOptions) -> pl.DataFrame:
    """The findings of ``parts`` (the A2A sequence's first, then :func:`rule_parts`) of the
    rules ``opts`` selects, sorted by severity (errors first), rule, file and line."""
    return finish_findings(parts, select_rules(opts.select, opts.ignore))


def finish_findings(parts: list[pl.LazyFrame], chosen: set[str]) -> pl.DataFrame:
    """The findings of the rules ``chosen`` among ``parts``, in :func:`check`'s order.

    What :func:`run_checks` does last; a history store's check
    (``a2a_lab.materialize``), whose findings were mostly made at ingest, does it too.
    """
    found = pl.concat(
        [p.select(list(FINDING_SCHEMA)).cast(FINDING_SCHEMA) for p in parts]
    ).collect()
    found = found.filter(pl.col("rule").is_in(sorted(chosen)))
    sev = pl.col("severity").replace_strict(
        {s: i for i, s in enumerate(SEVERITIES)}, return_dtype=pl.Int8
    )
    return found.sort(-sev, "rule", "file", pl.col("lines").list.first(), nulls_last=True)


def exchange_findings(ex: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The A2A sequence findings of :func:`a2a_lab.exchange_events` of whole conversations.

    Returns the findings (:data:`FINDING_SCHEMA`) but the ambiguity summary, and what the
    summary is made of (:func:`ambiguity_finding`), per conversation id: its first
    ambiguous exchanges with their ``seq``, and the counts ``_n`` (ambiguous) and ``_all``
    (exchanges).
    Of several sets of whole conversations, the summary is that of all of them when the
    first exchanges are ordered by their first event in the load's order.
    """
    seq = sequence_frame(ex)
    found = pl.collect_all(
        [p.select(list(FINDING_SCHEMA)).cast(FINDING_SCHEMA) for p in sequence_rules(seq)]
    )
    head, count = pl.collect_all(ambiguity(seq, by_conversation=True))
    return pl.concat(found), head, count


def ambiguity_finding(heads: pl.DataFrame, counts: pl.DataFrame) -> pl.LazyFrame:
    """The ``a2a.ambiguous_exchanges`` finding of :func:`exchange_findings`' ``heads`` (their
    rows in the load's order) and ``counts`` (rows summed)."""
    return _ambiguous(heads.lazy(), counts.select("_n", "_all").sum().lazy())


def select_rules(select: list[str] | None = None, ignore: list[str] | None = None) -> set[str]:
    """The rule ids that ``select`` minus ``ignore`` name.

    An id ending in ``.`` or ``*`` names a family (``"guard."``, ``"clock.*"``).

    Raises
    ------
    ValueError
        An id or family that names no rule of :data:`RULES`.
    """

    def expand(ids: list[str], field: str) -> set[str]:
        out: set[str] = set()
        for rid in ids:
            family = rid.endswith(("*", "."))
            prefix = rid.rstrip("*")
            hits = {r for r in RULES if r.startswith(prefix)} if family else {rid} & set(RULES)
            if not hits:
                raise ValueError(f"{field}: unknown rule {rid!r}")
            out |= hits
        return out

    chosen = set(RULES) if select is None else expand(list(select), "select")
    return chosen - expand(list(ignore or ()), "ignore")


def load_findings(report: LoadReport) -> pl.DataFrame:
    """The ``load.*`` findings of a load report: an empty source, rejected lines.

    Parameters
    ----------
    report
        A :class:`a2a_lab.io.LoadReport` (``events``, ``files`` and ``rejects``).

    Returns
    -------
    pl.DataFrame
        :data:`FINDING_SCHEMA`: one ``load.empty`` error when the report holds no event, one
        ``load.rejects`` error per file and reason (its lines, the count in the message).
    """
    rows: list[dict[str, object]] = []
    if int(report.events) == 0:
        files = list(report.files)
        rows.append(
            {
                "rule": "load.empty",
                "severity": "error",
                "file": files[0] if len(files) == 1 else None,
                "lines": [],
                "message": f"no events in {len(files)} file(s)",
            }
        )
    rejects: pl.DataFrame = report.rejects
    if rejects.height:
        grouped = rejects.group_by("file", "reason", maintain_order=True).agg(
            pl.col("line").sort().alias("lines")
        )
        for file, reason, lines in grouped.iter_rows():
            rows.append(
                {
                    "rule": "load.rejects",
                    "severity": "error",
                    "file": file,
                    "lines": lines,
                    "message": f"{len(lines)} line(s) rejected: {reason}",
                }
            )
    return pl.DataFrame(rows, schema=FINDING_SCHEMA)
