"""Enrichment of the event frame: roles, session types and collaboration categories.

A vectorised Polars transcription of the reference's ``enrichCoordinationEvent`` (rules
§1-§6, with the JavaScript string semantics of §10 from :mod:`a2a_lab.reference.jsstr`). All
constants come from a :class:`~a2a_lab.reference.rules.RuleSet`.

Columns added (or replaced) by :func:`enrich`:

=======================  ==============  ==================================================
column                   dtype           meaning
=======================  ==============  ==================================================
``type``                 String          REPLACED by its JS-trimmed value, as in the
                                         reference's enriched event (the original text
                                         stays in ``raw``)
``from_agent``           String, null    rules §3: ``data.fromAgent`` or
                                         ``data.senderAgentId`` or top-level ``agentId``,
                                         trimmed, case kept; null when none is a
                                         non-blank string
``to_agent``             String, null    ``data.toAgent`` or ``data.targetAgentId``, same
``event_role``           String          rules §5 (the reference's ``eventRole``)
``from_session_type``    String          rules §4: main / subagent / unknown
``to_session_type``      String          rules §4
``collab_category``      String          rules §6
``collab_sub_tags``      List[String]    rules §6 (never null; ``[]`` for fallbacks)
``category_confidence``  Float64         rules §6
``category_source``      String          manual / rule / fallback
``category_version``     String          trimmed ``data.categoryVersion``, else the rule
                                         set's version
=======================  ==============  ==================================================

The columns are snake_case (the Python-side contract); the reference's camelCase names
appear only where its JSON is reproduced (:func:`a2a_lab.sessions.event_objects`).

``data`` is left as read: the enriched values live in the top-level columns only (a writer
that needs the reference's object puts them into ``data`` as well, with the trimmed
``data.collabIntent``).

How the keyword rule (§6.2) is vectorised:

* **One Aho-Corasick pass** over the haystack (``str.extract_many`` with
  ``overlapping=True``, which reports every occurrence of every keyword: ``docs`` yields
  ``doc``, ``docs`` and ``cs``).
* **No per-field trim and no lower-casing of the haystack** when that is provably exact for
  the rule set's keywords (true for v1): if no keyword contains a line feed, starts or ends
  with JavaScript whitespace, or contains a sigma (the only context-dependent lower-case
  rule), a keyword occurs in the reference's trimmed, lower-cased haystack exactly when it
  occurs ASCII-case-insensitively in the raw newline-joined fields after replacing the few
  non-ASCII characters whose lower-case form contains a keyword character (for v1: ``İ`` →
  ``i̇`` and the Kelvin sign → ``k``). Other rule sets take the exact path (trim every field,
  lower-case the haystack).
* **Bit sets instead of lists**: the distinct hits of an event become one bit per keyword,
  packed into 63-bit integers with one bit field per category. A category's score is a
  population count of its field (split by weight), the ranking uses horizontal
  expressions, and the sub-tags are the lowest set bits of the top category's field
  (keyword-list order), found with ``bitwise_trailing_zeros``.
* **Exact confidence**: a lookup table over every reachable ``(top, gap)`` pair, computed
  by :meth:`~a2a_lab.reference.rules.RuleSet.rule_confidence` (JavaScript ``Number(x.toFixed(2))``).

The enrichment has no non-default modes: its quirks (unknown/unknown ``a2a.*`` events are
delegation, keywords match as plain substrings) are rules, and a corrected classifier is a
modified rule set (e.g. without ``cs``), not a flag.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from os import PathLike
from typing import TypeVar

import polars as pl

from a2a_lab._frames import data_text as _text
from a2a_lab.exchanges import from_agent_expr, to_agent_expr
from a2a_lab.reference.jsstr import JS_WHITESPACE, js_lower_all, js_string_expr, js_trim_expr
from a2a_lab.reference.rules import (
    TASK_MONITOR_V1,
    RuleSet,
    main_agents_from_openclaw,
    normalize_agent_id,
)

__all__ = ["ENRICHMENT_COLUMNS", "enrich", "resolve_main_agents"]

#: The columns :func:`enrich` adds, in order (``type`` is replaced in place).
ENRICHMENT_COLUMNS: tuple[str, ...] = (
    "from_agent",
    "to_agent",
    "event_role",
    "from_session_type",
    "to_session_type",
    "collab_category",
    "collab_sub_tags",
    "category_confidence",
    "category_source",
    "category_version",
)

# Sources of a category (the reference also declares "heuristic" but never produces it).
SOURCE_MANUAL, SOURCE_RULE, SOURCE_FALLBACK = "manual", "rule", "fallback"

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)
MainAgents = Iterable[str] | str | PathLike[str] | None

_TMP = "__enrich_"


def resolve_main_agents(
    main_agents: MainAgents, rules: RuleSet = TASK_MONITOR_V1
) -> frozenset[str]:
    """The normalised main-agent set for :func:`enrich`.

    Parameters
    ----------
    main_agents
        ``None``: ``rules.default_main_agents`` (``{main, ruda}``). A ``str`` or path: an
        ``openclaw.json`` read by :func:`~a2a_lab.reference.rules.main_agents_from_openclaw` (which
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
        ``agent_id`` and ``data`` columns), eager or lazy.
    rules
        The rule set (default: the reference, :data:`~a2a_lab.reference.rules.TASK_MONITOR_V1`).
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
    >>> enrich(frame).select("event_role", "collab_category", "collab_sub_tags", "category_confidence")
    shape: (2, 4)
    ┌───────────────────┬───────────────────┬──────────────────┬─────────────────────┐
    │ event_role        ┆ collab_category   ┆ collab_sub_tags  ┆ category_confidence │
    │ ---               ┆ ---               ┆ ---              ┆ ---                 │
    │ str               ┆ str               ┆ list[str]        ┆ f64                 │
    ╞═══════════════════╪═══════════════════╪══════════════════╪═════════════════════╡
    │ conversation.main ┆ engineering_build ┆ ["코드", "구현"] ┆ 0.76                │
    │ conversation.main ┆ docs_knowledge    ┆ ["doc", "docs"]  ┆ 0.71                │
    └───────────────────┴───────────────────┴──────────────────┴─────────────────────┘
    """
    return _plan(rules, resolve_main_agents(main_agents, rules)).apply(events)


@lru_cache(maxsize=16)
def _plan(rules: RuleSet, main_agents: frozenset[str]) -> _Plan:
    # building the expressions costs tens of milliseconds: notebooks call enrich repeatedly
    return _Plan(rules, main_agents)


@cache
def _case_changes() -> dict[str, str]:
    """Every non-ASCII character whose JavaScript lower-case form differs from it."""
    # all cased scripts live below U+20000 (planes 2+ hold CJK ideographs, tags and private use)
    chars = [chr(c) for c in range(0x80, 0x20000) if not 0xD800 <= c <= 0xDFFF]
    return {c: low for c, low in zip(chars, js_lower_all(chars), strict=True) if c != low}


def _data(field: str) -> pl.Expr:
    return pl.col("data").struct.field(field)


def _tmp(name: str) -> pl.Expr:
    return pl.col(_TMP + name)


@dataclass(frozen=True)
class _Plan:
    """The enrichment of one rule set and main-agent set, as a chain of Polars stages.

    ``exact_text=True`` forces the trim-and-lower-case haystack even where the raw one is
    provably equivalent (the tests compare both).
    """

    rules: RuleSet
    main_agents: frozenset[str]
    exact_text: bool = False

    def apply(self, events: Frame) -> Frame:
        names = events.collect_schema().names()
        out = events.lazy()
        for stage in self.stages:
            out = out.with_columns(stage)
        out = out.select(*(n for n in names if n not in ENRICHMENT_COLUMNS), *ENRICHMENT_COLUMNS)
        return out if isinstance(events, pl.LazyFrame) else out.collect()

    @cached_property
    def stages(self) -> list[list[pl.Expr]]:
        """The ``with_columns`` stages, in order (each reads the columns of the previous)."""
        return [
            self.stage_agents(),
            self.stage_session_inputs(),
            self.stage_session_types(),
            self.stage_role_and_hits(),
            self.stage_presence(),
            self.stage_masks(),
            self.stage_scores(),
            self.stage_top_score(),
            self.stage_top_category(),
            self.stage_ranking(),
            *self.stages_sub_tags(),
            self.stage_category(),
        ]

    # ------------------------------------------------------------ keyword tables
    @cached_property
    def patterns(self) -> list[str]:
        """Lower-cased keywords (the reference matches ``keyword.toLowerCase()``)."""
        return list(self.rules.keyword_patterns)

    @cached_property
    def folding(self) -> dict[str, str] | None:
        """Replacements for the raw ASCII-case-insensitive haystack; None: not exact here."""
        pats = self.patterns
        if self.exact_text or js_lower_all(pats) != pats:
            return None
        for p in pats:
            if "\n" in p or p[0] in JS_WHITESPACE or p[-1] in JS_WHITESPACE or {"σ", "ς"} & set(p):
                return None
        used = set("".join(pats))
        return {c: low for c, low in _case_changes().items() if c in used or used & set(low)}

    @cached_property
    def field_width(self) -> int:
        """Bits per bit field: the longest keyword list, at most 63 (a longer one is split)."""
        return min(63, max(len(c.keywords) for c in self.rules.categories))

    @cached_property
    def slices(self) -> list[tuple[int, int, int]]:
        """Bit fields: ``(category, first keyword index in it, first ordinal)``, in order."""
        out, ordinal = [], 0
        for c, cat in enumerate(self.rules.categories):
            out += [
                (c, start, ordinal + start)
                for start in range(0, len(cat.keywords), self.field_width)
            ]
            ordinal += len(cat.keywords)
        return out

    def _slice_size(self, g: int) -> int:
        cat, start, _ = self.slices[g]
        return min(self.field_width, len(self.rules.categories[cat].keywords) - start)

    def _slice_place(self, g: int) -> tuple[int, int]:
        """(word, bit shift) of bit field ``g``."""
        word, slot = divmod(g, 63 // self.field_width)
        return word, slot * self.field_width

    @cached_property
    def n_words(self) -> int:
        return self._slice_place(len(self.slices) - 1)[0] + 1

    # ------------------------------------------------------------------- stages
    def stage_agents(self) -> list[pl.Expr]:
        return [
            js_trim_expr(pl.col("type")).alias("type"),
            from_agent_expr(),
            to_agent_expr(),
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

    def stage_session_inputs(self) -> list[pl.Expr]:
        main, subagent, _unknown = self.rules.session_types
        mains = pl.lit(pl.Series(sorted(self.main_agents), dtype=pl.String)).implode()
        spawn = pl.col("type").is_in(self.rules.spawn_types)
        from_key = pl.coalesce(
            _text("sourceSessionKey"), _text("requesterSessionKey"), _text("sessionKey")
        )
        explicit_from, explicit_to = _text("fromSessionType"), _text("toSessionType")
        return [
            pl.col("from_agent")
            .str.to_lowercase()
            .is_in(mains)
            .fill_null(False)
            .alias(_TMP + "from_main"),
            pl.col("to_agent")
            .str.to_lowercase()
            .is_in(mains)
            .fill_null(False)
            .alias(_TMP + "to_main"),
            pl.when(spawn)
            .then(pl.lit(main))
            .otherwise(self._key_type(from_key))
            .alias(_TMP + "from_key_type"),
            pl.when(spawn)
            .then(pl.lit(subagent))
            .otherwise(self._key_type(_text("targetSessionKey")))
            .alias(_TMP + "to_key_type"),
            explicit_from.alias(_TMP + "explicit_from"),
            explicit_to.alias(_TMP + "explicit_to"),
        ]

    def stage_session_types(self) -> list[pl.Expr]:
        main, subagent, unknown = self.rules.session_types
        hint, from_main, to_main = _tmp("hint"), _tmp("from_main"), _tmp("to_main")
        from_type = (
            pl.when(_tmp("from_key_type") != unknown)
            .then(_tmp("from_key_type"))
            .when(from_main)
            .then(pl.lit(main))
            .when(hint & to_main)
            .then(pl.lit(subagent))
            .otherwise(pl.lit(unknown))
        )
        to_type = (
            pl.when(_tmp("to_key_type") != unknown)
            .then(_tmp("to_key_type"))
            .when(to_main)
            .then(pl.lit(main))
            .when(hint & from_main)
            .then(pl.lit(subagent))
            .otherwise(pl.lit(unknown))
        )
        explicit_from, explicit_to = _tmp("explicit_from"), _tmp("explicit_to")
        # the explicit pair counts only when both are valid
        explicit = (
            explicit_from.is_in(self.rules.session_types)
            & explicit_to.is_in(self.rules.session_types)
        ).fill_null(False)
        return [
            pl.when(explicit).then(explicit_from).otherwise(from_type).alias("from_session_type"),
            pl.when(explicit).then(explicit_to).otherwise(to_type).alias("to_session_type"),
        ]

    def _matches(self) -> pl.Expr:
        """Every keyword occurrence in the haystack, as the lower-cased keyword."""
        fields = self.rules.haystack_fields
        if self.folding is None:
            haystack = pl.concat_str(
                [pl.col("type"), *(_text(f) for f in fields)], separator="\n", ignore_nulls=True
            ).str.to_lowercase()
            return haystack.str.extract_many(self.patterns, overlapping=True)
        haystack = pl.concat_str(
            [pl.col("type"), *(_data(f) for f in fields)], separator="\n", ignore_nulls=True
        )
        if self.folding:
            haystack = haystack.str.replace_many(list(self.folding), list(self.folding.values()))
        return haystack.str.extract_many(
            self.patterns, ascii_case_insensitive=True, overlapping=True
        ).list.eval(pl.element().str.to_lowercase())

    def stage_role_and_hits(self) -> list[pl.Expr]:
        r = self.rules
        main, subagent, _ = r.session_types
        etype = pl.col("type")
        from_type, to_type = pl.col("from_session_type"), pl.col("to_session_type")
        explicit = _text("eventRole")
        delegation_hint = (
            etype.is_in(r.spawn_types)
            | _tmp("hint")
            | (from_type == subagent)
            | (to_type == subagent)
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
            .when(
                pl.any_horizontal(etype.str.starts_with(p) for p in r.orchestration_type_prefixes)
            )
            .then(pl.lit(r.role_orchestration))
            .when(etype.is_in(r.observability_types))
            .then(pl.lit(r.role_observability))
            .when(etype.str.starts_with(r.a2a_type_prefix))
            .then(a2a_role)
            .otherwise(pl.lit(r.role_observability))
        )
        hits = self._matches().list.eval(
            pl.element().replace_strict(
                self.patterns, range(len(self.patterns)), return_dtype=pl.UInt16
            )
        )
        # a keyword counts once however often it occurs
        return [role.alias("event_role"), hits.list.unique().alias(_TMP + "hits")]

    def stage_presence(self) -> list[pl.Expr]:
        """One bit per distinct keyword hit, summed into the packed words."""
        bits: list[dict[int, int]] = [{} for _ in range(self.n_words)]
        for g, (_, _, first) in enumerate(self.slices):
            word, shift = self._slice_place(g)
            for j in range(self._slice_size(g)):
                bits[word][first + j] = 1 << (shift + j)
        return [
            _tmp("hits")
            .list.eval(
                pl.element().replace_strict(
                    list(bits[w]), list(bits[w].values()), default=0, return_dtype=pl.Int64
                )
            )
            .list.sum()
            .alias(f"{_TMP}word{w}")
            for w in range(self.n_words)
        ]

    def stage_masks(self) -> list[pl.Expr]:
        exprs = []
        for g in range(len(self.slices)):
            word, shift = self._slice_place(g)
            packed = _tmp(f"word{word}")
            field = packed // (1 << shift) if shift else packed
            exprs.append((field & ((1 << self._slice_size(g)) - 1)).alias(f"{_TMP}mask{g}"))
        return exprs

    def stage_scores(self) -> list[pl.Expr]:
        r = self.rules
        terms: list[list[pl.Expr]] = [[] for _ in r.categories]
        for g, (cat, start, _) in enumerate(self.slices):
            keywords = r.categories[cat].keywords[start : start + self._slice_size(g)]
            for weight in sorted({r.keyword_weight(kw) for kw in keywords}):
                bits = sum(
                    1 << j for j, kw in enumerate(keywords) if r.keyword_weight(kw) == weight
                )
                ones = (_tmp(f"mask{g}") & bits).bitwise_count_ones().cast(pl.Int64)
                terms[cat].append(ones * weight)
        return [pl.sum_horizontal(t).alias(f"{_TMP}score{c}") for c, t in enumerate(terms)]

    def _scores(self) -> list[pl.Expr]:
        return [_tmp(f"score{c}") for c in range(len(self.rules.categories))]

    def stage_top_score(self) -> list[pl.Expr]:
        return [pl.max_horizontal(self._scores()).alias(_TMP + "top")]

    def stage_top_category(self) -> list[pl.Expr]:
        # the reference's stable sort puts the first category with the top score first
        firsts = [
            pl.when(s == _tmp("top")).then(pl.lit(c, pl.Int64))
            for c, s in enumerate(self._scores())
        ]
        return [pl.coalesce(firsts).alias(_TMP + "top_cat")]

    @cached_property
    def slice_index(self) -> list[dict[int, int]]:
        """Per slice position ``s``: category -> its ``s``-th bit field."""
        by_position: list[dict[int, int]] = []
        for g, (cat, start, _) in enumerate(self.slices):
            s = start // self.field_width
            if s == len(by_position):
                by_position.append({})
            by_position[s][cat] = g
        return by_position

    def stage_ranking(self) -> list[pl.Expr]:
        scores, top_cat = self._scores(), _tmp("top_cat")
        others = [pl.when(top_cat != c).then(s) for c, s in enumerate(scores)]
        second = pl.max_horizontal(others).fill_null(0) if len(scores) > 1 else pl.lit(0, pl.Int64)
        top_masks = [
            pl.coalesce(
                [pl.when(top_cat == cat).then(_tmp(f"mask{g}")) for cat, g in fields.items()]
            )
            .fill_null(0)
            .alias(f"{_TMP}top_mask{s}_0")
            for s, fields in enumerate(self.slice_index)
        ]
        return [(_tmp("top") - second).clip(lower_bound=0).alias(_TMP + "gap"), *top_masks]

    @cached_property
    def tag_keys(self) -> tuple[int, dict[int, str]]:
        """Sub-tag lookup: ``category * stride + index in category`` -> keyword."""
        stride = max(len(c.keywords) for c in self.rules.categories)
        return stride, {
            c * stride + j: kw
            for c, cat in enumerate(self.rules.categories)
            for j, kw in enumerate(cat.keywords)
        }

    def stages_sub_tags(self) -> list[list[pl.Expr]]:
        """The first sub-tags: the lowest set bits of the top category's fields, one per stage."""
        stride, lookup = self.tag_keys
        stages = []
        for s in range(len(self.slice_index)):
            for i in range(self.rules.rule_sub_tag_limit):
                mask = _tmp(f"top_mask{s}_{i}")
                key = (
                    _tmp("top_cat") * stride
                    + s * self.field_width
                    + mask.bitwise_trailing_zeros().cast(pl.Int64)
                )
                tag = key.replace_strict(
                    list(lookup), list(lookup.values()), default=None, return_dtype=pl.String
                )
                stages.append(
                    [
                        pl.when(mask != 0).then(tag).alias(f"{_TMP}tag{s}_{i}"),
                        (mask & (mask - 1)).alias(f"{_TMP}top_mask{s}_{i + 1}"),
                    ]
                )
        return stages

    @cached_property
    def tag_separator(self) -> str:
        """A character that occurs in no keyword."""
        used = set("".join(kw for _, kw in self.rules.keywords))
        return next(chr(c) for c in range(0x1F, 0x110000) if chr(c) not in used)

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
            .fill_null([])
        )
        empty_tags = pl.lit([], dtype=pl.List(pl.String))
        # joining and splitting the few tags is much cheaper than concat_list + drop_nulls
        joined = pl.concat_str(
            [
                _tmp(f"tag{s}_{i}")
                for s in range(len(self.slice_index))
                for i in range(r.rule_sub_tag_limit)
            ],
            separator=self.tag_separator,
            ignore_nulls=True,
        )
        rule_tags = (
            pl.when(joined.str.len_bytes() > 0)
            .then(joined.str.split(self.tag_separator).list.head(r.rule_sub_tag_limit))
            .otherwise(empty_tags)
            if r.rule_sub_tag_limit
            else empty_tags
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
        fallback_cat = pl.col("event_role").replace_strict(
            [role for role, _ in r.fallback_categories],
            [cat for _, cat in r.fallback_categories],
            default=pl.lit(r.fallback_default_category),
            return_dtype=pl.String,
        )
        is_rule = ~manual & (top > 0)

        def choose(manual_value: pl.Expr, rule_value: pl.Expr, fallback_value: pl.Expr) -> pl.Expr:
            return (
                pl.when(manual)
                .then(manual_value)
                .when(is_rule)
                .then(rule_value)
                .otherwise(fallback_value)
            )

        return [
            choose(manual_cat, rule_cat, fallback_cat).alias("collab_category"),
            choose(manual_tags, rule_tags, empty_tags).alias("collab_sub_tags"),
            choose(
                pl.lit(r.manual_confidence, pl.Float64),
                rule_conf,
                pl.lit(r.fallback_confidence, pl.Float64),
            ).alias("category_confidence"),
            choose(pl.lit(SOURCE_MANUAL), pl.lit(SOURCE_RULE), pl.lit(SOURCE_FALLBACK)).alias(
                "category_source"
            ),
            pl.coalesce(_text("categoryVersion"), pl.lit(r.version)).alias("category_version"),
        ]
