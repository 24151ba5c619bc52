"""The worker's offload topic as ``expand``'s store: ``expand --offload kafka``, ``consume --expand``.

The worker publishes each stashed original on the compacted ``offload`` topic (key: the hash)
in the same Kafka transaction as the compressed record that points at it.
:class:`OffloadTopic` reads that topic from the beginning into memory
(:class:`~workers.service.offload_topic.KafkaOffloadStore`, read_committed) and keeps following
it, so a record read from ``compressed`` moments after the worker wrote it still expands:
:meth:`OffloadTopic.expand` retries a record whose stash is not indexed yet for up to ``wait``
seconds before it gives up.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from workers.cli._common import UserError
from workers.core.settings import Settings
from workers.pipeline.expand import ExpandError, expand_line
from workers.service.kafka import clients
from workers.service.kafka.options import client_options
from workers.service.offload_topic import KafkaOffloadStore
from workers.service.topics import TopicNames

__all__ = ["KAFKA_STORE", "OffloadTopic"]

KAFKA_STORE = "kafka"  # the --offload value that names the offload topic instead of a folder


class OffloadTopic:
    """A running reader of the offload topic; ``async with OffloadTopic(settings) as store``."""

    def __init__(self, settings: Settings, *, load_timeout: float = 60.0, wait: float = 10.0):
        self.topic = TopicNames.from_settings(settings).offload
        self.bootstrap = settings.kafka_bootstrap
        self.store = KafkaOffloadStore(
            settings.kafka_bootstrap, self.topic, client_options=client_options(settings)
        )
        self.load_timeout = load_timeout
        self.wait = wait
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> OffloadTopic:
        await self._check_topic()
        self._task = asyncio.create_task(self.store.run(poll_timeout_ms=200))
        caught_up = asyncio.create_task(self.store.wait_caught_up())
        done, _ = await asyncio.wait(
            {self._task, caught_up}, timeout=self.load_timeout, return_when="FIRST_COMPLETED"
        )
        if caught_up not in done:
            caught_up.cancel()
            if self._task in done:  # the reader failed: its exception says why
                self._task.result()
            await self._close()
            raise UserError(
                f"the offload topic {self.topic} on {self.bootstrap} was not read within "
                f"{self.load_timeout:g} s; does it exist ('ctxpress topics create')?"
            )
        return self

    async def _check_topic(self) -> None:
        """Fail at once when the topic is missing (the store's reader would wait for it)."""
        conn = clients.connection(bootstrap=self.bootstrap, options=self.store.client_options)
        consumer = clients.consumer(conn, group_id=None, enable_auto_commit=False)
        await consumer.start()
        try:
            partitions = await clients.partitions_of(consumer, self.topic)
        finally:
            await consumer.stop()
        if not partitions:
            raise UserError(
                f"the offload topic {self.topic} does not exist on {self.bootstrap}; is the "
                "prefix right (--prefix, CTXPRESS_TOPIC_PREFIX)? 'ctxpress topics create' makes it"
            )

    async def __aexit__(self, *exc: object) -> None:
        await self._close()

    async def _close(self) -> None:
        self.store.stop()
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, 5.0)
            except TimeoutError:
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task
            self._task = None

    def __len__(self) -> int:
        return len(self.store)

    async def expand(self, line: bytes, value: Any, strict: bool = True) -> bytes:
        """``expand_line`` over the topic's index, waiting up to ``wait`` seconds for stash
        entries the reader has not indexed yet."""
        deadline: float | None = None
        while True:
            try:
                return expand_line(line, value, self.store, strict=strict)
            except ExpandError:
                now = time.monotonic()
                deadline = now + self.wait if deadline is None else deadline
                if now >= deadline or self._task is None or self._task.done():
                    raise
                await asyncio.sleep(0.2)
