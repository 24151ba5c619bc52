"""What the line-block engines (``template``, ``prefix``) share: which outputs they read."""

from __future__ import annotations

import pytest

from tests.support.roundtrip import TOKENS
from workers.engines._lineblocks import LineBlockEngine
from workers.engines.base import EngineContext
from workers.engines.prefix import PrefixEngine
from workers.engines.template import TemplateEngine
from workers.messages.model import Unit

# nine lines that start alike and share a template: either engine would write them as a block
CODE = "def test_prices():\n" + "".join(f"    assert price({i}) == {10 * i}\n" for i in range(9))
LOG = "".join(
    f"2026-12-03 10:55:{i:02d} INFO synced acct_{100 + i} in {i * 7} ms\n" for i in range(9)
)


def _unit(text: str, command: str, frozen: bool = False) -> Unit:
    path = ("messages", 1, "content")
    return Unit("m1", 1, "tool", "tool_result", text, path, frozen=frozen, command=command)


@pytest.mark.parametrize("engine", [TemplateEngine(), PrefixEngine()], ids=lambda e: e.name)
def test_source_reads_frozen_units_and_prose_stay_whole_a_read_log_does_not(
    engine: LineBlockEngine,
) -> None:
    ctx = EngineContext(tokens=TOKENS)
    kept = [
        _unit(CODE, "cat tests/test_prices.py"),  # source code reads by its lines
        _unit(LOG, "make", frozen=True),  # a cached prefix never changes
        Unit("m2", 2, "user", "text", LOG, ("messages", 2, "content")),
    ]
    assert engine.apply(kept, ctx).texts == [u.text for u in kept]
    (read_log,) = engine.apply([_unit(LOG, "tail -n 9 logs/sync.log")], ctx).texts
    assert read_log != LOG and engine.decode(read_log, {}) == LOG
