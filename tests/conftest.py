"""Test-suite configuration shared by every test module.

Hypothesis profiles: ``ci`` (chosen when the ``CI`` environment variable is set, as it is
for ``.ci/run``) derandomises the search, so a CI run is reproducible and a red run stays
red on re-run; ``dev`` (the default elsewhere) searches randomly and remembers failing
examples in ``.hypothesis/``. ``HYPOTHESIS_PROFILE=ci`` selects one explicitly. Neither
has a deadline: the machines are small and shared, and a slow example is not a failure.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("dev", deadline=None)
settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)
