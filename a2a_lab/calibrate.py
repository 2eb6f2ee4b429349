"""The short path of :mod:`a2a_lab.analysis.calibrate` (``al.calibrate``).

The same objects under the same names, so ``from a2a_lab.calibrate import ...`` works as
``al.calibrate.<name>`` does (the package's short names load lazily; this module makes the
path a real, statically importable one).
"""

from a2a_lab.analysis.calibrate import (
    SPAWN_WINDOW_MS,
    Calibration,
    Comparison,
    FitWarning,
    GatewayLimits,
    compare,
    comparison_chart,
    exchanges,
    fit_log,
    fit_service_time,
)

__all__ = [
    "SPAWN_WINDOW_MS",
    "Calibration",
    "Comparison",
    "FitWarning",
    "GatewayLimits",
    "compare",
    "comparison_chart",
    "exchanges",
    "fit_log",
    "fit_service_time",
]
