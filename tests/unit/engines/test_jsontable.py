"""jsontable: exact outputs for small cases, and what it leaves alone."""

from __future__ import annotations

import json

from workers.core.tokens import TokenCounter
from workers.engines import engine_class
from workers.engines.base import EngineContext
from workers.engines.jsontable import JsonTableEngine, decode
from workers.testing import lossless_round_trip, make_unit

CTX = EngineContext(tokens=TokenCounter())
ENGINE = JsonTableEngine()
ROWS = [{"id": i, "name": f"host-{i}", "up": i % 3 != 0} for i in range(8)]
BODY = (
    '[0,"host-0",false]\n[1,"host-1",true]\n[2,"host-2",true]\n[3,"host-3",false]\n'
    '[4,"host-4",true]\n[5,"host-5",true]\n[6,"host-6",false]\n[7,"host-7",true]\n'
    "[[/json-table]]"
)
COLUMNS = 'columns=["id","name","up"] rows=8'


def run(text: str, kind: str = "tool_result") -> str:
    out = lossless_round_trip(ENGINE, text, CTX, kind)
    assert decode(out) == text
    return out


def test_registered() -> None:
    assert engine_class("jsontable") is JsonTableEngine
    assert JsonTableEngine.name == "jsontable"
    assert JsonTableEngine.lossless is True


def test_indent_2_with_trailing_newline() -> None:
    text = json.dumps(ROWS, indent=2) + "\n"
    assert run(text) == f"[[json-table:v1 {COLUMNS} indent=2]]\n{BODY}\n"


def test_indent_4() -> None:
    assert run(json.dumps(ROWS, indent=4)) == f"[[json-table:v1 {COLUMNS} indent=4]]\n{BODY}"


def test_compact_has_the_plain_header() -> None:
    text = json.dumps(ROWS, separators=(",", ":"))
    assert run(text) == f"[[json-table:v1 {COLUMNS}]]\n{BODY}"


def test_python_default_separators() -> None:
    expected = f'[[json-table:v1 {COLUMNS} item=", " key=": "]]\n{BODY}'
    assert run(json.dumps(ROWS)) == expected


def test_crlf_and_tab_indent() -> None:
    text = json.dumps(ROWS, indent="\t").replace("\n", "\r\n")
    assert run(text) == f"[[json-table:v1 {COLUMNS} indent=tab eol=crlf]]\n{BODY}"


def test_nested_array_inside_an_object() -> None:
    text = json.dumps({"count": 8, "items": ROWS, "next": None}, indent=2)
    assert run(text) == (
        '{\n  "count": 8,\n  "items": '
        f"[[json-table:v1 {COLUMNS} indent=2 depth=1]]\n{BODY}"
        ',\n  "next": null\n}'
    )


def test_two_tables_in_one_document() -> None:
    other = [{"k": f"v{i}", "n": [i, {"x": None}]} for i in range(9)]
    text = json.dumps({"a": ROWS, "b": {"c": other}}, indent=2)
    out = run(text)
    assert out.count("[[json-table:v1 ") == 2
    assert (
        '[[json-table:v1 columns=["k","n"] rows=9 indent=2 depth=2]]\n["v0",[0,{"x":null}]]\n'
        in out
    )
    details = ENGINE.apply([make_unit(1, text)], CTX).details
    assert details == {"tables": 2, "rows": 17}


def test_fenced_block_in_assistant_prose() -> None:
    text = "Here are the hosts:\n\n```json\n" + json.dumps(ROWS, indent=2) + "\n```\n\nAll good."
    assert run(text, kind="text") == (
        f"Here are the hosts:\n\n```json\n[[json-table:v1 {COLUMNS} indent=2]]\n{BODY}\n```\n\nAll good."
    )


def test_tilde_fence_inside_a_list_item() -> None:
    body = json.dumps(ROWS, indent=2).replace("\n", "\n   ")
    text = f"1. result:\n   ~~~\n   {body}\n   ~~~\n"
    assert run(text, kind="text") == (
        f"1. result:\n   ~~~\n   [[json-table:v1 {COLUMNS} indent=2 margin=3]]\n{BODY}\n   ~~~\n"
    )


def test_lexemes_and_escapes_survive() -> None:
    row = (
        '  {{"id": {i}, "price": 1.50, "big": 12345678901234567890, "e": 1E+2, '
        '"z": -0, "s": "caf\\u00e9 \\/ \u00e9"}}'
    )
    text = "[\n" + ",\n".join(row.format(i=i) for i in range(8)) + "\n]"
    # rows on one line each: not a layout json.dumps writes, so left alone
    assert run(text) == text
    pretty = json.dumps([{"id": i, "price": "P", "s": "S"} for i in range(8)], indent=2)
    pretty = pretty.replace('"P"', "1.50").replace('"S"', '"caf\\u00e9 \\/ \u00e9 \\ud83d\\ude00"')
    out = run(pretty)
    assert out.startswith('[[json-table:v1 columns=["id","price","s"] rows=8 indent=2]]\n')
    assert '\n[3,1.50,"caf\\u00e9 \\/ \u00e9 \\ud83d\\ude00"]\n' in out
    big = json.dumps([{"n": 10**30 + i, "x": -0.0, "f": 1e100} for i in range(8)], indent=2)
    big = big.replace("1e+100", "1E+100")
    out = run(big)
    assert "\n[1000000000000000000000000000007,-0.0,1E+100]\n" in out


def test_non_uniform_array_left_alone() -> None:
    rows = [dict(r) for r in ROWS]
    rows[5] = {"name": "host-5", "id": 5, "up": True}  # same keys, other order
    assert run(json.dumps(rows, indent=2)) == json.dumps(rows, indent=2)
    rows[5] = {"id": 5, "name": "host-5"}  # a key missing
    assert run(json.dumps(rows, indent=2)) == json.dumps(rows, indent=2)


def test_short_arrays_and_scalars_left_alone() -> None:
    assert run(json.dumps(ROWS[:7], indent=2)) == json.dumps(ROWS[:7], indent=2)
    numbers = json.dumps(list(range(100)), indent=2)
    assert run(numbers) == numbers


def test_whole_text_json_only_in_tool_results() -> None:
    text = json.dumps(ROWS, indent=2)
    assert ENGINE.apply([make_unit(1, text, kind="text")], CTX).texts[0] == text


def test_frozen_units_and_marker_literals_untouched() -> None:
    text = json.dumps(ROWS, indent=2)
    assert ENGINE.apply([make_unit(1, text, frozen=True)], CTX).texts[0] == text
    literal = "see [[json-table:v1 columns=[] rows=0]]\n```json\n" + text + "\n```"
    assert ENGINE.apply([make_unit(1, literal)], CTX).texts[0] == literal


def test_invalid_json_and_deep_nesting_left_alone() -> None:
    broken = json.dumps(ROWS, indent=2)[:-1]
    assert run(broken) == broken
    deep = "[" * 100_000 + "]" * 100_000
    assert run(deep) == deep


def test_inflating_tables_are_skipped() -> None:
    tiny = json.dumps([{"a": 1} for _ in range(8)], separators=(",", ":"))
    assert run(tiny) == tiny


def test_duplicate_keys_left_alone() -> None:
    text = "[\n" + ",\n".join(f'  {{\n    "a": {i},\n    "a": 2\n  }}' for i in range(8)) + "\n]"
    assert run(text) == text


def test_decode_leaves_malformed_markers_as_text() -> None:
    for text in (
        '[[json-table:v1 columns=["a"] rows=2]]\n[1]\n[[/json-table]]',
        '[[json-table:v1 columns=["a"] rows=1 indent=x]]\n[1]\n[[/json-table]]',
        '[[json-table:v1 columns=["a"] rows=1]]\n[1,2]\n[[/json-table]]',
        '[[json-table:v1 columns=["a"] rows=1]]\n[1]\n',
        "no markers [here] [[json-table:v1 ",
    ):
        assert decode(text) == text
    good = '[[json-table:v1 columns=["a"] rows=1]]\n[1]\n[[/json-table]]'
    assert decode("[[json-table:v1 x " + good) == '[[json-table:v1 x [{"a":1}]'


def test_decode_of_the_plain_format_gives_compact_json() -> None:
    marker = '[[json-table:v1 columns=["id","name"] rows=2]]\n[1,"a"]\n[2,"b"]\n[[/json-table]]'
    assert decode(marker) == '[{"id":1,"name":"a"},{"id":2,"name":"b"}]'


def test_a_document_that_ends_a_text_after_other_lines() -> None:
    # curl -v: request and response headers, curl's progress line, then the body
    head = (
        "> GET /api/v2/hosts HTTP/1.1\n> Host: 127.0.0.1:7491\n>\n< HTTP/1.0 200 OK\n"
        "< Content-Type: application/json\n<\n{ [412 bytes data]\n"
    )
    body = json.dumps({"hosts": ROWS * 4, "count": 32})
    out = run(head + body + "\n")
    assert out.startswith(head) and "[[json-table:v1 " in out
    # a JSON-lines log after a banner is no document: left alone
    lines = "starting\n" + "\n".join(json.dumps(row) for row in ROWS * 8) + "\n"
    assert run(lines) == lines
    # nor is a body that other output broke (curl's stderr inside it)
    broken = head + body[:200] + "* Closing connection 0\n" + body[200:] + "\n"
    assert run(broken) == broken
