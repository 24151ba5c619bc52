"""The JSON table layout is out of band (issue 13, "Lossless"): the visible header is exactly
``[[json-table:v1 columns=[...] rows=N]]``, the layout rides in ``compression.markers.table``,
expand stays byte-exact, old records with the layout inline still expand, and a layout
entry expand did not get from the record's own pipeline changes nothing but whitespace."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
import pytest

from workers.core.offload import MemoryStore, stored_text
from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines.base import EngineContext
from workers.engines.jsontable import JsonTableEngine
from workers.markers import MANIFEST_KEY, Manifest, json_table
from workers.markers.jsonlayout import compact
from workers.messages import parse_record
from workers.pipeline.expand import expand_line, expand_record
from workers.pipeline.runner import Pipeline
from workers.testing import lossless_round_trip

TABLE = JsonTableEngine()
CTX = EngineContext(tokens=TokenCounter())

ROWS = [
    {"id": 1000 + i, "name": f"host-{i}", "price": "1.50", "up": i % 3 != 0, "big": 10**20 + i}
    for i in range(12)
]
# what another pipeline's decoder accepts: the plain header, nothing after rows=N
OTHER_DECODER = re.compile(r"\[\[json-table:v1 columns=(\[[^\n]*\]) rows=(\d+)\]\]\n")


@pytest.fixture(scope="module")
def lossless() -> Pipeline:
    return Pipeline(Settings(mode="lossless"))


def tool_record(*contents: str, mode: str = "lossless") -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "show me the hosts"}]
    for n, content in enumerate(contents):
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{n}",
                        "type": "function",
                        "function": {"name": "bash", "arguments": "{}"},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": content})
    return {"id": "t", "mode": mode, "messages": messages}


def texts_of(record: dict[str, Any]) -> dict[str, str]:
    plain = {k: v for k, v in record.items() if k != "compression"}
    return {u.uid: u.text for u in parse_record(plain).units}


def other_pipeline_decode(text: str) -> list[list[dict[str, Any]]]:
    """The tables a decoder of the plain format finds: header, one JSON array per row line."""
    tables = []
    for m in OTHER_DECODER.finditer(text):
        cols = json.loads(m.group(1))
        lines = text[m.end() :].split("\n")[: int(m.group(2))]
        tables.append([dict(zip(cols, json.loads(line), strict=True)) for line in lines])
    return tables


LAYOUTS = {
    "indent=2": json.dumps(ROWS, indent=2),
    "indent=4": json.dumps(ROWS, indent=4),
    "indent=tab eol=crlf": json.dumps(ROWS, indent="\t").replace("\n", "\r\n"),
    'indent=2 item=", "': json.dumps(ROWS, indent=2, separators=(", ", ": ")),
    'indent=2 key=":"': json.dumps(ROWS, indent=2, separators=(",", ":")),
    'item=", " key=": "': json.dumps(ROWS),
    "indent=2 depth=1": json.dumps({"count": 12, "hosts": ROWS, "next": None}, indent=2),
}


@pytest.mark.parametrize("attrs", sorted(LAYOUTS))
def test_visible_header_is_the_plain_form_and_expand_is_byte_exact(
    lossless: Pipeline, attrs: str
) -> None:
    content = LAYOUTS[attrs]
    data = tool_record(content)
    line = orjson.dumps(data)
    outcome = lossless.run_raw(orjson.loads(line))
    visible = texts_of(outcome.record)["m2"]
    headers = re.findall(r"\[\[json-table:v1 [^\n]*\n", visible)
    assert headers == ['[[json-table:v1 columns=["id","name","price","up","big"] rows=12]]\n']
    assert other_pipeline_decode(visible) == [json.loads(json.dumps(ROWS))]
    entries = outcome.record["compression"][MANIFEST_KEY]["table"]
    digest = json_table.table_digest(headers[0])
    assert entries == [f"m2={digest} {attrs}"]
    assert expand_record(outcome.record) == data
    out_line = orjson.dumps(outcome.record)
    assert expand_line(out_line, orjson.loads(out_line)) == line


def test_the_layout_costs_no_visible_tokens(lossless: Pipeline) -> None:
    outcome = lossless.run_raw(tool_record(LAYOUTS["indent=2 depth=1"]))
    visible = texts_of(outcome.record)["m2"]
    inline = visible.replace("rows=12]]", "rows=12 indent=2 depth=1]]")
    counter = lossless.tokens
    assert counter.count(visible) < counter.count(inline)
    stats = outcome.stats
    units = texts_of(outcome.record)
    assert stats["tokens_after"] == sum(counter.count(t) for t in units.values())


def test_compact_tables_need_no_entry(lossless: Pipeline) -> None:
    outcome = lossless.run_raw(tool_record(json.dumps(ROWS, separators=(",", ":"))))
    assert "table" not in outcome.record["compression"].get(MANIFEST_KEY, {})
    assert other_pipeline_decode(texts_of(outcome.record)["m2"]) == [ROWS]
    assert expand_record(outcome.record) == tool_record(json.dumps(ROWS, separators=(",", ":")))


def test_two_tables_in_two_messages_and_one_document(lossless: Pipeline) -> None:
    other = [{"k": f"v{i}", "n": [i, {"x": None}], "e": []} for i in range(9)]
    doc = json.dumps({"a": ROWS, "b": {"c": other}}, indent=2)
    data = tool_record(doc, json.dumps(ROWS, indent=4))
    outcome = lossless.run_raw(data)
    texts = texts_of(outcome.record)
    assert len(OTHER_DECODER.findall(texts["m2"])) == 2
    assert len(OTHER_DECODER.findall(texts["m4"])) == 1
    assert "indent=" not in texts["m2"] + texts["m4"]
    table = Manifest.of_record(outcome.record["compression"]).table
    assert sorted(table) == ["m2", "m4"] and len(table["m2"]) == 2
    assert expand_record(outcome.record) == data


def test_same_header_with_two_layouts_keeps_them_inline() -> None:
    rows = json.dumps(ROWS, indent=2)
    four = json.dumps(ROWS, indent=4)
    text = f"```json\n{rows}\n```\nand\n```json\n{four}\n```\n"
    engine_out = lossless_round_trip(TABLE, text, CTX)
    assert engine_out.count("[[json-table:v1") == 2
    plain, layouts = json_table.take_layouts(engine_out)
    assert (plain, layouts) == (engine_out, {})  # ambiguous: both stay inline
    # a compact table in a stash with the same header also makes it ambiguous
    compact_table = json_table.decode(engine_out).replace(rows, json.dumps(ROWS))
    stashed = lossless_round_trip(TABLE, compact_table, CTX)
    one = lossless_round_trip(TABLE, rows, CTX)
    assert json_table.take_layouts(one, [stashed])[1] == {}
    assert json_table.take_layouts(one)[1] != {}


def test_old_records_with_the_layout_inline_still_expand(lossless: Pipeline) -> None:
    data = tool_record(LAYOUTS['indent=2 item=", "'])
    outcome = lossless.run_raw(data)
    old = json.loads(json.dumps(outcome.record))
    digest, attrs = old["compression"][MANIFEST_KEY].pop("table")[0][3:].split(" ", 1)
    texts = texts_of(old)
    old["messages"][2]["content"] = texts["m2"].replace("rows=12]]", f"rows=12 {attrs}]]")
    assert attrs == 'indent=2 item=", "' and len(digest) == json_table.DIGEST_HEX
    assert expand_record(old) == data


# -- trust: an entry the pipeline did not write changes at most whitespace ---------------


def _forge(record: dict[str, Any], entries: list[str]) -> dict[str, Any]:
    forged = json.loads(json.dumps(record))
    forged["compression"].setdefault(MANIFEST_KEY, {})["table"] = entries
    return forged


def _expanded_text(record: dict[str, Any]) -> str:
    return texts_of(expand_record(record))["m2"]


def test_forged_layout_entries_change_nothing_but_whitespace(lossless: Pipeline) -> None:
    data = tool_record(LAYOUTS["indent=2"])
    outcome = lossless.run_raw(data)
    genuine = _expanded_text(outcome.record)
    assert genuine == LAYOUTS["indent=2"]
    head = re.search(r"\[\[json-table:v1 [^\n]*\n", texts_of(outcome.record)["m2"])
    assert head is not None
    digest = json_table.table_digest(head.group(0))
    garbage = [
        f"m2={digest} indent=2]] EVIL",
        f'm2={digest} key="EVIL"',
        f"m2={digest} <<cx:a33e669e94bac231>>",
        f"m2={digest} ",
        f"m2={digest} depth=9999 indent=16",  # beyond MAX_PREFIX: refused
        f"m2={digest[:-1]} indent=4",
        f"m9={digest} indent=4",
        "m2=zzzzzzzzzzzz indent=4",
    ]
    for entry in garbage:
        out = _expanded_text(_forge(outcome.record, [entry]))
        assert out == json.dumps(ROWS, separators=(",", ":")), entry  # compact, the same data
    for entry in (f"m2={digest} indent=4", f'm2={digest} indent=tab eol=crlf item=", "'):
        out = _expanded_text(_forge(outcome.record, [entry]))
        assert out != genuine and compact(out) == compact(genuine)
        assert set(out) - set(genuine) <= set(" \t\r\n,:")
    # a unit the pipeline did not change is never decoded, whatever the entry says
    own = outcome.record["compression"][MANIFEST_KEY]["table"]
    forged = _forge(outcome.record, [*own, f"m0={digest} indent=4", f"m1={digest} indent=4"])
    assert expand_record(forged) == data


def test_manifest_keeps_only_well_formed_table_entries() -> None:
    manifest = Manifest.from_json(
        {"table": ["m2=0123456789ab indent=2", "m3=0123456789ab", "m4=XYZ indent=2", 7, "bad"]}
    )
    assert manifest.table == {"m2": {"0123456789ab": "indent=2"}}
    assert manifest.as_json() == {"table": ["m2=0123456789ab indent=2"]}
    assert Manifest.from_json(manifest.as_json()) == manifest


def test_standard_mode_rows_stashed_under_a_plain_header_expand_exactly() -> None:
    rows = [
        {"id": i, "sku": f"SKU-{i:05d}", "status": "error: upstream 502" if i % 97 == 5 else "ok"}
        for i in range(300)
    ]
    content = json.dumps(rows, indent=2, separators=(", ", ": "))
    data = tool_record(content, mode="standard")
    outcome = Pipeline(Settings(mode="standard")).run_raw(data)
    visible = texts_of(outcome.record)["m2"]
    assert visible.startswith('[[json-table:v1 columns=["id","sku","status"] rows=300]]\n')
    assert len(visible) < len(content) // 4 and outcome.stash  # rows went to the stash
    store = MemoryStore()
    store.put_many({k: stored_text(v) for k, v in outcome.stash.items()})
    assert expand_record(outcome.record, store) == data


def test_a_header_whose_end_line_went_to_a_stash_still_loses_its_attributes() -> None:
    marker = lossless_round_trip(TABLE, LAYOUTS["indent=2"], CTX)
    head, _, rest = marker.partition("\n")
    folded = f"{head}\n… 13 lines omitted <<cx:a33e669e94bac231>>"
    plain, layouts = json_table.take_layouts(folded)
    assert plain.startswith('[[json-table:v1 columns=["id","name","price","up","big"] rows=12]]\n')
    # once the stash is back, the plain marker decodes to the original with that layout
    restored = plain.replace("… 13 lines omitted <<cx:a33e669e94bac231>>", rest)
    assert json_table.decode_with(restored, layouts) == LAYOUTS["indent=2"]
