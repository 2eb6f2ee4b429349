"""The filters of ``GET /api/work-sessions`` as one value: :class:`SessionQuery`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from a2a_lab.reference.rules import RuleSet
from a2a_lab.sessions._js import Filter, Limit, _as_string, _csv_values
from a2a_lab.time import Instant

#: Work-session statuses, in the reference's declared order.
STATUSES: tuple[str, ...] = ("ACTIVE", "QUIET", "ARCHIVED")


@dataclass(frozen=True, kw_only=True)
class SessionQuery:
    """Which work sessions :func:`~a2a_lab.sessions.work_sessions` returns, and how many.

    The first six fields mirror the dashboard's query parameters (``role``, ``type``,
    ``status``, ``viewCategory``, ``subTag``, ``limit``) with the reference's semantics
    (rules §8.0); :meth:`from_params` reads them from a query string. The default query
    (``SessionQuery()``) filters nothing and reproduces the reference exactly. A query is
    a frozen value: :func:`dataclasses.replace` makes a variant, and equal queries give
    equal results.

    Attributes
    ----------
    roles, types, status
        Lists, or comma-separated strings, as the query parameters ``role``, ``type``,
        ``status``: values are split on commas and JS-trimmed; invalid roles and statuses
        are dropped and none left means no filter. Roles and types filter events BEFORE
        sessions are built; status filters built sessions.
    view_category
        Keep sessions of exactly this category (JS-trimmed); ``"all"`` or None: all.
    sub_tag
        Keep sessions with this sub-tag, compared case-insensitively (JavaScript
        lower-casing), exactly.
    limit
        The page size of :meth:`WorkSessionsResult.to_api`, with JavaScript
        ``Number(limit) || 100`` semantics (None, 0, ``"0"``, ``"abc"`` → 100, ``"-3"`` → 1).
        The frames of the result hold every matched session.
    lifecycle_terminal
        Non-default: ``task.completed`` / ``task.cancelled`` are terminal without a status.
    unassigned
        Non-default: events without a workSessionId form the session ``"unassigned"``.
    since, until
        Optional time window, both inclusive, on ``event_ms`` (ISO string, datetime or
        epoch ms; naive = UTC): sessions are built from the events inside it only.

    Examples
    --------
    >>> SessionQuery.from_params({"role": "conversation.main", "limit": "5"})
    SessionQuery(roles='conversation.main', limit='5')
    """

    roles: Filter = None
    types: Filter = None
    status: Filter = None
    view_category: str | None = None
    sub_tag: str | None = None
    limit: Limit = None
    lifecycle_terminal: bool = False
    unassigned: bool = False
    since: Instant | None = None
    until: Instant | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> SessionQuery:
        """The query of an HTTP query string's parameters (``role``, ``type``, …, ``limit``).

        Parameters
        ----------
        params
            Parameter name → value, as the dashboard's handler reads them; other names
            are ignored, as the reference ignores them.

        Returns
        -------
        SessionQuery
            The six reference filters set, the non-default modes off.
        """
        get = params.get
        return cls(
            roles=get("role"),
            types=get("type"),
            status=get("status"),
            view_category=get("viewCategory"),
            sub_tag=get("subTag"),
            limit=get("limit"),
        )

    def __repr__(self) -> str:
        # only the fields that differ from the default: a query prints as it was written
        changed = (
            f"{name}={value!r}"
            for name, value in vars(self).items()
            if value != type(self).__dataclass_fields__[name].default
        )
        return f"SessionQuery({', '.join(changed)})"

    def echo(self, rules: RuleSet) -> dict[str, Any]:
        """The filters as the reference echoes them (``role``, ``type``, ``status``, …).

        Roles and statuses the rule set does not know are dropped, as the reference drops
        them; an empty list or None is no filter.
        """
        return {
            "role": [r for r in _csv_values(self.roles) if r in rules.event_roles],
            "type": _csv_values(self.types),
            "status": [s for s in _csv_values(self.status) if s in STATUSES],
            "viewCategory": _as_string(self.view_category),
            "subTag": _as_string(self.sub_tag),
        }
