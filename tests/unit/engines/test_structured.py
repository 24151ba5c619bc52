"""structured: token-saving views of JSON, YAML, XML and Markdown, original stashed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from workers.core.tokens import TokenCounter
from workers.engines.base import EngineContext
from workers.engines.structured import (
    VIEW_HEADER,
    StructuredEngine,
    decode,
    structured_view,
)
from workers.testing import check_corpus_changes, expanded, make_unit

COUNTER = TokenCounter()
STRICT = EngineContext(tokens=COUNTER)
LOSSY = EngineContext(tokens=COUNTER, allow_lossy_structure=True)
MESSAGE = "connection pool exhausted, retrying later"


def records(n: int = 12) -> list[dict[str, Any]]:
    return [
        {"id": i, "message": MESSAGE, "host": f"web-{i % 3}", "ratio": 1.234567891, "note": None}
        for i in range(n)
    ]


def restored(text: str, stash: dict[str, str]) -> str:
    return decode(expanded(text, stash))


def view(
    text: str, ctx: EngineContext = STRICT, kind: str = "tool_result"
) -> tuple[str, list[str]]:
    result = structured_view(text, ctx, kind)
    assert result is not None
    new, stash, applied = result
    assert restored(new, stash) == text
    body, _, marker = new.rpartition("\n" + VIEW_HEADER)
    assert marker.startswith("… structured view (" + ", ".join(applied) + ") of a ")
    return body, applied


def test_json_minify_and_refs_without_lossy_strategies() -> None:
    text = json.dumps(records(), indent=2)
    body, applied = view(text)
    assert applied == ["minify", "dedup_values_with_refs"]
    value = json.loads(body)
    assert value["_refs"] == {"$R1": MESSAGE}
    assert value["_data"][0] == {
        "id": 0,
        "message": "$R1",
        "host": "web-0",
        "ratio": 1.234567891,
        "note": None,
    }


def test_lossy_strategies_only_when_allowed() -> None:
    text = json.dumps(records(), indent=2)
    body, applied = view(text, LOSSY)
    assert applied == [
        "minify",
        "drop_nulls",
        "tabular",
        "round_numbers",
        "dedup_values_with_refs",
        "strip_quotes",
    ]
    assert body.startswith(
        '{_refs:{"$R1":"connection pool exhausted, retrying later"},'
        '_data:{_columns:["id","message","host","ratio"],_rows:[[0,"$R1","web-0",1.2346],'
    )


def test_alias_prefix_escalates_when_data_starts_with_it() -> None:
    data = [{"ref": "$R1", "message": MESSAGE} for _ in range(12)]
    body, applied = view(json.dumps(data, indent=2))
    assert "dedup_values_with_refs" in applied
    value = json.loads(body)
    assert value["_refs"] == {"$$R1": MESSAGE}
    assert value["_data"][0] == {"ref": "$R1", "message": "$$R1"}


def test_number_lexemes_survive_minify() -> None:
    text = (
        '{\n    "a": 1.50,\n    "b": 1E+2,\n    "c": 123456789012345678901234567890,\n'
        '    "d": -0,\n    "e": "\\u00e9",\n'
        + ",\n".join(f'    "k{i}": [1.50, 2.00, 3.25]' for i in range(30))
        + "\n}"
    )
    body, applied = view(text)
    assert applied == ["minify"]
    assert body.startswith('{"a":1.50,"b":1E+2,"c":123456789012345678901234567890,"d":-0,"e":"é",')
    assert '"k0":[1.50,2.00,3.25]' in body


def test_markdown_tables_are_compacted_in_prose() -> None:
    rows = "".join(f"| test_{i:<5} | passed   | {i}.0s   |\n" for i in range(20))
    text = (
        f"Results:\n\n| name      | status   | time   |\n|-----------|----------|--------|\n{rows}"
    )
    body, applied = view(text, kind="text")
    assert applied == ["compact_tables"]
    assert body.splitlines()[2:5] == ["|name|status|time|", "|---|---|---|", "|test_0|passed|0.0s|"]


def test_html_comments_only_with_lossy() -> None:
    text = "# Notes\n\n" + "".join(f"<!-- generated block {i} -->\nline {i}\n" for i in range(40))
    assert structured_view(text, STRICT, "text") is None
    body, applied = view(text, LOSSY, kind="text")
    assert applied == ["strip_html_comments"]
    assert "<!--" not in body and "line 39" in body


def test_xml_minify() -> None:
    items = "".join(f'  <item id="{i}">\n    <name>item {i}</name>\n  </item>\n' for i in range(30))
    text = f"<?xml version='1.0'?>\n<root>\n{items}</root>"
    body, applied = view(text)
    assert applied == ["minify"]
    assert body.startswith("<?xml version='1.0'?><root><item id=\"0\"><name>item 0</name></item>")


def test_yaml_lossy_strategies() -> None:
    items = "".join(
        f'  - name: "c{i}"\n    image: "nginx"\n    cpu:   0.123456789\n    extra: ~\n'
        for i in range(15)
    )
    text = f'apiVersion: v1\nkind: Pod\nmetadata:\n  name: "web"\n  labels: null\nspec:\n{items}'
    body, applied = view(text, LOSSY)
    assert applied == ["drop_nulls", "round_numbers", "collapse_whitespace", "strip_quotes"]
    assert body.startswith(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n"
        "  - name: c0\n    image: nginx\n    cpu: 0.1235\n"
    )


def test_critical_lines_stay_visible_with_spaced_separators() -> None:
    data = [{"level": "error", "message": f"disk /dev/sd{c} failed"} for c in "abcdefghij"]
    text = json.dumps(data, indent=2)
    body, applied = view(text)
    assert applied == ["minify"]
    assert body.startswith('[{"level": "error", "message": "disk /dev/sda failed"}, {"level"')
    for line in text.splitlines():
        if "error" in line or "failed" in line:
            assert line.strip() in body


def test_decode_is_a_passthrough_without_a_view() -> None:
    for text in ("plain", "… 3 lines omitted <<cx:0123456789abcdef>>", "a <<cx:view>> b"):
        assert decode(text) == text


def test_engine_skips_frozen_reads_short_and_marked_texts() -> None:
    text = json.dumps(records(), indent=2)
    units = [
        make_unit(1, text, frozen=True),
        make_unit(2, text, command="cat data.json", tool_name="bash"),
        make_unit(3, '{"a": 1}'),
        make_unit(4, text + "\n… 3 lines omitted <<cx:0123456789abcdef>>"),
        make_unit(5, text, command="curl -s api", tool_name="bash"),
    ]
    out = StructuredEngine().apply(units, STRICT)
    assert out.texts[:4] == [u.text for u in units[:4]]
    assert out.texts[4] != text
    assert out.details == {
        "strategies": {"dedup_values_with_refs": 1, "minify": 1},
        "documents": 1,
    }
    assert restored(out.texts[4], out.stash) == text


@pytest.mark.slow
def test_corpus_every_change_expands_back_and_passes_the_gate(corpus_lines: list[bytes]) -> None:
    engine = StructuredEngine()
    assert check_corpus_changes(engine, corpus_lines, STRICT, chained=True, decode=decode)


def test_whole_text_json_min_block_is_viewed_from_its_payload() -> None:
    rows = [{"id": i, "message": MESSAGE, "host": f"web-{i % 3}"} for i in range(40)]
    text = f"[[json-min:v1 indent=2]]{json.dumps(rows, separators=(',', ':'))}[[/json-min]]"
    body, applied = view(text)
    assert applied == ["minify", "dedup_values_with_refs"]
    assert body.startswith('{"_refs":{"$R1":"connection pool exhausted, retrying later"},')
