"""The worker's edge validation gives jsonschema's verdict and message for every value.

``EdgeValidator`` accepts a valid value with a compiled check (fastjsonschema, draft 07) and
asks jsonschema (2020-12) about everything else; these tests compare it with jsonschema alone
on valid records and on records with any part replaced by any JSON value (bools where
integers go, floats like 1.0, huge integers, nulls, empty arrays, nested objects).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from workers.service.topics import SCHEMAS_DIR, TopicNames
from workers.service.validate import EdgeValidator, compiled_accept

NAMES = TopicNames.from_prefix("ctxpress.")
VALIDATOR = EdgeValidator(NAMES)

VALID: list[tuple[str, dict[str, Any]]] = [
    (
        NAMES.transcripts,
        {
            "id": "r1",
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "run it"}]},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "bash", "arguments": '{"cmd": "ls"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "a.py\nb.py"},
            ],
            "mode": "standard",
        },
    ),
    (
        NAMES.transcripts,
        {
            "id": 7,
            "format": "anthropic",
            "system": "be brief",
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
                        {"type": "text", "text": "and?", "cache_control": {"type": "ephemeral"}},
                    ],
                },
            ],
        },
    ),
    (
        NAMES.tool_outputs,
        {
            "id": "t-1",
            "kind": "tool_output",
            "content": "PASS 3 tests",
            "command": "pytest -q",
            "budget_tokens": 200,
        },
    ),
]


def _reference(topic: str, value: Any) -> str | None:
    short = "tool-output" if topic == NAMES.tool_outputs else "transcript"
    schema = json.loads((SCHEMAS_DIR / f"{short}.schema.json").read_text(encoding="utf-8"))
    error = best_match(Draft202012Validator(schema).iter_errors(value))
    if error is None:
        return None
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    message = error.message if len(error.message) <= 300 else error.message[:297] + "..."
    return f"value does not match schemas/{short}.schema.json at ${where}: {message}"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1.0, 0.0, -1.5, 1.50, 200.0])
    | st.text(max_size=8)
    | st.sampled_from(
        ["", "user", "tool", "wizard", "anthropic", "openai", "tool_output", "text", "lossless"]
    ),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(["id", "role", "content", "type", "text", "kind", "x", "name"]),
            children,
            max_size=3,
        )
    ),
    max_leaves=8,
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for key, sub in value.items():
            out += _paths(sub, (*path, key))
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            out += _paths(sub, (*path, index))
    return out


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    out = copy.deepcopy(value)
    target = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return out


def test_valid_records_are_accepted_by_the_compiled_check() -> None:
    for topic, record in VALID:
        assert VALIDATOR.error(topic, record) is None
        assert _reference(topic, record) is None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_any_part_replaced_by_any_value_gives_jsonschemas_verdict(data: st.DataObject) -> None:
    topic, record = data.draw(st.sampled_from(VALID))
    path = data.draw(st.sampled_from(_paths(record)))
    value = _replaced(record, path, data.draw(json_values))
    assert VALIDATOR.error(topic, value) == _reference(topic, value)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_any_value_on_any_topic(value: Any) -> None:
    for topic in (NAMES.transcripts, NAMES.tool_outputs, "someone.elses-topic"):
        expected_topic = topic
        if topic == "someone.elses-topic":
            is_tool = isinstance(value, dict) and value.get("kind") == "tool_output"
            expected_topic = NAMES.tool_outputs if is_tool else NAMES.transcripts
        assert VALIDATOR.error(topic, value) == _reference(expected_topic, value)


def test_a_keyword_draft7_reads_otherwise_leaves_the_schema_to_jsonschema() -> None:
    assert compiled_accept({"type": "array", "prefixItems": [{"type": "string"}]}) is None
    assert compiled_accept({"type": "array", "items": [{"type": "string"}]}) is None
    assert compiled_accept({"$ref": "https://example.com/other.json"}) is None
    accept = compiled_accept({"type": "object", "properties": {"n": {"type": "integer"}}})
    assert accept is not None
    assert accept({"n": 3}) and not accept({"n": True}) and not accept({"n": "3"})
    for short in ("transcript", "tool-output"):  # the shipped schemas take the fast way
        schema = json.loads((SCHEMAS_DIR / f"{short}.schema.json").read_text(encoding="utf-8"))
        assert compiled_accept(schema) is not None, short
