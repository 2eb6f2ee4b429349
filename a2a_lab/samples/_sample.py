"""The bundled sample, made from the simulator: :func:`write_sample` (``python -m a2a_lab.samples``).

The sample is the :func:`~a2a_lab.sim.workload.presets.sample_like` deployment run for a few
days across a KST month change, its events written by :func:`a2a_lab.io.write_events`, then
given what a recorded log holds and the simulator does not write
(:mod:`a2a_lab.sim.output.inject`): the orchestration events around the exchanges, the older
runtime's wording before the current runtime took over, and one malformed line of each kind.
The lines are rotated as the reference rotates its log (month change, and a size threshold
scaled down so a small sample shows it). The same seed gives the same bytes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Final

import numpy as np
import polars as pl

from a2a_lab.io import write_events
from a2a_lab.samples._readme import readme
from a2a_lab.sim import GatePolicy, simulate
from a2a_lab.sim.output.inject import (
    MALFORMED_KINDS,
    legacy_wording,
    malformed,
    orchestration,
    payload_errors,
    payload_links,
)
from a2a_lab.sim.output.logdir import split_log
from a2a_lab.sim.workload.presets import SAMPLE_MAIN_AGENTS, SAMPLE_WORKER_AGENTS, sample_like
from a2a_lab.sim.workload.texts import AGENT_IDENTITIES

__all__ = ["SAMPLE_DAYS", "SAMPLE_SEED", "SAMPLE_START", "SampleSummary", "write_sample"]

#: The seed of the bundled sample.
SAMPLE_SEED: Final = 20260205
_KST: Final = timezone(timedelta(hours=9))
#: The sample starts at midnight KST on a Friday and crosses the KST month change.
SAMPLE_START: Final = datetime(2026, 1, 30, tzinfo=_KST)
#: Days the sample's deployment sends messages.
SAMPLE_DAYS: Final = 3.5
_MESSAGES_PER_DAY: Final = 220.0
#: The older runtime wrote the log until then (``legacy_wording``).
_CURRENT_RUNTIME: Final = datetime(2026, 1, 31, tzinfo=_KST)
#: Scaled down from the reference's 10 MiB so that a small sample shows size rotation.
_ROTATE_BYTES: Final = 640 * 1024
#: Share of the structured payloads written broken.
_BROKEN_PAYLOADS: Final = 0.2
#: A tighter concurrency gate than the preset's, so that the sample shows refusals.
_GATE_FLOWS: Final = 1


@dataclass(frozen=True)
class SampleSummary:
    """What :func:`write_sample` wrote: per file (oldest first) its lines and events."""

    directory: Path
    files: tuple[tuple[str, int, int], ...]
    #: ``(file, 1-based line, kind)`` of every malformed or oddly written line.
    malformed: tuple[tuple[str, int, str], ...]

    @property
    def events(self) -> int:
        """Events in all files."""
        return sum(events for _, _, events in self.files)


def _lines(seed: np.random.SeedSequence) -> pl.Series:
    """The simulated, orchestrated and legacy-worded event lines of the sample, in time order."""
    simulation, extra = seed.spawn(2)
    config = sample_like(_MESSAGES_PER_DAY, duration_s=SAMPLE_DAYS * 86_400.0, start=SAMPLE_START)
    config = config.model_copy(update={"gate": GatePolicy(max_concurrent_flows=_GATE_FLOWS)})
    events = simulate(config, seed=simulation).events
    # read as a live log is, at the moment the deployment stops sending: the exchanges still
    # running then are incomplete
    cut_ms = int(SAMPLE_START.timestamp() * 1000 + SAMPLE_DAYS * 86_400_000)
    events = events.filter(pl.col("event_ms") < cut_ms)
    lines = pl.Series("line", (write_events(events) or "").split("\n")[:-1])
    orchestrated, broken = extra.spawn(2)
    # the sample has few spawns (one per worker): a third refused once shows the failure
    lines = orchestration(lines, orchestrated, refused_spawn_share=1 / 3).lines
    lines = payload_errors(payload_links(lines).lines, _BROKEN_PAYLOADS, broken).lines
    until = int(_CURRENT_RUNTIME.timestamp() * 1000)
    return legacy_wording(lines, until).lines


def _openclaw() -> str:
    """The deployment's ``openclaw.json``: every configured agent is a main agent."""
    config = {
        "agents": {
            "defaults": {
                "model": {"primary": "anthropic/claude-sonnet-4-5"},
                "workspace": "~/.openclaw/workspace",
                "subagents": {"maxSpawnDepth": 2, "maxChildrenPerAgent": 5},
            },
            "list": [
                {
                    "id": agent,
                    **({"default": True} if agent == "main" else {}),
                    "name": AGENT_IDENTITIES[agent][0],
                    "workspace": "~/.openclaw/workspace" + ("" if agent == "main" else f"-{agent}"),
                    "identity": dict(
                        zip(("name", "emoji", "theme"), AGENT_IDENTITIES[agent][:3], strict=True)
                    ),
                    "subagents": {"allowAgents": list(SAMPLE_WORKER_AGENTS)},
                }
                for agent in SAMPLE_MAIN_AGENTS
            ],
        },
        "session": {"agentToAgent": {"maxPingPongTurns": 5}},
        "tools": {"agentToAgent": {"enabled": True, "allow": list(SAMPLE_MAIN_AGENTS)}},
    }
    return json.dumps(config, ensure_ascii=False, indent=2) + "\n"


def write_sample(directory: str | os.PathLike[str], seed: int = SAMPLE_SEED) -> SampleSummary:
    """Write the sample log directory: log files, ``openclaw.json`` and ``README.md``.

    Parameters
    ----------
    directory
        Created if missing; the sample's files in it are overwritten.
    seed
        Seed of the simulation and of every injection.

    Returns
    -------
    SampleSummary
        Lines and events per file, and where the malformed lines are.
    """
    lines_seed, kinds_seed, places_seed = np.random.SeedSequence(seed).spawn(3)
    lines = _lines(lines_seed)
    times = lines.str.extract(r'"ts":(-?\d+)', 1).cast(pl.Int64).to_list()
    files = split_log(
        [f"{line}\n" for line in lines], times, rotate_bytes=_ROTATE_BYTES, tz="Asia/Seoul"
    )
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    # one malformed line of each kind, each in a file drawn for it
    # each in a file drawn in proportion to its lines
    sizes = np.array([len(chunk) for _, chunk in files], dtype=float)
    where = np.random.default_rng(kinds_seed).choice(
        len(files), size=len(MALFORMED_KINDS), p=sizes / sizes.sum()
    )
    places = places_seed.spawn(len(files))
    rows: list[tuple[str, int, int]] = []
    bad: list[tuple[str, int, str]] = []
    for number, (name, chunk) in enumerate(files):
        kinds = [k for k, f in zip(MALFORMED_KINDS, where, strict=True) if f == number]
        injected = malformed(pl.Series([c[:-1] for c in chunk]), kinds, seed=places[number])
        (out / name).write_bytes(b"".join(line + b"\n" for line in injected.lines.to_list()))
        rows.append((name, injected.lines.len(), len(chunk)))
        bad += [(name, line, kind) for line, kind in injected.marks.iter_rows()]
    (out / "openclaw.json").write_text(_openclaw(), encoding="utf-8")
    summary = SampleSummary(out, tuple(rows), tuple(bad))
    command = f"python -m a2a_lab.samples a2a_lab/samples/data --seed {seed}"
    text = readme(out, command, summary.files, summary.malformed)
    (out / "README.md").write_text(text, encoding="utf-8")
    return summary
