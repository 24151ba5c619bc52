"""The ``ansi`` engine never leaves a text block blank.

A unit that holds nothing but escape sequences and whitespace (a terminal
reset, a cleared line) became ``""``: the Anthropic API refuses an empty or
blank text block, so the compressed request could not be sent.  Such a unit
keeps its sequences; a unit with visible text still loses them.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from workers.cli import main

RECORD = {
    "id": "a1",
    "model": "claude-3-5-sonnet",
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "run it"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "tu1", "name": "bash", "input": {"c": "ls"}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "tu1",
                    "content": [{"type": "text", "text": "\x1b[0m\x1b[K"}],
                },
                {"type": "text", "text": "\x1b[1m \x1b[0m\n"},
                {"type": "text", "text": "\x1b[31merror\x1b[0m: it failed"},
            ],
        },
    ],
}


def test_a_block_of_only_sequences_keeps_them_and_expand_is_exact(tmp_path: Path) -> None:
    src, out, back = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "back.jsonl"
    src.write_bytes(orjson.dumps(RECORD) + b"\n")
    assert main(["compress", "--mode", "lossless", "-i", str(src), "-o", str(out), "--quiet"]) == 0
    assert main(["expand", "-i", str(out), "-o", str(back)]) == 0
    assert back.read_bytes() == src.read_bytes()
    blocks = orjson.loads(out.read_bytes())["messages"][2]["content"]
    assert blocks[0]["content"][0]["text"] == "\x1b[0m\x1b[K"
    assert blocks[1]["text"] == "\x1b[1m \x1b[0m\n"
    assert blocks[2]["text"] == "error: it failed"
