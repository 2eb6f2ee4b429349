"""The agent interaction graph: who talks to whom, how much, how fast (networkx).

Nodes are agents; a directed edge ``requester → target`` summarises the A2A traffic between
them: the messages written that way (``a2a.send`` and ``a2a.response`` events whose
``fromAgent → toAgent`` is the edge), the exchanges the requester started
(:func:`a2a_lab.analysis.conversations.conversations`) with their first-reply latency quantiles,
no-reply share and mean turns, and the delegations (``a2a.spawn``). A second graph, the
conversation tree, links conversations through ``parentConversationId``.

All counting happens in Polars; networkx only holds the result and computes the graph
metrics.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import networkx as nx
import polars as pl

from a2a_lab._frames import data_text, narrow, same_kind
from a2a_lab.analysis.conversations import _conversations_of, pair_stats
from a2a_lab.exchanges import EXCHANGE_FIELDS, exchange_events, with_agents
from a2a_lab.reference.jsstr import js_trim_expr
from a2a_lab.time import Instant, python_safe, to_epoch_ms, window_ms

__all__ = [
    "MESSAGE_TYPES",
    "conversation_tree",
    "graph_metrics",
    "interaction_graph",
    "message_counts",
    "to_node_link",
    "write_graph",
]

#: Event types counted as messages on an edge.
MESSAGE_TYPES: tuple[str, ...] = ("a2a.send", "a2a.response")

_D = pl.col("data")


#: The ``data`` fields the graph reads (exchange fields plus session keys).
_GRAPH_FIELDS: tuple[str, ...] = tuple(
    dict.fromkeys((*EXCHANGE_FIELDS, "sourceSessionKey", "requesterSessionKey", "targetSessionKey"))
)


def _select(
    events: pl.DataFrame | pl.LazyFrame,
    window: tuple[Instant | None, Instant | None] | None,
    work_session: str | None,
    since: Instant | None = None,
    until: Instant | None = None,
) -> pl.DataFrame:
    """The A2A events in the window / work session, narrowed to what the graph reads."""
    frame = (
        with_agents(events).collect()
        if isinstance(events, pl.LazyFrame) or "from_agent" not in events.columns
        else events
    )
    keep = pl.col("type").str.starts_with("a2a.")
    if window is not None:
        start, end = window
        # one parser for instants (ISO string, datetime, epoch ms; naive = UTC), compared on
        # event_ms: a string bound against the Datetime column was a dtype error
        if start is not None:
            keep = keep & (pl.col("event_ms") >= to_epoch_ms(start, name="window[0]"))
        if end is not None:
            keep = keep & (pl.col("event_ms") < to_epoch_ms(end, name="window[1]"))
    lo, hi = window_ms(since, until)
    if lo is not None:
        keep = keep & (pl.col("event_ms") >= lo)
    if hi is not None:
        keep = keep & (pl.col("event_ms") <= hi)
    if work_session is not None:
        keep = keep & (data_text("workSessionId") == work_session.removeprefix("ws:"))
    return narrow(
        frame,
        keep,
        _GRAPH_FIELDS,
        ("file", "line", "type", "event_ms", "event_time", "from_agent", "to_agent"),
    )


@same_kind()
def message_counts(events: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """Messages per exchange direction: the ``a2a.send`` and ``a2a.response`` events of the
    exchanges requester → target (the reply and every ping-pong turn included), by
    ``from_agent`` (requester) and ``to_agent`` (target).

    Examples
    --------
    >>> from a2a_lab.io import from_records
    >>> ev = from_records([
    ...     {"type": "a2a.send", "ts": 1, "data": {"conversationId": "c", "fromAgent": "a", "toAgent": "b"}},
    ...     {"type": "a2a.response", "ts": 2, "data": {"conversationId": "c", "fromAgent": "b", "toAgent": "a"}}])
    >>> message_counts(ev).rows()
    [('a', 'b', 1, 1)]
    """
    return _message_counts(exchange_events(events.lazy()))


def _message_counts(ex: pl.LazyFrame) -> pl.DataFrame:
    t = pl.col("type")
    return (
        ex.filter(
            t.is_in(MESSAGE_TYPES)
            & pl.col("requester").is_not_null()
            & pl.col("target").is_not_null()
        )
        .group_by(pl.col("requester").alias("from_agent"), pl.col("target").alias("to_agent"))
        .agg(
            (t == "a2a.send").sum().cast(pl.Int64).alias("sends"),
            (t == "a2a.response").sum().cast(pl.Int64).alias("responses"),
        )
        .sort("from_agent", "to_agent")
        .collect()
    )


def _clean(attrs: dict[str, Any]) -> dict[str, Any]:
    """Attributes GraphML can store: no None, no NaN, datetimes as ISO text."""
    out = {}
    for k, v in attrs.items():
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        out[k] = v.isoformat() if isinstance(v, datetime) else v
    return out


def interaction_graph(
    events: pl.DataFrame | pl.LazyFrame,
    *,
    window: tuple[Instant | None, Instant | None] | None = None,
    work_session: str | None = None,
    main_agents: Iterable[str] | None = None,
    since: Instant | None = None,
    until: Instant | None = None,
) -> nx.DiGraph:
    """Build the directed agent interaction graph.

    Parameters
    ----------
    events
        An event frame (loaded or enriched).
    window
        Optional ``(start, end)`` (ISO string, datetime or epoch ms, naive = UTC; either may
        be None): events with ``start <= event_time < end``.
    since, until
        Optional inclusive bounds (same spellings), as in every other function.
    work_session
        Optional work-session id (with or without the ``ws:`` prefix).
    main_agents
        The configured (main) agents; other agents are marked ``subagent``. Default: the
        reference's ``{main, ruda}`` plus every agent that writes a main-session key.

    Returns
    -------
    networkx.DiGraph
        Node attributes: ``kind`` (main/subagent), ``events`` (events it wrote as
        ``from_agent``), ``requested``/``received`` (exchanges), ``first_seen``/``last_seen``
        (ISO). Edge attributes: ``messages`` (``sends`` + ``responses`` of the exchanges
        in that direction, see :func:`message_counts`), ``exchanges``,
        ``conversations`` (distinct ids), ``replied``, ``no_reply``,
        ``concurrency_blocked``, ``no_reply_share``, ``p50/p95/p99_first_reply_s``,
        ``mean_turns``, ``retries``, ``spawns`` and ``delegation`` (any ``a2a.spawn``).
    """
    a2a = _select(events, window, work_session, since, until)
    conv, edges = _edges(a2a)
    nodes = _nodes(a2a, conv, main_agents)
    g = nx.DiGraph(
        window=None if window is None else [str(w) for w in window], work_session=work_session or ""
    )
    for row in python_safe(nodes).iter_rows(named=True):
        g.add_node(row.pop("agent"), **_clean(row))
    edge_table = edges.select("from_agent", "to_agent", *_EDGE_COLUMNS)
    for row in python_safe(edge_table).iter_rows(named=True):
        g.add_edge(row.pop("from_agent"), row.pop("to_agent"), **_clean(row))
    g.graph = _clean(g.graph)
    return g


#: The edge attributes of :func:`interaction_graph`, in order.
_EDGE_COLUMNS: tuple[str, ...] = (
    "messages",
    "sends",
    "responses",
    "exchanges",
    "conversations",
    "replied",
    "no_reply",
    "concurrency_blocked",
    "no_reply_share",
    "p50_first_reply_s",
    "p95_first_reply_s",
    "p99_first_reply_s",
    "mean_turns",
    "retries",
    "spawns",
    "delegation",
)


def _edges(a2a: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The conversations of the selected events, and one row per directed agent pair.

    A pair's row joins its message counts, its exchange statistics (:func:`pair_stats`),
    its distinct conversations and its spawns; a count a pair lacks is 0.
    """
    ex = exchange_events(a2a.lazy()).collect()
    msgs = _message_counts(ex.lazy())
    conv = _conversations_of(ex.lazy())
    stats = pair_stats(conv)
    conv_ids = conv.group_by("from_agent", "to_agent").agg(
        pl.col("conversation_id").n_unique().alias("conversations")
    )
    spawns = (
        a2a.lazy()
        .filter(
            (pl.col("type") == "a2a.spawn")
            & pl.col("from_agent").is_not_null()
            & pl.col("to_agent").is_not_null()
        )
        .group_by("from_agent", "to_agent")
        .len("spawns")
        .with_columns(pl.col("spawns").cast(pl.Int64))
        .collect()
    )
    keys = ["from_agent", "to_agent"]
    edges = (
        msgs.join(stats, on=keys, how="full", coalesce=True)
        .join(conv_ids, on=keys, how="full", coalesce=True)
        .join(spawns, on=keys, how="full", coalesce=True)
        .filter(pl.col("from_agent").is_not_null() & pl.col("to_agent").is_not_null())
        .with_columns(
            pl.col(
                "sends",
                "responses",
                "exchanges",
                "replied",
                "no_reply",
                "concurrency_blocked",
                "spawns",
                "conversations",
                "retries",
            ).fill_null(0),
        )
        .with_columns(
            (pl.col("sends") + pl.col("responses")).alias("messages"),
            (pl.col("spawns") > 0).alias("delegation"),
            pl.col("no_reply_rate").alias("no_reply_share"),
        )
        .sort(keys)
    )
    return conv, edges


def _nodes(
    a2a_frame: pl.DataFrame, conv: pl.DataFrame, main_agents: Iterable[str] | None
) -> pl.DataFrame:
    a2a = a2a_frame.lazy()
    both = pl.concat(
        [
            a2a.select(pl.col("from_agent").alias("agent"), "event_time", pl.lit(1).alias("wrote")),
            a2a.select(pl.col("to_agent").alias("agent"), "event_time", pl.lit(0).alias("wrote")),
        ]
    ).filter(pl.col("agent").is_not_null())
    activity = (
        both.group_by("agent")
        .agg(
            pl.col("wrote").sum().cast(pl.Int64).alias("events"),
            pl.col("event_time").min().alias("first_seen"),
            pl.col("event_time").max().alias("last_seen"),
        )
        .collect()
    )
    if main_agents is None:
        key = js_trim_expr(
            _D.struct.field("sourceSessionKey").fill_null(_D.struct.field("requesterSessionKey"))
        )
        mains = set(
            a2a.filter(key.str.contains(r"(?i)^agent:[^:]+:main$"))
            .select(pl.col("from_agent").str.to_lowercase())
            .unique()
            .collect()
            .to_series()
            .drop_nulls()
            .to_list()
        ) | {"main", "ruda"}
        mains |= set(
            a2a.filter(
                js_trim_expr(_D.struct.field("targetSessionKey")).str.contains(
                    r"(?i)^agent:[^:]+:main$"
                )
            )
            .select(pl.col("to_agent").str.to_lowercase())
            .unique()
            .collect()
            .to_series()
            .drop_nulls()
            .to_list()
        )
    else:
        mains = {m.strip().lower() for m in main_agents}
    requested = conv.group_by(pl.col("from_agent").alias("agent")).len("requested")
    received = conv.group_by(pl.col("to_agent").alias("agent")).len("received")
    return (
        activity.join(requested, on="agent", how="left")
        .join(received, on="agent", how="left")
        .with_columns(
            pl.col("requested", "received").fill_null(0).cast(pl.Int64),
            pl.when(pl.col("agent").str.to_lowercase().is_in(sorted(mains)))
            .then(pl.lit("main"))
            .otherwise(pl.lit("subagent"))
            .alias("kind"),
        )
        .sort("agent")
        .select("agent", "kind", "events", "requested", "received", "first_seen", "last_seen")
    )


def conversation_tree(events: pl.DataFrame | pl.LazyFrame) -> nx.DiGraph:
    """Conversations linked parent → child through ``data.parentConversationId``.

    Nodes carry ``events``, ``first_seen`` and ``agents`` (sorted, comma-joined); a relay
    hop that keeps its parent's id (parent == child) adds no edge.
    """
    lf = with_agents(events).filter(pl.col("type").str.starts_with("a2a."))
    conv, parent = data_text("conversationId"), data_text("parentConversationId")
    nodes = (
        lf.filter(conv.is_not_null())
        .group_by(conv.alias("conversation_id"))
        .agg(
            pl.len().cast(pl.Int64).alias("events"),
            pl.col("event_time").min().alias("first_seen"),
            pl.concat_list("from_agent", "to_agent")
            .list.explode(keep_nulls=False, empty_as_null=False)
            .drop_nulls()
            .unique()
            .sort()
            .str.join(",")
            .alias("agents"),
        )
        .sort("conversation_id")
        .collect()
    )
    links = (
        lf.filter(conv.is_not_null() & parent.is_not_null() & (conv != parent))
        .select(parent.alias("parent"), conv.alias("child"))
        .unique()
        .sort("parent", "child")
        .collect()
    )
    tree = nx.DiGraph()
    # a first time beyond Python's datetime (years 1..9999; Date holds ±275760) is absent
    for row in python_safe(nodes).iter_rows(named=True):
        tree.add_node(row.pop("conversation_id"), **_clean(row))
    tree.add_edges_from(links.iter_rows())
    return tree


_METRICS_SCHEMA: dict[str, pl.DataType] = {
    "agent": pl.String(),
    "kind": pl.String(),
    "in_degree": pl.Int64(),
    "out_degree": pl.Int64(),
    "in_weight": pl.Float64(),
    "out_weight": pl.Float64(),
    "betweenness": pl.Float64(),
    "reciprocity": pl.Float64(),
    "hub": pl.Float64(),
    "authority": pl.Float64(),
    "role": pl.String(),
}


def graph_metrics(g: nx.DiGraph, *, weight: str = "messages") -> pl.DataFrame:
    """Per-agent metrics: degrees, weighted degrees, betweenness, reciprocity, hub/authority.

    ``betweenness`` is unweighted and normalised; ``reciprocity`` is the share of the
    agent's edges that are answered by an edge the other way; ``hub``/``authority`` are HITS
    scores on the ``weight`` attribute; ``role`` names the agent's most distinctive part
    (``hub``: top hub score, ``authority``: top authority, ``broker``: top betweenness).
    """
    if g.number_of_nodes() == 0:
        # the same columns as for a graph with agents, so that selections on them hold
        return pl.DataFrame(schema=_METRICS_SCHEMA)
    between = nx.betweenness_centrality(g, normalized=True)
    recip = nx.reciprocity(g, g.nodes) if g.number_of_edges() else {n: 0.0 for n in g}
    try:
        hubs, auths = (
            nx.hits(g, max_iter=1000, normalized=True) if g.number_of_edges() else ({}, {})
        )
    except nx.PowerIterationFailedConvergence:
        hubs, auths = {}, {}
    rows = []
    for n, attrs in sorted(g.nodes(data=True)):
        rows.append(
            {
                "agent": n,
                "kind": attrs.get("kind"),
                "in_degree": g.in_degree(n),
                "out_degree": g.out_degree(n),
                "in_weight": float(g.in_degree(n, weight=weight)),
                "out_weight": float(g.out_degree(n, weight=weight)),
                "betweenness": between.get(n, 0.0),
                "reciprocity": float(recip.get(n) or 0.0),
                "hub": hubs.get(n, 0.0),
                "authority": auths.get(n, 0.0),
            }
        )
    frame = pl.DataFrame(rows, schema={k: v for k, v in _METRICS_SCHEMA.items() if k != "role"})
    tops = {
        c: frame.sort(c, "agent", descending=[True, False])["agent"][0]
        for c in ("hub", "authority", "betweenness")
    }
    return frame.with_columns(
        pl.when(pl.col("agent") == tops["hub"])
        .then(pl.lit("hub"))
        .when(pl.col("agent") == tops["authority"])
        .then(pl.lit("authority"))
        .when(pl.col("agent") == tops["betweenness"])
        .then(pl.lit("broker"))
        .alias("role")
    ).sort("in_weight", "agent", descending=[True, False])


def to_node_link(g: nx.DiGraph) -> dict[str, Any]:
    """The graph as node-link JSON (``nodes``, ``links``), as d3 and networkx read it."""
    out: dict[str, Any] = nx.node_link_data(g, edges="links")
    return out


#: Characters XML 1.0 cannot hold, not even as character references (C0 controls but tab,
#: newline and carriage return; lone surrogates; U+FFFE, U+FFFF).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(value: Any) -> Any:
    """A string with each character XML cannot hold shown as ``⟨U+XXXX⟩`` (as the package
    displays control characters everywhere); other values as they are."""
    if isinstance(value, str) and _NOT_XML.search(value):
        return _NOT_XML.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", value)
    return value


def _xml_safe(g: nx.DiGraph) -> nx.DiGraph:
    """``g`` with its node names and string attributes fit for GraphML (a log's agent ids
    are any JSON string; XML refuses control characters)."""
    h = nx.relabel_nodes(g, {n: _xml_text(n) for n in g if _xml_text(n) is not n})
    if h is g:
        h = g.copy()
    h.graph.update({k: _xml_text(v) for k, v in h.graph.items()})
    for _, attrs in h.nodes(data=True):
        attrs.update({k: _xml_text(v) for k, v in attrs.items()})
    for _, _, attrs in h.edges(data=True):
        attrs.update({k: _xml_text(v) for k, v in attrs.items()})
    return h


def write_graph(g: nx.DiGraph, path: str | Path) -> Path:
    """Write ``.graphml`` (GraphML) or ``.json`` (node-link JSON), chosen by the suffix.

    GraphML is XML, which cannot hold control characters: in that format a character XML
    refuses (in an agent id or an attribute) is written as ``⟨U+XXXX⟩``. The JSON keeps
    every name as it is.
    """
    out = Path(path)
    if out.suffix == ".graphml":
        nx.write_graphml(_xml_safe(g), out)
    elif out.suffix == ".json":
        out.write_text(
            json.dumps(to_node_link(g), ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )
    else:
        raise ValueError(f"unknown graph format {out.suffix!r}: use .graphml or .json")
    return out
