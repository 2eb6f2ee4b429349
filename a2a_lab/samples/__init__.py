"""The bundled sample log and the seeded generator that made it.

The sample is a log directory (live ``coordination-events.ndjson``, rotated siblings,
``openclaw.json`` and a ``README.md`` describing the data) shipped as package data, so
notebooks and tests can load it after ``pip install``. The generator also writes large logs
for benchmarks (:func:`write_log`).
"""

from __future__ import annotations

from importlib import import_module
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from a2a_lab.samples._generate import (
        DEFAULT_SEED,
        LogSummary,
        MalformedLine,
        SampleManifest,
        generate_events,
        write_log,
        write_sample,
    )

_GENERATOR_NAMES = frozenset(
    {
        "DEFAULT_SEED",
        "LogSummary",
        "MalformedLine",
        "SampleManifest",
        "generate_events",
        "write_log",
        "write_sample",
    }
)

__all__ = [
    "DEFAULT_SEED",
    "LogSummary",
    "MalformedLine",
    "SampleManifest",
    "generate_events",
    "sample_dir",
    "sample_openclaw_config",
    "write_log",
    "write_sample",
]


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
    # Imported on first use so that ``python -m a2a_lab.samples._generate`` does not find the
    # generator already imported by its own package (runpy warns about that).
    if name in _GENERATOR_NAMES:
        return getattr(import_module("a2a_lab.samples._generate"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
