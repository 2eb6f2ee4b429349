"""Moved: time formatting is :mod:`a2a_lab.time` now; this old path re-exports it."""

from a2a_lab.time import STRFTIME_MAX_MS as STRFTIME_MAX_MS
from a2a_lab.time import format_time as format_time
from a2a_lab.time import python_safe as python_safe
