"""Memory benchmark (issue 24 item 2, issue 26): every command as a whole process on the
860,000-event log, with B21 (the bare ``pl.read_ndjson`` with a lean fixed schema) in the
same run.

Each command runs in a fresh process under ``/usr/bin/time -v``: wall seconds, CPU seconds
(user + system: the machine is shared, CPU is what compares) and peak RSS.

Run from the repository root::

    .venv/bin/python benchmarks/bench_memory.py                      # the generated 860k log
    .venv/bin/python benchmarks/bench_memory.py --log /work/bench/log860.ndjson
    .venv/bin/python benchmarks/bench_memory.py --log dense.ndjson --only conversations check

Goals: every command ≤ 1.25 GB peak (issue 24); ``export-otlp -o FILE.json`` ≤ 2 × the CPU
of ``conversations`` (issue 26). A log whose events fall densely in time (``write_log(...,
events_per_day=860_000)``: the same count in one day) must peak no higher: the analyses
split a log by conversation, never by time.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from _common import B21, bench_log, machine, save  # noqa: E402

#: The commands measured (``{log}`` and ``{out}``: the log and a scratch directory).
COMMANDS: dict[str, list[str]] = {
    "conversations": ["conversations", "{log}", "-o", "{out}/conversations.csv"],
    "check": ["check", "{log}", "--format", "json", "--now", "2026-12-01"],
    "export-otlp": ["export-otlp", "{log}", "-o", "{out}/x.json", "--no-progress"],
    "work-sessions": ["work-sessions", "{log}", "--format", "json", "--now", "2026-12-01"],
}
#: Peak RSS goal of every command (issue 24).
PEAK_GOAL_MB = 1.25 * 1024
#: ``export-otlp`` ≤ this × ``conversations`` (issue 26).
EXPORT_RATIO_GOAL = 2.0


def measure(argv: list[str], code: Path = ROOT) -> dict[str, float]:
    """Wall, CPU (user + system) seconds and peak RSS (MB) of one process importing the
    a2a_lab under ``code``."""
    proc = subprocess.run(
        ["/usr/bin/time", "-v", *argv],
        capture_output=True,
        text=True,
        # ``python -m`` puts the working directory first on sys.path: run in ``code``
        cwd=code,
        env={**os.environ, "PYTHONPATH": str(code), "A2A_LAB_PROGRESS": "0"},
        check=False,
    )
    if proc.returncode not in (0, 1):  # check exits 1 only with --fail-on
        raise RuntimeError(proc.stderr[-3000:])

    def field(name: str) -> str:
        m = re.search(rf"{re.escape(name)}: ([\d:.]+)", proc.stderr)
        assert m, proc.stderr[-2000:]
        return m.group(1)

    *hm, sec = field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")
    wall = float(sec) + sum(int(v) * 60 ** (len(hm) - i) for i, v in enumerate(hm))
    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "peak_mb": round(int(field("Maximum resident set size (kbytes)")) / 1024, 1),
    }


def run(log: Path, only: list[str] | None, code: Path = ROOT) -> dict[str, Any]:
    """B21 and every command (or ``only``) on ``log``, run with the a2a_lab under ``code``."""
    py = sys.executable
    out: dict[str, Any] = {"log": str(log), "log_mb": round(log.stat().st_size / 2**20, 1)}
    out["B21"] = measure([py, "-c", f"PATH = {str(log)!r}\n{B21}"])
    print(f"B21: {out['B21']}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench_memory_") as tmp:
        for name, args in COMMANDS.items():
            if only and name not in only:
                continue
            argv = [py, "-m", "a2a_lab", *(a.format(log=log, out=tmp) for a in args)]
            out[name] = measure(argv, code)
            out[name]["command"] = "a2a-lab " + " ".join(argv[3:]).replace(tmp, "OUT")
            out[name]["peak_goal_met"] = out[name]["peak_mb"] <= PEAK_GOAL_MB
            out[name]["cpu_x_b21"] = round(out[name]["cpu_s"] / out["B21"]["cpu_s"], 2)
            print(f"{name}: {out[name]}", flush=True)
    if "conversations" in out and "export-otlp" in out:
        ratio = out["export-otlp"]["cpu_s"] / out["conversations"]["cpu_s"]
        out["export_over_conversations_cpu"] = round(ratio, 2)
        out["export_ratio_goal_met"] = ratio <= EXPORT_RATIO_GOAL
    return out


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--log", type=Path, help="the log (default: the generated 860k log)")
    ap.add_argument("--events", type=int, default=860_000)
    ap.add_argument("--only", nargs="+", choices=sorted(COMMANDS), help="these commands only")
    ap.add_argument("--name", default="bench_memory", help="results/<name>.json")
    ap.add_argument(
        "--code",
        type=Path,
        default=ROOT,
        help="the directory holding the a2a_lab to run (e.g. `git archive BASE a2a_lab`)",
    )
    args = ap.parse_args()
    log = args.log or bench_log(args.events)
    result = {"machine": machine(), "code": str(args.code), **run(log, args.only, args.code)}
    print(save(args.name, result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
