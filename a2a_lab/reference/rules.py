"""The Task-Monitor rule set as data: one immutable, versioned object (rules §1-§7).

Everything the reference dashboard hard-codes (role names and type prefixes, the ten
collaboration categories with their 108 keywords and the weight rule, the confidence
constants, the fallbacks, the sub-tag caps, the work-session windows, the terminal rules and
the default main agents) lives in :class:`RuleSet`. :data:`TASK_MONITOR_V1` is the reference
(version ``"v1"``); the code of :mod:`a2a_lab.enrich` and :mod:`a2a_lab.sessions` only reads
it. A modified copy for a notebook comes from :meth:`RuleSet.replace` or
:meth:`RuleSet.with_keywords`; unless given a version, the copy is versioned
``"<base>+<fingerprint>"`` so that enriched events (``categoryVersion``) say which rules
produced them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from os import PathLike
from pathlib import Path
from typing import Any

from a2a_lab.reference.jsstr import js_lower, js_lower_all, js_to_fixed_number, js_trim, utf16_len
from a2a_lab.reference.strict_json import reject_constant as _reject_constant

__all__ = [
    "TASK_MONITOR_V1",
    "Category",
    "RuleSet",
    "main_agents_from_openclaw",
    "normalize_agent_id",
]


@dataclass(frozen=True)
class Category:
    """One collaboration category and its keywords, in the reference's declared order.

    Examples
    --------
    >>> Category("docs_knowledge", ("doc", "docs")).keywords
    ('doc', 'docs')
    """

    name: str
    keywords: tuple[str, ...]

    def __post_init__(self) -> None:
        # accept any iterable (a list typed in a notebook) but store a tuple: immutable
        object.__setattr__(self, "keywords", tuple(self.keywords))


class _EventRole:
    """A read-only attribute of a :class:`RuleSet`: its ``event_roles`` entry at ``index``."""

    def __init__(self, index: int, doc: str) -> None:
        self._index = index
        self.__doc__ = doc

    def __get__(self, rules: RuleSet | None, owner: type[RuleSet] | None = None) -> str:
        if rules is None:
            raise AttributeError("an event role is read from a RuleSet instance")
        return rules.event_roles[self._index]


@dataclass(frozen=True)
class RuleSet:
    """The Task-Monitor enrichment and work-session rules (rules §1-§7), immutable.

    Build modified copies with :meth:`replace` / :meth:`with_keywords`; the constructor checks
    consistency (known roles and categories, unique keywords, non-negative caps).

    Attributes
    ----------
    version
        Written to ``categoryVersion`` when an event carries none (rules §6).
    event_roles
        The four roles, in this semantic order: conversation, delegation, orchestration,
        observability (rules §5).
    session_types
        main, subagent, unknown (rules §4), in this semantic order.
    orchestration_type_prefixes
        A type starting with one of these is an orchestration event (rules §5.2).
    observability_types
        Types that are always observability events (rules §5.3).
    a2a_type_prefix
        Types with this prefix are delegation or main conversation (rules §5.4).
    spawn_types
        Spawn events: main → subagent, always delegation (rules §4.3, §5.4).
    subagent_session_key_marker
        A session key containing this is a sub-agent session (rules §4.2).
    main_session_key_regex
        A session key fully matching this is a main session (rules §4.2). The reference
        matches ``/^agent:[^:]+:main$/i`` whose ``i`` flag is ASCII-only, hence the explicit
        letter classes.
    categories
        The collaboration categories in declared order (ties in ranking keep this order).
    haystack_fields
        ``data`` fields whose trimmed non-empty text joins the type in the keyword haystack
        (rules §6.2), in this order.
    long_keyword_units
        A keyword longer than this many UTF-16 code units weighs ``long_keyword_weight``,
        otherwise ``short_keyword_weight``.
    long_keyword_weight, short_keyword_weight
        Keyword weights.
    confidence_base, confidence_per_score, confidence_per_gap, confidence_cap
        Rule confidence = ``min(cap, base + top * per_score + gap * per_gap)``.
    confidence_decimals
        Rounding of the rule confidence, as JavaScript ``Number(x.toFixed(decimals))``.
    manual_confidence, fallback_confidence
        Confidence of a manual category and of a fallback category.
    fallback_categories
        ``(role, category)`` pairs: the category of an event without keyword hits.
    fallback_default_category
        The fallback for roles not listed in ``fallback_categories``.
    manual_sub_tag_limit, rule_sub_tag_limit
        At most this many sub-tags from ``data.collabSubTags`` / from keyword hits.
    default_category
        A work-session event's category when it has no valid one (rules §7).
    archive_window_ms
        A work session whose last event is older than this (strictly) is ARCHIVED.
    thread_bucket_ms
        Width of the ``event:<type>:<bucket>`` thread-key buckets.
    terminal_types
        Types that always end a work session (QUIET).
    spawn_result_type, spawn_result_terminal_statuses
        A spawn result whose trimmed ``data.status`` is one of these is terminal.
    task_type_prefix, task_terminal_statuses
        A task event whose trimmed ``data.status`` (else top-level ``status``) is one of
        these is terminal.
    default_main_agents
        The main-agent set when none is given (ids trimmed and lower-cased).
    openclaw_always_main_agents
        Ids added to every main-agent set read from ``openclaw.json`` (rules §1).
    """

    version: str
    event_roles: tuple[str, str, str, str]
    session_types: tuple[str, str, str]
    orchestration_type_prefixes: tuple[str, ...]
    observability_types: tuple[str, ...]
    a2a_type_prefix: str
    spawn_types: tuple[str, ...]
    subagent_session_key_marker: str
    main_session_key_regex: str
    categories: tuple[Category, ...]
    haystack_fields: tuple[str, ...]
    long_keyword_units: int
    long_keyword_weight: int
    short_keyword_weight: int
    confidence_base: float
    confidence_per_score: float
    confidence_per_gap: float
    confidence_cap: float
    confidence_decimals: int
    manual_confidence: float
    fallback_confidence: float
    fallback_categories: tuple[tuple[str, str], ...]
    fallback_default_category: str
    manual_sub_tag_limit: int
    rule_sub_tag_limit: int
    default_category: str
    archive_window_ms: int
    thread_bucket_ms: int
    terminal_types: tuple[str, ...]
    spawn_result_type: str
    spawn_result_terminal_statuses: tuple[str, ...]
    task_type_prefix: str
    task_terminal_statuses: tuple[str, ...]
    default_main_agents: frozenset[str]
    openclaw_always_main_agents: frozenset[str]

    def __repr__(self) -> str:
        # The default dataclass repr spells out every keyword (thousands of characters),
        # and help(al.enrich) prints it in the signature: name the set instead.
        keywords = sum(len(c.keywords) for c in self.categories)
        return f"RuleSet(version={self.version!r}, {len(self.categories)} categories, {keywords} keywords)"

    def __post_init__(self) -> None:
        # store immutable containers whatever the caller passed (lists in a notebook)
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "categories":
                value = tuple(c if isinstance(c, Category) else Category(*c) for c in value)
            elif f.name == "fallback_categories":
                items = value.items() if isinstance(value, Mapping) else value
                value = tuple((str(role), str(cat)) for role, cat in items)
            elif f.name in ("default_main_agents", "openclaw_always_main_agents"):
                value = frozenset(n for n in map(normalize_agent_id, value) if n)
            elif isinstance(value, list):
                value = tuple(value)
            object.__setattr__(self, f.name, value)
        self._validate()

    def _validate(self) -> None:
        if not self.version or not isinstance(self.version, str):
            raise ValueError("RuleSet.version must be a non-empty string")
        if len(self.event_roles) != 4 or len(set(self.event_roles)) != 4:
            raise ValueError("event_roles must be 4 distinct names")
        if len(self.session_types) != 3 or len(set(self.session_types)) != 3:
            raise ValueError("session_types must be 3 distinct names")
        names = self.category_names
        if not names or len(set(names)) != len(names):
            raise ValueError(f"category names must be non-empty and distinct: {names}")
        for cat, kw in self.keywords:
            if not isinstance(kw, str) or kw == "":
                raise ValueError(f"category {cat!r}: keywords must be non-empty strings")
        seen: dict[str, str] = {}
        for (cat, kw), pattern in zip(self.keywords, self.keyword_patterns, strict=True):
            if pattern in seen:
                # one keyword = one hit in one category; the vectorised matcher relies on it
                raise ValueError(
                    f"keyword {kw!r} ({cat}) duplicates {seen[pattern]!r} after lower-casing"
                )
            seen[pattern] = f"{kw} ({cat})"
        for role, cat in self.fallback_categories:
            if role not in self.event_roles:
                raise ValueError(f"fallback_categories: unknown role {role!r}")
            if cat not in names:
                raise ValueError(f"fallback_categories: unknown category {cat!r}")
        for label in ("fallback_default_category", "default_category"):
            if getattr(self, label) not in names:
                raise ValueError(f"{label}: unknown category {getattr(self, label)!r}")
        for label in (
            "manual_sub_tag_limit",
            "rule_sub_tag_limit",
            "confidence_decimals",
            "long_keyword_units",
            "long_keyword_weight",
            "short_keyword_weight",
        ):
            if not isinstance(getattr(self, label), int) or getattr(self, label) < 0:
                raise ValueError(f"{label} must be a non-negative int")
        if self.archive_window_ms < 0 or self.thread_bucket_ms <= 0:
            raise ValueError("archive_window_ms must be >= 0 and thread_bucket_ms > 0")
        re.compile(self.main_session_key_regex)

    # ----------------------------------------------------------------- derived views
    @property
    def category_names(self) -> tuple[str, ...]:
        """Category names in declared order."""
        return tuple(c.name for c in self.categories)

    def category(self, name: str) -> Category:
        """The category called ``name``.

        Examples
        --------
        >>> TASK_MONITOR_V1.category("qa_validation").keywords[:3]
        ('test', 'testing', 'qa')
        """
        for cat in self.categories:
            if cat.name == name:
                return cat
        raise KeyError(name)

    @property
    def keywords(self) -> tuple[tuple[str, str], ...]:
        """Every ``(category, keyword)`` pair, category-major in declared order.

        Examples
        --------
        >>> len(TASK_MONITOR_V1.keywords)
        108
        """
        return tuple((c.name, kw) for c in self.categories for kw in c.keywords)

    @cached_property
    def keyword_patterns(self) -> tuple[str, ...]:
        """The keywords as matched: lower-cased like JavaScript (``keyword.toLowerCase()``),
        in the order of :attr:`keywords`."""
        return tuple(js_lower_all(kw for _, kw in self.keywords))

    role_conversation = _EventRole(0, "The main-to-main conversation role.")
    role_delegation = _EventRole(1, "The sub-agent delegation role.")
    role_orchestration = _EventRole(2, "The task orchestration role.")
    role_observability = _EventRole(3, "The system / observability role.")

    def keyword_weight(self, keyword: str) -> int:
        """Weight of a keyword: by its JavaScript length (UTF-16 code units).

        Examples
        --------
        >>> TASK_MONITOR_V1.keyword_weight("build"), TASK_MONITOR_V1.keyword_weight("컴플라이언스")
        (2, 2)
        >>> TASK_MONITOR_V1.keyword_weight("test")
        1
        """
        long = utf16_len(keyword) > self.long_keyword_units
        return self.long_keyword_weight if long else self.short_keyword_weight

    def fallback_category(self, role: str) -> str:
        """The category of an event of ``role`` without keyword hits (rules §6.3).

        Examples
        --------
        >>> TASK_MONITOR_V1.fallback_category("system.observability")
        'infra_ops'
        """
        return dict(self.fallback_categories).get(role, self.fallback_default_category)

    def rule_confidence(self, top: int, gap: int) -> float:
        """The rule confidence for a top score and a gap, exactly as the reference computes it.

        ``Number(Math.min(cap, base + top * per_score + gap * per_gap).toFixed(decimals))``,
        evaluated left to right in doubles as JavaScript does.

        Examples
        --------
        >>> TASK_MONITOR_V1.rule_confidence(2, 1), TASK_MONITOR_V1.rule_confidence(1, 0)
        (0.71, 0.58)
        """
        raw = min(
            self.confidence_cap,
            self.confidence_base + top * self.confidence_per_score + gap * self.confidence_per_gap,
        )
        return js_to_fixed_number(raw, self.confidence_decimals)

    @cached_property
    def max_category_score(self) -> int:
        """The largest score any category can reach (all its keywords hit)."""
        return max(sum(self.keyword_weight(kw) for kw in c.keywords) for c in self.categories)

    @cached_property
    def fingerprint(self) -> str:
        """SHA-256 of the rules' content (everything except the version), hex."""
        content = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        del content["version"]
        text = json.dumps(content, sort_keys=True, ensure_ascii=False, default=_jsonable)
        return hashlib.sha256(text.encode()).hexdigest()

    # ------------------------------------------------------------- derived copies
    def replace(self, **changes: Any) -> RuleSet:
        """A modified copy; without an explicit ``version`` it gets ``"<base>+<fingerprint>"``.

        Parameters
        ----------
        **changes
            Field values to change (any field of :class:`RuleSet`).

        Returns
        -------
        RuleSet
            The new, validated rule set.

        Examples
        --------
        >>> strict = TASK_MONITOR_V1.replace(confidence_cap=0.9)
        >>> strict.version.startswith("v1+"), strict.confidence_cap, TASK_MONITOR_V1.confidence_cap
        (True, 0.9, 0.95)
        >>> TASK_MONITOR_V1.replace(version="team-v2").version
        'team-v2'
        """
        explicit_version = "version" in changes
        new = dataclasses.replace(self, **changes)
        if explicit_version:
            return new
        base = self.version.split("+", 1)[0]
        return dataclasses.replace(new, version=f"{base}+{new.fingerprint[:8]}")

    def with_keywords(
        self, keywords: Mapping[str, Iterable[str]], *, version: str | None = None
    ) -> RuleSet:
        """A copy whose named categories get new keyword lists (new names are appended).

        Parameters
        ----------
        keywords
            ``{category: keywords}``; a known category keeps its place in the declared
            order, an unknown one is added at the end.
        version
            The new version; default ``"<base>+<fingerprint>"``.

        Returns
        -------
        RuleSet
            The copy, made and validated by :meth:`replace`.

        Examples
        --------
        >>> community = TASK_MONITOR_V1.category("customer_community")
        >>> no_cs = TASK_MONITOR_V1.with_keywords(
        ...     {community.name: [kw for kw in community.keywords if kw != "cs"]})
        >>> len(no_cs.keywords), no_cs.version == TASK_MONITOR_V1.version
        (107, False)
        """
        new_lists = {name: tuple(kws) for name, kws in keywords.items()}
        categories = [Category(c.name, new_lists.pop(c.name, c.keywords)) for c in self.categories]
        categories += [Category(name, kws) for name, kws in new_lists.items()]
        changes: dict[str, Any] = {"categories": tuple(categories)}
        if version is not None:
            changes["version"] = version
        return self.replace(**changes)


def _jsonable(value: object) -> object:
    if isinstance(value, frozenset):
        return sorted(value)
    if isinstance(value, Category):
        return [value.name, list(value.keywords)]
    raise TypeError(f"not serialisable: {value!r}")


def normalize_agent_id(value: object) -> str | None:
    """An agent id as the main-agent set compares it: JS-trimmed, lower-cased; None if blank.

    Examples
    --------
    >>> normalize_agent_id("  RUDA\\u3000"), normalize_agent_id(" "), normalize_agent_id(3)
    ('ruda', None, None)
    """
    if not isinstance(value, str):
        return None
    return js_lower(js_trim(value)) or None


def main_agents_from_openclaw(
    path: str | PathLike[str], rules: RuleSet | None = None
) -> frozenset[str]:
    """The main-agent set defined by an ``openclaw.json`` (rules §1).

    Ids of ``agents.list[].id``, plus, for every other key of ``agents`` except ``list`` and
    ``defaults`` whose value is a non-empty object, its string ``id`` if it has one, else the
    key; all trimmed and lower-cased; always plus ``main`` and ``ruda``
    (``rules.openclaw_always_main_agents``). Anything of the wrong
    JSON type is ignored, as in the reference.

    Unlike the reference dashboard, which silently falls back to ``{main, ruda}`` when its
    implicit ``~/.openclaw/openclaw.json`` is missing or not JSON, an explicitly named file
    must exist and parse (a typo should not quietly change every session type).

    Parameters
    ----------
    path
        Path of an ``openclaw.json``.
    rules
        The rule set (default :data:`TASK_MONITOR_V1`).

    Returns
    -------
    frozenset[str]
        The normalised main-agent ids.

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    ValueError
        The file is not strict JSON (JSON5 comments, ``NaN``, a BOM ... are rejected, as by
        ``JSON.parse``).

    Examples
    --------
    >>> import json, tempfile
    >>> cfg = {"agents": {"list": [{"id": " Eden "}, {"id": 7}], "seum": {"model": "x"},
    ...                   "defaults": {"model": "y"}, "empty": {}}}
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    ...     _ = f.write(json.dumps(cfg))
    >>> sorted(main_agents_from_openclaw(f.name))
    ['eden', 'main', 'ruda', 'seum']
    """
    text = Path(path).read_bytes().decode("utf-8", errors="replace")
    try:
        parsed = json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from exc
    agents = _record(_record(parsed).get("agents"))
    ids: set[str] = set()
    entries = agents.get("list")
    for entry in entries if isinstance(entries, list) else []:
        if agent_id := normalize_agent_id(_record(entry).get("id")):
            ids.add(agent_id)
    for key, value in agents.items():
        if key in ("list", "defaults"):
            continue
        record = _record(value)
        if explicit := normalize_agent_id(record.get("id")):
            ids.add(explicit)
        elif record and (key_id := normalize_agent_id(key)):
            ids.add(key_id)
    return frozenset(ids) | (rules or TASK_MONITOR_V1).openclaw_always_main_agents


def _record(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


#: The reference dashboard's rules (Pronto-Lab/prontoclaw ``scripts/task-monitor-server.ts``).
TASK_MONITOR_V1 = RuleSet(
    version="v1",
    event_roles=(
        "conversation.main",
        "delegation.subagent",
        "orchestration.task",
        "system.observability",
    ),
    session_types=("main", "subagent", "unknown"),
    orchestration_type_prefixes=(
        "task.",
        "continuation.",
        "plan.",
        "unblock.",
        "zombie.",
        "resume_reminder.",
        "backlog.",
    ),
    observability_types=("milestone.sync_failed",),
    a2a_type_prefix="a2a.",
    spawn_types=("a2a.spawn", "a2a.spawn_result"),
    subagent_session_key_marker=":subagent:",
    main_session_key_regex=r"^[Aa][Gg][Ee][Nn][Tt]:[^:]+:[Mm][Aa][Ii][Nn]$",
    categories=(
        Category(
            "engineering_build",
            (
                "implement",
                "implementation",
                "build",
                "feature",
                "refactor",
                "bugfix",
                "fix",
                "코드",
                "구현",
                "개발",
                "리팩토링",
                "버그",
            ),
        ),
        Category(
            "infra_ops",
            (
                "deploy",
                "deployment",
                "infra",
                "infrastructure",
                "docker",
                "k8s",
                "ops",
                "incident",
                "운영",
                "인프라",
                "배포",
                "장애",
                "서버",
            ),
        ),
        Category(
            "qa_validation",
            (
                "test",
                "testing",
                "qa",
                "validation",
                "verify",
                "e2e",
                "회귀",
                "검증",
                "테스트",
                "품질",
            ),
        ),
        Category(
            "planning_decision",
            (
                "plan",
                "planning",
                "decision",
                "design",
                "architecture",
                "scope",
                "우선순위",
                "설계",
                "기획",
                "의사결정",
                "정책",
            ),
        ),
        Category(
            "research_analysis",
            (
                "research",
                "analysis",
                "investigate",
                "compare",
                "benchmark",
                "root cause",
                "분석",
                "조사",
                "리서치",
                "원인",
                "비교",
            ),
        ),
        Category(
            "docs_knowledge",
            (
                "doc",
                "docs",
                "documentation",
                "guide",
                "readme",
                "wiki",
                "문서",
                "가이드",
                "정리",
                "기록",
            ),
        ),
        Category(
            "growth_marketing",
            (
                "campaign",
                "marketing",
                "growth",
                "experiment",
                "copy",
                "funnel",
                "마케팅",
                "성장",
                "캠페인",
                "전환",
            ),
        ),
        Category(
            "customer_community",
            (
                "customer",
                "community",
                "support",
                "ticket",
                "feedback",
                "cs",
                "고객",
                "커뮤니티",
                "문의",
                "피드백",
            ),
        ),
        Category(
            "legal_compliance",
            (
                "legal",
                "compliance",
                "policy",
                "terms",
                "regulation",
                "contract",
                "법무",
                "컴플라이언스",
                "약관",
                "규정",
                "계약",
            ),
        ),
        Category(
            "biz_strategy",
            (
                "kpi",
                "revenue",
                "strategy",
                "business",
                "roadmap",
                "roi",
                "비즈니스",
                "전략",
                "지표",
                "매출",
            ),
        ),
    ),
    haystack_fields=(
        "label",
        "message",
        "replyPreview",
        "description",
        "summary",
        "reason",
        "title",
        "taskId",
        "workSessionId",
        "collabIntent",
    ),
    long_keyword_units=4,
    long_keyword_weight=2,
    short_keyword_weight=1,
    confidence_base=0.5,
    confidence_per_score=0.08,
    confidence_per_gap=0.05,
    confidence_cap=0.95,
    confidence_decimals=2,
    manual_confidence=1.0,
    fallback_confidence=0.2,
    fallback_categories=(
        ("orchestration.task", "planning_decision"),
        ("system.observability", "infra_ops"),
    ),
    fallback_default_category="engineering_build",
    manual_sub_tag_limit=5,
    rule_sub_tag_limit=3,
    default_category="engineering_build",
    archive_window_ms=86_400_000,
    thread_bucket_ms=300_000,
    terminal_types=("a2a.complete", "continuation.complete", "continuation.completed"),
    spawn_result_type="a2a.spawn_result",
    spawn_result_terminal_statuses=("error",),
    task_type_prefix="task.",
    task_terminal_statuses=("completed", "cancelled", "abandoned", "failed"),
    default_main_agents=frozenset({"main", "ruda"}),
    openclaw_always_main_agents=frozenset({"main", "ruda"}),
)
