"""The times the report shows, made by the application layer in the display zone: each
equals Python's own formatting of the instant in the zone (zoneinfo), "—" for none."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_lab.app.report import shown_times
from a2a_lab.time import MAX_TIME_MS, STRFTIME_MAX_MS

ZONES = ("UTC", "Pacific/Chatham", "Asia/Seoul", "America/St_Johns")
#: Instants of the years 1000-2037 (a day's margin for the zone): Python's strftime pads no
#: shorter year, and past 2037 zoneinfo's and Polars' rules for a zone may differ (their
#: tz databases extend the last rule differently: Chatham in 2204 is an hour apart).
PY_MS = st.integers(-30_610_224_000_000 + 86_400_000, 2_145_916_800_000 - 86_400_000)


def _obvious(ms: int | None, tz: str, fmt: str) -> str:
    if ms is None:
        return "—"
    return datetime.fromtimestamp(ms / 1000, UTC).astimezone(ZoneInfo(tz)).strftime(fmt)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(ZONES),
    st.one_of(st.none(), PY_MS),
    st.one_of(st.none(), PY_MS),
    st.one_of(st.none(), PY_MS),
    PY_MS,
)
def test_shown_times_are_the_instants_in_the_zone(
    tz: str, since: int | None, first: int | None, last: int | None, now: int
) -> None:
    times = shown_times(tz, (since, None), {"first_ms": first, "last_ms": last}, now)
    assert times == {
        "since": _obvious(since, tz, "%Y-%m-%d %H:%M:%S"),
        "until": "—",
        "first": _obvious(first, tz, "%Y-%m-%d %H:%M"),
        "last": _obvious(last, tz, "%Y-%m-%d %H:%M"),
        "clock": _obvious(now, tz, "%Y-%m-%d %H:%M"),
    }


def test_times_beyond_strftime_are_shown() -> None:
    """Date's range reaches past the years Polars' strftime formats: such an instant is
    formatted by :func:`a2a_lab.time.format_time` (no panic), the others in the zone."""
    far = MAX_TIME_MS
    assert far > STRFTIME_MAX_MS
    times = shown_times("Pacific/Chatham", (-far, far), {"first_ms": 0, "last_ms": None}, 0)
    assert times == {
        "since": "-271821-04-20 00:00:00",
        "until": "+275760-09-13 00:00:00",
        "first": "1970-01-01 12:45",
        "last": "—",
        "clock": "1970-01-01 12:45",
    }
