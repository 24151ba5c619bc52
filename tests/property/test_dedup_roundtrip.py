"""expand(compress(x)) == x for dedup on random texts with repeated blocks and re-runs."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines._prose import critical_flags
from workers.engines.base import EngineContext
from workers.engines.dedup import DedupEngine, decode
from workers.markers import has_marker
from workers.pipeline.expand import expand_record
from workers.pipeline.runner import Pipeline
from workers.testing import make_unit, openai_record

COUNTER = TokenCounter()
PIPELINE = Pipeline(Settings(mode="lossless"))
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


@given(texts_with_repeats(), st.booleans())
@settings(max_examples=300, deadline=None)
def test_dedup_round_trip(texts: list[str], lossless_chain: bool) -> None:
    # lossless_chain: repeats within one output are referred to as well (src=self runs)
    units = [make_unit(i, t) for i, t in enumerate(texts)]
    out = DedupEngine().apply(units, EngineContext(tokens=COUNTER, lossless_chain=lossless_chain))
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
# words of no line the gate needs visible (no error word, no file:line): such a line stays
# in a repeat, the references stand for the lines between (test_critical_lines_of_a_repeat_stay)
QUIET_WORDS = [w for w in WORDS if w not in ("error", "src/a.py:12")]
quiet_line = st.lists(st.sampled_from(QUIET_WORDS), min_size=8, max_size=14).map(" ".join)
long_block = st.lists(quiet_line, min_size=5, max_size=8).map("\n".join)


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


# -- re-runs: most lines as before, some changed, inserted or dropped (issue 13) ---------

run_line = st.one_of(
    long_line,
    long_line,
    long_line,
    line,
    st.just(""),
    st.sampled_from(["  ", "\t", "\r", "[[", "]]", "|", "…"]),
)


@st.composite
def reruns(draw: st.DrawFn) -> tuple[list[str], list[bool]]:
    """A first run of a command, then re-runs that edit some of its lines; which are frozen."""
    base = draw(st.lists(run_line, min_size=6, max_size=40))
    texts = ["\n".join(base)]
    for _ in range(draw(st.integers(1, 3))):
        lines = list(draw(st.sampled_from(texts)).split("\n"))
        for _ in range(draw(st.integers(0, 4))):
            at = draw(st.integers(0, len(lines)))
            edit = draw(st.sampled_from(["replace", "insert", "delete"]))
            if edit == "insert" or not lines:
                lines.insert(at, draw(run_line))
            elif edit == "replace":
                lines[min(at, len(lines) - 1)] = draw(run_line)
            else:
                del lines[min(at, len(lines) - 1)]
        if draw(st.booleans()):  # the run repeated inside one output (a retry loop)
            lines += lines[: draw(st.integers(0, len(lines)))]
        texts.append("\n".join(lines))
    frozen = draw(st.lists(st.booleans(), min_size=len(texts), max_size=len(texts)))
    return texts, frozen


@given(reruns())
@settings(max_examples=300, deadline=None)
def test_reruns_round_trip(case: tuple[list[str], list[bool]]) -> None:
    texts, frozen = case
    units = [make_unit(i, t, frozen=f) for i, (t, f) in enumerate(zip(texts, frozen, strict=True))]
    out = DedupEngine().apply(units, EngineContext(tokens=COUNTER))
    event(f"line runs replaced: {min(out.details.get('line_runs_replaced', 0), 3)}")
    restored: dict[str, str] = {}
    for unit, text in zip(units, out.texts, strict=True):
        if unit.frozen:
            assert text == unit.text
        restored[unit.uid] = decode(text, restored)
        assert restored[unit.uid] == unit.text


# At least 30 lines: a change keeps up to two markers (about 40 tokens each) and the lines
# around it shorter than a run; in a 12-line output of short lines that was over half.
@given(st.lists(quiet_line, min_size=30, max_size=40), st.integers(0, 29), long_line)
@settings(max_examples=300, deadline=None)
def test_a_rerun_with_one_line_changed_is_mostly_back_references(
    base: list[str], at: int, changed: str
) -> None:
    base = [f"{i}: {text}" for i, text in enumerate(base)]  # test ids, paths: lines differ
    again = list(base)
    again[at] = changed + " (now)"
    units = [make_unit(0, "\n".join(base)), make_unit(1, "\n".join(again))]
    out = DedupEngine().apply(units, EngineContext(tokens=COUNTER))
    assert out.texts[0] == units[0].text
    assert "[[dup:v1 src=" in out.texts[1] and changed + " (now)" in out.texts[1]
    assert COUNTER.count(out.texts[1]) < COUNTER.count(units[1].text) // 2
    assert decode(out.texts[1], {units[0].uid: units[0].text}) == units[1].text


@given(reruns())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_reruns_round_trip_through_the_pipeline(case: tuple[list[str], list[bool]]) -> None:
    texts, _ = case
    data = openai_record("rerun", *[("tool", t) for t in texts], command="pytest -q")
    outcome = PIPELINE.run_raw(json.loads(json.dumps(data)))
    wire = json.loads(json.dumps(outcome.record))
    assert expand_record(wire) == data


@given(reruns(), st.booleans())
@settings(max_examples=300, deadline=None)
def test_critical_lines_of_a_repeat_stay(
    case: tuple[list[str], list[bool]], lossless_chain: bool
) -> None:
    """A re-run's lines the gate needs (an error line, a place) stay in the re-run, each
    one the engine would have flagged; the rest may be references; expand gives it back."""
    texts, _ = case
    units = [make_unit(i, t) for i, t in enumerate(texts)]
    out = DedupEngine().apply(units, EngineContext(tokens=COUNTER, lossless_chain=lossless_chain))
    restored: dict[str, str] = {}
    for unit, text in zip(units, out.texts, strict=True):
        lines = unit.text.split("\n")
        flags = critical_flags(unit.text, lines, unit.kind, command=unit.command)
        kept = text.split("\n")
        for line, flagged in zip(lines, flags, strict=True):
            if flagged and line.strip() and not has_marker(line):
                assert line in kept
        restored[unit.uid] = decode(text, restored)
        assert restored[unit.uid] == unit.text


def test_a_rerun_keeps_its_failures_and_refers_to_the_rest() -> None:
    """A test run and its re-run: the passing lines become a reference, the failure stays."""
    passing = [f"tests/test_orders.py::test_total_{i:03d} PASSED" for i in range(40)]
    first = "\n".join([*passing, "FAILED tests/test_orders.py::test_refund - assert 3 == 4"])
    again = "\n".join([*passing, "FAILED tests/test_orders.py::test_refund - assert 3 == 4"])
    units = [make_unit(0, first), make_unit(1, again)]
    out = DedupEngine().apply(units, EngineContext(tokens=COUNTER))
    assert "[[dup:v1 src=m0 at=0 " in out.texts[1]
    assert out.texts[1].endswith("\nFAILED tests/test_orders.py::test_refund - assert 3 == 4")
    assert decode(out.texts[1], {units[0].uid: first}) == again


def test_a_repeat_of_many_findings_is_one_reference() -> None:
    """A lint run of 40 findings run again: one reference, not 40 lines kept as written
    between 39 references (the review measured a ruff run's re-run at 5,380 tokens)."""
    findings = [f"src/app/m{i}.py:{i + 3}:1: F401 `os` imported but unused" for i in range(40)]
    text = "\n".join([*findings, "Found 40 errors."])
    units = [make_unit(0, text), make_unit(1, text)]
    out = DedupEngine().apply(units, EngineContext(tokens=COUNTER))
    assert out.texts[1].count("[[dup:v1 ") == 1
    assert COUNTER.count(out.texts[1]) < 60
    assert decode(out.texts[1], {units[0].uid: text}) == text
