"""Fuzz campaign (issue 14): hostile log directories through load and every analysis.

Writes bounded log directories (``--files`` files of ``--lines-per-file`` lines; see
``tests/support/fuzz_hostile.py``: event-shaped lines of real types with hostile fields, a share
``--hostile`` of fully hostile lines, whole files at JavaScript's largest times, gzipped and
truncated rotations) plus small fully hostile batches, and checks the invariants of
``check_source`` on each: every line an event, a reject (file, line, reason) or a counted
blank; no exception or panic in load, enrich, work sessions, conversations, check, the
graph, ``to_api``, the thread views, every chart and pm; ``write_events`` round-trips.
Event-shaped lines put extremes (0, -0, ±1e308, Date's edge ±1, 2**53±1, 2**63, NaN-like
strings, integers of 4,400 digits) and duplicate keys into every numeric field.

A breach keeps its directory under ``--out`` (with the seed) for a regression test; the
summary (lines, events, rejects, blanks, breaches by kind, seconds) is printed as one JSON
line and written to ``--out/summary.json``.

    PYTHONPATH=. python tools/fuzz.py --lines 1000000 --out /tmp/fuzz-campaign
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.fuzz_hostile import check_source, write_batch, write_scale_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000, help="physical lines to cover")
    parser.add_argument("--files", type=int, default=10, help="files per scale directory")
    parser.add_argument("--lines-per-file", type=int, default=5000)
    parser.add_argument("--hostile", type=float, default=0.05, help="share of fully hostile lines")
    parser.add_argument(
        "--spice",
        type=float,
        default=1.0,
        help="share of event-shaped lines with hostile values (15 %% of those also put "
        "extremes, some as duplicate keys, into one to three numeric fields)",
    )
    parser.add_argument("--batch", type=int, default=300, help="lines of each fully hostile batch")
    parser.add_argument("--seed", type=int, default=0, help="first seed (one per directory)")
    parser.add_argument("--out", type=Path, default=Path("fuzz-campaign"))
    args = parser.parse_args(argv)
    if args.lines <= 0 or args.files <= 0 or args.lines_per_file <= 0 or args.batch <= 0:
        parser.error("--lines, --files, --lines-per-file and --batch must be > 0")
    if not 0.0 <= args.hostile <= 1.0 or not 0.0 <= args.spice <= 1.0:
        parser.error("--hostile and --spice must be within [0, 1]")
    args.out.mkdir(parents=True, exist_ok=True)
    stats: dict[str, int] = {}
    kinds: dict[str, int] = {}
    breaches: list[dict[str, object]] = []
    seed, dirs, started = args.seed, 0, time.monotonic()
    while stats.get("lines", 0) < args.lines:
        work = args.out / f"seed-{seed}"
        shutil.rmtree(work, ignore_errors=True)
        rng = random.Random(seed)
        if seed % 2 == 0:
            src, _ = write_scale_dir(
                work,
                rng,
                files=args.files,
                lines_per_file=args.lines_per_file,
                hostile=args.hostile,
                spice=args.spice,
            )
        else:
            src, _ = write_batch(work, rng, args.batch, gz=rng.random() < 0.5)
        failures = check_source(src, raw=seed % 4 == 1, stats=stats)
        dirs += 1
        if failures:
            breaches.append({"seed": seed, "dir": str(work), "failures": failures})
            for f in failures:
                kind = f.split(":")[0]
                kinds[kind] = kinds.get(kind, 0) + 1
        else:
            shutil.rmtree(work, ignore_errors=True)
        elapsed = time.monotonic() - started
        _write_summary(args, stats, dirs, breaches, kinds, started, seed)
        print(
            f"seed {seed}: {stats.get('lines', 0)} lines, {len(breaches)} breached dirs, "
            f"{elapsed:.0f} s",
            file=sys.stderr,
            flush=True,
        )
        seed += 1
    summary = _write_summary(args, stats, dirs, breaches, kinds, started, seed - 1)
    print(json.dumps(summary))
    return 1 if breaches else 0


def _write_summary(
    args: argparse.Namespace,
    stats: dict[str, int],
    dirs: int,
    breaches: list[dict[str, object]],
    kinds: dict[str, int],
    started: float,
    last_seed: int,
) -> dict[str, object]:
    """Write ``summary.json`` (after every directory: a campaign stopped early keeps its count)."""
    summary: dict[str, object] = {
        **stats,
        "directories": dirs,
        "breached_directories": len(breaches),
        "breaches_by_kind": kinds,
        "seconds": round(time.monotonic() - started, 1),
        "seeds": [args.seed, last_seed],
        "args": {k: str(v) for k, v in vars(args).items()},
    }
    (args.out / "summary.json").write_text(json.dumps({**summary, "breaches": breaches}, indent=1))
    return summary


if __name__ == "__main__":
    sys.exit(main())
