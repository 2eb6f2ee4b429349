"""The event types the reference dashboard reads (rules §1), as the bundled sample holds them."""

from __future__ import annotations

REFERENCE_EVENT_TYPES = (
    "a2a.send",
    "a2a.response",
    "a2a.complete",
    "a2a.spawn",
    "a2a.spawn_result",
    "a2a.retry",
    "a2a.auto_route",
    "task.started",
    "task.updated",
    "task.blocked",
    "task.resumed",
    "task.completed",
    "task.cancelled",
    "continuation.sent",
    "continuation.complete",
    "plan.submitted",
    "plan.approved",
    "unblock.requested",
    "milestone.sync_failed",
)
