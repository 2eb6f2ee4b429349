"""The interaction graph: edge counts equal the group-bys they summarise; export round-trips."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import networkx as nx
import polars as pl
import pytest

import a2a_lab as al
from a2a_lab.analysis.conversations import conversations, exchange_events
from a2a_lab.analysis.graph import (
    conversation_tree,
    graph_metrics,
    interaction_graph,
    message_counts,
    write_graph,
)
from a2a_lab.io import from_records


@pytest.fixture(scope="module")
def sample() -> pl.DataFrame:
    return al.load(al.samples.sample_dir()).events


def test_edge_counts_equal_the_group_bys(sample: pl.DataFrame) -> None:
    g = interaction_graph(sample)
    ex = exchange_events(sample)
    msgs = (
        ex.filter(pl.col("type").is_in(["a2a.send", "a2a.response"]))
        .group_by("requester", "target")
        .len()
        .rows()
    )
    assert {(a, b): n for a, b, n in msgs} == {
        (a, b): d["messages"] for a, b, d in g.edges(data=True) if d["messages"]
    }
    conv = conversations(sample)
    per_pair = {(a, b): n for a, b, n in conv.group_by("from_agent", "to_agent").len().rows()}
    assert per_pair == {(a, b): d["exchanges"] for a, b, d in g.edges(data=True) if d["exchanges"]}
    spawns = (
        sample.filter(pl.col("type") == "a2a.spawn")
        .select(pl.col("data").struct.field("fromAgent"), pl.col("data").struct.field("toAgent"))
        .group_by(pl.all())
        .len()
        .rows()
    )
    assert {(a, b): n for a, b, n in spawns} == {
        (a, b): d["spawns"] for a, b, d in g.edges(data=True) if d["spawns"]
    }
    assert all(d["delegation"] == (d["spawns"] > 0) for _, _, d in g.edges(data=True))


def test_nodes_are_agents_with_kind(sample: pl.DataFrame) -> None:
    g = interaction_graph(sample, main_agents=["main", "ruda", "eden", "seum", "bada", "haneul"])
    assert g.number_of_nodes() == 15
    kinds = nx.get_node_attributes(g, "kind")
    assert sum(k == "main" for k in kinds.values()) == 6
    assert sum(d["requested"] for _, d in g.nodes(data=True)) == conversations(sample).height


def test_window_and_work_session_filters(sample: pl.DataFrame) -> None:
    full = interaction_graph(sample)
    start = datetime(2026, 2, 2, tzinfo=UTC)
    part = interaction_graph(sample, window=(start, None))
    assert (
        0
        < sum(d["messages"] for *_, d in part.edges(data=True))
        < sum(d["messages"] for *_, d in full.edges(data=True))
    )
    ws = (
        sample.select(pl.col("data").struct.field("workSessionId"))
        .drop_nulls()
        .to_series()
        .mode()
        .sort()[0]
    )
    one = interaction_graph(sample, work_session="ws:" + ws)
    in_ws = sample.filter(pl.col("data").struct.field("workSessionId") == ws)
    assert (
        sum(d["messages"] for *_, d in one.edges(data=True))
        == message_counts(in_ws).select(pl.col("sends") + pl.col("responses")).to_series().sum()
    )


def test_metrics_on_a_hand_graph() -> None:
    def e(i, t, a, b, c):
        return {"type": t, "ts": i, "data": {"conversationId": c, "fromAgent": a, "toAgent": b}}

    events = from_records(
        [
            e(1, "a2a.send", "a", "b", "1"),
            e(2, "a2a.response", "b", "a", "1"),
            e(3, "a2a.complete", "a", "b", "1"),
            e(4, "a2a.send", "b", "a", "2"),
            e(5, "a2a.complete", "b", "a", "2"),
            e(6, "a2a.send", "b", "c", "3"),
            e(7, "a2a.complete", "b", "c", "3"),
        ]
    )
    g = interaction_graph(events)
    assert sorted(g.edges()) == [("a", "b"), ("b", "a"), ("b", "c")]
    m = {r["agent"]: r for r in graph_metrics(g).iter_rows(named=True)}
    assert m["a"]["reciprocity"] == 1.0 and m["c"]["reciprocity"] == 0.0
    assert m["b"]["reciprocity"] == pytest.approx(2 / 3)
    assert m["b"]["betweenness"] > 0 and m["a"]["betweenness"] == 0


def test_conversation_tree_follows_parent_ids() -> None:
    events = from_records(
        [
            {
                "type": "a2a.send",
                "ts": 1,
                "data": {"conversationId": "p", "fromAgent": "a", "toAgent": "b"},
            },
            {
                "type": "a2a.send",
                "ts": 2,
                "data": {
                    "conversationId": "k1",
                    "parentConversationId": "p",
                    "fromAgent": "b",
                    "toAgent": "c",
                },
            },
            {
                "type": "a2a.send",
                "ts": 3,
                "data": {
                    "conversationId": "k2",
                    "parentConversationId": "p",
                    "fromAgent": "b",
                    "toAgent": "d",
                },
            },
            {
                "type": "a2a.send",
                "ts": 4,
                "data": {
                    "conversationId": "p",
                    "parentConversationId": "p",
                    "fromAgent": "b",
                    "toAgent": "e",
                },
            },
        ]
    )
    tree = conversation_tree(events)
    assert sorted(tree.edges()) == [("p", "k1"), ("p", "k2")]
    assert tree.nodes["p"]["agents"] == "a,b,e"


@pytest.mark.parametrize("suffix", [".graphml", ".json"])
def test_export_round_trips(sample: pl.DataFrame, tmp_path: Path, suffix: str) -> None:
    g = interaction_graph(sample)
    path = write_graph(g, tmp_path / f"g{suffix}")
    if suffix == ".graphml":
        back = nx.read_graphml(path)
    else:
        back = nx.node_link_graph(json.loads(path.read_text(encoding="utf-8")), edges="links")
    assert sorted(back.edges()) == sorted(g.edges())
    a, b = next(iter(g.edges()))
    assert back.edges[a, b]["messages"] == g.edges[a, b]["messages"]


def test_unknown_export_format(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="graphml"):
        write_graph(nx.DiGraph(), tmp_path / "g.txt")


@pytest.mark.parametrize(
    "records",
    [
        [],
        # one agent, no exchange: a node without edges
        [{"type": "task.started", "ts": 1, "agentId": "solo", "data": {"workSessionId": "w"}}],
        # one exchange: two agents, one edge
        [
            {
                "type": "a2a.send",
                "ts": 1,
                "data": {"conversationId": "c", "fromAgent": "a", "toAgent": "b"},
            },
            {
                "type": "a2a.complete",
                "ts": 2,
                "data": {"conversationId": "c", "fromAgent": "a", "toAgent": "b"},
            },
        ],
    ],
    ids=["empty", "no_exchange", "one_exchange"],
)
def test_graph_metrics_has_the_same_columns_on_any_graph(records: list[dict]) -> None:
    # issue 13: notebook 03 selected "kind" and friends and crashed on a log without exchanges
    full = graph_metrics(interaction_graph(al.load(al.samples.sample_dir()).events))
    g = interaction_graph(from_records(records))
    m = graph_metrics(g)
    assert m.schema == full.schema
    assert m.height == g.number_of_nodes()
    assert sorted(m["agent"]) == sorted(g.nodes)
