"""Charts of the agent interaction graph: a node-link drawing while it stays legible, else a
requester × target matrix ordered by community (re-exported by :mod:`a2a_lab.views.plots`).

**Which one** (:func:`graph_view`): a node-link drawing on a circle shows every edge of a
sparse graph and who sits between whom, but once edges cross everywhere (15 agents and 210
edges: a hairball, widths 75 and 100 look alike) no edge can be followed. The drawing is
kept while it can draw *every* edge legibly: at most :data:`LEGIBLE_EDGES` edges between
different agents and at most :data:`LEGIBLE_EDGES_PER_AGENT` per agent on average (about
as many chords as a circle of that many agents keeps apart). Past that the graph is a
matrix, whose cells never overlap, its agents ordered by community (networkx's greedy
modularity, deterministic without a seed; Louvain needs one) so that groups whose traffic
is denser among themselves than chance would give show as shaded blocks on the diagonal.

Legends list only the values present (agent kinds, edge kinds) and carry readable titles.
"""

from __future__ import annotations

import math
from typing import Any, Final

import altair as alt
import networkx as nx
import polars as pl

from a2a_lab._frames import number
from a2a_lab.views._chart_data import MAX_ROWS, _guard, _shown

__all__ = [
    "LEGIBLE_EDGES",
    "LEGIBLE_EDGES_PER_AGENT",
    "graph_chart",
    "graph_communities",
    "graph_matrix",
    "graph_overview",
    "graph_view",
    "legible_as_node_link",
]

#: Most edges (between different agents) a node-link drawing shows legibly.
LEGIBLE_EDGES: Final = 40
#: Most edges per agent, on average, a node-link drawing shows legibly.
LEGIBLE_EDGES_PER_AGENT: Final = 3.0

#: Readable titles of the edge figures a chart can be weighted by.
_WEIGHT_TITLES: Final = {
    "messages": "messages",
    "exchanges": "exchanges",
    "sends": "sends",
    "responses": "responses",
    "conversations": "conversations",
    "spawns": "delegations (spawns)",
}
_KIND_COLORS: Final = {"main": "#4c78a8", "subagent": "#f58518", "?": "#9d9d9d"}
_KIND_TITLES: Final = {"main": "main agent", "subagent": "sub-agent only", "?": "unknown"}

_GRAPH_WIDTH = 460
_GRAPH_HEIGHT = 460
# Node positions fill [0, 1]²; the margin keeps the names around the circle inside the canvas.
_GRAPH_MARGIN = 0.22
_ARROW_GAP_PX = 13.0  # an arrowhead stops this far from the target's centre (outside its disc)
_PARALLEL_PX = 3.0  # the two directions of a pair are drawn this far apart, side by side


def _weight_title(weight: str) -> str:
    return _WEIGHT_TITLES.get(weight, weight.replace("_", " "))


def _between_agents(g: nx.DiGraph) -> int:
    """Edges between two different agents (self-loops are not drawn)."""
    return sum(1 for a, b in g.edges if a != b)


def legible_as_node_link(g: nx.DiGraph) -> bool:
    """Whether a node-link drawing shows every edge of ``g`` legibly (see the module notes).

    >>> legible_as_node_link(nx.complete_graph(4, nx.DiGraph))  # 12 edges, 3 per agent
    True
    >>> legible_as_node_link(nx.complete_graph(15, nx.DiGraph))  # 210 edges
    False
    """
    edges = _between_agents(g)
    return edges <= LEGIBLE_EDGES and edges <= LEGIBLE_EDGES_PER_AGENT * max(len(g), 1)


def _traffic(g: nx.DiGraph, weight: str) -> dict[Any, float]:
    return {
        n: float(g.in_degree(n, weight=weight) + g.out_degree(n, weight=weight)) for n in g.nodes
    }


def graph_communities(g: nx.DiGraph, *, weight: str = "messages") -> list[list[str]]:
    """The agents of ``g`` in communities, busiest community first, busiest agent first.

    Communities are networkx's greedy modularity communities of the undirected graph whose
    edge weight is the pair's ``weight`` both ways (self-loops left out); an agent without
    an edge to another is a community of its own.

    >>> g = nx.DiGraph([("a", "b"), ("b", "a"), ("c", "d"), ("d", "c"), ("a", "c")])
    >>> graph_communities(g, weight="w")
    [['a', 'b'], ['c', 'd']]
    """
    u = nx.Graph()
    u.add_nodes_from(g.nodes)
    for a, b, d in g.edges(data=True):
        if a != b:
            w = float(d.get(weight, 1) or 0) + (u[a][b]["w"] if u.has_edge(a, b) else 0.0)
            u.add_edge(a, b, w=w)
    if u.number_of_edges() == 0:
        groups: list[set[Any]] = [{n} for n in u.nodes]
    else:
        groups = [set(c) for c in nx.community.greedy_modularity_communities(u, weight="w")]
    traffic = _traffic(g, weight)
    ordered = [sorted(c, key=lambda n: (-traffic[n], str(n))) for c in groups]
    return sorted(ordered, key=lambda c: (-sum(traffic[n] for n in c), str(c[0])))


def _edge_tooltip(weight: str) -> list[str | alt.Tooltip]:
    """The tooltip of a requester → target edge (graph chart and matrix alike)."""
    return [
        alt.Tooltip("from:N", title="requester"),
        alt.Tooltip("to:N", title="target"),
        alt.Tooltip("weight:Q", title=_weight_title(weight)),
        "exchanges:Q",
        alt.Tooltip("no_reply_share:Q", format=".0%", title="no-reply share"),
        alt.Tooltip("p50_s:Q", format=".1f", title="median reply s"),
    ]


def _edge_frame(edges: list[tuple[str, str, dict[str, Any]]], weight: str) -> pl.DataFrame:
    """One row per edge: names, weight and the tooltip figures."""
    return pl.DataFrame(
        [
            {
                "from": a,
                "to": b,
                "weight": float(d.get(weight, 0) or 0),
                "exchanges": int(d.get("exchanges", 0) or 0),
                "no_reply_share": d.get("no_reply_share"),
                "p50_s": d.get("p50_first_reply_s"),
                "edge": "delegation" if d.get("delegation") else "request",
            }
            for a, b, d in edges
        ],
        schema={
            "from": pl.String,
            "to": pl.String,
            "weight": pl.Float64,
            "exchanges": pl.Int64,
            "no_reply_share": pl.Float64,
            "p50_s": pl.Float64,
            "edge": pl.String,
        },
    )


def _circle(g: nx.DiGraph, traffic: dict[Any, float]) -> tuple[pl.DataFrame, dict[Any, Any]]:
    """Agents on a circle (by kind, then traffic: no random seed) and their positions."""
    order = sorted(g.nodes, key=lambda n: (g.nodes[n].get("kind", "?") != "main", -traffic[n], n))
    k = len(order)
    # start at the top, clockwise; one agent sits in the middle
    pos = {
        n: (0.5, 0.5)
        if k == 1
        else (0.5 + 0.5 * math.sin(2 * math.pi * i / k), 0.5 + 0.5 * math.cos(2 * math.pi * i / k))
        for i, n in enumerate(order)
    }
    from_middle = pl.col("x") - 0.5
    nodes = pl.DataFrame(
        {
            "agent": order,
            "x": [pos[n][0] for n in order],
            "y": [pos[n][1] for n in order],
            "kind": [_KIND_TITLES.get(g.nodes[n].get("kind", "?"), "unknown") for n in order],
            "traffic": [traffic[n] for n in order],
        },
        schema={
            "agent": pl.String,
            "x": pl.Float64,
            "y": pl.Float64,
            "kind": pl.String,
            "traffic": pl.Float64,
        },
    ).with_columns(
        # names outside the circle, aligned away from it
        lx=0.5 + from_middle * 1.12,
        ly=0.5 + (pl.col("y") - 0.5) * 1.12,
        align=pl.when(from_middle.abs() < 0.05)
        .then(pl.lit("center"))
        .when(from_middle > 0)
        .then(pl.lit("left"))
        .otherwise(pl.lit("right")),
    )
    return nodes, pos


def _arrows(
    kept: list[tuple[str, str, dict[str, Any]]], pos: dict[Any, Any], weight: str
) -> pl.DataFrame:
    """The edges as arrows between the agents' positions, the two directions side by side."""
    span = 1 + 2 * _GRAPH_MARGIN
    px = (_GRAPH_WIDTH / span, _GRAPH_HEIGHT / span)  # pixels per data unit
    rows = []
    for a, b, _ in kept:
        (x1, y1), (x2, y2) = pos[a], pos[b]
        dx, dy = (x2 - x1) * px[0], (y2 - y1) * px[1]
        length = math.hypot(dx, dy) or 1.0
        ux, uy = dx / length, dy / length
        # shift to the right of the direction of travel, so a → b and b → a do not overlap
        ox, oy = uy * _PARALLEL_PX / px[0], -ux * _PARALLEL_PX / px[1]
        gap = min(_ARROW_GAP_PX, length / 2)
        rows.append(
            {
                "x": x1 + ox,
                "y": y1 + oy,
                "x2": x2 + ox - ux * gap / px[0],
                "y2": y2 + oy - uy * gap / px[1],
                # Vega's angle turns the upward triangle clockwise; screen y grows downwards
                "angle": math.degrees(math.atan2(ux, uy)) % 360,
            }
        )
    geometry = pl.DataFrame(rows, schema={c: pl.Float64 for c in ("x", "y", "x2", "y2", "angle")})
    edges = pl.concat([_edge_frame(kept, weight), geometry], how="horizontal")
    return edges.with_columns(pl.col("no_reply_share").fill_null(0.0))


def _graph_edges(
    g: nx.DiGraph, weight: str, top_edges: int
) -> tuple[list[tuple[str, str, dict[str, Any]]], int]:
    """The ``top_edges`` heaviest directed edges (ties by name) and how many there were."""
    edges = [(a, b, d) for a, b, d in g.edges(data=True) if a != b]
    edges.sort(key=lambda e: (-float(e[2].get(weight, 0) or 0), e[0], e[1]))
    return edges[:top_edges], len(edges)


def _xy(x: str, y: str) -> tuple[alt.X, alt.Y]:
    axis = alt.Axis(title=None, labels=False, ticks=False, grid=False, domain=False)
    scale = alt.Scale(domain=[-_GRAPH_MARGIN, 1 + _GRAPH_MARGIN], nice=False, zero=False)
    return alt.X(f"{x}:Q", axis=axis, scale=scale), alt.Y(f"{y}:Q", axis=axis, scale=scale)


def _node_layer(nodes: pl.DataFrame, weight: str) -> alt.Chart:
    """The agents as discs: size their traffic, colour their kind (only the kinds present)."""
    x, y = _xy("x", "y")
    present = [t for k, t in _KIND_TITLES.items() if t in set(nodes["kind"].to_list())]
    layer: alt.Chart = (
        alt.Chart(nodes)
        .mark_circle(opacity=0.95, stroke="white")
        .encode(
            x=x,
            y=y,
            size=alt.Size(
                "traffic:Q",
                scale=alt.Scale(range=[40, 260]),
                title=f"traffic ({_weight_title(weight)})",
            ),
            fill=alt.Fill(
                "kind:N",
                scale=alt.Scale(
                    domain=present,
                    range=[c for k, c in _KIND_COLORS.items() if _KIND_TITLES[k] in present],
                ),
                title="agent kind",
            ),
            tooltip=["agent:N", alt.Tooltip("kind:N", title="agent kind"), "traffic:Q"],
        )
    )
    return layer


def _labels(nodes: pl.DataFrame) -> list[alt.Chart]:
    """The agents' names outside the circle."""
    lx, ly = _xy("lx", "ly")
    # text alignment is a mark property, not a channel: one layer per side of the circle
    return [
        alt.Chart(nodes.filter(pl.col("align") == side))
        .mark_text(fontSize=11, align=side, baseline="middle")
        .encode(x=lx, y=ly, text="agent:N")
        for side in ("left", "center", "right")
    ]


def graph_chart(
    g: nx.DiGraph,
    *,
    weight: str = "messages",
    top_edges: int = 40,
    title: str = "Agent interaction graph",
) -> alt.LayerChart:
    """Draw the interaction graph: agents on a circle, requester → target arrows.

    A circle keeps 15–30 agents and their names apart, where a force layout of a dense
    coordination graph is a hairball; past :func:`legible_as_node_link` use
    :func:`graph_matrix` (:func:`graph_view` chooses). Only the ``top_edges`` heaviest edges
    by ``weight`` are drawn (the subtitle says how many of how many). Each directed edge ends
    in an arrowhead at its target; the two directions of a pair run side by side. Edge width
    follows ``weight``, colour the edge's no-reply share (zero-anchored, so 0 % and 10 %
    differ), dashes mark delegations (spawns; in the legend only when there are any). Node
    size is the agent's traffic, colour its kind (only the kinds present). Agents are placed
    by kind, then by traffic, so the positions do not depend on a random seed.
    """
    traffic = _traffic(g, weight)
    nodes, pos = _circle(g, traffic)
    kept, total = _graph_edges(g, weight, top_edges)
    edges = _guard(_arrows(kept, pos, weight), "graph_chart edges")
    nodes = _guard(nodes, "graph_chart nodes")
    x, y = _xy("x", "y")
    top_share = edges["no_reply_share"].max()
    colour = alt.Color(
        "no_reply_share:Q",
        title="no-reply share",
        legend=alt.Legend(format=".0%"),
        scale=alt.Scale(
            domain=[0, max(number(top_share or 0), 0.05)], range=["#9ab0c9", "#c62828"]
        ),
    )
    tooltip = [*_edge_tooltip(weight), alt.Tooltip("edge:N", title="edge kind")]
    kinds = [k for k in ("request", "delegation") if k in set(edges["edge"].to_list())]
    edge_layer = (
        alt.Chart(edges)
        .mark_rule(opacity=0.7)
        .encode(
            x=x,
            y=y,
            x2="x2:Q",
            y2="y2:Q",
            color=colour,
            strokeWidth=alt.StrokeWidth(
                "weight:Q", scale=alt.Scale(range=[0.6, 6], zero=False), title=_weight_title(weight)
            ),
            strokeDash=alt.StrokeDash(
                "edge:N",
                scale=alt.Scale(
                    domain=kinds, range=[[1, 0] if k == "request" else [4, 3] for k in kinds]
                ),
                title="edge kind",
                legend=alt.Legend() if "delegation" in kinds else None,
            ),
            tooltip=tooltip,
        )
    )
    ax, ay = _xy("x2", "y2")
    arrows = (
        alt.Chart(edges)
        .mark_point(shape="triangle-up", filled=True, size=70, opacity=0.9)
        .encode(x=ax, y=ay, angle=alt.Angle("angle:Q", scale=None), color=colour, tooltip=tooltip)
    )
    node_layer = _node_layer(nodes, weight)
    shown = (
        f"top {len(kept)} of {total} edges by {weight}" if len(kept) < total else f"{total} edges"
    )
    chart = alt.layer(edge_layer, arrows, node_layer, *_labels(nodes))
    if not isinstance(chart, alt.LayerChart):  # alt.layer facets only layers with facet channels
        raise TypeError(f"expected a layered chart, got {type(chart).__name__}")
    out: alt.LayerChart = chart.properties(
        title=alt.TitleParams(
            title, subtitle=f"{len(g)} agents, {shown}; arrow = requester → target"
        ),
        width=_GRAPH_WIDTH,
        height=_GRAPH_HEIGHT,
    )
    return out


def _blocks(communities: list[list[str]]) -> pl.DataFrame:
    """Every (requester, target) cell inside a community: the shaded diagonal blocks."""
    rows = [
        {"from": a, "to": b, "community": i}
        for i, members in enumerate(communities, start=1)
        if len(members) > 1
        for a in members
        for b in members
    ]
    frame = pl.DataFrame(rows, schema={"from": pl.String, "to": pl.String, "community": pl.Int64})
    # a huge community would exceed what a chart embeds: then no shading, the order stays
    return frame if frame.height <= MAX_ROWS else frame.clear()


def graph_matrix(
    g: nx.DiGraph, *, weight: str = "messages", title: str = "Requester × target"
) -> alt.LayerChart:
    """The interaction graph as a requester × target matrix: every edge, direction by axis.

    Never a hairball: rows are requesters, columns targets, both in the order of
    :func:`graph_communities` (busiest community first, busiest agent first within it), each
    community of more than one agent a shaded block on the diagonal. Colour and
    label are the edge's ``weight`` (scale from zero); the tooltip adds exchanges, no-reply
    share, the median first reply and the community.
    """
    communities = graph_communities(g, weight=weight)
    order = [n for c in communities for n in c]
    member = {n: i for i, c in enumerate(communities, start=1) for n in c}
    edges = sorted(g.edges(data=True), key=lambda e: (e[0], e[1]))
    cells = _guard(
        _edge_frame(edges, weight).with_columns(
            pl.Series(
                "community",
                [member[a] if member[a] == member[b] else None for a, b, _ in edges],
                dtype=pl.Int64,
            )
        ),
        "graph_matrix",
    )
    top = number(cells["weight"].max() or 1)
    sort = _shown(order)
    x = alt.X("to:N", sort=sort, title="target", axis=alt.Axis(labelAngle=-40, orient="top"))
    y = alt.Y("from:N", sort=sort, title="requester")
    shade = (
        alt.Chart(_guard(_blocks(communities), "graph_matrix blocks"))
        .mark_rect(color="#e3e9f2")
        .encode(x=x, y=y, tooltip=[alt.Tooltip("community:Q", title="community")])
    )
    base = alt.Chart(cells).encode(x=x, y=y)
    rect = base.mark_rect(stroke="#d0d0d0", strokeWidth=0.5).encode(
        color=alt.Color(
            "weight:Q",
            title=_weight_title(weight),
            scale=alt.Scale(scheme="blues", domain=[0, top]),
        ),
        tooltip=[*_edge_tooltip(weight), alt.Tooltip("community:Q", title="community")],
    )
    text = base.mark_text(fontSize=8).encode(
        text=alt.Text("weight:Q", format="d"),
        color=alt.condition(f"datum.weight > {top / 2}", alt.value("white"), alt.value("black")),
    )
    grouped = sum(1 for c in communities if len(c) > 1)
    subtitle = (
        f"{len(order)} agents, {len(edges)} edges; ordered by community "
        f"(greedy modularity; {grouped} of more than one agent, shaded)"
    )
    chart = alt.layer(shade, rect, text)
    if not isinstance(chart, alt.LayerChart):  # alt.layer facets only layers with facet channels
        raise TypeError(f"expected a layered chart, got {type(chart).__name__}")
    out: alt.LayerChart = chart.properties(
        title=alt.TitleParams(title, subtitle=subtitle), width=alt.Step(22), height=alt.Step(18)
    )
    return out


def graph_view(g: nx.DiGraph, *, weight: str = "messages", top_edges: int = 40) -> alt.LayerChart:
    """The graph as a reader can follow it: :func:`graph_chart` when
    :func:`legible_as_node_link`, else :func:`graph_matrix` (see the module notes)."""
    if legible_as_node_link(g):
        return graph_chart(g, weight=weight, top_edges=top_edges)
    return graph_matrix(g, weight=weight)


def graph_overview(
    g: nx.DiGraph, *, weight: str = "messages", top_edges: int = 40
) -> alt.HConcatChart:
    """:func:`graph_chart` and :func:`graph_matrix` side by side, each with its own colour scale."""
    out: alt.HConcatChart = alt.hconcat(
        graph_chart(g, weight=weight, top_edges=top_edges), graph_matrix(g, weight=weight)
    ).resolve_scale(color="independent", size="independent", strokeWidth="independent")
    return out
