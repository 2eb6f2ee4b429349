"""``load_otlp``: OTLP/JSON GenAI agent spans into the event schema, with a report.

Two kinds of span are placed:

- a2a_lab's own (:func:`a2a_lab.to_otlp`): every span event named ``a2a.send``,
  ``a2a.response``, ``a2a.retry`` or ``a2a.complete`` is the log event it was made from
  (its time, its ``a2a.data.*`` attributes as ``data``), so the round trip is exact;
- another framework's ``invoke_agent`` spans (GenAI semantic conventions): one exchange each,
  ``gen_ai.conversation.id`` its conversation, ``gen_ai.agent.name`` its target, the
  nearest ancestor span's agent (else the resource's ``service.name``) its requester. The
  span's start is the ``a2a.send``; its end the ``a2a.response`` (a no-reply, ``waitError``
  = the status message, when the status is an error) and the ``a2a.complete``. A span whose
  agent is its parent's (the server side of the parent's invocation) adds nothing.

Everything else is a reject row (``file, line, reason, raw``), as in :func:`a2a_lab.load`:
a line that is not JSON or not a traces request, a span without a valid trace or span id, of an unknown kind, not an
``invoke_agent`` span, or without the conversation id or agent names the mapping needs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import polars as pl

from a2a_lab.exchanges import EXCHANGE_TYPES
from a2a_lab.io import LoadReport, LoadResult, from_records

__all__ = ["SpanView", "load_otlp", "spans_of"]

_DATA_PREFIX: Final = "a2a.data."
_RAW_CUT: Final = 200
_KNOWN_KINDS: Final = frozenset(range(1, 6))


class _Reject(Exception):
    """A span or line the mapping cannot place (its message is the report's reason)."""


def load_otlp(path: str | os.PathLike[str]) -> LoadResult:
    """Read an OTLP/JSON traces file into events, like :func:`a2a_lab.load` reads a log.

    Parameters
    ----------
    path
        One ``ExportTraceServiceRequest`` per line (what :func:`a2a_lab.to_otlp` and the
        OpenTelemetry Collector's file exporter write), or one request over the whole file.

    Returns
    -------
    LoadResult
        ``events`` in the event schema (``file`` = ``path``, ``line`` = the request's line),
        and a :class:`~a2a_lab.LoadReport` whose rejects list every line or span the mapping
        cannot place, with the reason. Never raises for bad content; an unreadable file
        raises ``OSError``.

    Examples
    --------
    >>> import a2a_lab as al, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "t.json")
    >>> _ = open(p, "w").write('{"resourceSpans": []}\\nnot json\\n')
    >>> res = al.load_otlp(p)
    >>> res.events.height, res.report.rejects.select("line", "reason").row(0)
    (0, (2, 'not JSON: Expecting value: line 1 column 1 (char 0)'))
    """
    file = str(path)
    text = Path(path).read_bytes().decode("utf-8", errors="replace")
    rejects: list[dict[str, Any]] = []
    records: list[tuple[tuple[int, float, int], int, dict[str, Any]]] = []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    blank = sum(1 for ln in lines if not ln.strip())
    for number, doc_text in _documents(text, lines):
        try:
            doc = json.loads(doc_text)
        except (ValueError, RecursionError) as exc:
            rejects.append(_reject(file, number, f"not JSON: {exc}", doc_text))
            continue
        try:
            spans = list(_spans_of(doc))
        except _Reject as exc:
            rejects.append(_reject(file, number, f"not an OTLP traces request: {exc}", doc_text))
            continue
        for rec_key, rec in _request_records(spans, file, number, rejects):
            records.append((rec_key, number, rec))
    records.sort(key=lambda r: r[0])
    events = _events(records, file)
    by_type = dict(events.group_by("type").len().sort("type").iter_rows()) if events.height else {}
    reject_frame = pl.DataFrame(
        rejects, schema={"file": pl.String, "line": pl.Int64, "reason": pl.String, "raw": pl.String}
    )
    report = LoadReport(
        files=[file],
        lines={file: len(lines)},
        blank={file: blank},
        rejects=reject_frame,
        issues=pl.DataFrame(
            schema={"file": pl.String, "line": pl.Int64, "kind": pl.String, "field": pl.String}
        ),
        by_type={str(k): int(v) for k, v in by_type.items()},
        events=events.height,
    )
    return LoadResult(events, report)


def _documents(text: str, lines: list[str]) -> Iterator[tuple[int, str]]:
    """The requests of the file: the whole file if it is one JSON object spread over lines,
    else each non-blank line."""
    nonblank = [(i + 1, ln) for i, ln in enumerate(lines) if ln.strip()]
    if len(nonblank) > 1 and nonblank[0][1].strip() in ("{", "["):
        yield nonblank[0][0], text
        return
    yield from nonblank


def _reject(file: str, line: int, reason: str, raw: str) -> dict[str, Any]:
    return {"file": file, "line": line, "reason": reason, "raw": raw[:_RAW_CUT]}


# ---------------------------------------------------------------------------------------
# the OTLP/JSON walk: protobuf's json_format costs about 80 us per message (11.5 s for the
# 2,767 events of the bundled sample), so the few fields the mapping reads are read from
# the parsed JSON here, each checked for its type; tests/otel/test_otlp.py checks this reading
# against json_format's on every file it writes
# ---------------------------------------------------------------------------------------

_KIND_NAMES: Final = {
    "SPAN_KIND_UNSPECIFIED": 0,
    "SPAN_KIND_INTERNAL": 1,
    "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3,
    "SPAN_KIND_PRODUCER": 4,
    "SPAN_KIND_CONSUMER": 5,
}
_STATUS_NAMES: Final = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
STATUS_ERROR: Final = 2


@dataclass
class SpanView:
    """What the mapping reads of one span (ids as bytes, times in ns)."""

    trace_id: bytes
    span_id: bytes
    parent_span_id: bytes
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: list[tuple[str, int, dict[str, Any]]]
    status_code: int
    status_message: str
    resource: dict[str, Any] = field(default_factory=dict)
    links: list[tuple[bytes, bytes, dict[str, Any]]] = field(default_factory=list)
    problem: str | None = None


def _list(obj: Any, key: str) -> list[Any]:
    value = obj.get(key) if isinstance(obj, dict) else None
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Reject(f"{key} is not a list")
    return value


def _spans_of(doc: Any) -> Iterator[SpanView]:
    if not isinstance(doc, dict):
        raise _Reject("not a JSON object")
    if "resourceSpans" not in doc:
        raise _Reject("no resourceSpans")
    for rs in _list(doc, "resourceSpans"):
        if not isinstance(rs, dict):
            raise _Reject("a resourceSpans entry is not an object")
        res = rs.get("resource") or {}
        if not isinstance(res, dict):
            raise _Reject("resource is not an object")
        resource = _attributes(_list(res, "attributes"))
        for ss in _list(rs, "scopeSpans"):
            if not isinstance(ss, dict):
                raise _Reject("a scopeSpans entry is not an object")
            for span in _list(ss, "spans"):
                yield _span_view(span, resource)


def _span_view(span: Any, resource: dict[str, Any]) -> SpanView:
    if not isinstance(span, dict):
        view = SpanView(b"", b"", b"", "", 0, 0, 0, {}, [], 0, "", resource)
        view.problem = "span is not a JSON object"
        return view
    try:
        status = span.get("status")
        status = {} if status is None else status
        if not isinstance(status, dict):
            raise _Reject("status is not an object")
        events = []
        for e in _list(span, "events"):
            if not isinstance(e, dict):
                raise _Reject("a span event is not an object")
            events.append(
                (
                    _str(e.get("name")),
                    _int(e.get("timeUnixNano"), "timeUnixNano"),
                    _attributes(_list(e, "attributes")),
                )
            )
        links = []
        for link in _list(span, "links"):
            if not isinstance(link, dict):
                raise _Reject("a span link is not an object")
            links.append(
                (
                    _hex(link.get("traceId"), "link traceId"),
                    _hex(link.get("spanId"), "link spanId"),
                    _attributes(_list(link, "attributes")),
                )
            )
        return SpanView(
            links=links,
            trace_id=_hex(span.get("traceId"), "traceId"),
            span_id=_hex(span.get("spanId"), "spanId"),
            parent_span_id=_hex(span.get("parentSpanId"), "parentSpanId"),
            name=_str(span.get("name")),
            kind=_enum(span.get("kind"), _KIND_NAMES, "span kind"),
            start_ns=_int(span.get("startTimeUnixNano"), "startTimeUnixNano"),
            end_ns=_int(span.get("endTimeUnixNano"), "endTimeUnixNano"),
            attributes=_attributes(_list(span, "attributes")),
            events=events,
            status_code=_enum(status.get("code"), _STATUS_NAMES, "status code"),
            status_message=_str(status.get("message")),
            resource=resource,
        )
    except _Reject as exc:
        view = SpanView(b"", b"", b"", _str_or(span.get("name")), 0, 0, 0, {}, [], 0, "", resource)
        view.problem = str(exc)
        return view


def _str_or(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _str(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Reject(f"{value!r:.40} is not a string")
    return value


def _hex(value: Any, name: str) -> bytes:
    if value is None or value == "":
        return b""
    if not isinstance(value, str):
        raise _Reject(f"{name} is not a string")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise _Reject(f"{name} {value[:40]!r} is not hex") from None


def _int(value: Any, name: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool):
        raise _Reject(f"{name} is not an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise _Reject(f"{name} {value!r:.40} is not an integer")


def _enum(value: Any, names: dict[str, int], what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, str) and value in names:
        return names[value]
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _Reject(f"unknown {what} {value!r:.40}")


def _attributes(kvs: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in kvs:
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise _Reject("an attribute is not a {key, value} object")
        out[kv["key"]] = _any_value(kv.get("value"))
    return out


def _any_value(v: Any) -> Any:
    if v is None:
        return None
    if not isinstance(v, dict):
        raise _Reject("an attribute value is not an object")
    if "stringValue" in v:
        return _str(v["stringValue"])
    if "boolValue" in v:
        if not isinstance(v["boolValue"], bool):
            raise _Reject("boolValue is not a boolean")
        return v["boolValue"]
    if "intValue" in v:
        return _int(v["intValue"], "intValue")
    if "doubleValue" in v:
        d = v["doubleValue"]
        if isinstance(d, bool) or not isinstance(d, (int, float, str)):
            raise _Reject("doubleValue is not a number")
        try:
            return float(d)
        except ValueError:
            raise _Reject(f"doubleValue {d!r:.40} is not a number") from None
    if "arrayValue" in v:
        av = v["arrayValue"] or {}
        return [_any_value(x) for x in _list(av, "values")]
    if "kvlistValue" in v:
        return _attributes(_list(v["kvlistValue"] or {}, "values"))
    if "bytesValue" in v:
        return _str(v["bytesValue"])
    return None


def _ms(ns: int) -> int | float:
    whole, rest = divmod(ns, 1_000_000)
    return whole if rest == 0 else whole + rest / 1_000_000


def _request_records(
    spans: list[SpanView], file: str, number: int, rejects: list[dict[str, Any]]
) -> Iterator[tuple[tuple[int, float, int], dict[str, Any]]]:
    """The event records of one request's spans; rejects are appended to ``rejects``."""
    agents = {(s.trace_id, s.span_id): s.attributes.get("gen_ai.agent.name") for s in spans}
    parents = {(s.trace_id, s.span_id): s.parent_span_id for s in spans}
    for order, span in enumerate(spans):
        try:
            if span.problem:
                raise _Reject(span.problem)
            yield from _span_records(span, agents, parents, order)
        except _Reject as exc:
            raw = json.dumps(
                {"traceId": span.trace_id.hex(), "spanId": span.span_id.hex(), "name": span.name},
                ensure_ascii=False,
            )
            rejects.append(_reject(file, number, str(exc), raw))


def _span_records(
    span: SpanView,
    agents: dict[tuple[bytes, bytes], Any],
    parents: dict[tuple[bytes, bytes], bytes],
    order: int,
) -> Iterator[tuple[tuple[int, float, int], dict[str, Any]]]:
    if len(span.trace_id) != 16 or not any(span.trace_id):
        raise _Reject("span without a valid traceId (16 bytes, not all zero)")
    if len(span.span_id) != 8 or not any(span.span_id):
        raise _Reject("span without a valid spanId (8 bytes, not all zero)")
    if span.kind not in _KNOWN_KINDS:
        raise _Reject(f"unknown span kind {span.kind}")
    if span.end_ns < span.start_ns:
        raise _Reject("span ends before it starts")
    own = [e for e in span.events if e[0] in EXCHANGE_TYPES]
    if own:
        for name, time_ns, ea in own:
            data = {k[len(_DATA_PREFIX) :]: v for k, v in ea.items() if k.startswith(_DATA_PREFIX)}
            for key, fld in (("a2a.from_agent", "fromAgent"), ("a2a.to_agent", "toAgent")):
                if ea.get(key) is not None:
                    data.setdefault(fld, ea[key])
            seq = ea.get("a2a_lab.seq")
            ms = _ms(time_ns)
            sort_key = (0, float(seq), 0) if isinstance(seq, int) else (1, float(ms), order)
            yield sort_key, {"type": name, "ts": ms, "data": data}
        return
    attrs = span.attributes
    op = attrs.get("gen_ai.operation.name")
    if op != "invoke_agent" and not (op is None and span.name.startswith("invoke_agent")):
        raise _Reject(f"not a GenAI invoke_agent span (gen_ai.operation.name {op!r:.40})")
    conv = attrs.get("gen_ai.conversation.id")
    if not isinstance(conv, str) or not conv.strip():
        raise _Reject("invoke_agent span without gen_ai.conversation.id")
    target = attrs.get("gen_ai.agent.name")
    if not isinstance(target, str) or not target.strip():
        raise _Reject("invoke_agent span without gen_ai.agent.name")
    requester = _requester(span, agents, parents) or span.resource.get("service.name")
    if requester == target:
        return  # the server side of its parent's invocation (or an agent calling itself)
    if not isinstance(requester, str) or not requester.strip():
        raise _Reject(
            "invoke_agent span whose requester is unknown (no parent agent, no service.name)"
        )
    base = {"conversationId": conv, "fromAgent": requester, "toAgent": target}
    back = {"conversationId": conv, "fromAgent": target, "toAgent": requester}
    if span.status_code == STATUS_ERROR:
        reply = {**back, "outcome": "no_reply", "waitError": span.status_message or "error"}
    else:
        reply = back
    start, end = _ms(span.start_ns), _ms(span.end_ns)
    yield (
        (1, float(start), order),
        {"type": "a2a.send", "ts": start, "data": {**base, "runId": span.span_id.hex()}},
    )
    yield (1, float(end), order), {"type": "a2a.response", "ts": end, "data": reply}
    yield (1, float(end), order), {"type": "a2a.complete", "ts": end, "data": base}


def _requester(
    span: SpanView,
    agents: dict[tuple[bytes, bytes], Any],
    parents: dict[tuple[bytes, bytes], bytes],
) -> Any:
    """The agent of the nearest ancestor span that names one (cycles stop the walk)."""
    seen = set()
    parent = span.parent_span_id
    while parent and (span.trace_id, parent) in parents and parent not in seen:
        seen.add(parent)
        agent = agents.get((span.trace_id, parent))
        if agent:
            return agent
        parent = parents[(span.trace_id, parent)]
    return None


def _events(
    records: list[tuple[tuple[int, float, int], int, dict[str, Any]]], file: str
) -> pl.DataFrame:
    if not records:
        return from_records([], file=file)
    events = from_records([r[2] for r in records], file=file)
    lines = pl.Series("line", [r[1] for r in records], dtype=pl.Int64)
    # from_records numbers its records 1..n (``line``): map them to the request's line
    return events.with_columns(pl.lit(lines).gather(pl.col("line") - 1).alias("line"))


def spans_of(text: str) -> list[SpanView]:
    """The spans of one OTLP/JSON request as :func:`load_otlp` reads them (for the tests)."""
    return list(_spans_of(json.loads(text)))
