"""Make one derived table of a materialised store again, in one process, and compare it
with the table it replaces (issue 24: the phases of an ingest that grow with the events).

The whole ingest of 10 M events takes hours of wall time on the shared machine; the
phases that held every event at once can be measured alone on a store already ingested.
Run each under ``/usr/bin/time -v`` (peak RSS, CPU)::

    PYTHONPATH=$PWD nice -n 10 /usr/bin/time -v python benchmarks/bench_rebuild_tables.py \\
        STORE sessions          # the work-sessions table, every session (hash classes)
    ... STORE check_events      # check's event findings, every lean row (hash classes)

The table is written again (same rows) and committed; the script fails if its rows differ
from the table it replaces (sorted: the row order of a table is not part of its content).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from a2a_lab.analysis.checks import CheckLimits  # noqa: E402
from a2a_lab.io import open_store, polars_path, update_store  # noqa: E402
from a2a_lab.materialize import ENRICHED_TABLE, rules_signature  # noqa: E402
from a2a_lab.materialize._check import rebuild_findings  # noqa: E402
from a2a_lab.materialize._names import CHECK_EVENTS, CHECK_LEAN  # noqa: E402
from a2a_lab.materialize._sessions import SESSIONS_TABLE, update_sessions  # noqa: E402


def _table(store: Path, name: str) -> pl.DataFrame:
    scan = open_store(store).scan_table(name)
    assert scan is not None, f"{store} has no table {name}"
    return scan.collect().sort(pl.all(), nulls_last=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("table", choices=["sessions", "check_events"])
    args = parser.parse_args()
    name = SESSIONS_TABLE if args.table == "sessions" else CHECK_EVENTS
    kept = args.store.parent / f"{args.store.name}.{name}.before.parquet"
    # written aside, not held while the table is made: the peak is the making's
    _table(args.store, name).write_parquet(kept)
    started = time.process_time()
    with update_store(args.store) as update:
        snap = update.snapshot

        def scan(table: str) -> pl.LazyFrame:
            files = [polars_path(snap.path / rel) for rel in update.table_files(table)]
            return pl.scan_parquet(files)

        if args.table == "sessions":
            meta = {k: v for k, v in snap.table(SESSIONS_TABLE).meta.items() if k != "ranks"}
            assert meta["signature"] == rules_signature()
            update_sessions(update, scan(ENRICHED_TABLE), None, meta)
        else:
            meta = snap.table(CHECK_EVENTS).meta
            rows = rebuild_findings(snap, update.table_files(CHECK_LEAN), CheckLimits())
            update.drop(CHECK_EVENTS)
            update.write(CHECK_EVENTS, rows)
            update.set_meta(CHECK_EVENTS, meta)
    cpu = time.process_time() - started
    after, before = _table(args.store, name), pl.read_parquet(kept)
    kept.unlink()
    print(f"{name}: {after.height} rows (before: {before.height}), made in {cpu:.1f} CPU s")
    if not after.equals(before):
        raise SystemExit("the table made again differs")


if __name__ == "__main__":
    main()
