"""The fixed colours of every view: one colour per event family, outcome and status.

A colour means the same thing in every chart, table and report, whatever the log holds:
the palettes map fixed names to fixed colours (never the order in which a log happens to
show them). Names a palette does not list get :data:`OTHER_COLOR`. This module imports
nothing heavy, so HTML widgets use it without loading Altair; :mod:`~a2a_lab.views.plots`
builds its scales from the same dictionaries.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "EVENT_FAMILY_COLORS",
    "MESSAGE_KIND_COLORS",
    "OTHER_COLOR",
    "OUTCOME_COLORS",
    "SESSION_STATUS_COLORS",
    "SEVERITY_COLORS",
    "THREAD_STATUS_COLORS",
    "color_of",
]

#: Colour of any name a palette does not list.
OTHER_COLOR = "#757575"

#: Event families (the part of ``type`` before the first dot).
EVENT_FAMILY_COLORS: Mapping[str, str] = {
    "a2a": "#4c78a8",
    "task": "#54a24b",
    "plan": "#b279a2",
    "continuation": "#72b7b2",
    "unblock": "#eeca3b",
    "resume_reminder": "#ff9da6",
    "backlog": "#9d755d",
    "milestone": "#f58518",
    "zombie": "#e45756",
}

#: Exchange outcomes of :func:`a2a_lab.conversations`.
OUTCOME_COLORS: Mapping[str, str] = {
    "replied": "#4c78a8",
    "no_reply": "#e45756",
    "concurrency_blocked": "#f58518",
    "incomplete": "#9d9d9d",
}

#: Severities of :func:`a2a_lab.analysis.checks.check` findings.
SEVERITY_COLORS: Mapping[str, str] = {"info": "#9d9d9d", "warning": "#f58518", "error": "#e45756"}

#: Thread status badges of the report (what became of the thread's last exchange).
THREAD_STATUS_COLORS: Mapping[str, str] = {
    "active": "#2e7d32",
    "replied": "#4c78a8",
    "no reply": "#c62828",
    "blocked": "#e65100",
    "incomplete": "#757575",
}

#: Work-session statuses of the dashboard.
SESSION_STATUS_COLORS: Mapping[str, str] = {
    "ACTIVE": "#2e7d32",
    "QUIET": "#546e7a",
    "ARCHIVED": "#9e9e9e",
}

#: Message kinds of :func:`a2a_lab.views.threads.thread_messages`.
MESSAGE_KIND_COLORS: Mapping[str, str] = {
    "no_reply": "#c62828",
    "refused": "#e65100",
    "outcome": "#6a1b9a",
    "retry": "#f9a825",
    "complete": "#616161",
    "message": "#1565c0",
    "reply": "#2e7d32",
    "turn": "#00897b",
    "spawn": "#8d6e63",
    "spawn_result": "#bcaaa4",
    "auto_route": "#00acc1",
    # other kinds are event families (``task``, ``plan``, …): the family's colour
    **{k: v for k, v in EVENT_FAMILY_COLORS.items() if k != "a2a"},
}


def color_of(palette: Mapping[str, str], name: str | None) -> str:
    """The colour of ``name`` in ``palette``, :data:`OTHER_COLOR` when it is not listed.

    Examples
    --------
    >>> color_of(OUTCOME_COLORS, "no_reply"), color_of(OUTCOME_COLORS, "something new")
    ('#e45756', '#757575')
    """
    return palette.get(name or "", OTHER_COLOR)
