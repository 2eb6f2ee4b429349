"""A Vega-Lite message index with a search box that works without a kernel."""

from __future__ import annotations

import altair as alt
import polars as pl

from a2a_lab._frames import text_format
from a2a_lab.time import format_time
from a2a_lab.views.plots import MAX_ROWS
from a2a_lab.views.safe_html import neutralize_expr

__all__ = ["search_chart"]


def search_chart(
    messages: pl.DataFrame, *, text_chars: int = 110, title: str | None = None
) -> alt.LayerChart:
    """A Vega-Lite index of messages with a search box (no kernel needed).

    One line per message (``#n``, time, sender → receiver, label, the text cut to
    ``text_chars`` characters; the tooltip has up to 1,000). Typing in the box keeps the
    lines whose sender, receiver, label or text contains the input, case-insensitively —
    the same rule as ``MessageOptions.search`` of :func:`thread_messages`, evaluated by
    Vega in the browser. The spec is deterministic.

    Parameters
    ----------
    messages
        Rows of :func:`thread_messages` (at most :data:`a2a_lab.views.plots.MAX_ROWS`).
    text_chars
        Characters of text shown per line.
    title
        Chart title; default the first thread title.

    Returns
    -------
    alt.LayerChart
        The chart, with the bound parameter ``search``.

    Examples
    --------
    >>> msgs = pl.DataFrame({"thread_title": ["T"], "n": [1], "sender": ["ruda"], "receiver": ["eden"],
    ...     "label": ["message"], "text": ["hello"],
    ...     "time": pl.Series([0]).cast(pl.Datetime("ms", "UTC"))})
    >>> spec = search_chart(msgs).to_dict()
    >>> spec["params"][0]["name"], spec["params"][0]["bind"]["input"]
    ('search', 'search')
    """

    if messages.height > MAX_ROWS:
        raise ValueError(
            f"search_chart: {messages.height} messages (at most {MAX_ROWS}); filter first"
        )
    data = _index_rows(messages, text_chars)
    search = alt.param(
        name="search",
        value="",
        bind=alt.binding(
            input="search", placeholder="search messages (sender, label, text)", name="search "
        ),
    )
    base = (
        alt.Chart(data, title=title or (data["thread"][0] if data.height else "messages"))
        .transform_filter("indexof(datum.haystack, lower(search)) >= 0")
        .transform_window(row="row_number()", sort=[alt.SortField("order")])
        .encode(
            y=alt.Y("row:O", axis=None),
            tooltip=["thread:N", "num:N", "clock:N", "who:N", "label:N", "text:N"],
        )
        .properties(width=900, height=alt.Step(18))
    )
    # a coloured square per line says which thread it belongs to (legend below)
    thread_mark = base.mark_square(size=70).encode(
        x=alt.value(5),
        color=alt.Color(
            "thread:N",
            title="thread",
            sort=None,
            legend=alt.Legend(orient="bottom", labelLimit=400),
        ),
    )
    columns = (
        ("num", 16, "#666", 40),
        ("clock", 50, "#666", 100),
        ("who", 150, "#111", 150),
        ("label", 305, "#1565c0", 210),
        ("line", 520, "#111", 380),
    )
    layers = [
        base.mark_text(align="left", baseline="middle", color=color, limit=limit).encode(
            x=alt.value(x), text=f"{field}:N"
        )
        for field, x, color, limit in columns
    ]
    out: alt.LayerChart = (
        alt.layer(thread_mark, *layers).add_params(search).configure_view(stroke=None)
    )
    return out


def _index_rows(messages: pl.DataFrame, text_chars: int) -> pl.DataFrame:
    """One row per line of the index: what each column shows, and the searched haystack."""
    text = pl.col("text").fill_null("")
    data = messages.select(
        pl.int_range(pl.len()).alias("order"),
        text_format("#{}", pl.col("n")).alias("num"),
        format_time(pl.col("time"), "%m-%d %H:%M:%S").alias("clock"),
        pl.concat_str(
            pl.col("sender").fill_null("unknown"),
            pl.lit(" → ") + pl.col("receiver"),
            ignore_nulls=True,
        ).alias("who"),
        pl.col("label"),
        pl.when(text.str.len_chars() > text_chars)
        .then(text.str.slice(0, text_chars) + pl.lit("…"))
        .otherwise(text)
        .str.replace_all(r"\s+", " ")
        .alias("line"),
        text.str.slice(0, 1000).alias("text"),
        pl.col("thread_title").alias("thread"),
        pl.concat_str(
            [pl.col(c).fill_null("") for c in ("sender", "receiver", "label", "text")],
            separator="\n",
        )
        .str.to_lowercase()
        .alias("haystack"),
    )
    # the spec shows control and bidi characters as ⟨U+XXXX⟩, as the HTML text does
    return data.with_columns(
        neutralize_expr(pl.col(c)) for c, t in data.schema.items() if t == pl.String
    )
