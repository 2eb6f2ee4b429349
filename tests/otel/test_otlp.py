"""OpenTelemetry export and import (issue 26): a2a_lab.otel, ``a2a-lab export-otlp``.

The receiver test (a real Phoenix on loopback) is tests/otel/test_otlp_receiver.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

import a2a_lab as al
from a2a_lab.cli import main
from a2a_lab.otel import SEMCONV_VERSION, otlp_lines, to_otlp
from a2a_lab.otel._import import spans_of
from a2a_lab.otel._sdk import readable_spans

#: what the round trip must give back exactly (issue 26), and the rest of the row
ROUND_TRIP = [
    "conversation_id",
    "exchange",
    "from_agent",
    "to_agent",
    "start_time",
    "first_reply_s",
    "end_time",
    "turns",
    "outcome",
    "outcome_reason",
    "intent",
]


@pytest.fixture(scope="module")
def sample() -> pl.DataFrame:
    """The bundled sample's first 1,500 events (exchanges cut at the end stay incomplete);
    the whole sample and a generated log: tests/otel/test_otlp_receiver.py."""
    return al.load(al.samples.sample_dir()).events.head(1_500)


@pytest.fixture(scope="module")
def exported(sample: pl.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("otlp") / "sample.otlp.json"
    res = to_otlp(sample, output=path, batch_exchanges=150, progress=False)
    assert res.exchanges == al.conversations(sample).height
    return path


def parse_request(line: str) -> ExportTraceServiceRequest:
    """One OTLP/JSON line parsed strictly by opentelemetry-proto's schema.

    OTLP/JSON writes the ids as hex where protobuf's generic JSON mapping reads bytes as
    base64: the ids are turned to base64 first, then ``json_format`` parses the request.
    """
    doc = json.loads(line)
    for rs in doc["resourceSpans"]:
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                for obj in [span, *span.get("links", [])]:
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in obj:
                            obj[key] = base64.b64encode(bytes.fromhex(obj[key])).decode()
    return json_format.ParseDict(doc, ExportTraceServiceRequest())


_PARSED: dict[Path, list[ExportTraceServiceRequest]] = {}


def _requests(path: Path) -> list[ExportTraceServiceRequest]:
    """The file's requests, parsed by protobuf's json_format (once per file: it is slow)."""
    if path not in _PARSED:
        _PARSED[path] = [
            parse_request(line) for line in path.read_text(encoding="utf-8").splitlines()
        ]
    return _PARSED[path]


def _spans(path: Path) -> list[tuple[dict[str, Any], Any]]:
    out = []
    for req in _requests(path):
        for rs in req.resource_spans:
            resource = {kv.key: kv.value.string_value for kv in rs.resource.attributes}
            for ss in rs.scope_spans:
                assert ss.schema_url.endswith(SEMCONV_VERSION)
                for span in ss.spans:
                    out.append((resource, span))
    return out


def _attrs(span: Any) -> dict[str, Any]:
    out = {}
    for kv in span.attributes:
        which = kv.value.WhichOneof("value")
        out[kv.key] = getattr(kv.value, which)
    return out


def _has_null(node: Any) -> bool:
    if node is None:
        return True
    if isinstance(node, dict):
        return any(_has_null(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_null(v) for v in node)
    return False


def test_every_line_is_an_otlp_request_by_the_protobuf_schema(
    sample: pl.DataFrame, exported: Path
) -> None:
    text = exported.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) == -(-al.conversations(sample).height // 150)
    for line in lines:
        doc = json.loads(line)
        # OTLP/JSON ids are hex; protobuf's generic mapping reads bytes as base64, so the
        # ids are turned to base64 first and then the whole request is parsed strictly
        for rs in doc["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in span:
                            assert len(span[key]) in (16, 32) and span[key] == span[key].lower()
                            span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
                    for link in span.get("links", []):
                        for key in ("traceId", "spanId"):
                            link[key] = base64.b64encode(bytes.fromhex(link[key])).decode()
        json_format.ParseDict(doc, ExportTraceServiceRequest())  # raises on any schema error
        assert not _has_null(json.loads(line))  # absent values are left out, never null


def test_the_json_is_what_the_sdk_encoder_makes_of_the_same_spans(exported: Path) -> None:
    """The Polars-written text and the OpenTelemetry SDK's own encoding give equal requests."""

    def by_span(req: ExportTraceServiceRequest) -> dict[bytes, tuple[Any, ...]]:
        return {
            s.span_id: (
                sorted((kv.key, kv.value.SerializeToString()) for kv in rs.resource.attributes),
                ss.scope.SerializeToString(),
                ss.schema_url,
                s.SerializeToString(deterministic=True),
            )
            for rs in req.resource_spans
            for ss in rs.scope_spans
            for s in ss.spans
        }

    for line in exported.read_text(encoding="utf-8").splitlines():
        ours = by_span(parse_request(line))
        sdk = by_span(encode_spans(readable_spans(line)))
        assert ours == sdk
        assert len(ours) == len(spans_of(line))


def test_every_exchange_is_one_trace_with_one_root(sample: pl.DataFrame, exported: Path) -> None:
    conv = al.conversations(sample)
    spans = _spans(exported)
    by_trace: dict[bytes, list[Any]] = {}
    for _, span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    assert len(by_trace) == conv.height  # 0 exchanges lost, none merged
    ids = {(s.trace_id, s.span_id) for _, s in spans}
    assert len(ids) == len(spans)  # span ids unique
    roots = []
    for trace in by_trace.values():
        top = [s for s in trace if not s.parent_span_id]
        assert len(top) == 1
        root = top[0]
        roots.append(root)
        assert root.kind == 3  # CLIENT
        for s in trace:
            if s is not root:
                assert s.parent_span_id == root.span_id
                assert s.kind in (1, 2)
                # causality: a child inside its exchange, every span ends after it starts
                assert root.start_time_unix_nano <= s.start_time_unix_nano
                assert s.end_time_unix_nano <= root.end_time_unix_nano
            assert s.start_time_unix_nano <= s.end_time_unix_nano
    got = pl.DataFrame(
        [
            {
                "conversation_id": a["gen_ai.conversation.id"],
                "from_agent": a["a2a_lab.requester"],
                "to_agent": a["a2a_lab.target"],
                "exchange": a["a2a_lab.exchange"],
                "outcome": a["a2a_lab.outcome"],
                "outcome_reason": a.get("a2a_lab.outcome_reason"),
                "turns": a.get("a2a_lab.turns"),
                "intent": a.get("a2a_lab.intent"),
                "error": r.status.code == 2,
            }
            for r in roots
            for a in [_attrs(r)]
        ]
    )
    want = conv.select(
        "conversation_id",
        "from_agent",
        "to_agent",
        "exchange",
        "outcome",
        "outcome_reason",
        "turns",
        "intent",
        pl.col("outcome").is_in(["no_reply", "concurrency_blocked"]).alias("error"),
    )
    key = ["conversation_id", "from_agent", "to_agent", "exchange"]
    assert got.sort(key).equals(want.sort(key))


def test_every_span_names_its_conversation_agent_and_log_lines(exported: Path) -> None:
    lines_of: dict[str, list[bytes]] = {}
    for resource, span in _spans(exported):
        a = _attrs(span)
        assert a["gen_ai.operation.name"] == "invoke_agent"
        assert a["gen_ai.conversation.id"] and a["gen_ai.agent.name"]
        assert resource["service.name"]
        # every span and every span event points at a log line holding that event
        for e in span.events:
            ea = _attrs(e)
            file, line = ea["a2a_lab.log.file"], ea["a2a_lab.log.line"]
            text = lines_of.setdefault(file, Path(file).read_bytes().split(b"\n"))
            logged = json.loads(text[line - 1].decode("utf-8", errors="replace"))
            assert logged["type"] == e.name
            assert logged["data"]["conversationId"].strip() == a["gen_ai.conversation.id"]
        assert a["a2a_lab.log.line"] >= 1


def test_round_trip_gives_the_same_exchanges(sample: pl.DataFrame, exported: Path) -> None:
    back = al.load_otlp(exported)
    assert back.report.rejects.height == 0
    assert back.events.height == al.exchange_events(sample).height
    want = al.conversations(sample).select(ROUND_TRIP)
    got = al.conversations(back.events).select(ROUND_TRIP)
    assert got.equals(want)
    # and the graph and the checks run on them
    assert al.interaction_graph(back.events).number_of_edges() > 0


def test_a_re_export_is_identical_and_ids_come_from_the_log(
    sample: pl.DataFrame, exported: Path, tmp_path: Path
) -> None:
    again = tmp_path / "again.json"
    to_otlp(sample, output=again, batch_exchanges=150, progress=False)
    assert again.read_bytes() == exported.read_bytes()
    conv = al.conversations(sample).row(0, named=True)
    key = "\x1f".join(
        str(conv[c]) for c in ("conversation_id", "from_agent", "to_agent", "exchange")
    )
    trace = hashlib.blake2b(key.encode(), digest_size=16).digest()
    assert trace in {s.trace_id for _, s in _spans(exported)}


def test_times_are_exact_to_the_nanosecond(tmp_path: Path) -> None:
    """A logged float ms becomes the nearest ns of its exact value, and comes back bit-exact.

    (``ms * 1e6`` in floating point would be off by up to 128 ns at today's epoch.)
    """
    ms = [1_769_626_411_585.9998, 1_769_626_411_586.0, 1_769_626_411_586.125]
    ev = al.from_records(
        [
            {
                "type": "a2a.send",
                "ts": ms[0],
                "data": {"conversationId": "c", "fromAgent": "a", "toAgent": "b"},
            },
            {
                "type": "a2a.response",
                "ts": ms[1],
                "data": {"conversationId": "c", "fromAgent": "b", "toAgent": "a"},
            },
            {
                "type": "a2a.complete",
                "ts": ms[2],
                "data": {"conversationId": "c", "fromAgent": "a", "toAgent": "b"},
            },
        ]
    )
    line = next(iter(otlp_lines(ev))).line
    times = sorted(t for s in spans_of(line) for _, t, _ in s.events)
    exact = [int((Decimal(m) * 10**6).to_integral_value(ROUND_HALF_EVEN)) for m in ms]
    assert times == exact
    path = tmp_path / "t.json"
    path.write_text(line, encoding="utf-8")
    assert al.load_otlp(path).events["event_ms"].to_list() == ms


def _write(tmp_path: Path, *docs: Any, name: str = "in.json") -> Path:
    path = tmp_path / name
    path.write_text(
        "\n".join(d if isinstance(d, str) else json.dumps(d) for d in docs) + "\n",
        encoding="utf-8",
    )
    return path


def _span(**kw: Any) -> dict[str, Any]:
    span = {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "name": "invoke_agent writer",
        "kind": 3,
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000004000000000",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}},
            {"key": "gen_ai.agent.name", "value": {"stringValue": "writer"}},
            {"key": "gen_ai.conversation.id", "value": {"stringValue": "conv-1"}},
        ],
    }
    span.update(kw)
    return span


def _request(*spans: dict[str, Any], service: str = "planner") -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": service}}]
                },
                "scopeSpans": [{"scope": {"name": "other.framework"}, "spans": list(spans)}],
            }
        ]
    }


def test_another_frameworks_invoke_agent_spans_become_exchanges(tmp_path: Path) -> None:
    parent = _span(
        spanId="1111111111111111",
        name="invoke_agent planner",
        kind=1,
        attributes=[
            {"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}},
            {"key": "gen_ai.agent.name", "value": {"stringValue": "planner"}},
            {"key": "gen_ai.conversation.id", "value": {"stringValue": "conv-0"}},
        ],
    )
    ok = _span(parentSpanId="1111111111111111")
    failed = _span(
        spanId="2222222222222222",
        parentSpanId="1111111111111111",
        startTimeUnixNano="1700000010000000000",
        endTimeUnixNano="1700000310000000000",
        status={"code": "STATUS_CODE_ERROR", "message": "timeout"},
    )
    # the target's own server span under the client span adds nothing
    server = _span(
        spanId="3333333333333333", parentSpanId="b7ad6b7169203331", kind="SPAN_KIND_SERVER"
    )
    res = al.load_otlp(_write(tmp_path, _request(parent, ok, failed, server)))
    assert res.report.rejects.height == 0
    conv = al.conversations(res.events).sort("start_time")
    assert conv.select("from_agent", "to_agent", "outcome", "first_reply_s").rows() == [
        ("planner", "writer", "replied", 4.0),
        ("planner", "writer", "no_reply", None),
    ]
    # the planner's own span has no requester but its resource's service: itself, so nothing
    assert al.load_otlp(_write(tmp_path, _request(parent), name="p.json")).events.height == 0


@pytest.mark.parametrize(
    ("doc", "reason"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "not an OTLP traces request: not a JSON object"),
        ({"resourceSpans": 5}, "resourceSpans is not a list"),
        ({"spans": []}, "no resourceSpans"),
        (_request(_span(traceId="")), "without a valid traceId"),
        (_request(_span(spanId="zz")), "spanId 'zz' is not hex"),
        (_request(_span(spanId="0000000000000000")), "without a valid spanId"),
        (_request(_span(kind=9)), "unknown span kind 9"),
        (_request(_span(kind="SPAN_KIND_WHATEVER")), "unknown span kind"),
        (_request(_span(kind=0)), "unknown span kind 0"),
        (_request(_span(startTimeUnixNano="soon")), "startTimeUnixNano 'soon' is not an integer"),
        (_request(_span(endTimeUnixNano="1")), "span ends before it starts"),
        (
            _request(
                _span(
                    attributes=[{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}]
                )
            ),
            "not a GenAI invoke_agent span",
        ),
        (
            _request(
                _span(
                    attributes=[
                        {"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}
                    ]
                )
            ),
            "without gen_ai.conversation.id",
        ),
        (_request(_span(attributes=[5])), "an attribute is not a {key, value} object"),
        (
            _request(_span(attributes=[{"key": "x", "value": {"boolValue": "yes"}}])),
            "boolValue is not a boolean",
        ),
        (_request(_span(status=[])), "status is not an object"),
        (_request(7), "span is not a JSON object"),
    ],
)
def test_bad_input_is_a_clear_reject_never_a_traceback(
    tmp_path: Path, doc: Any, reason: str
) -> None:
    good = _request(_span(spanId="4444444444444444"))
    res = al.load_otlp(_write(tmp_path, good, doc))
    rejects = res.report.rejects
    assert rejects.height == 1, rejects
    assert reason in rejects["reason"][0]
    assert rejects["line"][0] == 2
    # the good request on line 1 is still read
    assert res.events.height == 3 and set(res.events["line"]) == {1}


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=60)
@given(
    path=st.lists(
        st.sampled_from(
            [
                "resourceSpans",
                0,
                "scopeSpans",
                "spans",
                "attributes",
                "events",
                "status",
                "kind",
                "traceId",
                "value",
                "links",
            ]
        ),
        min_size=1,
        max_size=6,
    ),
    value=_JSON,
)
def test_any_damage_to_a_request_is_rejected_or_read_never_raised(
    tmp_path_factory: pytest.TempPathFactory, path: list[Any], value: Any
) -> None:
    doc: Any = _request(
        _span(
            parentSpanId="1111111111111111",
            events=[{"name": "a2a.send", "timeUnixNano": "1", "attributes": []}],
        )
    )
    node = doc
    for step in path[:-1]:
        nxt = (
            node[step]
            if isinstance(node, dict) and step in node
            else (
                node[step]
                if isinstance(node, list) and isinstance(step, int) and step < len(node)
                else None
            )
        )
        if nxt is None or not isinstance(nxt, (dict, list)):
            break
        node = nxt
    last = path[-1]
    if isinstance(node, dict) and isinstance(last, str):
        node[last] = value
    elif isinstance(node, list) and node:
        node[0] = value
    p = _write(tmp_path_factory.mktemp("fuzz"), doc)
    res = al.load_otlp(p)
    assert res.report.rejects.height + (res.events.height > 0) >= 1 or res.events.height == 0
    assert set(res.report.rejects["line"].to_list()) <= {1}


def test_cli_export_otlp(
    sample: pl.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "log.ndjson"
    al.write_events(sample, log)
    out = tmp_path / "x.otlp.json"
    assert main(["export-otlp", str(log), "-o", str(out), "--no-progress"]) == 0
    assert f"{al.conversations(sample).height} exchanges" in capsys.readouterr().err
    assert al.load_otlp(out).events.height > 0
    # neither target: a usage error; both: refused; an unreachable receiver: one line
    assert main(["export-otlp", str(log)]) == 2
    assert main(["export-otlp", "x", "-o", "a.json", "--endpoint", "http://127.0.0.1:9"]) == 2
    capsys.readouterr()
    code = main(
        [
            "export-otlp",
            str(log),
            "--endpoint",
            "http://127.0.0.1:9/v1/traces",
            "--timeout",
            "1",
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "did not accept batch 1" in err
    assert main(["export-otlp", str(log), "--endpoint", "ftp://x"]) == 2


def test_to_otlp_needs_one_target(sample: pl.DataFrame) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        to_otlp(sample)
    with pytest.raises(ValueError, match="exactly one"):
        to_otlp(sample, output="a", endpoint="http://x")
