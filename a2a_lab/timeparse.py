"""Moved: the time parser is :mod:`a2a_lab.time` now; this old path re-exports it."""

from a2a_lab.time import MAX_TIME_MS as MAX_TIME_MS
from a2a_lab.time import TZ_ENV as TZ_ENV
from a2a_lab.time import Instant as Instant
from a2a_lab.time import check_tz as check_tz
from a2a_lab.time import default_tz as default_tz
from a2a_lab.time import in_window as in_window
from a2a_lab.time import instant_ms as instant_ms
from a2a_lab.time import now_ms as now_ms
from a2a_lab.time import to_epoch_ms as to_epoch_ms
from a2a_lab.time import window_ms as window_ms
