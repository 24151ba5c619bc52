"""Issue 11's lossless reproducers and the one JSON decoder rule (issue 11, issue 12 item 4).

Every line here is valid JSON and a valid record unless it is a poison; lossless
``compress`` then ``expand`` must give it back byte for byte, through the same
functions the CLI runs, and through the CLI itself for the crash reproducers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from workers.cli import main as cli_main
from workers.core.jsonbytes import encode_string, spelling_of, splice, string_spans
from workers.core.jsonl import BadLine, decode_line, dump_layout
from workers.core.settings import Settings
from workers.pipeline.batch import compress_lines
from workers.pipeline.expand import expand_line, expand_record
from workers.pipeline.runner import Pipeline
from workers.service.process import Processor
from workers.service.records import InMessage
from workers.service.topics import TopicNames
from workers.testing.worker import gate_rejecting_pipeline

LOSSLESS = Pipeline(Settings(mode="lossless"))
ROWS = [
    {"id": i, "name": f"café {i}", "path": f"/srv/app/{i}.py", "ok": i % 2 == 0} for i in range(10)
]
TABLE = json.dumps(
    ROWS, indent=2, ensure_ascii=False
)  # a tool output the jsontable engine rewrites
SUR = b'{"id":"sur","ts":"1234567890123456789","messages":[{"role":"user","content":"x\\ud800y"}]}'
NAN_BIG = b'{"id":"n2","v":NaN,"big":12345678901234567890123,"messages":[]}'


def compress(line: bytes) -> tuple[bytes | None, dict[str, Any] | None, dict[str, Any]]:
    """(written compressed line, dead letter, compression object) of one input line."""
    (result,) = list(compress_lines([line], LOSSLESS))
    if result.outcome is None:
        return None, result.dead_letter, {}
    return result.encoded(), None, result.outcome.record["compression"]


def round_trip(line: bytes) -> bytes:
    written, dead_letter, _ = compress(line + b"\n")
    assert written is not None, dead_letter
    json.loads(written)  # strict JSON out
    value = decode_line(written, 1, 1 << 62)
    assert not isinstance(value, BadLine)
    return expand_line(written, value)


def tool_record(content_token: str, sep: str = ",", colon: str = ":") -> bytes:
    """An OpenAI record whose tool message content is written as ``content_token``."""
    return (
        f'{{"id"{colon}"r1"{sep}"messages"{colon}[{{"role"{colon}"user"{sep}"content"{colon}"list"}}{sep}'
        f'{{"role"{colon}"tool"{sep}"content"{colon}{content_token}}}]}}'
    ).encode()


@pytest.mark.parametrize(
    "line",
    [
        b'{"id":"a","messages":[{"role":"user","content":"caf\\u00e9"}]}',
        b'{"id":"a","messages":[{"role":"user","content":"caf\\u00E9"}]}',
        b'{"id":"a","messages":[{"role":"user","content":"a\\/b"}]}',
        b'{"id":"a","messages":[{"role":"user","content":"\\ud83d\\ude00 \\uD83D\\uDE00"}]}',
        b'{"id":"a","v":1.50,"w":1e5,"x":-0,"y":1E+2,"messages":[]}',
        b'{"id":"a","big":123456789012345678901234567890,"huge":1e400,"messages":[]}',
        b'{"id":\t"a",  "messages" :\t[ ] }',
        b'{"id": "a","messages": []}',
        b'   {"id":"a","messages":[]}  ',
        b'{"id":"a","messages":[]}\r',
        b'{"id":"c","id":"d","messages":[]}',
    ],
)
def test_issue_reproducers_come_back_byte_for_byte(line: bytes) -> None:
    assert round_trip(line) == line


@pytest.mark.parametrize(
    ("style", "token"),
    [
        ("utf8", json.dumps(TABLE, ensure_ascii=False)),
        ("ascii", json.dumps(TABLE)),
        ("ascii+upper", json.dumps(TABLE).replace("\\u00e9", "\\u00E9")),
        ("utf8+slash", json.dumps(TABLE, ensure_ascii=False).replace("/", "\\/")),
        ("ascii+slash", json.dumps(TABLE).replace("/", "\\/")),
        (None, json.dumps(TABLE).replace("\\u00e9", "é", 1)),  # mixed: no one style
    ],
)
def test_a_changed_string_goes_back_in_its_own_spelling(style: str | None, token: str) -> None:
    for line in (
        tool_record(token),
        tool_record(token, ", ", ": "),
        tool_record(token, " ,\t", " : "),
    ):
        written, _, comp = compress(line + b"\r\n")
        assert written is not None
        assert comp["changed"] == ["m1"]
        wire = orjson.loads(written)["compression"]
        if style is None:
            assert wire["verbatim"] == {"m1": token[1:-1]}
        elif style != "utf8":
            assert wire["spelling"] == {"m1": style}
        assert len(written) < len(line) + 1200 or style is None  # the table did shrink
        value = decode_line(written, 1, 1 << 62)
        assert expand_line(written, value) == line + b"\r"


def test_layouts_that_worked_before_keep_their_output() -> None:
    """orjson and json.dumps lines: the record is written compact, named by ``layout``."""
    record = {
        "id": "a",
        "messages": [{"role": "user", "content": "x"}, {"role": "tool", "content": TABLE}],
    }
    for line, layout in (
        (orjson.dumps(record), "compact"),
        (json.dumps(record).encode(), "python"),
        (json.dumps(record, ensure_ascii=False).encode(), "python-utf8"),
    ):
        (result,) = list(compress_lines([line + b"\n"], LOSSLESS))
        assert result.outcome is not None and result.output is None
        assert result.outcome.record["compression"]["layout"] == layout
        assert result.encoded() == dump_layout(result.outcome.record, None)
        value = decode_line(result.encoded(), 1, 1 << 62)
        assert expand_line(result.encoded(), value) == line


def test_duplicate_keys_are_kept_and_the_last_one_is_compressed() -> None:
    token = json.dumps(TABLE)
    line = (
        b'{"id":"c","id":"d","messages":[{"role":"tool","content":"first","content":'
        + token.encode()
        + b"}]}"
    )
    written, _, comp = compress(line + b"\n")
    assert written is not None and comp["changed"] == ["m0"]
    assert written.count(b'"id":') == 2 + written.count(b'"id":', written.index(b'"compression"'))
    assert b'"content":"first"' in written  # the shadowed value is not merged away
    assert orjson.loads(written)["id"] == "d"
    assert expand_line(written, decode_line(written, 1, 1 << 62)) == line


def test_a_compressed_line_rewritten_after_compress_still_expands_to_the_record() -> None:
    line = tool_record(json.dumps(TABLE).replace("/", "\\/"))
    written, _, _ = compress(line + b"\n")
    assert written is not None
    rewritten = json.dumps(json.loads(written)).encode()  # e.g. piped through a JSON tool
    value = decode_line(rewritten, 1, 1 << 62)
    restored = expand_line(rewritten, value)
    assert orjson.loads(restored) == json.loads(line)


# -- one decoder rule -------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b'{"v":NaN}', "NaN and Infinity are not JSON numbers"),
        (b'{"v":[Infinity]}', "NaN and Infinity are not JSON numbers"),
        (b'{"v":-Infinity}', "NaN and Infinity are not JSON numbers"),
        (NAN_BIG, "NaN and Infinity are not JSON numbers"),
        (SUR, "lone UTF-16 surrogate"),
        (b'{"a":"\\udc00"}', "lone UTF-16 surrogate"),
        (b'{"a":1e400,"s":"\\ud800"}', "lone UTF-16 surrogate"),
        (b'{"a":1e400,"s":NaN}', "NaN is not a JSON number"),
        (b'{"a":"caf\xc3"}', "not valid UTF-8"),
        (b'{"a":1e400,"s":"\xff"}', "not valid UTF-8"),
        (b'{"a":"x\x01"}', "control character"),
    ],
)
def test_non_json_is_a_bad_line_with_its_reason(raw: bytes, words: str) -> None:
    value = decode_line(raw, 3, 1 << 30)
    assert isinstance(value, BadLine)
    assert value.reason.startswith("line 3: not valid JSON (")
    assert words in value.reason


def test_numbers_are_kept_exactly() -> None:
    value = decode_line(b'{"a":123456789012345678901234567890,"b":1e400,"c":-1e400,"d":1.5}', 1, 99)
    assert value["a"] == 123456789012345678901234567890 and value["d"] == 1.5
    assert (
        dump_layout(value, None)
        == b'{"a":123456789012345678901234567890,"b":1e400,"c":-1e400,"d":1.5}'
    )
    digits = b"9" * 5000
    huge = decode_line(b'{"n":' + digits + b',"m":12345678901234567890}', 1, 1 << 20)
    assert dump_layout(huge, None) == b'{"n":' + digits + b',"m":12345678901234567890}'


def test_the_cli_dead_letters_the_crash_reproducers_and_goes_on(tmp_path: Path) -> None:
    good = b'{"id":"ok","messages":[{"role":"user","content":"caf\\u00e9"}]}'
    (tmp_path / "in.jsonl").write_bytes(SUR + b"\n" + NAN_BIG + b"\n" + good + b"\n")
    rc = cli_main(
        ["compress", "--mode", "lossless", "-i", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "out.jsonl"),
         "--dead-letter", str(tmp_path / "dlq.jsonl"), "--quiet", "--progress", "never"]
    )  # fmt: skip
    assert rc == 0
    letters = [orjson.loads(x) for x in (tmp_path / "dlq.jsonl").read_bytes().splitlines()]
    assert [(x["source"]["line"], x["stage"], x["error_class"]) for x in letters] == [
        (1, "decode", "InvalidJSON"),
        (2, "decode", "InvalidJSON"),
    ]
    assert "surrogate" in letters[0]["reason"] and "NaN" in letters[1]["reason"]
    out = (tmp_path / "out.jsonl").read_bytes()
    assert out.count(b"\n") == 1 and b"NaN" not in out
    assert (
        cli_main(["expand", "-i", str(tmp_path / "out.jsonl"), "-o", str(tmp_path / "back.jsonl")])
        == 0
    )
    assert (tmp_path / "back.jsonl").read_bytes() == good + b"\n"


NAMES = TopicNames.from_prefix("t.")


@pytest.mark.parametrize("raw", [SUR, NAN_BIG, b'{"id":"n3","v":Infinity,"messages":[]}'])
def test_the_worker_dead_letters_them_too(raw: bytes) -> None:
    processor = Processor(gate_rejecting_pipeline(Settings()), NAMES, "group-1")
    result = processor.process(InMessage(NAMES.transcripts, 0, 5, None, b"k", raw))
    assert not result.ok
    assert result.stage == "decode"
    assert [o.topic for o in result.outputs] == [NAMES.dead_letter]
    assert "not valid JSON" in (result.reason or "")


def test_the_worker_publishes_big_numbers_as_json() -> None:
    raw = b'{"id":"n4","big":12345678901234567890123,"f":1e400,"messages":[{"role":"user","content":"hi"}]}'
    processor = Processor(gate_rejecting_pipeline(Settings()), NAMES, "group-1")
    result = processor.process(InMessage(NAMES.transcripts, 0, 6, None, b"k", raw))
    assert result.ok
    published = result.outputs[0].value
    assert published is not None
    assert b'"big":12345678901234567890123' in published and b'"f":1e400' in published
    json.loads(published, parse_constant=lambda name: pytest.fail(f"{name} published"))


# -- the byte tools ---------------------------------------------------------------


def test_string_spans_follow_paths_and_the_last_duplicate() -> None:
    raw = b'{"a" : ["x", {"b":"y","b" :"z"}], "c":{"d":[1,"\\"q\\""]},"a":[ "w" ]}'
    spans = string_spans(raw, [("a", 0), ("c", "d", 1), ("a", 1, "b"), ("missing",)])
    assert {p: raw[s:e] for p, (s, e) in spans.items()} == {
        ("a", 0): b'"w"',  # the last "a" wins, as in every parser
        ("a", 1, "b"): b'"z"',  # only the first "a" has an index 1
        ("c", "d", 1): b'"\\"q\\""',
    }
    assert splice(raw, [(s, e, b'"N"') for s, e in spans.values()]).count(b'"N"') == 3


def test_spellings() -> None:
    assert encode_string("é/<", "ascii+upper+slash+html") == b'"\\u00E9\\/\\u003C"'
    assert encode_string("\u2028<", "utf8+html") == b'"\\u2028\\u003c"'
    assert encode_string("\x7f", "ascii") == b'"\\u007f"'
    assert spelling_of("\x7f", b'"\\u007f"') == "ascii"
    assert spelling_of("é", b'"\\u00e9"') == "ascii"
    assert spelling_of("éé", b'"\\u00e9\\u00E9"') is None
    assert spelling_of("a", b'"\\u0061"') is None
    with pytest.raises(ValueError, match="unknown string spelling"):
        encode_string("x", "latin1")


def test_expand_record_is_unchanged_for_callers_of_the_dict_api() -> None:
    (result,) = list(compress_lines([tool_record(json.dumps(TABLE)) + b"\n"], LOSSLESS))
    assert result.outcome is not None
    assert expand_record(result.outcome.record) == json.loads(tool_record(json.dumps(TABLE)))


@pytest.mark.parametrize(
    "value",
    [
        {"id": "a", "messages": [], "t": "del\x7f"},
        {"id": "a", "t": "é"},
        {"id": "a", "t": "plain"},
        {},
        [1, 2],
        {"id": "a", "t": "tab\there"},
    ],
)
def test_layout_detection_skips_only_layouts_that_cannot_match(value: Any) -> None:
    from workers.core.jsonl import LAYOUTS, detect_layout

    for name, dump in LAYOUTS.items():
        line = dump(value)
        full_order = (
            ("python", "compact", "python-utf8")
            if line.isascii()
            else ("python-utf8", "compact", "python")
        )
        if b'": ' not in line:
            full_order = ("compact", "python", "python-utf8")
        first = next(n for n in full_order if LAYOUTS[n](value) == line)
        assert detect_layout(line, value) == first, name


def test_an_escaped_del_in_upper_case_hex_is_recognised() -> None:
    # found by the whole-line suite: only ensure_ascii escapes DEL, in either hex case
    assert spelling_of("\x7f", b'"\\u007F"') == "ascii+upper"


def test_the_worker_writes_any_valid_line_back_byte_for_byte() -> None:
    """The compressed topic keeps the input's bytes (only changed strings spliced in)."""
    from workers.core.offload import MemoryStore
    from workers.core.settings import Settings
    from workers.pipeline.expand import expand_line
    from workers.pipeline.factory import build_pipeline
    from workers.service.process import Processor
    from workers.service.records import InMessage
    from workers.service.topics import TopicNames

    settings = Settings(mode="lossless")
    names = TopicNames.from_settings(settings)
    processor = Processor(build_pipeline(settings), names, "test", deterministic=True)
    table = ",\n".join(
        f'  {{"id": {i}, "name": "caf\\u00e9 {i}", "price": 1.50}}' for i in range(12)
    )
    content = "[\n" + table + "\n]"
    line = (
        '{"id": "w1",  "messages": [{"role":"user","content":"caf\\u00e9"},'
        '{"role": "tool", "tool_call_id": "c", "content": ' + orjson.dumps(content).decode() + "}]}"
    ).encode()
    result = processor.process(InMessage(names.transcripts, 0, 0, None, None, line))
    assert result.ok, result.reason
    out = result.outputs[0].value
    assert b'"layout":"bytes"' in out and b'"id": "w1",  "messages"' in out
    assert expand_line(out, decode_line(out, 1, 1 << 62), MemoryStore()) == line
