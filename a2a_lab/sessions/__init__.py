"""Work sessions and the dashboard's queries, number for number (rules §7-§8).

:func:`work_sessions` groups ENRICHED events (the output of :func:`a2a_lab.enrich`) into
the reference dashboard's work sessions and conversation threads, filtered by one
:class:`SessionQuery` (the ``GET /api/work-sessions`` query); :func:`events_query` is
``GET /api/events``. Both are vectorised Polars; only :meth:`WorkSessionsResult.to_api`
and :meth:`EventsResult.to_api` build Python objects, for the (limited) output.

The defaults reproduce the reference exactly, quirks included. Two documented modes
correct what analysts usually want corrected:

* ``SessionQuery(lifecycle_terminal=True)``: ``task.completed`` / ``task.cancelled`` end
  a session (QUIET) even though real ones carry no ``status`` (the reference only reads
  the status);
* ``SessionQuery(unassigned=True)``: events without a ``workSessionId`` (which the
  reference leaves out) form one extra session, ``id = "unassigned"``,
  ``workSessionId = null``.

The code is split by concept: ``_build`` (work sessions and threads), ``_session_query``
(their filters as one value), ``_overrides`` (category overrides), ``_query``
(``GET /api/events``), ``_objects`` (the reference's enriched event objects of the JSON
output), ``_js`` (JavaScript semantics of the query values, rules §8.0) and ``_stored``
(work sessions from per-session aggregates, which a history store keeps).
"""

from a2a_lab.sessions._build import (
    LIFECYCLE_TERMINAL_TYPES,
    UNASSIGNED_SESSION_ID,
    WorkSessionsResult,
    work_sessions,
)
from a2a_lab.sessions._js import Filter, Limit, Now, js_number, limit_count
from a2a_lab.sessions._objects import event_objects
from a2a_lab.sessions._overrides import load_overrides
from a2a_lab.sessions._query import EventsResult, events_query
from a2a_lab.sessions._session_query import STATUSES, SessionQuery
from a2a_lab.sessions._stored import (
    AGGREGATE_COLUMNS,
    session_aggregates,
    session_id_expr,
    sessions_from_aggregates,
)

__all__ = [
    "AGGREGATE_COLUMNS",
    "LIFECYCLE_TERMINAL_TYPES",
    "STATUSES",
    "UNASSIGNED_SESSION_ID",
    "EventsResult",
    "Filter",
    "Limit",
    "Now",
    "SessionQuery",
    "WorkSessionsResult",
    "event_objects",
    "events_query",
    "js_number",
    "limit_count",
    "load_overrides",
    "session_aggregates",
    "session_id_expr",
    "sessions_from_aggregates",
    "work_sessions",
]
