"""Altair charts of a log, its conversations and its interaction graph.

Every chart takes collected frames and aggregates in Polars first, so no chart embeds more
than :data:`MAX_ROWS` rows (a larger input raises instead of freezing a notebook). Marks
carry tooltips. Times are shown in a display time zone (default UTC, see
:func:`set_display_timezone`): they are converted in Polars and handed to Vega-Lite as UTC
wall-clock values, so a chart reads the same in every browser and in a PNG.

All charts use the registered theme :data:`THEME` (enabled on import) and the fixed
palettes of :mod:`a2a_lab.views.palette`: an event family, an exchange outcome or a finding
severity has the same colour in every chart and every log (:func:`color_scale`).

Exporting a chart safely: :func:`save_chart` writes ``.png``, ``.svg`` and ``.html``. Its
HTML inlines the Vega runtime once (no CDN) and embeds the spec with
:func:`~a2a_lab.views.safe_html.script_json`, so a message text such as
``</script><script>…`` stays data. Altair's own ``chart.save("x.html")`` is outside the
package: it loads Vega from a CDN and embeds the spec without escaping ``</script>``, so
do not use it on log data. PNG and SVG exports render Korean with the Noto Sans KR font of
the ``pylopdf-fonts-ko`` package, registered with vl-convert (:func:`register_fonts`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import altair as alt
import networkx as nx
import polars as pl

from a2a_lab._frames import number
from a2a_lab.time import Zone, check_tz
from a2a_lab.views._chart_data import MAX_ROWS, _buckets, _guard, _shown, _wall_clock
from a2a_lab.views._graph_plots import (
    LEGIBLE_EDGES,
    LEGIBLE_EDGES_PER_AGENT,
    graph_chart,
    graph_communities,
    graph_matrix,
    graph_overview,
    graph_view,
    legible_as_node_link,
)
from a2a_lab.views.embed import chart_page, register_fonts, render_safe
from a2a_lab.views.palette import EVENT_FAMILY_COLORS, OTHER_COLOR, OUTCOME_COLORS, SEVERITY_COLORS

__all__ = [
    "EVENT_FAMILY_COLORS",
    "LEGIBLE_EDGES",
    "LEGIBLE_EDGES_PER_AGENT",
    "MAX_ROWS",
    "OUTCOME_COLORS",
    "SEVERITY_COLORS",
    "THEME",
    "category_bars",
    "color_scale",
    "dfg_chart",
    "display_timezone",
    "family_timeline",
    "findings_chart",
    "graph_chart",
    "graph_communities",
    "graph_matrix",
    "graph_overview",
    "graph_view",
    "latency_by_pair",
    "legible_as_node_link",
    "outcome_bars",
    "pair_heatmap",
    "quantile_comparison",
    "register_fonts",
    "save_chart",
    "set_display_timezone",
    "swimlane",
]

#: Name of the registered Altair theme.
THEME = "a2a_lab"

_DISPLAY_TZ = ["UTC"]


@alt.theme.register(THEME, enable=True)
def _theme() -> alt.theme.ThemeConfig:
    return {
        "config": {
            "view": {"continuousWidth": 520, "continuousHeight": 280, "stroke": None},
            "axis": {"labelFontSize": 11, "titleFontSize": 12, "grid": True, "gridOpacity": 0.4},
            "legend": {"labelFontSize": 11, "titleFontSize": 12},
            "title": {"fontSize": 14, "anchor": "start"},
            # Vega-Lite's RangeConfig takes a RangeScheme; altair's ThemeConfig types omit it
            "range": {"category": {"scheme": "tableau10"}},  # type: ignore[typeddict-item]
        }
    }


def color_scale(palette: Mapping[str, str], present: list[str] | None = None) -> alt.Scale:
    """A categorical scale with the fixed colours of ``palette`` (:mod:`~a2a_lab.views.palette`).

    With ``present``, the scale (and so the legend) lists only those names, in the
    palette's order, each in its fixed colour; names the palette does not list are appended
    with :data:`~a2a_lab.views.palette.OTHER_COLOR`, so a new name never shifts the others.
    Without it, every name of the palette.
    """
    if present is None:
        return alt.Scale(domain=list(palette), range=list(palette.values()))
    seen = set(present)
    known = [k for k in palette if k in seen]
    extra = sorted(seen - set(palette))
    return alt.Scale(
        domain=[*known, *extra],
        range=[*(palette[k] for k in known), *([OTHER_COLOR] * len(extra))],
    )


#: Readable names of the columns charts show, for titles and legends.
_TITLES: dict[str, str] = {
    "to_agent": "target agent",
    "from_agent": "requester agent",
    "agent_id": "agent",
    "exchanges": "exchanges",
    "no_reply_rate": "no-reply rate",
    "p50_first_reply_s": "median first reply (s)",
    "collab_category": "collaboration category",
    "outcome": "outcome",
    "family": "event family",
    "severity": "severity",
}


def _title(column: str) -> str:
    """A column's readable name (its words when it has none listed)."""
    return _TITLES.get(column, column.replace("_", " "))


def set_display_timezone(tz: str) -> None:
    """Set the IANA time zone charts show times in (default ``UTC``).

    Raises
    ------
    ValueError
        ``tz`` names no known time zone (the message names ``tz``).
    """
    _DISPLAY_TZ[0] = check_tz(tz)


def display_timezone() -> str:
    """The time zone charts show times in."""
    return _DISPLAY_TZ[0]


def swimlane(
    events: pl.DataFrame, *, every: str = "1h", tz: str | None = None, top: int = 30
) -> alt.Chart:
    """Agent × time: events written per agent per ``every`` bucket (A2A events only).

    Rows are agents (``from_agent``, else ``agent_id``), most active first, at most ``top``.
    """
    tz = tz if isinstance(tz, Zone) else check_tz(tz or display_timezone())
    agent = (
        pl.coalesce(pl.col("from_agent"), pl.col("agent_id"))
        if "from_agent" in events.columns
        else pl.coalesce(pl.col("data").struct.field("fromAgent"), pl.col("agent_id"))
    )
    start, end = _buckets(pl.col("event_time"), every, tz)
    counts = (
        events.lazy()
        # a time beyond Date's range has no instant (a load warning): left out of the bins
        .filter(
            pl.col("type").str.starts_with("a2a.")
            & (pl.col("event_ms") > 0)
            & pl.col("event_time").is_not_null()
        )
        .with_columns(agent.alias("agent"), start.alias("bucket"), end.alias("bucket_end"))
        .group_by("agent", "bucket", "bucket_end")
        .len("events")
        .collect()
    )
    keep = (
        counts.group_by("agent")
        .agg(pl.col("events").sum())
        .sort("events", "agent", descending=[True, False])
        .head(top)
    )
    data = _guard(
        counts.join(keep.select("agent"), on="agent", how="semi")
        .with_columns(*_wall_clock("bucket", tz, "t"), *_wall_clock("bucket_end", tz, "t_end"))
        .drop("bucket", "bucket_end", "t_end_label")
        .sort("agent", "t"),
        "swimlane",
    )
    out: alt.Chart = (
        alt.Chart(data, title=f"A2A events per agent and {every} ({tz})")
        .mark_rect()
        .encode(
            x=alt.X("t:T", title=f"time ({tz})", scale=alt.Scale(type="utc")),
            x2="t_end:T",
            y=alt.Y("agent:N", sort=_shown(keep["agent"].to_list()), title=None),
            color=alt.Color("events:Q", scale=alt.Scale(scheme="blues"), title="events"),
            tooltip=["agent:N", alt.Tooltip("t_label:N", title="from"), "events:Q"],
        )
    )
    return out


def latency_by_pair(
    conversations: pl.DataFrame,
    *,
    top: int = 15,
    min_exchanges: int = 3,
    min_whisker_replies: int = 0,
) -> alt.LayerChart:
    """First-reply latency per requester → target pair, as box plots from Polars quantiles.

    The ``top`` pairs by median latency among pairs with at least ``min_exchanges`` replies;
    the 5-95 % whisker only for pairs with at least ``min_whisker_replies`` replies (a p95
    of a few replies is their largest, not a percentile).
    """
    lat = pl.col("first_reply_s")
    q = (
        conversations.filter(pl.col("first_reply_s").is_not_null())
        .group_by("from_agent", "to_agent")
        .agg(
            pl.len().alias("replies"),
            lat.quantile(0.05, "linear").alias("p5"),
            lat.quantile(0.25, "linear").alias("p25"),
            lat.quantile(0.5, "linear").alias("p50"),
            lat.quantile(0.75, "linear").alias("p75"),
            lat.quantile(0.95, "linear").alias("p95"),
        )
        .filter(pl.col("replies") >= min_exchanges)
        .with_columns(
            *(
                pl.when(pl.col("replies") >= min_whisker_replies).then(pl.col(c)).alias(c)
                for c in ("p5", "p95")
            ),
            pl.concat_str("from_agent", pl.lit(" → "), "to_agent").alias("pair"),
        )
        .sort("p50", "pair", descending=[True, False])
        .head(top)
    )
    data = _guard(q, "latency_by_pair")
    order = data["pair"].to_list()
    base = alt.Chart(data, title="First-reply latency per pair (s): 5-25-50-75-95 %").encode(
        y=alt.Y("pair:N", sort=order, title=None),
        tooltip=[
            "pair:N",
            "replies:Q",
            alt.Tooltip("p50:Q", format=".1f", title="median s"),
            alt.Tooltip("p95:Q", format=".1f", title="p95 s"),
        ],
    )
    whisker = base.mark_rule().encode(
        x=alt.X("p5:Q", title="seconds (log scale)", scale=alt.Scale(type="log")), x2="p95:Q"
    )
    box = base.mark_bar(size=12, opacity=0.8).encode(x="p25:Q", x2="p75:Q")
    median = base.mark_tick(color="black", size=12, thickness=2).encode(x="p50:Q")
    out: alt.LayerChart = whisker + box + median
    return out


def pair_heatmap(conversations: pl.DataFrame, *, value: str = "exchanges") -> alt.LayerChart:
    """Requester × target matrix of exchanges, no-reply rate or median latency.

    ``value``: ``exchanges``, ``no_reply_rate`` or ``p50_first_reply_s``.
    """
    finished = (pl.col("outcome") == "replied").sum() + (pl.col("outcome") == "no_reply").sum()
    agg = (
        conversations.group_by("from_agent", "to_agent")
        .agg(
            pl.len().alias("exchanges"),
            ((pl.col("outcome") == "no_reply").sum() / pl.when(finished > 0).then(finished)).alias(
                "no_reply_rate"
            ),
            pl.col("first_reply_s").median().alias("p50_first_reply_s"),
        )
        .drop_nulls(["from_agent", "to_agent"])
    )
    if value not in ("exchanges", "no_reply_rate", "p50_first_reply_s"):
        raise ValueError(
            f"value must be exchanges, no_reply_rate or p50_first_reply_s, not {value!r}"
        )
    data = _guard(agg.sort("from_agent", "to_agent"), "pair_heatmap")
    # from near-white at zero: a named scheme's palest colour is already tinted
    colours = {
        "exchanges": ["#f7fbff", "#08519c"],
        "no_reply_rate": ["#fbf7f7", "#b71c1c"],
        "p50_first_reply_s": ["#fff8f0", "#c2410c"],
    }[value]
    fmt = {"exchanges": "d", "no_reply_rate": ".0%", "p50_first_reply_s": ".0f"}[value]
    # Anchored at zero so that 0 % is the palest colour and 10 % visibly not; otherwise the
    # scale starts at the smallest value present and two different rates can look alike.
    top = data[value].max()
    domain = [0, max(number(top), 1e-9)] if top is not None else [0, 1]
    base = alt.Chart(data, title=f"Requester × target: {_title(value)}").encode(
        x=alt.X("to_agent:N", title="target", sort="ascending", axis=alt.Axis(labelAngle=-40)),
        y=alt.Y("from_agent:N", title="requester", sort="ascending"),
    )
    cells = base.mark_rect(stroke="#d0d0d0", strokeWidth=0.5).encode(
        color=alt.Color(
            f"{value}:Q",
            scale=alt.Scale(range=colours, domain=domain, clamp=True),
            title=_title(value),
            legend=alt.Legend(format=fmt),
        ),
        tooltip=[
            "from_agent:N",
            "to_agent:N",
            "exchanges:Q",
            alt.Tooltip("no_reply_rate:Q", format=".0%"),
            alt.Tooltip("p50_first_reply_s:Q", format=".1f"),
        ],
    )
    text = base.mark_text(fontSize=9).encode(
        text=alt.Text(f"{value}:Q", format=fmt),
        color=alt.condition(
            f"datum['{value}'] > {domain[1] / 2}", alt.value("white"), alt.value("black")
        ),
    )
    out: alt.LayerChart = (cells + text).properties(width=alt.Step(30), height=alt.Step(20))
    return out


def outcome_bars(conversations: pl.DataFrame, *, by: str = "to_agent") -> alt.Chart:
    """Exchanges by outcome, per ``by`` (target agent by default), stacked."""
    data = _guard(
        conversations.group_by(by, "outcome").len("exchanges").drop_nulls(by).sort(by, "outcome"),
        "outcome_bars",
    )
    out: alt.Chart = (
        alt.Chart(data, title=f"Exchange outcomes per {_title(by)}")
        .mark_bar()
        .encode(
            y=alt.Y(f"{by}:N", sort="-x", title=None),
            x=alt.X("exchanges:Q", stack=True),
            color=alt.Color(
                "outcome:N",
                scale=color_scale(OUTCOME_COLORS, data["outcome"].drop_nulls().to_list()),
                title="outcome",
            ),
            tooltip=[f"{by}:N", "outcome:N", "exchanges:Q"],
        )
    )
    return out


def category_bars(
    frame: pl.DataFrame, *, column: str = "collab_category", title: str | None = None
) -> alt.Chart:
    """Counts per collaboration category (of enriched events or of work sessions)."""
    data = _guard(
        frame.group_by(column)
        .len("count")
        .drop_nulls(column)
        .sort("count", column, descending=[True, False]),
        "category_bars",
    )
    out: alt.Chart = (
        alt.Chart(data, title=title or f"Counts per {_title(column)}")
        .mark_bar()
        .encode(
            y=alt.Y(f"{column}:N", sort="-x", title=None),
            x=alt.X("count:Q"),
            tooltip=[f"{column}:N", "count:Q"],
        )
    )
    return out


def dfg_chart(
    dfg: pl.DataFrame, *, min_count: int = 1, title: str = "Directly-follows graph"
) -> alt.LayerChart:
    """A directly-follows graph (:func:`a2a_lab.analysis.pm.directly_follows`) as a from × to matrix.

    A matrix keeps the direction readable where a node-link drawing of a dense process
    turns into a hairball: row = the activity, column = the one that directly follows it,
    colour and label = how often; the tooltip adds the cases and the median time between
    the two. Activities are ordered by when they typically happen (▶ start first, ■ end
    last); steps seen fewer than ``min_count`` times are left out.
    """
    kept = dfg.filter(pl.col("count") >= min_count)
    kept = _guard(kept, "dfg_chart")
    # order activities by their distance from ▶ start (breadth-first over the steps kept),
    # busier activities first at equal distance; ■ end last
    g = nx.DiGraph()
    g.add_weighted_edges_from(kept.select("source", "target", "count").iter_rows())
    dist = nx.single_source_shortest_path_length(g, "▶ start") if "▶ start" in g else {}
    traffic = dict(g.out_degree(weight="weight"))
    order = sorted(
        g.nodes,
        key=lambda n: (n == "■ end", n != "▶ start", dist.get(n, len(g)), -traffic.get(n, 0), n),
    )
    base = alt.Chart(kept, title=title).encode(
        x=alt.X(
            "target:N", sort=order, title="directly followed by", axis=alt.Axis(labelAngle=-40)
        ),
        y=alt.Y("source:N", sort=order, title="activity"),
    )
    cells = base.mark_rect().encode(
        color=alt.Color("count:Q", scale=alt.Scale(scheme="blues", type="log"), title="count"),
        tooltip=[
            "source:N",
            "target:N",
            "count:Q",
            "cases:Q",
            alt.Tooltip("median_s:Q", format=".1f", title="median s"),
        ],
    )
    # the colour scale is logarithmic: the cells darker than its midpoint (the geometric mean
    # of the smallest and largest count) get white numbers
    midpoint = (
        math.sqrt(number(kept["count"].min()) * number(kept["count"].max())) if kept.height else 0
    )
    text = base.mark_text(fontSize=10).encode(
        text="count:Q",
        color=alt.condition(alt.datum.count >= midpoint, alt.value("white"), alt.value("black")),
    )
    out: alt.LayerChart = (cells + text).properties(width=alt.Step(34), height=alt.Step(22))
    return out


def family_timeline(
    events: pl.DataFrame | pl.LazyFrame, *, every: str = "1h", tz: str | None = None
) -> alt.Chart:
    """Events per event family (``type`` before the first dot) per ``every``, stacked.

    Each family has its fixed colour (:data:`EVENT_FAMILY_COLORS`); events without a usable
    time (``event_ms`` 0, or beyond Date's ±8.64e15 ms: no instant) are left out.
    """
    tz = tz if isinstance(tz, Zone) else check_tz(tz or display_timezone())
    start, _ = _buckets(pl.col("event_time"), every, tz)
    counts = (
        events.lazy()
        .filter((pl.col("event_ms") > 0) & pl.col("event_time").is_not_null())
        .with_columns(
            pl.col("type").str.split(".").list.first().alias("family"), start.alias("bucket")
        )
        .group_by("bucket", "family")
        .len("events")
        .sort("bucket", "family")
        .collect()
    )
    data = _guard(
        counts.with_columns(*_wall_clock("bucket", tz, "t")).drop("bucket"), "family_timeline"
    )
    out: alt.Chart = (
        alt.Chart(data, title=f"Events per family and {every} ({tz})")
        .mark_bar()
        .encode(
            x=alt.X("t:T", title=f"time ({tz})", scale=alt.Scale(type="utc")),
            y=alt.Y("events:Q", stack=True),
            color=alt.Color(
                "family:N",
                scale=color_scale(EVENT_FAMILY_COLORS, data["family"].to_list()),
                title="event family",
            ),
            tooltip=["family:N", alt.Tooltip("t_label:N", title="from"), "events:Q"],
        )
    )
    return out


def findings_chart(findings: pl.DataFrame) -> alt.Chart:
    """Findings per rule of :func:`a2a_lab.analysis.checks.check`, coloured by severity."""
    data = _guard(
        findings.group_by("rule", "severity")
        .len("findings")
        .sort("findings", "rule", descending=[True, False]),
        "findings_chart",
    )
    out: alt.Chart = (
        alt.Chart(data, title="Log-health findings per rule")
        .mark_bar()
        .encode(
            y=alt.Y("rule:N", sort="-x", title=None),
            x=alt.X("findings:Q"),
            color=alt.Color(
                "severity:N", scale=color_scale(SEVERITY_COLORS, data["severity"].to_list())
            ),
            tooltip=["rule:N", "severity:N", "findings:Q"],
        )
    )
    return out


def quantile_comparison(
    quantiles: pl.DataFrame, *, title: str = "Simulated vs observed"
) -> alt.Chart:
    """Quantiles side by side: rows ``measure, quantile, source`` (observed / simulated), ``value``.

    One panel per measure (independent scales), the quantile on x, one line per source.
    """
    data = _guard(quantiles, "quantile_comparison")
    out: alt.Chart = (
        alt.Chart(data, title=title)
        .mark_line(point=True)
        .encode(
            x=alt.X("quantile:Q", title="quantile", scale=alt.Scale(domain=[0, 1])),
            y=alt.Y("value:Q", title=None),
            color=alt.Color(
                "source:N",
                scale=alt.Scale(domain=["observed", "simulated"], range=["#4c78a8", "#f58518"]),
            ),
            tooltip=["measure:N", "source:N", "quantile:Q", alt.Tooltip("value:Q", format=".3g")],
        )
        .properties(width=220, height=160)
        .facet(facet=alt.Facet("measure:N", title=None), columns=3)
        .resolve_scale(y="independent")
    )
    return out


def save_chart(chart: alt.TopLevelMixin, path: str | Path, *, scale: float = 2.0) -> Path:
    """Write a chart as ``.png``, ``.svg`` (via vl-convert) or a self-contained ``.html``.

    The HTML opens offline: one inlined copy of the Vega runtime, the spec embedded with
    every ``<``, ``>`` and ``&`` escaped (see the module docstring), a PNG fallback where
    scripts are off.
    """
    import vl_convert as vlc

    register_fonts()
    out = Path(path)
    spec: Any = render_safe(chart.to_dict())
    if out.suffix == ".png":
        out.write_bytes(vlc.vegalite_to_png(spec, scale=scale))
    elif out.suffix == ".svg":
        out.write_text(vlc.vegalite_to_svg(spec), encoding="utf-8")
    elif out.suffix == ".html":
        out.write_text(chart_page(chart), encoding="utf-8")
    else:
        raise ValueError(f"unknown chart format {out.suffix!r}: use .png, .svg or .html")
    return out
