"""Structured hand-off payloads (runtime §8): models, the reference validation, a safe parser.

An ``a2a.send`` or ``a2a.response`` may carry ``data.payloadJson``, a JSON object whose
``type`` is one of ``task_delegation``, ``status_report``, ``question`` or ``answer``. The
reference (``a2a-payload-parser.ts``: ``parseA2APayload`` / ``validateA2APayload``) accepts a
payload only if every rule of its type holds, and otherwise falls back to the free-text
message. This module reproduces those rules exactly, error texts included:

* a required field must be a non-empty string (not trimmed: ``" "`` is accepted);
* an optional field, when its key is present (an explicit ``null`` counts), must have its
  type: a string, one of an enum (``priority``, ``urgency``; ``status`` is required), a
  number in an inclusive range (``progressPercent`` 0-100, ``confidence`` 0.0-1.0; JSON
  ``true`` is not a number), or an array whose items are all strings; ``deadline`` need only
  be a string;
* unknown extra fields are kept (forward compatibility);
* every failing rule is reported, in the reference's order.

The pydantic models are the typed view of a valid payload: their ``before`` validator runs
the same rules and raises one error per failing rule, so a model can never hold a payload the
reference would reject. :func:`parse_payload` never raises; :func:`parse_payloads` applies it
to the (few) events of a frame that carry a ``payloadJson``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal

import polars as pl
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from a2a_lab.reference.runtime.js import (
    UNDEFINED,
    is_js_number,
    js_number_str,
    js_round,
    js_string,
)
from a2a_lab.reference.strict_json import reject_constant as _reject_constant

#: The payload types, in the reference's order.
PAYLOAD_TYPES: Final[tuple[str, ...]] = ("task_delegation", "status_report", "question", "answer")
#: ``task_delegation.priority`` values (reference ``VALID_PRIORITIES``, in its order).
PRIORITIES: Final[tuple[str, ...]] = ("critical", "high", "medium", "low")
#: ``status_report.status`` values (reference ``VALID_STATUSES``).
REPORT_STATUSES: Final[tuple[str, ...]] = ("in_progress", "completed", "blocked", "failed")
#: ``question.urgency`` values (reference ``VALID_URGENCIES``).
URGENCIES: Final[tuple[str, ...]] = ("urgent", "normal", "low")

#: Errors for inputs the reference's ``parseA2APayload`` rejects before validating (it only
#: returns ``null``; these texts are a2a_lab's).
NOT_A_STRING_ERROR: Final = "payloadJson must be a string"
INVALID_JSON_ERROR: Final = "payloadJson is not valid JSON"
NOT_AN_OBJECT_ERROR: Final = "payloadJson must be a JSON object"

# validation context telling the models that the reference rules have already passed
_PREVALIDATED: Final[dict[str, bool]] = {"prevalidated": True}

_FieldRule = tuple[str, str, tuple[Any, ...]]

# One row per check, in the reference's order: (field, kind, arguments).
#   required     non-empty string
#   string       optional string                       (message)
#   enum         optional member of a set               (values)
#   status       required string that must be in a set  (values)
#   range        optional number within [lo, hi]        (lo, hi, message)
#   string_list  optional array of strings
_RULES: Final[Mapping[str, tuple[_FieldRule, ...]]] = {
    "task_delegation": (
        ("taskId", "required", ()),
        ("taskTitle", "required", ()),
        ("taskDescription", "required", ()),
        ("priority", "enum", (PRIORITIES,)),
        ("deadline", "string", ("deadline must be a string (ISO 8601)",)),
        ("context", "string", ("context must be a string",)),
        ("acceptanceCriteria", "string_list", ()),
    ),
    "status_report": (
        ("taskId", "required", ()),
        ("status", "status", (REPORT_STATUSES,)),
        (
            "progressPercent",
            "range",
            (0, 100, "progressPercent must be a number between 0 and 100"),
        ),
        ("completedWork", "string", ("completedWork must be a string",)),
        ("remainingWork", "string", ("remainingWork must be a string",)),
        ("blockers", "string_list", ()),
        ("artifacts", "string_list", ()),
    ),
    "question": (
        ("questionId", "required", ()),
        ("question", "required", ()),
        ("urgency", "enum", (URGENCIES,)),
        ("context", "string", ("context must be a string",)),
        ("options", "string_list", ()),
    ),
    "answer": (
        ("questionId", "required", ()),
        ("answer", "required", ()),
        ("confidence", "range", (0, 1, "confidence must be a number between 0.0 and 1.0")),
        ("references", "string_list", ()),
    ),
}


def _check(field: str, kind: str, args: tuple[Any, ...], obj: Mapping[str, Any]) -> str | None:
    """The error of one rule for ``obj``, or None when it holds."""
    present = field in obj
    value = obj.get(field)
    if kind == "required" or kind == "status":
        # reference: `!x || typeof x !== "string"` (so "" fails, "  " passes)
        if not (isinstance(value, str) and value):
            return f"{field} is required and must be a string"
        if kind == "status" and value not in args[0]:
            return f"{field} must be one of: {', '.join(args[0])}"
        return None
    if not present:
        return None
    if kind == "string":
        return None if isinstance(value, str) else args[0]
    if kind == "enum":
        # isinstance first: a list or dict value must not reach the (hashing) membership test
        if isinstance(value, str) and value in args[0]:
            return None
        return f"{field} must be one of: {', '.join(args[0])}"
    if kind == "range":
        lo, hi, message = args
        # `not (lo <= v <= hi)` also rejects NaN, which JSON cannot carry anyway
        return None if is_js_number(value) and lo <= value <= hi else message
    if not isinstance(value, list):
        return f"{field} must be an array of strings"
    if not all(isinstance(item, str) for item in value):
        return f"{field} items must be strings"
    return None


def validate_payload(obj: Mapping[str, Any]) -> tuple[str, ...]:
    """Check a decoded payload object like the reference ``validateA2APayload``.

    Parameters
    ----------
    obj
        The object decoded from ``payloadJson`` (a key that is present with value ``None``
        is a JSON ``null``, which the reference treats as present).

    Returns
    -------
    tuple of str
        Every error, in the reference's order and wording; empty when the payload is valid
        (the reference's ``errors: undefined``). An unknown or missing ``type`` gives the
        reference's ``Unknown payload type: <String(type)>``.

    Examples
    --------
    >>> for error in validate_payload({"type": "task_delegation", "taskTitle": "T", "priority": "P0"}):
    ...     print(error)
    taskId is required and must be a string
    taskDescription is required and must be a string
    priority must be one of: critical, high, medium, low
    >>> validate_payload({"type": "answer", "questionId": "q", "answer": "yes", "confidence": 1})
    ()
    """
    if not isinstance(obj, Mapping):
        return (NOT_AN_OBJECT_ERROR,)
    kind = obj.get("type", UNDEFINED)
    rules = _RULES.get(kind) if isinstance(kind, str) else None
    if rules is None:
        return (f"Unknown payload type: {js_string(kind)}",)
    errors = (_check(field, rule, args, obj) for field, rule, args in rules)
    return tuple(error for error in errors if error is not None)


class _Payload(BaseModel):
    """Base of the payload models: the reference rules run before any field is read."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True, allow_inf_nan=False)

    type: str

    @model_validator(mode="before")
    @classmethod
    def _reference_rules(cls, data: Any, info: ValidationInfo) -> Any:
        """Raise one error per failing reference rule, with the reference's text."""
        if info.context is _PREVALIDATED:  # parse_payload has just run the same rules
            return data
        kind = cls.model_fields["type"].default
        if isinstance(data, Mapping):
            # validate against the model's own type even if `type` is absent or another one
            checked = {**data, "type": kind}
            errors = validate_payload(checked)
            if data.get("type", kind) != kind:
                errors = (f"type must be {kind!r} for {cls.__name__}", *errors)
        else:
            errors = (NOT_AN_OBJECT_ERROR,)
        if errors:
            raise ValidationError.from_exception_data(
                cls.__name__,
                [
                    InitErrorDetails(
                        type=PydanticCustomError("a2a_payload", error),
                        loc=(error.split(" ", 1)[0],),  # every text starts with its field
                        input=data,
                    )
                    for error in errors
                ],
            )
        return data

    def to_json_obj(self) -> dict[str, Any]:
        """The payload as the JSON object it came from (absent fields stay absent, extras kept).

        Examples
        --------
        >>> Answer(questionId="q-1", answer="yes", note="extra").to_json_obj()
        {'type': 'answer', 'questionId': 'q-1', 'answer': 'yes', 'note': 'extra'}
        """
        return {"type": self.type, **self.model_dump(exclude_unset=True, exclude={"type"})}


_NonEmpty = Annotated[StrictStr, Field(min_length=1)]
_Number = StrictInt | StrictFloat


class TaskDelegation(_Payload):
    """Agent A delegates a task to agent B (``type: "task_delegation"``).

    Examples
    --------
    >>> TaskDelegation(taskId="t-1", taskTitle="Review", taskDescription="PR #42").priority is None
    True
    """

    type: Literal["task_delegation"] = "task_delegation"
    taskId: _NonEmpty
    taskTitle: _NonEmpty
    taskDescription: _NonEmpty
    context: StrictStr | None = None
    deadline: StrictStr | None = None
    priority: Literal["critical", "high", "medium", "low"] | None = None
    acceptanceCriteria: list[StrictStr] | None = None


class StatusReport(_Payload):
    """Agent B reports progress on a delegated task (``type: "status_report"``).

    Examples
    --------
    >>> StatusReport(taskId="t-1", status="in_progress", progressPercent=40).progressPercent
    40
    """

    type: Literal["status_report"] = "status_report"
    taskId: _NonEmpty
    status: Literal["in_progress", "completed", "blocked", "failed"]
    completedWork: StrictStr | None = None
    remainingWork: StrictStr | None = None
    blockers: list[StrictStr] | None = None
    progressPercent: Annotated[_Number, Field(ge=0, le=100)] | None = None
    artifacts: list[StrictStr] | None = None


class Question(_Payload):
    """An agent asks another agent a question (``type: "question"``).

    Examples
    --------
    >>> Question(questionId="q-1", question="Which one?", options=["A", "B"]).options
    ['A', 'B']
    """

    type: Literal["question"] = "question"
    questionId: _NonEmpty
    question: _NonEmpty
    context: StrictStr | None = None
    urgency: Literal["urgent", "normal", "low"] | None = None
    options: list[StrictStr] | None = None


class Answer(_Payload):
    """An agent answers a question, linked by ``questionId`` (``type: "answer"``).

    Examples
    --------
    >>> Answer(questionId="q-1", answer="A", confidence=0.9).confidence
    0.9
    """

    type: Literal["answer"] = "answer"
    questionId: _NonEmpty
    answer: _NonEmpty
    confidence: Annotated[_Number, Field(ge=0, le=1)] | None = None
    references: list[StrictStr] | None = None


#: Any structured payload; pydantic picks the model by the ``type`` field.
A2APayload = Annotated[
    TaskDelegation | StatusReport | Question | Answer, Field(discriminator="type")
]

_PAYLOAD_ADAPTER: Final[TypeAdapter[Any]] = TypeAdapter(A2APayload)


@dataclass(frozen=True, slots=True)
class PayloadResult:
    """What :func:`parse_payload` found in one event's ``payloadJson``.

    Attributes
    ----------
    payload
        The validated payload model, or None (no payload, or one the reference rejects).
    errors
        Why the payload was rejected (empty when it is valid or absent).
    kind
        The ``type`` inside the JSON when it is a string (also an unknown one), else None.
    payload_type
        The event's own ``payloadType`` as given.
    type_mismatch
        True when ``payload_type`` and ``kind`` are both present and differ.
    mismatch_message
        The report of that disagreement, or None.
    present
        Whether the event carried a ``payloadJson`` at all.
    """

    payload: TaskDelegation | StatusReport | Question | Answer | None
    errors: tuple[str, ...]
    kind: str | None
    payload_type: str | None
    type_mismatch: bool
    mismatch_message: str | None
    present: bool

    @property
    def valid(self) -> bool:
        """True when a payload was present and passed the reference validation."""
        return self.payload is not None


def parse_payload(payload_json: str | None, payload_type: str | None = None) -> PayloadResult:
    """Parse and validate one ``payloadJson`` like the reference; never raises.

    Parameters
    ----------
    payload_json
        The event's ``data.payloadJson`` (None when absent). Any other value is reported as
        an error rather than raised.
    payload_type
        The event's ``data.payloadType``, if any. It does not choose the model (the ``type``
        inside the JSON does); when it disagrees with that type, the result says so.

    Returns
    -------
    PayloadResult
        The payload (or None) with every validation error and the type agreement. Invalid
        JSON, a non-object, a missing/unknown ``type`` and failed rules all give
        ``payload=None`` with errors, as the reference falls back to free text.

    Examples
    --------
    >>> r = parse_payload('{"type":"question","questionId":"q-1","question":"Why?"}')
    >>> r.valid, r.payload.questionId, r.errors
    (True, 'q-1', ())
    >>> parse_payload('{"type":"status_report","taskId":"t","status":"done"}').errors
    ('status must be one of: in_progress, completed, blocked, failed',)
    >>> parse_payload('{"type":"answer","questionId":"q","answer":"A"}', "question").mismatch_message
    'payloadType "question" disagrees with the payloadJson type "answer"'
    >>> parse_payload("{").errors
    ('payloadJson is not valid JSON',)
    """
    kind: str | None = None
    payload = None
    if payload_json is None:
        errors: tuple[str, ...] = ()
    elif not isinstance(payload_json, str):
        errors = (NOT_A_STRING_ERROR,)
    else:
        try:
            obj = json.loads(payload_json, parse_constant=_reject_constant)
        except (ValueError, RecursionError):  # JSONDecodeError is a ValueError; deep nesting
            obj = UNDEFINED
        if obj is UNDEFINED:
            errors = (INVALID_JSON_ERROR,)
        elif not isinstance(obj, dict):
            errors = (NOT_AN_OBJECT_ERROR,)
        else:
            raw_kind = obj.get("type")
            kind = raw_kind if isinstance(raw_kind, str) else None
            errors = validate_payload(obj)
            if not errors:
                payload = _PAYLOAD_ADAPTER.validate_python(obj, context=_PREVALIDATED)
    mismatch = payload_type is not None and kind is not None and payload_type != kind
    return PayloadResult(
        payload=payload,
        errors=errors,
        kind=kind,
        payload_type=payload_type,
        type_mismatch=mismatch,
        mismatch_message=(
            f"payloadType {json.dumps(payload_type, ensure_ascii=False, default=repr)} disagrees "
            f"with the payloadJson type {json.dumps(kind, ensure_ascii=False)}"
            if mismatch
            else None
        ),
        present=payload_json is not None,
    )


def _lines(*parts: str | list[str] | None) -> str:
    """Join the non-empty parts with newlines (the reference's ``filter(Boolean).join``)."""
    return "\n".join(part for part in parts if isinstance(part, str) and part)


def _joined(label: str, items: list[str] | None) -> str | None:
    """``Label: a, b`` for a non-empty list."""
    return f"{label}: {', '.join(items)}" if items else None


def _percent(label: str, value: float | None, text: Callable[[float], str]) -> str | None:
    """``Label: N%`` for a number that is present (0 included)."""
    return None if value is None else f"{label}: {text(value)}%"


def build_payload_summary(payload: TaskDelegation | StatusReport | Question | Answer) -> str:
    """The reference's ``buildPayloadSummary``: a short text added to the A2A message context.

    Optional fields appear only when set (strings and lists only when non-empty, numbers
    whenever present); the confidence is printed as ``Math.round(confidence * 100)`` percent.

    Parameters
    ----------
    payload
        A validated payload model.

    Returns
    -------
    str
        One ``Label: value`` line per field, as the reference writes them.

    Examples
    --------
    >>> print(build_payload_summary(Answer(questionId="q-1", answer="Option A", confidence=0.845)))
    Question ID: q-1
    Answer: Option A
    Confidence: 85%
    >>> print(build_payload_summary(Question(questionId="q-2", question="Which?", options=["A", "B"])))
    Question ID: q-2
    Question: Which?
    Options:
      1. A
      2. B
    """
    if isinstance(payload, TaskDelegation):
        return _lines(
            f"Task ID: {payload.taskId}",
            f"Title: {payload.taskTitle}",
            f"Description: {payload.taskDescription}",
            payload.priority and f"Priority: {payload.priority}",
            payload.deadline and f"Deadline: {payload.deadline}",
            payload.acceptanceCriteria
            and "Acceptance Criteria:\n"
            + "\n".join(f"  - {c}" for c in payload.acceptanceCriteria),
        )
    if isinstance(payload, StatusReport):
        return _lines(
            f"Task ID: {payload.taskId}",
            f"Status: {payload.status}",
            _percent("Progress", payload.progressPercent, js_number_str),
            payload.completedWork and f"Completed: {payload.completedWork}",
            payload.remainingWork and f"Remaining: {payload.remainingWork}",
            _joined("Blockers", payload.blockers),
            _joined("Artifacts", payload.artifacts),
        )
    if isinstance(payload, Question):
        return _lines(
            f"Question ID: {payload.questionId}",
            f"Question: {payload.question}",
            payload.urgency and f"Urgency: {payload.urgency}",
            payload.context and f"Context: {payload.context}",
            payload.options
            and "Options:\n" + "\n".join(f"  {i}. {o}" for i, o in enumerate(payload.options, 1)),
        )
    return _lines(
        f"Question ID: {payload.questionId}",
        f"Answer: {payload.answer}",
        _percent("Confidence", payload.confidence, lambda c: str(js_round(c * 100))),
        _joined("References", payload.references),
    )


#: Columns of :func:`parse_payloads`, in order.
PAYLOAD_FRAME_SCHEMA: Final[pl.Schema] = pl.Schema(
    {
        "file": pl.String(),
        "line": pl.Int64(),
        "payload_type": pl.String(),
        "payload_kind": pl.String(),
        "payload_valid": pl.Boolean(),
        "payload_errors": pl.List(pl.String()),
        "payload_type_mismatch": pl.Boolean(),
        "payload_question_id": pl.String(),
        "payload_task_id": pl.String(),
        "payload_status": pl.String(),
        "payload_progress_percent": pl.Float64(),
        "payload_blockers": pl.List(pl.String()),
    }
)

_LINK_FIELDS: Final[tuple[tuple[str, str], ...]] = (
    ("payload_question_id", "questionId"),
    ("payload_task_id", "taskId"),
    ("payload_status", "status"),
    ("payload_progress_percent", "progressPercent"),
    ("payload_blockers", "blockers"),
)


def _row(file: str, line: int, result: PayloadResult) -> dict[str, Any]:
    """One output row of :func:`parse_payloads`."""
    row: dict[str, Any] = {
        "file": file,
        "line": line,
        "payload_type": result.payload_type,
        "payload_kind": result.kind,
        "payload_valid": result.valid,
        "payload_errors": list(result.errors),
        "payload_type_mismatch": result.type_mismatch,
    }
    payload = result.payload
    # declared fields only: an extra field of the same name may hold any JSON value
    declared = type(payload).model_fields if payload is not None else {}
    for column, name in _LINK_FIELDS:
        row[column] = getattr(payload, name) if name in declared else None
    return row


def parse_payloads(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """Parse the structured payload of every event that carries a ``payloadJson``.

    Only the rows whose ``data.payloadJson`` is not null are collected and parsed (payload
    events are a small minority of a log); identical ``(payloadJson, payloadType)`` pairs are
    parsed once.

    Parameters
    ----------
    frame
        An event frame (docs/architecture.md): at least ``file``, ``line`` and the ``data``
        struct with ``payloadType`` and ``payloadJson``.

    Returns
    -------
    pl.DataFrame
        One row per payload event, in frame order, with :data:`PAYLOAD_FRAME_SCHEMA`:
        ``file``, ``line`` (the join key back to the frame), the event's ``payload_type``,
        ``payload_kind`` (the ``type`` inside the JSON), ``payload_valid``,
        ``payload_errors``, ``payload_type_mismatch`` and the linking fields of a VALID
        payload (null otherwise): ``payload_question_id``, ``payload_task_id``,
        ``payload_status``, ``payload_progress_percent`` and ``payload_blockers``.

    Examples
    --------
    >>> data = pl.Struct({"payloadType": pl.String, "payloadJson": pl.String})
    >>> events = pl.DataFrame(
    ...     {"file": ["log", "log"], "line": [1, 2],
    ...      "data": [{"payloadType": None, "payloadJson": None},
    ...               {"payloadType": "question",
    ...                "payloadJson": '{"type":"question","questionId":"q-1","question":"?"}'}]},
    ...     schema={"file": pl.String, "line": pl.Int64, "data": data})
    >>> parse_payloads(events).select("line", "payload_kind", "payload_valid", "payload_question_id")
    shape: (1, 4)
    ┌──────┬──────────────┬───────────────┬─────────────────────┐
    │ line ┆ payload_kind ┆ payload_valid ┆ payload_question_id │
    │ ---  ┆ ---          ┆ ---           ┆ ---                 │
    │ i64  ┆ str          ┆ bool          ┆ str                 │
    ╞══════╪══════════════╪═══════════════╪═════════════════════╡
    │ 2    ┆ question     ┆ true          ┆ q-1                 │
    └──────┴──────────────┴───────────────┴─────────────────────┘
    """
    data = pl.col("data")
    carriers = (
        frame.lazy()
        .filter(data.struct.field("payloadJson").is_not_null())
        .select(
            "file",
            "line",
            data.struct.field("payloadType").alias("payload_type"),
            data.struct.field("payloadJson").alias("payload_json"),
        )
        .collect()
    )
    cache: dict[tuple[str, str | None], PayloadResult] = {}
    rows = []
    for file, line, payload_type, payload_json in carriers.iter_rows():
        key = (payload_json, payload_type)
        result = cache.get(key)
        if result is None:
            result = cache[key] = parse_payload(payload_json, payload_type)
        rows.append(_row(file, line, result))
    return pl.DataFrame(rows, schema=PAYLOAD_FRAME_SCHEMA)
