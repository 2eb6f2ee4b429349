"""``check`` of a history store from tables made at ingest (issue 24).

``a2a-lab check STORE`` used to load every stored event (the 63-field ``data`` struct
included) and run every rule: 30 CPU s at 860,000 events. The rules fall in three kinds,
each kept as its cost and dependencies allow:

* the A2A sequence rules and the ambiguity summary read the matched exchanges of whole
  conversations: :data:`CHECK_EXCHANGES` holds their findings and :data:`CHECK_AMBIGUOUS`
  the first ambiguous exchanges and the counts of each conversation id, made from the
  same matching as the conversations table; new lines match again only the conversation
  ids they touch;
* the other rules but one (tasks, guards, relay depth, zero times, duplicates, reused
  ids) read a lean frame of every event (:data:`CHECK_LEAN`: the few columns and
  ``data`` fields they read, and the hash of the full ``data``, made once per event); their
  findings (:data:`CHECK_EVENTS`) are made again from it when events arrive, for the
  limits recorded (other limits are another table, built again, and the report says so);
* ``clock.future_ts`` depends on the clock of the query: it reads the lean frame's events
  past that clock, and ``load.*`` the store's report (:func:`a2a_lab.io.store_report`).

:func:`stored_check` gives the findings ``check`` of the log gives (the same rows, in
the same order) when the tables are current, for the whole log (no time window) and the
limits they were made with; otherwise None, and the caller checks the loaded events.
The findings name files as the store names them when made; a store whose files were
renamed or are read in another order builds the tables again.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from a2a_lab.analysis.checks import (
    DATA_HASH_COLUMN,
    LEAN_COLUMNS,
    LEAN_FIELDS,
    CheckLimits,
    CheckOptions,
    ambiguity_finding,
    data_hash,
    exchange_findings,
    finish_findings,
    load_findings,
    rule_parts,
    run_checks,
    select_rules,
)
from a2a_lab.event_rules import from_agent_expr, to_agent_expr
from a2a_lab.io import LoadResult, StoreSnapshot, TableUpdate, store_report
from a2a_lab.materialize._names import (
    CHECK_AMBIGUOUS,
    CHECK_COUNTS,
    CHECK_EVENTS,
    CHECK_EXCHANGES,
    CHECK_LEAN,
)
from a2a_lab.reference.jsstr import js_string_expr
from a2a_lab.time import now_ms as clock_ms

#: The top-level columns the lean rules read (``file``: ``source`` until read).
_LEAN_COLUMNS = tuple(c for c in LEAN_COLUMNS if c != "file")


#: The rules made from the lean frame at ingest.
EVENT_RULES = ("task.", "guard.", "clock.zero_ts", "identity.")
#: The rules made from the matched exchanges.
EXCHANGE_RULES = (
    "a2a.orphan_response",
    "a2a.complete_without_send",
    "a2a.missing_complete",
    "a2a.turns_out_of_order",
    "a2a.event_after_complete",
)


def lean_rows(new: pl.LazyFrame) -> pl.LazyFrame:
    """The lean rows of stored events ``new`` (``source`` and the frame's columns)."""
    data = pl.col("data")
    narrow = pl.struct([data.struct.field(f) for f in LEAN_FIELDS])
    return new.select(
        "source",
        *_LEAN_COLUMNS,
        pl.when(data.is_not_null()).then(narrow).alias("data"),
        data_hash().alias(DATA_HASH_COLUMN),
    )


def lean_in_load_order(snap: StoreSnapshot, lean: pl.LazyFrame) -> pl.DataFrame:
    """The lean rows with their ``file``, in the load's order (time, then reading order)."""
    # one sort by time, then reading order: a stable sort by time of the rows in reading
    # order ((file rank, line) is unique), with one gather of the rows instead of two
    return snap.named(lean).sort("event_ms", "_rank", "line").drop("_rank", "source").collect()


#: Lean rows per class when :data:`CHECK_EVENTS` is made again: a class is what one run of
#: the rules holds (issue 24: the whole lean frame of 2.5 M events in one month held 2 GB).
CLASS_ROWS = 500_000


def _field(name: str) -> pl.Expr:
    # the rules' key of a ``data`` field (``asString``: JS-trimmed, null when blank)
    return js_string_expr(pl.col("data").struct.field(name))


def _rule_groups(
    lean: pl.LazyFrame, limits: CheckLimits
) -> list[tuple[tuple[str, ...], pl.Expr, pl.Expr | None]]:
    """The event rules by the rows they read and the key whose groups they never split:
    ``(rules, rows, key)``; a group without key reads few rows (kept whole)."""
    a2a, t = pl.col("type").str.starts_with("a2a."), pl.col("type")
    f, to = from_agent_expr(), to_agent_expr()
    pair = pl.concat_str(pl.min_horizontal(f, to), pl.lit("::"), pl.max_horizontal(f, to))
    cheap = pl.struct("type", "agent_id", "event_ms").hash()
    # copies share type, agent and time: the rows sharing that hash, found from three
    # columns (a filter by is_duplicated would gather every column of every row first)
    shared = lean.select(cheap.alias("h")).filter(pl.col("h").is_duplicated()).collect()
    return [
        (("task.",), t.str.starts_with("task."), _field("taskId")),
        (("guard.loop", "guard.collaborate"), t.is_in(["a2a.send", "a2a.response"]), pair),
        (("identity.conversation_reused",), a2a, _field("conversationId")),
        # the rows these rules flag, or their candidates
        (
            ("guard.relay_depth",),
            a2a & (pl.col("data").struct.field("depth") > limits.max_depth),
            None,
        ),
        (("clock.zero_ts",), pl.col("event_ms") == 0, None),
        (("identity.duplicate_event",), cheap.is_in(shared.get_column("h").implode()), None),
    ]


def update_event_findings(update: TableUpdate, lean: pl.LazyFrame, limits: CheckLimits) -> None:
    """Make :data:`CHECK_EVENTS` again from the whole lean table ``lean``.

    Each rule reads only its rows, a hash class of its key (task, agent pair, conversation
    id) at a time: about :data:`CLASS_ROWS` lean rows are held at once, whatever the
    density in time; every group of a rule lies in one class, so the findings are those
    of the whole frame.
    """
    snap = update.snapshot
    k = max(1, -(-snap.events // CLASS_ROWS))
    found: list[pl.LazyFrame] = []
    for rules, rows, key in _rule_groups(lean, limits):
        names = select_rules(list(rules))
        classes = (
            [rows]
            if key is None or k == 1
            else [rows & key.is_not_null() & (key.hash(seed=0) % k == i) for i in range(k)]
        )
        for where in classes:
            events = lean_in_load_order(snap, lean.filter(where))
            opts = CheckOptions(limits=limits, select=list(rules))
            found.append(finish_findings(rule_parts(events, opts), names).lazy())
    update.drop(CHECK_EVENTS)
    update.write(CHECK_EVENTS, finish_findings(found, select_rules(list(EVENT_RULES))))


def exchange_tables(ex: pl.DataFrame, frame: pl.DataFrame) -> list[pl.DataFrame]:
    """The three exchange tables' rows of one batch of whole conversations.

    ``ex`` is :func:`a2a_lab.exchange_events` of ``frame`` (the batch's events in the
    load's order, with ``_rank``): each first ambiguous exchange gets its first event's
    place in the load's order (``_ms``, ``_rank``, ``_line``), which orders them across
    batches as a whole load's ``seq`` does.
    """
    found, heads, counts = exchange_findings(ex)
    place = frame.select(
        pl.col("event_ms").alias("_ms"),
        pl.col("_rank").alias("_frank"),
        pl.col("line").alias("_line"),
    )
    heads = pl.concat(
        [heads.drop("seq"), place[heads["seq"].cast(pl.Int64).to_list()]], how="horizontal"
    )
    return [found, heads, counts]


def check_from_tables(
    snap: StoreSnapshot, opts: CheckOptions, want: dict[str, Any]
) -> tuple[pl.DataFrame, LoadResult] | None:
    """``check`` of the whole store ``snap`` from its tables when they record ``want``
    (current), with the store's load report; else None."""
    tables = (CHECK_EVENTS, CHECK_EXCHANGES, CHECK_AMBIGUOUS, CHECK_COUNTS, CHECK_LEAN)
    if any(snap.table(t).meta != want or not snap.table(t).files for t in tables[:4]):
        return None
    scans = [snap.scan_table(t) for t in tables]
    found_ev, found_ex, heads, counts, lean = scans
    assert found_ev is not None and found_ex is not None and lean is not None
    assert heads is not None and counts is not None
    now = clock_ms(opts.now)
    # the one rule that depends on the query's clock: the events past it, from the lean rows
    late = lean.filter(pl.col("event_ms") > now + opts.limits.future_tolerance_s * 1000.0)
    clock = run_checks(
        lean_in_load_order(snap, late),
        CheckOptions(limits=opts.limits, now=now, select=["clock.future_ts"]),
        None,
        [],
    )
    report = store_report(snap.path)
    parts = [
        found_ev,
        found_ex,
        ambiguity_finding(heads.sort("_ms", "_frank", "_line").collect(), counts.collect()),
        clock.lazy(),
        load_findings(report).lazy(),
    ]
    found = finish_findings(parts, select_rules(opts.select, opts.ignore))
    return found, LoadResult(events=pl.DataFrame(schema={"type": pl.String}), report=report)
