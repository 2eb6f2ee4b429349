"""``--format table|json|csv``: how a command prints its frame (issue 23 item 3).

``table`` is Polars' own table (:class:`polars.Config`), every row and column shown, no
shape line nor dtypes, cells cut at a readable width; ``json`` a JSON array of row objects;
``csv`` CSV with a header. Polars is imported when a frame is printed, not when the
parser is built (``a2a-lab --help`` stays fast).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

#: The formats of ``--format``.
FORMATS = ("table", "json", "csv")


def add_format_option(
    parser: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup,
    default: str = "table",
    *,
    json_help: str = "JSON rows",
    json_alias: bool = False,
) -> None:
    """``--format table|json|csv`` (default ``table``: a readable summary).

    With ``json_alias``, ``--json`` is kept as the old spelling of ``--format json``.
    """
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=default,
        help=f"print a readable table, {json_help} or CSV (default: {default})",
    )
    if json_alias:
        parser.add_argument(
            "--json",
            dest="format",
            action="store_const",
            const="json",
            help="the same as --format json",
        )


def print_frame(frame: Any, fmt: str, *, json_rows: Any = None) -> None:
    """Print ``frame`` to stdout in ``fmt``.

    Parameters
    ----------
    frame
        A :class:`polars.DataFrame`.
    fmt
        ``table``, ``json`` or ``csv``.
    json_rows
        What ``json`` prints instead of the array of the frame's rows (e.g. a mapping).
    """
    import polars as pl

    from a2a_lab.cli._common import print_json, printable

    if fmt == "json":
        print_json(frame.to_dicts() if json_rows is None else json_rows)
    elif fmt == "csv":
        sys.stdout.write(frame.write_csv())
    else:
        with pl.Config(
            tbl_rows=-1,
            tbl_cols=-1,
            tbl_hide_dataframe_shape=True,
            tbl_hide_column_data_types=True,
            tbl_formatting="ASCII_FULL_CONDENSED",
            fmt_str_lengths=60,
            tbl_width_chars=10_000,
            float_precision=None,
        ):
            print(printable(frame))
