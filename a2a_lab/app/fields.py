"""The ``data`` fields a message's text comes from, shared by the views and the search index.

Defined in :mod:`a2a_lab.materialize` (a history store materialises the report's search
texts at ingest, below the report's layer); this module keeps the views' import.
"""

from __future__ import annotations

from a2a_lab.materialize import TEXT_FIELDS

__all__ = ["TEXT_FIELDS"]
