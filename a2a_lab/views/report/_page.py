"""The report page: CSS, the table of contents, the embedded Korean font and the security policy.

The page runs only its own scripts
(:func:`~a2a_lab.views.embed.content_security_policy`) and fetches nothing.
"""

from __future__ import annotations

import base64
import io
import re
from functools import lru_cache

import polars as pl

from a2a_lab.views.embed import content_security_policy, embed_script, vega_bundle
from a2a_lab.views.report._script import PAGE_SCRIPT
from a2a_lab.views.safe_html import escape_html

__all__ = ["FONT_STACK", "cjk_glyphs", "page"]

#: The report's font stack: the embedded Korean subset first for Hangul (unicode-range),
#: then the system fonts; Korean system fonts after them where the subset is not embedded.
FONT_STACK = (
    '"A2A Noto Sans KR", system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans KR", '
    '"Noto Sans CJK KR", "Apple SD Gothic Neo", "Malgun Gothic", sans-serif'
)
# Hangul, CJK punctuation and ideographs: the ranges the embedded subset serves
_CJK = re.compile(
    r"[\u1100-\u11ff\u3000-\u303f\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]"
)
_UNICODE_RANGE = (
    "U+1100-11FF, U+3000-303F, U+3130-318F, U+3400-4DBF, U+4E00-9FFF, U+AC00-D7AF, U+FF00-FFEF"
)

CSS = """
:root { --muted: #666; --line: #ddd; }
body { font-family: FONT; font-size: 14px; line-height: 1.45; margin: 0; color: #111; background: #fff; }
header { padding: 14px 24px 6px; }
header h1 { margin: 0 0 4px; font-size: 1.5em; }
nav a { margin-right: 14px; }
main { padding: 0 24px 40px; max-width: 1200px; }
section { margin-top: 28px; }
h2 { border-bottom: 2px solid #4c78a8; padding-bottom: 2px; }
.muted { color: var(--muted); font-size: 0.92em; }
input, select, button { font: inherit; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 12px 0; }
.card { display: flex; flex-direction: column; min-width: 120px; padding: 8px 12px; border: 1px solid var(--line);
        border-radius: 8px; text-decoration: none; color: inherit; }
.card .value { font-size: 1.6em; font-weight: 600; }
.card .label { color: var(--muted); }
.badge { display: inline-block; padding: 0 7px; border-radius: 8px; color: #fff; font-size: 0.85em; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { padding: 3px 9px; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }
th { background: #f5f5f5; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", "A2A Noto Sans KR",
             "Noto Sans Mono CJK KR", monospace; }
td code { white-space: pre-wrap; word-break: break-all; }
.filters { background: #fff; padding: 8px 0; display: flex; gap: 8px;
           flex-wrap: wrap; align-items: center; border-bottom: 1px solid var(--line); }
#q { min-width: 360px; padding: 4px 8px; font-size: 1em; }
.hit { margin: 4px 0; padding: 3px 8px; background: #fafafa; border-radius: 4px; }
.hit .meta time, .s-item .meta time { color: var(--muted); margin-right: 4px; }
.plain { white-space: pre-wrap; }
details.s-item { margin: 0; padding: 3px 8px; border-bottom: 1px solid var(--line); }
details.s-item > summary { cursor: pointer; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
details.s-item[open] { padding-bottom: 8px; background: #fcfcfc; }
.a2a-thread { margin: 6px 0 6px 12px; padding: 4px 8px; border-left: 3px solid #4c78a8; }
.a2a-thread > summary { cursor: pointer; }
.pager { display: flex; gap: 10px; align-items: center; margin: 6px 0 14px; }
th[aria-sort] { background: #e3ecf7; }
th { cursor: pointer; user-select: none; }
th[aria-sort=descending]::after { content: " ▼"; }
th[aria-sort=ascending]::after { content: " ▲"; }
.card .note { font-size: 0.85em; }
.kpi-lists { display: flex; flex-wrap: wrap; gap: 40px; }
.kpi-lists h3 { margin: 6px 0 0; }
.kpi-lists p { margin: 0; }
.kpi-lists ol { margin: 4px 0; padding-left: 22px; }
nav.toc { position: sticky; top: 0; background: #fff; z-index: 3; padding: 6px 24px; border-bottom: 1px solid var(--line); }
.a2a-msg { margin: 4px 0; padding: 3px 8px; background: #fafafa; border-radius: 4px; }
.a2a-msg .meta time { color: var(--muted); margin-right: 4px; }
.body { overflow-wrap: anywhere; }
.body p { margin: 2px 0; }
.body pre { background: #f0f0f0; padding: 6px; overflow-x: auto; }
.kind-no_reply, .kind-refused, .kind-outcome { color: var(--muted); font-size: 0.9em; }
[hidden] { display: none !important; }
figure.a2a-chart { margin: 12px 0; }
.charts { display: flex; flex-wrap: wrap; gap: 24px; }
details.rule { margin: 6px 0; }
details.rule summary { cursor: pointer; }
"""


@lru_cache(maxsize=8)
def _font_subset(chars: str) -> str:
    """Noto Sans KR cut down to ``chars``, as a base64 OpenType font."""
    import pylopdf_fonts_ko
    from fontTools import subset
    from fontTools.ttLib import TTFont

    font = TTFont(str(pylopdf_fonts_ko.sans_path()))
    options = subset.Options()
    options.notdef_outline = True
    # the kept glyphs' outlines without subroutines (no pass over the font's 65,000 glyphs
    # to find the unused ones) and no layout tables (the subset's are near empty: Korean
    # syllables are precomposed, and the page's unicode-range gives Latin to the page's
    # font): 0.67-0.93 -> 0.40-0.43 CPU s at the benchmark log's 215 characters, 28.4 KB
    # instead of 29.6
    options.desubroutinize = True
    options.drop_tables += ["GSUB", "GPOS", "GDEF"]
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=chars)
    subsetter.subset(font)
    out = io.BytesIO()
    font.save(out)
    return base64.b64encode(out.getvalue()).decode("ascii")


def _font_face(body: str) -> str:
    chars = "".join(sorted(set(_CJK.findall(body))))
    if not chars:
        return ""
    return (
        f'@font-face {{ font-family: "A2A Noto Sans KR"; src: url(data:font/otf;base64,{_font_subset(chars)}) '
        f'format("opentype"); unicode-range: {_UNICODE_RANGE}; }}'
    )


def page(
    *,
    title: str,
    subtitle: str,
    nav: list[tuple[str, str]],
    body: str,
    tz: str = "UTC",
    embed_font: bool = True,
    glyphs: str = "",
) -> str:
    """The whole HTML document around the sections' HTML: a sticky table of contents
    (``nav``), ``tz`` for the times the script writes, and the font subset covering the
    Korean of ``body`` and of ``glyphs`` (the texts the script shows from the index)."""
    scripts = (vega_bundle(), embed_script(FONT_STACK), PAGE_SCRIPT)
    csp = content_security_policy(scripts)
    style = (_font_face(body + glyphs) if embed_font else "") + CSS.replace("FONT", FONT_STACK)
    links = "".join(f'<a href="#{sid}">{escape_html(label)}</a>' for sid, label in nav)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape_html(title)}</title><style>{style}</style>"
        f'<script>{scripts[0]}</script></head><body data-tz="{escape_html(tz)}">'
        f'<header><h1>{escape_html(title)}</h1><div class="muted">{escape_html(subtitle)}</div></header>'
        f'<nav class="toc" aria-label="contents">{links}</nav><main>{body}</main>'
        f"<script>{scripts[1]}</script><script>{scripts[2]}</script></body></html>\n"
    )


def cjk_glyphs(texts: pl.Series) -> str:
    """The distinct Hangul / CJK characters of ``texts`` (for the font subset)."""
    found = texts.drop_nulls().unique().str.extract_all(_CJK.pattern).explode().drop_nulls()
    return "".join(sorted(found.unique().to_list()))
