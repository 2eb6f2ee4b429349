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
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from a2a_lab.enrich import ENRICHMENT_COLUMNS, MainAgents, enrich, resolve_main_agents
from a2a_lab.io._store_read import _events, _file_names
from a2a_lab.io._store_state import StoreError, _State
from a2a_lab.io._store_state import locked as _locked
from a2a_lab.io._store_state import read_state as _read_state
from a2a_lab.io._store_state import write_atomic as _write_atomic
from a2a_lab.reference.rules import TASK_MONITOR_V1, RuleSet
from a2a_lab.schema import polars_schema

#: The folder inside the store.
MATERIALIZED_DIR = "materialized"
_META = "materialized.json"
_FORMAT = "a2a-lab-materialized"
_VERSION = 1

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

    def __str__(self) -> str:
        text = f"materialised {self.new_rows} new events ({self.rows} in all, rule set {self.signature['version']})"
        return text if self.rebuilt is None else f"{text}; rebuilt: {self.rebuilt}"


def rules_signature(
    rules: RuleSet = TASK_MONITOR_V1, main_agents: MainAgents = None
) -> dict[str, Any]:
    """What the enriched columns depend on: the rule set (version and content) and main agents."""
    return {
        "version": rules.version,
        "fingerprint": rules.fingerprint,
        "main_agents": sorted(resolve_main_agents(main_agents, rules)),
    }


def _read_meta(store: Path) -> dict[str, Any] | None:
    try:
        meta = json.loads((store / MATERIALIZED_DIR / _META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (
        not isinstance(meta, dict)
        or meta.get("format") != _FORMAT
        or meta.get("version") != _VERSION
    ):
        return None
    return meta


def _stored_rows(state: _State) -> int:
    return sum(rows for rel, rows in state.parts.items() if rel.startswith("events/"))


def _narrow_data() -> pl.Expr:
    data = pl.col("data")
    kept = pl.struct([data.struct.field(name) for name in MATERIALIZED_DATA_FIELDS])
    return pl.when(data.is_not_null()).then(kept).alias("data")


#: The stored columns, in this order (``source`` stands for ``file`` until read back).
def _columns() -> list[str]:
    return ["source", *(c for c in polars_schema() if c != "file"), *ENRICHMENT_COLUMNS]


def materialize(
    store: str | os.PathLike[str],
    *,
    rules: RuleSet = TASK_MONITOR_V1,
    main_agents: MainAgents = None,
) -> MaterializeReport:
    """Enrich the stored events not yet materialised and store their narrow enriched columns.

    Parameters
    ----------
    store
        A history store (:func:`a2a_lab.io.ingest`).
    rules, main_agents
        As for :func:`a2a_lab.enrich`. Columns built with others are built again.

    Returns
    -------
    MaterializeReport
        Events added, events in all, and why everything was rebuilt if it was.

    Raises
    ------
    StoreError
        Not a store, or an ingest is running in it.
    """
    root = Path(store).expanduser()
    signature = rules_signature(rules, main_agents)
    with _locked(root):
        state = _read_state(root)
        folder = root / MATERIALIZED_DIR
        meta = _read_meta(root)
        rebuilt = None
        if meta is not None and (
            meta["signature"] != signature or meta["timezone"] != state.timezone
        ):
            rebuilt = _difference(meta, signature, state.timezone)
            meta = None
        if meta is None:
            shutil.rmtree(folder, ignore_errors=True)
            meta = {"parts": {}, "rows": 0}
        folder.mkdir(exist_ok=True)
        parts: dict[str, int] = dict(meta["parts"])
        done = (
            pl.scan_parquet([folder / p for p in parts]).select("source", "line").collect()
            if parts
            else pl.DataFrame(schema={"source": pl.Int32, "line": pl.Int64})
        )
        new_rows = 0
        next_id = max((int(p.split("-")[1].split(".")[0]) for p in parts), default=-1) + 1
        # one store part at a time: memory bounded by a part, not by how events fall in time
        for rel in sorted(r for r in state.parts if r.startswith("events/")):
            one = dataclasses.replace(state, parts={rel: state.parts[rel]})
            new = (
                _events(root, one, None)
                .join(done.lazy(), on=["source", "line"], how="anti")
                .select(*polars_schema(), "source")
            )
            frame = (
                enrich(new, rules=rules, main_agents=main_agents)
                .with_columns(_narrow_data())
                .select(_columns())
                .collect()
            )
            if frame.height == 0:
                continue
            name = f"m-{next_id:06d}.parquet"
            next_id += 1
            tmp = folder / (name + ".tmp")
            frame.write_parquet(tmp)
            os.replace(tmp, folder / name)
            parts[name] = frame.height
            new_rows += frame.height
        rows = sum(parts.values())
        out = {
            "format": _FORMAT,
            "version": _VERSION,
            "signature": signature,
            "timezone": state.timezone,
            "parts": parts,
            "rows": rows,
        }
        _write_atomic(folder / _META, json.dumps(out, indent=1).encode())
        # files of an interrupted call that the meta does not list
        for path in folder.iterdir():
            if path.name != _META and path.name not in parts:
                path.unlink()
    return MaterializeReport(new_rows, rows, rebuilt, signature)


def _difference(meta: dict[str, Any], signature: dict[str, Any], timezone: str) -> str:
    old = meta["signature"]
    if old["version"] != signature["version"] or old["fingerprint"] != signature["fingerprint"]:
        return (
            f"rule set {old['version']} ({old['fingerprint'][:12]}) -> "
            f"{signature['version']} ({signature['fingerprint'][:12]})"
        )
    if old["main_agents"] != signature["main_agents"]:
        return f"main agents {old['main_agents']} -> {signature['main_agents']}"
    return f"time zone {meta['timezone']} -> {timezone}"


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
    root = Path(store).expanduser()
    try:
        state = _read_state(root)
    except StoreError:
        return None
    meta = _read_meta(root)
    if (
        meta is None
        or meta["signature"] != rules_signature(rules, main_agents)
        or meta["timezone"] != state.timezone
        or (tz is not None and tz != state.timezone)
        or meta["rows"] != _stored_rows(state)
        or not meta["parts"]
    ):
        return None
    names = _file_names(state)
    folder = root / MATERIALIZED_DIR
    frame = pl.scan_parquet([folder / p for p in sorted(meta["parts"])]).with_columns(
        pl.col("source")
        .replace_strict(names["source"], names["file"], return_dtype=pl.String)
        .alias("file"),
        pl.col("source")
        .replace_strict(names["source"], names["_rank"], return_dtype=pl.Int64)
        .alias("_rank"),
    )
    order = [c for c in polars_schema() if c not in ("raw",)] + list(ENRICHMENT_COLUMNS)
    return frame.sort("_rank", "line").select(order)
