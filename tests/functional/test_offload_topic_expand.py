"""``consume --expand`` waits for a stash its offload-topic reader has not indexed yet (no broker:
the reader is stood in for, the index filled as the reader would fill it)."""

from __future__ import annotations

import asyncio
import time

import orjson
import pytest

from workers.cli._kafka_offload import OffloadTopic
from workers.core.offload import stored_text
from workers.core.settings import Settings
from workers.pipeline.expand import ExpandError
from workers.pipeline.runner import Pipeline


def _compressed() -> tuple[dict[str, object], bytes, dict[str, str]]:
    log = "\n".join(
        f"2026-12-01T10:00:{i % 60:02d}Z INFO batch {i} done in {i % 7} ms" for i in range(400)
    )
    record: dict[str, object] = {
        "id": "late",
        "kind": "tool_output",
        "command": "cat app.log",
        "content": log + "\n2026-12-01T11:00:00Z ERROR out of memory",
    }
    outcome = Pipeline(Settings(mode="standard")).run_raw(record)
    assert outcome.stash, "the log must be stashed for this test to mean anything"
    return record, orjson.dumps(outcome.record), dict(outcome.stash)


def test_a_stash_indexed_a_moment_later_is_waited_for() -> None:
    record, line, stash = _compressed()

    async def go() -> tuple[bytes, float]:
        topic = OffloadTopic(Settings(), wait=5.0)
        topic._task = asyncio.create_task(asyncio.sleep(30))  # the reader, still following
        loop = asyncio.get_running_loop()
        for digest, text in stash.items():  # what the reader indexes from the topic
            loop.call_later(0.5, topic.store.remember, digest, stored_text(text))
        started = time.monotonic()
        try:
            return await topic.expand(line, orjson.loads(line)), time.monotonic() - started
        finally:
            topic._task.cancel()

    restored, waited = asyncio.run(go())
    assert orjson.loads(restored) == record
    assert 0.4 < waited < 3.0


def test_a_stash_that_never_comes_fails_after_the_wait() -> None:
    _, line, _ = _compressed()

    async def go() -> float:
        topic = OffloadTopic(Settings(), wait=0.6)
        topic._task = asyncio.create_task(asyncio.sleep(30))
        started = time.monotonic()
        try:
            with pytest.raises(ExpandError, match="stashed span"):
                await topic.expand(line, orjson.loads(line))
        finally:
            topic._task.cancel()
        return time.monotonic() - started

    assert 0.5 < asyncio.run(go()) < 3.0
