"""Repeats of a diagnostic between other findings: one note per file lists them all.

``tests/data/holdout-build/eslint-stylish.txt`` is ``npx eslint src/audit.js src/billing.js
src/catalog.js`` (ESLint 9, the recommended rules with ``eqeqeq``, ``no-var``,
``prefer-const`` and ``no-unused-vars`` as warnings) over three files written for this test on
this machine; ``cargo-build-warnings.txt`` is ``cargo build`` of a crate of eight modules with
104 warnings of seven kinds (unused imports, variables, ``mut``, assignments, dead functions,
names not in snake case).  A repeat of a warning kind in one file, between findings of other
kinds, is a run of one or two lines: too short for a marker of its own, so it stayed where it
was; now its location goes into one note of its file (``… warning no-unused-vars 9 more times
at 3:7 10:10 ...``) in the view, and the note's kinds and places say what went.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.markers.structured_view import HEADER_LINE

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-build"
ESLINT = (DATA / "eslint-stylish.txt").read_text(encoding="utf-8")
CARGO = (DATA / "cargo-build-warnings.txt").read_text(encoding="utf-8")
_FINDING = re.compile(r"^\s+(\d+:\d+)\s+(warning|error)\s+.*?\s{2,}(\S+)$")


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_eslint_repeats_of_a_rule_are_listed_once_per_file(mode: str) -> None:
    text, saved = compress_soundly(
        tool_output(ESLINT, "npx eslint src/audit.js src/billing.js src/catalog.js"), mode
    )
    assert HEADER_LINE in text
    # the padding eslint aligns its columns with folds: two warnings of one message
    # shape are one fact, whatever the length of the names they quote
    assert "'auditEq0' is defined but never used" in text
    assert "'auditSum1' is defined but never used" not in text
    shown = {part.strip().split("\n", 1)[0]: part for part in text.split("\n\n")}
    gathered = 0
    sections = [part.strip() for part in ESLINT.split("\n\n") if part.strip().startswith("/")]
    assert len(sections) == 3
    for section in sections:
        header = section.split("\n", 1)[0]
        notes = [line for line in shown[header].splitlines() if line.startswith("… ")]
        gathered += any("<<cx:" not in note for note in notes)
        # a file's note comes below every finding its repeats repeat
        part = shown[header].splitlines()
        note_at = max(
            k for k, line in enumerate(part) if line.startswith("… ") and "<<cx:" not in line
        )
        assert all(k < note_at for k, line in enumerate(part) if line.endswith("no-unused-vars")), (
            header
        )
        for line in section.splitlines()[1:]:
            found = _FINDING.match(line)
            if found and line.strip() not in text:
                # every hidden finding's rule and place are listed in a note of its file
                assert any(found[3] in n and f" {found[1]}" in n for n in notes), line
    assert gathered == 3  # a note without a marker of its own in every file
    assert text.count("<<cx:") <= 3
    assert saved > 0.4  # 0.11 before


def test_cargo_warnings_between_other_kinds_are_listed_once_per_kind() -> None:
    text, saved = compress_soundly(tool_output(CARGO, "cargo build"), "standard")
    for line in CARGO.splitlines():
        if line.lstrip().startswith("--> "):
            assert line.strip() in text  # every location, as rustc wrote it
    # rustc's headline names no file: each kind is shown once, whatever the file, and its
    # repeats' places are listed in notes of that kind (a note too long for a marker's cap
    # goes on in the view)
    headlines = [line for line in text.splitlines() if line.startswith("warning: ")]
    assert len(headlines) == len(set(headlines)) == 8  # seven kinds and the count line
    assert text.count("<<cx:") == 2  # 30 markers before: the view ("<<cx:view>>… <<cx:KEY>>")
    assert saved > 0.7  # 0.50 before
