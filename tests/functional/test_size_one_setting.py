"""One size end to end, tombstones, and the Kafka CLI's handling of records that cannot go.

No broker here: the e2e tests (tests/e2e/test_worker_big_records.py) check the same on Kafka.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import orjson
import pytest

from workers.cli.consume_cmd import _envelope
from workers.cli.dlq_cmd import replay_plan
from workers.core.settings import Settings
from workers.pipeline.factory import build_pipeline
from workers.service.kafka.io import too_large
from workers.service.process import Processor
from workers.service.records import InMessage
from workers.service.topics import REPO_ROOT, TopicNames, limit_problems, load_topics

NAMES = TopicNames.from_prefix("t.")
MIB = 1024 * 1024


def _kafka_sh_limit(env: dict[str, str]) -> int:
    script = (REPO_ROOT / "deploy/kafka/kafka.sh").read_text()
    start = script.index("max_message_bytes() {")
    body = script[start : script.index("\n}\n", start) + 3]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CTXPRESS_MAX_")}
    out = subprocess.run(
        ["bash", "-c", body + "max_message_bytes"],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout)


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"CTXPRESS_MAX_RECORD_BYTES": str(4 * MIB)},
        {"CTXPRESS_MAX_MESSAGE_BYTES": str(3 * MIB)},
        {"CTXPRESS_MAX_RECORD_BYTES": str(MIB), "CTXPRESS_MAX_MESSAGE_BYTES": "0"},
    ],
)
def test_local_broker_and_topics_take_what_the_settings_allow(env: dict[str, str]) -> None:
    settings = Settings.from_env(env)
    assert _kafka_sh_limit(env) == settings.max_message_bytes
    for spec in load_topics().values():
        configs = spec.kafka_configs(settings.max_message_bytes)
        assert configs["max.message.bytes"] == str(settings.max_message_bytes)


def test_topics_below_the_setting_are_named_with_their_limit() -> None:
    settings = Settings()
    limits = {name: settings.max_message_bytes for name in NAMES.all()}
    assert limit_problems(settings, NAMES, limits) == []
    limits[NAMES.compressed] = 1_048_588
    limits[NAMES.transcripts] = 10  # an input topic only bounds what producers send
    assert limit_problems(settings, NAMES, limits) == ["t.compressed (max.message.bytes=1,048,588)"]


def test_a_line_over_the_topic_limit_is_refused_with_what_to_change() -> None:
    settings = Settings()
    small = too_large(1_054_089, "t.transcripts", 1_048_588, settings)
    assert "1,054,089 bytes" in small and "max.message.bytes to 17825792" in small
    big = too_large(20 * MIB, "t.transcripts", settings.max_message_bytes, settings)
    assert "CTXPRESS_MAX_RECORD_BYTES" in big


def _as_record(out: object) -> SimpleNamespace:
    return SimpleNamespace(
        topic=NAMES.dead_letter,
        partition=1,
        offset=9,
        key=out.key,  # type: ignore[attr-defined]
        value=out.value,  # type: ignore[attr-defined]
        headers=list(out.headers),  # type: ignore[attr-defined]
    )


def test_a_tombstone_is_a_dead_letter_that_replays_as_null() -> None:
    proc = Processor(build_pipeline(Settings()), NAMES, "g")
    result = proc.process(InMessage(NAMES.transcripts, 0, 5, None, b"conv-7", None))
    (out,) = result.outputs
    body = orjson.loads(out.value)
    assert (result.error_class, body["original_value"], body["original_null"]) == (
        "Tombstone",
        None,
        True,
    )
    assert dict(out.headers)["ctxpress.dlq.replayable"] == b"true"
    plan = replay_plan(_as_record(out))
    assert not isinstance(plan, str)
    topic, key, value, _headers = plan
    assert (topic, key, value) == (NAMES.transcripts, b"conv-7", None)
    # an empty value is not a tombstone: it replays as the empty bytes it was
    (empty,) = proc.process(InMessage(NAMES.transcripts, 0, 6, None, b"k", b"")).outputs
    assert "original_null" not in orjson.loads(empty.value)
    plan = replay_plan(_as_record(empty))
    assert not isinstance(plan, str) and plan[2] == b""


def test_a_cut_original_is_not_replayed_and_the_reason_says_why() -> None:
    settings = Settings(max_message_bytes=64 * 1024)
    proc = Processor(build_pipeline(settings), NAMES, "g")
    raw = b"\x01" * 200_000  # invalid JSON whose dead letter cannot hold it
    (out,) = proc.process(InMessage(NAMES.transcripts, 0, 5, None, None, raw)).outputs
    body = orjson.loads(out.value)
    assert body["original_truncated"] is True and body["original_bytes"] == 200_000
    reason = replay_plan(_as_record(out))
    assert isinstance(reason, str)
    assert "200,000 bytes" in reason and body["original_sha256"] in reason


def test_consume_envelope_keeps_json_numbers_as_written() -> None:
    value = b'{"id":123456789012345678901234567890,"price":1.50,"s":"caf\\u00e9"}'
    record = SimpleNamespace(
        topic="t", partition=0, offset=1, timestamp=5, key=b"k", headers=[], value=value
    )
    line = _envelope(record)
    assert line.endswith(b',"value":' + value + b"}")
    record.value = b'{"n":\n123456789012345678901234567890}'  # one line per record
    assert _envelope(record).endswith(b'"value":{"n":123456789012345678901234567890}}')
    record.value = b"not json"
    assert orjson.loads(_envelope(record))["value"] == "not json"


def test_the_schema_describes_tombstone_and_cut_letters() -> None:
    schema = orjson.loads(Path(REPO_ROOT / "schemas/dead-letter.schema.json").read_bytes())
    props = schema["properties"]
    for name in ("original_null", "original_truncated", "original_bytes", "original_sha256"):
        assert name in props
    assert props["original_value"]["type"] == ["string", "null"]
