"""Loading coordination logs: sources, lossless decoding, write-back and incremental follow."""

from a2a_lab.io._decode import ChunkDecoder, decode_chunk, parse_line
from a2a_lab.io._follow import LogFollower
from a2a_lab.io._load import (
    LoadReport,
    LoadResult,
    WriteReport,
    decode_bytes,
    from_records,
    load,
    original_lines,
    scan,
    write_events,
)
from a2a_lab.io._sources import LIVE_NAME, SourceError, resolve_source, rotation_key
from a2a_lab.io._timestamps import event_ms_expr, iso_to_ms_expr

__all__ = [
    "ChunkDecoder",
    "LIVE_NAME",
    "LoadReport",
    "LoadResult",
    "LogFollower",
    "SourceError",
    "WriteReport",
    "decode_bytes",
    "decode_chunk",
    "event_ms_expr",
    "from_records",
    "iso_to_ms_expr",
    "load",
    "original_lines",
    "parse_line",
    "resolve_source",
    "rotation_key",
    "scan",
    "write_events",
]
