"""The short path of :mod:`a2a_lab.analysis.checks` (``al.checks``).

The same objects under the same names, so ``from a2a_lab.checks import ...`` works as
``al.checks.<name>`` does (the package's short names load lazily; this module makes the
path a real, statically importable one). Each name is re-exported explicitly
(``name as name``): a second ``__all__`` would repeat the source's.
"""

from a2a_lab.analysis.checks import DATA_HASH_COLUMN as DATA_HASH_COLUMN
from a2a_lab.analysis.checks import FINDING_SCHEMA as FINDING_SCHEMA
from a2a_lab.analysis.checks import LEAN_COLUMNS as LEAN_COLUMNS
from a2a_lab.analysis.checks import LEAN_FIELDS as LEAN_FIELDS
from a2a_lab.analysis.checks import RULES as RULES
from a2a_lab.analysis.checks import SEVERITIES as SEVERITIES
from a2a_lab.analysis.checks import CheckLimits as CheckLimits
from a2a_lab.analysis.checks import CheckOptions as CheckOptions
from a2a_lab.analysis.checks import Rule as Rule
from a2a_lab.analysis.checks import ambiguity_finding as ambiguity_finding
from a2a_lab.analysis.checks import blocked_findings as blocked_findings
from a2a_lab.analysis.checks import check as check
from a2a_lab.analysis.checks import data_hash as data_hash
from a2a_lab.analysis.checks import exchange_findings as exchange_findings
from a2a_lab.analysis.checks import findings_of as findings_of
from a2a_lab.analysis.checks import finish_findings as finish_findings
from a2a_lab.analysis.checks import load_findings as load_findings
from a2a_lab.analysis.checks import replay_guard as replay_guard
from a2a_lab.analysis.checks import rule_parts as rule_parts
from a2a_lab.analysis.checks import run_checks as run_checks
from a2a_lab.analysis.checks import select_rules as select_rules
