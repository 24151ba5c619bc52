"""The worker picks combos and the auto mode per record: headers, fields, tenant, topic.

Runs the worker's processor and batch handler in process (no Kafka): the
pipeline comes from ``build_pipeline`` as in the worker, the publisher is the
in-memory one.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from workers.core.catalog import LOSSLESS
from workers.core.settings import Settings
from workers.pipeline.factory import build_pipeline
from workers.service.handler import BatchHandler
from workers.service.process import Processor
from workers.service.publish import ListPublisher
from workers.service.records import InMessage
from workers.service.topics import TopicNames
from workers.testing import openai_record, tool_output_record

NAMES = TopicNames.from_prefix("ctxpress.")
CTXPRESS = Path(sys.executable).with_name("ctxpress")

COMBOS = """
[combos.json-only]
engines = ["jsontable", "jsonminify"]

[combos.dedup-only]
engines = ["dedup"]

[select]
tenant_header = "tenant"
tenant_field = "metadata.tenant"
topics = { tool-outputs = "json-only" }
tenants = { acme = "dedup-only", beta = "auto" }
"""

ROWS = json.dumps(
    [{"id": i, "name": f"item-{i}", "price": i * 1.5, "tags": ["a", "b"]} for i in range(20)],
    indent=2,
)


@pytest.fixture
def proc(tmp_path: Path) -> Processor:
    path = tmp_path / "combos.toml"
    path.write_text(COMBOS)
    settings = Settings(combos_file=str(path), auto_off_below=100, auto_lossless_below=5000)
    return Processor(build_pipeline(settings), NAMES, "g", deterministic=True, clock=lambda: 1.0)


def message(
    record: dict[str, Any], *headers: tuple[str, bytes], topic: str = NAMES.transcripts
) -> InMessage:
    return InMessage(topic, 0, 3, 1_000, None, orjson.dumps(record), tuple(headers))


def outputs(proc: Processor, msg: InMessage) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    result = proc.process(msg)
    assert result.ok, result.reason
    (compressed,) = [orjson.loads(o.value) for o in result.outputs if o.topic == NAMES.compressed]
    stats = [orjson.loads(o.value) for o in result.outputs if o.topic == NAMES.stats]
    return compressed["compression"], stats


def test_a_header_picks_the_combo_and_every_stats_record_names_it(proc: Processor) -> None:
    record = openai_record("w1", ("user", "list"), ("tool", ROWS), ("assistant", "ok"))
    comp, stats = outputs(proc, message(record, ("ctxpress.combo", b"json-only")))
    assert comp["combo"] == "json-only"
    assert comp["mode"] == "lossless"
    assert comp["route"] == {"source": "header", "combo": "json-only"}
    assert [s["engine"] for s in stats] == ["jsontable", "jsonminify"]
    assert {s["combo"] for s in stats} == {"json-only"}
    assert all(s["route"] == comp["route"] and s["mode"] == "lossless" for s in stats)


def test_a_record_field_picks_the_combo(proc: Processor) -> None:
    record = openai_record("w2", ("user", "list"), ("tool", ROWS))
    record["combo"] = "dedup-only"
    comp, stats = outputs(proc, message(record))
    assert (comp["combo"], comp["route"]["source"]) == ("dedup-only", "record field")
    assert [s["engine"] for s in stats] == ["dedup"]


def test_the_tenant_header_then_the_topic(proc: Processor) -> None:
    record = tool_output_record("w3", ROWS, command="cat items.json")
    comp, stats = outputs(proc, message(record, ("tenant", b"acme"), topic=NAMES.tool_outputs))
    assert comp["route"] == {"source": "tenant", "tenant": "acme", "combo": "dedup-only"}
    assert [s["engine"] for s in stats] == ["dedup"]
    comp, stats = outputs(proc, message(record, topic=NAMES.tool_outputs))
    assert comp["route"] == {"source": "topic", "topic": "tool-outputs", "combo": "json-only"}
    assert comp["engines_applied"] == ["jsontable"]
    chat = openai_record("w3c", ("user", "list"), ("tool", ROWS))
    comp, stats = outputs(proc, message(chat, topic=NAMES.transcripts))  # no rule: the mode
    assert "route" not in comp and "combo" not in comp
    assert all("combo" not in s and "route" not in s for s in stats)
    assert [s["engine"] for s in stats] == list(LOSSLESS)


def test_mode_auto_from_a_header_and_from_a_tenant_field(proc: Processor) -> None:
    small = openai_record("w4", ("user", "hi"))
    comp, stats = outputs(proc, message(small, ("ctxpress.mode", b"auto")))
    assert comp["mode"] == "off" and stats == []
    assert comp["route"]["source"] == "threshold"
    assert comp["route"]["requested_by"] == "header"
    big = openai_record("w5", ("user", "list"), ("tool", ROWS))
    big["metadata"] = {"tenant": "beta"}
    comp, stats = outputs(proc, message(big))
    assert comp["tokens_before"] >= 100
    assert comp["mode"] == "lossless"
    assert comp["route"]["requested_by"] == "tenant"
    assert comp["route"]["tokens"] == comp["tokens_before"]
    assert {s["mode"] for s in stats} == {"lossless"}


def test_mode_auto_as_a_record_field_passes_the_edge_schema(proc: Processor) -> None:
    record = tool_output_record("w6", "ok")
    record["mode"] = "auto"
    comp, _ = outputs(proc, message(record, topic=NAMES.tool_outputs))
    assert comp["mode"] == "off" and comp["route"]["requested_by"] == "record field"


def test_an_unknown_combo_is_a_dead_letter_naming_the_valid_ones(proc: Processor) -> None:
    result = proc.process(message(openai_record("w7", ("user", "x")), ("ctxpress.combo", b"zip")))
    assert not result.ok and result.stage == "validate"
    (letter,) = result.outputs
    body = orjson.loads(letter.value)
    assert body["record_id"] == "w7"
    assert "unknown combo 'zip'; valid combos: json-only, dedup-only" in body["reason"]


def test_the_handler_publishes_what_the_combo_made(proc: Processor) -> None:
    publisher = ListPublisher()
    handler = BatchHandler(proc, publisher)
    record = openai_record("w8", ("user", "list"), ("tool", ROWS))
    msgs = [
        message(record, ("ctxpress.combo", b"dedup-only")),
        InMessage(NAMES.transcripts, 0, 4, 1_000, None, orjson.dumps(record), ()),
    ]
    asyncio.run(handler.handle(msgs))
    first, second = (orjson.loads(o.value) for o in publisher.on(NAMES.compressed))
    assert first["compression"]["combo"] == "dedup-only"
    assert "combo" not in second["compression"]
    engines = [orjson.loads(o.value)["engine"] for o in publisher.on(NAMES.stats)]
    assert engines == ["dedup", *LOSSLESS]


def test_the_worker_refuses_a_bad_combos_file_at_start_up(tmp_path: Path) -> None:
    bad = tmp_path / "combos.toml"
    bad.write_text('[combos.x]\nengines = ["dedup", "gzip"]\n')
    done = subprocess.run(
        [str(CTXPRESS), "worker", "--combos", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "unknown engine 'gzip'; valid engines: dedup, ansi, jsontable" in done.stderr
    assert "Traceback" not in done.stderr


def test_outputs_with_a_combo_or_auto_match_their_topic_schemas(proc: Processor) -> None:
    from jsonschema import Draft202012Validator

    from workers.service.topics import SCHEMAS_DIR

    validators = {
        NAMES.compressed: Draft202012Validator(
            json.loads((SCHEMAS_DIR / "compressed.schema.json").read_text())
        ),
        NAMES.stats: Draft202012Validator(
            json.loads((SCHEMAS_DIR / "stats.schema.json").read_text())
        ),
    }
    record = openai_record("w9", ("user", "list"), ("tool", ROWS))
    wrong = {"route": {"source": "guess"}}
    checked = 0
    for headers in ((("ctxpress.combo", b"json-only"),), (("ctxpress.mode", b"auto"),)):
        for out in proc.process(message(record, *headers)).outputs:
            body = orjson.loads(out.value)
            validator = validators[out.topic]
            assert not list(validator.iter_errors(body))
            target = body["compression"] if out.topic == NAMES.compressed else body
            assert "route" in target
            target.update(wrong)  # the schema does check the route
            assert list(validator.iter_errors(body))
            checked += 1
    assert checked >= 4


def test_a_custom_pipeline_factory_without_combos_is_refused_with_a_combos_file(
    tmp_path: Path,
) -> None:
    from workers.core.settings import SettingsError

    path = tmp_path / "combos.toml"
    path.write_text(COMBOS)
    settings = Settings(
        combos_file=str(path), pipeline_factory="workers.testing.worker:gate_rejecting_pipeline"
    )
    with pytest.raises(SettingsError, match="needs a RoutedPipeline"):
        build_pipeline(settings)
