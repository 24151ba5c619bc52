"""Template blocks: any text comes back byte for byte.

Texts are JSON log lines (objects whose first keys are alike, any values, compact or not)
and runs of lines drawn to share a layout (one template with other values: ids,
numbers, timestamps, ``key=value`` words, braces, quotes, backslashes) mixed with any
unicode (astral characters, lone surrogates, CR, tabs, controls), blank lines, runs of
spaces and marker literals.  For each: :func:`factor` and the marker's decoder give the
text back, a block the engine writes saves tokens and forges no other marker, and a tool
output carrying it, written as a user writes a JSON line (any key order, ASCII-escaped
or not, indented or not), goes through the lossless pipeline and ``expand_line`` to the
exact input line.

Examples per test: 200 by default (``CTXPRESS_FUZZ_EXAMPLES``).
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tests.support.roundtrip import SETTINGS, check_lossless_engine, round_trip, spelled, valid
from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines.template import TemplateEngine, factor
from workers.markers import template as marker
from workers.messages.model import Unit
from workers.pipeline.runner import Pipeline

PIPELINE = Pipeline(Settings(mode="lossless"))
TOKENS = TokenCounter("cl100k_base")

CONSTANT = st.sampled_from(
    [
        "INFO", "[billing.sync]", "synced", "cents", "in", "ms", "---", "PASS:", "{}", "{{",
        "}", '"q"', "a\\b", "", "é", "\ud83d\udca9", "[[template:v1", "[[/template]]", "=",
        "x{", "\\u00e9", "ERROR", "\r",
    ]
)  # fmt: skip
VALUE = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.sampled_from(["10:55:48,123", "2026-12-03T09:16:21.732Z", "[03/Dec/2026:16:44:53"]),
    st.builds(
        lambda k, v: f"{k}={v}", st.sampled_from(["balance", "lag_ms", "x.y"]), st.integers()
    ),
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",))
        | st.sampled_from(["\ud83d", '"', "\\", "{", "}", "\t", "\r", "=", ":", "/"]),
        max_size=8,
    ),
)


JSON_VALUES = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([1.5, "1.50", True, None, [], {}, {"a": [1, {"b": "c"}]}, 'é\\"', "\t"]),
    st.text(max_size=6),
)


def _json_line(draw: st.DrawFn, keys: list[str], style: dict[str, object]) -> str:
    extra = draw(st.dictionaries(st.sampled_from(["x", "y", "msg"]), JSON_VALUES, max_size=2))
    obj = {key: draw(JSON_VALUES) for key in keys} | extra
    return json.dumps(obj, **style)  # type: ignore[arg-type]


@st.composite
def texts(draw: st.DrawFn) -> str:
    lines: list[str] = []
    if draw(st.booleans()):  # a JSON log: objects whose first keys are alike
        keys = draw(
            st.lists(st.sampled_from(["level", "time", "pid", "x"]), max_size=4, unique=True)
        )
        style = draw(
            st.sampled_from(
                [{"separators": (",", ":")}, {"ensure_ascii": False}, {"separators": (", ", ":")}]
            )
        )
        lines += [_json_line(draw, keys, style) for _ in range(draw(st.integers(0, 8)))]
    for _ in range(draw(st.integers(min_value=0, max_value=6))):
        shape = draw(st.lists(st.booleans(), min_size=1, max_size=7))  # True: a value
        words = [draw(CONSTANT) for _ in shape]
        gap = draw(st.sampled_from([" ", " ", "  "]))
        for _ in range(draw(st.integers(min_value=0, max_value=9))):
            lines.append(
                gap.join(
                    draw(VALUE) if is_value else word
                    for is_value, word in zip(shape, words, strict=True)
                )
            )
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", " ", "[[/template]]", "\r", "@@ -1 +1 @@"])))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n"]))


def _unit(text: str) -> Unit:
    return Unit("m1", 1, "tool", "tool_result", text, ("messages", 1, "content"))


@given(texts())
@SETTINGS
def test_factor_then_decode_gives_the_text_back(text: str) -> None:
    out = factor(text)
    assert marker.decode(out) == text
    if out != text:
        assert marker.OPEN in out


@given(texts())
@SETTINGS
def test_the_engine_output_decodes_back_saves_and_never_forges_another_marker(text: str) -> None:
    check_lossless_engine(TemplateEngine(), text, "prefix")  # a block is template's


@given(st.data(), texts())
@SETTINGS
def test_a_tool_output_comes_back_byte_for_byte_through_the_pipeline(
    data: st.DataObject, text: str
) -> None:
    fields = {"id": "t1", "kind": "tool_output", "command": "cargo test", "content": valid(text)}
    line = data.draw(spelled(fields))
    assert round_trip(line, PIPELINE) == line
