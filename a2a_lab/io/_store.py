"""An incremental Parquet history store of a log directory.

Layout of a store directory::

    a2a-store.json                       the state: marker, cursors, every file with its checksum
    events/month=YYYY-MM/part-*.parquet  events, hive-partitioned by UTC month of event time
    notes/part-*.parquet                 rejected, blank and repeated lines, problems in kept events
    materialized/<table>/part-*.parquet  tables derived from the events (io._store_tables)
    .lock                                held (flock) by a running ingest, which writes its pid in it
    .ingest-journal.json                 the generation a running ingest writes its parts under
    damaged/                             files a repair set aside (never deleted)

``a2a-store.json`` is the single source of truth. It lists every file of the store with its
kind, row count, size and SHA-256, and, per source (ingested file content), how many of the
source's physical lines each part holds: every line is exactly one row of an events part or
a line note (reject, blank, repeat), so the lines listed add up to each cursor's line count.
Every read checks the files against the state (size and modification time; a file whose time
changed is hashed), and the state against itself; a mismatch is a :class:`StoreError` naming
the file and the repair (``a2a-lab ingest --repair LOGDIR STORE``, see :func:`ingest`).

An ingest takes the lock, notes its generation ``g`` in the journal, writes new parts named
``part-{g:08d}-*`` (to a temporary name, then renamed), replaces the state file atomically as
its very last step, and only then deletes the parts that compaction replaced (which the state
lists as ``retired``). Killed at any moment, it leaves the committed store as it was; the next
ingest deletes the files the journal proves the killed one wrote and reads its lines again.
No ingest deletes a file it cannot prove an ingest wrote: a part file the state does not list
is reported, not deleted.

Every event keeps its original line: ``raw`` (the trimmed text the loader keeps) and,
only where the file's bytes differ from it (surrounding whitespace, CR, invalid UTF-8),
``orig`` with the exact bytes. Rejected, blank and repeated lines keep theirs in ``notes``. So
the ingested files can be written back byte for byte (:func:`export_store`), and a repair can
rebuild the state from the parts alone.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl

from a2a_lab.io._decode import DecodedText
from a2a_lab.io._paths import polars_path
from a2a_lab.io._result import _finish, join_decoded
from a2a_lab.io._sources import split_target
from a2a_lab.io._store_state import (
    DAMAGED_DIR,
    JOURNAL_NAME,
    LINE_KINDS,
    LINE_NOTES,
    LOCK_NAME,
    STATE_NAME,
    STORE_ENTRIES,
    FileEntry,
    StoreError,
    _State,
    check,
    crash_point,
    is_store,
    locked,
    next_generation,
    part_files,
    part_rows,
    read_state,
    recover,
    remove_retired,
    repair_hint,
    sha256_of,
    write_journal,
    write_state,
)
from a2a_lab.io._store_write import (
    DATA_FIELDS_KEY,
    MAX_SMALL,
    SEAL_ROWS,
    IngestReport,
    _ingest_piece,
    _repeat_piece,
    _Writer,
    lines_held,
)
from a2a_lab.io._tracking import (
    Cursor,
    line_fingerprints,
    new_pieces,
)
from a2a_lab.time import Zone, check_tz

__all__ = [
    "DAMAGED_DIR",
    "DATA_FIELDS_KEY",
    "LOCK_NAME",
    "MAX_SMALL",
    "SEAL_ROWS",
    "STATE_NAME",
    "IngestReport",
    "StoreError",
    "ingest",
    "is_store",
]


# ---------------------------------------------------------------------------------------
# ingest
# ---------------------------------------------------------------------------------------


def _progress(enabled: bool | None) -> Any:
    """A byte progress bar; by default only on a terminal and never in CI."""
    from tqdm.auto import tqdm

    if enabled is None:
        enabled = sys.stderr.isatty() and not os.environ.get("CI")
    return tqdm(total=None, unit="B", unit_scale=True, desc="ingest", disable=not enabled)


def _prepare(store: Path) -> None:
    """Create the store directory, or check that an existing one is (or was becoming) a store."""
    if store.exists() and not store.is_dir():
        raise StoreError(f"store: {store} exists and is not a directory")
    store.mkdir(parents=True, exist_ok=True)
    if not (store / STATE_NAME).exists() and set(os.listdir(store)) - STORE_ENTRIES:
        raise StoreError(f"store: {store} exists and is not an a2a-lab store (no {STATE_NAME})")


def _open_state(
    store: Path, logdir: Path, timezone: str | None, report: IngestReport, *, full: bool
) -> _State:
    """The committed state, the leftovers of an interrupted ingest removed, checked whole.

    A store without state gets an empty one at once (still under the lock): a first ingest
    killed later leaves a store the next one recovers like any other.
    """
    if not (store / STATE_NAME).exists():
        if part_files(store):
            raise StoreError(
                f"store damaged: {store} holds parts but no {STATE_NAME}; "
                f"{repair_hint(str(logdir), store)}"
            )
        state = _State(logdir=str(logdir), settings={"timezone": timezone or "UTC"}, cursors=[])
        write_state(store, state)
    state = read_state(store)
    if state.logdir != str(logdir):
        raise StoreError(f"logdir: the store {store} holds {state.logdir}, not {logdir}")
    if timezone is not None and timezone != state.timezone:
        raise StoreError(
            f"timezone: the store {store} was ingested with {state.timezone!r}, not {timezone!r}"
        )
    report.recovered += recover(store, state)
    _upgrade(store, state)
    check(store, state, full=full)
    return state


def _upgrade(store: Path, state: _State) -> None:
    """Give the entries of a version 1 state their size, checksum and line counts."""
    for e in state.files:
        path = store / e.path
        if e.sha256 or e.kind not in LINE_KINDS or not path.is_file():
            continue
        if part_rows(path) != e.rows:
            continue  # the check reports it
        cols = ["source", "kind"] if e.kind == "notes" else ["source"]
        e.lines = lines_held(pl.read_parquet(polars_path(path), columns=cols), e.kind)
        st = path.stat()
        e.bytes, e.mtime_ns, e.sha256 = st.st_size, st.st_mtime_ns, sha256_of(path)


def ingest(
    logdir: str | os.PathLike[str],
    store: str | os.PathLike[str],
    *,
    tz: str | None = None,
    keep_events: bool = False,
    progress: bool | None = None,
    repair: bool = False,
    verify: bool = False,
) -> IngestReport:
    """Add the new complete lines of a log directory to a history store.

    Reads the live ``coordination-events.ndjson`` and its rotated siblings (``.gz`` too)
    from where the previous ingest stopped, following rotation, gzip, truncation and
    in-place rewrites without loss or duplicates (see :class:`~a2a_lab.io.LogFollower`); a
    partial last line of the live file waits for its newline. Safe to run from cron at any
    moment: one ingest at a time (a second one fails with :class:`StoreError` saying the
    store is busy), and an interrupted one (killed at any point) leaves the store as it
    was; the next ingest removes what it wrote and reads its lines again.

    The store is checked before anything is added: a part missing, of another size or
    checksum, a part the state does not list, or a damaged state is a :class:`StoreError`
    naming the file; nothing is written then.

    Parameters
    ----------
    logdir
        The log directory (or its live file).
    store
        The store directory; created on the first ingest.
    tz
        Zone for ISO timestamps without an offset, fixed by the first ingest (default UTC);
        another value later is an error. An unknown zone raises ``ValueError`` naming ``tz``.
    keep_events
        Also return the new events and their load report (``report.new``).
    progress
        Show a progress bar (default: only when interactive and not in CI).
    repair
        First rebuild the state from the parts and their kept lines (``a2a-lab ingest
        --repair``): damaged parts are moved to ``damaged/`` and their lines read again from
        the log directory; see ``docs/api.md``. What was done is in ``report.recovered``.
    verify
        Check every part's checksum, not only those whose size or time changed.

    Returns
    -------
    IngestReport

    Raises
    ------
    StoreError
        If ``logdir`` is not a directory, ``store`` is another directory or holds another
        log directory, the store is busy or damaged, or the timezone differs from the store's.

    Examples
    --------
    >>> import tempfile, pathlib, a2a_lab as al
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "coordination-events.ndjson").write_text('{"type":"a2a.send","ts":1}\\n')
    >>> al.ingest(d, d / "store").events, al.ingest(d, d / "store").events
    (1, 0)
    >>> al.load(d / "store").events["type"].to_list()
    ['a2a.send']
    """
    # a resolved Zone (the CLI's --tz) is not checked again
    timezone = tz if tz is None or isinstance(tz, Zone) else check_tz(tz)
    started = time.perf_counter()
    logdir_path, store_path = _targets(logdir, store)
    _prepare(store_path)
    report = IngestReport(store=store_path)
    with locked(store_path) as stale:
        if stale is not None:
            report.recovered.append(stale)
        crash_point("locked")
        if repair:
            from a2a_lab.io._store_repair import repair_store

            repair_store(store_path, logdir_path, timezone, report)
        state = _open_state(store_path, logdir_path, timezone, report, full=verify)
        # the store's zone resolved once for every piece read (the same as ``timezone``)
        state.settings["timezone"] = timezone if timezone is not None else check_tz(state.timezone)
        committed = list(state.files)
        state.generation = next_generation(store_path, state)
        write_journal(store_path, state.generation)
        crash_point("journal")
        writer = _Writer(store_path, state)
        kept = _add_pieces(logdir_path, state, writer, report, committed, keep_events, progress)
        report.damaged = _damaged(logdir_path, state.cursors)
        state.files = list(writer.files.values())
        state.retired = state.retired + writer.retired
        write_state(store_path, state)
        remove_retired(store_path, state)
        crash_point("done")
        (store_path / JOURNAL_NAME).unlink(missing_ok=True)
    report.parts_written, report.parts_removed = writer.written, len(writer.retired)
    if keep_events:
        report.new = _finish(join_decoded(kept), True)
    report.seconds = time.perf_counter() - started
    return report


def _targets(logdir: str | os.PathLike[str], store: str | os.PathLike[str]) -> tuple[Path, Path]:
    """The log directory and the store, absolute, checked (a directory, not the same)."""
    logdir_path, single = split_target(logdir)
    if single is not None:
        raise StoreError(f"logdir: a log directory or its live file is needed, not {logdir}")
    logdir_path = logdir_path.absolute()
    if not logdir_path.is_dir():
        raise StoreError(f"logdir: no such directory: {logdir_path}")
    store_path = Path(store).expanduser().absolute()
    if store_path == logdir_path:
        raise StoreError("store: the store cannot be the log directory itself")
    return logdir_path, store_path


def _add_pieces(
    logdir: Path,
    state: _State,
    writer: _Writer,
    report: IngestReport,
    committed: list[FileEntry],
    keep_events: bool,
    progress: bool | None,
) -> list[tuple[str, DecodedText, pl.DataFrame]]:
    """Write the new pieces of the log directory's files; the decoded ones if ``keep_events``."""
    kept: list[tuple[str, DecodedText, pl.DataFrame]] = []
    bar = _progress(progress)
    try:
        for piece in new_pieces(
            logdir,
            state.cursors,
            _next_id(state.cursors),
            single=None,
            seen=lambda c: seen_lines(writer.store, committed, c.id),
        ):
            if piece.repeat:
                _repeat_piece(piece, state, writer, report)
            else:
                dec, extra = _ingest_piece(piece, state, writer, report)
                if keep_events:
                    kept.append((str(piece.path), dec, extra))
                del dec, extra
            bar.update(len(piece.data))
    finally:
        bar.close()
    return kept


def seen_lines(store: Path, files: list[FileEntry], source: int) -> pl.Series:
    """Fingerprints of the lines the store holds of one source (for a rewrite of it)."""
    events = [store / e.path for e in files if e.kind == "events" and e.lines.get(source)]
    notes = [store / e.path for e in files if e.kind == "notes" and e.lines.get(source)]
    frames = []
    if events:
        frames.append(
            pl.scan_parquet([polars_path(p) for p in events])
            .filter(pl.col("source") == source)
            .select(pl.coalesce("orig", pl.col("raw").cast(pl.Binary)).alias("b"))
        )
    if notes:
        frames.append(
            pl.scan_parquet([polars_path(p) for p in notes])
            .filter((pl.col("source") == source) & pl.col("kind").is_in(LINE_NOTES))
            .select(pl.col("orig").alias("b"))
        )
    if not frames:
        return line_fingerprints(b"")
    return pl.concat(frames).collect().to_series().hash(seed=0)


def _next_id(cursors: list[Cursor]) -> int:
    return max((c.id for c in cursors), default=-1) + 1


def _damaged(logdir: Path, cursors: list[Cursor]) -> list[str]:
    """Compressed files not read to a clean end (``complete`` is false for them)."""
    return [
        str(logdir / c.name)
        for c in cursors
        if c.name.endswith(".gz") and not c.complete and (logdir / c.name).exists()
    ]
