"""The ``data`` fields a message's text comes from, shared by the views and the search index."""

from __future__ import annotations

__all__ = ["TEXT_FIELDS"]

#: The ``data`` fields a message's text comes from, in order (the first present one is the
#: text a message view shows, :mod:`a2a_lab.views.labels`).
TEXT_FIELDS: tuple[str, ...] = (
    "message",
    "replyPreview",
    "summary",
    "reason",
    "description",
    "label",
    "errorMessage",
    "waitError",
)
