"""``a2a-lab work-sessions STORE`` before and after materialisation (issue 24 item 1).

One generated log (``a2a_lab.samples.write_log``, the live file of a log directory) is
ingested into a store with ``a2a_lab.io.ingest`` (no materialisation). Then, each step a
fresh process under ``/usr/bin/time -v`` (wall, user+system CPU seconds, peak RSS):

* B21: bare ``pl.read_ndjson`` of the log with the lean 21-field schema (the baseline);
* ``a2a-lab work-sessions STORE`` recomputing enrichment (no materialised columns), the
  default page (100 sessions with their event objects) and ``--limit 1``;
* ``a2a_lab.materialize.materialize(STORE)`` (the whole store: what the first ingest adds);
* ``a2a-lab work-sessions STORE`` reading the materialised columns (same stdout checked);
* ``a2a-lab conversations STORE --json`` matching every event, then reading the
  materialised conversations table (same stdout checked);
* +1 % lines appended: ``a2a-lab ingest`` (ingest + materialising only the new events).

Usage::

    python benchmarks/bench_materialize.py --events 150000 --workdir /tmp/a2a_mat_bench
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

from _common import B21, ROOT, machine, save


def run_timed(cmd: list[str], stdout: Path | None = None) -> dict[str, float]:
    """Wall and CPU seconds and peak RSS (MB) of one process, from ``/usr/bin/time -v``."""
    out = stdout.open("wb") if stdout is not None else subprocess.DEVNULL
    try:
        proc = subprocess.run(
            ["/usr/bin/time", "-v", *cmd],
            stdout=out,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env={"PYTHONPATH": str(ROOT), "TZ": "UTC", "PATH": "/usr/bin:/bin"},
        )
    finally:
        if stdout is not None:
            out.close()
    err = proc.stderr.decode()
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed:\n{err[-2000:]}")

    def num(pattern: str) -> float:
        match = re.search(pattern, err)
        assert match, (pattern, err)
        return float(match.group(1))

    wall = re.search(
        r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", err
    )
    assert wall, err
    row = {
        "wall_s": round(
            int(wall.group(1) or 0) * 3600 + int(wall.group(2)) * 60 + float(wall.group(3)), 2
        ),
        "cpu_s": round(
            num(r"User time \(seconds\): ([\d.]+)") + num(r"System time \(seconds\): ([\d.]+)"), 2
        ),
        "peak_rss_mb": round(num(r"Maximum resident set size \(kbytes\): (\d+)") / 1024, 1),
    }
    print(f"{' '.join(cmd[-4:])[:90]}: {row}", file=sys.stderr, flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=150_000)
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--log", type=Path, help="use this log instead of generating one")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/a2a_mat_bench"))
    args = parser.parse_args()
    py = sys.executable
    work = args.workdir
    shutil.rmtree(work / "logs", ignore_errors=True)
    shutil.rmtree(work / "store", ignore_errors=True)
    (work / "logs").mkdir(parents=True)
    live = work / "logs" / "coordination-events.ndjson"
    if args.log is None:
        from a2a_lab.samples import write_log

        args.log = work / f"log_{args.events}_{args.seed}.ndjson"
        if not args.log.exists():
            write_log(args.log, args.events, seed=args.seed)
    lines = args.log.read_bytes().splitlines(keepends=True)
    extra = len(lines) // 101  # the +1 % appended later
    live.write_bytes(b"".join(lines[: len(lines) - extra]))
    store = work / "store"
    subprocess.run(
        [py, "-c", f"from a2a_lab.io import ingest; ingest({str(live.parent)!r}, {str(store)!r})"],
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    now = "--now=2026-12-01T00:00Z"
    result: dict[str, object] = {
        "events": len(lines) - extra,
        "log_mb": round(live.stat().st_size / 1e6, 1),
    }
    result["b21"] = run_timed([py, "-c", f"PATH = {str(live)!r}\n" + B21])
    before, after = work / "before.json", work / "after.json"
    ws = [py, "-m", "a2a_lab", "work-sessions", str(store), now]
    # the default page (100 sessions with every event object) and one session (--limit 1):
    # the query alone, as the earlier store benchmarks measured it
    one = ["--limit", "1"]
    result["work_sessions_recomputed"] = run_timed(ws, stdout=before)
    result["work_sessions_recomputed_limit1"] = run_timed([*ws, *one], stdout=work / "before1")
    conv = [py, "-m", "a2a_lab", "conversations", str(store), "--json"]
    result["conversations_recomputed"] = run_timed(conv, stdout=work / "conv_before")
    result["materialize_full"] = run_timed(
        [
            py,
            "-c",
            f"from a2a_lab.materialize import materialize; print(materialize({str(store)!r}))",
        ]
    )
    result["work_sessions_materialized"] = run_timed(ws, stdout=after)
    result["work_sessions_materialized_limit1"] = run_timed([*ws, *one], stdout=work / "after1")
    result["conversations_materialized"] = run_timed(conv, stdout=work / "conv_after")
    result["page_mb"] = round(after.stat().st_size / 1e6, 1)
    same = before.read_bytes() == after.read_bytes() and (
        (work / "before1").read_bytes() == (work / "after1").read_bytes()
    )
    result["same_conversations"] = (work / "conv_before").read_bytes() == (
        work / "conv_after"
    ).read_bytes()
    same = same and bool(result["same_conversations"])
    result["same_output"] = same
    with live.open("ab") as fh:
        fh.write(b"".join(lines[len(lines) - extra :]))
    result["appended_lines"] = extra
    result["ingest_plus_1pct_with_materialize"] = run_timed(
        [py, "-m", "a2a_lab", "ingest", str(live.parent), str(store)]
    )
    result["machine"] = machine()
    print(result)
    save("materialize", result)
    if not same:
        raise SystemExit("work-sessions output differs between the two paths")


if __name__ == "__main__":
    main()
