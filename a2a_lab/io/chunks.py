"""Reading a log a chunk at a time, for analyses that never hold the whole event frame.

:func:`a2a_lab.load` decodes a file in bounded chunks and concatenates them. A reader that
keeps only a projection of each chunk (the bucket-at-a-time analyses of
:mod:`a2a_lab.analysis.logs`) takes the chunks one by one instead
(:func:`decoded_chunks`), cuts their ``data`` to the fields it reads (:func:`narrow_data`),
shows the load's progress bar (:func:`read_progress`) and builds the load's report from the
chunks it saw (:func:`chunked_result`): the same report :func:`a2a_lab.load` gives.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from a2a_lab.io._decode import DecodedText, file_label
from a2a_lab.io._exact import issues_frame
from a2a_lab.io._load import _progress, data_fields_option, decoded_chunks, narrow_data
from a2a_lab.io._load import joined_chunks as _joined
from a2a_lab.io._result import LoadResult, load_report, no_timestamp_issues
from a2a_lab.io._sources import Source, resolve_source

__all__ = [
    "DecodedText",
    "Source",
    "chunked_result",
    "data_fields_option",
    "decoded_chunks",
    "narrow_data",
    "read_progress",
    "resolve_source",
    "sorted_by_time",
]


def read_progress(files: list[Path]) -> Any:
    """The load's byte-count bar over ``files`` (stderr; shown as :func:`a2a_lab.load`
    shows it: after two seconds, never with ``CI`` set or ``A2A_LAB_PROGRESS=0``)."""
    return _progress(files, None)


def chunked_result(
    files: list[Path], chunks: list[list[DecodedText]], parts: list[pl.DataFrame]
) -> LoadResult:
    """The :class:`~a2a_lab.io.LoadResult` of chunks read one at a time.

    Parameters
    ----------
    files
        The source's files (:func:`resolve_source`), in order.
    chunks
        Per file, its decoded chunks in file order, their ``events`` emptied (only the
        rejects, issues and line counts are read).
    parts
        Every event of the files in file order, in parts (any projection with ``file``,
        ``line``, ``type`` and ``event_ms``); the list is emptied (pass its only reference:
        the frame is then built without holding the parts twice).

    Returns
    -------
    LoadResult
        ``events`` in the load's order (a stable sort by ``event_ms``) and the load's report.
    """
    no_time = pl.concat([no_timestamp_issues(p) for p in parts])
    events = sorted_by_time(parts)
    decoded = [
        (file_label(path), _joined(chunk), issues_frame([]))
        for path, chunk in zip(files, chunks, strict=True)
    ]
    return LoadResult(events=events, report=load_report(decoded, events, no_time))


def sorted_by_time(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """The parts (in file order) as one frame in the load's order: a stable sort by
    ``event_ms``, built a column at a time. ``parts`` is emptied: each column of the parts
    is let go as soon as its sorted copy is built (a frame's sort holds it twice)."""
    ms = pl.concat([p.select("event_ms") for p in parts])
    index = (
        None
        if ms["event_ms"].is_sorted()
        else ms.select(
            pl.int_range(pl.len(), dtype=pl.UInt32).sort_by("event_ms", maintain_order=True)
        ).to_series()
    )
    del ms
    names = parts[0].columns
    columns = []
    for name in names:
        column = pl.concat([p.drop_in_place(name) for p in parts])
        columns.append(column if index is None else column.gather(index))
    parts.clear()
    return pl.DataFrame(columns)
