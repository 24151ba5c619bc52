"""A one-line JSON object is cut into keys and raw values that join back into the line.

Lines are written as users' programs write them: any JSON object (nested values, unicode,
escapes, big integers, floats like ``1.50``, empty arrays) dumped compact, with spaces, or
with ASCII escapes; anything else (arrays, bare values, text around an object) is no cut.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.engines._jsonline import members

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(["1.50", '"q"', "a\\b", "é", "\ud83d\udca9", "{}", "[]", ","])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
OBJECTS = st.dictionaries(st.text(max_size=8), VALUES, min_size=1, max_size=6)
STYLES = st.sampled_from(
    [
        {"separators": (",", ":")},
        {"separators": (", ", ": ")},
        {"separators": (",", ":"), "ensure_ascii": False},
        {"separators": (" , ", " : ")},
    ]
)


@settings(max_examples=600, deadline=None)
@given(OBJECTS, STYLES)
def test_an_object_line_is_cut_into_keys_and_values_that_join_back(obj: dict, style: dict) -> None:
    line = json.dumps(obj, **style)
    parts = members(line)
    assert parts is not None
    assert "".join(parts) == line
    assert len(parts) == 2 * len(obj) + 1
    for value, raw in zip(obj.values(), parts[1::2], strict=True):
        assert json.loads(raw) == json.loads(json.dumps(value, **style))  # each value, whole


@settings(max_examples=600, deadline=None)
@given(VALUES, st.text(min_size=1, max_size=4).filter(lambda t: t.strip()))
def test_anything_but_one_object_is_no_cut(value: object, around: str) -> None:
    line = json.dumps(value)
    if not isinstance(value, dict):
        assert members(line) is None
    assert members(line + around) is None  # text after the closing brace
    if not around.lstrip().startswith("{"):
        assert members(around + line) is None
