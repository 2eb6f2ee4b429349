"""The analyses of a log file that never hold its whole event frame (issues 23, 24).

A log is read once, chunk by chunk; its exchange events are spilled to Arrow IPC by hash
class of the conversation id and matched a bucket of whole conversations at a time
(:mod:`a2a_lab.analysis._chunked`); the other health rules read a lean projection of every
event (:mod:`a2a_lab.analysis._check_log`). Each function gives what the whole-load
function gives on the same log (``tests/analysis/test_chunked.py``):

- :func:`log_conversations`: ``conversations(load(source).events)``;
- :func:`log_check`: ``check(load(source).events, report=load(source).report)``;
- :func:`analyse_log`: both from one matching, with every decoded chunk handed to a
  :class:`LeanEvents` collector a caller may extend (the report's path);
- :func:`spill_exchanges`, :func:`bucket_frames`, :func:`chunked_exchange_events`: the
  buckets themselves, for a reader that derives its own rows from them (the OTLP export).
"""

from __future__ import annotations

from a2a_lab.analysis._check_log import (
    LEAN_FIELDS,
    LeanEvents,
    LogAnalysis,
    analyse_log,
    log_check,
)
from a2a_lab.analysis._chunked import (
    SPILL_BYTES,
    ChunkSink,
    Spill,
    bucket_frames,
    chunked_exchange_events,
    empty_conversations,
    log_conversations,
    spill_dir,
    spill_exchanges,
)

__all__ = [
    "LEAN_FIELDS",
    "SPILL_BYTES",
    "ChunkSink",
    "LeanEvents",
    "LogAnalysis",
    "Spill",
    "analyse_log",
    "bucket_frames",
    "chunked_exchange_events",
    "empty_conversations",
    "log_check",
    "log_conversations",
    "spill_dir",
    "spill_exchanges",
]
