"""Enrichment of the event frame: roles, session types and collaboration categories.

A vectorised Polars transcription of the reference's ``enrichCoordinationEvent`` (rules
§1-§6, with the JavaScript string semantics of §10 from :mod:`a2a_lab._jsstr`). All
constants come from a :class:`~a2a_lab.rules.RuleSet`.

Columns added (or replaced) by :func:`enrich`:

=====================  ==============  ==================================================
column                 dtype           meaning
=====================  ==============  ==================================================
``type``               String          REPLACED by its JS-trimmed value, as in the
                                       reference's enriched event (the original text
                                       stays in ``raw``)
``fromAgent``          String, null    rules §3: ``data.fromAgent`` or
                                       ``data.senderAgentId`` or top-level ``agentId``,
                                       trimmed, case kept; null when none is a
                                       non-blank string
``toAgent``            String, null    ``data.toAgent`` or ``data.targetAgentId``, same
``eventRole``          String          rules §5
``fromSessionType``    String          rules §4: main / subagent / unknown
``toSessionType``      String          rules §4
``collabCategory``     String          rules §6
``collabSubTags``      List[String]    rules §6 (never null; ``[]`` for fallbacks)
``categoryConfidence`` Float64         rules §6
``categorySource``     String          manual / rule / fallback
``categoryVersion``    String          trimmed ``data.categoryVersion``, else the rule
                                       set's version
=====================  ==============  ==================================================

``data`` is left as read: the enriched values live in the top-level columns only (a writer
that needs the reference's object puts them into ``data`` as well, with the trimmed
``data.collabIntent``).

The keyword test is one Aho-Corasick pass (``str.extract_many`` with ``overlapping=True``,
which reports every occurrence of every keyword, so ``docs`` yields ``doc``, ``docs`` and
``cs``). The distinct hits per event are mapped to their keyword ordinals; category scores and
hit counts are summed as bit-packed integers (one small bit field per category, wide enough
that no field can overflow into the next), ranked with horizontal expressions, and the sub-tags
are a slice of the sorted ordinals. The confidence comes from the rule set's exact table over
all reachable ``(top, gap)`` pairs, so it equals JavaScript's ``Number(x.toFixed(2))``.

The enrichment has no non-default modes: its quirks (unknown/unknown ``a2a.*`` events are
delegation, keywords match as plain substrings) are rules, and a corrected classifier is a
modified rule set (e.g. without ``cs``), not a flag.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from os import PathLike
from typing import TypeVar

import polars as pl

from a2a_lab._jsstr import js_string_expr, js_trim_expr
from a2a_lab.rules import TASK_MONITOR_V1, RuleSet, main_agents_from_openclaw, normalize_agent_id

__all__ = ["ENRICHMENT_COLUMNS", "enrich", "resolve_main_agents"]

#: The columns :func:`enrich` adds, in order (``type`` is replaced in place).
ENRICHMENT_COLUMNS: tuple[str, ...] = (
    "fromAgent",
    "toAgent",
    "eventRole",
    "fromSessionType",
    "toSessionType",
    "collabCategory",
    "collabSubTags",
    "categoryConfidence",
    "categorySource",
    "categoryVersion",
)

# Sources of a category (the reference also declares "heuristic" but never produces it).
SOURCE_MANUAL, SOURCE_RULE, SOURCE_FALLBACK = "manual", "rule", "fallback"

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)
MainAgents = Iterable[str] | str | PathLike[str] | None

_TMP = "__enrich_"


def resolve_main_agents(main_agents: MainAgents, rules: RuleSet = TASK_MONITOR_V1) -> frozenset[str]:
    """The normalised main-agent set for :func:`enrich`.

    Parameters
    ----------
    main_agents
        ``None``: ``rules.default_main_agents`` (``{main, ruda}``). A ``str`` or path: an
        ``openclaw.json`` read by :func:`~a2a_lab.rules.main_agents_from_openclaw` (which
        adds ``main`` and ``ruda``, as the reference does). Any other iterable: exactly these
        ids (nothing added).
    rules
        The rule set.

    Returns
    -------
    frozenset[str]
        Ids JS-trimmed and lower-cased, blanks dropped.

    Examples
    --------
    >>> sorted(resolve_main_agents(None)), sorted(resolve_main_agents([" Eden", "", "MAIN"]))
    (['main', 'ruda'], ['eden', 'main'])
    """
    if main_agents is None:
        return rules.default_main_agents
    if isinstance(main_agents, (str, PathLike)):
        return main_agents_from_openclaw(main_agents, rules)
    return frozenset(n for n in map(normalize_agent_id, main_agents) if n)


def enrich(
    events: Frame, rules: RuleSet = TASK_MONITOR_V1, main_agents: MainAgents = None
) -> Frame:
    """Add the Task-Monitor enrichment columns (rules §1-§6) to an event frame.

    Parameters
    ----------
    events
        The event frame of :func:`a2a_lab.load` (or any frame with its ``type``,
        ``agentId`` and ``data`` columns), eager or lazy.
    rules
        The rule set (default: the reference, :data:`~a2a_lab.rules.TASK_MONITOR_V1`).
    main_agents
        The main-agent set: ``None`` (``{main, ruda}``), ids, or an ``openclaw.json`` path;
        see :func:`resolve_main_agents`.

    Returns
    -------
    pl.DataFrame or pl.LazyFrame
        The same kind as ``events``: its columns (``type`` JS-trimmed) followed by
        :data:`ENRICHMENT_COLUMNS`.

    Examples
    --------
    >>> from a2a_lab.io import from_records
    >>> frame = from_records([
    ...     {"type": "a2a.send", "ts": 1, "data": {"fromAgent": "ruda", "toAgent": "main",
    ...      "message": "코드 구현 진행 상황 공유"}},
    ...     {"type": "a2a.response", "ts": 2, "data": {"fromAgent": "ruda", "toAgent": "main",
    ...      "replyPreview": "docs updated"}},
    ... ])
    >>> enrich(frame).select("eventRole", "collabCategory", "collabSubTags", "categoryConfidence")
    shape: (2, 4)
    ┌───────────────────┬───────────────────┬──────────────────┬────────────────────┐
    │ eventRole         ┆ collabCategory    ┆ collabSubTags    ┆ categoryConfidence │
    │ ---               ┆ ---               ┆ ---              ┆ ---                │
    │ str               ┆ str               ┆ list[str]        ┆ f64                │
    ╞═══════════════════╪═══════════════════╪══════════════════╪════════════════════╡
    │ conversation.main ┆ engineering_build ┆ ["코드", "구현"] ┆ 0.76               │
    │ conversation.main ┆ docs_knowledge    ┆ ["doc", "docs"]  ┆ 0.71               │
    └───────────────────┴───────────────────┴──────────────────┴────────────────────┘
    """
    plan = _Plan(rules, resolve_main_agents(main_agents, rules))
    names = events.collect_schema().names()
    out = (
        events.lazy()
        .with_columns(plan.stage_agents())
        .with_columns(plan.stage_session_types())
        .with_columns(plan.stage_role_and_hits())
        .with_columns(plan.stage_packed_scores())
        .with_columns(plan.stage_category_scores())
        .with_columns(plan.stage_top_score())
        .with_columns(plan.stage_top_category())
        .with_columns(plan.stage_ranking())
        .with_columns(plan.stage_category())
        .select(*(n for n in names if n not in ENRICHMENT_COLUMNS), *ENRICHMENT_COLUMNS)
    )
    return out if isinstance(events, pl.LazyFrame) else out.collect()


def _data(field: str) -> pl.Expr:
    return pl.col("data").struct.field(field)


def _text(field: str) -> pl.Expr:
    return js_string_expr(_data(field))


def _tmp(name: str) -> pl.Expr:
    return pl.col(_TMP + name)


@dataclass(frozen=True)
class _Plan:
    """The enrichment expressions for one rule set and main-agent set, stage by stage."""

    rules: RuleSet
    main_agents: frozenset[str]

    # ------------------------------------------------------------ keyword tables
    @cached_property
    def patterns(self) -> list[str]:
        """Lower-cased keywords (the reference matches ``keyword.toLowerCase()``)."""
        return list(self.rules.keyword_patterns)

    @cached_property
    def keyword_category(self) -> list[int]:
        names = self.rules.category_names
        return [names.index(cat) for cat, _ in self.rules.keywords]

    @cached_property
    def field_bits(self) -> int:
        """Bits of one packed field: enough for the largest score and the largest count."""
        widest = max(self.rules.max_category_score, *(len(c.keywords) for c in self.rules.categories))
        return max(1, widest.bit_length())

    @cached_property
    def fields_per_word(self) -> int:
        return 63 // self.field_bits

    @cached_property
    def n_words(self) -> int:
        return -(-len(self.rules.categories) // self.fields_per_word)

    def _packed(self, word: int, unit: str) -> list[int]:
        """Per keyword ordinal: its weight (``unit="score"``) or 1 shifted into its field."""
        values = []
        for (_, kw), cat in zip(self.rules.keywords, self.keyword_category, strict=True):
            w, slot = divmod(cat, self.fields_per_word)
            amount = self.rules.keyword_weight(kw) if unit == "score" else 1
            values.append(amount << (slot * self.field_bits) if w == word else 0)
        return values

    # ------------------------------------------------------------------- stages
    def stage_agents(self) -> list[pl.Expr]:
        return [
            js_trim_expr(pl.col("type")).alias("type"),
            pl.coalesce(_text("fromAgent"), _text("senderAgentId"), js_string_expr(pl.col("agentId")))
            .alias("fromAgent"),
            pl.coalesce(_text("toAgent"), _text("targetAgentId")).alias("toAgent"),
            (
                _text("parentConversationId").is_not_null()
                | _data("depth").is_not_null()
                | _data("hop").is_not_null()
            ).alias(_TMP + "hint"),
        ]

    def _key_type(self, key: pl.Expr) -> pl.Expr:
        main, subagent, unknown = self.rules.session_types
        return (
            pl.when(key.str.contains(self.rules.subagent_session_key_marker, literal=True))
            .then(pl.lit(subagent))
            .when(key.str.contains(self.rules.main_session_key_regex))
            .then(pl.lit(main))
            .otherwise(pl.lit(unknown))
        )

    def stage_session_types(self) -> list[pl.Expr]:
        main, subagent, unknown = self.rules.session_types
        mains = pl.lit(pl.Series(sorted(self.main_agents), dtype=pl.String)).implode()
        from_main = pl.col("fromAgent").str.to_lowercase().is_in(mains).fill_null(False)
        to_main = pl.col("toAgent").str.to_lowercase().is_in(mains).fill_null(False)
        hint = _tmp("hint")
        spawn = pl.col("type").is_in(self.rules.spawn_types)
        from_key = pl.coalesce(_text("sourceSessionKey"), _text("requesterSessionKey"), _text("sessionKey"))
        from_type = pl.when(spawn).then(pl.lit(main)).otherwise(self._key_type(from_key))
        to_type = pl.when(spawn).then(pl.lit(subagent)).otherwise(self._key_type(_text("targetSessionKey")))
        from_type = (
            pl.when(from_type != unknown)
            .then(from_type)
            .when(from_main)
            .then(pl.lit(main))
            .when(hint & to_main)
            .then(pl.lit(subagent))
            .otherwise(pl.lit(unknown))
        )
        to_type = (
            pl.when(to_type != unknown)
            .then(to_type)
            .when(to_main)
            .then(pl.lit(main))
            .when(hint & from_main)
            .then(pl.lit(subagent))
            .otherwise(pl.lit(unknown))
        )
        explicit_from, explicit_to = _text("fromSessionType"), _text("toSessionType")
        explicit = (
            explicit_from.is_in(self.rules.session_types) & explicit_to.is_in(self.rules.session_types)
        ).fill_null(False)
        return [
            pl.when(explicit).then(explicit_from).otherwise(from_type).alias("fromSessionType"),
            pl.when(explicit).then(explicit_to).otherwise(to_type).alias("toSessionType"),
        ]

    def stage_role_and_hits(self) -> list[pl.Expr]:
        r = self.rules
        main, subagent, _ = r.session_types
        etype = pl.col("type")
        from_type, to_type = pl.col("fromSessionType"), pl.col("toSessionType")
        explicit = _text("eventRole")
        delegation_hint = (
            etype.is_in(r.spawn_types) | _tmp("hint") | (from_type == subagent) | (to_type == subagent)
        )
        a2a_role = (
            pl.when(delegation_hint)
            .then(pl.lit(r.role_delegation))
            .when((from_type == main) & (to_type == main))
            .then(pl.lit(r.role_conversation))
            .otherwise(pl.lit(r.role_delegation))
        )
        role = (
            pl.when(explicit.is_in(r.event_roles).fill_null(False))
            .then(explicit)
            .when(pl.any_horizontal(etype.str.starts_with(p) for p in r.orchestration_type_prefixes))
            .then(pl.lit(r.role_orchestration))
            .when(etype.is_in(r.observability_types))
            .then(pl.lit(r.role_observability))
            .when(etype.str.starts_with(r.a2a_type_prefix))
            .then(a2a_role)
            .otherwise(pl.lit(r.role_observability))
        )
        haystack = pl.concat_str(
            [etype, *(_text(f) for f in r.haystack_fields)], separator="\n", ignore_nulls=True
        ).str.to_lowercase()
        ordinals = (
            haystack.str.extract_many(self.patterns, overlapping=True)
            .list.eval(
                pl.element().replace_strict(
                    self.patterns, range(len(self.patterns)), return_dtype=pl.UInt16
                )
            )
            .list.unique()
            .list.sort()
        )
        return [role.alias("eventRole"), ordinals.alias(_TMP + "hits")]

    def stage_packed_scores(self) -> list[pl.Expr]:
        hits = _tmp("hits")
        ordinals = list(range(len(self.patterns)))
        exprs = []
        for word in range(self.n_words):
            for unit in ("score", "count"):
                exprs.append(
                    hits.list.eval(
                        pl.element().replace_strict(
                            ordinals, self._packed(word, unit), return_dtype=pl.Int64
                        )
                    )
                    .list.sum()
                    .alias(f"{_TMP}{unit}{word}")
                )
        return exprs

    def stage_category_scores(self) -> list[pl.Expr]:
        """Unpack every category's score and hit count from the packed words."""
        exprs = []
        for cat in range(len(self.rules.categories)):
            word, slot = divmod(cat, self.fields_per_word)
            shift, size = 1 << (slot * self.field_bits), 1 << self.field_bits
            for unit in ("score", "count"):
                exprs.append(((_tmp(f"{unit}{word}") // shift) % size).alias(f"{_TMP}{unit}_{cat}"))
        return exprs

    def _per_category(self, unit: str) -> list[pl.Expr]:
        return [_tmp(f"{unit}_{cat}") for cat in range(len(self.rules.categories))]

    def stage_top_score(self) -> list[pl.Expr]:
        return [pl.max_horizontal(self._per_category("score")).alias(_TMP + "top")]

    def stage_top_category(self) -> list[pl.Expr]:
        # the reference's stable sort puts the first category with the top score first
        top = _tmp("top")
        firsts = [pl.when(s == top).then(pl.lit(c)) for c, s in enumerate(self._per_category("score"))]
        return [pl.coalesce(firsts).alias(_TMP + "top_cat")]

    def stage_ranking(self) -> list[pl.Expr]:
        scores, counts = self._per_category("score"), self._per_category("count")
        top_cat = _tmp("top_cat")
        others = [pl.when(top_cat != c).then(s) for c, s in enumerate(scores)]
        second = pl.max_horizontal(others).fill_null(0) if len(scores) > 1 else pl.lit(0, pl.Int64)
        # the hits are sorted by ordinal (category-major): the top category's hits start
        # after those of the categories declared before it
        offset = pl.sum_horizontal([pl.when(top_cat > c).then(k).otherwise(0) for c, k in enumerate(counts)])
        top_count = pl.coalesce([pl.when(top_cat == c).then(k) for c, k in enumerate(counts)])
        return [
            (_tmp("top") - second).clip(lower_bound=0).alias(_TMP + "gap"),
            offset.alias(_TMP + "offset"),
            pl.min_horizontal(top_count, pl.lit(self.rules.rule_sub_tag_limit)).alias(_TMP + "n_tags"),
        ]

    @cached_property
    def confidence_table(self) -> tuple[list[int], list[float]]:
        """Exact rule confidences for every reachable ``(top, gap)``, keyed ``top * K + gap``."""
        k = self.rules.max_category_score + 1
        keys, values = [], []
        for top in range(1, k):
            for gap in range(top + 1):
                keys.append(top * k + gap)
                values.append(self.rules.rule_confidence(top, gap))
        return keys, values

    def stage_category(self) -> list[pl.Expr]:
        r = self.rules
        manual_cat = _text("collabCategory")
        manual = manual_cat.is_in(r.category_names).fill_null(False)
        manual_tags = (
            _data("collabSubTags")
            .list.eval(js_string_expr(pl.element()))
            .list.drop_nulls()
            .list.head(r.manual_sub_tag_limit)
        )
        empty_tags = pl.lit([], dtype=pl.List(pl.String))
        keywords = [kw for _, kw in r.keywords]
        rule_tags = (
            _tmp("hits")
            .list.slice(_tmp("offset"), _tmp("n_tags"))
            .list.eval(
                pl.element().replace_strict(range(len(keywords)), keywords, return_dtype=pl.String)
            )
        )
        top = _tmp("top")
        k = r.max_category_score + 1
        keys, values = self.confidence_table
        rule_conf = (top * k + _tmp("gap")).replace_strict(
            keys, values, default=None, return_dtype=pl.Float64
        )
        rule_cat = _tmp("top_cat").replace_strict(
            range(len(r.categories)), r.category_names, return_dtype=pl.String
        )
        fallback_cat = pl.col("eventRole").replace_strict(
            [role for role, _ in r.fallback_categories],
            [cat for _, cat in r.fallback_categories],
            default=pl.lit(r.fallback_default_category),
            return_dtype=pl.String,
        )
        is_rule = ~manual & (top > 0)

        def choose(manual_value: pl.Expr, rule_value: pl.Expr, fallback_value: pl.Expr) -> pl.Expr:
            return pl.when(manual).then(manual_value).when(is_rule).then(rule_value).otherwise(fallback_value)

        return [
            choose(manual_cat, rule_cat, fallback_cat).alias("collabCategory"),
            choose(manual_tags.fill_null([]), rule_tags, empty_tags).alias("collabSubTags"),
            choose(
                pl.lit(r.manual_confidence, pl.Float64), rule_conf, pl.lit(r.fallback_confidence, pl.Float64)
            ).alias("categoryConfidence"),
            choose(pl.lit(SOURCE_MANUAL), pl.lit(SOURCE_RULE), pl.lit(SOURCE_FALLBACK)).alias(
                "categorySource"
            ),
            pl.coalesce(_text("categoryVersion"), pl.lit(r.version)).alias("categoryVersion"),
        ]
