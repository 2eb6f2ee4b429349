"""Make a large rotated log set from one generated log: k time-shifted copies with fresh ids.

``a2a_lab.samples.write_log`` simulates every event (about 45 s of one core per 730,000
events on an idle machine); a 3 GB set of a dozen files is quicker to make by copying one
such log. Copy ``k`` (``k = 0 … copies - 1``) of the source log gets

* every top-level ``ts`` moved by ``k × span`` (``span``: the source's time span plus one
  millisecond, rounded up to a whole hour), so the copies follow one another in time;
* every id rewritten so that no two copies share one, while ids of one copy stay equal
  where they were equal (a conversation, run, work session or task stays one within its
  copy and is another in the next): the 2nd group of each UUID (conversationId, runId,
  workSessionId ``ws_…``, session keys ``agent:x:subagent:…``, ``run …`` in reply
  previews) becomes ``k`` in 4 hex digits; the first 3 hex digits of ``task_<12 hex>``
  become ``k``; ``<word>_sim_<n>`` (payload task and question ids) becomes
  ``<word>_sim_<k>x<n>``. Lengths are unchanged except the last.

Rewriting is Polars string expressions over the whole file (no per-line Python). The
copies are named as the reference writer names size rotations (the ISO time of the copy's
last event, so the loader reads them in order), the last copy as the live file
``coordination-events.ndjson``. The source must carry only these id shapes (the log of
``write_log`` does); ``--check`` loads the first two copies with ``a2a_lab.load`` and fails
unless both have 0 rejects and twice the distinct ids of one.

Usage::

    python tools/replicate_log.py SOURCE.ndjson OUTDIR --copies 12 [--check]
    # a dense log: copies 1 hour apart, overlapping in time (12 x 860k events in one month)
    python tools/replicate_log.py SOURCE.ndjson OUTDIR --copies 12 --shift-hours 1
    # lines to append to the live file later (an incremental ingest): the first N of copy 12
    python tools/replicate_log.py SOURCE.ndjson OUTDIR --copies 12 --next-lines N FILE
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

HOUR_MS = 3_600_000
_UUID = r"([0-9a-f]{8})-[0-9a-f]{4}-([0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
_TASK = r"task_[0-9a-f]{3}([0-9a-f]{9})\b"
_SIM = r"\b([a-z]+)_sim_([0-9]+)"
_TS = r'^(.*?"ts":)(-?[0-9]+)(.*)$'
#: ``data`` fields whose values are ids (a session key only when it names a sub-agent run).
ID_FIELDS = ("conversationId", "runId", "workSessionId", "taskId", "targetSessionKey")


def read_source(path: Path) -> pl.DataFrame:
    """The source's lines (one ``line`` column) and its ``ts`` values, checked."""
    lines = pl.read_lines(path, name="line")
    parts = lines.select(pl.col("line").str.extract_groups(_TS).alias("g")).unnest("g")
    if parts.null_count().row(0) != (0, 0, 0):
        raise SystemExit(f"{path}: some line has no top-level integer ts")
    return lines.with_columns(
        parts["1"].alias("head"),
        parts["2"].cast(pl.Int64).alias("ts"),
        parts["3"].alias("tail"),
    )


def copy_lines(src: pl.DataFrame, k: int, shift_ms: int) -> pl.Series:
    """Copy ``k`` of the source lines: ``ts`` + ``shift_ms``, every id made copy ``k``'s."""
    if not 0 <= k < 0x1000:
        raise ValueError(f"k: at most 4096 copies, got {k}")

    def ids(col: str) -> pl.Expr:
        return (
            pl.col(col)
            .str.replace_all(_UUID, f"${{1}}-{k:04x}-${{2}}")
            .str.replace_all(_TASK, f"task_{k:03x}${{1}}")
            .str.replace_all(_SIM, f"${{1}}_sim_{k}x${{2}}")
        )

    return src.select(
        pl.concat_str(ids("head"), (pl.col("ts") + shift_ms).cast(pl.String), ids("tail")).alias(
            "line"
        )
    ).to_series()


def rotated_name(last_ts_ms: int) -> str:
    """The reference writer's size-rotation name for a file whose last event is at ``last_ts_ms``."""
    stamp = datetime.fromtimestamp(last_ts_ms / 1000, tz=UTC)
    return f"coordination-events-{stamp:%Y-%m-%dT%H-%M-%S}-{last_ts_ms % 1000:03d}Z.ndjson"


def span_ms(src: pl.DataFrame) -> int:
    """The time between copies: the source's span plus 1 ms, rounded up to a whole hour."""
    first, last = src["ts"].min(), src["ts"].max()
    assert isinstance(first, int) and isinstance(last, int)
    return -(-(last - first + 1) // HOUR_MS) * HOUR_MS


def replicate(
    source: Path, outdir: Path, copies: int, shift_hours: int | None = None
) -> list[Path]:
    """Write ``copies`` copies of ``source`` into ``outdir``, oldest first; returns them.

    ``shift_hours``: copy ``k`` is moved by ``k`` times that many hours instead of ``k``
    spans, so the copies overlap in time (a dense log: every copy within one month).
    """
    src = read_source(source)
    span = span_ms(src) if shift_hours is None else shift_hours * HOUR_MS
    last = src["ts"].max()
    assert isinstance(last, int)
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for k in range(copies):
        name = "coordination-events.ndjson" if k == copies - 1 else rotated_name(last + k * span)
        path = outdir / name
        lines = copy_lines(src, k, k * span)
        lines.to_frame().write_csv(path, include_header=False, quote_style="never")
        written.append(path)
        print(f"{path.name}: {lines.len()} lines, {path.stat().st_size} bytes", file=sys.stderr)
    return written


def check(paths: list[Path]) -> None:
    """Fail unless the first two copies load with 0 rejects and share no id."""
    import a2a_lab as al

    one = al.load(paths[0])
    two = al.load(paths[:2])
    for res in (one, two):
        if res.report.rejects.height or res.report.total_blank:
            raise SystemExit(f"rejects or blank lines in {res.report.files}: {res.report}")
    for name in ID_FIELDS:
        ids = pl.col("data").struct.field(name)
        # ``agent:x:main`` is one session in every copy: only sub-agent keys hold an id
        ids = ids.filter(ids.str.contains(":subagent:")) if name == "targetSessionKey" else ids
        n1 = one.events.select(ids.drop_nulls().n_unique()).item()
        n2 = two.events.select(ids.drop_nulls().n_unique()).item()
        if n1 == 0 or n2 != 2 * n1:
            raise SystemExit(f"{name}: {n1} distinct ids in one copy, {n2} in two")
        print(f"{name}: {n1} distinct in copy 0, {n2} in copies 0-1", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--copies", type=int, default=12)
    parser.add_argument("--check", action="store_true", help="load copies 0-1 and check them")
    parser.add_argument(
        "--next-lines",
        nargs=2,
        metavar=("N", "FILE"),
        help="only write the first N lines of copy COPIES (the one after the last) to FILE",
    )
    parser.add_argument(
        "--shift-hours",
        type=int,
        help="move copy k by k x this many hours (copies overlap: a dense log), not k spans",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    if args.next_lines is not None:
        n, target = int(args.next_lines[0]), Path(args.next_lines[1])
        src = read_source(args.source)
        shift = args.copies * span_ms(src)
        copy_lines(src.head(n), args.copies, shift).to_frame().write_csv(
            target, include_header=False, quote_style="never"
        )
        print(f"{target}: {n} lines, {target.stat().st_size} bytes", file=sys.stderr)
        return
    paths = replicate(args.source, args.outdir, args.copies, args.shift_hours)
    print(f"{len(paths)} files in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    if args.check:
        check(paths)


if __name__ == "__main__":
    main()
