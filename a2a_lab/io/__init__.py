"""Loading coordination logs: sources, lossless decoding, write-back, incremental follow, the history store."""

from a2a_lab.io._decode import ChunkDecoder, decode_chunk, file_label, parse_line
from a2a_lab.io._follow import LogFollower
from a2a_lab.io._load import (
    from_records,
    load,
    original_lines,
    scan,
)
from a2a_lab.io._paths import polars_path
from a2a_lab.io._result import LoadReport, LoadResult, decode_bytes
from a2a_lab.io._sources import LIVE_NAME, SourceError, resolve_source, rotation_key
from a2a_lab.io._store import IngestReport, StoreError, ingest, is_store
from a2a_lab.io._store_read import export_store, load_store, scan_store, store_lines
from a2a_lab.io._store_tables import (
    StoreSnapshot,
    StoreTable,
    TableUpdate,
    open_store,
    update_store,
)
from a2a_lab.io._write import WriteReport, write_events
from a2a_lab.time import event_ms_expr, iso_to_ms_expr

__all__ = [
    "LIVE_NAME",
    "ChunkDecoder",
    "IngestReport",
    "LoadReport",
    "LoadResult",
    "LogFollower",
    "SourceError",
    "StoreError",
    "StoreSnapshot",
    "StoreTable",
    "TableUpdate",
    "WriteReport",
    "decode_bytes",
    "decode_chunk",
    "event_ms_expr",
    "export_store",
    "file_label",
    "from_records",
    "ingest",
    "is_store",
    "iso_to_ms_expr",
    "load",
    "load_store",
    "open_store",
    "original_lines",
    "parse_line",
    "polars_path",
    "resolve_source",
    "rotation_key",
    "scan",
    "scan_store",
    "store_lines",
    "update_store",
    "write_events",
]
