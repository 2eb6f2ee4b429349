"""The event objects' key-order walk is skipped only where it would change nothing."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_lab.sessions._objects import _INDEX_KEY, _is_array_index, _js_key_order

KEYS = st.one_of(
    st.sampled_from(["0", "1", "12", "007", "4294967294", "4294967295", "-1", "1.5", " 1", "a"]),
    st.text(max_size=4),
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)


def _has_index_key(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_is_array_index(k) for k in value) or any(map(_has_index_key, value.values()))
    if isinstance(value, list):
        return any(map(_has_index_key, value))
    return False


@settings(max_examples=400, deadline=None)
@given(
    value=st.dictionaries(KEYS, JSON, max_size=5), ascii_only=st.booleans(), spaced=st.booleans()
)
def test_no_match_means_the_walk_changes_nothing(
    value: dict[str, Any], ascii_only: bool, spaced: bool
) -> None:
    separators = (", ", ": ") if spaced else (",", ":")
    text = json.dumps(value, ensure_ascii=ascii_only, separators=separators)
    if _has_index_key(value):
        assert _INDEX_KEY.search(text) is not None
    if _INDEX_KEY.search(text) is None:
        walked = _js_key_order(json.loads(text))
        assert list(json.dumps(walked)) == list(json.dumps(json.loads(text)))


def test_an_escaped_digit_key_is_seen() -> None:
    assert _INDEX_KEY.search('{"\\u0031\\u0032" : 5}') is not None
    assert _INDEX_KEY.search('{"a": "\\"12\\": x"}') is None
