"""decode(apply(x)) == x for the lossless JSON engines (jsontable, jsonminify).

Random JSON values (unicode with astral, control and surrogate characters,
escapes written in several ways, big integers, number lexemes such as
``1.50``/``1E+2``/``-0``, nested containers, empty ones) are rendered in the
layouts real tools produce (``json.dumps`` with indent None/2/4/tab, both
``ensure_ascii`` settings and separator variants, ``JSON.stringify``), alone
or inside prose as fenced blocks, and must survive both engines byte for
byte, alone and chained (jsontable, then jsonminify; expand decodes in the
reverse order).  The public corpus is checked the same way.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from workers.core.tokens import TokenCounter
from workers.engines import jsonminify, jsontable
from workers.engines.base import EngineContext
from workers.markers import json_table, jsonlayout
from workers.testing import corpus_units, lossless_round_trip, make_unit, with_texts

EXAMPLES = int(os.environ.get("CTXPRESS_FUZZ_EXAMPLES", "200"))

COUNTER = TokenCounter()
CTX = EngineContext(tokens=COUNTER)
TABLE = jsontable.JsonTableEngine()
MINIFY = jsonminify.JsonMinifyEngine()


@dataclass(frozen=True)
class Raw:
    """A scalar written with an exact lexeme (number or string)."""

    lexeme: str


# -- a json.dumps look-alike that can write raw lexemes ------------------------


@dataclass(frozen=True)
class Style:
    indent: str | None
    item: str
    key: str
    ensure_ascii: bool


STYLES = [
    Style(None, ", ", ": ", True),  # json.dumps default
    Style(None, ",", ":", False),  # compact (orjson, JSON.stringify)
    Style(None, ",", ":", True),
    Style("  ", ",", ": ", False),  # JSON.stringify(x, null, 2), jq
    Style("  ", ",", ": ", True),  # json.dumps(indent=2)
    Style("    ", ",", ": ", True),  # json.dumps(indent=4)
    Style("\t", ",", ": ", False),
    Style(" ", ",", ": ", False),
    Style("  ", ", ", ": ", True),  # python 2 json.dumps(indent=2)
    Style("  ", ",", ":", True),  # separators=(",", ":"), indent=2
    Style("", ",", ": ", True),  # json.dumps(indent=0)
]


def dump(value: Any, style: Style, eol: str = "\n", prefix: str = "") -> str:
    """Iterative renderer (no recursion) in the style of ``json.dumps``."""
    out: list[str] = []
    # work stack of (value or literal string, depth, is_literal)
    stack: list[tuple[Any, int, bool]] = [(value, 0, False)]
    while stack:
        item, depth, literal = stack.pop()
        if literal:
            out.append(item)
            continue
        if isinstance(item, Raw):
            out.append(item.lexeme)
        elif isinstance(item, dict | list):
            if not item:
                out.append("{}" if isinstance(item, dict) else "[]")
                continue
            opener, closer = ("{", "}") if isinstance(item, dict) else ("[", "]")
            if style.indent is None:
                inner = ""
                last = ""
            else:
                inner = eol + prefix + style.indent * (depth + 1)
                last = eol + prefix + style.indent * depth
            pieces: list[tuple[Any, int, bool]] = [(opener + inner, 0, True)]
            entries = list(item.items()) if isinstance(item, dict) else [(None, v) for v in item]
            for i, (k, v) in enumerate(entries):
                if i:
                    pieces.append((style.item + inner, 0, True))
                if k is not None:
                    key = (
                        k.lexeme
                        if isinstance(k, Raw)
                        else json.dumps(k, ensure_ascii=style.ensure_ascii)
                    )
                    pieces.append((key + style.key, 0, True))
                pieces.append((v, depth + 1, False))
            pieces.append((last + closer, 0, True))
            stack.extend(reversed(pieces))
        else:
            out.append(json.dumps(item, ensure_ascii=style.ensure_ascii))
    return "".join(out)


# -- strategies --------------------------------------------------------------

chars = st.one_of(
    st.characters(codec="utf-8"),
    st.characters(min_codepoint=0, max_codepoint=0x1F),
    st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF),
    st.sampled_from(['"', "\\", "/", "\u2028", "\x7f", "é", "😀", "\ufeff"]),
)
plain_text = st.text(chars, max_size=12)
surrogate_text = st.lists(
    st.one_of(chars, st.sampled_from(["\ud800", "\udfff", "\udbff"])), max_size=6
).map("".join)

_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


@st.composite
def raw_string(draw: st.DrawFn) -> Raw:
    """A string lexeme whose characters are escaped in varied ways."""
    text = draw(plain_text)
    out = ['"']
    for ch in text:
        code = ord(ch)
        way = draw(st.integers(0, 3))
        if ch in _SHORT_ESCAPES and (way < 3 or ch in '"\\' or code < 0x20):
            out.append(_SHORT_ESCAPES[ch] if way else f"\\u{code:04X}")
        elif code < 0x20 or (way == 0 and code < 0x10000):
            out.append(f"\\u{code:04x}" if way % 2 else f"\\u{code:04X}")
        elif way == 1 and code >= 0x10000:
            hi, lo = divmod(code - 0x10000, 0x400)
            out.append(f"\\u{0xD800 + hi:04x}\\u{0xDC00 + lo:04x}")
        elif ch == "/" and way == 2:
            out.append("\\/")
        else:
            out.append(ch)
    out.append('"')
    return Raw("".join(out))


raw_number = st.one_of(
    st.sampled_from(
        ["1.50", "1e5", "-0", "1E+2", "0.0", "-0.0e-0", "12345678901234567890", "2.5E-3"]
    ),
    st.integers(min_value=-(10**30), max_value=10**30).map(lambda n: Raw(str(n))),
    st.builds(
        lambda i, f, e: Raw(f"{i}.{f}{e}"),
        st.integers(-999, 999),
        st.from_regex(r"\A[0-9]{1,4}\Z"),
        st.sampled_from(["", "e1", "E-07", "e+300"]),
    ),
).map(lambda r: r if isinstance(r, Raw) else Raw(r))

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    plain_text,
    raw_string(),
    raw_number,
)
keys = st.one_of(plain_text, raw_string())


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=6),
        st.dictionaries(st.text(chars, max_size=6), children, max_size=6),
        st.lists(st.tuples(keys, children), max_size=5).map(lambda kv: dict(kv)),
    )


values = st.recursive(scalars, _containers, max_leaves=40)
# Lone surrogates (orjson rejects them; the engines fall back to the stdlib).
odd_values = st.recursive(st.one_of(scalars, surrogate_text), _containers, max_leaves=30)
plain_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    plain_text,
)
plain_values = st.recursive(
    plain_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(st.text(chars, max_size=6), children, max_size=5),
    ),
    max_leaves=20,
)
documents = st.one_of(_containers(values), _containers(odd_values))


@st.composite
def tables(draw: st.DrawFn) -> list[dict[Any, Any]]:
    """An array of >= 8 objects with the same keys in the same order."""
    names = draw(
        st.lists(
            keys, min_size=1, max_size=6, unique_by=lambda k: k.lexeme if isinstance(k, Raw) else k
        )
    )
    nrows = draw(st.integers(8, 14))
    cell = st.one_of(
        scalars,
        scalars,
        st.lists(scalars, max_size=3),
        st.dictionaries(st.text(max_size=3), scalars, max_size=2),
    )
    return [{k: draw(cell) for k in names} for _ in range(nrows)]


@st.composite
def table_documents(draw: st.DrawFn) -> Any:
    table = draw(tables())
    where = draw(st.integers(0, 3))
    if where == 0:
        return table
    if where == 1:
        return {"total": Raw("1.50"), "items": table, "next": None}
    if where == 2:
        return [Raw("-0"), {"data": {"rows": table, "more": [table[:2]]}}]
    return {"a": table, "b": [], "c": draw(tables())}


def check_out_of_band(visible: str, text: str) -> None:
    """The pipeline's last step: layouts leave the headers, and expand puts them back.

    Every header left with inline attributes is one whose layout was ambiguous
    (its plain header is not a key of the layouts taken).
    """
    plain, layouts = json_table.take_layouts(visible)
    assert json_table.decode_with(jsonminify.decode(plain), layouts) == text
    for m in json_table.TABLE_HEADER.finditer(plain):
        if any(m.groups()[2:]):
            head = f"[[json-table:v1 columns={m.group(1)} rows={m.group(2)}]]\n"
            assert json_table.table_digest(head) not in layouts
    if currently_in_test_context() and json_table.OPEN in visible:
        event(f"layouts out of band: {len(layouts)}")


def check_round_trip(text: str, kind: str = "tool_result") -> tuple[str, str]:
    """Both engines alone and chained, and the layouts moved out of band; returns
    (after jsontable, after both)."""
    after_table = lossless_round_trip(TABLE, text, CTX, kind)
    assert jsontable.decode(after_table) == text
    check_out_of_band(after_table, text)
    after_min = lossless_round_trip(MINIFY, text, CTX, kind)
    assert jsonminify.decode(after_min) == text
    both = lossless_round_trip(MINIFY, after_table, CTX, kind)
    assert jsontable.decode(jsonminify.decode(both)) == text
    check_out_of_band(both, text)
    if currently_in_test_context():
        event(f"jsontable {'applied' if after_table != text else 'skipped'}")
        event(f"jsonminify {'applied' if after_min != text else 'skipped'}")
    return after_table, both


surround = st.sampled_from(["", "\n", "  \n", "\r\n", "\t"])
styles = st.sampled_from(STYLES)
eols = st.sampled_from(["\n", "\n", "\r\n"])

# CTXPRESS_FUZZ_EXAMPLES=N runs every property here with N examples (longer runs)
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@given(documents, styles, eols, surround, surround)
@SETTINGS
def test_documents_round_trip(doc: Any, style: Style, eol: str, lead: str, trail: str) -> None:
    check_round_trip(lead + dump(doc, style, eol) + trail)


@given(table_documents(), styles, eols, surround)
@SETTINGS
def test_tables_round_trip(doc: Any, style: Style, eol: str, trail: str) -> None:
    check_round_trip(dump(doc, style, eol) + trail)


@given(
    st.lists(
        st.dictionaries(st.text(chars, max_size=5), plain_values, max_size=5),
        min_size=8,
        max_size=12,
    ),
    st.sampled_from([0, 2, 4]),
    st.booleans(),
)
@settings(
    max_examples=max(EXAMPLES // 2, 50),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
def test_json_dumps_round_trip(rows: list[dict[str, Any]], indent: int, ascii_only: bool) -> None:
    """Plain ``json.dumps`` output (the most common producer), uniform keys or not."""
    keys0 = list(rows[0])
    uniform = [{k: row.get(k) for k in keys0} for row in rows] if keys0 else rows
    for value in (rows, uniform, {"result": uniform, "n": len(rows)}):
        text = json.dumps(value, indent=indent or None, ensure_ascii=ascii_only)
        check_round_trip(text)


prose = st.text(st.characters(codec="utf-8"), max_size=60)


@given(
    st.lists(
        st.tuples(
            prose,
            st.one_of(documents, table_documents()),
            styles,
            st.sampled_from(["```json", "```", "~~~", "```python"]),
            st.sampled_from(["", "   ", "  "]),
        ),
        min_size=1,
        max_size=3,
    ),
    prose,
    st.sampled_from(["text", "tool_result"]),
)
@SETTINGS
def test_fenced_blocks_round_trip(
    blocks: list[tuple[str, Any, Style, str, str]], tail: str, kind: str
) -> None:
    parts = []
    for before, doc, style, fence, margin in blocks:
        body = dump(doc, style, "\n", margin)
        closing = fence[:3]
        parts.append(f"{before}\n{margin}{fence}\n{margin}{body}\n{margin}{closing}\n")
    parts.append(tail)
    check_round_trip("".join(parts), kind)


@given(st.text(st.sampled_from('[]{}",:0123456789 \n`~abjsonl\\.-e'), max_size=300))
@settings(max_examples=EXAMPLES, deadline=None)
def test_json_like_noise_round_trip(text: str) -> None:
    check_round_trip(text)
    check_round_trip("```json\n" + text + "\n```\n", "text")


def test_deep_nesting_is_skipped() -> None:
    for depth in (300, 1100, 100_000):
        for text in (
            "[" * depth + "]" * depth,
            '{"a":' * depth + "1" + "}" * depth,
            '["\\ud800", ' + "[" * depth + "]" * depth + "]",
        ):
            fenced = "see\n```json\n" + text + "\n```\n"
            assert check_round_trip(text) == (text, text)
            assert check_round_trip(fenced, "text") == (fenced, fenced)


def test_deep_but_valid_table_survives() -> None:
    rows = [{"id": i, "v": [[[[i]]]]} for i in range(10)]
    deep: Any = rows
    for _ in range(260):  # deeper than orjson renders (254) but loadable
        deep = [deep]
    text = json.dumps(deep, indent=1)
    check_round_trip(text)


def test_lone_surrogates_and_duplicate_keys() -> None:
    base = [{"id": i, "s": "\ud800" if i % 2 else "x" * 30} for i in range(10)]
    for text in (
        json.dumps(base, indent=2),
        json.dumps({"x": base}, indent=2, ensure_ascii=False),
        "[\n" + ",\n".join(f'  {{"a": {i}, "a": "{"y" * 20}"}}' for i in range(10)) + "\n]",
        '{\n  "k": 1,\n  "k": [\n    "' + "z" * 300 + '"\n  ]\n}',
    ):
        check_round_trip(text)


# -- the public corpus ---------------------------------------------------------


@pytest.mark.slow
def test_corpus_round_trip(corpus_lines: list[bytes], capsys: pytest.CaptureFixture[str]) -> None:
    """Every unit of the corpus survives; prints the tokens each engine saves (cl100k)."""
    before = after_table = after_both = 0
    tables = rows = documents = 0
    for units in corpus_units(corpus_lines):
        out1 = TABLE.apply(units, CTX)
        out2 = MINIFY.apply(with_texts(units, out1.texts), CTX)
        tables += out1.details.get("tables", 0)
        rows += out1.details.get("rows", 0)
        documents += out2.details.get("documents", 0)
        for u, t1, t2 in zip(units, out1.texts, out2.texts, strict=True):
            assert jsontable.decode(t1) == u.text, u.uid
            assert jsonminify.decode(t2) == t1, u.uid
            assert jsontable.decode(jsonminify.decode(t2)) == u.text, u.uid
            before += COUNTER.count(u.text)
            after_table += COUNTER.count(t1)
            after_both += COUNTER.count(t2)
        alone = MINIFY.apply(units, CTX)
        for u, t in zip(units, alone.texts, strict=True):
            assert jsonminify.decode(t) == u.text, u.uid
    with capsys.disabled():
        print(
            f"\ncorpus (cl100k): {before} tokens; jsontable saves {before - after_table} "
            f"({tables} tables, {rows} rows); jsonminify then saves {after_table - after_both} "
            f"({documents} documents); together {before - after_both} "
            f"({100 * (before - after_both) / before:.1f}%)"
        )
    assert tables > 0 and documents > 0


def test_pathological_texts_take_linear_time() -> None:
    rows = json.dumps([{"id": i, "name": f"n{i}"} for i in range(8)], indent=2)
    texts = [
        "".join("`" * (3 + i) + "\n{\n" for i in range(2000)),  # 2 MB of fences that never close
        '```json\n{"a": [1,\n' * 20000,
        "````\n```\n" + rows + "\n" * 50000,
        '[[json-table:v1 columns=["a"] rows=1]]\n[1]\n' * 20000,
        '[[json-min:v1 indent=2]]"\\"[[/json-min]]' * 20000,
        '[[json-table:v1 columns=["a"] rows=1]]\n' + '"\\"' * 100000 + "\n[[/json-table]]",
    ]
    for text in texts:
        started = time.perf_counter()
        for kind in ("text", "tool_result"):
            TABLE.apply([make_unit(1, text, kind=kind)], CTX)
            MINIFY.apply([make_unit(1, text, kind=kind)], CTX)
        assert jsontable.decode(text) == text
        assert jsonminify.decode(text) == text
        assert time.perf_counter() - started < 5.0


def test_fence_pairing() -> None:
    rows = json.dumps([{"id": i, "name": f"n{i}"} for i in range(8)], indent=2)
    # a ```` block is not closed by ```; the JSON inside it is not fenced JSON
    nested = f"````\n```\n{rows}\n```\n````\n"
    assert TABLE.apply([make_unit(1, nested, kind="text")], CTX).texts[0] == nested
    # a longer closing fence closes; an info string after the closer does not
    longer = f"```json\n{rows}\n`````\n"
    assert "[[json-table:v1 " in check_round_trip(longer, "text")[0]
    not_closed = f"```json\n{rows}\n```json\n"
    assert check_round_trip(not_closed, "text")[0] == not_closed
    tilde = f"~~~\n{rows}\n~~~\n"
    assert "[[json-table:v1 " in check_round_trip(tilde, "text")[0]
    other = f"```yaml\n{rows}\n```\n"
    assert check_round_trip(other, "text")[0] == other


@given(table_documents(), styles, eols)
@SETTINGS
def test_nested_table_fast_render_equals_the_token_loop(doc: Any, style: Style, eol: str) -> None:
    """Tables with nested cells: the C-speed render and the per-row token loop agree."""
    text = dump(doc, style, eol)
    after = lossless_round_trip(TABLE, text, CTX, "tool_result")
    for m in json_table.TABLE_HEADER.finditer(after):
        end = after.index(json_table.CLOSE, m.end())
        cols = jsonlayout.SCALAR_FIND.findall(m.group(1))
        layout = jsonlayout.Layout.from_groups(m.groups()[2:])
        block = after[m.end() : end]
        values = jsonlayout.SCALAR_FIND.findall(block)
        rows = jsonlayout.load("[" + block.replace("\n", ",") + "]")
        fast = json_table._render_nested(cols, int(m.group(2)), rows, layout, values)
        if fast is None:
            continue
        event("fast path")
        lines = block.split("\n")
        objects = [
            "{"
            + ",".join(k + ":" + c for k, c in zip(cols, jsonlayout.split_top(line), strict=True))
            + "}"
            for line in lines
        ]
        assert fast == jsonlayout.render("[" + ",".join(objects) + "]", layout)
