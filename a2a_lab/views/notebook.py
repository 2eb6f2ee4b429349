"""The one-call setup every notebook starts with.

A notebook's first code cell is::

    import a2a_lab as al
    from a2a_lab.views.notebook import setup

    LOGS = setup()

:func:`setup` answers where the logs are (``$A2A_LAB_LOGS``, else the sample bundled with
the package) and fixes everything that would otherwise make a stored output depend on the
machine that ran it: the local time zone, Polars' table layout and how Altair charts are
rendered. An analyst points every notebook at real logs without editing one
(``A2A_LAB_LOGS=~/.openclaw/logs make lab``), while ``make test`` runs them on the sample.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import altair as alt
import polars as pl
from altair.utils.mimebundle import spec_to_mimebundle

__all__ = [
    "CHART_RENDERER",
    "DEFAULT_TIMEZONE",
    "LOGS_ENV",
    "TIMEZONE_ENV",
    "VEGALITE_MIME_TYPE",
    "display_timezone",
    "log_source",
    "setup",
]

LOGS_ENV = "A2A_LAB_LOGS"
"""Environment variable naming the log source (a directory, a file or a glob)."""

TIMEZONE_ENV = "A2A_LAB_TZ"
"""Environment variable naming the IANA time zone local times are shown in."""

DEFAULT_TIMEZONE = "UTC"
"""The display time zone when ``$A2A_LAB_TZ`` is unset (also the rules' default)."""

CHART_RENDERER = "a2a_lab"
"""Name of the Altair renderer :func:`setup` registers and enables."""

VEGALITE_MIME_TYPE = f"application/vnd.vegalite.v{alt.VEGALITE_VERSION.split('.')[0]}+json"
"""The MIME type a chart's Vega-Lite spec is stored under, in the ``vN+json`` form Jupyter
uses. (Altair 6's own ``application/vnd.vegalite.v6.json`` is not a JSON type to nbformat,
which then refuses to store the spec as JSON.)"""

# Fixed table layout: without it Polars sizes tables from the terminal and from
# POLARS_FMT_* variables, so the same frame would print differently on another machine.
_TABLE_ROWS = 12
_TABLE_COLS = 14
_TABLE_WIDTH_CHARS = 140
_STRING_CHARS = 60

# PNGs at the chart's own size: every stored chart is in the notebook and, each time it
# changes, in git history; twice the scale is four times the bytes.
_PNG_SCALE = 1


def _environ(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def _setting(name: str, environ: Mapping[str, str] | None) -> str:
    """The stripped value of variable ``name`` ("" when unset)."""
    return _environ(environ).get(name, "").strip()


def log_source(environ: Mapping[str, str] | None = None) -> Path:
    """The log source notebooks read: ``$A2A_LAB_LOGS``, else the bundled sample.

    Parameters
    ----------
    environ
        The environment to read; the process environment when omitted.

    Returns
    -------
    Path
        The value of ``A2A_LAB_LOGS`` with ``~`` expanded (a log directory, a file or a
        glob, whatever :func:`a2a_lab.load` accepts). When it is unset or blank, the
        sample log directory shipped with the package
        (:func:`a2a_lab.samples.sample_dir`), relative to the working directory if it
        lies inside that directory or its parent (a notebook running in a checkout's
        ``notebooks/`` gets ``../a2a_lab/...``): the loader keeps paths as given, so
        the stored outputs that show file names are the same in every checkout.

    Examples
    --------
    >>> log_source({"A2A_LAB_LOGS": "/var/log/openclaw"}).as_posix()
    '/var/log/openclaw'
    >>> log_source({"A2A_LAB_LOGS": "~/logs"}) == Path.home() / "logs"
    True
    """
    value = _setting(LOGS_ENV, environ)
    if value:
        return Path(value).expanduser()
    # Imported here so that pointing the notebooks at real logs never touches the sample.
    from a2a_lab.samples import sample_dir

    sample = Path(sample_dir()).resolve()
    cwd = Path.cwd().resolve()
    if sample.is_relative_to(cwd):
        return sample.relative_to(cwd)
    if sample.is_relative_to(cwd.parent):
        return Path("..") / sample.relative_to(cwd.parent)
    return sample


def display_timezone(environ: Mapping[str, str] | None = None) -> str:
    """The IANA time zone notebooks show local times in: ``$A2A_LAB_TZ``, else UTC.

    Parameters
    ----------
    environ
        As for :func:`log_source`.

    Returns
    -------
    str
        A time zone name that :class:`zoneinfo.ZoneInfo` knows.

    Raises
    ------
    ValueError
        If ``A2A_LAB_TZ`` names no known time zone.

    Examples
    --------
    >>> display_timezone({})
    'UTC'
    >>> display_timezone({"A2A_LAB_TZ": "Asia/Seoul"})
    'Asia/Seoul'
    >>> display_timezone({"A2A_LAB_TZ": "Mars/Olympus"})
    Traceback (most recent call last):
    ...
    ValueError: A2A_LAB_TZ='Mars/Olympus' is not a known IANA time zone
    """
    name = _setting(TIMEZONE_ENV, environ) or DEFAULT_TIMEZONE
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"{TIMEZONE_ENV}={name!r} is not a known IANA time zone") from exc
    return name


def _chart_mimebundle(
    spec: dict[str, Any], **metadata: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Render a chart as its Vega-Lite spec plus a PNG of it.

    The spec is what ``nbval`` compares: it is plain JSON whose inline dataset names are
    hashes of the data, so it is identical on every run. JupyterLab has no renderer for
    this Vega-Lite version's MIME type and GitHub renders none at all, so both show the
    PNG, which ``nbval`` does not compare (rasterising depends on the installed fonts).
    """
    from a2a_lab.views.plots import register_fonts

    register_fonts()  # Korean text (the agents' messages) renders instead of empty boxes
    rendered = spec_to_mimebundle(spec, format="png", mode="vega-lite", **metadata)
    # A PNG comes with its pixel size as metadata, so this is always a pair.
    assert isinstance(rendered, tuple)
    png_bundle, png_metadata = rendered
    # Altair reports the size in rendered pixels; shown at that size a chart rasterised at
    # scale 2 would be twice as large as the chart itself.
    scale = metadata.get("scale_factor", 1)
    size = {k: v / scale for k, v in png_metadata["image/png"].items()}
    bundle = {
        VEGALITE_MIME_TYPE: spec,
        "image/png": png_bundle["image/png"],
        "text/plain": f"<Vega-Lite {alt.VEGALITE_VERSION} chart>",
    }
    return bundle, {"image/png": size}


def setup(environ: Mapping[str, str] | None = None) -> Path:
    """Prepare a notebook kernel and return the log source to read.

    Sets the process time zone to :func:`display_timezone`, so that anything shown in
    "local" time (Python datetimes, chart axes) reads the same on every machine; fixes
    Polars' table layout; and registers and enables the ``a2a_lab`` Altair renderer,
    which stores each chart as its Vega-Lite spec plus a PNG preview.

    Parameters
    ----------
    environ
        The environment to read ``A2A_LAB_LOGS`` and ``A2A_LAB_TZ`` from; the process
        environment when omitted.

    Returns
    -------
    Path
        :func:`log_source` of the same environment.

    Raises
    ------
    ValueError
        From :func:`display_timezone`, if ``A2A_LAB_TZ`` names no known time zone.

    Examples
    --------
    Run inside ``pl.Config()`` and ``alt.renderers.enable()`` blocks, both restore the
    settings on exit, so this example leaves the session as it found it:

    >>> import altair as alt
    >>> import polars as pl
    >>> with pl.Config(), alt.renderers.enable("default"):
    ...     logs = setup({"A2A_LAB_LOGS": "/var/log/openclaw", "A2A_LAB_TZ": "UTC"})
    ...     print(logs.as_posix(), alt.renderers.active, time.tzname[0])
    /var/log/openclaw a2a_lab UTC
    """
    env = _environ(environ)
    os.environ["TZ"] = display_timezone(env)
    time.tzset()

    pl.Config.set_tbl_rows(_TABLE_ROWS)
    pl.Config.set_tbl_cols(_TABLE_COLS)
    pl.Config.set_tbl_width_chars(_TABLE_WIDTH_CHARS)
    pl.Config.set_fmt_str_lengths(_STRING_CHARS)

    if CHART_RENDERER not in alt.renderers.names():
        alt.renderers.register(CHART_RENDERER, _chart_mimebundle)
    alt.renderers.enable(CHART_RENDERER, scale_factor=_PNG_SCALE)
    # the chart theme too, before the first chart (it was enabled only when the renderer
    # first imported the plots module: the first chart of a session came out unthemed)
    from a2a_lab.views.plots import THEME

    alt.theme.enable(THEME)

    return log_source(env)
