"""Whole JSONL lines as people write them: lossless compress then expand gives the line back.

Each example is one input line built token by token: random whitespace
between tokens (none, spaces, tabs), every string spelled its own way (UTF-8
or ``\\u00e9``/``\\u00E9`` escapes, ``\\/``, escaped surrogate pairs, short or
``\\u`` control escapes, or each character differently), numbers such as
``1.50``, ``1e5``, ``-0``, ``1E+2``, big integers and ``1e400``, nested JSON
documents and repeated blocks in content strings (so the lossless engines do
change them), empty arrays, duplicate keys, leading and trailing spaces and
CR LF line ends.  Some lines carry a poison that is not JSON (``NaN``,
``Infinity``, a lone surrogate escape, invalid UTF-8, a raw control
character).  Through the functions the CLI runs (``compress_lines`` and
``LineResult.encoded`` for ``ctxpress compress``; ``decode_line`` and
``expand_line`` for ``ctxpress expand``) every line ends as a compressed line
whose expansion is the input line byte for byte, or, for a poisoned line, as
a dead letter; nothing raises.

Examples per test: 200 by default.  Longer runs:
``CTXPRESS_FUZZ_EXAMPLES=20000 .venv/bin/python -m pytest tests/property/test_line_roundtrip.py``.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from workers.cli import main as cli_main
from workers.core.jsonbytes import encode_string, spelling_of, string_spans
from workers.core.jsonl import BadLine, decode_line
from workers.core.settings import Settings
from workers.pipeline.batch import compress_lines
from workers.pipeline.expand import expand_line
from workers.pipeline.runner import Pipeline

EXAMPLES = int(os.environ.get("CTXPRESS_FUZZ_EXAMPLES", "200"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PIPELINES = {mode: Pipeline(Settings(mode=mode)) for mode in ("lossless", "off")}

# -- a JSON document as a tree that keeps duplicate keys and number lexemes --------


@dataclass(frozen=True)
class Str:
    text: str


@dataclass(frozen=True)
class Raw:  # a number, true/false/null, or a poison such as NaN, written as is
    literal: str


@dataclass(frozen=True)
class Arr:
    items: tuple[Any, ...]


@dataclass(frozen=True)
class Obj:
    members: tuple[tuple[str, Any], ...]


NUMBERS = (
    "0", "-0", "1.50", "1e5", "1E+2", "-12.5e-3", "3.14159", "0.0", "2.5E-3", "1e400",
    "-1e400", "123456789012345678901234567890", "-9223372036854775809", "18446744073709551616",
    "1" * 400, "42", "-7", "1e-400",
)  # fmt: skip
SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
chars = st.characters(exclude_categories=("Cs",))  # lone surrogates are poisons, below
texts = st.text(chars, max_size=40)


def spell_char(char: str, how: str) -> str:
    """One character in a string token: ``lit``, ``lower``/``upper`` (\\u escapes), ``short``."""
    code = ord(char)
    if how in ("lower", "upper"):
        if code > 0xFFFF:
            code -= 0x10000
            units = (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))
        else:
            units = (code,)
        out = "".join(f"\\u{unit:04x}" for unit in units)
        return out.upper().replace("\\U", "\\u") if how == "upper" else out
    if char in SHORT:
        return SHORT[char]
    if code < 0x20:
        return f"\\u{code:04x}"
    if char == "/" and how == "short":
        return "\\/"
    return char


def spell(text: str, rnd: random.Random) -> str:
    """A string token for ``text``: one rule for the whole string, or each character its own."""
    if rnd.random() < 0.3:
        return (
            '"'
            + "".join(spell_char(c, rnd.choice(("lit", "lower", "upper", "short"))) for c in text)
            + '"'
        )
    non_ascii = rnd.choice(("lit", "lower", "upper"))
    slash = rnd.choice(("lit", "short"))
    control = rnd.choice(("short", "lower", "upper"))
    out = []
    for char in text:
        if char == "/":
            out.append(spell_char(char, slash))
        elif ord(char) < 0x20:
            out.append(spell_char(char, control if char in SHORT else "lower"))
        elif ord(char) > 0x7E:
            out.append(spell_char(char, non_ascii))
        else:
            out.append(spell_char(char, "lit"))
    return '"' + "".join(out) + '"'


def write(node: Any, rnd: random.Random, ws: tuple[str, ...]) -> str:
    def gap() -> str:
        return rnd.choice(ws)

    if isinstance(node, Str):
        return spell(node.text, rnd)
    if isinstance(node, Raw):
        return node.literal
    if isinstance(node, Arr):
        if not node.items:
            return "[" + gap() + "]"
        inner = ("," + gap()).join(gap() + write(item, rnd, ws) + gap() for item in node.items)
        return "[" + inner + "]"
    members = [
        gap() + spell(key, rnd) + gap() + ":" + gap() + write(value, rnd, ws) + gap()
        for key, value in node.members
    ]
    return "{" + ",".join(members) + "}" if members else "{" + gap() + "}"


# -- records ----------------------------------------------------------------


@st.composite
def json_content(draw: st.DrawFn) -> str:
    """A JSON document as a tool would print it (jsontable / jsonminify change these)."""
    keys = draw(
        st.lists(st.text("abcdéf_/", min_size=1, max_size=5), min_size=1, max_size=4, unique=True)
    )
    cell = st.one_of(
        st.none(), st.booleans(), st.integers(-(10**25), 10**25),
        st.floats(allow_nan=False, allow_infinity=False), texts,
    )  # fmt: skip
    rows = draw(st.lists(st.fixed_dictionaries({k: cell for k in keys}), min_size=8, max_size=12))
    doc: Any = rows if draw(st.booleans()) else {"items": rows, "count": len(rows)}
    indent = draw(st.sampled_from([None, 2, 4, "\t"]))
    return json.dumps(doc, indent=indent, ensure_ascii=draw(st.booleans()))


@st.composite
def contents(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["json", "json", "repeat", "text", "path"]))
    if kind == "json":
        return draw(json_content())
    if kind == "repeat":
        line = draw(st.text(chars, min_size=20, max_size=40)).replace("\n", " ")
        block = "\n".join(f"{line} {i}" for i in range(6))
        return f"{block}\n\n{draw(texts)}\n\n{block}"
    if kind == "path":
        return "see /usr/lib/café/<x> & https://example.com/a/b\u2028end"
    return draw(texts)


def scalar_nodes() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(NUMBERS).map(Raw),
        st.sampled_from(["true", "false", "null"]).map(Raw),
        texts.map(Str),
    )


extra_values = st.recursive(
    scalar_nodes(),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda xs: Arr(tuple(xs))),
        st.lists(st.tuples(st.text("xyz", min_size=1, max_size=3), inner), max_size=4).map(
            lambda ms: Obj(tuple(ms))
        ),
    ),
    max_leaves=12,
)


@st.composite
def messages(draw: st.DrawFn, anthropic: bool) -> Arr:
    out = []
    for i in range(draw(st.integers(0, 4))):
        role = (
            ("user", "assistant")[i % 2]
            if anthropic
            else draw(st.sampled_from(["system", "user", "assistant", "tool", "tool", "tool"]))
        )
        text = Str(draw(contents()))
        if anthropic:
            block = draw(st.sampled_from(["text", "tool_result"]))
            if block == "text":
                body: Any = Arr((Obj((("type", Str("text")), ("text", text))),))
            else:
                body = Arr(
                    (
                        Obj(
                            (
                                ("type", Str("tool_result")),
                                ("tool_use_id", Str("t1")),
                                ("content", text),
                            )
                        ),
                    )
                )
        elif draw(st.booleans()):
            body = text
        else:
            body = draw(
                st.sampled_from(
                    [Raw("null"), Arr(()), Arr((Obj((("type", Str("text")), ("text", text))),))]
                )
            )
        members: list[tuple[str, Any]] = [("role", Str(role)), ("content", body)]
        if draw(st.integers(0, 9)) == 0:  # a duplicate key inside a message (the last one counts)
            members.insert(1, ("content", Str(draw(texts))))
        out.append(Obj(tuple(members)))
    return Arr(tuple(out))


@st.composite
def records(draw: st.DrawFn) -> Obj:
    shape = draw(st.sampled_from(["openai", "openai", "anthropic", "tool_output"]))
    rid: Any = draw(  # a record id is a non-empty string or an integer (id_problem)
        st.one_of(
            texts.filter(bool).map(Str), st.sampled_from(["7", "12345678901234567890123"]).map(Raw)
        )
    )
    members: list[tuple[str, Any]] = [("id", rid)]
    if shape == "tool_output":
        members += [("kind", Str("tool_output")), ("content", Str(draw(contents())))]
        if draw(st.booleans()):
            members.append(
                ("command", Str(draw(st.sampled_from(["cat a.json", "ls /tmp", "curl -s x"]))))
            )
    elif shape == "anthropic":
        members += [
            ("format", Str("anthropic")),
            ("system", Str(draw(texts))),
            ("messages", draw(messages(True))),
        ]
    else:
        members.append(("messages", draw(messages(False))))
    for _ in range(draw(st.integers(0, 2))):
        members.append((draw(st.sampled_from(["x_meta", "x_n", "x/é"])), draw(extra_values)))
    draw(st.randoms()).shuffle(members)
    duplicate = draw(st.sampled_from([None, None, None, "id", "extra", "messages"]))
    if duplicate == "id":
        members.insert(0, ("id", Str("shadowed")))
    elif duplicate == "extra":
        members += [("x_dup", Raw("1.50")), ("x_dup", Str("second"))]
    elif duplicate == "messages" and shape == "openai":
        members.insert(
            0, ("messages", Arr((Obj((("role", Str("user")), ("content", Str("old")))),)))
        )
    return Obj(tuple(members))


POISONS = ("NaN", "Infinity", "-Infinity", "lone-high", "lone-low", "bad-utf8", "cesu", "control")


def poison_line(line: bytes, poison: str, rnd: random.Random) -> bytes:
    """``line`` (a JSON object) with one thing in it that is not JSON."""
    if poison in ("NaN", "Infinity", "-Infinity"):
        return line[:1] + b'"x_bad":' + poison.encode() + b"," + line[1:]
    token = {
        "lone-high": b'"a\\ud83dz"',
        "lone-low": b'"\\udc00"',
        "bad-utf8": b'"caf\xc3"',
        "cesu": b'"\xed\xa0\x80"',
        "control": b'"a\x01b"',
    }[poison]
    if rnd.random() < 0.5:
        return line[:1] + b'"x_bad":' + token + b"," + line[1:]
    return line[:1] + token + b":1," + line[1:]  # as a key


@st.composite
def lines(draw: st.DrawFn) -> tuple[bytes, str | None]:
    """(one input line with its line end, the poison in it or None)."""
    rnd = draw(st.randoms())
    ws = draw(st.sampled_from([("",), (" ",), ("", " ", "  ", "\t", " \t")]))
    body = write(draw(records()), rnd, ws).encode("utf-8")
    poison = draw(st.sampled_from((None,) * 6 + POISONS))
    if poison is not None:
        body = poison_line(body, poison, rnd)
    lead = draw(st.sampled_from(["", "", " ", "\t ", "  "]))
    trail = draw(st.sampled_from(["", "", " ", "\t", "  \t"]))
    eol = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    return lead.encode() + body + trail.encode() + eol.encode(), poison


# -- what the CLI does ------------------------------------------------------


def strict_json(raw: bytes) -> Any:
    def no_constant(name: str) -> Any:
        raise AssertionError(f"{name} in output")

    return json.loads(raw, parse_constant=no_constant)


def compress_then_expand(line: bytes, mode: str) -> tuple[bytes | None, dict[str, Any] | None]:
    """(the expanded line, None) or (None, the dead letter), as ``ctxpress`` would."""
    (result,) = list(compress_lines([line], PIPELINES[mode]))
    if result.outcome is None:
        assert result.dead_letter is not None
        return None, result.dead_letter
    comp = result.outcome.record["compression"]
    event("strings changed" if comp["changed"] else "nothing changed")
    event(f"layout {comp['layout']}")
    written = result.encoded()
    if b'"verbatim":' in written or b'"spelling":' in written:
        event("a changed string kept in its own spelling")
    # `written` is what `ctxpress compress` writes, before its "\n"
    assert b"\n" not in written
    strict_json(written)  # the compressed line is JSON any parser takes
    stripped = written.strip()  # what `ctxpress expand` does with each line
    value = decode_line(stripped, 1, 1 << 62)
    assert not isinstance(value, BadLine), value
    return expand_line(stripped, value), None


@given(lines(), st.sampled_from(["lossless", "lossless", "off"]))
@SETTINGS
def test_line_round_trips_byte_for_byte_or_dead_letters(
    case: tuple[bytes, str | None], mode: str
) -> None:
    line, poison = case
    restored, dead_letter = compress_then_expand(line, mode)
    if poison is not None:
        assert dead_letter is not None, f"poison {poison} was not dead-lettered"
        assert dead_letter["stage"] == "decode"
        assert "not valid JSON" in dead_letter["reason"]
        event(f"poison {poison}")
        return
    assert dead_letter is None, dead_letter["reason"]
    assert restored == line.removesuffix(b"\n")


@pytest.mark.slow  # the real CLI, whole files: minutes on a loaded machine
@given(st.lists(lines(), min_size=1, max_size=8))
@settings(
    max_examples=max(EXAMPLES // 10, 10),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
def test_cli_files_round_trip(cases: list[tuple[bytes, str | None]]) -> None:
    """The real ``ctxpress compress`` and ``ctxpress expand`` over a file of such lines."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "in.jsonl").write_bytes(b"".join(line for line, _ in cases))
        rc = cli_main(
            ["compress", "--mode", "lossless", "-i", str(d / "in.jsonl"), "-o", str(d / "out.jsonl"),
             "--dead-letter", str(d / "dlq.jsonl"), "--quiet", "--progress", "never"]
        )  # fmt: skip
        # a run in which no record came out exits 1
        assert rc == (0 if any(p is None for _, p in cases) else 1)
        assert cli_main(["expand", "-i", str(d / "out.jsonl"), "-o", str(d / "back.jsonl")]) == 0
        kept = b"".join(line for line, p in cases if p is None)
        back = (d / "back.jsonl").read_bytes()
        letters = [orjson.loads(x) for x in (d / "dlq.jsonl").read_bytes().splitlines()]
    assert back == kept
    poisoned = [i + 1 for i, (_, p) in enumerate(cases) if p is not None]
    assert [x["source"]["line"] for x in letters if x["stage"] == "decode"] == poisoned


# -- the byte tools on their own --------------------------------------------


@st.composite
def spelled(draw: st.DrawFn) -> tuple[str, bytes]:
    text = draw(st.text(chars, max_size=30))
    return text, spell(text, draw(st.randoms())).encode("utf-8")


@given(spelled())
@SETTINGS
def test_spelling_of_reproduces_the_token_or_says_none(case: tuple[str, bytes]) -> None:
    text, token = case
    assert orjson.loads(token) == text
    style = spelling_of(text, token)
    if style is not None:
        assert encode_string(text, style) == token
    event(f"style {style}")


@given(
    st.sampled_from(["utf8", "ascii", "ascii+upper", "utf8+slash", "ascii+slash", "utf8+html",
                     "ascii+upper+slash+html", "utf8+upper"]),
    st.text(chars, max_size=30),
)  # fmt: skip
@SETTINGS
def test_every_style_is_recognised(style: str, text: str) -> None:
    token = encode_string(text, style)
    assert orjson.loads(token) == text
    found = spelling_of(text, token)
    assert found is not None and encode_string(text, found) == token


@given(records(), st.randoms(), st.sampled_from([("",), ("", " ", "\t")]))
@SETTINGS
def test_string_spans_address_the_value_the_parser_keeps(
    record: Obj, rnd: random.Random, ws: tuple[str, ...]
) -> None:
    raw = write(record, rnd, ws).encode("utf-8")
    value = decode_line(raw, 1, 1 << 62)
    assert not isinstance(value, BadLine)
    paths: dict[tuple[Any, ...], str] = {}

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        if isinstance(node, str):
            paths[path] = node
        elif isinstance(node, dict):
            for k, v in node.items():
                walk(v, (*path, k))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, (*path, i))

    walk(value, ())
    spans = string_spans(raw, paths)
    assert set(spans) == set(paths)
    for path, (start, end) in spans.items():
        assert orjson.loads(raw[start:end]) == paths[path]
