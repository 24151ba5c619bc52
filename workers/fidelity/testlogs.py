"""Log lines of a passing test: what a test printed while it ran, when it then passed.

``go test -v`` streams each test's ``t.Log`` output between its ``=== RUN``
line and its result::

    === RUN   TestLabel7
        shop_test.go:42: label for 7: item-7
    --- PASS: TestLabel7 (0.00s)

The indented ``file_test.go:42:`` line looks like a finding (it is one when the
test fails: ``t.Errorf`` writes the same shape), so the test's result decides:
the lines of a test that passed or was skipped are noise, those of a test that
failed, or whose result never came (a panic, a cut output), stay facts.
Subtests report after their parent (``--- FAIL: TestA`` then ``    --- FAIL:
TestA/case_3``), and parallel tests switch with ``=== CONT`` / ``=== NAME``;
the owner of a line is the test named by the last such line, and no test
owns the lines after a result line until the next one (older go versions
printed a failure's messages under its ``--- FAIL:`` line).  A location
line's continuation lines (indented deeper, as ``t.Errorf`` writes a
multi-line message) go with it.  Outside a running test (``go test`` without
``-v`` prints the log lines after ``--- FAIL:``) nothing is attributed.

:func:`passing_test_logs` is shared by the gate's critical lines
(:mod:`workers.fidelity.facts`) and the tool filter's report structure, so
both read the same lines the same way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["has_go_runs", "passing_test_logs"]

_RUN = re.compile(r"^=== (?:RUN|CONT|NAME)\s+(\S+)\s*$")
_RESULT = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+)")
_LOG = re.compile(r"^(\s+)[\w./-]+\.go:\d+: ")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def has_go_runs(text: str) -> bool:
    """Cheap test: the text may hold a ``=== RUN``/``CONT``/``NAME`` line."""
    return "=== " in text


def passing_test_logs(lines: Sequence[str]) -> set[int]:
    """Indices of the log lines (and their continuation lines) of tests that passed or skipped."""
    pending: dict[str, list[int]] = {}
    passing: set[int] = set()
    current: str | None = None
    log_indent = -1  # indentation of the last log line of ``current``: deeper lines continue it
    for i, line in enumerate(lines):
        if "\x1b" in line:
            line = _ANSI.sub("", line)
        if line.startswith("==="):
            run = _RUN.match(line)
            if run:
                current, log_indent = run.group(1), -1
                continue
        if "--- " in line[:40]:
            result = _RESULT.match(line)
            if result:
                outcome, name = result.groups()
                owned = pending.pop(name, [])
                if outcome != "FAIL":
                    passing.update(owned)
                # results come after the runs: a line after one belongs to no running
                # test until the next ``=== RUN``/``CONT``/``NAME`` (old go printed
                # the messages under the result line)
                current, log_indent = None, -1
                continue
        if current is None:
            continue
        log = _LOG.match(line)
        if log:
            pending.setdefault(current, []).append(i)
            log_indent = len(log.group(1))
        elif log_indent >= 0 and line.strip() and len(line) - len(line.lstrip()) > log_indent:
            pending.setdefault(current, []).append(i)
        else:
            log_indent = -1
    return passing
