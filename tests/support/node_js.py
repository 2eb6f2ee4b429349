"""Run JavaScript in Node to get the reference's answer (tests skip where Node is missing)."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest

#: Mark for a test that needs ``node`` on the PATH.
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def node_json(script: str, payload: Any = None) -> Any:
    """Run ``script`` in Node with ``input`` bound to ``payload`` (sent as JSON on stdin).

    The script prints its answer as JSON (``console.log(JSON.stringify(...))``); this returns it
    parsed.
    """
    wrapper = (
        "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const input=JSON.parse(s);"
        + script
        + "})"
    )
    out = subprocess.run(
        ["node", "-e", wrapper],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)
