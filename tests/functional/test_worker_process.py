"""The worker's pure parts, without Faust or a broker: processing, dead letters, batching."""

from __future__ import annotations

import asyncio
import base64
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from workers.cli.dlq_cmd import replay_plan
from workers.core.catalog import LOSSLESS
from workers.core.settings import Settings, SettingsError
from workers.messages import RESERVED_KEY
from workers.pipeline.factory import build_pipeline
from workers.service.app import CommitGuard
from workers.service.dead_letters import DLQ_HEADERS
from workers.service.handler import BatchHandler, savings_of
from workers.service.kafka.io import route
from workers.service.metrics import Metrics
from workers.service.process import Processor
from workers.service.publish import IdempotentPublisher, ListPublisher, PublishError, group_batches
from workers.service.records import InMessage
from workers.service.source import MemorySource
from workers.service.topics import TopicNames
from workers.service.web import authorized, check_web_security, is_loopback
from workers.testing.worker import (
    GATE_ENGINE,
    gate_rejecting_pipeline,
    mixed_stream,
    padded_record,
)

NAMES = TopicNames.from_prefix("t.")


def processor(deterministic: bool = False, clock: float = 1_764_446_400.0) -> Processor:
    return Processor(
        gate_rejecting_pipeline(Settings()),
        NAMES,
        "group-1",
        deterministic=deterministic,
        clock=lambda: clock,
    )


def msg(
    value: bytes | None,
    *,
    topic: str | None = None,
    offset: int = 7,
    key: bytes | None = None,
) -> InMessage:
    if topic is None:  # the topic a record of this shape is produced to
        is_tool = value is not None and b'"kind":"tool_output"' in value
        topic = NAMES.tool_outputs if is_tool else NAMES.transcripts
    return InMessage(topic, 2, offset, 1_764_446_000_000, key, value, (("trace", b"abc"),))


def test_every_sample_ends_as_expected() -> None:
    proc = processor()
    for sample in mixed_stream(300, seed=3):
        result = proc.process(msg(sample.line, topic=NAMES.by_short(sample.topic)))
        assert ("compressed" if result.ok else result.stage) == sample.expect, sample.kind
        if result.ok:
            assert result.outputs[0].topic == NAMES.compressed
            assert result.outputs[0].key == sample.record_id.encode()
        else:
            assert [o.topic for o in result.outputs] == [NAMES.dead_letter]


def test_invalid_json_dead_letter_keeps_key_value_and_headers() -> None:
    raw = b'{"id": "x1", "messages": [ truncated'
    result = processor().process(msg(raw, key=b"orig-key"))
    (out,) = result.outputs
    assert out.key == b"orig-key"
    body = orjson.loads(out.value)
    assert body["original_value"].encode() == raw
    assert body["stage"] == "decode"
    assert body["record_id"] is None
    assert body["source"] == {
        "topic": NAMES.transcripts,
        "partition": 2,
        "offset": 7,
        "timestamp": 1_764_446_000_000,
    }
    headers = dict(out.headers)
    assert [h for h in DLQ_HEADERS if h in headers] == [
        h for h in DLQ_HEADERS if h not in ("ctxpress.dlq.error.engine", "ctxpress.dlq.record.id")
    ]
    assert headers["ctxpress.dlq.original.topic"] == NAMES.transcripts.encode()
    assert headers["ctxpress.dlq.original.offset"] == b"7"
    assert headers["ctxpress.dlq.original.consumer.group"] == b"group-1"
    assert headers["ctxpress.dlq.error.class"] == b"JSONDecodeError"
    assert headers["ctxpress.dlq.replayable"] == b"true"
    assert headers["trace"] == b"abc"  # the input's own headers follow


def test_non_utf8_bytes_survive_as_base64() -> None:
    raw = b'{"id": "x2", "messages": [], "x": "\xff"}'
    (out,) = processor().process(msg(raw)).outputs
    body = orjson.loads(out.value)
    assert "original_value" not in body
    assert base64.b64decode(body["original_value_b64"]) == raw
    assert body["error_class"] == "UnicodeDecodeError"


def test_schema_violation_names_the_path_and_keeps_the_id() -> None:
    raw = orjson.dumps({"id": "x3", "messages": [{"role": "user", "content": 42}]})
    result = processor().process(msg(raw, key=b"x3"))
    assert result.stage == "validate"
    body = orjson.loads(result.outputs[0].value)
    assert body["record_id"] == "x3"
    assert "$.messages[0].content" in body["reason"]
    assert dict(result.outputs[0].headers)["ctxpress.dlq.record.id"] == b"x3"


def test_empty_and_oversized_values() -> None:
    assert processor().process(msg(None)).stage == "decode"
    small = Processor(
        gate_rejecting_pipeline(Settings(max_record_bytes=100)), NAMES, "g", clock=lambda: 0.0
    )
    result = small.process(msg(padded_record("big", 500)))
    assert result.stage == "validate"
    assert "over the limit" in (result.reason or "")


def test_gate_rejection_publishes_record_and_a_gate_letter() -> None:
    sample = next(s for s in mixed_stream(50, seed=5) if s.kind == "gate")
    result = processor().process(msg(sample.line, topic=NAMES.tool_outputs))
    topics = [o.topic for o in result.outputs]
    assert topics == [NAMES.compressed, NAMES.stats, NAMES.dead_letter]
    letter = orjson.loads(result.outputs[2].value)
    assert letter["stage"] == "gate"
    assert letter["engine"] == GATE_ENGINE
    assert letter["record_id"] == sample.record_id
    assert {v["kind"] for v in letter["violations"]} >= {"error_line"}
    headers = dict(result.outputs[2].headers)
    assert headers["ctxpress.dlq.error.engine"] == GATE_ENGINE.encode()
    assert headers["ctxpress.dlq.replayable"] == b"false"


def test_stats_records_one_per_engine() -> None:
    sample = next(s for s in mixed_stream(50, seed=5) if s.kind == "transcript")
    result = processor().process(msg(sample.line))
    stats = [orjson.loads(o.value) for o in result.outputs if o.topic == NAMES.stats]
    assert [s["engine"] for s in stats] == list(LOSSLESS)
    for row in stats:
        assert row["record_id"] == sample.record_id
        assert row["mode"] == "lossless"
        assert row["ts"] == 1_764_446_400_000


def test_deterministic_output_is_byte_identical_across_runs() -> None:
    line = padded_record("d1", 4000)
    first = processor(deterministic=True, clock=1.0).process(msg(line)).outputs[0].value
    again = processor(deterministic=True, clock=2.0).process(msg(line)).outputs[0].value
    assert first == again
    comp = orjson.loads(first)[RESERVED_KEY]
    assert comp["duration_ms"] == 0.0
    assert {e["ms"] for e in comp["engines"]} == {0.0}
    timed = orjson.loads(processor().process(msg(line)).outputs[0].value)[RESERVED_KEY]
    assert timed["duration_ms"] > 0


def test_layout_is_recorded_for_byte_exact_expand() -> None:
    line = padded_record("l1", 3000)
    record = orjson.loads(processor().process(msg(line)).outputs[0].value)
    assert record[RESERVED_KEY]["layout"] == "compact"


def test_replay_plan_restores_the_original_message() -> None:
    raw = b"\xffnot json"
    (out,) = processor().process(msg(raw, key=b"k9", offset=41)).outputs
    record = SimpleNamespace(
        topic=NAMES.dead_letter,
        partition=0,
        offset=3,
        key=out.key,
        value=out.value,
        headers=list(out.headers),
    )
    plan = replay_plan(record)
    assert not isinstance(plan, str)
    topic, key, value, headers = plan
    assert (topic, key, value) == (NAMES.transcripts, b"k9", raw)
    assert dict(headers) == {"trace": b"abc", "ctxpress.replay.of": b"t.dead-letter/0/3"}


def test_replay_plan_skips_gate_letters() -> None:
    sample = next(s for s in mixed_stream(50, seed=5) if s.kind == "gate")
    out = processor().process(msg(sample.line, topic=NAMES.tool_outputs)).outputs[2]
    record = SimpleNamespace(
        topic="t", partition=0, offset=0, key=out.key, value=out.value, headers=list(out.headers)
    )
    assert isinstance(replay_plan(record), str)


def test_group_batches_commits_past_the_last_offset() -> None:
    batches = group_batches([("a", 0, 5, []), ("b", 1, 9, []), ("a", 0, 6, []), ("a", 1, 2, [])])
    assert {(b.topic, b.partition): b.next_offset for b in batches} == {
        ("a", 0): 7,
        ("b", 1): 10,
        ("a", 1): 3,
    }


def test_handler_publishes_once_and_drops_redeliveries() -> None:
    from prometheus_client import CollectorRegistry

    publisher = ListPublisher()
    offloaded: dict[str, str] = {}
    handler = BatchHandler(
        processor(), publisher, Metrics(CollectorRegistry()), offloaded.__setitem__
    )
    lines = [s.line for s in mixed_stream(20, seed=9)]
    batch = [msg(line, topic=NAMES.transcripts, offset=i) for i, line in enumerate(lines)]
    asyncio.run(handler.handle(batch[:12]))
    # Faust re-seeked: offsets 5.. arrive again, followed by new ones (and a duplicate inside)
    results = asyncio.run(handler.handle([*batch[5:], batch[15]]))
    assert [r.message.offset for r in results] == list(range(12, 20))
    assert handler.redelivered == 8
    assert publisher.committed == {(NAMES.transcripts, 2): 20}
    keys = [o.key for o in publisher.on(NAMES.compressed)]
    assert len(keys) == len(set(keys))


def test_handler_reads_skipped_offsets_from_the_source() -> None:
    lines = [padded_record(f"g{i}", 1200) for i in range(10)]
    batch = [msg(line, offset=i) for i, line in enumerate(lines)]
    tp = (NAMES.tool_outputs, 2)
    source = MemorySource(batch, start={tp: 0})
    publisher = ListPublisher()
    handler = BatchHandler(processor(), publisher, source=source)

    async def go() -> None:
        assert not handler.ready.is_set()  # waits for the assignment
        handler.assigned(await source.start_offsets("g", [tp]))
        # Faust skipped offset 0 (the start), then 4 and 5 at a batch boundary
        await handler.handle(batch[1:4])
        await handler.handle([*batch[6:], batch[2]])  # and redelivered 2
        # an event of a partition this worker does not own (buffered before a rebalance)
        await handler.handle([InMessage(NAMES.tool_outputs, 3, 0, None, None, lines[0])])

    asyncio.run(go())
    assert handler.not_owned == 1
    assert source.reads == [(NAMES.tool_outputs, 2, 0, 1), (NAMES.tool_outputs, 2, 4, 6)]
    assert handler.filled == 3
    assert asyncio.run(handler.sweep(idle_for=0.0)) == 0  # nothing left below the end
    assert handler.redelivered == 1
    ids = [orjson.loads(o.value)["id"] for o in publisher.on(NAMES.compressed)]
    assert ids == [f"g{i}" for i in range(10)]  # every record once, in offset order
    assert publisher.committed == {tp: 10}


def test_sweep_processes_a_skipped_tail() -> None:
    lines = [padded_record(f"t{i}", 1200) for i in range(6)]
    batch = [msg(line, offset=i) for i, line in enumerate(lines)]
    tp = (NAMES.tool_outputs, 2)
    source = MemorySource(batch, start={tp: 0})
    publisher = ListPublisher()
    handler = BatchHandler(processor(), publisher, source=source)

    async def go() -> int:
        handler.assigned({tp: 0})
        await handler.handle(batch[:4])  # Faust never delivers 4 and 5
        assert await handler.sweep(idle_for=60.0) == 0  # not idle long enough
        return await handler.sweep(idle_for=0.0)

    assert asyncio.run(go()) == 2
    assert publisher.committed == {tp: 6}
    assert len(publisher.on(NAMES.compressed)) == 6


def test_pipelined_handler_overlaps_and_surfaces_errors() -> None:
    class Failing(ListPublisher):
        fail = False

        async def publish(self, batches: Any) -> None:
            await asyncio.sleep(0.01)
            if self.fail:
                raise PublishError("broker gone")
            await super().publish(batches)

    async def go() -> None:
        publisher = Failing()
        errors: list[BaseException] = []
        handler = BatchHandler(processor(), publisher, pipelined=True, on_error=errors.append)
        lines = [padded_record(f"p{i}", 1500) for i in range(6)]
        await handler.handle([msg(line, offset=i) for i, line in enumerate(lines[:3])])
        assert publisher.batches == 0  # in flight
        await handler.handle([msg(line, offset=i + 3) for i, line in enumerate(lines[3:])])
        assert publisher.batches == 1  # the first one, before the second started
        await handler.flush()
        assert publisher.committed == {(NAMES.tool_outputs, 2): 6}
        publisher.fail = True
        await handler.handle([msg(padded_record("p9", 1500), offset=6)])
        with pytest.raises(PublishError):
            await handler.flush()
        assert len(errors) == 1

    asyncio.run(go())
    with pytest.raises(ValueError, match="exactly_once"):
        BatchHandler(processor(), IdempotentPublisher("127.0.0.1:1"), pipelined=True)


def test_savings_add_up_per_partition_mode_engine() -> None:
    proc = processor()
    results = [proc.process(msg(padded_record(f"s{i}", 2000), offset=i)) for i in range(3)]
    rows = savings_of(results).rows
    assert rows[(2, "lossless", "_record")][0] == 3
    assert rows[(2, "lossless", "jsontable")][1] >= rows[(2, "lossless", "jsontable")][2]


def test_metrics_count_outcomes() -> None:
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    metrics = Metrics(registry)
    proc = processor()
    samples = mixed_stream(60, seed=4)
    metrics.observe(proc.process(msg(s.line, topic=NAMES.by_short(s.topic))) for s in samples)
    out = registry.get_sample_value
    compressed = sum(
        out("ctxpress_records_out_total", {"mode": m, "outcome": "compressed"}) or 0
        for m in ("lossless", "aggressive")
    )
    assert compressed == sum(s.ok for s in samples)
    gates = sum(s.kind == "gate" for s in samples)
    assert out("ctxpress_dead_letters_total", {"reason": "gate"}) == gates
    assert (
        out("ctxpress_gate_rejections_total", {"engine": GATE_ENGINE, "kind": "error_line"})
        == gates
    )
    assert out("ctxpress_batch_size_count") == 1
    names = {m.name for m in registry.collect()}
    assert all(n.startswith("ctxpress_") for n in names)


def test_commit_guard_filters_input_topics() -> None:
    guard = CommitGuard(NAMES.inputs, publisher_commits=True)
    assert not guard.allows(NAMES.transcripts)
    assert guard.allows("app-savings-changelog")
    alo = CommitGuard(NAMES.inputs, publisher_commits=False)
    assert alo.allows(NAMES.tool_outputs)
    alo.block()
    assert not alo.allows(NAMES.tool_outputs)


def test_route_by_kind_and_key() -> None:
    assert route(b'{"id": 5, "kind": "tool_output", "content": "x"}') == ("tool-outputs", b"5")
    assert route(b'{"id": "c1", "messages": []}') == ("transcripts", b"c1")
    assert route(b"not json") == ("transcripts", None)


def test_web_security() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0")
    check_web_security(Settings())
    with pytest.raises(SettingsError, match="CTXPRESS_WEB_TOKEN"):
        check_web_security(Settings(web_host="0.0.0.0"))
    check_web_security(Settings(web_host="0.0.0.0", web_token="s3cret"))
    assert authorized("", None)
    assert authorized("s3cret", "Bearer s3cret")
    assert not authorized("s3cret", "Bearer nope")
    assert not authorized("s3cret", None)


def test_pipeline_factory_setting() -> None:
    pipeline = build_pipeline(
        Settings(pipeline_factory="workers.testing.worker:gate_rejecting_pipeline")
    )
    assert [e.name for e in pipeline.engines_for("aggressive")] == [GATE_ENGINE]
    with pytest.raises(SettingsError, match=r"module\.path:function"):
        build_pipeline(Settings(pipeline_factory="nonsense"))
    with pytest.raises(SettingsError, match="cannot be loaded"):
        build_pipeline(Settings(pipeline_factory="workers.nope:x"))


def test_every_output_matches_its_topic_schema() -> None:
    import json

    from jsonschema import Draft202012Validator

    from workers.service.topics import SCHEMAS_DIR, load_topics

    specs = load_topics()
    validators = {
        NAMES.by_short(short): Draft202012Validator(
            json.loads((SCHEMAS_DIR / spec.value_schema).read_text()),
            format_checker=Draft202012Validator.FORMAT_CHECKER,
        )
        for short, spec in specs.items()
        if spec.direction != "internal"  # written by Faust and by dlq replay, not the processor
    }
    proc = Processor(gate_rejecting_pipeline(Settings()), NAMES, "g")
    samples = mixed_stream(120, seed=8)
    standard = orjson.dumps(
        {
            "id": "std-1",
            "kind": "tool_output",
            "mode": "standard",
            "command": "tail -n 300 app.log",
            "content": "\n".join(
                f"12:00:{i % 60:02d} INFO request {i} took {i * 7} ms" for i in range(300)
            ),
        }
    )
    seen: set[str] = set()
    for line in [s.line for s in samples] + [standard]:
        for out in proc.process(msg(line)).outputs:
            errors = list(validators[out.topic].iter_errors(orjson.loads(out.value)))
            assert not errors, (out.topic, errors[0].message)
            seen.add(out.topic)
    assert seen == {NAMES.compressed, NAMES.stats, NAMES.dead_letter, NAMES.offload}


def test_metrics_of_a_batch_equal_those_of_its_records_one_by_one() -> None:
    """observe() moves each series once per batch by its sum: the same numbers as one record
    at a time, for every counter and histogram but the batch-size one."""
    from prometheus_client import CollectorRegistry

    proc = processor()
    results = [
        proc.process(msg(s.line, topic=NAMES.by_short(s.topic))) for s in mixed_stream(80, seed=9)
    ]
    whole, single = CollectorRegistry(), CollectorRegistry()
    Metrics(whole).observe(results)
    one = Metrics(single)
    for result in results:
        one.observe([result])

    def samples(
        registry: CollectorRegistry,
    ) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        return {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for m in registry.collect()
            for s in m.samples
            if not s.name.startswith("ctxpress_batch_size")
        }

    got, expected = samples(whole), samples(single)
    assert got == expected
    assert sum(v for (name, _), v in got.items() if name == "ctxpress_records_in_total") == 80
    assert any(name == "ctxpress_engine_runs_total" and v > 1 for (name, _), v in got.items())
