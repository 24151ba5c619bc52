"""Prefix blocks: any text comes back byte for byte.

Texts are runs of lines drawn to share prefixes (a log burst's timestamp, ``   Compiling ``,
paths, ``[INFO] ``) mixed with any unicode (astral characters, lone surrogates, quotes,
backslashes, CR, tabs, controls), blank lines, diff and quote prefixes and marker literals.
For each: :func:`factor` and the marker's decoder give the text back, every block saves
tokens when counted, and a tool output carrying it, written as a user writes a JSON line
(any key order, ASCII-escaped or not, indented or not), goes through the lossless pipeline
and ``expand_line`` to the exact input line.

Examples per test: 200 by default (``CTXPRESS_FUZZ_EXAMPLES``).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.support.roundtrip import SETTINGS, check_lossless_engine, round_trip, spelled, valid
from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines.prefix import PrefixEngine, _may_run, _runs, factor
from workers.markers import prefix as marker
from workers.messages.model import Unit
from workers.pipeline.runner import Pipeline

PIPELINE = Pipeline(Settings(mode="lossless"))
TOKENS = TokenCounter("cl100k_base")

PREFIXES = [
    "2026-12-03 13:39:27,637 INFO ", "2026-12-03 13:39:", "   Compiling ", "[INFO] ",
    "Requirement already satisfied: ", "src/app/", "tests/test_a.py::", '"quoted" ', "a\\b: ",
    "+++ x/", "> note: ", "    ", "\t", "é ü/", "\ud83d\udca9 :", "\ud800 x: ", "[[prefix:v1 ",
    "<<cx:0123456789abcdef>> ", "ERROR: ", "x=",
]  # fmt: skip
WORDS = st.lists(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",))
        | st.sampled_from(["\ud83d", "\udca9", '"', "\\", "\r", "\t", ":", "/", " "]),
        max_size=6,
    )
    | st.sampled_from(["[[", "]]", "[[prefix:v1 ", "<<cx:"]),
    max_size=3,
).map("".join)


@st.composite
def texts(draw: st.DrawFn) -> str:
    lines: list[str] = []
    for _ in range(draw(st.integers(min_value=0, max_value=8))):
        prefix = draw(st.sampled_from(PREFIXES) | WORDS)
        for _ in range(draw(st.integers(min_value=0, max_value=12))):
            lines.append(prefix + draw(WORDS))
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", " ", "[[/prefix]]", "\r"]) | WORDS))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n"]))


def _unit(text: str) -> Unit:
    return Unit("m1", 1, "tool", "tool_result", text, ("messages", 1, "content"))


@given(texts())
@SETTINGS
def test_factor_then_decode_gives_the_text_back(text: str) -> None:
    lines = text.split("\n")
    if _runs(lines):
        assert _may_run(lines)  # the quick check never turns a run away
    out = factor(text)
    assert marker.decode(out) == text
    if out != text:
        assert marker.OPEN in out
        # every line of a block starts with its prefix again once decoded: no line joined
        assert out.count("\n") >= text.count("\n")


@given(texts())
@SETTINGS
def test_the_engine_output_decodes_back_saves_and_never_forges_another_marker(text: str) -> None:
    check_lossless_engine(PrefixEngine(), text, "align")  # a block is prefix's


@given(st.data(), texts())
@SETTINGS
def test_a_tool_output_comes_back_byte_for_byte_through_the_pipeline(
    data: st.DataObject, text: str
) -> None:
    fields = {"id": "t1", "kind": "tool_output", "command": "cargo build", "content": valid(text)}
    line = data.draw(spelled(fields))
    assert round_trip(line, PIPELINE) == line
