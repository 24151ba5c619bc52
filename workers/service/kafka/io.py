"""Producing JSONL to the input topics and reading topics back (the I/O CLI, demo, tests).

- :func:`route` picks the input topic and key of one JSONL line: a record whose
  ``kind`` is ``tool_output`` goes to ``tool-outputs``, anything else to
  ``transcripts``; the key is the record id when the line parses.  The line's
  bytes are sent unchanged, even when they are not JSON (the worker
  dead-letters them).
- :func:`produce_lines` sends lines with an idempotent producer.
- :func:`read_topic` reads every partition of a topic from the beginning
  (no consumer group, ``read_committed``) until ``count`` records arrived or
  nothing new came for ``idle_timeout`` seconds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from workers.core.settings import Settings
from workers.service.kafka import clients
from workers.service.kafka.options import bootstrap_list, client_options
from workers.service.records import wire_size
from workers.service.topics import TopicNames, topic_limits

__all__ = ["ProduceReport", "end_offsets", "produce_lines", "read_topic", "route"]


def _field(value: dict[str, Any], path: str) -> Any:
    """``value[a][b]`` for ``path`` ``a.b`` (None when a step is missing)."""
    current: Any = value
    for step in path.split("."):
        if not isinstance(current, dict) or step not in current:
            return None
        current = current[step]
    return current


def route(line: bytes, key_field: str = "id") -> tuple[str, bytes | None]:
    """``(short topic name, key)`` for one input line; the key is the value of ``key_field``
    (a dotted path such as ``metadata.user``) when it is a string or an integer."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return "transcripts", None
    if not isinstance(value, dict):
        return "transcripts", None
    rid = _field(value, key_field)
    key = (
        str(rid).encode("utf-8")
        if isinstance(rid, str | int) and not isinstance(rid, bool)
        else None
    )
    short = "tool-outputs" if value.get("kind") == "tool_output" else "transcripts"
    return short, key


@dataclass(slots=True)
class ProduceReport:
    by_topic: dict[str, int] = field(default_factory=dict)
    failed: list[tuple[int, str]] = field(default_factory=list)
    bytes: int = 0
    seconds: float = 0.0

    @property
    def sent(self) -> int:
        return sum(self.by_topic.values())


def too_large(size: int, topic: str, limit: int, settings: Settings) -> str:
    """Why a line was not sent, and what to change."""
    if limit < settings.max_message_bytes:
        fix = (
            f"raise the topic's max.message.bytes to {settings.max_message_bytes} "
            "(kafka-configs.sh --alter --entity-type topics --add-config max.message.bytes=N)"
        )
    else:
        fix = "split the record or raise CTXPRESS_MAX_RECORD_BYTES (and the topics with it)"
    return f"RecordTooLarge: {size:,} bytes is over the {limit:,} bytes {topic} takes; {fix}"


def _producer(settings: Settings, **extra: Any) -> Any:
    options: dict[str, Any] = {
        "acks": "all",
        "enable_idempotence": True,
        "linger_ms": max(settings.producer_linger_ms, 5),
        "max_batch_size": settings.producer_max_batch_size,
        "max_request_size": settings.max_message_bytes,
    }
    options.update(extra)
    return clients.producer(clients.connection(settings), **options)


async def produce_lines(
    lines: Iterable[bytes],
    settings: Settings,
    topic: str | None = None,
    *,
    key_field: str = "id",
    headers: Sequence[tuple[str, bytes]] = (),
) -> ProduceReport:
    """Send each non-empty line (its bytes unchanged, without the line break).

    ``topic``: a short name from topics/ (or None to route each line); ``key_field``: the
    field whose value is the key; ``headers``: sent with every record.
    """
    from aiokafka.errors import KafkaError

    names = TopicNames.from_settings(settings)
    forced = names.by_short(topic) if topic else None
    report = ProduceReport()
    started = time.perf_counter()
    producer = _producer(settings)
    await producer.start()
    pending: list[tuple[int, str, asyncio.Future[Any], int]] = []
    try:
        targets = [forced] if forced else list(names.inputs)
        await clients.refresh_metadata(producer)
        absent = [t for t in targets if not producer.client.cluster.partitions_for_topic(t)]
        if absent:
            # aiokafka would wait (and log) for a minute per record before giving up.
            raise LookupError(
                f"topic(s) {', '.join(absent)} do not exist on {settings.kafka_bootstrap}; "
                "create them first (ctxpress topics create)"
            )
        # A record the broker refuses breaks the idempotent producer's sequence for the
        # records sent after it (OutOfOrderSequenceNumber): refuse it here instead.
        limits = await topic_limits(
            ",".join(bootstrap_list(settings)), targets, client_options=client_options(settings)
        )
        for line_no, raw in enumerate(lines, start=1):
            line = raw.rstrip(b"\r\n")
            if not line.strip():
                continue
            short, key = route(line, key_field)
            full = forced or names.by_short(short)
            limit = min(settings.max_message_bytes, limits.get(full, settings.max_message_bytes))
            size = wire_size(key, line, headers)
            if size > limit:
                report.failed.append((line_no, too_large(size, full, limit, settings)))
                continue
            try:
                fut = await producer.send(full, line, key=key, headers=list(headers) or None)
            except KafkaError as exc:
                report.failed.append((line_no, f"{type(exc).__name__}: {exc}"))
                continue
            pending.append((line_no, full, fut, len(line)))
        for line_no, full, fut, size in pending:
            try:
                await fut
            except KafkaError as exc:
                report.failed.append((line_no, f"{type(exc).__name__}: {exc}"))
                continue
            report.by_topic[full] = report.by_topic.get(full, 0) + 1
            report.bytes += size  # only what the broker acknowledged
    finally:
        await producer.stop()
    report.seconds = time.perf_counter() - started
    return report


async def read_topic(
    settings: Settings,
    topic: str,
    *,
    count: int | None = None,
    idle_timeout: float | None = 10.0,
    deadline: float | None = None,
    until_end: bool = False,
    isolation_level: str = "read_committed",
    start_offsets: Mapping[int, int] | None = None,
    partitions: Collection[int] | None = None,
    offset: int | str | None = None,
    from_time_ms: int | None = None,
) -> AsyncIterator[Any]:
    """Yield aiokafka ``ConsumerRecord``s of ``topic`` (a full name), oldest first per partition.

    Reads every partition, or only ``partitions``. Reading starts at the beginning, or at
    ``offset`` in each partition (``"beginning"``, ``"end"``, N >= 0: that offset, clamped to
    what the partition holds, -N: N records before the end), or at the first record at or
    after ``from_time_ms`` (epoch ms; the end where there is none), or at ``start_offsets``
    (partition -> offset).

    Stops after ``count`` records, after ``idle_timeout`` seconds without a new
    record (None: never, i.e. follow), at ``deadline`` (``time.monotonic()``), or with
    ``until_end`` once every partition reached its end offset as of the start.
    """
    from aiokafka.structs import TopicPartition

    consumer = clients.consumer(
        clients.connection(settings),
        group_id=None,
        enable_auto_commit=False,
        isolation_level=isolation_level,
        auto_offset_reset="earliest",
        max_partition_fetch_bytes=settings.max_message_bytes,
    )
    await consumer.start()
    try:
        available = await clients.partitions_of(consumer, topic)
        if not available:
            raise LookupError(
                f"topic {topic!r} does not exist on {settings.kafka_bootstrap}; "
                "create the topics first (ctxpress topics create)"
            )
        chosen = sorted(available)
        if partitions is not None:
            unknown = sorted(set(partitions) - available)
            if unknown:
                raise LookupError(
                    f"topic {topic!r} has no partition {', '.join(map(str, unknown))}; "
                    f"its partitions are 0-{max(available)}"
                )
            chosen = sorted(set(partitions))
        tps = [TopicPartition(topic, p) for p in chosen]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        await _seek(consumer, tps, offset, from_time_ms)
        for tp in tps:
            if start_offsets and tp.partition in start_offsets:
                consumer.seek(tp, start_offsets[tp.partition])
        ends = await consumer.end_offsets(tps) if until_end else {}
        seen = 0
        last = time.monotonic()
        while True:
            if until_end:
                positions = {tp: await consumer.position(tp) for tp in tps}
                if all(positions[tp] >= ends[tp] for tp in tps):
                    return
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                return
            if idle_timeout is not None and now - last >= idle_timeout:
                return
            batches = await consumer.getmany(timeout_ms=200, max_records=1000)
            for records in batches.values():
                for record in records:
                    yield record
                    seen += 1
                    if count is not None and seen >= count:
                        return
            if batches:
                last = time.monotonic()
    finally:
        await consumer.stop()


async def _seek(
    consumer: Any, tps: Sequence[Any], offset: int | str | None, from_time_ms: int | None
) -> None:
    """Move each partition to ``offset`` or ``from_time_ms`` (see :func:`read_topic`)."""
    if from_time_ms is not None:
        found = await consumer.offsets_for_times({tp: from_time_ms for tp in tps})
        ends = await consumer.end_offsets(list(tps))
        for tp in tps:
            hit = found.get(tp)
            consumer.seek(tp, hit.offset if hit is not None else ends[tp])
        return
    if offset is None or offset == "beginning":
        return
    if offset == "end":
        await consumer.seek_to_end(*tps)
        return
    if not isinstance(offset, int):
        raise ValueError(f"offset must be beginning, end or an integer, got {offset!r}")
    begins = await consumer.beginning_offsets(list(tps))
    ends = await consumer.end_offsets(list(tps))
    for tp in tps:
        want = offset if offset >= 0 else ends[tp] + offset
        consumer.seek(tp, min(max(want, begins[tp]), ends[tp]))


async def end_offsets(settings: Settings, topics: Iterable[str]) -> dict[str, dict[int, int]]:
    """topic -> partition -> end offset (read_committed: the last stable offset)."""
    from aiokafka.structs import TopicPartition

    consumer = clients.consumer(
        clients.connection(settings),
        group_id=None,
        enable_auto_commit=False,
        isolation_level="read_committed",
    )
    await consumer.start()
    try:
        out: dict[str, dict[int, int]] = {}
        for topic in topics:
            partitions = await clients.partitions_of(consumer, topic) or set()
            tps = [TopicPartition(topic, p) for p in sorted(partitions)]
            ends = await consumer.end_offsets(tps) if tps else {}
            out[topic] = {tp.partition: offset for tp, offset in ends.items()}
        return out
    finally:
        await consumer.stop()
