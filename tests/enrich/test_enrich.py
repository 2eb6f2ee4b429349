"""Enrichment parity: the reference's own tests, its outputs, and a slow oracle (rules §1-§6)."""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_lab.enrich import ENRICHMENT_COLUMNS, _case_changes, _Plan, enrich, resolve_main_agents
from a2a_lab.io import from_records, load
from a2a_lab.reference.rules import TASK_MONITOR_V1, Category, RuleSet, main_agents_from_openclaw
from tests.support.node_js import needs_node, node_json
from tests.support.paths import DATA
from tests.support.reference_impl import enrich_ref as ref
from tests.support.reference_impl.sessions_ref import TOP_LEVEL_ENRICHMENT

PEER = DATA / "peer"
# (log, peer output with every parsed event's enrichment); enrichment does not depend on nowMs
PEER_CASES = [
    ("tricky", "tricky__now-max+1h-1771507200000__all.json"),
    ("tricky", "tricky__now-boundary-1771586600000__all.json"),
    ("gen300_s11_bad5", "gen300_s11_bad5__now-max+1h-1771302796260__all.json"),
]
PEER_FIELDS = ["type", *TOP_LEVEL_ENRICHMENT]
#: The reference's result keys (the oracle's, the peer output's) → the enriched frame's columns.
RESULT_FIELDS = {
    "type": "type",
    **dict(
        zip(
            ["fromAgent", "toAgent", *TOP_LEVEL_ENRICHMENT, "categoryVersion"],
            ENRICHMENT_COLUMNS,
            strict=True,
        )
    ),
}


def _rows(frame: pl.DataFrame) -> dict[int, dict[str, Any]]:
    """line → the row's enrichment, keyed as the reference names it."""
    lines = frame["line"].to_list()
    named = frame.select(pl.col(c).alias(k) for k, c in RESULT_FIELDS.items())
    return dict(zip(lines, named.iter_rows(named=True), strict=True))


def _parse_log_like_the_reference(path: Path) -> dict[int, Any]:
    """Rules §10, independently of a2a_lab.io: physical line -> parsed JSON value."""

    def reject(name: str) -> None:
        raise ValueError(name)

    text = path.read_bytes().decode("utf-8", errors="replace")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()  # a final newline does not start another line
    parsed = {}
    for number, line in enumerate(lines, start=1):
        trimmed = ref.trim(line)
        if not trimmed:
            continue
        try:
            parsed[number] = json.loads(trimmed, parse_constant=reject)
        except ValueError:
            continue
    return parsed


# ---- the rule set ------------------------------------------------------------------------


def test_v1_holds_108_keywords_in_ten_declared_categories() -> None:
    assert len(TASK_MONITOR_V1.keywords) == 108
    assert TASK_MONITOR_V1.category_names == tuple(name for name, _ in ref.CATEGORIES)
    for cat in TASK_MONITOR_V1.categories:
        assert list(cat.keywords) == ref.KEYWORDS[cat.name]
    assert list(TASK_MONITOR_V1.haystack_fields) == ref.TEXT_FIELDS
    assert list(TASK_MONITOR_V1.orchestration_type_prefixes) == ref.ORCHESTRATION_PREFIXES
    assert list(TASK_MONITOR_V1.event_roles) == ref.ROLES


def test_keyword_weights_count_utf16_units() -> None:
    weights = {kw: TASK_MONITOR_V1.keyword_weight(kw) for _, kw in TASK_MONITOR_V1.keywords}
    assert weights["컴플라이언스"] == 2 and weights["리팩토링"] == 1
    assert weights["build"] == 2 and weights["test"] == 1 and weights["root cause"] == 2
    assert sum(weights.values()) == sum(2 if ref.js_length(k) > 4 else 1 for k in weights)
    assert (
        TASK_MONITOR_V1.replace(
            categories=[Category("x", ["😀😀😀"])],
            fallback_categories=(),
            fallback_default_category="x",
            default_category="x",
        ).keyword_weight("😀😀😀")
        == 2
    )


def test_v1_constants() -> None:
    r = TASK_MONITOR_V1
    assert (r.version, r.confidence_base, r.confidence_per_score, r.confidence_per_gap) == (
        "v1",
        0.5,
        0.08,
        0.05,
    )
    assert (r.confidence_cap, r.fallback_confidence, r.manual_confidence) == (0.95, 0.2, 1.0)
    assert (r.manual_sub_tag_limit, r.rule_sub_tag_limit) == (5, 3)
    assert (r.archive_window_ms, r.thread_bucket_ms) == (86_400_000, 300_000)
    assert r.default_main_agents == {"main", "ruda"}
    assert [r.fallback_category(role) for role in r.event_roles] == [
        "engineering_build",
        "engineering_build",
        "planning_decision",
        "infra_ops",
    ]


def test_rule_set_is_immutable_and_copies_get_a_new_version() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        TASK_MONITOR_V1.confidence_cap = 0.5  # type: ignore[misc]
    a = TASK_MONITOR_V1.replace(confidence_cap=0.9)
    b = TASK_MONITOR_V1.replace(confidence_cap=0.9)
    assert a == b and a.version == b.version and a.version.startswith("v1+") and a.version != "v1"
    assert a.replace(rule_sub_tag_limit=2).version.startswith("v1+")
    assert a.replace(rule_sub_tag_limit=2).version.count("+") == 1
    assert TASK_MONITOR_V1.replace(version="mine").version == "mine"
    assert TASK_MONITOR_V1.confidence_cap == 0.95
    assert isinstance(
        TASK_MONITOR_V1.replace(orchestration_type_prefixes=["x."]).orchestration_type_prefixes,
        tuple,
    )


@pytest.mark.parametrize(
    "changes, message",
    [
        (
            {
                "categories": [Category("a", ["Test"]), Category("b", ["test"])],
                "fallback_categories": (),
                "fallback_default_category": "a",
                "default_category": "a",
            },
            "duplicates",
        ),
        (
            {
                "categories": [Category("a", [""])],
                "fallback_categories": (),
                "fallback_default_category": "a",
                "default_category": "a",
            },
            "non-empty",
        ),
        ({"fallback_categories": {"orchestration.task": "nope"}}, "unknown category"),
        ({"fallback_categories": {"nope": "infra_ops"}}, "unknown role"),
        ({"event_roles": ("a", "a", "b", "c")}, "distinct"),
        ({"rule_sub_tag_limit": -1}, "non-negative"),
    ],
)
def test_rule_set_rejects_inconsistent_rules(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TASK_MONITOR_V1.replace(**changes)


def _to_fixed_2_from_fractions(x: float) -> float:
    """Number(x.toFixed(2)) for x >= 0, from ECMA-262: the n closest to x*100, larger on a tie."""
    exact = Fraction(x) * 100
    n = (exact + Fraction(1, 2)).__floor__()
    return float(f"{n // 100}.{n % 100:02d}")  # Number("d.dd"): the nearest double


def _reachable_top_gap(rules: RuleSet) -> list[tuple[int, int]]:
    return [(t, g) for t in range(1, rules.max_category_score + 1) for g in range(t + 1)]


def test_rule_confidence_is_exact_for_every_reachable_top_and_gap() -> None:
    pairs = _reachable_top_gap(TASK_MONITOR_V1)
    assert len(pairs) > 100
    for top, gap in pairs:
        raw = min(0.95, 0.5 + top * 0.08 + gap * 0.05)
        assert TASK_MONITOR_V1.rule_confidence(top, gap) == _to_fixed_2_from_fractions(raw), (
            top,
            gap,
        )
    # rounding the exact value half up is not Python's round(): with a tie-producing constant
    tie = TASK_MONITOR_V1.replace(
        confidence_base=0.0, confidence_per_score=0.125, confidence_per_gap=0.0
    )
    assert tie.rule_confidence(1, 0) == 0.13 != round(0.125, 2)


@needs_node
def test_rule_confidence_equals_javascript() -> None:
    pairs = _reachable_top_gap(TASK_MONITOR_V1)
    script = (
        "console.log(JSON.stringify(input.map(([t,g])=>"
        "Number(Math.min(0.95,0.5+t*0.08+g*0.05).toFixed(2)))))"
    )
    expected = node_json(script, pairs)
    assert [TASK_MONITOR_V1.rule_confidence(t, g) for t, g in pairs] == expected


def test_main_agents_from_openclaw(tmp_path: Path) -> None:
    cfg = {
        "agents": {
            "list": [{"id": " Eden "}, {"id": 7}, "seum", {"id": "\u3000"}, {"name": "x"}],
            "defaults": {"model": "y"},
            "list2": {"id": "Worker"},
            "Mapped": {"model": "z"},
            "empty": {},
            "scalar": "on",
            "  ": {"model": "blank key"},
        }
    }
    path = tmp_path / "openclaw.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    assert main_agents_from_openclaw(path) == {"eden", "worker", "mapped", "main", "ruda"}
    assert resolve_main_agents(str(path)) == {"eden", "worker", "mapped", "main", "ruda"}
    (tmp_path / "list.json").write_text('{"agents": {"list": {"id": "x"}}}', encoding="utf-8")
    assert main_agents_from_openclaw(tmp_path / "list.json") == {"main", "ruda"}


def test_main_agents_from_openclaw_rejects_missing_and_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        main_agents_from_openclaw(tmp_path / "absent.json")
    for bad in ('{"agents": {}} // json5', '{"x": NaN}', "\ufeff{}"):
        (tmp_path / "bad.json").write_text(bad, encoding="utf-8")
        with pytest.raises(ValueError, match="not valid JSON"):
            main_agents_from_openclaw(tmp_path / "bad.json")


# ---- the reference's own unit tests ------------------------------------------------------


def _classification_cases() -> list[dict[str, Any]]:
    return json.loads((DATA / "classification.test-cases.json").read_text(encoding="utf-8"))[
        "cases"
    ]


@pytest.mark.parametrize("case", _classification_cases(), ids=lambda c: c["event"]["type"])
def test_classification_cases(case: dict[str, Any]) -> None:
    got = enrich(from_records([case["event"]])).row(0, named=True)
    oracle = ref.enrich_event(case["event"], {"main", "ruda"})
    assert oracle is not None
    for key, expected in case["expect"].items():
        # the frame keeps `data` as read; the enriched values that the reference also copies
        # into `data` are the top-level columns
        column = key.removeprefix("data.")
        assert got[RESULT_FIELDS.get(column, column)] == expected, key
        assert oracle[column] == expected, key


# ---- the reference's own outputs ---------------------------------------------------------


@pytest.mark.parametrize("log, peer_file", PEER_CASES)
def test_peer_enrichment_is_reproduced(log: str, peer_file: str) -> None:
    peer = json.loads((PEER / peer_file).read_text(encoding="utf-8"))
    assert peer["meta"]["mainAgents"] == ["main", "ruda"]
    expected = {ev["line"]: ev for ev in peer["events"]}
    assert len(expected) == peer["meta"]["parsedEvents"]

    got = _rows(enrich(load(PEER / f"{log}.ndjson").events))
    assert set(got) == set(expected)
    for line, ev in expected.items():
        assert {f: got[line][f] for f in PEER_FIELDS} == {f: ev[f] for f in PEER_FIELDS}, line

    # the slow oracle agrees too, on a log parsed without a2a_lab
    parsed = _parse_log_like_the_reference(PEER / f"{log}.ndjson")
    oracle = {n: r for n, obj in parsed.items() if (r := ref.enrich_event(obj, {"main", "ruda"}))}
    assert set(oracle) == set(expected)
    for line, ev in expected.items():
        assert {f: oracle[line][f] for f in PEER_FIELDS} == {f: ev[f] for f in PEER_FIELDS}, line
        assert oracle[line] == got[line], line


def test_enrich_keeps_lazy_and_eager_kinds_and_columns() -> None:
    events = load(PEER / "tricky.ndjson").events
    eager = enrich(events)
    lazy = enrich(events.lazy())
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect().equals(eager)
    assert eager.columns == events.columns + list(ENRICHMENT_COLUMNS)
    assert eager.schema["collab_sub_tags"] == pl.List(pl.String)
    assert eager.schema["category_confidence"] == pl.Float64
    assert eager.select(pl.col("collab_sub_tags").is_null().any()).item() is False
    assert enrich(eager).equals(eager)  # idempotent: the added columns are replaced


def test_main_agents_change_session_types() -> None:
    events = from_records([{"type": "a2a.send", "data": {"fromAgent": " Eden", "toAgent": "SEUM"}}])
    default = enrich(events).row(0, named=True)
    custom = enrich(events, main_agents=["eden", "Seum\u3000"]).row(0, named=True)
    assert (default["from_session_type"], default["event_role"]) == (
        "unknown",
        "delegation.subagent",
    )
    assert (custom["from_session_type"], custom["to_session_type"]) == ("main", "main")
    assert custom["event_role"] == "conversation.main"
    assert (custom["from_agent"], custom["to_agent"]) == ("Eden", "SEUM")


def test_a_modified_rule_set_drives_enrichment() -> None:
    rules = TASK_MONITOR_V1.with_keywords(
        {
            "customer_community": [
                k for k in TASK_MONITOR_V1.category("customer_community").keywords if k != "cs"
            ],
            "security": ["vulnerability", "cve"],
        }
    )
    events = from_records(
        [
            {"type": "a2a.send", "data": {"message": "CVE-2024 vulnerability in docs"}},
            {"type": "a2a.send", "data": {"message": "docs", "categoryVersion": " v0 "}},
        ]
    )
    first, second = enrich(events, rules=rules).sort("line").iter_rows(named=True)
    assert first["collab_category"] == "security"
    assert first["collab_sub_tags"] == ["vulnerability", "cve"]
    assert first["category_confidence"] == rules.rule_confidence(3, 1)  # vs doc+docs = 2
    assert first["category_version"] == rules.version != "v1"
    assert second["category_version"] == "v0"
    assert enrich(events).sort("line")["collab_sub_tags"].to_list()[1] == ["doc", "docs"]


# ---- property test against the slow oracle -----------------------------------------------

PADS = ["", " ", "\u3000", "\ufeff", "\t\r\n", "\u2028", "\x85", "\x1c"]
# ids equal only under some case mapping (ASCII, dotted İ, the Kelvin sign, Greek final sigma)
CASE_PAIRS = [
    ("main", "Main"),
    ("ruda", "RUDA"),
    ("İnci", "i̇nci"),
    ("\u212abot", "kbot"),
    ("ΟΔΟΣ", "οδος"),
]
AGENTS = [a for pair in CASE_PAIRS for a in pair] + ["eden", "seum", "Zed", "unknown", "worker-1"]
AGENTS += ["😀bot", "\ue000bot"]  # outside the Basic Multilingual Plane, a private-use character
KEYWORD_TEXT = [kw for _, kw in TASK_MONITOR_V1.keywords]
# characters Python 3.11 knows (its str.lower is the oracle's lower-casing; see enrich_ref)
CHARS = st.characters(exclude_categories=("Cs", "Cn"))
FRAGMENTS = st.one_of(
    st.sampled_from(KEYWORD_TEXT),
    st.sampled_from(KEYWORD_TEXT).map(str.upper),
    st.sampled_from(["la", "android", "latest", "Root  Cause", "\u212a8s", "KPİ", " ", "\n", "_"]),
    st.sampled_from(PADS),
    st.text(CHARS, max_size=3),
)
TEXT = st.lists(FRAGMENTS, max_size=5).map("".join)
WRONG = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(st.sampled_from(["a", "id"]), st.integers(), max_size=1),
)


def padded(values: list[str]) -> st.SearchStrategy[str]:
    return st.tuples(st.sampled_from(PADS), st.sampled_from(values), st.sampled_from(PADS)).map(
        "".join
    )


def weighted(
    common: st.SearchStrategy[Any], rare: st.SearchStrategy[Any]
) -> st.SearchStrategy[Any]:
    """``common`` 4 times in 5 (st.one_of flattens nested one_of, which skews its weights)."""
    return st.integers(0, 4).flatmap(lambda i: rare if i == 0 else common)


def value(ok: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return weighted(ok, WRONG)


AGENT = value(weighted(weighted(padded(["main", "ruda", "MAIN", "Ruda"]), padded(AGENTS)), TEXT))
SESSION_KEY = value(
    st.one_of(
        padded(
            [
                "agent:main:main",
                "AGENT:Ruda:MAIN",
                "agent:x:subagent:y",
                "agent:a:b:main",
                "agent::main",
                "agent:\n:main",
                "agent:x:Subagent:y",
                "agent:x:main\n",
                "agent:x:maın",
            ]
        ),
        TEXT,
    )
)
NUMBER = st.one_of(
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.just(2**63 + 1),
    st.just(10**400),
    st.sampled_from(["1", "", True]),
)
DATA_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "fromAgent": AGENT,
    "senderAgentId": AGENT,
    "toAgent": AGENT,
    "targetAgentId": AGENT,
    "fromSessionType": value(padded(["main", "subagent", "unknown", "Main", "sub"])),
    "toSessionType": value(padded(["main", "subagent", "unknown", "Main", "sub"])),
    "sourceSessionKey": SESSION_KEY,
    "requesterSessionKey": SESSION_KEY,
    "sessionKey": SESSION_KEY,
    "targetSessionKey": SESSION_KEY,
    "parentConversationId": value(padded(["", "c1"])),
    "depth": NUMBER,
    "hop": NUMBER,
    "eventRole": value(padded([*TASK_MONITOR_V1.event_roles, "Conversation.Main", "x"])),
    "collabCategory": value(padded([*TASK_MONITOR_V1.category_names, "QA_validation", "other"])),
    "collabSubTags": value(st.lists(st.one_of(TEXT, WRONG), max_size=7)),
    "categoryVersion": value(padded(["", "v0", "v2"])),
    **{f: value(TEXT) for f in TASK_MONITOR_V1.haystack_fields},
}
AGENT_FIELDS = ("fromAgent", "senderAgentId", "toAgent", "targetAgentId")
HINT_FIELDS = ("parentConversationId", "depth", "hop")
OTHER_FIELDS = [f for f in DATA_FIELDS if f not in AGENT_FIELDS + HINT_FIELDS]
# agents often, at most one delegation hint usually (hints everywhere would hide the
# main-to-main conversations), any other fields now and then
DATA = st.tuples(
    st.fixed_dictionaries({}, optional={f: DATA_FIELDS[f] for f in AGENT_FIELDS}),
    weighted(
        st.one_of(
            st.just({}),
            st.sampled_from(HINT_FIELDS).flatmap(
                lambda k: st.fixed_dictionaries({k: DATA_FIELDS[k]})
            ),
        ),
        st.fixed_dictionaries({}, optional={f: DATA_FIELDS[f] for f in HINT_FIELDS}),
    ),
    st.lists(st.sampled_from(OTHER_FIELDS), max_size=6, unique=True).flatmap(
        lambda keys: st.fixed_dictionaries({k: DATA_FIELDS[k] for k in keys})
    ),
).map(lambda parts: {**parts[0], **parts[1], **parts[2]})
TYPES = padded(
    [
        "a2a.send",
        "a2a.spawn",
        "a2a.spawn_result",
        "a2a.response",
        "a2a.complete",
        "a2a.",
        "A2A.send",
        "task.updated",
        "task",
        "plan.submitted",
        "continuation.complete",
        "backlog.x",
        "resume_reminder.y",
        "zombie.z",
        "unblock.u",
        "milestone.sync_failed",
        "custom.thing",
        "docs.cs",
        "",
    ]
)
EVENT = st.fixed_dictionaries(
    {"type": weighted(TYPES, st.one_of(TEXT, WRONG))},
    optional={
        "agentId": AGENT,
        "ts": st.integers(0, 2**53),
        "data": weighted(DATA, st.one_of(WRONG, WRONG.map(lambda v: [v]))),
    },
)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    events=st.lists(EVENT, min_size=1, max_size=25),
    mains=st.one_of(st.none(), st.lists(padded(AGENTS), max_size=4)),
)
def test_enrich_equals_the_slow_reference(
    events: list[dict[str, Any]], mains: list[str] | None
) -> None:
    main_set = (
        {"main", "ruda"} if mains is None else {ref.trim(m).lower() for m in mains if ref.trim(m)}
    )
    oracle = [r for ev in events if (r := ref.enrich_event(ev, main_set)) is not None]
    kept = [ev for ev in events if ref.enrich_event(ev, main_set) is not None]
    if not kept:
        return
    got = _rows(enrich(from_records(kept), main_agents=mains))
    assert [got[i] for i in range(1, len(kept) + 1)] == oracle


# ---- rule sets that need the exact haystack, and the fast path against it ----------------

CUSTOM = TASK_MONITOR_V1.with_keywords(
    {"greek": ["ΟΔΟΣ", "σ"], "edges": [" cause", "a\nb", "İ", "Kelvin", "x "]}
)
CUSTOM_KEYWORDS = {c.name: list(c.keywords) for c in CUSTOM.categories}
CUSTOM_TEXT = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "ΟΔΟΣ",
                "οδοσ",
                "Σ",
                "σ",
                "ς",
                "Α",
                " cause",
                "CAUSE",
                "root",
                "a",
                "b",
                "\n",
                "İ",
                "i\u0307",
                "\u212aelvin",
                "KELVIN",
                "x",
                "X",
                "doc",
                "S",
                "C",
                *PADS,
            ]
        ),
        FRAGMENTS,
    ),
    max_size=6,
).map("".join)
CUSTOM_EVENT = st.fixed_dictionaries(
    {"type": padded(["a2a.send", "task.x", "custom", "docs"])},
    optional={
        "data": st.fixed_dictionaries(
            {}, optional={f: CUSTOM_TEXT for f in TASK_MONITOR_V1.haystack_fields}
        )
    },
)


def test_raw_haystack_shortcut_applies_only_where_it_is_exact() -> None:
    assert _Plan(TASK_MONITOR_V1, frozenset()).folding == {"İ": "i\u0307", "\u212a": "k"}
    assert _Plan(TASK_MONITOR_V1, frozenset(), exact_text=True).folding is None
    assert _Plan(CUSTOM, frozenset()).folding is None
    for keywords in (["σ"], [" x"], ["x\u3000"], ["a\nb"]):
        rules = TASK_MONITOR_V1.with_keywords({"extra": keywords})
        assert _Plan(rules, frozenset()).folding is None, keywords
    assert (
        _Plan(TASK_MONITOR_V1.with_keywords({"extra": ["a b", "é"]}), frozenset()).folding
        is not None
    )


def test_lower_case_changes_table_is_complete() -> None:
    # the table stops at U+20000: nothing above lower-cases to anything else
    rest = pl.Series([chr(c) for c in range(0x20000, 0x110000)])
    assert (rest.str.to_lowercase() == rest).all()
    assert _case_changes()["\u0130"] == "i\u0307" and "A" not in _case_changes()


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(events=st.lists(CUSTOM_EVENT, min_size=1, max_size=20))
def test_exact_haystack_and_custom_keywords_equal_the_slow_reference(
    events: list[dict[str, Any]],
) -> None:
    kept = [ev for ev in events if ref.trim(ev["type"])]
    if not kept:
        return
    frame = from_records(kept)
    oracle = [
        ref.enrich_event(ev, {"main", "ruda"}, CUSTOM_KEYWORDS, CUSTOM.version) for ev in kept
    ]
    got = _rows(enrich(frame, rules=CUSTOM))
    assert [got[i] for i in range(1, len(kept) + 1)] == oracle
    # and for v1, the raw-haystack shortcut equals the trim-and-lower-case path
    exact = _Plan(TASK_MONITOR_V1, TASK_MONITOR_V1.default_main_agents, exact_text=True).apply(
        frame
    )
    assert enrich(frame).equals(exact)


def test_categories_longer_than_one_bit_field() -> None:
    many = [f"kw{i:02d}" for i in range(70)]
    rules = TASK_MONITOR_V1.with_keywords({"many": many})
    assert len(_Plan(rules, frozenset()).slices) == 12  # "many" takes two 63-bit fields
    texts = ["kw69 kw01", "kw66 kw65 kw64 kw63 kw62", "kw62 kw63", "kw00", "docs kw68"]
    events = [{"type": "custom", "data": {"message": t}} for t in texts]
    keywords = {c.name: list(c.keywords) for c in rules.categories}
    oracle = [ref.enrich_event(ev, {"main", "ruda"}, keywords, rules.version) for ev in events]
    got = _rows(enrich(from_records(events), rules=rules))
    assert [got[i] for i in range(1, len(events) + 1)] == oracle
    assert got[2]["collabSubTags"] == ["kw62", "kw63", "kw64"]
