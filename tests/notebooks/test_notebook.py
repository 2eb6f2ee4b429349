"""Tests for ``a2a_lab.views.notebook``: the log source lookup and the notebook display setup."""

from __future__ import annotations

import base64
import os
import struct
import sys
import time
import types
from collections.abc import Iterator
from pathlib import Path

import altair as alt
import polars as pl
import pytest

from a2a_lab import notebook


@pytest.fixture
def restored_session() -> Iterator[None]:
    """Undo what ``setup`` changes process-wide: TZ, Polars config, the Altair renderer."""
    tz = os.environ.get("TZ")
    with pl.Config(), alt.renderers.enable(alt.renderers.active):
        yield
    if tz is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = tz
    time.tzset()


def test_env_var_names_the_source_with_home_expanded() -> None:
    assert (
        notebook.log_source({"A2A_LAB_LOGS": "  ~/.openclaw/logs "})
        == Path.home() / ".openclaw/logs"
    )
    assert notebook.log_source({"A2A_LAB_LOGS": "/data/logs/*.ndjson"}) == Path(
        "/data/logs/*.ndjson"
    )


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake checkout whose ``a2a_lab.samples.sample_dir()`` is ``a2a_lab/samples/data``."""
    sample = tmp_path / "repo" / "a2a_lab" / "samples" / "data"
    sample.mkdir(parents=True)
    (tmp_path / "repo" / "notebooks").mkdir()
    fake = types.ModuleType("a2a_lab.samples")
    fake.sample_dir = lambda: sample  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "a2a_lab.samples", fake)
    return tmp_path / "repo"


@pytest.mark.parametrize("environ", [{}, {"A2A_LAB_LOGS": ""}, {"A2A_LAB_LOGS": "   "}])
def test_unset_or_blank_env_var_means_the_sample_relative_to_notebooks_dir(
    checkout: Path, monkeypatch: pytest.MonkeyPatch, environ: dict[str, str]
) -> None:
    monkeypatch.chdir(checkout / "notebooks")
    source = notebook.log_source(environ)
    assert source == Path("../a2a_lab/samples/data")
    assert source.resolve() == (checkout / "a2a_lab/samples/data").resolve()


def test_sample_below_the_working_dir_is_relative_without_dots(
    checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(checkout)
    assert notebook.log_source({}) == Path("a2a_lab/samples/data")


def test_sample_elsewhere_stays_absolute(checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = checkout.parent / "other" / "deeper"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    source = notebook.log_source({})
    assert source.is_absolute()
    assert source == (checkout / "a2a_lab/samples/data").resolve()


def test_process_env_is_read_when_no_mapping_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("A2A_LAB_LOGS", "/srv/logs")
    monkeypatch.setenv("A2A_LAB_TZ", "Asia/Seoul")
    assert notebook.log_source() == Path("/srv/logs")
    assert notebook.display_timezone() == "Asia/Seoul"


@pytest.mark.parametrize("value", ["Not/AZone", "../etc/passwd"])
def test_unknown_time_zone_is_a_clear_error(value: str) -> None:
    with pytest.raises(ValueError, match="A2A_LAB_TZ=.* is not a known IANA time zone"):
        notebook.display_timezone({"A2A_LAB_TZ": value})


@pytest.mark.usefixtures("restored_session")
def test_setup_fixes_local_time_tables_and_renderer() -> None:
    source = notebook.setup({"A2A_LAB_LOGS": "/srv/logs", "A2A_LAB_TZ": "Asia/Seoul"})
    assert source == Path("/srv/logs")
    assert os.environ["TZ"] == "Asia/Seoul"
    assert time.localtime(0).tm_hour == 9  # KST is UTC+9, no DST
    assert alt.renderers.active == notebook.CHART_RENDERER
    state = pl.Config.state(if_set=True)
    assert state["POLARS_FMT_MAX_ROWS"] == "12"
    assert state["POLARS_TABLE_WIDTH"] == "140"


@pytest.mark.usefixtures("restored_session")
def test_setup_is_idempotent() -> None:
    notebook.setup({"A2A_LAB_LOGS": "/a"})
    assert notebook.setup({"A2A_LAB_LOGS": "/b"}) == Path("/b")
    assert alt.renderers.active == notebook.CHART_RENDERER


@pytest.mark.usefixtures("restored_session")
def test_chart_output_is_a_deterministic_spec_plus_a_png() -> None:
    notebook.setup({"A2A_LAB_LOGS": "/srv/logs", "A2A_LAB_TZ": "UTC"})
    frame = pl.DataFrame({"agent": ["a", "b", "c"], "events": [3, 1, 2]})

    def bundle() -> tuple[dict, dict]:
        chart = alt.Chart(frame).mark_bar().encode(x="agent:N", y="events:Q")
        return chart._repr_mimebundle_()

    (data, meta), (data_again, _) = bundle(), bundle()
    spec = data[notebook.VEGALITE_MIME_TYPE]
    assert spec == data_again[notebook.VEGALITE_MIME_TYPE]
    assert spec["mark"] == {"type": "bar"}
    assert list(spec["datasets"].values()) == [frame.to_dicts()]
    png = data["image/png"]
    raw = png if isinstance(png, bytes) else base64.b64decode(png)
    assert raw.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", raw[16:24])
    assert meta["image/png"] == {"width": width, "height": height}


@pytest.mark.usefixtures("restored_session")
def test_png_rendered_at_a_larger_scale_is_shown_at_the_charts_size() -> None:
    notebook.setup({"A2A_LAB_LOGS": "/srv/logs"})
    alt.renderers.enable(notebook.CHART_RENDERER, scale_factor=2)
    chart = alt.Chart(pl.DataFrame({"x": [1, 2]})).mark_point().encode(x="x:Q")
    data, meta = chart._repr_mimebundle_()
    png = data["image/png"]
    raw = png if isinstance(png, bytes) else base64.b64decode(png)
    width, height = struct.unpack(">II", raw[16:24])
    assert meta["image/png"] == {"width": width / 2, "height": height / 2}
    assert data["text/plain"].startswith("<Vega-Lite ")
