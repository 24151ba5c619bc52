"""The one-pass scan for error words (Hyperscan over a whole output, :func:`_hinted_rows`) gives
the facts the line-by-line test gives: for any output, with and without the scan."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workers.fidelity import facts

PIECES = st.sampled_from(
    [
        "error", "Error:", "FAILED", "warning: x", "E1130 06:00:37.308302 1228 x.go:12] boom",
        "  W0102 12:00:00 ok", "panic: nil", "***Timeout", '"level":"warn"', "[crit]",
        "core dumped", "ok", "PASS", "  at f (a.js:1:2)", "--- FAIL: TestX", "é", "\t", " ",
        "src/a.c:3:4: error: bad", "Traceback (most recent call last):", "x" * 700 + "error",
        "ValueError: no", "OOMKilled", "\r", "info", "123", "  3:28  ✖  bad hex", "✖✖",
        "1:7 ⚠ x", "×", "SERVER_ERROR too large", "undefined reference to `f'",
    ]
)  # fmt: skip
LINES = st.lists(st.lists(PIECES, max_size=4).map(" ".join), min_size=0, max_size=30)


@settings(max_examples=300, deadline=None)
@given(lines=LINES, family=st.sampled_from([None, "grep", "git-status"]))
def test_the_scan_gives_the_facts_of_the_line_test(lines: list[str], family: str | None) -> None:
    text = "\n".join(lines)
    scanned = list(facts._tool_lines(text, family))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(facts, "_hinted_rows", lambda _lines: None)
        plain = list(facts._tool_lines(text, family))
    assert scanned == plain


def test_the_scan_runs_here() -> None:
    rows = facts._hinted_rows(["ok", "x error y", "fine", "E1130 06:00:37 a", "a", "b", "c", "d"])
    if rows is None:
        pytest.skip("hyperscan is not installed")
    assert {1, 3} <= rows
