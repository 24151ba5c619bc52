from __future__ import annotations

import json
import re
import time

import pytest

from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines._prose import LANG_DIR, language_pack
from workers.engines.base import EngineContext
from workers.engines.filler import FillerEngine, FillerStats, filler_text
from workers.fidelity.facts import _CONSTRAINT, _NEGATION
from workers.messages import parse_record
from workers.pipeline.runner import Pipeline
from workers.testing import expanded, openai_record

PACK = language_pack("en")


def clean(text: str) -> str:
    return filler_text(text, PACK)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            "Sure! Here is the updated code for `src/app.py`.",
            "Here is the updated code for `src/app.py`.",
        ),
        (
            "Basically, the parser breaks on empty input. I hope this helps!",
            "the parser breaks on empty input.",
        ),
        (
            "It is, basically, done in order to speed up the build.",
            "It is done to speed up the build.",
        ),
        ("It is done basically.", "It is done."),
        ("I think that the bug is in parser.py.", "the bug is in parser.py."),
        ("- Sure, the fix is in place. Happy coding!", "- the fix is in place."),
        (
            "Great, the tests pass. Basically the cache was stale, e.g. in the loader. Cheers!",
            "the tests pass. the cache was stale, e.g. in the loader.",
        ),
        (
            "Please note that the config lives in config/app.toml.",
            "the config lives in config/app.toml.",
        ),
        (
            "Due to the fact that the cache was cold, the first run took longer.",
            "Because the cache was cold, the first run took longer.",
        ),
    ],
)
def test_removes_fluff(before: str, after: str) -> None:
    assert clean(before) == after


@pytest.mark.parametrize(
    "sentence",
    [
        "Actually, this probably fails on Windows.",
        "Basically, we must never deploy on a Friday.",
        "Basically you should pin the version.",
        "Actually it might be the cache.",
        "Basically it does not matter.",
        "I think that it could be the proxy.",
        "Basically, skip the step unless the cache is warm.",
        "Honestly, all tests pass except the flaky one.",
        "I think so.",
        "Basically, if the lock is held, the job waits.",
        "Actually, only the admin can restart it.",
    ],
)
def test_never_touches_negation_or_modality(sentence: str) -> None:
    assert clean(sentence) == sentence


def test_protected_spans_are_never_edited() -> None:
    text = (
        "Call `basically_done()` and read https://example.org/actually/basically.html.\n"
        "The file is at /srv/basically/actually.txt.\n"
        "See https://example.org/1/2/3/4/5/6/7/8/9/10/11/12/basically.html for 13 and 14."
    )
    assert clean(text) == text


def test_code_blocks_tables_and_quotes_are_left_alone() -> None:
    text = (
        "```python\n# Basically, this is code. I hope this helps!\nx = 1\n```\n"
        "    Basically indented code.\n"
        "| Basically | a table |\n"
        "> Basically, a quote."
    )
    assert clean(text) == text


def test_lines_are_never_joined() -> None:
    text = "Sure! First line here.\nHope this helps!\nBasically the second line.\n\nThe end."
    out = clean(text)
    assert out == "First line here.\nthe second line.\n\nThe end."
    # every output line comes from one input line, in order
    src = iter(text.split("\n"))
    for line in out.split("\n"):
        assert any(line == "" or line in candidate for candidate in src)


def test_a_message_is_never_emptied() -> None:
    assert clean("Let me know if you have any other questions.") == (
        "Let me know if you have any other questions."
    )


def test_latest_user_message_frozen_units_and_tool_outputs_are_not_touched() -> None:
    data = openai_record(
        "r",
        ("user", "Basically, the build is slow in order to save disk."),
        ("assistant", "Sure! Basically the build is slow. Happy coding!"),
        ("tool", "Basically the output of a tool."),
        ("user", "Basically, why is it slow in order to save disk?"),
        system="Basically you are a helpful assistant.",
    )
    units = parse_record(data).units
    out = FillerEngine(recoverable=False).apply(units, EngineContext(tokens=TokenCounter()))
    by_uid = dict(zip([u.uid for u in units], out.texts, strict=True))
    assert by_uid["m0"] == "Basically you are a helpful assistant."  # system, frozen
    assert by_uid["m1"] == "the build is slow to save disk."
    assert by_uid["m2"] == "the build is slow."
    assert by_uid["m4"] == "Basically the output of a tool."
    assert by_uid["m5"] == "Basically, why is it slow in order to save disk?"  # latest user
    assert out.stash == {}
    assert out.details["phrases_removed"] >= 3


def test_gate_accepts_the_changes() -> None:
    data = openai_record(
        "r",
        ("user", "Sure! I need the logs. Basically, the 3 workers crash at 02:00."),
        ("assistant", "Great question! Basically, the crash is in worker.py line 42. Cheers!"),
        ("user", "thanks, what next?"),
    )
    data["mode"] = "aggressive"
    outcome = Pipeline(
        Settings(mode="off"), engines={"aggressive": [FillerEngine(recoverable=False)]}
    ).run_raw(data)
    assert outcome.rejections == []
    assert outcome.record["messages"][2]["content"] == "the crash is in worker.py line 42."


def test_recoverable_mode_restores_lines_exactly() -> None:
    tokens = TokenCounter()
    text = (
        "Sure! Great question! Basically, as you can see, the thing is that the retry loop "
        "was essentially, honestly and frankly spinning on the old lock. I hope this helps!\n"
        "Keep this line.\nBasically fine."
    )
    stash: dict[str, str] = {}
    out = filler_text(text, PACK, FillerStats(), recoverable=True, tokens=tokens, stash=stash)
    assert out != text and "<<cx:" in out
    assert out.count("\n") == text.count("\n")
    assert tokens.count(out) < tokens.count(text)
    assert expanded(out, stash) == text


def test_rules_are_data_and_contain_no_gate_critical_word() -> None:
    data = json.loads((LANG_DIR / "en.json").read_text(encoding="utf-8"))
    filler = data["filler"]
    phrases = [
        *filler["whole_sentences"],
        *filler["openers"],
        *filler["sentence_start"],
        *filler["anywhere"],
        *filler["replacements"],
        *filler["replacements"].values(),
    ]
    assert len(phrases) > 80
    for phrase in phrases:
        assert not _CONSTRAINT.search(phrase), phrase
        assert not _NEGATION.search(phrase), phrase
        assert not re.search(r"[\\^$*+?{}\[\]|()]", phrase), f"phrases are literal: {phrase}"
    for word in ("not", "never", "must", "should", "may", "might", "probably", "unless", "except"):
        assert PACK.has_polarity(f"x {word} y"), word


@pytest.mark.slow
def test_hostile_input_is_linear() -> None:
    long_line = "Basically, " + "basically not 5. " * 60_000
    sentences = "Go on. " * 60_000
    many_lines = "\n".join(f"Sure! Basically line {i} is here." for i in range(20_000))
    for text in (long_line, sentences, many_lines):
        started = time.perf_counter()
        out = clean(text)
        assert time.perf_counter() - started < 10
        assert out.count("\n") <= text.count("\n")
