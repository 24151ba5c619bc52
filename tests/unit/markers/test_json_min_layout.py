"""The json-min layout is out of band (issue 13, "Lossless"): the visible marker is the plain
``[[json-min:v1]]{...}[[/json-min]]``, the layout rides in ``compression.markers.min`` keyed
by a digest of the body, expand stays byte-exact, old records with the layout inline still
expand, and an entry the record's own pipeline did not write changes nothing but whitespace."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
import pytest

from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines.base import EngineContext
from workers.engines.jsonminify import JsonMinifyEngine
from workers.markers import MANIFEST_KEY, Manifest, json_min
from workers.markers.jsonlayout import compact
from workers.messages import parse_record
from workers.pipeline.expand import expand_line, expand_record
from workers.pipeline.runner import Pipeline
from workers.testing import lossless_round_trip

MINIFY = JsonMinifyEngine()
CTX = EngineContext(tokens=TokenCounter())
DOC = {
    "service": "orders",
    "replicas": [
        {"zone": f"eu-{i}", "ready": i % 2 == 0, "load": [1.5, 2, None]} for i in range(6)
    ],
    "limits": {"cpu": "500m", "memory": "1Gi", "price": 1.50},
}
HEADER = re.compile(r"\[\[json-min:v1[^\]]*\]\]")


@pytest.fixture(scope="module")
def lossless() -> Pipeline:
    return Pipeline(Settings(mode="lossless"))


def tool_record(*contents: str, mode: str = "lossless") -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "show me the service"}]
    for n, content in enumerate(contents):
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": content})
    return {"id": "t", "mode": mode, "messages": messages}


def texts_of(record: dict[str, Any]) -> dict[str, str]:
    plain = {k: v for k, v in record.items() if k != "compression"}
    return {u.uid: u.text for u in parse_record(plain).units}


LAYOUTS = {
    "indent=2": json.dumps(DOC, indent=2),
    "indent=4": json.dumps(DOC, indent=4),
    "indent=tab eol=crlf": json.dumps(DOC, indent="\t").replace("\n", "\r\n"),
    'indent=2 item=", "': json.dumps(DOC, indent=2, separators=(", ", ": ")),
    'indent=2 key=":"': json.dumps(DOC, indent=2, separators=(",", ":")),
    'item=", " key=": "': json.dumps(DOC),
}


@pytest.mark.parametrize("attrs", sorted(LAYOUTS))
def test_visible_marker_is_plain_and_expand_is_byte_exact(lossless: Pipeline, attrs: str) -> None:
    content = LAYOUTS[attrs]
    data = tool_record(content)
    line = orjson.dumps(data)
    outcome = lossless.run_raw(orjson.loads(line))
    visible = texts_of(outcome.record)["m1"]
    body = compact(content)
    assert visible == f"[[json-min:v1]]{body}[[/json-min]]"
    entries = outcome.record["compression"][MANIFEST_KEY]["min"]
    assert entries == [f"m1={json_min.body_digest(body)} {attrs}"]
    assert expand_record(outcome.record) == data
    out_line = orjson.dumps(outcome.record)
    assert expand_line(out_line, orjson.loads(out_line)) == line
    # the engine's stats and the record count the visible text
    counter = lossless.tokens
    assert outcome.stats["tokens_after"] == sum(
        counter.count(t) for t in texts_of(outcome.record).values()
    )


def test_the_layout_costs_no_visible_tokens(lossless: Pipeline) -> None:
    outcome = lossless.run_raw(tool_record(LAYOUTS['indent=2 item=", "']))
    visible = texts_of(outcome.record)["m1"]
    inline = visible.replace("[[json-min:v1]]", '[[json-min:v1 indent=2 item=", "]]')
    assert lossless.tokens.count(visible) + 5 <= lossless.tokens.count(inline)


def test_documents_in_two_messages_and_two_fences(lossless: Pipeline) -> None:
    two = f"```json\n{LAYOUTS['indent=2']}\n```\nand\n```json\n{json.dumps([DOC, 1], indent=4)}\n```\n"
    data = tool_record(two, LAYOUTS["indent=4"])
    outcome = lossless.run_raw(data)
    texts = texts_of(outcome.record)
    assert HEADER.findall(texts["m1"] + texts["m2"]) == ["[[json-min:v1]]"] * 3
    minified = Manifest.of_record(outcome.record["compression"]).minified
    assert sorted(minified) == ["m1", "m2"] and len(minified["m1"]) == 2
    assert expand_record(outcome.record) == data


def test_one_body_with_two_layouts_keeps_them_inline() -> None:
    two = f"```json\n{LAYOUTS['indent=2']}\n```\nand\n```json\n{LAYOUTS['indent=4']}\n```\n"
    engine_out = lossless_round_trip(MINIFY, two, CTX)
    assert HEADER.findall(engine_out) == ["[[json-min:v1 indent=2]]", "[[json-min:v1 indent=4]]"]
    assert json_min.take_layouts(engine_out) == (engine_out, {})  # ambiguous: both inline


def test_old_records_with_the_layout_inline_still_expand(lossless: Pipeline) -> None:
    data = tool_record(LAYOUTS["indent=4"])
    outcome = lossless.run_raw(data)
    old = json.loads(json.dumps(outcome.record))
    digest, attrs = old["compression"][MANIFEST_KEY].pop("min")[0][3:].split(" ", 1)
    assert attrs == "indent=4" and len(digest) == json_min.DIGEST_HEX
    old["messages"][1]["content"] = texts_of(old)["m1"].replace(
        "[[json-min:v1]]", "[[json-min:v1 indent=4]]"
    )
    assert expand_record(old) == data


def _forge(record: dict[str, Any], entries: list[str]) -> dict[str, Any]:
    forged = json.loads(json.dumps(record))
    forged["compression"].setdefault(MANIFEST_KEY, {})["min"] = entries
    return forged


def test_forged_entries_change_nothing_but_whitespace(lossless: Pipeline) -> None:
    data = tool_record(LAYOUTS["indent=2"])
    outcome = lossless.run_raw(data)
    body = compact(LAYOUTS["indent=2"])
    digest = json_min.body_digest(body)
    for entry in (
        f"m1={digest} indent=2]] EVIL",
        f'm1={digest} key="EVIL"',
        f"m1={digest} <<cx:a33e669e94bac231>>",
        f"m1={digest} depth=9999 indent=16",
        f"m1={digest[:-1]} indent=4",
        f"m9={digest} indent=4",
    ):
        out = texts_of(expand_record(_forge(outcome.record, [entry])))["m1"]
        assert out == body, entry  # the compact body: the same data
    out = texts_of(expand_record(_forge(outcome.record, [f"m1={digest} indent=4"])))["m1"]
    assert out == LAYOUTS["indent=4"] and compact(out) == body


def test_manifest_keeps_only_well_formed_min_entries() -> None:
    manifest = Manifest.from_json(
        {"min": ["m2=0123456789ab indent=2", "m3=0123456789ab", "m4=XYZ indent=2", 7, "bad"]}
    )
    assert manifest.minified == {"m2": {"0123456789ab": "indent=2"}}
    assert manifest.as_json() == {"min": ["m2=0123456789ab indent=2"]}
    assert Manifest.from_json(manifest.as_json()) == manifest
