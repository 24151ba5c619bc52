"""``ctxpress dlq replay`` filters, tracking and dry run (issue 14), on the real broker.

The dead letters are the worker's own (its Processor), published straight to the topic.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from tests.e2e._support import Run
from tests.kafka_broker import kafka_bootstrap  # noqa: F401
from workers.cli import main
from workers.cli.dlq_cmd import Filters, parse_offset_range
from workers.core.settings import Settings
from workers.pipeline.factory import build_pipeline
from workers.service.kafka import clients
from workers.service.kafka.io import read_topic
from workers.service.process import Processor
from workers.service.records import InMessage

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(300)]


def _bad_inputs(run: Run) -> list[InMessage]:
    names = run.names
    out = []
    for i in range(4):  # not JSON: decode
        out.append(InMessage(names.transcripts, 0, i, 1, None, b"{broken %d" % i, ()))
    for i in range(4):  # no messages: validate, with a record id
        value = orjson.dumps({"id": f"bad-{i}", "messages": "nope"})
        out.append(InMessage(names.transcripts, 1, i, 1, f"bad-{i}".encode(), value, ()))
    return out


async def _publish_dead_letters(run: Run) -> None:
    processor = Processor(build_pipeline(Settings()), run.names, run.app_id)
    producer = clients.producer(clients.connection(bootstrap=run.bootstrap), acks="all")
    await producer.start()
    try:
        for msg in _bad_inputs(run):
            done = processor.process(msg)
            assert not done.ok
            for out in done.outputs:
                # one partition: offsets 0-3 decode, 4-7 validate
                await producer.send_and_wait(
                    out.topic, out.value, key=out.key, headers=list(out.headers), partition=0
                )
    finally:
        await producer.stop()


async def _read(run: Run, topic: str) -> list[Any]:
    return [r async for r in read_topic(run.settings(), topic, idle_timeout=1.0)]


def _replay(run: Run, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, str]:
    assert main(["dlq", "replay", "--prefix", run.prefix, "--timeout", "3", *args]) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_replay_filters_tracking_and_dry_run(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    asyncio.run(_publish_dead_letters(run))
    dlq = run.names.dead_letter

    # dry run: what would go where, and nothing is published
    out, err = _replay(run, capsys, "--record-id", "bad-2", "--dry-run")
    size = len(orjson.dumps({"id": "bad-2", "messages": "nope"}))
    assert out.splitlines() == [
        f"{dlq}/0/6  record bad-2  stage validate  -> {run.names.transcripts} ({size} bytes)"
    ]
    assert "would re-publish 1 dead letters" in err
    assert run.read("transcripts", idle=1.0) == []

    # by stage
    out, err = _replay(run, capsys, "--stage", "decode")
    assert "re-published 4 dead letters" in err
    replayed = run.read("transcripts", idle=1.0)
    assert sorted(r.value for r in replayed) == [b"{broken %d" % i for i in range(4)]
    assert {dict(r.headers)["ctxpress.replay.of"] for r in replayed} == {
        f"{dlq}/0/{i}".encode() for i in range(4)
    }

    # tracked: the same replay again takes nothing, and says why
    out, err = _replay(run, capsys, "--stage", "decode")
    assert "re-published 0 dead letters" in err
    assert "skipped 4: replayed before" in err

    # by offset range: 5-6 of partition 0 (two validate letters)
    out, err = _replay(run, capsys, "--offset-range", "0:5-6")
    assert "re-published 2 dead letters" in err
    values = [r.value for r in run.read("transcripts", idle=1.0)]
    ids = sorted(orjson.loads(v)["id"] for v in values if not v.startswith(b"{broken"))
    assert ids == ["bad-1", "bad-2"]

    # the rest once, then everything again on request
    out, err = _replay(run, capsys)
    assert "re-published 2 dead letters" in err and "skipped 6: replayed before" in err
    out, err = _replay(run, capsys, "--include-replayed", "--dry-run")
    assert "would re-publish 8 dead letters" in err
    tracking = asyncio.run(_read(run, f"{run.prefix}dlq-replays"))
    assert sorted(r.key.decode() for r in tracking) == sorted(f"{dlq}/0/{i}" for i in range(8))
    marks = {orjson.loads(r.value)["dead_letter"]: orjson.loads(r.value) for r in tracking}
    assert marks[f"{dlq}/0/6"]["record_id"] == "bad-2"
    assert marks[f"{dlq}/0/6"]["to"] == run.names.transcripts


def test_filters() -> None:
    def letter(**headers: str) -> SimpleNamespace:
        return SimpleNamespace(
            headers=[(k.replace("_", "."), v.encode()) for k, v in headers.items()],
            partition=1,
            offset=10,
            timestamp=5000,
        )

    gate = letter(**{"ctxpress.dlq.error.stage": "gate", "ctxpress.dlq.error.engine": "dedup"})
    assert Filters(engine="dedup").take(gate)
    assert not Filters(engine="jsontable").take(gate)
    assert Filters(stage="gate", engine="dedup").take(gate)
    assert not Filters(stage="decode").take(gate)
    assert Filters(offsets=(parse_offset_range("1:10-12"),)).take(gate)
    assert not Filters(offsets=(parse_offset_range("0:10-12"),)).take(gate)
    assert Filters(offsets=(parse_offset_range("10"),)).take(gate)
    assert not Filters(from_ms=6000).take(gate)
    assert Filters(from_ms=4000, to_ms=5000).take(gate)
    assert not Filters(record_ids=frozenset({"x"})).take(gate)


def test_a_tombstone_goes_through_the_worker_and_replays_as_null(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()

    async def send_tombstone() -> None:
        producer = clients.producer(clients.connection(bootstrap=run.bootstrap), acks="all")
        await producer.start()
        try:
            await producer.send_and_wait(run.names.transcripts, None, key=b"gone-7", partition=2)
        finally:
            await producer.stop()

    asyncio.run(send_tombstone())
    worker = run.worker().start()
    try:
        run.wait_for_outputs(1, worker, timeout=120)
        letters = run.read("dead-letter", idle=2.0)
    finally:
        worker.terminate(timeout=60)
    (letter,) = letters
    body = orjson.loads(letter.value)
    assert (body["error_class"], body["original_value"], body["original_null"]) == (
        "Tombstone",
        None,
        True,
    )
    assert letter.key == b"gone-7"
    _out, err = _replay(run, capsys)
    assert "re-published 1 dead letters" in err
    (replayed,) = [r for r in run.read("transcripts", idle=1.0) if r.key == b"gone-7" and r.headers]
    assert replayed.value is None  # a null again, not b""
    assert dict(replayed.headers)["ctxpress.replay.of"].startswith(run.names.dead_letter.encode())
