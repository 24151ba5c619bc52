"""json-min with its layout out of band: any pretty-printed document comes back byte for byte.

Documents are drawn as JSON values (strings with unicode, escapes, marker
literals and escape sequences; numbers; nesting), laid out with a random
indent (none, 1-8 spaces, tab), item and key separators and line ends, and
put into a tool output (the whole text) or a fenced block of a message,
sometimes twice with two layouts.  Through the lossless pipeline and
``expand_line`` the input line comes back byte for byte, and the visible
json-min headers carry no layout unless one body has two layouts.

Examples per test: 200 by default (``CTXPRESS_FUZZ_EXAMPLES``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.support.roundtrip import SETTINGS
from workers.core.jsonl import BadLine, decode_line
from workers.core.settings import Settings
from workers.pipeline.batch import compress_lines
from workers.pipeline.expand import expand_line
from workers.pipeline.runner import Pipeline

PIPELINE = Pipeline(Settings(mode="lossless"))
HEADER = re.compile(r"\[\[json-min:v1([^\]]*)\]\]")
STRINGS = st.one_of(
    st.text(max_size=20),
    st.sampled_from(
        ["[[json-min:v1]]", "[[/json-min]]", "\x1b[31m", "<<cx:0123456789abcdef>>", "é", "\\"]
    ),
)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | STRINGS,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(STRINGS, inner, max_size=6),
    max_leaves=40,
)


@st.composite
def layouts(draw: st.DrawFn) -> dict[str, Any]:
    indent = draw(st.sampled_from([None, 1, 2, 3, 4, 8, "\t"]))
    item = draw(st.sampled_from([",", ", "]))
    key = draw(st.sampled_from([":", ": "]))
    return {"indent": indent, "separators": (item, key), "ensure_ascii": draw(st.booleans())}


def _dump(value: Any, layout: dict[str, Any], crlf: bool) -> str:
    text = json.dumps(value, **layout)
    return text.replace("\n", "\r\n") if crlf else text


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    value = draw(st.lists(VALUES, min_size=3, max_size=12) | st.dictionaries(STRINGS, VALUES))
    doc = _dump(value, draw(layouts()), draw(st.booleans()))
    if draw(st.booleans()):
        record: dict[str, Any] = {"id": 1, "kind": "tool_output", "content": doc}
    else:
        other = _dump(value, draw(layouts()), False)
        text = f"Here:\n```json\n{doc}\n```\nand again\n```\n{other}\n```\n"
        record = {"id": "r", "messages": [{"role": "user", "content": text}]}
    return json.dumps(record, ensure_ascii=draw(st.booleans())).encode("utf-8")


@given(lines())
@SETTINGS
def test_lossless_then_expand_gives_the_line_back(line: bytes) -> None:
    (result,) = list(compress_lines([line], PIPELINE))
    assert result.outcome is not None, result.dead_letter
    written = result.encoded().strip()
    value = decode_line(written, 1, 1 << 62)
    assert not isinstance(value, BadLine), value
    assert expand_line(written, value) == line
    comp = result.outcome.record["compression"]
    if not comp["changed"]:
        return
    record = result.outcome.record
    visible = record["content"] if "content" in record else record["messages"][0]["content"]
    headers = HEADER.findall(visible)
    source = json.loads(line)
    for quoted in HEADER.findall(
        source["content"] if "content" in source else source["messages"][0]["content"]
    ):  # marker-like input stays as it is: only the headers the pipeline wrote count
        if quoted in headers:
            headers.remove(quoted)
    entries = comp.get("markers", {}).get("min", [])
    # a document is only minified when its layout is not compact: a plain header's layout
    # is in the manifest, and a header keeps its attributes only when one body has two
    assert bool(entries) == ("" in headers)
    assert len(entries) <= headers.count("")
    assert all(not a for a in headers) or len(headers) == 2
