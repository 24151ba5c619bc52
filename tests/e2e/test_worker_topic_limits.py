"""Topic limits on the real broker: checked at start-up, survived when lowered at run time.

- Output topics that take 1 MiB while the worker may write 17 MiB: the worker exits 2 at
  start with the ``kafka-configs.sh`` command that fixes it (the first big output would
  otherwise stop it mid-stream).
- ``compressed`` lowered to 200 KB while the worker runs: the broker refuses the output of
  a 500 KB transcript; that input becomes a small ``OutputRefused`` dead letter, the records
  around it (sent in the same producer batch) are published, and the worker keeps running.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import orjson
import pytest

from tests.e2e._support import Run
from tests.functional.test_worker_sizes import big_transcript
from tests.kafka_broker import kafka_bootstrap  # noqa: F401
from workers.service.kafka.io import produce_lines
from workers.testing.worker import mixed_stream

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(300)]

MIB = 1024 * 1024


def test_worker_refuses_to_start_when_output_topics_take_less(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics(max_message_bytes=MIB)
    worker = run.worker().start()
    code = worker.wait(timeout=90)
    log = worker.log_path.read_text(errors="replace")
    assert code == 2, log[-3000:]
    assert "CTXPRESS_MAX_MESSAGE_BYTES=17,825,792" in log
    assert f"{run.names.compressed} (max.message.bytes=1,048,576)" in log
    assert "--add-config max.message.bytes=17825792" in log


def test_a_limit_lowered_at_run_time_dead_letters_only_the_big_record(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    small = [s for s in mixed_stream(40, seed=41, prefix="lim-") if s.ok and s.kind == "transcript"]
    worker = run.worker().start()
    try:
        run.produce(small[:3])
        run.wait_for_outputs(3, worker, timeout=120)
        run.set_max_message_bytes([run.names.compressed], 200_000)
        big = big_transcript("big-500k", 500_000)
        lines = [s.line for s in small[3:6]] + [big] + [s.line for s in small[6:9]]
        report = asyncio.run(produce_lines(lines, run.settings(), "transcripts"))
        assert not report.failed and report.sent == 7
        run.wait_for_outputs(10, worker, timeout=120)
        assert worker.alive(), worker.log_tail()
        compressed = {r.key.decode() for r in run.read("compressed", idle=3.0)}
        letters = [orjson.loads(r.value) for r in run.read("dead-letter", idle=3.0)]
    finally:
        code, _seconds = worker.terminate(timeout=60)
    assert compressed == {s.record_id for s in small[:9]}
    own = [b for b in letters if b["stage"] == "publish"]
    assert len(own) == 1, json.dumps(letters)[:2000]
    (letter,) = own
    assert letter["error_class"] == "OutputRefused" and letter["record_id"] == "big-500k"
    assert "max.message.bytes" in letter["reason"]
    assert letter["original_truncated"] is True and letter["original_bytes"] == len(big)
    assert code == 0, worker.log_tail(60)
