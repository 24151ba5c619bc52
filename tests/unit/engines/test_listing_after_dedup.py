"""A ``git log --stat`` whose commits repeat a paragraph: dedup replaces the repeats by
back-references first, and the listing view is still written over that text (the view
stashes it, back-references and all; expand undoes the view, then resolves them)."""

from __future__ import annotations

from tests.support.sound import compress_soundly
from workers.markers.structured_view import HEADER_LINE

_BODY = [
    "    The previous implementation walked the input one character at a time and",
    "    rebuilt the token list on every call; this keeps one compiled pattern and",
    "    reuses the buffer, which the benchmark in docs/perf.md measures.",
]


def _git_log_stat(commits: int) -> str:
    out: list[str] = []
    for k in range(commits):
        out += [
            f"commit {k:040x}".replace(" 0", " a"),
            f"Author: Dev {k % 3} <dev{k % 3}@example.com>",
            f"Date:   Mon Jan {k + 1} 10:00:00 2025 +0100",
            "",
            f"    Speed up stage {k} of the tokenizer",
            "",
            *_BODY,
            "",
            f" src/stage_{k}.py       | {10 + k:2d} +++++-----",
            f" tests/test_stage_{k}.py | {4 + k:2d} ++++",
            f" 2 files changed, {9 + k} insertions(+), {5 + k} deletions(-)",
            "",
        ]
    return "\n".join(out)


def test_repeated_bodies_do_not_stop_the_stat_view() -> None:
    log = _git_log_stat(8)
    record = {"id": "log", "kind": "tool_output", "command": "git log --stat", "content": log}
    text, saved = compress_soundly(record, "standard")
    assert HEADER_LINE in text
    for k in range(8):
        assert f"src/stage_{k}.py" in text and f"tests/test_stage_{k}.py" in text
        assert f" 2 files changed, {9 + k} insertions(+), {5 + k} deletions(-)" in text
    assert saved > 0.12  # (0.15: the summaries stay as written)
