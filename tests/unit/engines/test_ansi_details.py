"""The ``ansi`` engine's ``sequences`` detail counts escape sequences, not ESC bytes.

An OSC hyperlink ended by ST (``ESC \\``) holds two ESC bytes and is one
sequence; counting ESC bytes gave 3 for ``link + colour`` below.
"""

from __future__ import annotations

from workers.core.tokens import TokenCounter
from workers.engines.ansi import AnsiEngine
from workers.engines.base import EngineContext
from workers.messages.model import Unit


def _unit(text: str) -> Unit:
    return Unit("m1", 1, "tool", "tool_result", text, ("messages", 1, "content"))


def test_sequences_are_counted_one_each() -> None:
    text = "see \x1b]8;;https://example.com/\x1b\\docs\x1b]8;;\x07 and \x1b[31mred\x1b[0m\n"
    out = AnsiEngine().apply([_unit(text)], EngineContext(tokens=TokenCounter()))
    assert out.texts == ["see docs and red\n"]
    # OSC (ST-ended), OSC (BEL-ended), CSI, CSI
    assert out.details["sequences"] == 4
    assert out.details["units"] == 1
