"""``a2a-lab serve``: the dashboard's read-only HTTP API over a log or a history store."""

from a2a_lab.serve._app import ServeConfig, create_app, parse_query
from a2a_lab.serve._json import js_json_bytes, js_number
from a2a_lab.serve._live import LiveEvents, Snapshot

__all__ = [
    "LiveEvents",
    "ServeConfig",
    "Snapshot",
    "create_app",
    "js_json_bytes",
    "js_number",
    "parse_query",
]
