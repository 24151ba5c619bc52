"""Column padding out of band: any text comes back byte for byte.

Texts are drawn from pieces: runs of spaces of any width, tabs, line breaks
(LF, CRLF, blank lines), unicode words (astral characters, lone surrogates,
controls, other whitespace such as NBSP and U+2028), quotes, backslashes,
digits, the prefixes the engine treats as code (``+``, ``E``, ``12 |``,
``file:12:``) and marker literals.  For each: the engine's squeeze, entry and
restore give the text back; the engine's output decodes back through the
gate's check and never joins a marker; and a tool output carrying it, written
as a user writes a JSON line (any key order, ASCII-escaped or not), goes
through the lossless pipeline and ``expand_line`` to the exact input line.

Examples per test: 200 by default (``CTXPRESS_FUZZ_EXAMPLES``).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.support.roundtrip import SETTINGS, round_trip, spelled, valid
from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines.align import AlignEngine, squeeze
from workers.engines.base import EngineContext
from workers.markers import align, marker_tokens
from workers.messages.model import Unit
from workers.pipeline.runner import Pipeline

PIPELINE = Pipeline(Settings(mode="lossless"))
TOKENS = TokenCounter("cl100k_base")

LITERALS = [
    "[[dup:v1 src=m0 at=0 len=40]]", "<<cx:0123456789abcdef>>", "[[json-min:v1]]", "[[",
    "<<cx:", '"', "'", "`", "\\", "\\\"", "+", "-", "E", ">", "12 |", "src/a.py:12:", "|",
    ":", "\t", "\n", "\r\n", "\n\n", "\u00a0", "\u2028", "\x0b", "\x0c", "\r", "0", "12",
    "error", "warning", "no-var", "4:3", "=", "#",
]  # fmt: skip
WORDS = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)) | st.sampled_from(["\ud83d", "\udca9"]),
    max_size=10,
)
PIECES = st.one_of(
    st.sampled_from(LITERALS),
    WORDS,
    st.integers(min_value=1, max_value=40).map(lambda n: " " * n),
    st.integers(min_value=2, max_value=12).map(lambda n: " " * n),
)


@st.composite
def texts(draw: st.DrawFn) -> str:
    return "".join(draw(st.lists(PIECES, max_size=60)))


@st.composite
def tables(draw: st.DrawFn) -> str:
    """Column-aligned rows (some cells empty), the shape the engine is for."""
    cells = st.text(alphabet="abcdef0123456789./-:'\"", min_size=0, max_size=8)
    rows = draw(st.lists(st.lists(cells, min_size=2, max_size=5), min_size=1, max_size=12))
    width = max(len(c) for row in rows for c in row) + 2
    return "\n".join("".join(c.ljust(width) for c in row).rstrip() for row in rows)


def _unit(text: str) -> Unit:
    return Unit("m1", 1, "tool", "tool_result", text, ("messages", 1, "content"))


@given(st.one_of(texts(), tables()))
@SETTINGS
def test_squeeze_then_restore_gives_the_text_back(text: str) -> None:
    plain, runs = squeeze(text)
    if not runs:
        assert plain == text
        return
    value = align.entry(runs)
    assert align.restore(plain, value) == text
    # the runs are exactly what the text held beyond the squeezed text
    assert len(plain) + sum(width - 1 for _, width in runs) == len(text)
    assert all(plain[pos] == " " for pos, _ in runs)
    # the same cells, in the same order, on the same lines
    assert [[c for c in line.split(" ") if c] for line in plain.split("\n")] == [
        [c for c in line.split(" ") if c] for line in text.split("\n")
    ]
    parsed = align.parse(value)
    assert parsed == runs


@given(st.one_of(texts(), tables()), texts())
@SETTINGS
def test_an_entry_only_widens_single_spaces(text: str, other: str) -> None:
    """An entry read on another text changes nothing but single spaces between characters."""
    _, runs = squeeze(text)
    if not runs:
        return
    back = align.restore(other, align.entry(runs))
    assert back.replace(" ", "") == other.replace(" ", "")
    assert back.split() == other.split()


@given(st.one_of(texts(), tables()))
@SETTINGS
def test_the_engine_output_decodes_back_and_never_joins_a_marker(text: str) -> None:
    out = AlignEngine().apply([_unit(text)], EngineContext(tokens=TOKENS))
    (after,) = out.texts
    layouts = out.details.get("_layouts", {})
    if after == text:
        assert not layouts
        return
    assert set(layouts) == {0}
    assert AlignEngine().decode_with(after, layouts[0]) == text
    assert marker_tokens(after) == marker_tokens(text)
    assert TOKENS.count(after) < TOKENS.count(text)


@given(st.data(), st.one_of(texts(), tables()))
@SETTINGS
def test_a_tool_output_comes_back_byte_for_byte_through_the_pipeline(
    data: st.DataObject, text: str
) -> None:
    fields = {
        "id": "t1",
        "kind": "tool_output",
        "command": "git log --stat",
        "content": valid(text),
    }
    line = data.draw(spelled(fields))
    assert round_trip(line, PIPELINE) == line
