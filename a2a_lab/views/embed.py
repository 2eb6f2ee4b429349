"""Altair charts in an offline HTML page: one inlined Vega runtime, escaped specs, fallbacks.

A page that embeds charts holds ONE copy of the Vega, Vega-Lite and Vega-Embed runtime
(:func:`vega_bundle`, the bundle vl-convert ships; no CDN) and, per chart, a ``<figure>``
with the spec as ``application/json`` (escaped with
:func:`~a2a_lab.views.safe_html.script_json`) and a ``<noscript>`` PNG fallback (a
``data:`` URI, rendered by vl-convert with the Korean font registered). :func:`embed_script`
draws every figure when the page loads and marks each one ``data-drawn`` (or
``data-error``), which the browser tests read.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from a2a_lab.views.safe_html import escape_html, neutralize, script_json

if TYPE_CHECKING:
    import altair as alt

__all__ = [
    "chart_figure",
    "chart_page",
    "content_security_policy",
    "embed_script",
    "register_fonts",
    "vega_bundle",
]


def content_security_policy(scripts: Sequence[str]) -> str:
    """A policy that runs exactly ``scripts`` (by SHA-256) and fetches nothing from the network.

    An injected ``<script>`` or event-handler attribute is refused by the browser even if
    escaping ever failed; ``default-src 'none'`` forbids every fetch (images and fonts come
    from ``data:`` URIs). Vega compiles its expressions with ``Function``: ``'unsafe-eval'``.
    """
    hashes = " ".join(
        "'sha256-"
        + base64.b64encode(hashlib.sha256(s.encode("utf-8")).digest()).decode("ascii")
        + "'"
        for s in scripts
    )
    return (
        "default-src 'none'; img-src data:; font-src data:; style-src 'unsafe-inline'; "
        f"script-src 'unsafe-eval' {hashes}"
    )


def embed_script(font: str | None = None) -> str:
    """The script that draws every ``figure.a2a-chart`` of a page (vega-embed, SVG, no menu).

    ``font``: a CSS font stack for the charts' text (the page's, so Korean renders with the
    page's embedded font); default Vega's own.
    """
    config = "{}" if font is None else script_json({"font": font})
    return (
        "document.querySelectorAll('figure.a2a-chart').forEach(function (fig) {\n"
        "  var spec = JSON.parse(fig.querySelector('script.a2a-spec').textContent);\n"
        f"  vegaEmbed(fig.querySelector('.a2a-vis'), spec, {{actions: false, renderer: 'svg', config: {config}}})\n"
        "    .then(function () { fig.setAttribute('data-drawn', 'true'); })\n"
        "    .catch(function (err) { fig.setAttribute('data-error', String(err)); console.error(err); });\n"
        "});\n"
    )


def render_safe(spec: Any) -> Any:
    """``spec`` with every string value neutralised (:func:`neutralize`) for vl-convert.

    vl-convert aborts the whole process (not an exception) on a NUL in a text it draws
    (issue 14: a message ``<\\x00script>`` in the report); control and bidi characters are
    shown as ``⟨U+XXXX⟩`` in drawn images, as in every other display of the package.

    >>> render_safe({"data": {"values": [{"t": "a\\x00b"}]}, "n": 1})
    {'data': {'values': [{'t': 'a⟨U+0000⟩b'}]}, 'n': 1}
    """
    if isinstance(spec, str):
        return neutralize(spec)
    if isinstance(spec, dict):
        return {k: render_safe(v) for k, v in spec.items()}
    if isinstance(spec, list):
        return [render_safe(v) for v in spec]
    return spec


@lru_cache(maxsize=1)
def vega_bundle() -> str:
    """The Vega + Vega-Lite + Vega-Embed JavaScript bundle of vl-convert (cached per process).

    The bundle is checked to hold no ``</script`` (it would end the element early).
    """
    import vl_convert as vlc

    # the stub makes `snippet` required; at run time it defaults to the global-assigning snippet
    bundle: str = vlc.javascript_bundle()  # type: ignore[call-arg]
    if "</script" in bundle.lower():
        raise RuntimeError("the vl-convert bundle contains '</script' and cannot be inlined")
    return bundle


def chart_figure(
    chart: alt.TopLevelMixin | dict[str, Any], *, caption: str | None = None, png_scale: float = 1.0
) -> str:
    """One chart as a ``<figure>`` to place in a page that includes :func:`vega_bundle`.

    Parameters
    ----------
    chart
        An Altair chart or a Vega-Lite spec (dict).
    caption
        Text under the chart (escaped).
    png_scale
        Scale of the ``<noscript>`` PNG fallback.
    """
    import vl_convert as vlc

    register_fonts()
    # the embedded spec is neutralised as the PNG is: a chart shows ⟨U+202E⟩ as the HTML
    # text does, never a raw control or bidi character (issue 27)
    spec = render_safe(chart if isinstance(chart, dict) else chart.to_dict())
    png = base64.b64encode(vlc.vegalite_to_png(spec, scale=png_scale)).decode("ascii")
    title = spec.get("title")
    alt_text = title.get("text") if isinstance(title, dict) else title
    return (
        '<figure class="a2a-chart">'
        f'<script type="application/json" class="a2a-spec">{script_json(spec)}</script>'
        '<div class="a2a-vis"></div>'
        f'<noscript><img alt="{escape_html(alt_text or "chart")}" src="data:image/png;base64,{png}"></noscript>'
        + (f"<figcaption>{escape_html(caption)}</figcaption>" if caption else "")
        + "</figure>"
    )


def chart_page(chart: alt.TopLevelMixin, *, title: str = "chart") -> str:
    """A self-contained HTML page of one chart (what ``save_chart(…, "x.html")`` writes)."""
    scripts = (vega_bundle(), embed_script())
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy(scripts)}">'
        f"<title>{escape_html(title)}</title><script>{scripts[0]}</script></head><body>"
        f"{chart_figure(chart)}<script>{scripts[1]}</script></body></html>\n"
    )


@lru_cache(maxsize=1)
def register_fonts() -> Path:
    """Register Noto Sans KR (package ``pylopdf-fonts-ko``) with vl-convert, once per process.

    vl-convert falls back to a registered font for characters the chart's font lacks, so
    Korean labels render in PNG and SVG exports instead of empty boxes. Returns the font file.
    """
    import pylopdf_fonts_ko
    import vl_convert as vlc

    font = Path(pylopdf_fonts_ko.sans_path())
    vlc.register_font_directory(str(font.parent))
    return font
