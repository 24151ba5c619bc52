"""Publishing a processed batch: exactly once (Kafka transactions) or at least once.

A batch is a list of :class:`PartitionBatch`: the outputs of the events of one
input partition, in offset order, and the input offset to commit after them.

- :class:`TransactionalPublisher` (``exactly_once``): one transactional
  producer per input partition (``transactional.id`` = ``<group>-<topic>-<partition>``,
  created when the partition is assigned, which fences a zombie owner and aborts
  whatever transaction it left open).  Per partition and batch, one transaction
  holds every output record *and* the input offset (``send_offsets_to_transaction``),
  so outputs and progress commit together or not at all.  Consumers that read
  with ``isolation_level=read_committed`` see every output exactly once.
- :class:`IdempotentPublisher` (``at_least_once``): one idempotent producer;
  ``publish`` returns once the broker acknowledged every record, and the input
  offsets are committed afterwards by Faust.  A crash can republish a batch;
  the records are byte-identical (see ``workers.service.process``) under the same key.
- :class:`ListPublisher`: keeps everything in memory, for tests.

Every error class is sorted into one of three (:func:`error_action`, a test per class):

- retry: a retriable broker error or a timeout aborts and retries the
  partition's transaction (the outputs are deterministic), up to ``retries`` times;
- dead-letter and go on: a record too large for the producer never gets here
  (:class:`~workers.service.process.Processor` turns an output over
  ``CTXPRESS_MAX_MESSAGE_BYTES``, which is also the producer's
  ``max_request_size``, into a dead letter that fits); a record the *broker*
  refuses as too large (a topic's ``max.message.bytes`` lowered below the
  setting while the worker runs; the start-up check refuses that case) raises
  :class:`RecordsRefused` naming the inputs, and the handler publishes the batch
  again with those inputs as small dead letters;
- fatal: fencing (another worker owns the partition), authentication and
  authorization errors, retries exhausted, anything else.  The worker must stop
  (its offsets did not move, so nothing is lost).
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

from workers.core.errors import CtxpressError
from workers.service.kafka import clients
from workers.service.records import OutMessage

__all__ = [
    "IdempotentPublisher",
    "ListPublisher",
    "PartitionBatch",
    "PublishError",
    "Publisher",
    "RecordsRefused",
    "TransactionalPublisher",
    "error_action",
    "group_batches",
]

log = logging.getLogger(__name__)

TP = tuple[str, int]


class PublishError(CtxpressError, RuntimeError):
    """Publishing failed for good (fenced, or retries exhausted); stop the worker."""


class RecordsRefused(PublishError):
    """The broker refused records as too large (a topic's max.message.bytes went below the
    setting); nothing of the batch is committed.  ``refused``: per input partition, the input
    offsets whose outputs were refused; the handler dead-letters those inputs and publishes
    the batch again."""

    def __init__(self, message: str, refused: Mapping[TP, set[int]]) -> None:
        super().__init__(message)
        self.refused = {tp: set(offsets) for tp, offsets in refused.items()}


#: what the worker does about a publishing error (see :func:`error_action`)
RETRY, DEAD_LETTER, FATAL = "retry", "dead_letter", "fatal"


def error_action(exc: BaseException) -> str:
    """``retry`` (a retriable broker error or a timeout: abort, publish the same batch again),
    ``dead_letter`` (the broker refused a record as too large: dead-letter that input and go
    on) or ``fatal`` (fenced, authentication/authorization, unknown configuration, anything
    else: stop the worker with a message; its offsets did not move, so nothing is lost)."""
    from aiokafka.errors import KafkaError, KafkaTimeoutError, ProducerFenced

    if isinstance(exc, ProducerFenced):
        return FATAL
    if _size_error(exc):
        return DEAD_LETTER
    if isinstance(exc, TimeoutError | asyncio.TimeoutError | KafkaTimeoutError):
        return RETRY
    if isinstance(exc, KafkaError) and exc.retriable:
        return RETRY
    return FATAL


_SIZE_ERRORS = ("MessageSizeTooLargeError", "RecordListTooLargeError", "RecordTooLargeError")


def _size_error(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if type(seen).__name__ in _SIZE_ERRORS:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def size_error_message(exc: BaseException, topics: Iterable[str], max_request_size: int) -> str:
    """What to change when Kafka refused a record as too large."""
    names = ", ".join(sorted(set(topics))) or "the output topics"
    return (
        f"Kafka refused a record as too large ({type(exc).__name__}: {exc}): every record "
        f"the worker publishes is at most CTXPRESS_MAX_MESSAGE_BYTES={max_request_size:,} "
        f"bytes, so max.message.bytes of {names} (or the broker's message.max.bytes) is "
        "lower than that; raise it (kafka-configs.sh --alter --entity-type topics "
        "--add-config max.message.bytes=N) or lower CTXPRESS_MAX_MESSAGE_BYTES"
    )


@dataclass(slots=True)
class PartitionBatch:
    topic: str
    partition: int
    next_offset: int
    outputs: list[OutMessage] = field(default_factory=list)
    #: the input offset each output came from (parallel to ``outputs``)
    origins: list[int] = field(default_factory=list)

    def refused(self, indexes: Iterable[int]) -> set[int]:
        """The input offsets of the outputs at ``indexes``."""
        return {self.origins[i] for i in indexes if i < len(self.origins)}

    @property
    def tp(self) -> TP:
        return (self.topic, self.partition)


def group_batches(
    items: Iterable[tuple[str, int, int, Sequence[OutMessage]]],
) -> list[PartitionBatch]:
    """``(topic, partition, offset, outputs)`` in consumption order -> one batch per partition."""
    by_tp: dict[TP, PartitionBatch] = {}
    for topic, partition, offset, outputs in items:
        batch = by_tp.get((topic, partition))
        if batch is None:
            batch = by_tp[(topic, partition)] = PartitionBatch(topic, partition, offset + 1)
        batch.next_offset = max(batch.next_offset, offset + 1)
        batch.outputs.extend(outputs)
        batch.origins.extend(offset for _ in outputs)
    return list(by_tp.values())


def _raise_refused(batch: PartitionBatch, acks: Sequence[Any], max_request_size: int) -> None:
    """Raise :class:`RecordsRefused` for the outputs the broker refused as too large, or the
    first other error of ``acks`` (one result per output, exceptions included)."""
    refused = [
        i for i, ack in enumerate(acks) if isinstance(ack, BaseException) and _size_error(ack)
    ]
    if refused:
        first = acks[refused[0]]
        topics = sorted({batch.outputs[i].topic for i in refused})
        # The broker refuses a whole producer batch: small records sent with the big one
        # fail too.  Name only the input of the largest refused output; the handler tries
        # again without it (and again, while the broker refuses).
        refused = [max(refused, key=lambda i: len(batch.outputs[i].value))]
        raise RecordsRefused(
            size_error_message(first, topics, max_request_size),
            {batch.tp: batch.refused(refused)},
        ) from first
    for ack in acks:
        if isinstance(ack, BaseException):
            raise ack


class Publisher(ABC):
    """Where the worker's outputs go."""

    #: True: ``publish`` also commits the input offsets (Faust must not).
    commits_offsets: ClassVar[bool] = False

    async def start(self) -> None:  # noqa: B027 - optional hook
        """Connect (called once before the first batch)."""

    async def stop(self) -> None:  # noqa: B027 - optional hook
        """Flush and disconnect; never called twice."""

    @property
    def running(self) -> bool:
        """False once stopped (readiness: a stopped publisher publishes nothing)."""
        return True

    async def assigned(self, tps: Iterable[TP]) -> None:  # noqa: B027 - optional hook
        """Input partitions were assigned to this worker."""

    async def revoked(self, tps: Iterable[TP]) -> None:  # noqa: B027 - optional hook
        """Input partitions were taken away from this worker."""

    @abstractmethod
    async def publish(self, batches: Sequence[PartitionBatch]) -> None:
        """Publish every output of ``batches``; raise :class:`PublishError` on failure."""


class ListPublisher(Publisher):
    """Keeps outputs and committed offsets in memory (tests, dry runs)."""

    commits_offsets = True

    def __init__(self) -> None:
        self.published: list[OutMessage] = []
        self.committed: dict[TP, int] = {}
        self.batches = 0
        #: raised by the next ``publish`` (then cleared), to test failures
        self.fail_next: BaseException | None = None
        self.stopped = False

    @property
    def running(self) -> bool:
        return not self.stopped

    async def stop(self) -> None:
        self.stopped = True

    async def publish(self, batches: Sequence[PartitionBatch]) -> None:
        if self.stopped:
            raise PublishError("publisher stopped")
        if self.fail_next is not None:
            error, self.fail_next = self.fail_next, None
            raise error
        self.batches += 1
        for batch in batches:
            self.published.extend(batch.outputs)
            self.committed[batch.tp] = batch.next_offset

    def on(self, topic: str) -> list[OutMessage]:
        return [m for m in self.published if m.topic == topic]


def _headers(out: OutMessage) -> list[tuple[str, bytes]]:
    return list(out.headers) if out.headers else []


async def send_outputs(
    producer: Any, outputs: Sequence[OutMessage], max_request_size: int
) -> list[asyncio.Future[Any]]:
    """Queue ``outputs`` on ``producer`` in producer batches that this function fills
    (``create_batch``/``send_batch``), one future per output: outputs of one batch share its
    future, an output larger than ``max_request_size`` gets one failed with
    ``MessageSizeTooLargeError`` and is not sent.

    What ``producer.send`` per output would do, at a fraction of its event-loop time (a
    profile of the worker on 2 KB records had ``send`` and its per-record futures at a
    quarter of the loop): the same partitions (the default partitioner: murmur2 of the key
    over the topic's sorted partitions, a random one without a key), the same order within
    a partition, batches up to the producer's batch size (the first record always fits)."""
    from aiokafka.errors import MessageSizeTooLargeError
    from aiokafka.partitioner import DefaultPartitioner, murmur2
    from aiokafka.record.default_records import DefaultRecordBatchBuilder

    loop = asyncio.get_running_loop()
    acks: list[asyncio.Future[Any] | None] = [None] * len(outputs)
    partitions_of: dict[str, list[int]] = {}
    groups: dict[tuple[str, int], list[int]] = {}
    partitioner = DefaultPartitioner()
    hashes: dict[bytes, int] = {}
    for i, out in enumerate(outputs):
        partitions = partitions_of.get(out.topic)
        if partitions is None:
            partitions = partitions_of[out.topic] = sorted(await producer.partitions_for(out.topic))
        size = DefaultRecordBatchBuilder.estimate_size_in_bytes(out.key, out.value, _headers(out))
        if size > max_request_size:
            failed = loop.create_future()
            failed.set_exception(
                MessageSizeTooLargeError(
                    f"The message is {size} bytes when serialized which is larger than the "
                    "maximum request size you have configured with the max_request_size "
                    "configuration"
                )
            )
            acks[i] = failed
            continue
        if out.key is None:
            partition = partitioner(None, partitions, partitions)
        else:  # an output and its stats share a key: murmur2 (pure Python) once per key
            hashed = hashes.get(out.key)
            if hashed is None:
                hashed = hashes[out.key] = murmur2(out.key) & 0x7FFFFFFF
            partition = partitions[hashed % len(partitions)]
        groups.setdefault((out.topic, partition), []).append(i)
    for (topic, partition), indices in groups.items():
        builder = producer.create_batch()
        members: list[int] = []
        for i in indices:
            out = outputs[i]
            headers = _headers(out)
            if (
                builder.append(timestamp=None, key=out.key, value=out.value, headers=headers)
                is None
            ):
                sent = await producer.send_batch(builder, topic, partition=partition)
                for j in members:
                    acks[j] = sent
                builder, members = producer.create_batch(), []
                builder.append(timestamp=None, key=out.key, value=out.value, headers=headers)
            members.append(i)
        sent = await producer.send_batch(builder, topic, partition=partition)
        for j in members:
            acks[j] = sent
    return cast(list[asyncio.Future[Any]], acks)  # every output got its future above


def _producer_options(
    bootstrap: str,
    client_options: Mapping[str, Any],
    linger_ms: int,
    max_batch_size: int,
    max_request_size: int,
) -> dict[str, Any]:
    return {
        "bootstrap_servers": bootstrap,
        "linger_ms": linger_ms,
        # A batch is checked against the topic's max.message.bytes as a whole: never larger
        # than the largest record allowed.
        "max_batch_size": min(max_batch_size, max_request_size),
        "max_request_size": max_request_size,
        "acks": "all",
        "enable_idempotence": True,
        **client_options,
    }


class TransactionalPublisher(Publisher):
    """Exactly once: one Kafka transaction per input partition and batch."""

    commits_offsets = True

    def __init__(
        self,
        bootstrap: str,
        group_id: str,
        *,
        client_options: Mapping[str, Any] | None = None,
        linger_ms: int = 5,
        max_batch_size: int = 1024 * 1024,
        max_request_size: int = 1024 * 1024,
        transaction_timeout_ms: int = 60000,
        retries: int = 5,
        on_retry: Callable[[], None] | None = None,
    ) -> None:
        self.group_id = group_id
        self.retries = retries
        self.on_retry = on_retry
        self._options = _producer_options(
            bootstrap, client_options or {}, linger_ms, max_batch_size, max_request_size
        )
        self._transaction_timeout_ms = transaction_timeout_ms
        self.max_request_size = max_request_size
        self._producers: dict[TP, Any] = {}
        self._locks: dict[TP, asyncio.Lock] = {}
        self._stopped = False

    @property
    def running(self) -> bool:
        return not self._stopped

    def transactional_id(self, tp: TP) -> str:
        return f"{self.group_id}-{tp[0]}-{tp[1]}"

    def _lock(self, tp: TP) -> asyncio.Lock:
        lock = self._locks.get(tp)
        if lock is None:
            lock = self._locks[tp] = asyncio.Lock()
        return lock

    async def _producer(self, tp: TP) -> Any:
        producer = self._producers.get(tp)
        if producer is None:
            producer = clients.producer(
                self._options,
                transactional_id=self.transactional_id(tp),
                transaction_timeout_ms=self._transaction_timeout_ms,
                client_id=self.transactional_id(tp),
            )
            # start() runs InitProducerId: it fences an older producer with the
            # same transactional id and aborts the transaction it left open.
            await producer.start()
            self._producers[tp] = producer
        return producer

    async def assigned(self, tps: Iterable[TP]) -> None:
        async def init(tp: TP) -> None:
            async with self._lock(tp):
                await self._producer(tp)

        await asyncio.gather(*(init(tp) for tp in tps))

    async def revoked(self, tps: Iterable[TP]) -> None:
        for tp in tps:
            async with self._lock(tp):
                producer = self._producers.pop(tp, None)
                if producer is not None:
                    await producer.stop()

    async def stop(self) -> None:
        self._stopped = True
        await self.revoked(list(self._producers))

    async def publish(self, batches: Sequence[PartitionBatch]) -> None:
        results = await asyncio.gather(
            *(self._publish_one(b) for b in batches), return_exceptions=True
        )
        errors = [r for r in results if isinstance(r, BaseException)]
        for error in errors:
            if isinstance(error, asyncio.CancelledError):
                raise error
        if errors:
            raise errors[0]

    async def _publish_one(self, batch: PartitionBatch) -> None:
        from aiokafka.errors import KafkaError, KafkaTimeoutError, ProducerFenced
        from aiokafka.structs import TopicPartition

        tp = batch.tp
        async with self._lock(tp):
            attempt = 0
            while True:
                if self._stopped:
                    raise PublishError("publisher stopped")
                producer = await self._producer(tp)
                try:
                    async with producer.transaction():
                        sent = await send_outputs(producer, batch.outputs, self.max_request_size)
                        # Every record acknowledged before the offsets join the transaction:
                        # a refused record (too large for the topic) raises here, where the
                        # transaction is still abortable, instead of leaving the commit waiting.
                        acks = await asyncio.wait_for(
                            asyncio.gather(*sent, return_exceptions=True),
                            self._transaction_timeout_ms / 1000.0,
                        )
                        _raise_refused(batch, acks, self.max_request_size)
                        await producer.send_offsets_to_transaction(
                            {TopicPartition(*tp): batch.next_offset}, self.group_id
                        )
                    return
                except RecordsRefused:
                    await self._drop(tp)  # the aborted transaction's producer is not reused
                    raise
                except ProducerFenced as exc:
                    await self._drop(tp)
                    raise PublishError(
                        f"producer {self.transactional_id(tp)} was fenced: another worker "
                        "owns the partition now"
                    ) from exc
                except (KafkaError, TimeoutError) as exc:
                    attempt += 1
                    await self._drop(tp)  # a fresh producer aborts whatever is left open
                    if isinstance(exc, TimeoutError):
                        exc = KafkaTimeoutError(f"records not acknowledged: {exc!r}")
                    if error_action(exc) != RETRY or attempt > self.retries:
                        raise PublishError(
                            f"publishing {batch.topic}[{batch.partition}] failed after "
                            f"{attempt} attempt(s): {type(exc).__name__}: {exc}"
                        ) from exc
                    log.warning(
                        "transaction for %s[%d] failed (%r); retrying (%d/%d)",
                        batch.topic,
                        batch.partition,
                        exc,
                        attempt,
                        self.retries,
                    )
                    if self.on_retry is not None:
                        self.on_retry()
                    await asyncio.sleep(min(0.2 * 2**attempt, 5.0))

    async def _drop(self, tp: TP) -> None:
        producer = self._producers.pop(tp, None)
        if producer is not None:
            try:
                await producer.stop()
            except Exception:  # already broken; the next producer fences it anyway
                log.debug("stopping a failed producer raised", exc_info=True)


class IdempotentPublisher(Publisher):
    """At least once: one idempotent producer; returns when every record is acknowledged."""

    def __init__(
        self,
        bootstrap: str,
        *,
        client_options: Mapping[str, Any] | None = None,
        linger_ms: int = 5,
        max_batch_size: int = 1024 * 1024,
        max_request_size: int = 1024 * 1024,
    ) -> None:
        self._options = _producer_options(
            bootstrap, client_options or {}, linger_ms, max_batch_size, max_request_size
        )
        self.max_request_size = max_request_size
        self._producer: Any = None
        self._stopped = False

    @property
    def running(self) -> bool:
        return not self._stopped

    async def start(self) -> None:
        self._producer = clients.producer(self._options)
        await self._producer.start()

    async def stop(self) -> None:
        self._stopped = True
        producer, self._producer = self._producer, None
        if producer is not None:
            await producer.stop()

    async def publish(self, batches: Sequence[PartitionBatch]) -> None:
        from aiokafka.errors import KafkaError

        if self._stopped:
            raise PublishError("publisher stopped")
        if self._producer is None:
            await self.start()
        try:
            futures = [
                await send_outputs(self._producer, batch.outputs, self.max_request_size)
                for batch in batches
            ]
            # at least once: what was acknowledged is published again with the dead letters
            refused: dict[TP, set[int]] = {}
            for batch, sent in zip(batches, futures, strict=True):
                try:
                    _raise_refused(
                        batch,
                        await asyncio.gather(*sent, return_exceptions=True),
                        self.max_request_size,
                    )
                except RecordsRefused as exc:
                    refused.update(exc.refused)
            if refused:
                raise RecordsRefused(f"the broker refused records of {sorted(refused)}", refused)
        except RecordsRefused:
            raise
        except KafkaError as exc:
            raise PublishError(f"publishing failed: {type(exc).__name__}: {exc}") from exc
