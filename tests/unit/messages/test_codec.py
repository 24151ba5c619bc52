from __future__ import annotations

import copy

import pytest

from workers.messages import InvalidRecord, apply_texts, parse_record
from workers.testing import anthropic_record, openai_record, tool_output_record


def test_openai_units_carry_roles_commands_and_frozen_system() -> None:
    data = openai_record("r1", ("user", "hi"), ("tool", "out"), command="git status")
    record = parse_record(data)
    assert [(u.uid, u.role, u.kind, u.frozen) for u in record.units] == [
        ("m0", "system", "text", True),
        ("m1", "user", "text", False),
        ("m3", "tool", "tool_result", False),
    ]
    assert record.units[2].command == "git status"
    assert record.units[2].tool_name == "bash"


def test_anthropic_cache_control_freezes_prefix() -> None:
    data = anthropic_record("r2", "sys", ("user", "a"), ("tool", "b"), ("user", "c"))
    data["messages"][1]["content"][0]["cache_control"] = {"type": "ephemeral"}
    record = parse_record(data)
    frozen = {u.uid: u.frozen for u in record.units}
    assert frozen == {"s": True, "m0.0": True, "m2.0": False, "m3.0": False}
    assert record.units[2].command == "echo" and record.units[2].kind == "tool_result"


def test_cached_prefix_and_pins() -> None:
    data = openai_record("r3", ("user", "a"), ("assistant", "b"), ("user", "c"))
    data["cached_prefix_messages"] = 2
    data["messages"][3]["pinned"] = True
    assert [u.frozen for u in parse_record(data).units] == [True, True, False, True]


def test_apply_texts_copies_and_keeps_key_order() -> None:
    data = openai_record("r4", ("user", "hello"))
    data["extra"] = {"z": 1, "a": 2}
    snapshot = copy.deepcopy(data)
    out = apply_texts(data, {("messages", 1, "content"): "HELLO"})
    assert data == snapshot
    assert out["messages"][1]["content"] == "HELLO"
    assert list(out) == list(data) and out["extra"] is data["extra"]


def test_tool_output_record() -> None:
    record = parse_record(tool_output_record("t", "x", command="ls"))
    assert record.format == "tool_output" and record.units[0].command == "ls"


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ([1, 2], "must be a JSON object"),
        ({"id": "x"}, "has no 'messages' list"),
        ({"id": "x", "messages": {}}, "'messages' must be a list"),
        ({"id": "x", "messages": [{"role": "user", "content": 42}]}, "'content' must be a string"),
        ({"id": "x", "messages": [{"content": "hi"}]}, "no string 'role'"),
        ({"id": "x", "kind": "tool_output", "content": 3}, "needs a string 'content'"),
        ({"id": "x", "format": "gemini", "messages": []}, "unknown format"),
        ({"id": "x", "messages": [], "compression": {}}, "run 'ctxpress expand'"),
        ({"id": "x", "messages": [], "budget_tokens": -1}, "budget_tokens"),
    ],
)
def test_invalid_records_say_what_is_wrong(data: object, fragment: str) -> None:
    with pytest.raises(InvalidRecord) as info:
        parse_record(data)
    assert fragment in info.value.reason


def test_text_editor_tool_calls_become_read_and_write_commands() -> None:
    data = anthropic_record("r5", "sys", ("user", "look"))
    data["messages"].append(
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "str_replace_based_edit_tool",
                    "input": {"command": "view", "path": "src/app.py", "view_range": [1, 40]},
                },
                {
                    "type": "tool_use",
                    "id": "t2",
                    "name": "str_replace_based_edit_tool",
                    "input": {
                        "command": "str_replace",
                        "path": "src/app.py",
                        "old_str": "a",
                        "new_str": "b",
                    },
                },
            ],
        }
    )
    data["messages"].append(
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "1\timport os"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "edited"},
            ],
        }
    )
    commands = [u.command for u in parse_record(data).units if u.kind == "tool_result"]
    # a view reads, a replace edits in place (``patch``), a create writes the whole file (``tee``)
    assert commands == ["sed -n '1,40p' src/app.py", "patch src/app.py"]


def test_search_tool_calls_become_searches_not_reads() -> None:
    """Set 25: a ``grep`` tool's ``{"pattern", "path"}`` had read as ``cat PATH`` (a file read:
    no filter), so 160 log lines that differ only in a timestamp stayed whole."""
    data = anthropic_record("r6", "sys", ("user", "look"))
    calls = [
        ("grep", {"pattern": "panic in handler", "path": "logs/invsvc.log"}),
        ("Grep", {"pattern": "TODO"}),
        ("Glob", {"pattern": "**/*.go", "path": "internal"}),
        ("search_files", {"query": "ErrNotFound", "path": "src"}),
        ("read_file", {"path": "src/app.py"}),
        ("grep", {"command": "grep -c x y"}),
    ]
    data["messages"].append(
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": f"t{n}", "name": name, "input": args}
                for n, (name, args) in enumerate(calls)
            ],
        }
    )
    data["messages"].append(
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": f"t{n}", "content": "x"}
                for n in range(len(calls))
            ],
        }
    )
    commands = [u.command for u in parse_record(data).units if u.kind == "tool_result"]
    assert commands == [
        "rg -n 'panic in handler' logs/invsvc.log",
        "rg -n TODO .",
        "find internal -name '**/*.go'",
        "rg -n ErrNotFound src",
        "cat src/app.py",
        "grep -c x y",
    ]


def test_a_budget_beyond_any_record_is_no_budget() -> None:
    data = openai_record("big", ("user", "hi"), ("tool", "out"), command="ls")
    data["budget_tokens"] = 123456789012345678901234567890
    assert parse_record(data).budget_tokens == 2**31 - 1
    data["budget_tokens"] = 4000
    assert parse_record(data).budget_tokens == 4000


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_a_30_digit_budget_comes_out_as_written(mode: str) -> None:
    """A held-out record with ``"budget_tokens": <30 digits>`` had become a dead letter in
    aggressive mode (the budget engine's statistics could not be encoded)."""
    import orjson

    from workers.core.offload import MemoryStore
    from workers.core.settings import Settings
    from workers.pipeline.batch import compress_lines
    from workers.pipeline.runner import Pipeline

    record = openai_record("big", ("user", "hi"), ("tool", "line\n" * 400), command="cat x")
    line = orjson.dumps(record)[:-1] + b', "budget_tokens": 123456789012345678901234567890}'
    (result,) = compress_lines([line], Pipeline(Settings(mode=mode)), MemoryStore())
    assert result.dead_letter is None
    assert b'"budget_tokens":123456789012345678901234567890' in result.encoded().replace(b" ", b"")
