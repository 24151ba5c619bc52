"""One agent batch, end to end, without Faust: process, publish, count.

``BatchHandler.handle(messages)`` runs every message through the
:class:`~workers.process.Processor` (synchronous, CPU-bound, inline), hands
the outputs to the :class:`~workers.publish.Publisher` grouped by input
partition, and only then updates the metrics, the savings aggregates and the
local offload index
(``on_offloaded``).  When ``handle`` returns, the batch is published (and,
for exactly-once publishers, its offsets are committed); when it raises,
nothing of the batch may be acknowledged.

Redelivered messages are dropped: Faust can hand the agent a message again
after it re-seeks a partition (seen after a restart while recovering the
table), and a message whose offset is below what this handler already
published for its partition has its outputs on the topics already.  With
exactly_once only our transactions move the committed offsets, so such a
message can only be a redelivery.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from workers.metrics import Metrics
from workers.process import InMessage, Processed, Processor
from workers.publish import PartitionBatch, Publisher, group_batches

__all__ = ["BatchHandler", "Savings", "savings_of"]

# Give the event loop a turn (web requests, timers) after this much CPU.
YIELD_EVERY_S = 0.05


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
    ) -> None:
        """``on_offloaded(hash, text)`` is called for each stash entry once it is published."""
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
        #: (topic, partition) -> next offset not yet published (or in flight) by this handler
        self.published_until: dict[tuple[str, int], int] = {}
        self.redelivered = 0
        self._inflight: asyncio.Task[None] | None = None

    def fresh(self, messages: Sequence[InMessage]) -> list[InMessage]:
        """``messages`` without redeliveries of offsets already published or seen in the batch."""
        seen = dict(self.published_until)
        out: list[InMessage] = []
        for msg in messages:
            tp = (msg.topic, msg.partition)
            if msg.offset < seen.get(tp, -1):
                self.redelivered += 1
                continue
            seen[tp] = msg.offset + 1
            out.append(msg)
        return out

    async def handle(self, messages: Sequence[InMessage]) -> list[Processed]:
        fresh = self.fresh(messages)
        skipped = len(messages) - len(fresh)
        if skipped and self.metrics is not None:
            self.metrics.redelivered.inc(skipped)
        if not fresh:
            await self.flush()
            return []
        results: list[Processed] = []
        last_yield = time.perf_counter()
        for msg in fresh:
            results.append(self.processor.process(msg))
            now = time.perf_counter()
            if now - last_yield > YIELD_EVERY_S:
                await asyncio.sleep(0)
                last_yield = time.perf_counter()
        batches = group_batches(
            (r.message.topic, r.message.partition, r.message.offset, r.outputs) for r in results
        )
        await self.flush()  # the previous batch first: per-partition order, errors surface
        for batch in batches:
            self.published_until[batch.tp] = batch.next_offset
        if self.pipelined:
            self._inflight = asyncio.ensure_future(self._publish(batches, results))
        else:
            await self._publish(batches, results)
        return results

    async def flush(self) -> None:
        """Wait for the batch in flight; raises what its publication raised."""
        task, self._inflight = self._inflight, None
        if task is not None:
            await task

    async def _publish(self, batches: list[PartitionBatch], results: list[Processed]) -> None:
        started = time.perf_counter()
        try:
            await self.publisher.publish(batches)
        except BaseException as exc:
            if self.on_error is not None and not isinstance(exc, asyncio.CancelledError):
                self.on_error(exc)
            raise
        if self.metrics is not None:
            self.metrics.publish_seconds.observe(time.perf_counter() - started)
            self.metrics.observe(results)
        if self.on_offloaded is not None:
            for result in results:
                for digest, text in result.offloaded.items():
                    self.on_offloaded(digest, text)
