"""Load test of ``a2a-lab serve`` (issue 24 item 3): concurrent clients on loopback.

A fresh ``a2a-lab serve LOGDIR`` process (127.0.0.1 only, a free port) serves a generated
log (``a2a_lab.samples.write_log``) while ``--clients`` threads, each with its own
keep-alive ``httpx`` client, send ``GET /api/work-sessions`` back to back for ``--seconds``;
the loop ends by itself at the deadline and the server is stopped. Meanwhile the last
``--held-back`` lines of the log are appended to the live file in ``--batches`` batches
spread over the run (a live gateway), and for each batch the time until
``/api/events`` shows it is measured.

``--bust-cache`` gives every request its own ``limit`` (100 + a counter), so no body is
served from the cache: the cost of computing each body. Without it the clients ask what
the dashboard asks, and bodies are computed once per log change (or when a session turns
ARCHIVED). Reported: requests, errors (non-200 or transport), latency p50/p90/p99/max
(ms), the append-to-visible delays, and the server's peak RSS (``VmHWM``). Usage::

    python benchmarks/bench_serve.py --events 150000 --clients 8 --seconds 60
"""

from __future__ import annotations

import argparse
import itertools
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from _common import ROOT, machine, save

HOST = "127.0.0.1"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def _percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank): the value below which ``q`` of the requests fall."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(q * len(ordered) + 0.5) - 1))]


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=150_000)
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--held-back", type=int, default=3000, help="lines appended during the run")
    parser.add_argument("--batches", type=int, default=6)
    parser.add_argument("--bust-cache", action="store_true")
    parser.add_argument("--query", default="", help="query string of the request (default none)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/a2a_serve_bench"))
    parser.add_argument(
        "--log", type=Path, help="serve this log (its last --held-back lines held back)"
    )
    parser.add_argument("--now", help="the server's fixed clock (serve --now), e.g. for --log")
    parser.add_argument(
        "--raw",
        action="store_true",
        help="clients read the body as sent (gzip) without decoding it: the server's latency, "
        "not the client's decompression (8 client threads share one Python process)",
    )
    parser.add_argument("--max-stale", type=float, help="serve --max-stale S")
    args = parser.parse_args()

    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.log is not None:
        source = args.log
    else:
        from a2a_lab.samples import write_log

        # the log ends now, as a live gateway's does: sessions of the last 24 h are ACTIVE or
        # QUIET and turn ARCHIVED during the run, as on a real dashboard
        span = timedelta(days=args.events / 60_000)
        start = (datetime.now(UTC) - span).replace(microsecond=0)
        source = args.workdir / f"log_{args.events}_{args.seed}.ndjson"
        write_log(source, args.events, seed=args.seed, start=start)
    lines = source.read_bytes().splitlines(keepends=True)
    logdir = args.workdir / "live"
    logdir.mkdir(parents=True, exist_ok=True)
    live_file = logdir / "coordination-events.ndjson"
    live_file.write_bytes(b"".join(lines[: len(lines) - args.held_back]))
    held = lines[len(lines) - args.held_back :]

    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "a2a_lab",
            "serve",
            str(logdir),
            "--host",
            HOST,
            "--port",
            str(port),
            *(["--now", args.now] if args.now else []),
            *(["--max-stale", str(args.max_stale)] if args.max_stale is not None else []),
        ],
        env=env,
        stderr=subprocess.PIPE,
    )
    base = f"http://{HOST}:{port}"
    try:
        with httpx.Client(base_url=base, timeout=120) as probe:
            while True:
                if server.poll() is not None:
                    raise SystemExit(f"server exited: {server.stderr.read().decode()[-2000:]}")
                try:
                    first = probe.get("/api/work-sessions")
                    break
                except httpx.TransportError:
                    time.sleep(0.2)
        ready_s = time.monotonic() - started
        first_body_mb = len(first.content) / 1e6
        first_sent_mb = first.num_bytes_downloaded / 1e6

        latencies: list[float] = []
        errors: list[str] = []
        lock = threading.Lock()
        counter = itertools.count()
        deadline = time.monotonic() + args.seconds

        def client() -> None:
            mine: list[float] = []
            bad: list[str] = []
            with httpx.Client(base_url=base, timeout=120) as http:
                while time.monotonic() < deadline:
                    query = args.query
                    if args.bust_cache:
                        query = "&".join(q for q in (query, f"limit={100 + next(counter)}") if q)
                    t0 = time.perf_counter()
                    url = "/api/work-sessions" + (f"?{query}" if query else "")
                    try:
                        with http.stream("GET", url) as reply:
                            # every byte received, decoded or (--raw) as sent
                            for _ in reply.iter_raw() if args.raw else reply.iter_bytes():
                                pass
                        if reply.status_code != 200:
                            bad.append(f"HTTP {reply.status_code}")
                    except httpx.HTTPError as exc:
                        bad.append(type(exc).__name__)
                    mine.append((time.perf_counter() - t0) * 1000)
            with lock:
                latencies.extend(mine)
                errors.extend(bad)

        visible: list[float] = []

        def appender() -> None:
            per = max(1, len(held) // args.batches)
            gap = args.seconds / (args.batches + 1)
            with httpx.Client(base_url=base, timeout=120) as http:
                for i in range(args.batches):
                    if time.monotonic() + gap > deadline:
                        break
                    time.sleep(gap)
                    before = http.get("/api/events?limit=1").json()["total"]
                    with live_file.open("ab") as fh:
                        fh.write(b"".join(held[i * per : (i + 1) * per]))
                    t0 = time.monotonic()
                    while http.get("/api/events?limit=1").json()["total"] == before:
                        if time.monotonic() - t0 > 30:
                            break
                        time.sleep(0.05)
                    visible.append(time.monotonic() - t0)

        threads = [threading.Thread(target=client) for _ in range(args.clients)]
        threads.append(threading.Thread(target=appender))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        peak = _peak_rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)

    result = {
        "events": len(lines),
        "log_mb": round(source.stat().st_size / 1e6, 1),
        "clients": args.clients,
        "seconds": args.seconds,
        "bust_cache": args.bust_cache,
        "query": args.query,
        "raw": args.raw,
        "now": args.now,
        "ready_s": round(ready_s, 2),
        "body_mb": round(first_body_mb, 2),
        "body_sent_mb": round(first_sent_mb, 2),
        "requests": len(latencies),
        "errors": len(errors),
        "error_kinds": sorted(set(errors)),
        "p50_ms": round(statistics.median(latencies), 1),
        "p90_ms": round(_percentile(latencies, 0.90), 1),
        "p99_ms": round(_percentile(latencies, 0.99), 1),
        "max_ms": round(max(latencies), 1),
        "append_visible_s": [round(v, 2) for v in visible],
        "server_peak_rss_mb": peak,
        "machine": machine(),
    }
    print(result)
    save("serve", result)


if __name__ == "__main__":
    main()
