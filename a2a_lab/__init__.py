"""a2a_lab: analyse, check and simulate multi-agent (A2A) coordination event logs.

One import serves a notebook::

    import a2a_lab as al
    res = al.load(al.samples.sample_dir())
    res.events, res.report
"""

import importlib
from typing import Any

from a2a_lab import schema
from a2a_lab.io import LoadReport, LoadResult, LogFollower, from_records, load, write_events
from a2a_lab.schema import CoordinationEvent, EventData, polars_schema

__version__ = "0.1.0"

__all__ = [
    "CoordinationEvent",
    "EventData",
    "LoadReport",
    "LoadResult",
    "LogFollower",
    "__version__",
    "from_records",
    "load",
    "polars_schema",
    "samples",
    "schema",
    "write_events",
]

_LAZY_SUBMODULES = {"samples"}


def __getattr__(name: str) -> Any:
    # sub-packages with data or heavy imports load on first use
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"a2a_lab.{name}")
    raise AttributeError(f"module 'a2a_lab' has no attribute {name!r}")
