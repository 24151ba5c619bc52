"""The local broker from deploy/kafka/kafka.sh and the topics from topics/, for real."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from tests.kafka_broker import kafka_bootstrap  # noqa: F401
from workers.service.topics import create_topics, load_topics

pytestmark = pytest.mark.kafka


async def _describe_topic_configs(bootstrap: str, topic: str) -> dict[str, str]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        responses = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    finally:
        await admin.close()
    configs: dict[str, str] = {}
    for response in responses:
        for resource in response.resources:
            error_code, _error_message, _rtype, name, entries = resource[:5]
            assert error_code == 0, f"describe_configs({name}) failed with code {error_code}"
            for entry in entries:
                configs[entry[0]] = entry[1]
    return configs


async def _partitions(bootstrap: str, topics: list[str]) -> dict[str, int]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        described = await admin.describe_topics(topics)
    finally:
        await admin.close()
    return {t["topic"]: len(t["partitions"]) for t in described}


async def _delete_topics(bootstrap: str, topics: list[str]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.delete_topics(topics)
    finally:
        await admin.close()


async def _round_trip(bootstrap: str, topic: str, records: list[dict[str, Any]]) -> list[Any]:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    await producer.start()
    try:
        for record in records:
            await producer.send(topic, key=str(record["id"]).encode(), value=orjson.dumps(record))
        await producer.flush()
    finally:
        await producer.stop()

    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=f"test-{uuid.uuid4().hex[:8]}",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    received: list[Any] = []
    try:
        async with asyncio.timeout(30):
            while len(received) < len(records):
                batches = await consumer.getmany(timeout_ms=1000)
                for messages in batches.values():
                    for message in messages:
                        assert message.key == str(orjson.loads(message.value)["id"]).encode()
                        received.append(orjson.loads(message.value))
    finally:
        await consumer.stop()
    return received


def test_topics_round_trip_on_real_broker(kafka_bootstrap: str) -> None:  # noqa: F811
    specs = load_topics()
    prefix = f"ctxpress-test-{uuid.uuid4().hex[:10]}."
    expected = sorted(spec.full_name(prefix) for spec in specs.values())

    created = asyncio.run(create_topics(kafka_bootstrap, specs, prefix))
    try:
        assert created == expected
        # Idempotent: a second call creates nothing and does not fail.
        assert asyncio.run(create_topics(kafka_bootstrap, specs, prefix)) == []

        partitions = asyncio.run(_partitions(kafka_bootstrap, expected))
        assert partitions == {spec.full_name(prefix): spec.partitions for spec in specs.values()}

        records = [
            {
                "id": f"rec-{i}",
                "mode": "lossless",
                "messages": [{"role": "user", "content": f"message number {i} \u2713"}],
            }
            for i in range(10)
        ]
        received = asyncio.run(_round_trip(kafka_bootstrap, f"{prefix}transcripts", records))
        assert sorted(received, key=lambda r: int(r["id"].split("-")[1])) == records

        offload = asyncio.run(_describe_topic_configs(kafka_bootstrap, f"{prefix}offload"))
        assert offload["cleanup.policy"] == "compact"
        dead_letter = asyncio.run(_describe_topic_configs(kafka_bootstrap, f"{prefix}dead-letter"))
        assert dead_letter["cleanup.policy"] == "delete"
        assert dead_letter["retention.ms"] == str(14 * 24 * 3600 * 1000)
    finally:
        asyncio.run(_delete_topics(kafka_bootstrap, expected))
