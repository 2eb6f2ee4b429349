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

from collections.abc import Mapping
from typing import Any

import polars as pl

from a2a_lab.analysis.checks import (
    DATA_HASH_COLUMN,
    FINDING_SCHEMA,
    LEAN_COLUMNS,
    LEAN_FIELDS,
    CheckLimits,
    CheckOptions,
    ambiguity_finding,
    blocked_findings,
    data_hash,
    exchange_findings,
    finish_findings,
    load_findings,
    replay_guard,
    rule_parts,
    run_checks,
    select_rules,
)
from a2a_lab.event_rules import from_agent_expr, to_agent_expr
from a2a_lab.io import LoadResult, StoreSnapshot, TableUpdate, polars_path, store_report
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


#: What each lean rule's finding depends on: the events of one task, of one agent pair (the
#: guard replays), of one ``data`` hash (copies of one event), of one conversation id (its
#: agent pairs), or of its own event only. A finding of a group is made again, from every
#: event of the group, when new events join it; every other finding stays as it is.
FAMILIES = {
    "task.after_terminal": "task",
    "task.invalid_transition": "task",
    "task.protocol_state": "task",
    "guard.loop": "pair",
    "guard.collaborate": "pair",
    "guard.relay_depth": "event",
    "clock.zero_ts": "event",
    "identity.duplicate_event": "dup",
    "identity.conversation_reused": "conv",
}
#: The families of groups (the others are per event).
KEYED_FAMILIES = ("task", "pair", "dup", "conv")
#: The messages the guard replays count (of either guard).
GUARD_TYPES = ("a2a.send", "a2a.response")
_TAGGED_SCHEMA = pl.Schema({**FINDING_SCHEMA, "_family": pl.String(), "_key": pl.String()})
_PER_EVENT_RULES = sorted(rule for rule, family in FAMILIES.items() if family == "event")
#: The version of the keys :data:`CHECK_EVENTS` records (another: made again whole).
_KEYED_VERSION = 1


def _key_exprs() -> list[pl.Expr]:
    """Per event, the group it belongs to in the families but ``dup`` (null: none), a
    superset of the rows each rule groups: every task event with a ``taskId``, every send
    and response with both agents, every A2A event with a conversation id (the rules filter
    further within the group). Stored with the lean rows: computed once per event."""
    kind, data = pl.col("type"), pl.col("data")
    a, b = from_agent_expr(), to_agent_expr()
    return [
        pl.when(kind.str.starts_with("task."))
        .then(js_string_expr(data.struct.field("taskId")))
        .alias("_k_task"),
        pl.when(kind.is_in(GUARD_TYPES))
        .then(pl.concat_str(pl.min_horizontal(a, b), pl.lit("::"), pl.max_horizontal(a, b)))
        .alias("_k_pair"),
        pl.when(kind.str.starts_with("a2a."))
        .then(js_string_expr(data.struct.field("conversationId")))
        .alias("_k_conv"),
    ]


def _dup_key() -> pl.Expr:
    """The ``dup`` family's group: the hash of the full ``data`` (and type, agent, time)."""
    return pl.col(DATA_HASH_COLUMN).cast(pl.String).alias("_k_dup")


def tag_findings(found: pl.DataFrame, keyed: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """``found`` (lean rules' findings) with ``_family`` and ``_key``, the group each
    finding depends on: its task or conversation id, or the pair or hash of its first
    event (``file``, first line), whose keys ``keyed`` holds (:func:`_key_exprs`)."""
    family = pl.col("rule").replace_strict(FAMILIES, return_dtype=pl.String)
    first = keyed.lazy().select("file", "line", "_k_pair", "_k_dup")
    return (
        found.lazy()
        .with_columns(family.alias("_family"), pl.col("lines").list.first().alias("_line"))
        .join(first, left_on=["file", "_line"], right_on=["file", "line"], how="left")
        .with_columns(
            pl.when(pl.col("_family") == "task")
            .then(pl.col("task_id"))
            .when(pl.col("_family") == "conv")
            .then(pl.col("conversation_id"))
            .when(pl.col("_family") == "pair")
            .then(pl.col("_k_pair"))
            .when(pl.col("_family") == "dup")
            .then(pl.col("_k_dup"))
            .alias("_key")
        )
        .select(*FINDING_SCHEMA, "_family", "_key")
        .collect()
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
        *_key_exprs(),
    )


def lean_in_load_order(snap: StoreSnapshot, lean: pl.LazyFrame) -> pl.DataFrame:
    """The lean rows with their ``file``, in the load's order (time, then reading order)."""
    # one sort by time, then reading order: a stable sort by time of the rows in reading
    # order ((file rank, line) is unique), with one gather of the rows instead of two
    return snap.named(lean).sort("event_ms", "_rank", "line").drop("_rank", "source").collect()


#: Lean rows per class when :data:`CHECK_EVENTS` is made again: a class is what one run of
#: the rules holds (issue 24: the whole lean frame of 2.5 M events in one month held 2 GB).
CLASS_ROWS = 500_000


def _rule_groups(
    lean: pl.LazyFrame, limits: CheckLimits
) -> list[tuple[tuple[str, ...], pl.Expr, pl.Expr | None]]:
    """The event rules by the rows they read and the key whose groups they never split:
    ``(rules, rows, key)``; a group without key reads few rows (kept whole)."""
    a2a, t = pl.col("type").str.starts_with("a2a."), pl.col("type")
    cheap = pl.struct("type", "agent_id", "event_ms").hash()
    # copies share type, agent and time: the rows sharing that hash, found from three
    # columns (a filter by is_duplicated would gather every column of every row first)
    shared = lean.select(cheap.alias("h")).filter(pl.col("h").is_duplicated()).collect()
    return [
        # the keys stored with the lean rows (:func:`_key_exprs`): the same rows' keys
        (("task.",), t.str.starts_with("task."), pl.col("_k_task")),
        (("guard.loop", "guard.collaborate"), t.is_in(GUARD_TYPES), pl.col("_k_pair")),
        (("identity.conversation_reused",), a2a, pl.col("_k_conv")),
        # the rows these rules flag, or their candidates
        (
            ("guard.relay_depth",),
            a2a & (pl.col("data").struct.field("depth") > limits.max_depth),
            None,
        ),
        (("clock.zero_ts",), pl.col("event_ms") == 0, None),
        (("identity.duplicate_event",), cheap.is_in(shared.get_column("h").implode()), None),
    ]


def update_event_findings(update: TableUpdate, limits: CheckLimits, want: dict[str, Any]) -> bool:
    """Bring :data:`CHECK_EVENTS` up to date with the lean table as this update leaves it.

    ``want`` is what current tables record (``a2a_lab.materialize._check_want``). When the
    table was made for the same matcher, zone, limits and files (new files may have come),
    only the lean rows it does not cover are new: the findings of the groups they touch
    (:data:`FAMILIES`) are made again (:func:`_updated_findings`), the others kept;
    otherwise the table is made again from every lean row. Returns whether it was made
    again whole.
    """
    snap = update.snapshot
    files = update.table_files(CHECK_LEAN)
    table = snap.table(CHECK_EVENTS)
    meta = {**want, "lean_files": files, "keyed": _KEYED_VERSION}
    covered = table.meta.get("lean_files")
    whole = not table.files or not _continues(table.meta, want, files)
    opts = CheckOptions(limits=limits, select=list(EVENT_RULES))
    if whole:
        rows = rebuild_findings(snap, files, limits)
    else:
        assert isinstance(covered, list)
        known = set(covered)
        fresh = [rel for rel in files if rel not in known]
        if not fresh:
            update.set_meta(CHECK_EVENTS, meta)
            return False
        rows = _updated_findings(snap, files, fresh, opts)
    update.drop(CHECK_EVENTS)
    update.write(CHECK_EVENTS, rows)
    update.set_meta(CHECK_EVENTS, meta)
    return whole


def rebuild_findings(snap: StoreSnapshot, files: list[str], limits: CheckLimits) -> pl.DataFrame:
    """The table made again from every lean row of ``files``, tagged (:func:`tag_findings`).

    Each rule reads only its rows, a hash class of its key (task, agent pair, conversation
    id) at a time: about :data:`CLASS_ROWS` lean rows are held at once, whatever the
    density in time; every group of a rule lies in one class, so the findings are those
    of the whole frame.
    """
    lean = _scan(snap, files).with_columns(_dup_key())
    k = max(1, -(-snap.events // CLASS_ROWS))
    found = [pl.DataFrame(schema=_TAGGED_SCHEMA)]
    for rules, rows, key in _rule_groups(lean, limits):
        names = select_rules(list(rules))
        classes = (
            [rows]
            if key is None or k == 1
            else [rows & key.is_not_null() & (key.hash(seed=0) % k == i) for i in range(k)]
        )
        opts = CheckOptions(limits=limits, select=list(rules))
        for where in classes:
            events = lean_in_load_order(snap, lean.filter(where))
            found.append(tag_findings(finish_findings(rule_parts(events, opts), names), events))
    return pl.concat(found, how="vertical_relaxed")


def _updated_findings(
    snap: StoreSnapshot, files: list[str], fresh: list[str], opts: CheckOptions
) -> pl.DataFrame:
    """The table's findings once the lean rows of ``fresh`` (of ``files``) are added.

    The tasks, event copies and conversation ids the new rows touch are checked again from
    all their rows; so are the agent pairs whose messages lack a time. The other pairs the
    new rows touch are replayed from their first new message on (:func:`_guards_from`):
    the guards are causal, so earlier messages keep their verdicts. The per-event rules
    run on the new rows; every other finding is kept.
    """
    new = _scan(snap, fresh).with_columns(_dup_key()).collect()
    old_scan = snap.scan_table(CHECK_EVENTS)
    assert old_scan is not None
    old = old_scan.collect()
    cuts = _pair_cuts(snap, files, new)
    touched = {
        f: new.get_column(f"_k_{f}").drop_nulls().unique().implode()
        for f in ("task", "dup", "conv")
    }
    touched["pair"] = cuts.filter(pl.col("_cut").is_null()).get_column("_k_pair").implode()
    # the stored columns themselves (the hash as stored): the filter reaches the Parquet reader
    hashes = new.get_column(DATA_HASH_COLUMN).unique().implode()
    in_touched = pl.any_horizontal(
        [pl.col(f"_k_{f}").is_in(touched[f]) for f in ("task", "pair", "conv")]
        + [pl.col(DATA_HASH_COLUMN).is_in(hashes)]
    )
    rows = lean_in_load_order(
        snap, _gather(snap, files, in_touched).lazy().with_columns(_dup_key())
    )
    again = tag_findings(run_checks(rows, opts, None, []), rows)
    ordered = lean_in_load_order(snap, new.lazy())
    per_event = CheckOptions(limits=opts.limits, select=_PER_EVENT_RULES)
    added = tag_findings(run_checks(ordered, per_event, None, []), ordered)
    replayed = cuts.filter(pl.col("_cut").is_not_null())
    was_replayed = (pl.col("_family") == "pair") & pl.col("_key").is_in(
        replayed.get_column("_k_pair").implode()
    )
    parts = [
        old.filter(~_of_touched(touched) & ~was_replayed),
        again.filter(_of_touched(touched)),
        added,
        _guards_from(snap, files, replayed, old.filter(was_replayed), opts.limits),
    ]
    return pl.concat(parts, how="vertical_relaxed")


def _pair_cuts(snap: StoreSnapshot, files: list[str], new: pl.DataFrame) -> pl.DataFrame:
    """Per agent pair of the new messages: the time of its first new message (``_cut``),
    null when a message of the pair has no time (the replay then starts at its first)."""
    pairs = new.filter(pl.col("_k_pair").is_not_null())
    timeless = (
        _scan(snap, files)
        .filter(
            pl.col("_k_pair").is_in(pairs.get_column("_k_pair").unique().implode())
            & pl.col("event_ms").is_null()
        )
        .select(pl.col("_k_pair").unique())
        .collect()
        .get_column("_k_pair")
    )
    return (
        pairs.group_by("_k_pair")
        .agg(pl.col("event_ms").min().alias("_cut"))
        .with_columns(pl.when(~pl.col("_k_pair").is_in(timeless.implode())).then(pl.col("_cut")))
    )


def _guards_from(
    snap: StoreSnapshot,
    files: list[str],
    cuts: pl.DataFrame,
    old: pl.DataFrame,
    limits: CheckLimits,
) -> pl.DataFrame:
    """The guard findings of the pairs of ``cuts``, replayed from each pair's cut on.

    A guard's verdict on a message depends on the messages it kept in the window before
    it. The messages before a pair's cut keep their verdicts (``old``: the pairs' blocked
    lines); the replay starts from the state at the cut, the messages of the window before
    it that were not blocked, and goes on over every message at or after the cut.
    """
    if cuts.height == 0:
        return pl.DataFrame(schema=_TAGGED_SCHEMA)
    reach = max(limits.loop_window_s, limits.collaborate_window_s) * 1000.0
    blocked = old.select("rule", "file", "lines").explode("lines").rename({"lines": "line"})
    pairs = pl.col("_k_pair").is_in(cuts.get_column("_k_pair").implode())
    # the pairs' messages from the earliest cut's window on (a superset of each pair's: the
    # replay cuts again), whole; their blocked ones anywhere before, keys and times only
    recent = pl.col("event_ms") >= pl.lit(cuts.get_column("_cut").min()) - reach
    rows = lean_in_load_order(
        snap,
        _gather(snap, files, pairs & recent)
        .lazy()
        .join(cuts.lazy(), on="_k_pair")
        .with_columns(_dup_key()),
    )
    lines = pl.col("line").is_in(blocked.get_column("line").unique().implode())
    earlier = (
        snap.named(
            _scan(snap, files).filter(pairs & lines).select("source", "line", "event_ms", "_k_pair")
        )
        .join(cuts.lazy(), on="_k_pair")
        .collect()
    )
    ranks = snap.files().select("file", "_rank")
    cut, ms = pl.col("_cut"), pl.col("event_ms")
    found = []
    for rule, limit, window_s, kw in _guard_rules(limits):
        was = blocked.filter(pl.col("rule") == rule).select(
            "file", "line", pl.lit(True).alias("_was")
        )
        flagged = rows.join(was, on=["file", "line"], how="left", maintain_order="left")
        state = (ms >= cut) | ((ms >= cut - window_s * 1000.0) & pl.col("_was").is_null())
        rep = replay_guard(flagged.filter(state), limit=limit, window_s=window_s, **kw)
        after = rep.join(rows.select("file", "line", "_cut"), on=["file", "line"]).filter(
            pl.col("blocked") & (ms >= cut)
        )
        before = earlier.join(was, on=["file", "line"]).filter(ms < cut)
        verdicts = (
            pl.concat(
                [
                    after.select("pair", "file", "line", "event_ms"),
                    before.select(pl.col("_k_pair").alias("pair"), "file", "line", "event_ms"),
                ]
            )
            .join(ranks, on="file")
            .sort("pair", "event_ms", "_rank", "line")
        )
        found.append(
            blocked_findings(verdicts.with_columns(blocked=True), rule, limit, window_s).collect()
        )
    keyed = pl.concat(
        [
            rows.select("file", "line", "_k_pair", "_k_dup"),
            earlier.select("file", "line", "_k_pair", pl.lit(None, pl.String).alias("_k_dup")),
        ]
    ).unique(["file", "line"], keep="first")
    return tag_findings(pl.concat(found), keyed)


def _guard_rules(limits: CheckLimits) -> list[tuple[str, int, float, dict[str, Any]]]:
    """The guard replays of ``check`` (:func:`a2a_lab.analysis.checks.rule_parts`)."""
    return [
        ("guard.loop", limits.loop_limit, limits.loop_window_s, {}),
        (
            "guard.collaborate",
            limits.collaborate_limit,
            limits.collaborate_window_s,
            {"types": ("a2a.send",), "ping_pong_only": False},
        ),
    ]


def _of_touched(touched: dict[str, pl.Series]) -> pl.Expr:
    """Whether a tagged finding belongs to a group in ``touched`` (by family)."""
    return pl.any_horizontal(
        [
            (pl.col("_family") == family) & pl.col("_key").is_in(touched[family])
            for family in KEYED_FAMILIES
        ]
    )


def _gather(snap: StoreSnapshot, files: list[str], where: pl.Expr) -> pl.DataFrame:
    """The lean rows of ``files`` where ``where`` holds, reading only the rows between
    each file's first and last match.

    A filter on the scan would decode every column of every row (the ``data`` structs
    most of it) to keep a few; the matches are found on the columns ``where`` reads, and
    the rows new lines touch lie mostly at the end of the newest files.
    """
    parts = []
    for rel in files:
        scan = pl.scan_parquet(polars_path(snap.path / rel))
        at = scan.with_row_index("_i").filter(where).select("_i").collect().get_column("_i")
        if at.len():
            first = int(at.min())  # type: ignore[arg-type]
            span = scan.slice(first, int(at.max()) - first + 1)  # type: ignore[arg-type]
            parts.append(
                span.with_row_index("_i", offset=first)
                .filter(pl.col("_i").is_in(at.implode()))
                .drop("_i")
                .collect()
            )
    return pl.concat(parts) if parts else _scan(snap, files).clear().collect()


def _scan(snap: StoreSnapshot, files: list[str]) -> pl.LazyFrame:
    return pl.scan_parquet([polars_path(snap.path / rel) for rel in files])


def _continues(meta: Mapping[str, Any], want: dict[str, Any], files: list[str]) -> bool:
    """Whether a table recording ``meta`` can be brought up to date by adding rows: the
    same matcher, zone and limits, the store's files named and ranked as they were (new
    ones may have come), and every lean file it covered still there."""
    covered = meta.get("lean_files")
    if meta.get("keyed") != _KEYED_VERSION or not isinstance(covered, list):
        return False
    same = ("lean_files", "keyed", "events", "names")
    if {k: v for k, v in meta.items() if k not in same} != {
        k: v for k, v in want.items() if k not in same
    }:
        return False
    names = {tuple(row) for row in want["names"]}
    return all(tuple(row) in names for row in meta.get("names", [])) and set(covered) <= set(files)


def current_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    """A :data:`CHECK_EVENTS` table's meta without what only its updates read."""
    return {k: v for k, v in meta.items() if k not in ("lean_files", "keyed")}


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
    if any(current_meta(snap.table(t).meta) != want or not snap.table(t).files for t in tables[:4]):
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
