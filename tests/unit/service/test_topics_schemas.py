"""topics/*.json load and validate; every schema in schemas/ is valid 2020-12 and its examples pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from workers.service.topics import SCHEMAS_DIR, TOPICS_DIR, TopicSpecError, load_topics

SCHEMA_FILES = sorted(SCHEMAS_DIR.glob("*.schema.json"))
EXPECTED_TOPICS = {
    "transcripts": ("delete", 4),
    "tool-outputs": ("delete", 4),
    "compressed": ("delete", 4),
    "stats": ("delete", 4),
    "dead-letter": ("delete", 4),
    "offload": ("compact", 4),
    "savings-changelog": ("compact,delete", 4),
    "dlq-replays": ("compact", 1),
}


def _schema(path: Path) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return schema


def _validator(name: str) -> Draft202012Validator:
    schema = _schema(SCHEMAS_DIR / name)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def test_every_topic_file_loads() -> None:
    specs = load_topics()
    assert {name: (s.cleanup_policy, s.partitions) for name, s in specs.items()} == EXPECTED_TOPICS
    assert specs["dead-letter"].retention_ms == 14 * 24 * 3600 * 1000
    assert specs["offload"].kafka_configs()["cleanup.policy"] == "compact"
    for spec in specs.values():
        assert (SCHEMAS_DIR / spec.value_schema).is_file(), spec.value_schema
        assert spec.key.strip()
        assert spec.full_name("ctxpress.") == f"ctxpress.{spec.name}"
    assert len(list(TOPICS_DIR.glob("*.json"))) == len(specs)


def test_every_topic_schema_is_used() -> None:
    used = {spec.value_schema for spec in load_topics().values()}
    assert used == {p.name for p in SCHEMA_FILES}


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=lambda p: p.name)
def test_schema_is_valid_2020_12_and_examples_pass(path: Path) -> None:
    schema = _schema(path)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    examples = schema.get("examples")
    assert isinstance(examples, list) and examples, f"{path.name} needs an examples array"
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    for i, example in enumerate(examples):
        errors = [e.message for e in validator.iter_errors(example)]
        assert not errors, f"{path.name} example {i}: {errors}"


@pytest.mark.parametrize(
    ("schema", "record"),
    [
        ("transcript.schema.json", {"messages": []}),
        ("transcript.schema.json", {"id": "a", "messages": [{"content": "no role"}]}),
        ("transcript.schema.json", {"id": "a", "messages": [], "mode": "extreme"}),
        ("transcript.schema.json", {"id": "a", "messages": [], "compression": {}}),
        (
            "transcript.schema.json",
            {"id": "a", "format": "anthropic", "messages": [{"role": "system", "content": "x"}]},
        ),
        ("tool-output.schema.json", {"id": "t", "kind": "tool_output", "content": 3}),
        ("compressed.schema.json", {"id": "a", "messages": []}),
        (
            "stats.schema.json",
            {"record_id": "a", "mode": "lossless", "engine": "dedup", "status": "great"},
        ),
        (
            "dead-letter.schema.json",
            {
                "record_id": None,
                "reason": "r",
                "stage": "decode",
                "error_class": "E",
                "error_message": "m",
                "original_value": "x",
                "original_value_b64": "eA==",
                "source": {"topic": "t", "partition": 0, "offset": 0, "timestamp": None},
            },
        ),
        (
            "offload.schema.json",
            {"hash": "NOT-HEX", "text": "x", "created_at": "2025-01-01T00:00:00Z"},
        ),
        ("savings-changelog.schema.json", [1, -5, 0]),
        ("dlq-replays.schema.json", {"dead_letter": "t/0/1", "to": "x"}),
    ],
)
def test_schemas_reject_bad_records(schema: str, record: dict[str, Any]) -> None:
    assert not _validator(schema).is_valid(record)


def test_invalid_topic_file_error_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "topics" / "broken.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps({"name": "broken", "partitions": 0}))
    with pytest.raises(TopicSpecError, match=r"broken\.json: missing field"):
        load_topics(bad.parent)
    good = {
        "name": "broken",
        "partitions": 0,
        "replication_factor": 1,
        "retention_ms": -1,
        "cleanup_policy": "delete",
        "key": "k",
        "value_schema": "x.schema.json",
    }
    bad.write_text(json.dumps(good))
    with pytest.raises(TopicSpecError, match=r"broken\.json: partitions must be at least 1"):
        load_topics(bad.parent)
    bad.write_text("{not json")
    with pytest.raises(TopicSpecError, match=r"broken\.json: invalid JSON"):
        load_topics(bad.parent)
    bad.write_text(json.dumps({**good, "partitions": 1, "name": "other"}))
    with pytest.raises(TopicSpecError, match=r"broken\.json: name 'other' must match"):
        load_topics(bad.parent)
