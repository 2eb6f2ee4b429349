"""The application layer (issue 25): what the report, the CLI and the notebooks show.

It sits between the analyses (:mod:`a2a_lab.analysis`, :mod:`a2a_lab.sessions`,
:mod:`a2a_lab.sim`) and the views: it runs them once, gates and orders their figures
(:mod:`a2a_lab.app.report`), and the views only render what it returns.
"""

from __future__ import annotations
