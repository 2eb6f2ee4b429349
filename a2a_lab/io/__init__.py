"""Loading coordination logs: sources, lossless decoding, write-back and incremental follow."""

from a2a_lab.io._decode import parse_line
from a2a_lab.io._follow import LogFollower
from a2a_lab.io._load import LoadReport, LoadResult, decode_bytes, from_records, load, write_events
from a2a_lab.io._sources import LIVE_NAME, SourceError, resolve_source, rotation_key
from a2a_lab.io._timestamps import event_ms_expr, iso_to_ms_expr

__all__ = [
    "LIVE_NAME",
    "LoadReport",
    "LoadResult",
    "LogFollower",
    "SourceError",
    "decode_bytes",
    "event_ms_expr",
    "from_records",
    "iso_to_ms_expr",
    "load",
    "parse_line",
    "resolve_source",
    "rotation_key",
    "write_events",
]
