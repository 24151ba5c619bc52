"""What a passing test printed is noise; what a failing one printed is its failure (issue 13).

The outputs are real (``tests/support/passing_logs_samples.py`` ran them):

- ``go test -v`` over a package whose tests call ``t.Logf`` (every fifth test has a
  failing subtest).  The ``file_test.go:N:`` lines of passing tests go into the
  stash with the passing tests' ``=== RUN``/``--- PASS`` lines; those of the
  failing subtests stay, with their ``--- FAIL`` ids and the package's ``FAIL`` line.
- ``jest`` over six files whose tests call ``console.log`` (a failing test in every
  other file).  The ``● Console`` blocks go, each failure's ``●`` header, its
  ``Expected``/``Received`` lines and its frame stay, with the ``FAIL`` file lines
  and the summary.

Expand gives every output back.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.sound import compress_soundly
from workers.fidelity.facts import critical_lines

DATA = Path(__file__).resolve().parent.parent / "data" / "passing-logs"
TEXT = (DATA / "go-test-v.txt").read_text(encoding="utf-8")
JEST = (DATA / "jest.txt").read_text(encoding="utf-8")
COMMAND = "go test -v ./..."
_FAILED_SUBTEST = re.compile(r"^    --- FAIL: (TestDiscountTable\d+/case_3) ")


def _record(command: str = COMMAND) -> dict[str, Any]:
    return {"id": "go", "kind": "tool_output", "content": TEXT, "command": command}


def _failure_messages() -> list[str]:
    """The ``want`` lines t.Errorf wrote: one per failing subtest."""
    return [line.strip() for line in TEXT.splitlines() if ", want " in line]


def test_the_sample_has_passing_logs_and_failures() -> None:
    assert len(_failure_messages()) == 6
    assert TEXT.count("label for ") == 24  # the passing plain tests' t.Logf lines
    assert "FAIL\texample.com/shop\t" in TEXT


def test_a_passing_tests_log_line_is_no_fact_a_failing_tests_is() -> None:
    facts = {line for _, line in critical_lines(TEXT, "tool_result", COMMAND)}
    assert not any("label for " in line for line in facts)
    assert not any("checking {100 10 90}" in line for line in facts)  # a passing subtest
    for message in _failure_messages():
        assert any(message in line for line in facts), message


@pytest.mark.parametrize("command", [COMMAND, "./ci/run-tests.sh"])
@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_passing_logs_go_failures_stay_and_the_output_comes_back(mode: str, command: str) -> None:
    record = _record(command)
    text, saved = compress_soundly(record, mode)
    for message in _failure_messages():
        assert message in text
    for line in TEXT.splitlines():
        found = _FAILED_SUBTEST.match(line)
        if found:
            assert f"--- FAIL: {found.group(1)}" in text
    assert "label for 7: item-7" not in text
    assert saved >= 0.55, saved  # 0.618 in standard when written; 0.085 with the logs as facts


def _jest_record(command: str) -> dict[str, Any]:
    return {"id": "jest", "kind": "tool_output", "content": JEST, "command": command}


@pytest.mark.parametrize("command", ["npx jest", "npm test"])
@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_jest_console_blocks_go_failures_stay(mode: str, command: str) -> None:
    record = _jest_record(command)
    text, saved = compress_soundly(record, mode)
    failures = [line for line in JEST.splitlines() if line.startswith("  ● order suite")]
    assert len(failures) == 3
    for header in failures:
        assert header in text
    for line in JEST.splitlines():
        if line.startswith(("FAIL ", "Tests:", "Test Suites:")) or "at Object.toBe" in line:
            assert line in text, line
    assert "Expected: 10" in text and "Received: 9" in text
    assert "checking order" not in text
    assert saved >= 0.75, saved  # 0.828 in standard when written; 0.352 with the console kept
