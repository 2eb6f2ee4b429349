"""Shared CLI plumbing: one-line errors, source resolution, JSON output."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, NoReturn

from a2a_lab._deep import deep_call
from a2a_lab.reference.jsstr import js_well_formed_json


class CliError(Exception):
    """An error the user can fix; reported as one line with exit status 2."""


class OneLineArgumentParser(argparse.ArgumentParser):
    """argparse, but a usage error is ONE line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def print_json(obj: Any) -> None:
    """Write one JSON document to stdout (UTF-8, no ASCII escaping)."""
    sys.stdout.write(js_well_formed_json(deep_call(json.dumps, obj, ensure_ascii=False)))
    sys.stdout.write("\n")


def split_multi(values: list[str] | None) -> list[str] | None:
    """Repeated options and comma-separated values, as the reference's query parser does."""
    if values is None:
        return None
    out: list[str] = []
    for v in values:
        out.extend(v.split(","))
    return out
