"""The announce decision (runtime §2 step 5; reference ``shouldRunAnnounce``).

After the ping-pong the reference may post a summary of the exchange to the target's
channel. It does not when there is no announce target, when the latest reply is blank, when
the channel is ``internal``, or when both session keys are agent sessions (``main``, ``a2a:``
or ``subagent:`` keys), i.e. the whole exchange stayed between agents.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from a2a_lab.reference.jsstr import js_trim
from a2a_lab.reference.runtime.js import JS_FLAGS_I

#: An agent-internal session key (reference: ``/^agent:[^:]+:(main|a2a:|subagent:)/i``).
AGENT_SESSION_KEY: Final = re.compile("agent:[^:]+:(main|a2a:|subagent:)", JS_FLAGS_I)

#: The announce target channel that never gets an announcement.
INTERNAL_CHANNEL: Final = "internal"


@dataclass(frozen=True, slots=True)
class AnnounceTarget:
    """Where an announcement would be posted (reference ``AnnounceTarget``)."""

    channel: str
    to: str


def is_agent_session_key(session_key: str) -> bool:
    """Whether a session key belongs to an agent itself (main, A2A or sub-agent session).

    Examples
    --------
    >>> is_agent_session_key("agent:ruda:main"), is_agent_session_key("agent:ruda:discord:group:1")
    (True, False)
    """
    return AGENT_SESSION_KEY.match(session_key) is not None


def should_run_announce(
    target: AnnounceTarget | None,
    latest_reply: str | None = None,
    requester_session_key: str | None = None,
    target_session_key: str | None = None,
) -> bool:
    """Whether the announce step runs (reference ``shouldRunAnnounce``).

    Parameters
    ----------
    target
        The resolved announce target, or None.
    latest_reply
        The last reply of the exchange.
    requester_session_key, target_session_key
        The two session keys; when BOTH are given and both are agent sessions, the exchange
        is internal and not announced.

    Returns
    -------
    bool
        False when there is no target, the reply is blank (JavaScript trim), the channel is
        ``internal`` or both keys are agent sessions; else True.

    Examples
    --------
    >>> should_run_announce(AnnounceTarget("discord", "123"), "Task completed")
    True
    >>> should_run_announce(AnnounceTarget("internal", "123"), "Hello")
    False
    >>> should_run_announce(AnnounceTarget("discord", "1"), "Hi", "agent:a:main", "agent:b:a2a:c1")
    False
    """
    if target is None or not js_trim(latest_reply or ""):
        return False
    if target.channel == INTERNAL_CHANNEL:
        return False
    if requester_session_key and target_session_key:
        return not (
            is_agent_session_key(requester_session_key) and is_agent_session_key(target_session_key)
        )
    return True
