"""``a2a-lab ingest --repair``: rebuild a history store's state from its parts and kept lines.

A repair never deletes a file: what it cannot use (a damaged state, a part whose checksum
or size differs from the state's, an unreadable part, a copy of rows another part holds,
the parts of an ingest that never committed) is moved to ``damaged/`` under the same
relative path. Then:

* the parts kept are read (their keys: source and line, or the note's sequence number);
  two parts holding the same rows (a compaction's output and the inputs it replaced) keep
  the larger one; parts that overlap only in part are a :class:`StoreError`;
* each source's lines must be 1..n (n: its cursor's count, or the last line held when the
  state is lost); lines missing (their part was damaged or lost) are read again from the
  file of the log directory that still holds that content (every line the store still
  holds must match it), and decoded as an ingest decodes them;
* a source whose cursor was lost gets one rebuilt from its kept lines (the content is
  their concatenation: its length, first bytes and tail fingerprint), its name, exact-path
  count and open end from the parts' footers; the next ingest finds its file by content;
* the state is written with a fresh checksum of every part.

Lines that no part and no file holds any more cannot be recovered: the repair stops with a
:class:`StoreError` naming the file and the lines, and leaves the state as it was.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import numpy as np
import polars as pl

from a2a_lab.io._paths import polars_path
from a2a_lab.io._store_state import (
    DAMAGED_DIR,
    JOURNAL_NAME,
    LINE_NOTES,
    STATE_NAME,
    TABLES_KIND,
    FileEntry,
    StoreError,
    _State,
    file_problem,
    generation_of,
    next_generation,
    part_files,
    read_state,
    remove_retired,
    remove_uncommitted,
    sha256_of,
    state_problems,
    write_journal,
    write_state,
)
from a2a_lab.io._store_write import (
    SOURCES_KEY,
    IngestReport,
    _ingest_piece,
    _Writer,
    lines_held,
)
from a2a_lab.io._tracking import HEAD, TAIL, Cursor, Piece, _digest, content_blocks, watched_files


def _set_aside(store: Path, rel: str, why: str, report: IngestReport) -> None:
    """Move a file to ``damaged/`` (never delete it), saying so in the report."""
    target = store / DAMAGED_DIR / rel
    n = 0
    while target.exists():
        n += 1
        target = store / DAMAGED_DIR / f"{rel}.{n}"
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(store / rel, target)
    report.recovered.append(f"moved {rel} ({why}) to {target.relative_to(store).as_posix()}")


def _keys(path: Path, kind: str) -> pl.DataFrame:
    """The rows' identities: ``source, line, kind, key`` (key: line, or the note's nseq)."""
    if kind == "events":
        return pl.read_parquet(polars_path(path), columns=["source", "line"]).with_columns(
            pl.lit("event").alias("kind"), pl.col("line").alias("key")
        )
    return pl.read_parquet(polars_path(path), columns=["source", "line", "kind", "nseq"]).rename(
        {"nseq": "key"}
    )


def _read_old(store: Path, report: IngestReport) -> _State | None:
    try:
        return read_state(store)
    except StoreError:
        if (store / STATE_NAME).exists():
            _set_aside(store, STATE_NAME, "damaged state", report)
        return None


def _candidates(
    store: Path, old: _State | None, report: IngestReport
) -> tuple[dict[str, pl.DataFrame], dict[str, FileEntry]]:
    """The part files a repair can use and their keys; the others are set aside."""
    listed = {e.path: e for e in old.files} if old else {}
    good: dict[str, pl.DataFrame] = {}
    for rel in part_files(store):
        if old is not None and rel in old.ignored:
            continue
        if old is not None and rel not in listed and generation_of(rel) > old.generation:
            _set_aside(store, rel, "written by an ingest that never committed", report)
            continue
        entry = listed.get(rel)
        if entry is not None and entry.sha256:
            problem = file_problem(store, entry, full=True)
            if problem is not None:
                _set_aside(store, rel, problem.split(": ", 1)[1], report)
                continue
        try:
            good[rel] = _keys(store / rel, rel.split("/", 1)[0])
        except Exception as exc:
            _set_aside(store, rel, f"unreadable: {type(exc).__name__}", report)
    return good, listed


def _dedupe(store: Path, good: dict[str, pl.DataFrame], report: IngestReport) -> None:
    """Keep one part of every set of parts holding the same rows (the largest)."""
    tagged = [
        k.select(pl.col("kind") == "event", "source", "key").with_columns(pl.lit(rel).alias("rel"))
        for rel, k in good.items()
    ]
    if not tagged:
        return
    allkeys = pl.concat(tagged).rename({"kind": "is_event"})
    dup = allkeys.filter(pl.len().over("is_event", "source", "key") > 1)
    involved = sorted(set(dup["rel"].to_list()), key=lambda r: (-good[r].height, r))
    accepted: pl.DataFrame | None = None
    for rel in involved:
        mine = allkeys.filter(pl.col("rel") == rel).drop("rel")
        if accepted is None:
            accepted = mine
            continue
        common = mine.join(accepted, on=["is_event", "source", "key"], how="semi").height
        if common == 0:
            accepted = pl.concat([accepted, mine])
        elif common == mine.height:
            del good[rel]
            _set_aside(store, rel, "a copy of rows another part holds", report)
        else:
            raise StoreError(
                f"repair: {rel} shares {common} of its {mine.height} rows with other parts; "
                f"move the part that is wrong out of {store} and repair again"
            )


def _footers(store: Path, rels: list[str]) -> tuple[dict[str, str], dict[int, dict[str, object]]]:
    """The store's logdir and zone, and each source's name, exact count and open end."""
    store_info: dict[str, str] = {}
    sources: dict[int, dict[str, object]] = {}
    for rel in sorted(rels):  # generation order: the later name wins
        note = pl.read_parquet_metadata(polars_path(store / rel)).get(SOURCES_KEY)
        if note is None:
            continue
        obj = json.loads(note)
        store_info.update({k: v for k, v in obj.items() if k != "sources"})
        for sid, info in obj.get("sources", {}).items():
            prev = sources.get(int(sid), {"exact": 0, "open_end": False})
            sources[int(sid)] = {
                "name": info["name"],
                "exact": int(info["exact"]) + int(prev["exact"]),  # type: ignore[call-overload]
                "open_end": bool(info["open_end"]) or bool(prev["open_end"]),
            }
    return store_info, sources


def _kept_lines(store: Path, rels: list[str], source: int) -> pl.DataFrame:
    """``line, bytes`` of every line of one source the parts hold, in line order."""
    frames = []
    for rel in rels:
        scan = pl.scan_parquet(polars_path(store / rel)).filter(pl.col("source") == source)
        if rel.startswith("events/"):
            frames.append(
                scan.select("line", pl.coalesce("orig", pl.col("raw").cast(pl.Binary)).alias("b"))
            )
        else:
            frames.append(
                scan.filter(pl.col("kind").is_in(LINE_NOTES)).select(
                    "line", pl.col("orig").alias("b")
                )
            )
    if not frames:
        return pl.DataFrame(schema={"line": pl.Int64, "b": pl.Binary})
    return pl.concat(frames).collect().sort("line")


def _file_lines(path: Path) -> tuple[list[bytes], bool]:
    """A file's content as physical lines, and whether its last line has no newline."""
    data = b"".join(content_blocks(path))
    lines = data.split(b"\n")
    open_end = not data.endswith(b"\n")
    if not open_end:
        lines.pop()
    return lines, open_end


def _holder_of(
    logdir: Path, name: str, kept: pl.DataFrame, n: int
) -> tuple[Path, list[bytes], bool] | None:
    """The file of the log directory whose content holds a source's kept lines (to ``n``)."""
    files = watched_files(logdir, None)
    files.sort(key=lambda p: p.name != name)
    want = kept["b"].hash(seed=0)
    for path in files:
        try:
            lines, open_end = _file_lines(path)
        except OSError:
            continue
        if len(lines) < n:
            continue
        at = pl.Series([lines[i - 1] for i in kept["line"].to_list()], dtype=pl.Binary)
        if at.hash(seed=0).equals(want):
            return path, lines, open_end
    return None


def _runs(missing: np.ndarray) -> list[tuple[int, int]]:
    """Consecutive line numbers as (first, last) runs."""
    if not len(missing):
        return []
    cuts = np.flatnonzero(np.diff(missing) != 1)
    firsts = np.concatenate(([missing[0]], missing[cuts + 1]))
    lasts = np.concatenate((missing[cuts], [missing[-1]]))
    return list(zip(firsts.tolist(), lasts.tolist(), strict=True))


def _rebuilt_cursor(source: int, kept: pl.DataFrame, info: dict[str, object], blank: int) -> Cursor:
    """A cursor for a content known only from its kept lines (its file is found by content)."""
    open_end = bool(info.get("open_end", False))
    body = b"\n".join(kept["b"].to_list())
    content = body if open_end else body + b"\n"
    tail_len = min(TAIL, len(content))
    return Cursor(
        id=source,
        name=str(info.get("name", "")),
        offset=len(content),
        lines=kept.height,
        blank=blank,
        exact=int(info.get("exact", 0)),  # type: ignore[call-overload]
        head=base64.b64encode(content[:HEAD]).decode("ascii"),
        tail_len=tail_len,
        tail=_digest(content[len(content) - tail_len :]),
        open_end=open_end,
    )


def _tables(
    store: Path, old: _State | None, report: IngestReport
) -> tuple[list[FileEntry], dict[str, dict[str, object]]]:
    """The derived tables' files that check out, and the meta of the tables left whole.

    A file that fails its check, or that the state does not list, is moved to
    ``damaged/``; a table that lost a file loses its meta, so its writer
    (:func:`a2a_lab.io.update_store`) sees it incomplete and builds it again: a table
    is never read partly.
    """
    listed = {e.path: e for e in old.files if e.kind == TABLES_KIND} if old else {}
    kept: list[FileEntry] = []
    lost: set[str] = set()
    on_disk = [r for r in part_files(store, tables=True) if r.startswith(TABLES_KIND + "/")]
    for rel in on_disk:
        if old is not None and rel in old.ignored:
            continue
        entry = listed.get(rel)
        problem = (
            "not listed by the state" if entry is None else file_problem(store, entry, full=True)
        )
        if problem is None and entry is not None:
            kept.append(entry)
            continue
        _set_aside(store, rel, problem.split(": ", 1)[-1] if problem else "damaged", report)
        lost.add(rel.split("/")[1])
    lost |= {rel.split("/")[1] for rel in set(listed) - set(on_disk)}
    meta = {k: v for k, v in (old.tables if old else {}).items() if k not in lost}
    for name in sorted(lost):
        report.recovered.append(f"derived table {name} is incomplete: built again when next made")
    return kept, meta


def _describe(store: Path, rel: str, keys: pl.DataFrame, listed: FileEntry | None) -> FileEntry:
    if listed is not None and listed.sha256:
        return listed
    st = (store / rel).stat()
    kind = rel.split("/", 1)[0]
    return FileEntry(
        path=rel,
        kind=kind,
        rows=keys.height,
        bytes=st.st_size,
        sha256=sha256_of(store / rel),
        mtime_ns=st.st_mtime_ns,
        lines=lines_held(keys, kind),
    )


def repair_store(store: Path, logdir: Path, timezone: str | None, report: IngestReport) -> None:
    """Rebuild the state of ``store`` (under its lock); see the module notes."""
    old = _read_old(store, report)
    if old is not None:
        n = remove_uncommitted(store, old.generation)
        if n:
            report.recovered.append(
                f"deleted {n} uncommitted part file(s) of an interrupted ingest"
            )
        remove_retired(store, old)
        if not state_problems(store, old, full=True):
            report.recovered.append("repair: the store was whole")
            return
    else:  # whether the journal's generation was committed is unknown: keep its parts
        (store / JOURNAL_NAME).unlink(missing_ok=True)
    good, listed = _candidates(store, old, report)
    _dedupe(store, good, report)
    tables, table_meta = _tables(store, old, report)
    rels = sorted(good)
    store_info, footer = _footers(store, rels)
    keys = pl.concat(list(good.values())) if good else None
    state = _State(
        logdir=old.logdir if old else store_info.get("logdir", str(logdir)),
        settings={
            "timezone": old.timezone if old else store_info.get("timezone", timezone or "UTC")
        },
        cursors=[],
        files=[_describe(store, r, good[r], listed.get(r)) for r in rels],
        next_nseq=max(
            old.next_nseq if old else 0,
            int(keys.filter(pl.col("kind") != "event")["key"].max() or -1) + 1  # type: ignore[arg-type]
            if keys is not None
            else 0,
        ),
    )
    if state.logdir != str(logdir):
        raise StoreError(f"logdir: the store {store} holds {state.logdir}, not {logdir}")
    state.generation = next_generation(store, state)
    write_journal(store, state.generation)
    writer = _Writer(store, state)
    old_cursors = {c.id: c for c in old.cursors} if old else {}
    ids = sorted(
        set(old_cursors)
        | set(footer)
        | (set(keys["source"].to_list()) if keys is not None else set())
    )
    for sid in ids:
        src_rels = [e.path for e in state.files if e.lines.get(sid)]
        kept = _kept_lines(store, src_rels, sid)
        cursor = old_cursors.get(sid)
        n = cursor.lines if cursor is not None else int(kept["line"].max() or 0)  # type: ignore[arg-type]
        missing = np.setdiff1d(np.arange(1, n + 1), kept["line"].to_numpy())
        name = cursor.name if cursor is not None else str(footer.get(sid, {}).get("name", ""))
        if len(missing):
            found = _holder_of(logdir, name, kept, n)
            if found is None:
                a, b = _runs(missing)[0]
                raise StoreError(
                    f"repair: lines {a}-{b} of {name} (source {sid}; {len(missing)} lines in all) "
                    f"are in no part and in no file of {logdir} any more; restore that file "
                    "and repair again"
                )
            path, lines, open_end = found
            target = cursor or Cursor(id=sid, name=path.name)
            for a, b in _runs(missing):
                last_open = open_end and b == len(lines)
                data = b"\n".join(lines[a - 1 : b]) + (b"" if last_open else b"\n")
                _ingest_piece(Piece(target, path, data, a - 1), state, writer, report, count=False)
            report.recovered.append(
                f"read {len(missing)} lost line(s) of {name} (source {sid}) again from {path}"
            )
            src_rels = [e.path for e in writer.files.values() if e.lines.get(sid)]
            kept = _kept_lines(store, src_rels, sid)
        if cursor is None:
            notes = [store / r for r in src_rels if r.startswith("notes/")]
            blank = (
                pl.scan_parquet([polars_path(p) for p in notes])
                .filter((pl.col("source") == sid) & (pl.col("kind") == "blank"))
                .select(pl.len())
                .collect()
                .item()
                if notes
                else 0
            )
            cursor = _rebuilt_cursor(sid, kept, footer.get(sid, {"name": name}), blank)
            report.recovered.append(f"rebuilt the cursor of {cursor.name} (source {sid})")
        state.cursors.append(cursor)
    state.files = list(writer.files.values()) + tables
    state.tables = table_meta
    state.retired = writer.retired
    state.ignored = list(old.ignored) if old else []
    write_state(store, state)
    (store / JOURNAL_NAME).unlink(missing_ok=True)
    report.recovered.append(f"repair: state rebuilt with {len(state.files)} part(s)")
