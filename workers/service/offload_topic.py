"""An :class:`~workers.core.offload.OffloadStore` backed by the compacted offload topic.

Records on the topic are keyed by hash; the value is JSON
(``schemas/offload.schema.json``: ``hash``, ``text``, ``created_at``,
``record_id``); a null value (tombstone) deletes a hash.

- ``get`` answers from an in-memory index.  ``run()`` fills it: a consumer
  without a group reads every partition from the beginning
  (``read_committed``) and then follows the topic, so every worker can expand
  every hash, whichever worker stashed it.  ``wait_caught_up`` returns once
  the index holds everything that was on the topic when reading started.
- ``put`` remembers the entry and queues it; ``flush`` publishes the queue.
  The worker does not use ``put``: its stash entries are published inside its
  own transactions, and it calls ``remember`` once they are committed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import orjson

from workers.core.offload import OffloadStore
from workers.service.kafka import clients

__all__ = ["KafkaOffloadStore"]

log = logging.getLogger(__name__)


class KafkaOffloadStore(OffloadStore):
    def __init__(
        self,
        bootstrap: str,
        topic: str,
        *,
        client_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.bootstrap = bootstrap
        self.topic = topic
        self.client_options = dict(client_options or {})
        self.items: dict[str, str] = {}
        self._pending: dict[str, str] = {}
        self._caught_up = asyncio.Event()
        self._consumer: Any = None
        self._stopping = False

    # -- OffloadStore ------------------------------------------------------

    def put(self, key: str, text: str) -> None:
        if key not in self.items:
            self.items[key] = text
            self._pending[key] = text

    def get(self, key: str) -> str | None:
        return self.items.get(key)

    def remember(self, key: str, text: str) -> None:
        """Index an entry that is already on the topic (no publish)."""
        self.items.setdefault(key, text)

    def __len__(self) -> int:
        return len(self.items)

    # -- the topic ---------------------------------------------------------

    def apply(self, key: bytes | None, value: bytes | None) -> None:
        """Apply one record read from the topic."""
        if key is None:
            return
        digest = key.decode("ascii", "replace")
        if value is None:
            self.items.pop(digest, None)
            return
        try:
            body = orjson.loads(value)
            text = body["text"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            log.warning("offload record %r is not valid offload JSON; ignored", digest)
            return
        if isinstance(text, str):
            self.items[digest] = text

    async def flush(self) -> int:
        """Publish queued ``put`` entries; returns how many were sent."""
        if not self._pending:
            return 0
        pending, self._pending = self._pending, {}
        producer = clients.producer(
            clients.connection(bootstrap=self.bootstrap, options=self.client_options),
            acks="all",
            linger_ms=5,
        )
        await producer.start()
        try:
            created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            futures = [
                await producer.send(
                    self.topic,
                    orjson.dumps({"hash": k, "text": t, "created_at": created, "record_id": None}),
                    key=k.encode("ascii"),
                )
                for k, t in pending.items()
            ]
            await asyncio.gather(*futures)
        finally:
            await producer.stop()
        return len(pending)

    async def wait_caught_up(self, timeout: float | None = None) -> bool:
        try:
            await asyncio.wait_for(self._caught_up.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def run(self, poll_timeout_ms: int = 500) -> None:
        """Read the topic into the index until cancelled or :meth:`stop`."""
        from aiokafka.structs import TopicPartition

        consumer = self._consumer = clients.consumer(
            clients.connection(bootstrap=self.bootstrap, options=self.client_options),
            group_id=None,
            enable_auto_commit=False,
            isolation_level="read_committed",
            auto_offset_reset="earliest",
        )
        await consumer.start()
        try:
            partitions = None
            while partitions is None and not self._stopping:
                partitions = await clients.partitions_of(consumer, self.topic)
                if partitions is None:
                    log.warning("offload topic %s not found; retrying", self.topic)
                    await asyncio.sleep(2.0)
            if self._stopping or partitions is None:
                return
            tps = [TopicPartition(self.topic, p) for p in sorted(partitions)]
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            ends = await consumer.end_offsets(tps)
            remaining = {tp for tp, end in ends.items() if end > 0}
            if not remaining:
                self._caught_up.set()
            while not self._stopping:
                batches = await consumer.getmany(timeout_ms=poll_timeout_ms)
                for records in batches.values():
                    for record in records:
                        self.apply(record.key, record.value)
                if remaining:
                    for tp in list(remaining):
                        if await consumer.position(tp) >= ends[tp]:
                            remaining.discard(tp)
                    if not remaining:
                        self._caught_up.set()
        finally:
            self._consumer = None
            await consumer.stop()

    def stop(self) -> None:
        self._stopping = True
