"""Message markdown as safe HTML, through markdown-it-py.

Agents write chat markdown: bold, italics, code, fenced blocks, lists, links and bare URLs.
The renderer is markdown-it-py (CommonMark) configured for untrusted text:

* raw HTML is off: ``<script>`` in a message is shown as text, never parsed as a tag;
* links keep only ``http``, ``https`` and ``mailto`` targets (no ``javascript:``,
  ``data:``, ``vbscript:``, ``file:``); other link syntax stays literal text;
* images are off: a report must not fetch anything, so ``![x](http://…)`` stays text;
* every link opens in a new tab with ``rel="noopener noreferrer"``;
* bare ``http(s)`` URLs become links (linkify); single line breaks are kept (``<br>``);
* control and bidi-override characters are shown as ``⟨U+XXXX⟩``
  (:func:`a2a_lab.views.safe_html.neutralize`) before parsing.

Rendering is Python per text, so :func:`markdown_html_expr` renders each DISTINCT text
once and maps the results back (chat logs repeat texts: 5,446 distinct of 74,045 in a
200,000-event simulated log). See BENCHMARKS.md for the measured cost.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import polars as pl
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from a2a_lab.views.safe_html import neutralize

__all__ = ["ALLOWED_SCHEMES", "markdown_html_expr", "render_markdown"]

#: Link targets that are kept; any other link is shown as its source text.
ALLOWED_SCHEMES: tuple[str, ...] = ("http://", "https://", "mailto:")


def _validate_link(url: str) -> bool:
    return url.strip().lower().startswith(ALLOWED_SCHEMES)


def _link_open(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    tokens[idx].attrSet("target", "_blank")
    tokens[idx].attrSet("rel", "noopener noreferrer")
    return self.renderToken(tokens, idx, options, env)


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": True, "breaks": True, "typographer": False, "xhtmlOut": False})
    md.enable("linkify").disable(["image", "html_block", "html_inline"])
    md.validateLink = _validate_link  # type: ignore[method-assign]
    md.add_render_rule("link_open", _link_open)
    return md


def _render(text: str) -> str:
    out: str = _parser().render(neutralize(text)).rstrip("\n")
    # a one-paragraph chat message reads as a line, not a block with margins
    if out.startswith("<p>") and out.endswith("</p>") and out.count("<p>") == 1:
        return out[3:-4]
    return out


def render_markdown(text: str | None) -> str:
    """Render one message's markdown to safe HTML (``""`` for None).

    Examples
    --------
    >>> render_markdown("**ok**: `x<y`, [a](https://e.com).")
    '<strong>ok</strong>: <code>x&lt;y</code>, <a href="https://e.com" target="_blank" rel="noopener noreferrer">a</a>.'
    >>> render_markdown("<script>alert(1)</script>")
    '&lt;script&gt;alert(1)&lt;/script&gt;'
    >>> render_markdown("[x](javascript:alert(1))")
    '[x](javascript:alert(1))'
    >>> render_markdown("- one\\n- two")
    '<ul>\\n<li>one</li>\\n<li>two</li>\\n</ul>'
    """
    return "" if text is None else _render(text)


def _render_series(texts: pl.Series) -> pl.Series:
    distinct = texts.drop_nulls().unique()
    mapping: dict[Any, Any] = dict(zip(distinct.to_list(), (_render(t) for t in distinct), strict=True))
    return texts.replace_strict(mapping, default=None, return_dtype=pl.String)


def markdown_html_expr(text: pl.Expr) -> pl.Expr:
    """:func:`render_markdown` of a String expression (null stays null).

    Each distinct text is rendered once.

    Examples
    --------
    >>> df = pl.DataFrame({"t": ["<b>hi</b>\\nbye", None, "<b>hi</b>\\nbye"]})
    >>> df.select(markdown_html_expr(pl.col("t")))["t"].to_list()
    ['&lt;b&gt;hi&lt;/b&gt;<br>\\nbye', None, '&lt;b&gt;hi&lt;/b&gt;<br>\\nbye']
    """
    return text.map_batches(_render_series, return_dtype=pl.String)
