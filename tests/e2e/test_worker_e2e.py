"""End to end on the real broker: 500 mixed records through ``ctxpress worker``.

Valid transcripts and tool outputs, invalid JSON, bytes that are not UTF-8,
schema violations, and records that the gate rejects (through the test
pipeline factory, see ``workers.testing_worker``).  The worker is started as a
subprocess, stopped with SIGTERM while records are in flight, and restarted:
every valid record must be on ``compressed`` exactly once with the stats the
in-process pipeline computes, every bad one once on ``dead-letter`` with its
reason and headers, and the counts must match exactly.  Start-up to the first
output must take under 15 s and the SIGTERM shutdown under 10 s.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.e2e._support import Run, check_exactly_once, collect
from tests.kafka_broker import kafka_bootstrap  # noqa: F401
from workers.testing_worker import mixed_stream

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(300)]


def test_500_mixed_records_exactly_once(kafka_bootstrap: str, tmp_path: Path) -> None:  # noqa: F811
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    samples = mixed_stream(500, seed=7, rows=40)
    first, second = samples[:250], samples[250:]
    run.produce(first)

    worker = run.worker("worker-1").start()
    try:
        # start-up: process start to the first record out (read back by a consumer)
        started = worker.started_at
        records = run.read("compressed", idle=30.0, until=time.monotonic() + 30, count=1)
        assert records, f"no output within 30 s:\n{worker.log_tail()}"
        first_output = time.monotonic() - started
        print(f"\nstart-up to first output: {first_output:.2f} s")
        assert first_output < 15.0

        # SIGTERM while the second half is in flight
        run.produce(second)
        run.wait_for_outputs(300, worker, timeout=60)
        code, seconds = worker.terminate(timeout=30)
        print(f"SIGTERM shutdown: {seconds:.2f} s (exit {code})")
        assert code == 0, worker.log_tail()
        assert seconds < 10.0
    finally:
        if worker.alive():
            worker.kill()

    worker = run.worker("worker-2").start()
    try:
        verdict = collect(run, samples, timeout=90)
    finally:
        code, _ = worker.terminate(timeout=30)
    check_exactly_once(run, samples, verdict)
    kinds = {s.kind for s in samples}
    assert kinds == {
        "transcript",
        "anthropic",
        "tool_output",
        "gate",
        "bad_json",
        "not_utf8",
        "schema",
    }
    assert "Traceback" not in worker.log_tail(2000)
