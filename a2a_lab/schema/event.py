"""Pydantic models of one coordination event: the single source of truth for its shape.

The reference writes one ``JSON.stringify(event)`` per line with the fields
``type, agentId, ts, data`` (rules §9). Every ``data`` field that the Task-Monitor rules or
the A2A runtime read is declared on :class:`EventData`; unknown fields are allowed and kept.
The Polars dtypes of the event frame are derived from these annotations
(:func:`a2a_lab.schema.polars_schema`), never written a second time.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

# the names of fields, here before pydantic existed, need no pydantic (a2a_lab.schema._names)
from a2a_lab.schema._names import FRAME_COLUMN_NAMES as FRAME_COLUMN_NAMES
from a2a_lab.schema._names import LOG_FIELD_NAMES as LOG_FIELD_NAMES
from a2a_lab.schema._names import REFERENCE_FIELD_ORDER as REFERENCE_FIELD_ORDER

#: A JSON number as JavaScript sees it: int or float, never bool, never NaN/Infinity.
JsonNumber = Annotated[StrictInt | StrictFloat, Field(allow_inf_nan=False)]

_STRICT = ConfigDict(extra="allow", strict=True, allow_inf_nan=False, populate_by_name=True)


class EventData(BaseModel):
    """The ``data`` record of a coordination event (every field optional).

    Field groups follow the reference: agents and session keys (rules §3-§4), conversation
    and work-session ids (runtime §6), roles and categories (rules §5-§6), the A2A exchange
    (runtime §2-§3), retries (runtime §2, §4), spawn / collaborate fields (runtime §7) and the
    structured payload (runtime §8).
    """

    model_config = _STRICT

    # agents (rules §3) and planned collaboration ids (runtime §7)
    fromAgent: StrictStr | None = None
    toAgent: StrictStr | None = None
    senderAgentId: StrictStr | None = None
    targetAgentId: StrictStr | None = None
    fromAgentId: StrictStr | None = None
    toAgentId: StrictStr | None = None
    agentId: StrictStr | None = None
    # session types and keys (rules §4)
    fromSessionType: StrictStr | None = None
    toSessionType: StrictStr | None = None
    sourceSessionKey: StrictStr | None = None
    requesterSessionKey: StrictStr | None = None
    sessionKey: StrictStr | None = None
    targetSessionKey: StrictStr | None = None
    # ids (runtime §6)
    conversationId: StrictStr | None = None
    parentConversationId: StrictStr | None = None
    workSessionId: StrictStr | None = None
    taskId: StrictStr | None = None
    runId: StrictStr | None = None
    threadId: StrictStr | None = None
    parentChannelId: StrictStr | None = None
    depth: JsonNumber | None = None
    hop: JsonNumber | None = None
    # role and category (rules §5-§6)
    eventRole: StrictStr | None = None
    collabCategory: StrictStr | None = None
    collabSubTags: list[StrictStr] | None = None
    categoryConfidence: JsonNumber | None = None
    categorySource: StrictStr | None = None
    categoryVersion: StrictStr | None = None
    collabIntent: StrictStr | None = None
    # text fields read by the category rules (rules §6)
    label: StrictStr | None = None
    message: StrictStr | None = None
    replyPreview: StrictStr | None = None
    description: StrictStr | None = None
    summary: StrictStr | None = None
    reason: StrictStr | None = None
    title: StrictStr | None = None
    # the exchange (runtime §2-§3)
    status: StrictStr | None = None
    state: StrictStr | None = None
    outcome: StrictStr | None = None
    waitStatus: StrictStr | None = None
    waitError: StrictStr | None = None
    turn: JsonNumber | None = None
    maxTurns: JsonNumber | None = None
    messageIntent: StrictStr | None = None
    announced: StrictBool | None = None
    announceSkipped: StrictBool | None = None
    concurrencyBlocked: StrictBool | None = None
    configuredMaxTurns: JsonNumber | None = None
    effectiveTurns: JsonNumber | None = None
    actualTurns: JsonNumber | None = None
    earlyTermination: StrictBool | None = None
    terminationReason: StrictStr | None = None
    timeoutSeconds: JsonNumber | None = None
    # retries (runtime §2, §4)
    attempt: JsonNumber | None = None
    maxAttempts: JsonNumber | None = None
    errorCategory: StrictStr | None = None
    errorCode: StrictStr | None = None
    errorMessage: StrictStr | None = None
    backoffMs: JsonNumber | None = None
    elapsedMs: JsonNumber | None = None
    # collaboration (runtime §7)
    mode: StrictStr | None = None
    # structured payload (runtime §8)
    payloadType: StrictStr | None = None
    payloadJson: StrictStr | None = None


class CoordinationEvent(BaseModel):
    """One line of ``coordination-events.ndjson``.

    Examples
    --------
    >>> ev = CoordinationEvent.model_validate_json('{"type":"a2a.send","ts":1,"data":{"fromAgent":"ruda"}}')
    >>> ev.data.fromAgent
    'ruda'
    """

    model_config = _STRICT

    type: StrictStr
    agentId: StrictStr | None = None
    ts: JsonNumber | None = None
    timestampMs: JsonNumber | None = None
    timestamp: StrictStr | None = None
    status: StrictStr | None = None
    data: EventData = Field(default_factory=EventData)
