"""Charts: aggregated in Polars (row cap), tooltips everywhere, display time zone, export."""

from __future__ import annotations

from pathlib import Path

import altair as alt
import networkx as nx
import polars as pl
import pytest

import a2a_lab as al
from a2a_lab import plots
from a2a_lab.analysis.conversations import conversations
from a2a_lab.analysis.graph import interaction_graph
from a2a_lab.enrich import enrich


@pytest.fixture(scope="module")
def events() -> pl.DataFrame:
    return al.load(al.samples.sample_dir()).events


@pytest.fixture(scope="module")
def conv(events: pl.DataFrame) -> pl.DataFrame:
    return conversations(events)


def _charts(events: pl.DataFrame, conv: pl.DataFrame) -> dict[str, alt.TopLevelMixin]:
    return {
        "swimlane": plots.swimlane(events),
        "latency": plots.latency_by_pair(conv),
        "heatmap": plots.pair_heatmap(conv, value="no_reply_rate"),
        "outcomes": plots.outcome_bars(conv),
        "categories": plots.category_bars(enrich(events)),
        "graph": plots.graph_chart(interaction_graph(events)),
        "matrix": plots.graph_matrix(interaction_graph(events)),
        "timeline": plots.family_timeline(events, every="1d"),
        "findings": plots.findings_chart(al.checks.check(events)),
    }


def _marks(spec: dict) -> list[dict]:
    if "layer" in spec:
        return [m for layer in spec["layer"] for m in _marks(layer)]
    return [spec]


def test_every_chart_is_small_themed_and_has_tooltips(
    events: pl.DataFrame, conv: pl.DataFrame
) -> None:
    for name, chart in _charts(events, conv).items():
        spec = chart.to_dict()
        datasets = spec.get("datasets", {})
        assert datasets, name
        assert all(len(rows) <= plots.MAX_ROWS for rows in datasets.values()), name
        assert spec["config"]["view"]["continuousWidth"] == 520, name  # the a2a_lab theme
        tooltips = [m for m in _marks(spec) if "tooltip" in m.get("encoding", {})]
        assert tooltips, name


def test_row_cap_raises(conv: pl.DataFrame) -> None:
    big = pl.concat([conv] * 10).with_columns(
        pl.int_range(pl.len()).cast(pl.String).alias("to_agent")
    )
    with pytest.raises(ValueError, match="at most 5000"):
        plots.outcome_bars(big)


def test_display_timezone_shifts_wall_clock(events: pl.DataFrame) -> None:
    utc = plots.swimlane(events, every="1d").to_dict()
    seoul = plots.swimlane(events, every="1d", tz="Asia/Seoul").to_dict()
    first_utc = min(r["t"] for rows in utc["datasets"].values() for r in rows)
    first_kst = min(r["t"] for rows in seoul["datasets"].values() for r in rows)
    assert first_utc % 86_400_000 == 0 and first_kst % 86_400_000 == 0  # buckets on local midnights
    assert (
        "Asia/Seoul" in seoul["title"]["text"]
        if isinstance(seoul["title"], dict)
        else "Asia/Seoul" in seoul["title"]
    )
    plots.set_display_timezone("Asia/Seoul")
    try:
        assert plots.display_timezone() == "Asia/Seoul"
    finally:
        plots.set_display_timezone("UTC")
    with pytest.raises(ValueError, match="^tz: unknown time zone 'Mars/Olympus'"):
        plots.set_display_timezone("Mars/Olympus")
    assert plots.display_timezone() == "UTC"  # the bad name was not kept
    with pytest.raises(ValueError, match="^tz: unknown time zone"):
        plots.swimlane(events, every="1d", tz="Nowhere/Atlantis")


def test_latency_box_values_are_polars_quantiles(conv: pl.DataFrame) -> None:
    spec = plots.latency_by_pair(conv, top=3).to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert len(rows) == 3
    r = rows[0]
    a, b = r["pair"].split(" → ")
    lat = conv.filter((pl.col("from_agent") == a) & (pl.col("to_agent") == b))[
        "first_reply_s"
    ].drop_nulls()
    assert r["p50"] == pytest.approx(lat.quantile(0.5, "linear"))
    assert r["p5"] <= r["p25"] <= r["p50"] <= r["p75"] <= r["p95"]


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_export(conv: pl.DataFrame, tmp_path: Path, suffix: str) -> None:
    out = plots.save_chart(plots.outcome_bars(conv), tmp_path / f"c{suffix}")
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG") if suffix == ".png" else b"<svg" in data[:200]
    with pytest.raises(ValueError):
        plots.save_chart(plots.outcome_bars(conv), tmp_path / "c.gif")


# ---- fixed palettes, Korean in exports -----------------------------------------------------


def _scale(spec: dict, channel: str) -> dict:
    return spec["encoding"][channel]["scale"]


def test_outcome_colours_do_not_depend_on_the_log(conv: pl.DataFrame) -> None:
    from a2a_lab.views.palette import OUTCOME_COLORS

    only_no_reply = conv.filter(pl.col("outcome") == "no_reply")
    for frame in (conv, only_no_reply, conv.reverse()):
        scale = _scale(plots.outcome_bars(frame).to_dict(), "color")
        colours = dict(zip(scale["domain"], scale["range"], strict=True))
        # each outcome in its fixed colour; the legend lists only the outcomes present
        assert colours == {k: c for k, c in OUTCOME_COLORS.items() if k in colours}
        assert set(colours) == set(frame["outcome"].drop_nulls().to_list())


def test_family_timeline_uses_the_family_palette(events: pl.DataFrame) -> None:
    from a2a_lab.views.palette import EVENT_FAMILY_COLORS, OTHER_COLOR

    extra = events.head(3).with_columns(pl.lit("brand_new.kind").alias("type"))
    spec = plots.family_timeline(pl.concat([events, extra]), every="1d").to_dict()
    colours = dict(
        zip(_scale(spec, "color")["domain"], _scale(spec, "color")["range"], strict=True)
    )
    present = set(events["type"].str.split(".").list.first().to_list())
    # only the families present, each in its fixed colour; a new one in the "other" colour
    assert set(colours) == present | {"brand_new"}
    assert {k: colours[k] for k in present} == {k: EVENT_FAMILY_COLORS[k] for k in present}
    assert colours["brand_new"] == OTHER_COLOR
    assert spec["encoding"]["color"]["title"] == "event family"
    data = pl.DataFrame(next(iter(spec["datasets"].values())))
    timed = events.filter(pl.col("event_ms") > 0)
    assert data["events"].sum() == timed.height + 3


def test_findings_chart_counts_per_rule_and_severity(events: pl.DataFrame) -> None:
    found = al.checks.check(events)
    spec = plots.findings_chart(found).to_dict()
    data = pl.DataFrame(next(iter(spec["datasets"].values())))
    assert dict(zip(data["rule"], data["findings"], strict=True)) == dict(
        found.group_by("rule").len().iter_rows()
    )


def _title_png(text: str, tmp_path: Path) -> bytes:
    chart = alt.Chart(pl.DataFrame({"x": [1]}), title=text).mark_point().encode(x="x:Q")
    return plots.save_chart(chart, tmp_path / f"{abs(hash(text))}.png", scale=1).read_bytes()


def test_korean_renders_as_glyphs_not_boxes_in_png(tmp_path: Path) -> None:
    # missing glyphs all draw the same box: two different Korean titles would give equal images
    assert _title_png("가나다라마 보고서", tmp_path) != _title_png("바사아자차 분석표", tmp_path)
    assert plots.register_fonts().name == "NotoSansKR-Regular.otf"


# ---- legends: readable titles, only the values present (issue 23) ------------------------


def _encodings(spec: dict) -> list[dict]:
    out = []
    for part in ("layer", "hconcat", "vconcat"):
        for sub in spec.get(part, []):
            out += _encodings(sub)
    if "spec" in spec:
        out += _encodings(spec["spec"])
    out.extend(spec.get("encoding", {}).values())
    return out


def test_legends_have_readable_titles(events: pl.DataFrame, conv: pl.DataFrame) -> None:
    """No legend or axis is titled with a raw column name (``no_reply_rate``)."""
    charts = _charts(events, conv)
    charts["p50 heatmap"] = plots.pair_heatmap(conv, value="p50_first_reply_s")
    charts["outcomes per target"] = plots.outcome_bars(conv, by="to_agent")
    for name, chart in charts.items():
        spec = chart.to_dict()
        titles = [e["title"] for e in _encodings(spec) if isinstance(e, dict) and e.get("title")]
        raw = [t for t in titles if isinstance(t, str) and "_" in t]
        assert not raw, f"{name}: raw column names as titles: {raw}"
        heading = spec.get("title")
        text = heading.get("text") if isinstance(heading, dict) else heading
        assert not (isinstance(text, str) and "_" in text), f"{name}: title {text!r}"


def _graph(edges: list[tuple[str, str, int]], kinds: dict[str, str] | None = None) -> nx.DiGraph:
    g = nx.DiGraph()
    for a, b, w in edges:
        g.add_edge(a, b, messages=w, exchanges=w, no_reply_share=0.0, p50_first_reply_s=1.0)
    for n in g.nodes:
        g.nodes[n]["kind"] = (kinds or {}).get(n, "main")
    return g


def test_dense_graphs_are_a_matrix_sparse_ones_a_drawing() -> None:
    """15 agents talking to all others (210 edges, the hairball of the issue) give the
    matrix; a ring of 8 (16 edges) the node-link drawing, every edge drawn."""
    names = [f"a{i:02d}" for i in range(15)]
    dense = _graph([(a, b, 1 + i) for i, a in enumerate(names) for b in names if a != b])
    assert dense.number_of_edges() == 210 and not plots.legible_as_node_link(dense)
    spec = plots.graph_view(dense).to_dict()
    assert "Requester × target" in str(spec["title"])
    ring = _graph(
        [(f"r{i}", f"r{(i + 1) % 8}", 3) for i in range(8)]
        + [(f"r{(i + 1) % 8}", f"r{i}", 2) for i in range(8)]
    )
    assert plots.legible_as_node_link(ring)
    spec = plots.graph_view(ring).to_dict()
    assert spec["title"]["subtitle"].startswith("8 agents, 16 edges")
    # the threshold as documented: 40 edges at most, 3 per agent at most
    assert plots.LEGIBLE_EDGES == 40 and plots.LEGIBLE_EDGES_PER_AGENT == 3.0


def test_matrix_orders_agents_by_community() -> None:
    """Two groups that talk among themselves (and once across) are two blocks: each
    group's agents are adjacent on both axes, whatever their names."""
    left, right = ["a", "m", "z"], ["b", "n", "y"]
    edges = [(x, y, 5) for grp in (left, right) for x in grp for y in grp if x != y]
    g = _graph([*edges, ("a", "b", 1)])
    groups = plots.graph_communities(g)
    assert sorted(map(sorted, groups)) == [left, right]
    spec = plots.graph_matrix(g).to_dict()
    order = spec["layer"][0]["encoding"]["x"]["sort"]
    assert order == spec["layer"][0]["encoding"]["y"]["sort"]
    first = set(order[:3])
    assert first in (set(left), set(right))
    shaded = next(
        v for k, v in spec["datasets"].items() if v and "community" in v[0] and "weight" not in v[0]
    )
    assert len(shaded) == 2 * 9  # both blocks, every cell of each


def test_graph_legends_list_only_what_occurs() -> None:
    """Only main agents and no delegation: the kind legend lists main agents only and the
    edge-kind legend is not shown."""
    g = _graph([("a", "b", 3), ("b", "a", 1), ("a", "c", 2)])
    spec = plots.graph_chart(g).to_dict()
    encodings = _encodings(spec)
    fills = [e for e in encodings if isinstance(e, dict) and e.get("field") == "kind"]
    assert fills and all(f["scale"]["domain"] == ["main agent"] for f in fills if "scale" in f)
    dashes = [e for e in encodings if isinstance(e, dict) and e.get("field") == "edge"]
    assert dashes and all(d.get("legend", "absent") is None for d in dashes if "scale" in d)
    g2 = _graph([("a", "b", 3)], kinds={"b": "subagent"})
    g2.edges["a", "b"]["delegation"] = True
    spec2 = plots.graph_chart(g2).to_dict()
    dash = next(
        e
        for e in _encodings(spec2)
        if isinstance(e, dict) and e.get("field") == "edge" and "scale" in e
    )
    assert dash["scale"]["domain"] == ["delegation"] and dash.get("legend") is not None
