"""Finding messages of frames held in several chunks (Polars 2.1's ``pl.format`` panicked on
them after a filter in the streaming engine; :func:`a2a_lab._frames.text_format` does not)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import a2a_lab as al
from a2a_lab._frames import text_format
from a2a_lab.samples import sample_dir

NOW = "2026-01-31T00:00:00Z"  # inside the sample's span: thousands of clock.future_ts


def test_log_check_future_findings_of_a_chunked_log() -> None:
    from a2a_lab.analysis._check_log import log_check
    from a2a_lab.analysis.checks import CheckOptions

    got, _res = log_check(sample_dir(), CheckOptions(now=NOW, select=["clock."]))
    want = al.check(al.load(sample_dir()).events, now=NOW, select=["clock."])
    assert got.height > 1000
    assert got.equals(want)


def test_cli_check_future_findings(tmp_path: Path) -> None:
    from a2a_lab.cli import main

    out = tmp_path / "f.json"
    assert main(["check", str(sample_dir()), "--now", NOW, "--json", "-o", str(out)]) in (0, 1)
    assert out.stat().st_size > 0


_TEXT = st.one_of(st.none(), st.text(max_size=5))


@settings(max_examples=60, deadline=None)
@given(
    a=st.lists(_TEXT, min_size=1, max_size=30),
    cut=st.integers(0, 30),
    template=st.sampled_from(["{}", "{} x", "at {} / {}", "{}{}", "[{}] {} ms"]),
)
def test_text_format_is_pl_format(a: list[str | None], cut: int, template: str) -> None:
    """The same text as ``pl.format`` (eager, single chunk, where it does not panic), and
    no panic on several chunks after a filter in the streaming engine."""
    n = template.count("{}")
    df = pl.DataFrame({"a": a, "b": [float(i) / 3 for i in range(len(a))]})
    args = ["a", "b"][:n] if n <= 2 else ["a"] * n
    want = df.select(pl.format(template, *args)).to_series()
    assert df.select(text_format(template, *args)).to_series().equals(want)
    cut = min(cut, df.height)
    chunked = pl.concat([df.slice(0, cut), df.slice(cut)], rechunk=False)
    keep = pl.col("b") >= 0.5
    got = chunked.lazy().filter(keep).select(text_format(template, *args)).collect()
    assert got.to_series().equals(df.filter(keep).select(pl.format(template, *args)).to_series())


def test_package_does_not_call_pl_format() -> None:
    root = Path(al.__file__).parent
    calls = [
        f"{p.relative_to(root)}:{i}"
        for p in root.rglob("*.py")
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if "pl.format(" in line and "``pl.format(" not in line
    ]
    assert calls == [], f"use a2a_lab._frames.text_format: {calls}"
