"""One id rule for the batch CLI and the worker: a non-empty string or an integer, always present."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator

from workers.cli import main
from workers.core.settings import Settings
from workers.messages import id_problem
from workers.pipeline.factory import build_pipeline
from workers.service.process import Processor
from workers.service.records import InMessage
from workers.service.topics import TopicNames

MESSAGES = [{"role": "user", "content": "hello"}]
MISSING = object()
BAD: list[Any] = [MISSING, None, "", 1.5, 1.0, True, [], {"a": 1}]
GOOD: list[Any] = ["a", "  x", 0, 7, 12345678901234567890123]
ROOT = Path(__file__).resolve().parents[3]
NAMES = TopicNames.from_prefix("t.")


def line(rid: Any) -> bytes:
    record: dict[str, Any] = {"messages": MESSAGES}
    if rid is not MISSING:
        record["id"] = rid
    return json.dumps(record).encode()


def cli_outcome(tmp_path: Path, rid: Any) -> tuple[int, list[dict[str, Any]]]:
    src, out, dlq = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "dlq.jsonl"
    src.write_bytes(line(rid) + b"\n")
    args = ["compress", "--mode", "lossless", "-i", str(src), "-o", str(out)]
    code = main([*args, "--dead-letter", str(dlq), "--quiet"])
    return code, [orjson.loads(x) for x in dlq.read_bytes().splitlines()]


def worker_stage(rid: Any) -> str | None:
    processor = Processor(build_pipeline(Settings()), NAMES, "g", clock=lambda: 0.0)
    result = processor.process(InMessage(NAMES.transcripts, 0, 1, 0, b"k", line(rid), ()))
    return result.stage


@pytest.mark.parametrize("rid", BAD, ids=repr)
def test_a_missing_empty_or_non_integer_id_is_a_dead_letter_in_both(
    tmp_path: Path, rid: Any
) -> None:
    code, letters = cli_outcome(tmp_path, rid)
    assert code == 1
    assert [x["stage"] for x in letters] == ["validate"]
    assert "non-empty string or an integer" in letters[0]["reason"]
    assert worker_stage(rid) == "validate"


@pytest.mark.parametrize("rid", GOOD, ids=repr)
def test_a_string_or_integer_id_passes_in_both(tmp_path: Path, rid: Any) -> None:
    code, letters = cli_outcome(tmp_path, rid)
    assert (code, letters) == (0, [])
    assert json.loads((tmp_path / "out.jsonl").read_bytes())["id"] == rid
    assert worker_stage(rid) is None


@pytest.mark.parametrize("schema", ["transcript.schema.json", "tool-output.schema.json"])
def test_the_schemas_say_what_id_problem_says(schema: str) -> None:
    validator = Draft202012Validator(json.loads((ROOT / "schemas" / schema).read_text()))
    id_schema = validator.schema["properties"]["id"]
    assert "id" in validator.schema["required"]
    check = Draft202012Validator(id_schema)
    for rid in [*BAD, *GOOD]:
        if rid is MISSING or rid is None:
            continue
        if rid == 1.0 and not isinstance(rid, bool):
            # JSON Schema calls 1.0 an integer; the worker applies id_problem after the schema
            assert check.is_valid(rid) and id_problem({"id": rid}) is not None
            continue
        assert check.is_valid(rid) == (id_problem({"id": rid}) is None), rid
