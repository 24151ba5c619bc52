"""Outputs go out in producer batches filled by the worker, placed as ``send`` would place them."""

from __future__ import annotations

import asyncio
from typing import Any

from aiokafka.errors import MessageSizeTooLargeError
from aiokafka.partitioner import murmur2
from aiokafka.producer.message_accumulator import BatchBuilder
from aiokafka.record.memory_records import MemoryRecords

from workers.service.publish import send_outputs
from workers.service.records import OutMessage


class FakeProducer:
    """What ``send_outputs`` uses of an AIOKafkaProducer, keeping the batches it was given."""

    def __init__(self, partitions: dict[str, int], batch_size: int) -> None:
        self.partitions = partitions
        self.batch_size = batch_size
        self.sent: list[tuple[str, int, list[tuple[bytes | None, bytes, list[Any]]]]] = []

    async def partitions_for(self, topic: str) -> set[int]:
        return set(range(self.partitions[topic]))

    def create_batch(self) -> BatchBuilder:
        return BatchBuilder(self.batch_size, 0, is_transactional=True)

    async def send_batch(self, batch: BatchBuilder, topic: str, *, partition: int) -> Any:
        records_of = MemoryRecords(bytes(batch._build()))  # what the sender would send
        kafka_batch = records_of.next_batch()
        assert kafka_batch is not None
        records = [(r.key, r.value, list(r.headers)) for r in kafka_batch]
        self.sent.append((topic, partition, records))
        future = asyncio.get_running_loop().create_future()
        future.set_result(len(self.sent))
        return future


def _java_partition(key: bytes, count: int) -> int:
    return int(murmur2(key) & 0x7FFFFFFF) % count


def test_outputs_land_where_the_default_partitioner_puts_them_in_order() -> None:
    outputs = [
        OutMessage("out", f"rec-{i % 7}".encode(), f"v{i}".encode() * 50, (("h", b"1"),))
        for i in range(60)
    ] + [OutMessage("stats", f"rec-{i}".encode(), b"s" * 30) for i in range(20)]
    producer = FakeProducer({"out": 6, "stats": 3}, batch_size=1024)

    async def go() -> list[Any]:
        acks = await send_outputs(producer, outputs, max_request_size=1 << 20)
        return list(await asyncio.gather(*acks))

    acks = asyncio.run(go())
    assert len(acks) == len(outputs)
    placed: dict[tuple[str, int], list[bytes]] = {}
    for topic, partition, records in producer.sent:
        for key, value, headers in records:
            assert key is not None
            assert partition == _java_partition(key, producer.partitions[topic])
            assert headers == ([("h", b"1")] if topic == "out" else [])
            placed.setdefault((topic, partition), []).append(value)
    for (topic, partition), values in placed.items():  # the order of each partition kept
        expected = [
            o.value
            for o in outputs
            if o.topic == topic
            and _java_partition(o.key or b"", producer.partitions[topic]) == partition
        ]
        assert values == expected
    assert sum(len(v) for v in placed.values()) == len(outputs)
    # 1 KB batches: records of one partition are split over several, each ack its batch's
    assert len(producer.sent) > len(placed)
    assert len(set(acks)) == len(producer.sent)


def test_an_output_over_the_request_size_fails_alone_and_is_not_sent() -> None:
    outputs = [
        OutMessage("out", b"a", b"x" * 100),
        OutMessage("out", b"b", b"y" * 5000),
        OutMessage("out", b"c", b"z" * 100),
    ]
    producer = FakeProducer({"out": 1}, batch_size=1 << 20)

    async def go() -> list[Any]:
        acks = await send_outputs(producer, outputs, max_request_size=2000)
        return list(await asyncio.gather(*acks, return_exceptions=True))

    acks = asyncio.run(go())
    assert isinstance(acks[1], MessageSizeTooLargeError)
    assert not isinstance(acks[0], BaseException) and not isinstance(acks[2], BaseException)
    assert [v for _, _, records in producer.sent for _, v, _ in records] == [b"x" * 100, b"z" * 100]


def test_a_record_larger_than_the_batch_size_gets_a_batch_of_its_own() -> None:
    outputs = [OutMessage("out", b"k", bytes([65 + i]) * 3000) for i in range(3)]
    producer = FakeProducer({"out": 1}, batch_size=1000)

    async def go() -> None:
        await asyncio.gather(*await send_outputs(producer, outputs, max_request_size=1 << 20))

    asyncio.run(go())
    assert [len(records) for _, _, records in producer.sent] == [1, 1, 1]
