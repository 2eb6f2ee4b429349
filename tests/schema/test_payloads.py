"""Structured payloads: every reference test case, the exact validation, the safe parser."""

from __future__ import annotations

import json
from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from a2a_lab.reference.runtime.intent import payload_intent
from a2a_lab.schema import polars_schema
from a2a_lab.schema.payloads import (
    INVALID_JSON_ERROR,
    NOT_A_STRING_ERROR,
    NOT_AN_OBJECT_ERROR,
    PAYLOAD_FRAME_SCHEMA,
    A2APayload,
    Answer,
    Question,
    StatusReport,
    TaskDelegation,
    build_payload_summary,
    parse_payload,
    parse_payloads,
    validate_payload,
)
from tests.support.runtime_cases import cases, load_doc


def _cases(function: str) -> list[Any]:
    return cases("a2a-payload-parser", function)


def test_fixture_has_every_case() -> None:
    doc = load_doc("a2a-payload-parser")
    assert len(doc["cases"]) == 48
    assert doc["skipped"] == []


@pytest.mark.parametrize("case", _cases("parseA2APayload"))
def test_parse_a2a_payload_cases(case: dict[str, Any]) -> None:
    result = parse_payload(case["input"]["payloadJson"])
    assert result.present
    assert (result.payload is None) == case["expect"]["result_is_null"]
    assert result.valid == (not case["expect"]["result_is_null"])
    derived = case.get("derived", {})
    if result.payload is not None:
        obj = result.payload.to_json_obj()
        for field, value in case["expect"].get("fields", {}).items():
            assert obj[field] == value
        assert obj == derived["result"]  # extra fields kept, nothing added
        assert result.errors == ()
    else:
        assert result.errors  # a rejected payload always says why
    if "validation_errors" in derived:
        assert list(result.errors) == derived["validation_errors"]


@pytest.mark.parametrize("case", _cases("validateA2APayload"))
def test_validate_a2a_payload_cases(case: dict[str, Any]) -> None:
    errors = validate_payload(case["input"]["payload"])
    expect = case["expect"]
    assert (errors == ()) == expect["valid"]
    if "errors" in expect:  # null = the reference's `undefined`, i.e. no errors at all
        assert expect["errors"] is None and errors == ()
    if expect.get("errors_defined"):
        assert errors
    if "errors_min_length" in expect:
        assert len(errors) >= expect["errors_min_length"]
    if "errors_0_contains" in expect:
        assert expect["errors_0_contains"] in errors[0]
    if "errors_some_includes" in expect:
        assert any(expect["errors_some_includes"] in e for e in errors)
    if "errors" in case.get("derived", {}):
        assert list(errors) == case["derived"]["errors"]


@pytest.mark.parametrize("case", _cases("buildPayloadSummary"))
def test_build_payload_summary_cases(case: dict[str, Any]) -> None:
    payload = TypeAdapter(A2APayload).validate_python(case["input"]["payload"])
    summary = build_payload_summary(payload)
    for text in case["expect"].get("summary_contains", []):
        assert text in summary
    for text in case["expect"].get("summary_not_contains", []):
        assert text not in summary
    assert summary == case["derived"]["summary"]


@pytest.mark.parametrize("case", _cases("mapPayloadTypeToMessageIntent"))
def test_map_payload_type_to_message_intent_cases(case: dict[str, Any]) -> None:
    result = payload_intent(case["input"]["payloadType"])
    assert result is not None and result.intent == case["expect"]["result"]


# --- validation details the reference implementation fixes but its tests do not ---------


def _delegation(**fields: Any) -> dict[str, Any]:
    return {
        "type": "task_delegation",
        "taskId": "t",
        "taskTitle": "T",
        "taskDescription": "D",
        **fields,
    }


@pytest.mark.parametrize(
    ("obj", "errors"),
    [
        (_delegation(taskId=""), ("taskId is required and must be a string",)),
        (_delegation(taskId=5), ("taskId is required and must be a string",)),
        (_delegation(taskId=" "), ()),  # not trimmed
        (_delegation(priority=None), ("priority must be one of: critical, high, medium, low",)),
        (_delegation(priority=["high"]), ("priority must be one of: critical, high, medium, low",)),
        (_delegation(context=None), ("context must be a string",)),
        (_delegation(deadline="next week"), ()),  # only a string, not checked as ISO 8601
        (_delegation(deadline=20260301), ("deadline must be a string (ISO 8601)",)),
        (_delegation(acceptanceCriteria="x"), ("acceptanceCriteria must be an array of strings",)),
        (_delegation(acceptanceCriteria=[]), ()),
        (
            {
                "type": "status_report",
                "taskId": "t",
                "status": 1,
                "progressPercent": True,
                "blockers": None,
            },
            (
                "status is required and must be a string",
                "progressPercent must be a number between 0 and 100",
                "blockers must be an array of strings",
            ),
        ),
        ({"type": "status_report", "taskId": "t", "status": "completed", "progressPercent": 0}, ()),
        (
            {
                "type": "status_report",
                "taskId": "t",
                "status": "completed",
                "progressPercent": 100.0,
            },
            (),
        ),
        (
            {
                "type": "status_report",
                "taskId": "t",
                "status": "completed",
                "progressPercent": 100.0001,
            },
            ("progressPercent must be a number between 0 and 100",),
        ),
        ({"type": "answer", "questionId": "q", "answer": "a", "confidence": 0}, ()),
        ({"type": "answer", "questionId": "q", "answer": "a", "confidence": 1}, ()),
        (
            {"type": "answer", "questionId": "q", "answer": "a", "confidence": False},
            ("confidence must be a number between 0.0 and 1.0",),
        ),
        (
            {"type": "answer", "questionId": "q", "answer": "a", "confidence": float("nan")},
            ("confidence must be a number between 0.0 and 1.0",),
        ),
        (
            {
                "type": "question",
                "questionId": "q",
                "question": "?",
                "urgency": "URGENT",
                "options": [None],
            },
            ("urgency must be one of: urgent, normal, low", "options items must be strings"),
        ),
        ({"type": "Question"}, ("Unknown payload type: Question",)),
        ({"taskId": "t"}, ("Unknown payload type: undefined",)),
        ({"type": None}, ("Unknown payload type: null",)),
        ({"type": 4.0}, ("Unknown payload type: 4",)),
    ],
)
def test_validation_matches_the_reference_rules(
    obj: dict[str, Any], errors: tuple[str, ...]
) -> None:
    assert validate_payload(obj) == errors


def test_models_run_the_same_rules_with_the_same_texts() -> None:
    with pytest.raises(ValidationError) as info:
        StatusReport.model_validate({"taskId": "", "status": "done", "progressPercent": 101})
    assert [e["msg"] for e in info.value.errors()] == [
        "taskId is required and must be a string",
        "status must be one of: in_progress, completed, blocked, failed",
        "progressPercent must be a number between 0 and 100",
    ]
    with pytest.raises(ValidationError, match="type must be 'answer'"):
        Answer.model_validate({"type": "question", "questionId": "q", "answer": "a"})
    with pytest.raises(ValidationError, match="must be a string"):
        Question(questionId="q", question="?", context=None)
    ok = TaskDelegation(taskId="t", taskTitle="T", taskDescription="D", futureField={"x": 1})
    assert ok.to_json_obj() == _delegation(futureField={"x": 1})


@pytest.mark.parametrize(
    ("payload_json", "errors"),
    [
        ("NaN", (INVALID_JSON_ERROR,)),  # Python's json accepts it, JSON.parse does not
        (
            '{"type":"answer","questionId":"q","answer":"a","confidence":Infinity}',
            (INVALID_JSON_ERROR,),
        ),
        ("\ufeff{}", (INVALID_JSON_ERROR,)),
        ("[" * 100_000 + "]" * 100_000, (INVALID_JSON_ERROR,)),  # too deep for Python's parser
        ("[]", (NOT_AN_OBJECT_ERROR,)),
        (
            '{"type":"answer","questionId":"q","answer":"a","confidence":1e400}',
            ("confidence must be a number between 0.0 and 1.0",),
        ),
    ],
)
def test_parse_payload_rejects_what_javascript_rejects(
    payload_json: str, errors: tuple[str, ...]
) -> None:
    result = parse_payload(payload_json)
    assert result.payload is None and result.errors == errors


def test_absent_and_non_string_payloads() -> None:
    absent = parse_payload(None, "question")
    assert (absent.present, absent.valid, absent.errors, absent.type_mismatch) == (
        False,
        False,
        (),
        False,
    )
    weird = parse_payload(42)  # type: ignore[arg-type]
    assert weird.errors == (NOT_A_STRING_ERROR,) and weird.present
    odd_type = parse_payload('{"type":"answer","questionId":"q","answer":"a"}', object())  # type: ignore[arg-type]
    assert odd_type.valid and odd_type.type_mismatch


def test_payload_type_disagreement_is_reported_not_fatal() -> None:
    payload_json = '{"type":"answer","questionId":"q-1","answer":"yes"}'
    agreed = parse_payload(payload_json, "answer")
    assert agreed.valid and not agreed.type_mismatch and agreed.mismatch_message is None
    disagreed = parse_payload(payload_json, "question")
    assert disagreed.valid and disagreed.type_mismatch
    assert (
        disagreed.mismatch_message
        == 'payloadType "question" disagrees with the payloadJson type "answer"'
    )
    unknown = parse_payload('{"type":"memo"}', "question")
    assert unknown.kind == "memo" and unknown.type_mismatch and not unknown.valid
    assert not parse_payload("{", "question").type_mismatch  # nothing to compare with


@pytest.mark.parametrize(
    ("confidence", "shown"),
    [(0.845, "85%"), (0.125, "13%"), (0.5, "50%"), (0.0049, "0%"), (1, "100%")],
)
def test_summary_rounds_half_up_like_math_round(confidence: float, shown: str) -> None:
    summary = build_payload_summary(Answer(questionId="q", answer="a", confidence=confidence))
    assert summary.endswith(f"Confidence: {shown}")


@pytest.mark.parametrize(
    ("progress", "shown"), [(50, "50"), (50.0, "50"), (12.5, "12.5"), (0, "0")]
)
def test_summary_prints_numbers_like_javascript(progress: float, shown: str) -> None:
    summary = build_payload_summary(
        StatusReport(taskId="t", status="in_progress", progressPercent=progress)
    )
    assert f"Progress: {shown}%" in summary


def test_summary_omits_empty_optional_strings_and_lists() -> None:
    summary = build_payload_summary(
        StatusReport(
            taskId="t", status="blocked", completedWork="", blockers=[], artifacts=["a", "b"]
        )
    )
    assert summary == "Task ID: t\nStatus: blocked\nArtifacts: a, b"


# --- the frame helper ------------------------------------------------------------------


def _event_frame(rows: list[tuple[int, dict[str, Any] | None]]) -> pl.DataFrame:
    schema = polars_schema()
    data_fields = [f.name for f in schema["data"].fields]  # type: ignore[attr-defined]
    records = []
    for line, data in rows:
        record: dict[str, Any] = {name: None for name in schema}
        record.update(file="log.ndjson", line=line, type="a2a.send", event_ms=0.0)
        record["data"] = {name: (data or {}).get(name) for name in data_fields}
        records.append(record)
    return pl.DataFrame(records, schema=schema)


def test_parse_payloads_reports_only_payload_events() -> None:
    delegation = json.dumps(_delegation(taskId="t-9"))
    report = json.dumps(
        {
            "type": "status_report",
            "taskId": "t-9",
            "status": "blocked",
            "progressPercent": 40,
            "blockers": ["key"],
        }
    )
    frame = _event_frame(
        [
            (1, {"message": "plain text"}),
            (2, {"payloadType": "task_delegation", "payloadJson": delegation}),
            (3, {"payloadType": "status_report", "payloadJson": report}),
            (4, {"payloadType": "question", "payloadJson": report}),
            (5, {"payloadJson": '{"type":"status_report","taskId":"t-9","status":"done"}'}),
            (6, {"payloadType": "answer"}),
            (7, {"payloadJson": "not json"}),
        ]
    )
    out = parse_payloads(frame)
    assert out.schema == PAYLOAD_FRAME_SCHEMA
    assert out["line"].to_list() == [2, 3, 4, 5, 7]
    assert out["payload_kind"].to_list() == [
        "task_delegation",
        "status_report",
        "status_report",
        "status_report",
        None,
    ]
    assert out["payload_valid"].to_list() == [True, True, True, False, False]
    assert out["payload_type_mismatch"].to_list() == [False, False, True, False, False]
    assert out["payload_errors"].to_list() == [
        [],
        [],
        [],
        ["status must be one of: in_progress, completed, blocked, failed"],
        [INVALID_JSON_ERROR],
    ]
    assert out["payload_task_id"].to_list() == [
        "t-9",
        "t-9",
        "t-9",
        None,
        None,
    ]  # valid payloads only
    assert out["payload_status"].to_list() == [None, "blocked", "blocked", None, None]
    assert out["payload_progress_percent"].to_list() == [None, 40.0, 40.0, None, None]
    assert out["payload_blockers"].to_list() == [None, ["key"], ["key"], None, None]
    assert out["payload_question_id"].null_count() == 5


def test_parse_payloads_ignores_extra_fields_named_like_linking_fields() -> None:
    question = json.dumps(
        {"type": "question", "questionId": "q", "question": "?", "taskId": 7, "status": []}
    )
    out = parse_payloads(_event_frame([(1, {"payloadJson": question})]).lazy())
    assert out.row(0, named=True)["payload_task_id"] is None
    assert out.row(0, named=True)["payload_status"] is None
    assert out.row(0, named=True)["payload_question_id"] == "q"


def test_parse_payloads_on_a_frame_without_payloads() -> None:
    out = parse_payloads(_event_frame([(1, {"message": "x"})]))
    assert out.height == 0 and out.schema == PAYLOAD_FRAME_SCHEMA


# --- properties --------------------------------------------------------------------------

_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
_json_values = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)
_field_names = st.sampled_from(
    [
        "type",
        "taskId",
        "taskTitle",
        "taskDescription",
        "context",
        "deadline",
        "priority",
        "acceptanceCriteria",
        "status",
        "completedWork",
        "remainingWork",
        "blockers",
        "progressPercent",
        "artifacts",
        "questionId",
        "question",
        "urgency",
        "options",
        "answer",
        "confidence",
        "references",
        "extra",
    ]
)
_field_values = (
    _json_values
    | st.sampled_from(
        [
            "task_delegation",
            "status_report",
            "question",
            "answer",
            "high",
            "blocked",
            "normal",
            "",
            "x",
        ]
    )
    | st.lists(st.text(max_size=3), max_size=2)
    | st.floats(min_value=-1, max_value=101)
)
_payload_like = st.dictionaries(_field_names, _field_values, max_size=8)


@given(st.text())
def test_parse_payload_never_raises_on_any_text(text: str) -> None:
    result = parse_payload(text, "question")
    assert result.valid == (result.payload is not None)
    assert result.valid != bool(result.errors)


@given(_payload_like)
def test_parse_payload_agrees_with_validate_and_the_models(obj: dict[str, Any]) -> None:
    text = json.dumps(obj)
    result = parse_payload(text)
    errors = validate_payload(json.loads(text))
    assert result.errors == errors
    assert result.valid == (errors == ())
    if result.payload is not None:
        assert result.payload.to_json_obj() == json.loads(text)
    elif isinstance(obj.get("type"), str) and obj["type"] in (
        "task_delegation",
        "status_report",
        "question",
        "answer",
    ):
        with pytest.raises(ValidationError) as info:
            TypeAdapter(A2APayload).validate_python(json.loads(text))
        assert tuple(e["msg"] for e in info.value.errors()) == errors
