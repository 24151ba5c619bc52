"""Reading input records straight from the broker, to keep each partition contiguous.

The worker does not trust Faust's delivery for completeness: after a restart,
while the savings table recovers, Faust can deliver a partition's records,
re-seek it, and hand the agent a later record without the ones in between
(observed in the crash test: one or two records lost per restart, 1 run in 3).
:class:`~workers.service.handler.BatchHandler` therefore knows, per input partition,
the next offset it must process -- the consumer group's committed offset when
the partition is assigned, then one past each record it processed -- and asks
a :class:`RecordSource` for any range Faust skipped.

- :class:`KafkaSource`: a group-less aiokafka consumer (``read_uncommitted``,
  like Faust's) that reads exactly ``[start, end)`` of one partition, and an
  admin client for the committed offsets.  A range holding no records (offsets
  taken by transaction markers, compaction, retention) comes back empty.
- :class:`MemorySource`: records kept in a dict, for tests.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any

from workers.core.errors import CtxpressError
from workers.service.kafka import clients
from workers.service.records import InMessage

__all__ = ["GapError", "KafkaSource", "MemorySource", "RecordSource"]

TP = tuple[str, int]


class GapError(CtxpressError, RuntimeError):
    """A skipped range could not be read; stop the worker (nothing after it commits)."""


class RecordSource(ABC):
    @abstractmethod
    async def read_range(self, topic: str, partition: int, start: int, end: int) -> list[InMessage]:
        """Every record of ``topic[partition]`` with ``start <= offset < end``, in order."""

    async def start_offsets(self, group_id: str, tps: Iterable[TP]) -> dict[TP, int]:
        """Where ``group_id`` resumes each partition: committed offset, else the log start."""
        return {}

    async def end_offsets(self, tps: Iterable[TP]) -> dict[TP, int]:
        """One past the last offset of each partition (the high watermark)."""
        return {}

    async def stop(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""


class MemorySource(RecordSource):
    """Records by (topic, partition, offset); start offsets given up front."""

    def __init__(
        self,
        records: Iterable[InMessage] = (),
        start: Mapping[TP, int] | None = None,
    ) -> None:
        self.records = {(m.topic, m.partition, m.offset): m for m in records}
        self.start = dict(start or {})
        self.reads: list[tuple[str, int, int, int]] = []

    async def read_range(self, topic: str, partition: int, start: int, end: int) -> list[InMessage]:
        self.reads.append((topic, partition, start, end))
        return [
            self.records[(topic, partition, o)]
            for o in range(start, end)
            if (topic, partition, o) in self.records
        ]

    async def start_offsets(self, group_id: str, tps: Iterable[TP]) -> dict[TP, int]:
        return {tp: self.start[tp] for tp in tps if tp in self.start}

    async def end_offsets(self, tps: Iterable[TP]) -> dict[TP, int]:
        ends: dict[TP, int] = {}
        for topic, partition, offset in self.records:
            tp = (topic, partition)
            ends[tp] = max(ends.get(tp, 0), offset + 1)
        return {tp: ends.get(tp, 0) for tp in tps}


class KafkaSource(RecordSource):
    def __init__(
        self,
        bootstrap: str,
        *,
        client_options: Mapping[str, Any] | None = None,
        timeout: float = 30.0,
        max_fetch_bytes: int = 17 * 1024 * 1024,
    ) -> None:
        """``max_fetch_bytes``: CTXPRESS_MAX_MESSAGE_BYTES (the largest record to read)."""
        self.bootstrap = bootstrap
        self.max_fetch_bytes = max_fetch_bytes
        self.options = dict(client_options or {})
        self.timeout = timeout
        self._consumer: Any = None

    async def _ensure(self) -> Any:
        if self._consumer is None:
            consumer = clients.consumer(
                clients.connection(bootstrap=self.bootstrap, options=self.options),
                group_id=None,
                enable_auto_commit=False,
                auto_offset_reset="earliest",
                isolation_level="read_uncommitted",
                max_partition_fetch_bytes=self.max_fetch_bytes,
            )
            await consumer.start()
            self._consumer = consumer
        return self._consumer

    async def read_range(self, topic: str, partition: int, start: int, end: int) -> list[InMessage]:
        from aiokafka.structs import TopicPartition

        consumer = await self._ensure()
        tp = TopicPartition(topic, partition)
        consumer.assign([tp])
        consumer.seek(tp, start)
        out: list[InMessage] = []
        deadline = time.monotonic() + self.timeout
        while True:
            position = await consumer.position(tp)
            if position >= end:
                return out
            if time.monotonic() > deadline:
                raise GapError(
                    f"could not read {topic}[{partition}] offsets {start}..{end - 1} within "
                    f"{self.timeout:g} s (position {position})"
                )
            batches = await consumer.getmany(tp, timeout_ms=500)
            for record in batches.get(tp, ()):
                if record.offset >= end:
                    return out
                if record.offset >= start:
                    out.append(
                        InMessage(
                            topic=record.topic,
                            partition=record.partition,
                            offset=record.offset,
                            timestamp_ms=record.timestamp,
                            key=record.key,
                            value=record.value,
                            headers=tuple(
                                (k, v if v is not None else b"") for k, v in record.headers or ()
                            ),
                        )
                    )

    async def start_offsets(self, group_id: str, tps: Iterable[TP]) -> dict[TP, int]:
        from aiokafka.structs import TopicPartition

        wanted = [TopicPartition(t, p) for t, p in tps]
        if not wanted:
            return {}
        admin = clients.admin(clients.connection(bootstrap=self.bootstrap, options=self.options))
        await admin.start()
        try:
            committed = await admin.list_consumer_group_offsets(group_id, partitions=wanted)
        finally:
            await admin.close()
        out: dict[TP, int] = {}
        missing = []
        for tp in wanted:
            meta = committed.get(tp)
            if meta is not None and meta.offset >= 0:
                out[(tp.topic, tp.partition)] = meta.offset
            else:
                missing.append(tp)
        if missing:
            consumer = await self._ensure()
            beginning = await consumer.beginning_offsets(missing)
            for tp in missing:
                out[(tp.topic, tp.partition)] = beginning[tp]
        return out

    async def end_offsets(self, tps: Iterable[TP]) -> dict[TP, int]:
        from aiokafka.structs import TopicPartition

        consumer = await self._ensure()
        wanted = [TopicPartition(t, p) for t, p in tps]
        if not wanted:
            return {}
        ends = await consumer.end_offsets(wanted)
        return {(tp.topic, tp.partition): offset for tp, offset in ends.items()}

    async def stop(self) -> None:
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            await asyncio.shield(consumer.stop())
