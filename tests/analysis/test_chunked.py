"""The exchange analyses of a log, a bucket of whole conversations at a time
(:mod:`a2a_lab.analysis._chunked`), against the same analyses of the whole loaded log."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import a2a_lab as al
from a2a_lab._frames import data_text
from a2a_lab.analysis import _chunked
from a2a_lab.analysis._chunked import bucket_frames, log_conversations, spill_exchanges
from a2a_lab.samples import sample_dir, write_log
from tests.support.paths import SHARED

HOSTILE = SHARED / "conformance" / "hostile"
if not HOSTILE.is_dir():  # a worktree under /work/wt
    HOSTILE = Path("/work/shared/conformance/hostile")


def _whole(source: object, **window: object) -> pl.DataFrame:
    return al.conversations(al.load(source).events, **window)  # type: ignore[arg-type]


@pytest.fixture
def tiny_buckets(monkeypatch: pytest.MonkeyPatch) -> None:
    # a few KB per bucket: every log below is split into many buckets
    monkeypatch.setattr(_chunked, "SPILL_BYTES", 4096)


@pytest.fixture(params=[16_384, pytest.param(4_096, marks=pytest.mark.slow)])
def sample_buckets(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    # the sample (5,670 events) in 16 KB buckets is still dozens of buckets; the 4 KB ones
    # (hundreds, several times slower on the sample) run in the full suite only
    monkeypatch.setattr(_chunked, "SPILL_BYTES", request.param)


def test_sample_dir_same_rows(sample_buckets: None) -> None:
    # several files (rotated, then live): the load's order spans files
    got = log_conversations(sample_dir())
    assert got.height > 100
    assert got.equals(_whole(sample_dir()), null_equal=True)


def test_many_buckets_are_used(sample_buckets: None, tmp_path: Path) -> None:
    spill = spill_exchanges(sample_dir(), tmp_path)
    assert sum(1 for files in spill.buckets if files) > 10
    # every exchange event is in exactly one bucket, and a conversation in one only
    ids = [
        set(f.select(data_text("conversationId")).to_series().drop_nulls())
        for f in bucket_frames(spill)
    ]
    assert sum(len(i) for i in ids) == len(set().union(*ids))


def test_ranks_are_the_loaded_positions(sample_buckets: None, tmp_path: Path) -> None:
    loaded = al.load(sample_dir()).events.with_row_index("_pos")
    spill = spill_exchanges(sample_dir(), tmp_path)
    for frame in bucket_frames(spill, ranked=True):
        want = frame.select("file", "line").join(
            loaded.select("file", "line", "_pos"), on=["file", "line"], how="left"
        )
        assert frame["_gseq"].cast(pl.Int64).to_list() == want["_pos"].cast(pl.Int64).to_list()


@pytest.mark.parametrize(
    "name", ["far-future-fit.ndjson", "js-date-max-depth.ndjson", "js-date-max-ts.ndjson"]
)
def test_hostile_logs_same_rows(tiny_buckets: None, name: str) -> None:
    path = HOSTILE / name
    if not path.is_file():
        pytest.skip(f"{path} not present")
    assert log_conversations(path).equals(_whole(path), null_equal=True)


@dataclass(frozen=True)
class LogCase:
    """A generated log (``n`` events of ``seed`` at ``per_day``), the bucket size to read it
    with, and whether the analysis is windowed to the middle 60 % of its time."""

    n: int
    seed: int
    per_day: int
    bucket: int
    window: bool

    def write(self, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
        """The log written to a fresh folder, and the window's ``since``/``until`` (or none)."""
        path = tmp_path_factory.mktemp("log") / "log.ndjson"
        write_log(path, self.n, self.seed, 0.02, events_per_day=self.per_day)
        if not self.window:
            return path, {}
        ms = al.load(path).events["event_ms"]
        return path, {"since": float(ms.quantile(0.2)), "until": float(ms.quantile(0.8))}


#: Any log, sparse or dense in time, any bucket size, with or without a window.
LOG_CASES = st.builds(
    LogCase,
    n=st.integers(30, 900),
    seed=st.integers(0, 10_000),
    per_day=st.sampled_from([2_000, 60_000, 2_000_000]),
    bucket=st.sampled_from([2_048, 16_384, 2**30]),
    window=st.booleans(),
)


@contextmanager
def spill_bytes(bucket: int) -> Iterator[None]:
    """``_chunked.SPILL_BYTES`` set to ``bucket`` for the block (hypothesis runs many examples
    in one test, so the monkeypatch fixture, undone only at its end, does not fit)."""
    old = _chunked.SPILL_BYTES
    _chunked.SPILL_BYTES = bucket
    try:
        yield
    finally:
        _chunked.SPILL_BYTES = old


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(case=LOG_CASES)
def test_chunked_equals_whole(tmp_path_factory: pytest.TempPathFactory, case: LogCase) -> None:
    """Property: any log (sparse or dense in time), any bucket size, with or without a
    window: the same rows as the whole load, in the same order."""
    path, kw = case.write(tmp_path_factory)
    with spill_bytes(case.bucket):
        got = log_conversations(path, **kw)  # type: ignore[arg-type]
    assert got.equals(_whole(path, **kw), null_equal=True)


@pytest.mark.parametrize("batch", [1, 7, 2_000])
def test_otlp_file_same_bytes(sample_buckets: None, batch: int) -> None:
    """The export of a log, bucket by bucket, writes the bytes of the whole load's export."""
    from a2a_lab.otel import log_otlp_lines, otlp_lines

    got = [b.line for b in log_otlp_lines(sample_dir(), batch_exchanges=batch)]
    want = [b.line for b in otlp_lines(al.load(sample_dir()).events, batch_exchanges=batch)]
    assert len(got) == len(want) > 0
    assert got == want


def test_otlp_missing_source_fails_before_writing(tmp_path: Path) -> None:
    from a2a_lab.io import SourceError
    from a2a_lab.otel import log_otlp_lines

    with pytest.raises(SourceError):
        log_otlp_lines(tmp_path / "nope.ndjson")


def _check_both(source: Path, **kw: object) -> tuple[pl.DataFrame, pl.DataFrame]:
    from a2a_lab.analysis._check_log import log_check
    from a2a_lab.analysis.checks import CheckOptions

    opts = CheckOptions(now=1.9e12, **kw)  # type: ignore[arg-type]
    got, res = log_check(source, opts)
    full = al.load(source)
    assert res.report.summary() == full.report.summary()
    assert res.report.issues.equals(full.report.issues, null_equal=True)
    want = al.check(full.events, now=1.9e12, report=full.report, **kw)
    return got, want


def test_check_sample_dir_same_findings(sample_buckets: None) -> None:
    got, want = _check_both(sample_dir())
    assert want.height > 0
    assert got.equals(want, null_equal=True)


@pytest.mark.parametrize(
    "name",
    [
        "far-future-fit.ndjson",
        "far-future-report.ndjson",
        "js-date-max-depth.ndjson",
        "js-date-max-ts.ndjson",
        "fuzzed-views-panic.ndjson.gz",
    ],
)
def test_check_hostile_same_findings(tiny_buckets: None, name: str) -> None:
    path = HOSTILE / name
    if not path.is_file():
        pytest.skip(f"{path} not present")
    got, want = _check_both(path)
    assert got.equals(want, null_equal=True)


@pytest.mark.slow
@settings(max_examples=8, deadline=None)
@given(case=LOG_CASES)
def test_check_chunked_equals_whole(
    tmp_path_factory: pytest.TempPathFactory, case: LogCase
) -> None:
    """Property: the findings and the load report of any log, any bucket size, with or
    without a window, are the whole load's."""
    path, kw = case.write(tmp_path_factory)
    with spill_bytes(case.bucket):
        got, want = _check_both(path, **kw)
    assert got.equals(want, null_equal=True)
