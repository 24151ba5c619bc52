"""BatchHandler never moves its expected offset past a batch that was not published."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import pytest

from workers.core.settings import Settings
from workers.service.handler import BatchHandler, HandlerFailed
from workers.service.process import Processor
from workers.service.publish import ListPublisher, PartitionBatch, PublishError
from workers.service.records import InMessage
from workers.service.source import MemorySource
from workers.service.topics import TopicNames
from workers.testing import tool_output_record
from workers.testing.worker import gate_rejecting_pipeline

NAMES = TopicNames.from_prefix("u.")
TP = (NAMES.tool_outputs, 0)


@pytest.fixture(scope="module")
def processor() -> Processor:
    return Processor(gate_rejecting_pipeline(Settings()), NAMES, "g", clock=lambda: 0.0)


def msgs(start: int, end: int) -> list[InMessage]:
    out = []
    for offset in range(start, end):
        record = tool_output_record(f"r{offset}", f"line {offset}\n" * 3, command="cat x")
        value = json.dumps(record).encode()
        out.append(InMessage(TP[0], TP[1], offset, None, f"r{offset}".encode(), value))
    return out


class GatedPublisher(ListPublisher):
    """A ListPublisher whose publications wait for ``release`` (and may fail then)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.started = asyncio.Event()

    async def publish(self, batches: Sequence[PartitionBatch]) -> None:
        self.started.set()
        await self.release.wait()
        await super().publish(batches)


def handler_at(
    processor: Processor, publisher: ListPublisher, start: int, *, pipelined: bool = False
) -> BatchHandler:
    source = MemorySource(msgs(0, 200), start={TP: start})
    handler = BatchHandler(processor, publisher, pipelined=pipelined, source=source)
    handler.assigned({TP: start})
    return handler


def test_a_failed_publish_leaves_expected_at_the_failed_batch(processor: Processor) -> None:
    async def go() -> None:
        publisher = ListPublisher()
        errors: list[BaseException] = []
        handler = handler_at(processor, publisher, 120)
        handler.on_error = errors.append
        await handler.handle(msgs(120, 130))
        assert handler.expected == {TP: 130}
        assert publisher.committed == {TP: 130}

        publisher.fail_next = PublishError("broker says no")
        with pytest.raises(PublishError):
            await handler.handle(msgs(130, 131))
        assert handler.expected == {TP: 130}, "must not move past the unpublished record"
        assert handler.pending == {}
        assert publisher.committed == {TP: 130}
        assert [str(e) for e in errors] == ["broker says no"]

        # Faust restarts the agent, which reads the records after the failed one: refused.
        with pytest.raises(HandlerFailed, match="broker says no"):
            await handler.handle(msgs(131, 135))
        assert handler.expected == {TP: 130}
        assert publisher.committed == {TP: 130}
        assert handler.filled == 0  # nothing was even read

        # The next owner starts at the committed offset and gets 130 first.
        successor = ListPublisher()
        fresh = handler_at(processor, successor, publisher.committed[TP])
        await fresh.handle(msgs(131, 135))
        assert fresh.filled == 1
        assert successor.committed == {TP: 135}
        ids = [o.key for o in successor.on(NAMES.compressed)]
        assert ids == [f"r{o}".encode() for o in range(130, 135)]

    asyncio.run(go())


def test_pipelined_positions_are_pending_until_the_publish_returns(processor: Processor) -> None:
    async def go() -> None:
        publisher = GatedPublisher()
        handler = handler_at(processor, publisher, 0, pipelined=True)
        await handler.handle(msgs(0, 5))  # its publication is in flight
        await publisher.started.wait()
        assert handler.expected == {TP: 0}
        assert handler.pending == {TP: 5}
        # the next batch is checked against the in-flight positions: no refill, no redelivery
        assert [m.offset for m in await handler.contiguous(msgs(5, 8))] == [5, 6, 7]
        assert [m.offset for m in await handler.contiguous(msgs(3, 6))] == [5]

        publisher.release.set()
        await handler.flush()
        assert handler.expected == {TP: 5}
        assert handler.pending == {}
        assert publisher.committed == {TP: 5}

    asyncio.run(go())


def test_pipelined_failure_drops_the_pending_positions(processor: Processor) -> None:
    async def go() -> None:
        publisher = GatedPublisher()
        handler = handler_at(processor, publisher, 10, pipelined=True)
        await handler.handle(msgs(10, 15))
        await publisher.started.wait()
        publisher.fail_next = PublishError("fenced")
        publisher.release.set()
        # the second batch is processed, then waits for the first, which failed
        with pytest.raises(PublishError, match="fenced"):
            await handler.handle(msgs(15, 20))
        assert handler.expected == {TP: 10}
        assert handler.pending == {}
        assert publisher.committed == {}
        assert publisher.published == []
        with pytest.raises(HandlerFailed):
            await handler.handle(msgs(20, 21))
        assert handler.expected == {TP: 10}

    asyncio.run(go())


def test_a_reassignment_is_not_overwritten_by_a_late_publication(processor: Processor) -> None:
    async def go() -> None:
        publisher = GatedPublisher()
        handler = handler_at(processor, publisher, 0, pipelined=True)
        await handler.handle(msgs(0, 5))
        await publisher.started.wait()
        handler.assigned({TP: 40})  # (in the worker, a revocation flushes first)
        publisher.release.set()
        await handler.flush()
        assert handler.expected == {TP: 40}

    asyncio.run(go())
