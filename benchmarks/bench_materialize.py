"""Queries from a materialised store against the NDJSON log and B21 (issue 24).

One log (``--log``, or ``a2a_lab.samples.write_log``) is the live file of a log directory,
its last 1 % held back. Then, each step a fresh process under ``/usr/bin/time -v`` (wall,
user+system CPU seconds, peak RSS), in one run:

* B21: bare ``pl.read_ndjson`` of the log with the lean 21-field schema (the baseline);
* ``a2a-lab ingest LOGDIR STORE``: the full ingest, materialisation included (enriched
  columns, conversations table, work-sessions table);
* ``work-sessions`` (the readable table, the default page), ``work-sessions --format json
  --limit 10`` (the API body), ``conversations --json`` and ``check --json``, each from the
  LOG and from the STORE (outputs compared: the same bytes, ``check``'s load report too:
  the log is named by its absolute path, as the store names it);
* the held-back 1 % appended, ``a2a-lab ingest`` again (the new events materialised and
  the sessions, conversations and check findings they touch made again), against the
  full ingest.

Usage::

    python benchmarks/bench_materialize.py --log /work/bench/log860.ndjson --workdir /tmp/m
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from _common import B21, machine, run_timed, save


def _queries(py: str, source: Path, now: str) -> dict[str, list[str]]:
    cli = [py, "-m", "a2a_lab"]
    return {
        "work_sessions": [*cli, "work-sessions", str(source), now],
        "work_sessions_json10": [
            *cli,
            "work-sessions",
            str(source),
            now,
            "--format",
            "json",
            "--limit",
            "10",
        ],
        "conversations": [*cli, "conversations", str(source), "--json"],
        "check": [*cli, "check", str(source), now, "--json"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=150_000)
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--log", type=Path, help="use this log instead of generating one")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/a2a_mat_bench"))
    parser.add_argument(
        "--logdir",
        type=Path,
        help="use this log directory's files (copied; the live file's last 1 %% held back)",
    )
    parser.add_argument(
        "--skip", default="", help="comma-separated query names not to run (e.g. check)"
    )
    parser.add_argument(
        "--store-only", action="store_true", help="queries from the store only, not the log"
    )
    args = parser.parse_args()
    py = sys.executable
    work = args.workdir
    shutil.rmtree(work / "logs", ignore_errors=True)
    shutil.rmtree(work / "store", ignore_errors=True)
    (work / "logs").mkdir(parents=True)
    live = work / "logs" / "coordination-events.ndjson"
    if args.logdir is not None:
        for path in sorted(args.logdir.iterdir()):
            if path.name != live.name:
                shutil.copyfile(path, work / "logs" / path.name)
        args.log = args.logdir / live.name
    elif args.log is None:
        from a2a_lab.samples import write_log

        args.log = work / f"log_{args.events}_{args.seed}.ndjson"
        if not args.log.exists():
            write_log(args.log, args.events, seed=args.seed)
    lines = args.log.read_bytes().splitlines(keepends=True)
    extra = len(lines) // 101  # the +1 % appended later
    live.write_bytes(b"".join(lines[: len(lines) - extra]))
    store = work / "store"
    now = "--now=2026-12-01T00:00Z"
    files = sorted(str(p) for p in (work / "logs").iterdir())
    result: dict[str, object] = {
        "files": len(files),
        "log_mb": round(sum(Path(f).stat().st_size for f in files) / 1e6, 1),
    }
    result["b21"] = run_timed([py, "-c", f"PATH = {files!r}\n" + B21])
    result["ingest_full"] = run_timed(
        [py, "-m", "a2a_lab", "ingest", str(live.parent), str(store), "--no-progress"]
    )
    from a2a_lab.io import open_store

    result["events"] = open_store(store).events
    skip = set(args.skip.split(",")) - {""}
    same: dict[str, bool] = {}
    for name in _queries(py, store, now):
        if name in skip:
            continue
        outs = {}
        wheres = (
            (("store", store),) if args.store_only else (("log", live.parent), ("store", store))
        )
        for where, source in wheres:
            outs[where] = work / f"{name}_{where}.out"
            result[f"{name}_{where}"] = run_timed(_queries(py, source, now)[name], outs[where])
        if not args.store_only:
            same[name] = outs["log"].read_bytes() == outs["store"].read_bytes()
    result["same_output"] = same
    with live.open("ab") as fh:
        fh.write(b"".join(lines[len(lines) - extra :]))
    result["appended_lines"] = extra
    result["ingest_plus_1pct"] = run_timed(
        [py, "-m", "a2a_lab", "ingest", str(live.parent), str(store), "--no-progress"]
    )
    result["events_after"] = open_store(store).events
    full = result["ingest_full"]["cpu_s"]  # type: ignore[index]
    result["plus_1pct_of_full_cpu"] = round(
        result["ingest_plus_1pct"]["cpu_s"] / full,
        4,  # type: ignore[index]
    )
    result["ingest_over_b21_cpu"] = round(full / result["b21"]["cpu_s"], 2)  # type: ignore[index]
    result["machine"] = machine()
    print(result)
    save("materialize", result)
    # the log is named by its absolute path, as the store names it: every output the same
    if not all(same.values()):
        raise SystemExit(f"outputs differ between the log and the store: {same}")


if __name__ == "__main__":
    main()
