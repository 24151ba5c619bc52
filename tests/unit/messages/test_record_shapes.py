"""Record shapes are detected, never guessed silently: no text is skipped, no unknown role passes."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from workers.core.settings import Settings
from workers.messages import InvalidRecord, parse_record
from workers.pipeline.runner import Pipeline, RecordError
from workers.testing import anthropic_record

RESULT = "FAILED tests/test_math.py::test_add - assert 3 == 4\n1 failed, 4 passed in 0.03s"


def without_format(data: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(data)
    del out["format"]
    return out


def test_an_anthropic_record_without_format_is_read_as_anthropic() -> None:
    data = anthropic_record("a1", "be brief", ("user", "why?"), ("tool", RESULT))
    plain = parse_record(without_format(data))
    tagged = parse_record(data)
    assert plain.format == "anthropic"
    assert [(u.uid, u.kind, u.text) for u in plain.units] == [
        (u.uid, u.kind, u.text) for u in tagged.units
    ]
    assert any(u.kind == "tool_result" and u.text == RESULT for u in plain.units)


def test_blocks_alone_say_anthropic_without_a_system() -> None:
    data = without_format(anthropic_record("a2", "", ("user", "hi"), ("tool", RESULT)))
    del data["system"]
    record = parse_record(data)
    assert record.format == "anthropic"
    assert [u.text for u in record.units if u.kind == "tool_result"] == [RESULT]


def test_the_tool_result_tokens_are_counted() -> None:
    """Read as OpenAI, the record counted 3 tokens ('why?'); its tool result counts too."""
    data = anthropic_record("a3", "be brief", ("user", "why?"), ("tool", RESULT))
    pipeline = Pipeline(Settings.from_env(mode="off"))
    plain = pipeline.run_raw(without_format(data)).stats["tokens_before"]
    assert plain == pipeline.run_raw(data).stats["tokens_before"]
    assert plain > 20


def test_an_openai_record_is_still_openai() -> None:
    data = {"id": "o", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    assert parse_record(data).format == "openai"


@pytest.mark.parametrize(
    ("data", "fragments"),
    [
        (
            {"id": "w", "messages": [{"role": "wizard", "content": "abracadabra"}]},
            [
                "message 0 has role 'wizard', which the OpenAI API does not have",
                "valid roles: system, developer, user, assistant, tool, function",
            ],
        ),
        (
            {"id": "w", "format": "anthropic", "messages": [{"role": "system", "content": "x"}]},
            ["valid roles: user, assistant", "top-level 'system'"],
        ),
        (
            {
                "id": "w",
                "system": "s",
                "messages": [{"role": "tool", "content": "x"}],
            },
            ["valid roles: user, assistant", "read as Anthropic"],
        ),
        (
            {
                "id": "f",
                "format": "openai",
                "messages": [
                    {"role": "user", "content": [{"type": "tool_result", "content": "x"}]}
                ],
            },
            ["Anthropic 'tool_result' block", 'set "format": "anthropic"'],
        ),
        (
            {
                "id": "t",
                "messages": [{"role": "user", "content": [{"type": "input_text", "text": "x"}]}],
            },
            ["content part 0 of type 'input_text' carries a 'text' that would not be read"],
        ),
    ],
)
def test_a_shape_the_api_does_not_have_is_a_dead_letter(
    data: dict[str, Any], fragments: list[str]
) -> None:
    with pytest.raises(InvalidRecord) as info:
        parse_record(data)
    for fragment in fragments:
        assert fragment in info.value.reason
    with pytest.raises(RecordError):
        Pipeline(Settings.from_env(mode="lossless")).run_raw(data)
