"""The Faust agent on ``agent.test_context()``: no broker, real app wiring.

The app is built by ``create_app`` with a :class:`ListPublisher` and a
:class:`MemoryStore`, finalized with the ``memory://`` store and flow control
resumed; Faust's own sends (the savings table's changelog) are mocked.  The
agent does not ``yield``, so the test waits until the publisher saw the batch.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any
from unittest import mock

import orjson
import pytest

from workers.core.offload import MemoryStore
from workers.core.settings import Settings
from workers.service.agents import savings_rows
from workers.service.app import create_app
from workers.service.publish import ListPublisher
from workers.testing.worker import Sample, gate_rejecting_pipeline, mixed_stream


@pytest.fixture
def app() -> Iterator[Any]:
    settings = Settings(
        app_id=f"test-{uuid.uuid4().hex[:8]}",
        topic_prefix="t.",
        batch_size=16,
        batch_timeout=0.01,
    )
    app = create_app(
        settings,
        pipeline=gate_rejecting_pipeline(settings),
        publisher=ListPublisher(),
        offload=MemoryStore(),
        source=None,
    )
    app.finalize()
    app.conf.store = "memory://"
    app.flow_control.resume()
    with mock.patch("faust.topics.Topic.send_soon") as send_soon:
        app.send_soon_mock = send_soon
        yield app


async def _run(app: Any, samples: list[Sample]) -> ListPublisher:
    publisher: ListPublisher = app.ctxpress.publisher
    expected = len(samples)
    async with app.ctxpress.agent.test_context() as agent:
        for sample in samples:
            await agent.put(sample.line, key=sample.record_id.encode())
        for _ in range(500):
            if sum(publisher.committed.values()) >= expected:
                break
            await asyncio.sleep(0.01)
    return publisher


def test_agent_publishes_every_record_once(app: Any) -> None:
    samples = mixed_stream(80, seed=21)
    publisher = asyncio.run(_run(app, samples))
    names = app.ctxpress.names

    assert sum(publisher.committed.values()) == len(samples)  # every offset committed
    assert publisher.batches >= len(samples) // 16  # batched, not one record per request
    compressed = [orjson.loads(m.value)["id"] for m in publisher.on(names.compressed)]
    assert sorted(compressed) == sorted(s.record_id for s in samples if s.ok)
    letters = [orjson.loads(m.value) for m in publisher.on(names.dead_letter)]
    by_stage: dict[str, int] = {}
    for letter in letters:
        by_stage[letter["stage"]] = by_stage.get(letter["stage"], 0) + 1
    expected: dict[str, int] = {}
    for s in samples:
        stage = "gate" if s.kind == "gate" else s.expect
        if stage != "compressed":
            expected[stage] = expected.get(stage, 0) + 1
    assert by_stage == expected


def test_agent_counts_metrics_and_savings(app: Any) -> None:
    samples = mixed_stream(40, seed=22)
    asyncio.run(_run(app, samples))
    registry = app.ctxpress.registry
    out = sum(
        registry.get_sample_value("ctxpress_records_out_total", {"mode": m, "outcome": o}) or 0
        for m in ("lossless", "aggressive", "unknown")
        for o in ("compressed", "dead_letter")
    )
    assert out == len(samples)
    assert (
        registry.get_sample_value(
            "ctxpress_worker_info", {"guarantee": "exactly_once", "default_mode": "lossless"}
        )
        == 1
    )
    rows = savings_rows(app.ctxpress.table)
    totals = [r for r in rows if r["engine"] == "_record"]
    assert sum(r["records"] for r in totals) == sum(s.ok for s in samples)
    assert app.send_soon_mock.called  # the table's changelog, mocked


def test_metrics_names_do_not_clash_with_faust_sensors(app: Any) -> None:
    names = [m.name for m in app.ctxpress.registry.collect()]
    ours = [n for n in names if n.startswith("ctxpress_")]
    faust_names = [n for n in names if n.startswith("faust_")]
    assert ours and faust_names
    assert len(names) == len(set(names)) == len(ours) + len(faust_names)
