"""Enriched columns materialised in a history store, so work sessions need not enrich again.

``a2a-lab work-sessions STORE`` used to read every stored event and enrich it (the text
scoring of the category is most of its work) on every run. :func:`materialize` stores, next
to the store's parts, the narrow enriched frame the work-sessions query reads: the event
frame's scalar columns, the ``data`` fields the sessions read
(:data:`MATERIALIZED_DATA_FIELDS`) and the ten enrichment columns, for the rule set and
main agents given, which it records. Later calls enrich only the stored events not yet
materialised (a stored event is identified by its ``source`` file and ``line``), one
store part at a time, so memory is bounded by the part size whatever the log's density.
A call with another rule set, other main agents or a store whose zone changed throws the
materialised columns away and builds them again, and says so (:attr:`MaterializeReport.rebuilt`).

:func:`scan_materialized` gives the frame back, in the loader's reading order, when it
covers every stored event for the rule set asked for; otherwise None, and the caller
enriches as before.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from a2a_lab.io import (
    StoreError,
    StoreSnapshot,
    TableUpdate,
    open_store,
    polars_path,
    update_store,
)
from a2a_lab.materialize._names import (
    CHECK_LEAN,
    CONV_ORDER,
    CONVERSATIONS_TABLE,
    MS_COLUMNS,
)
from a2a_lab.materialize._sessions import (
    SESSIONS_TABLE,
    ranks_meta,
    touched_sessions,
    update_sessions,
)
from a2a_lab.materialize._sessions import (
    stored_work_sessions as stored_work_sessions,
)
from a2a_lab.materialize._texts import (
    REPORT_TEXTS as REPORT_TEXTS,
)
from a2a_lab.materialize._texts import (
    SEARCH_FIELDS as SEARCH_FIELDS,
)
from a2a_lab.materialize._texts import (
    TEXT_FIELDS as TEXT_FIELDS,
)
from a2a_lab.materialize._texts import (
    TITLE_FIELDS as TITLE_FIELDS,
)
from a2a_lab.materialize._texts import (
    has_text as has_text,
)
from a2a_lab.materialize._texts import (
    names_a_title as names_a_title,
)
from a2a_lab.materialize._texts import (
    search_text as search_text,
)
from a2a_lab.materialize._texts import text_rows
from a2a_lab.reference.rules import TASK_MONITOR_V1, RuleSet
from a2a_lab.schema import polars_schema

if TYPE_CHECKING:
    from a2a_lab.analysis.checks import CheckLimits, CheckOptions
    from a2a_lab.enrich import MainAgents
    from a2a_lab.io import LoadResult
    from a2a_lab.materialize._exchanges import ConversationsReport, ExchangeSpill

# the tables of exchanges and of ``check`` import the matcher and the rules: their modules
# load when an ingest or a query of those tables needs them, not for work sessions

#: The derived table of the store (``materialized/enriched/``) holding the columns.
ENRICHED_TABLE = "enriched"
_VERSION = 4

#: Stored rows read, enriched and spilled at a time (a part of an older store can hold up
#: to a million; compaction now writes parts of fewer than 300,000).
ENRICH_ROWS = 250_000

#: The ``data`` fields the work-sessions query reads after enrichment (rules §7-§8).
MATERIALIZED_DATA_FIELDS = ("workSessionId", "conversationId", "status")


@dataclass(frozen=True)
class MaterializeReport:
    """What :func:`materialize` did.

    Attributes
    ----------
    new_rows
        Events enriched and stored by this call.
    rows
        Events materialised in all (the store's event count when complete).
    rebuilt
        Why everything was built again (another rule set, other main agents, another
        zone), or None.
    signature
        The rule set version, its fingerprint and the main agents the columns hold.
    """

    new_rows: int
    rows: int
    rebuilt: str | None
    signature: dict[str, Any]
    conversations: ConversationsReport | None = None
    #: Work sessions re-made in the sessions table, and why all were, if they were.
    sessions: tuple[int, str | None] = (0, None)

    def __str__(self) -> str:
        text = f"materialised {self.new_rows} new events ({self.rows} in all, rule set {self.signature['version']})"
        text = text if self.rebuilt is None else f"{text}; rebuilt: {self.rebuilt}"
        n, why = self.sessions
        text = f"{text}; {n} work sessions made again" + ("" if why is None else f" ({why})")
        return text if self.conversations is None else f"{text}; {self.conversations}"


def rules_signature(
    rules: RuleSet = TASK_MONITOR_V1, main_agents: MainAgents = None
) -> dict[str, Any]:
    """What the enriched columns depend on: the rule set (version and content) and main agents."""
    if main_agents is None:
        agents = rules.default_main_agents  # as resolve_main_agents, without enrichment's imports
    else:
        from a2a_lab.enrich import resolve_main_agents

        agents = resolve_main_agents(main_agents, rules)
    return {
        "version": rules.version,
        "fingerprint": rules.fingerprint,
        "main_agents": sorted(agents),
    }


def _narrow_data() -> pl.Expr:
    data = pl.col("data")
    kept = pl.struct([data.struct.field(name) for name in MATERIALIZED_DATA_FIELDS])
    return pl.when(data.is_not_null()).then(kept).alias("data")


#: The stored columns, in this order (``source`` stands for ``file`` until read back).
def _columns() -> list[str]:
    from a2a_lab.enrich import ENRICHMENT_COLUMNS

    return ["source", *(c for c in polars_schema() if c != "file"), *ENRICHMENT_COLUMNS]


def _wanted(signature: dict[str, Any], timezone: str) -> dict[str, Any]:
    return {"version": _VERSION, "signature": signature, "timezone": timezone}


def materialize(
    store: str | os.PathLike[str],
    *,
    rules: RuleSet = TASK_MONITOR_V1,
    main_agents: MainAgents = None,
    matched: bool = True,
    limits: CheckLimits | None = None,
) -> MaterializeReport:
    """Enrich the stored events not yet materialised and store their narrow enriched columns.

    The columns are a derived table of the store (:func:`a2a_lab.io.update_store`): its
    files are listed, with their checksums, in the store's state, so every read, ``ingest
    --verify`` and ``ingest --repair`` check them like the event parts.

    Parameters
    ----------
    store
        A history store (:func:`a2a_lab.io.ingest`).
    rules, main_agents
        As for :func:`a2a_lab.enrich`. Columns built with others are built again.
    matched
        Also bring the conversations table and ``check``'s tables up to date (matching
        again the conversation ids the new events touch). False (``a2a-lab serve``'s
        frequent refreshes) leaves them behind: they are then not read, and the next call
        with ``matched`` builds them again.
    limits
        The safety limits ``check``'s tables replay (default: today's gateway,
        :class:`~a2a_lab.analysis.checks.CheckLimits`); tables of other limits are built
        again, and ``a2a-lab check`` with other limits checks the loaded events instead.

    Returns
    -------
    MaterializeReport
        Events added, events in all, and why everything was rebuilt if it was.

    Raises
    ------
    StoreError
        Not a store, damaged, or an ingest is running in it.
    """
    from a2a_lab.analysis.checks import CheckLimits
    from a2a_lab.materialize._check import update_event_findings
    from a2a_lab.materialize._exchanges import ExchangeSpill, update_exchanges

    limits = CheckLimits() if limits is None else limits
    signature = rules_signature(rules, main_agents)
    with (
        update_store(store) as update,
        tempfile.TemporaryDirectory(prefix="a2a_lab_exchanges_") as tmp_dir,
    ):
        tmp = Path(tmp_dir)
        snap = update.snapshot
        table = snap.table(ENRICHED_TABLE)
        want = _wanted(signature, snap.timezone)
        rebuilt = None
        if table.files and table.meta != want:
            rebuilt = _difference(table.meta, want)
        elif table.total_rows > snap.events:
            rebuilt = f"{table.total_rows} rows for the store's {snap.events} events"
        elif snap.table(REPORT_TEXTS).meta != table.meta:
            # written with the enriched columns: a store made before it, or that lost a file
            rebuilt = "the report's texts table was missing or incomplete"
        if rebuilt is not None:
            update.drop(ENRICHED_TABLE)
            update.drop(CHECK_LEAN)
            update.drop(REPORT_TEXTS)
        rows = 0 if rebuilt is not None else table.total_rows
        # every event new (a first ingest, a rebuild): its exchange events are spilled by
        # class as they are enriched, for the exchange tables built again below
        spill = ExchangeSpill(tmp, snap.events) if matched and rows == 0 else None
        new_rows, touched, sessions = _enrich_new(
            update, rebuilt is None, (rules, main_agents), spill
        )
        update.set_meta(ENRICHED_TABLE, want)
        update.set_meta(CHECK_LEAN, want)
        update.set_meta(REPORT_TEXTS, want)
        events = rows + new_rows
        n_sessions, sessions_rebuilt = update_sessions(
            update,
            _written(update, ENRICHED_TABLE),
            None if rebuilt is not None else sessions,
            {**want, "events": events},
        )
        conv = None
        if matched:
            check_want = _check_want(snap, limits, events)
            update_event_findings(update, limits, check_want)
            conv = update_exchanges(
                update,
                None if rebuilt is not None else touched,
                check_want,
                rows,
                _written(update, ENRICHED_TABLE),
                spill,
            )
    return MaterializeReport(
        new_rows, events, rebuilt, signature, conv, (n_sessions, sessions_rebuilt)
    )


def _enrich_new(
    update: TableUpdate,
    keep: bool,
    enrichment: tuple[RuleSet, MainAgents],
    spill: ExchangeSpill | None,
) -> tuple[int, pl.Series, pl.Series]:
    """Enrich the stored events the enriched table lacks (all, unless ``keep``) and write
    them, and their lean rows for ``check``; returns how many, and the conversation ids
    and work sessions they touch. ``spill`` gets their exchange events."""
    from a2a_lab.materialize._check import lean_rows

    snap = update.snapshot
    scan = snap.scan_table(ENRICHED_TABLE) if keep else None
    done = (
        scan.select("source", "line").collect()
        if scan is not None
        else pl.DataFrame(schema={"source": pl.Int32, "line": pl.Int64})
    )
    new_rows = 0
    touched = [pl.Series("id", [], pl.String)]
    sessions = [pl.Series("work_session_id", [], pl.String)]
    # a store part (a slice of it) at a time: memory bounded by a slice, not by how events
    # fall in time; each slice is read once for its three uses (its ``data`` decoded once)
    for rel, rows in zip(snap.event_parts, snap.event_rows, strict=True):
        if keep and not _has_new_rows(snap, rel, done):
            continue  # the keys alone: a part already materialised is not decoded again
        for offset in range(0, rows, ENRICH_ROWS):
            new = (
                snap.scan_events([rel])
                .slice(offset, ENRICH_ROWS)
                .join(done.lazy(), on=["source", "line"], how="anti")
                .select(*polars_schema(), "source", "_rank")
                .collect()
            )
            if new.height == 0:
                continue
            frame = _enriched_rows(new.lazy().drop("_rank"), enrichment)
            update.write(ENRICHED_TABLE, frame)
            update.write(CHECK_LEAN, lean_rows(new.lazy()).collect())
            update.write(REPORT_TEXTS, text_rows(new, frame))
            if spill is not None:
                spill.add(new.lazy())
            new_rows += frame.height
            touched.append(_conversation_ids(frame))
            sessions.append(touched_sessions(frame))
    if not update.table_files(ENRICHED_TABLE):
        # a store without events (every line rejected): empty tables, which the queries
        # and the tables below read as zero rows (no files would be no table to read)
        empty = pl.LazyFrame(schema={**polars_schema(), "source": pl.Int32()})
        update.write(ENRICHED_TABLE, _enriched_rows(empty, enrichment))
        update.write(CHECK_LEAN, lean_rows(empty).collect())
        update.write(REPORT_TEXTS, text_rows(empty.collect(), _enriched_rows(empty, enrichment)))
    return new_rows, pl.concat(touched).unique(), pl.concat(sessions)


def _enriched_rows(new: pl.LazyFrame, enrichment: tuple[RuleSet, MainAgents]) -> pl.DataFrame:
    """The enriched table's rows of stored events ``new``."""
    from a2a_lab.enrich import enrich

    rules, main_agents = enrichment
    return (
        enrich(new, rules=rules, main_agents=main_agents)
        .with_columns(_narrow_data())
        .select(_columns())
        .collect()
    )


def _has_new_rows(snap: StoreSnapshot, rel: str, done: pl.DataFrame) -> bool:
    """Whether event part ``rel`` holds events missing from ``done`` (``source``, ``line``)."""
    keys = snap.scan_events([rel]).select("source", "line")
    return bool(
        keys.join(done.lazy(), on=["source", "line"], how="anti").select(pl.len()).collect().item()
    )


def _check_want(snap: StoreSnapshot, limits: CheckLimits | None, events: int) -> dict[str, Any]:
    """What current exchange and ``check`` tables record: the matcher, zone, limits (None:
    left out), the events they cover, and the store's files (names and reading ranks)."""
    want: dict[str, Any] = {
        "version": _VERSION,
        "matcher": matcher_signature(),
        "timezone": snap.timezone,
        "names": [list(row) for row in snap.files().select("source", "file", "_rank").rows()],
        "events": events,
    }
    if limits is not None:
        fields = dataclasses.asdict(limits)
        del fields["future_tolerance_s"]  # applied by the query, on the lean rows
        want["limits"] = fields
    return want


def _written(update: TableUpdate, name: str) -> pl.LazyFrame:
    """Table ``name`` as this update leaves it (its files written so far)."""
    return pl.scan_parquet(
        [polars_path(update.snapshot.path / rel) for rel in update.table_files(name)]
    )


def _difference(meta: dict[str, Any], want: dict[str, Any]) -> str:
    if meta.get("version") != want["version"] or not isinstance(meta.get("signature"), dict):
        return "the table was incomplete or of another version"
    old, signature = meta["signature"], want["signature"]
    if old["version"] != signature["version"] or old["fingerprint"] != signature["fingerprint"]:
        return (
            f"rule set {old['version']} ({old['fingerprint'][:12]}) -> "
            f"{signature['version']} ({signature['fingerprint'][:12]})"
        )
    if old["main_agents"] != signature["main_agents"]:
        return f"main agents {old['main_agents']} -> {signature['main_agents']}"
    return f"time zone {meta['timezone']} -> {want['timezone']}"


def scan_materialized(
    store: str | os.PathLike[str],
    *,
    rules: RuleSet = TASK_MONITOR_V1,
    main_agents: MainAgents = None,
    tz: str | None = None,
) -> pl.LazyFrame | None:
    """The materialised enriched frame, or None when it does not cover the store as asked.

    Parameters
    ----------
    store
        A history store.
    rules, main_agents
        The enrichment asked for: the materialised columns must have been made with them.
    tz
        The zone asked for (None: the store's own); another zone than the store's is not
        materialised.

    Returns
    -------
    LazyFrame or None
        The enriched frame's columns (``data`` narrowed to :data:`MATERIALIZED_DATA_FIELDS`,
        no ``raw``), rows in the loader's reading order (files oldest first, lines in
        order); None when some stored event is not materialised, or when the rule set,
        main agents or zone differ.
    """
    try:
        snap = open_store(store)
    except StoreError:
        return None
    table = snap.table(ENRICHED_TABLE)
    if (
        table.meta != _wanted(rules_signature(rules, main_agents), snap.timezone)
        or (tz is not None and tz != snap.timezone)
        or table.total_rows != snap.events
        or not table.files
    ):
        return None
    return _in_reading_order(snap)


def sessions_query_source(
    store: str | os.PathLike[str],
    *,
    rules: RuleSet = TASK_MONITOR_V1,
    main_agents: MainAgents = None,
    tz: str | None = None,
) -> tuple[StoreSnapshot, pl.LazyFrame] | None:
    """The store and its enriched frame when its sessions table is current, else None.

    Current: made with this rule set and these main agents, in the store's zone (``tz``
    None or the same), from every stored event. The caller then answers the sessions
    query with :func:`stored_work_sessions` (no role, type or time filter).
    """
    try:
        snap = open_store(store)
    except StoreError:
        return None
    want = {**_wanted(rules_signature(rules, main_agents), snap.timezone), "events": snap.events}
    meta = snap.table(SESSIONS_TABLE).meta
    if (
        {k: v for k, v in meta.items() if k != "ranks"} != want
        or (tz is not None and tz != snap.timezone)
        or snap.table(ENRICHED_TABLE).total_rows != snap.events
        or not snap.table(SESSIONS_TABLE).files
        or meta.get("ranks") != ranks_meta(snap)
    ):
        return None
    return snap, _in_reading_order(snap)


def _in_reading_order(snap: StoreSnapshot) -> pl.LazyFrame:
    frame = snap.scan_table(ENRICHED_TABLE)
    assert frame is not None
    # the stored columns are _columns(): the frame's order, ``file`` first, without ``raw``
    # (read from the parts' schema: the query imports neither the models nor enrichment)
    stored = [c for c in frame.collect_schema().names() if c not in ("source", "raw")]
    return snap.named(frame).sort("_rank", "line").select("file", *stored)


# ---------------------------------------------------------------------------------------
# the conversations table: one row per matched exchange
# ---------------------------------------------------------------------------------------

#: The modules whose code decides the exchanges and their rows: any change to them (the
#: matcher being replaced, a rule fixed) makes the table another one, built again.
_MATCHER_MODULES = (
    "a2a_lab.exchanges",
    "a2a_lab._exchange_tails",
    "a2a_lab._exchange_firsts",
    "a2a_lab.analysis.conversations",
    "a2a_lab.reference.runtime.intent",
    "a2a_lab._frames",
    "a2a_lab.event_rules",
    # check's rules: the check tables share this signature
    "a2a_lab.analysis.checks",
    "a2a_lab.analysis._check_a2a",
    "a2a_lab.analysis._check_rules",
)


def matcher_signature() -> dict[str, Any]:
    """What the conversations table depends on: the matcher's code (intent rules included).

    The modules' files are read, not imported: a query of the table (``conversations
    STORE``, ``check STORE``) does not load the matcher it does not run.
    """
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for name in _MATCHER_MODULES:
        base = package.joinpath(*name.split(".")[1:])
        files = [base.with_suffix(".py"), base / "__init__.py"]
        found = [f for f in files if f.is_file()]
        if not found:
            continue  # a module the matcher does not have (any more)
        digest.update(name.encode())
        digest.update(found[0].read_bytes())
    return {"code": digest.hexdigest()}


def _conversation_ids(enriched: pl.DataFrame) -> pl.Series:
    """The conversation ids of exchange events in ``enriched`` (the ids they touch)."""
    from a2a_lab.analysis.conversations import EXCHANGE_TYPES
    from a2a_lab.materialize._exchanges import conv_id

    return (
        enriched.lazy()
        .filter(pl.col("type").is_in(EXCHANGE_TYPES))
        .select(conv_id().alias("id"))
        .drop_nulls()
        .unique()
        .collect()
        .to_series()
    )


def _current_for_reads(snap: StoreSnapshot, table: str) -> bool:
    """Whether ``table`` was made by this matcher from every stored event in the store's
    zone and file names (whatever the limits: they change ``check``'s findings only)."""
    meta = dict(snap.table(table).meta)
    meta.pop("limits", None)
    return meta == _check_want(snap, None, snap.events) and bool(snap.table(table).files)


def scan_conversations(
    store: str | os.PathLike[str], *, tz: str | None = None
) -> pl.DataFrame | None:
    """The materialised conversations of a store, as
    :func:`~a2a_lab.analysis.conversations.conversations` of all its events gives them;
    None when the table is missing, not current (events not materialised, another
    matcher) or ``tz`` is not the store's zone.
    """

    try:
        snap = open_store(store)
    except StoreError:
        return None
    if not _current_for_reads(snap, CONVERSATIONS_TABLE) or (
        tz is not None and tz != snap.timezone
    ):
        return None
    frame = snap.scan_table(CONVERSATIONS_TABLE)
    assert frame is not None
    # a rebuilt table is a file per class of conversation ids, each sorted: in order
    # across them (the keys are unique: the order is the whole matching's)
    order = list(CONV_ORDER)
    return frame.sort(order, nulls_last=True, maintain_order=True).drop(MS_COLUMNS).collect()


def stored_check(
    store: str | os.PathLike[str], opts: CheckOptions, *, tz: str | None = None
) -> tuple[pl.DataFrame, LoadResult] | None:
    """``check`` of a store from the tables made at ingest (:mod:`._check`), with the
    store's load report: the findings ``check`` of the log gives; None when the tables
    cannot answer (not current, a time window, other limits, another zone)."""
    if opts.since is not None or opts.until is not None:
        return None
    try:
        snap = open_store(store)
    except StoreError:
        return None
    if tz is not None and tz != snap.timezone:
        return None
    from a2a_lab.materialize._check import check_from_tables

    return check_from_tables(snap, opts, _check_want(snap, opts.limits, snap.events))
