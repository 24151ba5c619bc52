"""More input partitions while two workers run: records on the new ones come out in 30 s.

The workers refresh topic metadata every ``CTXPRESS_METADATA_MAX_AGE_MS`` (10 s by
default); the consumer group rebalances onto the new partitions without a restart.  The
savings table (co-partitioned with the inputs) logs its procedure once instead of failing
every batch.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import orjson
import pytest

from tests.e2e._support import Run
from tests.e2e.test_scale_out import Pair
from tests.kafka_broker import kafka_bootstrap  # noqa: F401
from workers.testing.worker import mixed_stream

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(400)]

NEW_COUNT = 6
DEADLINE_S = 30.0


async def _add_partitions(run: Run, topic: str, count: int) -> None:
    from aiokafka.admin import AIOKafkaAdminClient, NewPartitions

    admin = AIOKafkaAdminClient(bootstrap_servers=run.bootstrap)
    await admin.start()
    try:
        await admin.create_partitions({topic: NewPartitions(total_count=count)})
    finally:
        await admin.close()


async def _produce_to(run: Run, topic: str, records: list[tuple[bytes, bytes, int]]) -> None:
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=run.bootstrap, enable_idempotence=True)
    await producer.start()
    try:
        for key, value, partition in records:
            await (await producer.send(topic, value, key=key, partition=partition))
    finally:
        await producer.stop()


def test_new_input_partitions_are_consumed_without_a_restart(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    pair = Pair(run)
    try:
        pair.join()
        topic = run.names.transcripts
        asyncio.run(_add_partitions(run, topic, NEW_COUNT))
        samples = [
            s for s in mixed_stream(60, seed=31, prefix="np-") if s.ok and s.kind == "transcript"
        ][:20]
        started = time.monotonic()
        asyncio.run(
            _produce_to(
                run,
                topic,
                [(s.record_id.encode(), s.line, 4 + i % 2) for i, s in enumerate(samples)],
            )
        )
        wanted = {s.record_id for s in samples}
        seen: set[str] = set()
        while time.monotonic() - started < DEADLINE_S + 30:
            for worker in pair.workers:
                assert worker.alive(), worker.log_tail()
            seen = {r.key.decode() for r in run.read("compressed", idle=1.0)} & wanted
            if seen == wanted:
                break
            time.sleep(1.0)
        took = time.monotonic() - started
        assert seen == wanted, f"{len(wanted - seen)} records on the new partitions not out"
        assert took <= DEADLINE_S, f"records on the new partitions took {took:.1f} s"
        compressed = [
            orjson.loads(r.value)
            for r in run.read("compressed", idle=1.0)
            if r.key.decode() in wanted
        ]
        assert len(compressed) == len(wanted)
    finally:
        pair.stop()
    logs = "".join(w.log_path.read_text(errors="replace") for w in pair.workers)
    assert logs.count("updating the savings table failed") == 0
    print(f"\n{len(wanted)} records on new partitions 4 and 5 out after {took:.1f} s")
