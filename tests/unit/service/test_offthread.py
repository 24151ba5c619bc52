"""The pipeline runs off the event loop: probes, fetches and the previous batch's commit go on."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from workers.core.settings import Settings
from workers.pipeline.factory import build_pipeline
from workers.service.handler import BatchHandler
from workers.service.offthread import PipelineThread
from workers.service.process import Processor
from workers.service.publish import ListPublisher
from workers.service.records import InMessage, Processed
from workers.service.topics import TopicNames

NAMES = TopicNames.from_prefix("t.")


class SlowProcessor(Processor):
    """Compresses like the real one, after 0.3 s of CPU-free waiting per record."""

    def process(self, msg: InMessage) -> Processed:
        time.sleep(0.3)
        return super().process(msg)


def test_the_loop_keeps_running_while_a_batch_is_compressed() -> None:
    handler = BatchHandler(SlowProcessor(build_pipeline(Settings()), NAMES, "g"), ListPublisher())
    line = b'{"id":"a","messages":[{"role":"user","content":"hello"}]}'
    batch = [InMessage(NAMES.transcripts, 0, i, None, b"a", line) for i in range(3)]
    ticks: list[float] = []

    async def probe() -> None:  # what /live, heartbeats and fetches need: loop turns
        while True:
            ticks.append(time.monotonic())
            await asyncio.sleep(0.01)

    async def go() -> list[Processed]:
        ticker = asyncio.ensure_future(probe())
        try:
            return await handler.handle(batch)
        finally:
            ticker.cancel()

    started = time.monotonic()
    results = asyncio.run(go())
    took = time.monotonic() - started
    assert [r.ok for r in results] == [True, True, True]
    assert took >= 0.9
    # the loop turned all along (blocked, it would have turned once or twice)
    assert len(ticks) >= 40, len(ticks)
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    assert max(gaps) < 0.25, max(gaps)


def test_errors_come_back_to_the_awaiting_coroutine_in_order() -> None:
    runner = PipelineThread()

    def boom() -> int:
        raise ValueError("engine bug")

    async def go() -> tuple[int, int]:
        first = runner.run(lambda: 1)
        failing = runner.run(boom)
        last = runner.run(lambda: 3)
        with pytest.raises(ValueError, match="engine bug"):
            await failing
        return await first, await last

    assert asyncio.run(go()) == (1, 3)
    assert asyncio.run(go()) == (1, 3)  # the thread serves a second event loop too
