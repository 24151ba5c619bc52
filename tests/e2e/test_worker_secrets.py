"""No true secret reaches the worker's offload topic or its dead-letter topic (real broker).

Every secret of the labelled set (tests/unit/secrets_set.py) sits in lines of a long log
that standard mode stashes (so the originals go to the ``offload`` topic), and in a line
that is not JSON (so it goes to ``dead-letter``).  Both topics are read back whole and
grepped for every secret.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.e2e._support import Run
from tests.kafka_broker import kafka_bootstrap  # noqa: F401
from tests.support.secrets_set import SECRETS, log_holding
from workers.testing.worker import Sample

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(600)]


def _samples() -> list[Sample]:
    samples = []
    for n, (_, text, _) in enumerate(SECRETS):
        tool = {
            "id": f"s{n}",
            "kind": "tool_output",
            "mode": "standard",
            "content": log_holding(text),
        }
        samples.append(
            Sample(orjson.dumps(tool), "tool_output", f"s{n}", "compressed", "tool-outputs")
        )
        broken = b'{"id": "b' + str(n).encode() + b'", "note": ' + orjson.dumps(text) + b", "
        samples.append(Sample(broken, "transcript", f"b{n}", "decode", "transcripts"))
    return samples


def _leaks(blob: bytes, letters: bytes) -> list[tuple[str, str]]:
    leaked = []
    for kind, _, secret in SECRETS:
        lines = [x for x in secret.splitlines() if not x.startswith("-----")]
        pairs = ["\n".join(lines[i : i + 2]) for i in range(len(lines) - 1)] or lines
        if any(orjson.dumps(p)[1:-1] in blob for p in pairs):
            leaked.append((kind, "offload"))
        if any(orjson.dumps(x)[1:-1] in letters or x.encode() in letters for x in lines):
            leaked.append((kind, "dead-letter"))
    return leaked


def test_offload_and_dead_letter_topics_hold_no_true_secret(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    samples = _samples()
    worker = run.worker(CTXPRESS_PIPELINE_FACTORY="", CTXPRESS_MODE="standard").start()
    try:
        run.produce(samples)
        run.wait_for_outputs(len(samples), worker, timeout=300)
    finally:
        code, _ = worker.terminate()
    assert code == 0, worker.log_tail()
    offload = run.read("offload", idle=3.0)
    letters = run.read("dead-letter", idle=3.0)
    assert len(offload) >= len(SECRETS)  # the logs were stashed on the offload topic
    assert len(letters) >= len(SECRETS)  # every broken line was dead-lettered
    blob = b"\n".join(r.value for r in offload)
    dead = b"\n".join([r.value for r in letters] + [v for r in letters for _, v in r.headers])
    assert _leaks(blob, dead) == []
