"""Fast paths of the fact extractors decide exactly like the plain rules."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.pipeline import facts, gate

WORDS = st.sampled_from(
    [
        "error", "errors", "ERROR", "Error", "FAILED", "FAIL", "FAILURE", "failed", "Failed",
        "fatal", "FATAL", "Fatal", "panic", "Exception", "Traceback", "CRITICAL", "critical",
        "Warning", "WARNING", "warning", "WARN", "denied", "refused", "KeyError", "IOException",
        "terror", "Errors", "xErrorx", "_error", "error_", "WARNED", "panicked", " ", "\t", ":",
        "a", "Z9", "é", "-", "\n", "  ", "ok",
    ]
)  # fmt: skip
LINES = st.one_of(st.lists(WORDS, max_size=12).map("".join), st.text(max_size=40))


@settings(max_examples=3000, deadline=None)
@given(LINES)
def test_is_error_line_is_the_error_regex(line: str) -> None:
    assert facts.is_error_line(line) == (facts._ERROR_LINE.search(line) is not None)


TEXT_PARTS = st.sampled_from(
    ["a", " ", "\t", "\n", "\n\n", "\n\n\n\n", "  \n", "\t\n", "x \t", "é"]
)


@settings(max_examples=2000, deadline=None)
@given(st.lists(TEXT_PARTS, max_size=30).map("".join))
def test_whitespace_normal_form_is_the_regex_definition(text: str) -> None:
    expected = re.sub(r"\n{3,}", "\n\n", re.sub(r"[ \t]+$", "", text, flags=re.M))
    assert gate._ws_normal(text) == expected
