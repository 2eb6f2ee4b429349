"""a2a_lab: analyse, check and simulate multi-agent (A2A) coordination event logs.

One import serves a notebook::

    import a2a_lab as al

    res = al.load(al.samples.sample_dir())          # events + load report
    enriched = al.enrich(res.events)                 # Task-Monitor enrichment (rules §1-§6)
    ws = al.work_sessions(enriched, now=...)         # work sessions (rules §7-§8)
    conv = al.conversations(enriched)                # one row per A2A exchange
    g = al.interaction_graph(enriched)               # networkx DiGraph of agents
    sim = al.simulate(al.SimConfig(), seed=1)        # a simulated log in the same schema

The data flows one way: ``schema → io → enrich → sessions → conversations / graph → plots``.
"""

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from a2a_lab._version import __version__

if TYPE_CHECKING:  # the names below load on first use (``a2a-lab --help`` imports no Polars)
    from a2a_lab import schema
    from a2a_lab.analysis.conversations import (
        conversations,
        delegation_reports,
        exchange_events,
        exchange_summary,
        pair_stats,
        payload_events,
        question_answers,
        status_timeline,
        target_stats,
    )
    from a2a_lab.enrich import ENRICHMENT_COLUMNS, enrich
    from a2a_lab.export import flatten, write_frame
    from a2a_lab.io import (
        IngestReport,
        LoadReport,
        LoadResult,
        LogFollower,
        from_records,
        ingest,
        load,
        scan,
        write_events,
    )
    from a2a_lab.reference.rules import TASK_MONITOR_V1, RuleSet, main_agents_from_openclaw
    from a2a_lab.schema import CoordinationEvent, EventData, polars_schema
    from a2a_lab.sessions import SessionQuery, WorkSessionsResult, events_query, work_sessions
    from a2a_lab.time import to_epoch_ms

__all__ = [
    "ENRICHMENT_COLUMNS",
    "RULES",
    "TASK_MONITOR_V1",
    "CheckLimits",
    "CoordinationEvent",
    "EventData",
    "IngestReport",
    "LoadReport",
    "LoadResult",
    "LogFollower",
    "RuleSet",
    "SessionQuery",
    "SimConfig",
    "WorkSessionsResult",
    "__version__",
    "calibrate",
    "check",
    "checks",
    "compare",
    "conversation_tree",
    "conversations",
    "delegation_reports",
    "directly_follows",
    "enrich",
    "events_query",
    "exchange_events",
    "exchange_summary",
    "fit_log",
    "flatten",
    "from_records",
    "graph_metrics",
    "ingest",
    "interaction_graph",
    "load",
    "load_findings",
    "load_otlp",
    "main_agents_from_openclaw",
    "message_counts",
    "pair_stats",
    "payload_events",
    "plots",
    "pm",
    "polars_schema",
    "question_answers",
    "report",
    "rules",
    "runtime",
    "samples",
    "scan",
    "schema",
    "sim",
    "simulate",
    "status_timeline",
    "target_stats",
    "threads",
    "to_epoch_ms",
    "to_node_link",
    "to_ocel2",
    "to_otlp",
    "variants",
    "work_sessions",
    "write_events",
    "write_frame",
    "write_graph",
    "write_ocel2",
]

# Sub-packages with data or heavy imports (altair, networkx) load on first use; the
# short names (``al.checks``) stay as they were before the layers got their folders.
_LAZY_MODULES = {
    "schema": "a2a_lab.schema",
    "samples": "a2a_lab.samples",
    "sim": "a2a_lab.sim",
    "runtime": "a2a_lab.reference.runtime",
    "rules": "a2a_lab.reference.rules",
    "reference": "a2a_lab.reference",
    "analysis": "a2a_lab.analysis",
    "views": "a2a_lab.views",
    "graph": "a2a_lab.analysis.graph",
    "checks": "a2a_lab.checks",
    "pm": "a2a_lab.analysis.pm",
    "calibrate": "a2a_lab.calibrate",
    "threads": "a2a_lab.views.threads",
    "plots": "a2a_lab.views.plots",
    "notebook": "a2a_lab.views.notebook",
    "otel": "a2a_lab.otel",
}
_LAZY_NAMES = {
    **dict.fromkeys(
        (
            "conversations",
            "delegation_reports",
            "exchange_events",
            "exchange_summary",
            "pair_stats",
            "payload_events",
            "question_answers",
            "status_timeline",
            "target_stats",
        ),
        "a2a_lab.analysis.conversations",
    ),
    "ENRICHMENT_COLUMNS": "a2a_lab.enrich",
    "enrich": "a2a_lab.enrich",
    "flatten": "a2a_lab.export",
    "write_frame": "a2a_lab.export",
    **dict.fromkeys(
        (
            "IngestReport",
            "LoadReport",
            "LoadResult",
            "LogFollower",
            "from_records",
            "ingest",
            "load",
            "scan",
            "write_events",
        ),
        "a2a_lab.io",
    ),
    "TASK_MONITOR_V1": "a2a_lab.reference.rules",
    "RuleSet": "a2a_lab.reference.rules",
    "main_agents_from_openclaw": "a2a_lab.reference.rules",
    "CoordinationEvent": "a2a_lab.schema",
    "EventData": "a2a_lab.schema",
    "polars_schema": "a2a_lab.schema",
    "SessionQuery": "a2a_lab.sessions",
    "WorkSessionsResult": "a2a_lab.sessions",
    "events_query": "a2a_lab.sessions",
    "work_sessions": "a2a_lab.sessions",
    "to_epoch_ms": "a2a_lab.time",
    "simulate": "a2a_lab.sim",
    "SimConfig": "a2a_lab.sim",
    "interaction_graph": "a2a_lab.analysis.graph",
    "graph_metrics": "a2a_lab.analysis.graph",
    "conversation_tree": "a2a_lab.analysis.graph",
    "write_graph": "a2a_lab.analysis.graph",
    "message_counts": "a2a_lab.analysis.graph",
    "to_node_link": "a2a_lab.analysis.graph",
    "check": "a2a_lab.analysis.checks",
    "CheckLimits": "a2a_lab.analysis.checks",
    "load_findings": "a2a_lab.analysis.checks",
    "RULES": "a2a_lab.analysis.checks",
    "fit_log": "a2a_lab.analysis.calibrate",
    "compare": "a2a_lab.analysis.calibrate",
    "directly_follows": "a2a_lab.analysis.pm",
    "variants": "a2a_lab.analysis.pm",
    "to_ocel2": "a2a_lab.analysis.pm",
    "write_ocel2": "a2a_lab.analysis.pm",
    "report": "a2a_lab.views.report",
    "to_otlp": "a2a_lab.otel",
    "load_otlp": "a2a_lab.otel",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        value = importlib.import_module(_LAZY_MODULES[name])
    elif name in _LAZY_NAMES:
        value = getattr(importlib.import_module(_LAZY_NAMES[name]), name)
    else:
        raise AttributeError(f"module 'a2a_lab' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """The package module: ``a2a_lab.enrich`` stays the function when its module loads.

    The import system binds a submodule to its package's attribute of the same name on
    its first import; ``enrich`` is both a module and the function the package exports
    under that name, which used to win because the package imported it eagerly.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _SHADOWED and isinstance(value, types.ModuleType):
            value = getattr(value, name)
        super().__setattr__(name, value)


#: Exported functions whose name is also a submodule's.
_SHADOWED = frozenset({"enrich"})

sys.modules[__name__].__class__ = _Package
