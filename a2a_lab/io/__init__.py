"""Loading coordination logs: sources, lossless decoding, write-back, incremental follow, the history store.

The names load on first use (PEP 562; ``from a2a_lab.io import X`` works as before): a
query of a history store's tables imports only the store's modules, not the decoder, the
pydantic models or numpy (``a2a-lab work-sessions STORE``, issue 24).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from a2a_lab.io._decode import ChunkDecoder, decode_chunk, parse_line
    from a2a_lab.io._follow import LogFollower
    from a2a_lab.io._load import (
        from_records,
        load,
        original_lines,
        scan,
    )
    from a2a_lab.io._paths import file_label, polars_path
    from a2a_lab.io._result import LoadReport, LoadResult, decode_bytes
    from a2a_lab.io._sources import LIVE_NAME, SourceError, resolve_source, rotation_key
    from a2a_lab.io._store import IngestReport, StoreError, ingest, is_store
    from a2a_lab.io._store_read import (
        export_store,
        load_store,
        scan_store,
        store_lines,
        store_report,
    )
    from a2a_lab.io._store_tables import (
        StoreSnapshot,
        StoreTable,
        TableUpdate,
        open_store,
        update_store,
    )
    from a2a_lab.io._write import WriteReport, write_events
    from a2a_lab.time import event_ms_expr, iso_to_ms_expr

#: The module each public name lives in.
_LAZY = {
    "ChunkDecoder": "a2a_lab.io._decode",
    "decode_chunk": "a2a_lab.io._decode",
    "file_label": "a2a_lab.io._paths",
    "parse_line": "a2a_lab.io._decode",
    "LogFollower": "a2a_lab.io._follow",
    "from_records": "a2a_lab.io._load",
    "load": "a2a_lab.io._load",
    "original_lines": "a2a_lab.io._load",
    "scan": "a2a_lab.io._load",
    "polars_path": "a2a_lab.io._paths",
    "LoadReport": "a2a_lab.io._result",
    "LoadResult": "a2a_lab.io._result",
    "decode_bytes": "a2a_lab.io._result",
    "LIVE_NAME": "a2a_lab.io._sources",
    "SourceError": "a2a_lab.io._sources",
    "resolve_source": "a2a_lab.io._sources",
    "rotation_key": "a2a_lab.io._sources",
    # StoreError and is_store live in _store_state; _store re-exports them
    "IngestReport": "a2a_lab.io._store",
    "StoreError": "a2a_lab.io._store_state",
    "ingest": "a2a_lab.io._store",
    "is_store": "a2a_lab.io._store_state",
    "export_store": "a2a_lab.io._store_read",
    "load_store": "a2a_lab.io._store_read",
    "scan_store": "a2a_lab.io._store_read",
    "store_lines": "a2a_lab.io._store_read",
    "store_report": "a2a_lab.io._store_read",
    "StoreSnapshot": "a2a_lab.io._store_tables",
    "StoreTable": "a2a_lab.io._store_tables",
    "TableUpdate": "a2a_lab.io._store_tables",
    "open_store": "a2a_lab.io._store_tables",
    "update_store": "a2a_lab.io._store_tables",
    "WriteReport": "a2a_lab.io._write",
    "write_events": "a2a_lab.io._write",
    "event_ms_expr": "a2a_lab.time",
    "iso_to_ms_expr": "a2a_lab.time",
}

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
    "store_report",
    "update_store",
    "write_events",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
