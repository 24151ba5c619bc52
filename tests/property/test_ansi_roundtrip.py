"""ANSI escape sequences out of band: any text comes back byte for byte.

Texts are drawn from pieces: unicode words (astral characters, lone
surrogates, controls), well-formed sequences of every kind the ``ansi``
engine takes (CSI colours and cursor moves, OSC hyperlinks ended by BEL or
ST, ``ESC (B``, ``ESC 7``, ``ESC c``), malformed ones (a lone ESC, a CSI cut
short by a line break, an OSC without its end, ESC ESC), marker literals
(``[[dup:v1 ...]]``, ``<<cx:KEY>>``, ``[[json-min:v1]]``) and forged markers
split by a sequence, whose removal would join them.  For each: the marker
module's strip, entry and restore give the text back; the engine's output
decodes back through the gate's check; and a tool output carrying it goes
through the lossless and aggressive pipelines and ``expand_line`` to the
exact input line.

Examples per test: 200 by default (``CTXPRESS_FUZZ_EXAMPLES``).
"""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from tests.support.roundtrip import SETTINGS, round_trip, valid
from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines.ansi import AnsiEngine
from workers.engines.base import EngineContext
from workers.markers import align, ansi, has_marker, marker_tokens, prefix, template
from workers.messages.model import Unit
from workers.pipeline.batch import compress_lines
from workers.pipeline.runner import Pipeline

PIPELINES = {mode: Pipeline(Settings(mode=mode)) for mode in ("lossless", "aggressive")}
TOKENS = TokenCounter("cl100k_base")

WELL_FORMED = [
    "\x1b[0m", "\x1b[m", "\x1b[1m", "\x1b[31m", "\x1b[1;31m", "\x1b[38;5;208m",
    "\x1b[38;2;10;20;30m", "\x1b[K", "\x1b[2J", "\x1b[?25l", "\x1b[10;4H", "\x1b[4:3m",
    "\x1b]8;;https://example.com/a\x07", "\x1b]8;;\x1b\\", "\x1b]0;title é\x07",
    "\x1b(B", "\x1b7", "\x1b8", "\x1bc", "\x1b=", "\x1b[ q",
]  # fmt: skip
MALFORMED = [
    "\x1b", "\x1b[", "\x1b[31", "\x1b[31\n", "\x1b]8;;http://x", "\x1b]0;a\nb\x07",
    "\x1b\x1b", "\x1b[\x1b", "\x1b]", "\x1b\t", "\x1b\x00", "\x9b31m", "\x1b[\ud800m",
]  # fmt: skip
LITERALS = [
    "[[dup:v1 src=m0 at=0 len=40]]", "<<cx:0123456789abcdef>>", "[[json-min:v1]]",
    '{"a":1}', "[[/json-min]]", "[[json-table:v1 ", "[", "]", "<", ">", "[[", "cx:",
    "[[ansi:v1", "\t", "\n", "\r\n", " ", "0", "12", "=",
]  # fmt: skip
WORDS = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)) | st.sampled_from(["\ud83d", "\udca9"]),
    max_size=12,
)
PIECES = st.one_of(
    st.sampled_from(WELL_FORMED),
    st.sampled_from(MALFORMED),
    st.sampled_from(LITERALS),
    WORDS,
    # any CSI the grammar allows: parameters, intermediates, a final byte
    st.builds(
        lambda p, i, f: f"\x1b[{p}{i}{f}",
        st.text(alphabet=st.characters(min_codepoint=0x30, max_codepoint=0x3F), max_size=6),
        st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x2F), max_size=2),
        st.characters(min_codepoint=0x40, max_codepoint=0x7E),
    ),
    # ESC and any one character
    st.builds(lambda c: "\x1b" + c, st.characters()),
)


@st.composite
def texts(draw: st.DrawFn) -> str:
    return "".join(draw(st.lists(PIECES, max_size=40)))


@st.composite
def forged(draw: st.DrawFn) -> str:
    """A marker literal with escape sequences put in: taking them out would join it."""
    literal = draw(st.sampled_from(LITERALS[:5]))
    at = draw(st.integers(min_value=1, max_value=len(literal) - 1))
    seq = draw(st.sampled_from(WELL_FORMED))
    return draw(texts()) + literal[:at] + seq + literal[at:] + draw(texts())


def _unit(text: str) -> Unit:
    return Unit("m1", 1, "tool", "tool_result", text, ("messages", 1, "content"))


@given(st.one_of(texts(), forged()))
@SETTINGS
def test_strip_then_restore_gives_the_text_back(text: str) -> None:
    plain, runs = ansi.strip(text)
    if not runs:
        assert plain == text
        return
    value = ansi.entry(plain, runs)
    assert ansi.restore(plain, value) == text
    # the runs are exactly what the text held beyond the plain text
    assert len(plain) + sum(len(r) for _, r in runs) == len(text)
    assert all(ansi.SEQUENCE.match(r) for _, r in runs)
    # text appended after the last run keeps every run where it was
    assert ansi.restore(plain + "x", value) == text + "x"
    # an entry that counts more non-whitespace characters than a text holds leaves it alone
    blanks = "".join(c for c in plain if c in ansi.WS)
    parsed = ansi.parse(value)
    assert parsed is not None and len(parsed) == len(runs)
    if parsed[-1][0] > 0:
        assert ansi.restore(blanks, value) == blanks


@given(texts())
@SETTINGS
def test_colours_survive_the_whitespace_normalisation(text: str) -> None:
    """Trailing blanks trimmed and blank-line runs folded (standard mode's whitespace engine):
    every run comes back, in the same order, and the plain text is the normalised one."""
    plain, runs = ansi.strip(text)
    if not runs:
        return
    value = ansi.entry(plain, runs)
    lines = [line.rstrip(" \t") for line in plain.split("\n")]
    normal = re.sub(r"\n{3,}", "\n\n", "\n".join(lines))
    back = ansi.restore(normal, value)
    assert len(back) == len(normal) + sum(len(r) for _, r in runs)
    if ansi.ESC not in plain:  # no malformed sequence left that a run could complete
        again, runs_again = ansi.strip(back)
        assert again == normal
        assert "".join(r for _, r in runs_again) == "".join(r for _, r in runs)


@given(st.one_of(texts(), forged()))
@SETTINGS
def test_the_engine_output_decodes_back_and_never_joins_a_marker(text: str) -> None:
    ctx = EngineContext(tokens=TOKENS)
    out = AnsiEngine().apply([_unit(text)], ctx)
    (after,) = out.texts
    layouts = out.details.get("_layouts", {})
    if after == text:
        assert not layouts
        return
    assert set(layouts) == {0}
    assert AnsiEngine().decode_with(after, layouts[0]) == text
    assert marker_tokens(after) == marker_tokens(text)
    assert ansi.SEQUENCE.search(text) is not None


def _line(text: str, ascii_only: bool = False) -> bytes:
    record = {"id": "t1", "kind": "tool_output", "command": "npx tsc --pretty", "content": text}
    return json.dumps(record, ensure_ascii=ascii_only).encode("utf-8")


@given(st.one_of(texts(), forged()), st.sampled_from(["lossless", "aggressive"]), st.booleans())
@SETTINGS
def test_a_tool_output_comes_back_byte_for_byte_through_the_pipeline(
    text: str, mode: str, ascii_only: bool
) -> None:
    line = _line(valid(text), ascii_only)
    assert round_trip(line, PIPELINES[mode]) == line


@given(st.lists(st.sampled_from(WELL_FORMED), min_size=1, max_size=3), texts())
@SETTINGS
def test_coloured_lines_lose_their_sequences_in_the_visible_text(
    colours: list[str], tail: str
) -> None:
    body = "".join(
        f"{colours[i % len(colours)]}src/app.ts{WELL_FORMED[0]}:{i}:5 - error TS2322: no\n"
        for i in range(30)
    )
    text = body + valid(tail)
    (result,) = list(compress_lines([_line(text)], PIPELINES["lossless"]))
    assert result.outcome is not None
    content = result.outcome.record["content"]
    if has_marker(text):  # changed only where expand gives it back exactly
        assert round_trip(_line(text), PIPELINES["lossless"]) == _line(text)
        return
    content = template.decode(prefix.decode(content))  # line blocks, written after the rest
    assert "src/app.ts:29:5 - error TS2322" in content
    assert result.outcome.stats["tokens_after"] < result.outcome.stats["tokens_before"]
    (uid,) = result.outcome.stats["changed"]
    (entry,) = result.outcome.stats["markers"]["ansi"]
    for widths in result.outcome.stats["markers"].get("align", []):  # padding, written last
        content = align.restore(content, widths[len(uid) + 1 :])
    assert entry.startswith(f"{uid}=") and ansi.restore(content, entry[len(uid) + 1 :]) == text
