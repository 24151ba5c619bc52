"""A worker that cannot go on exits, non-zero and within seconds, and says what to change.

- Another producer takes the worker's transactional id for one input partition (a
  zombie's successor fences it): the next publication there fails for good, ``/live``
  and ``/ready`` report 503 or the port is closed, and the process exits with code 1
  within 10 s, its log saying it was fenced.  Nothing was committed past the fenced
  batch: a new worker processes it and the rest, every record exactly once.  (A record
  the broker refuses as too large is no longer fatal: see test_worker_topic_limits.py.)
- A worker whose event loop is blocked (an engine sleeping in ``time.sleep``) ends
  within ``CTXPRESS_SHUTDOWN_TIMEOUT`` after SIGTERM, and nothing of the blocked
  batch is published.
"""

from __future__ import annotations

import asyncio
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import orjson
import pytest

from tests.e2e._support import Run
from tests.functional.test_worker_sizes import big_transcript
from tests.kafka_broker import REPO, kafka_bootstrap  # noqa: F401
from workers.testing.worker import mixed_stream

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(600)]


def status(port: int, path: str) -> int | None:
    """HTTP status of ``path`` (None: nobody listens)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=1) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, OSError):
        return None


async def _fence(run: Run, topic: str, partition: int) -> None:
    """Start a producer with the worker's transactional id for ``topic[partition]``: a
    zombie's successor.  Kafka bumps the epoch, so the worker's next transaction there
    fails with ProducerFenced (a fatal error: another owner)."""
    from aiokafka import AIOKafkaProducer

    zombie = AIOKafkaProducer(
        bootstrap_servers=run.bootstrap, transactional_id=f"{run.app_id}-{topic}-{partition}"
    )
    await zombie.start()
    await zombie.stop()


def test_a_fenced_worker_exits_fast_and_loses_nothing(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    small = [s for s in mixed_stream(30, seed=31, prefix="f") if s.kind == "transcript"]
    run.produce(small)

    worker = run.worker("worker-1").start()
    ready_seen = False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not ready_seen:
        ready_seen = status(run.port, "/ready") == 200 and status(run.port, "/live") == 200
        time.sleep(0.2)
    assert ready_seen, worker.log_tail()
    run.wait_for_outputs(len(small), worker, timeout=60)

    asyncio.run(_fence(run, run.names.transcripts, 0))
    trigger = big_transcript("after-the-fence", 2_000)
    from tests.e2e.test_worker_big_records import _produce

    asyncio.run(_produce(run, [(b"after-the-fence", trigger, [])]))  # to partition 0
    unhealthy_at = None
    deadline = time.monotonic() + 60
    while worker.alive() and time.monotonic() < deadline:
        if unhealthy_at is None and status(run.port, "/live") != 200:
            unhealthy_at = time.monotonic()
        time.sleep(0.1)
    assert not worker.alive(), f"worker still running:\n{worker.log_tail()}"
    exited_at = time.monotonic()
    code = worker.wait()
    log = worker.log_path.read_text(errors="replace")
    assert code == 1, worker.log_tail(80)
    assert "was fenced" in log, worker.log_tail(80)
    assert unhealthy_at is not None
    assert exited_at - unhealthy_at < 10.0, (exited_at - unhealthy_at, worker.log_tail(80))

    # nothing was committed past the fenced batch: a new worker processes it, exactly once
    worker = run.worker("worker-2").start()
    try:
        after = [s for s in mixed_stream(30, seed=32, prefix="g") if s.kind == "transcript"]
        run.produce(after)
        expected = {s.record_id for s in small + after} | {"after-the-fence"}
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            keys = Counter(r.key.decode() for r in run.read("compressed", idle=2.0))
            if set(keys) >= expected:
                break
        letters = [orjson.loads(r.value) for r in run.read("dead-letter", idle=2.0)]
    finally:
        code2, _seconds = worker.terminate(timeout=60)
    assert set(keys) == expected and set(keys.values()) == {1}, keys
    assert letters == []
    assert code2 == 0, worker.log_tail(80)
    print(
        f"\nfenced worker: unhealthy -> exit {exited_at - unhealthy_at:.1f} s (code {code}); "
        f"restarted: {len(keys)} compressed, each once"
    )


def test_sigterm_ends_a_worker_whose_loop_is_blocked(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    first = [s for s in mixed_stream(20, seed=41, prefix="h") if s.kind == "transcript"]
    run.produce(first)
    env = {
        "CTXPRESS_PIPELINE_FACTORY": "tests.e2e.hang_pipeline:pipeline",
        "CTXPRESS_MODE": "lossless",
        "CTXPRESS_SHUTDOWN_TIMEOUT": "4",
        "PYTHONPATH": str(REPO),
    }
    worker = run.worker(**env).start()
    try:
        run.wait_for_outputs(len(first), worker, timeout=120)
        hang = orjson.dumps(
            {"id": "hang-1", "messages": [{"role": "user", "content": "HANG-FOREVER please"}]}
        )
        from tests.e2e.test_worker_big_records import _produce

        asyncio.run(_produce(run, [(b"hang-1", hang, [])]))
        time.sleep(3.0)  # the agent is now inside the sleeping engine
        assert worker.alive()
    finally:
        code, seconds = worker.terminate(timeout=30)
    assert seconds < 4.0 + 3.0, (seconds, worker.log_tail(40))
    assert code == 1, (code, worker.log_tail(40))
    assert "still running 4 s after SIGTERM" in worker.log_path.read_text(errors="replace")
    keys = Counter(r.key.decode() for r in run.read("compressed", idle=2.0))
    assert set(keys) == {s.record_id for s in first} and set(keys.values()) == {1}
    print(f"\nSIGTERM with a blocked event loop: exited after {seconds:.1f} s (code {code})")
