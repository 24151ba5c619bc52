"""Crash test on the real broker: SIGKILL the worker in the middle of 5,000 records.

The worker (exactly_once) is killed with SIGKILL once it has processed about a
third of the stream, then started again.  Afterwards every record id is on
``compressed`` (valid records) or ``dead-letter`` (bad ones), none is missing,
and a ``read_committed`` consumer sees no duplicate: the transactions the
killed worker left open were aborted when its successor started.  A
``read_uncommitted`` read shows what was aborted (the proof that the kill
really hit in-flight work).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from tests.e2e._support import Run, check_exactly_once, collect
from tests.kafka_broker import kafka_bootstrap  # noqa: F401
from workers.service.kafka.io import read_topic
from workers.testing.worker import mixed_stream

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(600)]


async def _uncommitted_keys(run: Run) -> Counter[str]:
    """Keys on compressed as a read_uncommitted consumer sees them (aborted records too)."""
    keys: Counter[str] = Counter()
    async for record in read_topic(
        run.settings(),
        run.names.compressed,
        idle_timeout=5.0,
        until_end=True,
        isolation_level="read_uncommitted",
    ):
        keys[record.key.decode()] += 1
    return keys


@pytest.mark.parametrize("guarantee", ["exactly_once", "at_least_once"])
def test_sigkill_mid_stream_loses_nothing_duplicates_nothing(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path: Path,
    guarantee: str,
) -> None:
    """exactly_once: no duplicate at all; at_least_once: duplicates only byte-identical."""
    run = Run(kafka_bootstrap, tmp_path, guarantee=guarantee)
    run.create_topics()
    samples = mixed_stream(5000, seed=11, rows=30)
    run.produce(samples)

    # Two SIGKILLs: after ~1,500 records, and again after ~1,200 more.
    processed_by_killed = 0
    for n, kill_at in enumerate((1500, 1200), start=1):
        worker = run.worker(f"worker-{n}", CTXPRESS_BATCH_SIZE="100").start()
        try:
            run.wait_for_outputs(kill_at, worker, timeout=120)
            processed_by_killed += int(run.scrape("ctxpress_records_out_total") or 0)
        finally:
            code = worker.kill()
        assert code == -9

    worker = run.worker("worker-3").start()
    try:
        verdict = collect(run, samples, timeout=180)
        processed_by_last = int(run.scrape("ctxpress_records_out_total") or 0)
    finally:
        worker.terminate(timeout=30)
    # the kills hit the middle of the stream: the last worker still had records to do
    assert processed_by_killed < len(samples) and processed_by_last > 0
    try:
        copies = check_exactly_once(
            run, samples, verdict, identical_duplicates=guarantee == "at_least_once"
        )
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n--- worker-3 log ---\n{worker.log_tail(80)}") from exc

    physical = asyncio.run(_uncommitted_keys(run))
    aborted = sum(n - 1 for n in physical.values() if n > 1)
    dups = copies
    print(
        f"\n{guarantee}: {copies} byte-identical duplicates on compressed; "
        f"{len(samples)} records, {sum(s.ok for s in samples)} compressed, "
        f"{len(verdict.dead)} dead letters; the killed workers had processed about "
        f"{processed_by_killed} records, the last one {processed_by_last}; "
        f"{dups} duplicates for read_committed ({aborted} extra copies on the log)"
    )
