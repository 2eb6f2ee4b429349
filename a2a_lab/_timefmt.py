"""Moved: time formatting is :mod:`a2a_lab.time` now; this old path re-exports it."""

from a2a_lab.time._format import STRFTIME_MAX_MS, format_time, python_safe

__all__ = ["STRFTIME_MAX_MS", "format_time", "python_safe"]
