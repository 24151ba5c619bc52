"""A grouped linter report's findings are facts, each with its location, whatever the command.

``tests/data/holdout-python/ruff-grouped.txt`` is ``ruff check --no-cache --select
E,F,B,UP,ANN --output-format grouped src/invtrack/report.py src/invtrack/admin.py
src/invtrack/ledger.py`` (ruff 0.17) over a small package written on this machine: a file
header line (``src/invtrack/ledger.py:``), then one ``  line:col  CODE message`` line per
finding.  The finding lines carry no error word, so before this rule standard mode folded 77
of 113 of them into ``… N lines omitted`` on the held-out Python set (holdout-d): the model
lost where the findings are.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import critical_lines

GROUPED = (
    Path(__file__).resolve().parents[2] / "data" / "holdout-python" / "ruff-grouped.txt"
).read_text(encoding="utf-8")
COMMAND = "ruff check --select E,F,B,UP,ANN --output-format grouped src"
FINDINGS = [line.strip() for line in GROUPED.splitlines() if line[:1] == " " and line.strip()]
HEADERS = [line for line in GROUPED.splitlines() if line.endswith(".py:")]


def test_every_grouped_finding_and_its_file_header_is_a_fact() -> None:
    assert len(FINDINGS) == 44 and len(HEADERS) == 3
    facts = critical_lines(GROUPED, "tool_result", COMMAND)
    for finding in FINDINGS:
        assert ("finding", finding) in facts
    for header in HEADERS:
        assert ("finding", header) in facts


def test_the_same_lines_are_facts_without_the_command() -> None:
    facts = critical_lines(GROUPED, "tool_result", "./lint.sh")
    assert {("finding", f) for f in FINDINGS} <= facts


def test_a_line_col_without_a_rule_code_is_no_finding() -> None:
    text = "timings:\n  12:30  started\n  12:31  done\n"
    assert not critical_lines(text, "tool_result", "./run.sh")


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_every_finding_stays_visible(mode: str) -> None:
    text, _ = compress_soundly(tool_output(GROUPED, COMMAND), mode)
    for finding in FINDINGS:
        assert finding in text
