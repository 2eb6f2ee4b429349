"""The search index's texts: the fast expression equals the obvious list-based one."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from a2a_lab.app.report import SEARCH_FIELDS, message_texts

#: A few values, so that fields of one event often repeat each other (and empty strings).
VALUES = st.one_of(
    st.none(), st.sampled_from(["", "a", "b", "no reply", "안녕"]), st.text(max_size=3)
)


def _obvious(frame: pl.DataFrame) -> pl.DataFrame:
    """Per event, the distinct non-null texts in field order joined by a newline (Python)."""
    rows = []
    for row in frame.iter_rows(named=True):
        data = row["data"] or {}
        seen: list[str] = []
        for f in SEARCH_FIELDS:
            value = data.get(f)
            if value is not None and value not in seen:
                seen.append(value)
        text = "\n".join(seen)
        if text:
            rows.append(
                (
                    row["file"],
                    row["line"],
                    row["event_ms"],
                    row["from_agent"],
                    row["to_agent"],
                    text,
                )
            )
    schema = {
        "file": pl.String,
        "line": pl.Int64,
        "event_ms": pl.Float64,
        "sender": pl.String,
        "receiver": pl.String,
        "text": pl.String,
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


@settings(max_examples=40, deadline=None)
@given(
    events=st.lists(
        st.one_of(st.none(), st.fixed_dictionaries({f: VALUES for f in SEARCH_FIELDS})),
        max_size=30,
    )
)
def test_message_texts_equal_the_obvious_texts(events: list[dict[str, str | None] | None]) -> None:
    n = len(events)
    frame = pl.DataFrame(
        {
            "file": ["f"] * n,
            "line": list(range(n)),
            "event_ms": [float(i) for i in range(n)],
            "from_agent": ["a"] * n,
            "to_agent": [None] * n,
            "data": events,
        },
        schema={
            "file": pl.String,
            "line": pl.Int64,
            "event_ms": pl.Float64,
            "from_agent": pl.String,
            "to_agent": pl.String,
            "data": pl.Struct({f: pl.String for f in SEARCH_FIELDS}),
        },
    )
    assert_frame_equal(message_texts(frame).collect(), _obvious(frame))
