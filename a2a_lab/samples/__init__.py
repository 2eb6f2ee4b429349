"""The bundled sample log, and large logs of its shape for benchmarks.

The sample is a log directory (live ``coordination-events.ndjson``, rotated siblings,
``openclaw.json`` and a ``README.md`` describing the data) shipped as package data, so
notebooks and tests can load it after ``pip install``. It comes from the simulator, as large
logs of its shape do: :func:`write_sample` (``python -m a2a_lab.samples DIR``) runs the
:func:`~a2a_lab.sim.workload.presets.sample_like` deployment for a few days and adds what a
recorded log holds and the simulator does not write with :mod:`a2a_lab.sim.output.inject`;
:func:`write_log` writes one large log of the same deployment for benchmarks.
"""

from __future__ import annotations

from importlib import import_module
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from a2a_lab.samples._sample import (
        SAMPLE_DAYS,
        SAMPLE_SEED,
        SAMPLE_START,
        SampleSummary,
        write_sample,
    )
    from a2a_lab.samples._write import LOG_START, LogSummary, write_log

__all__ = [
    "LOG_START",
    "SAMPLE_DAYS",
    "SAMPLE_SEED",
    "SAMPLE_START",
    "LogSummary",
    "SampleSummary",
    "sample_dir",
    "sample_openclaw_config",
    "write_log",
    "write_sample",
]
#: Imported on first use: finding the sample must not import the simulator.
_SIMULATED = {
    "LOG_START": "_write",
    "LogSummary": "_write",
    "write_log": "_write",
    "SAMPLE_DAYS": "_sample",
    "SAMPLE_SEED": "_sample",
    "SAMPLE_START": "_sample",
    "SampleSummary": "_sample",
    "write_sample": "_sample",
}


def sample_dir() -> Path:
    """Return the directory of the bundled sample log.

    Resolved through :mod:`importlib.resources`, so it works from a source checkout and from
    an installed package alike.

    Returns
    -------
    pathlib.Path
        The directory holding ``coordination-events.ndjson`` and its rotated siblings.

    Examples
    --------
    >>> directory = sample_dir()
    >>> (directory / "coordination-events.ndjson").is_file()
    True
    >>> len(sorted(directory.glob("coordination-events-*.ndjson"))) >= 2
    True
    """
    # A regular package installed by pip lives on the file system, so the resource is a path.
    return Path(str(files("a2a_lab.samples").joinpath("data")))


def sample_openclaw_config() -> Path:
    """Return the path of the sample deployment's ``openclaw.json``.

    Every agent listed there is a main agent; the sample's other agents only run as spawned
    sub-agent sessions.

    Returns
    -------
    pathlib.Path
        Path of ``openclaw.json`` inside :func:`sample_dir`.

    Examples
    --------
    >>> import json
    >>> config = json.loads(sample_openclaw_config().read_text(encoding="utf-8"))
    >>> [agent["id"] for agent in config["agents"]["list"]][:2]
    ['main', 'ruda']
    """
    return sample_dir() / "openclaw.json"


def __getattr__(name: str) -> Any:
    if name in _SIMULATED:
        return getattr(import_module(f"a2a_lab.samples.{_SIMULATED[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
