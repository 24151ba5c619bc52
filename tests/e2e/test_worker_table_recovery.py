"""A savings changelog that ends in a transaction marker does not keep the worker from starting.

Faust restores the ``savings`` table before any stream runs and waits until it applied
the changelog's end offset - 1.  A transactional write leaves a commit marker there, which
no consumer ever receives: without the recovery watch
(:mod:`workers.service.recovery_watch`) the worker logged "No event received for active
tp" every 5 s and processed nothing, for ever.  With it (a 3 s stall here), the partition
read to its end counts as restored, the worker gets ready and every record is processed
exactly once; ``ctxpress_table_recovery_finished_total{how="read_to_end"}`` says so.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer

from tests.e2e._support import Run, check_exactly_once, collect
from tests.kafka_broker import kafka_bootstrap  # noqa: F401
from workers.testing.worker import mixed_stream

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(300)]


async def _commit_one_record(run: Run, topic: str, partition: int) -> None:
    """One record in a committed transaction: the partition ends in its commit marker."""
    producer = AIOKafkaProducer(
        bootstrap_servers=run.bootstrap,
        transactional_id=f"forged-{run.tag}",
        enable_idempotence=True,
    )
    await producer.start()
    try:
        async with producer.transaction():
            await producer.send_and_wait(
                topic,
                key=b'["lossless/_record/0", [0.0, 60.0]]',
                value=b"[1, 2, 3]",
                partition=partition,
            )
    finally:
        await producer.stop()


def test_a_changelog_ending_in_a_commit_marker_is_restored(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    asyncio.run(_commit_one_record(run, run.names.savings_changelog, 0))
    samples = mixed_stream(60, seed=5)
    run.produce(samples)
    worker = run.worker(CTXPRESS_TABLE_RECOVERY_STALL_S="3").start()
    try:
        verdict = collect(run, samples, timeout=120)
        finished = run.scrape("ctxpress_table_recovery_finished_total", how="read_to_end")
        given_up = run.scrape("ctxpress_table_recovery_finished_total", how="given_up")
    finally:
        worker.terminate(timeout=30)
    check_exactly_once(run, samples, verdict)
    log = worker.log_path.read_text(encoding="utf-8", errors="replace")
    assert "savings-changelog[0] was read to its end offset 2" in log, worker.log_tail(40)
    assert finished == 1 and given_up == 0
