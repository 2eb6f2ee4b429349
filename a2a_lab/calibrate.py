"""The short path of :mod:`a2a_lab.analysis.calibrate` (``al.calibrate``).

The same objects under the same names, so ``from a2a_lab.calibrate import ...`` works as
``al.calibrate.<name>`` does (the package's short names load lazily; this module makes the
path a real, statically importable one). Each name is re-exported explicitly
(``name as name``): a second ``__all__`` would repeat the source's.
"""

from a2a_lab.analysis.calibrate import SPAWN_WINDOW_MS as SPAWN_WINDOW_MS
from a2a_lab.analysis.calibrate import Calibration as Calibration
from a2a_lab.analysis.calibrate import Comparison as Comparison
from a2a_lab.analysis.calibrate import FitWarning as FitWarning
from a2a_lab.analysis.calibrate import GatewayLimits as GatewayLimits
from a2a_lab.analysis.calibrate import compare as compare
from a2a_lab.analysis.calibrate import comparison_chart as comparison_chart
from a2a_lab.analysis.calibrate import exchanges as exchanges
from a2a_lab.analysis.calibrate import fit_log as fit_log
from a2a_lab.analysis.calibrate import fit_service_time as fit_service_time
