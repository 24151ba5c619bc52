"""javac's ``symbol:`` line under ``cannot find symbol`` says what the error is about: a fact.

``tests/data/holdout-build/javac-errors.txt`` is ``javac -Xlint:all -d out src/lib/*.java``
(javac 17) over three classes written for this test on this machine: six errors, four of them
``cannot find symbol`` with their ``symbol:`` and ``location:`` lines under the source line and
its caret.  Without the symbol a model reads ``Library.java:10: error: cannot find symbol`` and
has to open the file to learn that ``size`` is the name it got wrong.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import critical_lines

JAVAC = (
    Path(__file__).resolve().parents[2] / "data" / "holdout-build" / "javac-errors.txt"
).read_text(encoding="utf-8")
COMMAND = "javac -Xlint:all -d out src/lib/*.java"
SYMBOLS = [line.strip() for line in JAVAC.splitlines() if line.lstrip().startswith("symbol:")]


def test_the_symbol_of_a_javac_error_is_a_fact() -> None:
    assert len(SYMBOLS) == 4
    facts = critical_lines(JAVAC, "tool_result", COMMAND)
    for symbol in SYMBOLS:
        assert ("error_detail", symbol) in facts
    # its location line is help text, as before
    assert not any(line.startswith("location:") for _, line in facts)


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_the_symbol_stays_under_its_headline(mode: str) -> None:
    text, _ = compress_soundly(tool_output(JAVAC, COMMAND), mode)
    lines = text.splitlines()
    at = lines.index("src/lib/Library.java:10: error: cannot find symbol")
    assert lines[at + 1].strip() == "symbol:   variable size"
    for symbol in SYMBOLS:
        assert symbol in text
    assert "public int count() { return books.size; }" not in text  # the source line goes


MAVEN = (
    Path(__file__).resolve().parents[2] / "data" / "holdout-build" / "mvn-compile-errors.txt"
).read_text(encoding="utf-8")


def test_maven_lists_javac_errors_twice_and_the_second_list_is_a_repeat() -> None:
    # ``mvn -B -o compile`` (Maven 3, maven-compiler-plugin 3.13.0) of the same three classes:
    # the errors under ``COMPILATION ERROR``, then again under ``Failed to execute goal``
    # with ``[ERROR]`` before every line, ``[ERROR]   symbol:   variable yr`` included
    facts = critical_lines(MAVEN, "tool_result", "mvn -B compile")
    assert ("error_detail", "symbol:   variable yr") in facts
    assert not any(line.startswith("[ERROR]   symbol:") for _, line in facts)
    assert ("error_line", "[ERROR]   location: class lib.Book") not in facts
    text, saved = compress_soundly(tool_output(MAVEN, "mvn -B compile"), "aggressive")
    assert "[ERROR]   symbol:   variable yr" not in text
    assert "  symbol:   variable yr" in text  # said once, under its error
    # the second list goes behind one marker (with maven's advice after it, since both merged)
    assert "14 repeated lines" in text or "… 21 lines omitted <<cx:" in text
    assert saved > 0.25  # 0.07 before
