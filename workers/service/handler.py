"""One agent batch, end to end, without Faust: process, publish, count.

``BatchHandler.handle(messages)`` runs every message through the
:class:`~workers.service.process.Processor` (synchronous, CPU-bound, inline), hands
the outputs to the :class:`~workers.service.publish.Publisher` grouped by input
partition, and once that publication has succeeded updates the metrics and
the local offload index (``on_offloaded``); the agent adds the savings
aggregates.  When ``handle`` returns, the batch is published (for
exactly-once publishers with its offsets committed) or, with ``pipelined``,
its publication has started and the next ``handle`` or ``flush`` awaits it;
when it raises, nothing of the batch may be acknowledged.

Each input partition is processed contiguously.  The handler knows the next
offset it must process (``expected``: the group's committed offset when the
partition is assigned, see :meth:`BatchHandler.assigned`, then one past each
record processed).  A message below it is a redelivery (Faust re-seeks after a
restart) and is dropped; a message above it means Faust skipped records (seen
after a restart while the table recovers), and the skipped range is read from
the broker (:class:`~workers.service.source.RecordSource`) and processed first.  So a
batch never commits an offset past a record that was not processed.

``expected`` moves only in :meth:`BatchHandler._publish`, after the publisher returned:
while a batch is in flight its positions are ``pending`` (the next batch is checked
against them), and a failed publication drops them, so ``expected`` still points at
the first record of the failed batch.  After a failed publication the handler refuses
every later batch (:class:`HandlerFailed`): the worker must stop, and the next owner
of the partitions starts at the committed offsets.  A skip
at the end of what a partition holds has no later message to reveal it:
:meth:`BatchHandler.sweep` (run by a timer) reads what an idle partition still
has below its end offset.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from workers.core.errors import CtxpressError
from workers.service.metrics import Metrics
from workers.service.offprocess import PipelineProcess
from workers.service.offthread import PipelineThread
from workers.service.process import Processor, slimmed
from workers.service.publish import PartitionBatch, Publisher, RecordsRefused, group_batches
from workers.service.records import InMessage, Processed
from workers.service.source import RecordSource

log = logging.getLogger(__name__)
TP = tuple[str, int]

__all__ = ["BatchHandler", "HandlerFailed", "Savings", "savings_of"]

# A batch is published in chunks of about this many input bytes: bounded transactions,
# and (pipelined) the next chunk is processed while the previous one commits.
CHUNK_BYTES = 2 * 1024 * 1024
#: how many inputs of one batch the broker may refuse (one per try) before the worker stops
REFUSED_RETRIES = 16


class HandlerFailed(CtxpressError, RuntimeError):
    """A publication failed earlier: this handler takes no more batches."""


@dataclass(slots=True)
class Savings:
    """Aggregates of one batch: (partition, mode, engine) -> [records, before, after]."""

    rows: dict[tuple[int, str, str], list[int]] = field(default_factory=dict)

    def add(self, partition: int, mode: str, engine: str, before: int, after: int) -> None:
        row = self.rows.setdefault((partition, mode, engine), [0, 0, 0])
        row[0] += 1
        row[1] += before
        row[2] += after


def savings_of(results: Sequence[Processed]) -> Savings:
    savings = Savings()
    for result in results:
        for engine, (before, after) in result.savings.items():
            savings.add(result.message.partition, result.mode, engine, before, after)
    return savings


class BatchHandler:
    """Processes and publishes agent batches.

    With ``pipelined`` (only for publishers that commit offsets themselves),
    ``handle`` returns as soon as the batch is processed and its publication is
    started; the next ``handle`` processes its batch while that publication
    runs and waits for it before publishing its own, so at most one batch is in
    flight and batches of a partition commit in order.  ``flush`` waits for the
    batch in flight (rebalance, shutdown).  A failed publication is reported to
    ``on_error`` at once and raised again from the next ``handle`` or ``flush``.
    """

    def __init__(
        self,
        processor: Processor,
        publisher: Publisher,
        metrics: Metrics | None = None,
        on_offloaded: Callable[[str, str], None] | None = None,
        *,
        pipelined: bool = False,
        on_error: Callable[[BaseException], None] | None = None,
        source: RecordSource | None = None,
        child: PipelineProcess | None = None,
    ) -> None:
        """``on_offloaded(hash, text)`` is called for each stash entry once it is published.
        With ``child``, batches are compressed in that process instead of on the thread."""
        if pipelined and not publisher.commits_offsets:
            raise ValueError(
                "pipelined publishing needs a publisher that commits offsets (exactly_once): "
                "Faust would commit the offsets of a batch still in flight"
            )
        self.processor = processor
        self.publisher = publisher
        self.metrics = metrics
        self.on_offloaded = on_offloaded
        self.pipelined = pipelined
        self.on_error = on_error
        self.source = source
        #: (topic, partition) -> next offset to process: everything below it is published
        self.expected: dict[TP, int] = {}
        #: positions after the batch in flight (moved into ``expected`` once it is published)
        self.pending: dict[TP, int] = {}
        #: the error of the failed publication, if any (no batch is taken after it)
        self.failed: BaseException | None = None
        self._generation = 0
        self.redelivered = 0
        self.filled = 0
        self.not_owned = 0
        self._inflight: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._thread = PipelineThread()
        self.child = child
        self._moved_at: dict[TP, float] = {}
        # Without a source there is nothing to wait for (tests); with one, batches wait
        # until the partitions' start offsets are known.
        self.ready = asyncio.Event()
        if source is None:
            self.ready.set()

    def assigned(self, starts: Mapping[TP, int]) -> None:
        """Partitions were (re)assigned: processing resumes at these offsets (the others are gone)."""
        self.expected = dict(starts)
        self.pending = {}
        self._generation += 1  # a publication still running must not move the new positions
        now = time.monotonic()
        self._moved_at = dict.fromkeys(starts, now)
        self.ready.set()

    def revoked(self) -> None:
        """A rebalance started: the next batch waits for :meth:`assigned`."""
        if self.source is not None:
            self.ready.clear()

    async def contiguous(self, messages: Sequence[InMessage]) -> list[InMessage]:
        """``messages`` without redeliveries, with skipped ranges read from the source."""
        expected = {**self.expected, **self.pending}
        out: list[InMessage] = []
        for msg in messages:
            tp = (msg.topic, msg.partition)
            next_offset = expected.get(tp)
            if next_offset is None and self.source is not None:
                # Not assigned to this worker (any more): an event Faust buffered before a
                # rebalance.  Its new owner processes it; publishing it here would fence them.
                self.not_owned += 1
                continue
            if next_offset is not None and msg.offset < next_offset:
                self.redelivered += 1
                if self.metrics is not None:
                    self.metrics.redelivered.inc()
                continue
            if next_offset is not None and msg.offset > next_offset and self.source is not None:
                missing = await self.source.read_range(
                    msg.topic, msg.partition, next_offset, msg.offset
                )
                if missing:
                    log.warning(
                        "%s[%d]: offsets %d..%d were not delivered; read %d record(s) from the broker",
                        msg.topic,
                        msg.partition,
                        next_offset,
                        msg.offset - 1,
                        len(missing),
                    )
                    self.filled += len(missing)
                    if self.metrics is not None:
                        self.metrics.gap_records.inc(len(missing))
                out.extend(missing)
            expected[tp] = msg.offset + 1
            out.append(msg)
        return out

    def _check(self) -> None:
        if self.failed is not None:
            raise HandlerFailed(
                f"a publication failed ({type(self.failed).__name__}: {self.failed}); "
                "this worker takes no more batches"
            ) from self.failed

    async def handle(self, messages: Sequence[InMessage]) -> list[Processed]:
        self._check()
        await self.ready.wait()
        async with self._lock:
            self._check()
            fresh = await self.contiguous(messages)
            results: list[Processed] = []
            for chunk in _chunks(fresh, CHUNK_BYTES):
                results.extend(await self._run(chunk))
            return results

    async def sweep(self, idle_for: float = 10.0) -> int:
        """Process what idle partitions still hold below their end offset; returns how many."""
        if self.source is None or not self.ready.is_set() or not self.expected:
            return 0
        async with self._lock:
            self._check()
            await self.flush()  # the batch in flight moves ``expected`` first
            now = time.monotonic()
            idle = [tp for tp in self.expected if now - self._moved_at.get(tp, now) >= idle_for]
            if not idle:
                return 0
            ends = await self.source.end_offsets(idle)
            found: list[InMessage] = []
            for tp in idle:
                start, end = self.expected[tp], ends.get(tp, 0)
                if end > start:
                    found.extend(await self.source.read_range(tp[0], tp[1], start, end))
            if not found:
                return 0
            log.warning(
                "%d record(s) below the end of idle partitions were not delivered; "
                "read them from the broker",
                len(found),
            )
            self.filled += len(found)
            if self.metrics is not None:
                self.metrics.gap_records.inc(len(found))
            for chunk in _chunks(await self.contiguous(found), CHUNK_BYTES):
                await self._run(chunk)
            return len(found)

    async def _run(self, fresh: list[InMessage]) -> list[Processed]:
        if not fresh:
            await self.flush()
            return []
        # On the pipeline thread or in its process: meanwhile the loop publishes the previous
        # batch and fetches.
        results: list[Processed]
        if self.child is not None:
            results = await self.child.batch(fresh)
        else:
            results = await self._thread.run(
                lambda: [slimmed(self.processor.process(msg)) for msg in fresh]
            )
        batches = _regroup(results)
        await self.flush()  # the previous batch first: per-partition order, errors surface
        now = time.monotonic()
        for batch in batches:
            self.pending[batch.tp] = batch.next_offset
            self._moved_at[batch.tp] = now
        if self.pipelined:
            self._inflight = asyncio.ensure_future(self._publish(batches, results))
        else:
            await self._publish(batches, results)
        return results

    def _without_refused(
        self, results: list[Processed], refused: RecordsRefused
    ) -> list[PartitionBatch]:
        """The batch again, each input whose output the broker refused now one dead letter
        (replaced in ``results``, so the metrics count the dead letters)."""
        out: list[Processed] = []
        for result in results:
            msg = result.message
            if msg.offset in refused.refused.get((msg.topic, msg.partition), ()):
                log.warning(
                    "%s[%d]@%d: the broker refused its output as too large; dead-lettered",
                    msg.topic,
                    msg.partition,
                    msg.offset,
                )
                result = self.processor.refused(msg, str(refused), result.record_id)
            out.append(result)
        results[:] = out
        return _regroup(results)

    async def flush(self) -> None:
        """Wait for the batch in flight; raises what its publication raised."""
        task, self._inflight = self._inflight, None
        if task is not None:
            await task

    async def _publish(self, batches: list[PartitionBatch], results: list[Processed]) -> None:
        started = time.perf_counter()
        generation = self._generation
        try:
            for attempt in range(REFUSED_RETRIES + 1):
                try:
                    await self.publisher.publish(batches)
                    break
                except RecordsRefused as refused:
                    # One poison record never stops the partition: its input becomes a dead
                    # letter (small) and the batch is published again without it.
                    if attempt == REFUSED_RETRIES:
                        raise
                    batches = self._without_refused(results, refused)
        except BaseException as exc:
            for batch in batches:  # not published: ``expected`` stays where it was
                if self.pending.get(batch.tp) == batch.next_offset:
                    del self.pending[batch.tp]
            if not isinstance(exc, asyncio.CancelledError):
                self.failed = exc
                if self.on_error is not None:
                    self.on_error(exc)
            raise
        if generation == self._generation:
            for batch in batches:
                self.expected[batch.tp] = max(self.expected.get(batch.tp, 0), batch.next_offset)
                if self.pending.get(batch.tp) == batch.next_offset:
                    del self.pending[batch.tp]
        if self.metrics is not None:
            self.metrics.publish_seconds.observe(time.perf_counter() - started)
            self.metrics.observe(results)
        if self.on_offloaded is not None:
            for result in results:
                for digest, text in result.offloaded.items():
                    self.on_offloaded(digest, text)


def _regroup(results: Sequence[Processed]) -> list[PartitionBatch]:
    return group_batches(
        (r.message.topic, r.message.partition, r.message.offset, r.outputs) for r in results
    )


def _chunks(messages: list[InMessage], max_bytes: int) -> list[list[InMessage]]:
    chunks: list[list[InMessage]] = []
    current: list[InMessage] = []
    size = 0
    for msg in messages:
        length = len(msg.value or b"")
        if current and size + length > max_bytes:
            chunks.append(current)
            current, size = [], 0
        current.append(msg)
        size += length
    if current:
        chunks.append(current)
    return chunks
