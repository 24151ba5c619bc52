"""decode_refs(encode_refs(x)) == x for random JSON values.

Unicode (astral and control characters), big integers, floats, deep and empty
containers, and strings that already start with the alias prefixes (``$R``,
``$$R``...) so that the prefix has to escalate.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.markers.refs import decode_refs, encode_refs

PREFIXED = st.sampled_from(["$R", "$R1", "$$R", "$$R2", "$$$R1", "$", "R1", "$R10"])
REPEATED = st.sampled_from(
    ["a long repeated value " * 2, "another one that repeats", "ünïcödé 𝄞 value\n\t", "x" * 40]
)
STRINGS = st.one_of(st.text(max_size=30), PREFIXED, REPEATED, PREFIXED.map(lambda p: p + "tail"))
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.floats(allow_nan=False, allow_infinity=False),
    STRINGS,
)
JSON = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=8),
        st.dictionaries(st.one_of(st.text(max_size=8), PREFIXED), children, max_size=6),
    ),
    max_leaves=60,
)


@settings(max_examples=400, deadline=None)
@given(JSON)
def test_decode_refs_inverts_encode_refs(value: Any) -> None:
    envelope = encode_refs(value)
    assert set(envelope) == {"_refs", "_data"}
    assert decode_refs(envelope) == value
    # the envelope is plain JSON and survives a JSON round trip too
    assert decode_refs(json.loads(json.dumps(envelope))) == json.loads(json.dumps(value))


@settings(max_examples=200, deadline=None)
@given(JSON, REPEATED, PREFIXED)
def test_aliases_never_collide_with_data(data: Any, repeated: str, prefixed: str) -> None:
    # a value that repeats makes aliases on every example; a prefixed one makes them escalate
    value = [data, repeated, prefixed, repeated, {prefixed: repeated}]
    envelope = encode_refs(value, min_chars=1)
    aliases = set(envelope["_refs"])
    assert aliases, "a string repeated three times must get an alias"
    assert decode_refs(envelope) == value
    prefix = next(iter(aliases)).rstrip("0123456789")
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            assert not node.startswith(prefix)
        elif isinstance(node, dict):
            stack.extend(node.values())
            assert not any(k.startswith(prefix) for k in node)
        elif isinstance(node, list):
            stack.extend(node)


def test_escalation_is_visible() -> None:
    value = ["$R1 is taken", "a value that repeats", "a value that repeats", "a value that repeats"]
    envelope = encode_refs(value)
    assert envelope["_refs"] == {"$$R1": "a value that repeats"}
    assert envelope["_data"] == ["$R1 is taken", "$$R1", "$$R1", "$$R1"]
    value.append("$$R9")
    assert list(encode_refs(value)["_refs"]) == ["$$$R1"]


def _same(a: Any, b: Any) -> bool:
    """Iterative equality (``==`` itself recurses on deep lists)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif x != y or type(x) is not type(y):
            return False
    return True


def test_deep_values_do_not_recurse() -> None:
    deep: Any = "a value that repeats"
    for _ in range(5000):
        deep = [deep, "a value that repeats"]
    envelope = encode_refs(deep)
    assert envelope["_refs"] == {"$R1": "a value that repeats"}
    assert _same(decode_refs(envelope), deep)
