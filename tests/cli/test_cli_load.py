"""``a2a-lab load``: the JSON report and one-line errors."""

from __future__ import annotations

import json

import pytest

from a2a_lab.cli import main
from tests.support.paths import DATA

GEN300 = DATA / "peer" / "gen300_s11_bad5.ndjson"


def test_load_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["load", str(GEN300), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {k: out[k] for k in ("lines", "events", "rejects", "blank", "warnings")} == {
        "lines": 1721,
        "events": 1716,
        "rejects": 4,
        "blank": 1,
        "warnings": 0,
    }
    assert out["files"] == [str(GEN300)]
    assert sum(out["by_type"].values()) == 1716
    assert all(isinstance(v, int) for v in out["by_type"].values())


@pytest.mark.parametrize(
    "argv", [["load", "/no/such/log"], ["load"], ["load", "x", "--bogus"], ["nope"]]
)
def test_errors_are_one_line_with_status_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        raise SystemExit(main(argv))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
