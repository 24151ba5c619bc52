"""A mocha failure inside a grep's output does not turn the grep into a numbered one.

``_tool_lines`` read a numbered grep of one file behind its numbers (stop 40) with a flag that
the numbered-failures rule (mocha's ``  1) name``) assigned again: after such a line the
next matches were read as a numbered grep's.  Found by the fast-path property test
(tests/property/test_facts_fastpaths.py)."""

from __future__ import annotations

from workers.fidelity.facts import _tool_lines

TEXT = (
    "  2 failing\n"
    "  1) Cart#total applies\n"
    "SUMMARY: AddressSanitizer: heap-buffer-overflow /w/vec.c:42:15 in vec_push"
)


def test_a_match_after_a_numbered_failure_keeps_its_file() -> None:
    assert list(_tool_lines(TEXT, "grep")) == [
        ("test_summary", "2 failing"),
        ("test_failure", "1) Cart#total applies"),
        ("grep_file", "SUMMARY"),
    ]
