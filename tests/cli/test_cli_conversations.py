"""``a2a-lab conversations`` and ``a2a-lab graph``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import polars as pl
import pytest

import a2a_lab as al
from a2a_lab.analysis.conversations import conversations
from a2a_lab.cli import _conversations as cmd
from a2a_lab.cli import main

SAMPLE = str(al.samples.sample_dir())


def test_conversations_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conversations", SAMPLE, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    expected = conversations(al.load(SAMPLE).events)
    assert len(rows) == expected.height
    for key in (
        "conversation_id",
        "from_agent",
        "to_agent",
        "outcome",
        "outcome_reason",
        "turns",
        "first_reply_s",
        "retries",
    ):
        assert key in rows[0]
    assert sum(r["retries"] for r in rows) == expected["retries"].sum()


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".json", ".ndjson"])
def test_conversations_file_keeps_every_column(tmp_path: Path, suffix: str) -> None:
    log = tmp_path / "gen.ndjson"
    al.samples.write_log(log, 600, seed=7)
    expected = conversations(al.load(log).events)
    out = tmp_path / f"c{suffix}"
    assert main(["conversations", str(log), "-o", str(out)]) == 0
    read = {
        ".parquet": pl.read_parquet,
        ".csv": pl.read_csv,
        ".json": pl.read_json,
        ".ndjson": pl.read_ndjson,
    }
    back = read[suffix](out)
    # Polars' JSON reader does not keep key order when it infers a schema: check the order
    # the file itself has
    text = out.read_text(encoding="utf-8") if suffix in (".json", ".ndjson") else ""
    first = (
        json.loads(text)[0]
        if suffix == ".json"
        else json.loads(text.splitlines()[0])
        if text
        else {}
    )
    written = list(first) if first else back.columns
    assert written == expected.columns and back.height == expected.height > 0
    if suffix != ".parquet":  # instants as readable ISO 8601 text that parses back to the same time
        again = (
            back["start_time"]
            .str.to_datetime("%Y-%m-%dT%H:%M:%S%.3f%:z")
            .dt.convert_time_zone("UTC")
        )
        assert (again == expected["start_time"].dt.convert_time_zone("UTC")).all()


@pytest.mark.parametrize("suffix", [".graphml", ".json"])
def test_graph_file(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"g{suffix}"
    assert main(["graph", SAMPLE, "-o", str(out)]) == 0
    g = (
        nx.read_graphml(out)
        if suffix == ".graphml"
        else nx.node_link_graph(json.loads(out.read_text()), edges="links")
    )
    assert g.number_of_nodes() == 15


@pytest.mark.parametrize(
    "argv",
    [
        ["conversations", "/no/such"],
        ["conversations", SAMPLE, "-o", "x.xlsx"],
        ["graph", SAMPLE, "-o", "g.txt"],
        ["graph", SAMPLE],
        ["conversations", SAMPLE, "--json", "-o", "x.csv"],
        ["graph", SAMPLE, "-o", "/no/dir/g.json"],
    ],
)
def test_errors_are_one_line_status_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        raise SystemExit(main(argv))
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0]


def test_allocator_options_only_before_polars_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("_RJEM_MALLOC_CONF", raising=False)
    # Polars is loaded in this process: its allocator is set up, nothing is changed
    assert not cmd.keep_freed_pages()
    assert "_RJEM_MALLOC_CONF" not in os.environ
    monkeypatch.delitem(sys.modules, "polars")
    assert cmd.keep_freed_pages()
    assert os.environ["_RJEM_MALLOC_CONF"] == cmd.ALLOCATOR_OPTIONS
    # a user's own options are left alone
    monkeypatch.setenv("_RJEM_MALLOC_CONF", "narenas:4")
    assert not cmd.keep_freed_pages()
    assert os.environ["_RJEM_MALLOC_CONF"] == "narenas:4"


def test_allocator_options_reach_polars_and_keep_the_rows(tmp_path: Path) -> None:
    """In a fresh process the options are set before Polars loads (it appends them to its
    own), and the file written is the in-process one byte for byte."""
    log = tmp_path / "gen.ndjson"
    al.samples.write_log(log, 3_000, seed=5, bad_line_fraction=0.01)
    fresh, here = tmp_path / "fresh.csv", tmp_path / "here.csv"
    assert main(["conversations", str(log), "-o", str(here)]) == 0
    env = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}
    script = (
        "import os, sys; from a2a_lab.cli import main; code = main(sys.argv[1:]); "
        "print(os.environ.get('_RJEM_MALLOC_CONF')); sys.exit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "conversations", str(log), "-o", str(fresh)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(cmd.ALLOCATOR_OPTIONS)
    assert fresh.read_bytes() == here.read_bytes()
