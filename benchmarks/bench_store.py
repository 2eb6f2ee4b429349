"""History store benchmark (issue 12 item 3): ingest, +1 % incremental ingest, analyses from the store.

A log of ``--files`` rotated files (``a2a_lab.samples.write_log``, one call per file, each
starting where the previous one ends, named as the reference writer rotates) plus a live
file. Every step is a fresh process under ``/usr/bin/time -v`` (wall time and peak RSS):

* B21: ``pl.read_ndjson`` of every file with the lean 21-field schema (issue 12), the baseline;
* ``a2a-lab ingest LOGDIR STORE`` (full), and again after appending 1 % more lines to the
  live file (incremental);
* ``a2a-lab work-sessions STORE`` and ``a2a-lab conversations STORE``, and
  ``a2a-lab work-sessions LOGDIR`` for comparison (same output checked).

Goals: peak RSS ≤ 4 GB for ingest and the analyses from the store (≈ 3 GB log); the
incremental ingest ≤ 5 % of the full one. Usage::

    python benchmarks/bench_store.py --events-per-file 290000 --files 10 --workdir /tmp/a2a_store_bench

With ``--replicate-from LOG`` the files are copies of one generated log instead
(``tools/replicate_log.py``: time-shifted, ids rewritten per copy; minutes instead of an
hour for 12 files), and the +1 % is the first lines of the next copy::

    python benchmarks/bench_store.py --replicate-from base.ndjson --files 11 --workdir /tmp/a2a_store_full
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from _common import ROOT, machine, run_timed, save

#: Events per simulated day of ``write_log`` (its default).
BENCH_EVENTS_PER_DAY = 60_000

#: The lean 21-field schema of issue 12 ("B21").
B21 = """
import sys, polars as pl
U = pl.Utf8
data = pl.Struct({k: U for k in ["fromAgent", "toAgent", "conversationId", "workSessionId", "taskId",
    "eventRole", "fromSessionType", "toSessionType", "message", "targetSessionKey", "runId",
    "replyPreview", "outcome", "waitStatus", "waitError", "payloadType", "payloadJson", "error"]}
    | {"turn": pl.Int64, "maxTurns": pl.Int64, "announced": pl.Boolean})
schema = {"type": U, "agentId": U, "ts": pl.Int64, "data": data}
frames = [pl.read_ndjson(p, schema=schema) for p in sys.argv[1:]]
print(sum(f.height for f in frames))
"""


def generate(logdir: Path, files: int, per_file: int, seed: int) -> list[Path]:
    """Rotated files oldest first, then the live file, each ``per_file`` events."""
    from a2a_lab.samples import LOG_START as BENCH_START
    from a2a_lab.samples import write_log

    logdir.mkdir(parents=True, exist_ok=True)
    out = []
    span = timedelta(days=per_file / BENCH_EVENTS_PER_DAY)
    for i in range(files + 1):
        start = BENCH_START + i * span
        stamp = (start + span).strftime("%Y-%m-%dT%H-%M-%S-000Z")
        name = "coordination-events.ndjson" if i == files else f"coordination-events-{stamp}.ndjson"
        path = logdir / name
        if not path.exists():
            write_log(path, per_file, seed=seed + i, start=start)
        out.append(path)
    return out


def _replicate(
    source: Path, logdir: Path, copies: int, next_lines: tuple[int, Path] | None = None
) -> list[Path]:
    """``tools/replicate_log.py``: the copies (oldest first), or only the next copy's lines."""
    cmd = [sys.executable, str(ROOT / "tools" / "replicate_log.py"), str(source), str(logdir)]
    cmd += ["--copies", str(copies)]
    if next_lines is not None:
        cmd += ["--next-lines", str(next_lines[0]), str(next_lines[1])]
    else:
        shutil.rmtree(logdir, ignore_errors=True)
    subprocess.run(cmd, check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    from a2a_lab.io._sources import log_files_in_dir

    return log_files_in_dir(logdir)


def _count_lines(path: Path) -> int:
    with path.open("rb") as fh:
        return sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 24), b""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events-per-file", type=int, default=290_000)
    parser.add_argument("--files", type=int, default=10, help="rotated files (plus one live file)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/a2a_store_bench"))
    parser.add_argument("--seed", type=int, default=20260222)
    parser.add_argument("--keep", action="store_true", help="keep the generated log and store")
    parser.add_argument(
        "--replicate-from",
        type=Path,
        metavar="LOG",
        help="copies of LOG (tools/replicate_log.py) instead of write_log per file",
    )
    args = parser.parse_args()

    logdir, store = args.workdir / "logs", args.workdir / "store"
    shutil.rmtree(store, ignore_errors=True)
    if args.replicate_from is not None:
        paths = _replicate(args.replicate_from, logdir, args.files + 1)
        events = sum(_count_lines(p) for p in paths)
    else:
        paths = generate(logdir, args.files, args.events_per_file, args.seed)
        events = (args.files + 1) * args.events_per_file
    size = sum(p.stat().st_size for p in paths)
    py = [sys.executable]
    cli = [*py, "-m", "a2a_lab"]
    res: dict[str, object] = {"log_bytes": size, "log_files": len(paths), "events": events}
    res["b21"] = run_timed([*py, "-c", B21, *map(str, paths)])
    full = run_timed([*cli, "ingest", str(logdir), str(store), "--json", "--no-progress"])
    full["mb_per_s"] = round(size / 1e6 / full["wall_s"], 1)
    res["ingest_full"] = full
    # +1 % of the events, appended to the live file (later times than everything before)
    extra = args.workdir / "extra.ndjson"
    n_extra = events // 100
    if args.replicate_from is not None:
        _replicate(args.replicate_from, logdir, args.files + 1, next_lines=(n_extra, extra))
    else:
        from a2a_lab.samples import LOG_START as BENCH_START
        from a2a_lab.samples import write_log

        write_log(
            extra,
            n_extra,
            seed=args.seed + 999,
            start=BENCH_START
            + (args.files + 1) * timedelta(days=args.events_per_file / BENCH_EVENTS_PER_DAY),
        )
    with paths[-1].open("ab") as fh, extra.open("rb") as src:
        shutil.copyfileobj(src, fh)
    added = extra.stat().st_size
    extra.unlink()
    inc = run_timed([*cli, "ingest", str(logdir), str(store), "--json", "--no-progress"])
    inc["appended_bytes"] = added
    inc["ratio_to_full"] = round(inc["wall_s"] / full["wall_s"], 3)
    res["ingest_incremental"] = inc
    store_bytes = sum(p.stat().st_size for p in store.rglob("*") if p.is_file())
    res["store_bytes"] = store_bytes
    now = "1790000000000"
    out_s, out_d = args.workdir / "ws_store.json", args.workdir / "ws_dir.json"
    res["work_sessions_store"] = run_timed(
        [*cli, "work-sessions", str(store), "--now-ms", now, "--limit", "1"], out_s
    )
    res["conversations_store"] = run_timed(
        [*cli, "conversations", str(store)], args.workdir / "conv_store.txt"
    )
    res["work_sessions_dir"] = run_timed(
        [*cli, "work-sessions", str(logdir.absolute()), "--now-ms", now, "--limit", "1"], out_d
    )
    res["same_output"] = (
        hashlib.sha256(out_s.read_bytes()).hexdigest()
        == hashlib.sha256(out_d.read_bytes()).hexdigest()
    )
    res["machine"] = machine()
    print(json.dumps(res, indent=2))
    save(f"store_{events}", res)
    if not args.keep:
        shutil.rmtree(args.workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
