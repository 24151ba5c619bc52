"""whitespace: trailing blanks and blank-line runs, with everything it must not touch."""

from __future__ import annotations

import re

import pytest

from workers.core.offload import MemoryStore
from workers.core.tokens import TokenCounter
from workers.engines.base import EngineContext
from workers.engines.whitespace import WhitespaceEngine, normalise
from workers.markers.stash import expand_offload
from workers.messages.model import Unit
from workers.testing import check_corpus_changes, expanded, make_unit

CTX = EngineContext(tokens=TokenCounter())


def unit(
    i: int,
    text: str,
    role: str = "tool",
    kind: str = "tool_result",
    command: str | None = None,
    frozen: bool = False,
) -> Unit:
    tool_name = "bash" if command else None
    return make_unit(
        i, text, kind=kind, role=role, frozen=frozen, command=command, tool_name=tool_name
    )


def only_whitespace_changed(before: str, after: str) -> bool:
    return re.sub(r"\s", "", before) == re.sub(r"\s", "", after)


def test_trailing_blanks_and_blank_runs() -> None:
    assert normalise("a  \nb\t\n\n\n\n\nc   ") == ("a\nb\n\n\nc", 3, 1)
    assert normalise("a\n\n\nb") == ("a\n\n\nb", 0, 0)  # two blank lines stay
    assert normalise("\n\n\n\n\nstart") == ("\n\nstart", 0, 1)


def test_crlf_line_endings_keep_their_cr() -> None:
    assert normalise("a \r\nb\r\n\r\n\r\n\r\n\r\nc") == ("a\r\nb\r\n\r\n\r\nc", 1, 1)


def test_fenced_code_is_untouched() -> None:
    text = "x\n```py\ncode   \n\n\n\n\nend  \n```\ny  \n~~~\nz  \n~~~\n"
    assert normalise(text)[0] == "x\n```py\ncode   \n\n\n\n\nend  \n```\ny\n~~~\nz  \n~~~\n"


def test_unclosed_fence_protects_to_the_end() -> None:
    text = "a  \n```\nb  \n\n\n\n\nc  "
    assert normalise(text)[0] == "a\n```\nb  \n\n\n\n\nc  "


def test_diff_context_line_of_one_space_survives() -> None:
    diff = (
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,4 +1,4 @@\n \n-a = 1  \n"
        "+a = 2\n \n\n\n\n"
    )
    text = "$ git diff   \n" + diff
    assert normalise(text)[0] == "$ git diff\n" + diff
    assert normalise(diff) == (diff, 0, 0)


def test_ansi_coloured_hunk_header_starts_a_diff() -> None:
    text = "note  \n\x1b[36m@@ -1 +1 @@\x1b[m\n \n-x  \n"
    assert normalise(text)[0] == "note\n\x1b[36m@@ -1 +1 @@\x1b[m\n \n-x  \n"


def test_tables_and_tab_separated_rows_keep_their_blanks() -> None:
    text = "| a | b |  \n|---|---|  \nq  \nname\tvalue\t\t\n"
    assert normalise(text)[0] == "| a | b |  \n|---|---|  \nq\nname\tvalue\t\t\n"


def test_prose_hard_breaks_and_indented_code() -> None:
    text = "line one   \nline two  \n\n    code  \n\n\n\n\n    more  \nend \n"
    new, _, _ = normalise(text, prose=True)
    assert new == "line one  \nline two\n\n    code  \n\n\n\n\n    more  \nend\n"
    # the same text as tool output: no hard breaks, indented code still kept
    assert normalise(text)[0] == "line one\nline two\n\n    code  \n\n\n\n\n    more  \nend\n"


def test_engine_skips_frozen_and_file_reads_and_never_changes_non_whitespace() -> None:
    units = [
        unit(0, "sys  \n", role="system", kind="text", frozen=True),
        unit(1, "out  \n\n\n\n\nmore\t", command="ls -la"),
        unit(2, "file content  \n", command="cat notes.txt"),
        unit(3, "user  says\n", role="user", kind="text"),
    ]
    out = WhitespaceEngine().apply(units, CTX)
    assert out.texts == ["sys  \n", "out\n\n\nmore", "file content  \n", "user  says\n"]
    assert out.details == {"lines_stripped": 2, "blank_runs_collapsed": 1}
    for before, after in zip(units, out.texts, strict=True):
        assert only_whitespace_changed(before.text, after)


def test_duplicate_system_message_becomes_a_stashed_note() -> None:
    prompt = "\n".join(
        f"Rule {i}: you must never run rm -rf on {p}; always ask first."
        for i, p in enumerate("abcdef")
    )
    units = [
        unit(0, prompt, role="system", kind="text", frozen=True),
        unit(1, "hello", role="user", kind="text"),
        unit(2, prompt, role="system", kind="text"),
    ]
    out = WhitespaceEngine().apply(units, CTX)
    note = out.texts[2]
    assert note.startswith("… duplicate of the system message in message 0 (")
    assert re.fullmatch(r"… [^\n]* <<cx:[0-9a-f]{16}>>", note)
    assert out.details["_backrefs"] == {2: [0]}
    assert expanded(note, out.stash) == prompt


def test_non_duplicate_or_frozen_system_messages_stay() -> None:
    units = [
        unit(0, "A", role="system", kind="text", frozen=True),
        unit(1, "A", role="system", kind="text", frozen=True),
        unit(2, "B", role="system", kind="text"),
    ]
    assert WhitespaceEngine().apply(units, CTX).texts == ["A", "A", "B"]


def test_expand_restores_up_to_whitespace() -> None:
    text = "x  \n\n\n\n\n\ny\t\n"
    out = WhitespaceEngine().apply([unit(1, text, command="make")], CTX)
    restored = expand_offload(out.texts[0], MemoryStore(), [])
    assert restored == "x\n\n\ny\n"
    assert only_whitespace_changed(text, restored)


@pytest.mark.slow
def test_corpus_every_change_expands_back_and_passes_the_gate(corpus_lines: list[bytes]) -> None:
    engine = WhitespaceEngine()
    assert check_corpus_changes(engine, corpus_lines, CTX, same=only_whitespace_changed)


def test_dedup_sources_and_references_keep_their_whitespace() -> None:
    block = "line one  \nline two  \nline three that is long enough  \n"
    units = [
        unit(1, block + "\n\n\n\n", command="make"),
        unit(2, "[[dup:v1 src=m1 at=0 len=60 | same 3 lines as message 1: line one]]  \n"),
        unit(3, "other  \n\n\n\n\n\nend", command="make"),
    ]
    out = WhitespaceEngine().apply(units, CTX)
    assert out.texts == [units[0].text, units[1].text, "other\n\n\nend"]


def test_changes_that_save_no_token_are_not_made() -> None:
    text = "other" + " " * 20 + "\n"
    assert normalise(text)[0] == "other\n"
    assert WhitespaceEngine().apply([unit(1, text, command="make")], CTX).texts == [text]


def test_a_few_blanks_in_a_long_output_are_not_worth_a_recount() -> None:
    body = "\n".join(f"line {i}: some output here" for i in range(2000))  # ~50 KB
    few = body.replace("line 7:", "line 7:   ", 1) + "   "
    many = "\n".join(line + "        " for line in body.split("\n"))
    out = WhitespaceEngine().apply([unit(0, few), unit(1, many)], CTX)
    assert out.texts[0] == few  # 6 blanks of 50,000 characters: left alone
    assert out.texts[1] == body
