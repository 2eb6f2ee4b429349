"""Digests of what ``--tz`` changes, to compare two checkouts (issue 25's ``--tz`` trail).

For the committed sample, with and without ``--tz Pacific/Chatham`` (clock pinned):
``a2a-lab report`` of the log and of its store (the font subset's timestamp blanked),
the tables of ``a2a-lab ingest`` (every Parquet file of the store, by content) and the
``a2a-lab serve`` bodies of every recorded peer-api query. Usage::

    PYTHONPATH=$PWD python tools/tz_parity.py > after.json   # then diff with another checkout's
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
#: Every run works here, the sample copied in: two checkouts name the same files.
WORK = Path(tempfile.gettempdir()) / "a2a-lab-tz-parity"
SAMPLE = WORK / "samples"
NOW = "2026-03-01T00:00:00Z"
FONT = re.compile(r"base64,T1RUTw[A-Za-z0-9+/=]*")
ZONES: tuple[str | None, ...] = (None, "Pacific/Chatham")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _cli(argv: list[str]) -> None:
    """Run ``a2a-lab argv`` in its own process, as a user does (Polars' categories are
    global: a guard replay depends on the logs analysed before in one process)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "A2A_LAB_PROGRESS": "0"}
    cmd = [sys.executable, "-m", "a2a_lab", *argv]
    done = subprocess.run(cmd, env=env, capture_output=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"a2a-lab {' '.join(argv)}: exit {done.returncode}: {done.stderr!r}")


def _report(source: Path, out: Path, tz: str | None) -> str:
    _cli(["report", str(source), "-o", str(out), "--now", NOW, *(["--tz", tz] if tz else [])])
    # the embedded font's ``head`` table carries the subsetter's clock: blanked
    html = FONT.sub("FONT", out.read_text(encoding="utf-8")).replace(str(out.parent), "DIR")
    return _sha(html.encode("utf-8"))


def _tables(store: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in sorted(store.rglob("*.parquet")):
        frame = pl.read_parquet(f)
        out[str(f.relative_to(store))] = [
            frame.height,
            str(frame.schema),
            # by content, whatever the chunks; in any order (a group_by's is not fixed)
            _sha(frame.hash_rows(seed=0).sort().to_numpy().tobytes()),
        ]
    state = json.loads((store / "a2a-store.json").read_text(encoding="utf-8"))
    out["state.timezone"] = state.get("timezone")
    return out


def _bodies(store: Path, tz: str | None) -> dict[str, str]:
    from a2a_lab.serve import LiveEvents
    from a2a_lab.serve._app import _events_body, _work_sessions_body
    from a2a_lab.time import now_ms

    queries = []
    for case in sorted((ROOT / "tests/data/peer-api").glob("*.json")):
        url = urlsplit(json.loads(case.read_text(encoding="utf-8"))["meta"]["requestUrl"])
        queries.append((url.path, url.query, dict(parse_qsl(url.query, keep_blank_values=True))))
    live = LiveEvents(SAMPLE, store=store, tz=tz)
    try:
        snap, now = live.snapshot, now_ms(NOW)
        bodies = {}
        for path, query, params in queries:
            if path == "/api/work-sessions":
                body = _work_sessions_body(live, snap, params, now, None)[0].plain
            else:
                body = _events_body(live, snap, params)[0]
            bodies[f"{path}?{query}"] = _sha(body)
        return bodies
    finally:
        live.close()


def main() -> int:
    os.environ.pop("A2A_LAB_TZ", None)
    result: dict[str, Any] = {}
    shutil.rmtree(WORK, ignore_errors=True)
    shutil.copytree(ROOT / "data/samples", SAMPLE)
    try:
        for tz in ZONES:
            key = tz or "default"
            d = WORK / key.replace("/", "_")
            d.mkdir()
            store = d / "store"
            _cli(["ingest", str(SAMPLE), str(store), "--now", NOW, *(["--tz", tz] if tz else [])])
            result[f"ingest {key}"] = _tables(store)
            result[f"report log {key}"] = _report(SAMPLE, d / "log.html", tz)
            result[f"report store {key}"] = _report(store, d / "store.html", tz)
            result[f"serve {key}"] = _bodies(d / "served", tz)
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
