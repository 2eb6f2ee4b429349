"""Charts: aggregated in Polars (row cap), tooltips everywhere, display time zone, export."""

from __future__ import annotations

from pathlib import Path

import altair as alt
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
        assert dict(zip(scale["domain"], scale["range"], strict=True)) == dict(OUTCOME_COLORS)


def test_family_timeline_uses_the_family_palette(events: pl.DataFrame) -> None:
    from a2a_lab.views.palette import EVENT_FAMILY_COLORS, OTHER_COLOR

    extra = events.head(3).with_columns(pl.lit("brand_new.kind").alias("type"))
    spec = plots.family_timeline(pl.concat([events, extra]), every="1d").to_dict()
    colours = dict(
        zip(_scale(spec, "color")["domain"], _scale(spec, "color")["range"], strict=True)
    )
    assert {k: colours[k] for k in EVENT_FAMILY_COLORS} == dict(EVENT_FAMILY_COLORS)
    assert colours["brand_new"] == OTHER_COLOR
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
