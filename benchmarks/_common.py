"""Shared benchmark plumbing: the generated log, the bare read B, timing and peak memory.

Every benchmark of a2a_lab measures against B = ``polars.read_ndjson(path, schema=<the
loader's own derived schema>)`` of the same clean file, in the same run, so figures from
a busy or a quiet machine stay comparable as ratios.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "_data"
RESULTS = ROOT / "benchmarks" / "results"

#: B21: the bare read the goals of issue 12 are stated against (a fresh process's script;
#: ``PATH`` is defined before it).
B21 = """
import polars as pl
S = pl.String
data = pl.Struct({**{k: S for k in ("fromAgent toAgent conversationId workSessionId taskId eventRole "
    "fromSessionType toSessionType message targetSessionKey runId replyPreview outcome waitStatus "
    "waitError payloadType payloadJson error").split()}, "turn": pl.Int64, "maxTurns": pl.Int64,
    "announced": pl.Boolean})
df = pl.read_ndjson(PATH, schema={"type": S, "agentId": S, "ts": pl.Int64, "data": data})
assert df.height > 0
"""

#: The size the issues ask for: ≥ 800k events, ~300 MB.
DEFAULT_EVENTS = 860_000
SEED = 20260222


def bench_log(n_events: int = DEFAULT_EVENTS, bad_fraction: float = 0.0, seed: int = SEED) -> Path:
    """The generated benchmark log (written once, then reused from ``benchmarks/_data``)."""
    from a2a_lab.samples import write_log

    name = f"log_{n_events}_{seed}_{bad_fraction:g}.ndjson"
    path = DATA / name
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        write_log(tmp, n_events, seed=seed, bad_line_fraction=bad_fraction)
        tmp.rename(path)
    return path


def bare_schema() -> pl.Schema:
    """The loader's own derived schema of one decoded line (type, agentId, ts, …, data)."""
    from a2a_lab.schema import raw_event_dtype

    return pl.Schema({f.name: f.dtype for f in raw_event_dtype().fields})


def bare_read(path: Path) -> pl.DataFrame:
    """B: Polars' own NDJSON reader with the derived schema."""
    return pl.read_ndjson(path, schema=bare_schema())


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, list[float], Any]:
    """Median wall time of ``repeat`` calls (and all times, and the last result)."""
    times = []
    result = None
    for _ in range(repeat):
        result = None
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, result


def parser(
    doc: str | None,
    *,
    events: int = DEFAULT_EVENTS,
    messages: str | None = None,
    ref_events: bool = False,
) -> argparse.ArgumentParser:
    """The arguments every benchmark takes: ``--events`` (default ``events``) and
    ``--repeat`` (3). With ``messages`` (its help text), the simulator benchmarks' form:
    ``--messages`` with ``--events`` as an alias (the name ``make bench BENCH_ARGS`` uses),
    and ``--seed`` (1). With ``ref_events``: ``--ref-events``, the slice the slow reference
    implementation of the tests runs on."""
    ap = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    if messages is None:
        ap.add_argument("--events", type=int, default=events)
    else:
        help_text = f"{messages} (--events: the name `make bench BENCH_ARGS` uses)"
        ap.add_argument(
            "--messages", "--events", type=int, default=events, dest="messages", help=help_text
        )
        ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    if ref_events:
        ap.add_argument(
            "--ref-events",
            type=int,
            default=20_000,
            help="events for the slow-reference comparison",
        )
    return ap


def log_and_bare(n_events: int, repeat: int) -> tuple[Path, float, float, list[float]]:
    """The benchmark log, its size (MB) and B on it: median and all wall times."""
    path = bench_log(n_events)
    b, b_all, _ = timed(lambda: bare_read(path), repeat)
    return path, path.stat().st_size / 2**20, b, b_all


def wall_and_cpu(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """Median wall and CPU seconds of ``repeat`` calls, and the last result."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus), result


def fresh_process(script: str, env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) and stdout of ``script`` in a fresh Python process,
    measured by ``/usr/bin/time -v``."""
    proc = subprocess.run(
        ["/usr/bin/time", "-v", sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    wall = re.search(
        r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", proc.stderr
    )
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    assert wall and rss, proc.stderr
    seconds = int(wall.group(1) or 0) * 3600 + int(wall.group(2)) * 60 + float(wall.group(3))
    return seconds, int(rss.group(1)) / 1024, proc.stdout


def peak_rss_mb(code: str) -> float:
    """Max RSS (MB) of a fresh Python process running ``code``.

    Uses ``/usr/bin/time -v`` ("Maximum resident set size") when installed, else the
    kernel's rusage of the child, which is the same counter.
    """
    cmd = [sys.executable, "-c", code]
    gnu_time = shutil.which("time", path="/usr/bin")
    if gnu_time:
        proc = subprocess.run(
            [gnu_time, "-v", *cmd], capture_output=True, text=True, check=True, cwd=ROOT
        )
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
        assert m, proc.stderr
        return int(m.group(1)) / 1024
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    subprocess.run(cmd, check=True, cwd=ROOT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(before, after) / 1024


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    return {
        "python": platform.python_version(),
        "polars": pl.__version__,
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }


def save(name: str, result: dict[str, Any]) -> Path:
    """Write a result JSON under ``benchmarks/results/`` and return its path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"{name}.json"
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


def print_throughput(
    result: dict[str, Any], versus: str, rows: list[tuple[str, str, int, str | None]]
) -> None:
    """Print the markdown table of simulator runs: ``(label, key, messages, ratio key)`` rows.

    A run's rates are ``result[key + "_msgs_per_s"]`` and ``result[key + "_msgs_per_cpu_s"]``;
    the last column shows ``result[ratio + "_wall"] / result[ratio + "_cpu"]``, 1 for the
    first row (the run the others are compared with) and nothing where ``ratio`` is None.
    """
    print(f"| run | messages | msgs/s (wall) | msgs/s (CPU) | vs {versus} (wall / CPU) |")
    print("|---|---:|---:|---:|---:|")
    for i, (label, key, messages, ratio) in enumerate(rows):
        if i == 0:
            last = " 1 "
        elif ratio is None:
            last = " "
        else:
            last = f" {result[ratio + '_wall']} / {result[ratio + '_cpu']} "
        wall, cpu = result[key + "_msgs_per_s"], result[key + "_msgs_per_cpu_s"]
        print(f"| {label} | {messages:,} | {wall:,} | {cpu:,} |{last}|")


def run_timed(
    cmd: list[str], stdout: Path | None = None, env: dict[str, str] | None = None
) -> dict[str, float]:
    """Wall and CPU (user + system) seconds and peak RSS (MB) of one process, from
    ``/usr/bin/time -v``, run from the checkout with its code first on the path."""
    out = stdout.open("wb") if stdout is not None else subprocess.DEVNULL
    try:
        proc = subprocess.run(
            ["/usr/bin/time", "-v", *cmd],
            stdout=out,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env=env or {**os.environ, "PYTHONPATH": str(ROOT), "TZ": "UTC"},
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
    # each step as it ends: a long run cut short still leaves its figures
    print(f"{' '.join(cmd[-6:])[:100]}: {row}", file=sys.stderr, flush=True)
    return row
