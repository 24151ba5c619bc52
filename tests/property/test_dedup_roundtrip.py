"""expand(compress(x)) == x for dedup on random texts with repeated blocks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.core.tokens import TokenCounter
from workers.engines.base import EngineContext
from workers.engines.dedup import DedupEngine, decode
from workers.testing import make_unit

COUNTER = TokenCounter()
line = st.text(st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=40).map(
    lambda s: s.replace("\n", " ")
)
block = st.lists(line, min_size=1, max_size=8).map("\n".join)


@st.composite
def texts_with_repeats(draw: st.DrawFn) -> list[str]:
    pool = draw(st.lists(block, min_size=1, max_size=4))
    messages = []
    for _ in range(draw(st.integers(1, 4))):
        picks = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=6))
        seps = draw(
            st.lists(
                st.sampled_from(["\n\n", "\n \n", "\n\t\n\n", "\n"]),
                min_size=len(picks),
                max_size=len(picks),
            )
        )
        messages.append("".join(p + s for p, s in zip(picks, seps, strict=True)))
    return messages


@given(texts_with_repeats())
@settings(max_examples=300, deadline=None)
def test_dedup_round_trip(texts: list[str]) -> None:
    units = [make_unit(i, t) for i, t in enumerate(texts)]
    out = DedupEngine().apply(units, EngineContext(tokens=COUNTER))
    restored: dict[str, str] = {}
    for unit, text in zip(units, out.texts, strict=True):
        restored[unit.uid] = decode(text, restored)
        assert restored[unit.uid] == unit.text


WORDS = [
    "error",
    "passed",
    "src/a.py:12",
    "ÄÖÜ",
    "中文",
    "😀",
    '"quoted"',
    "back\\slash",
    "1.50",
    "x=42",
]
long_line = st.lists(st.sampled_from(WORDS), min_size=8, max_size=14).map(" ".join)
long_block = st.lists(long_line, min_size=5, max_size=8).map("\n".join)


@st.composite
def texts_with_long_repeats(draw: st.DrawFn) -> list[str]:
    """Blocks dedup must take (5+ lines of 8+ words), one of them twice at least."""
    pool = draw(st.lists(long_block, min_size=1, max_size=3))
    picks = [pool[0], *draw(st.lists(st.sampled_from(pool), max_size=5)), pool[0]]
    cut = draw(st.integers(1, len(picks) - 1))
    return ["\n\n".join(picks[:cut]), "\n\n".join(picks[cut:])]


@given(texts_with_long_repeats())
@settings(max_examples=200, deadline=None)
def test_dedup_replaces_long_repeats_and_round_trips(texts: list[str]) -> None:
    units = [make_unit(i, t) for i, t in enumerate(texts)]
    out = DedupEngine().apply(units, EngineContext(tokens=COUNTER))
    assert any("[[dup:v1 " in text for text in out.texts)  # the engine did replace a block
    restored: dict[str, str] = {}
    for unit, text in zip(units, out.texts, strict=True):
        restored[unit.uid] = decode(text, restored)
        assert restored[unit.uid] == unit.text
