"""What the reversible formats' property tests share: how many examples, and one JSONL line
through a pipeline and ``expand`` back.

``CTXPRESS_FUZZ_EXAMPLES=N`` runs every property that uses :data:`SETTINGS` with N examples
(200 by default).
"""

from __future__ import annotations

import json
import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from workers.core.jsonl import BadLine, decode_line
from workers.core.tokens import TokenCounter
from workers.engines.base import EngineContext, LosslessEngine
from workers.markers import unwritten_markers
from workers.messages.model import Unit
from workers.pipeline.batch import compress_lines
from workers.pipeline.expand import expand_line
from workers.pipeline.runner import Pipeline

EXAMPLES = int(os.environ.get("CTXPRESS_FUZZ_EXAMPLES", "200"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


TOKENS = TokenCounter("cl100k_base")


def valid(text: str) -> str:
    """``text`` with lone surrogates as ``?`` (a line holding one is a dead letter)."""
    return text.encode("utf-8", "replace").decode("utf-8")


@st.composite
def spelled(draw: st.DrawFn, fields: dict[str, object]) -> bytes:
    """``fields`` as one JSONL line as a user may write it: any key order, ASCII-escaped or
    not, indented (then joined onto one line) or not."""
    order = draw(st.permutations(list(fields)))
    record = {key: fields[key] for key in order}
    text = json.dumps(
        record, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 0, 2]))
    )
    return text.replace("\n", "").encode()


def round_trip(line: bytes, pipeline: Pipeline) -> bytes:
    """``line`` compressed by ``pipeline``, written, read back and expanded."""
    (result,) = list(compress_lines([line], pipeline))
    assert result.outcome is not None, result.dead_letter
    written = result.encoded().strip()
    value = decode_line(written, 1, 1 << 62)
    assert not isinstance(value, BadLine), value
    return expand_line(written, value)


def check_lossless_engine(engine: LosslessEngine, text: str, other: str) -> None:
    """One tool output through a lossless ``engine`` alone: its output decodes back to
    ``text``; a changed output counts fewer tokens and holds no marker-like text another
    engine (``other``) could have written, while its own blocks are not ``other``'s."""
    unit = Unit("m1", 1, "tool", "tool_result", text, ("messages", 1, "content"))
    (after,) = engine.apply([unit], EngineContext(tokens=TOKENS)).texts
    assert engine.decode(after, {}) == text
    if after != text:
        assert TOKENS.count(after) < TOKENS.count(text)
        assert unwritten_markers(text, after, engine.name, True, ()) == []
        assert unwritten_markers(text, after, other, True, ()) != []
