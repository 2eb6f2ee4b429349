"""10 M events within ONE month, through the store (issue 24's 10 M goals).

Goals: every step ≤ 2 GB peak RSS at 10 M events that fall within one calendar month, and
``work-sessions STORE`` (the dashboard's request) ≤ 3 s.

The log is written by the project's own generator, :func:`a2a_lab.samples.write_log`
(``events_per_day=450_000`` from its default start, 2026-03-02 KST: about 22 days, all
within March in UTC and KST), which streams each simulation run's lines to the file, so
it writes 10 M events in bounded memory. It becomes the live file of a log directory with
its last 1 % of lines held back (copied in 8 MB blocks: the 5.4 GB log is never read
whole). Then, each step a fresh process under ``/usr/bin/time -v`` (wall, user + system
CPU seconds, peak RSS) run with ``nice -n 10``:

* ``a2a-lab ingest LOGDIR STORE`` (materialisation included);
* from the store: ``work-sessions`` (the default table), ``work-sessions --format json
  --limit 10`` (the API body), ``events`` (``GET /api/events``), ``conversations --json``,
  ``check --json`` and ``report -o``;
* the held-back 1 % appended and ``ingest`` again, against the full ingest.

Usage (``--events 2500000`` first, to extrapolate before the 10 M run)::

    PYTHONPATH=$PWD nice -n 10 python benchmarks/bench_10m.py \\
        --log /work/bench/log10m_month.ndjson --workdir /work/bench/s10m/run
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from _common import machine, run_timed, save

#: Events per day of the generated log: 10 M of them fill about 22 days of one month.
EVENTS_PER_DAY = 450_000
SEED = 20260222
#: Bytes copied at a time when the live file is made.
BLOCK = 8 << 20
#: The goals (issue 24): peak RSS of every step, and work sessions from the store.
PEAK_GOAL_MB = 2 * 1024
SESSIONS_GOAL_S = 3.0


def _queries(py: str, store: Path, out: Path) -> dict[str, list[str]]:
    cli = ["nice", "-n", "10", py, "-m", "a2a_lab"]
    now = "--now=2026-12-01T00:00Z"
    return {
        "work_sessions": [*cli, "work-sessions", str(store), now],
        "work_sessions_json10": [
            *[*cli, "work-sessions", str(store), now, "--format", "json", "--limit", "10"]
        ],
        "events": [*cli, "events", str(store), now],
        "conversations": [*cli, "conversations", str(store), "--json"],
        "check": [*cli, "check", str(store), now, "--json"],
        "report": [*cli, "report", str(store), now, "-o", str(out / "report.html")],
    }


def _split_offset(log: Path, tail_lines: int) -> int:
    """The byte offset where the last ``tail_lines`` lines of ``log`` begin (read backwards
    in blocks)."""
    size = log.stat().st_size
    seen = 0
    with log.open("rb") as fh:
        end = size
        while end > 0:
            start = max(0, end - BLOCK)
            fh.seek(start)
            block = fh.read(end - start)
            # the file's last byte is the last line's LF: it starts no line
            if end == size and block.endswith(b"\n"):
                block = block[:-1]
            at = len(block)
            while True:
                at = block.rfind(b"\n", 0, at)
                if at < 0:
                    break
                seen += 1
                if seen == tail_lines:
                    return start + at + 1
            end = start
    return 0


def _copy_range(src: Path, dst: Path, start: int, stop: int, mode: str) -> None:
    with src.open("rb") as fin, dst.open(mode) as fout:
        fin.seek(start)
        left = stop - start
        while left > 0:
            block = fin.read(min(BLOCK, left))
            fout.write(block)
            left -= len(block)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--log", type=Path, help="the log (written first if it does not exist)")
    parser.add_argument(
        "--logdir",
        type=Path,
        help="a log directory instead (rotated files linked, its live file's last 1 %% held back)",
    )
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/a2a_10m"))
    parser.add_argument("--skip", default="", help="comma-separated steps not to run")
    parser.add_argument("--name", default="store_10m", help="results file name")
    args = parser.parse_args()
    py = sys.executable
    work: Path = args.workdir
    log: Path = args.log or work / f"log_{args.events}.ndjson"
    if args.logdir is not None:
        log = args.logdir / "coordination-events.ndjson"
    result: dict[str, object] = {}
    if not log.exists():
        result["write_log"] = run_timed(
            [
                *["nice", "-n", "10", py, "-c"],
                "from a2a_lab.samples import write_log; "
                f"write_log({str(log)!r}, {args.events}, seed={SEED}, "
                f"events_per_day={EVENTS_PER_DAY})",
            ]
        )
    shutil.rmtree(work / "logs", ignore_errors=True)
    shutil.rmtree(work / "store", ignore_errors=True)
    (work / "logs").mkdir(parents=True)
    live = work / "logs" / "coordination-events.ndjson"
    rotated = [] if args.logdir is None else sorted(args.logdir.glob("coordination-events-*"))
    for path in rotated:
        os.link(path, work / "logs" / path.name)  # read only: no copy of their bytes
    extra = args.events // 101  # the +1 % of all events, appended later
    split = _split_offset(log, extra)
    _copy_range(log, live, 0, split, "wb")
    store = work / "store"
    result["log_mb"] = round(sum(p.stat().st_size for p in [log, *rotated]) / 1e6, 1)
    skip = set(args.skip.split(",")) - {""}
    ingest = ["nice", "-n", "10", py, "-m", "a2a_lab", "ingest", str(live.parent), str(store)]
    result["ingest_full"] = run_timed([*ingest, "--no-progress"])
    result["load_after_ingest"] = os.getloadavg()
    from a2a_lab.io import open_store

    result["events"] = open_store(store).events
    for name, cmd in _queries(py, store, work).items():
        if name not in skip:
            result[name] = run_timed(cmd, work / f"{name}.out")
            result[f"load_after_{name}"] = os.getloadavg()
    _copy_range(log, live, split, log.stat().st_size, "ab")
    result["appended_lines"] = extra
    result["ingest_plus_1pct"] = run_timed([*ingest, "--no-progress"])
    result["events_after"] = open_store(store).events
    full = result["ingest_full"]["cpu_s"]  # type: ignore[index]
    plus = result["ingest_plus_1pct"]["cpu_s"]  # type: ignore[index]
    result["plus_1pct_of_full_cpu"] = round(plus / full, 4)
    result["machine"] = machine()
    print(result)
    save(args.name, result)


if __name__ == "__main__":
    main()
