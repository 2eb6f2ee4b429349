"""Session keys → agent ids, and the A2A message context (reference ``sessions-send-helpers.ts``).

The target of a ``sessions_send`` receives the message with a context block naming both
sides (``buildAgentToAgentMessageContext``), as the reference wrote it at commit
``0b3325a28``: the requester and target agents with their session keys, the requester's
channel, an optional summary of the requester's recent context, and the rules of an
internal agent-to-agent conversation. (On ``main`` the summary is ignored.) Agent labels are
the bare agent ids, as the reference writes them when no agent names are configured.
"""

from __future__ import annotations

import re
from typing import Final

from a2a_lab.reference.jsstr import js_lower, js_trim
from a2a_lab.reference.runtime.js import JS_FLAGS_I

#: The agent id of a key that names none (reference ``DEFAULT_AGENT_ID``).
DEFAULT_AGENT_ID: Final = "main"

_VALID_ID: Final = re.compile("[a-z0-9][a-z0-9_-]{0,63}", JS_FLAGS_I)
_INVALID_CHARS: Final = re.compile("[^a-z0-9_-]+")

#: The closing lines of the context block (``0b3325a28``).
A2A_CONTEXT_RULES: Final[tuple[str, ...]] = (
    "**IMPORTANT**: This is an internal agent-to-agent conversation.",
    "- Use ONLY sessions_send to communicate with other agents.",
    "- NEVER use the message tool to send messages to Discord, Telegram, Slack, or any external"
    " channel for agent-to-agent communication.",
    "- If sessions_send times out or fails, report the failure — do NOT fall back to external"
    " messaging channels (Discord DM, etc.).",
    "- Do NOT mention or ping other agents on external channels.",
)


def normalize_agent_id(value: str | None) -> str:
    """A path-safe agent id (reference ``normalizeAgentId``).

    Examples
    --------
    >>> normalize_agent_id(" Ruda "), normalize_agent_id("Dev Team!"), normalize_agent_id("")
    ('ruda', 'dev-team', 'main')
    """
    trimmed = js_trim(value or "")
    if not trimmed:
        return DEFAULT_AGENT_ID
    if _VALID_ID.fullmatch(trimmed):
        return js_lower(trimmed)
    collapsed = _INVALID_CHARS.sub("-", js_lower(trimmed)).lstrip("-").rstrip("-")[:64]
    return collapsed or DEFAULT_AGENT_ID


def agent_id_from_session_key(session_key: str | None) -> str:
    """The agent id of a session key (reference ``resolveAgentIdFromSessionKey``).

    ``agent:<id>:<rest>`` (empty segments ignored, ``<rest>`` non-empty) gives the
    normalised ``<id>``; any other key gives :data:`DEFAULT_AGENT_ID`.

    Examples
    --------
    >>> agent_id_from_session_key("agent:seum:discord:channel:123")
    'seum'
    >>> agent_id_from_session_key("agent:seum"), agent_id_from_session_key(None)
    ('main', 'main')
    """
    parts = [part for part in js_trim(session_key or "").split(":") if part]
    if len(parts) < 3 or parts[0] != "agent" or not js_trim(parts[1]):
        return DEFAULT_AGENT_ID
    return normalize_agent_id(js_trim(parts[1]))


def build_agent_to_agent_message_context(
    target_session_key: str,
    requester_session_key: str | None = None,
    requester_channel: str | None = None,
    requester_context_summary: str | None = None,
) -> str:
    """The context block given to the target of an A2A message (reference, ``0b3325a28``).

    Parameters
    ----------
    target_session_key
        The target's session key.
    requester_session_key, requester_channel
        The requester's session key and channel, each line omitted when absent.
    requester_context_summary
        A summary of the requester's recent messages, included unless blank.

    Returns
    -------
    str
        The lines joined with newlines.

    Examples
    --------
    >>> print(build_agent_to_agent_message_context("agent:eden:main", "agent:seum:main").split("**")[0])
    Agent-to-agent message context:
    From: seum, session: agent:seum:main.
    To: eden, session: agent:eden:main.
    <BLANKLINE>
    """
    lines = [
        "Agent-to-agent message context:",
        requester_session_key
        and f"From: {agent_id_from_session_key(requester_session_key)}, session: {requester_session_key}.",
        requester_channel and f"From channel: {requester_channel}.",
        f"To: {agent_id_from_session_key(target_session_key)}, session: {target_session_key}.",
        requester_context_summary if js_trim(requester_context_summary or "") else None,
        *A2A_CONTEXT_RULES,
    ]
    return "\n".join(line for line in lines if line)
