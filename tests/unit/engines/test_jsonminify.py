"""jsonminify: exact outputs for small cases, and what it leaves alone."""

from __future__ import annotations

import json
from typing import Any

from workers.core.tokens import TokenCounter
from workers.engines import engine_class, jsontable
from workers.engines.base import EngineContext
from workers.engines.jsonminify import JsonMinifyEngine, decode
from workers.testing import lossless_round_trip, make_unit

CTX = EngineContext(tokens=TokenCounter())
ENGINE = JsonMinifyEngine()
DOC: dict[str, Any] = {
    "name": "ctxpress",
    "version": "0.1.0",
    "price": 0,
    "tags": ["json", "lossless", {"nested": [1, 2, {}]}],
    "owner": {"login": "octocat", "id": 1, "site_admin": False},
    "empty": [],
    "note": None,
    "description": "Compresses LLM chat transcripts and agent tool outputs",
}
COMPACT = (
    '{"name":"ctxpress","version":"0.1.0","price":0,"tags":["json","lossless",'
    '{"nested":[1,2,{}]}],"owner":{"login":"octocat","id":1,"site_admin":false},'
    '"empty":[],"note":null,"description":"Compresses LLM chat transcripts and agent tool outputs"}'
)


def run(text: str, kind: str = "tool_result") -> str:
    out = lossless_round_trip(ENGINE, text, CTX, kind)
    assert decode(out) == text
    return out


def test_registered() -> None:
    assert engine_class("jsonminify") is JsonMinifyEngine
    assert JsonMinifyEngine.name == "jsonminify"
    assert JsonMinifyEngine.lossless is True


def test_indent_2() -> None:
    text = json.dumps(DOC, indent=2) + "\n"
    assert run(text) == f"[[json-min:v1 indent=2]]{COMPACT}[[/json-min]]\n"
    details = ENGINE.apply([make_unit(1, text)], CTX).details
    assert details == {"documents": 1, "chars_saved": len(text) - len(run(text))}


def test_indent_4_and_crlf() -> None:
    assert run(json.dumps(DOC, indent=4)) == f"[[json-min:v1 indent=4]]{COMPACT}[[/json-min]]"
    text = json.dumps(DOC, indent=4).replace("\n", "\r\n")
    assert run(text) == f"[[json-min:v1 indent=4 eol=crlf]]{COMPACT}[[/json-min]]"


def test_js_stringify_and_python2_layouts() -> None:
    text = json.dumps(DOC, indent=2, ensure_ascii=False, separators=(",", ": "))
    assert run(text) == f"[[json-min:v1 indent=2]]{COMPACT}[[/json-min]]"
    py2 = json.dumps(DOC, indent=2, separators=(", ", ": "))
    assert run(py2) == f'[[json-min:v1 indent=2 item=", "]]{COMPACT}[[/json-min]]'


def test_compact_and_small_documents_left_alone() -> None:
    compact = json.dumps(DOC, separators=(",", ":"))
    assert run(compact) == compact
    small = json.dumps({"a": [1, 2], "b": {"c": None}}, indent=2)
    assert run(small) == small


def test_fenced_block_in_prose() -> None:
    text = "The config:\n\n```json\n" + json.dumps(DOC, indent=2) + "\n```\nDone."
    expected = f"The config:\n\n```json\n[[json-min:v1 indent=2]]{COMPACT}[[/json-min]]\n```\nDone."
    assert run(text, kind="text") == expected
    python = "```python\n" + json.dumps(DOC, indent=2) + "\n```\n"
    assert run(python, kind="text") == python


def test_indented_fence_records_the_margin() -> None:
    body = json.dumps(DOC, indent=2).replace("\n", "\n    ")
    text = f"- item\n    ```\n    {body}\n    ```\n"
    out = run(text, kind="text")
    assert (
        out
        == f"- item\n    ```\n    [[json-min:v1 indent=2 depth=2]]{COMPACT}[[/json-min]]\n    ```\n"
    )


def test_lexemes_and_escapes_survive() -> None:
    text = json.dumps({**DOC, "price": "P", "s": "S"}, indent=2)
    text = text.replace('"P"', "1.50").replace('"S"', '"caf\\u00e9 \\/ \u00e9 \\ud83d\\ude00"')
    text = text.replace('"id": 1', '"id": 12345678901234567890123').replace(
        '"nested": [\n', '"nested": [\n        -0,\n        1E+2,\n'
    )
    out = run(text)
    assert '"price":1.50,' in out
    assert '"s":"caf\\u00e9 \\/ \u00e9 \\ud83d\\ude00"' in out
    assert '"id":12345678901234567890123,' in out
    assert '"nested":[-0,1E+2,1,2,{}]' in out


def test_orjson_fallbacks_lone_surrogates_duplicate_keys_depth() -> None:
    lone = json.dumps({**DOC, "bad": "\ud800 x"}, indent=2)
    assert run(lone).startswith("[[json-min:v1 indent=2]]")
    dup = json.dumps(DOC, indent=2).replace('"empty": []', '"note": []')
    assert run(dup).startswith("[[json-min:v1 indent=2]]")
    deep: Any = DOC
    for _ in range(300):
        deep = [deep]
    text = json.dumps(deep, indent=1)
    assert run(text).startswith("[[json-min:v1 indent=1]]")


def test_irregular_whitespace_left_alone() -> None:
    text = json.dumps(DOC, indent=2).replace('"owner": {', '"owner": {   ')
    assert run(text) == text


def test_texts_with_table_markers_or_own_markers_skipped() -> None:
    rows = [{"id": i, "name": f"host-{i}"} for i in range(10)]
    text = json.dumps({"doc": DOC, "rows": rows}, indent=2)
    tabled = jsontable.JsonTableEngine().apply([make_unit(1, text)], CTX).texts[0]
    assert "[[json-table:v1 " in tabled
    assert ENGINE.apply([make_unit(1, tabled)], CTX).texts[0] == tabled
    literal = "[[json-min:v1]]\n```json\n" + json.dumps(DOC, indent=2) + "\n```"
    assert ENGINE.apply([make_unit(1, literal, kind="text")], CTX).texts[0] == literal


def test_frozen_and_deep_or_broken_input_untouched() -> None:
    text = json.dumps(DOC, indent=2)
    assert ENGINE.apply([make_unit(1, text, frozen=True)], CTX).texts[0] == text
    deep = '{"a":' * 100_000 + "1" + "}" * 100_000
    assert run(deep) == deep
    assert run(text[:-1]) == text[:-1]


def test_decode_leaves_malformed_markers_as_text() -> None:
    for text in (
        "[[json-min:v1 indent=2]]{}",
        "[[json-min:v1 indent=x]]{}[[/json-min]]",
        "[[json-min:v1 indent=2]]hello[[/json-min]]",
        "[[json-min:v1 indent=2]]{]]}[[/json-min]]",
        "plain {text}",
    ):
        assert decode(text) == text
    assert decode('a [[json-min:v1 indent=1]]{"b":[]}[[/json-min]] c') == 'a {\n "b": []\n} c'
