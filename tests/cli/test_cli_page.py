"""``work-sessions``' streamed body: the bytes of ``print_json(result.to_api())``."""

from __future__ import annotations

import pytest

from a2a_lab.cli._common import print_json
from a2a_lab.cli._page import print_work_sessions
from a2a_lab.enrich import enrich
from a2a_lab.io import load
from a2a_lab.sessions import work_sessions
from tests.support.paths import DATA

PEER = DATA / "peer"


@pytest.mark.parametrize("log", ["tricky.ndjson", "gen300_s11_bad5.ndjson"])
@pytest.mark.parametrize(
    ("query", "batch_rows"),
    [
        ({}, 5000),
        ({}, 7),
        ({"limit": "1"}, 1),
        ({"status": "ARCHIVED"}, 3),  # no session: an empty page
        ({"roles": "conversation.main", "limit": "1e9"}, 50),
    ],
)
def test_streamed_body_is_the_whole_body(
    log: str, query: dict[str, str], batch_rows: int, capsys: pytest.CaptureFixture[str]
) -> None:
    for frame in (enrich(load(PEER / log).events), enrich(load(PEER / log).events).lazy()):
        result = work_sessions(frame, now=1771302796260, **query)  # type: ignore[arg-type]
        print_json(result.to_api())
        whole = capsys.readouterr().out
        print_work_sessions(result, batch_rows=batch_rows)
        assert capsys.readouterr().out == whole
