"""No output over CTXPRESS_MAX_MESSAGE_BYTES: too large outputs and dead letters, without a broker."""

from __future__ import annotations

import hashlib
import json
import random

import orjson
import pytest
from aiokafka.record.default_records import DefaultRecordBatchBuilder

from workers.core.settings import Settings, SettingsError
from workers.service.process import Processor
from workers.service.publish import PublishError, _size_error, size_error_message
from workers.service.records import InMessage, wire_size
from workers.service.topics import SCHEMAS_DIR, TopicNames
from workers.testing import openai_record, tool_output_record
from workers.testing.worker import GATE_MODE, gate_rejecting_pipeline

NAMES = TopicNames.from_prefix("t.")
MIB = 1024 * 1024


def prose(size: int, seed: int = 0) -> str:
    """Text of about ``size`` characters that the lossless engines leave alone (no repeats)."""
    rng = random.Random(seed)
    words = ["alpha", "delta", "engine", "river", "stone", "cloud", "paper", "signal", "quiet"]
    lines: list[str] = []
    total = 0
    while total < size:
        line = " ".join(rng.choice(words) for _ in range(12)) + f" {rng.randrange(10**9)}."
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def big_transcript(rid: str, size: int) -> bytes:
    return json.dumps(openai_record(rid, ("user", prose(size)), ("assistant", "ok"))).encode()


def processor(limit: int = MIB) -> Processor:
    return Processor(
        gate_rejecting_pipeline(Settings()),
        NAMES,
        "g",
        clock=lambda: 1_764_446_400.0,
        max_message_bytes=limit,
    )


def msg(
    value: bytes | None,
    *,
    topic: str = NAMES.transcripts,
    headers: tuple[tuple[str, bytes], ...] = (("trace", b"abc"),),
    key: bytes | None = b"k",
) -> InMessage:
    return InMessage(topic, 1, 42, 1_764_446_000_000, key, value, headers)


def check_schema(body: dict[str, object]) -> None:
    from jsonschema import Draft202012Validator

    schema = json.loads((SCHEMAS_DIR / "dead-letter.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator(schema).validate(body)


def size_of(out: object) -> int:
    return wire_size(out.key, out.value, out.headers)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("key", "value", "headers"),
    [
        (None, b"", []),
        (b"k", b"x" * 1000, [("a", b"b")]),
        (b"k" * 300, b"y" * 200_000, [("h" * 40, b"v" * 70_000), ("trace", b"")]),
    ],
)
def test_wire_size_is_an_upper_bound_of_what_aiokafka_checks(
    key: bytes | None, value: bytes, headers: list[tuple[str, bytes]]
) -> None:
    theirs = DefaultRecordBatchBuilder.estimate_size_in_bytes(key, value, headers)
    ours = wire_size(key, value, headers)
    assert theirs <= ours <= theirs + 64 + 8 * len(headers)


def test_output_over_the_limit_is_one_dead_letter_that_fits() -> None:
    raw = big_transcript("big-2mb", 2 * MIB)
    result = processor().process(msg(raw, key=b"big-2mb"))
    assert not result.ok
    assert result.stage == "publish"
    assert result.error_class == "OutputTooLarge"
    assert result.record_id == "big-2mb"
    (out,) = result.outputs
    assert out.topic == NAMES.dead_letter
    assert size_of(out) <= MIB
    body = orjson.loads(out.value)
    check_schema(body)
    assert body["stage"] == "publish"
    assert body["record_id"] == "big-2mb"
    assert "exceeds the limit of 1,048,576 bytes" in body["reason"]
    assert "CTXPRESS_MAX_MESSAGE_BYTES" in body["reason"]
    assert body["reason"].startswith("compressed output of ")
    # the original (2 MB) cannot ride along: a bounded prefix, its length and digest
    assert body["original_truncated"] is True
    assert body["original_bytes"] == len(raw)
    assert body["original_sha256"] == hashlib.sha256(raw).hexdigest()
    assert raw.decode().startswith(body["original_value"])
    assert 0 < len(body["original_value"]) <= 64 * 1024
    assert body["source"] == {
        "topic": NAMES.transcripts,
        "partition": 1,
        "offset": 42,
        "timestamp": 1_764_446_000_000,
    }
    headers = dict(out.headers)
    assert headers["ctxpress.dlq.error.stage"] == b"publish"
    assert headers["ctxpress.dlq.replayable"] == b"false"
    assert headers["ctxpress.dlq.record.id"] == b"big-2mb"
    assert headers["trace"] == b"abc"


def test_output_under_the_limit_is_published() -> None:
    raw = big_transcript("big-900k", 900 * 1024)
    result = processor().process(msg(raw))
    assert result.ok
    assert size_of(result.outputs[0]) <= MIB
    # the same record with a lower limit is dead-lettered
    small = processor(limit=512 * 1024).process(msg(raw))
    assert small.stage == "publish"
    assert all(size_of(o) <= 512 * 1024 for o in small.outputs)


def test_control_bytes_dead_letter_is_cut_to_fit() -> None:
    raw = b"\x01" * (390 * 1024)  # valid UTF-8, invalid JSON; JSON-escaped it is 6x larger
    result = processor().process(msg(raw, key=None))
    assert result.stage == "decode"
    (out,) = result.outputs
    assert size_of(out) <= MIB
    body = orjson.loads(out.value)
    check_schema(body)
    assert body["original_truncated"] is True
    assert body["original_bytes"] == len(raw)
    assert body["original_sha256"] == hashlib.sha256(raw).hexdigest()
    assert set(body["original_value"]) == {"\x01"}
    assert dict(out.headers)["ctxpress.dlq.replayable"] == b"false"
    assert out.key is None


def test_small_bad_value_with_a_huge_header_keeps_the_value_and_drops_the_header() -> None:
    raw = b"not-json"
    headers = (("trace", b"abc"), ("blob", b"z" * (1_100_000)), ("after", b"kept"))
    result = processor().process(msg(raw, headers=headers))
    assert result.stage == "decode"
    (out,) = result.outputs
    assert size_of(out) <= MIB
    body = orjson.loads(out.value)
    assert body["original_value"] == "not-json"
    assert "original_truncated" not in body
    assert body["dropped_headers"] == [{"key": "blob", "bytes": 1_100_000}]
    got = dict(out.headers)
    assert got["trace"] == b"abc"
    assert got["after"] == b"kept"
    assert "blob" not in got
    assert got["ctxpress.dlq.replayable"] == b"true"  # the value and key are intact


def test_non_utf8_over_the_limit_keeps_a_base64_prefix() -> None:
    raw = b"\xff" * (2 * MIB)
    settings = Settings(max_record_bytes=4 * MIB)
    proc = Processor(gate_rejecting_pipeline(settings), NAMES, "g", max_message_bytes=MIB)
    (out,) = proc.process(msg(raw)).outputs
    assert size_of(out) <= MIB
    body = orjson.loads(out.value)
    assert "original_value" not in body
    assert body["original_truncated"] is True
    assert body["original_bytes"] == len(raw)
    assert 0 < len(body["original_value_b64"]) <= 64 * 1024


def test_a_gate_letter_over_the_limit_has_its_texts_cut() -> None:
    limit = 64 * 1024
    content = "starting job\nERROR db connection refused at 10.0.0.3:5432\n" + prose(40_000, 3)
    record = tool_output_record("g1", content, command="./job.sh")
    record["mode"] = GATE_MODE
    result = processor(limit).process(msg(orjson.dumps(record), topic=NAMES.tool_outputs))
    assert result.ok
    topics = [o.topic for o in result.outputs]
    assert topics == [NAMES.compressed, NAMES.stats, NAMES.dead_letter]
    letter = result.outputs[2]
    assert size_of(letter) <= limit
    body = orjson.loads(letter.value)
    check_schema(body)
    assert body["stage"] == "gate"
    assert body["truncated"] is True
    assert body["before_chars"] == len(content)
    assert content.startswith(body["before"])
    assert len(body["before"]) < len(content)


def test_the_limit_is_one_setting_with_a_floor() -> None:
    # derived from the input limit: 16 MiB records + 1 MiB of room
    assert Settings().max_message_bytes == 17 * MIB
    assert Settings(max_record_bytes=4 * MIB).max_message_bytes == 5 * MIB
    assert Settings.from_env({"CTXPRESS_MAX_RECORD_BYTES": str(MIB)}).max_message_bytes == 2 * MIB
    assert Settings.from_env({"CTXPRESS_MAX_MESSAGE_BYTES": "2097152"}).max_message_bytes == 2 * MIB
    with pytest.raises(SettingsError, match="CTXPRESS_MAX_MESSAGE_BYTES"):
        Settings.from_env({"CTXPRESS_MAX_MESSAGE_BYTES": "1000"})


def test_broker_size_refusal_is_a_fatal_error_that_says_what_to_change() -> None:
    from aiokafka.errors import KafkaError, MessageSizeTooLargeError

    try:
        try:
            raise MessageSizeTooLargeError("batch too large")
        except MessageSizeTooLargeError as inner:
            raise KafkaError("commit failed") from inner
    except KafkaError as exc:
        assert _size_error(exc)
        text = size_error_message(exc, ["p.compressed", "p.compressed"], MIB)
    assert "max.message.bytes of p.compressed" in text
    assert "CTXPRESS_MAX_MESSAGE_BYTES=1,048,576" in text
    assert not _size_error(PublishError("fenced"))
