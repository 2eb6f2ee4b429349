"""The sample's ``README.md``, every number measured from the written log."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Final

import polars as pl

from a2a_lab.io import load
from a2a_lab.schema.payloads import parse_payload
from a2a_lab.sim.workload.presets import SAMPLE_MAIN_AGENTS

__all__ = ["readme"]

_KINDS: Final = {
    "crlf": "a valid event whose line ends with CRLF",
    "not_json": "a stray stderr line in the log (not JSON)",
    "missing_type": "a copy of the next event without its `type`",
    "blank_type": "a copy of the next event with `type` set to blanks",
    "blank": "an empty line",
    "truncated": "a torn write: the first bytes of the next line, as if the process died mid-write",
    "invalid_utf8": "a valid event whose message has a Korean character cut to 2 of its 3 bytes",
    "nan": 'a copy of the next event with `"ts":NaN` (not JSON)',
    "non_object": "a JSON array, not an object",
}


def _table(head: tuple[str, ...], rows: Iterable[tuple[object, ...]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _field(name: str) -> pl.Expr:
    return pl.col("data").struct.field(name)


def _payload_rows(events: pl.DataFrame) -> list[tuple[str, int, int]]:
    carriers = events.filter(_field("payloadJson").is_not_null()).select(
        kind=_field("payloadType"), json=_field("payloadJson")
    )
    valid: dict[str, list[int]] = {}
    for kind, text in carriers.iter_rows():
        result = parse_payload(text, kind)
        valid.setdefault(kind, [0, 0])[0 if result.valid and not result.type_mismatch else 1] += 1
    return [(f"`{k}`", v[0], v[1]) for k, v in sorted(valid.items())]


def readme(
    directory: Path,
    command: str,
    files: tuple[tuple[str, int, int], ...],
    malformed: tuple[tuple[str, int, str], ...],
) -> str:
    """The README of the sample written into ``directory`` (loaded back to be measured)."""
    events = load(directory).events
    by_type = events.group_by("type").len().sort("type")
    sends = events.filter(pl.col("type") == "a2a.send")
    keys = sends.select(_field("targetSessionKey")).to_series().drop_nulls()
    outcomes = dict(
        events.filter(pl.col("type") == "a2a.response")
        .group_by(outcome=_field("outcome"))
        .len()
        .drop_nulls("outcome")
        .iter_rows()
    )
    gated = int(events.select(_field("concurrencyBlocked").fill_null(False).sum()).item())
    agents = sorted(set(events["agent_id"]))
    workers = [a for a in agents if a not in SAMPLE_MAIN_AGENTS]
    turns = events.filter(_field("turn").is_not_null()).height
    iso = "%Y-%m-%dT%H:%M:%S%.3fZ"
    first, last = events.select(
        first=pl.col("event_time").min().dt.strftime(iso),
        last=pl.col("event_time").max().dt.strftime(iso),
    ).row(0)
    text = _TEMPLATE.format(
        command=command,
        events=events.height,
        first=first,
        last=last,
        agents=len(agents),
        mains=", ".join(f"`{a}`" for a in SAMPLE_MAIN_AGENTS),
        workers=", ".join(f"`{a}`" for a in workers),
        subagent_sessions=keys.filter(keys.str.contains(":subagent:")).n_unique(),
        work_sessions=events.select(_field("workSessionId")).to_series().drop_nulls().n_unique(),
        turns=turns,
        no_reply=outcomes.get("no_reply", 0),
        legacy=outcomes.get("blocked", 0) - gated,
        gated=gated,
        files=_table(("file", "lines", "events"), ((f"`{n}`", a, b) for n, a, b in files)),
        types=_table(("type", "events"), ((f"`{t}`", n) for t, n in by_type.iter_rows())),
        payloads=_table(("payloadType", "valid", "invalid"), _payload_rows(events)),
        malformed=_table(
            ("file", "line", "kind", "what it is"),
            ((f"`{f}`", n, f"`{k}`", _KINDS[k]) for f, n, k in malformed),
        ),
    )
    return text


_TEMPLATE: Final = """# Bundled sample coordination log

Synthetic data simulated with a fixed seed, not recorded from a real deployment:

```
{command}
```

`data/samples` in the repository is a symlink to this directory, which is also installed as
package data (`a2a_lab.samples.sample_dir()`). The same seed with the same numpy version gives
byte-identical files (a test regenerates the sample and compares bytes). Do not edit the files
by hand: change the simulator or the injectors and regenerate. Every number below is measured
from the written files by the same command.

## What it is

The simulator's `sample_like` deployment (`a2a_lab.sim.workload.presets`) run for three and a
half days from 2026-01-30 00:00 KST and read at that moment, as a live log is (the exchanges
still running then are incomplete), its events written as the gateway writes them, then given
what a recorded log holds and the simulator does not write (`a2a_lab.sim.output.inject`). A log
directory as the reference writes it (`rules §9`): the live `coordination-events.ndjson` and its
rotated siblings, {events} events from {first} to {last}, written by {agents} agents.

- Main agents (configured in `openclaw.json`): {mains}. Worker agents {workers} are not
  configured; they only run as spawned sub-agent sessions `agent:<id>:subagent:<uuid>`
  ({subagent_sessions} such sessions, one per worker, spawned at their first delegation).
- Messages follow a KST working day (quiet at night, busiest in the afternoon); the task hub's
  updates and nudges go on around the clock.
- Until 2026-01-31 00:00 KST the older runtime wrote the log (`inject.legacy_wording`): no-reply
  outcomes say `outcome: "blocked"` with `[outcome] blocked: 응답을 받지 못했습니다 …` and a spawn
  result says `status: "ok"`; from then on the current runtime writes `outcome: "no_reply"` and
  `status: "accepted"`.
- Tasks (`task.started` … `task.completed`) and their {work_sessions} work sessions
  (`ws_<uuid>`) come from the simulator; what the task hub writes around them
  (`inject.orchestration`): backlog pick-ups, plans (some rejected once), progress updates,
  continuation nudges, blocks with unblock requests (some failing) and resumes, reminders,
  cancellations, milestone sync failures; `a2a.spawn` / `a2a.spawn_result` around the first
  delegation to each sub-agent session (a few refused first); `a2a.auto_route` before some
  exchanges started by a Discord mention (`<@…>`).
- Exchanges: `a2a.send` → `a2a.response` → ping-pong turns ({turns} turn responses with
  `turn, maxTurns, messageIntent`, `terminationReason` on the last) → `a2a.complete`, with
  retries (`a2a.retry`) as the reference's loop and backoff make them.
- Outcomes of `a2a.response`: {no_reply} `no_reply`, {legacy} legacy `blocked` with wait fields,
  {gated} refused by the concurrency gate (`outcome: "blocked"`, then
  `a2a.complete {{concurrencyBlocked: true}}`; the sample's gate lets one flow per target
  through); some waits last the full 300 s.
- Korean and English text from the simulator's text banks (`a2a_lab.sim.workload.texts`).
- Rotation: month rotation at the KST month change (`coordination-events-2026-01.ndjson`);
  size rotation when the live file exceeds 640 KiB (scaled down from the reference's 10 MiB so a
  small sample shows it), named with the UTC time of the write that triggered it (`:` and `.`
  replaced by `-`).

## Files (oldest first, live file last)

{files}

## Events by type

{types}

## Structured payloads (`payloadType` + `payloadJson`, runtime §8)

Valid or invalid as `validateA2APayload` judges them; the invalid ones were broken by
`inject.payload_errors` (JSON cut mid-way, required fields missing, a `type` that disagrees with
`payloadType`).

{payloads}

## Deliberately malformed lines

One of each kind `inject.malformed` writes, each in a file drawn for it. Line numbers are
1-based physical lines of the named file.

{malformed}
"""
