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
from workers.pipeline.batch import compress_lines
from workers.pipeline.expand import expand_line
from workers.pipeline.runner import Pipeline

EXAMPLES = int(os.environ.get("CTXPRESS_FUZZ_EXAMPLES", "200"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


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
