"""Loading coordination logs: sources, lossless decoding, write-back, incremental follow, the history store."""

from a2a_lab.io._decode import parse_line
from a2a_lab.io._follow import LogFollower
from a2a_lab.io._load import LoadReport, LoadResult, decode_bytes, from_records, load, write_events
from a2a_lab.io._store import IngestReport, StoreError, export_store, ingest, is_store, load_store, scan_store, store_lines
from a2a_lab.io._sources import LIVE_NAME, SourceError, resolve_source, rotation_key
from a2a_lab.io._timestamps import event_ms_expr, iso_to_ms_expr

__all__ = [
    "IngestReport",
    "LIVE_NAME",
    "LoadReport",
    "LoadResult",
    "LogFollower",
    "SourceError",
    "StoreError",
    "decode_bytes",
    "event_ms_expr",
    "export_store",
    "from_records",
    "ingest",
    "is_store",
    "iso_to_ms_expr",
    "load",
    "load_store",
    "parse_line",
    "resolve_source",
    "rotation_key",
    "scan_store",
    "store_lines",
    "write_events",
]
