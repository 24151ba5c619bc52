"""The pipeline's child process gives what the Processor gives in this process, in order, and a
batch whose child dies raises PipelineDied instead of hanging."""

from __future__ import annotations

import asyncio
import os
import signal

import orjson
import pytest

from workers.core.settings import Settings
from workers.pipeline.factory import build_pipeline
from workers.service.offprocess import PipelineDied, PipelineProcess
from workers.service.process import make_processor
from workers.service.records import InMessage, Processed
from workers.service.topics import TopicNames
from workers.testing.worker import padded_record

SETTINGS = Settings(mode="lossless", processing_guarantee="at_least_once")  # no timings


def _messages(n: int) -> list[InMessage]:
    names = TopicNames.from_settings(SETTINGS)
    values = [padded_record(f"r{i}", 2048, seed=i) for i in range(n)]
    values.append(b"{not json")  # its own dead letter, in the child as here
    return [
        InMessage(
            topic=names.tool_outputs,
            partition=i % 3,
            offset=i,
            timestamp_ms=1_700_000_000_000,
            key=None,
            value=value,
            headers=(),
        )
        for i, value in enumerate(values)
    ]


def _untimed(value: bytes) -> dict[str, object]:
    body: dict[str, object] = orjson.loads(value)
    return {k: v for k, v in body.items() if k not in ("ms", "ts")}


def test_the_child_gives_the_outputs_of_this_process_in_order() -> None:
    messages = _messages(12)
    here = make_processor(SETTINGS, build_pipeline(SETTINGS))
    expected = [here.process(m) for m in messages]
    child = PipelineProcess(SETTINGS)

    async def run() -> list[Processed]:
        first = await child.batch(messages[:5])
        return [*first, *await child.batch(messages[5:])]

    try:
        got = asyncio.run(run())
    finally:
        child.close()
    assert all(r.message is m for r, m in zip(got, messages, strict=True))  # not a copy back
    assert [(r.stage, r.record_id) for r in got] == [(r.stage, r.record_id) for r in expected]
    assert expected[-1].stage is not None and got[-1].stage == expected[-1].stage  # bad line
    # the same compressed records, and stats but for their timings
    for mine, theirs in zip(got[:-1], expected[:-1], strict=True):
        assert mine.outputs[0].value == theirs.outputs[0].value
        assert [_untimed(o.value) for o in mine.outputs[1:]] == [
            _untimed(o.value) for o in theirs.outputs[1:]
        ]


def test_a_batch_whose_child_dies_raises_pipeline_died() -> None:
    child = PipelineProcess(SETTINGS)

    async def run() -> None:
        await child.batch(_messages(1))  # the child is up
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        await child.batch(_messages(1))

    try:
        with pytest.raises(PipelineDied, match="exited while compressing a batch"):
            asyncio.run(run())
    finally:
        child.close()
