"""Load test of ``a2a-lab serve`` (issue 24 item 3): concurrent clients on loopback.

A fresh ``a2a-lab serve LOGDIR`` process (127.0.0.1 only, a free port) serves a log whose
last ``--held-back`` lines are held back. Then, once the first body is made:

1. one client alone sends ``GET /api/work-sessions`` back to back for ``--single-seconds``
   (no appends): the server's own cost per request, without queueing behind other clients;
2. ``--rounds`` rounds of ``--clients`` threads, each with its own keep-alive ``httpx``
   client, sending the same request back to back for ``--seconds``; during each round
   ``--batches`` batches of the held-back lines are appended to the live file (a live
   gateway), and for each batch the time from the end of its write to the first response
   that contains it is measured on ``/api/events`` (its ``total`` grew) and on
   ``/api/work-sessions`` (the body holds the batch's latest event, whose time is later
   than every earlier line's: its session leads the page, so the page's first
   ``"lastTime"`` reaches that time exactly when the body holds it; only the body's first
   kilobytes are decoded to read it).

The 1-minute load average is sampled every second during each phase (``/proc/loadavg``):
the machine is shared, and latency under a load of 15 is mostly waiting for a CPU.
``--bust-cache`` gives every request its own ``limit`` (100 + a counter), so no body is
served from the cache. Reported per phase: requests, errors (non-200 or transport),
latency p50/p90/p95/p99/max (ms, nearest rank), load average min/median/max; and the
server's peak RSS (``VmHWM``). Usage::

    python benchmarks/bench_serve.py --log /work/bench/log860.ndjson --raw --rounds 3
"""

from __future__ import annotations

import argparse
import gzip
import http.client as http_client
import itertools
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

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


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (all its threads)."""
    # the fields after the command name (which may hold spaces): utime, stime are 14, 15
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def _children(pid: int) -> list[int]:
    """The processes ``pid`` started (its worker), as the kernel lists them per thread."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:  # the thread ended meanwhile
            continue
    return found


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


class LoadSampler:
    """The 1-minute load average (and the server's resident memory), read every second."""

    def __init__(self, pid: int | None = None) -> None:
        self.samples: list[float] = []
        self.rss_mb: list[float] = []
        self.workers_rss_mb: list[float] = []
        self._pid = pid
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append(float(Path("/proc/loadavg").read_text().split()[0]))
            if self._pid is not None:
                self.rss_mb.append(_rss_mb(self._pid))
                try:
                    workers = sum(_rss_mb(c) for c in _children(self._pid))
                except OSError:  # a worker ended meanwhile
                    workers = 0.0
                self.workers_rss_mb.append(workers)
            self._stop.wait(1.0)

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict[str, float]:
        s = self.samples or [float("nan")]
        summary = {"min": min(s), "median": statistics.median(s), "max": max(s)}
        if self.rss_mb:
            summary["server_rss_max_mb"] = max(self.rss_mb)
            summary["workers_rss_max_mb"] = max(self.workers_rss_mb)
        return summary


def _latency_summary(latencies: list[float], errors: list[str]) -> dict[str, Any]:
    if not latencies:
        return {"requests": 0, "errors": len(errors)}
    return {
        "requests": len(latencies),
        "errors": len(errors),
        "error_kinds": sorted(set(errors)),
        "p50_ms": round(statistics.median(latencies), 1),
        "p90_ms": round(_percentile(latencies, 0.90), 1),
        "p95_ms": round(_percentile(latencies, 0.95), 1),
        "p99_ms": round(_percentile(latencies, 0.99), 1),
        "max_ms": round(max(latencies), 1),
    }


def _httpx_fetch(http: httpx.Client, url: str, raw: bool) -> int:
    """GET ``url``, every byte received, decoded or (``raw``) as sent; the status."""
    with http.stream("GET", url) as reply:
        for _ in reply.iter_raw() if raw else reply.iter_bytes():
            pass
    return reply.status_code


def _stdlib_fetcher(base: str, raw: bool) -> Any:
    """A keep-alive ``http.client`` connection's GET (reconnecting after an error).

    The standard library reads a body of known length in a few large reads, where
    ``httpx`` hands it over in 64 kB chunks through Python code: on two shared cores the
    measuring client's own CPU is then a smaller part of what the latency measures.
    """
    host, port = base.removeprefix("http://").split(":")
    conn = http_client.HTTPConnection(host, int(port), timeout=120)

    def fetch(url: str) -> int:
        try:
            conn.request("GET", url, headers={"Accept-Encoding": "gzip"})
            reply = conn.getresponse()
            data = reply.read()
        except (http_client.HTTPException, OSError):
            conn.close()  # the next request connects again
            raise
        if not raw and reply.getheader("Content-Encoding") == "gzip":
            gzip.decompress(data)
        return reply.status

    return fetch


def _load_clients(
    args: argparse.Namespace, base: str, n_clients: int, seconds: float
) -> tuple[list[float], list[str]]:
    """``n_clients`` threads sending the request back to back for ``seconds``."""
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    counter = itertools.count()
    deadline = time.monotonic() + seconds

    def client() -> None:
        mine: list[float] = []
        bad: list[str] = []
        fetch = _stdlib_fetcher(base, args.raw) if args.client == "stdlib" else None
        with httpx.Client(base_url=base, timeout=120) as http:
            while time.monotonic() < deadline:
                query = args.query
                if args.bust_cache:
                    query = "&".join(q for q in (query, f"limit={100 + next(counter)}") if q)
                url = "/api/work-sessions" + (f"?{query}" if query else "")
                t0 = time.perf_counter()
                try:
                    status = fetch(url) if fetch is not None else _httpx_fetch(http, url, args.raw)
                    if status != 200:
                        bad.append(f"HTTP {status}")
                except (httpx.HTTPError, http_client.HTTPException, OSError) as exc:
                    bad.append(type(exc).__name__)
                mine.append((time.perf_counter() - t0) * 1000)
        with lock:
            latencies.extend(mine)
            errors.extend(bad)

    threads = [threading.Thread(target=client) for _ in range(n_clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, errors


def _batch_ts_needle(batch: list[bytes], earlier_max: int) -> tuple[int | None, int]:
    """The latest time of the batch's events that belong to a work session, if later than
    every earlier such event's (else None), and the latest such time so far.

    Only events with a ``workSessionId`` make sessions: an event without one never shows
    on the page, so it cannot tell when the batch did.
    """
    latest = earlier_max
    for line in batch:
        try:
            event = json.loads(line)
            ts, session = event["ts"], (event.get("data") or {}).get("workSessionId")
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if isinstance(ts, int) and session and ts > latest:
            latest = ts
    return (latest if latest > earlier_max else None), latest


def _first_last_time(http: httpx.Client) -> int | None:
    """The first session's ``lastTime`` on the default page (decoding only its start)."""
    seen = b""
    with http.stream("GET", "/api/work-sessions") as reply:
        for chunk in reply.iter_bytes():
            seen += chunk
            found = re.search(rb'"lastTime": (\d+)', seen)
            if found:
                return int(found.group(1))
    return None


def _probe(base: str, t0: float, holds: Any, out: dict[str, float | None], name: str) -> None:
    """Poll until ``holds(client)``; ``out[name]``: seconds from ``t0`` (None: not in 60 s)."""
    with httpx.Client(base_url=base, timeout=120) as probe:
        while time.monotonic() - t0 < 60:
            if holds(probe):
                out[name] = round(time.monotonic() - t0, 2)
                return
            time.sleep(0.05)


def _appender(
    base: str, live_file: Path, batches: list[list[bytes]], gap: float, earlier_max: int
) -> list[dict[str, float | None]]:
    """Append each batch after ``gap`` s; time until each endpoint's response holds it."""
    out: list[dict[str, float | None]] = []
    with httpx.Client(base_url=base, timeout=120) as http:
        for batch in batches:
            time.sleep(gap)
            needle, earlier_max = _batch_ts_needle(batch, earlier_max)
            before = http.get("/api/events?limit=1").json()["total"]
            with live_file.open("ab") as fh:
                fh.write(b"".join(batch))
            t0 = time.monotonic()
            seen: dict[str, float | None] = {"events_s": None, "work_sessions_s": None}
            checks = {
                "events_s": lambda c, n=before: c.get("/api/events?limit=1").json()["total"] != n,
                "work_sessions_s": lambda c, n=needle: (_first_last_time(c) or 0) >= n,
            }
            if needle is None:
                del checks["work_sessions_s"]
            probes = [
                threading.Thread(target=_probe, args=(base, t0, check, seen, name))
                for name, check in checks.items()
            ]
            for p in probes:
                p.start()
            for p in probes:
                p.join()
            out.append(seen)
    return out


def _start(args: argparse.Namespace, logdir: Path, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
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
            *(["--refresh", str(args.refresh)] if args.refresh is not None else []),
        ],
        env=env,
        stderr=subprocess.PIPE,
    )


def _wait_ready(server: subprocess.Popen[bytes], base: str) -> httpx.Response:
    with httpx.Client(base_url=base, timeout=300) as probe:
        while True:
            if server.poll() is not None:
                assert server.stderr is not None
                raise SystemExit(f"server exited: {server.stderr.read().decode()[-2000:]}")
            try:
                return probe.get("/api/work-sessions")
            except httpx.TransportError:
                time.sleep(0.2)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=150_000)
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0, help="length of a round")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--single-seconds", type=float, default=15.0)
    parser.add_argument("--held-back", type=int, default=8600, help="lines appended during the run")
    parser.add_argument("--batches", type=int, default=4, help="appended batches per round")
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
    parser.add_argument("--refresh", type=float, help="serve --refresh S")
    parser.add_argument("--label", default="", help="a note saved with the result")
    parser.add_argument(
        "--client",
        choices=("httpx", "stdlib"),
        default="httpx",
        help="the load clients' HTTP library (stdlib: http.client, less client CPU)",
    )
    return parser


def _source(args: argparse.Namespace) -> Path:
    if args.log is not None:
        return Path(args.log)
    from a2a_lab.samples import write_log

    # the log ends now, as a live gateway's does: sessions of the last 24 h are ACTIVE or
    # QUIET and turn ARCHIVED during the run, as on a real dashboard
    span = timedelta(days=args.events / 60_000)
    start = (datetime.now(UTC) - span).replace(microsecond=0)
    source = Path(args.workdir) / f"log_{args.events}_{args.seed}.ndjson"
    write_log(source, args.events, seed=args.seed, start=start)
    return source


def main() -> None:
    args = _parser().parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    source = _source(args)
    lines = source.read_bytes().splitlines(keepends=True)
    logdir = args.workdir / "live"
    logdir.mkdir(parents=True, exist_ok=True)
    live_file = logdir / "coordination-events.ndjson"
    kept = lines[: len(lines) - args.held_back]
    live_file.write_bytes(b"".join(kept))
    held = lines[len(lines) - args.held_back :]
    n_batches = max(1, args.rounds * args.batches)
    per = max(1, len(held) // n_batches)
    batches = [held[i * per : (i + 1) * per] for i in range(n_batches)]
    earlier_max = _batch_ts_needle(kept[-5000:], 0)[1]

    port = _free_port()
    started = time.monotonic()
    server = _start(args, logdir, port)
    base = f"http://{HOST}:{port}"
    phases: list[dict[str, Any]] = []
    try:
        first = _wait_ready(server, base)
        ready_s = time.monotonic() - started
        peak_at_ready = _peak_rss_mb(server.pid)  # start (and the first body) only
        if args.single_seconds > 0:
            cpu0 = _cpu_s(server.pid)
            with LoadSampler(server.pid) as load:
                lat, err = _load_clients(args, base, 1, args.single_seconds)
            phases.append(
                {
                    "phase": "single client",
                    **_latency_summary(lat, err),
                    "server_cpu_ms_per_request": round(
                        1000 * (_cpu_s(server.pid) - cpu0) / max(1, len(lat)), 2
                    ),
                    "load": load.summary(),
                }
            )
            print(phases[-1], flush=True)
        for r in range(args.rounds):
            mine = batches[r * args.batches : (r + 1) * args.batches]
            visible: list[dict[str, float | None]] = []
            gap = args.seconds / (len(mine) + 1)

            appender = threading.Thread(
                target=lambda args=(base, live_file, mine, gap, earlier_max), out=visible: (
                    out.extend(_appender(*args))
                )
            )
            cpu0 = _cpu_s(server.pid)
            with LoadSampler(server.pid) as load:
                appender.start()
                lat, err = _load_clients(args, base, args.clients, args.seconds)
                appender.join()
            for batch in mine:
                earlier_max = _batch_ts_needle(batch, earlier_max)[1]
            phases.append(
                {
                    "phase": f"round {r + 1}: {args.clients} clients",
                    **_latency_summary(lat, err),
                    "append_visible": visible,
                    "server_cpu_s": round(_cpu_s(server.pid) - cpu0, 1),
                    "load": load.summary(),
                }
            )
            print(phases[-1], flush=True)
        peak = _peak_rss_mb(server.pid)
        worker_peak = max((_peak_rss_mb(c) for c in _children(server.pid)), default=None)
        workers_rss = [m for p in phases for m in [p["load"].get("workers_rss_max_mb")] if m]
    finally:
        server.terminate()
        server.wait(timeout=30)

    result = {
        "label": args.label,
        "events": len(lines),
        "log_mb": round(source.stat().st_size / 1e6, 1),
        "clients": args.clients,
        "seconds": args.seconds,
        "bust_cache": args.bust_cache,
        "query": args.query,
        "raw": args.raw,
        "client": args.client,
        "now": args.now,
        "ready_s": round(ready_s, 2),
        "body_sent_mb": round(first.num_bytes_downloaded / 1e6, 2),
        "body_mb": round(len(first.content) / 1e6, 2),
        "phases": phases,
        "server_peak_rss_mb": peak,
        "server_peak_rss_at_ready_mb": peak_at_ready,
        # the ingests and table updates run in a worker process (replaced past 400 MB):
        # its resident memory sampled every second, and its peak when the run ended
        "worker_rss_max_mb": max(workers_rss, default=None),
        "worker_peak_rss_at_end_mb": worker_peak,
        "machine": machine(),
    }
    print(result)
    save("serve", result)


if __name__ == "__main__":
    main()
