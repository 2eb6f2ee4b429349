"""The short path of :mod:`a2a_lab.analysis.checks` (``al.checks``).

The same objects under the same names, so ``from a2a_lab.checks import ...`` works as
``al.checks.<name>`` does (the package's short names load lazily; this module makes the
path a real, statically importable one).
"""

from a2a_lab.analysis.checks import (
    FINDING_SCHEMA,
    RULES,
    SEVERITIES,
    Rule,
    check,
    load_findings,
    replay_guard,
    select_rules,
)

__all__ = [
    "FINDING_SCHEMA",
    "RULES",
    "SEVERITIES",
    "Rule",
    "check",
    "load_findings",
    "replay_guard",
    "select_rules",
]
